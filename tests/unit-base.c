/*
 * Unit tests of base/: array growth (doubling from the minimum, the new
 * part zeroed on request, a size that overflows refused with the old array
 * kept), the hashes' values (published FNV-1a vectors, and the values
 * the copies that base/ replaced gave: SVG colours must not change), and
 * the hash index (find, insert, growth, removal by backward shift, keys
 * that all collide, id 0) and the map on it (the profiler's address
 * cache).
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

/* ---- the index ------------------------------------------------------------ */

/* The records of the tests: keys[id], hashed by a hash the test chooses. */
struct keys {
	uint64_t key[4096];
	uint64_t (*hash)(uint64_t key);
	unsigned calls;           /* of equal(): comparisons made */
};

static uint64_t hash_mixed(uint64_t key)
{
	return base_mix64(key);
}

/* Every key in one probe chain: the stored hash bits cannot tell them
 * apart, only equal() can. */
static uint64_t hash_constant(uint64_t key)
{
	(void)key;
	return 12345;
}

static bool keys_equal(const void *owner, const void *key, uint32_t id)
{
	struct keys *k = (struct keys *)owner;

	k->calls++;
	return k->key[id] == *(const uint64_t *)key;
}

static uint32_t find(const struct base_index *x, struct keys *k, uint64_t key)
{
	return base_index_find(x, k->hash(key), keys_equal, k, &key);
}

static void test_index_basic(void)
{
	struct base_index x = { 0 };
	struct keys k = { .hash = hash_mixed };

	/* Empty, never allocated: a lookup finds nothing. */
	CHECK(find(&x, &k, 7) == BASE_INDEX_NONE);
	CHECK(!base_index_remove(&x, k.hash(7), 0));

	/* Id 0 is an id like any other (slots store id + 1). */
	k.key[0] = 7;
	CHECK(base_index_insert(&x, k.hash(7), 0) == 0);
	CHECK(find(&x, &k, 7) == 0);
	CHECK(find(&x, &k, 8) == BASE_INDEX_NONE);
	CHECK(base_index_insert(&x, 1, BASE_INDEX_NONE) == -EINVAL);
	CHECK_EQ_U64(x.n, 1);
	CHECK(base_index_remove(&x, k.hash(7), 0));
	CHECK(find(&x, &k, 7) == BASE_INDEX_NONE);
	CHECK_EQ_U64(x.n, 0);

	/* Growth keeps every id findable and the load at most 1/2. */
	for (uint32_t i = 0; i < 4096; i++)
		k.key[i] = (uint64_t)i << 12;
	int all = 1;
	for (uint32_t i = 0; i < 4096; i++) {
		all &= base_index_insert(&x, k.hash(k.key[i]), i) == 0;
		all &= x.cap >= 2 * x.n && (x.cap & (x.cap - 1)) == 0;
	}
	CHECK(all, "insert or load");
	CHECK_EQ_U64(x.n, 4096);
	CHECK_EQ_U64(x.cap, 8192);
	all = 1;
	for (uint32_t i = 0; i < 4096; i++)
		all &= find(&x, &k, k.key[i]) == i;
	CHECK(all, "an id lost in growth");
	/* The 32 hash bits beside each id spare the comparisons: about one
	 * per hit, whatever the chains. */
	k.calls = 0;
	for (uint32_t i = 0; i < 4096; i++)
		find(&x, &k, k.key[i]);
	CHECK(k.calls < 4096 + 16, "%u comparisons for 4096 hits", k.calls);
	k.calls = 0;
	for (uint64_t i = 0; i < 4096; i++)
		CHECK(find(&x, &k, (i << 12) + 1) == BASE_INDEX_NONE);
	CHECK(k.calls < 16, "%u comparisons for 4096 misses", k.calls);

	/* Remove every other id: the rest stay findable (backward shift
	 * keeps the chains whole), and the removed ones are gone. */
	all = 1;
	for (uint32_t i = 0; i < 4096; i += 2)
		all &= base_index_remove(&x, k.hash(k.key[i]), i);
	CHECK(all, "remove");
	CHECK(!base_index_remove(&x, k.hash(k.key[0]), 0));
	CHECK_EQ_U64(x.n, 2048);
	all = 1;
	for (uint32_t i = 0; i < 4096; i++)
		all &= find(&x, &k, k.key[i]) == (i % 2 ? i : BASE_INDEX_NONE);
	CHECK(all, "a find after removals");

	/* Reserve: room made in advance, nothing moves while it lasts. */
	CHECK(base_index_reserve(&x, 4096) == 0);
	struct base_index_slot *slot = x.slot;
	for (uint32_t i = 0; i < 4096; i += 2)
		CHECK(base_index_insert(&x, k.hash(k.key[i]), i) == 0);
	CHECK(x.slot == slot && x.n == 4096);
	CHECK(base_index_reserve(&x, SIZE_MAX) == -ENOMEM);
	CHECK(x.slot == slot && x.cap == 8192);

	/* Clear keeps the memory; the index works on. */
	base_index_clear(&x);
	CHECK(x.n == 0 && x.cap == 8192);
	CHECK(find(&x, &k, k.key[5]) == BASE_INDEX_NONE);
	CHECK(base_index_insert(&x, k.hash(k.key[5]), 5) == 0);
	CHECK(find(&x, &k, k.key[5]) == 5);
	base_index_free(&x);
	CHECK(x.slot == NULL && x.cap == 0 && x.n == 0);
	CHECK(find(&x, &k, k.key[5]) == BASE_INDEX_NONE);
}

/* Every key under one hash: one chain, wrapping around the end of the
 * table, through growth and removals from its middle. */
static void test_index_collisions(void)
{
	struct base_index x = { 0 };
	struct keys k = { .hash = hash_constant };
	int all = 1;

	for (uint32_t i = 0; i < 200; i++) {
		k.key[i] = 1000 + i;
		all &= base_index_insert(&x, k.hash(k.key[i]), i) == 0;
	}
	CHECK(all, "insert");
	CHECK_EQ_U64(x.n, 200);
	all = 1;
	for (uint32_t i = 0; i < 200; i++)
		all &= find(&x, &k, k.key[i]) == i;
	CHECK(all, "find in one chain");
	CHECK(find(&x, &k, 999) == BASE_INDEX_NONE);

	/* Out of the middle, the front and the back of the chain. */
	uint32_t gone[] = { 100, 0, 199, 57, 101 };
	for (size_t g = 0; g < sizeof(gone) / sizeof(*gone); g++)
		CHECK(base_index_remove(&x, 12345, gone[g]), "remove %u", gone[g]);
	all = 1;
	for (uint32_t i = 0; i < 200; i++) {
		bool removed = i == 100 || i == 0 || i == 199 || i == 57 || i == 101;
		all &= find(&x, &k, k.key[i]) == (removed ? BASE_INDEX_NONE : i);
	}
	CHECK(all, "find after removals from one chain");
	CHECK_EQ_U64(x.n, 195);

	/* Mixed homes around the wrap: hashes near the end of the table. */
	base_index_free(&x);
	CHECK(base_index_reserve(&x, 8) == 0);
	size_t cap = x.cap;
	uint64_t h[6] = { cap - 1, cap - 1, 0, cap - 2, cap - 1, 1 };
	for (uint32_t i = 0; i < 6; i++)
		CHECK(base_index_insert(&x, h[i], i) == 0);
	CHECK(base_index_remove(&x, h[3], 3));
	CHECK(base_index_remove(&x, h[0], 0));
	for (uint32_t i = 0; i < 6; i++) {
		uint32_t got = BASE_INDEX_NONE;

		for (size_t s = 0; s < x.cap; s++)
			if (x.slot[s].id1 == i + 1)
				got = i;
		CHECK(got == (i == 0 || i == 3 ? BASE_INDEX_NONE : i), "id %u", i);
	}
	/* Each remaining entry is reachable from its home without a hole. */
	for (size_t s = 0; s < x.cap; s++) {
		if (!x.slot[s].id1)
			continue;
		for (size_t j = x.slot[s].hash & (x.cap - 1); j != s; j = (j + 1) & (x.cap - 1))
			CHECK(x.slot[j].id1, "hole at %zu before slot %zu", j, s);
	}
	base_index_free(&x);
}

/* The profiler's address cache: keys that share their low bits
 * (addresses), address 0, and every bit set. */
static void test_map(void)
{
	struct base_map c = { 0 };
	uint32_t id = 7;
	int all = 1;

	CHECK(!base_map_get(&c, 0x1000, &id));
	CHECK(id == 7);
	for (uint64_t i = 0; i < 5000; i++)
		all &= base_map_put(&c, i << 12, (uint32_t)i) == 0;
	CHECK(all);
	CHECK_EQ_U64(c.n, 5000);
	CHECK(c.index.cap >= 2 * c.n);
	for (uint64_t i = 0; i < 5000; i++)
		all &= base_map_get(&c, i << 12, &id) && id == (uint32_t)i;
	CHECK(all);
	CHECK(!base_map_get(&c, 5000u << 12, &id));
	CHECK(!base_map_get(&c, (1u << 12) + 1, &id));
	/* a key put again is replaced, not added */
	CHECK(base_map_put(&c, 3u << 12, 99) == 0);
	CHECK_EQ_U64(c.n, 5000);
	CHECK(base_map_get(&c, 3u << 12, &id) && id == 99);
	/* no key is reserved for empty slots */
	CHECK(!base_map_get(&c, UINT64_MAX, &id));
	CHECK(base_map_put(&c, UINT64_MAX, 1) == 0);
	CHECK(base_map_get(&c, UINT64_MAX, &id) && id == 1);
	CHECK_EQ_U64(c.n, 5001);
	/* reset keeps the memory, free does not; both empty it */
	size_t cap = c.index.cap;
	base_map_reset(&c);
	CHECK(c.n == 0 && c.index.cap == cap);
	CHECK(!base_map_get(&c, 3u << 12, &id));
	CHECK(base_map_put(&c, 3u << 12, 5) == 0);
	CHECK(base_map_get(&c, 3u << 12, &id) && id == 5 && c.n == 1);
	base_map_free(&c);
	CHECK(c.n == 0 && c.index.cap == 0 && !c.e);
	CHECK(!base_map_get(&c, 3u << 12, &id));
}

int main(void)
{
	test_grow();
	test_grow_zero();
	test_grow_overflow();
	test_hash();
	test_index_basic();
	test_index_collisions();
	test_map();
	return check_exit_status("unit-base");
}
