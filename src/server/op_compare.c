/*
 * op_compare.c — the Compare operation (RFC 4511 §4.10) on a database
 * entry; the backend answers compareTrue/compareFalse or the error.
 * Access control: `compare` on the asserted type (acl.h), then, in the
 * backend, on each subtype whose values are compared (access_values).
 */
#include "access_glue.h"
#include "config.h"
#include "conn.h"
#include "log.h"
#include "lumen_error.h"
#include "ops.h"
#include "server.h"

static bool may_compare(struct acl_target *t, void *arg)
{
	return acl_may_compare(t, arg);
}

void op_compare(struct op_context *ctx)
{
	const struct ldap_compare_request *req = &ctx->msg->u.compare;
	struct op_target t;
	struct access_op a;
	unsigned long long conn_id = (unsigned long long)conn_number(ctx->conn);
	log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u CMP dn=\"%s\" attr=\"%s\"", conn_id,
		   ctx->op->number, op_log_string(ctx, req->entry), op_log_string(ctx, req->attr));
	if (!op_target_prepare(ctx, req->entry, &t) || !op_target_unrestricted(ctx, &t, false) ||
	    op_refuse_copy(ctx, &t, req->entry, -1))
		return;
	op_target_access(ctx, &t, &a);
	struct attribute_description ad;
	/* An unknown type is the backend's to report (undefinedAttributeType). */
	bool known = attribute_description_parse(ctx->server->config->schema,
						 (const char *)req->attr.ptr, req->attr.len,
						 &ad) == LUMEN_OK;
	if (a.checks && known && !op_target_decide(ctx, &t, &a, may_compare, (void *)ad.type))
		return;
	/* Only the asserted type's values are read, unless a rule's filter reads more. */
	const struct attribute_type *compared_type[1] = { known ? ad.type : NULL };
	struct entry_selection only = { compared_type, 1, false };
	if (known && !a.tests_values)
		t.bop.fetch_only = &only;
	struct access_values compared;
	if (a.checks) {
		access_values_init(&compared, &a, ACCESS_COMPARE);
		t.bop.compare_access = &compared.hook;
	}
	int rc = database_compare(t.db->database, &t.bop, t.ndn, req->attr, req->value);
	/* a denied subtype must not reveal an entry the requester may not see */
	if (a.checks && t.bop.result_code == LDAP_INSUFFICIENT_ACCESS_RIGHTS && compared.hidden)
		t.bop.result_code = LDAP_NO_SUCH_OBJECT;
	op_target_answer(ctx, &t, rc);
}
