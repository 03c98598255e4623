/*
 * overlay_refint.c — referential integrity (OpenLDAP's refint overlay and
 * its directives): when an entry is deleted, the values of the configured
 * attributes that name it are removed from every entry of the database;
 * when it is renamed or moved, they are rewritten to the new DN, and so
 * are the references to every entry of the subtree that moved with it.
 *
 * Where OpenLDAP repairs the references after the operation, in a second
 * write of its own that can fail or be lost in a crash, Lumen makes the
 * repairs inside the operation's transaction (overlay.h's on_write): the
 * delete or rename and every reference it changes commit together.
 *
 * Directives (after `overlay refint`):
 *   refint_attributes ATTR...   the DN-valued attributes to keep (required;
 *                               may be repeated)
 *   refint_nothing DN           a placeholder put in when the last value of
 *                               an attribute would go (for a MUST such as
 *                               groupOfNames' member)
 *   refint_modifiersName DN     the modifiersName of the repaired entries
 *                               (default "cn=Referential Integrity Overlay")
 *
 * A referencing entry that the repair would leave violating the schema
 * (the last value of a required attribute, with no refint_nothing) keeps
 * its reference, as in OpenLDAP, and the log says which entry.
 */
#include "overlay.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dn.h"
#include "entry.h"
#include "log.h"
#include "lumen_error.h"

#define REFINT_MAX_ATTRIBUTES 32
#define REFINT_DEFAULT_MODIFIER "cn=Referential Integrity Overlay"

struct refint {
	const struct attribute_type *attributes[REFINT_MAX_ATTRIBUTES];
	size_t n_attributes;
	const char *nothing;           /* user form; NULL = none */
	struct ber_view modifier_ndn;  /* normalized */
};

/* ------------------------------------------------------------- configure */

static int add_attributes(struct refint *r, const struct overlay_setup *setup,
			  const struct config_overlay_line *line, char *err, size_t errlen)
{
	if (line->n_words < 2)
		return config_overlay_fail(line, err, errlen,
					   "expected \"refint_attributes <attr> [...]\"");
	for (size_t i = 1; i < line->n_words; i++) {
		const char *name = line->words[i];
		const struct attribute_type *type =
			schema_attribute_type(setup->schema, name, strlen(name));
		if (type == NULL)
			return config_overlay_fail(line, err, errlen, "unknown attribute \"%s\"",
						   name);
		if (r->n_attributes == REFINT_MAX_ATTRIBUTES)
			return config_overlay_fail(line, err, errlen, "too many attributes");
		if (!overlay_setup_has_equality_index(setup, type))
			log_printf(0, "%s: refint_attributes: %s has no equality index: every "
				   "delete and rename will read the whole database (add \"index %s "
				   "eq\")", line->origin, name, name);
		r->attributes[r->n_attributes++] = type;
	}
	return LUMEN_OK;
}

static int set_nothing(struct refint *r, const struct overlay_setup *setup,
		       const struct config_overlay_line *line, char *err, size_t errlen)
{
	struct ber_view ndn;
	int rc = overlay_config_dn(setup, line, "refint_nothing <DN>", &ndn, err, errlen);
	if (rc != LUMEN_OK)
		return rc;
	r->nothing = arena_strndup(setup->memory, line->words[1], strlen(line->words[1]));
	return r->nothing != NULL ? LUMEN_OK : LUMEN_ENOMEM;
}

static int apply_line(void *state, const struct overlay_setup *setup,
		      const struct config_overlay_line *line, char *err, size_t errlen)
{
	struct refint *r = state;
	const char *name = line->words[0];
	if (strcasecmp(name, "refint_attributes") == 0)
		return add_attributes(r, setup, line, err, errlen);
	if (strcasecmp(name, "refint_nothing") == 0)
		return set_nothing(r, setup, line, err, errlen);
	if (strcasecmp(name, "refint_modifiersName") == 0)
		return overlay_config_dn(setup, line, "refint_modifiersName <DN>", &r->modifier_ndn,
					 err, errlen);
	return config_overlay_unknown("refint", line, err, errlen);
}

static int refint_prepare(void *state, const struct overlay_setup *setup, char *err,
			  size_t errlen)
{
	static const char modifier[] = REFINT_DEFAULT_MODIFIER;
	struct refint *r = state;
	(void)err, (void)errlen;
	return dn_normalize(setup->schema, modifier, sizeof(modifier) - 1, setup->memory,
			    &r->modifier_ndn);
}

/* ---------------------------------------------------------------- repair */

static bool renamed(const struct database_write *w)
{
	return w->kind == DATABASE_WRITE_MODRDN &&
	       (w->before->ndn.len != w->after->ndn.len ||
		memcmp(w->before->ndn.ptr, w->after->ndn.ptr, w->before->ndn.len) != 0);
}

/* Every configured attribute: values naming old_ndn go, new_dn comes. */
static int repair_all(const struct refint *r, struct database_txn *txn,
		      const struct database_txn_ops *ops, struct arena *arena,
		      struct ber_view old_ndn, struct ber_view new_dn)
{
	struct overlay_rewrite rw = {
		.who = "refint", .old_ndn = old_ndn, .new_dn = new_dn, .nothing = r->nothing,
		.modifier_ndn = r->modifier_ndn,
	};
	int rc = LUMEN_OK;
	for (size_t i = 0; i < r->n_attributes && rc == LUMEN_OK; i++) {
		rw.type = r->attributes[i];
		rc = overlay_rewrite_references(txn, ops, arena, &rw);
	}
	return rc;
}

/* A renamed subtree's entries: their DNs before the rename and now. */
struct moved {
	struct ber_view old_base, new_base;   /* normalized */
	struct arena *arena;
	struct moved_dn {
		struct ber_view old_ndn, new_dn;
	} *dns;
	size_t n, cap;
};

static int note_moved(void *ctx, const struct entry *e)
{
	struct moved *m = ctx;
	struct moved_dn *dns = arena_reserve(m->arena, m->dns, m->n, &m->cap, m->n + 1,
					     sizeof(*dns), 16);
	if (dns == NULL)
		return LUMEN_ENOMEM;
	m->dns = dns;
	/* below new_base: the same relative name below old_base */
	size_t relative = e->ndn.len - m->new_base.len;
	uint8_t *old = arena_alloc(m->arena, relative + m->old_base.len);
	uint8_t *now = arena_memdup(m->arena, e->dn.ptr, e->dn.len);
	if (old == NULL || now == NULL)
		return LUMEN_ENOMEM;
	memcpy(old, e->ndn.ptr, relative);
	memcpy(old + relative, m->old_base.ptr, m->old_base.len);
	m->dns[m->n++] = (struct moved_dn){ { old, relative + m->old_base.len },
					    { now, e->dn.len } };
	return LUMEN_OK;
}

/* A rename moves its whole subtree: references to every entry in it. */
static int repair_renamed(const struct refint *r, struct database_txn *txn,
			  const struct database_txn_ops *ops, struct arena *arena,
			  const struct database_write *w)
{
	struct moved m = { .old_base = w->before->ndn, .new_base = w->after->ndn,
			   .arena = arena };
	int rc = repair_all(r, txn, ops, arena, w->before->ndn, w->after->dn);
	if (rc == LUMEN_OK)
		rc = ops->walk_below(txn, w->after->ndn, note_moved, &m);
	for (size_t i = 0; i < m.n && rc == LUMEN_OK; i++)
		rc = repair_all(r, txn, ops, arena, m.dns[i].old_ndn, m.dns[i].new_dn);
	return rc;
}

static int refint_on_write(void *state, struct database_txn *txn,
			   const struct database_txn_ops *ops, struct backend_op *op,
			   const struct database_write *w)
{
	const struct refint *r = state;
	if (w->kind == DATABASE_WRITE_DELETE)
		return repair_all(r, txn, ops, op->arena, w->before->ndn,
				  (struct ber_view){ NULL, 0 });
	if (renamed(w))
		return repair_renamed(r, txn, ops, op->arena, w);
	return LUMEN_OK;
}

const struct overlay_type overlay_refint = {
	.name = "refint",
	.steps = { .state_size = sizeof(struct refint), .prepare = refint_prepare,
		    .apply = apply_line, .required = "refint_attributes" },
	.destroy = free,
	.on_write = refint_on_write,
};
