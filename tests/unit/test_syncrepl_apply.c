/*
 * test_syncrepl_apply.c — a consumer's changes to its database without a
 * network (syncrepl_apply.h), on back-mdb's fixture tree: an add keeps the
 * provider's entryUUID, entryCSN and timestamps; the same entryUUID under
 * a new DN renames and moves the entry and replaces its attributes; a
 * delete by entryUUID; the present phase deletes what was not named, in
 * scope only, children first; the cookie round-trips through the suffix's
 * contextCSN without restamping it; a missing parent, an unknown
 * attribute and a DN outside the searchbase are refused.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "backend_fixture.h"
#include "syncrepl_apply.h"

static struct syncrepl_apply *apply;

static const uint8_t U1[LDAP_SYNC_UUID_SIZE] = { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x47,
						 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd,
						 0xee, 0x01 };
static const uint8_t U2[LDAP_SYNC_UUID_SIZE] = { 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x47,
						 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd,
						 0xee, 0x02 };
#define CSN1 "20250101000000.000001Z#000000#000#000000"
#define CSN2 "20250101000000.000002Z#000000#000#000000"

static bool all_operational = true;    /* the consumer's attrs has "+" */

static void open_apply(const char *base, const char *filter)
{
	char why[256] = "";
	struct syncrepl_apply_settings s = {
		.schema = fx.schema, .database = fx.db,
		.context_ndn = fx_view("dc=example,dc=com"),
		.rootdn_ndn = fx_view("cn=manager,dc=example,dc=com"),
		.searchbase = base, .scope = LDAP_SCOPE_SUBTREE, .filter = filter,
		.all_operational = all_operational,
	};
	ck_assert_msg(syncrepl_apply_create(&s, &apply, why, sizeof(why)) == LUMEN_OK, "%s", why);
}

static void setup(void)
{
	fixture_open();
	open_apply("dc=example,dc=com", "(objectClass=*)");
}

static void teardown(void)
{
	syncrepl_apply_free(apply);
	apply = NULL;
	fixture_close();
}

/* Applies lines as the provider's entry dn under uuid; the apply's result. */
static int put(enum ldap_sync_state state, const uint8_t *uuid, const char *dn,
	       const char *const *lines, char *why, size_t whylen)
{
	struct ldap_attribute attrs[32];
	bool changed;
	arena_reset(&fx.arena);
	size_t n = lines != NULL ? fx_attributes(lines, attrs, 32) : 0;
	return syncrepl_apply_entry(apply, state, uuid, fx_view(dn), attrs, n, &changed, why,
				    whylen);
}

/* The value of attr of the entry at dn, or "" (absent), "-" (no entry). */
static char value[256];
static int copy_value(void *ctx, const struct entry *e, const struct backend_entry_info *info)
{
	const char *attr = ctx;
	(void)info;
	snprintf(value, sizeof(value), "%s", "");
	for (size_t i = 0; i < e->n_attributes; i++)
		if (strcasecmp(attribute_type_name(e->attributes[i].desc.type), attr) == 0)
			snprintf(value, sizeof(value), "%.*s",
				 (int)e->attributes[i].values[0].value.len,
				 (const char *)e->attributes[i].values[0].value.ptr);
	return 0;
}

static const char *get(const char *dn, const char *attr)
{
	struct backend_op op = fx_op();
	snprintf(value, sizeof(value), "-");
	ck_assert_int_eq(database_fetch(fx.db, &op, fx_ndn(dn), copy_value, (void *)attr),
			 LUMEN_OK);
	return value;
}

#define NEW_DN "uid=zed,ou=People,dc=example,dc=com"
#define MOVED_DN "uid=zed2,ou=Groups,dc=example,dc=com"

START_TEST(add_keeps_the_providers_stamps)
{
	char why[256] = "";
	ck_assert_msg(put(LDAP_SYNC_ADD, U1, NEW_DN, FX_LINES(
		"objectClass: inetOrgPerson", "uid: zed", "cn: Zed", "sn: Z",
		"description: d", "entryCSN: " CSN1, "createTimestamp: 20250101000000Z",
		"modifyTimestamp: 20250101000000Z", "creatorsName: cn=p", "modifiersName: cn=p",
		"entryDN: " NEW_DN, "hasSubordinates: FALSE",
		"subschemaSubentry: cn=Subschema"), why, sizeof(why)) == LUMEN_OK, "%s", why);
	ck_assert_str_eq(get(NEW_DN, "entryUUID"), "11223344-5566-4777-8899-aabbccddee01");
	ck_assert_str_eq(get(NEW_DN, "entryCSN"), CSN1);
	ck_assert_str_eq(get(NEW_DN, "createTimestamp"), "20250101000000Z");
	ck_assert_str_eq(get(NEW_DN, "creatorsName"), "cn=p");
}
END_TEST

START_TEST(same_uuid_elsewhere_renames_and_replaces)
{
	char why[256] = "";
	ck_assert_int_eq(put(LDAP_SYNC_ADD, U1, NEW_DN, FX_LINES(
		"objectClass: inetOrgPerson", "uid: zed", "cn: Zed", "sn: Z", "description: d",
		"entryCSN: " CSN1), why, sizeof(why)), LUMEN_OK);
	ck_assert_msg(put(LDAP_SYNC_MODIFY, U1, MOVED_DN, FX_LINES(
		"objectClass: inetOrgPerson", "uid: zed2", "cn: Zed Two", "sn: Z",
		"entryCSN: " CSN2, "modifyTimestamp: 20250102000000Z",
		"modifiersName: cn=q"), why, sizeof(why)) == LUMEN_OK, "%s", why);
	ck_assert_str_eq(get(NEW_DN, "cn"), "-");
	ck_assert_str_eq(get(MOVED_DN, "cn"), "Zed Two");
	ck_assert_str_eq(get(MOVED_DN, "uid"), "zed2");
	ck_assert_str_eq(get(MOVED_DN, "description"), "");     /* the provider dropped it */
	ck_assert_str_eq(get(MOVED_DN, "entryCSN"), CSN2);
	ck_assert_str_eq(get(MOVED_DN, "modifyTimestamp"), "20250102000000Z");
	ck_assert_str_eq(get(MOVED_DN, "modifiersName"), "cn=q");
	ck_assert_str_eq(get(MOVED_DN, "entryUUID"), "11223344-5566-4777-8899-aabbccddee01");
	/* deleted by its entryUUID; deleting it again is nothing */
	ck_assert_int_eq(put(LDAP_SYNC_DELETE, U1, "", NULL, why, sizeof(why)), LUMEN_OK);
	ck_assert_str_eq(get(MOVED_DN, "cn"), "-");
	ck_assert_int_eq(put(LDAP_SYNC_DELETE, U1, "", NULL, why, sizeof(why)), LUMEN_OK);
}
END_TEST

/* The provider removed the last member of a group: its memberOf overlay
 * took memberOf off the member entry, and the entry sent without it must
 * lose it here too (a consumer that only ever replaced operational
 * attributes kept it for good; Debian's slapd consumer drops it). Unless
 * the consumer did not ask for operational attributes at all. */
START_TEST(operational_attribute_the_provider_dropped_goes)
{
	char why[256] = "";
	const char *const *with = FX_LINES("objectClass: inetOrgPerson", "uid: zed", "cn: Zed",
					    "sn: Z", "entryCSN: " CSN1,
					    "memberOf: cn=admins,ou=Groups,dc=example,dc=com");
	const char *const *without = FX_LINES("objectClass: inetOrgPerson", "uid: zed",
					       "cn: Zed", "sn: Z", "entryCSN: " CSN2);
	ck_assert_msg(put(LDAP_SYNC_ADD, U1, NEW_DN, with, why, sizeof(why)) == LUMEN_OK, "%s", why);
	ck_assert_str_eq(get(NEW_DN, "memberOf"), "cn=admins,ou=Groups,dc=example,dc=com");
	ck_assert_msg(put(LDAP_SYNC_MODIFY, U1, NEW_DN, without, why, sizeof(why)) == LUMEN_OK,
		      "%s", why);
	ck_assert_str_eq(get(NEW_DN, "memberOf"), "");
	ck_assert_str_eq(get(NEW_DN, "entryCSN"), CSN2);
	ck_assert_str_eq(get(NEW_DN, "entryUUID"), "11223344-5566-4777-8899-aabbccddee01");
	/* attrs without "+": what the provider does not send is kept */
	syncrepl_apply_free(apply);
	all_operational = false;
	open_apply("dc=example,dc=com", "(objectClass=*)");
	all_operational = true;
	ck_assert_int_eq(put(LDAP_SYNC_MODIFY, U1, NEW_DN, with, why, sizeof(why)), LUMEN_OK);
	ck_assert_int_eq(put(LDAP_SYNC_MODIFY, U1, NEW_DN, FX_LINES(
		"objectClass: inetOrgPerson", "uid: zed", "cn: Zed", "sn: Z"), why, sizeof(why)),
		LUMEN_OK);
	ck_assert_str_eq(get(NEW_DN, "memberOf"), "cn=admins,ou=Groups,dc=example,dc=com");
}
END_TEST

START_TEST(present_phase_deletes_what_was_not_named)
{
	char why[256] = "";
	size_t deleted = 0;
	syncrepl_apply_free(apply);
	open_apply("ou=People,dc=example,dc=com", "(objectClass=*)");
	syncrepl_apply_begin_refresh(apply);
	ck_assert_int_eq(put(LDAP_SYNC_ADD, U1, NEW_DN, FX_LINES(
		"objectClass: inetOrgPerson", "uid: zed", "cn: Zed", "sn: Z"), why, sizeof(why)),
		LUMEN_OK);
	ck_assert_int_eq(put(LDAP_SYNC_PRESENT, U2, "", NULL, why, sizeof(why)), LUMEN_OK);
	ck_assert_msg(syncrepl_apply_delete_nonpresent(apply, &deleted, why, sizeof(why)) ==
		      LUMEN_OK, "%s", why);
	/* ou=Engineering and the 6 persons; zed stays, and so does ou=People (its
	 * parent, not named but not a leaf); ou=Groups is out of scope */
	ck_assert_uint_eq(deleted, 1 + FIXTURE_PERSONS);
	ck_assert_str_eq(get("ou=People,dc=example,dc=com", "ou"), "People");
	ck_assert_str_eq(get(NEW_DN, "uid"), "zed");
	ck_assert_str_eq(get("cn=admins,ou=Groups,dc=example,dc=com", "cn"), "admins");
	ck_assert_str_eq(get(fixture_people[4], "cn"), "-");
	struct fx_results r = { .n = 0 };
	ck_assert_int_eq(fx_search("dc=example,dc=com", LDAP_SCOPE_SUBTREE, "(objectClass=*)", &r),
			 LDAP_SUCCESS);
	ck_assert_uint_eq(r.n, FIXTURE_ENTRIES - deleted + 1);
	ck_assert(fx_results_has(&r, NEW_DN));
	fx_results_free(&r);
}
END_TEST

START_TEST(cookie_round_trip_keeps_the_suffix_stamps)
{
	char why[256] = "";
	struct sync_cookie c;
	const char *why_csn;
	ck_assert_int_eq(syncrepl_apply_load_cookie(apply, &c), LUMEN_OK);
	ck_assert_uint_eq(c.n_csns, 0);
	char before[64];
	snprintf(before, sizeof(before), "%s", get("dc=example,dc=com", "entryCSN"));
	ck_assert_int_eq(csn_parse(CSN2, 40, &c.csns[0], &why_csn), LUMEN_OK);
	c.n_csns = 1;
	ck_assert_msg(syncrepl_apply_save_cookie(apply, &c, why, sizeof(why)) == LUMEN_OK, "%s",
		      why);
	ck_assert_str_eq(get("dc=example,dc=com", "contextCSN"), CSN2);
	ck_assert_str_eq(get("dc=example,dc=com", "entryCSN"), before);
	struct sync_cookie back;
	ck_assert_int_eq(syncrepl_apply_load_cookie(apply, &back), LUMEN_OK);
	ck_assert_uint_eq(back.n_csns, 1);
	ck_assert_str_eq(back.csns[0].text, CSN2);
	/* the provider's suffix entry (another entryUUID: it takes the DN over)
	 * does not overwrite the consumer's cookie */
	ck_assert_msg(put(LDAP_SYNC_MODIFY, U2, "dc=example,dc=com", FX_LINES(
		"objectClass: top", "objectClass: dcObject", "objectClass: organization",
		"dc: example", "o: New", "contextCSN: " CSN1, "entryCSN: " CSN1), why,
		sizeof(why)) == LUMEN_OK, "%s", why);
	ck_assert_str_eq(get("dc=example,dc=com", "o"), "New");
	ck_assert_str_eq(get("dc=example,dc=com", "entryCSN"), CSN1);
	ck_assert_str_eq(get("dc=example,dc=com", "contextCSN"), CSN2);
	ck_assert_str_eq(get("dc=example,dc=com", "entryUUID"),
			 "11223344-5566-4777-8899-aabbccddee02");
}
END_TEST

START_TEST(refusals)
{
	char why[256] = "";
	ck_assert_int_eq(put(LDAP_SYNC_ADD, U1, "uid=x,ou=Nowhere,dc=example,dc=com", FX_LINES(
		"objectClass: inetOrgPerson", "uid: x", "cn: X", "sn: X"), why, sizeof(why)),
		LUMEN_ENOTFOUND);
	ck_assert_int_eq(put(LDAP_SYNC_ADD, U1, NEW_DN, FX_LINES(
		"objectClass: inetOrgPerson", "uid: zed", "cn: Zed", "sn: Z", "fooBar: 1"), why,
		sizeof(why)), LUMEN_EINVAL);
	ck_assert_msg(strstr(why, "fooBar") != NULL, "%s", why);
	ck_assert_int_eq(put(LDAP_SYNC_ADD, U1, "cn=x,dc=other", FX_LINES("cn: x"), why,
			     sizeof(why)), LUMEN_EINVAL);
	ck_assert_msg(strstr(why, "outside the searchbase") != NULL, "%s", why);
	ck_assert_int_eq(put(LDAP_SYNC_ADD, U1, "not a dn", FX_LINES("cn: x"), why, sizeof(why)),
			 LUMEN_EINVAL);
	/* an add the schema refuses (no sn) is refused with the database's reason */
	ck_assert_int_eq(put(LDAP_SYNC_ADD, U1, NEW_DN, FX_LINES(
		"objectClass: inetOrgPerson", "uid: zed", "cn: Zed"), why, sizeof(why)),
		LUMEN_EINVAL);
	ck_assert_msg(strstr(why, "add:") != NULL, "%s", why);
	struct syncrepl_apply *bad = NULL;
	struct syncrepl_apply_settings s = {
		.schema = fx.schema, .database = fx.db, .context_ndn = fx_view("dc=example,dc=com"),
		.searchbase = "dc=elsewhere", .scope = LDAP_SCOPE_SUBTREE, .filter = "(x=*)" };
	ck_assert_int_eq(syncrepl_apply_create(&s, &bad, why, sizeof(why)), LUMEN_EINVAL);
	s.searchbase = "dc=example,dc=com";
	s.filter = "(x=";
	ck_assert_int_eq(syncrepl_apply_create(&s, &bad, why, sizeof(why)), LUMEN_EINVAL);
	ck_assert_ptr_null(bad);
}
END_TEST


static Suite *make_suite(void)
{
	Suite *s = suite_create("syncrepl_apply");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, add_keeps_the_providers_stamps);
	tcase_add_test(tc, same_uuid_elsewhere_renames_and_replaces);
	tcase_add_test(tc, operational_attribute_the_provider_dropped_goes);
	tcase_add_test(tc, present_phase_deletes_what_was_not_named);
	tcase_add_test(tc, cookie_round_trip_keeps_the_suffix_stamps);
	tcase_add_test(tc, refusals);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
