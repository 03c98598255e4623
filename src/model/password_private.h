/*
 * password_private.h — the scheme table shared by password.c (dispatch,
 * digest schemes) and password_kdf.c (PBKDF2, ARGON2, CRYPT).
 */
#ifndef LUMEN_PASSWORD_PRIVATE_H
#define LUMEN_PASSWORD_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>

struct password_scheme;

/*
 * The two signatures every scheme implements, written once: a check of
 * `given` against the encoded part (after "{NAME}"), and a hash that writes
 * the whole "{NAME}..." value for password with salt into out. Each macro
 * declares (or begins the definition of) a function of that signature.
 */
#define PASSWORD_CHECK(name) \
	int name(const struct password_scheme *scheme, const char *encoded, size_t encoded_len, \
		 const void *given, size_t given_len, bool *match)
#define PASSWORD_HASH(name) \
	int name(const struct password_scheme *scheme, const void *password, size_t len, \
		 const void *salt, size_t salt_len, char *out, size_t out_size)

typedef PASSWORD_CHECK((*password_check_fn));
typedef PASSWORD_HASH((*password_hash_fn));

struct password_scheme {
	const char *name;
	password_check_fn check;
	password_hash_fn hash;
	size_t salt_length;     /* random bytes password_hash draws; 0 = unsalted */
	const char *digest;     /* OpenSSL digest name (digest and PBKDF2 schemes) */
	size_t digest_len;
};

PASSWORD_CHECK(password_pbkdf2_check);
PASSWORD_HASH(password_pbkdf2_hash);
PASSWORD_CHECK(password_argon2_check);
PASSWORD_HASH(password_argon2_hash);
PASSWORD_CHECK(password_crypt_check);
PASSWORD_HASH(password_crypt_hash);

/*
 * Writes "{NAME}" + body (body_len bytes) + NUL into out.
 * LUMEN_ELIMIT if out_size is too small.
 */
int password_write_value(const struct password_scheme *scheme, const char *body,
			 size_t body_len, char *out, size_t out_size);

#endif
