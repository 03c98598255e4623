/*
 * test_authz.c — authzIds and the authzTo/authzFrom rule matcher: every
 * rule form matching and not, case and spacing of DNs, regexes, u: through
 * a fake authz-regexp, URLs with scope and filter (a fake entry source),
 * and forms that never match; plus the authz syntax's validator.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "authz.h"
#include "dn.h"
#include "entry_fixture.h"
#include "lumen_error.h"

#define SUFFIX "dc=example,dc=com"
#define PEOPLE "ou=people," SUFFIX
#define ALICE "uid=alice," PEOPLE
#define BOB "uid=bob," PEOPLE

#define STAFF "cn=staff," SUFFIX
#define USTAFF "cn=ustaff," SUFFIX

static struct arena arena;
static struct entry *alice, *staff, *ustaff;
static unsigned fetches;

/* authz-regexp "uid=([^,]*),cn=auth" → "uid=$1,ou=people,...". */
static int fake_map(void *ctx, const char *identity, struct arena *a, struct ber_view *ndn)
{
	char dn[256];
	(void)ctx;
	const char *end = strstr(identity, ",cn=auth");
	if (strncmp(identity, "uid=", 4) != 0 || end == NULL)
		return LUMEN_EMALFORMED;
	snprintf(dn, sizeof(dn), "%.*s," PEOPLE, (int)(end - identity), identity);
	return dn_normalize(fixture_schema, dn, strlen(dn), a, ndn);
}

static int fake_fetch(void *ctx, struct ber_view ndn, struct entry **out)
{
	(void)ctx;
	fetches++;
	*out = NULL;
	struct entry *known[] = { alice, staff, ustaff };
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (ndn.len == known[i]->ndn.len && memcmp(ndn.ptr, known[i]->ndn.ptr, ndn.len) == 0)
			return entry_dup(known[i], out);
	return LUMEN_OK;
}

static struct authz_env env(void)
{
	return (struct authz_env){ fixture_schema, &arena, fake_map, fake_fetch, NULL };
}

static void setup(void)
{
	fixture_schema_setup();
	arena_init(&arena, 1u << 20);
	alice = fixture_entry(ALICE, "objectClass: inetOrgPerson\nuid: alice\ncn: Alice\nsn: A");
	staff = fixture_entry(STAFF, "objectClass: groupOfNames\ncn: staff\n"
			      "member: UID=Alice, OU=People, DC=example, DC=com");
	ustaff = fixture_entry(USTAFF, "objectClass: groupOfUniqueNames\ncn: ustaff\n"
			       "uniqueMember: " BOB);
	fetches = 0;
}

static void teardown(void)
{
	entry_free(alice);
	entry_free(staff);
	entry_free(ustaff);
	arena_free(&arena);
	fixture_schema_teardown();
}

static bool matches(const char *rule, const char *dn)
{
	struct authz_env e = env();
	struct ber_view ndn = { (const uint8_t *)"", 0 };
	if (dn[0] != '\0')
		ck_assert_int_eq(dn_normalize(fixture_schema, dn, strlen(dn), &arena, &ndn), LUMEN_OK);
	return authz_rule_matches(&e, fixture_view(rule), ndn);
}

START_TEST(exact_forms)
{
	ck_assert(matches("dn:" ALICE, ALICE));
	ck_assert(matches("DN:UID=Alice, OU=People,DC=example,DC=com", ALICE));
	ck_assert(matches("dn.exact:" ALICE, ALICE));
	ck_assert(matches("dn.base:" ALICE, ALICE));
	ck_assert(!matches("dn:" ALICE, BOB));
	ck_assert(!matches("dn:" PEOPLE, ALICE));
	ck_assert(!matches("dn:not a dn", ALICE));
	ck_assert(!matches("dn:" ALICE, ""));
}
END_TEST

START_TEST(scoped_forms)
{
	ck_assert(matches("dn.subtree:" PEOPLE, ALICE));
	ck_assert(matches("dn.subtree:" PEOPLE, PEOPLE));
	ck_assert(matches("dn.children:" PEOPLE, ALICE));
	ck_assert(!matches("dn.children:" PEOPLE, PEOPLE));
	ck_assert(matches("dn.onelevel:" PEOPLE, ALICE));
	ck_assert(!matches("dn.onelevel:" SUFFIX, ALICE));
	ck_assert(!matches("dn.subtree:" PEOPLE, "uid=x," SUFFIX));
	ck_assert(!matches("dn.subtree:" PEOPLE, ""));
	/* slapd's own spellings that its syntax refuses never match here either */
	ck_assert(!matches("dn.sub:" PEOPLE, ALICE));
	ck_assert(!matches("dn.one:" PEOPLE, ALICE));
}
END_TEST

START_TEST(regex_and_anyone)
{
	ck_assert(matches("dn.regex:^uid=[ab][^,]*,ou=people,dc=example,dc=com$", ALICE));
	ck_assert(matches("dn.regex:^UID=A", ALICE));      /* case-insensitive */
	ck_assert(!matches("dn.regex:^uid=c", ALICE));
	ck_assert(!matches("dn.regex:[", ALICE));          /* does not compile */
	ck_assert(matches("*", ALICE));
	ck_assert(matches("dn:*", BOB));
	ck_assert(!matches("*", ""));
}
END_TEST

START_TEST(user_form)
{
	ck_assert(matches("u:alice", ALICE));
	ck_assert(matches("U:bob", BOB));
	ck_assert(!matches("u:bob", ALICE));
	ck_assert(!matches("u:", ALICE));
	ck_assert(!matches("u.EXTERNAL:alice", ALICE));    /* not read */
}
END_TEST

START_TEST(url_form)
{
	ck_assert(matches("ldap:///" PEOPLE "??sub?(cn=alice)", ALICE));
	ck_assert_uint_eq(fetches, 1);
	ck_assert(!matches("ldap:///" PEOPLE "??sub?(cn=bob)", ALICE));
	ck_assert(!matches("ldap:///" PEOPLE "??sub?(cn=bob)", BOB));   /* no entry */
	ck_assert(matches("ldap:///" PEOPLE "??one?(objectClass=person)", ALICE));
	ck_assert(!matches("ldap:///" SUFFIX "??one?(objectClass=person)", ALICE));
	ck_assert(!matches("ldap:///" ALICE "??base?(cn=alice)?x", ALICE));
	ck_assert(matches("ldap:///ou=people%2Cdc=example,dc=com??children?(cn=alice)", ALICE));
	fetches = 0;
	ck_assert(!matches("ldap:///" PEOPLE "??sub", ALICE));            /* no filter */
	ck_assert(!matches("ldap://host/" PEOPLE "??sub?(cn=alice)", ALICE));
	ck_assert(!matches("ldap:///" PEOPLE "?cn?sub?(cn=alice)", ALICE));
	ck_assert(!matches("ldap:///" PEOPLE "??nowhere?(cn=alice)", ALICE));
	ck_assert(!matches("ldap:///" PEOPLE "??sub?(cn=alice", ALICE));
	ck_assert(!matches("ldap:///%zz??sub?(cn=alice)", ALICE));
	ck_assert_uint_eq(fetches, 0);
}
END_TEST

START_TEST(unknown_forms)
{
	ck_assert(!matches("", ALICE));
	ck_assert(!matches("nonsense", ALICE));
	ck_assert(!matches("d", ALICE));
}
END_TEST

START_TEST(group_form)
{
	ck_assert(matches("group:" STAFF, ALICE));                 /* groupOfNames/member */
	ck_assert(matches("group/groupOfNames/member:" STAFF, ALICE));
	ck_assert(matches("GROUP/groupofnames/MEMBER:CN=Staff,DC=Example,DC=com", ALICE));
	ck_assert(!matches("group:" STAFF, BOB));                  /* not a member */
	ck_assert(!matches("group:" STAFF, ""));                   /* anonymous */
	ck_assert(matches("group/groupOfUniqueNames/uniqueMember:" USTAFF, BOB));
	ck_assert(!matches("group:" USTAFF, BOB));                 /* not a groupOfNames */
	ck_assert(!matches("group/groupOfUniqueNames/uniqueMember:" STAFF, ALICE));
	ck_assert(!matches("group/groupOfNames/owner:" STAFF, ALICE));   /* no such values */
	ck_assert(!matches("group/groupOfNames/member:cn=x," SUFFIX, ALICE));   /* no entry */
	ck_assert(!matches("group/noSuchClass/member:" STAFF, ALICE));
	ck_assert(!matches("group/groupOfNames/noSuchType:" STAFF, ALICE));
	ck_assert(!matches("group/groupOfNames/member" STAFF, ALICE));   /* no ':' */
	ck_assert(!matches("group//member:" STAFF, ALICE));
	ck_assert(!matches("group:not a dn", ALICE));
	ck_assert(!matches("group:", ALICE));
	ck_assert(!matches("groups:" STAFF, ALICE));
}
END_TEST

static int resolve(const char *authzid, struct ber_view *ndn)
{
	struct authz_env e = env();
	return authz_id_resolve(&e, fixture_view(authzid), ndn);
}

START_TEST(authzid_forms)
{
	struct ber_view ndn;
	ck_assert_int_eq(resolve("dn:UID=Alice,OU=People,DC=Example,DC=Com", &ndn), LUMEN_OK);
	ck_assert(ber_view_eq_str(ndn, ALICE));
	ck_assert_int_eq(resolve("u:bob", &ndn), LUMEN_OK);
	ck_assert(ber_view_eq_str(ndn, BOB));
	ck_assert_int_eq(resolve("dn:", &ndn), LUMEN_OK);
	ck_assert_uint_eq(ndn.len, 0);
	ck_assert_int_eq(resolve("u:", &ndn), LUMEN_EMALFORMED);
	ck_assert_int_eq(resolve("dn.exact:" ALICE, &ndn), LUMEN_EMALFORMED);
	ck_assert_int_eq(resolve("x:" ALICE, &ndn), LUMEN_EMALFORMED);
	ck_assert_int_eq(resolve("dn:not a dn", &ndn), LUMEN_EMALFORMED);
	ck_assert_int_eq(resolve("d", &ndn), LUMEN_EMALFORMED);
}
END_TEST

static int validate(const char *value)
{
	const struct attribute_type *t = schema_attribute_type(fixture_schema, "authzTo", 7);
	ck_assert_ptr_nonnull(t);
	return t->syntax->validate((const uint8_t *)value, strlen(value));
}

START_TEST(syntax)
{
	static const char *const good[] = {
		"dn:" ALICE, "dn.exact:" ALICE, "DN:" ALICE, "dn.subtree:" SUFFIX,
		"dn.children:" SUFFIX, "dn.onelevel:" SUFFIX, "dn.regex:^uid=.*$", "dn.regex:[",
		"u:bob", "u.EXTERNAL:bob", "*", "", "dn.exact:",
		"ldap:///" SUFFIX "??sub?(cn=alice)", "ldap:///" SUFFIX "??one", "ldap:///" SUFFIX,
		"ldap:///??sub?(cn=alice)", "ldap:///" SUFFIX "??children?(cn=a)",
		"group/groupOfNames/member:cn=x," SUFFIX,
	};
	static const char *const bad[] = {
		"dn.base:" ALICE, "dn.one:" SUFFIX, "dn.sub:" SUFFIX, "nonsense", "dn:not a dn",
		"ldap://host/" SUFFIX "??sub?(cn=a)", "ldap:///" SUFFIX "?cn?sub?(cn=a)",
		"ldap:///" SUFFIX "??sub?(cn=a", "ldap:///" SUFFIX "??base?(cn=a)?x",
		"ldap:///" SUFFIX "??nowhere", "x:y", "u", "group",
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ck_assert_msg(validate(good[i]) == LUMEN_OK, "%s", good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(validate(bad[i]) == LUMEN_EMALFORMED, "%s", bad[i]);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("authz");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, exact_forms);
	tcase_add_test(tc, scoped_forms);
	tcase_add_test(tc, regex_and_anyone);
	tcase_add_test(tc, user_form);
	tcase_add_test(tc, url_form);
	tcase_add_test(tc, unknown_forms);
	tcase_add_test(tc, group_form);
	tcase_add_test(tc, authzid_forms);
	tcase_add_test(tc, syntax);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
