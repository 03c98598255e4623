/*
 * conn.h — one client connection: input framing, the queue of its
 * outstanding operations, its output queue, back-pressure, and its
 * authentication state (server layer).
 *
 * Threads: a connection belongs to one I/O thread (its libevent base). That
 * thread reads, frames PDUs with ber_frame under the connection's PDU bound
 * (sockbuf_max_incoming before bind, _auth after), peeks each envelope and
 * queues one struct op per PDU on the work queue; it answers Abandon,
 * Unbind and Cancel (RFC 3909: conn_cancel.c) itself, and runs short
 * reads to completion when nothing else of the connection is outstanding
 * (inline_ops.h), with the lock released. Workers encode responses and
 * call conn_send, which writes at once when nothing is queued
 * (non-blocking) and otherwise appends to the output queue; EV_WRITE is
 * armed only on EAGAIN. Only the I/O thread adds or deletes the read event
 * and tears the connection down; other threads "kick" it (event_active)
 * when something it waits for has changed.
 *
 * Back-pressure: no new operation is taken (and the socket is not read)
 * while the connection has max_pending outstanding operations, more than
 * CONN_MAX_UNSENT bytes of unsent output, or no memory room for its next
 * request (conn_memory.h: every buffer the connection owns is counted in
 * mem_held and in the server's total; mem_wait is cleared when one of its
 * operations ends or, when the total was the reason, when released memory
 * wakes it off the total's wait list). Input is read into the I/O
 * thread's scratch buffer and only what is left over is kept; the output
 * buffer goes once empty with nothing outstanding: an idle connection
 * holds its object and one recycled op, whatever it did.
 * No worker ever waits on a client: a search that finds CONN_MAX_UNSENT
 * bytes unsent pauses (its read snapshot released) and is parked on the
 * connection (conn_park_op); when the output falls below
 * CONN_RESUME_UNSENT the I/O thread queues it again (a persistent search
 * waiting for changes is parked until woken instead: conn_wake_op). Unsent
 * output is
 * bounded by CONN_MAX_UNSENT plus what the operations running at that
 * moment add before they see it (one flush each) plus the small final
 * results of the others (max_pending).
 * Timeouts: `writetimeout` closes a connection whose pending output made
 * no progress for that long; `idletimeout` counts a connection as idle
 * when it has read nothing for that long and no operation is queued or
 * running (parked ones wait on the client, and pending output does not
 * make it active), as slapd does. While a Bind runs or waits for
 * earlier operations to end (Binds run alone) no operation is taken
 * either, but the socket stays armed and input is buffered in the room
 * the input buffer already has (no epoll_ctl per Bind).
 *
 * Ownership and lifetime: reference-counted. The I/O thread holds one
 * reference until teardown; every queued operation holds one. The last
 * conn_unref frees it, so a worker finishing after the client left is safe
 * (its output is discarded).
 *
 * Thread-safety: struct conn is opaque outside the conn_*.c files (its
 * fields and lock are in src/server/conn_internal.h); every function below
 * takes the connection's lock itself. The files: conn.c (lifecycle and
 * the read event), conn_frame.c (input and PDU framing), conn_ops.c (the
 * operation pool, Abandon, the hand-off to the work queue), conn_output.c
 * (output queue and write event), conn_identity.c (TLS, SSF, identity).
 *
 * Deadlines: the idle timeout restarts with every byte read, so it cannot
 * bound a client that drips bytes. Two absolute deadlines do: a TLS
 * handshake (ldaps from accept, StartTLS from the moment the handshake
 * starts) must complete within tls_handshake_timeout, and the first
 * complete PDU must arrive within first_pdu_timeout of accept (of the end
 * of the handshake on ldaps). A separate option rather than idletimeout:
 * idletimeout is 0 (never) by default and means "quiet between requests",
 * which a pooled client may legitimately be; an unauthenticated client that
 * has not even sent one request holds a descriptor and a buffer for nothing.
 * Missing a deadline closes the connection (logged).
 *
 * Caveats:
 *  - Never call event_del on a connection's events outside its I/O thread:
 *    libevent would wait for a running callback that waits for our lock.
 *  - A malformed PDU, an over-long PDU or an undecodable envelope gets a
 *    Notice of Disconnection (protocolError) and the connection is closed.
 */
#ifndef LUMEN_CONN_H
#define LUMEN_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/time.h>
#include <time.h>

#include "arena.h"
#include "ber.h"
#include "txn.h"

struct conn;
struct io_thread;
struct op;
struct server_database;


/* Stop reading, and pause searches, once this much output waits. */
#define CONN_MAX_UNSENT (1u << 20)
/* Parked searches go back to work once the unsent output is below this. */
#define CONN_RESUME_UNSENT (256u * 1024u)
/* Most bytes one connection writes per I/O turn, so others are not starved. */
#define CONN_WRITE_PER_TURN (256u * 1024u)

/*
 * Create a connection for an accepted socket on io's thread (called there),
 * log ACCEPT, and start reading. Takes ownership of fd (closed on failure).
 * LUMEN_ENOMEM or LUMEN_EIO (event setup failed).
 */
int conn_create(struct io_thread *io, int fd, const struct sockaddr *peer, socklen_t peer_len,
		const char *listener_name, bool is_tcp, bool tls, struct conn **out);

/* I/O thread: stop taking operations, close once the running ones end. */
void conn_begin_close(struct conn *c);

/*
 * The I/O thread's list of its connections (io_thread.h: changes under
 * io->lock, on that thread). conn_list_next: NULL after the last.
 */
void conn_list_add(struct conn **head, struct conn *c);
void conn_list_remove(struct conn **head, struct conn *c);
struct conn *conn_list_next(const struct conn *c);

/* conn=N of the log and cn=Monitor; fixed for the connection's life. */
uint64_t conn_number(const struct conn *c);

/* What cn=Monitor shows of a connection: strings copied into the arena. */
struct conn_info {
	uint64_t id;
	const char *peer;                /* "IP=a.b.c.d:p", or the socket path */
	const char *local;               /* the listener's name */
	const char *authz_dn;            /* NULL when anonymous */
	unsigned ops_received;           /* PDUs taken (op=N) */
	unsigned ops_executing;          /* running on a worker now */
	unsigned ops_outstanding;        /* queued, running or parked */
	size_t memory;                   /* bytes its buffers hold (conn_memory.h) */
	time_t started, last_activity;   /* wall clock */
	bool reading;                    /* waits for input */
	bool writing;                    /* waits to write */
};
/* LUMEN_OK; LUMEN_ENOTFOUND (closed: nothing to show); LUMEN_ENOMEM. */
int conn_get_info(struct conn *c, struct arena *arena, struct conn_info *out);

/* --- the operation side: what a worker does with its op (conn_ops.c) --- */

/* What a worker does with a queued op (conn_op_begin). */
enum conn_op_start {
	CONN_OP_RUN,     /* run it (op->running is set) */
	CONN_OP_SKIP,    /* abandoned, or the connection is going: conn_op_done */
	CONN_OP_PARK,    /* the output is full: conn_park_op before it starts */
};
/*
 * A worker picked op from the queue. park_if_full: an op that would only
 * pause after its first batch (a new search) is parked at once while the
 * client has not read what waits.
 */
enum conn_op_start conn_op_begin(struct conn *c, struct op *op, bool park_if_full);

/*
 * Send op's encoded responses (one or several, back to back), unless op
 * was abandoned (RFC 4511 §4.11: never answered). Writes at once when
 * nothing is queued. LUMEN_OK; LUMEN_EIO (op abandoned, connection closed
 * or failed: the bytes are dropped); LUMEN_ENOMEM (the output queue could
 * not grow: the connection is aborted).
 */
int conn_send_op(struct conn *c, const struct op *op, const void *data, size_t len);

/*
 * conn_send_op for op's final response: once sent, a Cancel naming op is
 * tooLate. Same returns.
 */
int conn_send_final(struct conn *c, struct op *op, const void *data, size_t len);

/*
 * A write reached the point where it changes the database: true to go on
 * (from now on a Cancel naming op is tooLate); false when op was abandoned
 * or cancelled, or its connection is going (end without an answer).
 */
bool conn_op_commit(struct conn *c, struct op *op);

/*
 * The connection's RFC 5805 transaction (txn.h; at most one, discarded on
 * Bind, Unbind and close). conn_txn_start: open one, its identifier in
 * id; LUMEN_EBUSY when one is open, LUMEN_ENOMEM. conn_txn_add: queue a
 * copy of op's PDU (an update for db) in the transaction named id;
 * LUMEN_ENOTFOUND (no such open transaction), and txn_queue_add's errors.
 * conn_txn_take: detach the transaction named id for its End (op end;
 * the caller frees *out with txn_queue_free); LUMEN_ENOTFOUND when none is
 * open under that id, LUMEN_EBUSY while an update sent before the End is
 * still outstanding (it may be one of the transaction's: the End would
 * miss it), the transaction staying open: the End then pauses waiting
 * (ops.h, ctx->waiting) and is woken (conn_wake_op) once the last such
 * update is done, to take the transaction again.
 */
int conn_txn_start(struct conn *c, uint8_t id[TXN_ID_SIZE]);
int conn_txn_add(struct conn *c, struct ber_view id, const struct server_database *db,
		 const struct op *op);
int conn_txn_take(struct conn *c, struct ber_view id, const struct op *end,
		  struct txn_queue **out);

/*
 * The connection's kept VLV result (search_sort.h's struct sort_context:
 * at most one, counted in the connection's memory, dropped on Bind,
 * Unbind and close). conn_sort_take detaches it for the operation that
 * may answer from it (NULL: none kept); conn_sort_keep gives one back (or
 * a new one), dropping any other kept meanwhile: true when kept, false
 * when it was freed at once (the connection is closing, or the result
 * would take it over its memory bound). Any worker.
 */
struct sort_context;
struct sort_context *conn_sort_take(struct conn *c);
bool conn_sort_keep(struct conn *c, struct sort_context *ctx);

/* Did a Cancel request name op (it then ends as canceled)? */
bool conn_op_canceled(struct conn *c, const struct op *op);

/*
 * Worker side of back-pressure for long results: true when c has
 * CONN_MAX_UNSENT bytes or more unsent, so a search should pause.
 */
bool conn_output_full(struct conn *c);

/*
 * Are the connections over conn_total_memory (no lock taken)? A search
 * then sends its entries 8 KiB at a time instead of 64 KiB, so that what
 * it queues for a client that does not read, before it pauses, is not a
 * whole flush per connection.
 */
bool conn_memory_pressed(const struct conn *c);

/*
 * A worker is done with op for now (a search paused, op->resume holds
 * where): park it on the connection until the unsent output falls below
 * CONN_RESUME_UNSENT, then it is queued again. An op abandoned meanwhile,
 * or whose connection is closing, ends here instead (conn_op_done).
 */
void conn_park_op(struct conn *c, struct op *op, bool wait);

/*
 * The I/O thread ran op inline and its handler handed it off (op_hand_off,
 * ops.h): queue it for a worker, which runs it anew from its PDU (busy
 * when the work queue refuses it, as for any op).
 */
void conn_hand_off_op(struct conn *c, struct op *op);

/*
 * A persistent search (op->persist) waits for its database: with wait
 * set, conn_park_op parks it until conn_wake_op, whatever the
 * output (or queues it again at once when a wake came while it ran).
 * conn_wake_op: any thread, any lock of the database held (it takes only
 * c's lock and kicks the I/O thread, which queues the op); the op must
 * still be outstanding (its persist handle not yet released).
 */
void conn_wake_op(struct conn *c, struct op *op);

/* A worker is done with op: release its persist handle (no lock held),
 * unlink it, recycle it, wake the I/O thread if it waits for this, and
 * drop the op's reference. */
void conn_op_done(struct conn *c, struct op *op);

/*
 * Send a Notice of Disconnection (encoded with w, which is reset) and close
 * the connection. Any thread.
 */
void conn_abort(struct conn *c, struct ber_writer *w, int code, const char *reason);

/*
 * Hold back everything sent on c from now on for `delay` (a failed bind's
 * pace, bind_pace.h): responses are queued instead of written, and the I/O
 * thread writes the queue once the delay is over. No thread waits; the
 * queue keeps the responses' order. Any thread. LUMEN_OK, LUMEN_EIO (the
 * connection is closing or the timer could not be armed: send nothing).
 */
int conn_hold_output(struct conn *c, const struct timeval *delay);

/* --- security and identity (conn_identity.c) --- */

/*
 * StartTLS (RFC 4511 §4.14), on the worker running the request op: if op
 * is the connection's only outstanding operation, nothing follows it in
 * the input, and TLS is neither on nor starting, send `response` (the
 * encoded success) in the clear and have the I/O thread start the
 * handshake once it is out. Returns LUMEN_OK; LUMEN_EBUSY (other
 * operations outstanding or input pending), LUMEN_EEXIST (TLS already on
 * or starting), LUMEN_ELIMIT (the room a handshake takes,
 * TLS_MEMORY_HANDSHAKE_PEAK, would pass conn_total_memory; reserved
 * otherwise, conn_memory.h), LUMEN_EIO (the connection is closing);
 * nothing is sent on error.
 */
int conn_start_tls(struct conn *c, const struct op *op, const void *response, size_t len);

/* The connection's SSF, local flag and peer credentials (SASL EXTERNAL). */
struct conn_security {
	unsigned ssf;
	bool is_local;
	bool has_peer_cred;
	uid_t uid;
	gid_t gid;
	bool tls;
	char tls_subject[256];           /* verified client certificate; "" = none */
};
void conn_get_security(struct conn *c, struct conn_security *out);

/* The connection's security strength: 0 plain TCP, 71 ldapi, the cipher's
 * bits with TLS. */
unsigned conn_ssf(struct conn *c);

/*
 * Record the outcome of a Bind: ndn (normalized, for comparisons) and dn
 * (the form WhoAmI reports: the entry's stored DN or the configured
 * rootdn); empty views: anonymous. LUMEN_ENOMEM (the connection is then
 * anonymous).
 */
int conn_set_identity(struct conn *c, struct ber_view ndn, struct ber_view dn, bool bound);

/*
 * After a bind whose password must be changed (ppolicy): the operations of
 * the connection carry backend_op.password_change_only until the next Bind
 * (conn_set_identity lifts it) or a password change (on false).
 */
void conn_set_password_change_only(struct conn *c, bool on);
bool conn_password_change_only(struct conn *c);

/* Copy the bound identity into the arena (empty view when anonymous). */
int conn_identity(struct conn *c, struct arena *arena, struct ber_view *ndn);
/* As conn_identity, for the reported form of the DN. LUMEN_ENOMEM. */
int conn_authz_dn(struct conn *c, struct arena *arena, struct ber_view *dn);

#endif
