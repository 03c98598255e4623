/*
 * test_sync_cookie.c — CSNs and OpenLDAP's sync cookie (src/model/
 * sync_cookie.c): the forms OpenLDAP's consumer and provider write, round
 * trips, ordering, merging per serverID, and a table of malformed cookies
 * each refused with a reason.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "lumen_error.h"
#include "sync_cookie.h"

#define CSN_A "20261125101500.123456Z#000000#000#000000"
#define CSN_B "20261125101500.123457Z#000000#001#000000"
#define CSN_C "20261125101501.000000Z#00000a#002#000000"

static struct ber_view view(const char *s)
{
	return (struct ber_view){ (const uint8_t *)s, strlen(s) };
}

static void round_trip(const char *text)
{
	struct sync_cookie c;
	const char *why = "unset";
	char out[SYNC_COOKIE_TEXT_MAX];
	size_t len = 0;
	ck_assert_msg(sync_cookie_parse(view(text), &c, &why) == LUMEN_OK, "%s: %s", text, why);
	ck_assert_ptr_null(why);
	ck_assert_int_eq(sync_cookie_format(&c, out, sizeof(out), &len), LUMEN_OK);
	ck_assert_str_eq(out, text);
	ck_assert_uint_eq(len, strlen(text));
}

START_TEST(openldap_forms_round_trip)
{
	round_trip("rid=001,csn=" CSN_A);
	round_trip("rid=123,sid=001,csn=" CSN_A);
	round_trip("rid=000,sid=fff,csn=" CSN_A ";" CSN_B ";" CSN_C);
	round_trip("rid=007");
	round_trip("rid=002,sid=003,csn=" CSN_A ",delcsn=" CSN_B);
}
END_TEST

START_TEST(parts_in_any_order_and_short_numbers)
{
	struct sync_cookie c;
	const char *why;
	ck_assert_int_eq(sync_cookie_parse(view("csn=" CSN_B ";" CSN_A ",sid=A,rid=5"), &c, &why),
			 LUMEN_OK);
	ck_assert_int_eq(c.rid, 5);
	ck_assert_int_eq(c.sid, 10);
	ck_assert_uint_eq(c.n_csns, 2);
	ck_assert_uint_eq(c.csns[0].sid, 0);     /* sorted by serverID */
	ck_assert_uint_eq(c.csns[1].sid, 1);
	ck_assert_ptr_nonnull(sync_cookie_csn_for(&c, 1));
	ck_assert_ptr_null(sync_cookie_csn_for(&c, 2));
	ck_assert_int_eq(sync_cookie_parse(view(""), &c, &why), LUMEN_OK);
	ck_assert_int_eq(c.rid, -1);
	ck_assert_uint_eq(c.n_csns, 0);
}
END_TEST

START_TEST(csn_order_and_case)
{
	struct csn a, b, upper;
	const char *why;
	ck_assert_int_eq(csn_parse(CSN_A, CSN_LENGTH, &a, &why), LUMEN_OK);
	ck_assert_int_eq(csn_parse(CSN_C, CSN_LENGTH, &b, &why), LUMEN_OK);
	ck_assert_int_lt(csn_compare(&a, &b), 0);
	ck_assert_int_gt(csn_compare(&b, &a), 0);
	ck_assert_uint_eq(b.sid, 2);
	ck_assert_int_eq(csn_parse("20261125101501.000000Z#00000A#002#000000", CSN_LENGTH, &upper,
				   &why), LUMEN_OK);
	ck_assert_int_eq(csn_compare(&upper, &b), 0);
	ck_assert_str_eq(upper.text, CSN_C);
}
END_TEST

START_TEST(merge_keeps_the_newest_per_server)
{
	struct sync_cookie c = { .rid = -1, .sid = -1 };
	struct csn old, newer, other;
	const char *why;
	ck_assert_int_eq(csn_parse("20261125101500.000000Z#000000#001#000000", CSN_LENGTH, &old,
				   &why), LUMEN_OK);
	ck_assert_int_eq(csn_parse("20261125101600.000000Z#000000#001#000000", CSN_LENGTH, &newer,
				   &why), LUMEN_OK);
	ck_assert_int_eq(csn_parse(CSN_A, CSN_LENGTH, &other, &why), LUMEN_OK);
	ck_assert_int_eq(sync_cookie_merge_csn(&c, &newer), LUMEN_OK);
	ck_assert_int_eq(sync_cookie_merge_csn(&c, &old), LUMEN_OK);
	ck_assert_int_eq(sync_cookie_merge_csn(&c, &other), LUMEN_OK);
	ck_assert_uint_eq(c.n_csns, 2);
	ck_assert_uint_eq(c.csns[0].sid, 0);
	ck_assert_str_eq(c.csns[1].text, newer.text);
	for (unsigned sid = 2; sid < SYNC_COOKIE_MAX_CSNS; sid++) {
		struct csn x = newer;
		x.sid = sid;
		ck_assert_int_eq(sync_cookie_merge_csn(&c, &x), LUMEN_OK);
	}
	struct csn full = newer;
	full.sid = 0xfff;
	ck_assert_int_eq(sync_cookie_merge_csn(&c, &full), LUMEN_ELIMIT);
}
END_TEST

static const struct {
	const char *text;
	size_t len;      /* 0: strlen */
	const char *why; /* a word of the reason */
} bad[] = {
	{ "rid=1000", 0, "rid" },
	{ "rid=", 0, "rid" },
	{ "rid=12a", 0, "rid" },
	{ "rid=-1", 0, "rid" },
	{ "sid=1000", 0, "sid" },
	{ "sid=g", 0, "sid" },
	{ "rid=001,rid=002", 0, "twice" },
	{ "rid=001,", 0, "expected rid=" },
	{ ",rid=001", 0, "expected rid=" },
	{ "csn=", 0, "CSN" },
	{ "csn=" CSN_A ";", 0, "CSN" },
	{ "csn=" CSN_A ";" CSN_A, 0, "same serverID" },
	{ "csn=20261125101500.123456Z#000000#000#00000", 0, "CSN" },
	{ "csn=20261125101500.123456Z#000000#000#0000000", 0, "CSN" },
	{ "csn=2026112510150x.123456Z#000000#000#000000", 0, "CSN" },
	{ "csn=20261125101500,123456Z#000000#000#000000", 0, "CSN" },
	{ "csn=20261125101500.123456Z#00000g#000#000000", 0, "CSN" },
	{ "csn=20261125101500.123456X#000000#000#000000", 0, "CSN" },
	{ "delcsn=nope", 0, "CSN" },
	{ "RID=001", 0, "expected rid=" },
	{ "rid=001\0,csn=x", 15, "NUL" },
	{ "rid=001 ", 0, "rid" },
	{ "foo=bar", 0, "expected rid=" },
};

START_TEST(malformed_cookies_name_the_problem)
{
	struct sync_cookie c;
	const char *why = NULL;
	struct ber_view v = { (const uint8_t *)bad[_i].text,
			      bad[_i].len ? bad[_i].len : strlen(bad[_i].text) };
	ck_assert_msg(sync_cookie_parse(v, &c, &why) == LUMEN_EMALFORMED, "%s accepted",
		      bad[_i].text);
	ck_assert_ptr_nonnull(why);
	ck_assert_msg(strstr(why, bad[_i].why) != NULL, "%s: \"%s\" lacks \"%s\"", bad[_i].text,
		      why, bad[_i].why);
}
END_TEST

START_TEST(too_many_csns)
{
	char text[SYNC_COOKIE_TEXT_MAX * 2] = "csn=";
	for (unsigned sid = 0; sid <= SYNC_COOKIE_MAX_CSNS; sid++) {
		char one[CSN_LENGTH + 2];
		snprintf(one, sizeof(one), "%s20261125101500.123456Z#000000#%03x#000000",
			 sid ? ";" : "", sid);
		strcat(text, one);
	}
	struct sync_cookie c;
	const char *why;
	ck_assert_int_eq(sync_cookie_parse(view(text), &c, &why), LUMEN_ELIMIT);
	ck_assert_ptr_nonnull(strstr(why, "too many"));
}
END_TEST

START_TEST(format_refuses_a_small_buffer)
{
	struct sync_cookie c;
	const char *why;
	char out[16];
	size_t len;
	ck_assert_int_eq(sync_cookie_parse(view("rid=001,csn=" CSN_A), &c, &why), LUMEN_OK);
	ck_assert_int_eq(sync_cookie_format(&c, out, sizeof(out), &len), LUMEN_ELIMIT);
	ck_assert_int_eq(sync_cookie_format(&c, out, 0, &len), LUMEN_ELIMIT);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("sync_cookie");
	TCase *tc = tcase_create("sync_cookie");
	tcase_add_test(tc, openldap_forms_round_trip);
	tcase_add_test(tc, parts_in_any_order_and_short_numbers);
	tcase_add_test(tc, csn_order_and_case);
	tcase_add_test(tc, merge_keeps_the_newest_per_server);
	tcase_add_loop_test(tc, malformed_cookies_name_the_problem, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, too_many_csns);
	tcase_add_test(tc, format_refuses_a_small_buffer);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
