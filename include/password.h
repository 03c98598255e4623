/*
 * password.h — checking a presented password against a stored one, and
 * hashing passwords in the schemes Lumen checks (model layer).
 *
 * Stored forms (RFC 2307 style, scheme names case-insensitive):
 *   cleartext            no "{...}" prefix
 *   {SHA} {SHA256} {SHA512}        base64(digest)
 *   {SSHA} {SSHA256} {SSHA512}     base64(digest(password + salt) + salt)
 * Digests come from OpenSSL EVP. Every comparison is constant-time in the
 * contents, and a cleartext comparison is made on digests of both sides so
 * its time does not depend on where or whether the lengths differ.
 *
 * Ownership: callers own every buffer; nothing is allocated that outlives a
 * call. Thread-safety: reentrant (OpenSSL 3 is thread-safe).
 *
 * Caveats:
 *  - A salted value needs at least one byte of salt; a stored value whose
 *    digest part is short is LUMEN_EMALFORMED, not a mismatch.
 *  - A cleartext stored password that starts with '{' and contains '}' is
 *    taken as a scheme; unknown schemes are LUMEN_EUNSUPPORTED.
 */
#ifndef LUMEN_PASSWORD_H
#define LUMEN_PASSWORD_H

#include <stdbool.h>
#include <stddef.h>

/* Salt bytes password_hash uses for the salted schemes. */
#define PASSWORD_SALT_LENGTH 8
/* Room password_hash needs for any scheme (incl. the NUL). */
#define PASSWORD_HASH_MAX 128

/*
 * Compare `given` with the stored value; *match tells the outcome.
 * Returns LUMEN_OK (compared), LUMEN_EUNSUPPORTED (unknown {SCHEME}),
 * LUMEN_EMALFORMED (bad base64 or wrong length for the scheme), LUMEN_EIO
 * (the digest failed inside OpenSSL). *match is false on every error.
 */
int password_check(const char *stored, size_t stored_len, const void *given,
		   size_t given_len, bool *match);

/*
 * Write "{SCHEME}base64" for `password` into out (NUL-terminated). scheme is
 * one of SHA, SHA256, SHA512, SSHA, SSHA256, SSHA512 (case-insensitive);
 * salted schemes draw PASSWORD_SALT_LENGTH random bytes. Returns LUMEN_OK,
 * LUMEN_EUNSUPPORTED (unknown scheme), LUMEN_ELIMIT (out too small),
 * LUMEN_EIO (no random bytes or digest failure).
 */
int password_hash(const char *scheme, const void *password, size_t len,
		  char *out, size_t out_size);

/* As password_hash with a caller-chosen salt (tests; reproducible values). */
int password_hash_with_salt(const char *scheme, const void *password, size_t len,
			    const void *salt, size_t salt_len, char *out, size_t out_size);

#endif
