/*
 * schema_finalize.c — resolves the names a definition refers to (SUP, rules,
 * syntax, MUST/MAY) and computes effective properties: rules and syntax
 * inherited through SUP, must/may lists through the superclass chain.
 * Errors name the file and line of the referring definition.
 * Contract: include/schema.h.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "lumen_error.h"
#include "schema_internal.h"

enum { RESOLVE_NEW = 0, RESOLVE_ACTIVE, RESOLVE_DONE };

/*
 * Entering the resolution of a definition (depth first along SUP):
 * RESOLVE_NEW if it is to be resolved now (it is then marked active),
 * RESOLVE_DONE if it already is, or the SUP-cycle error when it is being
 * resolved further up the chain that reached it again.
 */
static int resolve_enter(int *state, const struct schema_origin *origin, const char *kind,
			 const char *name, char *err, size_t errlen)
{
	if (*state == RESOLVE_ACTIVE)
		return schema_error(err, errlen, origin, LUMEN_EMALFORMED, "%s %s: SUP cycle",
				    kind, name);
	if (*state == RESOLVE_DONE)
		return RESOLVE_DONE;
	*state = RESOLVE_ACTIVE;
	return RESOLVE_NEW;
}

static int resolve_rule(struct schema *s, struct attribute_type_def *def, const char *name,
			enum matching_usage usage, const struct matching_rule **out,
			char *err, size_t errlen)
{
	static const char *const kinds[] = { "EQUALITY", "ORDERING", "SUBSTR" };
	(void)s;
	if (name == NULL)
		return LUMEN_OK;
	*out = matching_rule_find(name, strlen(name));
	if (*out == NULL)
		return schema_error(err, errlen, &def->origin, LUMEN_ENOTFOUND,
				    "attribute type %s: unknown %s rule '%s'",
				    attribute_type_name(&def->type), kinds[usage], name);
	if ((*out)->usage != usage)
		return schema_error(err, errlen, &def->origin, LUMEN_EMALFORMED,
				    "attribute type %s: '%s' is not a %s rule",
				    attribute_type_name(&def->type), name, kinds[usage]);
	return LUMEN_OK;
}

/* Resolve one type, its SUP chain first (recursion depth = chain length). */
static int resolve_attribute_type(struct schema *s, struct attribute_type_def *def,
				  char *err, size_t errlen)
{
	struct attribute_type *at = &def->type;
	int rc;

	rc = resolve_enter(&def->resolve_state, &def->origin, "attribute type",
			   attribute_type_name(at), err, errlen);
	if (rc != RESOLVE_NEW)
		return rc == RESOLVE_DONE ? LUMEN_OK : rc;

	if (def->sup_name != NULL) {
		struct attribute_type_def *sup =
			name_table_get(&s->type_names, def->sup_name, strlen(def->sup_name));
		if (sup == NULL)
			return schema_error(err, errlen, &def->origin, LUMEN_ENOTFOUND,
					    "attribute type %s: unknown SUP '%s'",
					    attribute_type_name(at), def->sup_name);
		rc = resolve_attribute_type(s, sup, err, errlen);
		if (rc != LUMEN_OK)
			return rc;
		at->sup = &sup->type;
		if (sup->type.usage != at->usage)
			return schema_error(err, errlen, &def->origin, LUMEN_EMALFORMED,
					    "attribute type %s: USAGE differs from SUP '%s'",
					    attribute_type_name(at), def->sup_name);
	}
	rc = resolve_rule(s, def, def->equality_name, MATCHING_EQUALITY, &at->equality, err, errlen);
	if (rc == LUMEN_OK)
		rc = resolve_rule(s, def, def->ordering_name, MATCHING_ORDERING, &at->ordering,
				  err, errlen);
	if (rc == LUMEN_OK)
		rc = resolve_rule(s, def, def->substr_name, MATCHING_SUBSTRINGS, &at->substr,
				  err, errlen);
	if (rc != LUMEN_OK)
		return rc;
	if (def->syntax_oid != NULL) {
		at->syntax = syntax_find(def->syntax_oid, strlen(def->syntax_oid));
		if (at->syntax == NULL)
			return schema_error(err, errlen, &def->origin, LUMEN_ENOTFOUND,
					    "attribute type %s: unknown SYNTAX %s",
					    attribute_type_name(at), def->syntax_oid);
	}
	if (at->sup != NULL) {
		/* What a subtype does not say it inherits (RFC 4512 §2.5.1). */
		if (at->equality == NULL)
			at->equality = at->sup->equality;
		if (at->ordering == NULL)
			at->ordering = at->sup->ordering;
		if (at->substr == NULL)
			at->substr = at->sup->substr;
		if (at->syntax == NULL) {
			at->syntax = at->sup->syntax;
			at->syntax_length = at->sup->syntax_length;
		}
	}
	def->resolve_state = RESOLVE_DONE;
	return LUMEN_OK;
}

/* Names -> types, for MUST/MAY. */
static int resolve_type_list(struct schema *s, struct object_class_def *def,
			     const struct name_list *names, const char *what,
			     const struct attribute_type **out, char *err, size_t errlen)
{
	for (size_t i = 0; i < names->count; i++) {
		out[i] = schema_attribute_type(s, names->names[i], strlen(names->names[i]));
		if (out[i] == NULL)
			return schema_error(err, errlen, &def->origin, LUMEN_ENOTFOUND,
					    "object class %s: unknown %s attribute '%s'",
					    object_class_name(&def->object_class), what,
					    names->names[i]);
	}
	return LUMEN_OK;
}

/*
 * Effective list: the superclasses' lists, then the class's own, each type
 * once (`seen` is indexed by attribute type index; `exclude` drops types
 * already in the must list from may).
 */
static int build_effective(struct schema *s, const struct object_class *oc,
			   const struct attribute_type *const *own, size_t n_own, bool must,
			   unsigned char *seen, const struct attribute_type ***out, size_t *n_out)
{
	size_t cap = n_own;
	for (size_t i = 0; i < oc->n_sups; i++)
		cap += must ? oc->sups[i]->n_must : oc->sups[i]->n_may;
	const struct attribute_type **list = arena_alloc(&s->arena, (cap ? cap : 1) * sizeof(*list));
	size_t n = 0;

	if (list == NULL)
		return LUMEN_ENOMEM;
	for (size_t i = 0; i <= oc->n_sups; i++) {
		const struct attribute_type *const *src = i < oc->n_sups
			? (must ? oc->sups[i]->must : oc->sups[i]->may) : own;
		size_t count = i < oc->n_sups
			? (must ? oc->sups[i]->n_must : oc->sups[i]->n_may) : n_own;
		for (size_t j = 0; j < count; j++) {
			if (seen[src[j]->index])
				continue;
			seen[src[j]->index] = 1;
			list[n++] = src[j];
		}
	}
	*out = list;
	*n_out = n;
	return LUMEN_OK;
}

static int resolve_object_class(struct schema *s, struct object_class_def *def,
				unsigned char *seen, char *err, size_t errlen)
{
	struct object_class *oc = &def->object_class;
	const struct attribute_type **must = NULL, **may = NULL;
	int rc;

	rc = resolve_enter(&def->resolve_state, &def->origin, "object class",
			   object_class_name(oc), err, errlen);
	if (rc != RESOLVE_NEW)
		return rc == RESOLVE_DONE ? LUMEN_OK : rc;

	const struct object_class **sups = arena_alloc(&s->arena,
		(def->sup_names.count + 1) * sizeof(*sups));
	must = arena_alloc(&s->arena, (def->must_names.count + 1) * sizeof(*must));
	may = arena_alloc(&s->arena, (def->may_names.count + 1) * sizeof(*may));
	if (sups == NULL || must == NULL || may == NULL)
		return schema_error(err, errlen, &def->origin, LUMEN_ENOMEM, "out of memory");
	for (size_t i = 0; i < def->sup_names.count; i++) {
		const char *name = def->sup_names.names[i];
		struct object_class_def *sup = name_table_get(&s->class_names, name, strlen(name));
		if (sup == NULL)
			return schema_error(err, errlen, &def->origin, LUMEN_ENOTFOUND,
					    "object class %s: unknown SUP '%s'",
					    object_class_name(oc), name);
		rc = resolve_object_class(s, sup, seen, err, errlen);
		if (rc != LUMEN_OK)
			return rc;
		sups[i] = &sup->object_class;
	}
	oc->sups = sups;
	oc->n_sups = def->sup_names.count;
	rc = resolve_type_list(s, def, &def->must_names, "MUST", must, err, errlen);
	if (rc == LUMEN_OK)
		rc = resolve_type_list(s, def, &def->may_names, "MAY", may, err, errlen);
	if (rc != LUMEN_OK)
		return rc;

	/* The sups are resolved, so `seen` is free for this class's lists. */
	const struct attribute_type **effective_must, **effective_may;
	memset(seen, 0, s->n_types);
	rc = build_effective(s, oc, must, def->must_names.count, true, seen,
			     &effective_must, &oc->n_must);
	if (rc == LUMEN_OK)    /* `seen` still marks must: those are dropped from may */
		rc = build_effective(s, oc, may, def->may_names.count, false, seen,
				     &effective_may, &oc->n_may);
	if (rc != LUMEN_OK)
		return schema_error(err, errlen, &def->origin, rc, "out of memory");
	oc->must = effective_must;
	oc->may = effective_may;
	def->resolve_state = RESOLVE_DONE;
	return LUMEN_OK;
}

/* Schemas are told apart by serial, never by address: a freed schema's
 * address can come back, and a thread's memo (schema.c) must not outlive it. */
static atomic_uint_fast64_t next_serial;

int schema_finalize(struct schema *s, char *err, size_t errlen)
{
	struct schema_origin nowhere = { "schema", 0 };
	unsigned char *seen = NULL;
	int rc = LUMEN_OK;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (s->finalized)
		return schema_error(err, errlen, &nowhere, LUMEN_EINVAL, "already finalized");
	for (size_t i = 0; rc == LUMEN_OK && i < s->n_types; i++)
		rc = resolve_attribute_type(s, s->types[i], err, errlen);
	if (rc != LUMEN_OK)
		goto done;
	seen = malloc(s->n_types ? s->n_types : 1);
	if (seen == NULL) {
		rc = schema_error(err, errlen, &nowhere, LUMEN_ENOMEM, "out of memory");
		goto done;
	}
	for (size_t i = 0; rc == LUMEN_OK && i < s->n_classes; i++)
		rc = resolve_object_class(s, s->classes[i], seen, err, errlen);
	if (rc == LUMEN_OK) {
		s->finalized = true;
		s->serial = atomic_fetch_add(&next_serial, 1) + 1;
	}
done:
	free(seen);
	return rc;
}
