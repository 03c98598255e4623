/*
 * op_bind.c — the Bind operation: anonymous, unauthenticated and simple
 * binds against the databases' rootdn/rootpw; SASL is refused for now.
 */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "conn.h"
#include "log.h"
#include "lumen_error.h"
#include "ops.h"
#include "password.h"
#include "server.h"

/* Checked when the DN is unknown, so that the answer costs the same work. */
static const char decoy_password[] = "{SSHA}eF6eKXnDYIQc+iK1nsyqemOkKJVzYWx0eXNh";

static const struct server_database *find_rootdn(const struct server *s, struct ber_view ndn)
{
	for (size_t i = 0; i < s->n_databases; i++) {
		const struct server_database *db = &s->databases[i];
		if (db->rootdn.ptr != NULL && db->rootdn.len == ndn.len &&
		    memcmp(db->rootdn.ptr, ndn.ptr, ndn.len) == 0)
			return db;
	}
	return NULL;
}

/* A decoy that looks like the real thing: the first configured rootpw. */
static const char *decoy_for(const struct server *s)
{
	for (size_t i = 0; i < s->n_databases; i++)
		if (s->databases[i].config->rootpw != NULL)
			return s->databases[i].config->rootpw;
	return decoy_password;
}

/* Simple bind with a DN and a password. */
static void simple_bind(struct op_context *ctx, const struct ldap_bind_request *req)
{
	struct ber_view ndn;
	if (server_normalize_dn(ctx->server, req->name, ctx->arena, &ndn) != LUMEN_OK) {
		op_send_result(ctx, LDAP_INVALID_DN_SYNTAX, NULL, "invalid DN");
		return;
	}
	const struct server_database *db = find_rootdn(ctx->server, ndn);
	const char *stored = db != NULL ? db->config->rootpw : NULL;
	bool match = false;
	/* Same work and the same answer whether or not the DN exists. */
	const char *checked = stored != NULL ? stored : decoy_for(ctx->server);
	int rc = password_check(checked, strlen(checked), req->password.ptr, req->password.len,
				&match);
	if (rc != LUMEN_OK && stored != NULL)
		log_printf(0, "conn=%llu op=%u rootpw of %s cannot be checked: %s",
			   (unsigned long long)ctx->conn->id, ctx->op->number, db->config->origin,
			   lumen_strerror(rc));
	if (stored == NULL || !match) {
		op_send_result(ctx, LDAP_INVALID_CREDENTIALS, NULL, NULL);
		return;
	}
	if (conn_set_identity(ctx->conn, (const char *)ndn.ptr, ndn.len, true) != LUMEN_OK) {
		op_send_result(ctx, LDAP_OTHER, NULL, "out of memory");
		return;
	}
	log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u BIND dn=\"%s\" mech=SIMPLE ssf=0",
		   (unsigned long long)ctx->conn->id, ctx->op->number,
		   op_log_string(ctx, ndn));
	op_send_result(ctx, LDAP_SUCCESS, NULL, NULL);
}

void op_bind(struct op_context *ctx)
{
	const struct ldap_bind_request *req = &ctx->msg->u.bind;
	bool sasl = req->auth == LDAP_AUTH_SASL;
	log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u BIND dn=\"%s\" method=%d",
		   (unsigned long long)ctx->conn->id, ctx->op->number,
		   op_log_string(ctx, req->name), sasl ? 163 : 128);
	/* Whatever the outcome, the connection is anonymous until it succeeds. */
	conn_set_identity(ctx->conn, NULL, 0, false);

	if (req->version != 3) {
		op_send_result(ctx, LDAP_PROTOCOL_ERROR, NULL,
			       "requested protocol version not supported");
	} else if (sasl) {
		op_send_result(ctx, LDAP_AUTH_METHOD_NOT_SUPPORTED, NULL,
			       "SASL mechanism not supported");
	} else if (req->name.len == 0 && req->password.len == 0) {
		op_send_result(ctx, LDAP_SUCCESS, NULL, NULL);
	} else if (req->name.len == 0) {
		op_send_result(ctx, LDAP_INAPPROPRIATE_AUTHENTICATION, NULL,
			       "anonymous bind with a password disallowed");
	} else if (req->password.len == 0) {
		if (ctx->server->config->allow_bind_anon_dn)
			op_send_result(ctx, LDAP_SUCCESS, NULL, NULL);
		else
			op_send_result(ctx, LDAP_UNWILLING_TO_PERFORM, NULL,
				       "unauthenticated bind (DN with no password) disallowed");
	} else {
		simple_bind(ctx, req);
	}
}
