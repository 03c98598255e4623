/*
 * test_cpu_count.c — the count follows the calling thread's affinity mask
 * (taskset, cpusets), not the CPUs the machine has online.
 */
#include <check.h>
#include <sched.h>
#include <unistd.h>

#include "cpu_count.h"

/* The mask the test started with, put back after each test. */
static cpu_set_t started_with;

static void save_mask(void)
{
	ck_assert_int_eq(sched_getaffinity(0, sizeof(started_with), &started_with), 0);
}

static void restore_mask(void)
{
	ck_assert_int_eq(sched_setaffinity(0, sizeof(started_with), &started_with), 0);
}

/* The first n CPUs of the mask the test started with. */
static void limit_to(int n)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	for (int cpu = 0, taken = 0; cpu < CPU_SETSIZE && taken < n; cpu++) {
		if (CPU_ISSET(cpu, &started_with)) {
			CPU_SET(cpu, &set);
			taken++;
		}
	}
	ck_assert_int_eq(sched_setaffinity(0, sizeof(set), &set), 0);
}

START_TEST(test_whole_mask)
{
	ck_assert_uint_eq(cpu_count_usable(), (unsigned)CPU_COUNT(&started_with));
}
END_TEST

START_TEST(test_one_cpu_of_several)
{
	limit_to(1);
	ck_assert_uint_eq(cpu_count_usable(), 1);
}
END_TEST

START_TEST(test_two_cpus_where_there_are_two)
{
	if (CPU_COUNT(&started_with) < 2)
		return;   /* a one-CPU machine: the test above covers it */
	limit_to(2);
	ck_assert_uint_eq(cpu_count_usable(), 2);
}
END_TEST

START_TEST(test_never_above_online)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned count = cpu_count_usable();
	ck_assert_uint_ge(count, 1);
	ck_assert_int_le((long)count, online);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("cpu_count");
	TCase *tc = tcase_create("cpu_count");
	tcase_add_checked_fixture(tc, save_mask, restore_mask);
	tcase_add_test(tc, test_whole_mask);
	tcase_add_test(tc, test_one_cpu_of_several);
	tcase_add_test(tc, test_two_cpus_where_there_are_two);
	tcase_add_test(tc, test_never_above_online);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
