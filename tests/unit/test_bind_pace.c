/*
 * test_bind_pace.c — the failed-bind pace: the decoy is a value of the
 * configured scheme that no password matches, the floor covers the
 * dearest scheme (compared with a measured {ARGON2} check, as a ratio of
 * CPU times, not a duration), only grows, and is capped; a held answer
 * waits for the floor times the contention real checks saw (wall ÷ CPU),
 * which follows load both ways and is capped too, plus the path failed
 * binds with real checks took around them (hand-offs, writes), which
 * follows them both ways and is capped.
 */
#include <check.h>
#include <string.h>
#include <strings.h>

#include "bind_pace.h"
#include "lumen_error.h"
#include "password.h"

/* The tests of the "paced" case: a pace made with the {SSHA512} decoy. */
static struct bind_pace *pace;

static void pace_setup(void)
{
	ck_assert_int_eq(bind_pace_create("{SSHA512}", &pace), LUMEN_OK);
}

static void pace_teardown(void)
{
	bind_pace_free(pace);
	pace = NULL;
}

static struct timespec now(void)
{
	struct timespec ts;
	ck_assert_int_eq(clock_gettime(CLOCK_MONOTONIC, &ts), 0);
	return ts;
}

/* What bind_pace_remaining says is left of a bind that arrived at `start`, in ns. */
static uint64_t remaining_ns(struct timespec start)
{
	struct timeval left = bind_pace_remaining(pace, start);
	return (uint64_t)left.tv_sec * 1000000000ull + (uint64_t)left.tv_usec * 1000ull;
}

START_TEST(decoy_of_the_configured_scheme)
{
	struct bind_pace *p = NULL;
	ck_assert_int_eq(bind_pace_create("{PBKDF2-SHA256}", &p), LUMEN_OK);
	const char *decoy = bind_pace_decoy(p);
	ck_assert_int_eq(strncasecmp(decoy, "{PBKDF2-SHA256}", 15), 0);
	bool match = true;
	ck_assert_int_eq(password_check(decoy, strlen(decoy), "", 0, &match), LUMEN_OK);
	ck_assert(!match);
	bind_pace_free(p);
}
END_TEST

START_TEST(unknown_scheme_refused)
{
	struct bind_pace *p = (struct bind_pace *)1;
	ck_assert_int_eq(bind_pace_create("{NOPE}", &p), LUMEN_EUNSUPPORTED);
	ck_assert_ptr_null(p);
}
END_TEST

START_TEST(floor_covers_the_dearest_scheme)
{
	struct bind_pace *p = NULL;
	char stored[PASSWORD_HASH_MAX];
	ck_assert_int_eq(bind_pace_create("{SSHA}", &p), LUMEN_OK);
	ck_assert_int_eq(password_hash("ARGON2", "pw", 2, stored, sizeof(stored)), LUMEN_OK);
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 3; i++) {
		bool match;
		uint64_t t0 = bind_pace_cpu_now();
		password_check(stored, strlen(stored), "no", 2, &match);
		uint64_t spent = bind_pace_cpu_now() - t0;
		best = spent < best ? spent : best;
	}
	/* The {SSHA} decoy alone would be far below an {ARGON2} check. */
	ck_assert_uint_ge(bind_pace_floor(p) * 2, best);
	bind_pace_free(p);
}
END_TEST

START_TEST(floor_only_grows_and_is_capped)
{
	struct bind_pace *p = pace;
	uint64_t before = bind_pace_floor(p);
	bind_pace_observe(p, 0, 0);
	ck_assert_uint_eq(bind_pace_floor(p), before);
	bind_pace_observe(p, before + 1000000, before + 1000000);
	ck_assert_uint_gt(bind_pace_floor(p), before + 1000000);
	bind_pace_observe(p, 50ull * BIND_PACE_MAX_NS, 50ull * BIND_PACE_MAX_NS);
	ck_assert_uint_eq(bind_pace_floor(p), BIND_PACE_MAX_NS);
}
END_TEST

/* Checks observed at `ratio` times their CPU time on the wall clock. */
static void observe_checks(struct bind_pace *p, int n, uint64_t cpu_ns, uint64_t ratio)
{
	for (int i = 0; i < n; i++)
		bind_pace_observe(p, cpu_ns, cpu_ns * ratio);
}

START_TEST(idle_machine_holds_for_the_floor)
{
	struct bind_pace *p = pace;
	ck_assert_uint_eq(bind_pace_hold(p), bind_pace_floor(p));
	/* a wall clock a hair behind the CPU clock (granularity) is no contention */
	bind_pace_observe(p, 1000, 999);
	observe_checks(p, 20, 1000, 1);
	ck_assert_uint_eq(bind_pace_hold(p), bind_pace_floor(p));
}
END_TEST

/* A real check descheduled on a busy machine ends later on the wall clock
 * than its CPU time; an answer held on a timer must wait as long. The
 * contention rises fast (half the way) and falls slowly (a sixteenth). */
START_TEST(contention_stretches_the_hold_and_fades)
{
	struct bind_pace *p = pace;
	uint64_t floor = bind_pace_floor(p);
	observe_checks(p, 1, 1000, 3);
	ck_assert_uint_eq(bind_pace_hold(p), floor * 2);   /* half the way to 3 */
	observe_checks(p, 60, 1000, 3);
	ck_assert_uint_eq(bind_pace_hold(p), floor * 3);    /* then all of it */
	observe_checks(p, 1, 1000, 1);
	uint64_t after_one = bind_pace_hold(p);             /* 3 - 2/16 */
	ck_assert_uint_ge(after_one, floor * 23 / 8);
	ck_assert_uint_lt(after_one, floor * 3);
	observe_checks(p, 200, 1000, 1);
	ck_assert_uint_eq(bind_pace_hold(p), floor);        /* back when load ends */
	/* remaining counts from the hold, not the floor */
	observe_checks(p, 60, 1000, 2);
	uint64_t left_ns = remaining_ns(now());
	ck_assert_uint_gt(left_ns, floor * 3 / 2);
	ck_assert_uint_le(left_ns, floor * 2);
}
END_TEST

START_TEST(contention_is_capped)
{
	struct bind_pace *p = pace;
	uint64_t floor = bind_pace_floor(p);
	observe_checks(p, 100, 1, 1000000);                /* stopped, not sharing */
	ck_assert_uint_eq(bind_pace_hold(p), floor * BIND_PACE_MAX_CONTENTION);
	bind_pace_observe(p, 0, 5000000);                  /* no CPU time: moves nothing */
	ck_assert_uint_eq(bind_pace_hold(p), floor * BIND_PACE_MAX_CONTENTION);
	/* and the hold never passes the cap, whatever the floor */
	bind_pace_observe(p, BIND_PACE_MAX_NS / 2, BIND_PACE_MAX_NS * 8);
	ck_assert_uint_eq(bind_pace_hold(p), BIND_PACE_MAX_NS);
}
END_TEST

START_TEST(remaining_counts_down_from_the_floor)
{
	uint64_t floor = bind_pace_floor(pace);
	struct timespec start = now();
	uint64_t left_ns = remaining_ns(start);
	ck_assert_uint_le(left_ns, floor);
	ck_assert_uint_gt(left_ns, floor / 2);      /* hardly any of it has passed */
	/* a bind that started longer ago than the floor owes nothing */
	struct timespec long_ago = start;
	long_ago.tv_sec -= 2;
	ck_assert_uint_eq(remaining_ns(long_ago), 0);
}
END_TEST

/* A real failed bind also waits for its hand-off to a worker and its
 * overlays' writes: what it took beyond its checks lengthens the hold. */
START_TEST(path_around_the_check_lengthens_the_hold)
{
	uint64_t floor = bind_pace_floor(pace);
	ck_assert_uint_eq(bind_pace_path(pace), 0);
	bind_pace_observe_path(pace, 9000000, 1000000);
	ck_assert_uint_eq(bind_pace_path(pace), 4000000);     /* half of 8 ms */
	for (int i = 0; i < 300; i++)
		bind_pace_observe_path(pace, 9000000, 1000000);
	ck_assert_uint_eq(bind_pace_path(pace), 8000000);
	ck_assert_uint_eq(bind_pace_hold(pace), floor + 8000000);
	uint64_t left_ns = remaining_ns(now());
	ck_assert_uint_gt(left_ns, floor + 7000000);
	ck_assert_uint_le(left_ns, floor + 8000000);
	/* a shorter one moves it a sixteenth of the way: it stays near the
	 * slower binds, which a held answer must not come before */
	bind_pace_observe_path(pace, 1000000, 1000000);
	ck_assert_uint_eq(bind_pace_path(pace), 7500000);
	/* and it comes back down with the binds' path; never below nothing */
	for (int i = 0; i < 300; i++)
		bind_pace_observe_path(pace, 1000000, 1000000);
	ck_assert_uint_eq(bind_pace_path(pace), 0);
	bind_pace_observe_path(pace, 1000000, 2000000);        /* clocks disagree */
	ck_assert_uint_eq(bind_pace_path(pace), 0);
	ck_assert_uint_eq(bind_pace_hold(pace), floor);
}
END_TEST

START_TEST(path_is_capped)
{
	for (int i = 0; i < 300; i++)
		bind_pace_observe_path(pace, 100ull * BIND_PACE_MAX_NS, 0);
	ck_assert_uint_eq(bind_pace_path(pace), BIND_PACE_MAX_NS);
	ck_assert_uint_eq(bind_pace_hold(pace), BIND_PACE_MAX_NS);
}
END_TEST

START_TEST(only_work_factor_schemes_are_timed)
{
	ck_assert(bind_pace_worth_timing("{PBKDF2-SHA512}10000$x$y", 24));
	ck_assert(bind_pace_worth_timing("{ARGON2}$argon2id$v=19$m=65536", 30));
	ck_assert(bind_pace_worth_timing("{crypt}$6$rounds=900000$x", 26));
	ck_assert(!bind_pace_worth_timing("{SSHA512}abcd", 13));
	ck_assert(!bind_pace_worth_timing("{SSHA}abcd", 10));
	ck_assert(!bind_pace_worth_timing("secret", 6));
	ck_assert(!bind_pace_worth_timing("{PBKDF", 6));     /* a prefix is not the scheme */
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("bind_pace");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, decoy_of_the_configured_scheme);
	tcase_add_test(tc, unknown_scheme_refused);
	tcase_add_test(tc, floor_covers_the_dearest_scheme);
	tcase_add_test(tc, only_work_factor_schemes_are_timed);
	suite_add_tcase(s, tc);
	TCase *paced = tcase_create("paced");
	tcase_set_timeout(paced, 60);
	tcase_add_checked_fixture(paced, pace_setup, pace_teardown);
	tcase_add_test(paced, floor_only_grows_and_is_capped);
	tcase_add_test(paced, idle_machine_holds_for_the_floor);
	tcase_add_test(paced, contention_stretches_the_hold_and_fades);
	tcase_add_test(paced, contention_is_capped);
	tcase_add_test(paced, remaining_counts_down_from_the_floor);
	tcase_add_test(paced, path_around_the_check_lengthens_the_hold);
	tcase_add_test(paced, path_is_capped);
	suite_add_tcase(s, paced);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
