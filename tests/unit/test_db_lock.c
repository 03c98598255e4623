/*
 * test_db_lock.c — the writer's lock file: exclusive within and across
 * open files, released on release, the holder named in a refusal, and the
 * argument errors.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db_lock.h"
#include "lumen_error.h"

static char dir[64];

static void make_dir(void)
{
	strcpy(dir, "/tmp/lumen-dblock-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void remove_dir(void)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/%s", dir, DB_LOCK_FILE);
	unlink(path);
	rmdir(dir);
}

START_TEST(test_exclusive)
{
	struct db_lock a, b;
	char err[256];
	make_dir();
	ck_assert_int_eq(db_lock_acquire(dir, "lumend", &a, err, sizeof(err)), LUMEN_OK);
	ck_assert_int_eq(db_lock_acquire(dir, "lumenadd", &b, err, sizeof(err)), LUMEN_EBUSY);
	ck_assert_msg(strstr(err, "lumend") != NULL, "%s", err);
	ck_assert_int_eq(b.fd, -1);
	db_lock_release(&a);
	db_lock_release(&a);   /* twice is harmless */
	ck_assert_int_eq(db_lock_acquire(dir, "lumenadd", &b, err, sizeof(err)), LUMEN_OK);
	db_lock_release(&b);
	remove_dir();
}
END_TEST

struct bad_case {
	const char *name;
	const char *directory;
	int rc;
};

static const struct bad_case bad_cases[] = {
	{ "NULL directory", NULL, LUMEN_EINVAL },
	{ "empty directory", "", LUMEN_EINVAL },
	{ "missing directory", "/nonexistent/lumen-db", LUMEN_ENOTFOUND },
};

START_TEST(test_bad_arguments)
{
	const struct bad_case *t = &bad_cases[_i];
	struct db_lock lock;
	char err[256] = "";
	ck_assert_msg(db_lock_acquire(t->directory, "x", &lock, err, sizeof(err)) == t->rc,
		      "%s", t->name);
	ck_assert_int_eq(lock.fd, -1);
	ck_assert_msg(err[0] != '\0', "%s: no message", t->name);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("db_lock");
	TCase *tc = tcase_create("db_lock");
	tcase_add_test(tc, test_exclusive);
	tcase_add_loop_test(tc, test_bad_arguments, 0, sizeof(bad_cases) / sizeof(bad_cases[0]));
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
