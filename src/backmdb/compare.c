/*
 * compare.c — the Compare operation, backend_fetch and backend_fetch_ids,
 * all answered from a pooled read snapshot and the entry cache (no
 * allocation on a hit).
 *
 * Compare follows OpenLDAP: the asserted type's equality rule decides, and
 * values of subtypes count ((name=x) compares cn and sn), each only if the
 * requester may compare that subtype (op->compare_access); noSuchAttribute
 * only when the entry has no attribute of the type at all. The computed
 * attributes (entryDN, hasSubordinates, ...) compare through the same
 * provider filters use (virtual_attrs.c), as does the assertion control.
 */
#include "backend_internal.h"

#include <string.h>

#include "ldap_result_codes.h"

/*
 * The target entry (handle held) or noSuchObject with matchedDN; with
 * referrals (a Compare, not the server's own reads), a referral when the
 * target is at or below a referral object (BACKEND_ANSWERED).
 */
static int find_entry(struct backend *be, struct backend_op *op, struct backend_reader *rd,
		      struct ber_view ndn, bool referrals, const struct entry_selection *only,
		      uint64_t *id_out, struct entry_cache_handle **handle,
		      const struct entry **e)
{
	struct dn2id_match match = { 0 };
	uint64_t id = 0;

	int rc = dn2id_lookup_snapshot(be->store, rd->reader.txn, &rd->reader, ndn, &id, &match);
	if (referrals && (rc == LUMEN_OK || rc == LUMEN_ENOTFOUND)) {
		int answered = referral_check_target(be, op, rd->reader.txn,
						     rc == LUMEN_OK ? id : 0, &match, ndn);
		if (answered != LUMEN_OK)
			return answered == BACKEND_ANSWERED ? LUMEN_ENOTFOUND
							    : backend_fail(be, op, answered);
	}
	if (rc == LUMEN_ENOTFOUND) {
		rc = backend_no_such_object(be, op, rd->reader.txn, &match);
		return rc == LUMEN_ENOTFOUND ? LUMEN_ENOTFOUND : rc;
	}
	if (rc == LUMEN_OK)
		rc = backend_entry_get_selected(be, rd, id, only, op->arena, handle, e);
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

/* What a Compare found so far. */
struct compare_state {
	bool seen;       /* an attribute of the type exists */
	bool found;      /* an allowed value matched */
	bool hidden;     /* an attribute of the type may not be compared */
};

static bool may_compare(const struct backend_op *op, const struct attribute_type *type)
{
	const struct filter_access *acc = op->compare_access;
	return acc == NULL || acc->may_test(acc->ctx, type);
}

/* A computed attribute's values, as the stored ones are tested. */
static void compare_virtual(const struct backend_op *op, const struct filter_virtual *virt,
			    const struct entry *e, const struct attribute_description *want,
			    struct ber_view assertion, struct compare_state *cs)
{
	struct entry_value values[FILTER_VIRTUAL_MAX_VALUES];
	struct attribute_description have = { want->type, { NULL, 0 } };
	size_t n = 0;

	/* computed values carry no options; a failure means "no value" */
	if (!attribute_description_matches(want, &have) ||
	    virt->values(virt->ctx, want->type, e, op->arena, values, FILTER_VIRTUAL_MAX_VALUES,
			 &n) != LUMEN_OK || n == 0)
		return;
	cs->seen = true;
	if (!may_compare(op, want->type)) {
		cs->hidden = true;
		return;
	}
	struct entry_attribute a = { .desc = have, .values = values, .n_values = n };
	cs->found = attribute_has(&a, want->type->equality, assertion, op->arena);
}

/* The stored attributes of the type and its subtypes, each under its own access. */
static void compare_stored(const struct backend_op *op, const struct entry *e,
			   const struct attribute_description *want, struct ber_view assertion,
			   struct compare_state *cs)
{
	for (size_t i = 0; i < e->n_attributes && !cs->found; i++) {
		const struct entry_attribute *a = &e->attributes[i];
		if (!attribute_description_matches(want, &a->desc))
			continue;
		cs->seen = true;
		if (!may_compare(op, a->desc.type)) {
			cs->hidden = true;
			continue;
		}
		cs->found = attribute_has(a, want->type->equality, assertion, op->arena);
	}
}

/*
 * As OpenLDAP: a value that matches answers compareTrue; otherwise an
 * attribute the requester may not compare makes the answer
 * insufficientAccessRights whatever its values, so that it reveals nothing.
 */
static void compare_entry(struct backend_op *op, const struct entry *e,
			  const struct attribute_description *want, struct ber_view value,
			  const struct filter_virtual *virt)
{
	const struct matching_rule *rule = want->type->equality;
	const struct filter_access *acc = op->compare_access;
	struct compare_state cs = { false, false, false };
	struct ber_view assertion;

	if (rule == NULL) {
		backend_result(op, LDAP_INAPPROPRIATE_MATCHING, "no equality matching rule");
		return;
	}
	if (rule->normalize(value.ptr, value.len, op->arena, &assertion) != LUMEN_OK) {
		backend_result(op, LDAP_INVALID_ATTRIBUTE_SYNTAX, "value cannot be compared");
		return;
	}
	if (acc != NULL && acc->begin != NULL && !acc->begin(acc->ctx, e))
		cs.hidden = true;
	else if (virt != NULL)
		compare_virtual(op, virt, e, want, assertion, &cs);
	else
		compare_stored(op, e, want, assertion, &cs);
	if (cs.found)
		backend_result(op, LDAP_COMPARE_TRUE, NULL);
	else if (cs.hidden)
		backend_result(op, LDAP_INSUFFICIENT_ACCESS_RIGHTS, NULL);
	else
		backend_result(op, cs.seen ? LDAP_COMPARE_FALSE : LDAP_NO_SUCH_ATTRIBUTE, NULL);
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
	/* The assertion may test any attribute; a computed value reads none. */
	const struct entry_selection *only = op->fetch_only;
	if (op->assertion != NULL || only == NULL || only->n_types != 1 ||
	    only->types[0] != want.type)
		only = NULL;
	rc = find_entry(be, op, rd, ndn, true, only, &id, &handle, &e);
	if (rc == LUMEN_OK) {
		const struct filter_virtual *av = backend_virtual_for_filter(
			&assertion_virt, be, rd, op->assertion, op->arena);
		const struct filter_virtual *vv = backend_virtual_for_type(
			&value_virt, be, rd, want.type, op->arena);
		assertion_virt.id = value_virt.id = id;
		bool holds = true;
		if (op->assertion != NULL)
			rc = backend_filter_matches(op, op->assertion, e, av, op->arena, &holds);
		if (rc == LUMEN_ENOMEM)
			rc = backend_filter_exhausted(op) == LUMEN_ELIMIT ? LUMEN_OK : rc;
		else if (!holds)
			backend_result(op, LDAP_ASSERTION_FAILED, NULL);
		else
			compare_entry(op, e, &want, value, vv);
	}
	backend_entry_put(be, handle);
	backend_reader_release(be, rd);
	return rc == LUMEN_ENOTFOUND ? LUMEN_OK : rc;
}

/* The entry's subordinate counts into info; an error is the fetch's. */
static int with_counts(struct backend *be, struct backend_reader *rd,
		       struct backend_entry_info *info)
{
	uint64_t children = 0;
	int rc = dn2id_counts(be->store, rd->reader.txn, info->id, &children, NULL);
	if (rc != LUMEN_OK)
		return rc;
	info->has_counts = true;
	info->num_subordinates = children;
	info->has_subordinates = children > 0;
	return LUMEN_OK;
}

int backend_fetch(struct backend *be, struct backend_op *op, struct ber_view ndn,
		  backend_entry_fn fn, void *ctx)
{
	struct backend_reader *rd = NULL;
	struct entry_cache_handle *handle = NULL;
	const struct entry *e;

	op->matched_dn = (struct ber_view){ NULL, 0 };
	int rc = backend_reader_acquire(be, &rd);
	if (rc != LUMEN_OK)
		return backend_fail(be, op, rc);
	struct backend_entry_info info = { 0 };
	rc = find_entry(be, op, rd, ndn, false, op->fetch_only, &info.id, &handle, &e);
	if (rc == LUMEN_OK) {
		backend_result(op, LDAP_SUCCESS, NULL);
		info.dn = e->dn;
		info.ndn = e->ndn;
		if (op->fetch_counts)
			rc = with_counts(be, rd, &info);
		rc = rc == LUMEN_OK ? fn(ctx, e, &info) : backend_fail(be, op, rc);
	}
	backend_entry_put(be, handle);
	backend_reader_release(be, rd);
	return rc == LUMEN_ENOTFOUND ? LUMEN_OK : rc;
}

/* One entry of backend_fetch_ids to fn: 0 to go on, fn's stop, or an error. */
static int fetch_one_id(struct backend *be, struct backend_reader *rd, uint64_t id,
			bool want_counts, backend_entry_fn fn, void *ctx)
{
	struct entry_cache_handle *handle = NULL;
	const struct entry *e;

	arena_reset(&rd->entry_arena);
	int rc = backend_entry_get(be, rd, id, &rd->entry_arena, &handle, &e);
	if (rc == LUMEN_ENOTFOUND)
		return 0;                       /* deleted since its ID was handed out */
	if (rc != LUMEN_OK)
		return rc;
	struct backend_entry_info info = { .id = id, .dn = e->dn, .ndn = e->ndn };
	if (want_counts)
		rc = with_counts(be, rd, &info);
	if (rc == LUMEN_OK)
		rc = fn(ctx, e, &info);
	backend_entry_put(be, handle);
	return rc == BACKEND_SINK_SKIPPED || rc == BACKEND_SINK_PAUSE ? 0 : rc;
}

int backend_fetch_ids(struct backend *be, struct backend_op *op, const uint64_t *ids,
		      size_t n, bool want_counts, backend_entry_fn fn, void *ctx)
{
	struct backend_reader *rd = NULL;

	op->matched_dn = (struct ber_view){ NULL, 0 };
	int rc = backend_reader_acquire(be, &rd);
	if (rc != LUMEN_OK)
		return backend_fail(be, op, rc);
	backend_result(op, LDAP_SUCCESS, NULL);
	for (size_t i = 0; i < n && rc == LUMEN_OK; i++)
		rc = fetch_one_id(be, rd, ids[i], want_counts, fn, ctx);
	backend_reader_release(be, rd);
	if (rc < 0)
		return backend_fail(be, op, rc);
	return rc;
}
