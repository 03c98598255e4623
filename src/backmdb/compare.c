/*
 * compare.c — the Compare operation and backend_fetch, both answered from
 * a pooled read snapshot and the entry cache (no allocation on a hit).
 *
 * Compare follows OpenLDAP: the asserted type's equality rule decides, and
 * values of subtypes count ((name=x) compares cn and sn); noSuchAttribute
 * only when the entry has no attribute of the type at all. The computed
 * attributes (entryDN, hasSubordinates, ...) compare through the same
 * provider filters use (virtual_attrs.c), as does the assertion control.
 */
#include "backend_internal.h"

#include <string.h>

#include "ldap_result_codes.h"

/* The target entry (handle held) or noSuchObject with matchedDN. */
static int find_entry(struct backend *be, struct backend_op *op, struct backend_reader *rd,
		      struct ber_view ndn, uint64_t *id_out, struct entry_cache_handle **handle,
		      const struct entry **e)
{
	struct dn2id_match match = { 0 };
	uint64_t id;

	int rc = dn2id_lookup(be->store, rd->reader.txn, ndn, &id, &match);
	if (rc == LUMEN_ENOTFOUND) {
		rc = backend_no_such_object(be, op, rd->reader.txn, &match);
		return rc == LUMEN_ENOTFOUND ? LUMEN_ENOTFOUND : rc;
	}
	if (rc == LUMEN_OK)
		rc = backend_entry_get(be, rd, id, op->arena, handle, e);
	if (rc != LUMEN_OK)
		return backend_fail(be, op, rc);
	*id_out = id;
	return LUMEN_OK;
}

/* Is one of a's values equal to the normalized assertion under rule? */
static bool attribute_has(const struct entry_attribute *a, const struct matching_rule *rule,
			  struct ber_view assertion, struct arena *arena)
{
	const struct matching_rule *own = a->desc.type->equality;
	if (own != NULL && own->normalize == rule->normalize)
		return entry_attribute_find_normalized(a, assertion) >= 0;
	for (size_t i = 0; i < a->n_values; i++) {
		struct ber_view form;
		if (rule->normalize(a->values[i].value.ptr, a->values[i].value.len, arena,
				    &form) != LUMEN_OK)
			continue;
		if (form.len == assertion.len && memcmp(form.ptr, assertion.ptr, form.len) == 0)
			return true;
	}
	return false;
}

/* A computed attribute's values, as the stored ones are tested. */
static void compare_virtual(const struct filter_virtual *virt, const struct entry *e,
			    const struct attribute_description *want, struct ber_view assertion,
			    struct arena *arena, bool *seen, bool *found)
{
	struct entry_value values[FILTER_VIRTUAL_MAX_VALUES];
	struct attribute_description have = { want->type, { NULL, 0 } };
	size_t n = 0;

	/* computed values carry no options; a failure means "no value" */
	if (!attribute_description_matches(want, &have) ||
	    virt->values(virt->ctx, want->type, e, arena, values, FILTER_VIRTUAL_MAX_VALUES,
			 &n) != LUMEN_OK)
		return;
	struct entry_attribute a = { .desc = have, .values = values, .n_values = n };
	*seen = n > 0;
	*found = *seen && attribute_has(&a, want->type->equality, assertion, arena);
}

static void compare_entry(struct backend_op *op, const struct entry *e,
			  const struct attribute_description *want, struct ber_view value,
			  const struct filter_virtual *virt)
{
	const struct matching_rule *rule = want->type->equality;
	struct ber_view assertion;
	bool seen = false, found = false;

	if (rule == NULL) {
		backend_result(op, LDAP_INAPPROPRIATE_MATCHING, "no equality matching rule");
		return;
	}
	if (rule->normalize(value.ptr, value.len, op->arena, &assertion) != LUMEN_OK) {
		backend_result(op, LDAP_INVALID_ATTRIBUTE_SYNTAX, "value cannot be compared");
		return;
	}
	if (virt != NULL)
		compare_virtual(virt, e, want, assertion, op->arena, &seen, &found);
	for (size_t i = 0; virt == NULL && i < e->n_attributes && !found; i++) {
		const struct entry_attribute *a = &e->attributes[i];
		if (!attribute_description_matches(want, &a->desc))
			continue;
		seen = true;
		found = attribute_has(a, rule, assertion, op->arena);
	}
	if (!seen)
		backend_result(op, LDAP_NO_SUCH_ATTRIBUTE, NULL);
	else
		backend_result(op, found ? LDAP_COMPARE_TRUE : LDAP_COMPARE_FALSE, NULL);
}

int backend_compare(struct backend *be, struct backend_op *op, struct ber_view ndn,
		    struct ber_view attribute, struct ber_view value)
{
	struct attribute_description want;
	struct backend_reader *rd = NULL;
	struct entry_cache_handle *handle = NULL;
	struct backend_virtual assertion_virt, value_virt;
	const struct entry *e;
	uint64_t id;

	op->matched_dn = (struct ber_view){ NULL, 0 };
	int rc = attribute_description_parse(be->schema, (const char *)attribute.ptr,
					     attribute.len, &want);
	if (rc != LUMEN_OK) {
		backend_result(op, LDAP_UNDEFINED_ATTRIBUTE_TYPE, NULL);
		return LUMEN_OK;
	}
	rc = backend_reader_acquire(be, &rd);
	if (rc != LUMEN_OK)
		return backend_fail(be, op, rc);
	rc = find_entry(be, op, rd, ndn, &id, &handle, &e);
	if (rc == LUMEN_OK) {
		const struct filter_virtual *av = backend_virtual_for_filter(
			&assertion_virt, be, rd, op->assertion, op->arena);
		const struct filter_virtual *vv = backend_virtual_for_type(
			&value_virt, be, rd, want.type, op->arena);
		assertion_virt.id = value_virt.id = id;
		if (op->assertion != NULL &&
		    filter_evaluate_virtual(op->assertion, e, av) != FILTER_TRUE)
			backend_result(op, LDAP_ASSERTION_FAILED, NULL);
		else
			compare_entry(op, e, &want, value, vv);
	}
	backend_entry_put(be, handle);
	backend_reader_release(be, rd);
	return rc == LUMEN_ENOTFOUND ? LUMEN_OK : rc;
}

int backend_fetch(struct backend *be, struct backend_op *op, struct ber_view ndn,
		  backend_entry_fn fn, void *ctx)
{
	struct backend_reader *rd = NULL;
	struct entry_cache_handle *handle = NULL;
	const struct entry *e;
	uint64_t children = 0;

	op->matched_dn = (struct ber_view){ NULL, 0 };
	int rc = backend_reader_acquire(be, &rd);
	if (rc != LUMEN_OK)
		return backend_fail(be, op, rc);
	struct backend_entry_info info = { 0 };
	rc = find_entry(be, op, rd, ndn, &info.id, &handle, &e);
	if (rc == LUMEN_OK) {
		backend_result(op, LDAP_SUCCESS, NULL);
		info.dn = e->dn;
		info.ndn = e->ndn;
		if (dn2id_counts(be->store, rd->reader.txn, info.id, &children, NULL) == LUMEN_OK) {
			info.has_counts = true;
			info.num_subordinates = children;
			info.has_subordinates = children > 0;
		}
		rc = fn(ctx, e, &info);
	}
	backend_entry_put(be, handle);
	backend_reader_release(be, rd);
	return rc == LUMEN_ENOTFOUND ? LUMEN_OK : rc;
}
