/*
 * filter.c — compiling decoded filters and evaluating them against entries
 * (filter.h). Compilation does all schema lookups and normalizes assertion
 * values once; evaluation compares bytes of normalized values and only
 * normalizes entry values itself for the rare rules listed in filter.h.
 */
#include "filter.h"

#include <string.h>
#include <strings.h>

#include "dn.h"
#include "matching.h"

struct compile_state {
	const struct schema *schema;
	struct arena *arena;
	struct filter_limits limits;
	size_t n_nodes;
};

static bool is_object_class_type(const struct attribute_type *type)
{
	return type != NULL && type->is_object_class;
}

/* Same normalizer means stored equality-normalized values can be compared. */
static bool shares_equality_normalizer(const struct attribute_type *type,
				       const struct matching_rule *rule)
{
	return type != NULL && type->equality != NULL && rule != NULL &&
	       type->equality->normalize == rule->normalize;
}

/* Approx uses the phonetic key only for the case*Match string rules. */
static bool approx_uses_key(const struct matching_rule *equality)
{
	return equality->name != NULL && strncasecmp(equality->name, "case", 4) == 0;
}

/* An unknown or malformed description leaves desc.type NULL: Undefined. */
static void resolve_description(struct compile_state *st, struct ber_view attr,
				struct filter_node *node)
{
	if (attribute_description_parse(st->schema, (const char *)attr.ptr, attr.len,
					 &node->desc) != LUMEN_OK) {
		node->desc.type = NULL;
		node->undefined = true;
	}
}

/* Normalize an assertion value; a value the rule rejects makes the item Undefined. */
static int normalize_assertion(struct compile_state *st, struct filter_node *node,
			       int (*normalize)(const uint8_t *, size_t, struct arena *,
						struct ber_view *),
			       struct ber_view in, struct ber_view *out)
{
	int rc = normalize(in.ptr, in.len, st->arena, out);
	if (rc == LUMEN_ENOMEM)
		return rc;
	if (rc != LUMEN_OK)
		node->undefined = true;
	return LUMEN_OK;
}

static int compile_ava(struct compile_state *st, const struct ldap_filter *in,
		       struct filter_node *node)
{
	resolve_description(st, in->u.ava.attr, node);
	const struct attribute_type *type = node->desc.type;
	if (type == NULL)
		return LUMEN_OK;
	bool ordering = in->type == LDAP_FILTER_GREATER_OR_EQUAL ||
			in->type == LDAP_FILTER_LESS_OR_EQUAL;
	node->rule = ordering ? type->ordering : type->equality;
	if (node->rule == NULL) {
		node->undefined = true;
		return LUMEN_OK;
	}
	node->uses_stored_normalized = shares_equality_normalizer(type, node->rule);
	if (in->type == LDAP_FILTER_APPROX && approx_uses_key(node->rule)) {
		int rc = matching_approx_key(in->u.ava.value.ptr, in->u.ava.value.len,
					     st->arena, &node->value);
		if (rc == LUMEN_OK) {
			node->uses_stored_normalized = false;
			node->approx_words = true;
			return LUMEN_OK;
		}
		if (rc == LUMEN_ENOMEM)
			return rc;
		/* no key for this value: approx falls back to equality */
	}
	if (in->type == LDAP_FILTER_EQUALITY && is_object_class_type(type)) {
		node->object_class = schema_object_class(st->schema,
			(const char *)in->u.ava.value.ptr, in->u.ava.value.len);
		/* RFC 4517: a descriptor the schema does not know is Undefined,
		 * so (!(objectClass=nosuch)) matches nothing, as in OpenLDAP */
		node->undefined = node->object_class == NULL;
	}
	return normalize_assertion(st, node, node->rule->normalize, in->u.ava.value,
				   &node->value);
}

static int compile_substrings(struct compile_state *st, const struct ldap_filter *in,
			      struct filter_node *node)
{
	if (!in->u.substrings.has_initial && !in->u.substrings.has_final &&
	    in->u.substrings.n_any == 0)
		return LUMEN_EMALFORMED;
	resolve_description(st, in->u.substrings.attr, node);
	const struct attribute_type *type = node->desc.type;
	if (type == NULL)
		return LUMEN_OK;
	node->rule = type->substr;
	if (node->rule == NULL) {
		node->undefined = true;
		return LUMEN_OK;
	}
	node->uses_stored_normalized = shares_equality_normalizer(type, node->rule);
	int (*piece)(const uint8_t *, size_t, struct arena *, struct ber_view *) =
		node->rule->normalize_piece ? node->rule->normalize_piece : node->rule->normalize;
	int rc = LUMEN_OK;
	node->has_initial = in->u.substrings.has_initial;
	node->has_final = in->u.substrings.has_final;
	if (node->has_initial)
		rc = normalize_assertion(st, node, piece, in->u.substrings.initial, &node->initial);
	if (rc == LUMEN_OK && node->has_final)
		rc = normalize_assertion(st, node, piece, in->u.substrings.final, &node->final);
	if (rc != LUMEN_OK)
		return rc;
	node->n_any = in->u.substrings.n_any;
	if (node->n_any > 0) {
		node->any = arena_calloc(st->arena, node->n_any, sizeof(*node->any));
		if (node->any == NULL)
			return LUMEN_ENOMEM;
	}
	for (size_t i = 0; rc == LUMEN_OK && i < node->n_any; i++)
		rc = normalize_assertion(st, node, piece, in->u.substrings.any[i], &node->any[i]);
	return rc;
}

static int compile_extensible(struct compile_state *st, const struct ldap_filter *in,
			      struct filter_node *node)
{
	if (!in->u.extensible.has_rule && !in->u.extensible.has_attr)
		return LUMEN_EMALFORMED;
	node->dn_attributes = in->u.extensible.dn_attributes;
	if (in->u.extensible.has_attr) {
		resolve_description(st, in->u.extensible.attr, node);
		if (node->desc.type == NULL)
			return LUMEN_OK;
	}
	if (in->u.extensible.has_rule)
		node->rule = matching_rule_find((const char *)in->u.extensible.rule.ptr,
						in->u.extensible.rule.len);
	else
		node->rule = node->desc.type->equality;
	if (node->rule == NULL || node->rule->usage == MATCHING_SUBSTRINGS) {
		node->undefined = true;
		return LUMEN_OK;
	}
	node->uses_stored_normalized = shares_equality_normalizer(node->desc.type, node->rule);
	return normalize_assertion(st, node, node->rule->normalize, in->u.extensible.value,
				   &node->value);
}

static int compile_node(struct compile_state *st, const struct ldap_filter *in,
			unsigned depth, struct filter_node **out);

static int compile_children(struct compile_state *st, const struct ldap_filter *first,
			    unsigned depth, struct filter_node **out)
{
	struct filter_node **tail = out;
	for (const struct ldap_filter *c = first; c != NULL; c = c->next) {
		int rc = compile_node(st, c, depth, tail);
		if (rc != LUMEN_OK)
			return rc;
		tail = &(*tail)->next;
	}
	return LUMEN_OK;
}

static int compile_node(struct compile_state *st, const struct ldap_filter *in,
			unsigned depth, struct filter_node **out)
{
	if (depth > st->limits.max_depth || ++st->n_nodes > st->limits.max_nodes)
		return LUMEN_ELIMIT;
	struct filter_node *node = arena_calloc(st->arena, 1, sizeof(*node));
	if (node == NULL)
		return LUMEN_ENOMEM;
	node->type = in->type;
	*out = node;
	switch (in->type) {
	case LDAP_FILTER_AND:
	case LDAP_FILTER_OR:
		return compile_children(st, in->u.children, depth + 1, &node->children);
	case LDAP_FILTER_NOT:
		if (in->u.child == NULL)
			return LUMEN_EMALFORMED;
		return compile_node(st, in->u.child, depth + 1, &node->children);
	case LDAP_FILTER_EQUALITY:
	case LDAP_FILTER_GREATER_OR_EQUAL:
	case LDAP_FILTER_LESS_OR_EQUAL:
	case LDAP_FILTER_APPROX:
		return compile_ava(st, in, node);
	case LDAP_FILTER_SUBSTRINGS:
		return compile_substrings(st, in, node);
	case LDAP_FILTER_PRESENT:
		resolve_description(st, in->u.present, node);
		return LUMEN_OK;
	case LDAP_FILTER_EXTENSIBLE:
		return compile_extensible(st, in, node);
	}
	return LUMEN_EMALFORMED;
}

int filter_compile(const struct schema *s, const struct ldap_filter *in,
		   const struct filter_limits *limits, struct arena *arena,
		   struct filter *out)
{
	struct compile_state st = {
		.schema = s,
		.arena = arena,
		.limits = { FILTER_DEFAULT_MAX_DEPTH, FILTER_DEFAULT_MAX_NODES },
	};
	if (limits != NULL)
		st.limits = *limits;
	memset(out, 0, sizeof(*out));
	if (in == NULL)
		return LUMEN_EINVAL;
	int rc = compile_node(&st, in, 0, &out->root);
	if (rc != LUMEN_OK) {
		out->root = NULL;
		return rc;
	}
	out->schema = s;
	out->arena = arena;
	out->n_nodes = st.n_nodes;
	return LUMEN_OK;
}

/* ------------------------------------------------------------ evaluation */

/*
 * One evaluation: the entry, where entry values are normalized, who may
 * test what, and the first failure (filter.h: a failure is an error, never
 * a quiet Undefined that would drop an entry from a result).
 */
struct eval_state {
	const struct filter *f;
	const struct entry *e;
	const struct filter_virtual *virtual;
	const struct filter_access *access;
	struct arena *scratch;
	int error;
};

/* May the values of `type` be tested on this entry? */
static bool may_test(const struct eval_state *st, const struct attribute_type *type)
{
	return st->access == NULL || st->access->may_test(st->access->ctx, type);
}

/*
 * The form of an entry value the node's rule compares: the stored
 * normalized form when the normalizers agree, else computed into scratch.
 * LUMEN_EMALFORMED when the rule rejects the value (it then cannot match).
 */
static int value_form(struct eval_state *st, const struct filter_node *node,
		      const struct matching_rule *rule, bool stored,
		      const struct entry_value *v, struct ber_view *out)
{
	if (node->type == LDAP_FILTER_APPROX && node->approx_words)
		return matching_approx_key(v->value.ptr, v->value.len, st->scratch, out);
	if (stored) {
		*out = v->normalized;
		return v->normalized.ptr != NULL ? LUMEN_OK : LUMEN_EMALFORMED;
	}
	return rule->normalize(v->value.ptr, v->value.len, st->scratch, out);
}

static int rule_compare(const struct matching_rule *rule, struct ber_view a, struct ber_view b)
{
	return rule->compare ? rule->compare(a, b) : matching_compare_bytes(a, b);
}

/* Does one prepared value satisfy the item? */
static bool value_matches(const struct filter_node *node, struct ber_view form)
{
	switch (node->type) {
	case LDAP_FILTER_APPROX:
		if (node->approx_words)
			return matching_approx_matches(form, node->value);
		return ber_view_eq(form, node->value);
	case LDAP_FILTER_EQUALITY:
		return ber_view_eq(form, node->value);
	case LDAP_FILTER_GREATER_OR_EQUAL:
		return rule_compare(node->rule, form, node->value) >= 0;
	case LDAP_FILTER_LESS_OR_EQUAL:
		return rule_compare(node->rule, form, node->value) <= 0;
	case LDAP_FILTER_SUBSTRINGS:
		return matching_substrings(form, node->has_initial ? &node->initial : NULL,
					   node->any, node->n_any,
					   node->has_final ? &node->final : NULL);
	case LDAP_FILTER_EXTENSIBLE:
		if (node->rule->usage == MATCHING_ORDERING)
			return rule_compare(node->rule, form, node->value) < 0;
		return ber_view_eq(form, node->value);
	default:
		return false;
	}
}

/* One prepared value: TRUE, FALSE, or UNDEFINED with st->error set. */
static enum filter_result value_item(struct eval_state *st, const struct filter_node *node,
				     bool stored, const struct entry_value *v)
{
	struct ber_view form;
	int rc = value_form(st, node, node->rule, stored, v, &form);
	if (rc == LUMEN_ENOMEM) {
		st->error = rc;
		return FILTER_UNDEFINED;
	}
	return rc == LUMEN_OK && value_matches(node, form) ? FILTER_TRUE : FILTER_FALSE;
}

/* Test every value of one attribute (whose type the caller may test). */
static enum filter_result attribute_matches(struct eval_state *st,
					    const struct filter_node *node,
					    const struct entry_attribute *a, bool stored)
{
	for (size_t i = 0; i < a->n_values; i++) {
		enum filter_result r = value_item(st, node, stored, &a->values[i]);
		if (r != FILTER_FALSE)
			return r;
	}
	return FILTER_FALSE;
}

/*
 * Combine what one attribute said into what the item says so far: TRUE
 * wins; an attribute the requester may not test is Undefined, so that the
 * answer never depends on its values (RFC 4511 §4.5.1.7, OpenLDAP's
 * per-attribute `search` check).
 */
static enum filter_result combine(enum filter_result so_far, enum filter_result r)
{
	if (so_far == FILTER_TRUE || r == FILTER_TRUE)
		return FILTER_TRUE;
	return r == FILTER_UNDEFINED ? FILTER_UNDEFINED : so_far;
}

/* Without a type, an extensible rule applies to attributes of its syntax. */
static bool rule_applies_to(const struct matching_rule *rule, const struct attribute_type *type)
{
	if (type->equality == rule || type->ordering == rule)
		return true;
	return type->syntax != NULL && rule->syntax_oid != NULL &&
	       strcmp(type->syntax->oid, rule->syntax_oid) == 0;
}

/* Does the DN component's type take part in the item? */
static bool dn_ava_applies(const struct filter_node *node, const struct attribute_type *t)
{
	return node->desc.type ? attribute_type_is_subtype(t, node->desc.type)
			       : rule_applies_to(node->rule, t);
}

static enum filter_result dn_matches(struct eval_state *st, const struct filter_node *node)
{
	const struct entry *e = st->e;
	struct dn dn;
	int rc = dn_parse(st->f->schema, (const char *)e->dn.ptr, e->dn.len, st->scratch, &dn);
	if (rc == LUMEN_ENOMEM)
		st->error = rc;
	if (rc != LUMEN_OK)
		return FILTER_UNDEFINED;
	enum filter_result result = FILTER_FALSE;
	for (size_t i = 0; i < dn.n_rdns; i++) {
		for (size_t j = 0; j < dn.rdns[i].n_avas && result != FILTER_TRUE; j++) {
			const struct dn_ava *ava = &dn.rdns[i].avas[j];
			if (ava->type == NULL || !dn_ava_applies(node, ava->type))
				continue;
			if (!may_test(st, ava->type)) {
				result = combine(result, FILTER_UNDEFINED);
				continue;
			}
			struct entry_value v = { ava->value, ava->normalized };
			bool stored = shares_equality_normalizer(ava->type, node->rule);
			result = combine(result, value_item(st, node, stored, &v));
		}
	}
	return result;
}

/* Does an extensible item test attribute a, and with the stored forms? */
static bool extensible_applies(const struct filter_node *node, const struct entry_attribute *a)
{
	if (node->desc.type != NULL)
		return attribute_description_matches(&node->desc, &a->desc);
	return rule_applies_to(node->rule, a->desc.type);
}

static enum filter_result extensible_matches(struct eval_state *st,
					     const struct filter_node *node)
{
	const struct entry *e = st->e;
	enum filter_result result = FILTER_FALSE;
	for (size_t i = 0; i < e->n_attributes && result != FILTER_TRUE; i++) {
		const struct entry_attribute *a = &e->attributes[i];
		if (!extensible_applies(node, a))
			continue;
		if (!may_test(st, a->desc.type)) {
			result = combine(result, FILTER_UNDEFINED);
			continue;
		}
		bool stored = shares_equality_normalizer(a->desc.type, node->rule);
		result = combine(result, attribute_matches(st, node, a, stored));
	}
	if (result != FILTER_TRUE && node->dn_attributes)
		result = combine(result, dn_matches(st, node));
	return result;
}

/* An item on a provided type tests the provider's values (filter.h). */
static enum filter_result virtual_matches(struct eval_state *st, const struct filter_node *node)
{
	const struct filter_virtual *v = st->virtual;
	struct entry_value values[FILTER_VIRTUAL_MAX_VALUES];
	struct attribute_description have = { node->desc.type, { NULL, 0 } };
	size_t n = 0;

	/* computed values carry no options: (entryDN;x=...) names nothing */
	if (!attribute_description_matches(&node->desc, &have))
		return FILTER_FALSE;
	if (!may_test(st, node->desc.type))
		return FILTER_UNDEFINED;
	if (v->values(v->ctx, node->desc.type, st->e, v->arena ? v->arena : st->scratch, values,
		      FILTER_VIRTUAL_MAX_VALUES, &n) != LUMEN_OK)
		return FILTER_UNDEFINED;
	if (n == 0)
		return FILTER_FALSE;
	if (node->type == LDAP_FILTER_PRESENT)
		return FILTER_TRUE;
	struct entry_attribute a = { .desc = have, .values = values, .n_values = n };
	return attribute_matches(st, node, &a, node->uses_stored_normalized);
}

/* An objectClass item that holds: (objectClass=*), or the entry is of the class. */
static enum filter_result object_class_matches(struct eval_state *st,
					       const struct filter_node *node)
{
	return may_test(st, node->desc.type) ? FILTER_TRUE : FILTER_UNDEFINED;
}

static enum filter_result item_matches(struct eval_state *st, const struct filter_node *node)
{
	const struct entry *e = st->e;
	if (node->undefined)
		return FILTER_UNDEFINED;
	if (st->virtual != NULL && filter_virtual_provides(st->virtual, node->desc.type))
		return virtual_matches(st, node);
	if (node->type == LDAP_FILTER_EXTENSIBLE)
		return extensible_matches(st, node);
	if ((node->type == LDAP_FILTER_PRESENT && is_object_class_type(node->desc.type)) ||
	    (node->object_class != NULL && entry_is_instance_of(e, node->object_class)))
		return object_class_matches(st, node);
	enum filter_result result = FILTER_FALSE;
	for (size_t i = 0; i < e->n_attributes && result != FILTER_TRUE; i++) {
		const struct entry_attribute *a = &e->attributes[i];
		if (!attribute_description_matches(&node->desc, &a->desc))
			continue;
		if (!may_test(st, a->desc.type)) {
			result = combine(result, FILTER_UNDEFINED);
			continue;
		}
		if (node->type == LDAP_FILTER_PRESENT)
			return FILTER_TRUE;
		/* a subtype may normalize differently from the asserted type */
		bool stored = node->uses_stored_normalized &&
			      shares_equality_normalizer(a->desc.type, node->rule);
		result = combine(result, attribute_matches(st, node, a, stored));
	}
	return result;
}

/* (objectClass=C) on one value: the value names C or a subclass of C. */
static bool class_value_matches(const struct filter *f, const struct filter_node *item,
				struct ber_view value)
{
	const struct object_class *oc = schema_object_class(f->schema, (const char *)value.ptr,
							    value.len);
	return oc != NULL && object_class_is_subclass(oc, item->object_class);
}

/* Does the item name a's type (or, extensible without a type, its syntax)? */
static bool item_names_attribute(const struct filter_node *item, const struct entry_attribute *a)
{
	if (item->type == LDAP_FILTER_EXTENSIBLE)
		return item->rule != NULL && extensible_applies(item, a);
	return item->desc.type != NULL && attribute_description_matches(&item->desc, &a->desc);
}

int filter_item_keeps_value(const struct filter *f, const struct filter_node *item,
			    const struct entry_attribute *a, size_t i, struct arena *scratch,
			    bool *keep)
{
	struct eval_state st = { .scratch = scratch != NULL ? scratch : f->arena };
	*keep = false;
	if (item->undefined || i >= a->n_values || !item_names_attribute(item, a))
		return LUMEN_OK;
	if (item->type == LDAP_FILTER_PRESENT) {
		*keep = true;
		return LUMEN_OK;
	}
	if (item->object_class != NULL) {
		*keep = class_value_matches(f, item, a->values[i].value);
		return LUMEN_OK;
	}
	bool stored = shares_equality_normalizer(a->desc.type, item->rule) &&
		      (item->type == LDAP_FILTER_EXTENSIBLE || item->uses_stored_normalized);
	*keep = value_item(&st, item, stored, &a->values[i]) == FILTER_TRUE;
	return st.error != 0 ? st.error : LUMEN_OK;
}

static enum filter_result node_evaluate(struct eval_state *st, const struct filter_node *node);

/*
 * AND (decisive FALSE) or OR (decisive TRUE) of node's children: decisive
 * as soon as one child is, else UNDEFINED if one was, else the opposite.
 */
static inline enum filter_result children_evaluate(struct eval_state *st,
						   const struct filter_node *node,
						   enum filter_result decisive)
{
	bool undefined = false;
	for (const struct filter_node *c = node->children; c != NULL; c = c->next) {
		enum filter_result r = node_evaluate(st, c);
		if (r == decisive)
			return decisive;
		undefined |= r == FILTER_UNDEFINED;
	}
	if (undefined)
		return FILTER_UNDEFINED;
	return decisive == FILTER_FALSE ? FILTER_TRUE : FILTER_FALSE;
}

static enum filter_result node_evaluate(struct eval_state *st, const struct filter_node *node)
{
	enum filter_result r;
	switch (node->type) {
	case LDAP_FILTER_AND:
		return children_evaluate(st, node, FILTER_FALSE);
	case LDAP_FILTER_OR:
		return children_evaluate(st, node, FILTER_TRUE);
	case LDAP_FILTER_NOT:
		r = node_evaluate(st, node->children);
		return r == FILTER_UNDEFINED ? r : (r == FILTER_TRUE ? FILTER_FALSE : FILTER_TRUE);
	default:
		return item_matches(st, node);
	}
}

int filter_test(const struct filter *f, const struct entry *e,
		const struct filter_evaluation *how, enum filter_result *out)
{
	struct eval_state st = {
		.f = f, .e = e,
		.virtual = how != NULL ? how->virtual : NULL,
		.access = how != NULL ? how->access : NULL,
		.scratch = how != NULL && how->scratch != NULL ? how->scratch
							       : (f != NULL ? f->arena : NULL),
	};
	*out = FILTER_UNDEFINED;
	if (f == NULL || f->root == NULL || e == NULL)
		return LUMEN_EINVAL;
	if (st.access != NULL && st.access->begin != NULL &&
	    !st.access->begin(st.access->ctx, e))
		return LUMEN_OK;
	enum filter_result r = node_evaluate(&st, f->root);
	if (st.error != LUMEN_OK)
		return st.error;
	*out = r;
	return LUMEN_OK;
}

enum filter_result filter_evaluate(const struct filter *f, const struct entry *e)
{
	enum filter_result r;
	return filter_test(f, e, NULL, &r) == LUMEN_OK ? r : FILTER_UNDEFINED;
}

static bool node_tested_types(const struct filter_node *node, const struct attribute_type **types,
			      size_t cap, size_t *n)
{
	switch (node->type) {
	case LDAP_FILTER_AND:
	case LDAP_FILTER_OR:
	case LDAP_FILTER_NOT:
		for (const struct filter_node *c = node->children; c != NULL; c = c->next)
			if (!node_tested_types(c, types, cap, n))
				return false;
		return true;
	default:
		if (node->desc.type != NULL)
			return attribute_type_list_add(types, n, cap, node->desc.type);
		/* no type: unknown (never matches), or a typeless extensible match */
		return node->undefined;
	}
}

bool filter_tested_types(const struct filter *f, const struct attribute_type **types,
			 size_t cap, size_t *n)
{
	*n = 0;
	return f == NULL || f->root == NULL || node_tested_types(f->root, types, cap, n);
}

/* ---------------------------------------------------- virtual attributes */

bool filter_virtual_provides(const struct filter_virtual *v, const struct attribute_type *type)
{
	if (v == NULL || type == NULL)
		return false;
	for (size_t i = 0; i < v->n_types; i++)
		if (v->types[i] == type)
			return true;
	return false;
}

static bool node_names_virtual(const struct filter_node *node, const struct filter_virtual *v)
{
	switch (node->type) {
	case LDAP_FILTER_AND:
	case LDAP_FILTER_OR:
	case LDAP_FILTER_NOT:
		for (const struct filter_node *c = node->children; c != NULL; c = c->next)
			if (node_names_virtual(c, v))
				return true;
		return false;
	default:
		return filter_virtual_provides(v, node->desc.type);
	}
}

bool filter_names_virtual(const struct filter *f, const struct filter_virtual *v)
{
	return f != NULL && f->root != NULL && v != NULL && node_names_virtual(f->root, v);
}
