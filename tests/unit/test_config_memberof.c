/*
 * test_config_memberof.c — `overlay memberof` directives into settings
 * (config_memberof.h): the defaults (rootdn as modifier), every directive,
 * and the errors naming the line: unknown class, unknown or non-DN
 * attribute, bad dangling, boolean and result code, unknown directive.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "config_memberof.h"
#include "ldap_result_codes.h"
#include "lumen_error.h"
#include "schema.h"

static struct schema *schema;

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
}

static void teardown(void)
{
	schema_free(schema);
}

/* Parses "directive value" lines (at most 4) as t.conf:9, :10, ... */
static int parse(const char *const *lines, struct config_memberof *out, char *err, size_t errlen)
{
	static char text[4][128], origin[4][16];
	char *words[4][2];
	struct config_overlay_line parsed[4];
	size_t n = 0;
	for (; lines[n] != NULL; n++) {
		snprintf(text[n], sizeof(text[n]), "%s", lines[n]);
		snprintf(origin[n], sizeof(origin[n]), "t.conf:%zu", 9 + n);
		char *space = strchr(text[n], ' ');
		words[n][0] = text[n];
		words[n][1] = space != NULL ? space + 1 : NULL;
		if (space != NULL)
			*space = '\0';
		parsed[n] = (struct config_overlay_line){ words[n], space != NULL ? 2 : 1, origin[n] };
	}
	struct config_overlay o = { .name = "memberof", .origin = "t.conf:8", .lines = parsed,
				    .n_lines = n };
	struct config_database db = { .origin = "t.conf:1", .rootdn = "cn=admin,dc=example,dc=com",
				      .overlays = &o, .n_overlays = 1 };
	ck_assert_ptr_eq(config_database_overlay(&db, "MemberOf"), &o);
	ck_assert_ptr_null(config_database_overlay(&db, "refint"));
	return config_memberof_parse(schema, &db, &o, out, err, errlen);
}

START_TEST(defaults)
{
	const char *lines[] = { NULL };
	struct config_memberof m;
	char err[256];
	ck_assert_int_eq(parse(lines, &m, err, sizeof(err)), LUMEN_OK);
	ck_assert_str_eq(object_class_name(m.group_oc), "groupOfNames");
	ck_assert_str_eq(attribute_type_name(m.member_ad), "member");
	ck_assert_str_eq(attribute_type_name(m.memberof_ad), "memberOf");
	ck_assert(attribute_type_is_operational(m.memberof_ad));
	ck_assert(m.memberof_ad->no_user_modification);
	ck_assert_int_eq(m.dangling, MEMBEROF_DANGLING_IGNORE);
	ck_assert_int_eq(m.dangling_error, LDAP_CONSTRAINT_VIOLATION);
	ck_assert(!m.refint);
	ck_assert_str_eq(m.modifier_dn, "cn=admin,dc=example,dc=com");
	config_memberof_free(&m);
}
END_TEST

START_TEST(every_directive)
{
	const char *lines[] = { "memberof-group-oc groupOfUniqueNames",
				"memberof-member-ad uniqueMember", "memberof-refint TRUE",
				"memberof-dangling-error noSuchObject", NULL };
	const char *more[] = { "memberof-dangling drop", "memberof-dn cn=memberof,dc=example",
			       "memberof-dangling-error 50", "memberof-refint off", NULL };
	struct config_memberof m;
	char err[256];
	ck_assert_msg(parse(lines, &m, err, sizeof(err)) == LUMEN_OK, "%s", err);
	ck_assert_str_eq(object_class_name(m.group_oc), "groupOfUniqueNames");
	ck_assert_str_eq(attribute_type_name(m.member_ad), "uniqueMember");
	ck_assert(m.refint);
	ck_assert_int_eq(m.dangling_error, LDAP_NO_SUCH_OBJECT);
	config_memberof_free(&m);
	ck_assert_msg(parse(more, &m, err, sizeof(err)) == LUMEN_OK, "%s", err);
	ck_assert_int_eq(m.dangling, MEMBEROF_DANGLING_DROP);
	ck_assert_str_eq(m.modifier_dn, "cn=memberof,dc=example");
	ck_assert_int_eq(m.dangling_error, LDAP_INSUFFICIENT_ACCESS_RIGHTS);
	ck_assert(!m.refint);
	config_memberof_free(&m);
}
END_TEST

START_TEST(errors_name_the_line)
{
	static const struct {
		const char *lines[3];
		const char *message;
	} cases[] = {
		{ { "memberof-group-oc nosuch", NULL },
		  "t.conf:9: memberof-group-oc: unknown object class \"nosuch\"" },
		{ { "memberof-refint TRUE", "memberof-member-ad nosuch", NULL },
		  "t.conf:10: memberof-member-ad: unknown attribute \"nosuch\"" },
		{ { "memberof-memberof-ad cn", NULL },
		  "t.conf:9: memberof-memberof-ad: not DN-valued: \"cn\"" },
		{ { "memberof-memberof-ad uniqueMember", NULL },
		  "t.conf:9: memberof-memberof-ad: not DN-valued: \"uniqueMember\"" },
		{ { "memberof-dangling sometimes", NULL },
		  "t.conf:9: memberof-dangling: expected ignore, drop or error, not \"sometimes\"" },
		{ { "memberof-refint maybe", NULL },
		  "t.conf:9: memberof-refint: expected TRUE or FALSE, not \"maybe\"" },
		{ { "memberof-dangling-error 4242", NULL },
		  "t.conf:9: memberof-dangling-error: unknown result code \"4242\"" },
		{ { "memberof-bogus x", NULL },
		  "t.conf:9: overlay memberof: unknown directive \"memberof-bogus\"" },
		{ { "refint_attributes member", NULL },
		  "t.conf:9: overlay memberof: unknown directive \"refint_attributes\"" },
		{ { "memberof-refint", NULL }, "t.conf:9: memberof-refint: expected one value" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct config_memberof m;
		char err[256] = "";
		ck_assert_int_eq(parse(cases[i].lines, &m, err, sizeof(err)), LUMEN_EMALFORMED);
		ck_assert_msg(strstr(err, cases[i].message) != NULL, "case %zu: %s", i, err);
		ck_assert_ptr_null(m.modifier_dn);   /* nothing left to free */
	}
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("config_memberof");
	TCase *tc = tcase_create("config_memberof");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, defaults);
	tcase_add_test(tc, every_directive);
	tcase_add_test(tc, errors_name_the_line);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
