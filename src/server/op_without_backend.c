/*
 * op_without_backend.c — add, delete, modify, modify DN and compare until
 * the backend exists: noSuchObject outside every suffix, unwillingToPerform
 * inside one.
 */
#include <stdio.h>

#include "config.h"
#include "conn.h"
#include "log.h"
#include "lumen_error.h"
#include "ops.h"
#include "server.h"

/* The DN an update or compare request names. */
static struct ber_view target_dn(const struct ldap_message *msg)
{
	switch (msg->op) {
	case LDAP_OP_ADD_REQUEST:
		return msg->u.add.entry;
	case LDAP_OP_DELETE_REQUEST:
		return msg->u.delete_dn;
	case LDAP_OP_MODIFY_REQUEST:
		return msg->u.modify.object;
	case LDAP_OP_MODDN_REQUEST:
		return msg->u.moddn.entry;
	case LDAP_OP_COMPARE_REQUEST:
		return msg->u.compare.entry;
	default:
		return (struct ber_view){ (const uint8_t *)"", 0 };
	}
}

void op_without_backend(struct op_context *ctx)
{
	struct ber_view dn = target_dn(ctx->msg);
	log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u %s dn=\"%s\"",
		   (unsigned long long)ctx->conn->id, ctx->op->number, ctx->log_name,
		   op_log_string(ctx, dn));
	struct ber_view ndn;
	if (server_normalize_dn(ctx->server, dn, ctx->arena, &ndn) != LUMEN_OK) {
		op_send_result(ctx, LDAP_INVALID_DN_SYNTAX, NULL, "invalid DN");
		return;
	}
	if (ndn.len == 0 || server_find_database(ctx->server, ndn) == NULL) {
		op_send_result(ctx, LDAP_NO_SUCH_OBJECT, NULL, NULL);
		return;
	}
	op_send_result(ctx, LDAP_UNWILLING_TO_PERFORM, NULL, "no backend for this operation yet");
}
