/*
 * test_acl.c — access-control decisions: each WHAT and WHO kind allowed
 * and denied, stop/continue/break, the default policy, the implicit deny,
 * the rootdn, self, groups (fake lookup), @class sets, the children
 * pseudo-attribute, $N substitution, the per-operation checks and the
 * filter-oracle guard.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "access_rules_fixture.h"
#include "acl.h"
#include "entry_fixture.h"
#include "filter.h"
#include "lumen_error.h"

#define SUFFIX "dc=example,dc=com"
#define PEOPLE "ou=people," SUFFIX
#define ALICE "uid=alice," PEOPLE
#define BOB "uid=bob," PEOPLE
#define ADMINS "cn=admins," SUFFIX

static struct arena arena;
static struct access_rules db_rules, global_rules;
static struct entry *suffix, *people, *alice, *bob, *admins, *printer;
static struct acl_subject anon, as_alice, as_bob, as_root;
static unsigned group_calls;

static int fake_is_member(void *context, struct ber_view group_ndn,
			  const struct object_class *group_class,
			  const struct attribute_type *member_type, struct ber_view member_ndn,
			  bool *is_member)
{
	(void)context;
	group_calls++;
	if (ber_view_eq_str(group_ndn, "cn=broken," SUFFIX))
		return LUMEN_EIO;
	const struct entry *group = ber_view_eq_str(group_ndn, ADMINS) ? admins : NULL;
	*is_member = false;
	if (group == NULL || !entry_is_instance_of(group, group_class))
		return LUMEN_OK;
	const struct entry_attribute *a = entry_find_type(group, member_type);
	*is_member = a != NULL && entry_attribute_find_normalized(a, member_ndn) >= 0;
	return LUMEN_OK;
}

static const struct acl_group_lookup groups = { fake_is_member, NULL };
static const struct acl_policy policy = { &db_rules, &global_rules, &groups };

static struct acl_subject subject(const char *ndn, bool is_root)
{
	return (struct acl_subject){ fixture_view(ndn), is_root, &arena };
}

static void setup(void)
{
	fixture_schema_setup();
	arena_init(&arena, 0);
	memset(&db_rules, 0, sizeof(db_rules));
	memset(&global_rules, 0, sizeof(global_rules));
	group_calls = 0;
	suffix = fixture_entry(SUFFIX, "objectClass: organization\nobjectClass: dcObject\n"
				       "o: Example\ndc: example");
	people = fixture_entry(PEOPLE, "objectClass: organizationalUnit\nou: people");
	alice = fixture_entry(ALICE, "objectClass: inetOrgPerson\ncn: Alice Liddell\n"
				     "sn: Liddell\nuid: alice\nmail: alice@example.com\n"
				     "userPassword: secret");
	bob = fixture_entry(BOB, "objectClass: inetOrgPerson\ncn: Bob\nsn: Builder\n"
				 "uid: bob\nuserPassword: hunter2");
	admins = fixture_entry(ADMINS, "objectClass: groupOfNames\ncn: admins\n"
				       "member: uid=alice,ou=People,dc=example,dc=com");
	printer = fixture_entry("cn=printer," SUFFIX, "objectClass: device\ncn: printer");
	anon = subject("", false);
	as_alice = subject(ALICE, false);
	as_bob = subject(BOB, false);
	as_root = subject("cn=manager," SUFFIX, true);
}

static void teardown(void)
{
	struct entry *all[] = { suffix, people, alice, bob, admins, printer };
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		entry_free(all[i]);
	access_rules_free(&db_rules);
	access_rules_free(&global_rules);
	arena_free(&arena);
	fixture_schema_teardown();
}

/* Directives into rules (access_rules_fixture.h). */
static void load(struct access_rules *rules, const char *text)
{
	access_rules_load(rules, text);
}

static const struct attribute_type *type(const char *name)
{
	if (name == NULL)
		return ACL_ATTR_ENTRY;
	if (strcmp(name, "children") == 0)
		return ACL_ATTR_CHILDREN;
	const struct attribute_type *t = schema_attribute_type(fixture_schema, name, strlen(name));
	ck_assert_ptr_nonnull(t);
	return t;
}

static enum access_level level(const struct acl_subject *who, const struct entry *e,
			       const char *attr)
{
	struct acl_target t;
	acl_target_init(&t, &policy, who, e);
	return acl_target_level(&t, type(attr));
}

/* ------------------------------------------------------ default policy */

START_TEST(test_default_policy_without_rules)
{
	load(&db_rules, "");
	ck_assert_int_eq(level(&anon, alice, "userPassword"), ACCESS_READ);
	ck_assert_int_eq(level(&anon, alice, NULL), ACCESS_READ);
	ck_assert_int_eq(level(&as_bob, alice, "mail"), ACCESS_READ);
	ck_assert(acl_allowed(&policy, &anon, alice, type("cn"), ACCESS_SEARCH));
	ck_assert(acl_may_bind(&policy, &anon, alice));
	ck_assert(!acl_allowed(&policy, &as_alice, alice, type("mail"), ACCESS_WRITE));
	ck_assert(!acl_may_delete(&policy, &as_alice, people, alice));
	ck_assert_int_eq(level(&as_root, alice, "mail"), ACCESS_MANAGE);
	ck_assert(acl_may_delete(&policy, &as_root, people, alice));
	/* NULL lists are "no rules" too */
	struct acl_policy empty = { NULL, NULL, NULL };
	ck_assert(acl_allowed(&empty, &anon, alice, NULL, ACCESS_READ));
	ck_assert(!acl_allowed(&empty, &anon, alice, NULL, ACCESS_WRITE));
}
END_TEST

START_TEST(test_implicit_deny_once_rules_exist)
{
	load(&global_rules, "access to dn.base=\"" SUFFIX "\" by * read\n"
			    "access to attrs=mail by users read");
	ck_assert_int_eq(level(&anon, suffix, NULL), ACCESS_READ);
	/* no rule matches alice's entry: the implicit final `by * none` */
	ck_assert_int_eq(level(&anon, alice, NULL), ACCESS_NONE);
	ck_assert_int_eq(level(&as_bob, alice, "cn"), ACCESS_NONE);
	/* the rule matches but no `by` does: the implicit `by * none` */
	ck_assert_int_eq(level(&anon, alice, "mail"), ACCESS_NONE);
	ck_assert_int_eq(level(&as_bob, alice, "mail"), ACCESS_READ);
	ck_assert(!acl_may_bind(&policy, &anon, alice));
}
END_TEST

START_TEST(test_root_always_allowed)
{
	load(&db_rules, "access to * by * none");
	ck_assert_int_eq(level(&as_root, alice, "userPassword"), ACCESS_MANAGE);
	ck_assert_int_eq(level(&as_root, people, "children"), ACCESS_MANAGE);
	ck_assert_int_eq(level(&as_alice, alice, "mail"), ACCESS_NONE);
	ck_assert(acl_may_add(&policy, &as_root, people, bob));
	ck_assert(acl_may_modify(&policy, &as_root, alice, NULL, 0));
	ck_assert(acl_may_rename(&policy, &as_root, alice, people, NULL, fixture_view(PEOPLE), NULL,
				 NULL));
}
END_TEST

/* ---------------------------------------------------------- WHAT kinds */

static struct entry **const entry_slot[] = { &suffix, &people, &alice, &bob, &admins, &printer };
enum { E_SUFFIX, E_PEOPLE, E_ALICE, E_BOB, E_ADMINS, E_PRINTER };

static const struct {
	const char *what;
	int target;
	const char *attr;
	bool allowed;
} what_cases[] = {
	{ "*", E_ALICE, NULL, true },
	{ "dn.base=\"" PEOPLE "\"", E_PEOPLE, NULL, true },
	{ "dn.base=\"" PEOPLE "\"", E_ALICE, NULL, false },
	{ "dn.one=\"" PEOPLE "\"", E_ALICE, "cn", true },
	{ "dn.one=\"" PEOPLE "\"", E_PEOPLE, "ou", false },
	{ "dn.one=\"" SUFFIX "\"", E_ALICE, NULL, false },
	{ "dn.subtree=\"ou=People, dc=Example, dc=com\"", E_PEOPLE, NULL, true },
	{ "dn.subtree=\"" PEOPLE "\"", E_ALICE, "mail", true },
	{ "dn.subtree=\"" PEOPLE "\"", E_SUFFIX, NULL, false },
	{ "dn.children=\"" PEOPLE "\"", E_ALICE, NULL, true },
	{ "dn.children=\"" PEOPLE "\"", E_PEOPLE, NULL, false },
	{ "dn.regex=\"^uid=[^,]+,ou=people,dc=example,dc=com$\"", E_BOB, NULL, true },
	{ "dn.regex=\"^uid=[^,]+,ou=people,dc=example,dc=com$\"", E_PRINTER, NULL, false },
	{ "dn.regex=\"^UID=alice,\"", E_ALICE, NULL, true },      /* case-insensitive */
	{ "attrs=mail", E_ALICE, "mail", true },
	{ "attrs=mail", E_ALICE, "cn", false },
	{ "attrs=mail", E_ALICE, NULL, false },
	{ "attrs=entry", E_ALICE, NULL, true },
	{ "attrs=entry", E_ALICE, "mail", false },
	{ "attrs=name", E_ALICE, "sn", true },                    /* subtype */
	{ "attrs=name", E_ALICE, "mail", false },
	{ "attrs=@person", E_ALICE, "telephoneNumber", true },
	{ "attrs=@person", E_ALICE, "mail", false },
	{ "attrs=@inetOrgPerson", E_ALICE, "mail", true },
	{ "attrs=children", E_PEOPLE, "children", true },
	{ "attrs=children", E_PEOPLE, NULL, false },
	{ "*", E_PEOPLE, "children", true },
	{ "filter=(objectClass=device)", E_PRINTER, "cn", true },
	{ "filter=(objectClass=device)", E_ALICE, "cn", false },
	{ "filter=(objectClass=person)", E_ALICE, NULL, true },   /* inetOrgPerson is a person */
	{ "dn.subtree=\"" PEOPLE "\" attrs=userPassword filter=(objectClass=person)", E_ALICE,
	  "userPassword", true },
	{ "dn.subtree=\"" PEOPLE "\" attrs=userPassword filter=(objectClass=person)", E_ALICE,
	  "mail", false },
	{ "dn.subtree=\"" PEOPLE "\" attrs=userPassword filter=(uid=bob)", E_ALICE,
	  "userPassword", false },
	{ "dn.subtree=\"" PEOPLE "\" attrs=cn filter=(objectClass=device)", E_PRINTER, "cn", false },
};

START_TEST(test_what_kinds)
{
	char line[512];
	snprintf(line, sizeof(line), "access to %s by * read", what_cases[_i].what);
	load(&db_rules, line);
	const struct entry *e = *entry_slot[what_cases[_i].target];
	bool allowed = acl_allowed(&policy, &anon, e, type(what_cases[_i].attr), ACCESS_READ);
	ck_assert_msg(allowed == what_cases[_i].allowed, "%s on %s/%s", what_cases[_i].what,
		      (const char *)e->ndn.ptr, what_cases[_i].attr ? what_cases[_i].attr : "entry");
}
END_TEST

/* ----------------------------------------------------------- WHO kinds */

static const struct {
	const char *who;
	const struct acl_subject *subject;
	int target;
	bool allowed;
} who_cases[] = {
	{ "*", &anon, E_ALICE, true },
	{ "anonymous", &anon, E_ALICE, true },
	{ "anonymous", &as_alice, E_ALICE, false },
	{ "users", &as_alice, E_BOB, true },
	{ "users", &anon, E_BOB, false },
	{ "self", &as_alice, E_ALICE, true },
	{ "self", &as_alice, E_BOB, false },
	{ "self", &anon, E_SUFFIX, false },
	{ "dn.exact=\"uid=Alice,ou=People,dc=example,dc=com\"", &as_alice, E_BOB, true },
	{ "dn.exact=\"" ALICE "\"", &as_bob, E_BOB, false },
	{ "dn.base=\"\"", &anon, E_BOB, true },
	{ "dn.base=\"\"", &as_bob, E_BOB, false },
	{ "dn.one=\"" PEOPLE "\"", &as_bob, E_SUFFIX, true },
	{ "dn.one=\"" SUFFIX "\"", &as_bob, E_SUFFIX, false },
	{ "dn.subtree=\"" PEOPLE "\"", &as_bob, E_SUFFIX, true },
	{ "dn.subtree=\"" PEOPLE "\"", &as_root, E_SUFFIX, true },  /* root anyway */
	{ "dn.subtree=\"" PEOPLE "\"", &anon, E_SUFFIX, false },
	{ "dn.children=\"" SUFFIX "\"", &as_alice, E_SUFFIX, true },
	{ "dn.children=\"" ALICE "\"", &as_alice, E_SUFFIX, false },
	{ "dn.regex=\"^uid=a[a-z]*,\"", &as_alice, E_PRINTER, true },
	{ "dn.regex=\"^uid=a[a-z]*,\"", &as_bob, E_PRINTER, false },
	{ "group=\"cn=Admins,dc=example,dc=com\"", &as_alice, E_PRINTER, true },
	{ "group=\"" ADMINS "\"", &as_bob, E_PRINTER, false },
	{ "group=\"" ADMINS "\"", &anon, E_PRINTER, false },
	{ "group/groupOfNames/member=\"" ADMINS "\"", &as_alice, E_PRINTER, true },
	{ "group/groupOfUniqueNames/uniqueMember=\"" ADMINS "\"", &as_alice, E_PRINTER, false },
	{ "group=\"cn=broken," SUFFIX "\"", &as_alice, E_PRINTER, false },
};

START_TEST(test_who_kinds)
{
	char line[512];
	snprintf(line, sizeof(line), "access to * by %s write", who_cases[_i].who);
	load(&db_rules, line);
	const struct entry *e = *entry_slot[who_cases[_i].target];
	bool allowed = acl_allowed(&policy, who_cases[_i].subject, e, type("description"),
				   ACCESS_WRITE);
	ck_assert_msg(allowed == who_cases[_i].allowed, "by %s as \"%s\"", who_cases[_i].who,
		      (const char *)who_cases[_i].subject->ndn.ptr);
}
END_TEST

START_TEST(test_group_lookup_absent)
{
	load(&db_rules, "access to * by group=\"" ADMINS "\" write");
	struct acl_policy no_groups = { &db_rules, NULL, NULL };
	ck_assert(!acl_allowed(&no_groups, &as_alice, printer, NULL, ACCESS_WRITE));
	ck_assert(acl_allowed(&policy, &as_alice, printer, NULL, ACCESS_WRITE));
	ck_assert_uint_eq(group_calls, 1);
}
END_TEST

/* ---------------------------------------------------- levels, controls */

START_TEST(test_levels_are_ordered)
{
	static const char *const names[] = { "none", "disclose", "auth", "compare",
					     "search", "read", "write", "manage" };
	for (unsigned granted = ACCESS_NONE; granted <= ACCESS_MANAGE; granted++) {
		char line[128];
		access_rules_free(&db_rules);
		snprintf(line, sizeof(line), "access to * by * %s", names[granted]);
		load(&db_rules, line);
		for (unsigned needed = ACCESS_NONE; needed <= ACCESS_MANAGE; needed++)
			ck_assert_msg(acl_allowed(&policy, &anon, alice, NULL, needed) ==
				      (needed <= granted), "%s grants %s?", names[granted],
				      names[needed]);
	}
}
END_TEST

START_TEST(test_continue)
{
	load(&db_rules, "access to * by users read continue by self write by * search\n"
			"access to * by * manage");
	ck_assert_int_eq(level(&as_alice, alice, "mail"), ACCESS_WRITE);
	ck_assert_int_eq(level(&as_bob, alice, "mail"), ACCESS_SEARCH);
	ck_assert_int_eq(level(&anon, alice, "mail"), ACCESS_SEARCH);
}
END_TEST

START_TEST(test_continue_to_the_implicit_none)
{
	load(&db_rules, "access to * by users read continue by self write\n"
			"access to * by * manage");
	ck_assert_int_eq(level(&as_alice, alice, NULL), ACCESS_WRITE);
	/* no later clause matches bob: `by * none stop`, never the next rule */
	ck_assert_int_eq(level(&as_bob, alice, NULL), ACCESS_NONE);
}
END_TEST

START_TEST(test_break)
{
	load(&db_rules, "access to dn.subtree=\"" PEOPLE "\" by self write by anonymous break\n"
			"access to * by users read");
	ck_assert_int_eq(level(&as_alice, alice, "mail"), ACCESS_WRITE);
	/* bob matches no `by` of rule 1: implicit none, no fall-through */
	ck_assert_int_eq(level(&as_bob, alice, "mail"), ACCESS_NONE);
	/* anonymous breaks to rule 2, which grants it nothing: final none */
	ck_assert_int_eq(level(&anon, alice, "mail"), ACCESS_NONE);
	access_rules_free(&db_rules);
	load(&db_rules, "access to dn.subtree=\"" PEOPLE "\" by self write by * break\n"
			"access to * by users read");
	ck_assert_int_eq(level(&as_bob, alice, "mail"), ACCESS_READ);
	ck_assert_int_eq(level(&anon, alice, "mail"), ACCESS_NONE);
}
END_TEST

START_TEST(test_stop_and_first_rule_wins)
{
	load(&db_rules, "access to dn.subtree=\"" PEOPLE "\" by * search stop\n"
			"access to * by * write");
	ck_assert_int_eq(level(&anon, alice, NULL), ACCESS_SEARCH);
	ck_assert_int_eq(level(&anon, printer, NULL), ACCESS_WRITE);
}
END_TEST

START_TEST(test_database_rules_before_global)
{
	load(&db_rules, "access to dn.subtree=\"" PEOPLE "\" by * search");
	load(&global_rules, "access to * by * write");
	ck_assert_int_eq(level(&anon, alice, NULL), ACCESS_SEARCH);
	ck_assert_int_eq(level(&anon, suffix, NULL), ACCESS_WRITE);
	struct acl_policy global_only = { NULL, &global_rules, NULL };
	ck_assert(acl_allowed(&global_only, &anon, alice, NULL, ACCESS_WRITE));
}
END_TEST

/* ----------------------------------------------- typical password policy */

static const char password_policy[] =
	"access to attrs=userPassword by self write by anonymous auth by * none\n"
	"access to * by self write by users read by anonymous search";

START_TEST(test_password_policy)
{
	load(&db_rules, password_policy);
	ck_assert(acl_may_bind(&policy, &anon, alice));
	ck_assert(!acl_may_bind(&policy, &as_bob, alice));
	ck_assert_int_eq(level(&anon, alice, "userPassword"), ACCESS_AUTH);
	ck_assert_int_eq(level(&as_alice, alice, "userPassword"), ACCESS_WRITE);
	ck_assert_int_eq(level(&as_bob, alice, "userPassword"), ACCESS_NONE);

	struct acl_target t;
	acl_target_init(&t, &policy, &anon, alice);
	ck_assert(acl_may_disclose(&t));
	ck_assert(acl_search_may_match(&t));
	ck_assert(!acl_search_may_return(&t));
	ck_assert(!acl_may_read_attribute(&t, type("cn")));
	ck_assert(acl_may_compare(&t, type("cn")));
	ck_assert(!acl_may_compare(&t, type("userPassword")));

	acl_target_init(&t, &policy, &as_bob, alice);
	ck_assert(acl_search_may_return(&t));
	ck_assert(acl_may_read_attribute(&t, type("mail")));
	ck_assert(!acl_may_read_attribute(&t, type("userPassword")));
	/* answers are stable across repeated (cached) questions */
	ck_assert(acl_may_read_attribute(&t, type("mail")));
	ck_assert(!acl_may_read_attribute(&t, type("userPassword")));
}
END_TEST

START_TEST(test_disclose)
{
	load(&db_rules, "access to dn.base=\"" PEOPLE "\" by users disclose by * none\n"
			"access to * by * read");
	struct acl_target t;
	acl_target_init(&t, &policy, &as_bob, people);
	ck_assert(acl_may_disclose(&t));
	ck_assert(!acl_search_may_match(&t));
	acl_target_init(&t, &policy, &anon, people);
	ck_assert(!acl_may_disclose(&t));
}
END_TEST

/* ------------------------------------------------ $N substitution */

START_TEST(test_regex_substitution)
{
	load(&db_rules,
	     "access to dn.regex=\"^uid=([^,]+),ou=people,dc=example,dc=com$\" "
	     "by dn.exact=\"uid=$1,ou=People,dc=example,dc=com\" write by * read\n"
	     "access to dn.regex=\"^cn=([^,]+),dc=example,dc=com$\" "
	     "by group=\"cn=$1,dc=example,dc=com\" write by * none");
	ck_assert_int_eq(level(&as_alice, alice, "mail"), ACCESS_WRITE);
	ck_assert_int_eq(level(&as_bob, alice, "mail"), ACCESS_READ);
	ck_assert_int_eq(level(&as_bob, bob, "mail"), ACCESS_WRITE);
	/* members of cn=admins may write cn=admins; nobody writes cn=printer */
	ck_assert_int_eq(level(&as_alice, admins, "member"), ACCESS_WRITE);
	ck_assert_int_eq(level(&as_bob, admins, "member"), ACCESS_NONE);
	ck_assert_int_eq(level(&as_alice, printer, NULL), ACCESS_NONE);
}
END_TEST

/* ------------------------------------------------- write operations */

static const char write_policy[] =
	"access to dn.base=\"" PEOPLE "\" attrs=children by users write by * read\n"
	"access to dn.subtree=\"" PEOPLE "\" attrs=entry,@inetOrgPerson by users write "
	"by * read\n"
	"access to dn.subtree=\"" PEOPLE "\" attrs=mail by self write by * read\n"
	"access to * by * read";

START_TEST(test_add_and_delete_need_children)
{
	load(&db_rules, write_policy);
	struct entry *carol = fixture_entry("uid=carol," PEOPLE,
					    "objectClass: inetOrgPerson\ncn: Carol\nsn: C\n"
					    "uid: carol");
	struct entry *top = fixture_entry("ou=other," SUFFIX,
					  "objectClass: organizationalUnit\nou: other");
	ck_assert(acl_may_add(&policy, &as_bob, people, carol));
	ck_assert(!acl_may_add(&policy, &anon, people, carol));
	ck_assert(!acl_may_add(&policy, &as_bob, suffix, top));   /* no write on suffix's children */
	ck_assert(acl_may_delete(&policy, &as_bob, people, alice));
	ck_assert(!acl_may_delete(&policy, &anon, people, alice));
	/* a parent that names no entry: the parent DN is still matched by dn rules */
	ck_assert(acl_may_add(&policy, &as_bob, NULL, carol));
	ck_assert(!acl_may_add(&policy, &as_bob, NULL, top));
	/* children alone (a new entry that cannot be built) */
	ck_assert(acl_may_add_below(&policy, &as_bob, people, people->ndn));
	ck_assert(acl_may_add_below(&policy, &as_bob, NULL, people->ndn));
	ck_assert(!acl_may_add_below(&policy, &anon, people, people->ndn));
	ck_assert(!acl_may_add_below(&policy, &as_bob, suffix, suffix->ndn));
	ck_assert(acl_may_add_below(&policy, &as_root, suffix, suffix->ndn));
	entry_free(carol);
	entry_free(top);
}
END_TEST

START_TEST(test_add_needs_every_attribute)
{
	load(&db_rules, "access to attrs=children by users write\n"
			"access to attrs=entry,cn,sn,uid,objectClass by users write\n"
			"access to * by * read");
	struct entry *plain = fixture_entry("uid=carol," PEOPLE, "objectClass: inetOrgPerson\n"
					    "cn: Carol\nsn: C\nuid: carol");
	struct entry *with_mail = fixture_entry("uid=dave," PEOPLE, "objectClass: inetOrgPerson\n"
						"cn: D\nsn: D\nuid: dave\nmail: d@example.com");
	ck_assert(acl_may_add(&policy, &as_bob, people, plain));
	ck_assert(!acl_may_add(&policy, &as_bob, people, with_mail));
	entry_free(plain);
	entry_free(with_mail);
}
END_TEST

START_TEST(test_modify)
{
	load(&db_rules, "access to attrs=mail by self write by * read\n"
			"access to * by * read");
	struct ber_view values[] = { fixture_view("new@example.com") };
	struct ldap_change mail = { LDAP_MOD_REPLACE, { fixture_view("mail"), values, 1 } };
	struct ldap_change cn = { LDAP_MOD_REPLACE, { fixture_view("cn;lang-en"), values, 1 } };
	struct ldap_change unknown = { LDAP_MOD_ADD, { fixture_view("noSuchType"), values, 1 } };
	ck_assert(acl_may_modify(&policy, &as_alice, alice, &mail, 1));
	ck_assert(!acl_may_modify(&policy, &as_bob, alice, &mail, 1));
	struct ldap_change both[] = { mail, cn };
	ck_assert(!acl_may_modify(&policy, &as_alice, alice, both, 2));
	ck_assert(acl_may_modify(&policy, &as_alice, alice, &unknown, 1));
}
END_TEST

START_TEST(test_rename)
{
	load(&db_rules, "access to dn.base=\"" PEOPLE "\" attrs=children by users write\n"
			"access to dn.subtree=\"" PEOPLE "\" attrs=entry,uid by self write\n"
			"access to * by * read");
	struct dn new_rdn;
	const char *rdn_text = "uid=alice2";
	ck_assert_int_eq(dn_parse(fixture_schema, rdn_text, strlen(rdn_text), &arena, &new_rdn),
			 LUMEN_OK);
	struct ber_view same_parent = fixture_view(PEOPLE);
	ck_assert(acl_may_rename(&policy, &as_alice, alice, people, NULL, same_parent,
				 &new_rdn.rdns[0], NULL));
	ck_assert(!acl_may_rename(&policy, &as_bob, alice, people, NULL, same_parent,
				  &new_rdn.rdns[0], NULL));
	/* moving under the suffix needs write on the suffix's children too */
	ck_assert(!acl_may_rename(&policy, &as_alice, alice, people, suffix, suffix->ndn,
				  &new_rdn.rdns[0], NULL));
	/* a new RDN type the subject may not write */
	const char *cn_rdn = "cn=Alice";
	ck_assert_int_eq(dn_parse(fixture_schema, cn_rdn, strlen(cn_rdn), &arena, &new_rdn),
			 LUMEN_OK);
	ck_assert(!acl_may_rename(&policy, &as_alice, alice, people, NULL, same_parent,
				  &new_rdn.rdns[0], NULL));
}
END_TEST

/* deleteOldRDN removes the old RDN's values: write on its types too. */
START_TEST(test_rename_deleting_the_old_rdn)
{
	load(&db_rules, "access to dn.base=\"" PEOPLE "\" attrs=children by users write\n"
			"access to dn.subtree=\"" PEOPLE "\" attrs=entry,cn by self write\n"
			"access to * by * read");
	struct dn new_rdn, old_rdn;
	const char *cn_rdn = "cn=Alice", *uid_rdn = "uid=alice";
	ck_assert_int_eq(dn_parse(fixture_schema, cn_rdn, strlen(cn_rdn), &arena, &new_rdn),
			 LUMEN_OK);
	ck_assert_int_eq(dn_parse(fixture_schema, uid_rdn, strlen(uid_rdn), &arena, &old_rdn),
			 LUMEN_OK);
	struct ber_view same_parent = fixture_view(PEOPLE);
	ck_assert(acl_may_rename(&policy, &as_alice, alice, people, NULL, same_parent,
				 &new_rdn.rdns[0], NULL));
	ck_assert(!acl_may_rename(&policy, &as_alice, alice, people, NULL, same_parent,
				  &new_rdn.rdns[0], &old_rdn.rdns[0]));
	ck_assert(acl_may_rename(&policy, &as_root, alice, people, NULL, same_parent,
				 &new_rdn.rdns[0], &old_rdn.rdns[0]));
}
END_TEST

START_TEST(test_dn_only_target_skips_filter_rules)
{
	load(&db_rules, "access to filter=(objectClass=*) by * write\n"
			"access to dn.base=\"" SUFFIX "\" by users read");
	struct acl_target t;
	acl_target_init_dn(&t, &policy, &as_bob, fixture_view(SUFFIX));
	ck_assert_int_eq(acl_target_level(&t, ACL_ATTR_CHILDREN), ACCESS_READ);
	acl_target_init(&t, &policy, &as_bob, suffix);
	ck_assert_int_eq(acl_target_level(&t, ACL_ATTR_CHILDREN), ACCESS_WRITE);
}
END_TEST

/* Which policies read entries (a write's decision is then made again in
 * its transaction): filter= or group=, in either list; DNs alone do not. */
START_TEST(test_policy_reads_entries)
{
	ck_assert(!acl_policy_reads_entries(&policy));
	load(&db_rules, "access to dn.subtree=\"" PEOPLE "\" by self write by users read");
	load(&global_rules, "access to dn.regex=\"^uid=([^,]+),\" by dn.exact=\"" ALICE
			    "\" write by * read");
	ck_assert(!acl_policy_reads_entries(&policy));
	access_rules_free(&global_rules);
	load(&global_rules, "access to * by group=\"" ADMINS "\" write by * read");
	ck_assert(acl_policy_reads_entries(&policy));
	ck_assert(!acl_policy_tests_values(&policy));
	access_rules_free(&global_rules);
	load(&global_rules, "access to filter=(uid=bob) attrs=mail by self write");
	ck_assert(acl_policy_reads_entries(&policy));
	ck_assert(acl_policy_tests_values(&policy));
}
END_TEST

/* ------------------------------------------------- filter oracle guard */

static struct filter compile_filter(const char *text)
{
	struct ldap_filter *parsed = NULL;
	struct filter f;
	ck_assert_int_eq(filter_text_parse(text, strlen(text), &arena, NULL, &parsed, NULL),
			 LUMEN_OK);
	ck_assert_int_eq(filter_compile(fixture_schema, parsed, NULL, &arena, &f), LUMEN_OK);
	return f;
}

/* The server's search hook in miniature: `search` per attribute tested. */
struct searcher {
	struct acl_target t;
	const struct acl_subject *who;
};

static bool searcher_begin(void *ctx, const struct entry *e)
{
	struct searcher *s = ctx;
	acl_target_init(&s->t, &policy, s->who, e);
	return true;
}

static bool searcher_may_test(void *ctx, const struct attribute_type *type)
{
	struct searcher *s = ctx;
	return acl_target_allowed(&s->t, type, ACCESS_SEARCH);
}

static enum filter_result guarded(const char *text, const struct acl_subject *who,
				  const struct entry *e)
{
	struct filter f = compile_filter(text);
	struct searcher s = { .who = who };
	struct filter_access hook = { searcher_begin, searcher_may_test, &s };
	struct filter_evaluation how = { .access = &hook };
	enum filter_result r;
	ck_assert_int_eq(filter_test(&f, e, &how, &r), LUMEN_OK);
	return r;
}

START_TEST(test_filter_oracle)
{
	load(&db_rules, "access to attrs=userPassword by self write by * none\n"
			"access to * by * read");
	ck_assert_int_eq(guarded("(userPassword=secret)", &as_bob, alice), FILTER_UNDEFINED);
	ck_assert_int_eq(guarded("(userPassword=secret)", &as_alice, alice), FILTER_TRUE);
	ck_assert_int_eq(guarded("(userPassword=secret)", &anon, alice), FILTER_UNDEFINED);
	ck_assert_int_eq(guarded("(userPassword=secret)", &as_root, alice), FILTER_TRUE);
	ck_assert_int_eq(guarded("(|(userPassword=secret)(cn=Alice*))", &anon, alice),
			 FILTER_TRUE);
	ck_assert_int_eq(guarded("(|(userPassword=secret)(cn=Alice*))", &anon, bob),
			 FILTER_UNDEFINED);
	/* (!(userPassword=x)) must not reveal a non-match either */
	ck_assert_int_eq(guarded("(!(userPassword=wrong))", &as_bob, alice), FILTER_UNDEFINED);
	ck_assert_int_eq(guarded("(!(userPassword=wrong))", &as_alice, alice), FILTER_TRUE);
	/* the Assertion control's ordering and extensible forms: the attacks */
	ck_assert_int_eq(guarded("(userPassword>=s)", &as_bob, alice), FILTER_UNDEFINED);
	ck_assert_int_eq(guarded("(userPassword<=t)", &as_bob, alice), FILTER_UNDEFINED);
	ck_assert_int_eq(guarded("(userPassword:octetStringMatch:=secret)", &as_bob, alice),
			 FILTER_UNDEFINED);
	ck_assert_int_eq(guarded("(userPassword=*)", &as_bob, alice), FILTER_UNDEFINED);
}
END_TEST

/* A supertype item tests each subtype under its own rule (OpenLDAP does). */
START_TEST(test_filter_supertype_checks_each_subtype)
{
	load(&db_rules, "access to attrs=sn by * none\n"
			"access to * by * read");
	/* alice: cn "Alice Liddell", sn "Liddell" */
	ck_assert_int_eq(guarded("(name=Liddell)", &as_bob, alice), FILTER_UNDEFINED);
	ck_assert_int_eq(guarded("(name=Alice Liddell)", &as_bob, alice), FILTER_TRUE);
	ck_assert_int_eq(guarded("(name=Liddell)", &as_root, alice), FILTER_TRUE);
	ck_assert_int_eq(guarded("(name=nobody)", &as_bob, alice), FILTER_UNDEFINED);
	ck_assert_int_eq(guarded("(name=Lid*)", &as_bob, alice), FILTER_UNDEFINED);
	ck_assert_int_eq(guarded("(sn=*)", &as_bob, alice), FILTER_UNDEFINED);
	ck_assert_int_eq(guarded("(name=*)", &as_bob, alice), FILTER_TRUE);    /* cn is there */
	/* extensible matches over every attribute skip only what is hidden */
	ck_assert_int_eq(guarded("(:caseIgnoreMatch:=Alice Liddell)", &as_bob, alice),
			 FILTER_TRUE);
	ck_assert_int_eq(guarded("(:caseIgnoreMatch:=Liddell)", &as_bob, alice),
			 FILTER_UNDEFINED);
	ck_assert_int_eq(guarded("(:caseIgnoreMatch:=Liddell)", &as_root, alice), FILTER_TRUE);
}
END_TEST

START_TEST(test_filter_distinguished_name_supertype)
{
	load(&db_rules, "access to attrs=member by * none\n"
			"access to * by * read");
	ck_assert_int_eq(guarded("(distinguishedName=uid=alice,ou=people,dc=example,dc=com)",
				 &as_bob, admins), FILTER_UNDEFINED);
	ck_assert_int_eq(guarded("(distinguishedName=uid=alice,ou=people,dc=example,dc=com)",
				 &as_root, admins), FILTER_TRUE);
}
END_TEST

/* dnAttributes tests the DN's own AVAs under their types' rules */
START_TEST(test_filter_dn_attributes)
{
	load(&db_rules, "access to attrs=uid by * none\n"
			"access to * by * read");
	ck_assert_int_eq(guarded("(:dn:caseIgnoreMatch:=alice)", &as_bob, alice),
			 FILTER_UNDEFINED);
	ck_assert_int_eq(guarded("(ou:dn:=people)", &as_bob, alice), FILTER_TRUE);
}
END_TEST

START_TEST(test_filter_object_class_needs_search)
{
	load(&db_rules, "access to attrs=objectClass by * none\n"
			"access to * by * read");
	ck_assert_int_eq(guarded("(objectClass=person)", &as_bob, alice), FILTER_UNDEFINED);
	ck_assert_int_eq(guarded("(objectClass=*)", &as_bob, alice), FILTER_UNDEFINED);
	ck_assert_int_eq(guarded("(objectClass=device)", &as_bob, alice), FILTER_UNDEFINED);
	ck_assert_int_eq(guarded("(objectClass=person)", &as_root, alice), FILTER_TRUE);
}
END_TEST

START_TEST(test_filter_without_rules_hides_nothing)
{
	load(&db_rules, "");
	ck_assert_int_eq(guarded("(&(userPassword=secret)(:caseIgnoreMatch:=alice))", &anon,
				 alice), FILTER_TRUE);
}
END_TEST

/* A rule whose filter cannot be evaluated must not let a later rule grant. */
START_TEST(test_failed_rule_filter_grants_nothing)
{
	load(&db_rules, "access to filter=(ou:dn:=sales) by * none\n"
			"access to * by * read");
	struct arena tiny;
	arena_init(&tiny, 64);
	struct acl_subject starved = { fixture_view(BOB), false, &tiny };
	struct acl_target t;
	acl_target_init(&t, &policy, &starved, alice);
	ck_assert_int_eq(acl_target_level(&t, type("cn")), ACCESS_NONE);
	ck_assert(t.failed);
	arena_free(&tiny);
	/* with room, the first rule does not select alice (not under ou=sales) */
	ck_assert_int_eq(level(&as_bob, alice, "cn"), ACCESS_READ);
}
END_TEST

START_TEST(test_exhausted_arena_still_decides)
{
	load(&db_rules, "access to filter=(objectClass=person) by users read\n"
			"access to * by * none");
	struct arena tiny;
	arena_init(&tiny, 1);
	struct acl_subject starved = { fixture_view(BOB), false, &tiny };
	struct acl_target t;
	acl_target_init(&t, &policy, &starved, alice);
	ck_assert_ptr_null(t.rule_matches);
	ck_assert_int_eq(acl_target_level(&t, type("cn")), ACCESS_READ);
	arena_free(&tiny);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("acl");
	TCase *tc = tcase_create("acl");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_default_policy_without_rules);
	tcase_add_test(tc, test_implicit_deny_once_rules_exist);
	tcase_add_test(tc, test_root_always_allowed);
	tcase_add_loop_test(tc, test_what_kinds, 0, sizeof(what_cases) / sizeof(what_cases[0]));
	tcase_add_loop_test(tc, test_who_kinds, 0, sizeof(who_cases) / sizeof(who_cases[0]));
	tcase_add_test(tc, test_group_lookup_absent);
	tcase_add_test(tc, test_levels_are_ordered);
	tcase_add_test(tc, test_continue);
	tcase_add_test(tc, test_continue_to_the_implicit_none);
	tcase_add_test(tc, test_break);
	tcase_add_test(tc, test_stop_and_first_rule_wins);
	tcase_add_test(tc, test_database_rules_before_global);
	tcase_add_test(tc, test_password_policy);
	tcase_add_test(tc, test_disclose);
	tcase_add_test(tc, test_regex_substitution);
	tcase_add_test(tc, test_add_and_delete_need_children);
	tcase_add_test(tc, test_add_needs_every_attribute);
	tcase_add_test(tc, test_modify);
	tcase_add_test(tc, test_rename);
	tcase_add_test(tc, test_rename_deleting_the_old_rdn);
	tcase_add_test(tc, test_dn_only_target_skips_filter_rules);
	tcase_add_test(tc, test_policy_reads_entries);
	tcase_add_test(tc, test_filter_oracle);
	tcase_add_test(tc, test_filter_supertype_checks_each_subtype);
	tcase_add_test(tc, test_filter_distinguished_name_supertype);
	tcase_add_test(tc, test_filter_dn_attributes);
	tcase_add_test(tc, test_filter_object_class_needs_search);
	tcase_add_test(tc, test_filter_without_rules_hides_nothing);
	tcase_add_test(tc, test_failed_rule_filter_grants_nothing);
	tcase_add_test(tc, test_exhausted_arena_still_decides);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
