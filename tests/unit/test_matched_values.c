/*
 * test_matched_values.c — the ValuesReturnFilter decoder and the values it
 * keeps: each SimpleFilterItem kind, supertypes, options and objectClass
 * subclasses, the union of items, unknown CHOICEs and types that keep
 * nothing, the element bound, malformed lists and items, and what a
 * SearchResultEntry carries through attribute_selection.keep_value.
 */
#include <check.h>
#include <string.h>

#include "entry_fixture.h"
#include "entry_send.h"
#include "lumen_error.h"
#include "matched_values.h"
#include "pdu_fixture.h"

static struct arena arena;
static struct ldap_decode_limits limits;
static struct entry *person;

static void setup(void)
{
	fixture_schema_setup();
	arena_init(&arena, 1u << 20);
	ldap_decode_limits_default(&limits);
	person = fixture_entry("uid=a,dc=example,dc=com",
			       "objectClass: inetOrgPerson\nuid: a\ncn: Alpha\ncn: Beta\n"
			       "cn: Gamma\ncn;lang-de: Alpha\nsn: Alpha\nsn: Zed\nmail: a@x\n"
			       "telephoneNumber: +1 555 1234");
}

static void teardown(void)
{
	entry_free(person);
	arena_free(&arena);
	fixture_schema_teardown();
}

static int decode(const char *spec, struct values_return_filter *out)
{
	struct pdu p;
	build_pdu(spec, &p);
	uint8_t *copy = arena_memdup(&arena, p.bytes, p.len);
	return values_return_filter_decode((struct ber_view){ copy, p.len }, fixture_schema,
					   &limits, &arena, out);
}

/* The kept values of attribute `name` (with options as written), joined by '|'. */
static const char *kept(const struct values_return_filter *vrf, const char *name)
{
	static char out[256];
	struct matched_values mv;
	out[0] = '\0';
	matched_values_begin(&mv, vrf);
	for (size_t i = 0; i < person->n_attributes; i++) {
		const struct entry_attribute *a = &person->attributes[i];
		if (!ber_view_eq_str_nocase(a->name, name))
			continue;
		for (size_t j = 0; j < a->n_values; j++) {
			if (!matched_values_keep(&mv, a, j))
				continue;
			if (out[0] != '\0')
				strcat(out, "|");
			strncat(out, (const char *)a->values[j].value.ptr, a->values[j].value.len);
		}
	}
	matched_values_end(&mv);
	return out;
}

START_TEST(item_kinds)
{
	struct values_return_filter vrf;
	ck_assert_int_eq(decode("30( a3( 04'cn' 04'alpha' ) )", &vrf), LUMEN_OK);
	ck_assert_uint_eq(vrf.n_items, 1);
	ck_assert_str_eq(kept(&vrf, "cn"), "Alpha");
	ck_assert_str_eq(kept(&vrf, "cn;lang-de"), "Alpha");
	ck_assert_str_eq(kept(&vrf, "sn"), "");
	ck_assert_int_eq(decode("30( a4( 04'cn' 30( 81'mm' ) ) )", &vrf), LUMEN_OK);
	ck_assert_str_eq(kept(&vrf, "cn"), "Gamma");
	ck_assert_int_eq(decode("30( 87'mail' )", &vrf), LUMEN_OK);
	ck_assert_str_eq(kept(&vrf, "mail"), "a@x");
	ck_assert_str_eq(kept(&vrf, "cn"), "");
	ck_assert_int_eq(decode("30( a9( 81'caseExactMatch' 82'cn' 83'Beta' ) )", &vrf), LUMEN_OK);
	ck_assert_str_eq(kept(&vrf, "cn"), "Beta");
	ck_assert_int_eq(decode("30( a9( 81'caseExactMatch' 82'cn' 83'beta' ) )", &vrf), LUMEN_OK);
	ck_assert_str_eq(kept(&vrf, "cn"), "");
	ck_assert_int_eq(decode("30( a3( 04'telephoneNumber' 04'+15551234' ) )", &vrf), LUMEN_OK);
	ck_assert_str_eq(kept(&vrf, "telephoneNumber"), "+1 555 1234");
	/* no ordering rule on cn: Undefined, nothing kept */
	ck_assert_int_eq(decode("30( a5( 04'cn' 04'b' ) )", &vrf), LUMEN_OK);
	ck_assert_str_eq(kept(&vrf, "cn"), "");
}
END_TEST

START_TEST(supertypes_classes_and_unions)
{
	struct values_return_filter vrf;
	ck_assert_int_eq(decode("30( a3( 04'name' 04'alpha' ) )", &vrf), LUMEN_OK);
	ck_assert_str_eq(kept(&vrf, "cn"), "Alpha");
	ck_assert_str_eq(kept(&vrf, "sn"), "Alpha");
	ck_assert_int_eq(decode("30( a3( 04'cn;lang-de' 04'alpha' ) )", &vrf), LUMEN_OK);
	ck_assert_str_eq(kept(&vrf, "cn"), "");
	ck_assert_str_eq(kept(&vrf, "cn;lang-de"), "Alpha");
	ck_assert_int_eq(decode("30( a3( 04'objectClass' 04'person' ) )", &vrf), LUMEN_OK);
	ck_assert_str_eq(kept(&vrf, "objectClass"), "inetOrgPerson");
	ck_assert_int_eq(decode("30( a3( 04'cn' 04'beta' ) a3( 04'cn' 04'gamma' ) "
				"a3( 04'sn' 04'zed' ) )", &vrf), LUMEN_OK);
	ck_assert_uint_eq(vrf.n_items, 3);
	ck_assert_str_eq(kept(&vrf, "cn"), "Beta|Gamma");
	ck_assert_str_eq(kept(&vrf, "sn"), "Zed");
}
END_TEST

START_TEST(items_that_never_match)
{
	struct values_return_filter vrf;
	/* AND, an OCTET STRING, a constructed present: kept as never-matching items */
	ck_assert_int_eq(decode("30( a0( a3( 04'cn' 04'alpha' ) ) 04'x' a7( 04'cn' ) "
				"a3( 04'nosuch' 04'x' ) a3( 04'c n' 04'x' ) )", &vrf), LUMEN_OK);
	ck_assert_uint_eq(vrf.n_items, 5);
	ck_assert_str_eq(kept(&vrf, "cn"), "");
	ck_assert_int_eq(decode("30( a1( ) a3( 04'cn' 04'alpha' ) )", &vrf), LUMEN_OK);
	ck_assert_str_eq(kept(&vrf, "cn"), "Alpha");
	ck_assert_int_eq(decode("30( )", &vrf), LUMEN_OK);
	ck_assert_uint_eq(vrf.n_items, 0);
}
END_TEST

START_TEST(malformed)
{
	struct values_return_filter vrf;
	ck_assert_int_eq(decode("a3( 04'cn' 04'alpha' )", &vrf), LUMEN_EMALFORMED);
	ck_assert_int_eq(decode("30( a3( 04'cn' 04'alpha' ) ) 00", &vrf), LUMEN_EMALFORMED);
	ck_assert_int_eq(decode("3005 01", &vrf), LUMEN_EMALFORMED);
	ck_assert_int_eq(decode("30( a3( 04'cn' ) )", &vrf), LUMEN_EMALFORMED);
	ck_assert_int_eq(decode("30( a9( 82'cn' ) )", &vrf), LUMEN_EMALFORMED);
	ck_assert_int_eq(decode("30( a9( 83'x' ) )", &vrf), LUMEN_EMALFORMED);
	ck_assert_int_eq(decode("30( a4( 04'cn' 30( ) ) )", &vrf), LUMEN_EMALFORMED);
	ck_assert_int_eq(decode("", &vrf), LUMEN_EMALFORMED);
	limits.max_elements = 2;
	ck_assert_int_eq(decode("30( 87'cn' 87'sn' )", &vrf), LUMEN_OK);
	ck_assert_int_eq(decode("30( 87'cn' 87'sn' 87'mail' )", &vrf), LUMEN_ELIMIT);
}
END_TEST

START_TEST(search_entry_carries_kept_values)
{
	struct values_return_filter vrf;
	struct attribute_selection sel;
	struct matched_values mv;
	struct ber_writer w;
	const struct ber_view names[] = { fixture_view("cn"), fixture_view("mail") };
	ck_assert_int_eq(decode("30( a3( 04'cn' 04'beta' ) )", &vrf), LUMEN_OK);
	ck_assert_int_eq(attribute_selection_init(&sel, fixture_schema, names, 2, false, &arena),
			 LUMEN_OK);
	matched_values_begin(&mv, &vrf);
	matched_values_select(&mv, &sel);
	ck_assert_int_eq(ber_writer_init(&w, 256, 0), LUMEN_OK);
	entry_send_body(&sel, person, NULL, &w);
	ck_assert_int_eq(ber_writer_error(&w), LUMEN_OK);
	struct pdu expect;
	build_pdu("64( 04'uid=a,dc=example,dc=com' 30( 30( 04'cn' 31( 04'Beta' ) ) ) )", &expect);
	ck_assert_uint_eq(w.len, expect.len);
	ck_assert(memcmp(w.buf, expect.bytes, w.len) == 0);
	/* typesOnly ignores the filter */
	ck_assert_int_eq(attribute_selection_init(&sel, fixture_schema, names, 2, true, &arena),
			 LUMEN_OK);
	matched_values_select(&mv, &sel);
	ck_assert_ptr_null(sel.keep_value);
	ber_writer_free(&w);
	matched_values_end(&mv);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("matched_values");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, item_kinds);
	tcase_add_test(tc, supertypes_classes_and_unions);
	tcase_add_test(tc, items_that_never_match);
	tcase_add_test(tc, malformed);
	tcase_add_test(tc, search_entry_carries_kept_values);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
