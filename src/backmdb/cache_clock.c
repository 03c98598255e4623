/*
 * cache_clock.c — shard sizing, the shards' memory and figures, and the
 * CLOCK ring the back-mdb caches share (cache_clock.h).
 */
#include "cache_clock.h"

#include <stdlib.h>
#include <string.h>

#include "lumen_error.h"

size_t cache_shard_count(size_t capacity)
{
	size_t n = CACHE_MAX_SHARDS;
	while (n > 1 && capacity / n < CACHE_MIN_SHARD_CAPACITY)
		n /= 2;
	return n;
}

size_t cache_shard_capacity(size_t capacity, size_t n_shards, size_t i)
{
	return capacity / n_shards + (i < capacity % n_shards);
}

static struct cache_shard *shard_at(struct cache_head *cache, size_t i)
{
	const struct cache_layout *layout = cache->layout;
	return (struct cache_shard *)((char *)cache + layout->shards_offset +
				      i * layout->shard_size);
}

/* Presence slots per position: few resident keys share a missing key's slot. */
#define PRESENCE_SLOTS_PER_POSITION 4
/* A slot's count stays here once reached (a miss there asks the shard). */
#define PRESENCE_SATURATED 255
/* The hash bits a slot is chosen by: above a table's, below a shard's. */
#define PRESENCE_SHIFT 24

static int presence_init(struct cache_head *cache)
{
	size_t slots = 64;

	while (slots < cache->capacity * PRESENCE_SLOTS_PER_POSITION)
		slots *= 2;
	cache->presence = calloc(slots, sizeof(*cache->presence));
	cache->presence_mask = slots - 1;
	for (size_t i = 0; i < CACHE_STRIPES; i++) {
		atomic_init(&cache->stripes[i].misses, 0);
		atomic_init(&cache->stripes[i].held, 0);
	}
	return cache->presence != NULL ? LUMEN_OK : LUMEN_ENOMEM;
}

static atomic_uchar *presence_slot(struct cache_head *cache, uint64_t h)
{
	return &cache->presence[(h >> PRESENCE_SHIFT) & cache->presence_mask];
}

/* The calling thread's stripe, dealt round-robin on its first count. */
static struct cache_stripe *thread_stripe(struct cache_head *cache)
{
	static atomic_uint next_stripe;
	static _Thread_local unsigned stripe_plus_one;

	if (stripe_plus_one == 0)
		stripe_plus_one = atomic_fetch_add_explicit(&next_stripe, 1,
							    memory_order_relaxed) %
					  CACHE_STRIPES + 1;
	return &cache->stripes[stripe_plus_one - 1];
}

void cache_count_held(struct cache_head *cache)
{
	atomic_fetch_add_explicit(&thread_stripe(cache)->held, 1, memory_order_relaxed);
}

bool cache_presence_absent(struct cache_head *cache, uint64_t h)
{
	if (atomic_load_explicit(presence_slot(cache, h), memory_order_relaxed) != 0)
		return false;
	atomic_fetch_add_explicit(&thread_stripe(cache)->misses, 1, memory_order_relaxed);
	return true;
}

void cache_presence_add(struct cache_head *cache, uint64_t h)
{
	atomic_uchar *slot = presence_slot(cache, h);
	unsigned char n = atomic_load_explicit(slot, memory_order_relaxed);
	while (n < PRESENCE_SATURATED &&
	       !atomic_compare_exchange_weak_explicit(slot, &n, (unsigned char)(n + 1),
						      memory_order_relaxed, memory_order_relaxed))
		;
}

void cache_presence_remove(struct cache_head *cache, uint64_t h)
{
	atomic_uchar *slot = presence_slot(cache, h);
	unsigned char n = atomic_load_explicit(slot, memory_order_relaxed);
	while (n > 0 && n < PRESENCE_SATURATED &&
	       !atomic_compare_exchange_weak_explicit(slot, &n, (unsigned char)(n - 1),
						      memory_order_relaxed, memory_order_relaxed))
		;
}

/* Lock, ring, and a table of at least two buckets per position. */
static int shard_init(struct cache_head *cache, struct cache_shard *s, size_t capacity)
{
	size_t buckets = 1;

	while (buckets < capacity * 2)
		buckets *= 2;
	pthread_mutex_init(&s->lock, NULL);
	s->bucket_mask = buckets - 1;
	s->cache = cache;
	int rc = cache_clock_init(&s->clock, capacity);
	return rc == LUMEN_OK ? cache->layout->init(s) : rc;
}

/* Each shard with its share of the capacity, up to the first failure. */
static int init_shards(struct cache_head *cache)
{
	int rc = LUMEN_OK;
	for (size_t i = 0; i < cache->n_shards && rc == LUMEN_OK; i++)
		rc = shard_init(cache, shard_at(cache, i),
				cache_shard_capacity(cache->capacity, cache->n_shards, i));
	return rc;
}

int cache_create(const struct cache_layout *layout, size_t capacity, struct cache_head **out)
{
	size_t n_shards = cache_shard_count(capacity);
	size_t size = layout->shards_offset + n_shards * layout->shard_size;
	struct cache_head *cache = NULL;

	*out = NULL;
	/* Shards are cache-line aligned so two workers' locks never share a line. */
	if (posix_memalign((void **)&cache, 64, size) != 0)
		return LUMEN_ENOMEM;
	memset(cache, 0, size);
	cache->capacity = capacity;
	cache->n_shards = n_shards;
	cache->layout = layout;
	int rc = presence_init(cache);
	if (rc == LUMEN_OK)
		rc = init_shards(cache);
	if (rc == LUMEN_OK)
		*out = cache;
	else
		cache_destroy(cache);
	return rc;
}

void cache_destroy(struct cache_head *cache)
{
	if (cache == NULL)
		return;
	for (size_t i = 0; i < cache->n_shards; i++) {
		struct cache_shard *s = shard_at(cache, i);
		cache->layout->fini(cache, s);
		cache_clock_free(&s->clock);
		pthread_mutex_destroy(&s->lock);
	}
	free(cache->presence);
	free(cache);
}

void cache_get_stats(struct cache_head *cache, struct cache_stats *out)
{
	struct cache_counters sum = { 0 };
	uint64_t size = 0, held = 0;
	for (size_t i = 0; i < cache->n_shards; i++) {
		struct cache_shard *s = shard_at(cache, i);
		pthread_mutex_lock(&s->lock);
		cache_clock_add_counters(&sum, &s->clock);
		size += s->clock.used;
		pthread_mutex_unlock(&s->lock);
	}
	for (size_t i = 0; i < CACHE_STRIPES; i++) {
		sum.misses += atomic_load_explicit(&cache->stripes[i].misses, memory_order_relaxed);
		held += atomic_load_explicit(&cache->stripes[i].held, memory_order_relaxed);
	}
	*out = (struct cache_stats){
		.hits = sum.hits, .misses = sum.misses, .evictions = sum.evictions,
		.invalidations = sum.invalidations, .inserts_refused = sum.refused,
		.not_admitted = sum.not_admitted, .held = held,
		.size = size, .capacity = cache->capacity,
	};
}

/* Doorkeeper bits per position: few false "seen" until it is cleared. */
#define SEEN_BITS_PER_POSITION 16

static size_t seen_bits(size_t capacity)
{
	size_t bits = 4096;          /* small caches: few false "seen" either */
	while (bits < capacity * SEEN_BITS_PER_POSITION)
		bits <<= 1;
	return bits;
}

int cache_clock_init(struct cache_clock *c, size_t capacity)
{
	memset(c, 0, sizeof(*c));
	c->capacity = capacity;
	c->referenced = calloc(capacity ? capacity : 1, sizeof(*c->referenced));
	c->free = malloc((capacity ? capacity : 1) * sizeof(*c->free));
	size_t bits = seen_bits(capacity);
	/* "seen" bits, then as many "seen twice" bits */
	c->seen = calloc(2 * bits / 64, sizeof(*c->seen));
	c->seen_mask = bits - 1;
	if (c->referenced == NULL || c->free == NULL || c->seen == NULL)
		return LUMEN_ENOMEM;
	/* lowest positions first, as a fresh ring fills in order */
	for (size_t i = 0; i < capacity; i++)
		c->free[c->n_free++] = capacity - 1 - i;
	atomic_init(&c->full, capacity == 0);
	return LUMEN_OK;
}

void cache_clock_free(struct cache_clock *c)
{
	free(c->referenced);
	free(c->free);
	free(c->seen);
	c->referenced = NULL;
	c->free = NULL;
	c->seen = NULL;
}

/* The doorkeeper's bit for a hash, in either half of `seen`. */
static size_t seen_bit(const struct cache_clock *c, uint64_t hash)
{
	/* The low bits pick the shard's bucket; these pick the doorkeeper's. */
	return (size_t)(hash >> 20) & c->seen_mask;
}

static bool bit_is_set(atomic_uint_fast64_t *bits, size_t bit)
{
	return (atomic_load_explicit(&bits[bit / 64], memory_order_relaxed) >> (bit % 64)) & 1u;
}

static void set_bit(atomic_uint_fast64_t *bits, size_t bit)
{
	atomic_fetch_or_explicit(&bits[bit / 64], (uint_fast64_t)1 << (bit % 64),
				 memory_order_relaxed);
}

/* The "seen twice" half. */
static atomic_uint_fast64_t *seen_twice(const struct cache_clock *c)
{
	return c->seen + (c->seen_mask + 1) / 64;
}

static void clear_seen(struct cache_clock *c)
{
	for (size_t i = 0; i < 2 * (c->seen_mask + 1) / 64; i++)
		atomic_store_explicit(&c->seen[i], 0, memory_order_relaxed);
}

static void count_not_admitted(struct cache_clock *c)
{
	atomic_fetch_add_explicit(&c->not_admitted, 1, memory_order_relaxed);
}

/* A first sighting: noted, the bits cleared once a capacity's worth were.
 * Exactly one sighting draws the count capacity: that one clears. */
static void note_first_sighting(struct cache_clock *c, size_t bit)
{
	count_not_admitted(c);
	if (atomic_fetch_add_explicit(&c->seen_since_clear, 1, memory_order_relaxed) ==
	    c->capacity) {
		clear_seen(c);
		atomic_store_explicit(&c->seen_since_clear, 1, memory_order_relaxed);
	}
	set_bit(c->seen, bit);
}

static bool has_free_position(struct cache_clock *c)
{
	return !atomic_load_explicit(&c->full, memory_order_relaxed);
}

bool cache_clock_admit(struct cache_clock *c, uint64_t hash)
{
	if (c->capacity == 0)
		return false;
	if (has_free_position(c))
		return true;
	size_t bit = seen_bit(c, hash);
	if (bit_is_set(c->seen, bit))
		return true;
	note_first_sighting(c, bit);
	return false;
}

bool cache_clock_admit_seen_twice(struct cache_clock *c, uint64_t hash)
{
	if (c->capacity == 0)
		return false;
	if (has_free_position(c))
		return true;
	size_t bit = seen_bit(c, hash);
	if (bit_is_set(seen_twice(c), bit))
		return true;
	if (!bit_is_set(c->seen, bit)) {
		note_first_sighting(c, bit);
		return false;
	}
	count_not_admitted(c);
	set_bit(seen_twice(c), bit);
	return false;
}

size_t cache_clock_take(struct cache_clock *c, bool *evicted)
{
	*evicted = false;
	if (c->n_free > 0) {
		size_t pos = c->free[--c->n_free];
		if (c->n_free == 0)
			atomic_store_explicit(&c->full, true, memory_order_relaxed);
		c->referenced[pos] = 0;
		c->used++;
		return pos;
	}
	for (;;) {
		size_t pos = c->hand;
		c->hand = (c->hand + 1) % c->capacity;
		if (c->referenced[pos]) {
			c->referenced[pos] = 0;
			continue;
		}
		c->counts.evictions++;
		*evicted = true;
		return pos;
	}
}

void cache_clock_release(struct cache_clock *c, size_t pos)
{
	c->referenced[pos] = 0;
	c->free[c->n_free++] = pos;
	if (c->n_free == 1)
		atomic_store_explicit(&c->full, false, memory_order_relaxed);
	c->used--;
}

void cache_counters_add(struct cache_counters *sum, const struct cache_counters *c)
{
	sum->hits += c->hits;
	sum->misses += c->misses;
	sum->evictions += c->evictions;
	sum->invalidations += c->invalidations;
	sum->refused += c->refused;
	sum->not_admitted += c->not_admitted;
}

void cache_clock_add_counters(struct cache_counters *sum, struct cache_clock *c)
{
	cache_counters_add(sum, &c->counts);
	sum->not_admitted += atomic_load_explicit(&c->not_admitted, memory_order_relaxed);
}
