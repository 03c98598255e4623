/*
 * overlay_memberof.c — reverse group membership (OpenLDAP's memberof
 * overlay and its directives, config_memberof.h): the entries a group
 * names in its member attribute carry the group's DN in memberOf.
 *
 * Every change is seen inside the write transaction (overlay.h's
 * on_write) with the entry before and after, and the member entries are
 * edited in the same transaction, so a group and its members' memberOf
 * commit together: no window in which they disagree, nothing lost to a
 * crash between two writes (OpenLDAP writes the members after the group).
 *
 *  - A group added, changed (members added, removed, replaced; the
 *    object class gained or lost), renamed or deleted: the members that
 *    joined get the group's DN, those that left lose it, and a rename
 *    rewrites it.
 *  - memberof-dangling: a member added by the client's own write that
 *    names no entry is kept (ignore), removed from the group (drop), or
 *    refuses the write (error, memberof-dangling-error's code).
 *  - memberof-refint TRUE: deleting or renaming an entry removes or
 *    rewrites its DN in the groups that name it.
 *  - An entry added while groups already name it gets their DNs (OpenLDAP
 *    leaves it without memberOf until the group changes): memberOf never
 *    depends on the order of the adds, and equals what lumenadd and
 *    `lumenindex --memberof` compute from the groups.
 *
 * Membership is not transitive (as in OpenLDAP 2.5): a member of a group
 * that is itself a member of another group gets only the inner group's DN.
 *
 * Caveats:
 *  - Renaming a group's parent does not rewrite its members' memberOf
 *    (as OpenLDAP); `lumenindex --memberof` recomputes it.
 *  - Finding the groups of an added entry uses member's equality index;
 *    without one every add reads the whole database (the log warns).
 */
#include "overlay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config_memberof.h"
#include "dn.h"
#include "entry.h"
#include "ldap_result_codes.h"
#include "log.h"
#include "lumen_error.h"

struct memberof {
	struct config_memberof c;
	struct ber_view modifier_ndn;      /* empty: the requester */
};

/* ------------------------------------------------------------- configure */

static void memberof_destroy(void *state)
{
	struct memberof *m = state;
	if (m == NULL)
		return;
	config_memberof_free(&m->c);
	free(m);
}

/* The settings, and the modifiersName of the members' edits (memberof-dn,
 * else the requester). */
static int memberof_prepare(void *state, const struct overlay_setup *setup, char *err,
			    size_t errlen)
{
	struct memberof *m = state;
	int rc = config_memberof_parse(setup->schema, setup->database, setup->overlay, &m->c, err,
				       errlen);
	const char *dn = m->c.modifier_dn;
	if (rc != LUMEN_OK || dn == NULL ||
	    dn_normalize(setup->schema, dn, strlen(dn), setup->memory, &m->modifier_ndn) == LUMEN_OK)
		return rc;
	return overlay_config_fail(&overlay_memberof, setup, err, errlen,
				   "memberof-dn: expected a DN, not \"%s\"", dn);
}

static int memberof_check(void *state, const struct overlay_setup *setup, char *err,
			  size_t errlen)
{
	const struct memberof *m = state;
	(void)err, (void)errlen;
	if (!overlay_setup_has_equality_index(setup, m->c.member_ad))
		log_printf(0, "%s: overlay memberof: no \"index %s eq\": every add reads the whole "
			   "database to find the groups naming the new entry",
			   setup->overlay->origin, attribute_type_name(m->c.member_ad));
	return LUMEN_OK;
}

/* ------------------------------------------------- one member's memberOf */

/* In a member: the group's old DN goes (remove_ndn), its new one comes (add_dn). */
struct member_change {
	const struct attribute_type *memberof;
	struct ber_view remove_ndn;
	struct ber_view add_dn;
};

static int change_memberof(void *ctx, struct entry *e)
{
	const struct member_change *c = ctx;
	struct attribute_description ad = { .type = c->memberof };
	const struct entry_attribute *a = entry_find(e, &ad);
	long at = a != NULL && c->remove_ndn.len > 0
		  ? entry_attribute_find_normalized(a, c->remove_ndn) : -1;
	bool changed = false;
	int rc = LUMEN_OK;
	if (at >= 0) {
		struct ber_view old = a->values[at].value;
		rc = entry_delete_values(e, &ad, &old, 1, NULL);
		changed = true;
	}
	if (rc == LUMEN_OK && c->add_dn.len > 0) {
		rc = entry_add_values(e, &ad, &c->add_dn, 1, NULL);
		changed = changed || rc == LUMEN_OK;
		rc = rc == LUMEN_EEXIST ? LUMEN_OK : rc;
	}
	if (rc == LUMEN_OK && !changed)
		return DATABASE_TXN_UNCHANGED;
	return rc;
}

/* The members' edits: a vanished member is not an error (LUMEN_ENOTFOUND
 * is returned for the caller's dangling check); one that cannot take the
 * change is logged. */
static int edit_member(const struct memberof *m, struct database_txn *txn,
		       const struct database_txn_ops *ops, struct ber_view member_ndn,
		       struct member_change *c)
{
	int rc = ops->edit(txn, member_ndn, m->modifier_ndn, change_memberof, c);
	if (rc == LUMEN_ESCHEMA) {
		log_printf(0, "memberof: \"%.*s\" keeps its %s: changing it breaks the schema",
			   (int)member_ndn.len, (const char *)member_ndn.ptr,
			   attribute_type_name(m->c.memberof_ad));
		rc = LUMEN_OK;
	}
	return rc;
}

/* ------------------------------------------------------- group changes */

static bool is_group(const struct memberof *m, const struct entry *e)
{
	return e != NULL && entry_is_instance_of(e, m->c.group_oc);
}

/* True if e holds the normalized DN in type (any option variant). */
static bool names(const struct entry *e, const struct attribute_type *type, struct ber_view ndn)
{
	for (size_t i = 0; e != NULL && i < e->n_attributes; i++)
		if (e->attributes[i].desc.type == type &&
		    entry_attribute_find_normalized(&e->attributes[i], ndn) >= 0)
			return true;
	return false;
}

/* What a group change is, with the dangling members it found. */
struct group_change {
	const struct memberof *m;
	const struct entry *before, *after;   /* NULL when not a group */
	bool check_dangling;                  /* the client's own write */
	struct ber_value_list {
		struct ber_view *values;
		size_t n, cap;
	} dangling;
	struct arena *arena;
};

static int note_dangling(struct group_change *g, struct ber_view value)
{
	struct ber_value_list *l = &g->dangling;
	struct ber_view *values = arena_reserve(g->arena, l->values, l->n, &l->cap, l->n + 1,
						sizeof(*values), 8);
	if (values == NULL)
		return LUMEN_ENOMEM;
	l->values = values;
	l->values[l->n++] = value;
	return LUMEN_OK;
}

/* A member of the old group: it leaves, or stays under the group's new DN. */
static int member_left(struct group_change *g, struct database_txn *txn,
		       const struct database_txn_ops *ops, const struct entry_value *v)
{
	struct member_change c = { .memberof = g->m->c.memberof_ad,
				   .remove_ndn = g->before->ndn };
	if (names(g->after, g->m->c.member_ad, v->normalized)) {
		if (ber_view_eq(g->before->ndn, g->after->ndn))
			return LUMEN_OK;   /* still a member of the same group */
		c.add_dn = g->after->dn;
	}
	int rc = edit_member(g->m, txn, ops, v->normalized, &c);
	return rc == LUMEN_ENOTFOUND ? LUMEN_OK : rc;
}

/* A member new to the group (member_left handled those that were there). */
static int member_joined(struct group_change *g, struct database_txn *txn,
			 const struct database_txn_ops *ops, const struct entry_value *v)
{
	if (names(g->before, g->m->c.member_ad, v->normalized))
		return LUMEN_OK;
	struct member_change c = { .memberof = g->m->c.memberof_ad, .add_dn = g->after->dn };
	int rc = v->normalized.len > 0 ? edit_member(g->m, txn, ops, v->normalized, &c)
				       : LUMEN_ENOTFOUND;
	if (rc != LUMEN_ENOTFOUND)
		return rc;
	if (!g->check_dangling || g->m->c.dangling == MEMBEROF_DANGLING_IGNORE)
		return LUMEN_OK;
	return note_dangling(g, v->value);
}

typedef int (*member_fn)(struct group_change *g, struct database_txn *txn,
			 const struct database_txn_ops *ops, const struct entry_value *v);

static int each_member(struct group_change *g, const struct entry *e, member_fn fn,
		       struct database_txn *txn, const struct database_txn_ops *ops)
{
	int rc = LUMEN_OK;
	for (size_t i = 0; e != NULL && i < e->n_attributes && rc == LUMEN_OK; i++) {
		const struct entry_attribute *a = &e->attributes[i];
		for (size_t k = 0; a->desc.type == g->m->c.member_ad && k < a->n_values &&
				   rc == LUMEN_OK; k++)
			rc = fn(g, txn, ops, &a->values[k]);
	}
	return rc;
}

static int drop_values(void *ctx, struct entry *e)
{
	const struct group_change *g = ctx;
	struct attribute_description ad = { .type = g->m->c.member_ad };
	for (size_t i = 0; i < g->dangling.n; i++) {
		int rc = entry_delete_values(e, &ad, &g->dangling.values[i], 1, NULL);
		if (rc != LUMEN_OK && rc != LUMEN_ENOTFOUND)
			return rc;
	}
	return LUMEN_OK;
}

/* memberof-dangling drop or error, once the members are done. */
static int settle_dangling(struct group_change *g, struct database_txn *txn,
			   const struct database_txn_ops *ops, struct backend_op *op)
{
	if (g->dangling.n == 0)
		return LUMEN_OK;
	if (g->m->c.dangling == MEMBEROF_DANGLING_ERROR) {
		op->result_code = g->m->c.dangling_error;
		op->diagnostic = "adding non-existing object as group member";
		return LUMEN_EINVAL;
	}
	int rc = ops->edit(txn, g->after->ndn, g->m->modifier_ndn, drop_values, g);
	if (rc == LUMEN_ESCHEMA) {
		char text[256];
		snprintf(text, sizeof(text), "object class '%s' requires attribute '%s'",
			 object_class_name(g->m->c.group_oc), attribute_type_name(g->m->c.member_ad));
		op->result_code = LDAP_OBJECT_CLASS_VIOLATION;
		op->diagnostic = arena_strndup(op->arena, text, strlen(text));
		return LUMEN_EINVAL;
	}
	return rc;
}

static int update_members(const struct memberof *m, struct database_txn *txn,
			  const struct database_txn_ops *ops, struct backend_op *op,
			  const struct database_write *w)
{
	struct group_change g = {
		.m = m, .before = is_group(m, w->before) ? w->before : NULL,
		.after = is_group(m, w->after) ? w->after : NULL,
		.check_dangling = w->depth == 0, .arena = op->arena,
	};
	if (g.before == NULL && g.after == NULL)
		return LUMEN_OK;
	int rc = each_member(&g, g.before, member_left, txn, ops);
	if (rc == LUMEN_OK)
		rc = each_member(&g, g.after, member_joined, txn, ops);
	if (rc == LUMEN_OK)
		rc = settle_dangling(&g, txn, ops, op);
	return rc;
}

/* --------------------------------------------- entries added, members gone */

/* A new entry gets the DNs of the groups that already name it. */
static int adopt(const struct memberof *m, struct database_txn *txn,
		 const struct database_txn_ops *ops, struct backend_op *op,
		 const struct entry *added)
{
	struct overlay_dn_list groups = { .arena = op->arena, .only = m->c.group_oc };
	int rc = ops->find_equal(txn, m->c.member_ad, added->ndn, overlay_collect, &groups);
	for (size_t i = 0; i < groups.n && rc == LUMEN_OK; i++) {
		struct member_change c = { .memberof = m->c.memberof_ad, .add_dn = groups.dns[i].dn };
		rc = edit_member(m, txn, ops, added->ndn, &c);
	}
	return rc;
}

static bool renamed(const struct database_write *w)
{
	return w->kind == DATABASE_WRITE_MODRDN && !ber_view_eq(w->before->ndn, w->after->ndn);
}

static int memberof_on_write(void *state, struct database_txn *txn,
			     const struct database_txn_ops *ops, struct backend_op *op,
			     const struct database_write *w)
{
	const struct memberof *m = state;
	int rc = update_members(m, txn, ops, op, w);
	if (rc == LUMEN_OK && w->kind == DATABASE_WRITE_ADD)
		rc = adopt(m, txn, ops, op, w->after);
	if (rc == LUMEN_OK && m->c.refint && (w->kind == DATABASE_WRITE_DELETE || renamed(w))) {
		struct overlay_rewrite rw = {
			.who = "memberof", .type = m->c.member_ad, .only = m->c.group_oc,
			.old_ndn = w->before->ndn,
			.new_dn = w->after != NULL ? w->after->dn : (struct ber_view){ NULL, 0 },
			.modifier_ndn = m->modifier_ndn,
		};
		rc = overlay_rewrite_references(txn, ops, op->arena, &rw);
	}
	return rc;
}

const struct overlay_type overlay_memberof = {
	.name = "memberof",
	.steps = { .state_size = sizeof(struct memberof), .prepare = memberof_prepare,
		   .check = memberof_check },
	.destroy = memberof_destroy,
	.on_write = memberof_on_write,
};
