/*
 * op_delete.c — the Delete operation (RFC 4511 §4.8) of a leaf entry;
 * Pre-Read is answered from the entry as it was.
 */
#include "config.h"
#include "conn.h"
#include "log.h"
#include "ops.h"
#include "server.h"

void op_delete(struct op_context *ctx)
{
	struct ber_view dn = ctx->msg->u.delete_dn;
	struct op_target t;
	log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u DEL dn=\"%s\"",
		   (unsigned long long)ctx->conn->id, ctx->op->number, op_log_string(ctx, dn));
	if (!op_target_prepare(ctx, dn, &t))
		return;
	int rc = backend_delete(t.db->backend, &t.bop, t.ndn);
	op_target_answer(ctx, &t, rc);
}
