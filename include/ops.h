/*
 * ops.h — LDAP operations on the worker side: the op object, per-worker
 * scratch, the dispatch table keyed by protocolOp, and the helpers handlers
 * use to answer (server layer).
 *
 * Flow: the I/O thread copies one PDU into a struct op (recycled per
 * connection, so steady state allocates nothing) and queues it; a worker
 * runs ops_run_job: skip if abandoned, decode the PDU with the worker's
 * arena (zero-copy views into op->pdu), look the protocolOp up in the
 * dispatch table and call its handler. A handler encodes everything it sends
 * into ctx->out (the worker's writer) and ends with op_send_result /
 * op_send_extended, which appends the final result, logs the RESULT line
 * and hands the whole batch to conn_send in one piece. Adding an operation
 * or the backend is adding or changing rows of the table.
 *
 * Ownership: ops belong to their connection; worker contexts to their
 * worker thread (created by ops_worker_start, freed by ops_worker_stop).
 * Thread-safety: a handler runs on one worker and touches the connection
 * only through conn_* functions.
 *
 * Caveats:
 *  - A PDU that does not decode gets a Notice of Disconnection; a decode
 *    that exceeds a limit (LUMEN_ELIMIT) gets protocolError on the op.
 *  - Handlers must not keep pointers into the PDU or the arena after they
 *    return: both are reused for the next operation.
 */
#ifndef LUMEN_OPS_H
#define LUMEN_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "arena.h"
#include "ber.h"
#include "ldap_message.h"
#include "workq.h"

struct conn;
struct server;

struct op {
	struct workq_job job;          /* the queue links it */
	struct conn *conn;
	struct op *prev, *next;        /* the connection's outstanding ops */
	int32_t message_id;
	int tag;                       /* protocolOp of the request */
	unsigned number;               /* op=N in the log */
	bool running;
	bool abandoned;                /* queued: never answered; running: stop early */
	struct timespec queued_at;
	uint8_t *pdu;
	size_t pdu_len, pdu_cap;
};

/* Arena bytes a worker may use for one operation. */
#define OPS_ARENA_MAX (64u * 1024u * 1024u)

struct worker_context {
	struct server *server;
	unsigned index;
	struct arena arena;            /* reset per operation */
	struct ber_writer writer;      /* reset per operation */
};

struct op_context {
	struct server *server;
	struct conn *conn;
	struct op *op;
	const struct ldap_message *msg;
	struct arena *arena;
	struct ber_writer *out;
	struct timespec started_at;
	unsigned long n_entries;       /* search entries sent */
	const char *log_name;          /* "SRCH", "BIND", ... */
};

/* workq_config hooks: per-worker scratch. NULL when it cannot be made. */
void *ops_worker_start(void *server, unsigned index);
void ops_worker_stop(void *server, void *worker_context);

/* The job function of every queued op. */
void ops_run_job(struct workq_job *job, void *worker_context);

/* The response protocolOp for a request (searchResDone for search), or -1
 * for requests without one (abandon, unbind) and for non-requests. */
int ops_response_tag(int request_tag);

/*
 * Append the operation's final result (of its response type) to ctx->out,
 * log RESULT, and send everything encoded so far. matched/diagnostic may be
 * NULL. Errors are logged; the op is over either way.
 */
void op_send_result(struct op_context *ctx, int code, const char *matched,
		    const char *diagnostic);
/* ExtendedResponse variant; name/value may be NULL. */
void op_send_extended(struct op_context *ctx, int code, const char *diagnostic,
		      const char *name, const struct ber_view *value);

/*
 * A printable, quote-safe copy of v for log lines (non-printables and '"'
 * as \XX), from the arena; "" if the arena is exhausted.
 */
const char *op_log_string(struct op_context *ctx, struct ber_view v);

/* --- handlers (one file each) --- */
void op_bind(struct op_context *ctx);
void op_search(struct op_context *ctx);
void op_extended(struct op_context *ctx);
/* add, delete, modify, moddn, compare until the backend is wired in. */
void op_without_backend(struct op_context *ctx);

#endif
