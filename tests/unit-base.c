/*
 * Unit tests of base/: array growth (doubling from the minimum, the new
 * part zeroed on request, a size that overflows refused with the old array
 * kept) and the hashes' values (published FNV-1a vectors, and the values
 * the copies that base/ replaced gave: SVG colours must not change).
 */
#include "config.h"

#include "base/base.h"
#include "tests/check.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void test_grow(void)
{
	int *v = NULL;
	size_t cap = 0;

	CHECK(BASE_GROW(v, cap, 1, 4) == 0);
	CHECK(v != NULL);
	CHECK_EQ_U64(cap, 4);
	for (int i = 0; i < 4; i++)
		v[i] = i;
	/* Doubles until it holds need: 4 -> 8 -> 16. */
	CHECK(BASE_GROW(v, cap, 9, 4) == 0);
	CHECK_EQ_U64(cap, 16);
	for (int i = 0; i < 4; i++)
		CHECK(v[i] == i, "v[%d] = %d after growth", i, v[i]);

	/* Room enough: nothing moves. */
	int *before = v;
	CHECK(BASE_GROW(v, cap, 16, 4) == 0);
	CHECK(v == before);
	CHECK_EQ_U64(cap, 16);

	/* A minimum of 0 still makes room. */
	char *c = NULL;
	size_t ccap = 0;
	CHECK(BASE_GROW(c, ccap, 3, 0) == 0);
	CHECK(c != NULL && ccap >= 3);
	free(c);
	free(v);
}

static void test_grow_zero(void)
{
	uint64_t *v = NULL;
	size_t cap = 0;

	CHECK(BASE_GROW_ZERO(v, cap, 2, 2) == 0);
	CHECK_EQ_U64(cap, 2);
	CHECK(v[0] == 0 && v[1] == 0);
	v[0] = 7;
	v[1] = 8;
	CHECK(BASE_GROW_ZERO(v, cap, 5, 2) == 0);
	CHECK_EQ_U64(cap, 8);
	CHECK(v[0] == 7 && v[1] == 8);
	for (size_t i = 2; i < cap; i++)
		CHECK(v[i] == 0, "v[%zu] = %llu, not zeroed", i, (unsigned long long)v[i]);
	free(v);
}

/* A count whose bytes do not fit in a size_t: refused, and the array and
 * its capacity are as they were (still usable, not freed). */
static void test_grow_overflow(void)
{
	uint64_t *v = NULL;
	size_t cap = 0;

	CHECK(BASE_GROW(v, cap, 4, 4) == 0);
	for (int i = 0; i < 4; i++)
		v[i] = 100 + (uint64_t)i;
	uint64_t *before = v;

	/* The doubled count fits, its bytes do not. */
	CHECK(BASE_GROW(v, cap, SIZE_MAX / 4, 4) == -ENOMEM);
	CHECK(v == before);
	CHECK_EQ_U64(cap, 4);
	/* The count itself cannot be doubled to need. */
	CHECK(BASE_GROW(v, cap, SIZE_MAX, 4) == -ENOMEM);
	CHECK(base_grow_zero(&v, &cap, SIZE_MAX / 2 + 2, sizeof(*v), 4) == -ENOMEM);
	CHECK(v == before);
	CHECK_EQ_U64(cap, 4);
	for (int i = 0; i < 4; i++)
		CHECK(v[i] == 100 + (uint64_t)i, "v[%d] changed", i);
	free(v);
}

/* collapse/svg.c's name_hash before base/: the colours of every graph. */
static uint32_t old_svg_name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 16777619u;
	}
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

/* collapse/collapse.c's hash_ids before base/. */
static uint64_t old_hash_ids(const uint32_t *ids, size_t n)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325) ^ n;

	for (size_t i = 0; i < n; i++)
		h = (h ^ ids[i]) * UINT64_C(0x100000001b3);
	return base_mix64(h);
}

static void test_hash(void)
{
	/* The published FNV-1a test vectors. */
	CHECK_EQ_U64(base_fnv1a64("", 0), UINT64_C(0xcbf29ce484222325));
	CHECK_EQ_U64(base_fnv1a64("a", 1), UINT64_C(0xaf63dc4c8601ec8c));
	CHECK_EQ_U64(base_fnv1a64("foobar", 6), UINT64_C(0x85944171f73967e8));
	CHECK_EQ_U64(base_fnv1a32("", 0), 0x811c9dc5u);
	CHECK_EQ_U64(base_fnv1a32("a", 1), 0xe40c292cu);
	CHECK_EQ_U64(base_fnv1a32("foobar", 6), 0xbf9cf968u);

	/* fmix64: 0 stays 0, and one bit in changes about half the bits out. */
	CHECK_EQ_U64(base_mix64(0), 0);
	CHECK(__builtin_popcountll(base_mix64(1) ^ base_mix64(3)) > 16);
	/* Keys that differ only in high bits land apart in a small table. */
	CHECK((base_mix64(UINT64_C(1) << 40) & 255) != (base_mix64(UINT64_C(2) << 40) & 255));

	static const char *const names[] = {
		"main", "[unknown]", "std::vector<int>::push_back", "", "a;b"
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		CHECK_EQ_U64(base_mix32(base_fnv1a32(names[i], strlen(names[i]))),
			     old_svg_name_hash(names[i]));

	static const uint32_t ids[] = { 1, 2, 3, 0xffffffffu, 0 };
	for (size_t n = 0; n <= 5; n++)
		CHECK_EQ_U64(base_hash_u32s(n, ids, n), old_hash_ids(ids, n));
	/* The seed is part of the key. */
	CHECK(base_hash_u32s(1, ids, 3) != base_hash_u32s(2, ids, 3));
}

int main(void)
{
	test_grow();
	test_grow_zero();
	test_grow_overflow();
	test_hash();
	return check_exit_status("unit-base");
}
