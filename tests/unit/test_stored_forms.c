/*
 * test_stored_forms.c — the record of the matching rules stored normalized
 * forms follow: recorded on the first open, kept through added types,
 * refused for good after a changed rule, a changed revision or a value that
 * is not a record.
 */
#include <check.h>
#include <string.h>

#include "backmdb_test_env.h"
#include "stored_forms.h"

static struct test_store t;

static void setup(void) { test_store_open(&t); }
static void teardown(void) { test_store_close(&t); }

/* A schema of core.schema and the given extra definitions. */
static struct schema *schema_with(const char *extra)
{
	char err[256] = "";
	struct schema *s;
	ck_assert_int_eq(schema_create(&s), LUMEN_OK);
	ck_assert_msg(schema_load_file(s, "schema/core.schema", err, sizeof(err)) == LUMEN_OK,
		      "%s", err);
	if (extra != NULL)
		ck_assert_msg(schema_load_text(s, "extra", extra, err, sizeof(err)) == LUMEN_OK,
			      "%s", err);
	ck_assert_msg(schema_finalize(s, err, sizeof(err)) == LUMEN_OK, "%s", err);
	return s;
}

#define X_IGNORE "attributetype ( 1.3.6.1.4.1.99999.9.1 NAME 'x-one' EQUALITY caseIgnoreMatch " \
		 "SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 )\n"
#define X_EXACT  "attributetype ( 1.3.6.1.4.1.99999.9.1 NAME 'x-one' EQUALITY caseExactMatch " \
		 "SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 )\n"
#define X_TWO    "attributetype ( 1.3.6.1.4.1.99999.9.2 NAME 'x-two' EQUALITY caseIgnoreMatch " \
		 "SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 )\n"

static bool check(const struct schema *s)
{
	bool trusted = true;
	ck_assert_int_eq(stored_forms_check(t.store, s, &trusted), LUMEN_OK);
	return trusted;
}

START_TEST(added_types_keep_trust)
{
	struct schema *one = schema_with(X_IGNORE), *both = schema_with(X_IGNORE X_TWO);
	ck_assert(check(one));          /* recorded */
	ck_assert(check(one));
	ck_assert(check(both));         /* a new type: no record holds it yet */
	ck_assert(check(one));          /* x-two's rule stays recorded, unused */
	schema_free(one);
	schema_free(both);
}
END_TEST

START_TEST(changed_rule_ends_trust_for_good)
{
	struct schema *ignore = schema_with(X_IGNORE), *exact = schema_with(X_EXACT);
	ck_assert(check(ignore));
	ck_assert(!check(exact));
	ck_assert(!check(ignore));      /* records of both rules may coexist now */
	ck_assert(!check(exact));
	schema_free(ignore);
	schema_free(exact);
}
END_TEST

/* A removed type stays recorded: coming back with another rule is a change. */
START_TEST(removed_type_keeps_its_rule)
{
	struct schema *with = schema_with(X_IGNORE), *without = schema_with(NULL),
		      *back = schema_with(X_EXACT);
	ck_assert(check(with));
	ck_assert(check(without));
	ck_assert(!check(back));
	schema_free(with);
	schema_free(without);
	schema_free(back);
}
END_TEST

static void put_record(const void *bytes, size_t len)
{
	MDB_txn *txn = test_write_txn(&t);
	MDB_val key = { 13, "normalization" }, data = { len, (void *)bytes };
	ck_assert_int_eq(mdb_put(txn, t.store->meta, &key, &data, 0), 0);
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
}

START_TEST(foreign_records_are_not_trusted)
{
	struct schema *s = schema_with(NULL);
	static const struct { const char *name, *bytes; size_t len; } bad[] = {
		{ "empty", "", 0 },
		{ "a fingerprint", "\x01\x02\x03\x04\x05\x06\x07\x08", 8 },
		{ "another revision", "LN\x02\0\0\0\0\0\0\0", 10 },
		{ "pair without its rule", "LN\x01\0\0\0\0\0\0\0" "2.5.4.3", 17 },
		{ "rule not terminated", "LN\x01\0\0\0\0\0\0\0" "2.5.4.3\0caseIgnoreMatch", 31 },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put_record(bad[i].bytes, bad[i].len);
		ck_assert_msg(!check(s), "%s", bad[i].name);
	}
	schema_free(s);
}
END_TEST

/* Read only, with nothing recorded: the records are a version 1 database's
 * (no forms) or unknown; nothing is written. */
START_TEST(read_only_without_record)
{
	char err[256] = "";
	struct schema *s = schema_with(NULL);
	mdb_store_close(t.store);
	struct mdb_store_options ro = { .directory = t.dir, .read_only = true };
	ck_assert_int_eq(mdb_store_open(&ro, &t.store, err, sizeof(err)), LUMEN_OK);
	ck_assert(!check(s));
	schema_free(s);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("stored_forms");
	TCase *tc = tcase_create("rules");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, added_types_keep_trust);
	tcase_add_test(tc, changed_rule_ends_trust_for_good);
	tcase_add_test(tc, removed_type_keeps_its_rule);
	tcase_add_test(tc, foreign_records_are_not_trusted);
	tcase_add_test(tc, read_only_without_record);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
