/*
 * test_controls.c — request controls (src/server/controls.c): what each
 * supported control sets, an unknown control ignored unless critical, a
 * supported control whose value does not decode, the Paged Results
 * response value, and the Password Policy control: the request has no
 * value, the response's value is draft-behera-10 §6.2's BER byte for byte;
 * the Server Side Sort and VLV requests (keys, ordering rule, reverse;
 * byOffset, greaterThanOrEqual, contextID; malformed ones) and their
 * response values byte for byte; Proxied Authorization, Don't Use Copy,
 * Subentries and Matched Values: what they set, their bad values and the
 * operations they do not apply to.
 */
#include <check.h>
#include <string.h>

#include "controls.h"
#include "entry_fixture.h"
#include "ldap_message.h"
#include "lumen_error.h"
#include "pdu_fixture.h"

#define DELETE_WITH(controls) "30( 020101 4a'cn=a' a0( " controls " ) )"
#define SEARCH_WITH(controls) "30( 020101 63( 04'' 0a0100 0a0100 020100 020100 010100 " \
			      "87'cn' 30( ) ) a0( " controls " ) )"

static struct arena arena;
static struct ldap_decode_limits limits;

static void setup(void)
{
	fixture_schema_setup();
	arena_init(&arena, 1u << 20);
	ldap_decode_limits_default(&limits);
}

static void teardown(void)
{
	arena_free(&arena);
	fixture_schema_teardown();
}

/* Decode spec and parse its controls; the result of controls_parse. */
static int parse(const char *spec, struct request_controls *out)
{
	struct pdu p;
	struct ldap_message msg;
	const char *diagnostic = NULL;
	build_pdu(spec, &p);
	ck_assert_int_eq(ldap_message_decode(p.bytes, p.len, &arena, &limits, &msg, NULL),
			 LUMEN_OK);
	return controls_parse(&msg, fixture_schema, &limits, &arena, out, &diagnostic);
}

START_TEST(supported_controls_are_set)
{
	struct request_controls rc;
	ck_assert_int_eq(parse(DELETE_WITH("30( 04'" CONTROL_MANAGE_DSA_IT "' 0101ff ) "
					   "30( 04'" CONTROL_PRE_READ "' 04( 30( 04'cn' ) ) )"),
			       &rc), LUMEN_OK);
	ck_assert(rc.manage_dsa_it);
	ck_assert(rc.pre_read);
	ck_assert(!rc.post_read);
	ck_assert(!rc.paged);
}
END_TEST

START_TEST(paged_results_size_and_cookie)
{
	struct request_controls rc;
	ck_assert_int_eq(parse(SEARCH_WITH("30( 04'" CONTROL_PAGED_RESULTS "' "
					   "04( 30( 020132 04'abc' ) ) )"), &rc), LUMEN_OK);
	ck_assert(rc.paged);
	ck_assert_uint_eq(rc.page_size, 50);
	ck_assert_uint_eq(rc.cookie.len, 3);
}
END_TEST

START_TEST(unknown_control_ignored_unless_critical)
{
	struct request_controls rc;
	ck_assert_int_eq(parse(DELETE_WITH("30( 04'1.2.3.4' 010100 )"), &rc), LUMEN_OK);
	ck_assert_int_eq(parse(DELETE_WITH("30( 04'1.2.3.4' 0101ff )"), &rc), LUMEN_EUNSUPPORTED);
}
END_TEST

START_TEST(undecodable_value_is_malformed)
{
	struct request_controls rc;
	ck_assert_int_eq(parse(SEARCH_WITH("30( 04'" CONTROL_PAGED_RESULTS "' 04( 0500 ) )"), &rc),
			 LUMEN_EMALFORMED);
}
END_TEST

#define BIND_WITH(controls) "30( 020101 60( 020103 04'' 80'' ) a0( " controls " ) )"
#define COMPARE_WITH(controls) "30( 020101 6e( 04'cn=a' 30( 04'cn' 04'a' ) ) a0( " controls " ) )"

START_TEST(proxy_authz_and_dont_use_copy)
{
	struct request_controls rc;
	ck_assert_int_eq(parse(SEARCH_WITH("30( 04'" CONTROL_PROXY_AUTHZ "' 0101ff 04'dn:cn=x' )"),
			       &rc), LUMEN_OK);
	ck_assert(rc.proxy_authz);
	ck_assert(ber_view_eq_str(rc.authzid, "dn:cn=x"));
	/* criticality FALSE and an empty authzId (anonymous) are taken */
	ck_assert_int_eq(parse(DELETE_WITH("30( 04'" CONTROL_PROXY_AUTHZ "' 04'' )"), &rc), LUMEN_OK);
	ck_assert(rc.proxy_authz && rc.authzid.len == 0);
	ck_assert_int_eq(parse(DELETE_WITH("30( 04'" CONTROL_PROXY_AUTHZ "' 0101ff )"), &rc),
			 LUMEN_EMALFORMED);
	ck_assert_int_eq(parse(BIND_WITH("30( 04'" CONTROL_PROXY_AUTHZ "' 0101ff 04'dn:' )"), &rc),
			 LUMEN_EUNSUPPORTED);
	ck_assert_int_eq(parse(COMPARE_WITH("30( 04'" CONTROL_DONT_USE_COPY "' 0101ff )"), &rc),
			 LUMEN_OK);
	ck_assert(rc.dont_use_copy);
	ck_assert_int_eq(parse(SEARCH_WITH("30( 04'" CONTROL_DONT_USE_COPY "' 04'' )"), &rc),
			 LUMEN_EMALFORMED);
	ck_assert_int_eq(parse(DELETE_WITH("30( 04'" CONTROL_DONT_USE_COPY "' 0101ff )"), &rc),
			 LUMEN_EUNSUPPORTED);
}
END_TEST

START_TEST(subentries_and_matched_values)
{
	struct request_controls rc;
	ck_assert_int_eq(parse(SEARCH_WITH("30( 04'" CONTROL_SUBENTRIES "' 04( 010101 ) )"), &rc),
			 LUMEN_OK);
	ck_assert(rc.subentries && rc.subentries_visibility);
	ck_assert_int_eq(parse(SEARCH_WITH("30( 04'" CONTROL_SUBENTRIES "' 04( 010100 ) )"), &rc),
			 LUMEN_OK);
	ck_assert(rc.subentries && !rc.subentries_visibility);
	ck_assert_int_eq(parse(SEARCH_WITH("30( 04'" CONTROL_SUBENTRIES "' 04( 010100 00 ) )"), &rc),
			 LUMEN_EMALFORMED);
	ck_assert_int_eq(parse(SEARCH_WITH("30( 04'" CONTROL_SUBENTRIES "' 04( 0401ff ) )"), &rc),
			 LUMEN_EMALFORMED);
	ck_assert_int_eq(parse(SEARCH_WITH("30( 04'" CONTROL_SUBENTRIES "' )"), &rc),
			 LUMEN_EMALFORMED);
	ck_assert_int_eq(parse(SEARCH_WITH("30( 04'" CONTROL_MATCHED_VALUES "' "
					   "04( 30( a3( 04'cn' 04'a' ) ) ) )"), &rc), LUMEN_OK);
	ck_assert(rc.matched_values);
	ck_assert_uint_eq(rc.values_return.n_items, 1);
	ck_assert_int_eq(parse(SEARCH_WITH("30( 04'" CONTROL_MATCHED_VALUES "' )"), &rc),
			 LUMEN_EMALFORMED);
	ck_assert_int_eq(parse(SEARCH_WITH("30( 04'" CONTROL_MATCHED_VALUES "' 04( 0500 ) )"), &rc),
			 LUMEN_EMALFORMED);
	ck_assert_int_eq(parse(COMPARE_WITH("30( 04'" CONTROL_MATCHED_VALUES "' 0101ff "
					    "04( 30( ) ) )"), &rc), LUMEN_EUNSUPPORTED);
}
END_TEST

START_TEST(paged_response_value)
{
	struct ber_writer scratch;
	struct ldap_control out;
	ck_assert_int_eq(ber_writer_init(&scratch, 64, 0), LUMEN_OK);
	ck_assert_int_eq(controls_paged_response((const uint8_t *)"xy", 2, &scratch, &arena, &out),
			 LUMEN_OK);
	struct pdu expect;
	build_pdu("30( 020100 04'xy' )", &expect);
	ck_assert_uint_eq(out.value.len, expect.len);
	ck_assert(memcmp(out.value.ptr, expect.bytes, expect.len) == 0);
	ber_writer_free(&scratch);
}
END_TEST

/* ------------------------------------------------------- sort and VLV */

#define SORT_OID "04'" CONTROL_SORT_REQUEST "' "
#define VLV_OID "04'" CONTROL_VLV_REQUEST "' "

START_TEST(sort_request_keys)
{
	struct request_controls rc;
	ck_assert_int_eq(parse(SEARCH_WITH("30( " SORT_OID "0101ff 04( 30( "
					   "30( 04'sn' 80'caseIgnoreOrderingMatch' ) "
					   "30( 04'cn' 8101ff ) ) ) )"), &rc), LUMEN_OK);
	ck_assert(rc.sort && rc.sort_critical);
	ck_assert_uint_eq(rc.n_sort_keys, 2);
	ck_assert(ber_view_eq_str(rc.sort_keys[0].attribute, "sn"));
	ck_assert(ber_view_eq_str(rc.sort_keys[0].ordering_rule, "caseIgnoreOrderingMatch"));
	ck_assert(!rc.sort_keys[0].reverse);
	ck_assert(ber_view_eq_str(rc.sort_keys[1].attribute, "cn"));
	ck_assert_uint_eq(rc.sort_keys[1].ordering_rule.len, 0);
	ck_assert(rc.sort_keys[1].reverse);
}
END_TEST

START_TEST(sort_request_malformed)
{
	struct request_controls rc;
	/* no key, an empty type, a stray element, no value at all */
	ck_assert_int_eq(parse(SEARCH_WITH("30( " SORT_OID "04( 30( ) ) )"), &rc),
			 LUMEN_EMALFORMED);
	ck_assert_int_eq(parse(SEARCH_WITH("30( " SORT_OID "04( 30( 30( 04'' ) ) ) )"), &rc),
			 LUMEN_EMALFORMED);
	ck_assert_int_eq(parse(SEARCH_WITH("30( " SORT_OID "04( 30( 30( 04'cn' 0500 ) ) ) )"),
			       &rc), LUMEN_EMALFORMED);
	ck_assert_int_eq(parse(SEARCH_WITH("30( " SORT_OID ")"), &rc), LUMEN_EMALFORMED);
	/* more keys than CONTROLS_MAX_SORT_KEYS */
	ck_assert_int_eq(parse(SEARCH_WITH("30( " SORT_OID "04( 30( 30( 04'a' ) 30( 04'a' ) "
					   "30( 04'a' ) 30( 04'a' ) 30( 04'a' ) 30( 04'a' ) "
					   "30( 04'a' ) 30( 04'a' ) 30( 04'a' ) ) ) )"), &rc),
			 LUMEN_EMALFORMED);
}
END_TEST

START_TEST(vlv_request_by_offset_and_value)
{
	struct request_controls rc;
	ck_assert_int_eq(parse(SEARCH_WITH("30( " VLV_OID "04( 30( 020101 020102 "
					   "a0( 020103 020108 ) 04'ctx' ) ) )"), &rc), LUMEN_OK);
	ck_assert(rc.vlv && !rc.vlv_request.by_value);
	ck_assert_uint_eq(rc.vlv_request.before, 1);
	ck_assert_uint_eq(rc.vlv_request.after, 2);
	ck_assert_uint_eq(rc.vlv_request.offset, 3);
	ck_assert_uint_eq(rc.vlv_request.content_count, 8);
	ck_assert(ber_view_eq_str(rc.vlv_request.context_id, "ctx"));
	ck_assert_int_eq(parse(SEARCH_WITH("30( " VLV_OID "04( 30( 020100 020100 "
					   "81'brown' ) ) )"), &rc), LUMEN_OK);
	ck_assert(rc.vlv_request.by_value);
	ck_assert(ber_view_eq_str(rc.vlv_request.value, "brown"));
	ck_assert_uint_eq(rc.vlv_request.context_id.len, 0);
	/* a negative count, a missing target */
	ck_assert_int_eq(parse(SEARCH_WITH("30( " VLV_OID "04( 30( 0201ff 020100 81'a' ) ) )"),
			       &rc), LUMEN_EMALFORMED);
	ck_assert_int_eq(parse(SEARCH_WITH("30( " VLV_OID "04( 30( 020100 020100 ) ) )"), &rc),
			 LUMEN_EMALFORMED);
}
END_TEST

static void expect_control(const struct ldap_control *c, const char *oid, const char *spec)
{
	struct pdu expect;
	build_pdu(spec, &expect);
	ck_assert(ber_view_eq_str(c->oid, oid));
	ck_assert_uint_eq(c->value.len, expect.len);
	ck_assert_mem_eq(c->value.ptr, expect.bytes, expect.len);
}

START_TEST(sort_and_vlv_response_values)
{
	struct ber_writer scratch;
	struct ldap_control out;
	ck_assert_int_eq(ber_writer_init(&scratch, 64, 0), LUMEN_OK);
	ck_assert_int_eq(controls_sort_response(0, NULL, &scratch, &arena, &out), LUMEN_OK);
	expect_control(&out, CONTROL_SORT_RESPONSE, "30( 0a0100 )");
	ck_assert_int_eq(controls_sort_response(16, "cn", &scratch, &arena, &out), LUMEN_OK);
	expect_control(&out, CONTROL_SORT_RESPONSE, "30( 0a0110 80'cn' )");
	struct vlv_response r = { 3, 8, 0, { (const uint8_t *)"id", 2 } };
	ck_assert_int_eq(controls_vlv_response(&r, &scratch, &arena, &out), LUMEN_OK);
	expect_control(&out, CONTROL_VLV_RESPONSE, "30( 020103 020108 0a0100 04'id' )");
	r = (struct vlv_response){ 0, 300, 77, { NULL, 0 } };
	ck_assert_int_eq(controls_vlv_response(&r, &scratch, &arena, &out), LUMEN_OK);
	expect_control(&out, CONTROL_VLV_RESPONSE, "30( 020100 0202012c 0a014d )");
	ber_writer_free(&scratch);
}
END_TEST

/* ---------------------------------------------------- password policy */

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
	TCase *tc = tcase_create("parse");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, supported_controls_are_set);
	tcase_add_test(tc, paged_results_size_and_cookie);
	tcase_add_test(tc, unknown_control_ignored_unless_critical);
	tcase_add_test(tc, undecodable_value_is_malformed);
	tcase_add_test(tc, proxy_authz_and_dont_use_copy);
	tcase_add_test(tc, subentries_and_matched_values);
	tcase_add_test(tc, paged_response_value);
	tcase_add_test(tc, response_empty);
	tcase_add_test(tc, response_error);
	tcase_add_test(tc, response_warnings);
	tcase_add_test(tc, request_parsed);
	tcase_add_test(tc, sort_request_keys);
	tcase_add_test(tc, sort_request_malformed);
	tcase_add_test(tc, vlv_request_by_offset_and_value);
	tcase_add_test(tc, sort_and_vlv_response_values);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
