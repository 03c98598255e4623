/*
 * test_index_postings.c — the in-memory postings of bulk loads, index
 * rebuilds and checks: lists kept per (table, key), handed over sorted,
 * turned into ranges past IDL_MAX_IDS, emptied and reusable after a flush.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "idl.h"
#include "index_postings.h"
#include "lumen_error.h"

/* What a flush handed over, one row per key. */
struct seen_key {
	size_t table;
	struct index_key key;
	uint64_t *ids;
	size_t n;
	bool is_range;
};

struct seen {
	struct seen_key rows[64];
	size_t n;
	int fail_at;     /* sink fails on this row (1-based); 0 = never */
};

static int record_sink(void *ctx, size_t table, const struct index_key *key, const uint64_t *ids,
		       size_t n, bool is_range)
{
	struct seen *s = ctx;
	ck_assert_uint_lt(s->n, 64);
	struct seen_key *row = &s->rows[s->n++];
	row->table = table;
	row->key = *key;
	row->n = n;
	row->is_range = is_range;
	row->ids = malloc(n * sizeof(*ids));
	ck_assert_ptr_nonnull(row->ids);
	memcpy(row->ids, ids, n * sizeof(*ids));
	return s->fail_at != 0 && (int)s->n == s->fail_at ? LUMEN_EIO : LUMEN_OK;
}

static void seen_free(struct seen *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->rows[i].ids);
	s->n = 0;
}

static struct index_key key_of(enum index_kind kind, const char *s)
{
	struct index_key k;
	index_key_make(kind, (const uint8_t *)s, strlen(s), &k);
	return k;
}

START_TEST(flush_sorted_by_table_then_key)
{
	struct postings *p;
	struct seen s = { 0 };
	const char *values[] = { "delta", "alpha", "echo", "bravo", "charlie" };
	enum { N_VALUES = 5 };

	ck_assert_int_eq(postings_create(3, &p), LUMEN_OK);
	/* IDs ascend across the calls, tables and keys come in any order */
	for (uint64_t id = 1; id <= 40; id++) {
		size_t table = (size_t)(id * 7 % 3);
		struct index_key k = key_of(INDEX_EQUALITY, values[id % N_VALUES]);
		ck_assert_int_eq(postings_add(p, table, &k, id), LUMEN_OK);
	}
	struct index_key pres = key_of(INDEX_PRESENCE, "");
	ck_assert_int_eq(postings_add(p, 1, &pres, 100), LUMEN_OK);
	ck_assert_int_eq(postings_add(p, 2, &pres, 100), LUMEN_OK);
	ck_assert_uint_eq(postings_key_count(p), 3 * N_VALUES + 2);
	ck_assert_uint_gt(postings_memory(p), 0);

	ck_assert_int_eq(postings_flush(p, record_sink, &s), LUMEN_OK);
	ck_assert_uint_eq(s.n, 3 * N_VALUES + 2);
	size_t total = 0;
	for (size_t i = 0; i < s.n; i++) {
		const struct seen_key *row = &s.rows[i];
		ck_assert(!row->is_range);
		if (i > 0) {
			const struct seen_key *prev = &s.rows[i - 1];
			ck_assert(prev->table < row->table ||
				  (prev->table == row->table &&
				   memcmp(prev->key.bytes, row->key.bytes, INDEX_KEY_SIZE) < 0));
		}
		for (size_t j = 0; j < row->n; j++) {
			uint64_t id = row->ids[j];
			if (j > 0)
				ck_assert_uint_gt(id, row->ids[j - 1]);
			if (id == 100) {
				ck_assert(memcmp(row->key.bytes, pres.bytes, INDEX_KEY_SIZE) == 0);
				continue;
			}
			/* every ID is where it was filed */
			struct index_key want = key_of(INDEX_EQUALITY, values[id % N_VALUES]);
			ck_assert_uint_eq(row->table, id * 7 % 3);
			ck_assert(memcmp(row->key.bytes, want.bytes, INDEX_KEY_SIZE) == 0);
			total++;
		}
	}
	ck_assert_uint_eq(total, 40);
	seen_free(&s);

	/* emptied, and usable again; a memory bound is met again at once */
	ck_assert_uint_eq(postings_key_count(p), 0);
	ck_assert_uint_eq(postings_memory(p), 0);
	ck_assert_int_eq(postings_flush(p, record_sink, &s), LUMEN_OK);
	ck_assert_uint_eq(s.n, 0);
	ck_assert_int_eq(postings_add(p, 0, &pres, 5), LUMEN_OK);
	ck_assert_int_eq(postings_flush(p, record_sink, &s), LUMEN_OK);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_uint_eq(s.rows[0].n, 1);
	ck_assert_uint_eq(s.rows[0].ids[0], 5);
	seen_free(&s);
	postings_free(p);
}
END_TEST

/* Gaps of every size survive the varint blocks, also across block ends. */
START_TEST(large_gaps_round_trip)
{
	struct postings *p;
	struct seen s = { 0 };
	struct index_key k = key_of(INDEX_SUB_ANY, "abc");
	struct index_key other = key_of(INDEX_SUB_ANY, "xyz");
	uint64_t id = 1;
	uint64_t want[300];

	ck_assert_int_eq(postings_create(1, &p), LUMEN_OK);
	for (size_t i = 0; i < 300; i++) {
		want[i] = id;
		ck_assert_int_eq(postings_add(p, 0, &k, id), LUMEN_OK);
		/* interleave another list so the blocks of the two alternate */
		ck_assert_int_eq(postings_add(p, 0, &other, id), LUMEN_OK);
		id += (uint64_t)1 << (i % 50);
	}
	ck_assert_int_eq(postings_flush(p, record_sink, &s), LUMEN_OK);
	ck_assert_uint_eq(s.n, 2);
	for (size_t r = 0; r < 2; r++) {
		ck_assert_uint_eq(s.rows[r].n, 300);
		for (size_t i = 0; i < 300; i++)
			ck_assert_uint_eq(s.rows[r].ids[i], want[i]);
	}
	seen_free(&s);
	postings_free(p);
}
END_TEST

START_TEST(long_list_becomes_range)
{
	struct postings *p;
	struct seen s = { 0 };
	struct index_key common = key_of(INDEX_EQUALITY, "common");
	struct index_key limit = key_of(INDEX_EQUALITY, "limit");

	ck_assert_int_eq(postings_create(1, &p), LUMEN_OK);
	for (uint64_t id = 10; id < 10 + IDL_MAX_IDS + 5; id++)
		ck_assert_int_eq(postings_add(p, 0, &common, id), LUMEN_OK);
	for (uint64_t id = 1; id <= IDL_MAX_IDS; id++)
		ck_assert_int_eq(postings_add(p, 0, &limit, 1000000 + id), LUMEN_OK);
	ck_assert_int_eq(postings_flush(p, record_sink, &s), LUMEN_OK);
	ck_assert_uint_eq(s.n, 2);
	for (size_t r = 0; r < 2; r++) {
		const struct seen_key *row = &s.rows[r];
		if (memcmp(row->key.bytes, common.bytes, INDEX_KEY_SIZE) == 0) {
			ck_assert(row->is_range);
			ck_assert_uint_eq(row->n, 2);
			ck_assert_uint_eq(row->ids[0], 10);
			ck_assert_uint_eq(row->ids[1], 10 + IDL_MAX_IDS + 4);
		} else {
			/* exactly the limit: still a list */
			ck_assert(!row->is_range);
			ck_assert_uint_eq(row->n, IDL_MAX_IDS);
			ck_assert_uint_eq(row->ids[IDL_MAX_IDS - 1], 1000000 + IDL_MAX_IDS);
		}
	}
	seen_free(&s);
	postings_free(p);
}
END_TEST

START_TEST(bad_input_and_sink_errors)
{
	struct postings *p;
	struct seen s = { .fail_at = 2 };
	struct index_key a = key_of(INDEX_EQUALITY, "a");
	struct index_key b = key_of(INDEX_EQUALITY, "b");

	ck_assert_int_eq(postings_create(POSTINGS_MAX_TABLES + 1, &p), LUMEN_EINVAL);
	ck_assert_ptr_null(p);
	ck_assert_int_eq(postings_create(2, &p), LUMEN_OK);
	ck_assert_int_eq(postings_add(p, 0, &a, 0), LUMEN_EINVAL);
	ck_assert_int_eq(postings_add(p, 2, &a, 1), LUMEN_EINVAL);
	ck_assert_int_eq(postings_add(p, 0, &a, 5), LUMEN_OK);
	ck_assert_int_eq(postings_add(p, 0, &a, 5), LUMEN_EINVAL);   /* not above the last */
	ck_assert_int_eq(postings_add(p, 0, &a, 4), LUMEN_EINVAL);
	ck_assert_int_eq(postings_add(p, 1, &a, 4), LUMEN_OK);       /* another table */
	ck_assert_int_eq(postings_add(p, 0, &b, 6), LUMEN_OK);
	/* the sink's error stops the flush and is returned; the set is empty after */
	ck_assert_int_eq(postings_flush(p, record_sink, &s), LUMEN_EIO);
	ck_assert_uint_eq(s.n, 2);
	ck_assert_uint_eq(postings_key_count(p), 0);
	seen_free(&s);
	postings_free(p);
	postings_free(NULL);
}
END_TEST

/* fuzz_backend_ops: checking the indexes of a database with no indexed
 * value flushed a set that never had a key (qsort of a NULL array, UBSan). */
START_TEST(flush_empty_set)
{
	struct postings *p;
	struct seen s = { .fail_at = 0 };

	ck_assert_int_eq(postings_create(2, &p), LUMEN_OK);
	ck_assert_int_eq(postings_flush(p, record_sink, &s), LUMEN_OK);
	ck_assert_uint_eq(s.n, 0);
	ck_assert_uint_eq(postings_key_count(p), 0);
	seen_free(&s);
	postings_free(p);
}
END_TEST

/* Enough keys to grow the hash table and the list array several times. */
START_TEST(many_keys)
{
	enum { N_KEYS = 50000 };
	struct postings *p;
	char text[32];

	ck_assert_int_eq(postings_create(1, &p), LUMEN_OK);
	for (uint64_t id = 1; id <= N_KEYS; id++) {
		snprintf(text, sizeof(text), "v%llu", (unsigned long long)(id % (N_KEYS / 2)));
		struct index_key k = key_of(INDEX_EQUALITY, text);
		ck_assert_int_eq(postings_add(p, 0, &k, id), LUMEN_OK);
	}
	ck_assert_uint_eq(postings_key_count(p), N_KEYS / 2);
	postings_free(p);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("index_postings");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, flush_sorted_by_table_then_key);
	tcase_add_test(tc, large_gaps_round_trip);
	tcase_add_test(tc, long_list_becomes_range);
	tcase_add_test(tc, bad_input_and_sink_errors);
	tcase_add_test(tc, many_keys);
	tcase_add_test(tc, flush_empty_set);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
