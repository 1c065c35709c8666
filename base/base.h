/* base/base.h - the helpers every other module needs: array growth,
 * hashing and the hash index.
 *
 * The lowest module: it may call nothing but libc, and every other folder
 * (arch/ included) may use it.  A rule that two modules need lives here once
 * instead of in a copy per module: how an array grows (doubling, checked
 * for overflow, the old array kept on failure), how bytes and integers
 * are hashed (FNV-1a, the murmur3 finalizer), and how a record is found
 * by its content (one open-addressing index for every table, and the map
 * of 64-bit keys to 32-bit values built on it).
 */
#ifndef STACKSPY_BASE_H
#define STACKSPY_BASE_H

#include <stdbool.h>
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

/* ---- hash index (index.c) ------------------------------------------------ */

/*
 * The one hash table: an index of 32-bit record ids keyed by the records'
 * content.  The records stay where their owner keeps them (a dense array
 * whose positions are the ids, usually); the index only maps a key's
 * 64-bit hash to the ids stored under it, and asks the owner's equality
 * function whether a candidate's record holds the key.
 *
 * Open addressing, linear probing, a power-of-two capacity kept at most
 * half full.  Each slot holds the low 32 bits of the hash beside the id
 * (8 bytes a slot), so a probe compares a record only when those bits
 * match, and growing rehashes from the slots without asking the owner.
 * Removal shifts the entries behind back into the hole: no tombstones,
 * and a table that churns (threads come and go) never degrades.
 *
 * Contract: the hash must be mixed (base_mix64, base_hash_u32s, ...): its
 * low bits choose the slot.  Ids are anything but BASE_INDEX_NONE; the
 * index does not look for duplicates (find first).  At most 2^31 ids.
 * Zero-initialize a struct base_index; base_index_free() releases its
 * memory and leaves it empty and usable.  No lookup allocates.
 */
struct base_index_slot {
	uint32_t hash;            /* the low 32 bits of the key's hash */
	uint32_t id1;             /* id + 1; 0: empty */
};

struct base_index {
	struct base_index_slot *slot;
	size_t cap, n;            /* cap: 0 or a power of two; n: ids stored */
};

#define BASE_INDEX_NONE UINT32_MAX

/* Does record id (of owner) hold key? */
typedef bool base_index_equal_fn(const void *owner, const void *key, uint32_t id);

/*
 * Returns the id stored under hash whose record equal() says holds key,
 * or BASE_INDEX_NONE.  Inline: it is on the path of every sample, and a
 * constant equal() is inlined with it.
 */
static inline uint32_t base_index_find(const struct base_index *x, uint64_t hash,
				       base_index_equal_fn *equal, const void *owner,
				       const void *key)
{
	uint32_t h = (uint32_t)hash;
	size_t mask = x->cap - 1;

	if (!x->n)
		return BASE_INDEX_NONE;
	for (size_t i = h & mask;; i = (i + 1) & mask) {
		const struct base_index_slot *s = &x->slot[i];

		if (!s->id1)
			return BASE_INDEX_NONE;
		if (s->hash == h && equal(owner, key, s->id1 - 1))
			return s->id1 - 1;
	}
}

/* Makes room for n ids in all, so that inserting up to n ids cannot fail
 * (an owner that must not half-change reserves first).  Returns 0, or
 * -ENOMEM with x unchanged. */
int base_index_reserve(struct base_index *x, size_t n);

/* Stores id under hash (growing: see base_index_reserve).  Returns 0,
 * -EINVAL for BASE_INDEX_NONE, or -ENOMEM with x unchanged. */
int base_index_insert(struct base_index *x, uint64_t hash, uint32_t id);

/* Removes id, stored under hash.  Returns false if it is not there. */
bool base_index_remove(struct base_index *x, uint64_t hash, uint32_t id);

/* Removes every id, keeping the memory for the next ones. */
void base_index_clear(struct base_index *x);

void base_index_free(struct base_index *x);

/* ---- map of 64-bit keys to 32-bit values (map.c) ------------------------- */

/*
 * The common case of the index: an integer key (an address, a pid and
 * tid, a pointer) to a 32-bit value (an id).  The entries sit in a dense
 * array in the order first put, found through a base_index on the mixed
 * key.  Every key can be stored.  Zero-initialize it; base_map_free()
 * releases it (and leaves it empty and usable).
 */
struct base_map_entry {
	uint64_t key;
	uint32_t val;
};

struct base_map {
	struct base_map_entry *e;
	size_t n, cap;            /* entries stored, allocated */
	struct base_index index;  /* key -> position in e */
};

static inline bool base_map_equal(const void *owner, const void *key, uint32_t id)
{
	return ((const struct base_map_entry *)owner)[id].key == *(const uint64_t *)key;
}

/* Returns true and sets *val if key is in m.  Inline: the profiler's
 * address cache asks once per frame. */
static inline bool base_map_get(const struct base_map *m, uint64_t key, uint32_t *val)
{
	uint32_t id = base_index_find(&m->index, base_mix64(key), base_map_equal, m->e, &key);

	if (id == BASE_INDEX_NONE)
		return false;
	*val = m->e[id].val;
	return true;
}

/* Sets key to val, replacing its value if it is there.  Returns 0 or
 * -ENOMEM (m unchanged). */
int base_map_put(struct base_map *m, uint64_t key, uint32_t val);

/* Removes every key, keeping the memory for the next ones. */
void base_map_reset(struct base_map *m);

void base_map_free(struct base_map *m);

#endif
