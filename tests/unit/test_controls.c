/*
 * test_controls.c — the request controls' parsing and the response
 * controls' encoding (src/server/controls.c), starting with the Password
 * Policy control: the request has no value, the response's value is
 * draft-behera-10 §6.2's BER byte for byte.
 */
#include <check.h>
#include <string.h>

#include "controls.h"
#include "lumen_error.h"

static void expect_value(const struct password_policy_response *r, const uint8_t *bytes,
			 size_t n)
{
	struct arena arena;
	struct ldap_control c;
	arena_init(&arena, 4096);
	ck_assert_int_eq(controls_password_policy_response(r, &arena, &c), LUMEN_OK);
	ck_assert(ber_view_eq_str(c.oid, CONTROL_PASSWORD_POLICY));
	ck_assert(c.has_value && !c.critical);
	ck_assert_uint_eq(c.value.len, n);
	ck_assert_mem_eq(c.value.ptr, bytes, n);
	arena_free(&arena);
}

START_TEST(response_empty)
{
	struct password_policy_response r = { PASSWORD_POLICY_NO_WARNING, 0,
					      PASSWORD_POLICY_NO_ERROR };
	static const uint8_t want[] = { 0x30, 0x00 };
	expect_value(&r, want, sizeof(want));
}
END_TEST

START_TEST(response_error)
{
	struct password_policy_response r = { PASSWORD_POLICY_NO_WARNING, 0,
					      PASSWORD_POLICY_ACCOUNT_LOCKED };
	static const uint8_t want[] = { 0x30, 0x03, 0x81, 0x01, 0x01 };
	expect_value(&r, want, sizeof(want));
}
END_TEST

START_TEST(response_warnings)
{
	struct password_policy_response r = { PASSWORD_POLICY_TIME_BEFORE_EXPIRATION, 200,
					      PASSWORD_POLICY_NO_ERROR };
	static const uint8_t expiring[] = { 0x30, 0x06, 0xa0, 0x04, 0x80, 0x02, 0x00, 0xc8 };
	expect_value(&r, expiring, sizeof(expiring));
	r = (struct password_policy_response){ PASSWORD_POLICY_GRACE_REMAINING, 0,
					       PASSWORD_POLICY_EXPIRED };
	static const uint8_t grace[] = { 0x30, 0x08, 0xa0, 0x03, 0x81, 0x01, 0x00,
					 0x81, 0x01, 0x00 };
	expect_value(&r, grace, sizeof(grace));
	r = (struct password_policy_response){ PASSWORD_POLICY_TIME_BEFORE_EXPIRATION,
					       0x7fffffff, PASSWORD_POLICY_NO_ERROR };
	static const uint8_t big[] = { 0x30, 0x08, 0xa0, 0x06, 0x80, 0x04, 0x7f, 0xff, 0xff, 0xff };
	expect_value(&r, big, sizeof(big));
}
END_TEST

static int parse_one(const char *oid, int op, bool has_value, struct request_controls *out,
		     const char **why)
{
	struct ldap_control c = { .oid = { (const uint8_t *)oid, strlen(oid) },
				  .has_value = has_value,
				  .value = { (const uint8_t *)"\x30\x00", has_value ? 2 : 0 } };
	struct ldap_message msg = { .op = op, .controls = &c, .n_controls = 1 };
	struct ldap_decode_limits limits = { 0 };
	struct arena arena;
	arena_init(&arena, 4096);
	int rc = controls_parse(&msg, NULL, &limits, &arena, out, why);
	arena_free(&arena);
	return rc;
}

START_TEST(request_parsed)
{
	struct request_controls out;
	const char *why = NULL;
	ck_assert_int_eq(parse_one(CONTROL_PASSWORD_POLICY, LDAP_OP_BIND_REQUEST, false, &out,
				   &why), LUMEN_OK);
	ck_assert(out.password_policy);
	ck_assert_int_eq(parse_one(CONTROL_PASSWORD_POLICY, LDAP_OP_EXTENDED_REQUEST, false,
				   &out, &why), LUMEN_OK);
	ck_assert(out.password_policy);
	ck_assert_int_eq(parse_one(CONTROL_PASSWORD_POLICY, LDAP_OP_MODIFY_REQUEST, true, &out,
				   &why), LUMEN_EMALFORMED);
	ck_assert_str_eq(why, "passwordPolicyRequest control value not absent");
	/* not for a search: ignored (non-critical) */
	ck_assert_int_eq(parse_one(CONTROL_PASSWORD_POLICY, LDAP_OP_SEARCH_REQUEST, false, &out,
				   &why), LUMEN_OK);
	ck_assert(!out.password_policy);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("controls");
	TCase *tc = tcase_create("password policy");
	tcase_add_test(tc, response_empty);
	tcase_add_test(tc, response_error);
	tcase_add_test(tc, response_warnings);
	tcase_add_test(tc, request_parsed);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
