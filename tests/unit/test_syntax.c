/* test_syntax.c — the built-in syntaxes' value validators. */
#include <check.h>
#include <string.h>

#include "lumen_error.h"
#include "schema.h"

#define S(n) "1.3.6.1.4.1.1466.115.121.1." #n

static const struct {
	const char *oid;
	const char *value;
	size_t len;             /* 0: strlen(value) */
	bool valid;
} cases[] = {
	{ S(15), "Babs Jensen", 0, true },
	{ S(15), "Ünïcödé", 0, true },
	{ S(15), "", 0, false },
	{ S(15), "bad\xC3", 0, false },
	{ S(26), "user@example.com", 0, true },
	{ S(26), "ü", 0, false },
	{ S(44), "Hello (World), 1+1=2?", 0, true },
	{ S(44), "at@sign", 0, false },
	{ S(44), "", 0, false },
	{ S(36), "123 456", 0, true },
	{ S(36), "12a", 0, false },
	{ S(50), "+1 512 315 0280", 0, true },
	{ S(50), "", 0, false },
	{ S(11), "DE", 0, true },
	{ S(11), "DEU", 0, false },
	{ S(41), "1234 Main St.$Anytown, CA 12345$USA", 0, true },
	{ S(41), "\\241,000,000 Sweepstakes$PO Box 1000000$Anytown, CA 12345$USA", 0, true },
	{ S(41), "bad \\escape", 0, false },
	{ S(12), "UID=jsmith,DC=example,DC=net", 0, true },
	{ S(12), "CN=Before\\0DAfter,DC=example,DC=net", 0, true },
	{ S(12), "cn=a+sn=b,o=c", 0, true },
	{ S(12), "", 0, true },
	{ S(12), "example.net", 0, false },
	{ S(12), "=x", 0, false },
	{ S(12), "cn=a,o", 0, false },
	{ S(34), "1.3.6.1.4.1.1466.0=#04024869,O=Test,C=GB#'0101'B", 0, true },
	{ S(34), "cn=a#'0121'B", 0, false },
	{ S(38), "1.2.3.4", 0, true },
	{ S(38), "cn", 0, true },
	{ S(38), "1.2.", 0, false },
	{ S(38), "1", 0, false },
	{ S(38), "01.2", 0, false },
	{ S(27), "0", 0, true },
	{ S(27), "-123", 0, true },
	{ S(27), "123456789012345678901234567890", 0, true },
	{ S(27), "-0", 0, false },
	{ S(27), "007", 0, false },
	{ S(27), "1.5", 0, false },
	{ S(27), "", 0, false },
	{ S(7), "TRUE", 0, true },
	{ S(7), "FALSE", 0, true },
	{ S(7), "True", 0, false },
	{ S(24), "199412161032Z", 0, true },
	{ S(24), "199412160532-0500", 0, true },
	{ S(24), "20230102030405.5Z", 0, true },
	{ S(24), "20230230000000Z", 0, false },
	{ S(24), "2023010203", 0, false },
	{ S(53), "9412161032Z", 0, true },
	{ S(53), "941216103245+0100", 0, true },
	{ S(53), "9413161032Z", 0, false },
	{ S(53), "9412161032", 0, false },
	{ S(6), "'0101111101'B", 0, true },
	{ S(6), "'012'B", 0, false },
	{ S(6), "0101", 0, false },
	{ S(40), "\x00\x01\xFF", 3, true },
	{ S(28), "\xFF\xD8\xFF\xE0", 4, true },
	/* any bytes, as OpenLDAP stores them (PNGs and GIFs live in jpegPhoto) */
	{ S(28), "GIF89a", 0, true },
	{ S(28), "\x89PNG\r\n\x1a\n", 0, true },
	{ S(8), "\x30\x03\x02\x01\x01", 5, true },
	{ S(8), "\x30\x04\x02\x01\x01", 5, false },
	{ S(8), "\x31\x03\x02\x01\x01", 5, false },
	{ S(8), "\x30\x81\x03\x02\x01\x01", 6, false },   /* long form for a short length */
	{ S(3), "( 2.5.4.3 NAME 'cn' SUP name )", 0, true },
	{ S(3), "2.5.4.3 NAME 'cn'", 0, false },
	{ S(58), "foo*bar", 0, true },
	{ "1.3.6.1.1.16.1", "f81d4fae-7dec-11d0-a765-00a0c91e6bf6", 0, true },
	{ "1.3.6.1.1.16.1", "f81d4fae7dec11d0a76500a0c91e6bf6", 0, false },
	{ "1.3.6.1.4.1.4203.666.11.2.1", "20230102030405.123456Z#000000#000#000000", 0, true },
	{ "1.3.6.1.4.1.4203.666.11.2.1", "garbage#0#0#0000000000", 0, false },
};

START_TEST(validate)
{
	const struct syntax *syn = syntax_find(cases[_i].oid, strlen(cases[_i].oid));
	size_t len = cases[_i].len ? cases[_i].len : strlen(cases[_i].value);
	ck_assert_msg(syn != NULL, "syntax %s", cases[_i].oid);
	int rc = syn->validate((const uint8_t *)cases[_i].value, len);
	ck_assert_msg(rc == (cases[_i].valid ? LUMEN_OK : LUMEN_EMALFORMED),
		      "%s \"%s\": rc %d", syn->description, cases[_i].value, rc);
}
END_TEST

START_TEST(table)
{
	size_t n = 0;
	for (const struct syntax *syn; (syn = syntax_at(n)) != NULL; n++) {
		ck_assert(syn->validate != NULL && syn->description != NULL);
		ck_assert(syntax_find(syn->oid, strlen(syn->oid)) == syn);
	}
	ck_assert_uint_ge(n, 40);
	ck_assert(syntax_find("1.2.3", 5) == NULL);
	ck_assert(syntax_find(S(1), strlen(S(1))) == NULL);
	/* a prefix of a known OID is not that OID */
	ck_assert(syntax_find(S(15), strlen(S(15)) - 1) != syntax_find(S(15), strlen(S(15))));
	ck_assert(syntax_find(S(28), strlen(S(28)))->binary);
	ck_assert(!syntax_find(S(15), strlen(S(15)))->binary);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("syntax");
	TCase *tc = tcase_create("core");
	tcase_add_loop_test(tc, validate, 0, sizeof(cases) / sizeof(cases[0]));
	tcase_add_test(tc, table);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
