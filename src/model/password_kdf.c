/*
 * password_kdf.c — the slow, key-derivation password schemes: {PBKDF2*}
 * (OpenSSL), {ARGON2} (libargon2) and {CRYPT} (libcrypt's crypt_rn).
 *
 * Stored values come from the directory, which users may write (their own
 * userPassword), so every work factor read from one is bounded before any
 * work is done: a value asking for 4 GiB of Argon2 memory must not take a
 * server down.
 */
#include <crypt.h>
#include <stdio.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <argon2.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "base64.h"
#include "lumen_error.h"
#include "password.h"
#include "password_private.h"

/* ------------------------------------------------------------- PBKDF2 */

#define PBKDF2_MAX_SALT 64
/* Digits of the largest iteration count we accept, and a little slack. */
#define PBKDF2_MAX_ITERATION_DIGITS 9

/*
 * "Adapted base64" (OpenLDAP pw-pbkdf2, passlib): '.' instead of '+' and no
 * padding. Decodes at most `max` bytes into out. LUMEN_EMALFORMED.
 */
static int adapted_base64_decode(const char *text, size_t len, uint8_t *out, size_t max,
				 size_t *out_len)
{
	char standard[base64_encoded_length(PASSWORD_HASH_MAX)];

	if (len == 0 || len % 4 == 1 || len + 3 > sizeof(standard))
		return LUMEN_EMALFORMED;
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		standard[n++] = text[i] == '.' ? '+' : text[i];
	while (n % 4 != 0)
		standard[n++] = '=';
	if (base64_decoded_max(n) > max + 2)
		return LUMEN_EMALFORMED;
	uint8_t decoded[base64_encoded_length(PASSWORD_HASH_MAX)];
	if (base64_decode(standard, n, decoded, out_len) != LUMEN_OK || *out_len > max)
		return LUMEN_EMALFORMED;
	memcpy(out, decoded, *out_len);
	return LUMEN_OK;
}

/* Writes the adapted base64 of bytes into out; returns its length. */
static size_t adapted_base64_encode(const uint8_t *bytes, size_t n, char *out)
{
	size_t len = base64_encoded_length(n);
	base64_encode(bytes, n, out);
	while (len > 0 && out[len - 1] == '=')
		len--;
	for (size_t i = 0; i < len; i++)
		if (out[i] == '+')
			out[i] = '.';
	return len;
}

/* Parses the decimal iteration count before the first '$'. */
static int pbkdf2_parse_iterations(const char *text, size_t len, unsigned long *iterations,
				   size_t *consumed)
{
	unsigned long value = 0;
	size_t i = 0;

	while (i < len && text[i] >= '0' && text[i] <= '9') {
		if (i == PBKDF2_MAX_ITERATION_DIGITS)
			return LUMEN_ELIMIT;
		value = value * 10 + (unsigned long)(text[i] - '0');
		i++;
	}
	if (i == 0 || i == len || text[i] != '$' || value == 0)
		return LUMEN_EMALFORMED;
	if (value > PASSWORD_PBKDF2_MAX_ITERATIONS)
		return LUMEN_ELIMIT;
	*iterations = value;
	*consumed = i + 1;
	return LUMEN_OK;
}

static int pbkdf2_derive(const struct password_scheme *sc, const void *password, size_t len,
			 const uint8_t *salt, size_t salt_len, unsigned long iterations,
			 uint8_t *out)
{
	const EVP_MD *md = EVP_get_digestbyname(sc->digest);
	if (md == NULL || len > INT32_MAX ||
	    PKCS5_PBKDF2_HMAC(password, (int)len, salt, (int)salt_len, (int)iterations, md,
			      (int)sc->digest_len, out) != 1)
		return LUMEN_EIO;
	return LUMEN_OK;
}

int password_pbkdf2_check(const struct password_scheme *sc, const char *encoded,
			  size_t encoded_len, const void *given, size_t given_len, bool *match)
{
	uint8_t salt[PBKDF2_MAX_SALT], stored[EVP_MAX_MD_SIZE], computed[EVP_MAX_MD_SIZE];
	size_t salt_len = 0, stored_len = 0, pos = 0;
	unsigned long iterations = 0;

	int rc = pbkdf2_parse_iterations(encoded, encoded_len, &iterations, &pos);
	if (rc != LUMEN_OK)
		return rc;
	const char *salt_text = encoded + pos;
	const char *dollar = memchr(salt_text, '$', encoded_len - pos);
	if (dollar == NULL)
		return LUMEN_EMALFORMED;
	const char *hash_text = dollar + 1;
	size_t hash_text_len = encoded_len - (size_t)(hash_text - encoded);
	if (adapted_base64_decode(salt_text, (size_t)(dollar - salt_text), salt, sizeof(salt),
				  &salt_len) != LUMEN_OK ||
	    adapted_base64_decode(hash_text, hash_text_len, stored, sizeof(stored),
				  &stored_len) != LUMEN_OK ||
	    stored_len != sc->digest_len)
		return LUMEN_EMALFORMED;
	rc = pbkdf2_derive(sc, given, given_len, salt, salt_len, iterations, computed);
	if (rc == LUMEN_OK)
		*match = CRYPTO_memcmp(computed, stored, sc->digest_len) == 0;
	OPENSSL_cleanse(computed, sizeof(computed));
	return rc;
}

int password_pbkdf2_hash(const struct password_scheme *sc, const void *password, size_t len,
			 const void *salt, size_t salt_len, char *out, size_t out_size)
{
	uint8_t derived[EVP_MAX_MD_SIZE];
	char body[32 + base64_encoded_length(PBKDF2_MAX_SALT) +
		  base64_encoded_length(EVP_MAX_MD_SIZE)];

	if (salt_len == 0 || salt_len > PBKDF2_MAX_SALT)
		return LUMEN_ELIMIT;
	int rc = pbkdf2_derive(sc, password, len, salt, salt_len, PASSWORD_PBKDF2_ITERATIONS,
			       derived);
	if (rc != LUMEN_OK)
		return rc;
	size_t n = (size_t)snprintf(body, sizeof(body), "%d$", PASSWORD_PBKDF2_ITERATIONS);
	n += adapted_base64_encode(salt, salt_len, body + n);
	body[n++] = '$';
	n += adapted_base64_encode(derived, sc->digest_len, body + n);
	OPENSSL_cleanse(derived, sizeof(derived));
	return password_write_value(sc, body, n, out, out_size);
}

/* ------------------------------------------------------------- ARGON2 */

#define ARGON2_NEW_MEMORY_KIB 4096
#define ARGON2_NEW_PASSES 3
#define ARGON2_NEW_LANES 1
#define STORED_ARGON2_MAX_PASSES 64
#define STORED_ARGON2_MAX_LANES 16
#define STORED_ARGON2_MAX_ENCODED 512

static int argon2_map_error(int argon2_rc)
{
	switch (argon2_rc) {
	case ARGON2_OK:
		return LUMEN_OK;
	case ARGON2_MEMORY_ALLOCATION_ERROR:
		return LUMEN_ENOMEM;
	case ARGON2_THREAD_FAIL:
		return LUMEN_EIO;
	default:
		return LUMEN_EMALFORMED;
	}
}

/* Reads "NAME=DIGITS" at *p, advancing past it. False if it is not there. */
static bool argon2_read_param(const char **p, const char *name, unsigned long *value)
{
	size_t name_len = strlen(name);
	if (strncmp(*p, name, name_len) != 0)
		return false;
	const char *digits = *p + name_len;
	char *end = NULL;
	if (*digits < '0' || *digits > '9')
		return false;
	errno = 0;
	*value = strtoul(digits, &end, 10);
	if (errno != 0)
		return false;
	*p = end;
	return true;
}

/*
 * Type and cost of "$argon2X$v=19$m=..,t=..,p=..$salt$hash" (v= optional).
 * LUMEN_EMALFORMED, LUMEN_ELIMIT (cost beyond the bounds).
 */
static int argon2_inspect(const char *value, argon2_type *type)
{
	static const struct { const char *prefix; argon2_type type; } types[] = {
		{ "$argon2id$", Argon2_id }, { "$argon2i$", Argon2_i }, { "$argon2d$", Argon2_d },
	};
	const char *p = NULL;
	unsigned long version = 0, memory = 0, passes = 0, lanes = 0;

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]) && p == NULL; i++)
		if (strncmp(value, types[i].prefix, strlen(types[i].prefix)) == 0) {
			p = value + strlen(types[i].prefix);
			*type = types[i].type;
		}
	if (p == NULL)
		return LUMEN_EMALFORMED;
	if (argon2_read_param(&p, "v=", &version) && *p++ != '$')
		return LUMEN_EMALFORMED;
	if (!argon2_read_param(&p, "m=", &memory) || *p++ != ',' ||
	    !argon2_read_param(&p, "t=", &passes) || *p++ != ',' ||
	    !argon2_read_param(&p, "p=", &lanes) || *p != '$')
		return LUMEN_EMALFORMED;
	if (memory > PASSWORD_ARGON2_MAX_KIB || passes > STORED_ARGON2_MAX_PASSES ||
	    lanes > STORED_ARGON2_MAX_LANES)
		return LUMEN_ELIMIT;
	return LUMEN_OK;
}

int password_argon2_check(const struct password_scheme *sc, const char *encoded,
			  size_t encoded_len, const void *given, size_t given_len, bool *match)
{
	char value[STORED_ARGON2_MAX_ENCODED + 1];
	argon2_type type = Argon2_id;

	(void)sc;
	if (encoded_len > STORED_ARGON2_MAX_ENCODED || memchr(encoded, '\0', encoded_len) != NULL)
		return LUMEN_EMALFORMED;
	memcpy(value, encoded, encoded_len);
	value[encoded_len] = '\0';
	int rc = argon2_inspect(value, &type);
	if (rc != LUMEN_OK)
		return rc;
	if (given_len > ARGON2_MAX_PWD_LENGTH)
		return LUMEN_OK;    /* longer than any argon2 password: no match */
	int arc = argon2_verify(value, given, given_len, type);
	if (arc == ARGON2_VERIFY_MISMATCH)
		return LUMEN_OK;
	rc = argon2_map_error(arc);
	*match = rc == LUMEN_OK;
	return rc;
}

int password_argon2_hash(const struct password_scheme *sc, const void *password, size_t len,
			 const void *salt, size_t salt_len, char *out, size_t out_size)
{
	char body[STORED_ARGON2_MAX_ENCODED];

	if (salt_len < ARGON2_MIN_SALT_LENGTH || salt_len > 64)
		return LUMEN_ELIMIT;
	if (len > ARGON2_MAX_PWD_LENGTH)
		return LUMEN_ELIMIT;
	int arc = argon2_hash(ARGON2_NEW_PASSES, ARGON2_NEW_MEMORY_KIB, ARGON2_NEW_LANES,
			      password, len, salt, salt_len, NULL, sc->digest_len, body,
			      sizeof(body), Argon2_id, ARGON2_VERSION_13);
	if (arc != ARGON2_OK)
		return arc == ARGON2_MEMORY_ALLOCATION_ERROR ? LUMEN_ENOMEM : LUMEN_EIO;
	return password_write_value(sc, body, strlen(body), out, out_size);
}

/* -------------------------------------------------------------- CRYPT */

#define CRYPT_MIN_SEED 16
#define CRYPT_MAX_SEED 64

/*
 * crypt(3) of password[0..len) under setting, into out (NUL-terminated).
 * crypt's 32 KiB state lives on the heap (too big for a worker's stack, and
 * zeroed as crypt_rn wants); it and the passphrase copy are wiped before
 * returning. The caller checked len < CRYPT_MAX_PASSPHRASE_SIZE and that
 * the password holds no NUL. LUMEN_ENOMEM; LUMEN_EINVAL when crypt refuses
 * the setting.
 */
static int run_crypt(const void *password, size_t len, const char *setting,
		     char out[CRYPT_OUTPUT_SIZE])
{
	char phrase[CRYPT_MAX_PASSPHRASE_SIZE];
	struct crypt_data *data = calloc(1, sizeof(*data));
	if (data == NULL)
		return LUMEN_ENOMEM;
	memcpy(phrase, password, len);
	phrase[len] = '\0';
	const char *result = crypt_rn(phrase, setting, data, (int)sizeof(*data));
	int rc = result == NULL || result[0] == '*' ? LUMEN_EINVAL : LUMEN_OK;
	if (rc == LUMEN_OK) {
		size_t n = strnlen(result, CRYPT_OUTPUT_SIZE - 1);
		memcpy(out, result, n);
		out[n] = '\0';
	}
	OPENSSL_cleanse(data, sizeof(*data));
	free(data);
	OPENSSL_cleanse(phrase, sizeof(phrase));
	return rc;
}

int password_crypt_check(const struct password_scheme *sc, const char *encoded,
			 size_t encoded_len, const void *given, size_t given_len, bool *match)
{
	char setting[CRYPT_OUTPUT_SIZE], hashed[CRYPT_OUTPUT_SIZE];

	(void)sc;
	if (encoded_len == 0 || encoded_len >= sizeof(setting) ||
	    memchr(encoded, '\0', encoded_len) != NULL)
		return LUMEN_EMALFORMED;
	/* crypt(3) stops at NUL and caps the length: such a password can
	 * never have been hashed, so it matches nothing. */
	if (given_len >= CRYPT_MAX_PASSPHRASE_SIZE || memchr(given, '\0', given_len) != NULL)
		return LUMEN_OK;
	memcpy(setting, encoded, encoded_len);
	setting[encoded_len] = '\0';
	int rc = run_crypt(given, given_len, setting, hashed);
	if (rc != LUMEN_OK)
		return rc == LUMEN_ENOMEM ? rc : LUMEN_EMALFORMED;
	*match = strlen(hashed) == encoded_len &&
		 CRYPTO_memcmp(hashed, encoded, encoded_len) == 0;
	return LUMEN_OK;
}

int password_crypt_hash(const struct password_scheme *sc, const void *password, size_t len,
			const void *salt, size_t salt_len, char *out, size_t out_size)
{
	char setting[CRYPT_GENSALT_OUTPUT_SIZE], hashed[CRYPT_OUTPUT_SIZE];

	if (salt_len < CRYPT_MIN_SEED || salt_len > CRYPT_MAX_SEED ||
	    len >= CRYPT_MAX_PASSPHRASE_SIZE)
		return LUMEN_ELIMIT;
	if (memchr(password, '\0', len) != NULL)
		return LUMEN_EINVAL;
	if (crypt_gensalt_rn("$6$", 0, salt, (int)salt_len, setting, sizeof(setting)) == NULL)
		return LUMEN_EIO;
	int rc = run_crypt(password, len, setting, hashed);
	if (rc != LUMEN_OK)
		return rc == LUMEN_ENOMEM ? rc : LUMEN_EIO;
	return password_write_value(sc, hashed, strlen(hashed), out, out_size);
}
