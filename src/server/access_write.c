/*
 * access_write.c — a write's rights decided again inside its transaction
 * (access_write.h).
 */
#include "access_write.h"

#include <string.h>

#include "ldap_result_codes.h"
#include "lumen_error.h"
#include "server.h"

bool access_write_needed(const struct access_op *a)
{
	return a->checks && acl_policy_reads_entries(&a->policy);
}

/* ------------------------------------------------ reads through the txn */

struct member_in_txn {
	const struct access_write *w;
	const struct object_class *group_class;
	const struct attribute_type *member_type;
	struct ber_view member_ndn;
	bool found;
};

static int member_in_group(void *ctx, const struct entry *group)
{
	struct member_in_txn *m = ctx;
	const struct access_op *a = m->w->a;
	m->found = access_group_has_member(a->server, a->subject.arena, group, m->group_class,
					   m->member_type, m->member_ndn);
	return LUMEN_OK;
}

/* acl_group_lookup.is_member: a group of the written database as the
 * transaction holds it; any other as the handler read it. */
static int txn_is_member(void *context, struct ber_view group_ndn,
			 const struct object_class *group_class,
			 const struct attribute_type *member_type, struct ber_view member_ndn,
			 bool *is_member)
{
	struct access_write *w = context;
	const struct access_op *a = w->a;
	*is_member = false;
	if (server_find_database(a->server, group_ndn) != w->db)
		return a->groups.is_member(a->groups.context, group_ndn, group_class, member_type,
					   member_ndn, is_member);
	if (member_type == NULL)
		return LUMEN_ENOTFOUND;
	struct member_in_txn m = { w, group_class, member_type, member_ndn, false };
	int rc = w->txn_ops->fetch(w->txn, group_ndn, member_in_group, &m);
	*is_member = rc == LUMEN_OK && m.found;
	return rc;
}

static int keep_copy(void *ctx, const struct entry *e)
{
	return entry_dup(e, (struct entry **)ctx);
}

/* A private copy of ndn as the transaction holds it; NULL when absent. */
static int fetch_copy(struct access_write *w, struct ber_view ndn, struct entry **out)
{
	*out = NULL;
	if (ndn.len == 0)
		return LUMEN_OK;
	int rc = w->txn_ops->fetch(w->txn, ndn, keep_copy, out);
	return rc == LUMEN_ENOTFOUND ? LUMEN_OK : rc;
}

static struct ber_view parent_of(struct ber_view ndn)
{
	struct ber_view rdn, parent;
	dn_split_first(ndn, &rdn, &parent);
	return parent;
}

/* ---------------------------------------------------------- the checks */

/* The refusal the handler would have sent on `shown` (op_target_refuse). */
static int refuse(struct access_write *w, struct backend_op *op, const struct entry *shown)
{
	struct acl_target at;
	bool disclose = false;
	if (shown != NULL) {
		acl_target_init(&at, &w->policy, &w->a->subject, shown);
		disclose = acl_may_disclose(&at);
	}
	op->result_code = disclose ? LDAP_INSUFFICIENT_ACCESS_RIGHTS : LDAP_NO_SUCH_OBJECT;
	op->diagnostic = disclose ? "access changed before the write" : NULL;
	op->matched_dn = (struct ber_view){ NULL, 0 };
	return LUMEN_EINVAL;
}

/* As the handler decided: on its own new entry, or on the parent's
 * children alone when it could not build one. */
static int check_add(struct access_write *w, struct backend_op *op, const struct entry *after)
{
	struct ber_view parent_ndn = parent_of(after->ndn);
	struct entry *parent = NULL;
	int rc = fetch_copy(w, parent_ndn, &parent);
	bool allowed = w->new_entry != NULL
			       ? acl_may_add(&w->policy, &w->a->subject, parent, w->new_entry)
			       : acl_may_add_below(&w->policy, &w->a->subject, parent, parent_ndn);
	if (rc == LUMEN_OK && !allowed)
		rc = refuse(w, op, parent);
	entry_free(parent);
	return rc;
}

static int check_delete(struct access_write *w, struct backend_op *op, const struct entry *before)
{
	struct entry *parent = NULL;
	int rc = fetch_copy(w, parent_of(before->ndn), &parent);
	if (rc == LUMEN_OK && !acl_may_delete(&w->policy, &w->a->subject, parent, before))
		rc = refuse(w, op, before);
	entry_free(parent);
	return rc;
}

static int check_rename(struct access_write *w, struct backend_op *op, const struct entry *before)
{
	struct ber_view old_parent_ndn = parent_of(before->ndn);
	bool moves = !ber_view_eq(old_parent_ndn, w->new_parent_ndn);
	struct entry *old_parent = NULL, *new_parent = NULL;
	int rc = fetch_copy(w, old_parent_ndn, &old_parent);
	if (rc == LUMEN_OK && moves)
		rc = fetch_copy(w, w->new_parent_ndn, &new_parent);
	if (rc == LUMEN_OK &&
	    !acl_may_rename(&w->policy, &w->a->subject, before, old_parent,
			    moves ? new_parent : old_parent, w->new_parent_ndn, w->new_rdn,
			    w->old_rdn_deleted))
		rc = refuse(w, op, before);
	entry_free(old_parent);
	entry_free(new_parent);
	return rc;
}

static bool still_stored(const struct entry *e, const struct attribute_type *type,
			 struct ber_view value)
{
	const struct entry_attribute *a = entry_find_type(e, type);
	for (size_t i = 0; a != NULL && i < a->n_values; i++)
		if (ber_view_eq(a->values[i].value, value))
			return true;
	return false;
}

static int check_modify(struct access_write *w, struct backend_op *op, const struct entry *before)
{
	if (access_write_needed(w->a) &&
	    !acl_may_modify(&w->policy, &w->a->subject, before, w->changes, w->n_changes))
		return refuse(w, op, before);
	return LUMEN_OK;
}

/* The old password was verified against a value the entry no longer
 * holds: slapd's answer to an old password that does not match. */
static int check_password(struct access_write *w, struct backend_op *op,
			  const struct entry *before)
{
	if (w->verified_password.ptr != NULL &&
	    !still_stored(before, w->password_type, w->verified_password)) {
		op->result_code = LDAP_UNWILLING_TO_PERFORM;
		op->diagnostic = "unwilling to verify old password";
		op->matched_dn = (struct ber_view){ NULL, 0 };
		return LUMEN_EINVAL;
	}
	return check_modify(w, op, before);
}

/* database_write_hook.on_write for backend_op.write_check (depth 0). */
static int decide_again(void *ctx, struct database_txn *txn, const struct database_txn_ops *ops,
			struct backend_op *op, const struct database_write *change)
{
	struct access_write *w = ctx;
	w->txn = txn;
	w->txn_ops = ops;
	w->policy = w->a->policy;
	w->policy.groups = &w->groups;
	w->groups = (struct acl_group_lookup){ txn_is_member, w };
	switch (w->kind) {
	case ACCESS_WRITE_ADD:
		return change->after != NULL ? check_add(w, op, change->after) : LUMEN_OK;
	case ACCESS_WRITE_DELETE:
		return change->before != NULL ? check_delete(w, op, change->before) : LUMEN_OK;
	case ACCESS_WRITE_RENAME:
		return change->before != NULL ? check_rename(w, op, change->before) : LUMEN_OK;
	case ACCESS_WRITE_MODIFY:
		return change->before != NULL ? check_modify(w, op, change->before) : LUMEN_OK;
	case ACCESS_WRITE_PASSWORD:
		return change->before != NULL ? check_password(w, op, change->before) : LUMEN_OK;
	}
	return LUMEN_OK;
}

/* ---------------------------------------------------------- set-up */

static void prepare(struct access_write *w, enum access_write_kind kind, struct access_op *a,
		    const struct server_database *db, struct backend_op *bop)
{
	memset(w, 0, sizeof(*w));
	w->kind = kind;
	w->a = a;
	w->db = db;
	w->hook.on_write = decide_again;
	w->hook.ctx = w;
	bop->write_check = access_write_needed(a) ? &w->hook : NULL;
}

void access_write_modify(struct access_write *w, struct access_op *a,
			 const struct server_database *db, const struct ldap_change *changes,
			 size_t n_changes, struct backend_op *bop)
{
	prepare(w, ACCESS_WRITE_MODIFY, a, db, bop);
	w->changes = changes;
	w->n_changes = n_changes;
}

void access_write_password(struct access_write *w, struct access_op *a,
			   const struct server_database *db, const struct ldap_change *change,
			   const struct attribute_type *password_type, struct ber_view verified,
			   struct backend_op *bop)
{
	prepare(w, ACCESS_WRITE_PASSWORD, a, db, bop);
	w->changes = change;
	w->n_changes = 1;
	w->password_type = password_type;
	w->verified_password = verified;
	if (verified.ptr != NULL)
		bop->write_check = &w->hook;
}

void access_write_delete(struct access_write *w, struct access_op *a,
			 const struct server_database *db, struct backend_op *bop)
{
	prepare(w, ACCESS_WRITE_DELETE, a, db, bop);
}

void access_write_add(struct access_write *w, struct access_op *a,
		      const struct server_database *db, const struct entry *new_entry,
		      struct backend_op *bop)
{
	prepare(w, ACCESS_WRITE_ADD, a, db, bop);
	w->new_entry = new_entry;
}

void access_write_rename(struct access_write *w, struct access_op *a,
			 const struct server_database *db, struct ber_view new_parent_ndn,
			 const struct dn_rdn *new_rdn, const struct dn_rdn *old_rdn_deleted,
			 struct backend_op *bop)
{
	prepare(w, ACCESS_WRITE_RENAME, a, db, bop);
	w->new_parent_ndn = new_parent_ndn;
	w->new_rdn = new_rdn;
	w->old_rdn_deleted = old_rdn_deleted;
}
