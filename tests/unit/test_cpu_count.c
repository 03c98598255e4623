/*
 * test_cpu_count.c — the count follows the calling thread's affinity mask
 * (taskset, cpusets), not the CPUs the machine has online.
 */
#include <check.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpu_count.h"
#include "scratch_dir_fixture.h"

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

START_TEST(test_quota_text)
{
	ck_assert_uint_eq(cpu_count_of_quota("max 100000\n"), 0);
	ck_assert_uint_eq(cpu_count_of_quota("200000 100000\n"), 2);
	ck_assert_uint_eq(cpu_count_of_quota("150000 100000\n"), 2);   /* 1.5: rounded up */
	ck_assert_uint_eq(cpu_count_of_quota("50000 100000"), 1);
	ck_assert_uint_eq(cpu_count_of_quota("100000 100000"), 1);
	ck_assert_uint_eq(cpu_count_of_quota("0 100000\n"), 0);
	ck_assert_uint_eq(cpu_count_of_quota("200000 0\n"), 0);
	ck_assert_uint_eq(cpu_count_of_quota("200000\n"), 0);
	ck_assert_uint_eq(cpu_count_of_quota("200000 100000 7\n"), 0);
	ck_assert_uint_eq(cpu_count_of_quota(""), 0);
	ck_assert_uint_eq(cpu_count_of_quota("-1 100000\n"), 0);
	ck_assert_uint_eq(cpu_count_of_quota("99999999999999999999999 1\n"), 0);
}
END_TEST

/* cgroup (under the scratch directory) with a cpu.max holding text, or
 * without one (NULL). */
static void cpu_max(const char *cgroup, const char *text)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/%s", dir, cgroup);
	ck_assert(mkdir(path, 0700) == 0 || errno == EEXIST);
	if (text != NULL) {
		char name[64];
		snprintf(name, sizeof(name), "%s/cpu.max", cgroup);
		write_file(name, text);
	}
}

/* The smallest quota of the cgroup and its ancestors; "max" sets none. */
START_TEST(test_cgroup_quota_walks_up)
{
	cpu_max("a", "300000 100000\n");
	cpu_max("a/b", "max 100000\n");
	cpu_max("a/b/c", NULL);
	ck_assert_uint_eq(cpu_count_cgroup_quota(dir, "/a/b/c"), 3);
	cpu_max("a/b", "150000 100000\n");
	ck_assert_uint_eq(cpu_count_cgroup_quota(dir, "/a/b/c"), 2);
	ck_assert_uint_eq(cpu_count_cgroup_quota(dir, "/a"), 3);
	ck_assert_uint_eq(cpu_count_cgroup_quota(dir, ""), 0);   /* no root cpu.max */
	write_file("cpu.max", "100000 100000\n");      /* a container's root */
	ck_assert_uint_eq(cpu_count_cgroup_quota(dir, "/a/b/c"), 1);
	ck_assert_uint_eq(cpu_count_cgroup_quota(dir, ""), 1);
	ck_assert_uint_eq(cpu_count_cgroup_quota(dir, "/missing/path"), 1);
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
	TCase *quota = tcase_create("quota");
	tcase_add_checked_fixture(quota, make_dir, remove_dir);
	tcase_add_test(quota, test_quota_text);
	tcase_add_test(quota, test_cgroup_quota_walks_up);
	suite_add_tcase(s, quota);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
