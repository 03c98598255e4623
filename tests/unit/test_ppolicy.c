/*
 * test_ppolicy.c — pwdPolicy entries (src/server/ppolicy.c): defaults,
 * every value parsed, invalid values named, the lockout and failure-count
 * decisions, the quality verdicts, and the newer ones (pwdMaxLength,
 * pwdMinDelay/pwdMaxDelay, pwdMaxIdle, pwdGraceExpiry, the validity
 * window).
 */
#include <check.h>
#include <string.h>

#include "entry_fixture.h"
#include "lumen_error.h"
#include "ppolicy.h"

static struct entry *policy_entry(const char *const *pairs)
{
	struct entry *e = NULL;
	struct ber_view dn = { (const uint8_t *)"cn=p,dc=x", 9 };
	ck_assert_int_eq(entry_create(fixture_schema, dn, (struct ber_view){ NULL, 0 }, &e),
			 LUMEN_OK);
	ck_assert_int_eq(entry_add_text(e, "objectClass", "pwdPolicy"), LUMEN_OK);
	for (size_t i = 0; pairs[i] != NULL; i += 2)
		ck_assert_int_eq(entry_add_text(e, pairs[i], pairs[i + 1]), LUMEN_OK);
	return e;
}

static struct ber_view text(const char *s)
{
	return (struct ber_view){ (const uint8_t *)s, strlen(s) };
}

START_TEST(defaults)
{
	const char *pairs[] = { "pwdAttribute", "userPassword", NULL };
	struct entry *e = policy_entry(pairs);
	struct ppolicy p;
	char why[128];
	ck_assert_int_eq(ppolicy_parse(e, &p, why, sizeof(why)), LUMEN_OK);
	ck_assert(p.allow_user_change);
	ck_assert(!p.lockout && !p.must_change && !p.safe_modify);
	ck_assert_int_eq(p.max_failure, 0);
	ck_assert_int_eq(p.max_recorded_failure, PPOLICY_DEFAULT_MAX_RECORDED);
	entry_free(e);
}
END_TEST

START_TEST(every_value)
{
	const char *pairs[] = {
		"pwdAttribute", "2.5.4.35", "pwdMinAge", "1", "pwdMaxAge", "2",
		"pwdInHistory", "3", "pwdCheckQuality", "2", "pwdMinLength", "8",
		"pwdExpireWarning", "4", "pwdGraceAuthNLimit", "5", "pwdLockout", "TRUE",
		"pwdLockoutDuration", "6", "pwdMaxFailure", "9", "pwdFailureCountInterval", "7",
		"pwdMustChange", "TRUE", "pwdAllowUserChange", "FALSE", "pwdSafeModify", "TRUE",
		NULL,
	};
	struct entry *e = policy_entry(pairs);
	struct ppolicy p;
	char why[128];
	ck_assert_int_eq(ppolicy_parse(e, &p, why, sizeof(why)), LUMEN_OK);
	ck_assert_int_eq(p.min_age, 1);
	ck_assert_int_eq(p.max_age, 2);
	ck_assert_int_eq(p.in_history, 3);
	ck_assert_int_eq(p.check_quality, 2);
	ck_assert_int_eq(p.min_length, 8);
	ck_assert_int_eq(p.expire_warning, 4);
	ck_assert_int_eq(p.grace_authn_limit, 5);
	ck_assert_int_eq(p.lockout_duration, 6);
	ck_assert_int_eq(p.failure_count_interval, 7);
	ck_assert_int_eq(p.max_failure, 9);
	ck_assert_int_eq(p.max_recorded_failure, 9);   /* at least pwdMaxFailure */
	ck_assert(p.lockout && p.must_change && !p.allow_user_change && p.safe_modify);
	entry_free(e);
}
END_TEST

START_TEST(newer_values)
{
	const char *pairs[] = {
		"pwdAttribute", "userPassword", "pwdMinLength", "4", "pwdMaxLength", "12",
		"pwdGraceExpiry", "30", "pwdMinDelay", "5", "pwdMaxIdle", "600", NULL,
	};
	struct entry *e = policy_entry(pairs);
	struct ppolicy p;
	char why[128];
	ck_assert_int_eq(ppolicy_parse(e, &p, why, sizeof(why)), LUMEN_OK);
	ck_assert_int_eq(p.max_length, 12);
	ck_assert_int_eq(p.grace_expiry, 30);
	ck_assert_int_eq(p.min_delay, 5);
	ck_assert_int_eq(p.max_delay, 5);   /* OpenLDAP: no pwdMaxDelay caps at pwdMinDelay */
	ck_assert_int_eq(p.max_idle, 600);
	entry_free(e);
}
END_TEST

START_TEST(contradictions_named)
{
	static const char *const cases[][6] = {
		{ "pwdMinLength", "8", "pwdMaxLength", "7", "pwdMaxLength" },
		{ "pwdMinDelay", "10", "pwdMaxDelay", "9", "pwdMaxDelay" },
		{ "pwdMaxIdle", "-1", "pwdLockout", "TRUE", "pwdMaxIdle" },
		{ "pwdGraceExpiry", "99999999999", "pwdLockout", "TRUE", "pwdGraceExpiry" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *pairs[] = { "pwdAttribute", "userPassword", cases[i][0], cases[i][1],
					cases[i][2], cases[i][3], NULL };
		struct entry *e = policy_entry(pairs);
		struct ppolicy p;
		char why[128] = "";
		ck_assert_int_eq(ppolicy_parse(e, &p, why, sizeof(why)), LUMEN_ESCHEMA);
		ck_assert_msg(strncmp(why, cases[i][4], strlen(cases[i][4])) == 0, "%s", why);
		entry_free(e);
	}
	/* Equal bounds are fine. */
	const char *pairs[] = { "pwdAttribute", "userPassword", "pwdMinLength", "8",
				"pwdMaxLength", "8", NULL };
	struct entry *e = policy_entry(pairs);
	struct ppolicy p;
	char why[128];
	ck_assert_int_eq(ppolicy_parse(e, &p, why, sizeof(why)), LUMEN_OK);
	entry_free(e);
}
END_TEST

START_TEST(validity_window)
{
	time_t now = 1700000000;   /* 20231114221320Z */
	struct ber_view none = { NULL, 0 };
	ck_assert(!ppolicy_outside_validity(none, none, now));
	ck_assert(ppolicy_outside_validity(text("20231114221321Z"), none, now));
	ck_assert(!ppolicy_outside_validity(text("20231114221320Z"), none, now));
	ck_assert(ppolicy_outside_validity(none, text("20231114221320Z"), now));   /* ends at */
	ck_assert(!ppolicy_outside_validity(none, text("20231114221321Z"), now));
	ck_assert(ppolicy_outside_validity(text("garbage"), none, now));   /* as OpenLDAP */
	ck_assert(ppolicy_outside_validity(none, text("garbage"), now));
}
END_TEST

START_TEST(failure_delay)
{
	struct ppolicy p = { .min_delay = 3, .max_delay = 20 };
	ck_assert_int_eq(ppolicy_failure_delay(&p, 0), 3);
	ck_assert_int_eq(ppolicy_failure_delay(&p, 1), 6);
	ck_assert_int_eq(ppolicy_failure_delay(&p, 2), 12);
	ck_assert_int_eq(ppolicy_failure_delay(&p, 3), 20);         /* capped */
	ck_assert_int_eq(ppolicy_failure_delay(&p, 1000000), 20);   /* no overflow */
	p.min_delay = 0;
	ck_assert_int_eq(ppolicy_failure_delay(&p, 5), 0);
}
END_TEST

START_TEST(idle_and_grace)
{
	struct ppolicy p = { .max_idle = 100, .grace_authn_limit = 3, .grace_expiry = 50 };
	ck_assert(!ppolicy_idle(&p, 1000, 1100));
	ck_assert(ppolicy_idle(&p, 1000, 1101));
	ck_assert(!ppolicy_idle(&p, (time_t)-1, 999999));   /* never used: unknown */
	p.max_idle = 0;
	ck_assert(!ppolicy_idle(&p, 1000, 999999));
	ck_assert_int_eq(ppolicy_grace_left(&p, 0, 10), 3);
	ck_assert_int_eq(ppolicy_grace_left(&p, 2, 50), 1);
	ck_assert_int_eq(ppolicy_grace_left(&p, 0, 51), 0);   /* pwdGraceExpiry passed */
	ck_assert_int_eq(ppolicy_grace_left(&p, 3, 10), 0);
	p.grace_expiry = 0;
	ck_assert_int_eq(ppolicy_grace_left(&p, 1, 1000000), 2);
}
END_TEST

START_TEST(invalid_values_named)
{
	static const char *const cases[][4] = {
		{ "pwdAttribute", "userPassword", "pwdCheckQuality", "3" },
		{ "pwdAttribute", "userPassword", "pwdMinLength", "-1" },
		{ "pwdAttribute", "cn", NULL, NULL },
	};
	static const char *const named[] = { "pwdCheckQuality", "pwdMinLength", "pwdAttribute" };
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *pairs[5] = { cases[i][0], cases[i][1], cases[i][2], cases[i][3], NULL };
		struct entry *e = policy_entry(pairs);
		struct ppolicy p;
		char why[128] = "";
		ck_assert_int_eq(ppolicy_parse(e, &p, why, sizeof(why)), LUMEN_ESCHEMA);
		ck_assert_msg(strstr(why, named[i]) != NULL, "%s", why);
		entry_free(e);
	}
}
END_TEST

START_TEST(not_a_policy)
{
	struct entry *e = NULL;
	struct ppolicy p;
	char why[128];
	ck_assert_int_eq(entry_create(fixture_schema, text("cn=p,dc=x"),
				      (struct ber_view){ NULL, 0 }, &e), LUMEN_OK);
	ck_assert_int_eq(ppolicy_parse(e, &p, why, sizeof(why)), LUMEN_ENOTFOUND);
	entry_free(e);
}
END_TEST

START_TEST(lockout)
{
	struct ppolicy p = { .lockout_duration = 60 };
	time_t locked = 1700000000;   /* 20231114221320Z */
	ck_assert(!ppolicy_locked(&p, (struct ber_view){ NULL, 0 }, locked));
	ck_assert(ppolicy_locked(&p, text("20231114221320Z"), locked + 59));
	ck_assert(!ppolicy_locked(&p, text("20231114221320Z"), locked + 60));
	ck_assert(ppolicy_locked(&p, text(PPOLICY_LOCKED_FOREVER), locked + 1000000));
	p.lockout_duration = 0;
	ck_assert(ppolicy_locked(&p, text("20231114221320Z"), locked + 1000000));
}
END_TEST

START_TEST(failure_interval)
{
	struct ppolicy p = { .failure_count_interval = 10 };
	struct ber_view times[] = { text("20231114221300.000001Z"), text("20231114221315Z"),
				    text("garbage") };
	time_t now = 1700000000 + 5;   /* 221325Z: the first is 25 s old */
	ck_assert_uint_eq(ppolicy_counted_failures(&p, times, 3, now), 1);
	p.failure_count_interval = 0;   /* no interval: every one counts */
	ck_assert_uint_eq(ppolicy_counted_failures(&p, times, 3, now), 3);
}
END_TEST

START_TEST(quality)
{
	struct ppolicy p = { .check_quality = 1, .min_length = 6 };
	ck_assert_int_eq(ppolicy_check_quality(&p, text("short"), false), PPOLICY_QUALITY_TOO_SHORT);
	ck_assert_int_eq(ppolicy_check_quality(&p, text("\xc3\xa9\xc3\xa9\xc3\xa9xx"), false),
			 PPOLICY_QUALITY_TOO_SHORT);   /* 5 characters, 8 bytes */
	ck_assert_int_eq(ppolicy_check_quality(&p, text("longer"), false), PPOLICY_QUALITY_OK);
	ck_assert_int_eq(ppolicy_check_quality(&p, text("{SSHA}x"), true), PPOLICY_QUALITY_OK);
	p.check_quality = 2;
	ck_assert_int_eq(ppolicy_check_quality(&p, text("{SSHA}x"), true),
			 PPOLICY_QUALITY_UNCHECKABLE);
	p.check_quality = 1;
	p.max_length = 8;
	ck_assert_int_eq(ppolicy_check_quality(&p, text("eight-ch"), false), PPOLICY_QUALITY_OK);
	ck_assert_int_eq(ppolicy_check_quality(&p, text("nine-char"), false),
			 PPOLICY_QUALITY_TOO_LONG);
	ck_assert_int_eq(ppolicy_check_quality(&p, text(""), false), PPOLICY_QUALITY_TOO_SHORT);
	p.check_quality = 0;
	ck_assert_int_eq(ppolicy_check_quality(&p, text("x"), false), PPOLICY_QUALITY_OK);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("ppolicy");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, fixture_schema_setup, fixture_schema_teardown);
	tcase_add_test(tc, defaults);
	tcase_add_test(tc, every_value);
	tcase_add_test(tc, invalid_values_named);
	tcase_add_test(tc, not_a_policy);
	tcase_add_test(tc, lockout);
	tcase_add_test(tc, failure_interval);
	tcase_add_test(tc, quality);
	tcase_add_test(tc, newer_values);
	tcase_add_test(tc, contradictions_named);
	tcase_add_test(tc, validity_window);
	tcase_add_test(tc, failure_delay);
	tcase_add_test(tc, idle_and_grace);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
