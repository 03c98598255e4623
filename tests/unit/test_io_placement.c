/*
 * test_io_placement.c — connections fill thread 0, then the other
 * preferred threads (one per CPU), then spread over every thread; released
 * places are taken again; which thread, if any, carries them all.
 */
#include <check.h>

#include "io_placement.h"
#include "lumen_error.h"

static unsigned place(struct io_placement *p, unsigned n, unsigned *counts)
{
	unsigned last = 0;
	for (unsigned i = 0; i < n; i++) {
		last = io_placement_choose(p);
		counts[last]++;
	}
	return last;
}

START_TEST(test_few_connections_share_the_preferred_threads)
{
	struct io_placement p;
	ck_assert_int_eq(io_placement_init(&p, 4, 2, 4), LUMEN_OK);
	unsigned counts[4] = { 0 };
	/* The first four share thread 0: one busy thread, not two. */
	place(&p, 4, counts);
	ck_assert_uint_eq(counts[0], 4);
	ck_assert_uint_eq(counts[1] + counts[2] + counts[3], 0);
	place(&p, 4, counts);
	ck_assert_uint_eq(counts[0], 4);
	ck_assert_uint_eq(counts[1], 4);
	ck_assert_uint_eq(counts[2] + counts[3], 0);
	io_placement_destroy(&p);
}
END_TEST

START_TEST(test_which_thread_carries_them_all)
{
	struct io_placement p;
	ck_assert_int_eq(io_placement_init(&p, 4, 2, 4), LUMEN_OK);
	unsigned sole = 99;
	/* No connection: every thread is alone, none is the sole holder. */
	ck_assert(io_placement_alone(&p, 0) && io_placement_alone(&p, 3));
	ck_assert(!io_placement_sole(&p, &sole));
	unsigned counts[4] = { 0 };
	place(&p, 4, counts);
	ck_assert(io_placement_alone(&p, 0));
	ck_assert(!io_placement_alone(&p, 1));
	ck_assert(io_placement_sole(&p, &sole));
	ck_assert_uint_eq(sole, 0);
	/* A fifth goes to thread 1: nobody carries them all. */
	ck_assert_uint_eq(io_placement_choose(&p), 1);
	ck_assert(!io_placement_alone(&p, 0) && !io_placement_alone(&p, 1));
	ck_assert(!io_placement_sole(&p, &sole));
	/* Thread 0's four go: thread 1 is left with the only one. */
	for (unsigned i = 0; i < 4; i++)
		io_placement_release(&p, 0);
	ck_assert(io_placement_alone(&p, 1) && !io_placement_alone(&p, 0));
	ck_assert(io_placement_sole(&p, &sole));
	ck_assert_uint_eq(sole, 1);
	io_placement_destroy(&p);
}
END_TEST

START_TEST(test_many_connections_spread_evenly)
{
	struct io_placement p;
	ck_assert_int_eq(io_placement_init(&p, 4, 2, 4), LUMEN_OK);
	unsigned counts[4] = { 0 };
	/* The ninth goes to a thread beyond the preferred ones. */
	ck_assert_uint_ge(place(&p, 9, counts), 2);
	place(&p, 1000 - 9, counts);
	for (unsigned i = 0; i < 4; i++)
		ck_assert_uint_eq(counts[i], 250);
	io_placement_destroy(&p);
}
END_TEST

START_TEST(test_released_places_are_reused)
{
	struct io_placement p;
	ck_assert_int_eq(io_placement_init(&p, 4, 2, 4), LUMEN_OK);
	unsigned counts[4] = { 0 };
	place(&p, 8, counts);
	io_placement_release(&p, 1);
	ck_assert_uint_eq(io_placement_choose(&p), 1);
	/* Connect-per-operation: one connection at a time stays on thread 0. */
	for (unsigned i = 0; i < 8; i++)
		io_placement_release(&p, i % 2);
	for (unsigned i = 0; i < 100; i++) {
		unsigned t = io_placement_choose(&p);
		ck_assert_uint_eq(t, 0);
		io_placement_release(&p, t);
	}
	io_placement_destroy(&p);
}
END_TEST

START_TEST(test_preferred_is_clamped)
{
	struct io_placement p;
	ck_assert_int_eq(io_placement_init(&p, 3, 8, 1), LUMEN_OK);
	ck_assert_uint_eq(p.preferred, 3);
	unsigned counts[3] = { 0 };
	place(&p, 6, counts);
	for (unsigned i = 0; i < 3; i++)
		ck_assert_uint_eq(counts[i], 2);
	io_placement_destroy(&p);
	ck_assert_int_eq(io_placement_init(&p, 2, 0, 0), LUMEN_OK);
	ck_assert_uint_eq(p.preferred, 1);
	/* fill 0: every connection goes to the least loaded of all. */
	ck_assert_uint_eq(io_placement_choose(&p), 0);
	ck_assert_uint_eq(io_placement_choose(&p), 1);
	/* An index out of range changes nothing. */
	io_placement_release(&p, 7);
	ck_assert_uint_eq(io_placement_choose(&p), 0);
	io_placement_destroy(&p);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("io_placement");
	TCase *tc = tcase_create("io_placement");
	tcase_add_test(tc, test_few_connections_share_the_preferred_threads);
	tcase_add_test(tc, test_which_thread_carries_them_all);
	tcase_add_test(tc, test_many_connections_spread_evenly);
	tcase_add_test(tc, test_released_places_are_reused);
	tcase_add_test(tc, test_preferred_is_clamped);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
