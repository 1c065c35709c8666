/* base/base.h - the helpers every other module needs: array growth and
 * hashing.
 *
 * The lowest module: it may call nothing but libc, and every other folder
 * (arch/ included) may use it.  A rule that two modules need lives here once
 * instead of in a copy per module: how an array grows (doubling, checked
 * for overflow, the old array kept on failure) and how bytes and integers
 * are hashed (FNV-1a, the murmur3 finalizer).
 */
#ifndef STACKSPY_BASE_H
#define STACKSPY_BASE_H

#include <stddef.h>
#include <stdint.h>

/* ---- array growth (grow.c) --------------------------------------------- */

/*
 * Makes room for need elements of size bytes in the array at *arrp, whose
 * capacity is *cap: the capacity doubles (from min when it is 0) until it
 * holds need, so appends stay amortized O(1).  arrp is the address of the
 * array's pointer, of any pointer type.  Returns 0, or -ENOMEM when the
 * size overflows or realloc fails: then *arrp and *cap are untouched and
 * the old array is still valid (nothing is freed).  Pointers into the
 * array are stale after a growth.
 */
int base_grow(void *arrp, size_t *cap, size_t need, size_t size, size_t min);

/* The same, and the new part (from the old capacity on) is zeroed: for
 * tables indexed by an id, whose unused slots must read as empty. */
int base_grow_zero(void *arrp, size_t *cap, size_t need, size_t size, size_t min);

/* Type-checked forms: arr is the array (a pointer lvalue), cap its
 * capacity (a size_t lvalue); the element size is taken from arr. */
#define BASE_GROW(arr, cap, need, min) \
	base_grow(&(arr), &(cap), (need), sizeof(*(arr)), (min))
#define BASE_GROW_ZERO(arr, cap, need, min) \
	base_grow_zero(&(arr), &(cap), (need), sizeof(*(arr)), (min))

/* ---- hashing (hash.c) ---------------------------------------------------- */

/*
 * The murmur3 finalizer (fmix64): every bit of h reaches every bit of the
 * result.  The one mix of integer keys before they index a power-of-two
 * hash table (the low bits of a key or of a bare multiply probe badly), and
 * the finalizer of the hashes below.  Inline: it is on the path of every
 * table lookup.
 */
static inline uint64_t base_mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= UINT64_C(0xff51afd7ed558ccd);
	h ^= h >> 33;
	h *= UINT64_C(0xc4ceb9fe1a85ec53);
	h ^= h >> 33;
	return h;
}

/* The 32-bit murmur3 finalizer (fmix32), for base_fnv1a32. */
static inline uint32_t base_mix32(uint32_t h)
{
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

/* FNV-1a (64-bit) of len bytes at p: unmixed, base_mix64 it before its
 * low bits index a table. */
uint64_t base_fnv1a64(const void *p, size_t len);

/* FNV-1a (32-bit) of len bytes at p.  Only for values that must stay what
 * they have always been (the SVG colours of a function name); new code
 * uses base_fnv1a64. */
uint32_t base_fnv1a32(const void *p, size_t len);

/* A hash of n 32-bit ids (a stack of frame ids): FNV-1a one id at a time
 * from a basis xor seed (a caller's extra key: a length, a thread), then
 * base_mix64. */
uint64_t base_hash_u32s(uint64_t seed, const uint32_t *ids, size_t n);

#endif
