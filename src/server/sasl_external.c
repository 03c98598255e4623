/*
 * sasl_external.c — SASL EXTERNAL binds (RFC 4422 appendix A): the
 * identity the transport already proved, as OpenLDAP derives it. On
 * ldapi:// it is the peer's Unix credentials (SO_PEERCRED):
 * "gidNumber=G+uidNumber=U,cn=peercred,cn=external,cn=auth"; over TLS
 * with a verified client certificate it is the certificate's subject DN.
 * `authz-regexp` maps it to a directory DN (access_glue.h).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "access_glue.h"
#include "config.h"
#include "conn.h"
#include "log.h"
#include "lumen_error.h"
#include "ops.h"
#include "server.h"

/* The authentication identity of the connection; false when it has none. */
static bool external_identity(const struct conn_security *sec, char *out, size_t outlen)
{
	if (sec->is_local && sec->has_peer_cred) {
		snprintf(out, outlen, "gidNumber=%u+uidNumber=%u,cn=peercred,cn=external,cn=auth",
			 (unsigned)sec->gid, (unsigned)sec->uid);
		return true;
	}
	if (sec->tls && sec->tls_subject[0] != '\0') {
		snprintf(out, outlen, "%s", sec->tls_subject);
		return true;
	}
	return false;
}

/* An authzid other than the identity itself ("dn:DN" or "") is proxying. */
static bool authzid_acceptable(const struct ldap_bind_request *req, struct ber_view dn)
{
	if (!req->has_credentials || req->credentials.len == 0)
		return true;
	struct ber_view c = req->credentials;
	return c.len == dn.len + 3 && memcmp(c.ptr, "dn:", 3) == 0 &&
	       strncasecmp((const char *)c.ptr + 3, (const char *)dn.ptr, dn.len) == 0;
}

void sasl_external_bind(struct op_context *ctx, const struct ldap_bind_request *req)
{
	struct conn_security sec;
	char identity[512];
	struct ber_view dn, ndn;
	conn_get_security(ctx->conn, &sec);
	if (!external_identity(&sec, identity, sizeof(identity))) {
		op_send_result(ctx, LDAP_INAPPROPRIATE_AUTHENTICATION, NULL,
			       "SASL EXTERNAL needs an ldapi:// connection or a TLS client "
			       "certificate");
		return;
	}
	int rc = access_authz_map(ctx->server, identity, ctx->arena, &dn, &ndn);
	if (rc != LUMEN_OK) {
		log_printf(0, "conn=%llu op=%u authz-regexp maps \"%s\" to no valid DN: %s",
			   (unsigned long long)conn_number(ctx->conn), ctx->op->number, identity,
			   lumen_strerror(rc));
		op_send_result(ctx, LDAP_INVALID_CREDENTIALS, NULL, NULL);
		return;
	}
	if (!authzid_acceptable(req, dn)) {
		op_send_result(ctx, LDAP_INSUFFICIENT_ACCESS_RIGHTS, NULL,
			       "proxy authorization is not supported");
		return;
	}
	if (conn_set_identity(ctx->conn, ndn, dn, true) != LUMEN_OK) {
		op_send_result(ctx, LDAP_OTHER, NULL, "out of memory");
		return;
	}
	log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u BIND authcid=\"%s\" authzid=\"%s\"",
		   (unsigned long long)conn_number(ctx->conn), ctx->op->number, identity,
		   op_log_string(ctx, dn));
	log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u BIND dn=\"%s\" mech=EXTERNAL ssf=%u",
		   (unsigned long long)conn_number(ctx->conn), ctx->op->number, op_log_string(ctx, ndn),
		   sec.ssf);
	op_send_result(ctx, LDAP_SUCCESS, NULL, NULL);
}
