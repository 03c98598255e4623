/*
 * test_paged_cookie.c — the paged-results cookie: a sealed cookie opens
 * to the same position and count on the same connection and search; any
 * flipped byte, truncation, another connection, base, scope, filter or
 * attribute list is refused (LUMEN_EMALFORMED).
 */
#include <check.h>
#include <string.h>

#include "arena.h"
#include "lumen_error.h"
#include "paged_cookie.h"

static const uint8_t position[] = "backend-position-25-bytes";

static struct ber_view view(const char *s)
{
	return (struct ber_view){ (const uint8_t *)s, strlen(s) };
}

struct fixture {
	struct arena arena;
	struct ldap_search_request req;
	struct ber_view attrs[2];
	struct paged_binding b;
	struct ber_view cookie;
};

static void setup(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	arena_init(&f->arena, 0);
	f->attrs[0] = view("cn");
	f->attrs[1] = view("mail");
	f->req.scope = LDAP_SCOPE_SUBTREE;
	f->req.raw_filter = view("\x87\x0bobjectClass");
	f->req.attributes = f->attrs;
	f->req.n_attributes = 2;
	f->b = (struct paged_binding){ 42, &f->req, view("ou=people,dc=example,dc=com") };
	struct ber_view pos = { position, sizeof(position) - 1 };
	ck_assert_int_eq(paged_cookie_seal(&f->b, 7, pos, &f->arena, &f->cookie), LUMEN_OK);
}

static int open_with(struct fixture *f, struct ber_view cookie)
{
	struct ber_view pos;
	uint64_t returned;
	return paged_cookie_open(&f->b, cookie, &f->arena, &pos, &returned);
}

START_TEST(round_trip)
{
	struct fixture f;
	setup(&f);
	struct ber_view pos;
	uint64_t returned = 0;
	ck_assert_int_eq(paged_cookie_open(&f.b, f.cookie, &f.arena, &pos, &returned), LUMEN_OK);
	ck_assert_uint_eq(returned, 7);
	ck_assert_uint_eq(pos.len, sizeof(position) - 1);
	ck_assert_int_eq(memcmp(pos.ptr, position, pos.len), 0);
	arena_free(&f.arena);
}
END_TEST

START_TEST(every_flipped_byte_refused)
{
	struct fixture f;
	setup(&f);
	uint8_t copy[256];
	ck_assert_uint_le(f.cookie.len, sizeof(copy));
	for (size_t i = 0; i < f.cookie.len; i++) {
		memcpy(copy, f.cookie.ptr, f.cookie.len);
		copy[i] ^= 0x80;
		struct ber_view bad = { copy, f.cookie.len };
		ck_assert_int_eq(open_with(&f, bad), LUMEN_EMALFORMED);
	}
	struct ber_view shorter = { f.cookie.ptr, f.cookie.len - 1 };
	ck_assert_int_eq(open_with(&f, shorter), LUMEN_EMALFORMED);
	ck_assert_int_eq(open_with(&f, (struct ber_view){ f.cookie.ptr, 3 }), LUMEN_EMALFORMED);
	arena_free(&f.arena);
}
END_TEST

START_TEST(bound_to_connection_and_search)
{
	struct fixture f;
	setup(&f);
	f.b.conn_id = 43;
	ck_assert_int_eq(open_with(&f, f.cookie), LUMEN_EMALFORMED);
	f.b.conn_id = 42;
	f.b.base_ndn = view("dc=example,dc=com");
	ck_assert_int_eq(open_with(&f, f.cookie), LUMEN_EMALFORMED);
	f.b.base_ndn = view("ou=people,dc=example,dc=com");
	f.req.scope = LDAP_SCOPE_ONE;
	ck_assert_int_eq(open_with(&f, f.cookie), LUMEN_EMALFORMED);
	f.req.scope = LDAP_SCOPE_SUBTREE;
	f.req.raw_filter = view("\x87\x03uid");
	ck_assert_int_eq(open_with(&f, f.cookie), LUMEN_EMALFORMED);
	f.req.raw_filter = view("\x87\x0bobjectClass");
	f.req.n_attributes = 1;
	ck_assert_int_eq(open_with(&f, f.cookie), LUMEN_EMALFORMED);
	f.req.n_attributes = 2;
	ck_assert_int_eq(open_with(&f, f.cookie), LUMEN_OK);
	arena_free(&f.arena);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("paged_cookie");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, every_flipped_byte_refused);
	tcase_add_test(tc, bound_to_connection_and_search);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
