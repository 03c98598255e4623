/*
 * test_rootdse.c — the root DSE as an entry and through its in-memory
 * database: attributes from the configuration, objectClass top and
 * extensibleObject (as slapd's top and OpenLDAProotDSE), filters by
 * the schema's matching rules, base scope only, SASL EXTERNAL, and the
 * "compute nothing" flag the server's encoder honours.
 */
#include <check.h>
#include <string.h>

#include "config.h"
#include "database.h"
#include "entry_fixture.h"
#include "filter.h"
#include "ldap_result_codes.h"
#include "lumen_error.h"
#include "memdb.h"
#include "rootdse.h"

static char *suffixes[] = { "dc=example,dc=com", "o=Other" };
static struct config_database database = { .suffixes = suffixes, .n_suffixes = 2 };
static struct config cfg;
static struct rootdse *dse;
static struct database *db;
static struct arena arena;

static void setup(void)
{
	fixture_schema_setup();
	memset(&cfg, 0, sizeof(cfg));
	cfg.schema = fixture_schema;
	cfg.databases = &database;
	cfg.n_databases = 1;
	ck_assert_int_eq(rootdse_create(&cfg, &dse), LUMEN_OK);
	struct memdb_source src = { "", rootdse_build, dse, true, false };
	ck_assert_int_eq(memdb_open(fixture_schema, &src, &db), LUMEN_OK);
	arena_init(&arena, 0);
}

static void teardown(void)
{
	database_close(db);
	rootdse_free(dse);
	arena_free(&arena);
	fixture_schema_teardown();
}

static size_t values_of(const char *type)
{
	const struct entry *e = rootdse_entry(dse);
	const struct attribute_type *t = schema_attribute_type(fixture_schema, type, strlen(type));
	const struct entry_attribute *a = t != NULL ? entry_find_type(e, t) : NULL;
	return a != NULL ? a->n_values : 0;
}

START_TEST(attributes)
{
	const struct entry *e = rootdse_entry(dse);
	ck_assert_uint_eq(e->dn.len, 0);
	ck_assert_uint_eq(values_of("namingContexts"), 2);
	ck_assert_uint_eq(values_of("supportedLDAPVersion"), 1);
	ck_assert_uint_eq(values_of("subschemaSubentry"), 1);
	ck_assert_uint_ge(values_of("supportedControl"), 1);
	/* without TLS no StartTLS; without an ldapi listener no SASL */
	ck_assert_uint_eq(values_of("supportedExtension"), 5);
	ck_assert_uint_eq(values_of("supportedSASLMechanisms"), 0);
	ck_assert_uint_eq(values_of("objectClass"), 2);
	ck_assert_int_eq(rootdse_set_sasl_external(dse, true), LUMEN_OK);
	ck_assert_uint_eq(values_of("supportedSASLMechanisms"), 1);
	ck_assert_int_eq(rootdse_set_sasl_external(dse, true), LUMEN_OK);
	ck_assert_uint_eq(values_of("supportedSASLMechanisms"), 1);
}
END_TEST

struct found {
	size_t n;
	bool complete;
};

static int count(void *ctx, const struct entry *e, const struct backend_entry_info *info)
{
	struct found *f = ctx;
	(void)e;
	f->n++;
	f->complete = info->complete;
	return 0;
}

/* Entries a search of "" with scope and filter (NULL: none) returns; *code its result. */
static size_t search(enum ldap_scope scope, const char *text, int *code)
{
	struct found found = { 0, false };
	struct filter f;
	struct ldap_filter *parsed;
	size_t at;
	if (text != NULL) {
		ck_assert_int_eq(filter_text_parse(text, strlen(text), &arena, NULL, &parsed, &at),
				 LUMEN_OK);
		ck_assert_int_eq(filter_compile(fixture_schema, parsed, NULL, &arena, &f), LUMEN_OK);
	}
	struct backend_op op = { .arena = &arena };
	struct backend_search s = {
		.base_ndn = { (const uint8_t *)"", 0 }, .scope = scope,
		.filter = text != NULL ? &f : NULL, .sink = count, .sink_ctx = &found,
	};
	ck_assert_int_eq(database_search(db, &op, &s), LUMEN_OK);
	*code = op.result_code;
	ck_assert(found.n == 0 || found.complete);
	return found.n;
}

START_TEST(filters)
{
	static const struct { const char *filter; size_t n; } cases[] = {
		{ "(objectClass=*)", 1 },
		{ "(|(supportedLDAPVersion=3)(objectClass=nothing))", 1 },
		{ "(supportedLDAPVersion>=3)", 1 },
		{ "(supportedLDAPVersion>=4)", 0 },
		{ "(vendorName=Lumen)", 1 },
		{ "(vendorName=lumen)", 0 },          /* caseExactIA5Match (RFC 3045) */
		{ "(supportedFeatures=1.3.6.1.1.14)", 1 },
		{ "(namingContexts=*)", 1 },
		{ "(!(objectClass=*))", 0 },
		{ "(objectClass=top)", 1 },
		{ "(objectClass=extensibleObject)", 1 },
		{ "(objectClass=person)", 0 },
		{ "(&(vendorVersion=*)(!(vendorName=Other)))", 1 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int code;
		ck_assert_msg(search(LDAP_SCOPE_BASE, cases[i].filter, &code) == cases[i].n, "%s",
			      cases[i].filter);
		ck_assert_int_eq(code, LDAP_SUCCESS);
	}
}
END_TEST

/* RFC 4512 §5.1: not part of one-level or subtree searches of "". */
START_TEST(base_scope_only)
{
	int code;
	ck_assert_uint_eq(search(LDAP_SCOPE_ONE, NULL, &code), 0);
	ck_assert_int_eq(code, LDAP_NO_SUCH_OBJECT);
	ck_assert_uint_eq(search(LDAP_SCOPE_SUBTREE, NULL, &code), 0);
	ck_assert_int_eq(code, LDAP_NO_SUCH_OBJECT);
	ck_assert_uint_eq(search(LDAP_SCOPE_BASE, NULL, &code), 1);
	ck_assert_int_eq(code, LDAP_SUCCESS);
}
END_TEST

START_TEST(compare)
{
	struct backend_op op = { .arena = &arena };
	struct ber_view root = { (const uint8_t *)"", 0 };
	ck_assert_int_eq(database_compare(db, &op, root, fixture_view("supportedLDAPVersion"),
					  fixture_view("3")), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_COMPARE_TRUE);
	ck_assert_int_eq(database_compare(db, &op, root, fixture_view("namingContexts"),
					  fixture_view("o=Other")), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_INAPPROPRIATE_MATCHING);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("rootdse");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, attributes);
	tcase_add_test(tc, filters);
	tcase_add_test(tc, base_scope_only);
	tcase_add_test(tc, compare);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
