/*
 * entry_fixture.h — the schema the entry and filter suites share.
 *
 * Loads the shipped schema files (schema/core, cosine, inetorgperson, nis,
 * lumen; tests run from the repository root). Include once per suite.
 */
#ifndef LUMEN_ENTRY_FIXTURE_H
#define LUMEN_ENTRY_FIXTURE_H

#include <check.h>
#include <string.h>

#include "entry.h"
#include "schema.h"

/* lumen.schema holds the operational types (createTimestamp, ...). */
static const char *const fixture_schema_files[] = {
	"schema/core.schema", "schema/cosine.schema", "schema/inetorgperson.schema",
	"schema/nis.schema", "schema/lumen.schema",
};

static struct schema *fixture_schema;

static void fixture_schema_setup(void)
{
	char err[512] = "";
	ck_assert_int_eq(schema_create(&fixture_schema), LUMEN_OK);
	for (size_t i = 0; i < sizeof(fixture_schema_files) / sizeof(fixture_schema_files[0]); i++)
		ck_assert_msg(schema_load_file(fixture_schema, fixture_schema_files[i], err,
					       sizeof(err)) == LUMEN_OK, "%s", err);
	ck_assert_msg(schema_finalize(fixture_schema, err, sizeof(err)) == LUMEN_OK, "%s", err);
}

static void fixture_schema_teardown(void)
{
	schema_free(fixture_schema);
	fixture_schema = NULL;
}

static struct ber_view fixture_view(const char *s)
{
	return (struct ber_view){ (const uint8_t *)s, strlen(s) };
}

/*
 * An entry from "attr: value" lines separated by '\n' (no LDIF escapes).
 * Fails the test on any error.
 */
static inline struct entry *fixture_entry(const char *dn, const char *lines)
{
	struct entry *e = NULL;
	ck_assert_int_eq(entry_create(fixture_schema, fixture_view(dn), (struct ber_view){ NULL, 0 },
				      &e), LUMEN_OK);
	char buf[4096];
	ck_assert_uint_lt(strlen(lines), sizeof(buf));
	strcpy(buf, lines);
	char *save = NULL;
	for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strstr(line, ": ");
		ck_assert_ptr_nonnull(colon);
		*colon = '\0';
		int rc = entry_add_text(e, line, colon + 2);
		ck_assert_msg(rc == LUMEN_OK, "%s: %s", line, lumen_strerror(rc));
	}
	return e;
}

#endif
