/*
 * test_password.c — password schemes: known vectors for every scheme,
 * mismatches, malformed stored values, unknown schemes, hashing round trips.
 */
#include <check.h>
#include <string.h>

#include "lumen_error.h"
#include "password.h"

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
				       "ssha512" };

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
	tcase_add_test(tc, test_hash_errors);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
