/*
 * test_ldap_sync.c — RFC 4533's control and message values
 * (src/proto/ldap_sync.c): the bytes OpenLDAP's ldapsearch -E sync=...
 * sends, round trips of every value in DER, and malformed values.
 */
#include <check.h>
#include <string.h>

#include "ldap_sync.h"
#include "lumen_error.h"

static struct ber_view bytes(const void *p, size_t n)
{
	return (struct ber_view){ p, n };
}

static struct ber_writer w;

static void setup(void)
{
	ck_assert_int_eq(ber_writer_init(&w, 64, 0), LUMEN_OK);
}

static void teardown(void)
{
	ber_writer_free(&w);
}

static void written(const void *expected, size_t n)
{
	ck_assert_int_eq(ber_writer_error(&w), LUMEN_OK);
	ck_assert_uint_eq(w.len, n);
	ck_assert_mem_eq(w.buf, expected, n);
}

START_TEST(request_as_ldapsearch_sends_it)
{
	static const uint8_t ro[] = { 0x30, 0x03, 0x0a, 0x01, 0x01 };
	static const uint8_t rp[] = { 0x30, 0x0c, 0x0a, 0x01, 0x03, 0x04, 0x07,
				      'r', 'i', 'd', '=', '0', '0', '1' };
	static const uint8_t hint[] = { 0x30, 0x06, 0x0a, 0x01, 0x01, 0x01, 0x01, 0xff };
	struct ldap_sync_request req;
	ck_assert_int_eq(ldap_sync_request_decode(bytes(ro, sizeof(ro)), &req), LUMEN_OK);
	ck_assert_int_eq(req.mode, LDAP_SYNC_REFRESH_ONLY);
	ck_assert(!req.has_cookie && !req.reload_hint);
	ck_assert_int_eq(ldap_sync_request_decode(bytes(rp, sizeof(rp)), &req), LUMEN_OK);
	ck_assert_int_eq(req.mode, LDAP_SYNC_REFRESH_AND_PERSIST);
	ck_assert(req.has_cookie);
	ck_assert_mem_eq(req.cookie.ptr, "rid=001", 7);
	ldap_sync_request_encode(&req, &w);
	written(rp, sizeof(rp));
	ck_assert_int_eq(ldap_sync_request_decode(bytes(hint, sizeof(hint)), &req), LUMEN_OK);
	ck_assert(req.reload_hint);
	ber_writer_reset(&w);
	ldap_sync_request_encode(&req, &w);
	written(hint, sizeof(hint));
}
END_TEST

START_TEST(state_and_done_round_trip)
{
	struct ldap_sync_state_value st = { .state = LDAP_SYNC_MODIFY, .has_cookie = true,
					    .cookie = bytes("rid=001,csn=x", 13) }, back;
	memset(st.uuid, 0xab, sizeof(st.uuid));
	ldap_sync_state_encode(&st, &w);
	ck_assert_int_eq(ldap_sync_state_decode(bytes(w.buf, w.len), &back), LUMEN_OK);
	ck_assert_int_eq(back.state, LDAP_SYNC_MODIFY);
	ck_assert_mem_eq(back.uuid, st.uuid, 16);
	ck_assert(back.has_cookie);
	ck_assert_uint_eq(back.cookie.len, 13);

	/* the provider's allocation-free form is the same DER */
	uint8_t fixed[LDAP_SYNC_STATE_VALUE_SIZE];
	struct ldap_sync_state_value plain = { .state = LDAP_SYNC_PRESENT };
	memset(plain.uuid, 0x5a, sizeof(plain.uuid));
	ber_writer_reset(&w);
	ldap_sync_state_encode(&plain, &w);
	ldap_sync_state_write(LDAP_SYNC_PRESENT, plain.uuid, fixed);
	written(fixed, sizeof(fixed));

	static const uint8_t done_default[] = { 0x30, 0x00 };
	struct ldap_sync_done done = { 0 }, got;
	ber_writer_reset(&w);
	ldap_sync_done_encode(&done, &w);
	written(done_default, sizeof(done_default));
	done = (struct ldap_sync_done){ .has_cookie = true, .cookie = bytes("c", 1),
					.refresh_deletes = true };
	ber_writer_reset(&w);
	ldap_sync_done_encode(&done, &w);
	ck_assert_int_eq(ldap_sync_done_decode(bytes(w.buf, w.len), &got), LUMEN_OK);
	ck_assert(got.has_cookie && got.refresh_deletes);
}
END_TEST

START_TEST(info_every_choice)
{
	struct ldap_sync_info in = { .kind = LDAP_SYNC_INFO_NEW_COOKIE, .has_cookie = true,
				     .cookie = bytes("rid=001", 7) }, out;
	struct ber_reader set;
	static const uint8_t new_cookie[] = { 0x80, 0x07, 'r', 'i', 'd', '=', '0', '0', '1' };
	ldap_sync_info_encode(&in, &w);
	written(new_cookie, sizeof(new_cookie));
	ck_assert_int_eq(ldap_sync_info_decode(bytes(w.buf, w.len), &out, &set), LUMEN_OK);
	ck_assert_int_eq(out.kind, LDAP_SYNC_INFO_NEW_COOKIE);

	/* refreshDelete with refreshDone TRUE (the default: omitted) */
	static const uint8_t refresh_delete[] = { 0xa1, 0x00 };
	in = (struct ldap_sync_info){ .kind = LDAP_SYNC_INFO_REFRESH_DELETE, .refresh_done = true };
	ber_writer_reset(&w);
	ldap_sync_info_encode(&in, &w);
	written(refresh_delete, sizeof(refresh_delete));
	ck_assert_int_eq(ldap_sync_info_decode(bytes(w.buf, w.len), &out, &set), LUMEN_OK);
	ck_assert(out.kind == LDAP_SYNC_INFO_REFRESH_DELETE && out.refresh_done);

	in = (struct ldap_sync_info){ .kind = LDAP_SYNC_INFO_REFRESH_PRESENT, .has_cookie = true,
				      .cookie = bytes("c", 1), .refresh_done = false };
	ber_writer_reset(&w);
	ldap_sync_info_encode(&in, &w);
	ck_assert_int_eq(ldap_sync_info_decode(bytes(w.buf, w.len), &out, &set), LUMEN_OK);
	ck_assert(out.kind == LDAP_SYNC_INFO_REFRESH_PRESENT && !out.refresh_done && out.has_cookie);

	uint8_t uuids[3 * 16];
	for (size_t i = 0; i < sizeof(uuids); i++)
		uuids[i] = (uint8_t)i;
	in = (struct ldap_sync_info){ .kind = LDAP_SYNC_INFO_ID_SET, .refresh_deletes = true,
				      .uuids = uuids, .n_uuids = 3 };
	ber_writer_reset(&w);
	ldap_sync_info_encode(&in, &w);
	ck_assert_int_eq(ldap_sync_info_decode(bytes(w.buf, w.len), &out, &set), LUMEN_OK);
	ck_assert(out.kind == LDAP_SYNC_INFO_ID_SET && out.refresh_deletes && !out.has_cookie);
	ck_assert_uint_eq(out.n_uuids, 3);
	uint8_t uuid[16];
	for (size_t i = 0; i < 3; i++) {
		ck_assert_int_eq(ldap_sync_info_next_uuid(&set, uuid), LUMEN_OK);
		ck_assert_mem_eq(uuid, uuids + 16 * i, 16);
	}
	ck_assert(ber_reader_at_end(&set));
}
END_TEST

START_TEST(uuid_text)
{
	static const uint8_t u[16] = { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x47, 0x77,
				       0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0x01 };
	char text[LDAP_SYNC_UUID_TEXT + 1];
	uint8_t back[16];
	ldap_sync_uuid_format(u, text);
	ck_assert_str_eq(text, "11223344-5566-4777-8899-aabbccddee01");
	ck_assert(ldap_sync_uuid_parse(bytes("11223344-5566-4777-8899-AABBCCDDEE01", 36), back));
	ck_assert_mem_eq(back, u, 16);
	ck_assert(!ldap_sync_uuid_parse(bytes("11223344-5566-4777-8899-aabbccddee0", 35), back));
	ck_assert(!ldap_sync_uuid_parse(bytes("11223344x5566-4777-8899-aabbccddee01", 36), back));
	ck_assert(!ldap_sync_uuid_parse(bytes("1122334g-5566-4777-8899-aabbccddee01", 36), back));
	ck_assert(!ldap_sync_uuid_parse(bytes("112233445566-4777-8899-aabbccddee01--", 36), back));
}
END_TEST

static const struct {
	const char *name;
	int which;          /* 0 request, 1 state, 2 done, 3 info */
	uint8_t bytes[24];
	size_t len;
} bad[] = {
	{ "empty request", 0, { 0 }, 0 },
	{ "mode 0", 0, { 0x30, 0x03, 0x0a, 0x01, 0x00 }, 5 },
	{ "mode 2 (reserved)", 0, { 0x30, 0x03, 0x0a, 0x01, 0x02 }, 5 },
	{ "mode 4", 0, { 0x30, 0x03, 0x0a, 0x01, 0x04 }, 5 },
	{ "mode as INTEGER", 0, { 0x30, 0x03, 0x02, 0x01, 0x01 }, 5 },
	{ "bytes after the sequence", 0, { 0x30, 0x03, 0x0a, 0x01, 0x01, 0x00 }, 6 },
	{ "unknown element inside", 0, { 0x30, 0x05, 0x0a, 0x01, 0x01, 0x02, 0x00 }, 7 },
	{ "cookie length past the end", 0, { 0x30, 0x05, 0x0a, 0x01, 0x01, 0x04, 0x09 }, 7 },
	{ "state: uuid of 15 bytes", 1, { 0x30, 0x14, 0x0a, 0x01, 0x01, 0x04, 0x0f }, 22 },
	{ "state: 4 is no state", 1, { 0x30, 0x15, 0x0a, 0x01, 0x04, 0x04, 0x10 }, 23 },
	{ "done: not a sequence", 2, { 0x04, 0x00 }, 2 },
	{ "info: unknown choice [4]", 3, { 0xa4, 0x00 }, 2 },
	{ "info: newcookie constructed", 3, { 0xa0, 0x00 }, 2 },
	{ "info: refreshDelete with junk", 3, { 0xa1, 0x02, 0x05, 0x00 }, 4 },
	{ "info: id set member of 3 bytes", 3, { 0xa3, 0x07, 0x31, 0x05, 0x04, 0x03, 1, 2, 3 }, 9 },
	{ "info: two choices", 3, { 0x80, 0x00, 0x80, 0x00 }, 4 },
};

START_TEST(malformed_values_are_refused)
{
	struct ber_view v = bytes(bad[_i].bytes, bad[_i].len);
	struct ldap_sync_request req;
	struct ldap_sync_state_value st;
	struct ldap_sync_done done;
	struct ldap_sync_info info;
	struct ber_reader set;
	int rc = bad[_i].which == 0 ? ldap_sync_request_decode(v, &req)
		: bad[_i].which == 1 ? ldap_sync_state_decode(v, &st)
		: bad[_i].which == 2 ? ldap_sync_done_decode(v, &done)
		: ldap_sync_info_decode(v, &info, &set);
	ck_assert_msg(rc == LUMEN_EMALFORMED, "%s: %d", bad[_i].name, rc);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("ldap_sync");
	TCase *tc = tcase_create("ldap_sync");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, request_as_ldapsearch_sends_it);
	tcase_add_test(tc, state_and_done_round_trip);
	tcase_add_test(tc, info_every_choice);
	tcase_add_test(tc, uuid_text);
	tcase_add_loop_test(tc, malformed_values_are_refused, 0, sizeof(bad) / sizeof(bad[0]));
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
