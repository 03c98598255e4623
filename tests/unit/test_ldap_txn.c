/*
 * test_ldap_txn.c — RFC 5805's End Transaction values
 * (src/proto/ldap_txn.c): what libldap's ldap_txn_end sends, commit's
 * DEFAULT, malformed values refused with a reason, and txnEndRes with a
 * failing message ID and with updatesControls.
 */
#include <check.h>
#include <string.h>

#include "ldap_txn.h"
#include "lumen_error.h"

static struct ber_view bytes(const void *p, size_t n)
{
	return (struct ber_view){ p, n };
}

START_TEST(end_request_decodes)
{
	static const uint8_t commit_default[] = { 0x30, 0x03, 0x04, 0x01, 'T' };
	static const uint8_t commit_true[] = { 0x30, 0x06, 0x01, 0x01, 0xff, 0x04, 0x01, 'T' };
	static const uint8_t abort_[] = { 0x30, 0x06, 0x01, 0x01, 0x00, 0x04, 0x01, 'T' };
	static const uint8_t empty_id[] = { 0x30, 0x02, 0x04, 0x00 };
	struct ldap_txn_end_request r;
	const char *why = NULL;
	ck_assert_int_eq(ldap_txn_end_decode(bytes(commit_default, sizeof(commit_default)), &r,
					     &why), LUMEN_OK);
	ck_assert(r.commit && r.identifier.len == 1 && r.identifier.ptr[0] == 'T');
	ck_assert_int_eq(ldap_txn_end_decode(bytes(commit_true, sizeof(commit_true)), &r, &why),
			 LUMEN_OK);
	ck_assert(r.commit);
	ck_assert_int_eq(ldap_txn_end_decode(bytes(abort_, sizeof(abort_)), &r, &why), LUMEN_OK);
	ck_assert(!r.commit);
	ck_assert_int_eq(ldap_txn_end_decode(bytes(empty_id, sizeof(empty_id)), &r, &why),
			 LUMEN_OK);
	ck_assert_uint_eq(r.identifier.len, 0);
	ck_assert_ptr_null(why);
}
END_TEST

START_TEST(end_request_encodes_der)
{
	struct ber_writer w;
	ck_assert_int_eq(ber_writer_init(&w, 16, 0), LUMEN_OK);
	struct ldap_txn_end_request r = { true, bytes("T", 1) };
	ldap_txn_end_encode(&w, &r);
	static const uint8_t commit[] = { 0x30, 0x03, 0x04, 0x01, 'T' };
	ck_assert_uint_eq(w.len, sizeof(commit));
	ck_assert_mem_eq(w.buf, commit, sizeof(commit));
	ber_writer_reset(&w);
	r.commit = false;
	ldap_txn_end_encode(&w, &r);
	static const uint8_t abort_[] = { 0x30, 0x06, 0x01, 0x01, 0x00, 0x04, 0x01, 'T' };
	ck_assert_uint_eq(w.len, sizeof(abort_));
	ck_assert_mem_eq(w.buf, abort_, sizeof(abort_));
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
	{ "bare octets", "not a SEQUENCE", { 0x04, 0x01, 'x' }, 3 },
	{ "no identifier", "no identifier", { 0x30, 0x00 }, 2 },
	{ "commit only", "no identifier", { 0x30, 0x03, 0x01, 0x01, 0xff }, 5 },
	{ "bad boolean", "not a BOOLEAN", { 0x30, 0x07, 0x01, 0x02, 0xff, 0xff, 0x04, 0x01, 'x' },
	  9 },
	{ "integer identifier", "no identifier", { 0x30, 0x03, 0x02, 0x01, 0x05 }, 5 },
	{ "two identifiers", "after its identifier",
	  { 0x30, 0x06, 0x04, 0x01, 'x', 0x04, 0x01, 'y' }, 8 },
	{ "trailing bytes", "after its SEQUENCE", { 0x30, 0x03, 0x04, 0x01, 'x', 0x00 }, 6 },
};

START_TEST(malformed_end_requests)
{
	struct ldap_txn_end_request r = { false, { NULL, 0 } };
	const char *why = NULL;
	int rc = ldap_txn_end_decode(bytes(bad[_i].bytes, bad[_i].len), &r, &why);
	ck_assert_msg(rc == LUMEN_EMALFORMED, "%s: %d", bad[_i].name, rc);
	ck_assert_msg(why != NULL && strstr(why, bad[_i].reason) != NULL, "%s: %s", bad[_i].name,
		      why != NULL ? why : "(none)");
	ck_assert(!r.commit && r.identifier.ptr == NULL);
}
END_TEST

START_TEST(end_response_encodes)
{
	struct ber_writer w;
	ck_assert_int_eq(ber_writer_init(&w, 16, 0), LUMEN_OK);
	ldap_txn_end_response_encode(&w, true, 5, NULL, 0);
	static const uint8_t failed[] = { 0x30, 0x03, 0x02, 0x01, 0x05 };
	ck_assert_uint_eq(w.len, sizeof(failed));
	ck_assert_mem_eq(w.buf, failed, sizeof(failed));
	ber_writer_reset(&w);
	struct ldap_control c = { .oid = bytes("1.2", 3), .has_value = true,
				  .value = bytes("v", 1) };
	struct ldap_txn_update_controls u = { 7, &c, 1 };
	ldap_txn_end_response_encode(&w, false, 0, &u, 1);
	static const uint8_t controls[] = { 0x30, 0x13, 0x30, 0x11, 0x30, 0x0f, 0x02, 0x01, 0x07,
					    0x30, 0x0a, 0x30, 0x08, 0x04, 0x03, '1', '.', '2',
					    0x04, 0x01, 'v' };
	ck_assert_int_eq(ber_writer_error(&w), LUMEN_OK);
	ck_assert_uint_eq(w.len, sizeof(controls));
	ck_assert_mem_eq(w.buf, controls, sizeof(controls));
	ber_writer_free(&w);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("ldap_txn");
	TCase *tc = tcase_create("ldap_txn");
	tcase_add_test(tc, end_request_decodes);
	tcase_add_test(tc, end_request_encodes_der);
	tcase_add_loop_test(tc, malformed_end_requests, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, end_response_encodes);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
