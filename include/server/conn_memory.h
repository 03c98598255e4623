/*
 * conn_memory.h — the bytes client connections hold, per connection and in
 * total, and the bounds on them: conn_max_memory (anonymous),
 * conn_max_memory_auth (bound) and conn_total_memory (server layer).
 *
 * What counts: every buffer a connection owns — the input buffer's
 * capacity, each op object and its copy of the request PDU (queued,
 * running, or kept for reuse), the output queue's capacity — and the
 * connection object itself. conn.c keeps each connection's figure (under
 * its lock) and reports every change here, so the total is one atomic
 * counter read by cn=Monitor and /metrics without taking any lock.
 *
 * The bounds are back-pressure, not errors: a connection whose next
 * request (or the input room for it) would take it over its bound, or the
 * server over the total, is not read until its own operations end (or,
 * for the total, until a retry finds room). A connection that has no
 * operation outstanding always gets room for one request: no connection
 * starves, and the per-connection bound can never wedge a client whose
 * single request is larger than the bound (sockbuf_max_incoming bounds that
 * request instead). The total can therefore exceed conn_total_memory by at
 * most one request per connection.
 *
 * Thread-safety: every function may be called from any thread; the
 * counters are atomics and the bounds are read-only after init.
 *
 * Output a search queues while its client does not read is bounded by
 * conn_memory_output_full: at CONN_MAX_UNSENT per connection, and, while
 * the total is over conn_total_memory, as soon as anything waits to be
 * read; the search then goes on (conn_memory_may_resume) once its client
 * has read all of it. Without the second rule a few hundred clients that
 * never read would each hold CONN_MAX_UNSENT (and twice that in buffer
 * capacity) whatever the total. So over the bound each connection holds
 * its base buffers, its requests and at most one search flush of output.
 *
 * Caveats:
 *  - Output counts here too, so it also holds back new requests of that
 *    connection and of the others.
 *  - Allocator overhead is not counted: the figures are the buffers' sizes.
 */
#ifndef LUMEN_CONN_MEMORY_H
#define LUMEN_CONN_MEMORY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct conn_memory {
	atomic_uint_fast64_t total;      /* bytes held by every connection now */
	atomic_uint_fast64_t peak;       /* the largest total seen */
	atomic_uint_fast64_t waits;      /* times a connection stopped reading for memory */
	size_t max_conn;                 /* conn_max_memory */
	size_t max_conn_auth;            /* conn_max_memory_auth */
	uint64_t max_total;              /* conn_total_memory; 0 = no bound */
};

/* What a figure is reported as (cn=Monitor, /metrics). */
struct conn_memory_figures {
	uint64_t total, peak, waits, max_total;
};

void conn_memory_init(struct conn_memory *m, size_t max_conn, size_t max_conn_auth,
		      uint64_t max_total);

/*
 * One connection's holding changed from old_bytes to new_bytes: update its
 * figure (*held, guarded by the caller) and the total.
 */
void conn_memory_change(struct conn_memory *m, size_t *held, size_t old_bytes,
			size_t new_bytes);

/* Release a whole connection's figure (teardown). */
void conn_memory_release(struct conn_memory *m, size_t *held);

/*
 * May a connection that holds `held` bytes and has n_pending operations
 * outstanding take `more` bytes for a new request? Always true when
 * n_pending is 0. Otherwise false when held + more exceeds its bound
 * (bound: authenticated) or the total + more exceeds max_total; the
 * caller then stops reading and calls conn_memory_count_wait.
 */
bool conn_memory_room(const struct conn_memory *m, size_t held, size_t more, bool bound,
		      unsigned n_pending);

/* Is the total over max_total (a paused connection must retry later)? */
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

void conn_memory_count_wait(struct conn_memory *m);

void conn_memory_figures(const struct conn_memory *m, struct conn_memory_figures *out);

#endif
