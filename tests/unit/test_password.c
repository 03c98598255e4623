/*
 * test_password.c — password schemes: known vectors for every scheme
 * (digests from openssl dgst, PBKDF2 from Python's hashlib, ARGON2 and
 * CRYPT from OpenLDAP's slappasswd and the SHA-crypt specification),
 * mismatches, malformed stored values, bounded work factors, unknown
 * schemes, hashing round trips.
 */
#include <check.h>
#include <pthread.h>
#include <string.h>
#include <strings.h>

#include "lumen_error.h"
#include "password.h"

#define PBKDF2_SHA512_BODY \
	"10000$AAECAwQFBgcICQoLDA0ODw$s1qOkFay1DbcR0sablkjBgtOqf1IcoQVkkK1uzR9LdXA0A7SkKhkz0j9Li48.pDMKueSh3UUQNkgDDksLeAu.Q"
#define PBKDF2_SHA512_SECRET "{PBKDF2-SHA512}" PBKDF2_SHA512_BODY
#define ARGON2I_SECRET \
	"{ARGON2}$argon2i$v=19$m=4096,t=3,p=1$H87crapYAm6iREhhaQa2NQ$fE6aD0ZQZ32bvAKxlhXx7679mRsAHL/6ZPz/cJJDhqY"
#define CRYPT_SPEC_VECTOR \
	"{CRYPT}$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1"

struct check_case {
	const char *name;
	const char *stored;
	const char *given;
	int rc;
	bool match;
};

/* Vectors computed independently with: printf 'secret' | openssl dgst ... */
static const struct check_case cases[] = {
	{ "cleartext match", "secret", "secret", LUMEN_OK, true },
	{ "cleartext mismatch", "secret", "Secret", LUMEN_OK, false },
	{ "cleartext prefix", "secret", "secre", LUMEN_OK, false },
	{ "cleartext longer", "secret", "secret1", LUMEN_OK, false },
	{ "cleartext empty given", "secret", "", LUMEN_OK, false },
	{ "SHA match", "{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ=", "secret", LUMEN_OK, true },
	{ "SHA lower-case scheme", "{sha}5en6G6MezRroT3XKqkdPOmY/BfQ=", "secret", LUMEN_OK, true },
	{ "SHA mismatch", "{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ=", "secreT", LUMEN_OK, false },
	{ "SHA256 match", "{SHA256}K7gNU3sdo+OL0wNhqoVWhr3g6s1xYv72ol/pe/Unols=", "secret",
	  LUMEN_OK, true },
	{ "SHA512 match",
	  "{SHA512}vSsar3708Jvp9Szi2NWZZ02Bqp1qRCFpbcTZPdBhnWgs5WtNZKnvCXdhztmeD2cmW192CF5bDufKRpayrW/isg==",
	  "secret", LUMEN_OK, true },
	/* salt "salty": sha1("secret" + "salty") + "salty" */
	{ "SSHA match", "{SSHA}UgCJjM+VJJYduihDuk0aPpDtY9RzYWx0eQ==", "secret", LUMEN_OK, true },
	{ "SSHA mismatch", "{SSHA}UgCJjM+VJJYduihDuk0aPpDtY9RzYWx0eQ==", "secret ", LUMEN_OK,
	  false },
	{ "SSHA other salt", "{SSHA}eF6eKXnDYIQc+iK1nsyqemOkKJVzYWx0eXNh", "secret", LUMEN_OK,
	  false },
	{ "SSHA bad base64", "{SSHA}not*base64", "secret", LUMEN_EMALFORMED, false },
	{ "SSHA without salt", "{SSHA}5en6G6MezRroT3XKqkdPOmY/BfQ=", "secret", LUMEN_EMALFORMED,
	  false },
	{ "SHA wrong length", "{SHA}c2VjcmV0", "secret", LUMEN_EMALFORMED, false },
	{ "unknown scheme", "{MD5}Xr4ilOzQ4PCOq3aQ0qbuaQ==", "secret", LUMEN_EUNSUPPORTED, false },
	{ "empty scheme", "{}abc", "secret", LUMEN_EUNSUPPORTED, false },
	{ "brace without close is cleartext", "{secret", "{secret", LUMEN_OK, true },
	/* slappasswd -o module-load=pw-sha2 -h '{SSHA512}' -s secret */
	{ "SSHA512 from slappasswd",
	  "{SSHA512}fu2DGPlr82bCLAGrqe8zGE3SPXmkdk6oY39ol/D7TSWNOZeRaFphjCzEp0n1FySYYkvleZqqwnZDtRnoFEpLZhJ4qKON0L+Q",
	  "secret", LUMEN_OK, true },
	{ "SSHA256 from slappasswd",
	  "{SSHA256}SH3SwwZ/wwtUvdRic17dd59n/+3ftKnr3GEB5By0lNCu1H/zzsL19w==", "secret", LUMEN_OK,
	  true },
	/* hashlib.pbkdf2_hmac, salt = bytes(range(16)), adapted base64 */
	{ "PBKDF2-SHA512 match", PBKDF2_SHA512_SECRET, "secret", LUMEN_OK, true },
	{ "PBKDF2-SHA512 mismatch", PBKDF2_SHA512_SECRET, "Secret", LUMEN_OK, false },
	{ "PBKDF2 scheme lower-case", "{pbkdf2-sha512}" PBKDF2_SHA512_BODY, "secret", LUMEN_OK,
	  true },
	{ "PBKDF2 (SHA-1) match", "{PBKDF2}1000$c2FsdHNhbHRzYWx0c2FsdA$Gl3hdYiKRqzegI7vLGvFG.A89N0",
	  "secret", LUMEN_OK, true },
	{ "PBKDF2-SHA1 same form", "{PBKDF2-SHA1}1000$c2FsdHNhbHRzYWx0c2FsdA$Gl3hdYiKRqzegI7vLGvFG.A89N0",
	  "secret", LUMEN_OK, true },
	{ "PBKDF2-SHA256 with dots in salt",
	  "{PBKDF2-SHA256}2000$.//..//..//..//..//.$FWb8nesRfyEl7.VR7Qcv4twcN762zG3QG4WI9nEvk98",
	  "secret", LUMEN_OK, true },
	{ "PBKDF2 no iterations", "{PBKDF2}$c2FsdA$Gl3hdYiKRqzegI7vLGvFG.A89N0", "secret",
	  LUMEN_EMALFORMED, false },
	{ "PBKDF2 zero iterations", "{PBKDF2}0$c2FsdA$Gl3hdYiKRqzegI7vLGvFG.A89N0", "secret",
	  LUMEN_EMALFORMED, false },
	{ "PBKDF2 iterations not digits", "{PBKDF2}10x$c2FsdA$Gl3hdYiKRqzegI7vLGvFG.A89N0",
	  "secret", LUMEN_EMALFORMED, false },
	{ "PBKDF2 iterations beyond bound", "{PBKDF2}99999999$c2FsdA$Gl3hdYiKRqzegI7vLGvFG.A89N0",
	  "secret", LUMEN_ELIMIT, false },
	{ "PBKDF2 iterations absurdly long", "{PBKDF2}1000000000000$c2FsdA$Gl3hdYiKRqzegI7vLGvFG.A89N0",
	  "secret", LUMEN_ELIMIT, false },
	{ "PBKDF2 missing hash", "{PBKDF2}1000$c2FsdHNhbHRzYWx0c2FsdA", "secret",
	  LUMEN_EMALFORMED, false },
	{ "PBKDF2 empty salt", "{PBKDF2}1000$$Gl3hdYiKRqzegI7vLGvFG.A89N0", "secret",
	  LUMEN_EMALFORMED, false },
	{ "PBKDF2 bad base64", "{PBKDF2}1000$c2F*dA$Gl3hdYiKRqzegI7vLGvFG.A89N0", "secret",
	  LUMEN_EMALFORMED, false },
	{ "PBKDF2 impossible base64 length", "{PBKDF2}1000$c2FsdHNhb$Gl3hdYiKRqzegI7vLGvFG.A89N0",
	  "secret", LUMEN_EMALFORMED, false },
	{ "PBKDF2-SHA512 with a SHA-1 sized hash",
	  "{PBKDF2-SHA512}1000$c2FsdHNhbHRzYWx0c2FsdA$Gl3hdYiKRqzegI7vLGvFG.A89N0", "secret",
	  LUMEN_EMALFORMED, false },
	/* slappasswd -o module-load=argon2 -h '{ARGON2}' -s secret (argon2i) */
	{ "ARGON2 (argon2i) from slappasswd", ARGON2I_SECRET, "secret", LUMEN_OK, true },
	{ "ARGON2 mismatch", ARGON2I_SECRET, "secreT", LUMEN_OK, false },
	{ "ARGON2 unknown variant", "{ARGON2}$argon2x$v=19$m=4096,t=3,p=1$c2FsdHNhbHQ$aGFzaA",
	  "secret", LUMEN_EMALFORMED, false },
	{ "ARGON2 no parameters", "{ARGON2}$argon2id$v=19$c2FsdHNhbHQ$aGFzaA", "secret",
	  LUMEN_EMALFORMED, false },
	{ "ARGON2 memory beyond bound",
	  "{ARGON2}$argon2id$v=19$m=4194304,t=3,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA",
	  "secret", LUMEN_ELIMIT, false },
	{ "ARGON2 passes beyond bound",
	  "{ARGON2}$argon2id$v=19$m=4096,t=1000,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA",
	  "secret", LUMEN_ELIMIT, false },
	{ "ARGON2 bad salt base64",
	  "{ARGON2}$argon2id$v=19$m=4096,t=3,p=1$c2F*dHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA", "secret",
	  LUMEN_EMALFORMED, false },
	{ "ARGON2 garbage", "{ARGON2}garbage", "secret", LUMEN_EMALFORMED, false },
	/* the SHA-crypt specification's first test vector */
	{ "CRYPT $6$ spec vector", CRYPT_SPEC_VECTOR, "Hello world!", LUMEN_OK, true },
	{ "CRYPT mismatch", CRYPT_SPEC_VECTOR, "Hello world?", LUMEN_OK, false },
	{ "CRYPT lower-case scheme", "{crypt}$6$nWFNQZTOsjUoQIgj$pr7a.5aZXwOi8tH3bLsOkJnuEFzlNZmJdc4tB3vzn0U6kjUY43rs.DPvgcbW/tssp88NO1PNEXA4TXvG0xqlV1",
	  "secret", LUMEN_OK, true },
	{ "CRYPT empty", "{CRYPT}", "secret", LUMEN_EMALFORMED, false },
	{ "CRYPT unknown method", "{CRYPT}$99$abc$def", "secret", LUMEN_EMALFORMED, false },
	{ "CRYPT locked account", "{CRYPT}!$6$saltstring$x", "secret", LUMEN_EMALFORMED, false },
};

START_TEST(test_check)
{
	const struct check_case *t = &cases[_i];
	bool match = !t->match;
	int rc = password_check(t->stored, strlen(t->stored), t->given, strlen(t->given), &match);
	ck_assert_msg(rc == t->rc, "%s: rc %d", t->name, rc);
	ck_assert_msg(match == t->match, "%s: match %d", t->name, match);
}
END_TEST

static const char *const schemes[] = { "SHA", "SHA256", "SHA512", "SSHA", "SSHA256",
				       "ssha512", "{SSHA512}", "PBKDF2", "PBKDF2-SHA1",
				       "PBKDF2-SHA256", "{PBKDF2-SHA512}", "ARGON2", "{CRYPT}" };

START_TEST(test_hash_round_trip)
{
	char out[PASSWORD_HASH_MAX];
	bool match = false;
	ck_assert_int_eq(password_hash(schemes[_i], "pa55 word", 9, out, sizeof(out)), LUMEN_OK);
	ck_assert(out[0] == '{');
	ck_assert_int_eq(password_check(out, strlen(out), "pa55 word", 9, &match), LUMEN_OK);
	ck_assert(match);
	ck_assert_int_eq(password_check(out, strlen(out), "pa55 worD", 9, &match), LUMEN_OK);
	ck_assert(!match);
	ck_assert_int_eq(password_check(out, strlen(out), "pa55 wor", 8, &match), LUMEN_OK);
	ck_assert(!match);
	/* the value names its scheme, whatever spelling was asked for */
	const char *name = schemes[_i][0] == '{' ? schemes[_i] + 1 : schemes[_i];
	ck_assert_int_eq(strncasecmp(out + 1, name, strcspn(name, "}")), 0);
}
END_TEST

/* Formats other implementations read: byte-exact for a known salt. */
START_TEST(test_interop_formats)
{
	char out[PASSWORD_HASH_MAX], again[PASSWORD_HASH_MAX];
	unsigned char salt[16];
	bool match = false;
	for (size_t i = 0; i < sizeof(salt); i++)
		salt[i] = (unsigned char)i;
	ck_assert_int_eq(password_hash_with_salt("PBKDF2-SHA512", "secret", 6, salt, 16, out,
						 sizeof(out)), LUMEN_OK);
	ck_assert_str_eq(out, PBKDF2_SHA512_SECRET);
	ck_assert_int_eq(password_hash_with_salt("ARGON2", "secret", 6, salt, 16, out,
						 sizeof(out)), LUMEN_OK);
	static const char argon2_prefix[] =
		"{ARGON2}$argon2id$v=19$m=4096,t=3,p=1$AAECAwQFBgcICQoLDA0ODw$";
	ck_assert_msg(strncmp(out, argon2_prefix, strlen(argon2_prefix)) == 0, "%s", out);
	ck_assert_int_eq(password_check(out, strlen(out), "secret", 6, &match), LUMEN_OK);
	ck_assert(match);
	ck_assert_int_eq(password_hash_with_salt("CRYPT", "secret", 6, salt, 16, out,
						 sizeof(out)), LUMEN_OK);
	ck_assert_int_eq(password_hash_with_salt("CRYPT", "secret", 6, salt, 16, again,
						 sizeof(again)), LUMEN_OK);
	ck_assert_str_eq(out, again);
	ck_assert_msg(strncmp(out, "{CRYPT}$6$", 10) == 0, "%s", out);
}
END_TEST

/* A NUL in the presented password can never match a crypt(3) value. */
START_TEST(test_crypt_nul_in_password)
{
	char out[PASSWORD_HASH_MAX];
	bool match = true;
	ck_assert_int_eq(password_hash("CRYPT", "ab", 2, out, sizeof(out)), LUMEN_OK);
	ck_assert_int_eq(password_check(out, strlen(out), "ab\0c", 4, &match), LUMEN_OK);
	ck_assert(!match);
	ck_assert_int_eq(password_hash("CRYPT", "ab\0c", 4, out, sizeof(out)), LUMEN_EINVAL);
}
END_TEST

START_TEST(test_scheme_known)
{
	ck_assert(password_scheme_known("SSHA512"));
	ck_assert(password_scheme_known("{argon2}"));
	ck_assert(password_scheme_known("pbkdf2-sha256"));
	ck_assert(!password_scheme_known("MD5"));
	ck_assert(!password_scheme_known("{SSHA"));
	ck_assert(!password_scheme_known(""));
	ck_assert(password_scheme_known(PASSWORD_DEFAULT_SCHEME));
}
END_TEST

START_TEST(test_salted_hashes_differ)
{
	char a[PASSWORD_HASH_MAX], b[PASSWORD_HASH_MAX];
	ck_assert_int_eq(password_hash("SSHA", "x", 1, a, sizeof(a)), LUMEN_OK);
	ck_assert_int_eq(password_hash("SSHA", "x", 1, b, sizeof(b)), LUMEN_OK);
	ck_assert_str_ne(a, b);
}
END_TEST

/*
 * Each thread keeps one digest context from check to check: checks that
 * alternate algorithms on one thread, on several threads at once, each
 * get their own algorithm's answer.
 */
static void *alternate_digests(void *arg)
{
	(void)arg;
	static const char *const names[] = { "SSHA", "SSHA512", "SHA256", "SSHA256" };
	char stored[4][256];
	for (size_t i = 0; i < 4; i++)
		if (password_hash(names[i], "right", 5, stored[i], sizeof(stored[i])) != LUMEN_OK)
			return "hash failed";
	for (int round = 0; round < 200; round++) {
		for (size_t i = 0; i < 4; i++) {
			bool right = false, wrong = true;
			if (password_check(stored[i], strlen(stored[i]), "right", 5, &right) != LUMEN_OK ||
			    password_check(stored[i], strlen(stored[i]), "wrong", 5, &wrong) != LUMEN_OK)
				return "check failed";
			if (!right || wrong)
				return "wrong answer";
		}
	}
	return NULL;
}

START_TEST(test_digest_context_per_thread)
{
	pthread_t threads[4];
	for (size_t i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&threads[i], NULL, alternate_digests, NULL), 0);
	for (size_t i = 0; i < 4; i++) {
		void *why = NULL;
		ck_assert_int_eq(pthread_join(threads[i], &why), 0);
		ck_assert_msg(why == NULL, "%s", (const char *)why);
	}
	ck_assert_ptr_null(alternate_digests(NULL));
}
END_TEST

START_TEST(test_known_salt)
{
	char out[PASSWORD_HASH_MAX];
	bool match = false;
	ck_assert_int_eq(password_hash_with_salt("SSHA", "secret", 6, "salty", 5, out, sizeof(out)),
			 LUMEN_OK);
	ck_assert_int_eq(password_check(out, strlen(out), "secret", 6, &match), LUMEN_OK);
	ck_assert(match);
	ck_assert_int_eq(password_hash_with_salt("SHA", "secret", 6, "ignored", 7, out, sizeof(out)),
			 LUMEN_OK);
	ck_assert_str_eq(out, "{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ=");
}
END_TEST

START_TEST(test_hash_errors)
{
	char out[PASSWORD_HASH_MAX];
	ck_assert_int_eq(password_hash("MD5", "x", 1, out, sizeof(out)), LUMEN_EUNSUPPORTED);
	ck_assert_int_eq(password_hash("SSHA512", "x", 1, out, 20), LUMEN_ELIMIT);
	char big_salt[200] = { 0 };
	ck_assert_int_eq(password_hash_with_salt("SSHA512", "x", 1, big_salt, sizeof(big_salt),
						 out, sizeof(out)), LUMEN_ELIMIT);
	ck_assert_int_eq(password_hash_with_salt("PBKDF2", "x", 1, big_salt, 0, out, sizeof(out)),
			 LUMEN_ELIMIT);
	ck_assert_int_eq(password_hash_with_salt("PBKDF2", "x", 1, big_salt, 65, out, sizeof(out)),
			 LUMEN_ELIMIT);
	ck_assert_int_eq(password_hash_with_salt("ARGON2", "x", 1, big_salt, 4, out, sizeof(out)),
			 LUMEN_ELIMIT);
	ck_assert_int_eq(password_hash_with_salt("CRYPT", "x", 1, big_salt, 8, out, sizeof(out)),
			 LUMEN_ELIMIT);
	ck_assert_int_eq(password_hash("PBKDF2-SHA512", "x", 1, out, 40), LUMEN_ELIMIT);
	ck_assert_int_eq(password_hash("ARGON2", "x", 1, out, 40), LUMEN_ELIMIT);
	ck_assert_int_eq(password_hash("CRYPT", "x", 1, out, 40), LUMEN_ELIMIT);
	ck_assert_int_eq(password_hash("{}", "x", 1, out, sizeof(out)), LUMEN_EUNSUPPORTED);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("password");
	TCase *tc = tcase_create("password");
	tcase_add_loop_test(tc, test_check, 0, sizeof(cases) / sizeof(cases[0]));
	tcase_add_loop_test(tc, test_hash_round_trip, 0, sizeof(schemes) / sizeof(schemes[0]));
	tcase_add_test(tc, test_salted_hashes_differ);
	tcase_add_test(tc, test_known_salt);
	tcase_add_test(tc, test_digest_context_per_thread);
	tcase_add_test(tc, test_hash_errors);
	tcase_add_test(tc, test_interop_formats);
	tcase_add_test(tc, test_crypt_nul_in_password);
	tcase_add_test(tc, test_scheme_known);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
