/*
 * entry_cache.c — sharded, refcounted CLOCK cache of entries by ID
 * (entry_cache.h).
 *
 * Each shard has a hash table (chained through the nodes), the node at each
 * position of its CLOCK ring (cache_clock.h hands positions out) and a
 * pool of spare nodes. A resident node holds one reference for the
 * cache; each handle holds one more. Whoever drops the count to zero
 * destroys the object, always outside the shard lock.
 */
#include "entry_cache.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cache_clock.h"
#include "lumen_error.h"
#include "stable_hash.h"

struct entry_shard;

struct entry_cache_handle {
	uint64_t id;
	void *object;
	atomic_uint refs;
	atomic_uint_fast64_t version;      /* snapshot the object is known current at */
	struct entry_cache_handle *next;   /* bucket chain, or pool list */
	struct entry_shard *shard;
	size_t ring_pos;
	bool resident;
};

typedef struct entry_cache_handle node_t;

struct entry_shard {
	pthread_mutex_t lock;
	node_t **buckets;
	size_t bucket_mask;
	node_t **ring;                     /* the node at each CLOCK position */
	struct cache_clock clock;
	node_t *pool;
} __attribute__((aligned(64)));

struct entry_cache {
	entry_cache_destroy_fn destroy;
	void *ctx;
	size_t capacity;
	size_t n_shards;
	struct entry_shard shards[];
};

static uint64_t id_hash(uint64_t id)
{
	return stable_hash_mix(id);
}

static struct entry_shard *shard_of(struct entry_cache *cache, uint64_t h)
{
	return &cache->shards[(h >> 56) & (cache->n_shards - 1)];
}

static int shard_init(struct entry_shard *s, size_t capacity)
{
	size_t buckets = 1;

	while (buckets < capacity * 2)
		buckets *= 2;
	pthread_mutex_init(&s->lock, NULL);
	s->bucket_mask = buckets - 1;
	s->buckets = calloc(buckets, sizeof(*s->buckets));
	s->ring = calloc(capacity ? capacity : 1, sizeof(*s->ring));
	if (s->buckets == NULL || s->ring == NULL)
		return LUMEN_ENOMEM;
	return cache_clock_init(&s->clock, capacity);
}

static void shard_free(struct entry_cache *cache, struct entry_shard *s)
{
	for (size_t i = 0; s->ring != NULL && i < s->clock.capacity; i++) {
		if (s->ring[i] != NULL) {
			cache->destroy(s->ring[i]->object, cache->ctx);
			free(s->ring[i]);
		}
	}
	while (s->pool != NULL) {
		node_t *n = s->pool;
		s->pool = n->next;
		free(n);
	}
	free(s->buckets);
	free(s->ring);
	cache_clock_free(&s->clock);
	pthread_mutex_destroy(&s->lock);
}

int entry_cache_create(size_t capacity, entry_cache_destroy_fn destroy, void *ctx,
		       struct entry_cache **out)
{
	size_t n_shards = cache_shard_count(capacity);

	*out = NULL;
	if (destroy == NULL)
		return LUMEN_EINVAL;
	/* Shards are cache-line aligned so two workers' locks never share a line. */
	size_t size = sizeof(struct entry_cache) + n_shards * sizeof(struct entry_shard);
	struct entry_cache *cache = NULL;
	if (posix_memalign((void **)&cache, 64, size) != 0)
		return LUMEN_ENOMEM;
	memset(cache, 0, size);
	cache->destroy = destroy;
	cache->ctx = ctx;
	cache->capacity = capacity;
	cache->n_shards = n_shards;
	int rc = LUMEN_OK;
	for (size_t i = 0; i < n_shards && rc == LUMEN_OK; i++)
		rc = shard_init(&cache->shards[i], cache_shard_capacity(capacity, n_shards, i));
	if (rc != LUMEN_OK) {
		entry_cache_destroy(cache);
		return rc;
	}
	*out = cache;
	return LUMEN_OK;
}

void entry_cache_destroy(struct entry_cache *cache)
{
	if (cache == NULL)
		return;
	for (size_t i = 0; i < cache->n_shards; i++)
		shard_free(cache, &cache->shards[i]);
	free(cache);
}

static node_t **bucket_of(struct entry_shard *s, uint64_t h)
{
	return &s->buckets[h & s->bucket_mask];
}

static node_t *find(struct entry_shard *s, uint64_t h, uint64_t id)
{
	node_t *n = *bucket_of(s, h);

	while (n != NULL && n->id != id)
		n = n->next;
	return n;
}

int entry_cache_get(struct entry_cache *cache, uint64_t id, struct entry_cache_handle **out)
{
	uint64_t h = id_hash(id);
	struct entry_shard *s = shard_of(cache, h);

	pthread_mutex_lock(&s->lock);
	node_t *n = find(s, h, id);
	if (n != NULL) {
		atomic_fetch_add_explicit(&n->refs, 1, memory_order_relaxed);
		cache_clock_touch(&s->clock, n->ring_pos);
		s->clock.counts.hits++;
	} else {
		s->clock.counts.misses++;
	}
	pthread_mutex_unlock(&s->lock);
	*out = n;
	return n != NULL ? LUMEN_OK : LUMEN_ENOTFOUND;
}

void *entry_cache_object(const struct entry_cache_handle *handle)
{
	return handle->object;
}

/* Takes a node off the pool (or the heap); shard lock held. */
static node_t *node_alloc(struct entry_shard *s)
{
	node_t *n = s->pool;

	if (n != NULL)
		s->pool = n->next;
	else
		n = malloc(sizeof(*n));
	return n;
}

/* Destroys a node nobody refers to any more; lock not held. */
static void retire(struct entry_cache *cache, struct entry_shard *s, node_t *n)
{
	if (n == NULL)
		return;
	cache->destroy(n->object, cache->ctx);
	pthread_mutex_lock(&s->lock);
	n->next = s->pool;
	s->pool = n;
	pthread_mutex_unlock(&s->lock);
}

void entry_cache_release(struct entry_cache *cache, struct entry_cache_handle *n)
{
	if (n == NULL)
		return;
	/* The last reference: the node is no longer in the table. */
	if (atomic_fetch_sub_explicit(&n->refs, 1, memory_order_acq_rel) == 1)
		retire(cache, n->shard, n);
}

/* Takes a resident node out of the table and ring; shard lock held. */
static void unlink_node(struct entry_shard *s, node_t *n)
{
	node_t **link = bucket_of(s, id_hash(n->id));

	while (*link != n)
		link = &(*link)->next;
	*link = n->next;
	s->ring[n->ring_pos] = NULL;
	n->resident = false;
}

/*
 * Drops the cache's own reference of an unlinked node. Returns the node if
 * that was the last one (the caller destroys it after unlocking).
 */
static node_t *drop_cache_ref(node_t *n)
{
	if (atomic_fetch_sub_explicit(&n->refs, 1, memory_order_acq_rel) == 1)
		return n;
	return NULL;
}

/* A ring position for a new node, evicting by CLOCK if full; lock held. */
static size_t take_position(struct entry_shard *s, node_t **victim)
{
	bool evicted;
	size_t pos = cache_clock_take(&s->clock, &evicted);

	*victim = NULL;
	if (evicted) {
		node_t *n = s->ring[pos];
		unlink_node(s, n);
		*victim = drop_cache_ref(n);
	}
	return pos;
}

int entry_cache_insert(struct entry_cache *cache, uint64_t id, void *object, uint64_t version,
		       struct entry_cache_handle **out)
{
	uint64_t h = id_hash(id);
	struct entry_shard *s = shard_of(cache, h);
	node_t *victim = NULL;

	pthread_mutex_lock(&s->lock);
	node_t *n = node_alloc(s);
	if (n == NULL) {
		pthread_mutex_unlock(&s->lock);
		cache->destroy(object, cache->ctx);
		*out = NULL;
		return LUMEN_ENOMEM;
	}
	n->id = id;
	n->object = object;
	atomic_store_explicit(&n->version, version, memory_order_relaxed);
	n->shard = s;
	n->resident = false;
	atomic_init(&n->refs, 1);
	if (s->clock.capacity == 0 || !cache_clock_fresh(&s->clock, version) ||
	    find(s, h, id) != NULL) {
		s->clock.counts.refused += s->clock.capacity != 0;
	} else {
		n->ring_pos = take_position(s, &victim);
		s->ring[n->ring_pos] = n;
		n->resident = true;
		atomic_fetch_add_explicit(&n->refs, 1, memory_order_relaxed);
		node_t **bucket = bucket_of(s, h);
		n->next = *bucket;
		*bucket = n;
	}
	pthread_mutex_unlock(&s->lock);
	retire(cache, s, victim);
	*out = n;
	return LUMEN_OK;
}

uint64_t entry_cache_version(const struct entry_cache_handle *handle)
{
	return atomic_load_explicit(&handle->version, memory_order_relaxed);
}

void entry_cache_confirm(struct entry_cache_handle *handle, uint64_t version)
{
	uint64_t known = atomic_load_explicit(&handle->version, memory_order_relaxed);
	while (known < version &&
	       !atomic_compare_exchange_weak_explicit(&handle->version, &known, version,
						      memory_order_relaxed, memory_order_relaxed))
		;
}

void entry_cache_invalidate(struct entry_cache *cache, uint64_t id, uint64_t version)
{
	uint64_t h = id_hash(id);
	struct entry_shard *s = shard_of(cache, h);
	node_t *dead = NULL;

	pthread_mutex_lock(&s->lock);
	cache_clock_invalidated(&s->clock, version);
	node_t *n = find(s, h, id);
	if (n != NULL) {
		unlink_node(s, n);
		cache_clock_release(&s->clock, n->ring_pos);
		s->clock.counts.invalidations++;
		dead = drop_cache_ref(n);
	}
	pthread_mutex_unlock(&s->lock);
	retire(cache, s, dead);
}

void entry_cache_get_stats(struct entry_cache *cache, struct entry_cache_stats *out)
{
	struct cache_counters sum = { 0 };
	uint64_t size = 0;
	for (size_t i = 0; i < cache->n_shards; i++) {
		struct entry_shard *s = &cache->shards[i];
		pthread_mutex_lock(&s->lock);
		cache_counters_add(&sum, &s->clock.counts);
		size += s->clock.used;
		pthread_mutex_unlock(&s->lock);
	}
	*out = (struct entry_cache_stats){
		.hits = sum.hits, .misses = sum.misses, .evictions = sum.evictions,
		.invalidations = sum.invalidations, .inserts_refused = sum.refused,
		.size = size, .capacity = cache->capacity,
	};
}
