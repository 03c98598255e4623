/*
 * test_access_parse.c — `access to … by …` directives: every WHAT, WHO,
 * ACCESS and control form, and one test per kind of error (each message
 * names FILE:LINE).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access_rules.h"
#include "access_rules_fixture.h"
#include "entry_fixture.h"
#include "lumen_error.h"

#define FILE_NAME "slapd.conf"
#define LINE 42

static struct access_rules rules;
static char err[512];

static void setup(void)
{
	fixture_schema_setup();
	memset(&rules, 0, sizeof(rules));
	err[0] = '\0';
}

static void teardown(void)
{
	access_rules_free(&rules);
	fixture_schema_teardown();
}

static int parse(const char *line)
{
	char buf[1024];
	char *argv[64];
	ck_assert_uint_lt(strlen(line), sizeof(buf));
	strcpy(buf, line);
	size_t argc = access_rules_split(buf, argv, 64);
	return access_rule_parse(&rules, argc, argv, FILE_NAME, LINE, err, sizeof(err));
}

static int compile(void)
{
	return access_rules_compile(&rules, fixture_schema, err, sizeof(err));
}

static const struct access_rule *last_rule(void)
{
	ck_assert_uint_gt(rules.n_rules, 0);
	return &rules.rules[rules.n_rules - 1];
}

static bool has_type(const struct access_rule *r, const char *name)
{
	const struct attribute_type *t = schema_attribute_type(fixture_schema, name, strlen(name));
	ck_assert_ptr_nonnull(t);
	return (r->attr_bits[t->index / 64] >> (t->index % 64)) & 1;
}

/* ------------------------------------------------------------ WHAT forms */

static const struct {
	const char *line;
	enum access_dn_style style;
	const char *ndn;        /* expected normalized DN (NULL: none) */
} what_cases[] = {
	{ "access to * by * read", ACCESS_DN_ANY, NULL },
	{ "access to dn=\"dc=Example,dc=COM\" by * read", ACCESS_DN_BASE, "dc=example,dc=com" },
	{ "access to dn.base=\"dc=example,dc=com\" by * read", ACCESS_DN_BASE, "dc=example,dc=com" },
	{ "access to dn.exact=\"dc=example,dc=com\" by * read", ACCESS_DN_BASE, "dc=example,dc=com" },
	{ "access to dn.default=\"dc=example,dc=com\" by * read", ACCESS_DN_BASE, "dc=example,dc=com" },
	{ "access to dn.one=\"dc=example,dc=com\" by * read", ACCESS_DN_ONE, "dc=example,dc=com" },
	{ "access to dn.onelevel=\"dc=example,dc=com\" by * read", ACCESS_DN_ONE, "dc=example,dc=com" },
	{ "access to dn.sub=\"dc=example,dc=com\" by * read", ACCESS_DN_SUBTREE, "dc=example,dc=com" },
	{ "access to dn.subtree=\"ou=People, dc=example,dc=com\" by * read", ACCESS_DN_SUBTREE,
	  "ou=people,dc=example,dc=com" },
	{ "access to dn.children=\"dc=example,dc=com\" by * read", ACCESS_DN_CHILDREN,
	  "dc=example,dc=com" },
	{ "access to dn.regex=\"^uid=([^,]+),ou=people,dc=example,dc=com$\" by * read",
	  ACCESS_DN_REGEX, NULL },
	{ "ACCESS TO DN.SUBTREE=\"dc=example,dc=com\" BY * READ", ACCESS_DN_SUBTREE,
	  "dc=example,dc=com" },
	{ "access to dn.subtree=\"\" by * read", ACCESS_DN_SUBTREE, "" },
};

START_TEST(test_what_dn_forms)
{
	ck_assert_msg(parse(what_cases[_i].line) == LUMEN_OK, "%s: %s", what_cases[_i].line, err);
	ck_assert_msg(compile() == LUMEN_OK, "%s", err);
	const struct access_rule *r = last_rule();
	ck_assert_int_eq(r->what.style, what_cases[_i].style);
	ck_assert(!r->has_attrs && !r->has_filter);
	if (what_cases[_i].ndn != NULL)
		ck_assert(ber_view_eq_str(r->what.ndn, what_cases[_i].ndn));
	if (what_cases[_i].style == ACCESS_DN_REGEX) {
		ck_assert(r->what.regex_compiled);
		ck_assert_uint_eq(r->what.regex.re_nsub, 1);
	}
}
END_TEST

START_TEST(test_what_attrs)
{
	ck_assert_int_eq(parse("access to attrs=userPassword,entry,children by * read"), LUMEN_OK);
	ck_assert_int_eq(parse("access to attr=name by * read"), LUMEN_OK);
	ck_assert_int_eq(parse("access to attrs=\"@person, mail\" by * read"), LUMEN_OK);
	ck_assert_msg(compile() == LUMEN_OK, "%s", err);

	const struct access_rule *r = &rules.rules[0];
	ck_assert(r->has_attrs && r->attrs_entry && r->attrs_children);
	ck_assert(has_type(r, "userPassword"));
	ck_assert(!has_type(r, "cn"));

	r = &rules.rules[1];     /* a type covers its subtypes */
	ck_assert(!r->attrs_entry && !r->attrs_children);
	ck_assert(has_type(r, "name") && has_type(r, "cn") && has_type(r, "sn"));
	ck_assert(!has_type(r, "mail"));

	r = &rules.rules[2];     /* @person: MUST and MAY, superclasses included */
	ck_assert(has_type(r, "cn") && has_type(r, "sn") && has_type(r, "userPassword"));
	ck_assert(has_type(r, "objectClass") && has_type(r, "telephoneNumber"));
	ck_assert(has_type(r, "mail"));
	ck_assert(!has_type(r, "uid"));
}
END_TEST

START_TEST(test_what_filter_and_combination)
{
	ck_assert_int_eq(parse("access to dn.subtree=\"ou=people,dc=example,dc=com\" "
			       "attrs=userPassword filter=(objectClass=person) "
			       "by self write by anonymous auth"), LUMEN_OK);
	ck_assert_int_eq(parse("access to filter=\"(&(objectClass=person)(cn=a*))\" by * read"),
			 LUMEN_OK);
	ck_assert_msg(compile() == LUMEN_OK, "%s", err);
	const struct access_rule *r = &rules.rules[0];
	ck_assert_int_eq(r->what.style, ACCESS_DN_SUBTREE);
	ck_assert(r->has_attrs && r->has_filter);
	ck_assert_ptr_nonnull(r->filter.root);
	ck_assert_uint_eq(r->n_who, 2);
	ck_assert_str_eq(r->file, FILE_NAME);
	ck_assert_uint_eq(r->line, LINE);
	ck_assert_ptr_nonnull(rules.rules[1].filter.root);
	ck_assert_int_eq(rules.rules[1].filter.root->type, LDAP_FILTER_AND);
}
END_TEST

/*
 * The config reader reuses its line buffer for the next line: a rule must
 * not keep pointing into the words it was parsed from (filter= rules read
 * from slapd.conf used to test garbage attribute names and never matched).
 */
START_TEST(test_filter_outlives_argv)
{
	static const char *const words[] = {
		"access", "to", "filter=(&(objectClass=person)(cn=Babs*))", "by", "*", "read",
	};
	enum { N_WORDS = sizeof(words) / sizeof(words[0]) };
	char *argv[N_WORDS];
	for (size_t i = 0; i < N_WORDS; i++)
		ck_assert_ptr_nonnull(argv[i] = strdup(words[i]));
	ck_assert_int_eq(access_rule_parse(&rules, N_WORDS, argv, FILE_NAME, LINE, err,
					   sizeof(err)), LUMEN_OK);
	for (size_t i = 0; i < N_WORDS; i++) {
		memset(argv[i], 'X', strlen(argv[i]));
		free(argv[i]);
	}
	ck_assert_msg(compile() == LUMEN_OK, "%s", err);

	struct entry *babs = fixture_entry("cn=Babs Jensen,dc=example,dc=com",
					   "objectClass: person\ncn: Babs Jensen\nsn: Jensen");
	struct entry *other = fixture_entry("cn=Other,dc=example,dc=com",
					    "objectClass: person\ncn: Other\nsn: Jensen");
	ck_assert_int_eq(filter_evaluate(&last_rule()->filter, babs), FILTER_TRUE);
	ck_assert_int_eq(filter_evaluate(&last_rule()->filter, other), FILTER_FALSE);
	entry_free(babs);
	entry_free(other);
}
END_TEST

/* ------------------------------------------------------------ WHO forms */

static const struct {
	const char *who;
	enum access_who_kind kind;
	enum access_dn_style style;
	const char *ndn;
} who_cases[] = {
	{ "*", ACCESS_WHO_ANYONE, ACCESS_DN_ANY, NULL },
	{ "anonymous", ACCESS_WHO_ANONYMOUS, ACCESS_DN_ANY, NULL },
	{ "users", ACCESS_WHO_USERS, ACCESS_DN_ANY, NULL },
	{ "self", ACCESS_WHO_SELF, ACCESS_DN_ANY, NULL },
	{ "dn=\"cn=Admin,dc=example,dc=com\"", ACCESS_WHO_DN, ACCESS_DN_BASE,
	  "cn=admin,dc=example,dc=com" },
	{ "dn.exact=\"cn=admin,dc=example,dc=com\"", ACCESS_WHO_DN, ACCESS_DN_BASE,
	  "cn=admin,dc=example,dc=com" },
	{ "dn.base=\"cn=admin,dc=example,dc=com\"", ACCESS_WHO_DN, ACCESS_DN_BASE,
	  "cn=admin,dc=example,dc=com" },
	{ "dn.one=\"ou=people,dc=example,dc=com\"", ACCESS_WHO_DN, ACCESS_DN_ONE,
	  "ou=people,dc=example,dc=com" },
	{ "dn.subtree=\"dc=example,dc=com\"", ACCESS_WHO_DN, ACCESS_DN_SUBTREE, "dc=example,dc=com" },
	{ "dn.children=\"dc=example,dc=com\"", ACCESS_WHO_DN, ACCESS_DN_CHILDREN,
	  "dc=example,dc=com" },
	{ "dn.regex=\"^uid=[^,]+,ou=admins,dc=example,dc=com$\"", ACCESS_WHO_DN, ACCESS_DN_REGEX,
	  NULL },
	{ "group=\"cn=Admins,dc=example,dc=com\"", ACCESS_WHO_GROUP, ACCESS_DN_BASE,
	  "cn=admins,dc=example,dc=com" },
	{ "group/groupOfUniqueNames/uniqueMember=\"cn=admins,dc=example,dc=com\"",
	  ACCESS_WHO_GROUP, ACCESS_DN_BASE, "cn=admins,dc=example,dc=com" },
};

START_TEST(test_who_forms)
{
	char line[512];
	snprintf(line, sizeof(line), "access to * by %s write", who_cases[_i].who);
	ck_assert_msg(parse(line) == LUMEN_OK, "%s: %s", line, err);
	ck_assert_msg(compile() == LUMEN_OK, "%s", err);
	const struct access_who *w = &last_rule()->who[0];
	ck_assert_int_eq(w->kind, who_cases[_i].kind);
	ck_assert_int_eq(w->level, ACCESS_WRITE);
	ck_assert_int_eq(w->control, ACCESS_STOP);
	if (who_cases[_i].kind == ACCESS_WHO_DN || who_cases[_i].kind == ACCESS_WHO_GROUP)
		ck_assert_int_eq(w->dn.style, who_cases[_i].style);
	if (who_cases[_i].ndn != NULL)
		ck_assert(ber_view_eq_str(w->dn.ndn, who_cases[_i].ndn));
	if (who_cases[_i].kind == ACCESS_WHO_GROUP) {
		ck_assert_ptr_nonnull(w->group_class);
		ck_assert_ptr_nonnull(w->group_member);
		bool unique = strstr(who_cases[_i].who, "unique") != NULL;
		ck_assert_str_eq(object_class_name(w->group_class),
				 unique ? "groupOfUniqueNames" : "groupOfNames");
		ck_assert_str_eq(attribute_type_name(w->group_member),
				 unique ? "uniqueMember" : "member");
	}
}
END_TEST

START_TEST(test_who_expansion)
{
	ck_assert_int_eq(parse("access to dn.regex=\"^uid=([^,]+),ou=people,dc=example,dc=com$\" "
			       "by dn.exact=\"uid=$1,ou=people,dc=example,dc=com\" write"), LUMEN_OK);
	ck_assert_msg(compile() == LUMEN_OK, "%s", err);
	const struct access_who *w = &last_rule()->who[0];
	ck_assert(w->dn.expand);
	ck_assert_str_eq(w->dn.text, "uid=$1,ou=people,dc=example,dc=com");
}
END_TEST

/* ------------------------------------------------- ACCESS and control */

static const struct {
	const char *tail;
	enum access_level level;
	enum access_control control;
} level_cases[] = {
	{ "none", ACCESS_NONE, ACCESS_STOP },
	{ "disclose", ACCESS_DISCLOSE, ACCESS_STOP },
	{ "auth", ACCESS_AUTH, ACCESS_STOP },
	{ "compare", ACCESS_COMPARE, ACCESS_STOP },
	{ "search", ACCESS_SEARCH, ACCESS_STOP },
	{ "read", ACCESS_READ, ACCESS_STOP },
	{ "write", ACCESS_WRITE, ACCESS_STOP },
	{ "manage", ACCESS_MANAGE, ACCESS_STOP },
	{ "MANAGE", ACCESS_MANAGE, ACCESS_STOP },
	{ "read stop", ACCESS_READ, ACCESS_STOP },
	{ "read continue", ACCESS_READ, ACCESS_CONTINUE },
	{ "search break", ACCESS_SEARCH, ACCESS_BREAK },
	{ "break", ACCESS_NONE, ACCESS_BREAK },
	{ "", ACCESS_NONE, ACCESS_STOP },
};

START_TEST(test_levels_and_controls)
{
	char line[256];
	snprintf(line, sizeof(line), "access to * by users %s by * none", level_cases[_i].tail);
	ck_assert_msg(parse(line) == LUMEN_OK, "%s: %s", line, err);
	const struct access_rule *r = last_rule();
	ck_assert_uint_eq(r->n_who, 2);
	ck_assert_int_eq(r->who[0].level, level_cases[_i].level);
	ck_assert_int_eq(r->who[0].control, level_cases[_i].control);
}
END_TEST

START_TEST(test_order_kept)
{
	ck_assert_int_eq(parse("access to attrs=userPassword by self write by * auth"), LUMEN_OK);
	ck_assert_int_eq(parse("access to * by users read by * none"), LUMEN_OK);
	ck_assert_int_eq(parse("access to dn.base=\"\" by * read"), LUMEN_OK);
	ck_assert_msg(compile() == LUMEN_OK, "%s", err);
	ck_assert_uint_eq(rules.n_rules, 3);
	ck_assert(rules.rules[0].has_attrs);
	ck_assert_int_eq(rules.rules[1].who[0].kind, ACCESS_WHO_USERS);
	ck_assert_int_eq(rules.rules[2].what.style, ACCESS_DN_BASE);
	ck_assert_str_eq(access_level_name((enum access_level)99), "unknown");
}
END_TEST

/* ------------------------------------------------------------- errors */

enum phase { PARSE, COMPILE };

static const struct {
	const char *line;
	enum phase phase;
	int rc;
	const char *why;        /* substring of the message */
} error_cases[] = {
	{ "access", PARSE, LUMEN_EMALFORMED, "expected \"access to" },
	{ "access from * by * read", PARSE, LUMEN_EMALFORMED, "expected \"access to" },
	{ "access to", PARSE, LUMEN_EMALFORMED, "missing WHAT" },
	{ "access to by * read", PARSE, LUMEN_EMALFORMED, "missing WHAT" },
	{ "access to *", PARSE, LUMEN_EMALFORMED, "missing \"by\"" },
	{ "access to dn.subtree=\"dc=example,dc=com\"", PARSE, LUMEN_EMALFORMED, "missing \"by\"" },
	{ "access to * by", PARSE, LUMEN_EMALFORMED, "`by` without WHO" },
	{ "access to everything by * read", PARSE, LUMEN_EMALFORMED, "unknown WHAT \"everything\"" },
	{ "access to val=x by * read", PARSE, LUMEN_EMALFORMED, "unknown WHAT \"val\"" },
	{ "access to dn.sideways=\"dc=x\" by * read", PARSE, LUMEN_EMALFORMED, "unknown DN style" },
	{ "access to * dn.base=\"dc=x\" by * read", PARSE, LUMEN_EMALFORMED, "twice" },
	{ "access to attrs=cn attrs=sn by * read", PARSE, LUMEN_EMALFORMED, "attrs= given twice" },
	{ "access to attrs= by * read", PARSE, LUMEN_EMALFORMED, "needs a list" },
	{ "access to filter=(cn=a filter=(sn=b) by * read", PARSE, LUMEN_EMALFORMED, "bad filter" },
	{ "access to filter=(cn=a by * read", PARSE, LUMEN_EMALFORMED, "bad filter" },
	{ "access to dn.regex=\"^uid=(\" by * read", PARSE, LUMEN_EMALFORMED, "bad regex" },
	{ "access to * by everybody read", PARSE, LUMEN_EMALFORMED, "unknown WHO \"everybody\"" },
	{ "access to * by peername=1.2.3.4 read", PARSE, LUMEN_EMALFORMED, "unknown WHO \"peername\"" },
	{ "access to * by dnattr=member read", PARSE, LUMEN_EMALFORMED, "unknown WHO \"dnattr\"" },
	{ "access to * by dn.wide=\"dc=x\" read", PARSE, LUMEN_EMALFORMED, "unknown DN style" },
	{ "access to * by group.exact=\"cn=g\" read", PARSE, LUMEN_EMALFORMED, "unknown WHO" },
	{ "access to * by group//member=\"cn=g\" read", PARSE, LUMEN_EMALFORMED, "empty class" },
	{ "access to * by dn.regex=\"^(x\" read", PARSE, LUMEN_EMALFORMED, "bad regex" },
	{ "access to * by dn.regex=\"^uid=$1$\" read", PARSE, LUMEN_EMALFORMED, "$N substitution" },
	{ "access to * by * raed", PARSE, LUMEN_EMALFORMED, "bad access level or control \"raed\"" },
	{ "access to * by * =rwx", PARSE, LUMEN_EMALFORMED, "bad access level" },
	{ "access to * by * read stop extra", PARSE, LUMEN_EMALFORMED, "\"extra\"" },
	{ "access to * by * read halt", PARSE, LUMEN_EMALFORMED, "\"halt\"" },
	{ "access to attrs=noSuchAttribute by * read", COMPILE, LUMEN_ENOTFOUND,
	  "unknown attribute \"noSuchAttribute\"" },
	{ "access to attrs=cn,,sn by * read", COMPILE, LUMEN_ENOTFOUND, "unknown attribute \"\"" },
	{ "access to attrs=@noSuchClass by * read", COMPILE, LUMEN_ENOTFOUND,
	  "unknown object class \"noSuchClass\"" },
	{ "access to dn.base=\"not a dn\" by * read", COMPILE, LUMEN_EMALFORMED, "bad DN \"not a dn\"" },
	{ "access to dn.base=\"fooAttr=x,dc=com\" by * read", COMPILE, LUMEN_EMALFORMED, "bad DN" },
	{ "access to * by dn.exact=\"cn=x,,\" read", COMPILE, LUMEN_EMALFORMED, "bad DN" },
	{ "access to * by group=\"nodn\" read", COMPILE, LUMEN_EMALFORMED, "bad DN" },
	{ "access to * by group/noSuchClass=\"cn=g,dc=com\" read", COMPILE, LUMEN_ENOTFOUND,
	  "unknown group object class" },
	{ "access to * by group/groupOfNames/noSuchAttr=\"cn=g,dc=com\" read", COMPILE,
	  LUMEN_ENOTFOUND, "unknown group member attribute" },
	{ "access to * by dn.exact=\"uid=$1,dc=com\" read", COMPILE, LUMEN_EMALFORMED,
	  "no dn.regex WHAT" },
	{ "access to dn.regex=\"^uid=([^,]+),dc=com$\" by dn.exact=\"uid=$2,dc=com\" read", COMPILE,
	  LUMEN_EMALFORMED, "uses $2 but the regex has 1 group" },
};

START_TEST(test_errors)
{
	int rc = parse(error_cases[_i].line);
	if (error_cases[_i].phase == COMPILE) {
		ck_assert_msg(rc == LUMEN_OK, "%s: %s", error_cases[_i].line, err);
		rc = compile();
	} else {
		ck_assert_uint_eq(rules.n_rules, 0);   /* nothing half-appended */
	}
	ck_assert_msg(rc == error_cases[_i].rc, "%s: rc %d (%s)", error_cases[_i].line, rc, err);
	ck_assert_msg(strncmp(err, FILE_NAME ":42: access: ", strlen(FILE_NAME ":42: access: ")) == 0,
		      "%s: message \"%s\" lacks FILE:LINE", error_cases[_i].line, err);
	ck_assert_msg(strstr(err, error_cases[_i].why) != NULL, "%s: message \"%s\" lacks \"%s\"",
		      error_cases[_i].line, err, error_cases[_i].why);
}
END_TEST

START_TEST(test_compile_states)
{
	/* an empty list compiles; parse after compile and compiling twice are refused */
	ck_assert_int_eq(compile(), LUMEN_OK);
	ck_assert_int_eq(parse("access to * by * read"), LUMEN_EINVAL);
	ck_assert_int_eq(compile(), LUMEN_EINVAL);
	access_rules_free(&rules);
	ck_assert_int_eq(rules.n_rules, 0);
	ck_assert_int_eq(parse("access to * by * read"), LUMEN_OK);
	ck_assert_int_eq(compile(), LUMEN_OK);
	access_rules_free(NULL);
}
END_TEST

START_TEST(test_error_after_good_rules_keeps_them)
{
	ck_assert_int_eq(parse("access to * by * read"), LUMEN_OK);
	ck_assert_int_eq(parse("access to dn.regex=\"(\" by group=\"cn=x\" read"), LUMEN_EMALFORMED);
	ck_assert_int_eq(parse("access to * by group/groupOfNames/member=\"cn=x\" bogus"),
			 LUMEN_EMALFORMED);
	ck_assert_uint_eq(rules.n_rules, 1);
	ck_assert_int_eq(compile(), LUMEN_OK);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("access_parse");
	TCase *tc = tcase_create("access_parse");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, test_what_dn_forms, 0, sizeof(what_cases) / sizeof(what_cases[0]));
	tcase_add_test(tc, test_what_attrs);
	tcase_add_test(tc, test_what_filter_and_combination);
	tcase_add_test(tc, test_filter_outlives_argv);
	tcase_add_loop_test(tc, test_who_forms, 0, sizeof(who_cases) / sizeof(who_cases[0]));
	tcase_add_test(tc, test_who_expansion);
	tcase_add_loop_test(tc, test_levels_and_controls, 0,
			    sizeof(level_cases) / sizeof(level_cases[0]));
	tcase_add_test(tc, test_order_kept);
	tcase_add_loop_test(tc, test_errors, 0, sizeof(error_cases) / sizeof(error_cases[0]));
	tcase_add_test(tc, test_compile_states);
	tcase_add_test(tc, test_error_after_good_rules_keeps_them);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
