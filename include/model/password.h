/*
 * password.h — checking a presented password against a stored one, and
 * hashing passwords in the schemes Lumen checks (model layer).
 *
 * Stored forms (RFC 2307 style, scheme names case-insensitive):
 *   cleartext            no "{...}" prefix
 *   {SHA} {SHA256} {SHA512}        base64(digest)
 *   {SSHA} {SSHA256} {SSHA512}     base64(digest(password + salt) + salt)
 *   {PBKDF2} {PBKDF2-SHA1} {PBKDF2-SHA256} {PBKDF2-SHA512}
 *                        ITERATIONS$SALT$HASH, SALT and HASH in "adapted
 *                        base64" ('.' for '+', no '=' padding), HMAC-SHA-1
 *                        for {PBKDF2}: the format of OpenLDAP's pw-pbkdf2
 *                        module (and passlib's ldap_pbkdf2_*)
 *   {ARGON2}             $argon2id$v=19$m=KIB,t=PASSES,p=LANES$SALT$HASH
 *                        (libargon2's encoding, as OpenLDAP's argon2
 *                        module; argon2i and argon2d values verify too)
 *   {CRYPT}              a crypt(3) string ($6$SALT$HASH, $5$, $y$, ...;
 *                        whatever the system's libcrypt supports)
 * Hashing parameters (password_hash): salted digests draw
 * PASSWORD_SALT_LENGTH bytes of salt; PBKDF2 uses PASSWORD_PBKDF2_ITERATIONS
 * and a 16-byte salt; ARGON2 is argon2id with m=4096 KiB, t=3, p=1, a
 * 16-byte salt and a 32-byte hash (the OpenLDAP module's defaults); CRYPT
 * is SHA-512 crypt ("$6$") with libcrypt's default rounds.
 *
 * Comparisons are constant-time in the contents (CRYPTO_memcmp, or
 * libargon2's own constant-time verify), and a cleartext comparison is
 * made on digests of both sides so its time does not depend on where or
 * whether the lengths differ.
 *
 * Ownership: callers own every buffer; password_check allocates only
 * inside the call (libargon2's memory blocks, the crypt(3) work area).
 * Thread-safety: reentrant (OpenSSL 3, libargon2 and crypt_rn are).
 *
 * Caveats:
 *  - A salted value needs at least one byte of salt; a stored value whose
 *    digest part is short is LUMEN_EMALFORMED, not a mismatch.
 *  - A cleartext stored password that starts with '{' and contains '}' is
 *    taken as a scheme; unknown schemes are LUMEN_EUNSUPPORTED.
 *  - Stored work factors are bounded so one stored value cannot tie up a
 *    server (PBKDF2 iterations <= PASSWORD_PBKDF2_MAX_ITERATIONS, ARGON2
 *    m <= PASSWORD_ARGON2_MAX_KIB, t <= 64, p <= 16): beyond them the
 *    check is LUMEN_ELIMIT.
 *  - crypt(3) cannot see past a NUL byte: a presented password holding one
 *    never matches a {CRYPT} value.
 */
#ifndef LUMEN_PASSWORD_H
#define LUMEN_PASSWORD_H

#include <stdbool.h>
#include <stddef.h>

/* Salt bytes password_hash uses for the salted digest schemes. */
#define PASSWORD_SALT_LENGTH 8
/* Room password_hash needs for any scheme (incl. the NUL). */
#define PASSWORD_HASH_MAX 256
/* The scheme lumenpasswd uses when none is asked for. */
#define PASSWORD_DEFAULT_SCHEME "SSHA512"
/* PBKDF2 iterations of new values (OpenLDAP's pw-pbkdf2 default). */
#define PASSWORD_PBKDF2_ITERATIONS 10000
#define PASSWORD_PBKDF2_MAX_ITERATIONS 10000000UL
/* Largest ARGON2 memory cost accepted in a stored value, KiB. */
#define PASSWORD_ARGON2_MAX_KIB (256UL * 1024)

/*
 * Compare `given` with the stored value; *match tells the outcome.
 * Returns LUMEN_OK (compared), LUMEN_EUNSUPPORTED (unknown {SCHEME}),
 * LUMEN_EMALFORMED (bad encoding or wrong length for the scheme; for
 * {CRYPT} also a method the system's libcrypt does not know), LUMEN_ELIMIT (work factor beyond the bounds
 * above), LUMEN_ENOMEM, LUMEN_EIO (the digest failed inside OpenSSL or
 * libargon2). *match is false on every error.
 */
int password_check(const char *stored, size_t stored_len, const void *given,
		   size_t given_len, bool *match);

/*
 * Write "{SCHEME}..." for `password` into out (NUL-terminated). scheme is
 * one of the names above, case-insensitive, with or without the braces
 * ("ssha512" and "{SSHA512}" are the same); the salt is random. Returns
 * LUMEN_OK, LUMEN_EUNSUPPORTED (unknown scheme), LUMEN_ELIMIT (out too
 * small), LUMEN_EINVAL ({CRYPT} of a password holding a NUL byte),
 * LUMEN_ENOMEM, LUMEN_EIO (no random bytes or the hash failed).
 */
int password_hash(const char *scheme, const void *password, size_t len,
		  char *out, size_t out_size);

/*
 * As password_hash with a caller-chosen salt (tests; reproducible values).
 * For {CRYPT} the salt bytes seed crypt_gensalt (at least 16 are needed).
 * Unsalted schemes ignore it. Errors as password_hash, and LUMEN_ELIMIT
 * for a salt too long or too short for the scheme (PBKDF2: 1..64 bytes,
 * ARGON2: 8..64, CRYPT: 16..64).
 */
int password_hash_with_salt(const char *scheme, const void *password, size_t len,
			    const void *salt, size_t salt_len, char *out, size_t out_size);

/* True if password_hash knows scheme (same spelling rules). */
bool password_scheme_known(const char *scheme);

#endif
