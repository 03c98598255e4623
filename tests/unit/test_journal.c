/*
 * test_journal.c — back-mdb's change history (database.h, "Change
 * history"; src/backmdb/journal.c): records appended by a write hook in
 * the change's transaction (journal_append), trimmed to the last N, read
 * back after a CSN through the database interface (journal_read), never
 * left behind by a write that aborts, and kept across a reopen.
 */
#include <check.h>

#include "backend_fixture.h"

#define ALICE "uid=alice,ou=People,dc=example,dc=com"
#define BOB "uid=bob,ou=People,dc=example,dc=com"
#define OLDEST_CSN "19990101000000.000000Z#000000#000#000000"

/* How the hook appends, and the CSNs it appended (in order). */
static size_t keep;
static bool refuse;
static const char *bad_csn;
static char appended[32][CSN_LENGTH + 1];
static size_t n_appended;

struct walked {
	enum database_write_kind kind[32];
	char csn[32][CSN_LENGTH + 1];
	char ndn[32][128];
	size_t uuid_len[32];
	size_t n;
};

static int journal_hook(void *ctx, struct database_txn *txn, const struct database_txn_ops *ops,
			struct backend_op *op, const struct database_write *w)
{
	(void)ctx;
	const struct entry *e = w->after != NULL ? w->after : w->before;
	const struct entry_attribute *uuid =
		entry_find_type(e, schema_attribute_type(fx.schema, "entryUUID", 9));
	ck_assert_ptr_nonnull(uuid);
	struct database_journal_record r = { .kind = w->kind, .csn = w->csn,
					     .uuid = uuid->values[0].value };
	if (w->kind == DATABASE_WRITE_DELETE)
		r.ndn = w->before->ndn;
	if (bad_csn != NULL)
		r.csn = fx_view(bad_csn);
	int rc = ops->journal_append(txn, &r, keep);
	if (rc == LUMEN_OK && refuse) {
		op->result_code = LDAP_CONSTRAINT_VIOLATION;
		op->diagnostic = "refused by the hook";
		return LUMEN_EINVAL;
	}
	if (rc == LUMEN_OK) {
		ck_assert_uint_lt(n_appended, 32);
		snprintf(appended[n_appended++], CSN_LENGTH + 1, "%.*s", (int)w->csn.len,
			 (const char *)w->csn.ptr);
	}
	return rc;
}

static const struct database_write_hook hook = { .on_write = journal_hook };

static int walk_fn(void *ctx, const struct database_journal_record *r)
{
	struct walked *wk = ctx;
	ck_assert_uint_lt(wk->n, 32);
	ck_assert_uint_eq(r->csn.len, CSN_LENGTH);
	wk->kind[wk->n] = r->kind;
	snprintf(wk->csn[wk->n], CSN_LENGTH + 1, "%.*s", CSN_LENGTH, (const char *)r->csn.ptr);
	snprintf(wk->ndn[wk->n], 128, "%.*s", (int)r->ndn.len, (const char *)r->ndn.ptr);
	wk->uuid_len[wk->n] = r->uuid.len;
	wk->n++;
	return 0;
}

/* The records after `after` (NULL: the newest alone) into wk. */
static int walk(const char *after, struct walked *wk)
{
	memset(wk, 0, sizeof(*wk));
	struct ber_view v = after != NULL ? fx_view(after) : (struct ber_view){ NULL, 0 };
	return database_journal_read(fx.db, v, walk_fn, wk);
}

/* A hooked modify of dn's description: (rc, LDAP result). */
static int touch(const char *dn, const char *value, int *result)
{
	struct backend_op op = fx_op();
	op.write_hook = &hook;
	struct ber_view v = fx_view(value);
	struct ldap_change c = { .operation = LDAP_MOD_REPLACE,
				 .modification = { .type = fx_view("description"),
						   .values = &v, .n_values = 1 } };
	int rc = backend_modify(fx.be, &op, fx_ndn(dn), &c, 1);
	*result = op.result_code;
	return rc;
}

static void touch_ok(const char *dn, const char *value)
{
	int result;
	ck_assert_int_eq(touch(dn, value, &result), LUMEN_OK);
	ck_assert_int_eq(result, LDAP_SUCCESS);
}

static void setup(void)
{
	keep = 0;
	refuse = false;
	bad_csn = NULL;
	n_appended = 0;
	fixture_open();
}

START_TEST(empty_history_reaches_nothing)
{
	struct walked wk;
	ck_assert_int_eq(walk(NULL, &wk), LUMEN_ENOTFOUND);
	ck_assert_int_eq(walk(OLDEST_CSN, &wk), LUMEN_ENOTFOUND);
	ck_assert_uint_eq(wk.n, 0);
}
END_TEST

START_TEST(append_and_walk_after_a_csn)
{
	struct walked wk;
	touch_ok(ALICE, "one");
	struct backend_op op = fx_op();
	op.write_hook = &hook;
	ck_assert_int_eq(backend_delete(fx.be, &op, fx_ndn(BOB)), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
	touch_ok(ALICE, "two");
	ck_assert_uint_eq(n_appended, 3);

	/* the newest alone */
	ck_assert_int_eq(walk(NULL, &wk), LUMEN_OK);
	ck_assert_uint_eq(wk.n, 1);
	ck_assert_str_eq(wk.csn[0], appended[2]);
	/* after the oldest record: the two later ones, oldest first */
	ck_assert_int_eq(walk(appended[0], &wk), LUMEN_OK);
	ck_assert_uint_eq(wk.n, 2);
	ck_assert_str_eq(wk.csn[0], appended[1]);
	ck_assert_int_eq(wk.kind[0], DATABASE_WRITE_DELETE);
	ck_assert_str_eq(wk.ndn[0], "uid=bob,ou=people,dc=example,dc=com");
	ck_assert_uint_eq(wk.uuid_len[0], 36);
	ck_assert_str_eq(wk.csn[1], appended[2]);
	ck_assert_int_eq(wk.kind[1], DATABASE_WRITE_MODIFY);
	ck_assert_str_eq(wk.ndn[1], "");
	/* after the newest: nothing, but the history reaches back */
	ck_assert_int_eq(walk(appended[2], &wk), LUMEN_OK);
	ck_assert_uint_eq(wk.n, 0);
	/* older than the history: it may have lost changes */
	ck_assert_int_eq(walk(OLDEST_CSN, &wk), LUMEN_ENOTFOUND);
	/* a CSN that is not one */
	ck_assert_int_eq(walk("2026", &wk), LUMEN_EINVAL);
}
END_TEST

START_TEST(trimmed_to_the_last_n)
{
	struct walked wk;
	keep = 3;
	for (int i = 0; i < 6; i++) {
		char value[16];
		snprintf(value, sizeof(value), "v%d", i);
		touch_ok(ALICE, value);
	}
	ck_assert_uint_eq(n_appended, 6);
	/* records 3, 4, 5 remain: the history reaches back to record 3 */
	ck_assert_int_eq(walk(appended[2], &wk), LUMEN_ENOTFOUND);
	ck_assert_int_eq(walk(appended[3], &wk), LUMEN_OK);
	ck_assert_uint_eq(wk.n, 2);
	ck_assert_str_eq(wk.csn[0], appended[4]);
	ck_assert_str_eq(wk.csn[1], appended[5]);
	/* a lower bound trims what is over it at the next append */
	keep = 1;
	touch_ok(ALICE, "last");
	ck_assert_int_eq(walk(appended[5], &wk), LUMEN_ENOTFOUND);
	ck_assert_int_eq(walk(appended[6], &wk), LUMEN_OK);
	ck_assert_uint_eq(wk.n, 0);
}
END_TEST

START_TEST(aborted_write_leaves_no_record)
{
	struct walked wk;
	int result;
	touch_ok(ALICE, "kept");
	refuse = true;
	ck_assert_int_eq(touch(ALICE, "refused", &result), LUMEN_OK);
	ck_assert_int_eq(result, LDAP_CONSTRAINT_VIOLATION);
	ck_assert_int_eq(walk(appended[0], &wk), LUMEN_OK);
	ck_assert_uint_eq(wk.n, 0);
	/* a record that cannot be stored fails the write */
	refuse = false;
	bad_csn = "not a csn";
	ck_assert_int_ne(touch(ALICE, "bad", &result), LUMEN_OK);
	ck_assert_int_ne(result, LDAP_SUCCESS);
	ck_assert_int_eq(walk(appended[0], &wk), LUMEN_OK);
	ck_assert_uint_eq(wk.n, 0);
	/* and the entry kept the committed value */
	struct fx_results r = { .n = 0 };
	ck_assert_int_eq(fx_search(ALICE, LDAP_SCOPE_BASE, "(description=kept)", &r),
			 LDAP_SUCCESS);
	ck_assert(fx_results_has(&r, ALICE));
	fx_results_free(&r);
}
END_TEST

START_TEST(history_survives_a_reopen)
{
	struct walked wk;
	touch_ok(ALICE, "one");
	touch_ok(ALICE, "two");
	const char *suffixes[] = { "dc=example,dc=com" };
	const struct backend_settings st = { .suffixes = suffixes, .n_suffixes = 1,
					     .directory = fx.dir, .dbnosync = true,
					     .indexes = fixture_indexes,
					     .n_indexes = sizeof(fixture_indexes) /
							  sizeof(fixture_indexes[0]) };
	char err[256];
	fixture_close_database();
	ck_assert_int_eq(fixture_open_database(&st, err, sizeof(err)), LUMEN_OK);
	ck_assert_int_eq(walk(appended[0], &wk), LUMEN_OK);
	ck_assert_uint_eq(wk.n, 1);
	ck_assert_str_eq(wk.csn[0], appended[1]);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("journal");
	TCase *tc = tcase_create("journal");
	tcase_add_checked_fixture(tc, setup, fixture_close);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, empty_history_reaches_nothing);
	tcase_add_test(tc, append_and_walk_after_a_csn);
	tcase_add_test(tc, trimmed_to_the_last_n);
	tcase_add_test(tc, aborted_write_leaves_no_record);
	tcase_add_test(tc, history_survives_a_reopen);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
