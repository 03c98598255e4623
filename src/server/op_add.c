/*
 * op_add.c — the Add operation (RFC 4511 §4.7): the request's DN and
 * attribute list go to the backend, which builds and schema-checks the
 * entry; Post-Read is answered from the stored entry. Access control:
 * `write` on the parent's `children`, on the new entry and on each of its
 * attributes (acl.h), decided before the backend sees the request.
 */
#include "access_glue.h"
#include "access_write.h"
#include "config.h"
#include "conn.h"
#include "dn.h"
#include "entry.h"
#include "log.h"
#include "ops.h"
#include "server.h"
#include "workq.h"

/* The new entry as the backend would build it; NULL when it cannot be built
 * (the backend then reports why, once the parent's `children` allowed it). */
static struct entry *build_new_entry(struct op_context *ctx, const struct op_target *t)
{
	const struct ldap_add_request *req = &ctx->msg->u.add;
	struct entry *e = NULL;
	struct schema_violation v;
	if (entry_from_attributes(ctx->server->config->schema, req->entry, t->ndn,
				  req->attributes, req->n_attributes, true, &e, &v) != LUMEN_OK)
		return NULL;
	return e;
}

/* Is t's entry one of its database's suffixes (its parent lies outside)? */
static bool is_suffix(const struct op_target *t)
{
	for (size_t i = 0; i < t->db->n_suffixes; i++)
		if (ber_view_eq(t->db->suffixes[i], t->ndn))
			return true;
	return false;
}

/* True when the add may go on; else the answer was sent. *fresh: the new
 * entry it was decided on, the caller's to free (NULL: none built). */
static bool add_allowed(struct op_context *ctx, struct op_target *t, struct access_op *a,
			struct entry **fresh_out)
{
	struct entry *parent = NULL, *fresh = NULL;
	struct ber_view rdn, parent_ndn;
	*fresh_out = NULL;
	if (t->bop.is_root)
		return true;
	dn_split_first(t->ndn, &rdn, &parent_ndn);
	if (!op_target_fetch(ctx, t, parent_ndn, &parent))
		return false;
	/* a parent the snapshot lacks, below the database's suffix */
	if (parent == NULL && !is_suffix(t) && op_target_refuse_unseen(ctx, t))
		return false;
	fresh = build_new_entry(ctx, t);
	bool allowed = fresh != NULL
			       ? acl_may_add(&a->policy, &a->subject, parent, fresh)
			       : acl_may_add_below(&a->policy, &a->subject, parent, parent_ndn);
	if (!allowed)
		op_target_refuse(ctx, a, parent);
	entry_free(parent);
	*fresh_out = fresh;
	return allowed;
}

/* RFC 4511 §4.7: every attribute of an Add carries at least one value. */
static bool every_attribute_has_values(const struct ldap_add_request *req)
{
	for (size_t i = 0; i < req->n_attributes; i++)
		if (req->attributes[i].n_values == 0)
			return false;
	return true;
}

void op_add(struct op_context *ctx)
{
	const struct ldap_add_request *req = &ctx->msg->u.add;
	struct op_target t;
	struct access_op a;
	log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u ADD dn=\"%s\"",
		   (unsigned long long)conn_number(ctx->conn), ctx->op->number,
		   op_log_string(ctx, req->entry));
	if (!every_attribute_has_values(req)) {
		op_send_result(ctx, LDAP_PROTOCOL_ERROR, NULL, "no values for attribute type");
		return;
	}
	if (!op_target_prepare_write(ctx, req->entry, &t) ||
	    !op_target_unrestricted(ctx, &t, false))
		return;
	op_target_access(ctx, &t, &a);
	struct entry *fresh = NULL;
	if (add_allowed(ctx, &t, &a, &fresh) && op_commit(ctx)) {
		struct access_write again;
		access_write_add(&again, &a, t.db, fresh, &t.bop);
		int rc = database_add(t.db->database, &t.bop, req->entry, t.ndn, req->attributes,
				     req->n_attributes);
		op_target_answer(ctx, &t, rc);
	}
	entry_free(fresh);
}
