/*
 * test_overlay_unique.c — unique_uri lines into domains (overlay_unique.h):
 * the URI's parts and their defaults, keywords quoted and unquoted, several
 * URIs in one line, %-escapes, which attributes a URI covers, its scope,
 * and every refusal (prefix, base outside the suffix, attribute, scope,
 * filter, keyword).
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "dn.h"
#include "lumen_error.h"
#include "overlay_unique.h"
#include "schema.h"

static struct schema *schema;
static struct arena arena;
static struct ber_view suffix;

static void setup(void)
{
	char err[256];
	ck_assert_int_eq(schema_create(&schema), LUMEN_OK);
	const char *files[] = { "schema/core.schema", "schema/cosine.schema",
				"schema/inetorgperson.schema", "schema/lumen.schema" };
	for (size_t i = 0; i < 4; i++)
		ck_assert_msg(schema_load_file(schema, files[i], err, sizeof(err)) == LUMEN_OK, "%s",
			      err);
	ck_assert_int_eq(schema_finalize(schema, err, sizeof(err)), LUMEN_OK);
	arena_init(&arena, 0);
	ck_assert_int_eq(dn_normalize(schema, "dc=example,dc=com", 17, &arena, &suffix), LUMEN_OK);
}

static void teardown(void)
{
	schema_free(schema);
	arena_free(&arena);
}

static int parse(const char *const *words, size_t n, struct unique_domain *d, char *why)
{
	return unique_domain_parse(schema, &suffix, 1, words, n, &arena, d, why, 256);
}

static const struct attribute_type *type(const char *name)
{
	return schema_attribute_type(schema, name, strlen(name));
}

static struct ber_view ndn(const char *dn)
{
	struct ber_view out;
	ck_assert_int_eq(dn_normalize(schema, dn, strlen(dn), &arena, &out), LUMEN_OK);
	return out;
}

START_TEST(attributes_and_scope)
{
	const char *words[] = { "ldap:///?uid,mail?sub" };
	struct unique_domain d;
	char why[256];
	ck_assert_int_eq(parse(words, 1, &d, why), LUMEN_OK);
	ck_assert_uint_eq(d.n_uris, 1);
	ck_assert(!d.strict && !d.ignore);
	const struct unique_uri *u = &d.uris[0];
	ck_assert_uint_eq(u->n_types, 2);
	ck_assert_int_eq(u->scope, LDAP_SCOPE_SUBTREE);
	ck_assert_ptr_null(u->filter);
	ck_assert_uint_eq(u->base_ndn.len, suffix.len);   /* the database's suffix */
	ck_assert(unique_covers(&d, u, type("uid")));
	ck_assert(unique_covers(&d, u, type("mail")));
	ck_assert(!unique_covers(&d, u, type("cn")));
	ck_assert(unique_in_scope(u, ndn("uid=a,ou=x,dc=example,dc=com")));
	ck_assert(unique_in_scope(u, suffix));
	ck_assert(!unique_in_scope(u, ndn("uid=a,dc=other")));
}
END_TEST

START_TEST(base_filter_and_one_level)
{
	const char *words[] = {
		"ldap:///ou=people,dc=example,dc=com?uid?one?(objectClass=inetOrgPerson)" };
	struct unique_domain d;
	char why[256];
	ck_assert_msg(parse(words, 1, &d, why) == LUMEN_OK, "%s", why);
	const struct unique_uri *u = &d.uris[0];
	ck_assert_int_eq(u->scope, LDAP_SCOPE_ONE);
	ck_assert_ptr_nonnull(u->filter);
	ck_assert(unique_in_scope(u, ndn("uid=a,ou=people,dc=example,dc=com")));
	ck_assert(!unique_in_scope(u, ndn("ou=people,dc=example,dc=com")));
	ck_assert(!unique_in_scope(u, ndn("uid=a,ou=x,ou=people,dc=example,dc=com")));
	ck_assert(!unique_in_scope(u, ndn("uid=a,dc=example,dc=com")));
}
END_TEST

START_TEST(keywords_quoted_or_not_and_several_uris)
{
	const char *quoted[] = { "strict ignore ldap:///?objectClass,ou?sub  ldap:///?cn?one" };
	const char *split[] = { "serialize", "ignore", "ldap:///?objectClass?sub" };
	struct unique_domain d;
	char why[256];
	ck_assert_msg(parse(quoted, 1, &d, why) == LUMEN_OK, "%s", why);
	ck_assert(d.strict && d.ignore);
	ck_assert_uint_eq(d.n_uris, 2);
	ck_assert_int_eq(d.uris[1].scope, LDAP_SCOPE_ONE);
	/* ignore: every user attribute but those listed; never operational ones */
	ck_assert(!unique_covers(&d, &d.uris[0], type("ou")));
	ck_assert(unique_covers(&d, &d.uris[0], type("title")));
	ck_assert(!unique_covers(&d, &d.uris[0], type("memberOf")));
	ck_assert(!unique_covers(&d, &d.uris[0], type("modifiersName")));
	ck_assert_msg(parse(split, 3, &d, why) == LUMEN_OK, "%s", why);
	ck_assert(d.ignore && !d.strict);
	ck_assert_uint_eq(d.n_uris, 1);
}
END_TEST

START_TEST(defaults_and_escapes)
{
	const char *words[] = { "ldap:///ou=a%20b,dc=example,dc=com?uid" };
	const char *all[] = { "ldap:///" };
	struct unique_domain d;
	char why[256];
	ck_assert_msg(parse(words, 1, &d, why) == LUMEN_OK, "%s", why);
	ck_assert_int_eq(d.uris[0].scope, LDAP_SCOPE_BASE);   /* slapd accepts it too */
	struct ber_view want = ndn("ou=a b,dc=example,dc=com");
	ck_assert_uint_eq(d.uris[0].base_ndn.len, want.len);
	ck_assert(memcmp(d.uris[0].base_ndn.ptr, want.ptr, want.len) == 0);
	ck_assert_msg(parse(all, 1, &d, why) == LUMEN_OK, "%s", why);
	ck_assert(unique_covers(&d, &d.uris[0], type("cn")));   /* no list: every user type */
	ck_assert(!unique_covers(&d, &d.uris[0], type("entryUUID")));
}
END_TEST

START_TEST(refusals)
{
	static const struct {
		const char *word;
		const char *why;
	} cases[] = {
		{ "http://host/?uid?sub", "expected ldap:///" },
		{ "ldap://host/?uid?sub", "expected ldap:///" },
		{ "ldap:///dc=other?uid?sub", "base not within the database's suffix" },
		{ "ldap:///not a dn?uid?sub", "expected a base DN" },
		{ "ldap:///?nosuch?sub", "unknown attribute \"nosuch\"" },
		{ "ldap:///?uid,?sub", "empty attribute name in \"uid,\"" },
		{ "ldap:///?uid?deep", "expected the scope base, one or sub, not \"deep\"" },
		{ "ldap:///?uid?sub?(uid=x", "bad filter" },
		{ "ldap:///?uid?sub?(uid=%zz)", "bad %-escape in the filter" },
		{ "bogus", "not \"bogus\"" },
		{ "strict", "expected [strict] [ignore] ldap:///" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct unique_domain d;
		char why[256] = "";
		const char *words[] = { cases[i].word };
		ck_assert_msg(parse(words, 1, &d, why) == LUMEN_EMALFORMED, "case %zu", i);
		ck_assert_msg(strstr(why, cases[i].why) != NULL, "case %zu: %s", i, why);
	}
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("overlay_unique");
	TCase *tc = tcase_create("overlay_unique");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, attributes_and_scope);
	tcase_add_test(tc, base_filter_and_one_level);
	tcase_add_test(tc, keywords_quoted_or_not_and_several_uris);
	tcase_add_test(tc, defaults_and_escapes);
	tcase_add_test(tc, refusals);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
