/* test_filter.c — compiling filters and evaluating them with three-valued logic. */
#include <check.h>
#include <string.h>

#include "filter.h"
#include "entry_fixture.h"

static struct arena arena;
static struct entry *babs, *numbers;

static void setup(void)
{
	fixture_schema_setup();
	arena_init(&arena, 0);
	babs = fixture_entry("uid=bjensen,ou=People,dc=example,dc=com",
			     "objectClass: top\n"
			     "objectClass: inetOrgPerson\n"
			     "cn: Barbara Jensen\n"
			     "cn: Babs Jensen\n"
			     "cn;lang-de: Bärbel Jensen\n"
			     "sn: Jensen\n"
			     "uid: bjensen\n"
			     "mail: bjensen@example.com\n"
			     "telephoneNumber: +1 408 555 1212\n"
			     "description: ÄRGER im Büro\n");
	numbers = fixture_entry("cn=n,dc=example,dc=com",
				"objectClass: device\n"
				"cn: n\n"
				"uidNumber: 999\n"
				"gidNumber: 1000\n");
}

static void teardown(void)
{
	entry_free(babs);
	entry_free(numbers);
	arena_free(&arena);
	fixture_schema_teardown();
}

static int compile_text(const char *text, struct filter *f)
{
	struct ldap_filter *parsed = NULL;
	int rc = filter_text_parse(text, strlen(text), &arena, NULL, &parsed, NULL);
	ck_assert_msg(rc == LUMEN_OK, "parse %s", text);
	return filter_compile(fixture_schema, parsed, NULL, &arena, f);
}

static enum filter_result eval(const char *text, const struct entry *e)
{
	struct filter f;
	int rc = compile_text(text, &f);
	ck_assert_msg(rc == LUMEN_OK, "compile %s: %s", text, lumen_strerror(rc));
	return filter_evaluate(&f, e);
}

#define T FILTER_TRUE
#define F FILTER_FALSE
#define U FILTER_UNDEFINED

static const struct {
	const char *filter;
	int on_babs;
	int on_numbers;
} cases[] = {
	/* equality, case folding (beyond ASCII), insignificant spaces */
	{ "(cn=babs jensen)", T, F },
	{ "(cn=  BABS   JENSEN )", T, F },
	{ "(cn=Babs)", F, F },
	{ "(description=ärger IM büro)", T, F },
	{ "(uid=BJENSEN)", T, F },
	{ "(telephoneNumber=+14085551212)", T, F },
	/* subtypes and options */
	{ "(name=jensen)", T, F },
	{ "(name=n)", F, T },
	{ "(cn;lang-de=bärbel jensen)", T, F },
	{ "(cn;lang-de=babs jensen)", F, F },
	{ "(cn=bärbel jensen)", T, F },
	/* objectClass with superclasses */
	{ "(objectClass=person)", T, F },
	{ "(objectClass=organizationalPerson)", T, F },
	{ "(objectClass=2.5.6.6)", T, F },
	{ "(objectClass=top)", T, T },
	{ "(objectClass=INETORGPERSON)", T, F },
	{ "(objectClass=device)", F, T },
	/* RFC 4517: an unknown descriptor is Undefined (as OpenLDAP) */
	{ "(objectClass=noSuchClass)", U, U },
	{ "(!(objectClass=noSuchClass))", U, U },
	/* presence */
	{ "(cn=*)", T, T },
	{ "(name=*)", T, T },
	{ "(uidNumber=*)", F, T },
	{ "(objectClass=*)", T, T },
	{ "(cn;lang-de=*)", T, F },
	{ "(noSuchAttribute=*)", U, U },
	/* substrings */
	{ "(cn=b*)", T, F },
	{ "(cn=*jens*)", T, F },
	{ "(cn=*JENSEN)", T, F },
	{ "(cn=bar*ra*sen)", T, F },
	{ "(cn=bar*sen*ra)", F, F },
	{ "(cn=*ärbel*)", T, F },
	{ "(uidNumber=9*)", U, U },     /* integer has no substrings rule */
	/* ordering: integers compare as numbers, not strings */
	{ "(uidNumber>=1000)", F, F },
	{ "(uidNumber<=1000)", F, T },
	{ "(uidNumber>=999)", F, T },
	{ "(gidNumber>=999)", F, T },
	{ "(gidNumber<=999)", F, F },
	{ "(uidNumber>=abc)", U, U },   /* assertion not an integer */
	{ "(cn>=a)", U, U },            /* cn has no ordering rule */
	/* RFC 4517 §3.3.16: leading zeros and "-0" are not INTEGERs, so the
	 * item is Undefined (as in slapd), not a match for 999 */
	{ "(uidNumber=0999)", U, U },
	{ "(!(uidNumber=0999))", U, U },
	{ "(uidNumber<=-0)", U, U },
	{ "(uidNumber=x)", U, U },
	/* approx */
	{ "(sn~=jensen)", T, F },
	{ "(sn~=jenson)", T, F },
	{ "(cn~=smith)", F, F },
	/* approx is word by word, as in slapd: one word of a value suffices */
	{ "(cn~=jenson)", T, F },
	{ "(cn~=barbra jenson)", T, F },
	{ "(cn~=jenson babs)", F, F },    /* words in the value's order */
	{ "(uidNumber~=999)", F, T },   /* integers: approx is equality */
	/* unknown attribute types are Undefined, and NOT keeps Undefined */
	{ "(noSuchAttribute=x)", U, U },
	{ "(!(noSuchAttribute=x))", U, U },
	{ "(!(cn=babs jensen))", F, T },
	/* AND / OR with Undefined (RFC 4511 §4.5.1.7) */
	{ "(&(cn=babs jensen)(noSuchAttribute=x))", U, F },
	{ "(&(cn=nobody)(noSuchAttribute=x))", F, F },
	{ "(|(cn=babs jensen)(noSuchAttribute=x))", T, U },
	{ "(|(cn=nobody)(noSuchAttribute=x))", U, U },
	{ "(&)", T, T },
	{ "(|)", F, F },
	{ "(!(&))", F, F },
	{ "(&(objectClass=person)(|(sn=Jensen)(cn=Babs J*)))", T, F },
	/* extensible match */
	{ "(cn:caseExactMatch:=Babs Jensen)", T, F },
	{ "(cn:caseExactMatch:=babs jensen)", F, F },
	{ "(cn:2.5.13.5:=Babs Jensen)", T, F },
	{ "(cn:=babs jensen)", T, F },
	{ "(:caseIgnoreMatch:=jensen)", T, F },
	{ "(cn:noSuchRule:=x)", U, U },
	{ "(ou:dn:=people)", T, F },
	{ "(ou:=people)", F, F },
	{ "(dc:dn:=EXAMPLE)", T, T },
	{ "(:dn:caseExactMatch:=People)", T, F },
	{ "(:dn:caseExactMatch:=people)", F, F },
	{ "(uidNumber:integerOrderingMatch:=1000)", F, T },
	{ "(cn:caseIgnoreSubstringsMatch:=x)", U, U },
};

START_TEST(evaluate_cases)
{
	const char *filter = cases[_i].filter;
	int got_babs = eval(filter, babs);
	int got_numbers = eval(filter, numbers);
	ck_assert_msg(got_babs == cases[_i].on_babs, "%s on babs: got %d want %d", filter, got_babs,
		      cases[_i].on_babs);
	ck_assert_msg(got_numbers == cases[_i].on_numbers, "%s on numbers: got %d want %d", filter,
		      got_numbers, cases[_i].on_numbers);
}
END_TEST

START_TEST(compile_walk)
{
	struct filter f;
	ck_assert_int_eq(compile_text("(&(CN=Babs*)(uidNumber>=100)(nope=1))", &f), LUMEN_OK);
	ck_assert_uint_eq(f.n_nodes, 4);
	struct filter_node *sub = f.root->children;
	ck_assert_int_eq(sub->type, LDAP_FILTER_SUBSTRINGS);
	ck_assert_str_eq(attribute_type_name(sub->desc.type), "cn");
	ck_assert(sub->has_initial && !sub->has_final);
	ck_assert(ber_view_eq_str(sub->initial, "babs"));
	struct filter_node *ge = sub->next;
	ck_assert(ber_view_eq_str(ge->value, "100"));
	ck_assert(!ge->undefined);
	struct filter_node *unknown = ge->next;
	ck_assert(unknown->undefined);
	ck_assert_ptr_null(unknown->desc.type);
}
END_TEST

START_TEST(compile_limits)
{
	struct ldap_filter *parsed = NULL;
	const char *text = "(&(!(!(cn=a)))(sn=b))";
	struct filter f;
	ck_assert_int_eq(filter_text_parse(text, strlen(text), &arena, NULL, &parsed, NULL), LUMEN_OK);
	struct filter_limits shallow = { 2, 100 };
	ck_assert_int_eq(filter_compile(fixture_schema, parsed, &shallow, &arena, &f), LUMEN_ELIMIT);
	ck_assert_ptr_null(f.root);
	struct filter_limits enough = { 3, 100 };
	ck_assert_int_eq(filter_compile(fixture_schema, parsed, &enough, &arena, &f), LUMEN_OK);
	struct filter_limits few = { 3, 4 };
	ck_assert_int_eq(filter_compile(fixture_schema, parsed, &few, &arena, &f), LUMEN_ELIMIT);
	/* malformed trees from a decoder */
	struct ldap_filter ext = { .type = LDAP_FILTER_EXTENSIBLE };
	ck_assert_int_eq(filter_compile(fixture_schema, &ext, NULL, &arena, &f), LUMEN_EMALFORMED);
	struct ldap_filter sub = { .type = LDAP_FILTER_SUBSTRINGS };
	sub.u.substrings.attr = fixture_view("cn");
	ck_assert_int_eq(filter_compile(fixture_schema, &sub, NULL, &arena, &f), LUMEN_EMALFORMED);
	struct ldap_filter not = { .type = LDAP_FILTER_NOT };
	ck_assert_int_eq(filter_compile(fixture_schema, &not, NULL, &arena, &f), LUMEN_EMALFORMED);
	ck_assert_int_eq(filter_compile(fixture_schema, NULL, NULL, &arena, &f), LUMEN_EINVAL);
	struct arena tiny;
	arena_init(&tiny, 16);
	ck_assert_int_eq(filter_compile(fixture_schema, parsed, NULL, &tiny, &f), LUMEN_ENOMEM);
	arena_free(&tiny);
}
END_TEST

START_TEST(decoded_entry_matches)
{
	/* filters evaluate the same against a cached (decoded) entry */
	struct ber_writer w;
	ck_assert_int_eq(ber_writer_init(&w, 0, 0), LUMEN_OK);
	ck_assert_int_eq(entry_encode(babs, &w), LUMEN_OK);
	struct entry *d = NULL;
	ck_assert_int_eq(entry_decode(fixture_schema, w.buf, w.len, &arena, &d), LUMEN_OK);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg((int)eval(cases[i].filter, d) == cases[i].on_babs, "%s", cases[i].filter);
	entry_free(d);
	ber_writer_free(&w);
}
END_TEST

/* e decoded with only the types f tests (entry_decode_selected). */
static struct entry *decode_tested(const struct entry *e, const char *filter)
{
	const struct attribute_type *types[8];
	size_t n = 99;
	struct filter f;
	ck_assert_int_eq(compile_text(filter, &f), LUMEN_OK);
	ck_assert_msg(filter_tested_types(&f, types, 8, &n), "%s names its types", filter);
	ck_assert_uint_le(n, 8);
	struct ber_writer w;
	ck_assert_int_eq(ber_writer_init(&w, 0, 0), LUMEN_OK);
	ck_assert_int_eq(entry_encode(e, &w), LUMEN_OK);
	struct entry_selection only = { types, n, false };
	struct entry *d = NULL;
	ck_assert_int_eq(entry_decode_selected(fixture_schema, w.buf, w.len, true, &only, &arena,
					       &d), LUMEN_OK);
	ber_writer_free(&w);
	return d;
}

START_TEST(tested_types_decide_as_whole)
{
	/* every case but the typeless extensible ones evaluates the same on
	 * an entry decoded with just the types the filter names */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *filter = cases[i].filter;
		if (strncmp(filter, "(:", 2) == 0)
			continue;
		struct entry *b = decode_tested(babs, filter), *n = decode_tested(numbers, filter);
		ck_assert_msg((int)eval(filter, b) == cases[i].on_babs, "%s on babs", filter);
		ck_assert_msg((int)eval(filter, n) == cases[i].on_numbers, "%s on numbers", filter);
		entry_free(b);
		entry_free(n);
	}
}
END_TEST

START_TEST(tested_types_listed)
{
	const struct attribute_type *types[3];
	size_t n;
	struct filter f;
	/* each type once, in the order met; unknown types name nothing */
	ck_assert_int_eq(compile_text("(&(cn=a)(|(sn=b)(cn=c))(!(nosuch=d))(objectClass=person))",
				      &f), LUMEN_OK);
	ck_assert(filter_tested_types(&f, types, 3, &n));
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(attribute_type_name(types[0]), "cn");
	ck_assert_str_eq(attribute_type_name(types[1]), "sn");
	ck_assert_str_eq(attribute_type_name(types[2]), "objectClass");
	/* one more than cap */
	ck_assert_int_eq(compile_text("(&(cn=a)(sn=b)(uid=c)(mail=d))", &f), LUMEN_OK);
	ck_assert(!filter_tested_types(&f, types, 3, &n));
	/* a typeless extensible match may test any attribute */
	ck_assert_int_eq(compile_text("(&(cn=a)(:caseIgnoreMatch:=jensen))", &f), LUMEN_OK);
	ck_assert(!filter_tested_types(&f, types, 3, &n));
	ck_assert_int_eq(compile_text("(:dn:caseExactMatch:=People)", &f), LUMEN_OK);
	ck_assert(!filter_tested_types(&f, types, 3, &n));
	/* ... unless it cannot match at all (an unknown rule) */
	ck_assert_int_eq(compile_text("(:noSuchRule:=x)", &f), LUMEN_OK);
	ck_assert(filter_tested_types(&f, types, 3, &n));
	ck_assert_uint_eq(n, 0);
	/* no filter tests nothing */
	ck_assert(filter_tested_types(NULL, types, 3, &n));
	ck_assert_uint_eq(n, 0);
}
END_TEST

/*
 * A provider standing in for the backend's computed attributes: seeAlso
 * plays entryDN (the entry's own DN) and uidNumber a computed count, so
 * the suite needs no operational schema.
 */
struct fake_provider {
	const struct attribute_type *types[2];
	int calls;
	bool fail;
};

static int fake_values(void *ctx, const struct attribute_type *type, const struct entry *e,
		       struct arena *a, struct entry_value *out, size_t cap, size_t *n)
{
	struct fake_provider *p = ctx;
	p->calls++;
	ck_assert_uint_ge(cap, 1);
	ck_assert_ptr_eq(a, &arena);
	if (p->fail)
		return LUMEN_EIO;
	if (type == p->types[0]) {
		out[0] = (struct entry_value){ e->dn, e->ndn };
	} else {
		if (e == numbers) {   /* this entry has no value of the computed type */
			*n = 0;
			return LUMEN_OK;
		}
		struct ber_view seven = fixture_view("7");
		out[0] = (struct entry_value){ seven, seven };
	}
	*n = 1;
	return LUMEN_OK;
}

static enum filter_result eval_virtual(const char *text, const struct entry *e,
				       const struct filter_virtual *v, bool names)
{
	struct filter f;
	ck_assert_int_eq(compile_text(text, &f), LUMEN_OK);
	ck_assert_msg(filter_names_virtual(&f, v) == names, "%s: names %d", text, !names);
	struct filter_evaluation how = { .virtual = v };
	enum filter_result r;
	ck_assert_int_eq(filter_test(&f, e, &how, &r), LUMEN_OK);
	return r;
}

START_TEST(virtual_attributes)
{
	struct fake_provider p = {
		.types = { schema_attribute_type(fixture_schema, "seeAlso", 7),
			   schema_attribute_type(fixture_schema, "uidNumber", 9) },
	};
	ck_assert(p.types[0] != NULL && p.types[1] != NULL);
	struct filter_virtual v = { p.types, 2, fake_values, &p, NULL };
	const char *dn = "(seeAlso=UID=BJensen, OU=people,dc=EXAMPLE,dc=com)";

	/* without a provider the types are plain (absent) attributes */
	ck_assert_int_eq(eval(dn, babs), F);
	ck_assert_int_eq(eval("(seeAlso=*)", babs), F);
	/* with one: the DN under distinguishedNameMatch, presence, NOT, AND */
	ck_assert_int_eq(eval_virtual(dn, babs, &v, true), T);
	ck_assert_int_eq(eval_virtual(dn, numbers, &v, true), F);
	ck_assert_int_eq(eval_virtual("(seeAlso=*)", numbers, &v, true), T);
	ck_assert_int_eq(eval_virtual("(!(seeAlso=*))", babs, &v, true), F);
	ck_assert_int_eq(eval_virtual("(&(uid=bjensen)(seeAlso=*))", babs, &v, true), T);
	ck_assert_int_eq(eval_virtual("(seeAlso;lang-de=*)", babs, &v, true), F);
	ck_assert_int_eq(eval_virtual("(seeAlso:distinguishedNameMatch:="
				      "uid=bjensen,ou=People,dc=example,dc=com)", babs, &v, true), T);
	/* computed values replace stored ones; ordering works on them */
	ck_assert_int_eq(eval_virtual("(uidNumber=7)", babs, &v, true), T);
	ck_assert_int_eq(eval_virtual("(uidNumber>=10)", babs, &v, true), F);
	ck_assert_int_eq(eval_virtual("(uidNumber=999)", numbers, &v, true), F);
	ck_assert_int_eq(eval_virtual("(uidNumber=*)", numbers, &v, true), F);
	/* an unnormalizable assertion stays Undefined without asking */
	int calls = p.calls;
	ck_assert_int_eq(eval_virtual("(uidNumber=x)", babs, &v, true), U);
	ck_assert_int_eq(p.calls, calls);
	/* other filters never call the provider */
	ck_assert_int_eq(eval_virtual("(uid=bjensen)", babs, &v, false), T);
	ck_assert_int_eq(p.calls, calls);
	/* a failing provider makes the item Undefined */
	p.fail = true;
	ck_assert_int_eq(eval_virtual("(seeAlso=*)", babs, &v, true), U);
	ck_assert_int_eq(eval_virtual("(|(uid=bjensen)(seeAlso=*))", babs, &v, true), T);
	ck_assert(!filter_names_virtual(NULL, &v));
}
END_TEST

/* The scratch arena: entry values normalized there, and its exhaustion
 * is an error, never a quiet non-match (a search would drop the entry). */
START_TEST(scratch_exhaustion_is_an_error)
{
	struct filter f;
	ck_assert_int_eq(compile_text("(cn~=Babs Jensen)", &f), LUMEN_OK);
	struct arena tiny;
	arena_init(&tiny, 8);
	struct filter_evaluation how = { .scratch = &tiny };
	enum filter_result r = FILTER_TRUE;
	ck_assert_int_eq(filter_test(&f, babs, &how, &r), LUMEN_ENOMEM);
	ck_assert_int_eq(r, FILTER_UNDEFINED);
	arena_free(&tiny);

	/* a scratch reset per entry never fills, however many entries */
	struct arena scratch;
	arena_init(&scratch, 4096);
	how.scratch = &scratch;
	size_t used_before = arena.used;
	for (int i = 0; i < 10000; i++) {
		arena_reset(&scratch);
		ck_assert_int_eq(filter_test(&f, babs, &how, &r), LUMEN_OK);
		ck_assert_int_eq(r, FILTER_TRUE);
	}
	ck_assert_uint_eq(arena.used, used_before);   /* the filter's arena untouched */
	arena_free(&scratch);
	ck_assert_int_eq(filter_test(NULL, babs, NULL, &r), LUMEN_EINVAL);
}
END_TEST

/* The access hook: begin once per entry, may_test per attribute tested. */
struct hook_log {
	const struct attribute_type *denied;
	unsigned begins;
	bool refuse_entry;
	const struct attribute_type *asked[16];
	size_t n_asked;
};

static bool hook_begin(void *ctx, const struct entry *e)
{
	struct hook_log *h = ctx;
	(void)e;
	h->begins++;
	return !h->refuse_entry;
}

static bool hook_may_test(void *ctx, const struct attribute_type *type)
{
	struct hook_log *h = ctx;
	if (h->n_asked < 16)
		h->asked[h->n_asked++] = type;
	return type != h->denied;
}

static enum filter_result eval_hooked(const char *text, struct hook_log *h)
{
	struct filter f;
	ck_assert_int_eq(compile_text(text, &f), LUMEN_OK);
	struct filter_access hook = { hook_begin, hook_may_test, h };
	struct filter_evaluation how = { .access = &hook };
	enum filter_result r;
	h->n_asked = 0;
	ck_assert_int_eq(filter_test(&f, babs, &how, &r), LUMEN_OK);
	return r;
}

START_TEST(access_hook_per_subtype)
{
	struct hook_log h = { .denied = schema_attribute_type(fixture_schema, "sn", 2) };
	ck_assert_int_eq(eval_hooked("(name=Jensen)", &h), U);       /* only sn holds it */
	ck_assert_int_eq(eval_hooked("(name=Babs Jensen)", &h), T);  /* cn does */
	ck_assert_int_eq(eval_hooked("(sn=nobody)", &h), U);
	ck_assert_int_eq(eval_hooked("(!(sn=nobody))", &h), U);
	ck_assert_int_eq(eval_hooked("(|(sn=nobody)(uid=bjensen))", &h), T);
	ck_assert_int_eq(eval_hooked("(&(sn=Jensen)(uid=bjensen))", &h), U);
	ck_assert_int_eq(eval_hooked("(sn>=A)", &h), U);
	ck_assert_int_eq(eval_hooked("(sn:caseExactMatch:=Jensen)", &h), U);
	ck_assert_int_eq(eval_hooked("(:caseIgnoreMatch:=Jensen)", &h), U);
	ck_assert_int_eq(eval_hooked("(:caseIgnoreMatch:=bjensen)", &h), T);
	ck_assert_int_eq(eval_hooked("(sn=*)", &h), U);
	ck_assert_uint_eq(h.begins, 11);
	/* the hook is asked about the subtypes tested, never the supertype */
	eval_hooked("(name=nobody)", &h);
	ck_assert_uint_gt(h.n_asked, 0);
	for (size_t i = 0; i < h.n_asked; i++)
		ck_assert_str_ne(h.asked[i]->names[0], "name");
	/* an entry that may not be tested at all is Undefined */
	h.refuse_entry = true;
	ck_assert_int_eq(eval_hooked("(uid=bjensen)", &h), U);
	ck_assert_int_eq(eval_hooked("(objectClass=*)", &h), U);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("filter");
	TCase *tc = tcase_create("filter");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, evaluate_cases, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(tc, compile_walk);
	tcase_add_test(tc, compile_limits);
	tcase_add_test(tc, decoded_entry_matches);
	tcase_add_test(tc, virtual_attributes);
	tcase_add_test(tc, scratch_exhaustion_is_an_error);
	tcase_add_test(tc, access_hook_per_subtype);
	tcase_add_test(tc, tested_types_decide_as_whole);
	tcase_add_test(tc, tested_types_listed);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
