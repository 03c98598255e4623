/*
 * op_moddn.c — the Modify DN operation (RFC 4511 §4.9): rename and/or
 * move an entry with its subtree inside one database. Access control:
 * `write` on the entry, on the new RDN's types, and on the `children` of
 * the old and the new parent (acl.h).
 */
#include "access_glue.h"
#include "access_write.h"
#include "config.h"
#include "conn.h"
#include "dn.h"
#include "log.h"
#include "lumen_error.h"
#include "ops.h"
#include "server.h"
#include "workq.h"

/* The entries a rename is decided on (private copies, freed together). */
struct rename_parts {
	struct entry *entry, *old_parent, *new_parent;
};

static void free_parts(struct rename_parts *p)
{
	entry_free(p->entry);
	entry_free(p->old_parent);
	entry_free(p->new_parent);
}

/* What a rename is decided on besides the entries: the new parent's DN,
 * the new RDN (arena; NULL when it does not parse) and the old one when
 * deleteOldRDN removes its values (NULL otherwise). */
struct rename_names {
	struct ber_view new_parent_ndn;
	const struct dn_rdn *new_rdn;
	const struct dn_rdn *old_rdn_deleted;
};

/* The first RDN of ndn (arena), or NULL when it does not parse. */
static const struct dn_rdn *first_rdn(struct op_context *ctx, struct ber_view dn_text)
{
	struct dn dn = { NULL, 0 };
	if (dn_parse(ctx->server->config->schema, (const char *)dn_text.ptr, dn_text.len,
		     ctx->arena, &dn) != LUMEN_OK || dn.n_rdns == 0)
		return NULL;
	return &dn.rdns[0];   /* the RDNs live in the arena */
}

static void rename_names(struct op_context *ctx, const struct op_target *t,
			 struct ber_view superior_ndn, struct rename_names *out)
{
	const struct ldap_moddn_request *req = &ctx->msg->u.moddn;
	struct ber_view rdn, old_parent_ndn;
	dn_split_first(t->ndn, &rdn, &old_parent_ndn);
	out->new_parent_ndn = req->has_new_superior ? superior_ndn : old_parent_ndn;
	out->new_rdn = out->old_rdn_deleted = NULL;
	if (t->bop.is_root)   /* the rootdn's rename is decided on nothing */
		return;
	/* A new RDN that does not parse is the backend's to report. */
	out->new_rdn = first_rdn(ctx, req->new_rdn);
	if (req->delete_old_rdn)
		out->old_rdn_deleted = first_rdn(ctx, t->ndn);
}

/* True when the rename may go on; else the answer was sent. */
static bool rename_allowed(struct op_context *ctx, struct op_target *t, struct access_op *a,
			   const struct rename_names *names)
{
	struct rename_parts p = { NULL, NULL, NULL };
	struct ber_view rdn, old_parent_ndn;
	bool go_on = false;
	if (t->bop.is_root)
		return true;
	dn_split_first(t->ndn, &rdn, &old_parent_ndn);
	struct ber_view new_parent_ndn = names->new_parent_ndn;
	if (!op_target_fetch(ctx, t, t->ndn, &p.entry))
		return false;
	if (p.entry == NULL)        /* noSuchObject from the backend, matchedDN hidden */
		return !op_target_refuse_unseen(ctx, t);
	if (op_target_fetch(ctx, t, old_parent_ndn, &p.old_parent) &&
	    op_target_fetch(ctx, t, new_parent_ndn, &p.new_parent) &&
	    (p.new_parent != NULL || !op_target_refuse_unseen(ctx, t))) {
		go_on = acl_may_rename(&a->policy, &a->subject, p.entry, p.old_parent,
				       p.new_parent, new_parent_ndn, names->new_rdn,
				       names->old_rdn_deleted);
		if (!go_on)
			op_target_refuse(ctx, a, p.entry);
	}
	free_parts(&p);
	return go_on;
}

void op_moddn(struct op_context *ctx)
{
	const struct ldap_moddn_request *req = &ctx->msg->u.moddn;
	struct op_target t;
	struct access_op a;
	struct ber_view superior_ndn = { (const uint8_t *)"", 0 };
	unsigned long long conn_id = (unsigned long long)conn_number(ctx->conn);
	log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u MODRDN dn=\"%s\"", conn_id, ctx->op->number,
		   op_log_string(ctx, req->entry));
	if (!op_target_prepare_write(ctx, req->entry, &t))
		return;
	/* The backend parses the new RDN; the superior is ours to normalize. */
	if (req->has_new_superior &&
	    server_normalize_dn(ctx->server, req->new_superior, ctx->arena, &superior_ndn) !=
		    LUMEN_OK) {
		op_send_result(ctx, LDAP_INVALID_DN_SYNTAX, NULL, "invalid new superior DN");
		return;
	}
	op_target_access(ctx, &t, &a);
	struct rename_names names;
	rename_names(ctx, &t, superior_ndn, &names);
	if (!rename_allowed(ctx, &t, &a, &names) || !op_commit(ctx))
		return;
	struct access_write again;
	access_write_rename(&again, &a, t.db, names.new_parent_ndn, names.new_rdn,
			    names.old_rdn_deleted, &t.bop);
	int rc = database_modrdn(t.db->database, &t.bop, t.ndn, req->new_rdn, req->delete_old_rdn,
				req->has_new_superior, superior_ndn);
	op_target_answer(ctx, &t, rc);
}
