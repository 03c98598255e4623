/*
 * conn.h — one client connection: input framing, the queue of its
 * outstanding operations, its output queue, back-pressure, and its
 * authentication state (server layer).
 *
 * Threads: a connection belongs to one I/O thread (its libevent base). That
 * thread reads, frames PDUs with ber_frame under the connection's PDU bound
 * (sockbuf_max_incoming before bind, _auth after), peeks each envelope and
 * queues one struct op per PDU on the work queue; it answers Abandon and
 * Unbind itself. Workers encode responses and call conn_send, which writes
 * at once when nothing is queued (non-blocking) and otherwise appends to the
 * output queue; EV_WRITE is armed only on EAGAIN. Only the I/O thread adds
 * or deletes the read event and tears the connection down; other threads
 * "kick" it (event_active) when something it waits for has changed.
 *
 * Back-pressure: no new operation is taken (and the socket is not read)
 * while the connection has max_pending outstanding operations, more than
 * CONN_MAX_UNSENT bytes of unsent output, or no memory room for its next
 * request (conn_memory.h: every buffer the connection owns is counted in
 * mem_held and in the server's total; mem_wait is cleared when one of its
 * operations ends or, when the total was the reason, by the I/O thread's
 * retry). Buffers return to their base size once empty after a large
 * request or response: an idle connection holds ~17 KB whatever it did.
 * No worker ever waits on a client: a search that finds CONN_MAX_UNSENT
 * bytes unsent pauses (its read snapshot released) and is parked on the
 * connection (conn_park_op); when the output falls below
 * CONN_RESUME_UNSENT the I/O thread queues it again. Unsent output is
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
 * Thread-safety: every field below the lock is guarded by it unless marked
 * "I/O thread"; the conn_* functions take the lock themselves unless their
 * name ends in _locked.
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

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>

#include "arena.h"
#include "ber.h"
#include "conn_limits.h"
#include "listener.h"

struct io_thread;
struct op;
struct event;
struct workq_job;
struct tls_session;

/* Where a connection stands with TLS (tls.h). */
enum conn_tls_state {
	CONN_TLS_NONE = 0,    /* plain */
	CONN_TLS_STARTING,    /* StartTLS answered: handshake once the answer is out */
	CONN_TLS_HANDSHAKE,   /* no LDAP is read or written until it completes */
	CONN_TLS_ON,          /* every byte goes through the session */
};

/* Stop reading, and pause searches, once this much output waits. */
#define CONN_MAX_UNSENT (1u << 20)
/* Parked searches go back to work once the unsent output is below this. */
#define CONN_RESUME_UNSENT (256u * 1024u)
/* Most bytes one connection writes per I/O turn, so others are not starved. */
#define CONN_WRITE_PER_TURN (256u * 1024u)

struct conn {
	pthread_mutex_t lock;
	unsigned refs;
	uint64_t id;                     /* conn=N */
	int fd;
	bool is_tcp;
	struct io_thread *io;
	struct conn *io_prev, *io_next;  /* I/O thread's list (I/O thread) */
	struct event *read_event;        /* persistent, with the idle timeout */
	struct event *write_event;       /* one-shot, armed on EAGAIN */
	struct event *deadline_event;    /* one-shot timer: handshake / first PDU */
	struct event *hold_event;        /* one-shot timer: ends output_held */
	bool output_held;                /* conn_hold_output: queue, do not write */
	bool first_pdu_seen;             /* a complete PDU was framed (I/O thread) */
	char peer[LISTENER_NAME_MAX];    /* "IP=a.b.c.d:p" */
	char local[LISTENER_NAME_MAX];   /* the listener's name */
	time_t started;                  /* accepted (wall clock, cn=Monitor) */
	time_t last_activity;            /* last input read (I/O thread) */
	time_t output_since;             /* monotonic s: output queued or last progress */

	uint8_t *in;                     /* unprocessed input [in_start, in_len) */
	size_t in_start, in_len, in_cap;
	uint8_t *out;                    /* unsent output [out_start, out_len) */
	size_t out_start, out_len, out_cap;

	bool reading;                    /* read event added (I/O thread) */
	bool write_armed;
	bool closing;                    /* no new ops; close when none remain */
	bool aborting;                   /* close at once; output discarded */
	bool closed;                     /* torn down: fd closed, events freed */
	bool bind_in_progress;
	bool bind_waiting;               /* a Bind waits for earlier ops to end */

	struct op *ops;                  /* outstanding (queued, running or parked) */
	unsigned n_pending;
	unsigned n_parked;               /* ops with op->parked set */
	struct op *free_ops;             /* recycled op objects with buffers */
	unsigned n_free_ops;
	unsigned next_op_number;         /* op=N (I/O thread) */

	bool bound;                      /* authenticated as bind_dn */
	char *bind_dn;                   /* normalized DN; bind_dn_len 0 = anonymous */
	size_t bind_dn_len, bind_dn_cap;
	char *authz_dn;                  /* the same DN as stored/configured (WhoAmI) */
	size_t authz_dn_len, authz_dn_cap;

	/* Security. ssf: 0 plain TCP, 71 ldapi, the cipher's bits with TLS. */
	unsigned ssf;
	bool is_local;                   /* ldapi: peer credentials below */
	bool has_peer_cred;
	uid_t peer_uid;
	gid_t peer_gid;
	struct tls_session *tls;         /* NULL unless TLS started */
	enum conn_tls_state tls_state;
	bool starttls_in_progress;       /* a StartTLS request runs: read nothing */
	int32_t starttls_message_id;
	size_t mem_held;                 /* bytes of every buffer it owns (conn_memory.h) */
	bool mem_wait;                   /* no memory room for the next request */
	bool counted;                    /* admitted by conn_limits (released at teardown) */
	struct conn_limits_key limits_key;
};

/*
 * Create a connection for an accepted socket on io's thread (called there),
 * log ACCEPT, and start reading. Takes ownership of fd (closed on failure).
 * LUMEN_ENOMEM or LUMEN_EIO (event setup failed).
 */
int conn_create(struct io_thread *io, int fd, const struct sockaddr *peer, socklen_t peer_len,
		const char *listener_name, bool is_tcp, bool tls, struct conn **out);

/*
 * StartTLS (RFC 4511 §4.14), on the worker running the request op: if op
 * is the connection's only outstanding operation, nothing follows it in
 * the input, and TLS is neither on nor starting, send `response` (the
 * encoded success) in the clear and have the I/O thread start the
 * handshake once it is out. Returns LUMEN_OK; LUMEN_EBUSY (other
 * operations outstanding or input pending), LUMEN_EEXIST (TLS already on
 * or starting), LUMEN_EIO (the connection is closing); nothing is sent on
 * error.
 */
int conn_start_tls(struct conn *c, const struct op *op, const void *response, size_t len);

/* The connection's SSF, local flag and peer credentials (under the lock). */
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

/* I/O thread: stop taking operations, close once the running ones end. */
void conn_begin_close(struct conn *c);

void conn_ref(struct conn *c);
/* Drop a reference; the last one frees the connection. */
void conn_unref(struct conn *c);

/*
 * Queue one encoded response (or several, back to back) for the client.
 * Writes immediately when possible. LUMEN_OK, LUMEN_EIO (connection closed
 * or failed: the bytes are dropped), LUMEN_ENOMEM (output queue could not
 * grow: the connection is aborted).
 */
int conn_send(struct conn *c, const void *data, size_t len);
/*
 * Hold back everything sent on c from now on for `delay` (a failed bind's
 * pace, bind_pace.h): conn_send queues instead of writing, and the I/O
 * thread writes the queue once the delay is over. No thread waits; the
 * queue keeps the responses' order. Any thread. LUMEN_OK, LUMEN_EIO (the
 * connection is closing or the timer could not be armed: send nothing).
 */
int conn_hold_output(struct conn *c, const struct timeval *delay);
int conn_send_locked(struct conn *c, const void *data, size_t len);

/*
 * The output queue's buffer changed size (conn_output.c): account its
 * capacity (old_cap before the change). Lock held.
 */
void conn_output_resized_locked(struct conn *c, size_t old_cap);

/*
 * The output queue is empty (out_start == out_len == 0): give a buffer
 * grown past its base size back. Lock held.
 */
void conn_output_drained_locked(struct conn *c);

/*
 * I/O thread: clear mem_wait on its connections that wait for the total to
 * fall, and let them retry (io_thread.c's retry timer).
 */
void conn_retry_memory(struct conn *c);

/*
 * Send a Notice of Disconnection (encoded with w, which is reset) and close
 * the connection. Lock held; any thread.
 */
void conn_abort_locked(struct conn *c, struct ber_writer *w, int code, const char *reason);

/* A worker is done with op: unlink it, recycle it, wake the I/O thread if
 * it waits for this, and drop the op's reference. */
void conn_op_done(struct conn *c, struct op *op);

/*
 * Worker side of back-pressure for long results: true when c has
 * CONN_MAX_UNSENT bytes or more unsent, so a search should pause.
 */
bool conn_output_full(struct conn *c);
bool conn_output_full_locked(const struct conn *c);

/*
 * A worker is done with op for now (a search paused, op->resume holds
 * where): park it on the connection until the unsent output falls below
 * CONN_RESUME_UNSENT, then it is queued again. An op abandoned meanwhile,
 * or whose connection is closing, ends here instead (conn_op_done).
 */
void conn_park_op(struct conn *c, struct op *op);

/*
 * Parked ops to queue again (lock held): every one when `all`, else only
 * those abandoned. Returns them chained through op->job.next; hand the
 * chain to conn_requeue once the lock is released.
 */
struct workq_job *conn_take_parked_locked(struct conn *c, bool all);
/* Queue a chain from conn_take_parked_locked (lock not held); an op the
 * work queue refuses ends with busy (nothing when abandoned). */
void conn_requeue(struct conn *c, struct workq_job *chain);

/* Arm the write event with the write/idle deadline (lock held). */
void conn_arm_write_locked(struct conn *c);

/*
 * Record the outcome of a Bind: ndn (normalized, for comparisons) and dn
 * (the form WhoAmI reports: the entry's stored DN or the configured
 * rootdn); empty views: anonymous. LUMEN_ENOMEM (the connection is then
 * anonymous).
 */
int conn_set_identity(struct conn *c, struct ber_view ndn, struct ber_view dn, bool bound);

/* Copy the bound identity into the arena (empty view when anonymous). */
int conn_identity(struct conn *c, struct arena *arena, struct ber_view *ndn);
/* As conn_identity, for the reported form of the DN. LUMEN_ENOMEM. */
int conn_authz_dn(struct conn *c, struct arena *arena, struct ber_view *dn);

#endif
