/*
 * cache_clock.h — what the entry cache and the IDL cache share (back-mdb
 * layer): how a capacity is split into shards; the cache's memory, its
 * shards' creation and teardown and their summed figures (cache_create,
 * cache_destroy, cache_get_stats); and per shard its lock, the mask of its
 * hash table, and a CLOCK ring of `capacity` positions with a stack of
 * free ones, the staleness mark and the counters.
 *
 * A cache is a struct that begins with a struct cache_head and ends with
 * its shards, each a struct that begins with a struct cache_shard; a
 * struct cache_layout tells cache_create where they are and how to set up
 * and release what a shard adds (its table and slots).
 *
 * A cache keeps its own record of what occupies each position; the ring
 * only hands positions out: a free one, else the first one the CLOCK hand
 * finds with its referenced bit clear (an eviction: the caller unlinks the
 * occupant there before reusing the position). A hit sets the bit
 * (cache_clock_touch); no list moves.
 *
 * Admission: once a shard is full, a new key gets a position only if it
 * was already asked for since the last few evictions' worth of refusals
 * (a doorkeeper bit per hash, cleared after `capacity` refusals): under
 * uniform access to far more keys than fit, most misses would evict a
 * value that is no likelier to be read again than the newcomer, and the
 * churn costs more than it saves; a key read twice gets in. The
 * doorkeeper takes no lock (cache_clock_admit, entry_cache_admits, and an
 * IDL put it refuses never touch the shard): its bits, the count that
 * clears them and whether the shard is full are atomics. It only advises:
 * a sighting lost to a racing clear, or a full flag read a moment late,
 * decides one admission the other way.
 *
 * Presence: the cache also counts, in one small array indexed by bits of
 * the hash its tables and shard choice do not use, the resident keys that
 * fall on each slot. A get whose slot counts none is a miss without the
 * shard (cache_presence_absent): in a directory much larger than the
 * cache most gets miss, and the shard's lock, bucket and chain were each
 * a miss of the CPU's caches, where the array is small and read-mostly.
 * The counts change with atomic steps as keys come and go; a reader that
 * sees one a moment late only misses a key just inserted, as any racing
 * miss may (the caller reads the store, which is always right). Misses so
 * answered are counted per thread stripe (cache_count_held likewise).
 *
 * Staleness: every insert carries the LMDB snapshot it was read from, every
 * invalidation the txn ID of the committed write; an insert older than the
 * shard's latest invalidation is refused (cache_clock_fresh), so a reader
 * that raced a writer cannot put the old value back.
 *
 * Memory: cache_clock_init allocates the bit array and the free stack;
 * cache_clock_free releases them; cache_create allocates the cache
 * (cache-line aligned shards) and cache_destroy frees it.
 * Thread-safety: cache_get_stats takes each shard's lock in turn; the
 * cache_clock_* functions take none (the caller holds its shard's lock),
 * except that cache_clock_admit and cache_clock_admit_seen_twice need none;
 * the cache_presence_* functions need no lock.
 * Errors: LUMEN_ENOMEM.
 */
#ifndef LUMEN_CACHE_CLOCK_H
#define LUMEN_CACHE_CLOCK_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Enough shards that 2–8 workers rarely share a lock. */
#define CACHE_MAX_SHARDS 16
/* Below this many positions per shard, fewer shards keep CLOCK meaningful. */
#define CACHE_MIN_SHARD_CAPACITY 16

struct cache_counters {
	uint64_t hits, misses, evictions, invalidations, refused;
	uint64_t not_admitted;       /* a key seen too few times while full (doorkeeper) */
};

struct cache_clock {
	size_t capacity;             /* positions; 0 = caching disabled */
	size_t used;                 /* occupied positions */
	size_t hand;
	uint8_t *referenced;         /* per position: the CLOCK bit */
	size_t *free;                /* stack of free positions */
	size_t n_free;
	uint64_t last_invalidation;  /* newest committed write invalidated */
	struct cache_counters counts;  /* (not_admitted: the atomic below) */
	/* The doorkeeper, read and written without the lock: a bit per hash,
	 * seen_mask + 1 bits, then as many for "seen twice"
	 * (cache_clock_admit_seen_twice). */
	atomic_uint_fast64_t *seen;
	size_t seen_mask;
	atomic_size_t seen_since_clear;  /* first sightings since the last clear */
	atomic_bool full;                /* n_free == 0; written under the lock */
	atomic_uint_fast64_t not_admitted;
};

/* What both caches report (entry_cache_get_stats, idl_cache_get_stats). */
struct cache_stats {
	uint64_t hits, misses, evictions, invalidations, inserts_refused;
	uint64_t not_admitted;
	uint64_t held;      /* objects handed out without being kept (entry_cache_hold) */
	uint64_t size;      /* objects (keys) held now */
	uint64_t capacity;
};

/* What every shard begins with. */
struct cache_shard {
	pthread_mutex_t lock;
	struct cache_clock clock;
	size_t bucket_mask;          /* hash table of bucket_mask + 1 buckets */
	struct cache_head *cache;    /* the cache the shard belongs to */
};

/*
 * What a stripe of threads counted without a shard lock: misses the
 * presence counts answered, and objects handed out without being kept
 * (entry_cache_hold). Striped so that threads do not share a line.
 */
#define CACHE_STRIPES 16
struct cache_stripe {
	atomic_uint_fast64_t misses, held;
} __attribute__((aligned(64)));

/* What every cache begins with; its shards follow (struct cache_layout). */
struct cache_head {
	size_t capacity;
	size_t n_shards;             /* a power of two */
	const struct cache_layout *layout;
	atomic_uchar *presence;      /* resident keys per slot, saturating */
	size_t presence_mask;
	struct cache_stripe stripes[CACHE_STRIPES];
};

/*
 * Where a cache's shards are (shards_offset: offsetof its shard array;
 * shard_size: sizeof one shard, which begins with a struct cache_shard),
 * and what its shards add: init allocates it once the struct cache_shard
 * is set up (ring of clock.capacity positions, bucket_mask + 1 buckets);
 * fini releases it, also after a failed or skipped init (fields zeroed).
 */
struct cache_layout {
	size_t shards_offset;
	size_t shard_size;
	int (*init)(struct cache_shard *shard);
	void (*fini)(struct cache_head *cache, struct cache_shard *shard);
};

/*
 * A zeroed cache of layout for at most capacity objects, split into
 * shards (cache_shard_count), each initialized. LUMEN_ENOMEM (then
 * nothing is left allocated), or what layout->init returned.
 */
int cache_create(const struct cache_layout *layout, size_t capacity, struct cache_head **out);
/* Releases every shard (layout->fini) and the cache; NULL is allowed. */
void cache_destroy(struct cache_head *cache);
/* The counters and occupancy summed over the shards, and the capacity. */
void cache_get_stats(struct cache_head *cache, struct cache_stats *out);

/* The number of shards (a power of two) for a cache of `capacity`. */
size_t cache_shard_count(size_t capacity);
/* The capacity of shard i of n_shards (they differ by at most one). */
size_t cache_shard_capacity(size_t capacity, size_t n_shards, size_t i);

/*
 * True, and the miss counted, if no resident key shares hash h's slot:
 * the key is not cached (as of this read). False: it may be, ask its
 * shard under the lock.
 */
bool cache_presence_absent(struct cache_head *cache, uint64_t h);
/* A key with hash h became resident / stopped being (after linking it,
 * when unlinking it). */
void cache_presence_add(struct cache_head *cache, uint64_t h);
void cache_presence_remove(struct cache_head *cache, uint64_t h);
/* Counts an object handed out without being kept; no lock needed. */
void cache_count_held(struct cache_head *cache);

int cache_clock_init(struct cache_clock *c, size_t capacity);
void cache_clock_free(struct cache_clock *c);

/*
 * A position for a new occupant (capacity must be > 0): a free one
 * (*evicted false), or the CLOCK's victim (*evicted true; counted as an
 * eviction: the caller unlinks its occupant).
 */
size_t cache_clock_take(struct cache_clock *c, bool *evicted);
/*
 * May a new key with this hash take a position? Always while a position is
 * free; once full, only if the doorkeeper saw the hash before (else it
 * notes it and counts a not_admitted). Caching disabled: false. With or
 * without the shard's lock (so is cache_clock_admit_seen_twice).
 */
bool cache_clock_admit(struct cache_clock *c, uint64_t hash);
/*
 * cache_clock_admit asking for more: once full, the hash seen twice before
 * (each refusal notes a sighting and counts a not_admitted). For a reader
 * that can do with less when not kept: two reads in a row of one key (a
 * login's search and bind) are then not yet a reason to keep it.
 */
bool cache_clock_admit_seen_twice(struct cache_clock *c, uint64_t hash);
/* The occupant of pos is gone (invalidated, or not kept): pos is free. */
void cache_clock_release(struct cache_clock *c, size_t pos);

static inline void cache_clock_touch(struct cache_clock *c, size_t pos)
{
	c->referenced[pos] = 1;
}

/* May a value read from snapshot `version` be inserted? */
static inline bool cache_clock_fresh(const struct cache_clock *c, uint64_t version)
{
	return version >= c->last_invalidation;
}

/* A write committed as `version` invalidated something in this shard. */
static inline void cache_clock_invalidated(struct cache_clock *c, uint64_t version)
{
	if (version > c->last_invalidation)
		c->last_invalidation = version;
}

/* sum += c's counters. */
void cache_counters_add(struct cache_counters *sum, const struct cache_counters *c);
/* Adds the clock's counters, its doorkeeper's refusals included, to sum. */
void cache_clock_add_counters(struct cache_counters *sum, struct cache_clock *c);

#endif
