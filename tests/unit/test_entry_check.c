/* test_entry_check.c — schema checks on add and modify, one test per violation. */
#include <check.h>
#include <string.h>

#include "entry.h"
#include "entry_fixture.h"
#include "ldap_result_codes.h"

static struct arena arena;

static void setup(void)
{
	fixture_schema_setup();
	arena_init(&arena, 0);
}

static void teardown(void)
{
	arena_free(&arena);
	fixture_schema_teardown();
}

/* "type: value" lines into AddRequest attributes; consecutive equal types merge. */
static size_t request_attributes(const char *lines, struct ldap_attribute *out, size_t max)
{
	char *copy = arena_strndup(&arena, lines, strlen(lines));
	size_t n = 0;
	char *save = NULL;
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strstr(line, ": ");
		ck_assert_ptr_nonnull(colon);
		*colon = '\0';
		struct ber_view type = fixture_view(line), value = fixture_view(colon + 2);
		if (n == 0 || !(out[n - 1].type.len == type.len &&
				memcmp(out[n - 1].type.ptr, type.ptr, type.len) == 0)) {
			ck_assert_uint_lt(n, max);
			out[n].type = type;
			out[n].values = arena_calloc(&arena, 16, sizeof(struct ber_view));
			out[n].n_values = 0;
			n++;
		}
		out[n - 1].values[out[n - 1].n_values++] = value;
	}
	return n;
}

static const char *const dn = "cn=Babs Jensen,dc=example,dc=com";

/* Build + check an add; returns the rc and fills v. */
static int try_add(const char *entry_dn, const char *lines, bool from_client,
		   struct schema_violation *v)
{
	struct ldap_attribute attrs[32];
	size_t n = request_attributes(lines, attrs, 32);
	struct entry *e = NULL;
	int rc = entry_from_attributes(fixture_schema, fixture_view(entry_dn),
				       (struct ber_view){ NULL, 0 }, attrs, n, from_client, &e, v);
	if (rc == LUMEN_OK) {
		rc = entry_check_add(e, &arena, v);
		entry_free(e);
	} else {
		ck_assert_ptr_null(e);
	}
	return rc;
}

static const struct {
	const char *name;
	const char *dn;
	const char *lines;
	int ldap_code;
	enum schema_violation_kind kind;
} adds[] = {
	{ "valid person", NULL,
	  "objectClass: person\ncn: Babs Jensen\nsn: Jensen\n", LDAP_SUCCESS, SCHEMA_VIOLATION_NONE },
	{ "valid with auxiliary and extensible", NULL,
	  "objectClass: inetOrgPerson\nobjectClass: extensibleObject\ncn: Babs Jensen\nsn: J\n"
	  "o: anything goes\n",
	  LDAP_SUCCESS, SCHEMA_VIOLATION_NONE },
	{ "no objectClass", NULL, "cn: Babs Jensen\nsn: Jensen\n",
	  LDAP_OBJECT_CLASS_VIOLATION, SCHEMA_VIOLATION_NO_OBJECT_CLASS },
	{ "unknown class", NULL, "objectClass: person\nobjectClass: wizard\ncn: Babs Jensen\nsn: J\n",
	  LDAP_OBJECT_CLASS_VIOLATION, SCHEMA_VIOLATION_UNKNOWN_OBJECT_CLASS },
	{ "no structural class", NULL, "objectClass: top\nobjectClass: extensibleObject\ncn: Babs Jensen\n",
	  LDAP_OBJECT_CLASS_VIOLATION, SCHEMA_VIOLATION_NO_STRUCTURAL_CLASS },
	{ "two structural classes", NULL,
	  "objectClass: person\nobjectClass: device\ncn: Babs Jensen\nsn: J\n",
	  LDAP_OBJECT_CLASS_VIOLATION, SCHEMA_VIOLATION_TWO_STRUCTURAL_CLASSES },
	{ "missing MUST", NULL, "objectClass: person\ncn: Babs Jensen\n",
	  LDAP_OBJECT_CLASS_VIOLATION, SCHEMA_VIOLATION_MISSING_MUST },
	{ "missing MUST of auxiliary", NULL,
	  "objectClass: person\nobjectClass: posixAccount\ncn: Babs Jensen\nsn: J\n",
	  LDAP_OBJECT_CLASS_VIOLATION, SCHEMA_VIOLATION_MISSING_MUST },
	{ "not allowed", NULL, "objectClass: person\ncn: Babs Jensen\nsn: J\nuid: babs\n",
	  LDAP_OBJECT_CLASS_VIOLATION, SCHEMA_VIOLATION_NOT_ALLOWED },
	{ "undefined type", NULL, "objectClass: person\ncn: Babs Jensen\nsn: J\nfavouriteColour: red\n",
	  LDAP_UNDEFINED_ATTRIBUTE_TYPE, SCHEMA_VIOLATION_UNDEFINED_TYPE },
	{ "invalid syntax", NULL,
	  "objectClass: person\nobjectClass: extensibleObject\ncn: Babs Jensen\nsn: J\nuidNumber: 12x\n",
	  LDAP_INVALID_ATTRIBUTE_SYNTAX, SCHEMA_VIOLATION_INVALID_SYNTAX },
	{ "invalid DN syntax value", NULL,
	  "objectClass: person\ncn: Babs Jensen\nsn: J\nseeAlso: not a dn\n",
	  LDAP_INVALID_ATTRIBUTE_SYNTAX, SCHEMA_VIOLATION_INVALID_SYNTAX },
	/* RFC 4511 §4.7: missing RDN values are supplied, then checked like
	 * any other value */
	{ "RDN value missing", "cn=Someone Else,dc=example,dc=com",
	  "objectClass: person\ncn: Babs Jensen\nsn: J\n", LDAP_SUCCESS, SCHEMA_VIOLATION_NONE },
	{ "RDN attribute missing", "cn=Babs Jensen+sn=J,dc=example,dc=com",
	  "objectClass: person\n", LDAP_SUCCESS, SCHEMA_VIOLATION_NONE },
	{ "RDN attribute not allowed", "uid=babs,dc=example,dc=com",
	  "objectClass: person\ncn: Babs Jensen\nsn: J\n",
	  LDAP_OBJECT_CLASS_VIOLATION, SCHEMA_VIOLATION_NOT_ALLOWED },
	{ "RDN single value differs", "displayName=b,dc=example,dc=com",
	  "objectClass: inetOrgPerson\ncn: Babs Jensen\nsn: J\ndisplayName: a\n",
	  LDAP_NAMING_VIOLATION, SCHEMA_VIOLATION_RDN_VALUE_MISSING },
	{ "RDN of a no-user-modification type", "createTimestamp=20240101000000Z,dc=example,dc=com",
	  "objectClass: person\ncn: Babs Jensen\nsn: J\n",
	  LDAP_NAMING_VIOLATION, SCHEMA_VIOLATION_RDN_VALUE_MISSING },
	{ "single-valued twice", NULL,
	  "objectClass: inetOrgPerson\ncn: Babs Jensen\nsn: J\ndisplayName: a\ndisplayName: b\n",
	  LDAP_CONSTRAINT_VIOLATION, SCHEMA_VIOLATION_SINGLE_VALUE },
	{ "duplicate values", NULL, "objectClass: person\ncn: Babs Jensen\ncn: BABS JENSEN\nsn: J\n",
	  LDAP_ATTRIBUTE_OR_VALUE_EXISTS, SCHEMA_VIOLATION_VALUE_EXISTS },
	{ "no user modification", NULL,
	  "objectClass: person\ncn: Babs Jensen\nsn: J\ncreateTimestamp: 20240101000000Z\n",
	  LDAP_CONSTRAINT_VIOLATION, SCHEMA_VIOLATION_NO_USER_MODIFICATION },
	{ "no values", NULL, "objectClass: person\ncn: Babs Jensen\nsn: J\n",
	  LDAP_SUCCESS, SCHEMA_VIOLATION_NONE },
	/* RFC 3296: ref is operational, yet only referral objects hold it
	 * (slapd: objectClassViolation) */
	{ "referral object", NULL,
	  "objectClass: referral\nobjectClass: extensibleObject\ncn: Babs Jensen\n"
	  "ref: ldap://h.example/o=x\n", LDAP_SUCCESS, SCHEMA_VIOLATION_NONE },
	{ "referral without ref", NULL,
	  "objectClass: referral\nobjectClass: extensibleObject\ncn: Babs Jensen\n",
	  LDAP_OBJECT_CLASS_VIOLATION, SCHEMA_VIOLATION_MISSING_MUST },
	{ "ref outside a referral object", NULL,
	  "objectClass: person\ncn: Babs Jensen\nsn: J\nref: ldap://h.example/\n",
	  LDAP_OBJECT_CLASS_VIOLATION, SCHEMA_VIOLATION_NOT_ALLOWED },
	{ "ref outside a referral object, extensibleObject", NULL,
	  "objectClass: person\nobjectClass: extensibleObject\ncn: Babs Jensen\nsn: J\n"
	  "ref: ldap://h.example/\n", LDAP_OBJECT_CLASS_VIOLATION, SCHEMA_VIOLATION_NOT_ALLOWED },
};

START_TEST(add_violations)
{
	struct schema_violation v;
	memset(&v, 0x55, sizeof(v));
	int rc = try_add(adds[_i].dn ? adds[_i].dn : dn, adds[_i].lines, true, &v);
	if (adds[_i].ldap_code == LDAP_SUCCESS) {
		ck_assert_msg(rc == LUMEN_OK, "%s: %s (%s)", adds[_i].name, lumen_strerror(rc), v.message);
		ck_assert_int_eq(v.kind, SCHEMA_VIOLATION_NONE);
		return;
	}
	ck_assert_msg(rc == LUMEN_ESCHEMA, "%s: rc %d", adds[_i].name, rc);
	ck_assert_msg(v.kind == adds[_i].kind, "%s: kind %d (%s)", adds[_i].name, v.kind, v.message);
	ck_assert_int_eq(v.ldap_code, adds[_i].ldap_code);
	ck_assert_int_eq(v.ldap_code, schema_violation_ldap_code(v.kind));
	ck_assert_uint_gt(strlen(v.message), 0);
}
END_TEST

/* The supplied RDN values, and none when another spelling is present. */
START_TEST(add_supplies_rdn_values)
{
	struct ldap_attribute attrs[4];
	struct schema_violation v;
	struct entry *e = NULL;
	size_t n = request_attributes("objectClass: person\ncn: babs  JENSEN\n", attrs, 4);
	ck_assert_int_eq(entry_from_attributes(fixture_schema,
					       fixture_view("cn=Babs Jensen+sn=Jensen,dc=example,dc=com"),
					       (struct ber_view){ NULL, 0 }, attrs, n, true, &e, &v),
			 LUMEN_OK);
	ck_assert_int_eq(entry_check_add(e, &arena, &v), LUMEN_OK);
	struct attribute_description cn = { schema_attribute_type(fixture_schema, "cn", 2), { 0 } };
	struct attribute_description sn = { schema_attribute_type(fixture_schema, "sn", 2), { 0 } };
	const struct entry_attribute *a = entry_find(e, &cn);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(a->n_values, 1);   /* "babs  JENSEN" already is the RDN's value */
	ck_assert(a->values[0].value.len == 12 && memcmp(a->values[0].value.ptr, "babs  JENSEN", 12) == 0);
	a = entry_find(e, &sn);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(a->n_values, 1);
	ck_assert(a->values[0].value.len == 6 && memcmp(a->values[0].value.ptr, "Jensen", 6) == 0);
	entry_free(e);

	/* the tools (slapadd's behaviour) get the same */
	n = request_attributes("objectClass: person\nsn: J\n", attrs, 4);
	ck_assert_int_eq(entry_from_attributes(fixture_schema, fixture_view(dn),
					       (struct ber_view){ NULL, 0 }, attrs, n, false, &e, &v),
			 LUMEN_OK);
	ck_assert_int_eq(entry_check_add(e, &arena, &v), LUMEN_OK);
	entry_free(e);
}
END_TEST

START_TEST(server_may_set_operational)
{
	struct schema_violation v;
	ck_assert_int_eq(try_add(dn, "objectClass: person\ncn: Babs Jensen\nsn: J\n"
				 "createTimestamp: 20240101000000Z\n", false, &v), LUMEN_OK);
}
END_TEST

START_TEST(add_without_values)
{
	struct ldap_attribute attrs[2] = {
		{ fixture_view("objectClass"), (struct ber_view[]){ fixture_view("person") }, 1 },
		{ fixture_view("cn"), NULL, 0 },
	};
	struct entry *e = NULL;
	struct schema_violation v;
	ck_assert_int_eq(entry_from_attributes(fixture_schema, fixture_view(dn), (struct ber_view){ 0 },
					       attrs, 2, true, &e, &v), LUMEN_ESCHEMA);
	ck_assert_int_eq(v.kind, SCHEMA_VIOLATION_NO_VALUES);
	ck_assert_int_eq(v.ldap_code, LDAP_PROTOCOL_ERROR);
	ck_assert_ptr_null(e);
}
END_TEST

static struct entry *valid_person(void)
{
	struct ldap_attribute attrs[8];
	size_t n = request_attributes("objectClass: inetOrgPerson\ncn: Babs Jensen\nsn: Jensen\n"
				      "description: one\nuidNumber: 7\n", attrs, 8);
	struct entry *e = NULL;
	struct schema_violation v;
	/* uidNumber is only allowed through extensibleObject */
	attrs[0].values[attrs[0].n_values++] = fixture_view("extensibleObject");
	ck_assert_int_eq(entry_from_attributes(fixture_schema, fixture_view(dn), (struct ber_view){ 0 },
					       attrs, n, true, &e, &v), LUMEN_OK);
	ck_assert_int_eq(entry_check_add(e, &arena, &v), LUMEN_OK);
	return e;
}

static const struct {
	const char *name;
	int operation;
	const char *type;
	const char *values[3];
	int ldap_code;
	enum schema_violation_kind kind;
} mods[] = {
	{ "add value", LDAP_MOD_ADD, "description", { "two" }, LDAP_SUCCESS, 0 },
	{ "add existing value", LDAP_MOD_ADD, "description", { "ONE" },
	  LDAP_ATTRIBUTE_OR_VALUE_EXISTS, SCHEMA_VIOLATION_VALUE_EXISTS },
	{ "add nothing", LDAP_MOD_ADD, "description", { NULL },
	  LDAP_PROTOCOL_ERROR, SCHEMA_VIOLATION_NO_VALUES },
	{ "add undefined type", LDAP_MOD_ADD, "shoeSize", { "42" },
	  LDAP_UNDEFINED_ATTRIBUTE_TYPE, SCHEMA_VIOLATION_UNDEFINED_TYPE },
	{ "add bad syntax", LDAP_MOD_ADD, "gidNumber", { "seven" },
	  LDAP_INVALID_ATTRIBUTE_SYNTAX, SCHEMA_VIOLATION_INVALID_SYNTAX },
	{ "delete missing value", LDAP_MOD_DELETE, "description", { "zzz" },
	  LDAP_NO_SUCH_ATTRIBUTE, SCHEMA_VIOLATION_NO_SUCH_ATTRIBUTE },
	{ "delete missing attribute", LDAP_MOD_DELETE, "telephoneNumber", { NULL },
	  LDAP_NO_SUCH_ATTRIBUTE, SCHEMA_VIOLATION_NO_SUCH_ATTRIBUTE },
	{ "delete value", LDAP_MOD_DELETE, "description", { "one" }, LDAP_SUCCESS, 0 },
	{ "replace with duplicates", LDAP_MOD_REPLACE, "description", { "a", "A" },
	  LDAP_ATTRIBUTE_OR_VALUE_EXISTS, SCHEMA_VIOLATION_VALUE_EXISTS },
	{ "replace", LDAP_MOD_REPLACE, "description", { "a", "b" }, LDAP_SUCCESS, 0 },
	{ "no user modification", LDAP_MOD_REPLACE, "createTimestamp", { "20240101000000Z" },
	  LDAP_CONSTRAINT_VIOLATION, SCHEMA_VIOLATION_NO_USER_MODIFICATION },
	{ "increment", LDAP_MOD_INCREMENT, "uidNumber", { "5" }, LDAP_SUCCESS, 0 },
	{ "increment non-integer", LDAP_MOD_INCREMENT, "cn", { "5" },
	  LDAP_CONSTRAINT_VIOLATION, SCHEMA_VIOLATION_NOT_INTEGER },
	{ "increment missing", LDAP_MOD_INCREMENT, "gidNumber", { "5" },
	  LDAP_NO_SUCH_ATTRIBUTE, SCHEMA_VIOLATION_NO_SUCH_ATTRIBUTE },
	{ "increment by text", LDAP_MOD_INCREMENT, "uidNumber", { "five" },
	  LDAP_INVALID_ATTRIBUTE_SYNTAX, SCHEMA_VIOLATION_INVALID_SYNTAX },
};

START_TEST(modify_changes)
{
	struct entry *e = valid_person();
	struct ldap_change change = { .operation = mods[_i].operation };
	struct ber_view values[3];
	size_t n = 0;
	while (n < 3 && mods[_i].values[n] != NULL) {
		values[n] = fixture_view(mods[_i].values[n]);
		n++;
	}
	change.modification = (struct ldap_attribute){ fixture_view(mods[_i].type), values, n };
	struct schema_violation v;
	int rc = entry_apply_change(e, &change, true, &v);
	if (mods[_i].ldap_code == LDAP_SUCCESS) {
		ck_assert_msg(rc == LUMEN_OK, "%s: %s", mods[_i].name, v.message);
	} else {
		ck_assert_msg(rc == LUMEN_ESCHEMA, "%s: rc %d", mods[_i].name, rc);
		ck_assert_msg(v.kind == mods[_i].kind, "%s: kind %d", mods[_i].name, v.kind);
		ck_assert_int_eq(v.ldap_code, mods[_i].ldap_code);
	}
	entry_free(e);
}
END_TEST

/* After the changes, entry_check_modify judges the whole entry. */
static int modify_then_check(const char *type, int operation, const char *value,
			     struct schema_violation *v)
{
	struct entry *before = valid_person(), *after = NULL;
	ck_assert_int_eq(entry_dup(before, &after), LUMEN_OK);
	struct ber_view vals[1] = { fixture_view(value ? value : "") };
	struct ldap_change change = { operation, { fixture_view(type), vals, value ? 1 : 0 } };
	int rc = entry_apply_change(after, &change, true, v);
	if (rc == LUMEN_OK)
		rc = entry_check_modify(before, after, &arena, v);
	entry_free(before);
	entry_free(after);
	return rc;
}

START_TEST(modify_checks)
{
	struct schema_violation v;
	ck_assert_int_eq(modify_then_check("objectClass", LDAP_MOD_REPLACE, "device", &v), LUMEN_ESCHEMA);
	ck_assert_int_eq(v.kind, SCHEMA_VIOLATION_STRUCTURAL_CHANGE);
	ck_assert_int_eq(v.ldap_code, LDAP_OBJECT_CLASS_MODS_PROHIBITED);
	ck_assert_int_eq(modify_then_check("sn", LDAP_MOD_DELETE, NULL, &v), LUMEN_ESCHEMA);
	ck_assert_int_eq(v.kind, SCHEMA_VIOLATION_MISSING_MUST);
	ck_assert_int_eq(modify_then_check("cn", LDAP_MOD_DELETE, "Babs Jensen", &v), LUMEN_ESCHEMA);
	ck_assert_int_eq(v.ldap_code, LDAP_OBJECT_CLASS_VIOLATION); /* cn is a MUST */
	ck_assert_int_eq(modify_then_check("cn", LDAP_MOD_ADD, "Barbara", &v), LUMEN_OK);
	ck_assert_int_eq(modify_then_check("uidNumber", LDAP_MOD_ADD, "8", &v), LUMEN_ESCHEMA);
	ck_assert_int_eq(v.kind, SCHEMA_VIOLATION_SINGLE_VALUE);
	ck_assert_int_eq(modify_then_check("objectClass", LDAP_MOD_DELETE, "extensibleObject", &v),
			 LUMEN_ESCHEMA);
	ck_assert_int_eq(v.kind, SCHEMA_VIOLATION_NOT_ALLOWED);
	ck_assert_int_eq(modify_then_check("objectClass", LDAP_MOD_ADD, "device", &v), LUMEN_ESCHEMA);
	ck_assert_int_eq(v.kind, SCHEMA_VIOLATION_TWO_STRUCTURAL_CLASSES);
}
END_TEST

/* lumenadd -q: values were validated on the way in; structure still is. */
START_TEST(structure_check_trusts_values)
{
	struct entry *e = valid_person();
	struct schema_violation v;
	struct attribute_description sn;
	ck_assert_int_eq(entry_add_text(e, "c", "USA"), LUMEN_OK); /* Country String: 2 letters */
	ck_assert_int_eq(entry_check_add(e, &arena, &v), LUMEN_ESCHEMA);
	ck_assert_int_eq(v.kind, SCHEMA_VIOLATION_INVALID_SYNTAX);
	ck_assert_int_eq(entry_check_add_structure(e, &arena, &v), LUMEN_OK);
	ck_assert_int_eq(attribute_description_parse(fixture_schema, "sn", 2, &sn), LUMEN_OK);
	ck_assert_int_eq(entry_delete_values(e, &sn, NULL, 0, NULL), LUMEN_OK);
	ck_assert_int_eq(entry_check_add_structure(e, &arena, &v), LUMEN_ESCHEMA);
	ck_assert_int_eq(v.kind, SCHEMA_VIOLATION_MISSING_MUST);
	entry_free(e);
}
END_TEST

START_TEST(code_table)
{
	ck_assert_int_eq(schema_violation_ldap_code(SCHEMA_VIOLATION_KIND_COUNT), LDAP_OTHER);
	ck_assert_int_eq(schema_violation_ldap_code(SCHEMA_VIOLATION_INAPPROPRIATE_MATCHING),
			 LDAP_INAPPROPRIATE_MATCHING);
	for (int k = 1; k < SCHEMA_VIOLATION_KIND_COUNT; k++)
		ck_assert_int_ne(schema_violation_ldap_code(k), LDAP_SUCCESS);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("entry_check");
	TCase *tc = tcase_create("entry_check");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, add_violations, 0, (int)(sizeof(adds) / sizeof(adds[0])));
	tcase_add_test(tc, server_may_set_operational);
	tcase_add_test(tc, add_supplies_rdn_values);
	tcase_add_test(tc, add_without_values);
	tcase_add_test(tc, structure_check_trusts_values);
	tcase_add_loop_test(tc, modify_changes, 0, (int)(sizeof(mods) / sizeof(mods[0])));
	tcase_add_test(tc, modify_checks);
	tcase_add_test(tc, code_table);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
