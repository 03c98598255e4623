/*
 * idl_cache.h — bounded cache of index lookups (back-mdb).
 *
 * Maps (index table, index key) to a copy of the IDL read for it, so a hot
 * equality or presence lookup costs a hash probe and a memcpy instead of a
 * B-tree walk. Bounded by a count of keys (`idlcachesize`) and, per key, by
 * max_ids (longer lists are not cached: they cost more memory than they
 * save, and ranges are always cheap). CLOCK eviction, sharded locks.
 *
 * Staleness: as entry_cache.h — inserts carry the reader's snapshot ID,
 * invalidations the committed write's ID, and a shard refuses inserts from
 * snapshots older than its latest invalidation. Writers invalidate every
 * key they changed after their commit.
 *
 * Memory: the cache owns its copies; idl_cache_get copies into the
 * caller's IDL (no allocation when the caller's buffer is large enough).
 * Inserts allocate only when a slot's buffer must grow.
 * Thread-safety: every function may be called from any thread.
 *
 * Errors: LUMEN_ENOTFOUND (miss), LUMEN_ENOMEM.
 *
 * Caveats:
 *  - a hit may reflect a snapshot newer than the caller's read txn.
 *  - the caller's IDL rules apply on a hit: if it cannot hold the list it
 *    degrades to the covering range (still a correct candidate set).
 */
#ifndef LUMEN_IDL_CACHE_H
#define LUMEN_IDL_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "cache_clock.h"

#include "idl.h"
#include "index_table.h"

#define IDL_CACHE_DEFAULT_MAX_IDS 4096

struct idl_cache;

/*
 * A cache of at most capacity keys (0 disables it), caching lists of at
 * most max_ids IDs (0 = IDL_CACHE_DEFAULT_MAX_IDS). Errors: LUMEN_ENOMEM.
 */
int idl_cache_create(size_t capacity, size_t max_ids, struct idl_cache **out);
void idl_cache_destroy(struct idl_cache *cache);

/* Copies the cached IDL of (table, key) into out. Errors: LUMEN_ENOTFOUND. */
int idl_cache_get(struct idl_cache *cache, uint32_t table, const struct index_key *key,
		  struct idl *out);
/*
 * Caches a copy of idl, read from snapshot `version`. Refusals (stale,
 * too long, disabled) are not errors. Errors: LUMEN_ENOMEM (nothing cached).
 */
int idl_cache_put(struct idl_cache *cache, uint32_t table, const struct index_key *key,
		  const struct idl *idl, uint64_t version);
/* Forgets (table, key) after write `version` committed. */
void idl_cache_invalidate(struct idl_cache *cache, uint32_t table, const struct index_key *key,
			  uint64_t version);

void idl_cache_get_stats(struct idl_cache *cache, struct cache_stats *out);

#endif
