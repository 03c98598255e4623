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
 * Operations on directory entries (search, compare, add, delete, modify,
 * modify DN) share op_target_prepare: parse the controls (controls.h),
 * normalize the target DN, find its database, and fill the struct
 * backend_op (requester, rootdn, limits, abandon flag, controls); then
 * call the backend and answer with op_target_answer, which sends the
 * backend's result code, diagnostic and matchedDN plus any Pre-/Post-Read
 * response control. A search streams its entries: op_flush hands what is
 * encoded so far to the connection, so a huge result never sits in memory
 * whole. A worker never waits on a client: when the connection's unsent
 * output reaches CONN_MAX_UNSENT the search pauses (backend.h: its read
 * transaction released, its position kept in op->resume), the handler
 * sets ctx->paused, and ops_run_job parks the op on its connection
 * (conn_park_op) instead of ending it. Once the client has read enough,
 * the I/O thread queues the op again and a worker runs it anew from its
 * PDU: the search continues where it stopped. A search that would start
 * while the output is full is parked before it starts.
 *
 * Run to completion (inline_ops.h): an I/O thread runs short reads itself
 * with ops_run_inline and its own context (ops_context_create), through
 * the same handlers. A handler that finds its request too costly for an
 * I/O thread calls op_hand_off before it has sent or changed anything; the
 * op then goes to the work queue and a worker runs it anew from its PDU
 * (op->handed_off set, so its request is not logged twice). A search
 * started there gets a budget of candidates (op_search_budget) and pauses
 * when it would exceed it; a worker continues it like any paused search.
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

#include "access_glue.h"
#include "arena.h"
#include "database.h"
#include "ber.h"
#include "controls.h"
#include "ldap_message.h"
#include "stats.h"
#include "workq.h"

struct conn;
struct server;
struct server_database;

struct op {
	struct workq_job job;          /* the queue links it */
	struct conn *conn;
	struct op *prev, *next;        /* the connection's outstanding ops */
	int32_t message_id;
	int tag;                       /* protocolOp of the request */
	unsigned number;               /* op=N in the log */
	bool running;
	bool abandoned;                /* queued: never answered; running: stop early */
	bool parked;                   /* paused until its client reads (conn_park_op) */
	bool answered;                 /* its final result went to the connection */
	bool committing;               /* a write past conn_op_commit: too late to cancel */
	/*
	 * Cancel (RFC 3909, conn_cancel.c): a Cancel request named this op
	 * (abandoned is set too); when it ends, it answers canceled and the
	 * Cancel (cancel_message_id, op=cancel_number in the log) success.
	 */
	bool cancel_requested;
	int32_t cancel_message_id;
	unsigned cancel_number;
	bool handed_off;               /* started on an I/O thread, runs anew on a worker */
	/*
	 * A persistent search (database.h, struct backend_persist): the
	 * database's handle, released when the op ends however it ends.
	 * waiting: parked until woken (conn_wake_op) rather than until its
	 * client reads; woken: a wake came while it ran or waited.
	 */
	struct backend_persist *persist;
	bool waiting;
	bool woken;
	/* A paused search: where it stands, and the entries it sent so far. */
	struct backend_search_resume resume;
	unsigned long resume_entries;
	struct op_timing resume_timing;   /* its stages so far */
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
	struct ber_writer scratch;     /* response control values */
	struct stats_thread *stats;    /* this worker's counters (NULL: not counted) */
};

/*
 * What an update replayed at a transaction's commit answered (op_txn.c):
 * op_send_result and its kin fill it instead of sending when
 * op_context.capture is set. diagnostic and controls live in the arena.
 */
struct op_capture {
	bool answered;
	int code;
	const char *diagnostic;
	struct ldap_control *controls;
	size_t n_controls;
};

struct op_context {
	struct server *server;
	struct conn *conn;
	struct op *op;
	const struct ldap_message *msg;
	struct arena *arena;
	struct ber_writer *out;
	struct ber_writer *scratch;    /* for values encoded apart from out */
	struct timespec started_at;
	unsigned long n_entries;       /* search entries sent */
	unsigned long n_references;    /* search result references sent */
	const char *log_name;          /* "SRCH", "BIND", ... */
	struct stats_thread *stats;    /* the worker's counters */
	struct op_timing timing;       /* stages since the op was queued */
	bool recorded;                 /* counted in the statistics already */
	bool paused;                   /* the handler paused (op->resume): park the op */
	bool waiting;                  /* paused until woken (a persistent search) */
	/* An update replayed at its transaction's commit: its answer goes to
	 * capture, its write into txn_group (both NULL otherwise). */
	struct op_capture *capture;
	struct database_group *txn_group;
	bool on_io_thread;             /* run to completion by an I/O thread */
	bool hand_off;                 /* op_hand_off: continue on a worker */
};

/*
 * Charge the time since the previous mark to stage (stats.h). Handlers
 * mark where their work changes kind; op_send_result marks the rest
 * (backend work as "entries", then "encode" and "send"), so a handler
 * that marks nothing still has stages that sum to its time.
 */
void op_mark(struct op_context *ctx, enum stats_stage stage);
/* Let a backend search mark its stages into ctx->timing (backend.h mark). */
void op_time_backend(struct op_context *ctx, struct backend_op *bop);
/*
 * Let a write step out of the workers' count while it waits for its
 * commit (backend_op.wait; workq_blocking_begin/end), so a spare
 * thread runs the next job and more writes share the commit's sync. Every
 * write the server makes for a client on a worker sets it; a no-op on an
 * I/O thread.
 */
void op_wait_off_worker(struct op_context *ctx, struct backend_op *bop);

/* workq_config hooks: per-worker scratch. NULL when it cannot be made. */
void *ops_worker_start(void *server, unsigned index);
void ops_worker_stop(void *server, void *worker_context);
/*
 * The same scratch for a thread that registered its counters itself (an
 * I/O thread: stats may be NULL). NULL when out of memory. Freed with
 * ops_worker_stop.
 */
struct worker_context *ops_context_create(struct server *server, unsigned index,
					  struct stats_thread *stats);

/* The job function of every queued op. */
void ops_run_job(struct workq_job *job, void *worker_context);
/*
 * An I/O thread runs op (linked on its connection, no lock held) with its
 * own context: to the end, or until it pauses (parked, then continued by a
 * worker) or hands itself off (queued for a worker). Counts which.
 */
void ops_run_inline(struct op *op, struct worker_context *io_context);
/*
 * Inside a handler, before anything was sent or changed: on an I/O thread,
 * mark the op to be run anew by a worker and return true (the handler
 * returns at once); on a worker, false (go on).
 */
bool op_hand_off(struct op_context *ctx);
/* Candidates a search may examine here: INLINE_SEARCH_BUDGET on an I/O
 * thread, 0 (no budget) on a worker. */
uint64_t op_search_budget(const struct op_context *ctx);

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
/*
 * A write is about to change its database (the call into it): true to go
 * on, after which it can no longer be cancelled; false when it was
 * abandoned or cancelled meanwhile: return without answering (a Cancel
 * gets its canceled result from the connection).
 */
bool op_commit(struct op_context *ctx);
/* op_send_result with response controls (controls may be NULL when n is 0). */
void op_send_result_controls(struct op_context *ctx, int code, const char *matched,
			     const char *diagnostic, const struct ldap_control *controls,
			     size_t n_controls);
/*
 * Hand everything encoded so far to the connection and empty ctx->out.
 * Never waits: the caller asks conn_output_full whether to pause.
 * LUMEN_OK; LUMEN_EIO when the client is gone or the op was abandoned
 * (stop producing output); the writer's error if encoding failed.
 */
int op_flush(struct op_context *ctx);
/* ExtendedResponse variant; name/value may be NULL. */
void op_send_extended(struct op_context *ctx, int code, const char *diagnostic,
		      const char *name, const struct ber_view *value);
/* op_send_extended with response controls (NULL when n is 0). */
void op_send_extended_controls(struct op_context *ctx, int code, const char *diagnostic,
			       const char *name, const struct ber_view *value,
			       const struct ldap_control *controls, size_t n_controls);
/*
 * For a handler that handed its final response to the connection itself
 * (StartTLS: conn_start_tls queues it ahead of the handshake): count, log
 * RESULT and time the operation as op_send_result does. Never fails.
 */
void op_finish_sent(struct op_context *ctx, int code, const char *diagnostic);
/* op_send_result for a referral (10) to urls[0..n). */
void op_send_referral(struct op_context *ctx, char *const *urls, size_t n);
/* op_send_referral with a matchedDN (NULL: none) and response controls. */
void op_send_referral_controls(struct op_context *ctx, const char *matched,
			       char *const *urls, size_t n,
			       const struct ldap_control *controls, size_t n_controls);

/*
 * A printable, quote-safe copy of v for log lines (non-printables and '"'
 * as \XX), from the arena; "" if the arena is exhausted.
 */
const char *op_log_string(struct op_context *ctx, struct ber_view v);

/* --- operations on an entry of a database (op_target.c) --- */

struct op_target {
	struct ber_view ndn;                 /* normalized target DN */
	const struct server_database *db;
	struct request_controls controls;
	struct backend_op bop;               /* ready for the backend call */
	struct ber_view next_cookie;         /* search: the paged-results answer */
	bool hide_matched;                   /* ACLs apply: never name a matchedDN */
	struct access_values assertion_access; /* bop.filter_access of non-searches */
	bool proxied;                        /* Proxied Authorization: runs as */
	struct ber_view proxied_ndn;         /* this identity (empty: anonymous) */
};

/*
 * Parse the request's controls into t->controls and decide a Proxied
 * Authorization control (proxy_authz.h: t->proxied, t->proxied_ndn, the
 * PROXYAUTHZ log line). On failure the result (protocolError,
 * unavailableCriticalExtension, authorizationDenied, other) was sent and
 * false is returned.
 */
bool op_parse_controls(struct op_context *ctx, struct op_target *t);
/*
 * After op_parse_controls: normalize dn, find its database and fill
 * t->bop. On failure the result was sent (invalidDNSyntax, noSuchObject
 * with an empty matchedDN outside every suffix, other) and false is
 * returned.
 */
bool op_target_resolve(struct op_context *ctx, struct ber_view dn, struct op_target *t);
/* The identity t's operation runs as: the proxied one, else the
 * connection's (normalized, arena copy). LUMEN_ENOMEM. */
int op_requester(struct op_context *ctx, const struct op_target *t, struct ber_view *ndn);
/* Both of the above, in that order. */
bool op_target_prepare(struct op_context *ctx, struct ber_view dn, struct op_target *t);
/*
 * RFC 6171 Don't Use Copy on a replica (a database with `syncrepl` lines
 * and not `multiprovider on`), answered as slapd does: a search gets a
 * referral to each `updateref` URL with its base and scope
 * (URL/base??scope), or unwillingToPerform without one; a compare
 * unwillingToPerform. dn: the request's DN as sent; scope: the search's,
 * or -1 for a compare. True when it answered.
 */
bool op_refuse_copy(struct op_context *ctx, const struct op_target *t, struct ber_view dn,
		    int scope);
/* op_target_prepare for a write: a read-only database (the server's own,
 * own_databases.h) answers unwillingToPerform before any access check, as
 * slapd does. */
bool op_target_prepare_write(struct op_context *ctx, struct ber_view dn, struct op_target *t);
/*
 * A replica (a database with `syncrepl` lines) is written only by its
 * consumers: anyone else's write is answered here with a referral to its
 * `updateref` URLs with the target DN dn appended as slapd does (URL/dn;
 * the URL alone for an empty dn), or unwillingToPerform without one (slapd's "shadow
 * context; no update referral"), the rootdn's too — unless the database is
 * `multiprovider on`, which takes every client's writes. True when it
 * answered.
 */
bool op_refuse_replica_write(struct op_context *ctx, const struct server_database *db,
			     struct ber_view dn);
/*
 * Send the backend's answer (rc: its return value, logged when not
 * LUMEN_OK) with the response controls asked for (Pre-/Post-Read from
 * bop, filtered by access control as a search result is: only attributes
 * the requester may read, and no control without `read` on the entry;
 * Paged Results with t->next_cookie), and free the read entries.
 */
void op_target_answer(struct op_context *ctx, struct op_target *t, int rc);
/*
 * A connection that bound with a password it must change (ppolicy's
 * pwdMustChange after a reset: t->bop.password_change_only) may do nothing
 * else on a database with `overlay ppolicy`, and is refused before any
 * access check, as OpenLDAP's ppolicy refuses it: insufficientAccessRights,
 * "Operations are restricted to bind/unbind/abandon/StartTLS/modify
 * password", and the Password Policy control's changeAfterReset when it
 * was asked for. password_change: the operation is a Modify of
 * userPassword (and operational attributes) only. False when it answered.
 */
bool op_target_unrestricted(struct op_context *ctx, const struct op_target *t,
			    bool password_change);
/* The effective limit of a request's value and a configured one (0 = none). */
long op_combine_limit(long requested, long configured);

/* --- access control and security around a target (op_target.c) --- */
struct access_op;
struct acl_target;
struct entry;
/* The access-control state of t's operation (access_glue.h); also decides
 * whether an error may name a matchedDN (t->hide_matched), and puts the
 * Assertion control under `search` access (t->bop.filter_access). a must
 * live until the backend call returns. */
void op_target_access(struct op_context *ctx, struct op_target *t, struct access_op *a);
/* Refuse an operation on e: insufficientAccessRights, or noSuchObject when
 * e is NULL or its existence may not be disclosed to the requester. */
void op_target_refuse(struct op_context *ctx, struct access_op *a, const struct entry *e);
/*
 * Inside a transaction (t->bop.group), access is decided on a snapshot
 * from before it: an entry the snapshot lacks may be one an earlier update
 * of the same transaction added or moved there, which no decision may
 * wave through as absent. Then insufficientAccessRights is sent and true
 * returned; outside a transaction false (absent means absent).
 */
bool op_target_refuse_unseen(struct op_context *ctx, const struct op_target *t);
/* Decide about t's target entry with allowed() (access_decide). True: go
 * on (allowed, or no such entry outside a transaction); false: the
 * refusal or error was sent. */
bool op_target_decide(struct op_context *ctx, struct op_target *t, struct access_op *a,
		      bool (*allowed)(struct acl_target *at, void *arg), void *arg);
/* A private copy of ndn from t's database (*out NULL: none). On failure
 * `other` was sent and false is returned. */
bool op_target_fetch(struct op_context *ctx, const struct op_target *t, struct ber_view ndn,
		     struct entry **out);
/* The connection's SSF is at least `needed`; else confidentialityRequired
 * was sent (what names the requirement) and false is returned. */
bool op_require_ssf(struct op_context *ctx, unsigned needed, const char *what);

/* --- handlers (one file each) --- */
void op_bind(struct op_context *ctx);
void op_search(struct op_context *ctx);
void op_compare(struct op_context *ctx);
void op_add(struct op_context *ctx);
void op_delete(struct op_context *ctx);
void op_modify(struct op_context *ctx);
void op_moddn(struct op_context *ctx);
void op_extended(struct op_context *ctx);
/* SASL EXTERNAL (sasl_external.c), called by op_bind. */
void sasl_external_bind(struct op_context *ctx, const struct ldap_bind_request *req);
/* Extended operations with a file of their own (op_extended.c's table). */
void op_passwd(struct op_context *ctx, const struct ldap_extended_request *req);
void op_starttls(struct op_context *ctx, const struct ldap_extended_request *req);
/* RFC 5805 (op_txn.c): Start and End Transaction, and an update with the
 * Transaction Specification control, queued and answered at once
 * (op_target_prepare_write calls it; the result was sent). */
void op_txn_start(struct op_context *ctx, const struct ldap_extended_request *req);
void op_txn_end(struct op_context *ctx, const struct ldap_extended_request *req);
void op_txn_enqueue(struct op_context *ctx, const struct op_target *t);

#endif
