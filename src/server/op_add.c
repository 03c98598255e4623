/*
 * op_add.c — the Add operation (RFC 4511 §4.7): the request's DN and
 * attribute list go to the backend, which builds and schema-checks the
 * entry; Post-Read is answered from the stored entry.
 */
#include "config.h"
#include "conn.h"
#include "log.h"
#include "ops.h"
#include "server.h"

void op_add(struct op_context *ctx)
{
	const struct ldap_add_request *req = &ctx->msg->u.add;
	struct op_target t;
	log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u ADD dn=\"%s\"",
		   (unsigned long long)ctx->conn->id, ctx->op->number,
		   op_log_string(ctx, req->entry));
	if (!op_target_prepare(ctx, req->entry, &t))
		return;
	int rc = backend_add(t.db->backend, &t.bop, req->entry, t.ndn, req->attributes,
			     req->n_attributes);
	op_target_answer(ctx, &t, rc);
}
