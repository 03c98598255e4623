/*
 * test_search_alias.c — alias dereferencing in back-mdb's search: the base
 * found through aliases (at it and above it), aliases replaced by their
 * targets in one-level and subtree scopes, chains, loops, dangling aliases,
 * the chain and per-search bounds, and a database without aliases.
 */
#include <check.h>
#include <stdio.h>
#include <strings.h>

#include "backend_fixture.h"
#include "ldap_result_codes.h"

#define BASE "dc=example,dc=com"
#define PEOPLE "ou=People,dc=example,dc=com"
#define LINKS "ou=Links,dc=example,dc=com"
#define ALICE "uid=alice,ou=People,dc=example,dc=com"
#define CAROL "uid=carol,ou=Engineering,ou=People,dc=example,dc=com"
#define ENGINEERING "ou=Engineering,ou=People,dc=example,dc=com"

static void add_alias(const char *cn, const char *parent, const char *target)
{
	char dn[256], naming[64], aliased[256];
	snprintf(dn, sizeof dn, "cn=%s,%s", cn, parent);
	snprintf(naming, sizeof naming, "cn: %s", cn);
	snprintf(aliased, sizeof aliased, "aliasedObjectName: %s", target);
	ck_assert_int_eq(fx_add(dn, FX_LINES("objectClass: alias",
					     "objectClass: extensibleObject", naming, aliased)),
			 LDAP_SUCCESS);
}

/* ou=Links: to-people, to-eng (inside to-people's target), to-alice,
 * to-chain (to to-alice), dangling, loop-a <-> loop-b. */
static void alias_tree(void)
{
	fixture_open();
	ck_assert_int_eq(fx_add(LINKS, FX_LINES("objectClass: organizationalUnit", "ou: Links")),
			 LDAP_SUCCESS);
	add_alias("to-people", LINKS, PEOPLE);
	add_alias("to-eng", LINKS, ENGINEERING);
	add_alias("to-alice", LINKS, ALICE);
	add_alias("to-chain", LINKS, "cn=to-alice," LINKS);
	add_alias("dangling", LINKS, "uid=ghost," PEOPLE);
	add_alias("loop-a", LINKS, "cn=loop-b," LINKS);
	add_alias("loop-b", LINKS, "cn=loop-a," LINKS);
}

static int deref_search(const char *base, enum ldap_scope scope, enum ldap_deref deref,
			const char *filter, struct fx_results *out, struct backend_op *op)
{
	*op = fx_op();
	struct backend_search s = {
		.base_ndn = fx_ndn(base), .scope = scope, .deref = deref,
		.filter = filter ? fx_filter(filter) : NULL,
		.sink = fx_collect, .sink_ctx = out,
	};
	int rc = backend_search(fx.be, op, &s);
	ck_assert_msg(rc == LUMEN_OK, "search: %s", lumen_strerror(rc));
	return op->result_code;
}

struct alias_case {
	const char *name;
	const char *base;
	enum ldap_scope scope;
	enum ldap_deref deref;
	const char *filter;
	int code;
	size_t entries;
	const char *must_have;       /* a DN in the result, or the matchedDN */
};

static const struct alias_case alias_cases[] = {
	{ "never: the alias itself", "cn=to-people," LINKS, LDAP_SCOPE_BASE, LDAP_DEREF_NEVER,
	  NULL, LDAP_SUCCESS, 1, "cn=to-people," LINKS },
	{ "searching: base not dereferenced", "cn=to-people," LINKS, LDAP_SCOPE_SUBTREE,
	  LDAP_DEREF_SEARCHING, NULL, LDAP_SUCCESS, 1, "cn=to-people," LINKS },
	{ "finding: base is the target", "cn=to-people," LINKS, LDAP_SCOPE_BASE,
	  LDAP_DEREF_FINDING, NULL, LDAP_SUCCESS, 1, PEOPLE },
	{ "finding: target's children", "cn=to-people," LINKS, LDAP_SCOPE_ONE,
	  LDAP_DEREF_FINDING, NULL, LDAP_SUCCESS, 5, ENGINEERING },
	{ "finding: a chain", "cn=to-chain," LINKS, LDAP_SCOPE_BASE, LDAP_DEREF_ALWAYS, NULL,
	  LDAP_SUCCESS, 1, ALICE },
	{ "finding: alias above the base", "uid=carol,ou=Engineering,cn=to-people," LINKS,
	  LDAP_SCOPE_BASE, LDAP_DEREF_FINDING, NULL, LDAP_SUCCESS, 1, CAROL },
	{ "finding: missing below the target", "uid=ghost,cn=to-people," LINKS,
	  LDAP_SCOPE_BASE, LDAP_DEREF_FINDING, NULL, LDAP_NO_SUCH_OBJECT, 0, PEOPLE },
	{ "not finding: below an alias", "uid=alice,cn=to-people," LINKS, LDAP_SCOPE_BASE,
	  LDAP_DEREF_SEARCHING, NULL, LDAP_NO_SUCH_OBJECT, 0, "cn=to-people," LINKS },
	{ "finding: dangling", "cn=dangling," LINKS, LDAP_SCOPE_BASE, LDAP_DEREF_FINDING,
	  NULL, LDAP_ALIAS_PROBLEM, 0, "cn=dangling," LINKS },
	{ "finding: loop", "cn=loop-a," LINKS, LDAP_SCOPE_SUBTREE, LDAP_DEREF_ALWAYS, NULL,
	  LDAP_ALIAS_PROBLEM, 0, "cn=loop-a," LINKS },
	{ "finding: dangling above the base", "uid=x,cn=dangling," LINKS, LDAP_SCOPE_BASE,
	  LDAP_DEREF_ALWAYS, NULL, LDAP_ALIAS_PROBLEM, 0, "cn=dangling," LINKS },
	/* ou=Links, one level: to-people, to-eng, to-alice (twice, with
	 * to-chain) become People, Engineering, alice; the rest pass */
	{ "searching one level", LINKS, LDAP_SCOPE_ONE, LDAP_DEREF_SEARCHING, NULL,
	  LDAP_SUCCESS, 3, ALICE },
	{ "never one level", LINKS, LDAP_SCOPE_ONE, LDAP_DEREF_NEVER, NULL, LDAP_SUCCESS, 7,
	  "cn=loop-a," LINKS },
	/* subtree: ou=Links and People's whole subtree, each entry once */
	{ "searching subtree", LINKS, LDAP_SCOPE_SUBTREE, LDAP_DEREF_ALWAYS, NULL,
	  LDAP_SUCCESS, 1 + 1 + FIXTURE_PERSONS + 1, CAROL },
	{ "searching subtree, indexed filter", LINKS, LDAP_SCOPE_SUBTREE, LDAP_DEREF_ALWAYS,
	  "(uid=carol)", LDAP_SUCCESS, 1, CAROL },
	{ "searching subtree, unindexed filter", LINKS, LDAP_SCOPE_SUBTREE,
	  LDAP_DEREF_SEARCHING, "(description=first)", LDAP_SUCCESS, 1, ALICE },
	{ "children scope", LINKS, LDAP_SCOPE_CHILDREN, LDAP_DEREF_SEARCHING, NULL,
	  LDAP_SUCCESS, 1 + FIXTURE_PERSONS + 1, PEOPLE },
	{ "no alias in scope", PEOPLE, LDAP_SCOPE_SUBTREE, LDAP_DEREF_ALWAYS, NULL,
	  LDAP_SUCCESS, 1 + FIXTURE_PERSONS + 1, CAROL },
};

START_TEST(alias_table)
{
	const struct alias_case *c = &alias_cases[_i];
	struct fx_results r = { 0 };
	struct backend_op op;
	int code = deref_search(c->base, c->scope, c->deref, c->filter, &r, &op);
	ck_assert_msg(code == c->code, "%s: code %d", c->name, code);
	ck_assert_msg(r.n == c->entries, "%s: %zu entries, expected %zu", c->name, r.n,
		      c->entries);
	if (c->code == LDAP_SUCCESS)
		ck_assert_msg(fx_results_has(&r, c->must_have), "%s: missing %s", c->name,
			      c->must_have);
	else
		ck_assert_msg(op.matched_dn.len == strlen(c->must_have) &&
			      strncasecmp((const char *)op.matched_dn.ptr, c->must_have,
					  op.matched_dn.len) == 0,
			      "%s: matchedDN %.*s", c->name, (int)op.matched_dn.len,
			      (const char *)op.matched_dn.ptr);
	for (size_t i = 0; i < r.n; i++)
		for (size_t j = i + 1; j < r.n; j++)
			ck_assert_msg(strcmp(r.dns[i], r.dns[j]) != 0, "%s: %s twice", c->name,
				      r.dns[i]);
	fx_results_free(&r);
}
END_TEST

/* Sixteen aliases in a row: one more than a chain may have. */
START_TEST(chain_bound)
{
	char parent[64], target[96];
	for (int i = 15; i >= 0; i--) {
		snprintf(parent, sizeof parent, "c%d", i);
		if (i == 15)
			snprintf(target, sizeof target, "%s", ALICE);
		else
			snprintf(target, sizeof target, "cn=c%d,%s", i + 1, LINKS);
		add_alias(parent, LINKS, target);
	}
	struct fx_results r = { 0 };
	struct backend_op op;
	ck_assert_int_eq(deref_search("cn=c1," LINKS, LDAP_SCOPE_BASE, LDAP_DEREF_FINDING, NULL,
				      &r, &op), LDAP_SUCCESS);
	ck_assert_uint_eq(r.n, 1);
	fx_results_free(&r);
	ck_assert_int_eq(deref_search("cn=c0," LINKS, LDAP_SCOPE_BASE, LDAP_DEREF_FINDING, NULL,
				      &r, &op), LDAP_ALIAS_DEREFERENCING_PROBLEM);
	ck_assert_uint_eq(r.n, 0);
	ck_assert_str_eq(op.diagnostic, "maximum deref depth exceeded");
	fx_results_free(&r);
}
END_TEST

static int count_entries(void *ctx, const struct entry *e, const struct backend_entry_info *info)
{
	(void)e;
	(void)info;
	++*(size_t *)ctx;
	return 0;
}

/* More aliases in one scope than a search follows: adminLimitExceeded. */
START_TEST(per_search_bound)
{
	char cn[32];
	ck_assert_int_eq(fx_add("ou=Many," BASE, FX_LINES("objectClass: organizationalUnit",
							  "ou: Many")), LDAP_SUCCESS);
	for (int i = 0; i <= BACKEND_ALIAS_MAX_PER_SEARCH; i++) {
		snprintf(cn, sizeof cn, "m%d", i);
		add_alias(cn, "ou=Many," BASE, ALICE);
	}
	struct fx_results r = { 0 };
	struct backend_op op;
	ck_assert_int_eq(deref_search("ou=Many," BASE, LDAP_SCOPE_ONE, LDAP_DEREF_SEARCHING, NULL,
				      &r, &op), LDAP_ADMIN_LIMIT_EXCEEDED);
	ck_assert_uint_eq(r.n, 0);
	ck_assert_ptr_nonnull(op.diagnostic);
	fx_results_free(&r);
	size_t n = 0;
	op = fx_op();
	struct backend_search never = {
		.base_ndn = fx_ndn("ou=Many," BASE), .scope = LDAP_SCOPE_ONE,
		.deref = LDAP_DEREF_NEVER, .sink = count_entries, .sink_ctx = &n,
	};
	ck_assert_int_eq(backend_search(fx.be, &op, &never), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
	ck_assert_uint_eq(n, BACKEND_ALIAS_MAX_PER_SEARCH + 1);
}
END_TEST

/* An alias under two searched subtrees counts (and is followed) once. */
START_TEST(overlapping_roots_count_once)
{
	char cn[32];
	const unsigned many = BACKEND_ALIAS_MAX_PER_SEARCH / 2 + 100;
	ck_assert_int_eq(fx_add("ou=Many," BASE, FX_LINES("objectClass: organizationalUnit",
							  "ou: Many")), LDAP_SUCCESS);
	for (unsigned i = 0; i < many; i++) {
		snprintf(cn, sizeof cn, "m%u", i);
		add_alias(cn, "ou=Many," BASE, ALICE);
	}
	add_alias("up", "ou=Many," BASE, BASE);   /* the whole tree: ou=Many again */
	size_t n = 0;
	struct backend_op op = fx_op();
	struct backend_search s = {
		.base_ndn = fx_ndn("ou=Many," BASE), .scope = LDAP_SCOPE_SUBTREE,
		.deref = LDAP_DEREF_SEARCHING, .sink = count_entries, .sink_ctx = &n,
	};
	ck_assert_int_eq(backend_search(fx.be, &op, &s), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
	ck_assert_uint_eq(n, FIXTURE_ENTRIES + 2);   /* every entry but the aliases */
}
END_TEST

/* The fixture's own tree has no alias: derefAlways changes nothing. */
START_TEST(no_aliases)
{
	struct fx_results r = { 0 };
	struct backend_op op;
	ck_assert_int_eq(deref_search(BASE, LDAP_SCOPE_SUBTREE, LDAP_DEREF_ALWAYS, NULL, &r, &op),
			 LDAP_SUCCESS);
	ck_assert_uint_eq(r.n, FIXTURE_ENTRIES);
	fx_results_free(&r);
	ck_assert_int_eq(fx_search(BASE, LDAP_SCOPE_ONE, "(objectClass=*)", &r), LDAP_SUCCESS);
	size_t never = r.n;
	fx_results_free(&r);
	ck_assert_int_eq(deref_search(BASE, LDAP_SCOPE_ONE, LDAP_DEREF_ALWAYS, "(objectClass=*)",
				      &r, &op), LDAP_SUCCESS);
	ck_assert_uint_eq(r.n, never);
	fx_results_free(&r);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("search_alias");
	TCase *tc = tcase_create("aliases");
	tcase_add_checked_fixture(tc, alias_tree, fixture_close);
	tcase_add_loop_test(tc, alias_table, 0, sizeof(alias_cases) / sizeof(alias_cases[0]));
	tcase_add_test(tc, chain_bound);
	tcase_add_test(tc, per_search_bound);
	tcase_add_test(tc, overlapping_roots_count_once);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	TCase *plain = tcase_create("plain");
	tcase_add_checked_fixture(plain, fixture_open, fixture_close);
	tcase_add_test(plain, no_aliases);
	suite_add_tcase(s, plain);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
