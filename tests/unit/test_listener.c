/*
 * test_listener.c — listener URL parsing (table-driven) and opening
 * sockets, including a stale ldapi socket being replaced.
 */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "listener.h"
#include "lumen_error.h"

struct url_case {
	const char *url;
	int rc;
	enum listener_kind kind;
	const char *host_or_path;
	const char *port;
};

static const struct url_case url_cases[] = {
	{ "ldap://127.0.0.1:3389/", LUMEN_OK, LISTENER_TCP, "127.0.0.1", "3389" },
	{ "ldap://127.0.0.1:3389", LUMEN_OK, LISTENER_TCP, "127.0.0.1", "3389" },
	{ "LDAP://host.example", LUMEN_OK, LISTENER_TCP, "host.example", "389" },
	{ "ldap:///", LUMEN_OK, LISTENER_TCP, "", "389" },
	{ "ldap://:1389/", LUMEN_OK, LISTENER_TCP, "", "1389" },
	{ "ldap://[::1]:636/", LUMEN_OK, LISTENER_TCP, "::1", "636" },
	{ "ldap://[::1]/", LUMEN_OK, LISTENER_TCP, "::1", "389" },
	{ "ldapi:///", LUMEN_OK, LISTENER_UNIX, LISTENER_DEFAULT_LDAPI_PATH, NULL },
	{ "ldapi://%2Ftmp%2Fx%2fy.sock/", LUMEN_OK, LISTENER_UNIX, "/tmp/x/y.sock", NULL },
	{ "ldaps://127.0.0.1/", LUMEN_OK, LISTENER_TCP, "127.0.0.1", "636" },
	{ "ldaps://127.0.0.1:1636", LUMEN_OK, LISTENER_TCP, "127.0.0.1", "1636" },
	{ "http://127.0.0.1/", LUMEN_EUNSUPPORTED, LISTENER_TCP, NULL, NULL },
	{ "ldap://127.0.0.1:0/", LUMEN_EMALFORMED, LISTENER_TCP, NULL, NULL },
	{ "ldap://127.0.0.1:65536/", LUMEN_EMALFORMED, LISTENER_TCP, NULL, NULL },
	{ "ldap://127.0.0.1:12ab/", LUMEN_EMALFORMED, LISTENER_TCP, NULL, NULL },
	{ "ldap://127.0.0.1:/", LUMEN_EMALFORMED, LISTENER_TCP, NULL, NULL },
	{ "ldap://[::1/", LUMEN_EMALFORMED, LISTENER_TCP, NULL, NULL },
	{ "ldap://[::1]x/", LUMEN_EMALFORMED, LISTENER_TCP, NULL, NULL },
	{ "ldap://host/dc=x", LUMEN_EMALFORMED, LISTENER_TCP, NULL, NULL },
	{ "ldapi://%2", LUMEN_EMALFORMED, LISTENER_UNIX, NULL, NULL },
	{ "ldapi://%zz/", LUMEN_EMALFORMED, LISTENER_UNIX, NULL, NULL },
	{ "ldapi://%00/", LUMEN_EMALFORMED, LISTENER_UNIX, NULL, NULL },
};

START_TEST(test_url_parse)
{
	const struct url_case *t = &url_cases[_i];
	struct listener_url u;
	char err[256] = "";
	int rc = listener_url_parse(t->url, &u, err, sizeof(err));
	ck_assert_msg(rc == t->rc, "%s: rc %d (%s)", t->url, rc, err);
	if (rc != LUMEN_OK) {
		ck_assert_msg(strstr(err, t->url) != NULL, "error names the URL: %s", err);
		return;
	}
	ck_assert_int_eq(u.kind, t->kind);
	if (t->kind == LISTENER_TCP) {
		ck_assert_str_eq(u.host, t->host_or_path);
		ck_assert_str_eq(u.port, t->port);
	} else {
		ck_assert_str_eq(u.path, t->host_or_path);
	}
}
END_TEST

START_TEST(test_open_tcp_and_unix)
{
	char dir[] = "/tmp/lumen-test-listener-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char path[sizeof(sun.sun_path)], urls[PATH_MAX * 3 + 64];
	snprintf(path, sizeof(path), "%s/ldapi", dir);
	/* A stale socket from an earlier run: bound, never listening. */
	int stale = socket(AF_UNIX, SOCK_STREAM, 0);
	memcpy(sun.sun_path, path, sizeof(path));
	ck_assert_int_eq(bind(stale, (struct sockaddr *)&sun, sizeof(sun)), 0);
	close(stale);

	char encoded[PATH_MAX * 3];
	size_t o = 0;
	for (const char *p = path; *p; p++)
		o += (size_t)snprintf(encoded + o, sizeof(encoded) - o, *p == '/' ? "%%2F" : "%c", *p);
	snprintf(urls, sizeof(urls), "ldap://127.0.0.1:0 ldapi://%s/", encoded);

	struct listener_set set;
	char err[256] = "";
	/* Port 0 is refused by the parser: use a real one next. */
	ck_assert_int_eq(listeners_open(urls, &set, err, sizeof(err)), LUMEN_EMALFORMED);
	ck_assert_uint_eq(set.n, 0);

	snprintf(urls, sizeof(urls), "ldapi://%s/", encoded);
	ck_assert_msg(listeners_open(urls, &set, err, sizeof(err)) == LUMEN_OK, "%s", err);
	ck_assert_uint_eq(set.n, 1);
	ck_assert_int_eq(set.items[0].kind, LISTENER_UNIX);
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));

	/* A live socket is not taken over. */
	struct listener_set second;
	ck_assert_int_eq(listeners_open(urls, &second, err, sizeof(err)), LUMEN_EBUSY);
	ck_assert_ptr_nonnull(strstr(err, "another server"));

	listeners_close(&set);
	ck_assert_int_ne(stat(path, &st), 0);

	/* A regular file in the way is refused, not removed. */
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	ck_assert_int_eq(listeners_open(urls, &set, err, sizeof(err)), LUMEN_EEXIST);
	ck_assert_int_eq(stat(path, &st), 0);
	unlink(path);
	rmdir(dir);
}
END_TEST

START_TEST(test_empty_url_list)
{
	struct listener_set set;
	char err[256];
	ck_assert_int_eq(listeners_open("  ", &set, err, sizeof(err)), LUMEN_EMALFORMED);
	ck_assert_int_eq(listeners_open("ldap://no-such-host.invalid:389/", &set, err, sizeof(err)),
			 LUMEN_ENOTFOUND);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("listener");
	TCase *tc = tcase_create("listener");
	tcase_add_loop_test(tc, test_url_parse, 0, sizeof(url_cases) / sizeof(url_cases[0]));
	tcase_add_test(tc, test_open_tcp_and_unix);
	tcase_add_test(tc, test_empty_url_list);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
