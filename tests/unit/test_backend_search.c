/*
 * test_backend_search.c — back-mdb read operations: search scopes and
 * filters (indexed and not), limits, matchedDN, paged results, abandon,
 * assertion, compare, fetch and routing, on a small realistic tree.
 */
#include <check.h>

#include "backend_fixture.h"
#include "dn2id.h"
#include "id2entry.h"
#include "mdb_store.h"

#define BASE "dc=example,dc=com"
#define PEOPLE "ou=People,dc=example,dc=com"

struct search_case {
	const char *name;
	const char *base;
	enum ldap_scope scope;
	const char *filter;
	size_t expected;
	bool unindexed;
	const char *must_have;   /* one DN that must be in the result, or NULL */
};

static const struct search_case search_cases[] = {
	{ "base", PEOPLE, LDAP_SCOPE_BASE, NULL, 1, false, PEOPLE },
	{ "one", PEOPLE, LDAP_SCOPE_ONE, "(objectClass=*)", 5, false,
	  "ou=Engineering,ou=People,dc=example,dc=com" },
	{ "subtree", BASE, LDAP_SCOPE_SUBTREE, "(objectClass=*)", FIXTURE_ENTRIES, false, BASE },
	{ "children", PEOPLE, LDAP_SCOPE_CHILDREN, "(objectClass=*)", 7, false,
	  "uid=carol,ou=Engineering,ou=People,dc=example,dc=com" },
	{ "uid eq", BASE, LDAP_SCOPE_SUBTREE, "(uid=alice)", 1, false,
	  "uid=alice,ou=People,dc=example,dc=com" },
	{ "uid eq, case", BASE, LDAP_SCOPE_SUBTREE, "(UID=ALICE)", 1, false, NULL },
	{ "cn multi-valued", BASE, LDAP_SCOPE_SUBTREE, "(cn=ali)", 1, false, NULL },
	{ "cn substring", BASE, LDAP_SCOPE_SUBTREE, "(cn=*smi*)", 2, false,
	  "cn=Smith\\, John,ou=People,dc=example,dc=com" },
	{ "cn initial short", BASE, LDAP_SCOPE_SUBTREE, "(cn=b*)", 1, false, NULL },
	{ "sn approx", BASE, LDAP_SCOPE_SUBTREE, "(sn~=smyth)", 3, false, NULL },
	{ "non-ASCII eq", BASE, LDAP_SCOPE_SUBTREE, "(cn=j\xc3\xbcrgen m\xc3\xbcller)", 1, false,
	  "cn=J\xc3\xbcrgen M\xc3\xbcller,ou=People,dc=example,dc=com" },
	{ "objectClass superclass", BASE, LDAP_SCOPE_SUBTREE, "(objectClass=person)",
	  FIXTURE_PERSONS, false, NULL },
	{ "objectClass unknown", BASE, LDAP_SCOPE_SUBTREE, "(objectClass=nosuchclass)", 0,
	  false, NULL },
	{ "and", BASE, LDAP_SCOPE_SUBTREE, "(&(objectClass=person)(sn=smith))", 2, false, NULL },
	{ "or", BASE, LDAP_SCOPE_SUBTREE, "(|(uid=alice)(uid=bob)(uid=nobody))", 2, false, NULL },
	{ "not", PEOPLE, LDAP_SCOPE_ONE, "(!(uid=alice))", 4, false, NULL },
	{ "and with not", BASE, LDAP_SCOPE_SUBTREE, "(&(objectClass=person)(!(sn=smith)))", 4,
	  false, NULL },
	{ "member dn", BASE, LDAP_SCOPE_SUBTREE,
	  "(member=UID=Alice,ou=people,dc=EXAMPLE,dc=com)", 1, false, NULL },
	{ "unindexed", BASE, LDAP_SCOPE_SUBTREE, "(description=first)", 1, true, NULL },
	{ "unindexed in and", BASE, LDAP_SCOPE_SUBTREE,
	  "(&(description=*)(objectClass=organizationalUnit))", 1, false, NULL },
	{ "scope cuts candidates", "ou=Engineering,ou=People,dc=example,dc=com",
	  LDAP_SCOPE_SUBTREE, "(objectClass=person)", 2, false, NULL },
	{ "one level cuts candidates", PEOPLE, LDAP_SCOPE_ONE, "(objectClass=person)", 4, false,
	  NULL },
	{ "integer eq", BASE, LDAP_SCOPE_SUBTREE, "(uidNumber=1001)", 1, false, NULL },
	{ "ordering unindexed", BASE, LDAP_SCOPE_SUBTREE, "(uidNumber>=1000)", 1, false, NULL },
	{ "absolute false", BASE, LDAP_SCOPE_SUBTREE, "(|)", 0, false, NULL },
	/* at the suffix the scope needs no walk up the tree; children still
	 * leaves the suffix entry out */
	{ "children of the suffix", BASE, LDAP_SCOPE_CHILDREN,
	  "(|(uid=alice)(objectClass=dcObject))", 1, false, "uid=alice,ou=People,dc=example,dc=com" },
	{ "subtree at the suffix, few candidates", BASE, LDAP_SCOPE_SUBTREE,
	  "(|(uid=alice)(objectClass=dcObject))", 2, false, BASE },
	{ "absolute true", PEOPLE, LDAP_SCOPE_BASE, "(&)", 1, false, NULL },
};

START_TEST(search_table)
{
	const struct search_case *c = &search_cases[_i];
	struct fx_results r = { 0 };
	struct backend_op op = fx_op();

	int code = fx_search_op(&op, c->base, c->scope, c->filter, &r);
	ck_assert_msg(code == LDAP_SUCCESS, "%s: code %d", c->name, code);
	ck_assert_msg(r.n == c->expected, "%s: %zu entries, expected %zu", c->name, r.n,
		      c->expected);
	ck_assert_msg(op.unindexed == c->unindexed, "%s: unindexed note %d", c->name,
		      op.unindexed);
	if (c->unindexed)
		ck_assert_str_eq(op.unindexed_attribute, "description");
	if (c->must_have != NULL)
		ck_assert_msg(fx_results_has(&r, c->must_have), "%s: missing %s", c->name,
			      c->must_have);
	fx_results_free(&r);
}
END_TEST

START_TEST(size_limit)
{
	struct fx_results r = { 0 };
	struct backend_op op = fx_op();
	op.is_root = false;
	op.size_limit = 3;
	ck_assert_int_eq(fx_search_op(&op, BASE, LDAP_SCOPE_SUBTREE, "(objectClass=*)", &r),
			 LDAP_SIZE_LIMIT_EXCEEDED);
	ck_assert_uint_eq(r.n, 3);
	fx_results_free(&r);

	/* exactly as many matches as the limit: success */
	op = fx_op();
	op.is_root = false;
	op.size_limit = FIXTURE_PERSONS;
	ck_assert_int_eq(fx_search_op(&op, BASE, LDAP_SCOPE_SUBTREE, "(objectClass=person)", &r),
			 LDAP_SUCCESS);
	ck_assert_uint_eq(r.n, FIXTURE_PERSONS);
	fx_results_free(&r);

	/* the rootdn escapes the configured (combined) limit */
	op = fx_op();
	op.size_limit = 1;
	ck_assert_int_eq(fx_search_op(&op, BASE, LDAP_SCOPE_SUBTREE, NULL, &r), LDAP_SUCCESS);
	ck_assert_uint_eq(r.n, FIXTURE_ENTRIES);
	fx_results_free(&r);
}
END_TEST

/* RFC 4511 §4.5.1.5: the limit in the request binds the rootdn too. */
START_TEST(root_request_limits)
{
	struct fx_results r = { 0 };
	struct backend_op op = fx_op();
	op.size_limit = 0;
	op.request_size_limit = 2;
	ck_assert_int_eq(fx_search_op(&op, BASE, LDAP_SCOPE_SUBTREE, "(objectClass=*)", &r),
			 LDAP_SIZE_LIMIT_EXCEEDED);
	ck_assert_uint_eq(r.n, 2);
	fx_results_free(&r);

	/* a request limit above the matches is no limit at all */
	op = fx_op();
	op.request_size_limit = FIXTURE_ENTRIES;
	ck_assert_int_eq(fx_search_op(&op, BASE, LDAP_SCOPE_SUBTREE, NULL, &r), LDAP_SUCCESS);
	ck_assert_uint_eq(r.n, FIXTURE_ENTRIES);
	fx_results_free(&r);

	/* a non-root requester gets the combined limit, not the request's alone */
	op = fx_op();
	op.is_root = false;
	op.size_limit = 1;
	op.request_size_limit = 5;
	ck_assert_int_eq(fx_search_op(&op, BASE, LDAP_SCOPE_SUBTREE, NULL, &r),
			 LDAP_SIZE_LIMIT_EXCEEDED);
	ck_assert_uint_eq(r.n, 1);
	fx_results_free(&r);
}
END_TEST

struct missing_case {
	const char *base;
	const char *matched;
};

static const struct missing_case missing_cases[] = {
	{ "uid=nobody,ou=People,dc=example,dc=com", "ou=People,dc=example,dc=com" },
	{ "cn=x,ou=Missing,dc=example,dc=com", "dc=example,dc=com" },
	{ "uid=x,ou=Engineering,ou=People,dc=example,dc=com",
	  "ou=Engineering,ou=People,dc=example,dc=com" },
};

START_TEST(no_such_base)
{
	struct fx_results r = { 0 };
	struct backend_op op = fx_op();
	ck_assert_int_eq(fx_search_op(&op, missing_cases[_i].base, LDAP_SCOPE_SUBTREE, NULL, &r),
			 LDAP_NO_SUCH_OBJECT);
	ck_assert_uint_eq(r.n, 0);
	ck_assert_uint_eq(op.matched_dn.len, strlen(missing_cases[_i].matched));
	ck_assert(memcmp(op.matched_dn.ptr, missing_cases[_i].matched, op.matched_dn.len) == 0);
}
END_TEST

/* Pages through the subtree with page size 2 and checks the union. */
START_TEST(paged_results)
{
	struct fx_results all = { 0 };
	uint8_t cookie[BACKEND_COOKIE_SIZE];
	size_t cookie_len = 0, pages = 0;

	for (;;) {
		struct fx_results page = { 0 };
		struct backend_op op = fx_op();
		struct backend_search s = {
			.base_ndn = fx_ndn(BASE), .scope = LDAP_SCOPE_SUBTREE,
			.sink = fx_collect, .sink_ctx = &page,
			.paged = true, .page_size = 2,
			.cookie = { cookie, cookie_len }, .fingerprint = 42,
		};
		ck_assert_int_eq(backend_search(fx.be, &op, &s), LUMEN_OK);
		ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
		ck_assert_uint_le(page.n, 2);
		for (size_t i = 0; i < page.n; i++) {
			ck_assert_msg(!fx_results_has(&all, page.dns[i]), "duplicate %s",
				      page.dns[i]);
			all.dns[all.n++] = page.dns[i];
		}
		pages++;
		ck_assert_uint_lt(pages, 20);
		if (s.next_cookie_len == 0)
			break;
		ck_assert_uint_eq(page.n, 2);
		memcpy(cookie, s.next_cookie, s.next_cookie_len);
		cookie_len = s.next_cookie_len;
	}
	ck_assert_uint_eq(all.n, FIXTURE_ENTRIES);
	ck_assert_uint_eq(pages, (FIXTURE_ENTRIES + 1) / 2);
	fx_results_free(&all);
}
END_TEST

START_TEST(paged_bad_cookie)
{
	struct fx_results r = { 0 };
	uint8_t cookie[BACKEND_COOKIE_SIZE];
	struct backend_op op = fx_op();
	struct backend_search s = {
		.base_ndn = fx_ndn(BASE), .scope = LDAP_SCOPE_SUBTREE,
		.sink = fx_collect, .sink_ctx = &r, .paged = true, .page_size = 2,
		.fingerprint = 1,
	};
	ck_assert_int_eq(backend_search(fx.be, &op, &s), LUMEN_OK);
	ck_assert_uint_eq(s.next_cookie_len, BACKEND_COOKIE_SIZE);
	memcpy(cookie, s.next_cookie, sizeof(cookie));
	fx_results_free(&r);

	/* another request (fingerprint), a truncated cookie, garbage */
	struct ber_view bad[] = {
		{ cookie, sizeof(cookie) }, { cookie, 5 }, { (const uint8_t *)"garbage", 7 },
	};
	for (size_t i = 0; i < 3; i++) {
		op = fx_op();
		s.base_ndn = fx_ndn(BASE);
		s.cookie = bad[i];
		s.fingerprint = 2;
		ck_assert_int_eq(backend_search(fx.be, &op, &s), LUMEN_OK);
		ck_assert_int_eq(op.result_code, LDAP_UNWILLING_TO_PERFORM);
		ck_assert_uint_eq(r.n, 0);
	}
	/* page size 0 ends the paged search at once */
	op = fx_op();
	s.base_ndn = fx_ndn(BASE);
	s.cookie = (struct ber_view){ cookie, sizeof(cookie) };
	s.fingerprint = 1;
	s.page_size = 0;
	ck_assert_int_eq(backend_search(fx.be, &op, &s), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
	ck_assert_uint_eq(r.n, 0);
}
END_TEST

START_TEST(sink_stops_and_abandon)
{
	struct fx_results r = { .stop_after = 2 };
	ck_assert_int_eq(fx_search(BASE, LDAP_SCOPE_SUBTREE, NULL, &r), LDAP_OTHER);
	ck_assert_uint_eq(r.n, 2);
	fx_results_free(&r);

	bool abandoned = true;
	struct backend_op op = fx_op();
	op.abandoned = &abandoned;
	r.stop_after = 0;
	ck_assert_int_eq(fx_search_op(&op, BASE, LDAP_SCOPE_SUBTREE, NULL, &r), LDAP_OTHER);
	ck_assert_uint_eq(r.n, 0);
}
END_TEST

START_TEST(search_assertion)
{
	struct fx_results r = { 0 };
	struct backend_op op = fx_op();
	op.assertion = fx_filter("(ou=nope)");
	ck_assert_int_eq(fx_search_op(&op, PEOPLE, LDAP_SCOPE_SUBTREE, NULL, &r),
			 LDAP_ASSERTION_FAILED);
	ck_assert_uint_eq(r.n, 0);

	op = fx_op();
	op.assertion = fx_filter("(ou=people)");
	ck_assert_int_eq(fx_search_op(&op, PEOPLE, LDAP_SCOPE_BASE, NULL, &r), LDAP_SUCCESS);
	ck_assert_uint_eq(r.n, 1);
	fx_results_free(&r);
}
END_TEST

static int count_sink(void *ctx, const struct entry *e, const struct backend_entry_info *info)
{
	(void)e;
	uint64_t *n = ctx;
	ck_assert(info->has_counts);
	ck_assert(info->has_subordinates == (info->num_subordinates > 0));
	*n = info->num_subordinates;
	return 0;
}

static int no_count_sink(void *ctx, const struct entry *e, const struct backend_entry_info *info)
{
	(void)ctx;
	(void)e;
	ck_assert(!info->has_counts);
	return 0;
}

START_TEST(subordinate_counts)
{
	uint64_t n = 99;
	struct backend_op op = fx_op();
	struct backend_search s = {
		.base_ndn = fx_ndn(PEOPLE), .scope = LDAP_SCOPE_BASE, .want_counts = true,
		.sink = count_sink, .sink_ctx = &n,
	};
	ck_assert_int_eq(backend_search(fx.be, &op, &s), LUMEN_OK);
	ck_assert_uint_eq(n, 5);
	op = fx_op();
	s.base_ndn = fx_ndn(fixture_people[0]);
	ck_assert_int_eq(backend_search(fx.be, &op, &s), LUMEN_OK);
	ck_assert_uint_eq(n, 0);
	/* fetch hands out the same information when asked, and only then
	 * (binds and group checks do not pay for a read of the tree) */
	op = fx_op();
	ck_assert_int_eq(backend_fetch(fx.be, &op, fx_ndn(PEOPLE), no_count_sink, NULL), 0);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
	op = fx_op();
	op.fetch_counts = true;
	ck_assert_int_eq(backend_fetch(fx.be, &op, fx_ndn(PEOPLE), count_sink, &n), 0);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
	ck_assert_uint_eq(n, 5);
	op = fx_op();
	op.fetch_counts = true;
	ck_assert_int_eq(backend_fetch(fx.be, &op, fx_ndn("uid=zz," PEOPLE), count_sink, &n), 0);
	ck_assert_int_eq(op.result_code, LDAP_NO_SUCH_OBJECT);
}
END_TEST

struct compare_case {
	const char *dn;
	const char *attribute;
	const char *value;
	int code;
};

static const struct compare_case compare_cases[] = {
	{ "uid=alice," PEOPLE, "uid", "ALICE", LDAP_COMPARE_TRUE },
	{ "uid=alice," PEOPLE, "uid", "bob", LDAP_COMPARE_FALSE },
	{ "uid=alice," PEOPLE, "cn", "ali", LDAP_COMPARE_TRUE },
	{ "uid=alice," PEOPLE, "name", "alice smith", LDAP_COMPARE_TRUE },   /* subtype */
	{ "uid=alice," PEOPLE, "sn", "  SMITH ", LDAP_COMPARE_TRUE },
	{ "uid=alice," PEOPLE, "title", "boss", LDAP_NO_SUCH_ATTRIBUTE },
	{ "uid=alice," PEOPLE, "noSuchType", "x", LDAP_UNDEFINED_ATTRIBUTE_TYPE },
	{ "uid=alice," PEOPLE, "cn;lang-de", "ali", LDAP_NO_SUCH_ATTRIBUTE },
	{ "uid=carol,ou=Engineering," PEOPLE, "uidNumber", "1001", LDAP_COMPARE_TRUE },
	{ "uid=carol,ou=Engineering," PEOPLE, "uidNumber", "abc", LDAP_INVALID_ATTRIBUTE_SYNTAX },
	{ "uid=alice," PEOPLE, "jpegPhoto", "x", LDAP_INAPPROPRIATE_MATCHING },
	{ "uid=nobody," PEOPLE, "uid", "x", LDAP_NO_SUCH_OBJECT },
	{ "cn=J\xc3\xbcrgen M\xc3\xbcller," PEOPLE, "sn", "m\xc3\xbcller", LDAP_COMPARE_TRUE },
	/* computed attributes compare like stored ones */
	{ PEOPLE, "hasSubordinates", "TRUE", LDAP_COMPARE_TRUE },
	{ "uid=alice," PEOPLE, "hasSubordinates", "TRUE", LDAP_COMPARE_FALSE },
	{ "uid=alice," PEOPLE, "hasSubordinates", "maybe", LDAP_INVALID_ATTRIBUTE_SYNTAX },
	{ "uid=alice," PEOPLE, "entryDN", "UID=Alice, ou=people,dc=EXAMPLE,dc=com",
	  LDAP_COMPARE_TRUE },
	{ "uid=alice," PEOPLE, "entryDN", "uid=bob," PEOPLE, LDAP_COMPARE_FALSE },
	{ "uid=alice," PEOPLE, "entryDN;x-opt", "uid=alice," PEOPLE, LDAP_NO_SUCH_ATTRIBUTE },
	{ PEOPLE, "numSubordinates", "5", LDAP_COMPARE_TRUE },
	{ PEOPLE, "numSubordinates", "05", LDAP_INVALID_ATTRIBUTE_SYNTAX },
	{ "uid=alice," PEOPLE, "subschemaSubentry", "CN=SUBSCHEMA", LDAP_COMPARE_TRUE },
};

START_TEST(compare_table)
{
	const struct compare_case *c = &compare_cases[_i];
	struct backend_op op = fx_op();
	int rc = backend_compare(fx.be, &op, fx_ndn(c->dn), fx_view(c->attribute),
				 fx_view(c->value));
	ck_assert_int_eq(rc, LUMEN_OK);
	ck_assert_msg(op.result_code == c->code, "compare %s %s=%s: %d, expected %d", c->dn,
		      c->attribute, c->value, op.result_code, c->code);
	if (c->code == LDAP_NO_SUCH_OBJECT)
		ck_assert_uint_eq(op.matched_dn.len, strlen(PEOPLE));
}
END_TEST

/* ---------------------------------------------- stored normalized forms */

static int compare_code(const char *dn, const char *attribute, const char *value)
{
	struct backend_op op = fx_op();
	ck_assert_int_eq(backend_compare(fx.be, &op, fx_ndn(dn), fx_view(attribute),
					 fx_view(value)), LUMEN_OK);
	return op.result_code;
}

/* Rewrites alice's record so that her sn's stored normalized form lies. */
static void plant_false_normalized_form(void)
{
	struct mdb_store *store = backend_store(fx.be);
	MDB_txn *txn;
	uint64_t id;
	struct ber_view bytes;
	struct entry *e = NULL;
	struct ber_writer w;

	ck_assert_int_eq(mdb_txn_begin(store->env, NULL, 0, &txn), MDB_SUCCESS);
	ck_assert_int_eq(dn2id_lookup(store, txn, fx_ndn("uid=alice," PEOPLE), &id, NULL), LUMEN_OK);
	ck_assert_int_eq(id2entry_get(store, txn, id, &bytes), LUMEN_OK);
	ck_assert_int_eq(entry_decode(fx.schema, bytes.ptr, bytes.len, NULL, &e), LUMEN_OK);
	struct attribute_description sn;
	ck_assert_int_eq(attribute_description_parse(fx.schema, "sn", 2, &sn), LUMEN_OK);
	struct entry_attribute *a = (struct entry_attribute *)entry_find(e, &sn);
	ck_assert_ptr_nonnull(a);
	a->values[0].normalized = fx_view("zzz");
	ck_assert_int_eq(ber_writer_init(&w, 0, 0), LUMEN_OK);
	ck_assert_int_eq(entry_encode(e, &w), LUMEN_OK);
	ck_assert_int_eq(id2entry_replace(store, txn, id, w.buf, w.len), LUMEN_OK);
	ck_assert_int_eq(mdb_txn_commit(txn), MDB_SUCCESS);
	ber_writer_free(&w);
	entry_free(e);
}

/* Rewrites the recorded rules so that sn's forms were made by another rule
 * (as if the schema had changed since they were stored). */
static void record_other_rule_for_sn(void)
{
	static const char was[] = "2.5.4.4\0caseIgnoreMatch", now[] = "2.5.4.4\0caseExactMatch";
	struct mdb_store *store = backend_store(fx.be);
	MDB_val key = { 13, "normalization" }, data;
	MDB_txn *txn;
	ck_assert_int_eq(mdb_txn_begin(store->env, NULL, 0, &txn), MDB_SUCCESS);
	ck_assert_int_eq(mdb_get(txn, store->meta, &key, &data), MDB_SUCCESS);
	const char *at = memmem(data.mv_data, data.mv_size, was, sizeof(was));
	ck_assert_ptr_nonnull(at);
	size_t before = (size_t)(at - (const char *)data.mv_data);
	size_t after = data.mv_size - before - sizeof(was);
	char *edited = malloc(data.mv_size);
	memcpy(edited, data.mv_data, before);
	memcpy(edited + before, now, sizeof(now));
	memcpy(edited + before + sizeof(now), at + sizeof(was), after);
	MDB_val value = { before + sizeof(now) + after, edited };
	ck_assert_int_eq(mdb_put(txn, store->meta, &key, &value, 0), MDB_SUCCESS);
	ck_assert_int_eq(mdb_txn_commit(txn), MDB_SUCCESS);
	free(edited);
}

/*
 * Records carry their values' normalized forms, and reads take them as
 * stored while the schema's rules are those they were made under: a
 * planted form shows which one a read used. A schema with one more type
 * keeps them; a recorded type whose rule changed makes every read
 * normalize again, and for good: going back cannot know which records the
 * other rule wrote.
 */
START_TEST(stored_normalized_forms)
{
	char err[256] = "";
	struct schema *other;

	plant_false_normalized_form();
	fixture_reopen(fx.schema, BASE, BACKEND_CACHE_OFF);
	ck_assert_int_eq(compare_code("uid=alice," PEOPLE, "sn", "zzz"), LDAP_COMPARE_TRUE);
	ck_assert_int_eq(compare_code("uid=alice," PEOPLE, "sn", "smith"), LDAP_COMPARE_FALSE);

	ck_assert_int_eq(schema_create(&other), LUMEN_OK);
	for (size_t i = 0; i < sizeof(fixture_schema_files) / sizeof(fixture_schema_files[0]); i++)
		ck_assert_int_eq(schema_load_file(other, fixture_schema_files[i], err, sizeof(err)),
				 LUMEN_OK);
	const char *extra = "attributetype ( 1.3.6.1.4.1.99999.1.1 NAME 'x-test-extra' "
			    "EQUALITY caseIgnoreMatch "
			    "SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 )\n";
	ck_assert_msg(schema_load_text(other, "extra", extra, err, sizeof(err)) == LUMEN_OK,
		      "%s", err);
	ck_assert_msg(schema_finalize(other, err, sizeof(err)) == LUMEN_OK, "%s", err);
	fixture_reopen(other, BASE, BACKEND_CACHE_OFF);
	ck_assert_int_eq(compare_code("uid=alice," PEOPLE, "sn", "zzz"), LDAP_COMPARE_TRUE);
	fixture_reopen(fx.schema, BASE, BACKEND_CACHE_OFF);
	schema_free(other);

	record_other_rule_for_sn();
	fixture_reopen(fx.schema, BASE, BACKEND_CACHE_OFF);
	ck_assert_int_eq(compare_code("uid=alice," PEOPLE, "sn", "smith"), LDAP_COMPARE_TRUE);
	ck_assert_int_eq(compare_code("uid=alice," PEOPLE, "sn", "zzz"), LDAP_COMPARE_FALSE);
	fixture_reopen(fx.schema, BASE, BACKEND_CACHE_OFF);
	ck_assert_int_eq(compare_code("uid=alice," PEOPLE, "sn", "smith"), LDAP_COMPARE_TRUE);
}
END_TEST

struct virtual_case {
	const char *filter;
	size_t expected;
	const char *must_have;
};

static const struct virtual_case virtual_cases[] = {
	{ "(entryDN=UID=Alice, ou=people,dc=EXAMPLE,dc=com)", 1, "uid=alice," PEOPLE },
	/* the filter's \5C is the DN's escaping backslash */
	{ "(entryDN=CN=smith\\5C,  john,ou=People,dc=example,dc=com)", 1,
	  "cn=Smith\\, John," PEOPLE },
	{ "(entryDN=*)", FIXTURE_ENTRIES, BASE },
	{ "(hasSubordinates=TRUE)", 4, "ou=Engineering," PEOPLE },
	{ "(hasSubordinates=FALSE)", FIXTURE_ENTRIES - 4, "uid=bob," PEOPLE },
	{ "(!(hasSubordinates=*))", 0, NULL },
	{ "(hasSubordinates=maybe)", 0, NULL },
	{ "(numSubordinates=5)", 1, PEOPLE },
	{ "(&(objectClass=organizationalUnit)(numSubordinates>=2))", 2, PEOPLE },
	{ "(subschemaSubentry=cn=Subschema)", FIXTURE_ENTRIES, BASE },
	{ "(&(uid=alice)(hasSubordinates=FALSE))", 1, "uid=alice," PEOPLE },
};

/* entryDN, hasSubordinates, ... in filters: computed per entry, never indexed. */
START_TEST(virtual_attribute_filters)
{
	const struct virtual_case *c = &virtual_cases[_i];
	struct fx_results r = { 0 };
	struct backend_op op = fx_op();
	ck_assert_int_eq(fx_search_op(&op, BASE, LDAP_SCOPE_SUBTREE, c->filter, &r), LDAP_SUCCESS);
	ck_assert_msg(r.n == c->expected, "%s: %zu entries, expected %zu", c->filter, r.n,
		      c->expected);
	if (c->must_have != NULL)
		ck_assert_msg(fx_results_has(&r, c->must_have), "%s: missing %s", c->filter,
			      c->must_have);
	fx_results_free(&r);
}
END_TEST

START_TEST(virtual_attribute_unindexed)
{
	struct fx_results r = { 0 };
	struct backend_op op = fx_op();
	ck_assert_int_eq(fx_search_op(&op, BASE, LDAP_SCOPE_SUBTREE,
				      "(entryDN=uid=bob,ou=People,dc=example,dc=com)", &r),
			 LDAP_SUCCESS);
	ck_assert_uint_eq(r.n, 1);
	ck_assert(op.unindexed);
	ck_assert_str_eq(op.unindexed_attribute, "entryDN");
	fx_results_free(&r);
	/* an indexed item next to it still narrows the candidates */
	op = fx_op();
	ck_assert_int_eq(fx_search_op(&op, BASE, LDAP_SCOPE_SUBTREE,
				      "(&(uid=bob)(hasSubordinates=FALSE))", &r), LDAP_SUCCESS);
	ck_assert_uint_eq(r.n, 1);
	ck_assert_uint_eq(op.candidates_tested, 1);
	fx_results_free(&r);
	/* the assertion control sees them too */
	op = fx_op();
	op.assertion = fx_filter("(hasSubordinates=TRUE)");
	ck_assert_int_eq(fx_search_op(&op, PEOPLE, LDAP_SCOPE_BASE, NULL, &r), LDAP_SUCCESS);
	ck_assert_uint_eq(r.n, 1);
	fx_results_free(&r);
	op = fx_op();
	op.assertion = fx_filter("(hasSubordinates=TRUE)");
	ck_assert_int_eq(fx_search_op(&op, "uid=bob," PEOPLE, LDAP_SCOPE_BASE, NULL, &r),
			 LDAP_ASSERTION_FAILED);
	op = fx_op();
	op.assertion = fx_filter("(numSubordinates=0)");
	ck_assert_int_eq(backend_compare(fx.be, &op, fx_ndn(PEOPLE), fx_view("ou"),
					 fx_view("people")), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_ASSERTION_FAILED);
}
END_TEST

START_TEST(compare_assertion)
{
	struct backend_op op = fx_op();
	op.assertion = fx_filter("(sn=jones)");
	ck_assert_int_eq(backend_compare(fx.be, &op, fx_ndn("uid=alice," PEOPLE), fx_view("uid"),
					 fx_view("alice")), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_ASSERTION_FAILED);
}
END_TEST

/*
 * A database whose suffix changed keeps the entries of the old one: a
 * search at the new suffix must still check each candidate's place in the
 * tree (the old root is not below the new one).
 */
START_TEST(changed_suffix_checks_scope)
{
	fixture_reopen(fx.schema, "dc=example,dc=org", 4);
	ck_assert_int_eq(fx_add("dc=example,dc=org", FX_LINES(
		"objectClass: top", "objectClass: dcObject", "objectClass: organization",
		"dc: example", "o: Example Org")), LDAP_SUCCESS);
	ck_assert_int_eq(fx_add("uid=zed,dc=example,dc=org", FX_LINES(
		"objectClass: inetOrgPerson", "uid: zed", "cn: Zed", "sn: Zed")), LDAP_SUCCESS);
	struct fx_results r = { 0 };
	ck_assert_int_eq(fx_search("dc=example,dc=org", LDAP_SCOPE_SUBTREE,
				   "(|(uid=alice)(uid=zed))", &r), LDAP_SUCCESS);
	ck_assert_uint_eq(r.n, 1);
	ck_assert(fx_results_has(&r, "uid=zed,dc=example,dc=org"));
	fx_results_free(&r);
	ck_assert_int_eq(fx_search("dc=example,dc=org", LDAP_SCOPE_CHILDREN,
				   "(objectClass=dcObject)", &r), LDAP_SUCCESS);
	ck_assert_uint_eq(r.n, 0);
	fx_results_free(&r);
}
END_TEST

START_TEST(select_by_suffix)
{
	struct backend *list[] = { fx.be };
	ck_assert_ptr_eq(backend_select(list, 1, fx_ndn(PEOPLE)), fx.be);
	ck_assert_ptr_eq(backend_select(list, 1, fx_ndn(BASE)), fx.be);
	ck_assert_ptr_null(backend_select(list, 1, fx_ndn("dc=com")));
	ck_assert_ptr_null(backend_select(list, 1, fx_ndn("dc=other,dc=com")));
	ck_assert_ptr_null(backend_select(list, 1, fx_ndn("dc=xexample,dc=com")));
	ck_assert_uint_eq(backend_suffix_count(fx.be), 1);
	ck_assert(backend_suffix_dn(fx.be, 0).len == strlen(BASE));
}
END_TEST

/* A second database below the first: the longest suffix wins. */
START_TEST(select_longest_suffix)
{
	char dir[] = "/tmp/lumen-backend-XXXXXX", err[256];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	const char *suffixes[] = { "ou=Sub,dc=example,dc=com" };
	struct backend_settings st = { .suffixes = suffixes, .n_suffixes = 1, .directory = dir,
				       .maxsize = 8 << 20, .dbnosync = true };
	struct backend *sub;
	ck_assert_int_eq(backend_open(fx.schema, &st, &sub, err, sizeof(err)), LUMEN_OK);
	struct backend *list[] = { fx.be, sub };
	ck_assert_ptr_eq(backend_select(list, 2, fx_ndn("cn=x,ou=sub,dc=example,dc=com")), sub);
	ck_assert_ptr_eq(backend_select(list, 2, fx_ndn("ou=Sub,dc=example,dc=com")), sub);
	ck_assert_ptr_eq(backend_select(list, 2, fx_ndn(PEOPLE)), fx.be);
	backend_close(sub);
	nftw(dir, fixture_remove, 8, FTW_DEPTH | FTW_PHYS);
}
END_TEST

struct open_case {
	const char *name;
	const char *suffix;
	struct backend_index_spec index;
};

static const struct open_case bad_opens[] = {
	{ "bad suffix", "dc=example,,", { "cn", BACKEND_INDEX_EQUALITY } },
	{ "unknown index type", "dc=example,dc=com", { "nosuchattr", BACKEND_INDEX_EQUALITY } },
	{ "no kinds", "dc=example,dc=com", { "cn", 0 } },
	{ "sub without substr rule", "dc=example,dc=com", { "uidNumber", BACKEND_INDEX_SUBSTRING } },
};

START_TEST(open_errors)
{
	const struct open_case *c = &bad_opens[_i];
	char dir[] = "/tmp/lumen-backend-XXXXXX", err[256] = "";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	const char *suffixes[] = { c->suffix };
	struct backend_settings st = { .suffixes = suffixes, .n_suffixes = 1, .directory = dir,
				       .maxsize = 8 << 20, .indexes = &c->index, .n_indexes = 1,
				       .name = "test.conf:3" };
	struct backend *be = NULL;
	ck_assert_int_eq(backend_open(fx.schema, &st, &be, err, sizeof(err)), LUMEN_EINVAL);
	ck_assert_ptr_null(be);
	ck_assert_msg(strstr(err, "test.conf:3") != NULL, "%s: %s", c->name, err);
	nftw(dir, fixture_remove, 8, FTW_DEPTH | FTW_PHYS);
}
END_TEST

START_TEST(cache_off_keeps_nothing)
{
	/* reopen the checked fixture's database with `cachesize off` */
	fixture_close();
	fixture_cachesize = BACKEND_CACHE_OFF;
	fixture_open();
	fixture_cachesize = 4;
	struct backend_stats before, after;
	backend_get_stats(fx.be, &before);
	for (int round = 0; round < 2; round++) {
		struct fx_results r = { 0 };
		ck_assert_int_eq(fx_search("dc=example,dc=com", LDAP_SCOPE_SUBTREE,
					   "(objectClass=*)", &r), LDAP_SUCCESS);
		ck_assert_uint_gt(r.n, 5);
		fx_results_free(&r);
	}
	backend_get_stats(fx.be, &after);
	ck_assert_uint_eq(after.entry_cache_capacity, 0);
	ck_assert_uint_eq(after.entry_cache_size, 0);
	ck_assert_uint_eq(after.entry_cache_hits, before.entry_cache_hits);
}
END_TEST

/*
 * Per-entry filter work (a rule that normalizes each value itself) goes to
 * scratch reset per candidate, never to the operation's arena: before, a
 * long search filled that arena and then quietly skipped the rest of the
 * matching entries.
 */
START_TEST(filter_scratch_is_per_entry)
{
	struct fx_results r = { 0 };
	struct backend_op op = fx_op();
	struct arena bounded;
	arena_init(&bounded, 64 * 1024);
	op.arena = &bounded;
	struct filter *f = fx_filter("(|(sn:caseExactMatch:=Smith)(cn:caseExactMatch:=x))");
	struct backend_search s = {
		.base_ndn = fx_ndn(BASE), .scope = LDAP_SCOPE_SUBTREE, .filter = f,
		.sink = fx_collect, .sink_ctx = &r,
	};
	size_t before = bounded.used;
	for (int round = 0; round < 50; round++) {
		ck_assert_int_eq(backend_search(fx.be, &op, &s), LUMEN_OK);
		ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
		ck_assert_uint_eq(r.n, 2);
		fx_results_free(&r);
	}
	ck_assert_uint_lt(bounded.used - before, 1024);
	arena_free(&bounded);
}
END_TEST

/* An access hook that denies sn: the filter and the assertion obey it. */
static bool deny_sn(void *ctx, const struct attribute_type *type)
{
	(void)ctx;
	return strcmp(type->names[0], "sn") != 0;
}

START_TEST(access_hook_in_search_and_compare)
{
	struct fx_results r = { 0 };
	struct filter_access hook = { NULL, deny_sn, NULL };
	struct backend_op op = fx_op();
	op.filter_access = &hook;
	ck_assert_int_eq(fx_search_op(&op, BASE, LDAP_SCOPE_SUBTREE, "(name=smith)", &r),
			 LDAP_SUCCESS);
	ck_assert_uint_eq(r.n, 0);
	op = fx_op();
	op.filter_access = &hook;
	op.assertion = fx_filter("(ou=*)");
	ck_assert_int_eq(fx_search_op(&op, PEOPLE, LDAP_SCOPE_BASE, NULL, &r), LDAP_SUCCESS);
	fx_results_free(&r);
	op = fx_op();
	op.filter_access = &hook;
	op.assertion = fx_filter("(name=*)");
	ck_assert_int_eq(fx_search_op(&op, "uid=alice,ou=People,dc=example,dc=com",
				      LDAP_SCOPE_BASE, NULL, &r), LDAP_SUCCESS);
	fx_results_free(&r);
	op = fx_op();
	op.filter_access = &hook;
	op.assertion = fx_filter("(sn=*)");
	ck_assert_int_eq(fx_search_op(&op, "uid=alice,ou=People,dc=example,dc=com",
				      LDAP_SCOPE_BASE, NULL, &r), LDAP_ASSERTION_FAILED);
	ck_assert_uint_eq(r.n, 0);

	/* compare on a supertype: a hidden subtype answers insufficientAccess */
	op = fx_op();
	op.compare_access = &hook;
	ck_assert_int_eq(backend_compare(fx.be, &op, fx_ndn("uid=alice,ou=People,dc=example,dc=com"),
					 fx_view("name"), fx_view("Smith")), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_INSUFFICIENT_ACCESS_RIGHTS);
}
END_TEST

/* ------------------------------------------------------- fetch by ID */

/* Records the IDs a search hands out, then what fetch_ids hands back. */
struct id_sink {
	uint64_t ids[FIXTURE_ENTRIES + 4];
	size_t n;
	int verdict;                         /* what the sink answers */
};

static int take_id(void *ctx, const struct entry *e, const struct backend_entry_info *info)
{
	struct id_sink *s = ctx;
	ck_assert_uint_lt(s->n, sizeof(s->ids) / sizeof(s->ids[0]));
	ck_assert_uint_eq(info->dn.len, e->dn.len);
	s->ids[s->n++] = info->id;
	return s->verdict;
}

/* The IDs a search saw come back in the order asked, from one snapshot;
 * a deleted or unknown ID is passed over; the sink's stop is returned. */
START_TEST(fetch_ids_in_given_order)
{
	struct id_sink seen = { .n = 0 }, back = { .n = 0 };
	struct backend_op op = fx_op();
	struct backend_search s = { .base_ndn = fx_ndn(PEOPLE), .scope = LDAP_SCOPE_ONE,
				    .sink = take_id, .sink_ctx = &seen };
	ck_assert_int_eq(backend_search(fx.be, &op, &s), LUMEN_OK);
	ck_assert_uint_eq(seen.n, 5);
	uint64_t ask[7] = { seen.ids[4], seen.ids[0], 999999, seen.ids[2], seen.ids[1],
			    seen.ids[3], seen.ids[0] };
	struct id_sink bob = { .n = 0 };
	op = fx_op();
	s = (struct backend_search){ .base_ndn = fx_ndn(fixture_people[1]),
				     .scope = LDAP_SCOPE_BASE, .sink = take_id, .sink_ctx = &bob };
	ck_assert_int_eq(backend_search(fx.be, &op, &s), LUMEN_OK);
	ck_assert_uint_eq(bob.n, 1);
	struct backend_op del = fx_op();
	ck_assert_int_eq(backend_delete(fx.be, &del, fx_ndn(fixture_people[1])), LUMEN_OK);
	ck_assert_int_eq(del.result_code, LDAP_SUCCESS);
	op = fx_op();
	ck_assert_int_eq(backend_fetch_ids(fx.be, &op, ask, 7, false, take_id, &back), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
	/* bob is gone, 999999 never was */
	size_t want = 0;
	for (size_t i = 0; i < 7; i++) {
		if (ask[i] == 999999 || ask[i] == bob.ids[0])
			continue;
		ck_assert_uint_eq(back.ids[want++], ask[i]);
	}
	ck_assert_uint_eq(back.n, want);
	struct id_sink stop = { .verdict = 7 };
	op = fx_op();
	ck_assert_int_eq(backend_fetch_ids(fx.be, &op, ask, 7, true, take_id, &stop), 7);
	ck_assert_uint_eq(stop.n, 1);
	struct id_sink skip = { .verdict = BACKEND_SINK_SKIPPED };
	op = fx_op();
	ck_assert_int_eq(backend_fetch_ids(fx.be, &op, ask, 7, false, take_id, &skip), LUMEN_OK);
	ck_assert_uint_eq(skip.n, want);
}
END_TEST

/* ------------------------------------------------ snapshot renewal */

#define ENGINEERING "ou=Engineering,ou=People,dc=example,dc=com"

/* Counts what the walk returns; after its first entry moves the entry
 * with the highest ID out of the scope (a ModifyDN committed while the
 * search holds its first snapshot). */
struct move_sink {
	size_t n;
	bool move, moved_seen;
	const char *last_dn;
};

static int move_collect(void *ctx, const struct entry *e, const struct backend_entry_info *info)
{
	struct move_sink *m = ctx;
	(void)e;
	m->n++;
	if (strncmp((const char *)info->dn.ptr, "uid=last,", 9) == 0)
		m->moved_seen = true;
	if (m->n == 1 && m->move) {
		struct arena scratch;
		arena_init(&scratch, 0);
		struct backend_op op = { .arena = &scratch, .is_root = true };
		op.requester_ndn = fx_view("cn=manager,dc=example,dc=com");
		ck_assert_int_eq(backend_modrdn(fx.be, &op, fx_ndn("uid=last," ENGINEERING),
						fx_view("uid=last"), true, true,
						fx_ndn("ou=Groups,dc=example,dc=com")), LUMEN_OK);
		ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
		arena_free(&scratch);
	}
	return 0;
}

static size_t walk_engineering(bool move, bool *moved_seen)
{
	struct move_sink m = { .move = move };
	struct backend_op op = fx_op();
	struct backend_search s = { .base_ndn = fx_ndn(ENGINEERING), .scope = LDAP_SCOPE_ONE,
				    .sink = move_collect, .sink_ctx = &m };
	ck_assert_int_eq(backend_search(fx.be, &op, &s), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
	*moved_seen = m.moved_seen;
	return m.n;
}

/*
 * A scope walk longer than BACKEND_SEARCH_BATCH renews its snapshot; the
 * IDs it planned are re-checked against the scope only once a ModifyDN
 * ran since the plan, and then an entry moved out is not returned.
 */
START_TEST(renewed_snapshot_sees_moves_out_of_scope)
{
	char dn[96];
	for (int i = 0; i < BACKEND_SEARCH_BATCH + 20; i++) {
		snprintf(dn, sizeof(dn), "uid=bulk%d," ENGINEERING, i);
		ck_assert_int_eq(fx_add(dn, FX_LINES("objectClass: inetOrgPerson", "cn: b",
						     "sn: b")), LDAP_SUCCESS);
	}
	ck_assert_int_eq(fx_add("uid=last," ENGINEERING, FX_LINES("objectClass: inetOrgPerson",
								  "cn: l", "sn: l")),
			 LDAP_SUCCESS);
	bool seen = false;
	size_t all = walk_engineering(false, &seen);
	ck_assert(seen);
	ck_assert_uint_ge(all, BACKEND_SEARCH_BATCH + 21);
	ck_assert_uint_eq(walk_engineering(true, &seen), all - 1);
	ck_assert(!seen);
}
END_TEST

/* --------------------------------------------------- pause and resume */

/* A sink that asks to pause after every `every` entries it takes. */
struct pause_sink {
	struct fx_results r;
	unsigned every;
	uint64_t last_id;
};

static int pause_collect(void *ctx, const struct entry *e, const struct backend_entry_info *info)
{
	struct pause_sink *p = ctx;
	ck_assert_uint_gt(info->id, p->last_id);   /* ascending, never twice */
	p->last_id = info->id;
	fx_collect(&p->r, e, info);
	return p->r.n % p->every == 0 ? BACKEND_SINK_PAUSE : 0;
}

/* mdb_reader_list: count reader slots whose snapshot is older than the
 * newest commit (the pool may keep the newest one parked: it pins nothing
 * a writer could reuse until a commit ends it). */
struct old_snapshots {
	uint64_t newest;
	int n;
};

static int count_old(const char *msg, void *ctx)
{
	struct old_snapshots *o = ctx;
	unsigned pid;
	char tid[32], txnid[32];
	if (sscanf(msg, " %u %31s %31s", &pid, tid, txnid) == 3 && strcmp(txnid, "-") != 0 &&
	    strtoull(txnid, NULL, 10) < o->newest)
		o->n++;
	return 0;
}

static int pinned_old_snapshots(void)
{
	MDB_envinfo info;
	MDB_env *env = backend_store(fx.be)->env;
	ck_assert_int_eq(mdb_env_info(env, &info), 0);
	struct old_snapshots o = { (uint64_t)info.me_last_txnid, 0 };
	ck_assert_int_ge(mdb_reader_list(env, count_old, &o), 0);
	return o.n;
}

/* Calls backend_search until it is not paused; between calls, between(). */
static unsigned run_paused(struct backend_op *op, struct backend_search *s,
			   void (*between)(unsigned call))
{
	unsigned calls = 0;
	for (;;) {
		ck_assert_int_eq(backend_search(fx.be, op, s), LUMEN_OK);
		calls++;
		ck_assert_uint_lt(calls, 50);
		if (!s->paused)
			return calls;
		ck_assert(s->resume.active);
		/* Paused: the search holds no snapshot while the client
		 * catches up (the pool may keep the newest one parked), so
		 * none is older than a write made meanwhile. */
		ck_assert_int_eq(pinned_old_snapshots(), 0);
		if (between != NULL)
			between(calls);
		ck_assert_int_eq(pinned_old_snapshots(), 0);
		s->base_ndn = fx_ndn(BASE);
	}
}

static void add_during_pause(unsigned call)
{
	if (call == 1)
		ck_assert_int_eq(fx_add("uid=zed,ou=People,dc=example,dc=com",
					FX_LINES("objectClass: inetOrgPerson", "uid: zed",
						 "cn: Zed", "sn: Zed")), LDAP_SUCCESS);
}

START_TEST(pause_and_resume)
{
	struct pause_sink p = { .every = 2 };
	struct backend_op op = fx_op();
	struct backend_search s = {
		.base_ndn = fx_ndn(BASE), .scope = LDAP_SCOPE_SUBTREE,
		.sink = pause_collect, .sink_ctx = &p,
	};
	unsigned calls = run_paused(&op, &s, add_during_pause);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
	/* every entry once, and the one added while paused (a higher ID) */
	ck_assert_uint_eq(p.r.n, FIXTURE_ENTRIES + 1);
	ck_assert(fx_results_has(&p.r, "uid=zed,ou=People,dc=example,dc=com"));
	ck_assert_uint_eq(calls, (FIXTURE_ENTRIES + 1) / 2 + 1);
	fx_results_free(&p.r);
}
END_TEST

/* The size limit and the page size count over every call of one search. */
START_TEST(pause_keeps_limits)
{
	struct pause_sink p = { .every = 2 };
	struct backend_op op = fx_op();
	op.is_root = false;
	op.size_limit = 5;
	struct backend_search s = {
		.base_ndn = fx_ndn(BASE), .scope = LDAP_SCOPE_SUBTREE,
		.sink = pause_collect, .sink_ctx = &p,
	};
	run_paused(&op, &s, NULL);
	ck_assert_int_eq(op.result_code, LDAP_SIZE_LIMIT_EXCEEDED);
	ck_assert_uint_eq(p.r.n, 5);
	fx_results_free(&p.r);

	p = (struct pause_sink){ .every = 2 };
	op = fx_op();
	struct backend_search paged = {
		.base_ndn = fx_ndn(BASE), .scope = LDAP_SCOPE_SUBTREE,
		.sink = pause_collect, .sink_ctx = &p, .paged = true, .page_size = 5,
		.fingerprint = 7,
	};
	run_paused(&op, &paged, NULL);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
	ck_assert_uint_eq(p.r.n, 5);
	ck_assert_uint_eq(paged.next_cookie_len, BACKEND_COOKIE_SIZE);
	fx_results_free(&p.r);
}
END_TEST

/* ------------------------------------------------------ examine budget */

/* A larger plan than the budget pauses before its first entry, with no
 * snapshot held; called again without a budget it sends everything. */
START_TEST(budget_pauses_before_large_plan)
{
	struct pause_sink p = { .every = 1000 };
	struct backend_op op = fx_op();
	struct backend_search s = {
		.base_ndn = fx_ndn(BASE), .scope = LDAP_SCOPE_SUBTREE,
		.filter = fx_filter("(objectClass=*)"),
		.sink = pause_collect, .sink_ctx = &p, .examine_budget = 3,
	};
	ck_assert_int_eq(backend_search(fx.be, &op, &s), LUMEN_OK);
	ck_assert(s.paused);
	ck_assert(s.resume.active);
	ck_assert_uint_eq(p.r.n, 0);
	ck_assert_int_eq(pinned_old_snapshots(), 0);
	s.examine_budget = 0;
	s.base_ndn = fx_ndn(BASE);
	ck_assert_int_eq(backend_search(fx.be, &op, &s), LUMEN_OK);
	ck_assert(!s.paused);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
	ck_assert_uint_eq(p.r.n, FIXTURE_ENTRIES);
	fx_results_free(&p.r);
}
END_TEST

/* A budget reached among the candidates pauses there: each call examines
 * at most the budget, and every entry comes once, in order. */
START_TEST(budget_pauses_mid_way)
{
	struct pause_sink p = { .every = 1000 };
	struct backend_op op = fx_op();
	struct backend_search s = {
		.base_ndn = fx_ndn(BASE), .scope = LDAP_SCOPE_SUBTREE,
		.filter = fx_filter("(objectClass=inetOrgPerson)"),
		.sink = pause_collect, .sink_ctx = &p, .examine_budget = 2,
	};
	unsigned calls = 0;
	do {
		size_t before = p.r.n;
		s.base_ndn = fx_ndn(BASE);
		ck_assert_int_eq(backend_search(fx.be, &op, &s), LUMEN_OK);
		ck_assert_uint_le(p.r.n - before, 2);
		ck_assert_uint_lt(++calls, 10);
	} while (s.paused);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
	ck_assert_uint_eq(p.r.n, 5);
	ck_assert_uint_eq(calls, 3);
	fx_results_free(&p.r);
}
END_TEST

/* A base search and a short candidate list fit the budget: no pause. */
START_TEST(budget_fits)
{
	struct fx_results r = { 0 };
	struct backend_op op = fx_op();
	struct backend_search s = {
		.base_ndn = fx_ndn(BASE), .scope = LDAP_SCOPE_SUBTREE,
		.filter = fx_filter("(uid=alice)"), .sink = fx_collect, .sink_ctx = &r,
		.examine_budget = 1,
	};
	ck_assert_int_eq(backend_search(fx.be, &op, &s), LUMEN_OK);
	ck_assert(!s.paused);
	ck_assert_uint_eq(r.n, 1);
	fx_results_free(&r);
	s = (struct backend_search){ .base_ndn = fx_ndn(PEOPLE), .scope = LDAP_SCOPE_BASE,
				     .sink = fx_collect, .sink_ctx = &r, .examine_budget = 1 };
	ck_assert_int_eq(backend_search(fx.be, &op, &s), LUMEN_OK);
	ck_assert(!s.paused);
	ck_assert_uint_eq(r.n, 1);
	fx_results_free(&r);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("backend_search");
	TCase *tc = tcase_create("read");
	tcase_add_checked_fixture(tc, fixture_open, fixture_close);
	tcase_add_loop_test(tc, search_table, 0, sizeof(search_cases) / sizeof(search_cases[0]));
	tcase_add_test(tc, size_limit);
	tcase_add_test(tc, root_request_limits);
	tcase_add_test(tc, cache_off_keeps_nothing);
	tcase_add_loop_test(tc, no_such_base, 0, sizeof(missing_cases) / sizeof(missing_cases[0]));
	tcase_add_test(tc, paged_results);
	tcase_add_test(tc, paged_bad_cookie);
	tcase_add_test(tc, sink_stops_and_abandon);
	tcase_add_test(tc, fetch_ids_in_given_order);
	tcase_add_test(tc, renewed_snapshot_sees_moves_out_of_scope);
	tcase_add_test(tc, pause_and_resume);
	tcase_add_test(tc, pause_keeps_limits);
	tcase_add_test(tc, budget_pauses_before_large_plan);
	tcase_add_test(tc, budget_pauses_mid_way);
	tcase_add_test(tc, budget_fits);
	tcase_add_test(tc, search_assertion);
	tcase_add_test(tc, subordinate_counts);
	tcase_add_loop_test(tc, compare_table, 0, sizeof(compare_cases) / sizeof(compare_cases[0]));
	tcase_add_test(tc, compare_assertion);
	tcase_add_loop_test(tc, virtual_attribute_filters, 0,
			    sizeof(virtual_cases) / sizeof(virtual_cases[0]));
	tcase_add_test(tc, virtual_attribute_unindexed);
	tcase_add_test(tc, select_by_suffix);
	tcase_add_test(tc, filter_scratch_is_per_entry);
	tcase_add_test(tc, access_hook_in_search_and_compare);
	tcase_add_test(tc, select_longest_suffix);
	tcase_add_test(tc, changed_suffix_checks_scope);
	tcase_add_test(tc, stored_normalized_forms);
	tcase_add_loop_test(tc, open_errors, 0, sizeof(bad_opens) / sizeof(bad_opens[0]));
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
