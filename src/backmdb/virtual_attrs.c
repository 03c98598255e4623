/*
 * virtual_attrs.c — the computed operational attributes (entryDN,
 * subschemaSubentry, hasSubordinates, numSubordinates) as a filter
 * provider (filter.h, struct filter_virtual), so that filters, the
 * assertion control and compare see the values a search returns for "+"
 * (the server computes those while encoding, entry_send.h).
 *
 * Types are recognised by OID, and only among operational types, so a
 * filter on user attributes costs one flag test per item and no provider
 * is set up at all. Values are produced per entry into the caller's
 * scratch arena, normalized by the type's equality rule exactly as the
 * filter compiler normalized the assertion (for entryDN that is
 * distinguishedNameMatch, not the schema-aware dn_normalize).
 */
#include "backend_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "subschema.h"

enum virtual_kind {
	VIRTUAL_NONE,
	VIRTUAL_ENTRY_DN,
	VIRTUAL_SUBSCHEMA_SUBENTRY,
	VIRTUAL_HAS_SUBORDINATES,
	VIRTUAL_NUM_SUBORDINATES,
};

static const struct {
	const char *oid;
	enum virtual_kind kind;
} virtual_oids[] = {
	{ "1.3.6.1.1.20", VIRTUAL_ENTRY_DN },
	{ "2.5.18.10", VIRTUAL_SUBSCHEMA_SUBENTRY },
	{ "2.5.18.9", VIRTUAL_HAS_SUBORDINATES },
	{ "1.3.6.1.4.1.453.16.2.103", VIRTUAL_NUM_SUBORDINATES },
};

static enum virtual_kind virtual_kind(const struct attribute_type *type)
{
	if (type == NULL || type->oid == NULL || !attribute_type_is_operational(type))
		return VIRTUAL_NONE;
	for (size_t i = 0; i < sizeof(virtual_oids) / sizeof(virtual_oids[0]); i++)
		if (strcmp(type->oid, virtual_oids[i].oid) == 0)
			return virtual_oids[i].kind;
	return VIRTUAL_NONE;
}

bool backend_virtual_type(const struct attribute_type *type)
{
	return virtual_kind(type) != VIRTUAL_NONE;
}

static struct ber_view text_view(const char *s)
{
	return (struct ber_view){ (const uint8_t *)s, strlen(s) };
}

/* The raw value of one computed attribute for entry bv->id. */
static int raw_value(struct backend_virtual *bv, enum virtual_kind kind, const struct entry *e,
		     struct arena *arena, struct ber_view *out)
{
	uint64_t children = 0;
	char number[24];

	switch (kind) {
	case VIRTUAL_ENTRY_DN:
		*out = e->dn;
		return LUMEN_OK;
	case VIRTUAL_SUBSCHEMA_SUBENTRY:
		*out = text_view(SUBSCHEMA_DN);
		return LUMEN_OK;
	default:
		break;
	}
	int rc = dn2id_counts(bv->be->store, bv->rd->reader.txn, bv->id, &children, NULL);
	if (rc != LUMEN_OK)
		return rc;
	if (kind == VIRTUAL_HAS_SUBORDINATES) {
		*out = text_view(children > 0 ? "TRUE" : "FALSE");
		return LUMEN_OK;
	}
	int len = snprintf(number, sizeof(number), "%" PRIu64, children);
	out->ptr = arena_memdup(arena, number, (size_t)len);
	out->len = (size_t)len;
	return out->ptr != NULL ? LUMEN_OK : LUMEN_ENOMEM;
}

/* filter_virtual.values: each computed type has exactly one value. */
static int virtual_values(void *ctx, const struct attribute_type *type, const struct entry *e,
			  struct arena *arena, struct entry_value *out, size_t cap, size_t *n)
{
	struct backend_virtual *bv = ctx;
	struct ber_view raw, normalized = { NULL, 0 };

	*n = 0;
	if (cap == 0)
		return LUMEN_EINVAL;
	int rc = raw_value(bv, virtual_kind(type), e, arena, &raw);
	if (rc == LUMEN_OK && type->equality != NULL)
		rc = type->equality->normalize(raw.ptr, raw.len, arena, &normalized);
	if (rc != LUMEN_OK)
		return rc;
	out[0] = (struct entry_value){ raw, normalized };
	*n = 1;
	return LUMEN_OK;
}

static void add_type(struct backend_virtual *bv, const struct attribute_type *type)
{
	for (size_t i = 0; i < bv->provider.n_types; i++)
		if (bv->types[i] == type)
			return;
	if (bv->provider.n_types < BACKEND_VIRTUAL_TYPES)
		bv->types[bv->provider.n_types++] = type;
}

static void collect_types(struct backend_virtual *bv, const struct filter_node *node)
{
	for (; node != NULL; node = node->next) {
		switch (node->type) {
		case LDAP_FILTER_AND:
		case LDAP_FILTER_OR:
		case LDAP_FILTER_NOT:
			collect_types(bv, node->children);
			break;
		default:
			if (backend_virtual_type(node->desc.type))
				add_type(bv, node->desc.type);
			break;
		}
	}
}

static void virtual_init(struct backend_virtual *bv, struct backend *be,
			 struct backend_reader *rd, struct arena *arena)
{
	memset(bv, 0, sizeof(*bv));
	bv->be = be;
	bv->rd = rd;
	bv->provider.types = bv->types;
	bv->provider.values = virtual_values;
	bv->provider.ctx = bv;
	bv->provider.arena = arena;
}

const struct filter_virtual *backend_virtual_for_filter(struct backend_virtual *bv,
							struct backend *be,
							struct backend_reader *rd,
							const struct filter *f,
							struct arena *arena)
{
	virtual_init(bv, be, rd, arena);
	if (f != NULL)
		collect_types(bv, f->root);
	return bv->provider.n_types > 0 ? &bv->provider : NULL;
}

const struct filter_virtual *backend_virtual_for_type(struct backend_virtual *bv,
						      struct backend *be,
						      struct backend_reader *rd,
						      const struct attribute_type *type,
						      struct arena *arena)
{
	virtual_init(bv, be, rd, arena);
	if (backend_virtual_type(type))
		add_type(bv, type);
	return bv->provider.n_types > 0 ? &bv->provider : NULL;
}
