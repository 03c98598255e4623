/*
 * test_entry_send.c — SearchResultEntry encoding from a whole entry and
 * from a partial entry's outline: for every kind of selection (all user,
 * all operational, both, names with subtypes, typesOnly, an attribute
 * access control hides) both give the same bytes; the outline is used only
 * without Matched Values; a DN-only answer sends no attribute either way.
 */
#include <check.h>
#include <string.h>

#include "entry_fixture.h"
#include "entry_send.h"
#include "lumen_error.h"

static struct arena arena;

static const struct attribute_type *type_of(const char *name)
{
	const struct attribute_type *t = schema_attribute_type(fixture_schema, name, strlen(name));
	ck_assert_ptr_nonnull(t);
	return t;
}

static struct entry *stored;   /* as back-mdb keeps it: with operational attributes */
static struct entry *whole, *partial;

static void decode_both(void)
{
	const struct attribute_type *object_class = type_of("objectClass");
	struct entry_selection only = { &object_class, 1, true };
	struct ber_writer w;
	ck_assert_int_eq(ber_writer_init(&w, 0, 0), LUMEN_OK);
	ck_assert_int_eq(entry_encode(stored, &w), LUMEN_OK);
	ck_assert_int_eq(entry_decode_selected(fixture_schema, w.buf, w.len, true, NULL, NULL,
					       &whole), LUMEN_OK);
	ck_assert_int_eq(entry_decode_selected(fixture_schema, w.buf, w.len, true, &only, NULL,
					       &partial), LUMEN_OK);
	ber_writer_free(&w);
	ck_assert_ptr_nonnull(partial->outline);
	ck_assert_uint_eq(partial->n_attributes, 1);
}

static void setup(void)
{
	fixture_schema_setup();
	arena_init(&arena, 1u << 20);
	stored = fixture_entry("uid=a,dc=example,dc=com",
			       "objectClass: inetOrgPerson\nuid: a\ncn: Alpha\ncn: Beta\n"
			       "cn;lang-de: Alfa\nsn: Zed\nmail: a@x\ndescription: d\n"
			       "entryUUID: 6b8e7c2a-1d3f-4e5a-9b0c-2d4e6f8a0b1c\n"
			       "createTimestamp: 20261126120000Z");
	decode_both();
}

static void teardown(void)
{
	entry_free(partial);
	entry_free(whole);
	entry_free(stored);
	arena_free(&arena);
	fixture_schema_teardown();
}

/* Reads everything but description (an attribute rule's verdict). */
static bool not_description(void *arg, const struct attribute_type *type)
{
	(void)arg;
	return type != type_of("description");
}

/* The SearchResultEntry of e under sel, copied into the arena. */
static struct ber_view sent(const struct attribute_selection *sel, const struct entry *e,
			    const struct backend_entry_info *info)
{
	struct ber_writer w;
	ck_assert_int_eq(ber_writer_init(&w, 256, 0), LUMEN_OK);
	entry_send_body(sel, e, info, &w);
	ck_assert_int_eq(ber_writer_error(&w), LUMEN_OK);
	struct ber_view out = { arena_memdup(&arena, w.buf, w.len), w.len };
	ber_writer_free(&w);
	return out;
}

/* How many PartialAttributes the entry in `bytes` carries. */
static size_t attributes_in(struct ber_view bytes)
{
	struct ber_reader r, body, list;
	struct ber_view dn;
	ber_reader_init(&r, bytes.ptr, bytes.len);
	ck_assert_int_eq(ber_enter(&r, BER_TAG_APP_CONS(LDAP_OP_SEARCH_ENTRY), &body), LUMEN_OK);
	ck_assert_int_eq(ber_read_octets(&body, BER_TAG_OCTET_STRING, &dn), LUMEN_OK);
	ck_assert_int_eq(ber_enter(&body, BER_TAG_SEQUENCE, &list), LUMEN_OK);
	size_t n = 0;
	while (!ber_reader_at_end(&list)) {
		struct ber_element el;
		ck_assert_int_eq(ber_read_element(&list, &el), LUMEN_OK);
		n++;
	}
	return n;
}

/* Whole and outline give the same bytes; `n` attributes are sent. */
static void expect_same_answer(const char *const *names, size_t n_names, bool types_only,
			       bool hide_description, size_t n)
{
	struct ber_view views[4];
	struct attribute_selection sel;
	for (size_t i = 0; i < n_names; i++)
		views[i] = fixture_view(names[i]);
	ck_assert_int_eq(attribute_selection_init(&sel, fixture_schema, views, n_names,
						  types_only, &arena), LUMEN_OK);
	if (hide_description)
		sel.may_read = not_description;
	struct ber_view from_whole = sent(&sel, whole, NULL), from_outline = sent(&sel, partial, NULL);
	ck_assert(ber_view_eq(from_whole, from_outline));
	ck_assert_uint_eq(attributes_in(from_outline), n);
}

START_TEST(outline_sends_what_whole_sends)
{
	static const char *const all[] = { "*" }, *const operational[] = { "+" },
				 *const both[] = { "*", "+" }, *const named[] = { "name", "mail" },
				 *const mixed[] = { "*", "entryUUID" };
	expect_same_answer(NULL, 0, false, false, 7);      /* no list: all user */
	expect_same_answer(all, 1, false, false, 7);
	expect_same_answer(all, 1, true, false, 7);        /* typesOnly */
	expect_same_answer(all, 1, false, true, 6);        /* description hidden */
	/* + also brings the computed entryDN and subschemaSubentry */
	expect_same_answer(operational, 1, false, false, 4);
	expect_same_answer(both, 2, false, false, 11);
	expect_same_answer(named, 2, false, false, 4);     /* cn, cn;lang-de, sn, mail */
	expect_same_answer(mixed, 2, false, false, 8);
}
END_TEST

/* Matched Values looks at values: the decoded attributes are what is sent. */
static bool keep_all(void *arg, const struct entry_attribute *a, size_t i)
{
	(void)arg;
	(void)a;
	(void)i;
	return true;
}

START_TEST(outline_not_used_for_matched_values)
{
	struct attribute_selection sel;
	ck_assert_int_eq(attribute_selection_init(&sel, fixture_schema, NULL, 0, false, &arena),
			 LUMEN_OK);
	sel.keep_value = keep_all;
	ck_assert_uint_eq(attributes_in(sent(&sel, partial, NULL)), 1);   /* objectClass */
	ck_assert_uint_eq(attributes_in(sent(&sel, whole, NULL)), 7);
}
END_TEST

/* The computed types are remembered per thread for one schema: a new
 * schema (a reload) gets its own, never the previous one's (freed). */
START_TEST(computed_types_follow_the_schema)
{
	static const char *const names[] = { "entryDN", "subschemaSubentry",
					     "hasSubordinates", "numSubordinates" };
	for (int round = 0; round < 2; round++) {
		struct attribute_selection sel;
		struct ber_view all = { (const uint8_t *)"+", 1 };
		ck_assert_int_eq(attribute_selection_init(&sel, fixture_schema, &all, 1, false,
							  &arena), LUMEN_OK);
		for (int c = 0; c < COMPUTED_ATTRIBUTE_COUNT; c++) {
			ck_assert_ptr_eq(sel.computed_type[c], type_of(names[c]));
			ck_assert(sel.computed[c]);
		}
		teardown();   /* the schema freed, another built in its place */
		setup();
	}
}
END_TEST

START_TEST(dn_only_sends_no_attribute)
{
	struct attribute_selection sel;
	ck_assert_int_eq(attribute_selection_init(&sel, fixture_schema, NULL, 0, false, &arena),
			 LUMEN_OK);
	struct backend_entry_info info = { .dn = whole->dn, .dn_only = true };
	ck_assert_uint_eq(attributes_in(sent(&sel, partial, &info)), 0);
	ck_assert_uint_eq(attributes_in(sent(&sel, whole, &info)), 0);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("entry_send");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, outline_sends_what_whole_sends);
	tcase_add_test(tc, outline_not_used_for_matched_values);
	tcase_add_test(tc, dn_only_sends_no_attribute);
	tcase_add_test(tc, computed_types_follow_the_schema);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
