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
#include <stddef.h>
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
	bool held;                         /* never offered: heap, not the pool */
};

typedef struct entry_cache_handle node_t;

struct entry_shard {
	struct cache_shard base;           /* lock, CLOCK ring, bucket_mask */
	node_t **buckets;
	node_t **ring;                     /* the node at each CLOCK position */
	node_t *pool;
} __attribute__((aligned(64)));

struct entry_cache {
	struct cache_head head;
	entry_cache_destroy_fn destroy;
	void *ctx;
	struct entry_shard shards[];
};

static uint64_t id_hash(uint64_t id)
{
	return stable_hash_mix(id);
}

static struct entry_shard *shard_of(struct entry_cache *cache, uint64_t h)
{
	return &cache->shards[(h >> 56) & (cache->head.n_shards - 1)];
}

static int shard_init(struct cache_shard *base)
{
	struct entry_shard *s = (struct entry_shard *)base;
	size_t capacity = base->clock.capacity;

	s->buckets = calloc(base->bucket_mask + 1, sizeof(*s->buckets));
	s->ring = calloc(capacity ? capacity : 1, sizeof(*s->ring));
	return s->buckets != NULL && s->ring != NULL ? LUMEN_OK : LUMEN_ENOMEM;
}

static void shard_free(struct cache_head *head, struct cache_shard *base)
{
	struct entry_cache *cache = (struct entry_cache *)head;
	struct entry_shard *s = (struct entry_shard *)base;

	for (size_t i = 0; s->ring != NULL && i < base->clock.capacity; i++) {
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
}

static const struct cache_layout layout = {
	offsetof(struct entry_cache, shards), sizeof(struct entry_shard), shard_init, shard_free,
};

int entry_cache_create(size_t capacity, entry_cache_destroy_fn destroy, void *ctx,
		       struct entry_cache **out)
{
	struct cache_head *head;

	*out = NULL;
	if (destroy == NULL)
		return LUMEN_EINVAL;
	int rc = cache_create(&layout, capacity, &head);
	if (rc != LUMEN_OK)
		return rc;
	*out = (struct entry_cache *)head;
	(*out)->destroy = destroy;
	(*out)->ctx = ctx;
	return LUMEN_OK;
}

void entry_cache_destroy(struct entry_cache *cache)
{
	if (cache != NULL)
		cache_destroy(&cache->head);
}

static node_t **bucket_of(struct entry_shard *s, uint64_t h)
{
	return &s->buckets[h & s->base.bucket_mask];
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

	if (cache_presence_absent(&cache->head, h)) {
		*out = NULL;
		return LUMEN_ENOTFOUND;
	}
	pthread_mutex_lock(&s->base.lock);
	node_t *n = find(s, h, id);
	if (n != NULL) {
		atomic_fetch_add_explicit(&n->refs, 1, memory_order_relaxed);
		cache_clock_touch(&s->base.clock, n->ring_pos);
		s->base.clock.counts.hits++;
	} else {
		s->base.clock.counts.misses++;
	}
	pthread_mutex_unlock(&s->base.lock);
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

/*
 * Each thread keeps the last held node it released for its next hold, so
 * that a stream of partial reads neither allocates nor takes a lock for
 * its handles. The key's destructor frees a thread's spare as it ends.
 */
static pthread_key_t spare_key;
static pthread_once_t spare_once = PTHREAD_ONCE_INIT;
static bool spare_key_made;

static void make_spare_key(void)
{
	spare_key_made = pthread_key_create(&spare_key, free) == 0;
}

/* A node for a hold: the thread's spare, else the heap. */
static node_t *take_spare(void)
{
	pthread_once(&spare_once, make_spare_key);
	node_t *n = spare_key_made ? pthread_getspecific(spare_key) : NULL;
	if (n == NULL)
		return malloc(sizeof(*n));
	pthread_setspecific(spare_key, NULL);
	return n;
}

/* A held node's way out: the thread's spare if it has none, else the heap. */
static void give_spare(node_t *n)
{
	if (spare_key_made && pthread_getspecific(spare_key) == NULL &&
	    pthread_setspecific(spare_key, n) == 0)
		return;
	free(n);
}

/* Destroys a node nobody refers to any more; lock not held. */
static void retire(struct entry_cache *cache, struct entry_shard *s, node_t *n)
{
	if (n == NULL)
		return;
	cache->destroy(n->object, cache->ctx);
	if (n->held) {
		give_spare(n);
		return;
	}
	pthread_mutex_lock(&s->base.lock);
	n->next = s->pool;
	s->pool = n;
	pthread_mutex_unlock(&s->base.lock);
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
	uint64_t h = id_hash(n->id);
	node_t **link = bucket_of(s, h);

	while (*link != n)
		link = &(*link)->next;
	*link = n->next;
	cache_presence_remove(s->base.cache, h);
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
	size_t pos = cache_clock_take(&s->base.clock, &evicted);

	*victim = NULL;
	if (evicted) {
		node_t *n = s->ring[pos];
		unlink_node(s, n);
		*victim = drop_cache_ref(n);
	}
	return pos;
}

/* How an insert may place its object. */
enum insert_mode {
	INSERT_ADMITTED,   /* as the doorkeeper decides, evicting if full */
	INSERT_SCAN,       /* only into a free position */
};

static bool placed(struct cache_clock *clock, enum insert_mode mode, uint64_t h)
{
	return mode == INSERT_ADMITTED ? cache_clock_admit(clock, h) : clock->n_free > 0;
}

static int insert(struct entry_cache *cache, uint64_t id, void *object, uint64_t version,
		  enum insert_mode mode, struct entry_cache_handle **out)
{
	uint64_t h = id_hash(id);
	struct entry_shard *s = shard_of(cache, h);
	node_t *victim = NULL;

	pthread_mutex_lock(&s->base.lock);
	node_t *n = node_alloc(s);
	if (n == NULL) {
		pthread_mutex_unlock(&s->base.lock);
		cache->destroy(object, cache->ctx);
		*out = NULL;
		return LUMEN_ENOMEM;
	}
	n->id = id;
	n->object = object;
	atomic_store_explicit(&n->version, version, memory_order_relaxed);
	n->shard = s;
	n->resident = false;
	n->held = false;
	atomic_init(&n->refs, 1);
	if (s->base.clock.capacity == 0 || !cache_clock_fresh(&s->base.clock, version) ||
		   find(s, h, id) != NULL) {
		s->base.clock.counts.refused += s->base.clock.capacity != 0;
	} else if (placed(&s->base.clock, mode, h)) {
		n->ring_pos = take_position(s, &victim);
		s->ring[n->ring_pos] = n;
		n->resident = true;
		atomic_fetch_add_explicit(&n->refs, 1, memory_order_relaxed);
		node_t **bucket = bucket_of(s, h);
		n->next = *bucket;
		*bucket = n;
		cache_presence_add(s->base.cache, h);
	}
	pthread_mutex_unlock(&s->base.lock);
	retire(cache, s, victim);
	*out = n;
	return LUMEN_OK;
}

int entry_cache_insert(struct entry_cache *cache, uint64_t id, void *object, uint64_t version,
		       struct entry_cache_handle **out)
{
	return insert(cache, id, object, version, INSERT_ADMITTED, out);
}

int entry_cache_insert_scan(struct entry_cache *cache, uint64_t id, void *object,
			    uint64_t version, struct entry_cache_handle **out)
{
	return insert(cache, id, object, version, INSERT_SCAN, out);
}

/*
 * Not offered to the cache, so nothing of the shard's is needed: the node
 * is the thread's spare (or from the heap), not the shard's pool, and
 * neither taking nor returning it takes the lock, where most reads of a
 * directory much larger than the cache are partial ones handed out this way.
 */
int entry_cache_hold(struct entry_cache *cache, uint64_t id, void *object,
		     struct entry_cache_handle **out)
{
	node_t *n = take_spare();
	*out = n;
	if (n == NULL) {
		cache->destroy(object, cache->ctx);
		return LUMEN_ENOMEM;
	}
	*n = (node_t){ .id = id, .object = object, .held = true };
	atomic_init(&n->refs, 1);
	atomic_init(&n->version, 0);
	cache_count_held(&cache->head);
	return LUMEN_OK;
}

bool entry_cache_admits(struct entry_cache *cache, uint64_t id)
{
	uint64_t h = id_hash(id);
	/* The doorkeeper takes no lock (cache_clock.h). */
	return cache_clock_admit_seen_twice(&shard_of(cache, h)->base.clock, h);
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

	pthread_mutex_lock(&s->base.lock);
	cache_clock_invalidated(&s->base.clock, version);
	node_t *n = find(s, h, id);
	if (n != NULL) {
		unlink_node(s, n);
		cache_clock_release(&s->base.clock, n->ring_pos);
		s->base.clock.counts.invalidations++;
		dead = drop_cache_ref(n);
	}
	pthread_mutex_unlock(&s->base.lock);
	retire(cache, s, dead);
}

void entry_cache_get_stats(struct entry_cache *cache, struct cache_stats *out)
{
	cache_get_stats(&cache->head, out);
}
