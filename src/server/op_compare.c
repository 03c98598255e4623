/*
 * op_compare.c — the Compare operation (RFC 4511 §4.10) on a database
 * entry; the backend answers compareTrue/compareFalse or the error.
 */
#include "config.h"
#include "conn.h"
#include "log.h"
#include "ops.h"
#include "server.h"

void op_compare(struct op_context *ctx)
{
	const struct ldap_compare_request *req = &ctx->msg->u.compare;
	struct op_target t;
	unsigned long long conn_id = (unsigned long long)ctx->conn->id;
	log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u CMP dn=\"%s\" attr=\"%s\"", conn_id,
		   ctx->op->number, op_log_string(ctx, req->entry), op_log_string(ctx, req->attr));
	if (!op_target_prepare(ctx, req->entry, &t))
		return;
	int rc = backend_compare(t.db->backend, &t.bop, t.ndn, req->attr, req->value);
	op_target_answer(ctx, &t, rc);
}
