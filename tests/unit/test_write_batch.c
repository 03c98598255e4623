/*
 * test_write_batch.c — group commit with concurrent submitters, per-request
 * failure isolation, post-commit hooks, a full map, and bulk mode.
 */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backmdb_test_env.h"
#include "dn2id.h"
#include "id2entry.h"
#include "write_batch.h"

static struct test_store t;

/* One "add": an ID, an id2entry record and a dn2id child of entry 1. */
struct add_op {
	struct mdb_store *store;
	char name[32];
	size_t value_size;      /* 0 = the name itself */
	bool fail_after_write;  /* write everything, then report an error */
	uint64_t id;
	/* filled by the hook */
	int hook_result;
	uint64_t hook_txnid;
	int hook_calls;
};

static int apply_add(MDB_txn *txn, void *arg)
{
	struct add_op *op = arg;
	static const char filler[65536];

	int rc = mdb_store_next_id(op->store, txn, &op->id);
	if (rc == LUMEN_OK && op->value_size)
		rc = id2entry_add(op->store, txn, op->id, filler, op->value_size);
	else if (rc == LUMEN_OK)
		rc = id2entry_add(op->store, txn, op->id, op->name, strlen(op->name));
	if (rc == LUMEN_OK)
		rc = dn2id_add(op->store, txn, 1, TEST_VIEW(op->name), TEST_VIEW(op->name), op->id);
	if (rc == LUMEN_OK && op->fail_after_write)
		rc = LUMEN_ESCHEMA;
	return rc;
}

static void after_add(void *arg, int result, uint64_t txnid)
{
	struct add_op *op = arg;
	op->hook_result = result;
	op->hook_txnid = txnid;
	op->hook_calls++;
}

static void add_root(void)
{
	MDB_txn *txn = test_write_txn(&t);
	ck_assert_int_eq(id2entry_add(t.store, txn, 1, "root", 4), LUMEN_OK);
	ck_assert_int_eq(dn2id_add(t.store, txn, 0, TEST_VIEW("o=test"), TEST_VIEW("o=test"), 1),
			 LUMEN_OK);
	uint64_t id;
	ck_assert_int_eq(mdb_store_next_id(t.store, txn, &id), LUMEN_OK); /* ID 1 is taken */
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
}

static void setup(void)
{
	/* synced: exercise the real commit path */
	test_store_open_opts(&t, (size_t)64 << 20, false);
	add_root();
}

static void teardown(void)
{
	test_store_close(&t);
}

enum { THREADS = 8, PER_THREAD = 40 };

struct submitter {
	struct write_batch *batch;
	int index;
	struct add_op ops[PER_THREAD];
	int results[PER_THREAD];
};

static void *submit_many(void *arg)
{
	struct submitter *s = arg;

	for (int i = 0; i < PER_THREAD; i++) {
		struct add_op *op = &s->ops[i];
		op->store = t.store;
		snprintf(op->name, sizeof(op->name), "cn=t%d-%d", s->index, i);
		op->fail_after_write = (s->index * PER_THREAD + i) % 7 == 3;
		struct write_request req = { .apply = apply_add, .after_commit = after_add, .arg = op };
		s->results[i] = write_batch_submit(s->batch, &req);
	}
	return NULL;
}

/* After return, each success is visible and each failure left nothing. */
static void check_outcome(struct submitter *subs, int *ok_count)
{
	MDB_txn *r = test_read_txn(&t);
	char ndn[64];

	*ok_count = 0;
	for (int s = 0; s < THREADS; s++) {
		for (int i = 0; i < PER_THREAD; i++) {
			struct add_op *op = &subs[s].ops[i];
			uint64_t id;
			snprintf(ndn, sizeof(ndn), "%s,o=test", op->name);
			int found = dn2id_lookup(t.store, r, TEST_VIEW(ndn), &id, NULL);
			ck_assert_int_eq(op->hook_calls, 1);
			ck_assert_int_eq(op->hook_result, subs[s].results[i]);
			if (op->fail_after_write) {
				ck_assert_int_eq(subs[s].results[i], LUMEN_ESCHEMA);
				ck_assert_int_eq(found, LUMEN_ENOTFOUND);
				continue;
			}
			ck_assert_int_eq(subs[s].results[i], LUMEN_OK);
			ck_assert_int_eq(found, LUMEN_OK);
			ck_assert_uint_eq(id, op->id);
			ck_assert_uint_gt(op->hook_txnid, 0);
			struct ber_view v;
			ck_assert_int_eq(id2entry_get(t.store, r, id, &v), LUMEN_OK);
			ck_assert(v.len == strlen(op->name) && memcmp(v.ptr, op->name, v.len) == 0);
			(*ok_count)++;
		}
	}
	uint64_t children;
	ck_assert_int_eq(dn2id_counts(t.store, r, 1, &children, NULL), LUMEN_OK);
	ck_assert_uint_eq(children, (uint64_t)*ok_count);
	mdb_txn_abort(r);
}

START_TEST(concurrent_submitters)
{
	static struct submitter subs[THREADS];
	pthread_t threads[THREADS];
	struct write_batch *batch;
	struct write_batch_stats stats;
	int ok_count;

	memset(subs, 0, sizeof(subs));
	ck_assert_int_eq(write_batch_start(t.store, NULL, &batch), LUMEN_OK);
	for (int i = 0; i < THREADS; i++) {
		subs[i].batch = batch;
		subs[i].index = i;
		ck_assert_int_eq(pthread_create(&threads[i], NULL, submit_many, &subs[i]), 0);
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(threads[i], NULL);
	write_batch_get_stats(batch, &stats);
	write_batch_stop(batch);
	check_outcome(subs, &ok_count);
	ck_assert_uint_eq(stats.requests, THREADS * PER_THREAD);
	ck_assert_uint_eq(stats.failed_requests, THREADS * PER_THREAD - ok_count);
	ck_assert_uint_le(stats.commits, stats.requests);
	ck_assert_uint_ge(stats.largest_batch, 1);
}
END_TEST

START_TEST(request_errors)
{
	struct write_batch *batch;
	struct add_op op = { .store = t.store };
	struct write_request none = { .apply = NULL };

	ck_assert_int_eq(write_batch_start(t.store, NULL, &batch), LUMEN_OK);
	ck_assert_int_eq(write_batch_submit(batch, &none), LUMEN_EINVAL);
	/* the same name twice: the second fails alone */
	strcpy(op.name, "cn=dup");
	struct write_request req = { .apply = apply_add, .after_commit = after_add, .arg = &op };
	ck_assert_int_eq(write_batch_submit(batch, &req), LUMEN_OK);
	ck_assert_int_eq(write_batch_submit(batch, &req), LUMEN_EEXIST);
	ck_assert_int_eq(req.result, LUMEN_EEXIST);
	ck_assert_int_eq(op.hook_calls, 2);
	ck_assert_int_eq(op.hook_result, LUMEN_EEXIST);
	write_batch_stop(batch);
	write_batch_stop(NULL);
}
END_TEST

/* A full map fails the request that overflows; the store stays usable. */
START_TEST(map_full_through_batch)
{
	struct test_store small;
	struct write_batch *batch;
	int rc = LUMEN_OK;
	int n = 0;

	test_store_close(&t);
	test_store_open_opts(&small, (size_t)512 << 10, true);
	t = small;
	add_root();
	ck_assert_int_eq(write_batch_start(t.store, NULL, &batch), LUMEN_OK);
	for (; n < 200 && rc == LUMEN_OK; n++) {
		struct add_op op = { .store = t.store, .value_size = 32768 };
		snprintf(op.name, sizeof(op.name), "cn=big%d", n);
		struct write_request req = { .apply = apply_add, .arg = &op };
		rc = write_batch_submit(batch, &req);
	}
	ck_assert_int_eq(rc, LUMEN_EFULL);
	ck_assert_int_gt(n, 2);
	/* a small request still goes through after the failure */
	struct add_op small_op = { .store = t.store };
	strcpy(small_op.name, "cn=small");
	struct write_request req = { .apply = apply_add, .arg = &small_op };
	ck_assert_int_eq(write_batch_submit(batch, &req), LUMEN_OK);
	write_batch_stop(batch);
	MDB_txn *r = test_read_txn(&t);
	uint64_t id, children;
	ck_assert_int_eq(dn2id_lookup(t.store, r, TEST_VIEW("cn=big0,o=test"), &id, NULL), LUMEN_OK);
	ck_assert_int_eq(dn2id_lookup(t.store, r, TEST_VIEW("cn=small,o=test"), &id, NULL), LUMEN_OK);
	ck_assert_int_eq(dn2id_counts(t.store, r, 1, &children, NULL), LUMEN_OK);
	ck_assert_uint_eq(children, (uint64_t)n - 1 + 1); /* n-1 big ones, the small one */
	mdb_txn_abort(r);
}
END_TEST

START_TEST(bulk_mode)
{
	struct write_bulk bulk;
	static struct add_op ops[25];
	unsigned flags;

	ck_assert_int_eq(write_bulk_begin(&bulk, t.store, 10), LUMEN_OK);
	mdb_env_get_flags(t.store->env, &flags);
	ck_assert(flags & MDB_NOSYNC);
	for (int i = 0; i < 25; i++) {
		ops[i] = (struct add_op){ .store = t.store, .fail_after_write = i == 13 };
		snprintf(ops[i].name, sizeof(ops[i].name), "cn=bulk%d", i);
		ck_assert_int_eq(write_bulk_apply(&bulk, apply_add, &ops[i]),
				 i == 13 ? LUMEN_ESCHEMA : LUMEN_OK);
	}
	ck_assert_int_eq(write_bulk_finish(&bulk), LUMEN_OK);
	mdb_env_get_flags(t.store->env, &flags);
	ck_assert(!(flags & MDB_NOSYNC));
	MDB_txn *r = test_read_txn(&t);
	uint64_t children;
	ck_assert_int_eq(dn2id_counts(t.store, r, 1, &children, NULL), LUMEN_OK);
	ck_assert_uint_eq(children, 24);
	mdb_txn_abort(r);

	/* abort drops only the open chunk */
	ck_assert_int_eq(write_bulk_begin(&bulk, t.store, 2), LUMEN_OK);
	for (int i = 0; i < 3; i++) {
		ops[i] = (struct add_op){ .store = t.store };
		snprintf(ops[i].name, sizeof(ops[i].name), "cn=more%d", i);
		ck_assert_int_eq(write_bulk_apply(&bulk, apply_add, &ops[i]), LUMEN_OK);
	}
	write_bulk_abort(&bulk);
	r = test_read_txn(&t);
	ck_assert_int_eq(dn2id_counts(t.store, r, 1, &children, NULL), LUMEN_OK);
	ck_assert_uint_eq(children, 26);
	mdb_txn_abort(r);
}
END_TEST


static bool stored(const char *name)
{
	char ndn[64];
	uint64_t id;
	snprintf(ndn, sizeof(ndn), "%s,o=test", name);
	MDB_txn *r = test_read_txn(&t);
	int rc = dn2id_lookup(t.store, r, TEST_VIEW(ndn), &id, NULL);
	mdb_txn_abort(r);
	return rc == LUMEN_OK;
}

/* A group's writes: each answers at once; visible (and their after_commit
 * run) only at a committing end; a failed member leaves the others. */
START_TEST(group_commits_all_at_once)
{
	struct write_batch *batch;
	struct write_group *g;
	struct add_op ops[3] = { { .store = t.store, .name = "cn=g1" },
				 { .store = t.store, .name = "cn=g2" },
				 { .store = t.store, .name = "cn=g1" } };   /* taken by the first */
	struct write_request reqs[3];
	ck_assert_int_eq(write_batch_start(t.store, NULL, &batch), LUMEN_OK);
	ck_assert_int_eq(write_batch_group_begin(batch, &g), LUMEN_OK);
	for (int i = 0; i < 3; i++)
		reqs[i] = (struct write_request){ .apply = apply_add, .after_commit = after_add,
						  .arg = &ops[i] };
	ck_assert_int_eq(write_group_apply(g, &reqs[0]), LUMEN_OK);
	ck_assert_int_eq(write_group_apply(g, &reqs[1]), LUMEN_OK);
	ck_assert_int_eq(write_group_apply(g, &reqs[2]), LUMEN_EEXIST);
	ck_assert(!stored("cn=g1") && !stored("cn=g2"));      /* not before the end */
	ck_assert_int_eq(ops[0].hook_calls, 0);
	/* the owner's own submit would wait for the group forever: busy */
	struct add_op lone = { .store = t.store, .name = "cn=lone" };
	struct write_request own = { .apply = apply_add, .arg = &lone };
	ck_assert_int_eq(write_batch_submit(batch, &own), LUMEN_EBUSY);
	ck_assert_int_eq(write_group_end(g, true), LUMEN_OK);
	ck_assert(stored("cn=g1") && stored("cn=g2"));
	ck_assert_int_eq(ops[0].hook_calls, 1);
	ck_assert_int_eq(ops[0].hook_result, LUMEN_OK);
	ck_assert_uint_gt(ops[0].hook_txnid, 0);
	ck_assert_int_eq(ops[2].hook_result, LUMEN_EEXIST);
	/* after the end, the thread submits as any other */
	ck_assert_int_eq(write_batch_submit(batch, &own), LUMEN_OK);
	write_batch_stop(batch);
}
END_TEST

/* Ending without commit leaves nothing of any member; a writer that
 * came meanwhile goes on after it. */
struct waiting_writer {
	struct write_batch *batch;
	struct add_op op;
	int result;
};

static void *write_one(void *arg)
{
	struct waiting_writer *w = arg;
	struct write_request req = { .apply = apply_add, .arg = &w->op };
	w->result = write_batch_submit(w->batch, &req);
	return NULL;
}

START_TEST(group_abort_leaves_nothing)
{
	struct write_batch *batch;
	struct write_group *g;
	struct add_op a = { .store = t.store, .name = "cn=a1" };
	struct add_op b = { .store = t.store, .name = "cn=a2" };
	struct write_request ra = { .apply = apply_add, .after_commit = after_add, .arg = &a };
	struct write_request rb = { .apply = apply_add, .after_commit = after_add, .arg = &b };
	struct waiting_writer other = { .op = { .store = t.store, .name = "cn=other" } };
	pthread_t thread;
	ck_assert_int_eq(write_batch_start(t.store, NULL, &batch), LUMEN_OK);
	other.batch = batch;
	ck_assert_int_eq(write_batch_group_begin(batch, &g), LUMEN_OK);
	ck_assert_int_eq(write_group_apply(g, &ra), LUMEN_OK);
	ck_assert_int_eq(pthread_create(&thread, NULL, write_one, &other), 0);
	ck_assert_int_eq(write_group_apply(g, &rb), LUMEN_OK);
	ck_assert_int_eq(write_group_end(g, false), LUMEN_OK);
	pthread_join(thread, NULL);
	ck_assert_int_eq(other.result, LUMEN_OK);
	ck_assert(!stored("cn=a1") && !stored("cn=a2") && stored("cn=other"));
	ck_assert_int_eq(a.hook_calls, 1);
	ck_assert_int_ne(a.hook_result, LUMEN_OK);
	ck_assert_int_ne(b.hook_result, LUMEN_OK);
	write_batch_stop(batch);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("write_batch");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, concurrent_submitters);
	tcase_add_test(tc, request_errors);
	tcase_add_test(tc, map_full_through_batch);
	tcase_add_test(tc, bulk_mode);
	tcase_add_test(tc, group_commits_all_at_once);
	tcase_add_test(tc, group_abort_leaves_nothing);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
