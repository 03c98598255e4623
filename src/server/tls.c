/*
 * tls.c — the OpenSSL context and non-blocking sessions (tls.h).
 */
#include "tls.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "config.h"
#include "lumen_error.h"
#include "tls_memory.h"

struct tls_context {
	SSL_CTX *ctx;
};

struct tls_session {
	SSL *ssl;
	struct tls_memory_account *account;   /* what OpenSSL holds for it */
};

/* Around every SSL call on a session: its allocations are charged to it. */
#define CHARGED_TO(s, call)                                                    \
	do {                                                                   \
		struct tls_memory_account *previous_ = tls_memory_enter((s)->account); \
		call;                                                          \
		tls_memory_leave(previous_);                                   \
	} while (0)

/* OpenSSL's most recent reason, or the system's, into why. */
static void last_reason(char *why, size_t whylen)
{
	unsigned long e = ERR_peek_last_error();
	if (e != 0)
		snprintf(why, whylen, "%s", ERR_reason_error_string(e) != NULL
						    ? ERR_reason_error_string(e) : "unknown error");
	else if (errno != 0)
		snprintf(why, whylen, "%s", strerror(errno));
	else
		snprintf(why, whylen, "unknown error");
	ERR_clear_error();
}

static int fail_file(const char *directive, const char *file, const char *what, char *err,
		     size_t errlen)
{
	char why[256];
	last_reason(why, sizeof(why));
	snprintf(err, errlen, "%s %s: %s: %s", directive, file, what, why);
	return LUMEN_EIO;
}

/* Refuse a clearly unreadable file with errno's words before OpenSSL tries. */
static int check_readable(const char *directive, const char *file, char *err, size_t errlen)
{
	FILE *f = fopen(file, "r");
	if (f == NULL) {
		snprintf(err, errlen, "%s %s: cannot read: %s", directive, file, strerror(errno));
		return LUMEN_EIO;
	}
	fclose(f);
	return LUMEN_OK;
}

static int load_keys(SSL_CTX *ctx, const struct config_tls *cfg, char *err, size_t errlen)
{
	int rc = check_readable("TLSCertificateFile", cfg->certificate_file, err, errlen);
	if (rc == LUMEN_OK)
		rc = check_readable("TLSCertificateKeyFile", cfg->key_file, err, errlen);
	if (rc == LUMEN_OK && cfg->ca_file != NULL)
		rc = check_readable("TLSCACertificateFile", cfg->ca_file, err, errlen);
	if (rc != LUMEN_OK)
		return rc;
	errno = 0;
	if (SSL_CTX_use_certificate_chain_file(ctx, cfg->certificate_file) != 1)
		return fail_file("TLSCertificateFile", cfg->certificate_file,
				 "not a usable PEM certificate", err, errlen);
	/* OpenSSL checks the key against the certificate while loading it. */
	if (SSL_CTX_use_PrivateKey_file(ctx, cfg->key_file, SSL_FILETYPE_PEM) != 1)
		return fail_file("TLSCertificateKeyFile", cfg->key_file,
				 ERR_GET_REASON(ERR_peek_last_error()) == X509_R_KEY_VALUES_MISMATCH
					 ? "does not match the certificate of TLSCertificateFile"
					 : "not a usable PEM private key", err, errlen);
	if (SSL_CTX_check_private_key(ctx) != 1)
		return fail_file("TLSCertificateKeyFile", cfg->key_file,
				 "does not match the certificate of TLSCertificateFile", err, errlen);
	if (cfg->ca_file != NULL && SSL_CTX_load_verify_locations(ctx, cfg->ca_file, NULL) != 1)
		return fail_file("TLSCACertificateFile", cfg->ca_file,
				 "not a usable PEM CA certificate", err, errlen);
	return LUMEN_OK;
}

/* Client certificates: TLSVerifyClient never | allow | demand. */
static void set_verify(SSL_CTX *ctx, const struct config_tls *cfg)
{
	int mode = SSL_VERIFY_NONE;
	if (cfg->verify_client == CONFIG_TLS_VERIFY_ALLOW)
		mode = SSL_VERIFY_PEER;
	else if (cfg->verify_client == CONFIG_TLS_VERIFY_DEMAND)
		mode = SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
	SSL_CTX_set_verify(ctx, mode, NULL);
	if (cfg->ca_file != NULL && mode != SSL_VERIFY_NONE) {
		STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(cfg->ca_file);
		if (names != NULL)
			SSL_CTX_set_client_CA_list(ctx, names);
	}
}

static int configure(SSL_CTX *ctx, const struct config_tls *cfg, char *err, size_t errlen)
{
	unsigned min = cfg->protocol_min < CONFIG_TLS_1_2 ? CONFIG_TLS_1_2 : cfg->protocol_min;
	SSL_CTX_set_min_proto_version(ctx, (int)min);
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
				      SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
				      SSL_MODE_RELEASE_BUFFERS);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_num_tickets(ctx, 0);
	if (cfg->cipher_suite != NULL && SSL_CTX_set_cipher_list(ctx, cfg->cipher_suite) != 1) {
		char why[256];
		last_reason(why, sizeof(why));
		snprintf(err, errlen, "TLSCipherSuite \"%s\": %s", cfg->cipher_suite, why);
		return LUMEN_EMALFORMED;
	}
	set_verify(ctx, cfg);
	return load_keys(ctx, cfg, err, errlen);
}

/* One step of each side; true while neither has failed. */
static bool step_both(SSL *client, SSL *server, bool *done)
{
	int c = SSL_do_handshake(client);
	int s = SSL_do_handshake(server);
	*done = c == 1 && s == 1;
	bool c_waits = c == 1 || SSL_get_error(client, c) == SSL_ERROR_WANT_READ;
	bool s_waits = s == 1 || SSL_get_error(server, s) == SSL_ERROR_WANT_READ;
	return c_waits && s_waits;
}

/*
 * A handshake with ourselves over a memory BIO pair, at start-up. OpenSSL
 * sets up process-wide state during the first handshake (algorithm
 * fetches, ~20 KiB kept for the process's life); done here, it is not
 * charged to the first client's session, and an allocation failing in it
 * cannot leave that one-time set-up failed for every later client (an
 * allocation failed in a first client handshake made every later one fail
 * with "internal error": t_tls_faults.py). Best effort: a context that
 * demands client certificates ends this handshake early, which is fine.
 */
static void warm_up(SSL_CTX *server_ctx)
{
	SSL_CTX *client_ctx = SSL_CTX_new(TLS_client_method());
	SSL *server = client_ctx != NULL ? SSL_new(server_ctx) : NULL;
	SSL *client = server != NULL ? SSL_new(client_ctx) : NULL;
	BIO *server_end = NULL, *client_end = NULL;
	if (client != NULL && BIO_new_bio_pair(&server_end, 0, &client_end, 0) == 1) {
		SSL_set_bio(server, server_end, server_end);
		SSL_set_bio(client, client_end, client_end);
		SSL_set_accept_state(server);
		SSL_set_connect_state(client);
		bool done = false;
		for (int i = 0; i < 16 && !done && step_both(client, server, &done); i++)
			;
	}
	SSL_free(client);
	SSL_free(server);
	SSL_CTX_free(client_ctx);
	ERR_clear_error();
}

int tls_context_create(const struct config_tls *cfg, struct tls_context **out, char *err,
		       size_t errlen)
{
	*out = NULL;
	if (cfg->certificate_file == NULL || cfg->key_file == NULL) {
		snprintf(err, errlen, "TLS needs both TLSCertificateFile and TLSCertificateKeyFile");
		return LUMEN_EINVAL;
	}
	struct tls_context *t = calloc(1, sizeof(*t));
	if (t == NULL)
		return LUMEN_ENOMEM;
	ERR_clear_error();
	t->ctx = SSL_CTX_new(TLS_server_method());
	if (t->ctx == NULL) {
		free(t);
		snprintf(err, errlen, "cannot create the TLS context: out of memory");
		return LUMEN_ENOMEM;
	}
	int rc = configure(t->ctx, cfg, err, errlen);
	if (rc != LUMEN_OK) {
		tls_context_free(t);
		return rc;
	}
	warm_up(t->ctx);
	*out = t;
	return LUMEN_OK;
}

void tls_context_free(struct tls_context *ctx)
{
	if (ctx == NULL)
		return;
	SSL_CTX_free(ctx->ctx);
	free(ctx);
}

int tls_session_new(struct tls_context *ctx, int fd, struct tls_session **out)
{
	struct tls_session *s = calloc(1, sizeof(*s));
	*out = NULL;
	if (s == NULL)
		return LUMEN_ENOMEM;
	s->account = tls_memory_account_new();
	if (s->account == NULL) {
		free(s);
		return LUMEN_ENOMEM;
	}
	CHARGED_TO(s, s->ssl = SSL_new(ctx->ctx));
	if (s->ssl == NULL) {
		tls_session_free(s);
		return LUMEN_ENOMEM;
	}
	int set;
	CHARGED_TO(s, set = SSL_set_fd(s->ssl, fd));
	if (set != 1) {
		tls_session_free(s);
		return LUMEN_EIO;
	}
	SSL_set_accept_state(s->ssl);
	*out = s;
	return LUMEN_OK;
}

void tls_session_free(struct tls_session *s)
{
	if (s == NULL)
		return;
	CHARGED_TO(s, SSL_free(s->ssl));
	tls_memory_account_drop(s->account);
	free(s);
}

size_t tls_session_bytes(const struct tls_session *s)
{
	if (s == NULL)
		return 0;
	if (!tls_memory_installed())
		return SSL_is_init_finished(s->ssl) ? TLS_MEMORY_IDLE : TLS_MEMORY_HANDSHAKE_PEAK;
	return tls_memory_account_bytes(s->account);
}

/* Map SSL_get_error; the error queue is cleared either way. */
static enum tls_io classify(struct tls_session *s, int ret, char *why, size_t whylen)
{
	int e = SSL_get_error(s->ssl, ret);
	enum tls_io io = TLS_IO_ERROR;
	if (e == SSL_ERROR_WANT_READ)
		io = TLS_IO_WANT_READ;
	else if (e == SSL_ERROR_WANT_WRITE)
		io = TLS_IO_WANT_WRITE;
	else if (e == SSL_ERROR_ZERO_RETURN)
		io = TLS_IO_CLOSED;
	else if (e == SSL_ERROR_SSL &&
		 ERR_GET_REASON(ERR_peek_error()) == SSL_R_UNEXPECTED_EOF_WHILE_READING)
		io = TLS_IO_CLOSED;   /* the peer hung up without close_notify */
	else if (e == SSL_ERROR_SYSCALL && ERR_peek_error() == 0)
		io = errno == 0 || errno == ECONNRESET || errno == EPIPE ? TLS_IO_CLOSED
									 : TLS_IO_ERROR;
	if (io >= TLS_IO_CLOSED && why != NULL)
		last_reason(why, whylen);
	ERR_clear_error();
	return io;
}

enum tls_io tls_session_handshake(struct tls_session *s, char *why, size_t whylen)
{
	ERR_clear_error();
	errno = 0;
	int ret;
	CHARGED_TO(s, ret = SSL_do_handshake(s->ssl));
	if (ret == 1)
		return TLS_IO_OK;
	return classify(s, ret, why, whylen);
}

enum tls_io tls_session_read(struct tls_session *s, void *buf, size_t len, size_t *got)
{
	ERR_clear_error();
	errno = 0;
	*got = 0;
	int ret;
	CHARGED_TO(s, ret = SSL_read_ex(s->ssl, buf, len, got));
	if (ret == 1)
		return TLS_IO_OK;
	return classify(s, ret, NULL, 0);
}

enum tls_io tls_session_write(struct tls_session *s, const void *buf, size_t len,
			      size_t *sent)
{
	ERR_clear_error();
	errno = 0;
	*sent = 0;
	int ret;
	CHARGED_TO(s, ret = SSL_write_ex(s->ssl, buf, len, sent));
	if (ret == 1)
		return TLS_IO_OK;
	return classify(s, ret, NULL, 0);
}

bool tls_session_pending(struct tls_session *s)
{
	return SSL_pending(s->ssl) > 0 || SSL_has_pending(s->ssl);
}

void tls_session_shutdown(struct tls_session *s)
{
	ERR_clear_error();
	if (SSL_is_init_finished(s->ssl))
		CHARGED_TO(s, SSL_shutdown(s->ssl));
	ERR_clear_error();
}

unsigned tls_session_ssf(struct tls_session *s)
{
	int bits = SSL_get_cipher_bits(s->ssl, NULL);
	return bits > 0 ? (unsigned)bits : 0;
}

const char *tls_session_protocol(struct tls_session *s)
{
	const char *v = SSL_get_version(s->ssl);
	return v != NULL ? v : "?";
}

const char *tls_session_cipher(struct tls_session *s)
{
	const char *c = SSL_get_cipher_name(s->ssl);
	return c != NULL ? c : "?";
}

int tls_session_peer_subject(struct tls_session *s, char *out, size_t outlen)
{
	X509 *cert = SSL_get1_peer_certificate(s->ssl);
	int rc = LUMEN_ENOTFOUND;
	if (cert == NULL)
		return rc;
	if (SSL_get_verify_result(s->ssl) == X509_V_OK) {
		BIO *bio = BIO_new(BIO_s_mem());
		rc = LUMEN_ENOMEM;
		if (bio != NULL &&
		    X509_NAME_print_ex(bio, X509_get_subject_name(cert), 0, XN_FLAG_RFC2253) >= 0) {
			int n = BIO_read(bio, out, outlen > 0 ? (int)outlen - 1 : 0);
			rc = n >= 0 && (size_t)n < outlen - 1 ? LUMEN_OK : LUMEN_ELIMIT;
			if (n >= 0)
				out[n] = '\0';
		}
		BIO_free(bio);
	}
	X509_free(cert);
	return rc;
}
