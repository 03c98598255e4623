/*
 * test_config_observe.c — the observability directives' arguments
 * (metrics-listen, slowop-threshold) and their effect through config_load.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include "config.h"
#include "lumen_error.h"

START_TEST(metrics_listen_forms)
{
	static const struct {
		const char *text;
		int rc;
		const char *address;
		unsigned port;
	} cases[] = {
		{ "127.0.0.1:9330", LUMEN_OK, "127.0.0.1", 9330 },
		{ "0.0.0.0:0", LUMEN_OK, "0.0.0.0", 0 },
		{ "localhost:80", LUMEN_OK, "localhost", 80 },
		{ "[::1]:9330", LUMEN_OK, "::1", 9330 },
		{ "none", LUMEN_OK, NULL, 0 },
		{ "NONE", LUMEN_OK, NULL, 0 },
		{ "off", LUMEN_OK, NULL, 0 },
		{ "127.0.0.1", LUMEN_EMALFORMED, NULL, 0 },
		{ ":9330", LUMEN_EMALFORMED, NULL, 0 },
		{ "127.0.0.1:", LUMEN_EMALFORMED, NULL, 0 },
		{ "127.0.0.1:65536", LUMEN_EMALFORMED, NULL, 0 },
		{ "127.0.0.1:-1", LUMEN_EMALFORMED, NULL, 0 },
		{ "127.0.0.1:93x", LUMEN_EMALFORMED, NULL, 0 },
		{ "::1:9330", LUMEN_EMALFORMED, NULL, 0 },
		{ "[::1:9330", LUMEN_EMALFORMED, NULL, 0 },
		{ "[]:9330", LUMEN_EMALFORMED, NULL, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *address = (char *)"unset";
		unsigned port = 7;
		int rc = config_parse_metrics_listen(cases[i].text, &address, &port);
		ck_assert_msg(rc == cases[i].rc, "%s: rc %d", cases[i].text, rc);
		if (rc != LUMEN_OK)
			continue;
		if (cases[i].address == NULL)
			ck_assert_ptr_null(address);
		else
			ck_assert_str_eq(address, cases[i].address);
		ck_assert_uint_eq(port, cases[i].port);
		free(address);
	}
}
END_TEST

START_TEST(slowop_threshold_forms)
{
	long v = 5;
	ck_assert_int_eq(config_parse_slowop_threshold("0", &v), LUMEN_OK);
	ck_assert_int_eq(v, 0);
	ck_assert_int_eq(config_parse_slowop_threshold("250", &v), LUMEN_OK);
	ck_assert_int_eq(v, 250);
	ck_assert_int_eq(config_parse_slowop_threshold("off", &v), LUMEN_OK);
	ck_assert_int_eq(v, CONFIG_SLOWOP_OFF);
	ck_assert_int_eq(config_parse_slowop_threshold("none", &v), LUMEN_OK);
	ck_assert_int_eq(v, CONFIG_SLOWOP_OFF);
	ck_assert_int_eq(config_parse_slowop_threshold("-1", &v), LUMEN_EMALFORMED);
	ck_assert_int_eq(config_parse_slowop_threshold("1.5", &v), LUMEN_EMALFORMED);
	ck_assert_int_eq(config_parse_slowop_threshold("", &v), LUMEN_EMALFORMED);
	ck_assert_int_eq(config_parse_slowop_threshold("99999999999999", &v), LUMEN_EMALFORMED);
}
END_TEST

/* Write text to a temporary slapd.conf; the caller unlinks path. */
static void write_conf(char *path, size_t len, const char *text)
{
	snprintf(path, len, "/tmp/lumen-config-observe-XXXXXX");
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

START_TEST(directives_through_config_load)
{
	char path[64], err[512];
	struct config *cfg = NULL;
	write_conf(path, sizeof(path), "metrics-listen 127.0.0.1:9330\n"
				       "slowop-threshold 100\nlogfile /var/log/lumen/access.log\n");
	ck_assert_int_eq(config_load(path, &cfg, err, sizeof(err)), LUMEN_OK);
	ck_assert_str_eq(cfg->metrics_address, "127.0.0.1");
	ck_assert_uint_eq(cfg->metrics_port, 9330);
	ck_assert_int_eq(cfg->slowop_threshold_ms, 100);
	ck_assert_str_eq(cfg->logfile, "/var/log/lumen/access.log");
	config_free(cfg);
	unlink(path);

	write_conf(path, sizeof(path), "threads 2\n");
	ck_assert_int_eq(config_load(path, &cfg, err, sizeof(err)), LUMEN_OK);
	ck_assert_ptr_null(cfg->metrics_address);   /* off unless configured */
	ck_assert_int_eq(cfg->slowop_threshold_ms, CONFIG_SLOWOP_OFF);
	ck_assert_ptr_null(cfg->logfile);
	config_free(cfg);
	unlink(path);
}
END_TEST

START_TEST(bad_directives_name_the_line)
{
	static const char *const texts[] = {
		"threads 2\nmetrics-listen 9330\n",
		"threads 2\nslowop-threshold soon\n",
		"threads 2\nlogfile\n",
		"database mdb\nmetrics-listen 127.0.0.1:9330\n",
	};
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		char path[64], err[512] = "";
		struct config *cfg = NULL;
		write_conf(path, sizeof(path), texts[i]);
		ck_assert_int_eq(config_load(path, &cfg, err, sizeof(err)), LUMEN_EMALFORMED);
		ck_assert_ptr_null(cfg);
		ck_assert_msg(strstr(err, ":2: ") != NULL, "%s", err);
		unlink(path);
	}
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("config_observe");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, metrics_listen_forms);
	tcase_add_test(tc, slowop_threshold_forms);
	tcase_add_test(tc, directives_through_config_load);
	tcase_add_test(tc, bad_directives_name_the_line);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
