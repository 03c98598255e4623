/*
 * op_modify.c — the Modify operation (RFC 4511 §4.6, increment RFC 4525):
 * the backend applies every change or none. Access control: `write` on
 * the type of every change (acl.h).
 */
#include <stdio.h>

#include "access_glue.h"
#include "access_write.h"
#include "config.h"
#include "conn.h"
#include "log.h"
#include "ops.h"
#include "server.h"
#include "workq.h"

/* slapd's second line: the attribute of every change, in order. */
static void log_changes(struct op_context *ctx, const struct ldap_modify_request *req)
{
	char line[LOG_LINE_MAX];
	size_t used = 0;
	line[0] = '\0';
	for (size_t i = 0; i < req->n_changes && used + 2 < sizeof(line); i++) {
		int n = snprintf(line + used, sizeof(line) - used, "%s%s", i ? " " : "",
				 op_log_string(ctx, req->changes[i].modification.type));
		if (n < 0)
			break;
		used += (size_t)n;
	}
	log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u MOD attr=%s",
		   (unsigned long long)conn_number(ctx->conn), ctx->op->number, line);
}

/* The rights of a modify, decided on the entry as it is. */
struct modify_rights {
	const struct ldap_modify_request *req;
	struct access_op *a;
};

static bool may_modify(struct acl_target *t, void *arg)
{
	const struct modify_rights *m = arg;
	return acl_may_modify(&m->a->policy, &m->a->subject, t->entry, m->req->changes,
			      m->req->n_changes);
}

/*
 * Does the Modify change nothing a user sees but userPassword? (What a
 * connection that must change its password may do, op_target_unrestricted;
 * OpenLDAP's test.)
 */
static bool password_only(struct op_context *ctx, const struct ldap_modify_request *req)
{
	const struct schema *schema = ctx->server->config->schema;
	const struct attribute_type *password = schema_attribute_type(schema, "userPassword", 12);
	for (size_t i = 0; i < req->n_changes; i++) {
		struct ber_view type = req->changes[i].modification.type;
		struct attribute_description ad;
		if (attribute_description_parse(schema, (const char *)type.ptr, type.len, &ad) !=
			    LUMEN_OK ||
		    (ad.type != password && !attribute_type_is_operational(ad.type)))
			return false;
	}
	return true;
}

void op_modify(struct op_context *ctx)
{
	const struct ldap_modify_request *req = &ctx->msg->u.modify;
	struct op_target t;
	if (log_enabled(LOG_LEVEL_STATS)) {
		log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u MOD dn=\"%s\"",
			   (unsigned long long)conn_number(ctx->conn), ctx->op->number,
			   op_log_string(ctx, req->object));
		log_changes(ctx, req);
	}
	if (!op_target_prepare_write(ctx, req->object, &t) ||
	    !op_target_unrestricted(ctx, &t, password_only(ctx, req)))
		return;
	struct access_op a;
	op_target_access(ctx, &t, &a);
	struct modify_rights rights = { req, &a };
	if (!t.bop.is_root && !op_target_decide(ctx, &t, &a, may_modify, &rights))
		return;
	if (!op_commit(ctx))
		return;
	struct access_write again;
	access_write_modify(&again, &a, t.db, req->changes, req->n_changes, &t.bop);
	int rc = database_modify(t.db->database, &t.bop, t.ndn, req->changes, req->n_changes);
	if (t.bop.password_change_done)   /* a password policy's must-change is met */
		conn_set_password_change_only(ctx->conn, false);
	op_target_answer(ctx, &t, rc);
}
