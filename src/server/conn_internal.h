/*
 * conn_internal.h — struct conn and what its files share (server layer,
 * private to src/server/conn*.c; everything else goes through conn.h).
 *
 * The files: conn.c (lifecycle: create, reference counts, the read event,
 * deadlines, teardown), conn_frame.c (reading and PDU framing),
 * conn_ops.c (the operation pool, Abandon/Unbind, the work queue hand-off,
 * parking), conn_output.c (the output queue and the write event),
 * conn_identity.c (TLS set-up, SSF, peer credentials, the bound identity).
 *
 * Thread-safety: every field below the lock is guarded by it unless marked
 * "I/O thread"; functions whose name ends in _locked expect the lock held,
 * the others take it. The inline helpers below read fields: lock held.
 *
 * Caveats:
 *  - A test may include this header to look inside a connection; nothing
 *    under src/ outside the conn files may.
 */
#ifndef LUMEN_CONN_INTERNAL_H
#define LUMEN_CONN_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <event2/event.h>

#include "config.h"
#include "conn.h"
#include "conn_limits.h"
#include "conn_memory.h"
#include "io_thread.h"
#include "listener.h"
#include "server.h"

struct op;
struct workq_job;
struct tls_session;
struct txn_queue;
struct sort_context;

/* Where a connection stands with TLS (tls.h). */
enum conn_tls_state {
	CONN_TLS_NONE = 0,    /* plain */
	CONN_TLS_STARTING,    /* StartTLS answered: handshake once the answer is out */
	CONN_TLS_HANDSHAKE,   /* no LDAP is read or written until it completes */
	CONN_TLS_ON,          /* every byte goes through the session */
};

/* The smallest input buffer a connection keeps of its own: for bytes it
 * could not take yet (a partial request, or requests held back); it is
 * read into its I/O thread's scratch buffer otherwise. */
#define CONN_MIN_INPUT 512u
/* Output buffer size a queue starts with, and that an emptied queue keeps
 * while operations are outstanding (none: conn_trim_idle_locked frees it). */
#define CONN_BASE_OUTPUT 16384u

struct conn {
	pthread_mutex_t lock;
	unsigned refs;
	uint64_t id;                     /* conn=N (fixed) */
	int fd;
	bool is_tcp;
	struct io_thread *io;
	struct conn *io_prev, *io_next;  /* I/O thread's list (io->lock) */
	struct event *read_event;        /* persistent, with the idle timeout */
	struct event *write_event;       /* one-shot, armed on EAGAIN */
	struct event *deadline_event;    /* one-shot timer: handshake / first PDU */
	struct event *hold_event;        /* one-shot timer: ends output_held */
	/* Activated (never added) to make the I/O thread look at the
	 * connection again: on_read as if the socket were readable. Not the
	 * read event itself: libevent does not insert an event that is
	 * active when event_add is called (and says it did), so a kick racing
	 * conn_update_reading would leave the socket unwatched for good. */
	struct event *kick_event;
	bool output_held;                /* conn_hold_output: queue, do not write */
	bool first_pdu_seen;             /* a complete PDU was framed (I/O thread) */
	char peer[LISTENER_NAME_MAX];    /* "IP=a.b.c.d:p" (fixed) */
	char local[LISTENER_NAME_MAX];   /* the listener's name (fixed) */
	time_t started;                  /* accepted (wall clock, cn=Monitor) */
	time_t last_activity;            /* last input read (I/O thread) */
	time_t output_since;             /* monotonic s: output queued or last progress */

	uint8_t *in;                     /* unprocessed input [in_start, in_len) */
	size_t in_start, in_len, in_cap;
	bool in_borrowed;                /* in is the I/O thread's scratch buffer,
					    for the length of one on_read */
	uint8_t *kept_in;                /* c's own input buffer while borrowing */
	size_t kept_in_cap;
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
	unsigned n_waiting;              /* of those, persistent searches waiting */
	struct op *free_ops;             /* recycled op objects with buffers */
	unsigned n_free_ops;
	unsigned next_op_number;         /* op=N (I/O thread) */
	unsigned inline_this_turn;       /* ops run inline since the read (I/O thread) */

	bool bound;                      /* authenticated as bind_dn */
	bool password_change_only;       /* conn_set_password_change_only */
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
	struct conn_memory_held mem_held; /* bytes of every buffer it owns (conn_memory.h) */
	bool mem_wait;                   /* no memory room for the next request */
	bool mem_listed;                 /* its waiter may be on the total's wait list */
	struct conn_memory_waiter mem_waiter;
	bool counted;                    /* admitted by conn_limits (released at teardown) */
	struct conn_limits_key limits_key;
	struct txn_queue *txn;           /* the open RFC 5805 transaction, or NULL */
	struct op *txn_end_waiting;      /* its End, waiting for earlier updates */
	struct sort_context *sort_context;   /* kept for the next VLV request, or NULL */
	size_t sort_context_bytes;           /* counted in mem_held */
};

static inline const struct config *conn_config(const struct conn *c)
{
	return c->io->server->config;
}

/* The PDU bound: sockbuf_max_incoming before bind, _auth after. */
static inline size_t conn_max_pdu(const struct conn *c)
{
	const struct config *cfg = conn_config(c);
	return c->bound ? cfg->max_incoming_auth : cfg->max_incoming;
}

static inline unsigned conn_max_pending(const struct conn *c)
{
	const struct config *cfg = conn_config(c);
	return c->bound ? cfg->max_pending_auth : cfg->max_pending;
}

static inline struct conn_memory *conn_memory_of(const struct conn *c)
{
	return &c->io->server->conn_memory;
}

/* One of c's buffers went from old_bytes to new_bytes (lock held or c new). */
static inline void conn_account(struct conn *c, enum conn_memory_kind kind, size_t old_bytes,
				size_t new_bytes)
{
	conn_memory_change(conn_memory_of(c), kind, &c->mem_held, old_bytes, new_bytes);
}

static inline size_t conn_held(const struct conn *c)
{
	return conn_memory_held_total(&c->mem_held);
}

/* Nothing queued or running, and no persistent search waits for changes:
 * parked ops and unsent output wait on the client, which does not make it
 * active (slapd's idletimeout alike). */
static inline bool conn_is_idle(const struct conn *c)
{
	return c->n_pending == c->n_parked && c->n_waiting == 0;
}

static inline size_t conn_unsent(const struct conn *c)
{
	return c->out_len - c->out_start;
}

/* Wake the I/O thread: it re-examines buffered input and its state. */
static inline void conn_kick_locked(struct conn *c)
{
	if (!c->closed)
		event_active(c->kick_event, EV_READ, 0);
}

/*
 * Operations framed in one read, queued after the connection's lock is
 * released: a worker woken while the I/O thread still held the lock would
 * block on it at once (two futex calls per operation, measured).
 */
struct op_batch {
	struct workq_job *head;
	struct workq_job **tail;
};

/* --- conn.c: lifecycle --- */

void conn_ref(struct conn *c);
/* Drop a reference; the last one frees the connection. */
void conn_unref(struct conn *c);
/* Free c (its last reference is gone; lock not held). */
void conn_free(struct conn *c);
/*
 * One of c's buffers (*buf of *cap bytes, counted as kind; lock held)
 * reallocated to size bytes and counted so. LUMEN_ENOMEM: the buffer and
 * its count are as they were.
 */
int conn_resize_buffer(struct conn *c, enum conn_memory_kind kind, uint8_t **buf, size_t *cap,
		       size_t size);
/*
 * One of c's emptied buffers given back down to base bytes when it grew
 * past them for a large PDU or response; kept, and still counted, when
 * the smaller allocation fails.
 */
void conn_shrink_buffer(struct conn *c, enum conn_memory_kind kind, uint8_t **buf, size_t *cap,
			size_t base);
/* May the I/O thread take another operation from c now? */
bool conn_accepting_ops(const struct conn *c);
/* I/O thread: make the read event match what the connection can take. */
void conn_update_reading(struct conn *c);
/* I/O thread: (re)start the one-shot deadline, seconds from now; 0 = none. */
void conn_arm_deadline(struct conn *c, unsigned seconds);
/* The deadline that applies now: the handshake's, else the first PDU's. */
void conn_arm_current_deadline(struct conn *c);
/* I/O thread: close the socket and free the events; unlocks and drops the
 * I/O thread's reference. */
void conn_teardown_locked(struct conn *c);
/* conn_abort with the lock held. */
void conn_abort_locked(struct conn *c, struct ber_writer *w, int code, const char *reason);

/* --- conn_frame.c: input --- */

/* Read once. LUMEN_OK (data or nothing yet), LUMEN_EIO (EOF or error). */
int conn_fill_input_locked(struct conn *c);
/* Frame and dispatch whole PDUs from the input buffer while allowed. */
void conn_process_input_locked(struct conn *c, struct op_batch *batch);
/*
 * After processing: give the I/O thread's scratch buffer back, keeping
 * what is left in a buffer of c's own sized to it, and free c's own buffer
 * once empty. LUMEN_ENOMEM: the bytes left could not be kept (the caller
 * aborts the connection).
 */
int conn_settle_input_locked(struct conn *c);
/* Teardown: forget the scratch buffer if c still has it. */
void conn_drop_borrowed_input(struct conn *c);
/* on_read: a release woke c's memory waiter; it may try again. */
void conn_memory_woken_locked(struct conn *c);

/* --- conn_ops.c: the operation pool --- */

/* One framed PDU: answer it here (Abandon, Unbind) or add it to batch. */
int conn_dispatch_pdu_locked(struct conn *c, const uint8_t *pdu, size_t len,
			     int32_t message_id, int tag, struct op_batch *batch);
/* --- conn_cancel.c: Cancel (RFC 3909) --- */

/*
 * An ExtendedRequest PDU: when it is a Cancel, handle it (answer it now, or
 * mark its target so that conn_cancel_answer_locked answers both when the
 * target ends) and return true; false for any other extended operation
 * and for a PDU that does not decode (queued as usual).
 */
bool conn_cancel_locked(struct conn *c, const uint8_t *pdu, size_t len, unsigned number);
/* op ends (lock held): if a Cancel named it, send op's canceled result and
 * the Cancel's success (nothing once the connection is going). */
void conn_cancel_answer_locked(struct conn *c, const struct op *op);

/* --- conn_txn.c: the open transaction --- */

/* Drop the open transaction, if any (Bind, Unbind, close). */
void conn_txn_discard_locked(struct conn *c);

/* op is done (unlinked): wake the End waiting for it when no earlier
 * update is left; forget the End when op is that End. */
void conn_txn_op_done_locked(struct conn *c, const struct op *op);

/* --- conn_sort.c: the kept VLV result --- */

/* Drop the kept sorted result, if any (Bind, Unbind, close). */
void conn_sort_discard_locked(struct conn *c);

/* Mark queued operations so workers drop them unanswered. */
void conn_abandon_queued_locked(struct conn *c);
/* Lock released: hand the batch to the workers (busy for those refused). */
void conn_push_batch(struct conn *c, struct op_batch *batch);
/* Free the recycled op objects (c is being freed). */
void conn_free_ops(struct conn *c);
/* Nothing is outstanding any more: give back the emptied output buffer and
 * all but one recycled op object (with a small PDU buffer). */
void conn_trim_idle_locked(struct conn *c);
/*
 * Parked ops to queue again (lock held): every one when `all`, else only
 * those abandoned; a persistent search waiting for changes only when
 * woken or abandoned. Returns them chained through op->job.next; hand the
 * chain to conn_requeue once the lock is released.
 */
struct workq_job *conn_take_parked_locked(struct conn *c, bool all);
/* Queue a chain from conn_take_parked_locked (lock not held); an op the
 * work queue refuses ends with busy (nothing when abandoned). */
void conn_requeue(struct conn *c, struct workq_job *chain);

/* --- conn_output.c: output --- */

/* Queue or write encoded responses. LUMEN_OK, LUMEN_EIO, LUMEN_ENOMEM as
 * conn_send_op. */
int conn_send_locked(struct conn *c, const void *data, size_t len);
bool conn_output_full_locked(const struct conn *c);
/* May parked searches go on (conn_memory_may_resume on the unsent output)? */
bool conn_may_resume_locked(const struct conn *c);
/* Arm the write event with the write/idle deadline. */
void conn_arm_write_locked(struct conn *c);
void conn_on_write(evutil_socket_t fd, short what, void *arg);
void conn_on_hold_over(evutil_socket_t fd, short what, void *arg);

/* --- conn_identity.c: TLS and identity --- */

/*
 * The connection bounds, peer credentials and (ldaps) the TLS session.
 * LUMEN_ELIMIT (refused by conn_max/conn_max_per_ip, logged), LUMEN_ENOMEM,
 * LUMEN_EIO (no TLS session).
 */
int conn_secure_setup(struct conn *c, const struct sockaddr *peer, socklen_t peer_len,
		      bool tls);
/*
 * The TLS set-up steps the I/O thread owns: start the handshake once a
 * StartTLS answer is out, then drive it. Returns false when the connection
 * was torn down (lock released).
 */
bool conn_drive_tls_locked(struct conn *c);
/*
 * Count what c's TLS session holds now (tls_session_bytes; during a
 * handshake at least TLS_MEMORY_HANDSHAKE_PEAK, the room reserved for it)
 * as its CONN_MEM_TLS bytes. False when a handshake grew past its room
 * and the total (conn_memory_set_tls): the caller stops it.
 */
bool conn_count_tls_locked(struct conn *c);
/* Free the identity buffers and the TLS session (c is being freed). */
void conn_free_identity(struct conn *c);

#endif
