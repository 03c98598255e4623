/*
 * test_database_mdb.c — back-mdb behind the database interface: every
 * operation of the table reaches the backend, and the figures (LMDB's own
 * and the caches') come through it as numbers, and a write tells its
 * operation's wait hook around each of its waits, a group's owner too.
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

/* What a wait hook was told, in order: '(' a wait begins, ')' it ends. */
struct told {
	char seq[16];
	size_t n;
};

static void record_wait(void *ctx, bool waiting)
{
	struct told *t = ctx;
	if (t->n + 1 < sizeof(t->seq))
		t->seq[t->n++] = waiting ? '(' : ')';
}

static struct backend_op op_telling(struct told *t)
{
	struct backend_op op = fx_op();
	op.wait = record_wait;
	op.wait_ctx = t;
	return op;
}

START_TEST(waits_are_told)
{
	struct told alone = { 0 }, owner = { 0 }, member = { 0 }, aborted = { 0 };
	struct backend_op op = op_telling(&alone);
	ck_assert_int_eq(database_delete(fx.db, &op, fx_ndn("uid=alice,ou=People," BASE)),
			 LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
	ck_assert_str_eq(alone.seq, "()");

	/* A group: its owner waits for it to open and for its commit. */
	struct backend_op owner_op = op_telling(&owner);
	struct database_group *g = NULL;
	ck_assert_int_eq(database_group_begin(fx.db, &owner_op, &g), LUMEN_OK);
	ck_assert_str_eq(owner.seq, "()");
	op = op_telling(&member);
	op.group = g;
	ck_assert_int_eq(database_delete(fx.db, &op, fx_ndn("uid=bob,ou=People," BASE)),
			 LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
	ck_assert_str_eq(member.seq, "()");
	ck_assert_int_eq(database_group_end(fx.db, &owner_op, g, true), LUMEN_OK);
	ck_assert_str_eq(owner.seq, "()()");
	struct fx_results r = { 0 };
	ck_assert_int_eq(fx_search(BASE, LDAP_SCOPE_SUBTREE, NULL, &r), LDAP_SUCCESS);
	ck_assert_uint_eq(r.n, FIXTURE_ENTRIES - 2);
	fx_results_free(&r);

	/* Ending without a commit waits for the rollback alike. */
	owner_op = op_telling(&aborted);
	ck_assert_int_eq(database_group_begin(fx.db, &owner_op, &g), LUMEN_OK);
	ck_assert_int_eq(database_group_end(fx.db, &owner_op, g, false), LUMEN_OK);
	ck_assert_str_eq(aborted.seq, "()()");
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("database_mdb");
	TCase *tc = tcase_create("database_mdb");
	tcase_add_checked_fixture(tc, fixture_open, fixture_close);
	tcase_add_test(tc, operations_dispatch);
	tcase_add_test(tc, figures);
	tcase_add_test(tc, waits_are_told);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
