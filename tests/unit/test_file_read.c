/*
 * test_file_read.c — whole files, pipes and /proc files read to their end;
 * the bound on length exact; failures leave nothing allocated and say why.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_read.h"
#include "lumen_error.h"
#include "scratch_dir_fixture.h"

/* A file of n bytes, 'a' to 'z' over and over. */
static const char *file_of(size_t n)
{
	char *text = malloc(n + 1);
	ck_assert_ptr_nonnull(text);
	for (size_t i = 0; i < n; i++)
		text[i] = (char)('a' + (int)(i % 26));
	text[n] = '\0';
	const char *path = write_file("f", text);
	free(text);
	return path;
}

START_TEST(test_sizes_up_to_the_bound)
{
	static const size_t sizes[] = { 0, 1, 4094, 4095, 4096, 10000, 100000 };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		const char *path = file_of(sizes[i]);
		char *data = NULL;
		size_t len = 99;
		ck_assert_int_eq(file_read_all(path, 100000, &data, &len), LUMEN_OK);
		ck_assert_uint_eq(len, sizes[i]);
		ck_assert_int_eq(data[len], '\0');
		for (size_t j = 0; j < len; j++)
			ck_assert_int_eq(data[j], 'a' + (int)(j % 26));
		free(data);
	}
}
END_TEST

START_TEST(test_one_byte_over_the_bound)
{
	static const size_t bounds[] = { 0, 10, 4095, 4096, 8190 };
	for (size_t i = 0; i < sizeof(bounds) / sizeof(bounds[0]); i++) {
		const char *path = file_of(bounds[i] + 1);
		char *data = (char *)"untouched";
		size_t len = 7;
		errno = 0;
		ck_assert_int_eq(file_read_all(path, bounds[i], &data, &len), LUMEN_ELIMIT);
		ck_assert_int_eq(errno, EFBIG);
		ck_assert_str_eq(data, "untouched");
		ck_assert_uint_eq(len, 7);
	}
}
END_TEST

START_TEST(test_missing_file_says_why)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/none", dir);
	char *data = NULL;
	size_t len = 0;
	errno = 0;
	ck_assert_int_eq(file_read_all(path, 100, &data, &len), LUMEN_EIO);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_ptr_null(data);
	errno = 0;
	ck_assert_int_eq(file_read_all(dir, 100, &data, &len), LUMEN_EIO);
	ck_assert_int_eq(errno, EISDIR);
}
END_TEST

struct feeder {
	char path[PATH_MAX + 16];
	size_t bytes;
};

static void *feed(void *arg)
{
	struct feeder *f = arg;
	int fd = open(f->path, O_WRONLY);
	for (size_t i = 0; fd >= 0 && i < f->bytes; i++) {
		char c = (char)('a' + (int)(i % 26));
		if (write(fd, &c, 1) != 1)
			break;
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

START_TEST(test_pipe_read_to_its_end)
{
	struct feeder f = { .bytes = 70000 };
	snprintf(f.path, sizeof(f.path), "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(f.path, 0600), 0);
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, feed, &f), 0);
	char *data = NULL;
	size_t len = 0;
	ck_assert_int_eq(file_read_all(f.path, 1u << 20, &data, &len), LUMEN_OK);
	pthread_join(t, NULL);
	ck_assert_uint_eq(len, f.bytes);
	ck_assert_int_eq(data[len - 1], 'a' + (int)((len - 1) % 26));
	free(data);
}
END_TEST

START_TEST(test_proc_file_without_a_size)
{
	struct stat st;
	ck_assert_int_eq(stat("/proc/self/status", &st), 0);
	ck_assert_int_eq(st.st_size, 0);
	char *data = NULL;
	size_t len = 0;
	ck_assert_int_eq(file_read_all("/proc/self/status", 1u << 20, &data, &len), LUMEN_OK);
	ck_assert_uint_gt(len, 0);
	ck_assert_ptr_nonnull(strstr(data, "Name:"));
	free(data);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("file_read");
	TCase *tc = tcase_create("file_read");
	tcase_add_checked_fixture(tc, make_dir, remove_dir);
	tcase_add_test(tc, test_sizes_up_to_the_bound);
	tcase_add_test(tc, test_one_byte_over_the_bound);
	tcase_add_test(tc, test_missing_file_says_why);
	tcase_add_test(tc, test_pipe_read_to_its_end);
	tcase_add_test(tc, test_proc_file_without_a_size);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
