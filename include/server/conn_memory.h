/*
 * conn_memory.h — the bytes client connections hold, per connection and in
 * total, and the bounds on them: conn_max_memory (anonymous),
 * conn_max_memory_auth (bound) and conn_total_memory (server layer).
 *
 * What counts, in four kinds (reported apart in cn=Monitor and /metrics):
 *  - base: the connection object, all an idle plain connection holds. Its
 *    input buffer is not part of it: an I/O thread reads into its own
 *    scratch buffer, and a connection keeps a buffer of its own only for
 *    bytes it could not take yet (conn_frame.c);
 *  - queued: input kept for later, each op object and its copy of the
 *    request PDU (queued, running, parked or kept for reuse), an open
 *    transaction's queued requests;
 *  - output: the output queue's capacity;
 *  - tls: what OpenSSL holds for the connection's TLS session, exactly
 *    (tls_memory.h: its blocks and their headers, after every SSL call),
 *    and during a handshake at least the room reserved for one
 *    (TLS_MEMORY_HANDSHAKE_PEAK): about 14 KiB idle, 31 KiB with a record
 *    half read or output waiting, 44 KiB at a handshake's peak.
 * conn.c keeps each connection's figures (under its lock) and reports every
 * change here, so the totals are atomic counters read by cn=Monitor and
 * /metrics without taking any lock. The reported total and peak also hold
 * the I/O threads' input scratch buffers (IO_INPUT_BYTES each,
 * conn_memory_add_scratch, reported as "scratch"): a fixed amount there
 * from start-up whether clients connect or not, so it is shown but not
 * weighed against conn_total_memory (that would only lower the bound by
 * a constant, and below it refuse every connection).
 *
 * The bounds are back-pressure, not errors: a connection whose next
 * request (or the input room for it) would take it over its bound, or the
 * server over the total, is not read until its own operations end or, for
 * the total, until released memory makes room for it (conn_memory_wait).
 * A connection that has no operation outstanding always gets room for one
 * request: no connection starves, and the per-connection bound can never
 * wedge a client whose single request is larger than the bound
 * (sockbuf_max_incoming bounds that request instead). The total can
 * therefore exceed conn_total_memory by at most one request per connection.
 *
 * What cannot wait is the fixed part: a connection's base and its TLS
 * session. conn_memory_admit refuses a new connection whose base, and for
 * ldaps:// the room its handshake needs, would take the fixed bytes of all
 * connections over the total (the listener closes it, as slapd closes a
 * connection beyond its descriptor table); conn_memory_reserve_tls does
 * the same for StartTLS, and conn_memory_set_tls says when a handshake
 * grew past its reservation and the total (the caller stops it). A
 * session's record buffers while data moves (16.5 KiB each way) are
 * counted but not refused: like a request, the total can exceed the bound
 * by one of each per TLS connection, and they delay other connections'
 * requests until freed.
 *
 * Waiting for the total: a connection registers a waiter (FIFO); every
 * release that finds waiters wakes, in order, as many as the bytes now
 * free cover (bytes promised to a woken waiter count as taken until it
 * claims them), through the waiter's wake callback. Lock order: a
 * connection's lock, then the wait list's lock, then whatever the wake
 * callback takes (libevent's base lock); nothing here calls back into a
 * connection's lock.
 *
 * Thread-safety: every function may be called from any thread; the
 * counters are atomics, the wait list has its own lock, and the bounds
 * (and the scratch figure, set before the I/O threads start) are
 * read-only after init.
 *
 * Output a search queues while its client does not read is bounded by
 * conn_memory_output_full: at CONN_MAX_UNSENT per connection, and, while
 * the total is over conn_total_memory, as soon as anything waits to be
 * read; the search then goes on (conn_memory_may_resume) once its client
 * has read all of it. Without the second rule a few hundred clients that
 * never read would each hold CONN_MAX_UNSENT (and twice that in buffer
 * capacity) whatever the total. Over the bound a search also flushes 8 KiB
 * at a time (op_search.c) and output buffers grow to what they hold
 * (conn_memory_output_capacity), so each connection holds its base, its
 * requests and about one such flush of output.
 *
 * Caveats:
 *  - Output counts here too, so it also holds back new requests of that
 *    connection and of the others.
 *  - Allocator overhead is not counted: the figures are the buffers' sizes
 *    (and OpenSSL's blocks with their 16-byte headers).
 *  - What OpenSSL keeps beyond a session is counted to the session that
 *    made it while that session lives, and to nobody after. Its one-time
 *    caches (~20 KiB) are filled at start-up (tls_context_create); a
 *    client using an algorithm that start-up did not (another key share
 *    group) is charged for that algorithm's first fetch.
 */
#ifndef LUMEN_CONN_MEMORY_H
#define LUMEN_CONN_MEMORY_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum conn_memory_kind {
	CONN_MEM_BASE = 0,     /* the connection object */
	CONN_MEM_QUEUED,       /* input kept, requests, transaction queue, kept VLV result */
	CONN_MEM_OUTPUT,       /* the output queue */
	CONN_MEM_TLS,          /* the TLS session (OpenSSL's blocks, tls_memory.h) */
	CONN_MEM_KINDS
};

/* One connection's bytes by kind (guarded by the connection's lock). */
struct conn_memory_held {
	size_t bytes[CONN_MEM_KINDS];
};

static inline size_t conn_memory_held_total(const struct conn_memory_held *h)
{
	return h->bytes[CONN_MEM_BASE] + h->bytes[CONN_MEM_QUEUED] + h->bytes[CONN_MEM_OUTPUT] +
	       h->bytes[CONN_MEM_TLS];
}

/*
 * A connection waiting for room in the total. Embedded in its owner,
 * zeroed before first use; wake is set by the owner once. The list fields
 * are the wait list's (its lock); woken is set by the release that woke
 * it and taken by its owner (conn_memory_claim).
 */
struct conn_memory_waiter {
	struct conn_memory_waiter *prev, *next;
	size_t bytes;                     /* what it waits for */
	size_t promised;                  /* bytes set aside when woken */
	bool listed;
	atomic_bool woken;
	/* Called with the wait list's lock held, on the releasing thread: it
	 * may only signal the owner (event_active), never take its lock. */
	void (*wake)(struct conn_memory_waiter *w);
};

struct conn_memory {
	atomic_uint_fast64_t total;      /* bytes held by every connection now */
	atomic_uint_fast64_t kind[CONN_MEM_KINDS];
	atomic_uint_fast64_t fixed;      /* base + tls: what admission weighs */
	atomic_uint_fast64_t peak;       /* the largest total seen */
	atomic_uint_fast64_t waits;      /* times a connection stopped reading for memory */
	atomic_uint_fast64_t wakeups;    /* waiters woken by released memory */
	atomic_uint_fast64_t refused;    /* connections refused at the total */
	atomic_uint_fast64_t tls_refused; /* StartTLS refused, handshakes stopped */
	atomic_uint n_waiting;           /* waiters listed (read without the lock) */
	atomic_bool refusing;            /* the last admission was refused */
	size_t max_conn;                 /* conn_max_memory */
	size_t max_conn_auth;            /* conn_max_memory_auth */
	uint64_t max_total;              /* conn_total_memory; 0 = no bound */
	uint64_t scratch;                /* the I/O threads' scratch buffers */
	pthread_mutex_t wait_lock;       /* the wait list and promised */
	struct conn_memory_waiter *wait_head, *wait_tail;
	uint64_t promised;               /* set aside for woken waiters */
};

/* What a figure is reported as (cn=Monitor, /metrics). */
struct conn_memory_figures {
	uint64_t total, peak, waits, max_total;   /* total and peak with scratch */
	uint64_t base, queued, output, tls;      /* total by kind */
	uint64_t scratch;                /* the I/O threads' input buffers */
	uint64_t wakeups, refused, tls_refused;
	uint64_t waiting;                /* connections waiting for the total now */
};

void conn_memory_init(struct conn_memory *m, size_t max_conn, size_t max_conn_auth,
		      uint64_t max_total);
/* Free the wait list's lock (no waiter may be listed). */
void conn_memory_destroy(struct conn_memory *m);

/*
 * One connection's holding of one kind changed from old_bytes to
 * new_bytes: update its figures (*held, guarded by the caller) and the
 * totals. A decrease wakes waiters the freed bytes make room for.
 */
void conn_memory_change(struct conn_memory *m, enum conn_memory_kind kind,
			struct conn_memory_held *held, size_t old_bytes, size_t new_bytes);

/* Release a whole connection's figures (teardown); wakes waiters. */
void conn_memory_release(struct conn_memory *m, struct conn_memory_held *held);

/*
 * May a new connection whose base is base_bytes, and whose TLS handshake
 * needs tls_bytes (0 for plain), be admitted? If so both are counted at
 * once, in *held (racing admissions cannot both take the last room).
 * False when the fixed bytes (bases and TLS) of all connections would
 * pass max_total; the caller closes it. *first_refusal is set when this
 * refusal starts a run of them (log once), *refused_before to the
 * refusals so far when an admission ends a run (0 otherwise), so the
 * caller logs both edges and nothing between.
 */
bool conn_memory_admit(struct conn_memory *m, struct conn_memory_held *held, size_t base_bytes,
		       size_t tls_bytes, bool *first_refusal, uint64_t *refused_before);

/*
 * Reserve room for a TLS handshake (StartTLS) on an admitted connection:
 * its TLS figure becomes at least tls_bytes. False (nothing counted, the
 * refusal counted in tls_refused) when the fixed bytes would pass
 * max_total.
 */
bool conn_memory_reserve_tls(struct conn_memory *m, struct conn_memory_held *held,
			     size_t tls_bytes);

/*
 * The connection's TLS session now holds tls_bytes (counted whatever the
 * answer: the memory is there). False when it grew and that took the
 * fixed bytes over max_total: a handshake is then stopped by the caller
 * (and counted, conn_memory_count_tls_stop); a session past its handshake
 * goes on (its record buffers are transient).
 */
bool conn_memory_set_tls(struct conn_memory *m, struct conn_memory_held *held,
			 size_t tls_bytes);

/* A handshake was stopped for the total (tls_refused). */
void conn_memory_count_tls_stop(struct conn_memory *m);

/* Add the I/O threads' scratch buffers to the reported figures (before
 * the I/O threads start). */
void conn_memory_add_scratch(struct conn_memory *m, size_t bytes);

/*
 * May a connection that holds `held` bytes and has n_pending operations
 * outstanding take `more` bytes for a new request? Always true when
 * n_pending is 0. Otherwise false when held + more exceeds its bound
 * (bound: authenticated) or the total + more exceeds max_total; the
 * caller then stops reading and calls conn_memory_count_wait.
 */
bool conn_memory_room(const struct conn_memory *m, size_t held, size_t more, bool bound,
		      unsigned n_pending);

/* Would `more` bytes fit under the connection's own bound? */
bool conn_memory_room_in_conn(const struct conn_memory *m, size_t held, size_t more,
			      bool bound);

/*
 * Wait for `more` bytes of room in the total: list w (at the back; kept in
 * its place when already listed). Returns false when the room is there
 * after all (a release came between the caller's check and this call): w
 * is not listed then and the caller goes on.
 */
bool conn_memory_wait(struct conn_memory *m, struct conn_memory_waiter *w, size_t more);

/* The owner saw w->woken: take it back and give up the bytes promised. */
void conn_memory_claim(struct conn_memory *m, struct conn_memory_waiter *w);

/* Take w off the list, woken or not (its owner goes away). */
void conn_memory_unwait(struct conn_memory *m, struct conn_memory_waiter *w);

/* Is the total over max_total? */
bool conn_memory_over_total(const struct conn_memory *m);

/*
 * Must a search stop adding output to a connection with `unsent` bytes
 * queued (max_unsent: the per-connection mark, CONN_MAX_UNSENT)? True at
 * max_unsent, and while the total is over max_total as soon as unsent is
 * not 0.
 */
bool conn_memory_output_full(const struct conn_memory *m, size_t unsent, size_t max_unsent);

/*
 * May a paused search go on, its connection having `unsent` bytes queued
 * (resume_mark: CONN_RESUME_UNSENT)? Under resume_mark, and while the
 * total is over max_total only once nothing is left: the exact opposite
 * of conn_memory_output_full's pressure rule, or a search parked over the
 * total would be requeued at once and park again, forever (it did: 500
 * non-reading clients kept four workers spinning).
 */
bool conn_memory_may_resume(const struct conn_memory *m, size_t unsent, size_t resume_mark);

/*
 * The capacity an output queue of `cap` bytes grows to for `need` bytes
 * (first: the size of a queue's first buffer): doubling, unless the
 * capacity beyond `need` would take the total over max_total; then `need`
 * rounded up to 4 KiB. Slack in the buffers of hundreds of non-reading
 * clients is what took the total past its bound (282 MiB under 256 MiB,
 * all of it output buffers up to twice their contents).
 */
size_t conn_memory_output_capacity(const struct conn_memory *m, size_t cap, size_t need,
				   size_t first);

void conn_memory_count_wait(struct conn_memory *m);

void conn_memory_figures(const struct conn_memory *m, struct conn_memory_figures *out);

#endif
