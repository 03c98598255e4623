/*
 * test_config_server_id.c — `serverID` and `multiprovider`/`mirrormode`
 * (config_server_id.h): the number forms, URL equality, the choice of this
 * server's ID among URL lines from the listener URLs, and the errors with
 * FILE:LINE in a whole slapd.conf.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "config_server_id.h"
#include "lumen_error.h"

static int load_text(const char *text, struct config **cfg, char *err, size_t errlen)
{
	char path[] = "/tmp/lumen-serverid-XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	*cfg = NULL;
	int rc = config_load(path, cfg, err, errlen);
	unlink(path);
	return rc;
}

/* Loading text fails with LUMEN_EMALFORMED and err holds want. */
static void load_fails(const char *text, const char *want)
{
	struct config *cfg = NULL;
	char err[512] = "";
	ck_assert_int_eq(load_text(text, &cfg, err, sizeof(err)), LUMEN_EMALFORMED);
	ck_assert_ptr_null(cfg);
	ck_assert_msg(strstr(err, want) != NULL, "want \"%s\" in \"%s\"", want, err);
}

START_TEST(numbers)
{
	unsigned id = 99;
	ck_assert_int_eq(config_server_id_number("0", &id), LUMEN_OK);
	ck_assert_uint_eq(id, 0);
	ck_assert_int_eq(config_server_id_number("4095", &id), LUMEN_OK);
	ck_assert_uint_eq(id, 4095);
	ck_assert_int_eq(config_server_id_number("0x2A", &id), LUMEN_OK);
	ck_assert_uint_eq(id, 42);
	ck_assert_int_eq(config_server_id_number("0xfff", &id), LUMEN_OK);
	ck_assert_uint_eq(id, 0xfff);
	const char *bad[] = { "", "4096", "0x1000", "-1", "+1", "1a", "0x", "x1", " 1", "1 ",
			      "99999999999999999999" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(config_server_id_number(bad[i], &id) == LUMEN_EMALFORMED, "%s",
			      bad[i]);
}
END_TEST

START_TEST(url_equality)
{
	ck_assert(config_server_id_url_equal("ldap://a:389/", "ldap://a:389"));
	ck_assert(config_server_id_url_equal("LDAP://A.Example:389", "ldap://a.example:389/"));
	ck_assert(!config_server_id_url_equal("ldap://a:389", "ldap://a:3890"));
	ck_assert(!config_server_id_url_equal("ldap://a", "ldaps://a"));
	ck_assert(!config_server_id_url_equal("ldap://a//", "ldap://a"));
}
END_TEST

START_TEST(resolve_from_listeners)
{
	struct config *cfg = NULL;
	char err[512] = "";
	unsigned id = 99;
	ck_assert_int_eq(load_text("serverID 1 ldap://127.0.0.1:3891/\n"
				   "serverID 0x2 ldap://127.0.0.1:3892\n", &cfg, err, sizeof(err)),
			 LUMEN_OK);
	ck_assert_uint_eq(cfg->n_server_ids, 2);
	ck_assert_uint_eq(cfg->server_id, 0);   /* not known before the listeners */
	ck_assert_int_eq(config_server_id_resolve(cfg, "ldapi:///  ldap://127.0.0.1:3892/", &id,
						  err, sizeof(err)), LUMEN_OK);
	ck_assert_uint_eq(id, 2);
	ck_assert_int_eq(config_server_id_resolve(cfg, "ldap://127.0.0.1:3891", &id, err,
						  sizeof(err)), LUMEN_OK);
	ck_assert_uint_eq(id, 1);
	ck_assert_int_eq(config_server_id_resolve(cfg, "ldap://127.0.0.1:3893/", &id, err,
						  sizeof(err)), LUMEN_ENOTFOUND);
	ck_assert_ptr_nonnull(strstr(err, ":1: serverID: no serverID URL is one of the listeners"));
	config_free(cfg);
}
END_TEST

START_TEST(one_without_url)
{
	struct config *cfg = NULL;
	char err[512] = "";
	unsigned id = 99;
	ck_assert_int_eq(load_text("serverID 7\n", &cfg, err, sizeof(err)), LUMEN_OK);
	ck_assert_uint_eq(cfg->server_id, 7);   /* the tools stamp with it too */
	ck_assert_ptr_null(cfg->server_ids[0].url);
	ck_assert_int_eq(config_server_id_resolve(cfg, "ldap://x/", &id, err, sizeof(err)),
			 LUMEN_OK);
	ck_assert_uint_eq(id, 7);
	config_free(cfg);
	ck_assert_int_eq(load_text("threads 2\n", &cfg, err, sizeof(err)), LUMEN_OK);
	ck_assert_uint_eq(cfg->server_id, 0);
	ck_assert_int_eq(config_server_id_resolve(cfg, "ldap://x/", &id, err, sizeof(err)),
			 LUMEN_OK);
	ck_assert_uint_eq(id, 0);
	config_free(cfg);
}
END_TEST

START_TEST(errors_name_file_and_line)
{
	load_fails("threads 2\nserverID 4096\n", ":2: serverID: expected a number from 0 to 4095");
	load_fails("serverID\n", ":1: serverID");
	load_fails("serverID 1 ldap://a ldap://b\n", ":1: serverID");
	load_fails("serverID 1\nserverID 2\n", ":2: serverID: only one line without URL");
	load_fails("serverID 1 ldap://a\nserverID 1 ldap://b\n", ":2: serverID: 1 is already "
		   "defined");
	load_fails("serverID 1 ldap://a\nserverID 2 LDAP://A/\n", ":2: serverID: URL LDAP://A/ "
		   "is already defined");
	load_fails("serverID 1 ldap://a\nserverID 2\n", ":2: serverID: lines with and without URL "
		   "do not mix");
	load_fails("serverID 1\nserverID 2 ldap://a\n", ":2: serverID: lines with and without URL "
		   "do not mix");
	load_fails("serverID 1 http://a\n", ":1: serverID: expected an ldap://");
	load_fails("database mdb\nsuffix dc=e\nserverID 1\n", ":3: serverID");
}
END_TEST

START_TEST(multiprovider_lines)
{
	struct config *cfg = NULL;
	char err[512] = "";
	const char *sync = "syncrepl rid=1 provider=ldap://p searchbase=dc=e\n";
	char text[512];
	snprintf(text, sizeof(text), "serverID 1\ndatabase mdb\nsuffix dc=e\n%smultiprovider on\n",
		 sync);
	ck_assert_msg(load_text(text, &cfg, err, sizeof(err)) == LUMEN_OK, "%s", err);
	ck_assert(cfg->databases[0].multiprovider);
	config_free(cfg);
	snprintf(text, sizeof(text), "serverID 1\ndatabase mdb\nsuffix dc=e\n%sMirrorMode TRUE\n"
		 "mirrormode off\n", sync);
	ck_assert_msg(load_text(text, &cfg, err, sizeof(err)) == LUMEN_OK, "%s", err);
	ck_assert(!cfg->databases[0].multiprovider);
	config_free(cfg);
	load_fails("serverID 1\ndatabase mdb\nsuffix dc=e\nmultiprovider on\n",
		   ":4: multiprovider: must appear after a syncrepl line");
	snprintf(text, sizeof(text), "database mdb\nsuffix dc=e\n%smultiprovider on\n", sync);
	load_fails(text, ":4: multiprovider: needs a global serverID line");
	snprintf(text, sizeof(text), "serverID 1\ndatabase mdb\nsuffix dc=e\n%smirrormode 1\n",
		 sync);
	load_fails(text, ":5: mirrormode: expected on or off");
	load_fails("multiprovider on\n", ":1: multiprovider");
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("config_server_id");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, numbers);
	tcase_add_test(tc, url_equality);
	tcase_add_test(tc, resolve_from_listeners);
	tcase_add_test(tc, one_without_url);
	tcase_add_test(tc, errors_name_file_and_line);
	tcase_add_test(tc, multiprovider_lines);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
