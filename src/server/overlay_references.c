/*
 * overlay_references.c — what the overlays that keep DN references
 * (refint, memberof) share (overlay.h, "DN references"): collecting the
 * entries that hold a value, and rewriting or removing a DN value in all
 * of them inside the write transaction.
 */
#include "overlay.h"

#include <string.h>

#include "entry.h"
#include "log.h"
#include "lumen_error.h"

static int copy_view(struct arena *arena, struct ber_view in, struct ber_view *out)
{
	uint8_t *bytes = arena_memdup(arena, in.ptr, in.len);
	if (bytes == NULL)
		return LUMEN_ENOMEM;
	*out = (struct ber_view){ bytes, in.len };
	return LUMEN_OK;
}

int overlay_collect(void *ctx, const struct entry *e)
{
	struct overlay_dn_list *l = ctx;
	if (l->only != NULL && !entry_is_instance_of(e, l->only))
		return LUMEN_OK;
	struct overlay_dn *dns = arena_reserve(l->arena, l->dns, l->n, &l->cap, l->n + 1,
					       sizeof(*dns), 16);
	if (dns == NULL)
		return LUMEN_ENOMEM;
	l->dns = dns;
	int rc = copy_view(l->arena, e->dn, &l->dns[l->n].dn);
	if (rc == LUMEN_OK)
		rc = copy_view(l->arena, e->ndn, &l->dns[l->n].ndn);
	if (rc == LUMEN_OK)
		l->n++;
	return rc;
}

static int add_text(struct entry *e, const struct attribute_description *desc, const char *text,
		    size_t len)
{
	struct ber_view value = { (const uint8_t *)text, len };
	int rc = entry_add_values(e, desc, &value, 1, NULL);
	return rc == LUMEN_EEXIST ? LUMEN_OK : rc;   /* already there: nothing to add */
}

/* Rewrites one attribute (every option variant of the type is its own). */
static int rewrite_attribute(const struct overlay_rewrite *rw, struct entry *e, size_t index)
{
	const struct entry_attribute *a = &e->attributes[index];
	long at = entry_attribute_find_normalized(a, rw->old_ndn);
	if (at < 0)
		return LUMEN_OK;
	struct attribute_description desc = a->desc;
	bool last = a->n_values == 1;
	struct ber_view old = a->values[at].value;
	int rc = entry_delete_values(e, &desc, &old, 1, NULL);
	if (rc == LUMEN_OK && rw->new_dn.len > 0)
		return add_text(e, &desc, (const char *)rw->new_dn.ptr, rw->new_dn.len);
	if (rc == LUMEN_OK && last && rw->nothing != NULL)
		return add_text(e, &desc, rw->nothing, strlen(rw->nothing));
	return rc;
}

static int rewrite_entry(void *ctx, struct entry *e)
{
	const struct overlay_rewrite *rw = ctx;
	int rc = LUMEN_OK;
	/* deleting may remove an attribute: walk from the end */
	for (size_t i = e->n_attributes; i-- > 0 && rc == LUMEN_OK;)
		if (i < e->n_attributes && e->attributes[i].desc.type == rw->type)
			rc = rewrite_attribute(rw, e, i);
	return rc;
}

int overlay_rewrite_references(struct database_txn *txn, const struct database_txn_ops *ops,
			       struct arena *arena, const struct overlay_rewrite *rw)
{
	struct overlay_dn_list referrers = { .arena = arena, .only = rw->only };
	int rc = ops->find_equal(txn, rw->type, rw->old_ndn, overlay_collect, &referrers);
	for (size_t i = 0; i < referrers.n && rc == LUMEN_OK; i++) {
		struct ber_view ndn = referrers.dns[i].ndn;
		rc = ops->edit(txn, ndn, rw->modifier_ndn, rewrite_entry, (void *)rw);
		if (rc == LUMEN_ESCHEMA) {
			log_printf(0, "%s: \"%.*s\" keeps its %s value \"%.*s\": removing it "
				   "would break the schema", rw->who, (int)ndn.len,
				   (const char *)ndn.ptr, attribute_type_name(rw->type),
				   (int)rw->old_ndn.len, (const char *)rw->old_ndn.ptr);
			rc = LUMEN_OK;
		}
	}
	return rc;
}
