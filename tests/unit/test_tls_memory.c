/*
 * test_tls_memory.c — tls_memory.h and tls_session_bytes: OpenSSL's blocks
 * are charged to the account current when they were made, whatever is
 * current when they are resized or freed; an account outlives its session
 * while blocks remain; and a real server session's bytes in each state
 * (handshake, idle, reading, writing, freed), printed as measured and
 * checked against the estimates admission relies on.
 */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/ssl.h>

#include "config.h"
#include "lumen_error.h"
#include "tls.h"
#include "tls_memory.h"

#define HEADER 16u

static char dir[] = "/tmp/lumen-test-tlsmem-XXXXXX";
static char cert[256], key[256];

/* Before any OpenSSL call of the process, as lumend does. */
static void setup(void)
{
	char cmd[1024];
	ck_assert_int_eq(tls_memory_install(), LUMEN_OK);
	ck_assert(tls_memory_installed());
	signal(SIGPIPE, SIG_IGN);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(cert, sizeof(cert), "%s/c.pem", dir);
	snprintf(key, sizeof(key), "%s/k.pem", dir);
	snprintf(cmd, sizeof(cmd),
		 "openssl req -x509 -newkey rsa:2048 -nodes -keyout %s -out %s -days 1 "
		 "-subj /CN=localhost >/dev/null 2>&1", key, cert);
	ck_assert_int_eq(system(cmd), 0);
}

static void teardown(void)
{
	unlink(cert);
	unlink(key);
	rmdir(dir);
}

START_TEST(blocks_charged_to_their_maker)
{
	struct tls_memory_account *a = tls_memory_account_new(), *b = tls_memory_account_new();
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(tls_memory_install(), LUMEN_OK);      /* again: no-op */
	struct tls_memory_account *before = tls_memory_enter(a);
	ck_assert_ptr_null(before);
	void *p = OPENSSL_malloc(100);
	void *zero = OPENSSL_malloc(0);
	ck_assert_uint_eq(tls_memory_account_bytes(a), 100 + HEADER + HEADER);
	/* nested: b's allocation is b's; back to a after */
	struct tls_memory_account *outer = tls_memory_enter(b);
	ck_assert_ptr_eq(outer, a);
	void *q = OPENSSL_malloc(40);
	tls_memory_leave(outer);
	ck_assert_uint_eq(tls_memory_account_bytes(b), 40 + HEADER);
	tls_memory_leave(before);
	/* grown and freed with nobody (or b) current: still a's */
	p = OPENSSL_realloc(p, 1000);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(tls_memory_account_bytes(a), 1000 + HEADER + HEADER);
	p = OPENSSL_realloc(p, 10);
	ck_assert_uint_eq(tls_memory_account_bytes(a), 10 + HEADER + HEADER);
	outer = tls_memory_enter(b);
	OPENSSL_free(zero);
	OPENSSL_free(NULL);
	tls_memory_leave(outer);
	ck_assert_uint_eq(tls_memory_account_bytes(a), 10 + HEADER);
	ck_assert_uint_eq(tls_memory_account_bytes(b), 40 + HEADER);
	/* nobody current: charged to nothing */
	void *free_standing = OPENSSL_malloc(64);
	ck_assert_uint_eq(tls_memory_account_bytes(a), 10 + HEADER);
	OPENSSL_free(free_standing);
	/* realloc to 0 frees */
	ck_assert_ptr_null(OPENSSL_realloc(q, 0));
	ck_assert_uint_eq(tls_memory_account_drop(b), 0);     /* b freed now */
	/* a's session goes while a block remains: a lives until it is freed
	 * (the sanitizer build would see a leak or a use after free) */
	ck_assert_uint_eq(tls_memory_account_drop(a), 10 + HEADER);
	OPENSSL_free(p);
	ck_assert_uint_eq(tls_memory_account_drop(NULL), 0);
}
END_TEST

struct pair {
	struct tls_context *ctx;
	struct tls_session *server;
	SSL_CTX *client_ctx;
	SSL *client;
	int fds[2];
};

static void open_pair(struct pair *p)
{
	char err[512] = "";
	struct config_tls t = { 0 };
	t.certificate_file = cert;
	t.key_file = key;
	t.protocol_min = CONFIG_TLS_1_2;
	ck_assert_int_eq(tls_context_create(&t, &p->ctx, err, sizeof(err)), LUMEN_OK);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, p->fds), 0);
	ck_assert_int_eq(tls_session_new(p->ctx, p->fds[0], &p->server), LUMEN_OK);
	p->client_ctx = SSL_CTX_new(TLS_client_method());
	p->client = SSL_new(p->client_ctx);
	SSL_set_fd(p->client, p->fds[1]);
	SSL_set_connect_state(p->client);
}

static void close_pair(struct pair *p)
{
	SSL_free(p->client);
	SSL_CTX_free(p->client_ctx);
	close(p->fds[1]);
	if (p->server != NULL)
		tls_session_free(p->server);
	close(p->fds[0]);
	tls_context_free(p->ctx);
}

/* Drive both sides; the server's largest figure along the way. */
static size_t handshake(struct pair *p)
{
	char err[256] = "";
	size_t peak = tls_session_bytes(p->server);
	enum tls_io io = TLS_IO_WANT_READ;
	int client = -1;
	for (int i = 0; i < 100 && (io != TLS_IO_OK || client != 1); i++) {
		client = SSL_do_handshake(p->client);
		io = tls_session_handshake(p->server, err, sizeof(err));
		ck_assert_msg(io != TLS_IO_ERROR && io != TLS_IO_CLOSED, "%s", err);
		size_t now = tls_session_bytes(p->server);
		peak = now > peak ? now : peak;
	}
	ck_assert_int_eq(io, TLS_IO_OK);
	return peak;
}

/* The first session of the process: tls_context_create's handshake with
 * itself filled OpenSSL's one-time caches (~20 KiB, kept for the process's
 * life), so they are not charged to it. */
START_TEST(session_states)
{
	struct pair p = { 0 };
	open_pair(&p);
	size_t fresh = tls_session_bytes(p.server);
	size_t peak = handshake(&p);
	size_t idle = tls_session_bytes(p.server);
	/* reading: a 16 KiB record taken 100 bytes at a time keeps the rest */
	static char record[16384];
	memset(record, 'x', sizeof(record));
	ck_assert_int_eq(SSL_write(p.client, record, sizeof(record)), (int)sizeof(record));
	char buf[100];
	size_t n = 0;
	ck_assert_int_eq(tls_session_read(p.server, buf, sizeof(buf), &n), TLS_IO_OK);
	size_t reading = tls_session_bytes(p.server);
	while (tls_session_read(p.server, buf, sizeof(buf), &n) == TLS_IO_OK)
		;
	size_t after_read = tls_session_bytes(p.server);
	/* writing: the client does not read; what the socket cannot take waits */
	enum tls_io io = TLS_IO_OK;
	for (int i = 0; i < 64 && io == TLS_IO_OK; i++)
		io = tls_session_write(p.server, record, sizeof(record), &n);
	ck_assert_int_eq(io, TLS_IO_WANT_WRITE);
	size_t writing = tls_session_bytes(p.server);
	printf("TLS session bytes: new %zu, handshake peak %zu, idle %zu, reading %zu, "
	       "after reading %zu, writing (blocked) %zu\n", fresh, peak, idle, reading,
	       after_read, writing);
	ck_assert_uint_gt(fresh, 1000);
	ck_assert_uint_le(peak, TLS_MEMORY_HANDSHAKE_PEAK);
	ck_assert_uint_gt(peak, TLS_MEMORY_HANDSHAKE_PEAK / 2);
	ck_assert_uint_le(idle, TLS_MEMORY_IDLE);
	ck_assert_uint_gt(idle, TLS_MEMORY_IDLE / 2);
	ck_assert_uint_gt(reading, idle + 16384);     /* the record buffer */
	ck_assert_uint_le(after_read, idle + 1024);   /* RELEASE_BUFFERS gave it back */
	ck_assert_uint_gt(writing, idle + 16384);
	close_pair(&p);
}
END_TEST

/* A session freed mid-handshake leaves nothing charged (the account goes). */
START_TEST(freed_mid_handshake)
{
	struct pair p = { 0 };
	open_pair(&p);
	char err[256];
	ck_assert_int_eq(SSL_do_handshake(p.client), -1);
	ck_assert_int_eq(tls_session_handshake(p.server, err, sizeof(err)), TLS_IO_WANT_READ);
	ck_assert_uint_gt(tls_session_bytes(p.server), 4096);
	close_pair(&p);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("tls_memory");
	TCase *tc = tcase_create("tls_memory");
	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, session_states);
	tcase_add_test(tc, blocks_charged_to_their_maker);
	tcase_add_test(tc, freed_mid_handshake);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
