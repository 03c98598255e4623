/*
 * test_log.c — the log's front end (src/server/log.c): what a call costs
 * when its level is off. Access lines pass escaped DNs and filters as
 * arguments; with logging off they must not be built at all.
 */
#include <check.h>
#include <fcntl.h>
#include <unistd.h>

#include "config.h"
#include "log.h"

static int built;

static const char *build_argument(void)
{
	built++;
	return "uid=someone,dc=example,dc=com";
}

START_TEST(arguments_built_only_when_the_level_is_on)
{
	int devnull = open("/dev/null", O_WRONLY);
	ck_assert_int_ge(devnull, 0);
	ck_assert_int_ge(dup2(devnull, STDERR_FILENO), 0);   /* lines go to stderr before log_start */
	close(devnull);

	log_set_level(0);
	log_printf(LOG_LEVEL_STATS, "BIND dn=\"%s\"", build_argument());
	ck_assert_int_eq(built, 0);
	ck_assert(!log_enabled(LOG_LEVEL_STATS));

	log_set_level(LOG_LEVEL_STATS);
	log_printf(LOG_LEVEL_STATS, "BIND dn=\"%s\"", build_argument());
	ck_assert_int_eq(built, 1);

	log_set_level(0);
	log_printf(0, "notice: %s", build_argument());   /* level 0 is always written */
	ck_assert_int_eq(built, 2);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("front end");
	tcase_add_test(tc, arguments_built_only_when_the_level_is_on);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
