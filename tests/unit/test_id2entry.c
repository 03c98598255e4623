/*
 * test_id2entry.c — the id2entry table, and the store around it: opening,
 * format version, entry IDs, reusable readers, a full map.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backmdb_test_env.h"
#include "id2entry.h"

static struct test_store t;

static void setup(void)
{
	test_store_open(&t);
}

static void teardown(void)
{
	test_store_close(&t);
}

static void assert_entry(MDB_txn *txn, uint64_t id, const char *want)
{
	struct ber_view v;
	ck_assert_int_eq(id2entry_get(t.store, txn, id, &v), LUMEN_OK);
	ck_assert_uint_eq(v.len, strlen(want));
	ck_assert(memcmp(v.ptr, want, v.len) == 0);
}

START_TEST(add_get_replace_delete)
{
	MDB_txn *txn = test_write_txn(&t);
	struct ber_view v;
	uint64_t last;

	ck_assert_int_eq(id2entry_last_id(t.store, txn, &last), LUMEN_OK);
	ck_assert_uint_eq(last, 0);
	ck_assert_int_eq(id2entry_add(t.store, txn, 5, "five", 4), LUMEN_OK);
	ck_assert_int_eq(id2entry_add(t.store, txn, 9, "nine", 4), LUMEN_OK);
	ck_assert_int_eq(id2entry_add(t.store, txn, 7, "seven", 5), LUMEN_OK); /* not appending */
	ck_assert_int_eq(id2entry_add(t.store, txn, 7, "again", 5), LUMEN_EEXIST);
	ck_assert_int_eq(id2entry_add(t.store, txn, 9, "again", 5), LUMEN_EEXIST);
	ck_assert_int_eq(id2entry_add(t.store, txn, 0, "zero", 4), LUMEN_EINVAL);
	void *buf;
	ck_assert_int_eq(id2entry_reserve(t.store, txn, 10, 3, &buf), LUMEN_OK);
	memcpy(buf, "ten", 3);
	assert_entry(txn, 7, "seven");
	assert_entry(txn, 10, "ten");
	ck_assert_int_eq(id2entry_replace(t.store, txn, 7, "SEVEN!", 6), LUMEN_OK);
	ck_assert_int_eq(id2entry_replace(t.store, txn, 8, "x", 1), LUMEN_ENOTFOUND);
	ck_assert_int_eq(id2entry_delete(t.store, txn, 5), LUMEN_OK);
	ck_assert_int_eq(id2entry_delete(t.store, txn, 5), LUMEN_ENOTFOUND);
	ck_assert_int_eq(id2entry_get(t.store, txn, 5, &v), LUMEN_ENOTFOUND);
	ck_assert_int_eq(id2entry_last_id(t.store, txn, &last), LUMEN_OK);
	ck_assert_uint_eq(last, 10);
	ck_assert_int_eq(mdb_txn_commit(txn), 0);

	/* committed: visible to a reader, walked in ID order */
	struct mdb_reader r;
	struct id2entry_cursor c;
	uint64_t id, seen[4];
	size_t n = 0;
	mdb_reader_init(&r, t.store);
	ck_assert_int_eq(mdb_reader_begin(&r), LUMEN_OK);
	assert_entry(r.txn, 7, "SEVEN!");
	ck_assert_int_eq(id2entry_cursor_open(t.store, r.txn, &c), LUMEN_OK);
	while (id2entry_cursor_next(&c, &id, &v) == LUMEN_OK && n < 4)
		seen[n++] = id;
	ck_assert_int_eq(id2entry_cursor_next(&c, &id, &v), LUMEN_ENOTFOUND);
	id2entry_cursor_close(&c);
	ck_assert_uint_eq(n, 3);
	ck_assert(seen[0] == 7 && seen[1] == 9 && seen[2] == 10);
	mdb_reader_end(&r);
	mdb_reader_free(&r);
}
END_TEST

/* A reader keeps its snapshot until refreshed, and can be reused. */
START_TEST(reader_snapshots)
{
	struct mdb_reader r;
	struct ber_view v;

	mdb_reader_init(&r, t.store);
	ck_assert_int_eq(mdb_reader_begin(&r), LUMEN_OK);
	ck_assert_int_eq(id2entry_get(t.store, r.txn, 1, &v), LUMEN_ENOTFOUND);
	MDB_txn *w = test_write_txn(&t);
	ck_assert_int_eq(id2entry_add(t.store, w, 1, "one", 3), LUMEN_OK);
	ck_assert_int_eq(mdb_txn_commit(w), 0);
	ck_assert_int_eq(id2entry_get(t.store, r.txn, 1, &v), LUMEN_ENOTFOUND);
	ck_assert_int_eq(mdb_reader_refresh(&r), LUMEN_OK);
	assert_entry(r.txn, 1, "one");
	mdb_reader_end(&r);
	mdb_reader_end(&r); /* twice is harmless */
	ck_assert_int_eq(mdb_reader_begin(&r), LUMEN_OK);
	assert_entry(r.txn, 1, "one");
	mdb_reader_free(&r);
}
END_TEST

START_TEST(next_id_persists)
{
	uint64_t id;
	MDB_txn *txn = test_write_txn(&t);

	for (uint64_t want = 1; want <= 3; want++) {
		ck_assert_int_eq(mdb_store_next_id(t.store, txn, &id), LUMEN_OK);
		ck_assert_uint_eq(id, want);
	}
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	/* an aborted allocation is rolled back with its txn */
	txn = test_write_txn(&t);
	ck_assert_int_eq(mdb_store_next_id(t.store, txn, &id), LUMEN_OK);
	mdb_txn_abort(txn);

	char err[256];
	mdb_store_close(t.store);
	struct mdb_store_options opts = { .directory = t.dir, .dbnosync = true };
	ck_assert_int_eq(mdb_store_open(&opts, &t.store, err, sizeof(err)), LUMEN_OK);
	ck_assert_uint_eq(t.store->maxsize, MDB_STORE_DEFAULT_MAXSIZE);
	txn = test_write_txn(&t);
	ck_assert_int_eq(mdb_store_next_id(t.store, txn, &id), LUMEN_OK);
	ck_assert_uint_eq(id, 4);
	mdb_txn_abort(txn);
}
END_TEST

START_TEST(open_errors)
{
	struct mdb_store *s = (void *)1;
	char err[256] = "";
	struct mdb_store_options none = { .directory = NULL };
	struct mdb_store_options missing = { .directory = "/tmp/lumen-no-such-dir/xyz" };

	ck_assert_int_eq(mdb_store_open(&none, &s, err, sizeof(err)), LUMEN_EINVAL);
	ck_assert_ptr_null(s);
	ck_assert_int_eq(mdb_store_open(&missing, &s, err, sizeof(err)), LUMEN_ENOTFOUND);
	ck_assert_msg(strstr(err, "/tmp/lumen-no-such-dir/xyz") != NULL, "message: %s", err);

	/* a database written by another format version is refused, by name */
	MDB_txn *txn = test_write_txn(&t);
	MDB_val key = { 7, "version" };
	uint32_t other = 99;
	MDB_val data = { sizeof(other), &other };
	ck_assert_int_eq(mdb_put(txn, t.store->meta, &key, &data, 0), 0);
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	mdb_store_close(t.store);
	struct mdb_store_options opts = { .directory = t.dir };
	ck_assert_int_eq(mdb_store_open(&opts, &t.store, err, sizeof(err)), LUMEN_EUNSUPPORTED);
	ck_assert_ptr_null(t.store);
	ck_assert_msg(strstr(err, "99") != NULL && strstr(err, t.dir) != NULL, "message: %s", err);
	ck_assert_msg(strstr(err, "reads 1 to 2") != NULL, "message: %s", err);
}
END_TEST

/*
 * A version 1 database (records without normalized forms) opens: read
 * only it stays version 1; opened for writing it becomes version 2, so an
 * older lumend refuses it rather than misread the records it may now hold.
 */
START_TEST(version_one_upgrades_when_written)
{
	char err[256] = "";
	uint32_t one = 1, version = 0;
	MDB_val key = { 7, "version" }, data = { sizeof(one), &one };
	MDB_txn *txn = test_write_txn(&t);
	ck_assert_int_eq(mdb_put(txn, t.store->meta, &key, &data, 0), 0);
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	mdb_store_close(t.store);

	struct mdb_store_options ro = { .directory = t.dir, .read_only = true };
	ck_assert_int_eq(mdb_store_open(&ro, &t.store, err, sizeof(err)), LUMEN_OK);
	ck_assert_int_eq(mdb_txn_begin(t.store->env, NULL, MDB_RDONLY, &txn), 0);
	ck_assert_int_eq(mdb_get(txn, t.store->meta, &key, &data), 0);
	memcpy(&version, data.mv_data, sizeof(version));
	ck_assert_uint_eq(version, 1);
	mdb_txn_abort(txn);
	mdb_store_close(t.store);

	struct mdb_store_options rw = { .directory = t.dir };
	ck_assert_int_eq(mdb_store_open(&rw, &t.store, err, sizeof(err)), LUMEN_OK);
	ck_assert_int_eq(mdb_txn_begin(t.store->env, NULL, MDB_RDONLY, &txn), 0);
	ck_assert_int_eq(mdb_get(txn, t.store->meta, &key, &data), 0);
	memcpy(&version, data.mv_data, sizeof(version));
	ck_assert_uint_eq(version, MDB_STORE_FORMAT_VERSION);
	mdb_txn_abort(txn);
}
END_TEST

START_TEST(error_mapping)
{
	ck_assert_int_eq(mdb_store_map_error(MDB_SUCCESS), LUMEN_OK);
	ck_assert_int_eq(mdb_store_map_error(MDB_MAP_FULL), LUMEN_EFULL);
	ck_assert_int_eq(mdb_store_map_error(MDB_NOTFOUND), LUMEN_ENOTFOUND);
	ck_assert_int_eq(mdb_store_map_error(MDB_KEYEXIST), LUMEN_EEXIST);
	ck_assert_int_eq(mdb_store_map_error(MDB_READERS_FULL), LUMEN_ELIMIT);
	ck_assert_int_eq(mdb_store_map_error(ENOMEM), LUMEN_ENOMEM);
	ck_assert_int_eq(mdb_store_map_error(MDB_CORRUPTED), LUMEN_EIO);
}
END_TEST

/* A tiny map fills; the error says which setting to raise. */
START_TEST(map_full)
{
	struct test_store small;
	char msg[256];
	static char value[16384];
	int rc = LUMEN_OK;
	uint64_t id = 1;

	test_store_open_opts(&small, (size_t)256 << 10, true);
	MDB_txn *txn;
	ck_assert_int_eq(mdb_txn_begin(small.store->env, NULL, 0, &txn), 0);
	for (; id < 1000 && rc == LUMEN_OK; id++)
		rc = id2entry_add(small.store, txn, id, value, sizeof(value));
	ck_assert_int_eq(rc, LUMEN_EFULL);
	ck_assert_uint_gt(id, 2);
	mdb_txn_abort(txn);
	mdb_store_describe(small.store, rc, msg, sizeof(msg));
	ck_assert_msg(strstr(msg, "maxsize") != NULL && strstr(msg, small.dir) != NULL, "%s", msg);
	test_store_close(&small);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("id2entry");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, add_get_replace_delete);
	tcase_add_test(tc, reader_snapshots);
	tcase_add_test(tc, next_id_persists);
	tcase_add_test(tc, open_errors);
	tcase_add_test(tc, error_mapping);
	tcase_add_test(tc, version_one_upgrades_when_written);
	tcase_add_test(tc, map_full);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
