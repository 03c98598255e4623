/*
 * index_keys.c — which index keys an entry produces in one index table.
 *
 * An index on type T holds the values of T and of every subtype of T
 * (an index on `name` serves (name=x), which also matches cn and sn), each
 * normalized by T's own rules so that the keys agree with the filter
 * compiler's normalization of assertions. objectClass equality keys are
 * the OIDs of every class the entry belongs to, superclasses included, so
 * (objectClass=person) finds inetOrgPerson entries with one lookup.
 */
#include "backend_internal.h"

#include <string.h>
#include <strings.h>

#include "matching.h"

/* A growable key array in arena memory. */
struct key_builder {
	struct arena *arena;
	struct index_key *keys;
	size_t n, cap;
};

static int reserve(struct key_builder *b, size_t more)
{
	if (b->n + more <= b->cap)
		return LUMEN_OK;
	struct index_key *keys = arena_reserve(b->arena, b->keys, b->n, &b->cap, b->n + more,
					       sizeof(*keys), 32);
	if (keys == NULL)
		return LUMEN_ENOMEM;
	b->keys = keys;
	return LUMEN_OK;
}

static int push(struct key_builder *b, enum index_kind kind, struct ber_view v)
{
	int rc = reserve(b, 1);
	if (rc == LUMEN_OK)
		index_key_make(kind, v.ptr, v.len, &b->keys[b->n++]);
	return rc;
}

bool index_approx_uses_key(const struct attribute_type *type)
{
	const struct matching_rule *eq = type->equality;
	return eq != NULL && eq->name != NULL && strncasecmp(eq->name, "case", 4) == 0;
}

/* The value under rule's normalizer, reusing the stored form when it is the same. */
static int normalize_as(const struct entry_attribute *a, const struct entry_value *v,
			const struct matching_rule *rule, struct arena *arena,
			struct ber_view *out)
{
	const struct matching_rule *own = a->desc.type->equality;
	if (own != NULL && own->normalize == rule->normalize) {
		*out = v->normalized;
		return v->normalized.ptr != NULL ? LUMEN_OK : LUMEN_EMALFORMED;
	}
	return rule->normalize(v->value.ptr, v->value.len, arena, out);
}

static int object_class_keys(const struct backend *be, const struct entry *e,
			     struct key_builder *b)
{
	for (size_t w = 0; w < e->n_class_words; w++) {
		for (unsigned bit = 0; bit < 64; bit++) {
			if (!(e->class_bits[w] & ((uint64_t)1 << bit)))
				continue;
			const struct object_class *oc =
				schema_object_class_at(be->schema, w * 64 + bit);
			if (oc == NULL)
				continue;
			struct ber_view oid = { (const uint8_t *)oc->oid, strlen(oc->oid) };
			int rc = push(b, INDEX_EQUALITY, oid);
			if (rc != LUMEN_OK)
				return rc;
		}
	}
	return LUMEN_OK;
}

static int substring_keys(struct key_builder *b, struct ber_view v)
{
	size_t n = index_substring_key_count(v.len);
	int rc = reserve(b, n);
	if (rc != LUMEN_OK)
		return rc;
	b->n += index_substring_keys(v.ptr, v.len, b->keys + b->n, n);
	return LUMEN_OK;
}

/* Keys of one value; a value the rules cannot normalize matches nothing. */
static int value_keys(const struct backend_index *ix, const struct entry_attribute *a,
		      const struct entry_value *v, struct key_builder *b)
{
	const struct attribute_type *t = ix->type;
	struct ber_view form;
	int rc = LUMEN_OK;

	if ((ix->kinds & BACKEND_INDEX_EQUALITY) && t->equality != NULL &&
	    normalize_as(a, v, t->equality, b->arena, &form) == LUMEN_OK)
		rc = push(b, INDEX_EQUALITY, form);
	if (rc == LUMEN_OK && (ix->kinds & BACKEND_INDEX_SUBSTRING) && t->substr != NULL &&
	    normalize_as(a, v, t->substr, b->arena, &form) == LUMEN_OK)
		rc = substring_keys(b, form);
	if (rc == LUMEN_OK && (ix->kinds & BACKEND_INDEX_APPROX) && index_approx_uses_key(t)) {
		int krc = matching_approx_key(v->value.ptr, v->value.len, b->arena, &form);
		struct ber_view code;
		size_t pos = 0;
		/* one key per word, as the filter asks for each of its words */
		while (krc == LUMEN_OK && rc == LUMEN_OK &&
		       matching_approx_next_code(form, &pos, &code))
			rc = push(b, INDEX_APPROX, code);
		if (krc == LUMEN_ENOMEM)
			rc = krc;
	}
	return rc;
}

int index_keys_of_entry(const struct backend *be, const struct backend_index *ix,
			const struct entry *e, struct arena *arena, struct index_key_set *out)
{
	struct key_builder b = { .arena = arena };
	bool present = false;
	int rc = LUMEN_OK;

	out->keys = NULL;
	out->n = 0;
	if (e == NULL)
		return LUMEN_OK;
	bool is_object_class = ix->type == be->ops.object_class.type;
	for (size_t i = 0; i < e->n_attributes && rc == LUMEN_OK; i++) {
		const struct entry_attribute *a = &e->attributes[i];
		if (a->desc.type == NULL || !attribute_type_is_subtype(a->desc.type, ix->type))
			continue;
		present = true;
		if (is_object_class)
			continue;   /* its equality keys come from the class set below */
		for (size_t j = 0; j < a->n_values && rc == LUMEN_OK; j++)
			rc = value_keys(ix, a, &a->values[j], &b);
	}
	if (rc == LUMEN_OK && present && (ix->kinds & BACKEND_INDEX_PRESENT))
		rc = push(&b, INDEX_PRESENCE, (struct ber_view){ NULL, 0 });
	if (rc == LUMEN_OK && present && is_object_class && (ix->kinds & BACKEND_INDEX_EQUALITY))
		rc = object_class_keys(be, e, &b);
	if (rc != LUMEN_OK)
		return rc;
	out->keys = b.keys;
	out->n = b.n ? index_keys_sort_unique(b.keys, b.n) : 0;
	return LUMEN_OK;
}
