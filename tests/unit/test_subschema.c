/* test_subschema.c — the cn=Subschema entry built from the shipped schema. */
#include <check.h>
#include <string.h>

#include "lumen_error.h"
#include "subschema.h"

static struct schema *load(const char *const *files)
{
	struct schema *s = NULL;
	char err[256];
	ck_assert_int_eq(schema_create(&s), LUMEN_OK);
	for (; *files != NULL; files++)
		ck_assert_msg(schema_load_file(s, *files, err, sizeof err) == LUMEN_OK, "%s", err);
	ck_assert_msg(schema_finalize(s, err, sizeof err) == LUMEN_OK, "%s", err);
	return s;
}

static const char *const all_files[] = {
	"schema/core.schema", "schema/cosine.schema", "schema/inetorgperson.schema",
	"schema/nis.schema", "schema/lumen.schema", NULL,
};

static bool has_value_prefix(const struct entry *e, const char *attr, const char *prefix)
{
	const struct attribute_type *at = schema_attribute_type(e->schema, attr, strlen(attr));
	const struct entry_attribute *a = entry_find_type(e, at);
	if (a == NULL)
		return false;
	for (size_t i = 0; i < a->n_values; i++)
		if (a->values[i].value.len >= strlen(prefix) &&
		    memcmp(a->values[i].value.ptr, prefix, strlen(prefix)) == 0)
			return true;
	return false;
}

static size_t value_count(const struct entry *e, const char *attr)
{
	const struct attribute_type *at = schema_attribute_type(e->schema, attr, strlen(attr));
	const struct entry_attribute *a = entry_find_type(e, at);
	return a == NULL ? 0 : a->n_values;
}

START_TEST(publishes_every_schema_element)
{
	struct schema *s = load(all_files);
	struct entry *e = NULL;
	ck_assert_int_eq(subschema_build(s, &e), LUMEN_OK);
	ck_assert_str_eq((const char *)e->ndn.ptr, "cn=subschema");
	ck_assert_uint_eq(value_count(e, "attributeTypes"), schema_attribute_type_count(s));
	ck_assert_uint_eq(value_count(e, "objectClasses"), schema_object_class_count(s));
	ck_assert(value_count(e, "ldapSyntaxes") > 15);
	ck_assert(has_value_prefix(e, "matchingRules", "( 2.5.13.2 NAME 'caseIgnoreMatch'"));
	ck_assert(has_value_prefix(e, "ldapSyntaxes", "( 1.3.6.1.4.1.1466.115.121.1.15 "));
	ck_assert(has_value_prefix(e, "attributeTypes", "( 2.5.4.3 NAME ( 'cn' 'commonName' )"));
	ck_assert(has_value_prefix(e, "objectClasses", "( 2.16.840.1.113730.3.2.2 NAME 'inetOrgPerson'"));
	ck_assert(has_value_prefix(e, "matchingRuleUse", "( 2.5.13.27 NAME 'generalizedTimeMatch' APPLIES ("));
	ck_assert(has_value_prefix(e, "objectClass", "subschema"));
	entry_free(e);
	schema_free(s);
}
END_TEST

START_TEST(needs_the_subschema_attributes)
{
	static const char *const core_only[] = { "schema/core.schema", NULL };
	struct schema *s = load(core_only);
	struct entry *e = (struct entry *)1;
	ck_assert_int_eq(subschema_build(s, &e), LUMEN_ENOTFOUND);
	ck_assert_ptr_null(e);
	schema_free(s);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *suite = suite_create("subschema");
	TCase *tc = tcase_create("build");
	tcase_add_test(tc, publishes_every_schema_element);
	tcase_add_test(tc, needs_the_subschema_attributes);
	suite_add_tcase(suite, tc);
	return suite;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
