/*
 * fuzz_schema.c — libFuzzer target for schema file text (schema.h,
 * src/model/schema_parse.c and schema_finalize.c).
 *
 * fuzz-max-len: 16384
 *
 * Each input is one .schema file (attributetype, objectclass,
 * objectidentifier, comments, continuation lines), loaded on its own with
 * schema_load_text into a fresh schema and finalized. Invariants: every
 * failure explains itself in the err buffer and names the origin; nothing
 * leaks on any path; after a successful finalize, every type and class is
 * found again by each of its names and by its OID, has a canonical
 * definition, and the canonical definitions, loaded into a second schema,
 * finalize and come back byte for byte (the subschema subentry publishes
 * them, so they must be valid input). Seeds: tests/fuzz/corpus/fuzz_schema/
 * (the shipped schema files and single definitions cut from them).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lumen_error.h"
#include "schema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ORIGIN "fuzz.schema"

static void check_err(int rc, const char *err)
{
	if (rc == LUMEN_ENOMEM)
		return;
	if (err[0] == '\0') {
		fprintf(stderr, "fuzz_schema: error %d without a message\n", rc);
		abort();
	}
}

static void check_lookups(const struct schema *s)
{
	for (size_t i = 0; i < schema_attribute_type_count(s); i++) {
		const struct attribute_type *at = schema_attribute_type_at(s, i);
		if (at == NULL || at->index != i || at->definition == NULL ||
		    at->definition[0] == '\0' || at->syntax == NULL ||
		    schema_attribute_type(s, at->oid, strlen(at->oid)) != at)
			abort();
		for (size_t n = 0; n < at->n_names; n++)
			if (schema_attribute_type(s, at->names[n], strlen(at->names[n])) != at)
				abort();
		/* SUP chains end (finalize refuses cycles). */
		size_t depth = 0;
		for (const struct attribute_type *up = at->sup; up != NULL; up = up->sup)
			if (++depth > schema_attribute_type_count(s))
				abort();
	}
	for (size_t i = 0; i < schema_object_class_count(s); i++) {
		const struct object_class *oc = schema_object_class_at(s, i);
		if (oc == NULL || oc->index != i || oc->definition == NULL ||
		    oc->definition[0] == '\0' ||
		    schema_object_class(s, oc->oid, strlen(oc->oid)) != oc)
			abort();
		for (size_t n = 0; n < oc->n_names; n++)
			if (schema_object_class(s, oc->names[n], strlen(oc->names[n])) != oc)
				abort();
		for (size_t n = 0; n < oc->n_must; n++)
			if (oc->must[n] == NULL)
				abort();
		for (size_t n = 0; n < oc->n_may; n++)
			if (oc->may[n] == NULL)
				abort();
	}
}

static void append(char **text, size_t *len, const char *keyword, const char *definition)
{
	size_t add = strlen(keyword) + 1 + strlen(definition) + 1;
	char *grown = realloc(*text, *len + add + 1);
	if (grown == NULL)
		abort();
	*text = grown;
	*len += (size_t)snprintf(*text + *len, add + 1, "%s %s\n", keyword, definition);
}

/* The canonical definitions must load, finalize and come back unchanged. */
static void check_round_trip(const struct schema *s)
{
	char *text = calloc(1, 1);
	size_t len = 0;
	char err[512] = "";
	struct schema *again;
	int rc;

	if (text == NULL)
		abort();
	for (size_t i = 0; i < schema_attribute_type_count(s); i++)
		append(&text, &len, "attributetype", schema_attribute_type_at(s, i)->definition);
	for (size_t i = 0; i < schema_object_class_count(s); i++)
		append(&text, &len, "objectclass", schema_object_class_at(s, i)->definition);
	if (schema_create(&again) != LUMEN_OK)
		abort();
	rc = schema_load_text(again, "canonical", text, err, sizeof(err));
	if (rc == LUMEN_OK)
		rc = schema_finalize(again, err, sizeof(err));
	if (rc != LUMEN_OK) {
		fprintf(stderr, "fuzz_schema: canonical definitions do not load: %s\n%s", err, text);
		abort();
	}
	if (schema_attribute_type_count(again) != schema_attribute_type_count(s) ||
	    schema_object_class_count(again) != schema_object_class_count(s))
		abort();
	for (size_t i = 0; i < schema_attribute_type_count(s); i++) {
		const char *a = schema_attribute_type_at(s, i)->definition;
		const char *b = schema_attribute_type_at(again, i)->definition;
		if (strcmp(a, b) != 0) {
			fprintf(stderr, "fuzz_schema: definition changed:\n  %s\n  %s\n", a, b);
			abort();
		}
	}
	for (size_t i = 0; i < schema_object_class_count(s); i++) {
		const char *a = schema_object_class_at(s, i)->definition;
		const char *b = schema_object_class_at(again, i)->definition;
		if (strcmp(a, b) != 0) {
			fprintf(stderr, "fuzz_schema: definition changed:\n  %s\n  %s\n", a, b);
			abort();
		}
	}
	schema_free(again);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct schema *s;
	char err[512] = "";
	char *text = malloc(size + 1);
	int rc;

	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (schema_create(&s) != LUMEN_OK)
		abort();
	rc = schema_load_text(s, ORIGIN, text, err, sizeof(err));
	if (rc != LUMEN_OK) {
		check_err(rc, err);
		goto done;
	}
	rc = schema_finalize(s, err, sizeof(err));
	if (rc != LUMEN_OK) {
		check_err(rc, err);
		goto done;
	}
	check_lookups(s);
	check_round_trip(s);
done:
	schema_free(s);
	free(text);
	return 0;
}
