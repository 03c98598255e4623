/*
 * test_tls.c — tls.h: start-up errors name the file and the reason, and a
 * server session completes a handshake and moves data with a client over a
 * non-blocking socketpair (both sides driven step by step, as the I/O
 * thread does).
 */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/ssl.h>

#include "config.h"
#include "lumen_error.h"
#include "tls.h"

static char dir[] = "/tmp/lumen-test-tls-XXXXXX";
static char cert[256], key[256], other_key[256];

static void make_files(void)
{
	char cmd[1024];
	signal(SIGPIPE, SIG_IGN);   /* as lumend: a closed peer is an error return */
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(cert, sizeof(cert), "%s/c.pem", dir);
	snprintf(key, sizeof(key), "%s/k.pem", dir);
	snprintf(other_key, sizeof(other_key), "%s/o.pem", dir);
	snprintf(cmd, sizeof(cmd),
		 "openssl req -x509 -newkey rsa:2048 -nodes -keyout %s -out %s -days 1 "
		 "-subj /CN=localhost >/dev/null 2>&1 && "
		 "openssl genpkey -algorithm RSA -out %s >/dev/null 2>&1", key, cert, other_key);
	ck_assert_int_eq(system(cmd), 0);
}

static void remove_files(void)
{
	unlink(cert);
	unlink(key);
	unlink(other_key);
	rmdir(dir);
}

static struct config_tls settings(const char *c, const char *k)
{
	struct config_tls t = { 0 };
	t.certificate_file = (char *)c;
	t.key_file = (char *)k;
	t.protocol_min = CONFIG_TLS_1_2;
	return t;
}

START_TEST(test_errors_name_file)
{
	struct tls_context *ctx = NULL;
	char err[512] = "";
	struct config_tls t = settings(cert, "/nonexistent/key.pem");
	ck_assert_int_eq(tls_context_create(&t, &ctx, err, sizeof(err)), LUMEN_EIO);
	ck_assert_msg(strstr(err, "/nonexistent/key.pem") && strstr(err, "No such file"), "%s", err);
	t = settings(cert, other_key);
	ck_assert_int_eq(tls_context_create(&t, &ctx, err, sizeof(err)), LUMEN_EIO);
	ck_assert_msg(strstr(err, other_key) && strstr(err, "does not match"), "%s", err);
	t = settings(key, key);      /* a key where the certificate should be */
	ck_assert_int_eq(tls_context_create(&t, &ctx, err, sizeof(err)), LUMEN_EIO);
	ck_assert_msg(strstr(err, "TLSCertificateFile"), "%s", err);
	t = settings(NULL, key);
	ck_assert_int_eq(tls_context_create(&t, &ctx, err, sizeof(err)), LUMEN_EINVAL);
	t = settings(cert, key);
	t.cipher_suite = (char *)"NO-SUCH-CIPHER";
	ck_assert_int_eq(tls_context_create(&t, &ctx, err, sizeof(err)), LUMEN_EMALFORMED);
	ck_assert_msg(strstr(err, "TLSCipherSuite"), "%s", err);
	ck_assert_ptr_null(ctx);
}
END_TEST

START_TEST(test_handshake_and_data)
{
	struct tls_context *ctx = NULL;
	struct tls_session *s = NULL;
	char err[512] = "";
	struct config_tls t = settings(cert, key);
	ck_assert_int_eq(tls_context_create(&t, &ctx, err, sizeof(err)), LUMEN_OK);
	int fds[2];
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
	ck_assert_int_eq(tls_session_new(ctx, fds[0], &s), LUMEN_OK);
	SSL_CTX *cctx = SSL_CTX_new(TLS_client_method());
	SSL *c = SSL_new(cctx);
	SSL_set_fd(c, fds[1]);
	SSL_set_connect_state(c);
	enum tls_io io = TLS_IO_WANT_READ;
	int client = -1;
	for (int i = 0; i < 100 && (io != TLS_IO_OK || client != 1); i++) {
		client = SSL_do_handshake(c);
		io = tls_session_handshake(s, err, sizeof(err));
		ck_assert_msg(io != TLS_IO_ERROR && io != TLS_IO_CLOSED, "%s", err);
	}
	ck_assert_int_eq(io, TLS_IO_OK);
	ck_assert_uint_ge(tls_session_ssf(s), 128);
	size_t n = 0;
	ck_assert_int_eq(tls_session_write(s, "hello", 5, &n), TLS_IO_OK);
	ck_assert_uint_eq(n, 5);
	char buf[16] = "";
	ck_assert_int_eq(SSL_read(c, buf, sizeof(buf)), 5);
	ck_assert_int_eq(memcmp(buf, "hello", 5), 0);
	ck_assert_int_eq(tls_session_read(s, buf, sizeof(buf), &n), TLS_IO_WANT_READ);
	ck_assert_int_eq(SSL_write(c, "ping", 4), 4);
	ck_assert_int_eq(tls_session_read(s, buf, sizeof(buf), &n), TLS_IO_OK);
	ck_assert_uint_eq(n, 4);
	SSL_free(c);
	SSL_CTX_free(cctx);
	close(fds[1]);
	ck_assert_int_eq(tls_session_read(s, buf, sizeof(buf), &n), TLS_IO_CLOSED);
	tls_session_free(s);
	close(fds[0]);
	tls_context_free(ctx);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("tls");
	TCase *tc = tcase_create("tls");
	tcase_add_unchecked_fixture(tc, make_files, remove_files);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_errors_name_file);
	tcase_add_test(tc, test_handshake_and_data);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
