/*
 * conn_limits.c — counting open connections in total and per address
 * (conn_limits.h).
 */
#include "conn_limits.h"

#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lumen_error.h"

#define CONN_LIMITS_BUCKETS 1024u

struct address_count {
	struct address_count *next;
	struct conn_limits_key key;
	unsigned count;
};

struct conn_limits {
	pthread_mutex_t lock;
	unsigned max, per_ip;
	unsigned total;
	struct address_count *buckets[CONN_LIMITS_BUCKETS];
};

int conn_limits_create(unsigned max, unsigned per_ip, struct conn_limits **out)
{
	struct conn_limits *l = calloc(1, sizeof(*l));
	*out = NULL;
	if (l == NULL)
		return LUMEN_ENOMEM;
	pthread_mutex_init(&l->lock, NULL);
	l->max = max;
	l->per_ip = per_ip;
	*out = l;
	return LUMEN_OK;
}

void conn_limits_free(struct conn_limits *l)
{
	if (l == NULL)
		return;
	for (size_t i = 0; i < CONN_LIMITS_BUCKETS; i++)
		while (l->buckets[i] != NULL) {
			struct address_count *a = l->buckets[i];
			l->buckets[i] = a->next;
			free(a);
		}
	pthread_mutex_destroy(&l->lock);
	free(l);
}

void conn_limits_key_of(const struct sockaddr *peer, socklen_t len, struct conn_limits_key *key)
{
	memset(key, 0, sizeof(*key));
	if (peer->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)peer;
		key->family = 4;
		memcpy(key->bytes, &in->sin_addr, 4);
	} else if (peer->sa_family == AF_INET6 && len >= (socklen_t)sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)peer;
		if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
			key->family = 4;
			memcpy(key->bytes, in6->sin6_addr.s6_addr + 12, 4);
		} else {
			key->family = 6;
			memcpy(key->bytes, &in6->sin6_addr, 16);
		}
	}
}

static size_t bucket_of(const struct conn_limits_key *key)
{
	uint32_t h = 2166136261u ^ key->family;
	for (size_t i = 0; i < sizeof(key->bytes); i++)
		h = (h ^ key->bytes[i]) * 16777619u;
	return h % CONN_LIMITS_BUCKETS;
}

/* The address's counter, created (count 0) when create is set. */
static struct address_count *find(struct conn_limits *l, const struct conn_limits_key *key,
				  bool create)
{
	size_t b = bucket_of(key);
	for (struct address_count *a = l->buckets[b]; a != NULL; a = a->next)
		if (memcmp(&a->key, key, sizeof(*key)) == 0)
			return a;
	if (!create)
		return NULL;
	struct address_count *a = calloc(1, sizeof(*a));
	if (a == NULL)
		return NULL;
	a->key = *key;
	a->next = l->buckets[b];
	l->buckets[b] = a;
	return a;
}

static void drop(struct conn_limits *l, const struct conn_limits_key *key)
{
	struct address_count **link = &l->buckets[bucket_of(key)];
	for (; *link != NULL; link = &(*link)->next)
		if (memcmp(&(*link)->key, key, sizeof(*key)) == 0) {
			struct address_count *a = *link;
			*link = a->next;
			free(a);
			return;
		}
}

int conn_limits_admit(struct conn_limits *l, const struct conn_limits_key *key, char *why,
		      size_t whylen)
{
	int rc = LUMEN_OK;
	bool per_address = key->family != 0 && l->per_ip > 0;
	pthread_mutex_lock(&l->lock);
	if (l->max > 0 && l->total >= l->max) {
		snprintf(why, whylen, "conn_max (%u) reached", l->max);
		rc = LUMEN_ELIMIT;
	} else if (per_address) {
		struct address_count *a = find(l, key, true);
		if (a == NULL) {
			snprintf(why, whylen, "out of memory");
			rc = LUMEN_ENOMEM;
		} else if (a->count >= l->per_ip) {
			snprintf(why, whylen, "conn_max_per_ip (%u) reached", l->per_ip);
			rc = LUMEN_ELIMIT;
		} else {
			a->count++;
		}
	}
	if (rc == LUMEN_OK)
		l->total++;
	pthread_mutex_unlock(&l->lock);
	return rc;
}

void conn_limits_release(struct conn_limits *l, const struct conn_limits_key *key)
{
	pthread_mutex_lock(&l->lock);
	if (l->total > 0)
		l->total--;
	if (key->family != 0 && l->per_ip > 0) {
		struct address_count *a = find(l, key, false);
		if (a != NULL && --a->count == 0)
			drop(l, key);
	}
	pthread_mutex_unlock(&l->lock);
}
