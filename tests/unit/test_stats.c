/*
 * test_stats.c — per-thread counters merged on read, op timing, the
 * log-linear histogram, the slow-operation breakdown, store figures.
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "ldap_message.h"
#include "lumen_error.h"
#include "stats.h"

/* ------------------------------------------------------------ buckets */

static const struct {
	uint64_t ns;
	size_t bucket;
} bucket_cases[] = {
	{ 0, 0 },
	{ 999, 0 },
	{ 1000, 1 },                  /* [1 µs, 2 µs) */
	{ 1999, 1 },
	{ 2000, 2 },
	{ 9999, 9 },                  /* [9 µs, 10 µs) */
	{ 10000, 10 },                /* [10 µs, 20 µs) */
	{ 25000, 11 },
	{ 99999999999ull, 72 },       /* [90 s, 100 s) */
	{ 100000000000ull, 73 },      /* >= 100 s */
	{ UINT64_MAX, 73 },
};

START_TEST(histogram_bucket_table)
{
	for (size_t i = 0; i < sizeof(bucket_cases) / sizeof(bucket_cases[0]); i++)
		ck_assert_msg(stats_histogram_bucket(bucket_cases[i].ns) == bucket_cases[i].bucket,
			      "%llu ns: bucket %zu, expected %zu",
			      (unsigned long long)bucket_cases[i].ns,
			      stats_histogram_bucket(bucket_cases[i].ns), bucket_cases[i].bucket);
}
END_TEST

START_TEST(histogram_edges_consistent)
{
	/* Every bucket's values lie below its upper edge and at or above the previous one. */
	uint64_t lower = 0;
	for (size_t i = 0; i + 1 < STATS_HISTOGRAM_BUCKETS; i++) {
		uint64_t upper = stats_histogram_upper_ns(i);
		ck_assert_uint_gt(upper, lower);
		ck_assert_uint_eq(stats_histogram_bucket(lower), i);
		ck_assert_uint_eq(stats_histogram_bucket(upper - 1), i);
		lower = upper;
	}
	ck_assert_uint_eq(stats_histogram_upper_ns(STATS_HISTOGRAM_BUCKETS - 1), UINT64_MAX);
}
END_TEST

START_TEST(histogram_count_below)
{
	struct stats_histogram h = { .count = 4 };
	h.buckets[stats_histogram_bucket(500)]++;
	h.buckets[stats_histogram_bucket(1500)]++;
	h.buckets[stats_histogram_bucket(4000000)]++;     /* 4 ms */
	h.buckets[stats_histogram_bucket(200000000000ull)]++;
	ck_assert_uint_eq(stats_histogram_count_below(&h, 1000), 1);
	ck_assert_uint_eq(stats_histogram_count_below(&h, 2000), 2);
	ck_assert_uint_eq(stats_histogram_count_below(&h, 5000000), 3);
	ck_assert_uint_eq(stats_histogram_count_below(&h, UINT64_MAX), 4);
}
END_TEST

/* -------------------------------------------------------------- timing */

START_TEST(timing_stages_sum_to_elapsed)
{
	struct op_timing t;
	op_timing_start(&t, stats_now_ns() - 5000000);   /* queued 5 ms ago */
	op_timing_mark(&t, STATS_STAGE_QUEUE);
	op_timing_mark(&t, STATS_STAGE_DECODE);
	for (int i = 0; i < 3; i++) {
		op_timing_mark(&t, STATS_STAGE_ENTRIES);
		op_timing_mark(&t, STATS_STAGE_FILTER);
	}
	op_timing_mark(&t, STATS_STAGE_SEND);
	uint64_t sum = 0;
	for (size_t i = 0; i < STATS_STAGE_COUNT; i++)
		sum += t.stage_ns[i];
	ck_assert_uint_eq(sum, op_timing_elapsed_ns(&t));
	ck_assert_uint_ge(t.stage_ns[STATS_STAGE_QUEUE], 5000000);
	ck_assert_uint_eq(t.stages_marked,
			  (1u << STATS_STAGE_QUEUE) | (1u << STATS_STAGE_DECODE) |
			  (1u << STATS_STAGE_ENTRIES) | (1u << STATS_STAGE_FILTER) |
			  (1u << STATS_STAGE_SEND));
	ck_assert(op_timing_is_slow(&t, 5000000));
	ck_assert(!op_timing_is_slow(&t, 0));
	ck_assert(!op_timing_is_slow(&t, 3600ull * 1000000000u));
}
END_TEST

START_TEST(timing_bad_stage_ignored)
{
	struct op_timing t;
	op_timing_start(&t, 0);
	op_timing_mark(&t, (enum stats_stage)STATS_STAGE_COUNT);
	ck_assert_uint_eq(t.stages_marked, 0);
	ck_assert_uint_eq(op_timing_elapsed_ns(&t), 0);
}
END_TEST

START_TEST(timing_format)
{
	struct op_timing t = { .start_ns = 1000, .last_ns = 1000 + 1234567891ull };
	t.stage_ns[STATS_STAGE_QUEUE] = 12000;
	t.stage_ns[STATS_STAGE_DECODE] = 3000;
	t.stage_ns[STATS_STAGE_ACCESS] = 999;
	t.stage_ns[STATS_STAGE_CANDIDATES] = 1500000;
	t.stage_ns[STATS_STAGE_ENTRIES] = 1000000000;
	t.stage_ns[STATS_STAGE_FILTER] = 7000;
	t.stage_ns[STATS_STAGE_ENCODE] = 8000;
	t.stage_ns[STATS_STAGE_SEND] = 9000;
	char buf[256];
	const char *want = "qtime=0.000012 decode=0.000003 acl=0.000000 candidates=0.001500 "
			   "entries=1.000000 filter=0.000007 encode=0.000008 send=0.000009 "
			   "etime=1.234567";
	int n = op_timing_format(&t, buf, sizeof(buf));
	ck_assert_str_eq(buf, want);
	ck_assert_int_eq(n, (int)strlen(want));
	/* truncation reports the full length and stays terminated */
	char small[20];
	ck_assert_int_eq(op_timing_format(&t, small, sizeof(small)), (int)strlen(want));
	ck_assert_uint_eq(strlen(small), sizeof(small) - 1);
	ck_assert_int_eq(strncmp(small, want, sizeof(small) - 1), 0);
}
END_TEST

/* --------------------------------------------------------------- names */

START_TEST(op_types_by_tag)
{
	static const struct {
		int tag;
		int type;
		const char *name;
	} cases[] = {
		{ LDAP_OP_BIND_REQUEST, STATS_OP_BIND, "bind" },
		{ LDAP_OP_UNBIND_REQUEST, STATS_OP_UNBIND, "unbind" },
		{ LDAP_OP_SEARCH_REQUEST, STATS_OP_SEARCH, "search" },
		{ LDAP_OP_MODIFY_REQUEST, STATS_OP_MODIFY, "modify" },
		{ LDAP_OP_ADD_REQUEST, STATS_OP_ADD, "add" },
		{ LDAP_OP_DELETE_REQUEST, STATS_OP_DELETE, "delete" },
		{ LDAP_OP_MODDN_REQUEST, STATS_OP_MODRDN, "modrdn" },
		{ LDAP_OP_COMPARE_REQUEST, STATS_OP_COMPARE, "compare" },
		{ LDAP_OP_ABANDON_REQUEST, STATS_OP_ABANDON, "abandon" },
		{ LDAP_OP_EXTENDED_REQUEST, STATS_OP_EXTENDED, "extended" },
		{ LDAP_OP_SEARCH_ENTRY, -1, NULL },      /* a response, not a request */
		{ 99, -1, NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_int_eq(stats_op_type_of_tag(cases[i].tag), cases[i].type);
		if (cases[i].name != NULL)
			ck_assert_str_eq(stats_op_type_name((enum stats_op_type)cases[i].type),
					 cases[i].name);
	}
	ck_assert_str_eq(stats_op_type_name(STATS_OP_COUNT), "unknown");
	ck_assert_str_eq(stats_op_type_title(STATS_OP_MODRDN), "Modrdn");
	ck_assert_str_eq(stats_stage_name(STATS_STAGE_ACCESS), "acl");
	ck_assert_str_eq(stats_stage_name(STATS_STAGE_COUNT), "unknown");
}
END_TEST

/* ------------------------------------------------- recording and merging */

#define WORKERS 4
#define OPS_PER_WORKER 10000

struct worker_args {
	struct stats *stats;
	int index;
	int rc;
};

static void *worker(void *arg)
{
	struct worker_args *a = arg;
	struct stats_thread *t = NULL;
	a->rc = stats_thread_register(a->stats, &t);
	if (a->rc != LUMEN_OK || stats_current() != t)
		return NULL;
	stats_connection_opened(t);
	for (int i = 0; i < OPS_PER_WORKER; i++) {
		struct op_timing timing;
		op_timing_start(&timing, 0);
		op_timing_mark(&timing, STATS_STAGE_QUEUE);
		stats_operation_initiated(t, STATS_OP_SEARCH);
		stats_count_received(t, 50, 1);
		stats_count_sent(t, 300, 2);
		stats_count_entries_sent(t, 1, 0);
		stats_record_operation(t, STATS_OP_SEARCH, i % 10 == 0 ? 32 : 0, &timing);
	}
	if (a->index == 0)
		stats_connection_closed(t);
	return NULL;
}

START_TEST(threads_merge_on_read)
{
	struct stats *s = NULL;
	ck_assert_int_eq(stats_create(&s), LUMEN_OK);
	pthread_t threads[WORKERS];
	struct worker_args args[WORKERS];
	for (int i = 0; i < WORKERS; i++) {
		args[i] = (struct worker_args){ .stats = s, .index = i };
		ck_assert_int_eq(pthread_create(&threads[i], NULL, worker, &args[i]), 0);
	}
	/* a reader running during the writes must see monotone totals */
	uint64_t seen = 0;
	static struct stats_snapshot snap;
	for (int round = 0; round < 50; round++) {
		stats_snapshot(s, &snap);
		ck_assert_uint_ge(snap.completed[STATS_OP_SEARCH], seen);
		seen = snap.completed[STATS_OP_SEARCH];
	}
	for (int i = 0; i < WORKERS; i++) {
		pthread_join(threads[i], NULL);
		ck_assert_int_eq(args[i].rc, LUMEN_OK);
	}
	stats_snapshot(s, &snap);
	uint64_t total = (uint64_t)WORKERS * OPS_PER_WORKER;
	ck_assert_uint_eq(snap.initiated[STATS_OP_SEARCH], total);
	ck_assert_uint_eq(snap.completed[STATS_OP_SEARCH], total);
	ck_assert_uint_eq(snap.completed[STATS_OP_BIND], 0);
	ck_assert_uint_eq(snap.results[STATS_OP_SEARCH][0], total - total / 10);
	ck_assert_uint_eq(snap.results[STATS_OP_SEARCH][32], total / 10);
	ck_assert_uint_eq(snap.op_duration[STATS_OP_SEARCH].count, total);
	ck_assert_uint_eq(snap.stage_duration[STATS_STAGE_QUEUE].count, total);
	ck_assert_uint_eq(snap.stage_duration[STATS_STAGE_SEND].count, 0);
	uint64_t in_buckets = 0;
	for (size_t i = 0; i < STATS_HISTOGRAM_BUCKETS; i++)
		in_buckets += snap.op_duration[STATS_OP_SEARCH].buckets[i];
	ck_assert_uint_eq(in_buckets, total);
	ck_assert_uint_eq(snap.bytes_received, total * 50);
	ck_assert_uint_eq(snap.pdus_received, total);
	ck_assert_uint_eq(snap.bytes_sent, total * 300);
	ck_assert_uint_eq(snap.pdus_sent, total * 2);
	ck_assert_uint_eq(snap.entries_sent, total);
	ck_assert_uint_eq(snap.connections_total, WORKERS);
	ck_assert_uint_eq(snap.connections_current, WORKERS - 1);
	ck_assert(snap.start_time > 0);
	stats_destroy(s);
}
END_TEST

START_TEST(unknown_result_codes_and_null_record)
{
	struct stats *s = NULL;
	struct stats_thread *t = NULL;
	static struct stats_snapshot snap;
	ck_assert_int_eq(stats_create(&s), LUMEN_OK);
	ck_assert_int_eq(stats_thread_register(s, &t), LUMEN_OK);
	stats_record_operation(t, STATS_OP_BIND, 4096, NULL);
	stats_record_operation(t, STATS_OP_BIND, -3, NULL);
	stats_record_operation(t, STATS_OP_BIND, 49, NULL);
	stats_record_operation(t, STATS_OP_COUNT, 0, NULL);     /* ignored */
	/* NULL records (unregistered threads, tools) do nothing */
	stats_record_operation(NULL, STATS_OP_BIND, 0, NULL);
	stats_operation_initiated(NULL, STATS_OP_BIND);
	stats_count_sent(NULL, 1, 1);
	stats_connection_opened(NULL);
	stats_snapshot(s, &snap);
	ck_assert_uint_eq(snap.completed[STATS_OP_BIND], 3);
	ck_assert_uint_eq(snap.results[STATS_OP_BIND][STATS_RESULT_OTHER], 2);
	ck_assert_uint_eq(snap.results[STATS_OP_BIND][49], 1);
	ck_assert_uint_eq(snap.op_duration[STATS_OP_BIND].count, 0);
	ck_assert_uint_eq(snap.connections_current, 0);
	stats_destroy(s);
	ck_assert_ptr_null(stats_current());
}
END_TEST

/* Completion counted before the response leaves, timing filed after. */
START_TEST(completion_and_timing_apart)
{
	struct stats *s = NULL;
	struct stats_thread *t = NULL;
	static struct stats_snapshot snap;
	struct op_timing timing;
	ck_assert_int_eq(stats_create(&s), LUMEN_OK);
	ck_assert_int_eq(stats_thread_register(s, &t), LUMEN_OK);
	op_timing_start(&timing, 0);
	op_timing_mark(&timing, STATS_STAGE_QUEUE);
	op_timing_mark(&timing, STATS_STAGE_SEND);
	stats_record_completion(t, STATS_OP_SEARCH, 0);
	stats_snapshot(s, &snap);
	ck_assert_uint_eq(snap.completed[STATS_OP_SEARCH], 1);
	ck_assert_uint_eq(snap.results[STATS_OP_SEARCH][0], 1);
	ck_assert_uint_eq(snap.op_duration[STATS_OP_SEARCH].count, 0);
	stats_record_timing(t, STATS_OP_SEARCH, &timing);
	stats_record_timing(t, STATS_OP_SEARCH, NULL);          /* untimed: nothing */
	stats_record_timing(t, STATS_OP_COUNT, &timing);        /* ignored */
	stats_record_completion(t, STATS_OP_COUNT, 0);          /* ignored */
	stats_snapshot(s, &snap);
	ck_assert_uint_eq(snap.completed[STATS_OP_SEARCH], 1);
	ck_assert_uint_eq(snap.op_duration[STATS_OP_SEARCH].count, 1);
	ck_assert_uint_eq(snap.stage_duration[STATS_STAGE_SEND].count, 1);
	ck_assert_uint_eq(snap.stage_duration[STATS_STAGE_ENCODE].count, 0);
	stats_destroy(s);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("stats");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, histogram_bucket_table);
	tcase_add_test(tc, histogram_edges_consistent);
	tcase_add_test(tc, histogram_count_below);
	tcase_add_test(tc, timing_stages_sum_to_elapsed);
	tcase_add_test(tc, timing_bad_stage_ignored);
	tcase_add_test(tc, timing_format);
	tcase_add_test(tc, op_types_by_tag);
	tcase_add_test(tc, threads_merge_on_read);
	tcase_add_test(tc, unknown_result_codes_and_null_record);
	tcase_add_test(tc, completion_and_timing_apart);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
