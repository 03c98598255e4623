/*
 * entry_check.c — schema checking of entries built from AddRequests and
 * changed by ModifyRequests (entry.h). Each failure fills a
 * struct schema_violation whose LDAP code comes from one table, so the
 * server's answer for a given reason is decided here, once.
 */
#include "entry.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "dn.h"
#include "entry_private.h"
#include "ldap_result_codes.h"

static const int violation_codes[SCHEMA_VIOLATION_KIND_COUNT] = {
	[SCHEMA_VIOLATION_NONE] = LDAP_SUCCESS,
	[SCHEMA_VIOLATION_NO_OBJECT_CLASS] = LDAP_OBJECT_CLASS_VIOLATION,
	[SCHEMA_VIOLATION_UNKNOWN_OBJECT_CLASS] = LDAP_OBJECT_CLASS_VIOLATION,
	[SCHEMA_VIOLATION_NO_STRUCTURAL_CLASS] = LDAP_OBJECT_CLASS_VIOLATION,
	[SCHEMA_VIOLATION_TWO_STRUCTURAL_CLASSES] = LDAP_OBJECT_CLASS_VIOLATION,
	[SCHEMA_VIOLATION_MISSING_MUST] = LDAP_OBJECT_CLASS_VIOLATION,
	[SCHEMA_VIOLATION_NOT_ALLOWED] = LDAP_OBJECT_CLASS_VIOLATION,
	[SCHEMA_VIOLATION_UNDEFINED_TYPE] = LDAP_UNDEFINED_ATTRIBUTE_TYPE,
	[SCHEMA_VIOLATION_INVALID_SYNTAX] = LDAP_INVALID_ATTRIBUTE_SYNTAX,
	[SCHEMA_VIOLATION_RDN_VALUE_MISSING] = LDAP_NAMING_VIOLATION,
	[SCHEMA_VIOLATION_SINGLE_VALUE] = LDAP_CONSTRAINT_VIOLATION,
	[SCHEMA_VIOLATION_VALUE_EXISTS] = LDAP_ATTRIBUTE_OR_VALUE_EXISTS,
	[SCHEMA_VIOLATION_NO_SUCH_ATTRIBUTE] = LDAP_NO_SUCH_ATTRIBUTE,
	[SCHEMA_VIOLATION_STRUCTURAL_CHANGE] = LDAP_OBJECT_CLASS_MODS_PROHIBITED,
	[SCHEMA_VIOLATION_NO_USER_MODIFICATION] = LDAP_CONSTRAINT_VIOLATION,
	[SCHEMA_VIOLATION_NOT_INTEGER] = LDAP_CONSTRAINT_VIOLATION,
	[SCHEMA_VIOLATION_INAPPROPRIATE_MATCHING] = LDAP_INAPPROPRIATE_MATCHING,
	[SCHEMA_VIOLATION_NO_VALUES] = LDAP_PROTOCOL_ERROR,
};

int schema_violation_ldap_code(enum schema_violation_kind kind)
{
	if ((unsigned)kind >= SCHEMA_VIOLATION_KIND_COUNT)
		return LDAP_OTHER;
	return violation_codes[kind];
}

__attribute__((format(printf, 3, 4)))
static int violation(struct schema_violation *v, enum schema_violation_kind kind,
		     const char *format, ...)
{
	va_list ap;
	v->kind = kind;
	v->ldap_code = schema_violation_ldap_code(kind);
	va_start(ap, format);
	vsnprintf(v->message, sizeof(v->message), format, ap);
	va_end(ap);
	return LUMEN_ESCHEMA;
}

static void no_violation(struct schema_violation *v)
{
	v->kind = SCHEMA_VIOLATION_NONE;
	v->ldap_code = LDAP_SUCCESS;
	v->message[0] = '\0';
}

/* Printable prefix of a view for messages ("%.*s" needs an int). */
#define VIEW_ARG(v) (int)((v).len > 64 ? 64 : (v).len), (const char *)(v).ptr

/* ------------------------------------------------- request to entry */

static int parse_description(const struct schema *s, struct ber_view text,
			     struct attribute_description *ad, struct schema_violation *v)
{
	int rc = attribute_description_parse(s, (const char *)text.ptr, text.len, ad);
	if (rc == LUMEN_OK)
		return LUMEN_OK;
	return violation(v, SCHEMA_VIOLATION_UNDEFINED_TYPE, "%.*s: attribute type undefined",
			 VIEW_ARG(text));
}

static int check_user_modifiable(const struct attribute_description *ad, bool from_client,
				 struct schema_violation *v)
{
	if (from_client && ad->type->no_user_modification)
		return violation(v, SCHEMA_VIOLATION_NO_USER_MODIFICATION,
				 "%s: no user modification allowed",
				 attribute_type_name(ad->type));
	return LUMEN_OK;
}

static int check_syntax(const struct attribute_description *ad, const struct ber_view *values,
			size_t n, struct schema_violation *v)
{
	const struct syntax *syn = ad->type->syntax;
	if (syn == NULL || syn->validate == NULL)
		return LUMEN_OK;
	for (size_t i = 0; i < n; i++)
		if (syn->validate(values[i].ptr, values[i].len) != LUMEN_OK)
			return violation(v, SCHEMA_VIOLATION_INVALID_SYNTAX,
					 "%s: value #%zu invalid per syntax",
					 attribute_type_name(ad->type), i);
	return LUMEN_OK;
}

/* Map an entry_add_values / entry_replace_values error to a violation. */
static int add_error(int rc, const struct attribute_description *ad, size_t bad,
		     struct schema_violation *v)
{
	const char *name = attribute_type_name(ad->type);
	switch (rc) {
	case LUMEN_EEXIST:
		return violation(v, SCHEMA_VIOLATION_VALUE_EXISTS, "%s: value #%zu provided more than once",
				 name, bad);
	case LUMEN_ESCHEMA:
		return violation(v, SCHEMA_VIOLATION_INVALID_SYNTAX, "%s: value #%zu invalid per syntax",
				 name, bad);
	case LUMEN_ELIMIT:
		return violation(v, SCHEMA_VIOLATION_SINGLE_VALUE, "%s: too many values", name);
	default:
		return rc;
	}
}

/* Is the RDN value ava already in e? Another spelling under the equality rule counts. */
static bool has_rdn_value(const struct entry *e, const struct dn_ava *ava)
{
	struct attribute_description ad = { ava->type, { NULL, 0 } };
	const struct entry_attribute *a = entry_find(e, &ad);
	return a != NULL && entry_attribute_find_normalized(a, ava->normalized) >= 0;
}

/* Supplies one missing RDN value, unless only check_rdn can say what is wrong. */
static int add_rdn_value(struct entry *e, const struct dn_ava *ava, bool from_client,
			 struct schema_violation *v)
{
	struct attribute_description ad = { ava->type, { NULL, 0 } };
	size_t bad = 0;

	/* a client may not set the type at all; a single value already given
	 * that differs is a naming violation, not a second value */
	if ((from_client && ad.type->no_user_modification) ||
	    (ad.type->single_value && entry_find(e, &ad) != NULL))
		return LUMEN_OK;
	int rc = check_syntax(&ad, &ava->value, 1, v);
	if (rc == LUMEN_OK) {
		rc = entry_add_values(e, &ad, &ava->value, 1, &bad);
		rc = rc == LUMEN_OK ? rc : add_error(rc, &ad, bad, v);
	}
	return rc;
}

/*
 * RFC 4511 §4.7: an Add may leave the RDN's values out of its attribute
 * list and the server supplies them (slapd and slapadd both do). A DN that
 * does not parse is left to entry_check_add, which names the problem.
 */
static int add_rdn_values(struct entry *e, bool from_client, struct schema_violation *v)
{
	struct arena scratch;
	struct dn dn;

	if (e->dn.len == 0)
		return LUMEN_OK;
	arena_init(&scratch, 0);
	int rc = dn_parse(e->schema, (const char *)e->dn.ptr, e->dn.len, &scratch, &dn);
	if (rc != LUMEN_OK || dn.n_rdns == 0) {
		rc = rc == LUMEN_ENOMEM ? rc : LUMEN_OK;
		goto done;
	}
	for (size_t i = 0; rc == LUMEN_OK && i < dn.rdns[0].n_avas; i++) {
		const struct dn_ava *ava = &dn.rdns[0].avas[i];
		if (ava->type != NULL && !has_rdn_value(e, ava))
			rc = add_rdn_value(e, ava, from_client, v);
	}
done:
	arena_free(&scratch);
	return rc;
}

int entry_from_attributes(const struct schema *s, struct ber_view dn, struct ber_view ndn,
			  const struct ldap_attribute *attributes, size_t n,
			  bool from_client, struct entry **out, struct schema_violation *v)
{
	struct entry *e = NULL;
	no_violation(v);
	*out = NULL;
	int rc = entry_create(s, dn, ndn, &e);
	for (size_t i = 0; rc == LUMEN_OK && i < n; i++) {
		const struct ldap_attribute *a = &attributes[i];
		struct attribute_description ad;
		size_t bad = 0;
		rc = parse_description(s, a->type, &ad, v);
		if (rc == LUMEN_OK && a->n_values == 0)
			rc = violation(v, SCHEMA_VIOLATION_NO_VALUES, "%.*s: no values",
				       VIEW_ARG(a->type));
		if (rc == LUMEN_OK)
			rc = check_user_modifiable(&ad, from_client, v);
		if (rc == LUMEN_OK)
			rc = check_syntax(&ad, a->values, a->n_values, v);
		if (rc == LUMEN_OK) {
			rc = entry_add_values(e, &ad, a->values, a->n_values, &bad);
			rc = rc == LUMEN_OK ? rc : add_error(rc, &ad, bad, v);
		}
	}
	if (rc == LUMEN_OK)
		rc = add_rdn_values(e, from_client, v);
	if (rc != LUMEN_OK) {
		entry_free(e);
		return rc;
	}
	*out = e;
	return LUMEN_OK;
}

static int apply_delete(struct entry *e, const struct attribute_description *ad,
			const struct ldap_attribute *m, struct schema_violation *v)
{
	size_t bad = 0;
	int rc = entry_delete_values(e, ad, m->values, m->n_values, &bad);
	if (rc == LUMEN_ENOTFOUND || rc == LUMEN_ESCHEMA) {
		if (m->n_values == 0)
			return violation(v, SCHEMA_VIOLATION_NO_SUCH_ATTRIBUTE,
					 "%s: no such attribute", attribute_type_name(ad->type));
		return violation(v, SCHEMA_VIOLATION_NO_SUCH_ATTRIBUTE, "%s: no such value (#%zu)",
				 attribute_type_name(ad->type), bad);
	}
	return rc;
}

static int apply_increment(struct entry *e, const struct attribute_description *ad,
			   const struct ldap_attribute *m, struct schema_violation *v)
{
	const char *name = attribute_type_name(ad->type);
	if (m->n_values != 1)
		return violation(v, SCHEMA_VIOLATION_NO_VALUES, "%s: increment needs one value", name);
	int rc = entry_increment(e, ad, m->values[0]);
	switch (rc) {
	case LUMEN_ENOTFOUND:
		return violation(v, SCHEMA_VIOLATION_NO_SUCH_ATTRIBUTE, "%s: no such attribute", name);
	case LUMEN_EUNSUPPORTED:
		return violation(v, SCHEMA_VIOLATION_NOT_INTEGER, "%s: not an integer attribute", name);
	case LUMEN_EMALFORMED:
		return violation(v, SCHEMA_VIOLATION_INVALID_SYNTAX, "%s: increment is not an integer", name);
	case LUMEN_ELIMIT:
		return violation(v, SCHEMA_VIOLATION_NOT_INTEGER, "%s: increment overflows", name);
	default:
		return rc;
	}
}

/* add or replace: m's values checked against the syntax, then put in. */
static int apply_values(struct entry *e, const struct attribute_description *ad,
			const struct ldap_attribute *m,
			int (*put)(struct entry *e, const struct attribute_description *ad,
				   const struct ber_view *values, size_t n, size_t *bad_index),
			struct schema_violation *v)
{
	size_t bad = 0;
	int rc = check_syntax(ad, m->values, m->n_values, v);
	if (rc == LUMEN_OK && (rc = put(e, ad, m->values, m->n_values, &bad)) != LUMEN_OK)
		rc = add_error(rc, ad, bad, v);
	return rc;
}

int entry_apply_change(struct entry *e, const struct ldap_change *change,
		       bool from_client, struct schema_violation *v)
{
	const struct ldap_attribute *m = &change->modification;
	struct attribute_description ad;
	no_violation(v);
	int rc = parse_description(e->schema, m->type, &ad, v);
	if (rc == LUMEN_OK)
		rc = check_user_modifiable(&ad, from_client, v);
	if (rc != LUMEN_OK)
		return rc;
	switch (change->operation) {
	case LDAP_MOD_ADD:
		if (m->n_values == 0)
			return violation(v, SCHEMA_VIOLATION_NO_VALUES, "%.*s: no values to add",
					 VIEW_ARG(m->type));
		return apply_values(e, &ad, m, entry_add_values, v);
	case LDAP_MOD_DELETE:
		return apply_delete(e, &ad, m, v);
	case LDAP_MOD_REPLACE:
		return apply_values(e, &ad, m, entry_replace_values, v);
	case LDAP_MOD_INCREMENT:
		return apply_increment(e, &ad, m, v);
	}
	return LUMEN_EINVAL;
}

/* --------------------------------------------------------- entry checks */

static const struct object_class *class_at(const struct entry *e, size_t index)
{
	if (!((e->class_bits[index / 64] >> (index % 64)) & 1u))
		return NULL;
	return schema_object_class_at(e->schema, index);
}

static int check_classes(const struct entry *e, struct schema_violation *v)
{
	const struct attribute_type *oc_type = schema_attribute_type(e->schema, "objectClass", 11);
	const struct entry_attribute *classes = oc_type ? entry_find_type(e, oc_type) : NULL;
	if (classes == NULL)
		return violation(v, SCHEMA_VIOLATION_NO_OBJECT_CLASS, "no objectClass attribute");
	if (e->unknown_class) {
		for (size_t i = 0; i < classes->n_values; i++) {
			struct ber_view name = classes->values[i].value;
			if (schema_object_class(e->schema, (const char *)name.ptr, name.len) == NULL)
				return violation(v, SCHEMA_VIOLATION_UNKNOWN_OBJECT_CLASS,
						 "objectClass: value #%zu (%.*s) invalid per syntax",
						 i, VIEW_ARG(name));
		}
	}
	if (e->two_structural)
		return violation(v, SCHEMA_VIOLATION_TWO_STRUCTURAL_CLASSES,
				 "invalid structural object class chain (%s/...)",
				 e->structural ? object_class_name(e->structural) : "?");
	if (e->structural == NULL)
		return violation(v, SCHEMA_VIOLATION_NO_STRUCTURAL_CLASS,
				 "no structural object class provided");
	return LUMEN_OK;
}

static bool entry_has_type_or_subtype(const struct entry *e, const struct attribute_type *type)
{
	for (size_t i = 0; i < e->n_attributes; i++)
		if (attribute_type_is_subtype(e->attributes[i].desc.type, type))
			return true;
	return false;
}

static int check_must(const struct entry *e, struct schema_violation *v)
{
	size_t n_classes = schema_object_class_count(e->schema);
	for (size_t c = 0; c < n_classes; c++) {
		const struct object_class *oc = class_at(e, c);
		for (size_t i = 0; oc != NULL && i < oc->n_must; i++)
			if (!entry_has_type_or_subtype(e, oc->must[i]))
				return violation(v, SCHEMA_VIOLATION_MISSING_MUST,
						 "object class '%s' requires attribute '%s'",
						 object_class_name(oc),
						 attribute_type_name(oc->must[i]));
	}
	return LUMEN_OK;
}

static bool in_list(const struct attribute_type *type,
		    const struct attribute_type *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (attribute_type_is_subtype(type, list[i]))
			return true;
	return false;
}

static bool attribute_allowed(const struct entry *e, const struct attribute_type *type)
{
	size_t n_classes = schema_object_class_count(e->schema);
	for (size_t c = 0; c < n_classes; c++) {
		const struct object_class *oc = class_at(e, c);
		if (oc != NULL && (in_list(type, oc->must, oc->n_must) ||
				   in_list(type, oc->may, oc->n_may)))
			return true;
	}
	return false;
}

/* RFC 3296's ref is operational yet belongs to referral objects only. */
#define REF_OID "2.16.840.1.113730.3.1.34"

static bool misplaced_ref(const struct entry *e, const struct attribute_type *t)
{
	if (strcmp(t->oid, REF_OID) != 0)
		return false;
	const struct object_class *referral = schema_object_class(e->schema, "referral", 8);
	return referral == NULL || !entry_is_instance_of(e, referral);
}

static int check_attributes(const struct entry *e, bool check_syntax, struct schema_violation *v)
{
	const struct object_class *extensible =
		schema_object_class(e->schema, "extensibleObject", 16);
	bool any_allowed = extensible != NULL && entry_is_instance_of(e, extensible);
	for (size_t i = 0; i < e->n_attributes; i++) {
		const struct entry_attribute *a = &e->attributes[i];
		const struct attribute_type *t = a->desc.type;
		const char *name = attribute_type_name(t);
		bool operational = attribute_type_is_operational(t);
		if (!operational && !any_allowed && !attribute_allowed(e, t))
			return violation(v, SCHEMA_VIOLATION_NOT_ALLOWED,
					 "attribute '%s' not allowed", name);
		if (operational && misplaced_ref(e, t))   /* slapd's words */
			return violation(v, SCHEMA_VIOLATION_NOT_ALLOWED,
					 "attribute \"%s\" only allowed in the referral", name);
		if (t->single_value && a->n_values > 1)
			return violation(v, SCHEMA_VIOLATION_SINGLE_VALUE,
					 "attribute '%s' cannot have multiple values", name);
		for (size_t j = 0; check_syntax && j < a->n_values; j++) {
			struct ber_view value = a->values[j].value;
			if (a->values[j].normalized.ptr == NULL ||
			    (t->syntax && t->syntax->validate &&
			     t->syntax->validate(value.ptr, value.len) != LUMEN_OK))
				return violation(v, SCHEMA_VIOLATION_INVALID_SYNTAX,
						 "%s: value #%zu invalid per syntax", name, j);
		}
	}
	return LUMEN_OK;
}

/* Every AVA of the entry's own RDN must be one of its values. */
static int check_rdn(const struct entry *e, struct arena *scratch, struct schema_violation *v)
{
	if (e->dn.len == 0)
		return LUMEN_OK;
	struct dn dn;
	int rc = dn_parse(e->schema, (const char *)e->dn.ptr, e->dn.len, scratch, &dn);
	if (rc == LUMEN_ENOMEM)
		return rc;
	if (rc != LUMEN_OK || dn.n_rdns == 0)
		return violation(v, SCHEMA_VIOLATION_RDN_VALUE_MISSING, "invalid DN");
	const struct dn_rdn *rdn = &dn.rdns[0];
	for (size_t i = 0; i < rdn->n_avas; i++) {
		const struct dn_ava *ava = &rdn->avas[i];
		struct attribute_description ad = { ava->type, { NULL, 0 } };
		const struct entry_attribute *a = entry_find(e, &ad);
		if (a == NULL || entry_attribute_find_normalized(a, ava->normalized) < 0)
			return violation(v, SCHEMA_VIOLATION_RDN_VALUE_MISSING,
					 "value of naming attribute '%.*s' is not present in entry",
					 VIEW_ARG(ava->attr));
	}
	return LUMEN_OK;
}

static int check_entry(const struct entry *e, bool check_syntax, struct arena *scratch,
		       struct schema_violation *v)
{
	no_violation(v);
	int rc = check_classes(e, v);
	if (rc == LUMEN_OK)
		rc = check_attributes(e, check_syntax, v);
	if (rc == LUMEN_OK)
		rc = check_must(e, v);
	if (rc == LUMEN_OK)
		rc = check_rdn(e, scratch, v);
	return rc;
}

int entry_check_add(const struct entry *e, struct arena *scratch, struct schema_violation *v)
{
	return check_entry(e, true, scratch, v);
}

int entry_check_add_structure(const struct entry *e, struct arena *scratch,
			      struct schema_violation *v)
{
	return check_entry(e, false, scratch, v);
}

int entry_check_modify(const struct entry *before, const struct entry *after,
		       struct arena *scratch, struct schema_violation *v)
{
	no_violation(v);
	if (before->structural != NULL && after->structural != before->structural &&
	    !after->two_structural)
		return violation(v, SCHEMA_VIOLATION_STRUCTURAL_CHANGE,
				 "structural object class modification from '%s' to '%s' not allowed",
				 object_class_name(before->structural),
				 after->structural ? object_class_name(after->structural) : "none");
	return entry_check_add(after, scratch, v);
}
