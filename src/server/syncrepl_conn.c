/*
 * syncrepl_conn.c — the consumer's blocking connection to its provider:
 * TCP connect with a deadline, TLS (ldaps:// or StartTLS) by OpenSSL,
 * whole PDUs out and in (syncrepl_conn.h).
 */
#include "syncrepl_conn.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "arena.h"
#include "config_syncrepl.h"
#include "ldap_message.h"
#include "lumen_error.h"

#define TICK_MS 500
#define STARTTLS_MESSAGE_ID 1

struct syncrepl_conn {
	int fd;
	SSL_CTX *ctx;
	SSL *ssl;
	const atomic_bool *stop;
	unsigned network_timeout;
	uint8_t *buf;                  /* received bytes: [0, len) */
	size_t len, cap;
	size_t consumed;               /* the PDU handed out last */
};

static void tls_reason(char *why, size_t whylen, const char *what)
{
	unsigned long e = ERR_peek_last_error();
	const char *reason = e != 0 ? ERR_reason_error_string(e) : NULL;
	snprintf(why, whylen, "%s: %s", what,
		 reason != NULL ? reason : errno != 0 ? strerror(errno) : "connection closed");
	ERR_clear_error();
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/*
 * Waits until fd is ready for events, *stop, or the deadline (0: none).
 * LUMEN_OK, LUMEN_EBUSY, LUMEN_ELIMIT, LUMEN_EIO.
 */
static int wait_fd(const struct syncrepl_conn *c, short events, uint64_t deadline)
{
	for (;;) {
		if (atomic_load(c->stop))
			return LUMEN_EBUSY;
		int ms = TICK_MS;
		if (deadline != 0) {
			uint64_t now = now_ms();
			if (now >= deadline)
				return LUMEN_ELIMIT;
			if (deadline - now < (uint64_t)ms)
				ms = (int)(deadline - now);
		}
		struct pollfd p = { .fd = c->fd, .events = events };
		int n = poll(&p, 1, ms);
		if (n > 0)
			return LUMEN_OK;
		if (n < 0 && errno != EINTR)
			return LUMEN_EIO;
	}
}

/* --------------------------------------------------------------- TCP */

static int connect_one(struct syncrepl_conn *c, const struct addrinfo *ai, uint64_t deadline)
{
	int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
			ai->ai_protocol);
	if (fd < 0)
		return LUMEN_EIO;
	c->fd = fd;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS)
		goto fail;
	int rc = wait_fd(c, POLLOUT, deadline);
	if (rc != LUMEN_OK) {
		close(fd);
		c->fd = -1;
		errno = rc == LUMEN_ELIMIT ? ETIMEDOUT : errno;
		return rc;
	}
	int err = 0;
	socklen_t len = sizeof(err);
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
		errno = err != 0 ? err : errno;
		goto fail;
	}
	/* blocking from here on, each call bounded as a backstop */
	int one = 1;
	struct timeval tv = { .tv_sec = c->network_timeout };
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0 ||
	    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0)
		goto fail;
	return LUMEN_OK;
fail:
	err = errno;
	close(fd);
	c->fd = -1;
	errno = err;
	return LUMEN_EIO;
}

static int connect_tcp(struct syncrepl_conn *c, const struct config_syncrepl *cfg, char *why,
		       size_t whylen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_family = AF_UNSPEC };
	struct addrinfo *list = NULL;
	char port[8];
	snprintf(port, sizeof(port), "%u", cfg->port);
	int gai = getaddrinfo(cfg->host, port, &hints, &list);
	if (gai != 0) {
		snprintf(why, whylen, "cannot resolve %s: %s", cfg->host, gai_strerror(gai));
		return LUMEN_EIO;
	}
	uint64_t deadline = now_ms() + (uint64_t)cfg->network_timeout * 1000u;
	int rc = LUMEN_EIO;
	errno = 0;
	for (const struct addrinfo *ai = list; ai != NULL && rc != LUMEN_OK && rc != LUMEN_EBUSY;
	     ai = ai->ai_next)
		rc = connect_one(c, ai, deadline);
	freeaddrinfo(list);
	if (rc == LUMEN_ELIMIT)
		snprintf(why, whylen, "connect: no answer within network-timeout (%u s)",
			 cfg->network_timeout);
	else if (rc != LUMEN_OK)
		snprintf(why, whylen, "connect: %s", rc == LUMEN_EBUSY ? "stopping"
			 : strerror(errno != 0 ? errno : ECONNREFUSED));
	return rc;
}

/* --------------------------------------------------------------- TLS */

static bool checks_certificate(const struct config_syncrepl *cfg)
{
	return cfg->tls_reqcert == SYNCREPL_REQCERT_DEMAND ||
	       cfg->tls_reqcert == SYNCREPL_REQCERT_TRY;
}

static int tls_context(struct syncrepl_conn *c, const struct config_syncrepl *cfg, char *why,
		       size_t whylen)
{
	c->ctx = SSL_CTX_new(TLS_client_method());
	if (c->ctx == NULL)
		return LUMEN_ENOMEM;
	SSL_CTX_set_min_proto_version(c->ctx, TLS1_2_VERSION);
	int ok = cfg->tls_cacert != NULL
			 ? SSL_CTX_load_verify_locations(c->ctx, cfg->tls_cacert, NULL)
			 : SSL_CTX_set_default_verify_paths(c->ctx);
	if (ok != 1) {
		tls_reason(why, whylen, cfg->tls_cacert != NULL ? cfg->tls_cacert : "CA paths");
		return LUMEN_EIO;
	}
	if (cfg->tls_cert != NULL &&
	    (SSL_CTX_use_certificate_chain_file(c->ctx, cfg->tls_cert) != 1 ||
	     SSL_CTX_use_PrivateKey_file(c->ctx, cfg->tls_key, SSL_FILETYPE_PEM) != 1)) {
		tls_reason(why, whylen, cfg->tls_cert);
		return LUMEN_EIO;
	}
	/* As libldap's TLS_REQCERT: demand and try end the session on a bad
	 * certificate (and check the host name), never and allow go on. */
	SSL_CTX_set_verify(c->ctx, checks_certificate(cfg) ? SSL_VERIFY_PEER : SSL_VERIFY_NONE,
			   NULL);
	return LUMEN_OK;
}

static int tls_handshake(struct syncrepl_conn *c, const struct config_syncrepl *cfg,
			 char *why, size_t whylen)
{
	int rc = tls_context(c, cfg, why, whylen);
	if (rc != LUMEN_OK)
		return rc;
	c->ssl = SSL_new(c->ctx);
	if (c->ssl == NULL || SSL_set_fd(c->ssl, c->fd) != 1)
		return LUMEN_ENOMEM;
	SSL_set_tlsext_host_name(c->ssl, cfg->host);
	if (checks_certificate(cfg) && SSL_set1_host(c->ssl, cfg->host) != 1)
		return LUMEN_ENOMEM;
	struct timeval tv = { .tv_sec = cfg->network_timeout };
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	errno = 0;
	if (SSL_connect(c->ssl) != 1) {
		long verify = SSL_get_verify_result(c->ssl);
		if (verify != X509_V_OK)
			snprintf(why, whylen, "TLS: the provider's certificate: %s",
				 X509_verify_cert_error_string(verify));
		else
			tls_reason(why, whylen, "TLS handshake");
		return LUMEN_EIO;
	}
	struct timeval none = { 0 };
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof(none));
	return LUMEN_OK;
}

/* ------------------------------------------------------------ bytes */

static int write_all(struct syncrepl_conn *c, const uint8_t *p, size_t n, char *why,
		     size_t whylen)
{
	while (n > 0) {
		ssize_t k;
		errno = 0;
		if (c->ssl != NULL) {
			int w = SSL_write(c->ssl, p, n > INT32_MAX ? INT32_MAX : (int)n);
			k = w > 0 ? w : -1;
		} else {
			k = send(c->fd, p, n, MSG_NOSIGNAL);
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			tls_reason(why, whylen, "write");
			return LUMEN_EIO;
		}
		p += k;
		n -= (size_t)k;
	}
	return LUMEN_OK;
}

int syncrepl_conn_send(struct syncrepl_conn *c, const struct ber_writer *w, char *why,
		       size_t whylen)
{
	return write_all(c, w->buf, w->len, why, whylen);
}

/* Reads what is there (after waiting for it) into the buffer. */
static int read_some(struct syncrepl_conn *c, uint64_t deadline, char *why, size_t whylen)
{
	if (c->cap - c->len < 16384) {
		size_t cap = c->cap > 0 ? c->cap * 2 : 65536;
		uint8_t *bigger = realloc(c->buf, cap);
		if (bigger == NULL)
			return LUMEN_ENOMEM;
		c->buf = bigger;
		c->cap = cap;
	}
	if (c->ssl == NULL || SSL_pending(c->ssl) == 0) {
		int rc = wait_fd(c, POLLIN, deadline);
		if (rc != LUMEN_OK) {
			snprintf(why, whylen, "%s", rc == LUMEN_EBUSY ? "stopping"
				 : rc == LUMEN_ELIMIT ? "the provider sent nothing in time"
				 : strerror(errno));
			return rc;
		}
	}
	ssize_t k;
	errno = 0;
	if (c->ssl != NULL) {
		int r = SSL_read(c->ssl, c->buf + c->len, (int)(c->cap - c->len));
		k = r > 0 ? r : -1;
	} else {
		do
			k = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
		while (k < 0 && errno == EINTR);
	}
	if (k <= 0) {
		tls_reason(why, whylen, "read");
		return LUMEN_EIO;
	}
	c->len += (size_t)k;
	return LUMEN_OK;
}

int syncrepl_conn_read(struct syncrepl_conn *c, unsigned timeout, const uint8_t **pdu,
		       size_t *len, char *why, size_t whylen)
{
	uint64_t deadline = timeout > 0 ? now_ms() + (uint64_t)timeout * 1000u : 0;
	size_t total = 0;
	if (c->consumed > 0) {
		memmove(c->buf, c->buf + c->consumed, c->len - c->consumed);
		c->len -= c->consumed;
		c->consumed = 0;
	}
	for (;;) {
		int rc = ber_frame(c->buf, c->len, SYNCREPL_MAX_PDU, &total);
		if (rc == LUMEN_OK)
			break;
		if (rc != LUMEN_EINCOMPLETE) {
			snprintf(why, whylen, "%s", rc == LUMEN_ELIMIT
				 ? "the provider sent a message larger than 64 MiB"
				 : "the provider sent something that is not BER");
			return rc;
		}
		rc = read_some(c, deadline, why, whylen);
		if (rc != LUMEN_OK)
			return rc;
	}
	*pdu = c->buf;
	*len = total;
	c->consumed = total;
	return LUMEN_OK;
}

/* ---------------------------------------------------------- StartTLS */

static int start_tls(struct syncrepl_conn *c, const struct config_syncrepl *cfg, char *why,
		     size_t whylen)
{
	struct ber_writer w;
	struct ldap_message m = { .message_id = STARTTLS_MESSAGE_ID,
				  .op = LDAP_OP_EXTENDED_REQUEST };
	m.u.extended.oid = (struct ber_view){ (const uint8_t *)LDAP_OID_STARTTLS,
					      strlen(LDAP_OID_STARTTLS) };
	if (ber_writer_init(&w, 64, 0) != LUMEN_OK)
		return LUMEN_ENOMEM;
	ldap_message_encode(&w, &m);
	int rc = ber_writer_error(&w);
	if (rc == LUMEN_OK)
		rc = syncrepl_conn_send(c, &w, why, whylen);
	ber_writer_free(&w);
	const uint8_t *pdu;
	size_t len;
	if (rc == LUMEN_OK)
		rc = syncrepl_conn_read(c, cfg->timeout, &pdu, &len, why, whylen);
	if (rc != LUMEN_OK)
		return rc;
	struct arena arena;
	struct ldap_message reply;
	struct ldap_decode_limits limits;
	ldap_decode_limits_default(&limits);
	arena_init(&arena, 0);
	rc = ldap_message_decode(pdu, len, &arena, &limits, &reply, NULL);
	int code = rc == LUMEN_OK && reply.op == LDAP_OP_EXTENDED_RESPONSE
			   ? reply.u.extended_response.result.code : -1;
	arena_free(&arena);
	if (code != LDAP_SUCCESS) {
		snprintf(why, whylen, "StartTLS refused (%s)",
			 code < 0 ? "no ExtendedResponse" : ldap_result_name(code));
		return code < 0 ? LUMEN_EMALFORMED : LUMEN_EUNSUPPORTED;
	}
	return tls_handshake(c, cfg, why, whylen);
}

int syncrepl_conn_open(const struct config_syncrepl *cfg, const atomic_bool *stop,
		       struct syncrepl_conn **out, char *why, size_t whylen)
{
	struct syncrepl_conn *c = calloc(1, sizeof(*c));
	*out = NULL;
	if (c == NULL)
		return LUMEN_ENOMEM;
	c->fd = -1;
	c->stop = stop;
	c->network_timeout = cfg->network_timeout;
	int rc = connect_tcp(c, cfg, why, whylen);
	if (rc == LUMEN_OK && cfg->ldaps)
		rc = tls_handshake(c, cfg, why, whylen);
	else if (rc == LUMEN_OK && cfg->starttls != SYNCREPL_STARTTLS_NO) {
		rc = start_tls(c, cfg, why, whylen);
		/* starttls=yes goes on in the clear when the provider says no */
		if (rc == LUMEN_EUNSUPPORTED && cfg->starttls == SYNCREPL_STARTTLS_YES)
			rc = LUMEN_OK;
	}
	if (rc == LUMEN_ENOMEM)
		snprintf(why, whylen, "out of memory");
	if (rc != LUMEN_OK) {
		syncrepl_conn_close(c);
		return rc;
	}
	*out = c;
	return LUMEN_OK;
}

bool syncrepl_conn_tls(const struct syncrepl_conn *c)
{
	return c->ssl != NULL;
}

void syncrepl_conn_close(struct syncrepl_conn *c)
{
	if (c == NULL)
		return;
	SSL_free(c->ssl);
	SSL_CTX_free(c->ctx);
	if (c->fd >= 0)
		close(c->fd);
	free(c->buf);
	free(c);
}
