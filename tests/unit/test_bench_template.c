/*
 * test_bench_template.c — bench/template.c and the request encoding of
 * bench/workload.c: range expansion, random and sequential draws, filter
 * templates through the proto parser (its own suite is
 * test_ldap_filter_text.c), malformed input with clear errors, and the
 * VLV contextID read from a response (bench/response.c) and sent back.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "arena.h"
#include "ldap_message.h"
#include "lumen_error.h"
#include "response.h"
#include "template.h"
#include "workload.h"

static struct bench_template t;

static const char *expand(uint64_t draw)
{
	static char out[TEMPLATE_MAX_TEXT * 2];
	size_t len;
	ck_assert_int_eq(bench_template_expand(&t, draw, out, sizeof(out), &len), LUMEN_OK);
	ck_assert_uint_eq(len, strlen(out));
	return out;
}

START_TEST(expansions)
{
	static const struct { const char *text; uint64_t draw; const char *want; } cases[] = {
		{ "(uid=user.[1-100000])", 0, "(uid=user.1)" },
		{ "(uid=user.[1-100000])", 99999, "(uid=user.100000)" },
		{ "(uid=user.[1-100000])", 100000, "(uid=user.1)" },
		{ "[5-5]", 12345, "5" },
		{ "id[0001-9999]", 6, "id0007" },
		{ "[0-9]x[100-109]", 3, "3x103" },        /* one draw, all ranges */
		{ "plain text", 7, "plain text" },
		{ "", 7, "" },
		{ "(cn=\\5b[1-3]\\5d)", 1, "(cn=\\5b2\\5d)" }, /* escapes pass through */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_int_eq(bench_template_compile(&t, cases[i].text, NULL), LUMEN_OK);
		ck_assert_str_eq(expand(cases[i].draw), cases[i].want);
	}
	ck_assert_int_eq(bench_template_compile(&t, "a[1-10]b[1-1000]", NULL), LUMEN_OK);
	ck_assert_uint_eq(bench_template_span(&t), 1000);
	ck_assert(!bench_template_is_constant(&t));
	ck_assert_int_eq(bench_template_compile(&t, "abc", NULL), LUMEN_OK);
	ck_assert(bench_template_is_constant(&t));
}
END_TEST

START_TEST(malformed_templates)
{
	static const struct { const char *text; int rc; const char *why; } cases[] = {
		{ "user.[1-", LUMEN_EMALFORMED, "unclosed '[' in template" },
		{ "user.[", LUMEN_EMALFORMED, "unclosed '[' in template" },
		{ "user.[1-5", LUMEN_EMALFORMED, "unclosed '[' in template" },
		{ "user.[15]", LUMEN_EMALFORMED, "range needs the form [low-high]" },
		{ "user.[a-5]", LUMEN_EMALFORMED, "range bound is not a decimal number" },
		{ "user.[1-b]", LUMEN_EMALFORMED, "range bound is not a decimal number" },
		{ "user.[-5]", LUMEN_EMALFORMED, "range bound is not a decimal number" },
		{ "user.[9-1]", LUMEN_EMALFORMED, "range low bound is above its high bound" },
		{ "user.[1-2x]", LUMEN_EMALFORMED, "range needs the form [low-high]" },
		{ "user.1]", LUMEN_EMALFORMED, "']' without '[' in template" },
		{ "[1-9999999999999999999]", LUMEN_ELIMIT, "range bound has too many digits" },
		{ NULL, LUMEN_EINVAL, "no template" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *why = NULL;
		ck_assert_int_eq(bench_template_compile(&t, cases[i].text, &why), cases[i].rc);
		ck_assert_str_eq(why, cases[i].why);
	}
	char longer[TEMPLATE_MAX_TEXT + 2];
	memset(longer, 'a', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	ck_assert_int_eq(bench_template_compile(&t, longer, NULL), LUMEN_ELIMIT);
	char many[TEMPLATE_MAX_SEGMENTS * 8 + 1] = "";
	for (unsigned i = 0; i <= TEMPLATE_MAX_SEGMENTS; i++)
		strcat(many, "a[1-2]");
	ck_assert_int_eq(bench_template_compile(&t, many, NULL), LUMEN_ELIMIT);
}
END_TEST

START_TEST(expansion_too_long)
{
	char small[8];
	size_t len = 99;
	ck_assert_int_eq(bench_template_compile(&t, "user.[1000-1000]", NULL), LUMEN_OK);
	ck_assert_int_eq(bench_template_expand(&t, 0, small, sizeof(small), &len),
			 LUMEN_ELIMIT);
	ck_assert_uint_eq(len, 0);
	ck_assert_str_eq(small, "");
}
END_TEST

START_TEST(random_and_sequential_draws)
{
	_Atomic uint64_t sequence;
	atomic_init(&sequence, 0);
	struct bench_draw seq, seq2, rnd, same, other;
	bench_draw_init(&seq, BENCH_FILL_SEQUENTIAL, 1, &sequence);
	bench_draw_init(&seq2, BENCH_FILL_SEQUENTIAL, 2, &sequence);
	ck_assert_int_eq(bench_template_compile(&t, "[1-10]", NULL), LUMEN_OK);
	/* Sequential draws share one counter, so two threads never repeat. */
	ck_assert_str_eq(expand(bench_draw_next(&seq)), "1");
	ck_assert_str_eq(expand(bench_draw_next(&seq2)), "2");
	ck_assert_str_eq(expand(bench_draw_next(&seq)), "3");

	bench_draw_init(&rnd, BENCH_FILL_RANDOM, 7, NULL);
	bench_draw_init(&same, BENCH_FILL_RANDOM, 7, NULL);
	bench_draw_init(&other, BENCH_FILL_RANDOM, 8, NULL);
	unsigned seen[10] = { 0 };
	bool differs = false;
	for (int i = 0; i < 10000; i++) {
		uint64_t a = bench_draw_next(&rnd);
		ck_assert_uint_eq(a, bench_draw_next(&same));   /* deterministic */
		differs |= a != bench_draw_next(&other);
		seen[a % 10]++;
	}
	ck_assert(differs);
	for (int i = 0; i < 10; i++)   /* roughly uniform: 1000 +- 20 % */
		ck_assert_msg(seen[i] > 800 && seen[i] < 1200, "value %d seen %u", i, seen[i]);
}
END_TEST

static bool view_is(struct ber_view v, const char *s, size_t n)
{
	return v.len == n && memcmp(v.ptr, s, n) == 0;
}

static struct workload_settings default_settings(void)
{
	return (struct workload_settings){
		.weights = { [BENCH_OP_SEARCH] = 1 },
		.base = "ou=people,dc=example,dc=com", .scope = 2,
		.filter = "(uid=user.[1-100])", .attributes = "cn,mail",
		.auth_base = "ou=people,dc=example,dc=com", .auth_filter = "(uid=user.[1-100])",
		.dn = "uid=user.[1-100],ou=people,dc=example,dc=com", .password = "pw",
		.compare_attribute = "employeeNumber", .compare_value = "[1-100]",
		.modify_attribute = "description", .modify_value = "v[1-100]",
		.add_dn = "uid=bench.[1-1000],ou=people,dc=example,dc=com",
		.delete_dn = "uid=bench.[1-1000],ou=people,dc=example,dc=com",
	};
}

/* What the request tests share: a workload, a writer, the encoder's scratch. */
static struct bench_workload req_wl;
static struct ber_writer req_w;
static struct arena req_arena, req_scratch;

static void requests_begin(const struct workload_settings *s)
{
	const char *why = NULL;
	arena_init(&req_arena, 0);
	arena_init(&req_scratch, 0);
	ck_assert_int_eq(ber_writer_init(&req_w, 64, 0), LUMEN_OK);
	ck_assert_int_eq(bench_workload_init(&req_wl, s, 0, &why), LUMEN_OK);
}

/* Encode one request of kind op and decode it back with the proto decoder. */
static struct ldap_message encode_decode(enum bench_op op, int32_t id, uint64_t draw)
{
	struct ldap_decode_limits limits;
	struct ldap_message m;
	const char *why = NULL;
	ldap_decode_limits_default(&limits);
	ber_writer_reset(&req_w);
	ck_assert_int_eq(bench_encode_op(&req_w, &req_wl, &req_scratch, op, id, draw,
					 (struct ber_view){ NULL, 0 }, &why),
			 LUMEN_OK);
	ck_assert_int_eq(ldap_message_decode(req_w.buf, req_w.len, &req_arena, &limits, &m, &why),
			 LUMEN_OK);
	ck_assert_int_eq(m.message_id, id);
	return m;
}

static void requests_end(void)
{
	bench_workload_free(&req_wl);
	ber_writer_free(&req_w);
	arena_free(&req_scratch);
	arena_free(&req_arena);
}

START_TEST(requests_decode)
{
	struct workload_settings s = default_settings();
	requests_begin(&s);
	struct ldap_message m = encode_decode(BENCH_OP_SEARCH, 5, 41);
	ck_assert_int_eq(m.op, LDAP_OP_SEARCH_REQUEST);
	ck_assert(view_is(m.u.search.filter->u.ava.value, "user.42", 7));
	ck_assert_uint_eq(m.u.search.n_attributes, 2);

	/* One draw: the compare's DN and value name the same entry. */
	m = encode_decode(BENCH_OP_COMPARE, 6, 9);
	ck_assert(view_is(m.u.compare.entry, "uid=user.10,ou=people,dc=example,dc=com", 39));
	ck_assert(view_is(m.u.compare.value, "10", 2));

	/* Adds take sequential numbers, whatever the draw. */
	for (int i = 1; i <= 2; i++) {
		char want[64];
		snprintf(want, sizeof(want), "uid=bench.%d,ou=people,dc=example,dc=com", i);
		m = encode_decode(BENCH_OP_ADD, 7, 999);
		ck_assert(view_is(m.u.add.entry, want, strlen(want)));
		ck_assert_uint_eq(m.u.add.n_attributes, 4);   /* objectClass cn sn uid */
	}
	requests_end();
}
END_TEST

/* Modify: replace by default; toggle adds on even passes over the widest
 * range of the DN and value templates and deletes on odd ones. */
START_TEST(modify_operations)
{
	struct workload_settings s = default_settings();
	s.dn = "cn=group.[1-10],ou=groups,dc=example,dc=com";
	s.modify_attribute = "member";
	s.modify_value = "uid=user.[1-40],ou=people,dc=example,dc=com";
	requests_begin(&s);
	struct ldap_message m = encode_decode(BENCH_OP_MODIFY, 1, 0);
	ck_assert_uint_eq(m.u.modify.n_changes, 1);
	ck_assert_int_eq(m.u.modify.changes[0].operation, LDAP_MOD_REPLACE);
	requests_end();

	s.modify_op = BENCH_MODIFY_TOGGLE;
	requests_begin(&s);
	const struct { uint64_t draw; int op; const char *dn, *value; } cases[] = {
		{ 0, LDAP_MOD_ADD, "cn=group.1,", "uid=user.1," },
		{ 39, LDAP_MOD_ADD, "cn=group.10,", "uid=user.40," },
		{ 40, LDAP_MOD_DELETE, "cn=group.1,", "uid=user.1," },
		{ 79, LDAP_MOD_DELETE, "cn=group.10,", "uid=user.40," },
		{ 80, LDAP_MOD_ADD, "cn=group.1,", "uid=user.1," },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		m = encode_decode(BENCH_OP_MODIFY, 2, cases[i].draw);
		ck_assert_int_eq(m.u.modify.changes[0].operation, cases[i].op);
		ck_assert(m.u.modify.object.len > strlen(cases[i].dn) &&
			  memcmp(m.u.modify.object.ptr, cases[i].dn, strlen(cases[i].dn)) == 0);
		struct ber_view v = m.u.modify.changes[0].modification.values[0];
		ck_assert(v.len > strlen(cases[i].value) &&
			  memcmp(v.ptr, cases[i].value, strlen(cases[i].value)) == 0);
	}
	requests_end();
}
END_TEST

/* A search's filter text reaches the wire as the Filter it spells. */
START_TEST(search_filters)
{
	struct workload_settings s = default_settings();
	s.filter = "(&(cn=a\\2ab\\28\\29)(|(uid=user.[1-100])(!(sn=*))))";
	requests_begin(&s);
	struct ldap_message m = encode_decode(BENCH_OP_SEARCH, 1, 6);
	const struct ldap_filter *f = m.u.search.filter;
	ck_assert_int_eq(f->type, LDAP_FILTER_AND);
	ck_assert_int_eq(f->u.children->type, LDAP_FILTER_EQUALITY);
	ck_assert(view_is(f->u.children->u.ava.value, "a*b()", 5));
	const struct ldap_filter *or = f->u.children->next;
	ck_assert_int_eq(or->type, LDAP_FILTER_OR);
	ck_assert(view_is(or->u.children->u.ava.value, "user.7", 6));
	ck_assert_int_eq(or->u.children->next->type, LDAP_FILTER_NOT);
	requests_end();
}
END_TEST

/* A bad filter template fails at start-up, with a reason. */
START_TEST(malformed_filters)
{
	static const struct { const char *filter; int rc; const char *why; } cases[] = {
		{ "", LUMEN_EMALFORMED, "malformed filter" },
		{ "(uid=user.[1-100]", LUMEN_EMALFORMED, "malformed filter" },
		{ "(uid=x))", LUMEN_EMALFORMED, "malformed filter" },
		{ "(=x)", LUMEN_EMALFORMED, "malformed filter" },
		{ "(uid=\\zz)", LUMEN_EMALFORMED, "malformed filter" },
		{ "(!uid=a)", LUMEN_EMALFORMED, "malformed filter" },
	};
	struct bench_workload wl;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct workload_settings s = default_settings();
		const char *why = NULL;
		s.filter = cases[i].filter;
		ck_assert_msg(bench_workload_init(&wl, &s, 0, &why) == cases[i].rc, "%s",
			      cases[i].filter);
		ck_assert_str_eq(why, cases[i].why);
	}
	/* one level past the default bound: "(!" ... "(a=b)" ... ")"; longer
	 * than a template may be, which is what refuses it first */
	enum { DEPTH = LDAP_DEFAULT_MAX_FILTER_DEPTH + 1 };
	static char deep[3 * DEPTH + 8];
	deep[0] = '\0';
	for (int i = 0; i < DEPTH; i++)
		strcat(deep, "(!");
	strcat(deep, "(a=b)");
	for (int i = 0; i < DEPTH; i++)
		strcat(deep, ")");
	struct workload_settings s = default_settings();
	const char *why = NULL;
	s.auth_filter = deep;
	s.weights[BENCH_OP_AUTH] = 1;
	ck_assert_int_eq(bench_workload_init(&wl, &s, 0, &why), LUMEN_ELIMIT);
	ck_assert_str_eq(why, "bad --auth-filter template");
}
END_TEST

START_TEST(bad_workloads)
{
	struct bench_workload wl;
	const char *why = NULL;
	struct workload_settings s = default_settings();
	s.filter = "(uid=user.[1-100]";
	ck_assert_int_eq(bench_workload_init(&wl, &s, 0, &why), LUMEN_EMALFORMED);
	ck_assert_str_eq(why, "malformed filter");
	s = default_settings();
	s.dn = "uid=user.[1-";
	ck_assert_int_eq(bench_workload_init(&wl, &s, 0, &why), LUMEN_EMALFORMED);
	ck_assert_str_eq(why, "bad --dn template");
	s = default_settings();
	s.attributes = "cn,,mail";
	ck_assert_int_eq(bench_workload_init(&wl, &s, 0, &why), LUMEN_EMALFORMED);
	ck_assert_str_eq(why, "empty name in the attribute list");
	s = default_settings();
	s.weights[BENCH_OP_SEARCH] = 0;
	ck_assert_int_eq(bench_workload_init(&wl, &s, 0, &why), LUMEN_EINVAL);
	ck_assert_str_eq(why, "no operation to run");
}
END_TEST

START_TEST(mix_picks_by_weight)
{
	struct workload_settings s = default_settings();
	struct bench_workload wl;
	const char *why;
	s.weights[BENCH_OP_SEARCH] = 65;
	s.weights[BENCH_OP_AUTH] = 30;
	s.weights[BENCH_OP_MODIFY] = 5;
	ck_assert_int_eq(bench_workload_init(&wl, &s, 0, &why), LUMEN_OK);
	unsigned counts[BENCH_OP_COUNT] = { 0 };
	for (uint64_t r = 0; r < 1000; r++)
		counts[bench_workload_pick(&wl, r)]++;
	ck_assert_uint_eq(counts[BENCH_OP_SEARCH], 650);
	ck_assert_uint_eq(counts[BENCH_OP_AUTH], 300);
	ck_assert_uint_eq(counts[BENCH_OP_MODIFY], 50);
	bench_workload_free(&wl);
}
END_TEST

/* --vlv-context: the contextID of a SearchResultDone's VLV response goes
 * back in the next VLV request; none without one, and not without --vlv. */
START_TEST(vlv_context_round_trip)
{
	static const char vlv_oid[] = "2.16.840.1.113730.3.4.9";
	static const char vlv_response_oid[] = "2.16.840.1.113730.3.4.10";
	struct workload_settings s = default_settings();
	s.sort = "cn";
	s.vlv = "0/19/[1-100]/0";
	s.vlv_context = true;
	requests_begin(&s);

	struct ber_writer done;
	ck_assert_int_eq(ber_writer_init(&done, 64, 0), LUMEN_OK);
	ber_begin(&done, BER_TAG_SEQUENCE);
	ber_write_integer(&done, BER_TAG_INTEGER, 3);
	ber_write_integer(&done, BER_TAG_INTEGER, 100);
	ber_write_integer(&done, BER_TAG_ENUMERATED, 0);
	ber_write_octets(&done, BER_TAG_OCTET_STRING, "ctx\0-1234", 9);
	ber_end(&done);
	struct ldap_control c = { { (const uint8_t *)vlv_response_oid, strlen(vlv_response_oid) },
				  false, true, { NULL, 0 } };
	uint8_t value[64];
	memcpy(value, done.buf, done.len);
	c.value = (struct ber_view){ value, done.len };
	ber_writer_reset(&done);
	ldap_encode_result(&done, 7, LDAP_OP_SEARCH_DONE, 0, "", "", &c, 1);
	struct bench_response r;
	ck_assert_int_eq(bench_response_parse(done.buf, done.len, &r), LUMEN_OK);
	ck_assert(r.has_result && r.result_code == 0 && r.message_id == 7);
	ck_assert(view_is(r.vlv_context, "ctx\0-1234", 9));

	/* The next request carries it as the VLV control's last element. */
	const char *why = NULL;
	struct ldap_decode_limits limits;
	struct ldap_message m;
	ldap_decode_limits_default(&limits);
	ber_writer_reset(&req_w);
	ck_assert_int_eq(bench_encode_op(&req_w, &req_wl, &req_scratch, BENCH_OP_SEARCH, 8, 1,
					 r.vlv_context, &why), LUMEN_OK);
	ck_assert_int_eq(ldap_message_decode(req_w.buf, req_w.len, &req_arena, &limits, &m, &why),
			 LUMEN_OK);
	ck_assert_uint_eq(m.n_controls, 2);
	ck_assert(view_is(m.controls[1].oid, vlv_oid, strlen(vlv_oid)));
	struct ber_view v = m.controls[1].value;
	ck_assert_uint_gt(v.len, 11);
	ck_assert(memcmp(v.ptr + v.len - 11, "\x04\x09" "ctx\0-1234", 11) == 0);

	/* A done without controls has none; no context, no contextID. */
	ber_writer_reset(&done);
	ldap_encode_result(&done, 9, LDAP_OP_SEARCH_DONE, 0, "", "", NULL, 0);
	ck_assert_int_eq(bench_response_parse(done.buf, done.len, &r), LUMEN_OK);
	ck_assert_ptr_null(r.vlv_context.ptr);
	ber_writer_reset(&req_w);
	ck_assert_int_eq(bench_encode_op(&req_w, &req_wl, &req_scratch, BENCH_OP_SEARCH, 10, 1,
					 r.vlv_context, &why), LUMEN_OK);
	ck_assert_int_eq(ldap_message_decode(req_w.buf, req_w.len, &req_arena, &limits, &m, &why),
			 LUMEN_OK);
	v = m.controls[1].value;
	ck_assert(v.ptr[v.len - 2] != 0x04);      /* ends with contentCount */
	ber_writer_free(&done);
	requests_end();

	struct bench_workload wl;
	s.vlv = NULL;
	ck_assert_int_eq(bench_workload_init(&wl, &s, 0, &why), LUMEN_EMALFORMED);
	ck_assert_str_eq(why, "--vlv-context needs --vlv");
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("bench_template");
	TCase *tc = tcase_create("template");
	tcase_add_test(tc, expansions);
	tcase_add_test(tc, malformed_templates);
	tcase_add_test(tc, expansion_too_long);
	tcase_add_test(tc, random_and_sequential_draws);
	tcase_add_test(tc, requests_decode);
	tcase_add_test(tc, modify_operations);
	tcase_add_test(tc, search_filters);
	tcase_add_test(tc, malformed_filters);
	tcase_add_test(tc, bad_workloads);
	tcase_add_test(tc, mix_picks_by_weight);
	tcase_add_test(tc, vlv_context_round_trip);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
