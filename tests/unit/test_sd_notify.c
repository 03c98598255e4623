/*
 * test_sd_notify.c — readiness datagrams to a local AF_UNIX socket (path
 * and abstract), and the errors for unusable $NOTIFY_SOCKET values.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "lumen_error.h"
#include "sd_notify.h"

/* A datagram socket bound to `name` ('@' = abstract); returns the fd. */
static int bind_receiver(const char *name)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	size_t n = strlen(name);
	ck_assert_uint_lt(n, sizeof(addr.sun_path));
	memcpy(addr.sun_path, name, n);
	socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	if (name[0] == '@')
		addr.sun_path[0] = '\0';
	else
		len++;
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&addr, len), 0);
	return fd;
}

static void expect_datagram(int fd, const char *want)
{
	char buf[256];
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
	ck_assert_int_eq(n, (ssize_t)strlen(want));
	buf[n] = '\0';
	ck_assert_str_eq(buf, want);
}

START_TEST(no_socket_is_a_no_op)
{
	unsetenv("NOTIFY_SOCKET");
	ck_assert_int_eq(sd_notify_ready(), LUMEN_OK);
	setenv("NOTIFY_SOCKET", "", 1);
	ck_assert_int_eq(sd_notify_stopping(), LUMEN_OK);
	unsetenv("NOTIFY_SOCKET");
}
END_TEST

START_TEST(path_socket)
{
	char path[64];
	snprintf(path, sizeof(path), "/tmp/lumen-notify-%ld.sock", (long)getpid());
	unlink(path);
	int fd = bind_receiver(path);
	setenv("NOTIFY_SOCKET", path, 1);
	ck_assert_int_eq(sd_notify_ready(), LUMEN_OK);
	expect_datagram(fd, "READY=1");
	ck_assert_int_eq(sd_notify_send("STOPPING=1\nSTATUS=bye"), LUMEN_OK);
	expect_datagram(fd, "STOPPING=1\nSTATUS=bye");
	unsetenv("NOTIFY_SOCKET");
	close(fd);
	unlink(path);
}
END_TEST

START_TEST(abstract_socket)
{
	char name[64];
	snprintf(name, sizeof(name), "@lumen-notify-test-%ld", (long)getpid());
	int fd = bind_receiver(name);
	setenv("NOTIFY_SOCKET", name, 1);
	ck_assert_int_eq(sd_notify_stopping(), LUMEN_OK);
	expect_datagram(fd, "STOPPING=1");
	unsetenv("NOTIFY_SOCKET");
	close(fd);
}
END_TEST

START_TEST(bad_values)
{
	char too_long[200];
	memset(too_long, 'x', sizeof(too_long) - 1);
	too_long[0] = '/';
	too_long[sizeof(too_long) - 1] = '\0';
	static const struct {
		const char *value;
		int rc;
	} cases[] = {
		{ "relative/path", LUMEN_EINVAL },
		{ "@", LUMEN_EINVAL },
		{ "/", LUMEN_EINVAL },
		{ NULL, LUMEN_EINVAL },               /* too_long */
		{ "/nonexistent-dir/notify.sock", LUMEN_EIO },
		{ "@lumen-nobody-listens-here", LUMEN_EIO },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *value = cases[i].value != NULL ? cases[i].value : too_long;
		setenv("NOTIFY_SOCKET", value, 1);
		ck_assert_msg(sd_notify_ready() == cases[i].rc, "NOTIFY_SOCKET=%.40s: %d",
			      value, sd_notify_ready());
	}
	unsetenv("NOTIFY_SOCKET");
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("sd_notify");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, no_socket_is_a_no_op);
	tcase_add_test(tc, path_socket);
	tcase_add_test(tc, abstract_socket);
	tcase_add_test(tc, bad_values);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
