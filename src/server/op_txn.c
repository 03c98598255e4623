/*
 * op_txn.c — LDAP Transactions (RFC 5805), answered as slapd 2.5 answers
 * them: Start Transaction opens the connection's one transaction (an
 * authenticated one only); each update carrying the Transaction
 * Specification control is checked as far as it can be alone (controls,
 * DN, database, replica, bounds) and queued, and answered success at once
 * (§3.3); End Transaction aborts (success, "transaction aborted") or
 * commits: every queued update runs through its normal handler, access
 * control and the overlay chain included, inside one group of the
 * database (database.h: one LMDB write transaction), in the order they
 * came; the first that fails ends the group with nothing written, and the
 * End answers that update's result with its message ID in txnEndRes.
 * Response controls of the updates (Pre-/Post-Read) come back in
 * txnEndRes.updatesControls.
 *
 * An End that arrives while an update sent before it is still outstanding
 * (updates are queued by the workers that run them, so it may be one of
 * the transaction's) waits for it, parked on the connection like a
 * persistent search, and runs again once the last of them is done; a
 * client may thus send the updates and the End in one go (slapd 2.5.13
 * dies on that).
 *
 * Caveats:
 *  - While the commit runs, the database's other writers wait for it
 *    (bounded by TXN_MAX_UPDATES and TXN_MAX_BYTES, txn.h).
 */
#include <string.h>

#include "config.h"
#include "conn.h"
#include "ldap_txn.h"
#include "log.h"
#include "lumen_error.h"
#include "ops.h"
#include "server.h"
#include "txn.h"

void op_txn_start(struct op_context *ctx, const struct ldap_extended_request *req)
{
	struct ber_view requester;
	uint8_t id[TXN_ID_SIZE];
	if (req->has_value) {
		op_send_extended(ctx, LDAP_PROTOCOL_ERROR, "no request data expected", NULL, NULL);
		return;
	}
	if (conn_identity(ctx->conn, ctx->arena, &requester) != LUMEN_OK) {
		op_send_extended(ctx, LDAP_OTHER, "out of memory", NULL, NULL);
		return;
	}
	if (requester.len == 0) {
		op_send_extended(ctx, LDAP_STRONGER_AUTH_REQUIRED,
				 "modifications require authentication", NULL, NULL);
		return;
	}
	int rc = conn_txn_start(ctx->conn, id);
	if (rc == LUMEN_EBUSY) {
		op_send_extended(ctx, LDAP_BUSY, "a transaction is already open on this connection",
				 NULL, NULL);
		return;
	}
	if (rc != LUMEN_OK) {
		op_send_extended(ctx, LDAP_OTHER, "out of memory", NULL, NULL);
		return;
	}
	struct ber_view value = { arena_memdup(ctx->arena, id, sizeof(id)), sizeof(id) };
	if (value.ptr == NULL) {
		op_send_extended(ctx, LDAP_OTHER, "out of memory", NULL, NULL);
		return;
	}
	op_send_extended(ctx, LDAP_SUCCESS, NULL, NULL, &value);
}

void op_txn_enqueue(struct op_context *ctx, const struct op_target *t)
{
	if (!database_has_groups(t->db->database)) {
		op_send_result(ctx, LDAP_UNWILLING_TO_PERFORM, NULL,
			       "this database does not support transactions");
		return;
	}
	int rc = conn_txn_add(ctx->conn, t->controls.txn_id, t->db, ctx->op);
	switch (rc) {
	case LUMEN_OK:
		op_send_result(ctx, LDAP_SUCCESS, NULL, NULL);
		break;
	case LUMEN_ENOTFOUND:
		op_send_result(ctx, LDAP_TXN_ID_INVALID, NULL, "invalid transaction identifier");
		break;
	case LUMEN_ELIMIT:
		op_send_result(ctx, LDAP_ADMIN_LIMIT_EXCEEDED, NULL,
			       "a transaction holds at most 256 updates and 1 MiB of requests");
		break;
	case LUMEN_EINVAL:
		op_send_result(ctx, LDAP_UNWILLING_TO_PERFORM, NULL,
			       "a transaction cannot span databases");
		break;
	default:
		op_send_result(ctx, LDAP_OTHER, NULL, "out of memory");
		break;
	}
}

/* The handlers an update in a transaction may be. */
static const struct {
	int tag;
	const char *log_name;
	void (*run)(struct op_context *ctx);
} update_handlers[] = {
	{ LDAP_OP_ADD_REQUEST, "ADD", op_add },
	{ LDAP_OP_DELETE_REQUEST, "DEL", op_delete },
	{ LDAP_OP_MODIFY_REQUEST, "MOD", op_modify },
	{ LDAP_OP_MODDN_REQUEST, "MODRDN", op_moddn },
};

/* Replay update u in group g; its answer lands in *cap. */
static void replay(struct op_context *ctx, struct database_group *g, const struct txn_update *u,
		   struct op_capture *cap)
{
	struct ldap_message msg;
	struct op member = { .conn = ctx->conn, .message_id = u->message_id, .tag = u->tag,
			     .number = u->number, .pdu = (uint8_t *)u->pdu,
			     .pdu_len = u->pdu_len };
	*cap = (struct op_capture){ 0 };
	if (ldap_message_decode(u->pdu, u->pdu_len, ctx->arena, &ctx->server->limits, &msg,
				NULL) != LUMEN_OK) {
		*cap = (struct op_capture){ .answered = true, .code = LDAP_OTHER,
					    .diagnostic = "cannot decode a queued update" };
		return;
	}
	for (size_t i = 0; i < sizeof(update_handlers) / sizeof(update_handlers[0]); i++) {
		if (update_handlers[i].tag != u->tag)
			continue;
		struct op_context mctx = *ctx;
		mctx.op = &member;
		mctx.msg = &msg;
		mctx.log_name = update_handlers[i].log_name;
		mctx.capture = cap;
		mctx.txn_group = g;
		update_handlers[i].run(&mctx);
		break;
	}
	if (!cap->answered)        /* ended unanswered: the connection is going */
		*cap = (struct op_capture){ .answered = true, .code = LDAP_OTHER,
					    .diagnostic = "the update did not complete" };
}

/* What a commit came to: the failing update (or none) and the controls. */
struct commit_outcome {
	int code;
	const char *diagnostic;
	bool has_failed;
	int32_t failed_message_id;
	struct ldap_txn_update_controls *updates;
	size_t n_updates;
};

static void run_updates(struct op_context *ctx, struct database_group *g,
			const struct txn_queue *q, struct commit_outcome *out)
{
	out->updates = arena_calloc(ctx->arena, q->n_updates, sizeof(*out->updates));
	if (out->updates == NULL) {
		*out = (struct commit_outcome){ .code = LDAP_OTHER, .diagnostic = "out of memory" };
		return;
	}
	for (const struct txn_update *u = q->first; u != NULL; u = u->next) {
		struct op_capture cap;
		replay(ctx, g, u, &cap);
		if (cap.code != LDAP_SUCCESS) {
			out->code = cap.code;
			out->diagnostic = cap.diagnostic;
			out->has_failed = true;
			out->failed_message_id = u->message_id;
			out->n_updates = 0;
			return;
		}
		if (cap.n_controls > 0)
			out->updates[out->n_updates++] = (struct ldap_txn_update_controls){
				u->message_id, cap.controls, cap.n_controls };
	}
}

static void commit(struct op_context *ctx, const struct txn_queue *q, struct commit_outcome *out)
{
	struct database *db = q->db->database;
	struct database_group *g = NULL;
	struct backend_op waits = { 0 };   /* only its hook: the group's own waits */
	op_wait_off_worker(ctx, &waits);
	*out = (struct commit_outcome){ .code = LDAP_SUCCESS };
	int rc = database_group_begin(db, &waits, &g);
	if (rc != LUMEN_OK) {
		out->code = rc == LUMEN_EBUSY ? LDAP_BUSY : LDAP_OTHER;
		out->diagnostic = "cannot begin the transaction";
		return;
	}
	run_updates(ctx, g, q, out);
	rc = database_group_end(db, &waits, g, out->code == LDAP_SUCCESS);
	if (rc != LUMEN_OK && out->code == LDAP_SUCCESS) {
		log_printf(0, "conn=%llu op=%u TXN commit failed: %s",
			   (unsigned long long)conn_number(ctx->conn), ctx->op->number,
			   lumen_strerror(rc));
		*out = (struct commit_outcome){ .code = rc == LUMEN_EFULL ? LDAP_UNWILLING_TO_PERFORM
									  : LDAP_OTHER,
						.diagnostic = rc == LUMEN_EFULL
								      ? "database full: raise maxsize"
								      : "cannot commit the transaction" };
	}
}

/* The End's answer: txnEndRes only when it has something to say. */
static void answer_end(struct op_context *ctx, const struct commit_outcome *out)
{
	if (!out->has_failed && out->n_updates == 0) {
		op_send_extended(ctx, out->code, out->diagnostic, NULL, NULL);
		return;
	}
	struct ber_writer *w = ctx->scratch;
	ber_writer_reset(w);
	ldap_txn_end_response_encode(w, out->has_failed, out->failed_message_id, out->updates,
				     out->n_updates);
	struct ber_view value = { NULL, w->len };
	if (ber_writer_error(w) == LUMEN_OK)
		value.ptr = arena_memdup(ctx->arena, w->buf, w->len);
	if (value.ptr == NULL) {
		op_send_extended(ctx, LDAP_OTHER, "out of memory", NULL, NULL);
		return;
	}
	op_send_extended(ctx, out->code, out->diagnostic, NULL, &value);
}

void op_txn_end(struct op_context *ctx, const struct ldap_extended_request *req)
{
	struct ldap_txn_end_request end;
	const char *why = NULL;
	if (!req->has_value) {
		op_send_extended(ctx, LDAP_PROTOCOL_ERROR, "request data expected", NULL, NULL);
		return;
	}
	if (ldap_txn_end_decode(req->value, &end, &why) != LUMEN_OK) {
		op_send_extended(ctx, LDAP_PROTOCOL_ERROR, why, NULL, NULL);
		return;
	}
	struct txn_queue *q = NULL;
	int rc = conn_txn_take(ctx->conn, end.identifier, ctx->op, &q);
	if (rc == LUMEN_EBUSY) {
		ctx->paused = ctx->waiting = true;   /* again once they are done */
		return;
	}
	if (rc != LUMEN_OK) {
		op_send_extended(ctx, LDAP_TXN_ID_INVALID, "invalid transaction identifier", NULL,
				 NULL);
		return;
	}
	log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u TXN %s updates=%zu",
		   (unsigned long long)conn_number(ctx->conn), ctx->op->number,
		   end.commit ? "COMMIT" : "ABORT", q->n_updates);
	if (!end.commit) {
		txn_queue_free(q);
		op_send_extended(ctx, LDAP_SUCCESS, "transaction aborted", NULL, NULL);
		return;
	}
	/* From here on a Cancel is too late; a cancelled End commits nothing. */
	if (!op_commit(ctx)) {
		txn_queue_free(q);
		return;
	}
	struct commit_outcome out = { .code = LDAP_SUCCESS };
	if (q->n_updates > 0)
		commit(ctx, q, &out);
	answer_end(ctx, &out);
	txn_queue_free(q);
}
