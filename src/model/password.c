/*
 * password.c — password schemes: the dispatch table, cleartext and the
 * {SHA*}/{SSHA*} digest family. The key-derivation schemes live in
 * password_kdf.c.
 */
#include "password.h"

#include <pthread.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "base64.h"
#include "lumen_error.h"
#include "password_private.h"

static PASSWORD_CHECK(digest_check);
static PASSWORD_HASH(digest_hash);

/* Adding a scheme is adding a row. */
static const struct password_scheme schemes[] = {
	{ "SHA", digest_check, digest_hash, 0, "SHA1", 20 },
	{ "SHA256", digest_check, digest_hash, 0, "SHA256", 32 },
	{ "SHA512", digest_check, digest_hash, 0, "SHA512", 64 },
	{ "SSHA", digest_check, digest_hash, PASSWORD_SALT_LENGTH, "SHA1", 20 },
	{ "SSHA256", digest_check, digest_hash, PASSWORD_SALT_LENGTH, "SHA256", 32 },
	{ "SSHA512", digest_check, digest_hash, PASSWORD_SALT_LENGTH, "SHA512", 64 },
	{ "PBKDF2", password_pbkdf2_check, password_pbkdf2_hash, 16, "SHA1", 20 },
	{ "PBKDF2-SHA1", password_pbkdf2_check, password_pbkdf2_hash, 16, "SHA1", 20 },
	{ "PBKDF2-SHA256", password_pbkdf2_check, password_pbkdf2_hash, 16, "SHA256", 32 },
	{ "PBKDF2-SHA512", password_pbkdf2_check, password_pbkdf2_hash, 16, "SHA512", 64 },
	{ "ARGON2", password_argon2_check, password_argon2_hash, 16, NULL, 32 },
	{ "CRYPT", password_crypt_check, password_crypt_hash, 16, NULL, 0 },
};

/* Longest base64 value of the digest family we accept: digest + a generous salt. */
#define PASSWORD_MAX_DECODED (64 + 64)

static const struct password_scheme *find_scheme(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++)
		if (strlen(schemes[i].name) == len && strncasecmp(name, schemes[i].name, len) == 0)
			return &schemes[i];
	return NULL;
}

/* Accepts "NAME" and "{NAME}", as operators write both. */
static const struct password_scheme *find_scheme_text(const char *text)
{
	size_t len = strlen(text);
	if (len >= 2 && text[0] == '{' && text[len - 1] == '}')
		return find_scheme(text + 1, len - 2);
	return find_scheme(text, len);
}

/*
 * The digests of this file, fetched once. OpenSSL 3 fetches a digest got
 * by name again on every EVP_DigestInit_ex, through a lock all threads
 * share: once per Bind. Kept for the life of the process.
 */
static struct fetched_digest {
	const char *name;
	EVP_MD *md;
} fetched[] = { { "SHA1", NULL }, { "SHA256", NULL }, { "SHA512", NULL } };
static pthread_once_t fetch_once = PTHREAD_ONCE_INIT;

/*
 * Each thread's digest context, kept from one check to the next: a fresh
 * context per digest (allocated, bound to the algorithm, freed) cost a
 * third of a {SSHA} Bind's check, where a kept one bound to the same
 * algorithm only resets. Freed by the key's destructor as its thread ends.
 */
static pthread_key_t context_key;
static bool context_key_made;

static void free_context(void *ctx)
{
	EVP_MD_CTX_free(ctx);
}

static void fetch_digests(void)
{
	for (size_t i = 0; i < sizeof(fetched) / sizeof(fetched[0]); i++)
		fetched[i].md = EVP_MD_fetch(NULL, fetched[i].name, NULL);
	context_key_made = pthread_key_create(&context_key, free_context) == 0;
}

/* The calling thread's context; NULL when none can be had. */
static EVP_MD_CTX *thread_context(void)
{
	pthread_once(&fetch_once, fetch_digests);
	if (!context_key_made)
		return NULL;
	EVP_MD_CTX *ctx = pthread_getspecific(context_key);
	if (ctx != NULL)
		return ctx;
	ctx = EVP_MD_CTX_new();
	if (ctx != NULL && pthread_setspecific(context_key, ctx) != 0) {
		EVP_MD_CTX_free(ctx);
		ctx = NULL;
	}
	return ctx;
}

static const EVP_MD *digest_named(const char *name)
{
	pthread_once(&fetch_once, fetch_digests);
	for (size_t i = 0; i < sizeof(fetched) / sizeof(fetched[0]); i++)
		if (fetched[i].md != NULL && strcmp(fetched[i].name, name) == 0)
			return fetched[i].md;
	return EVP_get_digestbyname(name);
}

/* digest(part1 + part2) into out (EVP_MAX_MD_SIZE bytes). */
static int digest_two(const char *digest, const void *part1, size_t len1,
		      const void *part2, size_t len2, unsigned char *out)
{
	EVP_MD_CTX *ctx = thread_context();
	const EVP_MD *md = digest_named(digest);
	if (ctx == NULL || md == NULL)
		return LUMEN_EIO;
	if (EVP_DigestInit_ex(ctx, md, NULL) != 1 ||
	    EVP_DigestUpdate(ctx, part1, len1) != 1 ||
	    (len2 > 0 && EVP_DigestUpdate(ctx, part2, len2) != 1) ||
	    EVP_DigestFinal_ex(ctx, out, NULL) != 1) {
		/* A final digest leaves no input in the context; a failed
		 * one may, so it is cleared before the thread's next use. */
		EVP_MD_CTX_reset(ctx);
		return LUMEN_EIO;
	}
	return LUMEN_OK;
}

/* Cleartext: compare SHA-256 digests so timing reveals neither contents
 * nor lengths. */
static int check_cleartext(const char *stored, size_t stored_len, const void *given,
			   size_t given_len, bool *match)
{
	unsigned char a[EVP_MAX_MD_SIZE], b[EVP_MAX_MD_SIZE];
	int rc = digest_two("SHA256", stored, stored_len, NULL, 0, a);
	if (rc == LUMEN_OK)
		rc = digest_two("SHA256", given, given_len, NULL, 0, b);
	if (rc == LUMEN_OK)
		*match = CRYPTO_memcmp(a, b, 32) == 0 && stored_len == given_len;
	return rc;
}

static int digest_check(const struct password_scheme *sc, const char *encoded,
			size_t encoded_len, const void *given, size_t given_len, bool *match)
{
	uint8_t decoded[PASSWORD_MAX_DECODED];
	unsigned char computed[EVP_MAX_MD_SIZE];
	size_t decoded_len = 0;
	bool salted = sc->salt_length > 0;

	if (base64_decoded_max(encoded_len) > sizeof(decoded) ||
	    base64_decode(encoded, encoded_len, decoded, &decoded_len) != LUMEN_OK)
		return LUMEN_EMALFORMED;
	if (salted ? decoded_len <= sc->digest_len : decoded_len != sc->digest_len)
		return LUMEN_EMALFORMED;
	int rc = digest_two(sc->digest, given, given_len, decoded + sc->digest_len,
			    decoded_len - sc->digest_len, computed);
	if (rc == LUMEN_OK)
		*match = CRYPTO_memcmp(computed, decoded, sc->digest_len) == 0;
	OPENSSL_cleanse(computed, sizeof(computed));
	return rc;
}

int password_write_value(const struct password_scheme *sc, const char *body,
			 size_t body_len, char *out, size_t out_size)
{
	size_t name_len = strlen(sc->name);
	if (out_size < name_len + 2 + body_len + 1)
		return LUMEN_ELIMIT;
	out[0] = '{';
	memcpy(out + 1, sc->name, name_len);
	out[name_len + 1] = '}';
	memcpy(out + name_len + 2, body, body_len);
	out[name_len + 2 + body_len] = '\0';
	return LUMEN_OK;
}

static int digest_hash(const struct password_scheme *sc, const void *password, size_t len,
		       const void *salt, size_t salt_len, char *out, size_t out_size)
{
	uint8_t raw[EVP_MAX_MD_SIZE + PASSWORD_MAX_DECODED];
	char body[base64_encoded_length(sizeof(raw))];

	if (sc->salt_length == 0)
		salt_len = 0;
	if (salt_len > PASSWORD_MAX_DECODED - sc->digest_len)
		return LUMEN_ELIMIT;
	int rc = digest_two(sc->digest, password, len, salt, salt_len, raw);
	if (rc != LUMEN_OK)
		return rc;
	if (salt_len > 0)
		memcpy(raw + sc->digest_len, salt, salt_len);
	size_t raw_len = sc->digest_len + salt_len;
	base64_encode(raw, raw_len, body);
	return password_write_value(sc, body, base64_encoded_length(raw_len), out, out_size);
}

int password_check(const char *stored, size_t stored_len, const void *given,
		   size_t given_len, bool *match)
{
	*match = false;
	const char *close = stored_len > 0 && stored[0] == '{'
				    ? memchr(stored, '}', stored_len) : NULL;
	if (close == NULL)
		return check_cleartext(stored, stored_len, given, given_len, match);
	const struct password_scheme *sc = find_scheme(stored + 1, (size_t)(close - stored - 1));
	if (sc == NULL)
		return LUMEN_EUNSUPPORTED;
	size_t prefix = (size_t)(close - stored) + 1;
	int rc = sc->check(sc, stored + prefix, stored_len - prefix, given, given_len, match);
	if (rc != LUMEN_OK)
		*match = false;
	return rc;
}

int password_hash_with_salt(const char *scheme, const void *password, size_t len,
			    const void *salt, size_t salt_len, char *out, size_t out_size)
{
	const struct password_scheme *sc = find_scheme_text(scheme);
	if (sc == NULL)
		return LUMEN_EUNSUPPORTED;
	return sc->hash(sc, password, len, salt, salt_len, out, out_size);
}

int password_hash(const char *scheme, const void *password, size_t len,
		  char *out, size_t out_size)
{
	unsigned char salt[64];
	const struct password_scheme *sc = find_scheme_text(scheme);
	if (sc == NULL)
		return LUMEN_EUNSUPPORTED;
	if (sc->salt_length > 0 && RAND_bytes(salt, (int)sc->salt_length) != 1)
		return LUMEN_EIO;
	int rc = sc->hash(sc, password, len, salt, sc->salt_length, out, out_size);
	OPENSSL_cleanse(salt, sizeof(salt));
	return rc;
}

bool password_scheme_known(const char *scheme)
{
	return find_scheme_text(scheme) != NULL;
}
