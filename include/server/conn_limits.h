/*
 * conn_limits.h — the bounds on open connections: `conn_max` in total and
 * `conn_max_per_ip` per client address (server layer).
 *
 * Every accepted connection is admitted (counted) before it is set up and
 * released when it is torn down; a connection over a bound is closed at
 * once after accept, and the caller logs why.
 *
 * Ownership: conn_limits_create allocates, conn_limits_free frees (after
 * every connection is gone).
 * Thread-safety: admit and release may be called from any thread (one
 * mutex; they run once per connection, not per operation).
 *
 * Caveats:
 *  - Only TCP peers are counted per address; Unix-socket clients count
 *    towards conn_max alone.
 *  - IPv4-mapped IPv6 addresses count as their IPv4 address.
 */
#ifndef LUMEN_CONN_LIMITS_H
#define LUMEN_CONN_LIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

struct conn_limits;

/* A client address as counted (family + bytes); zeroed = not per address. */
struct conn_limits_key {
	unsigned char family;
	unsigned char bytes[16];
};

/* max 0 and per_ip 0 mean no bound. LUMEN_ENOMEM. */
int conn_limits_create(unsigned max, unsigned per_ip, struct conn_limits **out);
void conn_limits_free(struct conn_limits *l);

/* The key of a peer address (Unix and unknown families: a zero key). */
void conn_limits_key_of(const struct sockaddr *peer, socklen_t len, struct conn_limits_key *key);

/*
 * Count one more connection from key, if the bounds allow. On refusal
 * `why` says which bound ("conn_max (100) reached"). Returns LUMEN_OK,
 * LUMEN_ELIMIT (refused), LUMEN_ENOMEM (refused: cannot track the address).
 */
int conn_limits_admit(struct conn_limits *l, const struct conn_limits_key *key, char *why,
		      size_t whylen);

/* Forget one connection admitted with key. */
void conn_limits_release(struct conn_limits *l, const struct conn_limits_key *key);

#endif
