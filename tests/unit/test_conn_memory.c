/*
 * test_conn_memory.c — the byte accounting of connections: per-connection
 * figures and the atomic total move together, the peak only rises, the
 * room rules (anonymous and bound bounds, the total, always room for a
 * connection with nothing outstanding, no total bound when 0).
 */
#include <check.h>
#include <pthread.h>

#include "conn_memory.h"

START_TEST(figures_follow_changes)
{
	struct conn_memory m;
	struct conn_memory_figures f;
	conn_memory_init(&m, 1000, 5000, 10000);
	size_t a = 0, b = 0;
	conn_memory_change(&m, &a, 0, 300);        /* a's input buffer */
	conn_memory_change(&m, &b, 0, 200);
	conn_memory_change(&m, &a, 300, 900);      /* grown for a large PDU */
	ck_assert_uint_eq(a, 900);
	ck_assert_uint_eq(b, 200);
	conn_memory_figures(&m, &f);
	ck_assert_uint_eq(f.total, 1100);
	ck_assert_uint_eq(f.peak, 1100);
	conn_memory_change(&m, &a, 900, 300);      /* shrunk back once empty */
	conn_memory_figures(&m, &f);
	ck_assert_uint_eq(a, 300);
	ck_assert_uint_eq(f.total, 500);
	ck_assert_uint_eq(f.peak, 1100);           /* the peak stays */
	conn_memory_release(&m, &a);
	ck_assert_uint_eq(a, 0);
	conn_memory_release(&m, &b);
	conn_memory_figures(&m, &f);
	ck_assert_uint_eq(f.total, 0);
	ck_assert_uint_eq(f.max_total, 10000);
}
END_TEST

START_TEST(room_rules)
{
	struct conn_memory m;
	conn_memory_init(&m, 1000, 5000, 10000);
	/* nothing outstanding: always room, even over every bound */
	ck_assert(conn_memory_room(&m, 900, 200000, false, 0));
	/* anonymous bound 1000, bound 5000 */
	ck_assert(conn_memory_room(&m, 900, 100, false, 1));
	ck_assert(!conn_memory_room(&m, 900, 101, false, 1));
	ck_assert(conn_memory_room(&m, 900, 101, true, 1));
	ck_assert(!conn_memory_room(&m, 4000, 1001, true, 3));
	/* the total: 9950 held elsewhere leaves 50 */
	size_t other = 0;
	conn_memory_change(&m, &other, 0, 9950);
	ck_assert(conn_memory_room(&m, 0, 50, false, 1));
	ck_assert(!conn_memory_room(&m, 0, 51, false, 1));
	ck_assert(!conn_memory_over_total(&m));
	conn_memory_change(&m, &other, 9950, 10001);
	ck_assert(conn_memory_over_total(&m));
	conn_memory_release(&m, &other);
	ck_assert(!conn_memory_over_total(&m));
	conn_memory_count_wait(&m);
	conn_memory_count_wait(&m);
	struct conn_memory_figures f;
	conn_memory_figures(&m, &f);
	ck_assert_uint_eq(f.waits, 2);
}
END_TEST

START_TEST(no_total_bound)
{
	struct conn_memory m;
	conn_memory_init(&m, 1000, 5000, 0);
	size_t big = 0;
	conn_memory_change(&m, &big, 0, (size_t)1 << 40);
	ck_assert(conn_memory_room(&m, 0, 1000, false, 5));
	ck_assert(!conn_memory_over_total(&m));
	conn_memory_release(&m, &big);
}
END_TEST

/* A client that does not read holds up to its own mark while the total is
 * under the bound; once the total is over it, any output waiting is enough
 * to pause a search (a crowd of non-readers once held 530 MB under a 16 MB
 * bound, each up to the per-connection mark). */
START_TEST(output_full_rules)
{
	struct conn_memory m;
	conn_memory_init(&m, 1000, 5000, 10000);
	size_t held = 0;
	conn_memory_change(&m, &held, 0, 9000);
	ck_assert(!conn_memory_output_full(&m, 0, 4096));
	ck_assert(!conn_memory_output_full(&m, 4095, 4096));
	ck_assert(conn_memory_output_full(&m, 4096, 4096));
	conn_memory_change(&m, &held, held, 10001);
	ck_assert(conn_memory_over_total(&m));
	ck_assert(!conn_memory_output_full(&m, 0, 4096));
	ck_assert(conn_memory_output_full(&m, 1, 4096));
	conn_memory_change(&m, &held, held, 10000);
	ck_assert(!conn_memory_output_full(&m, 1, 4096));
	conn_memory_release(&m, &held);
	/* no total bound: only the per-connection mark */
	conn_memory_init(&m, 1000, 5000, 0);
	conn_memory_change(&m, &held, 0, (size_t)1 << 40);
	ck_assert(!conn_memory_output_full(&m, 4095, 4096));
	conn_memory_release(&m, &held);
}
END_TEST

/* Resuming is the opposite of pausing, over the total too: a search that
 * paused with output waiting must not be requeued while it waits (500
 * non-reading clients once kept the workers spinning on park, requeue,
 * park). */
START_TEST(resume_rules)
{
	struct conn_memory m;
	size_t held = 0;
	conn_memory_init(&m, 1000, 5000, 10000);
	ck_assert(conn_memory_may_resume(&m, 0, 1024));
	ck_assert(conn_memory_may_resume(&m, 1023, 1024));
	ck_assert(!conn_memory_may_resume(&m, 1024, 1024));
	conn_memory_change(&m, &held, 0, 10001);
	ck_assert(conn_memory_may_resume(&m, 0, 1024));
	ck_assert(!conn_memory_may_resume(&m, 1, 1024));
	/* over the total, exactly one holds whatever is unsent */
	for (size_t unsent = 0; unsent < 5000; unsent += 7)
		ck_assert(conn_memory_may_resume(&m, unsent, 1024) !=
			  conn_memory_output_full(&m, unsent, 4096));
	conn_memory_release(&m, &held);
}
END_TEST

/* Changes from several threads (connections live on several I/O threads
 * and are freed on workers) add up exactly. */
static struct conn_memory shared;

static void *churn(void *arg)
{
	(void)arg;
	size_t held = 0;
	for (int i = 0; i < 100000; i++) {
		conn_memory_change(&shared, &held, held, held + 16);
		if (i % 3 == 0)
			conn_memory_change(&shared, &held, held, held - 8);
	}
	conn_memory_release(&shared, &held);
	return NULL;
}

START_TEST(threads_add_up)
{
	conn_memory_init(&shared, 1000, 5000, 0);
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, churn, NULL), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	struct conn_memory_figures f;
	conn_memory_figures(&shared, &f);
	ck_assert_uint_eq(f.total, 0);
	ck_assert_uint_ge(f.peak, 100000u * 16u - 33334u * 8u);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("conn_memory");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, figures_follow_changes);
	tcase_add_test(tc, room_rules);
	tcase_add_test(tc, no_total_bound);
	tcase_add_test(tc, output_full_rules);
	tcase_add_test(tc, resume_rules);
	tcase_add_test(tc, threads_add_up);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
