/*
 * entry_cache.h — bounded cache of decoded entries by ID (back-mdb).
 *
 * Maps an entry ID to a caller object (the backend stores decoded entries)
 * with reference counts, so an object evicted or invalidated while a search
 * still uses it lives until the last handle is released. Bounded by a count
 * (`cachesize`), evicted by CLOCK (a hit only sets a bit; no list moves).
 *
 * Staleness: every insert carries the LMDB snapshot (read txn ID) the
 * object was decoded from, and every invalidation the ID of the committed
 * write. A shard refuses inserts from snapshots older than its latest
 * invalidation, so a reader that raced a writer cannot put the old entry
 * back after the writer invalidated it.
 *
 * Memory: the cache takes ownership of each inserted object and calls the
 * destroy function once no handle and no cache slot refer to it. Slots are
 * pooled per shard: the hit path, release and a steady-state insert do not
 * allocate; a hold's handle is the thread's spare (the heap the first time,
 * or when a release finds its thread already has one).
 * Thread-safety: all functions may be called from any thread; the table is
 * split into shards with one mutex each, held only for a few loads and
 * stores, so readers on different shards never meet; most misses take no
 * lock at all (cache_clock.h: presence).
 *
 * Errors: LUMEN_ENOTFOUND (miss), LUMEN_ENOMEM, LUMEN_EINVAL.
 *
 * Caveats:
 *  - every handle must be released before entry_cache_destroy.
 *  - objects are shared between threads: treat them as read-only.
 *  - a hit may come from a snapshot newer than the caller's read txn
 *    (never older than the last invalidation it saw committed).
 */
#ifndef LUMEN_ENTRY_CACHE_H
#define LUMEN_ENTRY_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache_clock.h"

struct entry_cache;
struct entry_cache_handle;

typedef void (*entry_cache_destroy_fn)(void *object, void *ctx);

/*
 * A cache of at most capacity objects (0 disables caching: every get
 * misses and inserts hand back an uncached handle). destroy(object, ctx)
 * frees an object. Errors: LUMEN_EINVAL (no destroy), LUMEN_ENOMEM.
 */
int entry_cache_create(size_t capacity, entry_cache_destroy_fn destroy, void *ctx,
		       struct entry_cache **out);
void entry_cache_destroy(struct entry_cache *cache);

/* A handle on the object cached for id. Errors: LUMEN_ENOTFOUND (miss). */
int entry_cache_get(struct entry_cache *cache, uint64_t id, struct entry_cache_handle **out);
/* The object behind a handle. */
void *entry_cache_object(const struct entry_cache_handle *handle);
/* Drops a handle; may destroy the object if the cache no longer holds it. */
void entry_cache_release(struct entry_cache *cache, struct entry_cache_handle *handle);

/*
 * Hands object (decoded for id from snapshot `version`) to the cache and
 * returns a handle on it. If the object cannot be kept (stale version, id
 * already cached, caching disabled) the handle is still valid and the
 * object is destroyed at release. On LUMEN_ENOMEM the object has been
 * destroyed. Errors: LUMEN_ENOMEM.
 */
int entry_cache_insert(struct entry_cache *cache, uint64_t id, void *object, uint64_t version,
		       struct entry_cache_handle **out);

/*
 * entry_cache_insert for a reader streaming through many entries (a large
 * search): the object is kept only in a free position, never by evicting
 * another, so a scan that does not fit cannot push out what the next
 * scan (or any reader) will ask for, nor pay an eviction per miss.
 * Errors: LUMEN_ENOMEM.
 */
int entry_cache_insert_scan(struct entry_cache *cache, uint64_t id, void *object,
			    uint64_t version, struct entry_cache_handle **out);

/*
 * A handle on an object the cache never keeps (a partial decode, which no
 * other reader may be handed): destroyed at release. Errors: LUMEN_ENOMEM
 * (the object has been destroyed).
 */
int entry_cache_hold(struct entry_cache *cache, uint64_t id, void *object,
		     struct entry_cache_handle **out);

/*
 * Is id worth keeping, for a reader that can decode less when it is not?
 * While a position is free, yes. Once full the doorkeeper must have seen
 * id twice before, where an insert needs once: one client's search and
 * bind of an account are two reads in a row, not yet a sign of a hot
 * entry. A refusal notes a sighting (counted as not_admitted), so the
 * third read of an ID, or an insert after one refusal, is admitted.
 * Takes no lock (the doorkeeper's bits are atomics: cache_clock.h).
 */
bool entry_cache_admits(struct entry_cache *cache, uint64_t id);

/*
 * The newest snapshot the handle's object is known to be current at: the
 * snapshot it was inserted from, or a later one passed to
 * entry_cache_confirm. Lock-free.
 */
uint64_t entry_cache_version(const struct entry_cache_handle *handle);
/*
 * The caller checked that the object is still current at snapshot version
 * (e.g. the backend re-derived an entry's DN): raise its version, so later
 * readers can skip the check. Never lowers it. Lock-free.
 */
void entry_cache_confirm(struct entry_cache_handle *handle, uint64_t version);

/* Forgets id after write `version` committed (call after the commit). */
void entry_cache_invalidate(struct entry_cache *cache, uint64_t id, uint64_t version);

void entry_cache_get_stats(struct entry_cache *cache, struct cache_stats *out);

#endif
