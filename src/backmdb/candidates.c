/*
 * candidates.c — from a compiled filter to a candidate ID list.
 *
 * AND intersects its children, OR unions them; NOT, ordering, extensible,
 * items on computed attributes (virtual_attrs.c: nothing stored, so
 * nothing indexed, even if slapd.conf names them) and every item on an
 * attribute without the needed index kind give "all"
 * (the range [1, IDL_ID_MAX]), which the search turns into a walk of its
 * scope. An item that can never be TRUE (unknown type or value) gives the
 * empty list. The result is always a superset: search re-tests each
 * candidate against the whole filter.
 *
 * Memory: temporaries are the reader's scratch ID lists, one per filter
 * level (deeper filters than the scratch holds fall back to "all").
 */
#include "backend_internal.h"

#include <string.h>

#include "matching.h"

struct candidates_walk {
	struct backend *be;
	struct backend_reader *rd;
	struct arena *arena;
	struct candidates_note *note;
	uint64_t version;
};

static bool is_all(const struct idl *idl)
{
	return idl->is_range && idl->lo <= 1 && idl->hi >= IDL_ID_MAX;
}

static void note_unindexed(struct candidates_walk *w, const struct filter_node *node)
{
	w->note->unindexed = true;
	if (w->note->attribute == NULL && node->desc.type != NULL)
		w->note->attribute = attribute_type_name(node->desc.type);
}

/* One key's IDs, through the IDL cache. */
static int read_key(struct candidates_walk *w, const struct backend_index *ix,
		    enum index_kind kind, struct ber_view value, struct idl *out)
{
	struct index_key key;

	index_key_make(kind, value.ptr, value.len, &key);
	if (idl_cache_get(w->be->idl_cache, ix->table, &key, out) == LUMEN_OK)
		return LUMEN_OK;
	MDB_cursor *kept = mdb_reader_cursor(&w->rd->reader, ix->dbi);
	int rc = kept != NULL ? index_read_cursor(kept, &key, out)
			      : index_read(w->rd->reader.txn, ix->dbi, &key, out);
	if (rc == LUMEN_OK && idl_cache_put(w->be->idl_cache, ix->table, &key, out,
					    w->version) == LUMEN_ENOMEM)
		return LUMEN_OK;   /* not cached is only slower */
	return rc;
}

static int equality_candidates(struct candidates_walk *w, const struct filter_node *node,
			       const struct backend_index *ix, struct idl *out)
{
	if (node->desc.type == w->be->ops.object_class.type) {
		if (node->object_class == NULL) {
			idl_clear(out);   /* an unknown class names no entry */
			return LUMEN_OK;
		}
		const char *oid = node->object_class->oid;
		return read_key(w, ix, INDEX_EQUALITY,
				(struct ber_view){ (const uint8_t *)oid, strlen(oid) }, out);
	}
	return read_key(w, ix, INDEX_EQUALITY, node->value, out);
}

static int substring_candidates(struct candidates_walk *w, const struct filter_node *node,
				const struct backend_index *ix, struct idl *out,
				struct idl *scratch)
{
	struct index_substring assertion = {
		.initial = node->has_initial ? node->initial : (struct ber_view){ NULL, 0 },
		.any = node->any,
		.n_any = node->n_any,
		.final = node->has_final ? node->final : (struct ber_view){ NULL, 0 },
	};
	MDB_cursor *kept = mdb_reader_cursor(&w->rd->reader, ix->dbi);
	int rc = kept != NULL
			 ? index_read_substring_cursor(kept, &assertion, out, scratch)
			 : index_read_substring(w->rd->reader.txn, ix->dbi, &assertion, out, scratch);
	if (rc == LUMEN_EUNSUPPORTED) {
		idl_set_all(out);
		return LUMEN_OK;
	}
	return rc;
}

/* Entries holding every word of the assertion (the key per word code). */
static int approx_candidates(struct candidates_walk *w, const struct filter_node *node,
			     const struct backend_index *ix, struct idl *out, struct idl *scratch)
{
	struct ber_view code;
	size_t pos = 0;
	bool first = true;

	idl_clear(out);   /* no word: nothing matches */
	while (matching_approx_next_code(node->value, &pos, &code)) {
		int rc = read_key(w, ix, INDEX_APPROX, code, first ? out : scratch);
		if (rc != LUMEN_OK)
			return rc;
		if (!first)
			idl_intersect(out, scratch);
		first = false;
		if (idl_is_empty(out))
			break;
	}
	return LUMEN_OK;
}

/* The index kind an item needs, or 0 when no index can serve it. */
static unsigned needed_kind(const struct filter_node *node)
{
	switch (node->type) {
	case LDAP_FILTER_EQUALITY:
		return BACKEND_INDEX_EQUALITY;
	case LDAP_FILTER_PRESENT:
		return BACKEND_INDEX_PRESENT;
	case LDAP_FILTER_SUBSTRINGS:
		return BACKEND_INDEX_SUBSTRING;
	case LDAP_FILTER_APPROX:
		/* approx on a non-string type is equality (filter.h) */
		return node->uses_stored_normalized || !index_approx_uses_key(node->desc.type)
			? BACKEND_INDEX_EQUALITY : BACKEND_INDEX_APPROX;
	default:
		return 0;
	}
}

static int item_candidates(struct candidates_walk *w, const struct filter_node *node,
			   struct idl *out, struct idl *scratch)
{
	const struct attribute_type *type = node->desc.type;

	if (node->undefined) {
		idl_clear(out);
		return LUMEN_OK;
	}
	if (node->type == LDAP_FILTER_PRESENT && type == w->be->ops.object_class.type) {
		idl_set_all(out);   /* every entry: the scope itself */
		return LUMEN_OK;
	}
	unsigned kind = type != NULL ? needed_kind(node) : 0;
	const struct backend_index *ix = backend_virtual_type(type) ? NULL
					 : backend_index_of(w->be, type);
	if (kind == 0 || ix == NULL || !(ix->kinds & kind)) {
		if (kind != 0)
			note_unindexed(w, node);
		idl_set_all(out);
		return LUMEN_OK;
	}
	switch (kind) {
	case BACKEND_INDEX_PRESENT:
		return read_key(w, ix, INDEX_PRESENCE, (struct ber_view){ NULL, 0 }, out);
	case BACKEND_INDEX_SUBSTRING:
		return substring_candidates(w, node, ix, out, scratch);
	case BACKEND_INDEX_APPROX:
		return approx_candidates(w, node, ix, out, scratch);
	default:
		return equality_candidates(w, node, ix, out);
	}
}

static int node_candidates(struct candidates_walk *w, const struct filter_node *node,
			   struct idl *out, size_t level);

static int and_candidates(struct candidates_walk *w, const struct filter_node *node,
			  struct idl *out, struct idl *tmp, size_t level)
{
	idl_set_all(out);
	for (const struct filter_node *c = node->children; c != NULL; c = c->next) {
		int rc = node_candidates(w, c, tmp, level + 1);
		if (rc != LUMEN_OK)
			return rc;
		if (!is_all(tmp))
			idl_intersect(out, tmp);
		if (idl_is_empty(out))
			break;
	}
	return LUMEN_OK;
}

static int or_candidates(struct candidates_walk *w, const struct filter_node *node,
			 struct idl *out, struct idl *tmp, size_t level)
{
	idl_clear(out);
	for (const struct filter_node *c = node->children; c != NULL; c = c->next) {
		int rc = node_candidates(w, c, tmp, level + 1);
		if (rc != LUMEN_OK)
			return rc;
		idl_union(out, tmp);
		if (is_all(out))
			break;
	}
	return LUMEN_OK;
}

static int node_candidates(struct candidates_walk *w, const struct filter_node *node,
			   struct idl *out, size_t level)
{
	size_t slot = BACKEND_SCRATCH_FIRST_FREE + level;

	if (slot >= BACKEND_SCRATCH_IDLS || node->type == LDAP_FILTER_NOT) {
		idl_set_all(out);
		return LUMEN_OK;
	}
	struct idl *tmp = &w->rd->scratch[slot];
	switch (node->type) {
	case LDAP_FILTER_AND:
		return and_candidates(w, node, out, tmp, level);
	case LDAP_FILTER_OR:
		return or_candidates(w, node, out, tmp, level);
	default:
		return item_candidates(w, node, out, tmp);
	}
}

int candidates_compute(struct backend *be, struct backend_reader *rd, const struct filter *f,
		       struct arena *arena, struct idl *out, struct candidates_note *note)
{
	struct candidates_walk w = {
		.be = be, .rd = rd, .arena = arena, .note = note,
		.version = mdb_txn_id(rd->reader.txn),
	};

	note->unindexed = false;
	note->attribute = NULL;
	if (f == NULL || f->root == NULL) {
		idl_set_all(out);
		return LUMEN_OK;
	}
	return node_candidates(&w, f->root, out, 0);
}

int candidates_object_class(struct backend *be, struct backend_reader *rd,
			    const struct object_class *oc, struct idl *out)
{
	const struct backend_index *ix = backend_index_of(be, be->ops.object_class.type);
	struct candidates_walk w = {
		.be = be, .rd = rd, .version = mdb_txn_id(rd->reader.txn),
	};

	if (ix == NULL || !(ix->kinds & BACKEND_INDEX_EQUALITY)) {
		idl_set_all(out);
		return LUMEN_OK;
	}
	return read_key(&w, ix, INDEX_EQUALITY,
			(struct ber_view){ (const uint8_t *)oc->oid, strlen(oc->oid) }, out);
}
