/* base/hash.c - FNV-1a, the one hash of bytes and of id sequences. */
#include "config.h"

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

#define FNV64_BASIS UINT64_C(0xcbf29ce484222325)
#define FNV64_PRIME UINT64_C(0x100000001b3)

uint64_t base_fnv1a64(const void *p, size_t len)
{
	const unsigned char *s = p;
	uint64_t h = FNV64_BASIS;

	for (size_t i = 0; i < len; i++)
		h = (h ^ s[i]) * FNV64_PRIME;
	return h;
}

uint32_t base_fnv1a32(const void *p, size_t len)
{
	const unsigned char *s = p;
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ s[i]) * 16777619u;
	return h;
}

uint64_t base_hash_u32s(uint64_t seed, const uint32_t *ids, size_t n)
{
	uint64_t h = FNV64_BASIS ^ seed;

	/* A whole id per step, not its bytes: a quarter of the multiplies,
	 * and the finalizer spreads what FNV leaves in the high bits. */
	for (size_t i = 0; i < n; i++)
		h = (h ^ ids[i]) * FNV64_PRIME;
	return base_mix64(h);
}
