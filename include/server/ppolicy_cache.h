/*
 * ppolicy_cache.h — parsed password policies by DN, so that a bind does
 * not read and parse its pwdPolicy entry (server layer; used by
 * overlay_ppolicy.c).
 *
 * A slot holds the answer for one normalized DN: the parsed policy, or
 * "no usable policy there" (no entry, not a pwdPolicy, a value ppolicy
 * cannot use). Every slot belongs to a generation; a write to a pwdPolicy
 * entry moves the cache to a new generation twice, in the write's
 * transaction (ppolicy_cache_changing) and once it has committed
 * (ppolicy_cache_committed), so an answer read from a snapshot older than
 * the commit never outlives it: a reader notes the generation before its
 * read (ppolicy_cache_get) and its answer is kept only if no write began
 * meanwhile, and is dropped at the commit anyway.
 *
 * Memory: fixed-size, embedded in its owner (init/destroy); DNs longer
 * than PPOLICY_CACHE_DN_MAX are not cached (read every time).
 * Thread-safety: every function may be called from any thread; one
 * mutex, held for a copy of a slot.
 * Caveats:
 *  - PPOLICY_CACHE_SLOTS policies at once, replaced round-robin.
 */
#ifndef LUMEN_PPOLICY_CACHE_H
#define LUMEN_PPOLICY_CACHE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "ppolicy.h"

#define PPOLICY_CACHE_SLOTS 16
#define PPOLICY_CACHE_DN_MAX 256

struct ppolicy_cache_slot {
	uint64_t generation;               /* 0: empty */
	size_t ndn_len;
	uint8_t ndn[PPOLICY_CACHE_DN_MAX];
	bool found;
	struct ppolicy policy;
};

struct ppolicy_cache {
	pthread_mutex_t lock;
	uint64_t generation;               /* starts at 1 */
	bool write_pending;                /* changing seen, committed not yet */
	size_t next_victim;
	struct ppolicy_cache_slot slots[PPOLICY_CACHE_SLOTS];
};

/* Errors: LUMEN_ENOMEM (the mutex could not be made). */
int ppolicy_cache_init(struct ppolicy_cache *c);
void ppolicy_cache_destroy(struct ppolicy_cache *c);

/*
 * The cached answer for ndn: true with *found (and *out when found).
 * False when there is none; *generation is then what to hand
 * ppolicy_cache_put after reading the entry.
 */
bool ppolicy_cache_get(struct ppolicy_cache *c, struct ber_view ndn, struct ppolicy *out,
		       bool *found, uint64_t *generation);
/* Keep the answer read for ndn, unless a write began since generation. */
void ppolicy_cache_put(struct ppolicy_cache *c, struct ber_view ndn, uint64_t generation,
		       const struct ppolicy *p, bool found);
/* A pwdPolicy entry is being written (in its transaction). */
void ppolicy_cache_changing(struct ppolicy_cache *c);
/* A write has committed: forget, if a pwdPolicy entry was in it. */
void ppolicy_cache_committed(struct ppolicy_cache *c);

#endif
