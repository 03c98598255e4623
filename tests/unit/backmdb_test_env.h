/*
 * backmdb_test_env.h — throw-away LMDB stores for the back-mdb suites.
 *
 * test_store_open() makes a fresh directory under /tmp (mkdtemp) and opens
 * a store in it; test_store_close() closes it and removes the directory.
 */
#ifndef LUMEN_BACKMDB_TEST_ENV_H
#define LUMEN_BACKMDB_TEST_ENV_H

#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mdb_store.h"

struct test_store {
	char dir[64];
	struct mdb_store *store;
};

static inline int test_remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static inline void test_store_open_opts(struct test_store *t, size_t maxsize, bool nosync)
{
	char err[256] = "";
	strcpy(t->dir, "/tmp/lumen-backmdb-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(t->dir));
	struct mdb_store_options opts = {
		.directory = t->dir, .maxsize = maxsize, .dbnosync = nosync,
	};
	int rc = mdb_store_open(&opts, &t->store, err, sizeof(err));
	ck_assert_msg(rc == LUMEN_OK, "open %s: %s", t->dir, err);
}

static inline void test_store_open(struct test_store *t)
{
	/* nosync: the suites test logic, not the disk */
	test_store_open_opts(t, (size_t)64 << 20, true);
}

static inline void test_store_close(struct test_store *t)
{
	mdb_store_close(t->store);
	t->store = NULL;
	nftw(t->dir, test_remove_one, 8, FTW_DEPTH | FTW_PHYS);
}

static inline MDB_txn *test_write_txn(struct test_store *t)
{
	MDB_txn *txn = NULL;
	ck_assert_int_eq(mdb_txn_begin(t->store->env, NULL, 0, &txn), 0);
	return txn;
}

static inline MDB_txn *test_read_txn(struct test_store *t)
{
	MDB_txn *txn = NULL;
	ck_assert_int_eq(mdb_txn_begin(t->store->env, NULL, MDB_RDONLY, &txn), 0);
	return txn;
}

#define TEST_VIEW(s) ((struct ber_view){ (const uint8_t *)(s), strlen(s) })

#endif
