/*
 * tls.h — TLS with OpenSSL 3 for ldaps:// listeners and StartTLS (server
 * layer): the server's context built from the TLS directives of
 * config.h, and one non-blocking session per connection.
 *
 * A tls_context holds the SSL_CTX: certificate chain, private key (checked
 * against the certificate), CA file for client certificates, cipher list,
 * lowest protocol version (TLS 1.2 unless TLSProtocolMin says 1.3; older
 * versions are never offered) and TLSVerifyClient; creating it also runs
 * one handshake with itself in memory, so that OpenSSL's one-time set-up
 * happens at start-up, not in a client's session. A tls_session wraps an
 * SSL on a connection's non-blocking socket: the connection drives the
 * handshake, reads and writes from its I/O thread or, for writes, from a
 * worker; each call reports whether it must wait for the socket to become
 * readable or writable.
 *
 * Ownership: tls_context_create allocates, tls_context_free frees (after
 * every session is gone); a session is freed by tls_session_free, which
 * neither closes the socket nor sends anything. What OpenSSL allocates in
 * a session's calls (SSL_new to SSL_free) is charged to the session
 * (tls_memory.h, tls_session_bytes).
 * Thread-safety: a context is shared read-only by all threads once made;
 * a session must be used by one thread at a time (the connection's lock
 * serializes it), and may move between threads between calls.
 *
 * Caveats:
 *  - Writes use partial writes and a moving write buffer: after
 *    TLS_IO_WANT_WRITE retry with the same bytes at the start of the buffer
 *    (they may have been copied elsewhere), at least as many of them.
 *  - Decrypted bytes may wait inside the session (tls_session_pending)
 *    while the socket has nothing to read: the caller must read them
 *    without waiting for a read event.
 */
#ifndef LUMEN_TLS_H
#define LUMEN_TLS_H

#include <stdbool.h>
#include <stddef.h>

struct config_tls;
struct tls_context;
struct tls_session;

/* Outcome of a handshake step, read or write. */
enum tls_io {
	TLS_IO_OK = 0,         /* done / some bytes moved */
	TLS_IO_WANT_READ,      /* wait until the socket is readable, then retry */
	TLS_IO_WANT_WRITE,     /* wait until the socket is writable, then retry */
	TLS_IO_CLOSED,         /* the peer closed the TLS session (or the socket) */
	TLS_IO_ERROR,          /* protocol or system error: close the connection */
};

/*
 * Build the server's context from the TLS directives. On failure err names
 * the file and OpenSSL's reason ("TLSCertificateKeyFile /x/key.pem: cannot
 * read: No such file or directory", "...: does not match the certificate
 * ..."). Returns LUMEN_OK, LUMEN_EINVAL (no TLSCertificateFile or no
 * TLSCertificateKeyFile), LUMEN_EIO (a file cannot be read or used),
 * LUMEN_EMALFORMED (bad cipher list), LUMEN_ENOMEM.
 */
int tls_context_create(const struct config_tls *cfg, struct tls_context **out, char *err,
		       size_t errlen);
void tls_context_free(struct tls_context *ctx);

/* A server-side session on fd. LUMEN_ENOMEM, LUMEN_EIO. */
int tls_session_new(struct tls_context *ctx, int fd, struct tls_session **out);
void tls_session_free(struct tls_session *s);

/*
 * One handshake step. TLS_IO_OK when the handshake is complete; on
 * TLS_IO_ERROR/CLOSED `why` (may be NULL) says what went wrong.
 */
enum tls_io tls_session_handshake(struct tls_session *s, char *why, size_t whylen);

/* Read up to len decrypted bytes; *got is set for TLS_IO_OK (> 0). */
enum tls_io tls_session_read(struct tls_session *s, void *buf, size_t len, size_t *got);

/* Write up to len bytes (see Caveats); *sent is set for TLS_IO_OK (> 0). */
enum tls_io tls_session_write(struct tls_session *s, const void *buf, size_t len,
			      size_t *sent);

/*
 * The bytes OpenSSL holds for the session now (tls_memory.h): exact when
 * the allocation hooks are installed, else the measured estimate for its
 * state (handshake or established). 0 for NULL.
 */
size_t tls_session_bytes(const struct tls_session *s);

/* True if decrypted bytes wait inside the session. */
bool tls_session_pending(struct tls_session *s);

/* Best-effort close_notify (never blocks, never fails). */
void tls_session_shutdown(struct tls_session *s);

/* The negotiated cipher's strength in bits (the connection's SSF). */
unsigned tls_session_ssf(struct tls_session *s);

/* "TLSv1.3 TLS_AES_256_GCM_SHA384", for the access log; never NULL. */
const char *tls_session_protocol(struct tls_session *s);
const char *tls_session_cipher(struct tls_session *s);

/*
 * The subject DN (RFC 4514) of a verified client certificate into out.
 * LUMEN_OK, LUMEN_ENOTFOUND (no verified certificate), LUMEN_ELIMIT (does
 * not fit), LUMEN_ENOMEM.
 */
int tls_session_peer_subject(struct tls_session *s, char *out, size_t outlen);

#endif
