/*
 * ppolicy_cache.c — parsed password policies by DN (ppolicy_cache.h).
 */
#include "ppolicy_cache.h"

#include <string.h>

#include "lumen_error.h"

int ppolicy_cache_init(struct ppolicy_cache *c)
{
	memset(c, 0, sizeof(*c));
	c->generation = 1;
	return pthread_mutex_init(&c->lock, NULL) == 0 ? LUMEN_OK : LUMEN_ENOMEM;
}

void ppolicy_cache_destroy(struct ppolicy_cache *c)
{
	pthread_mutex_destroy(&c->lock);
}

static struct ppolicy_cache_slot *find_slot(struct ppolicy_cache *c, struct ber_view ndn)
{
	for (size_t i = 0; i < PPOLICY_CACHE_SLOTS; i++) {
		struct ppolicy_cache_slot *s = &c->slots[i];
		if (s->generation == c->generation && s->ndn_len == ndn.len &&
		    memcmp(s->ndn, ndn.ptr, ndn.len) == 0)
			return s;
	}
	return NULL;
}

bool ppolicy_cache_get(struct ppolicy_cache *c, struct ber_view ndn, struct ppolicy *out,
		       bool *found, uint64_t *generation)
{
	pthread_mutex_lock(&c->lock);
	const struct ppolicy_cache_slot *s = find_slot(c, ndn);
	if (s != NULL) {
		*found = s->found;
		if (s->found)
			*out = s->policy;
	}
	*generation = c->generation;
	pthread_mutex_unlock(&c->lock);
	return s != NULL;
}

/* An empty or outdated slot, else the next in turn. */
static struct ppolicy_cache_slot *victim(struct ppolicy_cache *c)
{
	for (size_t i = 0; i < PPOLICY_CACHE_SLOTS; i++)
		if (c->slots[i].generation != c->generation)
			return &c->slots[i];
	c->next_victim = (c->next_victim + 1) % PPOLICY_CACHE_SLOTS;
	return &c->slots[c->next_victim];
}

void ppolicy_cache_put(struct ppolicy_cache *c, struct ber_view ndn, uint64_t generation,
		       const struct ppolicy *p, bool found)
{
	if (ndn.len > PPOLICY_CACHE_DN_MAX)
		return;
	pthread_mutex_lock(&c->lock);
	if (generation == c->generation && find_slot(c, ndn) == NULL) {
		struct ppolicy_cache_slot *s = victim(c);
		s->generation = generation;
		s->ndn_len = ndn.len;
		memcpy(s->ndn, ndn.ptr, ndn.len);
		s->found = found;
		if (found)
			s->policy = *p;
	}
	pthread_mutex_unlock(&c->lock);
}

void ppolicy_cache_changing(struct ppolicy_cache *c)
{
	pthread_mutex_lock(&c->lock);
	c->generation++;
	c->write_pending = true;
	pthread_mutex_unlock(&c->lock);
}

void ppolicy_cache_committed(struct ppolicy_cache *c)
{
	pthread_mutex_lock(&c->lock);
	if (c->write_pending) {
		c->generation++;
		c->write_pending = false;
	}
	pthread_mutex_unlock(&c->lock);
}
