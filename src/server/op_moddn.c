/*
 * op_moddn.c — the Modify DN operation (RFC 4511 §4.9): rename and/or
 * move an entry with its subtree inside one database.
 */
#include "config.h"
#include "conn.h"
#include "log.h"
#include "lumen_error.h"
#include "ops.h"
#include "server.h"

void op_moddn(struct op_context *ctx)
{
	const struct ldap_moddn_request *req = &ctx->msg->u.moddn;
	struct op_target t;
	struct ber_view superior_ndn = { (const uint8_t *)"", 0 };
	unsigned long long conn_id = (unsigned long long)ctx->conn->id;
	log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u MODRDN dn=\"%s\"", conn_id, ctx->op->number,
		   op_log_string(ctx, req->entry));
	if (!op_target_prepare(ctx, req->entry, &t))
		return;
	/* The backend parses the new RDN; the superior is ours to normalize. */
	if (req->has_new_superior &&
	    server_normalize_dn(ctx->server, req->new_superior, ctx->arena, &superior_ndn) !=
		    LUMEN_OK) {
		op_send_result(ctx, LDAP_INVALID_DN_SYNTAX, NULL, "invalid new superior DN");
		return;
	}
	int rc = backend_modrdn(t.db->backend, &t.bop, t.ndn, req->new_rdn, req->delete_old_rdn,
				req->has_new_superior, superior_ndn);
	op_target_answer(ctx, &t, rc);
}
