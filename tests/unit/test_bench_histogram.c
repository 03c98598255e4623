/*
 * test_bench_histogram.c — bench/histogram.c: percentiles of known
 * distributions, merge, bounds and bad arguments.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "histogram.h"
#include "lumen_error.h"

static struct histogram *h, *other;

static void setup(void)
{
	h = malloc(sizeof(*h));
	other = malloc(sizeof(*other));
	ck_assert_ptr_nonnull(h);
	ck_assert_ptr_nonnull(other);
	histogram_init(h);
	histogram_init(other);
}

static void teardown(void)
{
	free(h);
	free(other);
}

/* Within the histogram's promised relative error (1/128). */
static void assert_near(uint64_t got, uint64_t want)
{
	double error = fabs((double)got - (double)want) / (double)(want ? want : 1);
	ck_assert_msg(error <= 1.0 / 128, "got %llu, want %llu (+-0.8%%)",
		      (unsigned long long)got, (unsigned long long)want);
}

static uint64_t at(double p)
{
	uint64_t v;
	ck_assert_int_eq(histogram_percentile(h, p, &v), LUMEN_OK);
	return v;
}

START_TEST(uniform_distribution)
{
	for (uint64_t v = 1; v <= 100000; v++)
		histogram_record(h, v * 1000);   /* 1 us .. 100 ms in ns */
	static const struct { double p; uint64_t want; } cases[] = {
		{ 50, 50000000 }, { 90, 90000000 }, { 99, 99000000 },
		{ 99.9, 99900000 }, { 10, 10000000 }, { 1, 1000000 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_near(at(cases[i].p), cases[i].want);
	ck_assert_uint_eq(at(0), 1000);
	ck_assert_uint_eq(at(100), 100000000);
	ck_assert_uint_eq(h->total, 100000);
	ck_assert(fabs(histogram_mean(h) - 50000500.0) < 1.0);
}
END_TEST

START_TEST(small_values_are_exact)
{
	for (uint64_t v = 0; v < 100; v++)
		histogram_record(h, v);
	ck_assert_uint_eq(at(50), 49);
	ck_assert_uint_eq(at(1), 0);
	ck_assert_uint_eq(at(100), 99);
}
END_TEST

START_TEST(bimodal_tail)
{
	/* 99 % fast (100 us), 1 % slow (50 ms): p99 fast, p99.5 slow. */
	for (int i = 0; i < 9900; i++)
		histogram_record(h, 100000);
	for (int i = 0; i < 100; i++)
		histogram_record(h, 50000000);
	assert_near(at(50), 100000);
	assert_near(at(99), 100000);
	assert_near(at(99.5), 50000000);
	ck_assert_uint_eq(at(100), 50000000);
}
END_TEST

START_TEST(merge_equals_recording_all)
{
	for (uint64_t v = 1; v <= 5000; v++) {
		histogram_record(v % 2 ? h : other, v * 977);
	}
	histogram_merge(h, other);
	ck_assert_uint_eq(h->total, 5000);
	ck_assert_uint_eq(h->min, 977);
	ck_assert_uint_eq(h->max, 5000 * 977);
	assert_near(at(50), 2500 * 977);
}
END_TEST

START_TEST(merge_into_empty_keeps_min)
{
	histogram_record(other, 42);
	histogram_merge(h, other);
	ck_assert_uint_eq(at(0), 42);
	ck_assert_uint_eq(h->min, 42);
}
END_TEST

START_TEST(bucket_bounds)
{
	/* Every bucket's high value maps back to that bucket, and the next
	 * value to the next bucket: no gaps, no overlaps. */
	for (unsigned b = 0; b + 1 < HISTOGRAM_BUCKETS; b++) {
		uint64_t high = histogram_bucket_high(b);
		ck_assert_uint_eq(histogram_bucket_of(high), b);
		ck_assert_uint_eq(histogram_bucket_of(high + 1), b + 1);
	}
	ck_assert_uint_eq(histogram_bucket_of(UINT64_MAX), HISTOGRAM_BUCKETS - 1);
}
END_TEST

START_TEST(huge_values_clamp_but_max_is_exact)
{
	histogram_record(h, UINT64_MAX);
	histogram_record(h, 1);
	ck_assert_uint_eq(h->clamped, 1);
	ck_assert_uint_eq(at(100), UINT64_MAX);
	ck_assert_uint_eq(h->sum, UINT64_MAX);   /* saturated, not wrapped */
}
END_TEST

START_TEST(bad_arguments)
{
	uint64_t v = 7;
	static const double bad[] = { -0.1, 100.01, NAN, INFINITY, -INFINITY };
	histogram_record(h, 5);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(histogram_percentile(h, bad[i], &v), LUMEN_EINVAL);
		ck_assert_uint_eq(v, 0);
	}
	histogram_init(h);
	v = 7;
	ck_assert_int_eq(histogram_percentile(h, 50, &v), LUMEN_ENOTFOUND);
	ck_assert_uint_eq(v, 0);
	ck_assert(histogram_mean(h) == 0.0);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("bench_histogram");
	TCase *tc = tcase_create("histogram");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, uniform_distribution);
	tcase_add_test(tc, small_values_are_exact);
	tcase_add_test(tc, bimodal_tail);
	tcase_add_test(tc, merge_equals_recording_all);
	tcase_add_test(tc, merge_into_empty_keeps_min);
	tcase_add_test(tc, bucket_bounds);
	tcase_add_test(tc, huge_values_clamp_but_max_is_exact);
	tcase_add_test(tc, bad_arguments);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
