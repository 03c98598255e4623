/*
 * test_search_sort.c — sort keys and the VLV window (src/server/
 * search_sort.c): key resolution as slapd's sssvlv answers it, key
 * comparison (ordering rule, reverse, absent values last, the second key
 * breaking ties), least/greatest of a multi-valued key, a key the
 * requester may not read counting as absent, the sortvlv-max bound, ties
 * in arrival order, greaterThanOrEqual, the window's positions, the rank
 * prefixes agreeing with the rule's order (shared leading bytes, values
 * shorter than eight bytes, reverse keys, absent values, rules that do
 * not order bytes), and what a kept context is bound to.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "entry_fixture.h"
#include "ldap_result_codes.h"
#include "lumen_error.h"
#include "search_sort.h"

static struct sort_spec spec;

static void setup(void)
{
	fixture_schema_setup();
}

static void teardown(void)
{
	fixture_schema_teardown();
}

/* Resolve keys "sn:rule", "-cn", ... into spec; the LDAP code. */
static int resolve(const char *const *keys, size_t n)
{
	struct request_controls c;
	const char *why = NULL;
	memset(&c, 0, sizeof(c));
	for (size_t i = 0; i < n; i++) {
		const char *k = keys[i];
		c.sort_keys[i].reverse = k[0] == '-';
		k += c.sort_keys[i].reverse;
		const char *colon = strchr(k, ':');
		size_t len = colon ? (size_t)(colon - k) : strlen(k);
		c.sort_keys[i].attribute = (struct ber_view){ (const uint8_t *)k, len };
		if (colon)
			c.sort_keys[i].ordering_rule = fixture_view(colon + 1);
	}
	c.n_sort_keys = n;
	return sort_spec_resolve(fixture_schema, &c, &spec, &why);
}

START_TEST(keys_resolve_as_slapd)
{
	const char *unknown[] = { "nosuchattr" };
	const char *no_ordering[] = { "sn" };
	const char *bad_rule[] = { "sn:nosuchrule" };
	const char *ok[] = { "sn:caseIgnoreOrderingMatch", "-employeeNumber:integerOrderingMatch" };
	ck_assert_int_eq(resolve(unknown, 1), LDAP_NO_SUCH_ATTRIBUTE);
	ck_assert_int_eq(resolve(no_ordering, 1), LDAP_INAPPROPRIATE_MATCHING);
	ck_assert_int_eq(resolve(bad_rule, 1), LDAP_INAPPROPRIATE_MATCHING);
	ck_assert_int_eq(resolve(ok, 2), LDAP_SUCCESS);
	ck_assert_uint_eq(spec.n_keys, 2);
	ck_assert(!spec.keys[0].reverse && spec.keys[1].reverse);
}
END_TEST

static struct ber_view v(const char *s)
{
	return s ? fixture_view(s) : (struct ber_view){ NULL, 0 };
}

START_TEST(compare_keys)
{
	const char *keys[] = { "employeeNumber:integerOrderingMatch",
			       "sn:caseIgnoreOrderingMatch" };
	ck_assert_int_eq(resolve(keys, 2), LDAP_SUCCESS);
	struct ber_view a[2] = { v("9"), v("b") }, b[2] = { v("10"), v("a") };
	ck_assert_int_lt(sort_compare_keys(&spec, a, b), 0);      /* 9 < 10 as integers */
	struct ber_view c[2] = { v("9"), v("a") };
	ck_assert_int_gt(sort_compare_keys(&spec, a, c), 0);      /* second key decides */
	ck_assert_int_eq(sort_compare_keys(&spec, a, a), 0);
	struct ber_view absent[2] = { v(NULL), v("a") };
	ck_assert_int_lt(sort_compare_keys(&spec, a, absent), 0); /* absent last */
	ck_assert_int_gt(sort_compare_keys(&spec, absent, a), 0);
	const char *rev[] = { "-employeeNumber:integerOrderingMatch" };
	ck_assert_int_eq(resolve(rev, 1), LDAP_SUCCESS);
	ck_assert_int_gt(sort_compare_keys(&spec, a, b), 0);
	ck_assert_int_gt(sort_compare_keys(&spec, a, absent), 0); /* reverse: absent first */
}
END_TEST

static bool deny_all(void *arg, const struct attribute_type *type)
{
	(void)arg;
	(void)type;
	return false;
}

static void add(struct sort_collection *c, const char *dn, const char *lines,
		bool readable)
{
	struct entry *e = fixture_entry(dn, lines);
	ck_assert_int_eq(sort_collection_add(c, e, 100 + c->n, readable ? NULL : deny_all, NULL),
			 LUMEN_OK);
	entry_free(e);
}

static const char *dn_at(const struct sort_collection *c, size_t i)
{
	return (const char *)sort_item_dn(c, sort_collection_at(c, i)).ptr;
}

START_TEST(collect_and_sort)
{
	const char *keys[] = { "sn:caseIgnoreOrderingMatch" };
	struct sort_collection c;
	ck_assert_int_eq(resolve(keys, 1), LDAP_SUCCESS);
	sort_collection_init(&c, &spec, 5, true);
	add(&c, "cn=a", "cn: a\nsn: Miller", true);
	add(&c, "cn=b", "cn: b\nsn: zed\nsn: Adams", true);   /* least value: adams */
	add(&c, "cn=c", "cn: c", true);                       /* absent: last */
	add(&c, "cn=d", "cn: d\nsn: Aardvark", false);       /* unreadable: absent */
	add(&c, "cn=e", "cn: e\nsn: miller", true);           /* ties keep arrival */
	struct entry *e = fixture_entry("cn=f", "cn: f\nsn: x");
	ck_assert_int_eq(sort_collection_add(&c, e, 200, NULL, NULL), LUMEN_ELIMIT);
	entry_free(e);
	ck_assert_int_eq(sort_collection_sort(&c), LUMEN_OK);
	ck_assert_uint_eq(c.n, 5);
	ck_assert_str_eq(dn_at(&c, 0), "cn=b");
	ck_assert_str_eq(dn_at(&c, 1), "cn=a");
	ck_assert_str_eq(dn_at(&c, 2), "cn=e");
	ck_assert_str_eq(dn_at(&c, 3), "cn=c");
	ck_assert_str_eq(dn_at(&c, 4), "cn=d");
	size_t at;
	ck_assert_int_eq(sort_find_value(&c, fixture_view("B"), &at), LUMEN_OK);
	ck_assert_uint_eq(at, 1);
	ck_assert_int_eq(sort_find_value(&c, fixture_view("zzz"), &at), LUMEN_OK);
	ck_assert_uint_eq(at, 3);                       /* before the absent ones */
	sort_collection_free(&c);
}
END_TEST

START_TEST(reverse_takes_the_greatest_value)
{
	const char *keys[] = { "-sn:caseIgnoreOrderingMatch" };
	struct sort_collection c;
	ck_assert_int_eq(resolve(keys, 1), LDAP_SUCCESS);
	sort_collection_init(&c, &spec, 10, true);
	add(&c, "cn=a", "cn: a\nsn: m", true);
	add(&c, "cn=b", "cn: b\nsn: a\nsn: z", true);
	add(&c, "cn=c", "cn: c", true);
	ck_assert_int_eq(sort_collection_sort(&c), LUMEN_OK);
	ck_assert_str_eq(dn_at(&c, 0), "cn=c");
	ck_assert_str_eq(dn_at(&c, 1), "cn=b");
	ck_assert_str_eq(dn_at(&c, 2), "cn=a");
	sort_collection_free(&c);
}
END_TEST

/* Entries keep values normalized by the type's equality rule (sn:
 * caseIgnoreMatch). A key whose ordering rule normalizes the same way may
 * use that form; caseExactOrderingMatch must not, or "B" and "b" tie. */
START_TEST(stored_form_only_when_the_rule_normalizes_alike)
{
	const char *exact[] = { "sn:caseExactOrderingMatch" };
	struct sort_collection c;
	ck_assert_int_eq(resolve(exact, 1), LDAP_SUCCESS);
	sort_collection_init(&c, &spec, 10, true);
	add(&c, "cn=a", "cn: a\nsn: b", true);
	add(&c, "cn=b", "cn: b\nsn: a", true);
	add(&c, "cn=c", "cn: c\nsn: B", true);
	ck_assert_int_eq(sort_collection_sort(&c), LUMEN_OK);
	ck_assert_str_eq(dn_at(&c, 0), "cn=c");         /* "B" < "a" < "b" in case-exact order */
	ck_assert_str_eq(dn_at(&c, 1), "cn=b");
	ck_assert_str_eq(dn_at(&c, 2), "cn=a");
	sort_collection_free(&c);

	const char *ignore[] = { "sn:caseIgnoreOrderingMatch" };
	ck_assert_int_eq(resolve(ignore, 1), LDAP_SUCCESS);
	sort_collection_init(&c, &spec, 10, true);
	add(&c, "cn=a", "cn: a\nsn: b", true);
	add(&c, "cn=b", "cn: b\nsn: a", true);
	add(&c, "cn=c", "cn: c\nsn: B", true);
	ck_assert_int_eq(sort_collection_sort(&c), LUMEN_OK);
	ck_assert_str_eq(dn_at(&c, 0), "cn=b");         /* "a" < "b" = "B" (arrival order) */
	ck_assert_str_eq(dn_at(&c, 1), "cn=a");
	ck_assert_str_eq(dn_at(&c, 2), "cn=c");
	ck_assert_str_eq((const char *)sort_collection_at(&c, 2)->keys[0].ptr, "b");
	sort_collection_free(&c);
}
END_TEST

static void window(uint32_t before, uint32_t after, uint32_t offset, uint32_t count, size_t n,
		   size_t start, size_t len, uint32_t target, int result)
{
	struct vlv_request r = { before, after, false, offset, count, { NULL, 0 }, { NULL, 0 } };
	struct sort_window w;
	sort_vlv_window(&r, n, n, &w);
	ck_assert_int_eq(w.vlv_result, result);
	if (result != 0)
		return;
	ck_assert_uint_eq(w.target_position, target);
	ck_assert_uint_eq(w.start, start);
	ck_assert_uint_eq(w.count, len);
}

START_TEST(vlv_window_by_offset)
{
	window(1, 2, 3, 0, 8, 1, 4, 3, 0);       /* around the 3rd */
	window(1, 1, 2, 4, 8, 2, 3, 4, 0);       /* 2 of 4 scales to 4 of 8 */
	window(0, 2, 0, 0, 8, 7, 1, 8, 0);       /* offset == count: the last */
	window(2, 0, 1, 0, 8, 0, 1, 1, 0);       /* before clipped at the first */
	window(0, 2, 100, 0, 8, 0, 0, 0, SORT_VLV_OFFSET_RANGE);
	window(0, 2, 9, 8, 8, 0, 0, 0, SORT_VLV_OFFSET_RANGE);
	window(1, 1, 1, 0, 0, 0, 0, 1, 0);       /* an empty list */
}
END_TEST

START_TEST(vlv_window_by_value)
{
	struct vlv_request r = { 1, 1, true, 0, 0, { (const uint8_t *)"x", 1 }, { NULL, 0 } };
	struct sort_window w;
	sort_vlv_window(&r, 8, 2, &w);
	ck_assert_uint_eq(w.target_position, 3);
	ck_assert_uint_eq(w.start, 1);
	ck_assert_uint_eq(w.count, 3);
	sort_vlv_window(&r, 8, 8, &w);           /* after every entry: n + 1 */
	ck_assert_uint_eq(w.target_position, 9);
	ck_assert_uint_eq(w.start, 7);
	ck_assert_uint_eq(w.count, 1);
}
END_TEST

/* Items ranked by their first eight bytes must still come out in the
 * rule's order: long shared prefixes, short values, 0xff bytes, absent. */
static void check_sorted(const char *key, const char *const *sns, size_t n,
			 const char *const *expected)
{
	struct sort_collection c;
	char dn[32], lines[96];
	ck_assert_int_eq(resolve(&key, 1), LDAP_SUCCESS);
	sort_collection_init(&c, &spec, 64, true);
	for (size_t i = 0; i < n; i++) {
		snprintf(dn, sizeof(dn), "cn=%zu", i);
		if (sns[i] != NULL)
			snprintf(lines, sizeof(lines), "cn: %zu\nsn: %s", i, sns[i]);
		else
			snprintf(lines, sizeof(lines), "cn: %zu", i);
		add(&c, dn, lines, true);
	}
	ck_assert_int_eq(sort_collection_sort(&c), LUMEN_OK);
	for (size_t i = 0; i < n; i++) {
		ck_assert_str_eq(dn_at(&c, i), expected[i]);
		ck_assert_uint_eq(sort_collection_at(&c, i)->id,
				  100 + (uint64_t)atoi(expected[i] + 3));
	}
	ck_assert_uint_ge(sort_collection_bytes(&c), n * sizeof(struct sort_item));
	sort_collection_free(&c);
}

START_TEST(ranks_agree_with_the_rule)
{
	const char *sns[] = { "abcdefghZ", "abcdefgh", "abc", "ab", NULL, "abcdefghA",
			      "\xc3\xbf\xc3\xbf\xc3\xbf\xc3\xbf\xc3\xbfx", "b" };
	const char *up[] = { "cn=3", "cn=2", "cn=1", "cn=5", "cn=0", "cn=7", "cn=6", "cn=4" };
	check_sorted("sn:caseIgnoreOrderingMatch", sns, 8, up);
	const char *down[] = { "cn=4", "cn=6", "cn=7", "cn=0", "cn=5", "cn=1", "cn=2", "cn=3" };
	check_sorted("-sn:caseIgnoreOrderingMatch", sns, 8, down);
	/* integerOrderingMatch orders numbers, not bytes: no prefix */
	const char *numbers[] = { "10", "9", "-3", "100", NULL, "9" };
	const char *by_value[] = { "cn=2", "cn=1", "cn=5", "cn=0", "cn=3", "cn=4" };
	const char *key = "employeeNumber:integerOrderingMatch";
	struct sort_collection c;
	ck_assert_int_eq(resolve(&key, 1), LDAP_SUCCESS);
	sort_collection_init(&c, &spec, 64, false);
	for (size_t i = 0; i < 6; i++) {
		char dn[32], lines[96];
		snprintf(dn, sizeof(dn), "cn=%zu", i);
		if (numbers[i] != NULL)
			snprintf(lines, sizeof(lines), "cn: %zu\nemployeeNumber: %s", i, numbers[i]);
		else
			snprintf(lines, sizeof(lines), "cn: %zu", i);
		add(&c, dn, lines, true);
	}
	ck_assert_int_eq(sort_collection_sort(&c), LUMEN_OK);
	for (size_t i = 0; i < 6; i++) {
		ck_assert_ptr_null(sort_item_dn(&c, sort_collection_at(&c, i)).ptr);  /* IDs only */
		ck_assert_uint_eq(sort_collection_at(&c, i)->id,
				  100 + (uint64_t)atoi(by_value[i] + 3));
	}
	sort_collection_free(&c);
}
END_TEST

/* Many items over several merge passes: ordered by key, ties (equal
 * keys, and keys sharing their first eight bytes) in arrival order. */
START_TEST(merge_sort_is_stable)
{
	const char *key = "sn:caseIgnoreOrderingMatch";
	struct sort_collection c;
	ck_assert_int_eq(resolve(&key, 1), LDAP_SUCCESS);
	sort_collection_init(&c, &spec, 1000, false);
	for (int i = 0; i < 301; i++) {
		char dn[32], lines[96];
		snprintf(dn, sizeof(dn), "cn=%d", i);
		snprintf(lines, sizeof(lines), "cn: %d\nsn: sharedprefix%d", i, (i * 37) % 11);
		add(&c, dn, lines, true);
	}
	ck_assert_int_eq(sort_collection_sort(&c), LUMEN_OK);
	for (size_t i = 1; i < c.n; i++) {
		const struct sort_item *a = sort_collection_at(&c, i - 1), *b = sort_collection_at(&c, i);
		int cmp = sort_compare_keys(&spec, a->keys, b->keys);
		ck_assert_int_le(cmp, 0);
		if (cmp == 0)
			ck_assert_uint_lt(a->id, b->id);          /* arrival order */
	}
	ck_assert_str_eq((const char *)sort_collection_at(&c, 0)->keys[0].ptr, "sharedprefix0");
	ck_assert_str_eq((const char *)sort_collection_at(&c, 300)->keys[0].ptr, "sharedprefix9");
	sort_collection_free(&c);
}
END_TEST

START_TEST(empty_collection_sorts)
{
	const char *key = "sn:caseIgnoreOrderingMatch";
	struct sort_collection c;
	size_t at = 99;
	ck_assert_int_eq(resolve(&key, 1), LDAP_SUCCESS);
	sort_collection_init(&c, &spec, 4, false);
	ck_assert_int_eq(sort_collection_sort(&c), LUMEN_OK);
	ck_assert_int_eq(sort_find_value(&c, fixture_view("a"), &at), LUMEN_OK);
	ck_assert_uint_eq(at, 0);
	sort_collection_free(&c);
}
END_TEST

/* A kept context answers only its own contextID, database, identity and
 * request bytes; two contexts never share a contextID. */
START_TEST(context_binding)
{
	const char *key = "sn:caseIgnoreOrderingMatch";
	int db_a, db_b;
	struct sort_binding b = { &db_a, fixture_view("cn=reader"), fixture_view("req:(cn=a)") };
	struct sort_context *ctx = NULL, *other = NULL;
	ck_assert_int_eq(resolve(&key, 1), LDAP_SUCCESS);
	ck_assert_int_eq(sort_context_create(&spec, &b, 10, false, &ctx), LUMEN_OK);
	ck_assert_int_eq(sort_context_create(&spec, &b, 10, false, &other), LUMEN_OK);
	struct ber_view id = { ctx->id, sizeof(ctx->id) };
	struct ber_view other_id = { other->id, sizeof(other->id) };
	ck_assert(sort_context_matches(ctx, id, &b));
	ck_assert(!sort_context_matches(ctx, other_id, &b));
	ck_assert(memcmp(ctx->id, other->id, sizeof(ctx->id)) != 0);
	struct ber_view shorter = { ctx->id, sizeof(ctx->id) - 1 };
	ck_assert(!sort_context_matches(ctx, shorter, &b));
	ck_assert(!sort_context_matches(ctx, (struct ber_view){ NULL, 0 }, &b));
	struct sort_binding changed = b;
	changed.database = &db_b;
	ck_assert(!sort_context_matches(ctx, id, &changed));
	changed = b;
	changed.request = fixture_view("req:(cn=b)");
	ck_assert(!sort_context_matches(ctx, id, &changed));
	changed.request = fixture_view("req:(cn=a");      /* a prefix */
	ck_assert(!sort_context_matches(ctx, id, &changed));
	char copy[] = "req:(cn=a)";                       /* same bytes elsewhere */
	changed.request = (struct ber_view){ (const uint8_t *)copy, strlen(copy) };
	ck_assert(sort_context_matches(ctx, id, &changed));
	changed = b;
	changed.requester = fixture_view("cn=readers");
	ck_assert(!sort_context_matches(ctx, id, &changed));
	changed.requester = (struct ber_view){ NULL, 0 };
	ck_assert(!sort_context_matches(ctx, id, &changed));
	/* the collection is the context's own: it grows the bytes counted */
	size_t empty = sort_context_bytes(ctx);
	add(&ctx->coll, "cn=a", "cn: a\nsn: x", true);
	ck_assert_int_eq(sort_collection_sort(&ctx->coll), LUMEN_OK);
	ck_assert_uint_gt(sort_context_bytes(ctx), empty);
	sort_context_free(ctx);
	sort_context_free(other);
	sort_context_free(NULL);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("search_sort");
	TCase *tc = tcase_create("sort");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, keys_resolve_as_slapd);
	tcase_add_test(tc, compare_keys);
	tcase_add_test(tc, collect_and_sort);
	tcase_add_test(tc, stored_form_only_when_the_rule_normalizes_alike);
	tcase_add_test(tc, reverse_takes_the_greatest_value);
	tcase_add_test(tc, vlv_window_by_offset);
	tcase_add_test(tc, vlv_window_by_value);
	tcase_add_test(tc, ranks_agree_with_the_rule);
	tcase_add_test(tc, merge_sort_is_stable);
	tcase_add_test(tc, empty_collection_sorts);
	tcase_add_test(tc, context_binding);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
