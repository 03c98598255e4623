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

#include <stdio.h>
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
	char *nothing;                 /* user form; NULL = none */
	struct ber_view modifier_ndn;  /* normalized; bytes in memory */
	struct arena memory;           /* normalized DNs */
};

/* ------------------------------------------------------------- configure */

static int fail(const struct config_overlay_line *line, char *err, size_t errlen,
		const char *what)
{
	snprintf(err, errlen, "%s: %s: %s", line->origin, line->words[0], what);
	return LUMEN_EMALFORMED;
}

static int add_attributes(struct refint *r, const struct overlay_setup *setup,
			  const struct config_overlay_line *line, char *err, size_t errlen)
{
	if (line->n_words < 2)
		return fail(line, err, errlen, "expected \"refint_attributes <attr> [...]\"");
	for (size_t i = 1; i < line->n_words; i++) {
		const char *name = line->words[i];
		const struct attribute_type *type =
			schema_attribute_type(setup->schema, name, strlen(name));
		if (type == NULL) {
			snprintf(err, errlen, "%s: refint_attributes: unknown attribute \"%s\"",
				 line->origin, name);
			return LUMEN_EMALFORMED;
		}
		if (r->n_attributes == REFINT_MAX_ATTRIBUTES)
			return fail(line, err, errlen, "too many attributes");
		if (!overlay_setup_has_equality_index(setup, type))
			log_printf(0, "%s: refint_attributes: %s has no equality index: every "
				   "delete and rename will read the whole database (add \"index %s "
				   "eq\")", line->origin, name, name);
		r->attributes[r->n_attributes++] = type;
	}
	return LUMEN_OK;
}

static int set_modifier(struct refint *r, const struct overlay_setup *setup, const char *dn,
			const struct config_overlay_line *line, char *err, size_t errlen)
{
	int rc = dn_normalize(setup->schema, dn, strlen(dn), &r->memory, &r->modifier_ndn);
	if (rc == LUMEN_ENOMEM)
		return rc;
	if (rc != LUMEN_OK && line != NULL)
		return fail(line, err, errlen, "expected a DN");
	return rc;
}

static int set_nothing(struct refint *r, const struct overlay_setup *setup,
		       const struct config_overlay_line *line, char *err, size_t errlen)
{
	struct ber_view ndn;
	const char *dn = line->words[1];
	if (line->n_words != 2)
		return fail(line, err, errlen, "expected \"refint_nothing <DN>\"");
	if (dn_normalize(setup->schema, dn, strlen(dn), &r->memory, &ndn) != LUMEN_OK)
		return fail(line, err, errlen, "expected a DN");
	free(r->nothing);
	r->nothing = strdup(dn);
	return r->nothing != NULL ? LUMEN_OK : LUMEN_ENOMEM;
}

static int apply_line(struct refint *r, const struct overlay_setup *setup,
		      const struct config_overlay_line *line, char *err, size_t errlen)
{
	const char *name = line->words[0];
	if (strcasecmp(name, "refint_attributes") == 0)
		return add_attributes(r, setup, line, err, errlen);
	if (strcasecmp(name, "refint_nothing") == 0)
		return set_nothing(r, setup, line, err, errlen);
	if (strcasecmp(name, "refint_modifiersName") == 0) {
		if (line->n_words != 2)
			return fail(line, err, errlen, "expected \"refint_modifiersName <DN>\"");
		return set_modifier(r, setup, line->words[1], line, err, errlen);
	}
	snprintf(err, errlen, "%s: overlay refint: unknown directive \"%s\"", line->origin, name);
	return LUMEN_EMALFORMED;
}

static void refint_destroy(void *state)
{
	struct refint *r = state;
	if (r == NULL)
		return;
	free(r->nothing);
	arena_free(&r->memory);
	free(r);
}

static int refint_create(const struct overlay_setup *setup, void **state, char *err,
			 size_t errlen)
{
	struct refint *r = calloc(1, sizeof(*r));
	if (r == NULL)
		return LUMEN_ENOMEM;
	arena_init(&r->memory, 64 * 1024);
	int rc = set_modifier(r, setup, REFINT_DEFAULT_MODIFIER, NULL, err, errlen);
	for (size_t i = 0; i < setup->overlay->n_lines && rc == LUMEN_OK; i++)
		rc = apply_line(r, setup, &setup->overlay->lines[i], err, errlen);
	if (rc == LUMEN_OK && r->n_attributes == 0) {
		snprintf(err, errlen, "%s: overlay refint: expected a \"refint_attributes\" line",
			 setup->overlay->origin);
		rc = LUMEN_EMALFORMED;
	}
	if (rc == LUMEN_ENOMEM)
		snprintf(err, errlen, "%s: overlay refint: out of memory", setup->overlay->origin);
	if (rc != LUMEN_OK) {
		refint_destroy(r);
		return rc;
	}
	*state = r;
	return LUMEN_OK;
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
	struct ber_view *old_ndns, *new_dns;
	size_t n, cap;
};

static int note_moved(void *ctx, const struct entry *e)
{
	struct moved *m = ctx;
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 16;
		struct ber_view *olds = arena_alloc(m->arena, cap * sizeof(*olds));
		struct ber_view *news = arena_alloc(m->arena, cap * sizeof(*news));
		if (olds == NULL || news == NULL)
			return LUMEN_ENOMEM;
		if (m->n > 0) {
			memcpy(olds, m->old_ndns, m->n * sizeof(*olds));
			memcpy(news, m->new_dns, m->n * sizeof(*news));
		}
		m->old_ndns = olds;
		m->new_dns = news;
		m->cap = cap;
	}
	/* below new_base: the same relative name below old_base */
	size_t relative = e->ndn.len - m->new_base.len;
	uint8_t *old = arena_alloc(m->arena, relative + m->old_base.len);
	uint8_t *now = arena_memdup(m->arena, e->dn.ptr, e->dn.len);
	if (old == NULL || now == NULL)
		return LUMEN_ENOMEM;
	memcpy(old, e->ndn.ptr, relative);
	memcpy(old + relative, m->old_base.ptr, m->old_base.len);
	m->old_ndns[m->n] = (struct ber_view){ old, relative + m->old_base.len };
	m->new_dns[m->n++] = (struct ber_view){ now, e->dn.len };
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
		rc = repair_all(r, txn, ops, arena, m.old_ndns[i], m.new_dns[i]);
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
	.create = refint_create,
	.destroy = refint_destroy,
	.on_write = refint_on_write,
};
