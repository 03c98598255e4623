/*
 * test_database_mdb.c — back-mdb behind the database interface: every
 * operation of the table reaches the backend, and the figures (LMDB's own
 * and the caches') come through it as numbers.
 */
#include <check.h>

#include "backend_fixture.h"

#define BASE "dc=example,dc=com"

START_TEST(operations_dispatch)
{
	struct fx_results r = { 0 };
	struct backend_op op = fx_op();
	struct backend_search s = {
		.base_ndn = fx_ndn(BASE), .scope = LDAP_SCOPE_SUBTREE,
		.sink = fx_collect, .sink_ctx = &r,
	};
	ck_assert_int_eq(database_search(fx.db, &op, &s), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
	ck_assert_uint_eq(r.n, FIXTURE_ENTRIES);
	ck_assert(fx_results_has(&r, "uid=alice,ou=People," BASE));
	fx_results_free(&r);

	op = fx_op();
	ck_assert_int_eq(database_compare(fx.db, &op, fx_ndn("uid=alice,ou=People," BASE),
					  fx_view("uid"), fx_view("alice")), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_COMPARE_TRUE);

	op = fx_op();
	ck_assert_int_eq(database_delete(fx.db, &op, fx_ndn("uid=alice,ou=People," BASE)),
			 LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
	op = fx_op();
	ck_assert_int_eq(database_fetch(fx.db, &op, fx_ndn("uid=alice,ou=People," BASE),
					fx_collect, &r), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_NO_SUCH_OBJECT);
	ck_assert_uint_eq(r.n, 0);
	ck_assert_int_eq(fx_search(BASE, LDAP_SCOPE_SUBTREE, NULL, &r), LDAP_SUCCESS);
	ck_assert_uint_eq(r.n, FIXTURE_ENTRIES - 1);
	fx_results_free(&r);
	const char *names[4];
	ck_assert_uint_eq(database_unbuilt_indexes(fx.db, names, 4), 0);
}
END_TEST

/* The LMDB figures used to be read by the server through an escape hatch. */
START_TEST(figures)
{
	struct database_figures f = { 0 };
	database_figures(fx.db, &f);
	ck_assert(f.have_store);
	ck_assert_uint_eq(f.entries, FIXTURE_ENTRIES);
	ck_assert_uint_eq(f.map_size, (uint64_t)64 << 20);
	ck_assert_uint_gt(f.page_size, 0);
	ck_assert_uint_gt(f.pages_used, 1);
	ck_assert_uint_eq(f.readers_used, 0);   /* pooled readers are reset */
	ck_assert_uint_gt(f.readers_max, 0);
	ck_assert_uint_gt(f.entry_cache.capacity, 0);
	ck_assert_uint_eq(f.idl_cache.capacity, 16);
	ck_assert_ptr_null(f.suffix);           /* the server's to fill */
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("database_mdb");
	TCase *tc = tcase_create("database_mdb");
	tcase_add_checked_fixture(tc, fixture_open, fixture_close);
	tcase_add_test(tc, operations_dispatch);
	tcase_add_test(tc, figures);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
