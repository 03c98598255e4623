/*
 * test_io_placement.c — connections fill one I/O thread per CPU first,
 * then spread over every thread; released places are taken again.
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
	place(&p, 4, counts);
	ck_assert_uint_eq(counts[0], 2);
	ck_assert_uint_eq(counts[1], 2);
	ck_assert_uint_eq(counts[2] + counts[3], 0);
	place(&p, 4, counts);
	ck_assert_uint_eq(counts[0], 4);
	ck_assert_uint_eq(counts[1], 4);
	ck_assert_uint_eq(counts[2] + counts[3], 0);
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
	tcase_add_test(tc, test_many_connections_spread_evenly);
	tcase_add_test(tc, test_released_places_are_reused);
	tcase_add_test(tc, test_preferred_is_clamped);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
