/*
 * cache_clock.c — shard sizing and the CLOCK ring the back-mdb caches share
 * (cache_clock.h).
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

int cache_clock_init(struct cache_clock *c, size_t capacity)
{
	memset(c, 0, sizeof(*c));
	c->capacity = capacity;
	c->referenced = calloc(capacity ? capacity : 1, sizeof(*c->referenced));
	c->free = malloc((capacity ? capacity : 1) * sizeof(*c->free));
	if (c->referenced == NULL || c->free == NULL)
		return LUMEN_ENOMEM;
	/* lowest positions first, as a fresh ring fills in order */
	for (size_t i = 0; i < capacity; i++)
		c->free[c->n_free++] = capacity - 1 - i;
	return LUMEN_OK;
}

void cache_clock_free(struct cache_clock *c)
{
	free(c->referenced);
	free(c->free);
	c->referenced = NULL;
	c->free = NULL;
}

size_t cache_clock_take(struct cache_clock *c, bool *evicted)
{
	*evicted = false;
	if (c->n_free > 0) {
		size_t pos = c->free[--c->n_free];
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
	c->used--;
}

void cache_counters_add(struct cache_counters *sum, const struct cache_counters *c)
{
	sum->hits += c->hits;
	sum->misses += c->misses;
	sum->evictions += c->evictions;
	sum->invalidations += c->invalidations;
	sum->refused += c->refused;
}
