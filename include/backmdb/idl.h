/*
 * idl.h — ID lists: sorted sets of entry IDs that degrade to ranges (back-mdb).
 *
 * An IDL is either a list (ids[0..count) strictly ascending, no ID 0) or a
 * range [lo, hi] standing for "every ID from lo to hi". A range is a
 * superset: it may hold IDs that do not match, which is fine because every
 * candidate is re-tested against the full filter. Whenever a result would
 * not fit (more than IDL_MAX_IDS IDs, a caller buffer that is full, or an
 * allocation that fails), the IDL degrades to the range covering it, so no
 * IDL operation can fail and none ever loses a candidate.
 *
 * Memory: idl_init_buffer() works on a caller buffer and never allocates
 * (the zero-allocation form for per-worker scratch); idl_init() makes a
 * growable list that owns its buffer and is freed by idl_release().
 * Thread-safety: none; an IDL belongs to one thread.
 *
 * Caveats:
 *  - ID 0 is never an entry ID (it is dn2id's "no parent"); iteration uses it
 *    as the end marker, and inserting it is ignored.
 *  - a range never narrows back into a list; deletes from a range only trim
 *    its ends.
 *  - ids[] may be filled directly only through idl_reserve() followed by
 *    idl_sort_unique().
 */
#ifndef LUMEN_IDL_H
#define LUMEN_IDL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A list longer than this becomes a range (also the stored index bound). */
#define IDL_MAX_IDS ((size_t)1 << 16)
/* Largest entry ID; idl_set_all() spans [1, IDL_ID_MAX]. */
#define IDL_ID_MAX (UINT64_MAX >> 1)

struct idl {
	uint64_t *ids;     /* list mode: ascending IDs */
	size_t count;      /* list mode: number of IDs */
	size_t capacity;   /* slots in ids */
	uint64_t lo, hi;   /* range mode: bounds, inclusive */
	bool is_range;
	bool owns;         /* ids is ours to grow and free */
};

struct idl_iter {
	size_t pos;        /* list: next index */
	uint64_t next;     /* range: next ID to hand out (0 = done) */
};

/* Empty growable IDL (allocates on demand, up to IDL_MAX_IDS slots). */
void idl_init(struct idl *idl);
/* Empty IDL over a caller buffer of capacity IDs; never allocates. */
void idl_init_buffer(struct idl *idl, uint64_t *buffer, size_t capacity);
/* Frees an owned buffer; the IDL is left empty and growable. */
void idl_release(struct idl *idl);

void idl_clear(struct idl *idl);
/* Becomes the range [lo, hi]; empty if lo > hi or hi == 0. */
void idl_set_range(struct idl *idl, uint64_t lo, uint64_t hi);
/* Becomes [1, IDL_ID_MAX]: "no information, test every ID". */
void idl_set_all(struct idl *idl);

bool idl_is_empty(const struct idl *idl);
/* Number of IDs a list holds, or hi - lo + 1 for a range. */
uint64_t idl_size(const struct idl *idl);
/* Smallest / largest ID, 0 when empty. */
uint64_t idl_first(const struct idl *idl);
uint64_t idl_last(const struct idl *idl);
bool idl_contains(const struct idl *idl, uint64_t id);

/* Adds id (no-op if present); degrades to a range when it cannot fit. */
void idl_insert(struct idl *idl, uint64_t id);
/* Removes id from a list; trims a range only at its ends. */
void idl_delete(struct idl *idl, uint64_t id);

/* a = a ∩ b, in a's storage. */
void idl_intersect(struct idl *a, const struct idl *b);
/* a = a ∪ b, in a's storage (degrades to a range if it cannot fit). */
void idl_union(struct idl *a, const struct idl *b);
/* dst = src (degrades to src's covering range if dst cannot hold it). */
void idl_copy(struct idl *dst, const struct idl *src);

/*
 * Makes room for n IDs in list mode. Returns false (IDL unchanged) if n
 * exceeds IDL_MAX_IDS, a caller buffer's capacity, or memory.
 */
bool idl_reserve(struct idl *idl, size_t n);
/* Sorts ids[0..count) and drops duplicates and ID 0 (after direct filling). */
void idl_sort_unique(struct idl *idl);

void idl_iter_init(const struct idl *idl, struct idl_iter *it);
/* Next ID in ascending order, 0 at the end. */
uint64_t idl_iter_next(const struct idl *idl, struct idl_iter *it);

#endif
