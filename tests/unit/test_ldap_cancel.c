/*
 * test_ldap_cancel.c — the Cancel request value (src/proto/ldap_cancel.c):
 * the bytes libldap's ldap_cancel sends, the bounds of MessageID, and
 * malformed values refused with a reason.
 */
#include <check.h>
#include <string.h>

#include "ldap_cancel.h"
#include "lumen_error.h"

static struct ber_view bytes(const void *p, size_t n)
{
	return (struct ber_view){ p, n };
}

START_TEST(decodes_what_libldap_sends)
{
	static const uint8_t two[] = { 0x30, 0x03, 0x02, 0x01, 0x02 };
	static const uint8_t max[] = { 0x30, 0x06, 0x02, 0x04, 0x7f, 0xff, 0xff, 0xff };
	int32_t id = -1;
	const char *why = NULL;
	ck_assert_int_eq(ldap_cancel_decode(bytes(two, sizeof(two)), &id, &why), LUMEN_OK);
	ck_assert_int_eq(id, 2);
	ck_assert_int_eq(ldap_cancel_decode(bytes(max, sizeof(max)), &id, &why), LUMEN_OK);
	ck_assert_int_eq(id, INT32_MAX);
	ck_assert_ptr_null(why);
}
END_TEST

START_TEST(encode_round_trips)
{
	struct ber_writer w;
	ck_assert_int_eq(ber_writer_init(&w, 16, 0), LUMEN_OK);
	ldap_cancel_encode(&w, 300);
	static const uint8_t expected[] = { 0x30, 0x04, 0x02, 0x02, 0x01, 0x2c };
	ck_assert_int_eq(ber_writer_error(&w), LUMEN_OK);
	ck_assert_uint_eq(w.len, sizeof(expected));
	ck_assert_mem_eq(w.buf, expected, sizeof(expected));
	int32_t id = 0;
	const char *why = NULL;
	ck_assert_int_eq(ldap_cancel_decode(bytes(w.buf, w.len), &id, &why), LUMEN_OK);
	ck_assert_int_eq(id, 300);
	ber_writer_free(&w);
}
END_TEST

static const struct {
	const char *name;
	const char *reason;
	uint8_t bytes[12];
	size_t len;
} bad[] = {
	{ "empty", "not a SEQUENCE", { 0 }, 0 },
	{ "bare integer", "not a SEQUENCE", { 0x02, 0x01, 0x02 }, 3 },
	{ "empty sequence", "no valid cancelID", { 0x30, 0x00 }, 2 },
	{ "negative id", "no valid cancelID", { 0x30, 0x03, 0x02, 0x01, 0xff }, 5 },
	{ "id above maxInt", "no valid cancelID",
	  { 0x30, 0x07, 0x02, 0x05, 0x00, 0x80, 0x00, 0x00, 0x00 }, 9 },
	{ "non-minimal id", "no valid cancelID", { 0x30, 0x04, 0x02, 0x02, 0x00, 0x05 }, 6 },
	{ "octet string id", "no valid cancelID", { 0x30, 0x03, 0x04, 0x01, 0x05 }, 5 },
	{ "two ids", "after cancelID",
	  { 0x30, 0x06, 0x02, 0x01, 0x05, 0x02, 0x01, 0x06 }, 8 },
	{ "trailing bytes", "after its SEQUENCE", { 0x30, 0x03, 0x02, 0x01, 0x05, 0x00 }, 6 },
	{ "truncated", "not a SEQUENCE", { 0x30, 0x05, 0x02, 0x01, 0x05 }, 5 },
};

START_TEST(malformed_values_are_refused)
{
	int32_t id = 77;
	const char *why = NULL;
	int rc = ldap_cancel_decode(bytes(bad[_i].bytes, bad[_i].len), &id, &why);
	ck_assert_msg(rc == LUMEN_EMALFORMED, "%s: %d", bad[_i].name, rc);
	ck_assert_msg(why != NULL && strstr(why, bad[_i].reason) != NULL, "%s: %s", bad[_i].name,
		      why != NULL ? why : "(none)");
	ck_assert_int_eq(id, 77);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("ldap_cancel");
	TCase *tc = tcase_create("ldap_cancel");
	tcase_add_test(tc, decodes_what_libldap_sends);
	tcase_add_test(tc, encode_round_trips);
	tcase_add_loop_test(tc, malformed_values_are_refused, 0, sizeof(bad) / sizeof(bad[0]));
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
