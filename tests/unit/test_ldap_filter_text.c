/*
 * test_ldap_filter_text.c — RFC 4515 filter strings (ldap_filter_text.h):
 * parse, print, reject, bounds, and the BER a parsed filter encodes to
 * (what lumenbench sends).
 */
#include <check.h>
#include <string.h>

#include "ldap_filter_text.h"
#include "lumen_error.h"

static struct arena arena;

static void setup(void)
{
	arena_init(&arena, 0);
}

static void teardown(void)
{
	arena_free(&arena);
}

/* Parse then print; the printed form is canonical. */
static const struct {
	const char *in;
	const char *out;
} round_trips[] = {
	/* RFC 4515 §4 examples */
	{ "(cn=Babs Jensen)", "(cn=Babs Jensen)" },
	{ "(!(cn=Tim Howes))", "(!(cn=Tim Howes))" },
	{ "(&(objectClass=Person)(|(sn=Jensen)(cn=Babs J*)))",
	  "(&(objectClass=Person)(|(sn=Jensen)(cn=Babs J*)))" },
	{ "(o=univ*of*mich*)", "(o=univ*of*mich*)" },
	{ "(seeAlso=)", "(seeAlso=)" },
	{ "(cn:caseExactMatch:=Fred Flintstone)", "(cn:caseExactMatch:=Fred Flintstone)" },
	{ "(cn:=Betty Rubble)", "(cn:=Betty Rubble)" },
	{ "(sn:dn:2.4.6.8.10:=Barney Rubble)", "(sn:dn:2.4.6.8.10:=Barney Rubble)" },
	{ "(o:dn:=Ace Industry)", "(o:dn:=Ace Industry)" },
	{ "(:1.2.3:=Wilma Flintstone)", "(:1.2.3:=Wilma Flintstone)" },
	{ "(:DN:2.4.6.8.10:=Dino)", "(:dn:2.4.6.8.10:=Dino)" },
	{ "(o=Parens R Us \\28for all your parenthetical needs\\29)",
	  "(o=Parens R Us \\28for all your parenthetical needs\\29)" },
	{ "(cn=*\\2A*)", "(cn=*\\2a*)" },
	{ "(filename=C:\\5cMyFile)", "(filename=C:\\5cMyFile)" },
	{ "(bin=\\00\\00\\00\\04)", "(bin=\\00\\00\\00\\04)" },
	{ "(sn=Lu\\c4\\8di\\c4\\87)", "(sn=Lu\\c4\\8di\\c4\\87)" },
	{ "(1.3.6.1.4.1.1466.0=\\04\\02\\48\\69)", "(1.3.6.1.4.1.1466.0=\\04\\02Hi)" },
	/* the other item kinds */
	{ "(cn=*)", "(cn=*)" },
	{ "(cn~=jensen)", "(cn~=jensen)" },
	{ "(uidNumber>=1000)", "(uidNumber>=1000)" },
	{ "(uidNumber<=999)", "(uidNumber<=999)" },
	{ "(cn=*a*b*c*)", "(cn=*a*b*c*)" },
	{ "(cn=a*)", "(cn=a*)" },
	{ "(cn=*z)", "(cn=*z)" },
	{ "(cn=a**z)", "(cn=a*z)" },
	{ "(cn;lang-de=x)", "(cn;lang-de=x)" },
	{ "(&)", "(&)" },
	{ "(|)", "(|)" },
	{ "cn=bare", "(cn=bare)" },
	{ "(sn=Müller)", "(sn=M\\c3\\bcller)" },
	{ "(cn=tab\\09)", "(cn=tab\\09)" },
};

START_TEST(round_trip)
{
	struct ldap_filter *f = NULL;
	size_t at = 0;
	const char *in = round_trips[_i].in;
	int rc = ldap_filter_text_parse(in, strlen(in), &arena, NULL, &f, &at);
	ck_assert_msg(rc == LUMEN_OK, "%s: %s at %zu", in, lumen_strerror(rc), at);
	struct ber_view out;
	ck_assert_int_eq(ldap_filter_text_print(f, &arena, &out), LUMEN_OK);
	ck_assert_str_eq((const char *)out.ptr, round_trips[_i].out);
	/* printing is idempotent through the parser */
	struct ldap_filter *again = NULL;
	ck_assert_int_eq(ldap_filter_text_parse((const char *)out.ptr, out.len, &arena, NULL, &again, NULL),
			 LUMEN_OK);
	struct ber_view out2;
	ck_assert_int_eq(ldap_filter_text_print(again, &arena, &out2), LUMEN_OK);
	ck_assert_str_eq((const char *)out2.ptr, (const char *)out.ptr);
}
END_TEST

START_TEST(structure)
{
	const char *in = "(&(cn:dn:caseExactMatch:=Foo)(o=a*b*c*d)(!(x=*)))";
	struct ldap_filter *f = NULL;
	ck_assert_int_eq(ldap_filter_text_parse(in, strlen(in), &arena, NULL, &f, NULL), LUMEN_OK);
	ck_assert_int_eq(f->type, LDAP_FILTER_AND);
	struct ldap_filter *ext = f->u.children;
	ck_assert_int_eq(ext->type, LDAP_FILTER_EXTENSIBLE);
	ck_assert(ext->u.extensible.dn_attributes);
	ck_assert(ext->u.extensible.has_rule && ext->u.extensible.has_attr);
	ck_assert(ber_view_eq_str(ext->u.extensible.rule, "caseExactMatch"));
	ck_assert(ber_view_eq_str(ext->u.extensible.attr, "cn"));
	ck_assert(ber_view_eq_str(ext->u.extensible.value, "Foo"));
	struct ldap_filter *sub = ext->next;
	ck_assert_int_eq(sub->type, LDAP_FILTER_SUBSTRINGS);
	ck_assert(sub->u.substrings.has_initial && sub->u.substrings.has_final);
	ck_assert_uint_eq(sub->u.substrings.n_any, 2);
	ck_assert(ber_view_eq_str(sub->u.substrings.any[1], "c"));
	ck_assert(ber_view_eq_str(sub->u.substrings.final, "d"));
	struct ldap_filter *not = sub->next;
	ck_assert_int_eq(not->type, LDAP_FILTER_NOT);
	ck_assert_int_eq(not->u.child->type, LDAP_FILTER_PRESENT);
	ck_assert_ptr_null(not->next);
	/* escapes unescape to raw bytes, NUL included */
	const char *bin = "(bin=\\00a\\2A)";
	ck_assert_int_eq(ldap_filter_text_parse(bin, strlen(bin), &arena, NULL, &f, NULL), LUMEN_OK);
	ck_assert_uint_eq(f->u.ava.value.len, 3);
	ck_assert_int_eq(memcmp(f->u.ava.value.ptr, "\0a*", 3), 0);
}
END_TEST

static const struct {
	const char *in;
	int rc;
	size_t offset;
} bad[] = {
	{ "", LUMEN_EMALFORMED, 0 },
	{ "(", LUMEN_EMALFORMED, 1 },
	{ "()", LUMEN_EMALFORMED, 1 },
	{ "(cn=a", LUMEN_EMALFORMED, 5 },
	{ "(cn=a))", LUMEN_EMALFORMED, 6 },
	{ "((cn=a)", LUMEN_EMALFORMED, 1 },
	{ "(&(cn=a)", LUMEN_EMALFORMED, 8 },
	{ "(=a)", LUMEN_EMALFORMED, 1 },
	{ "(cn)", LUMEN_EMALFORMED, 3 },
	{ "(cn~a)", LUMEN_EMALFORMED, 4 },
	{ "(cn>a)", LUMEN_EMALFORMED, 4 },
	{ "(cn=a\\)", LUMEN_EMALFORMED, 5 },
	{ "(cn=a\\4)", LUMEN_EMALFORMED, 5 },
	{ "(cn=a\\zz)", LUMEN_EMALFORMED, 5 },
	{ "(cn=a\\", LUMEN_EMALFORMED, 5 },
	{ "(cn=a(b)", LUMEN_EMALFORMED, 5 },
	{ "(cn>=a*)", LUMEN_EMALFORMED, 6 },
	{ "(cn~=*)", LUMEN_EMALFORMED, 5 },
	{ "(!cn=a)", LUMEN_EMALFORMED, 2 },
	{ "(!(cn=a)(sn=b))", LUMEN_EMALFORMED, 8 },
	{ "(:=x)", LUMEN_EMALFORMED, 3 },
	{ "(cn:dn:r1:r2:=x)", LUMEN_EMALFORMED, 0 },
	{ "(cn:=x*)", LUMEN_EMALFORMED, 6 },
	{ "(cn::=x)", LUMEN_EMALFORMED, 4 },
	{ "(cn:foo)", LUMEN_EMALFORMED, 7 },
	{ "(c n=x)", LUMEN_EMALFORMED, 2 },
	{ "(cn=a) ", LUMEN_EMALFORMED, 6 },
	{ "(&(cn=a)x)", LUMEN_EMALFORMED, 8 },
	{ "(cn=**)", LUMEN_EMALFORMED, 0 },
};

START_TEST(malformed)
{
	struct ldap_filter *f = (struct ldap_filter *)1;
	size_t at = 12345;
	const char *in = bad[_i].in;
	int rc = ldap_filter_text_parse(in, strlen(in), &arena, NULL, &f, &at);
	ck_assert_msg(rc == bad[_i].rc, "%s: %d", in, rc);
	ck_assert_ptr_null(f);
	if (bad[_i].offset != 0)
		ck_assert_msg(at == bad[_i].offset, "%s: offset %zu", in, at);
}
END_TEST

START_TEST(nesting_bound)
{
	char text[3 * (LDAP_DEFAULT_MAX_FILTER_DEPTH + 1) + 8];
	size_t n = 0;
	unsigned depth = LDAP_DEFAULT_MAX_FILTER_DEPTH + 1;
	for (unsigned i = 0; i < depth; i++)
		text[n++] = '(', text[n++] = '!';
	memcpy(text + n, "(a=b)", 5);
	n += 5;
	for (unsigned i = 0; i < depth; i++)
		text[n++] = ')';
	struct ldap_filter *f = NULL;
	ck_assert_int_eq(ldap_filter_text_parse(text, n, &arena, NULL, &f, NULL), LUMEN_ELIMIT);
	struct ldap_decode_limits limits;
	ldap_decode_limits_default(&limits);
	limits.max_filter_depth = depth;
	limits.max_filter_nodes = 2 * depth;
	ck_assert_int_eq(ldap_filter_text_parse(text, n, &arena, &limits, &f, NULL), LUMEN_OK);
	limits.max_filter_nodes = 10;
	ck_assert_int_eq(ldap_filter_text_parse(text, n, &arena, &limits, &f, NULL), LUMEN_ELIMIT);
	/* exactly at the bound is fine */
	limits.max_filter_nodes = 1024;
	limits.max_filter_depth = depth;
	ck_assert_int_eq(ldap_filter_text_parse(text, n, &arena, &limits, &f, NULL), LUMEN_OK);
	limits.max_filter_depth = depth - 1;
	ck_assert_int_eq(ldap_filter_text_parse(text, n, &arena, &limits, &f, NULL), LUMEN_ELIMIT);
}
END_TEST

START_TEST(arena_exhaustion)
{
	struct arena tiny;
	arena_init(&tiny, 64);
	const char *in = "(&(cn=aaaaaaaaaaaaaaaaaaaaaaaaaaaaa)(sn=bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb))";
	struct ldap_filter *f = NULL;
	ck_assert_int_eq(ldap_filter_text_parse(in, strlen(in), &tiny, NULL, &f, NULL), LUMEN_ENOMEM);
	arena_free(&tiny);
}
END_TEST

/* Parse, encode as BER, decode with the proto decoder: the same tree. */
static const char *const encoded[] = {
	"(uid=user.7)",
	"(cn=a\\2ab\\28\\29\\5c\\00)",
	"(&(objectClass=person)(|(cn=ab*cd*ef)(!(sn=*))))",
	"(age>=21)",
	"(cn~=smith)",
	"(cn:dn:2.5.13.2:=x)",
	"(:1.2.3:=Wilma)",
	"uid=bare",
};

START_TEST(ber_round_trip)
{
	struct ldap_filter *f = NULL, *decoded = NULL;
	const char *in = encoded[_i];
	ck_assert_int_eq(ldap_filter_text_parse(in, strlen(in), &arena, NULL, &f, NULL), LUMEN_OK);
	struct ber_writer w;
	ck_assert_int_eq(ber_writer_init(&w, 64, 0), LUMEN_OK);
	ldap_filter_encode(&w, f);
	ck_assert_int_eq(ber_writer_error(&w), LUMEN_OK);
	struct ber_reader r;
	ber_reader_init(&r, w.buf, w.len);
	const char *why = NULL;
	ck_assert_int_eq(ldap_filter_decode(&r, &arena, NULL, &decoded, &why), LUMEN_OK);
	struct ber_view before, after;
	ck_assert_int_eq(ldap_filter_text_print(f, &arena, &before), LUMEN_OK);
	ck_assert_int_eq(ldap_filter_text_print(decoded, &arena, &after), LUMEN_OK);
	ck_assert_str_eq((const char *)after.ptr, (const char *)before.ptr);
	ber_writer_free(&w);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("ldap_filter_text");
	TCase *tc = tcase_create("ldap_filter_text");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, round_trip, 0, (int)(sizeof(round_trips) / sizeof(round_trips[0])));
	tcase_add_test(tc, structure);
	tcase_add_loop_test(tc, malformed, 0, (int)(sizeof(bad) / sizeof(bad[0])));
	tcase_add_test(tc, nesting_bound);
	tcase_add_test(tc, arena_exhaustion);
	tcase_add_loop_test(tc, ber_round_trip, 0, (int)(sizeof(encoded) / sizeof(encoded[0])));
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
