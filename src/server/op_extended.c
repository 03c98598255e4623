/*
 * op_extended.c — Extended operations, dispatched by OID.
 */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "conn.h"
#include "log.h"
#include "lumen_error.h"
#include "ops.h"
#include "server.h"

struct extended_handler {
	const char *oid;
	const char *log_name;
	void (*run)(struct op_context *ctx, const struct ldap_extended_request *req);
};

/* The DN WhoAmI names: the proxied identity (normalized, as slapd
 * answers it) or the connection's authorization DN. */
static int who_am_i_dn(struct op_context *ctx, const struct op_target *t, struct ber_view *dn)
{
	if (t->proxied) {
		*dn = t->proxied_ndn;
		return LUMEN_OK;
	}
	return conn_authz_dn(ctx->conn, ctx->arena, dn);
}

/* RFC 4532: the authorization identity, "" when anonymous. */
static void who_am_i(struct op_context *ctx, const struct ldap_extended_request *req)
{
	struct ber_view ndn;
	struct op_target t;
	if (req->has_value) {
		op_send_extended(ctx, LDAP_PROTOCOL_ERROR, "WhoAmI takes no request value",
				 NULL, NULL);
		return;
	}
	if (!op_parse_controls(ctx, &t))
		return;
	if (who_am_i_dn(ctx, &t, &ndn) != LUMEN_OK) {
		op_send_extended(ctx, LDAP_OTHER, "out of memory", NULL, NULL);
		return;
	}
	struct ber_view authz = { (const uint8_t *)"", 0 };
	if (ndn.len > 0) {
		uint8_t *buf = arena_alloc(ctx->arena, ndn.len + 3);
		if (buf == NULL) {
			op_send_extended(ctx, LDAP_OTHER, "out of memory", NULL, NULL);
			return;
		}
		memcpy(buf, "dn:", 3);
		memcpy(buf + 3, ndn.ptr, ndn.len);
		authz = (struct ber_view){ buf, ndn.len + 3 };
	}
	op_send_extended(ctx, LDAP_SUCCESS, NULL, NULL, &authz);
}

/*
 * StartTLS (RFC 4511 §4.14): answered in the clear, then the I/O thread
 * runs the handshake (conn_start_tls). Refused with operationsError while
 * other operations are outstanding, when TLS is already on, and on
 * ldaps://; unavailable (protocolError) when TLS is not configured; busy
 * when a TLS session would take the connections' memory past
 * conn_total_memory (the client may retry once others close).
 */
void op_starttls(struct op_context *ctx, const struct ldap_extended_request *req)
{
	if (req->has_value) {
		op_send_extended(ctx, LDAP_PROTOCOL_ERROR, "StartTLS takes no request value",
				 NULL, NULL);
		return;
	}
	if (ctx->server->tls == NULL) {
		op_send_extended(ctx, LDAP_PROTOCOL_ERROR, "TLS is not configured", NULL, NULL);
		return;
	}
	ldap_encode_extended_response(ctx->out, ctx->op->message_id, LDAP_SUCCESS, NULL,
				      LDAP_OID_STARTTLS, NULL);
	int rc = ber_writer_error(ctx->out);
	if (rc == LUMEN_OK)
		rc = conn_start_tls(ctx->conn, ctx->op, ctx->out->buf, ctx->out->len);
	if (rc == LUMEN_OK) {
		op_finish_sent(ctx, LDAP_SUCCESS, NULL);
		return;
	}
	ber_writer_reset(ctx->out);
	if (rc == LUMEN_ELIMIT) {
		op_send_extended(ctx, LDAP_BUSY, "no memory room for a TLS session under "
				 "conn_total_memory", NULL, NULL);
		return;
	}
	const char *why = rc == LUMEN_EEXIST ? "TLS is already started"
			  : rc == LUMEN_EBUSY ? "other operations are outstanding"
					      : "cannot start TLS";
	op_send_extended(ctx, LDAP_OPERATIONS_ERROR, why, NULL, NULL);
}

/* Each supported OID is a row; advertise it in rootdse.c as well. Cancel
 * (RFC 3909) is answered on the I/O thread (conn_cancel.c), not here. */
static const struct extended_handler extended_handlers[] = {
	{ LDAP_OID_WHOAMI, "WHOAMI", who_am_i },
	{ LDAP_OID_PASSWORD_MODIFY, "PASSMOD", op_passwd },
	{ LDAP_OID_STARTTLS, "STARTTLS", op_starttls },
	{ LDAP_OID_TXN_START, "TXN START", op_txn_start },
	{ LDAP_OID_TXN_END, "TXN END", op_txn_end },
};

void op_extended(struct op_context *ctx)
{
	const struct ldap_extended_request *req = &ctx->msg->u.extended;
	const char *oid = op_log_string(ctx, req->oid);
	log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u EXT oid=%s",
		   (unsigned long long)conn_number(ctx->conn), ctx->op->number, oid);
	for (size_t i = 0; i < sizeof(extended_handlers) / sizeof(extended_handlers[0]); i++) {
		if (ber_view_eq_str(req->oid, extended_handlers[i].oid)) {
			log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u %s",
				   (unsigned long long)conn_number(ctx->conn), ctx->op->number,
				   extended_handlers[i].log_name);
			extended_handlers[i].run(ctx, req);
			return;
		}
	}
	char diagnostic[160];
	snprintf(diagnostic, sizeof(diagnostic), "unsupported extended operation %.100s", oid);
	op_send_extended(ctx, LDAP_PROTOCOL_ERROR, diagnostic, NULL, NULL);
}
