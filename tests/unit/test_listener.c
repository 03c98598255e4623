/*
 * test_listener.c — listener URL parsing (table-driven) and opening
 * sockets, including a stale ldapi socket being replaced.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
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

/* A free loopback port (bound, read, closed). */
static int free_port(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sin, &len), 0);
	close(fd);
	return ntohs(sin.sin_port);
}

/* 0 if a TCP connection to 127.0.0.1:port is accepted, else errno. */
static int connect_error(int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(fd, 0);
	int rc = connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0 ? 0 : errno;
	close(fd);
	return rc;
}

START_TEST(test_tcp_refuses_until_started)
{
	char urls[64], err[256] = "";
	int port = free_port();
	snprintf(urls, sizeof(urls), "ldap://127.0.0.1:%d/", port);
	struct listener_set set;
	ck_assert_msg(listeners_open(urls, &set, err, sizeof(err)) == LUMEN_OK, "%s", err);
	ck_assert_uint_eq(set.n, 1);
	ck_assert(!set.items[0].listening);
	/* Bound: the port is taken, but a client is refused, not held. */
	ck_assert_int_eq(connect_error(port), ECONNREFUSED);
	ck_assert_msg(listeners_start(&set, err, sizeof(err)) == LUMEN_OK, "%s", err);
	ck_assert(set.items[0].listening);
	ck_assert_int_eq(connect_error(port), 0);
	/* Again: nothing to do. */
	ck_assert_int_eq(listeners_start(&set, err, sizeof(err)), LUMEN_OK);

	/* A listening port cannot be bound by a second set. */
	struct listener_set second;
	ck_assert_int_eq(listeners_open(urls, &second, err, sizeof(err)), LUMEN_EIO);
	ck_assert_msg(strstr(err, "cannot bind") != NULL, "%s", err);
	listeners_close(&set);
}
END_TEST

START_TEST(test_tcp_listen_lost_to_another)
{
	/* Two sets bound to one port before either listens (SO_REUSEADDR
	 * allows it): the second to start fails, naming the address. */
	char urls[64], err[256] = "";
	int port = free_port();
	snprintf(urls, sizeof(urls), "ldap://127.0.0.1:%d/", port);
	struct listener_set first, second;
	ck_assert_msg(listeners_open(urls, &first, err, sizeof(err)) == LUMEN_OK, "%s", err);
	ck_assert_msg(listeners_open(urls, &second, err, sizeof(err)) == LUMEN_OK, "%s", err);
	ck_assert_msg(listeners_start(&first, err, sizeof(err)) == LUMEN_OK, "%s", err);
	ck_assert_int_eq(listeners_start(&second, err, sizeof(err)), LUMEN_EIO);
	char want[64];
	snprintf(want, sizeof(want), "IP=127.0.0.1:%d: cannot listen: ", port);
	ck_assert_msg(strstr(err, want) == err, "%s", err);
	ck_assert(!second.items[0].listening);
	listeners_close(&second);
	ck_assert_int_eq(connect_error(port), 0);
	listeners_close(&first);
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
	tcase_add_test(tc, test_tcp_refuses_until_started);
	tcase_add_test(tc, test_tcp_listen_lost_to_another);
	tcase_add_test(tc, test_empty_url_list);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
