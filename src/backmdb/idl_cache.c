/*
 * idl_cache.c — sharded CLOCK cache of index lookups (idl_cache.h).
 *
 * Each shard owns a fixed array of slots, one per position of its CLOCK
 * ring (cache_clock.h); a slot keeps its IDL buffer when it is reused, so a
 * warm cache stops allocating. Lookups copy out under the shard lock (no reference counts:
 * the IDLs worth caching are short).
 */
#include "idl_cache.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cache_clock.h"
#include "lumen_error.h"
#include "stable_hash.h"

#define NO_SLOT SIZE_MAX

struct cache_key {
	uint32_t table;
	uint8_t bytes[INDEX_KEY_SIZE];
};

struct idl_slot {
	struct cache_key key;
	struct idl idl;          /* owned, growable */
	size_t next;             /* bucket chain */
	bool in_use;
};

struct idl_shard {
	struct cache_shard base;  /* lock, CLOCK ring, bucket_mask */
	struct idl_slot *slots;   /* one per CLOCK position */
	size_t *buckets;
} __attribute__((aligned(64)));

struct idl_cache {
	struct cache_head head;
	size_t max_ids;
	struct idl_shard shards[];
};

static struct cache_key make_key(uint32_t table, const struct index_key *key)
{
	struct cache_key k;

	memset(&k, 0, sizeof(k));
	k.table = table;
	memcpy(k.bytes, key->bytes, INDEX_KEY_SIZE);
	return k;
}

static uint64_t key_hash(const struct cache_key *k)
{
	uint64_t h = 0;

	/* The key is already a hash of the value; fold in kind and table. */
	for (int i = 1; i < INDEX_KEY_SIZE; i++)
		h = (h << 8) | k->bytes[i];
	return stable_hash_mix(h ^ ((uint64_t)k->bytes[0] << 32) ^ k->table);
}

static bool key_eq(const struct cache_key *a, const struct cache_key *b)
{
	return a->table == b->table && memcmp(a->bytes, b->bytes, INDEX_KEY_SIZE) == 0;
}

static int shard_init(struct cache_shard *base)
{
	struct idl_shard *s = (struct idl_shard *)base;
	size_t capacity = base->clock.capacity, buckets = base->bucket_mask + 1;

	s->slots = calloc(capacity ? capacity : 1, sizeof(*s->slots));
	s->buckets = malloc(buckets * sizeof(*s->buckets));
	if (s->slots == NULL || s->buckets == NULL)
		return LUMEN_ENOMEM;
	for (size_t i = 0; i < buckets; i++)
		s->buckets[i] = NO_SLOT;
	for (size_t i = 0; i < capacity; i++)
		idl_init(&s->slots[i].idl);
	return LUMEN_OK;
}

static void shard_free(struct cache_head *cache, struct cache_shard *base)
{
	struct idl_shard *s = (struct idl_shard *)base;

	(void)cache;
	for (size_t i = 0; s->slots != NULL && i < base->clock.capacity; i++)
		idl_release(&s->slots[i].idl);
	free(s->slots);
	free(s->buckets);
}

static const struct cache_layout layout = {
	offsetof(struct idl_cache, shards), sizeof(struct idl_shard), shard_init, shard_free,
};

int idl_cache_create(size_t capacity, size_t max_ids, struct idl_cache **out)
{
	struct cache_head *head;
	int rc = cache_create(&layout, capacity, &head);

	*out = NULL;
	if (rc != LUMEN_OK)
		return rc;
	*out = (struct idl_cache *)head;
	(*out)->max_ids = max_ids ? max_ids : IDL_CACHE_DEFAULT_MAX_IDS;
	return LUMEN_OK;
}

void idl_cache_destroy(struct idl_cache *cache)
{
	if (cache != NULL)
		cache_destroy(&cache->head);
}

static struct idl_shard *shard_of(struct idl_cache *cache, uint64_t h)
{
	return &cache->shards[(h >> 56) & (cache->head.n_shards - 1)];
}

/* Slot holding k, or NO_SLOT; *link is where the chain points at it. */
static size_t find(struct idl_shard *s, uint64_t h, const struct cache_key *k, size_t **link)
{
	size_t *at = &s->buckets[h & s->base.bucket_mask];

	while (*at != NO_SLOT && !key_eq(&s->slots[*at].key, k))
		at = &s->slots[*at].next;
	if (link != NULL)
		*link = at;
	return *at;
}

int idl_cache_get(struct idl_cache *cache, uint32_t table, const struct index_key *key,
		  struct idl *out)
{
	struct cache_key k = make_key(table, key);
	uint64_t h = key_hash(&k);
	struct idl_shard *s = shard_of(cache, h);

	if (cache_presence_absent(&cache->head, h))
		return LUMEN_ENOTFOUND;
	pthread_mutex_lock(&s->base.lock);
	size_t slot = s->base.clock.capacity ? find(s, h, &k, NULL) : NO_SLOT;
	if (slot != NO_SLOT) {
		cache_clock_touch(&s->base.clock, slot);
		idl_copy(out, &s->slots[slot].idl);
		s->base.clock.counts.hits++;
	} else {
		s->base.clock.counts.misses++;
	}
	pthread_mutex_unlock(&s->base.lock);
	return slot != NO_SLOT ? LUMEN_OK : LUMEN_ENOTFOUND;
}

/* Unchains a used slot (its buffer is kept); lock held. */
static void unchain_slot(struct idl_shard *s, size_t slot, uint64_t h)
{
	size_t *link;

	find(s, h, &s->slots[slot].key, &link);
	*link = s->slots[slot].next;
	s->slots[slot].in_use = false;
	cache_presence_remove(s->base.cache, h);
}

/* Unchains a used slot and frees its position. */
static void drop_slot(struct idl_shard *s, size_t slot, uint64_t h)
{
	unchain_slot(s, slot, h);
	cache_clock_release(&s->base.clock, slot);
}

/* A free slot, evicting by CLOCK if none; lock held. */
static size_t take_slot(struct idl_shard *s)
{
	bool evicted;
	size_t slot = cache_clock_take(&s->base.clock, &evicted);
	if (evicted)
		unchain_slot(s, slot, key_hash(&s->slots[slot].key));
	return slot;
}

int idl_cache_put(struct idl_cache *cache, uint32_t table, const struct index_key *key,
		  const struct idl *idl, uint64_t version)
{
	struct cache_key k = make_key(table, key);
	uint64_t h = key_hash(&k);
	struct idl_shard *s = shard_of(cache, h);
	int rc = LUMEN_OK;

	if (s->base.clock.capacity == 0)
		return LUMEN_OK;
	/* Most puts into a full cache are refused: ask the doorkeeper, which
	 * takes no lock, before the shard. Puts follow misses, so the key is
	 * rarely there already; if it is, the value stays as it was. */
	bool too_large = !idl->is_range && idl->count > cache->max_ids;
	if (!too_large && !cache_clock_admit(&s->base.clock, h))
		return LUMEN_OK;
	pthread_mutex_lock(&s->base.lock);
	if (!cache_clock_fresh(&s->base.clock, version) || too_large) {
		s->base.clock.counts.refused++;
		goto done;
	}
	size_t slot = find(s, h, &k, NULL);
	if (slot == NO_SLOT) {
		slot = take_slot(s);
		s->slots[slot].key = k;
		s->slots[slot].in_use = true;
		size_t *bucket = &s->buckets[h & s->base.bucket_mask];
		s->slots[slot].next = *bucket;
		*bucket = slot;
		cache_presence_add(s->base.cache, h);
	}
	struct idl *copy = &s->slots[slot].idl;
	idl_copy(copy, idl);
	/* A copy that lost precision for want of memory is not worth keeping. */
	if (copy->is_range != idl->is_range) {
		drop_slot(s, slot, h);
		rc = LUMEN_ENOMEM;
	}
done:
	pthread_mutex_unlock(&s->base.lock);
	return rc;
}

void idl_cache_invalidate(struct idl_cache *cache, uint32_t table, const struct index_key *key,
			  uint64_t version)
{
	struct cache_key k = make_key(table, key);
	uint64_t h = key_hash(&k);
	struct idl_shard *s = shard_of(cache, h);

	pthread_mutex_lock(&s->base.lock);
	cache_clock_invalidated(&s->base.clock, version);
	size_t slot = s->base.clock.capacity ? find(s, h, &k, NULL) : NO_SLOT;
	if (slot != NO_SLOT) {
		drop_slot(s, slot, h);
		s->base.clock.counts.invalidations++;
	}
	pthread_mutex_unlock(&s->base.lock);
}

void idl_cache_get_stats(struct idl_cache *cache, struct cache_stats *out)
{
	cache_get_stats(&cache->head, out);
}
