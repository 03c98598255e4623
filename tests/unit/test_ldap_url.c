/* test_ldap_url.c — LDAP URL split and rewrite (ldap_url.h). */
#include <check.h>
#include <string.h>

#include "ldap_url.h"
#include "lumen_error.h"

static struct ber_view v(const char *s)
{
	return (struct ber_view){ (const uint8_t *)s, strlen(s) };
}

/* The URL text rewritten with dn and scope ("" when it fails). */
static const char *rewrite(struct arena *a, const char *url, const char *dn,
			   enum ldap_url_scope scope)
{
	struct ldap_url u;
	char *out;
	if (ldap_url_parse(v(url), &u) != LUMEN_OK ||
	    ldap_url_write(&u, v(dn), scope, a, &out) != LUMEN_OK)
		return "";
	return out;
}

START_TEST(test_parse_parts)
{
	struct ldap_url u;
	ck_assert_int_eq(ldap_url_parse(v("LDAP://h.example:389/ou=a,dc=b?cn,sn?ONE?(x=1)?e"), &u),
			 LUMEN_OK);
	ck_assert_int_eq((int)u.scheme_host.len, 20);
	ck_assert(memcmp(u.dn.ptr, "ou=a,dc=b", u.dn.len) == 0);
	ck_assert_int_eq(u.scope, LDAP_URL_SCOPE_ONE);
	ck_assert(memcmp(u.filter.ptr, "(x=1)", u.filter.len) == 0);
	ck_assert_int_eq(ldap_url_parse(v("ldap://h"), &u), LUMEN_OK);
	ck_assert_int_eq((int)u.dn.len, 0);
	ck_assert_int_eq(u.scope, LDAP_URL_SCOPE_ABSENT);
}
END_TEST

START_TEST(test_parse_errors)
{
	struct ldap_url u;
	ck_assert_int_eq(ldap_url_parse(v("http://h/"), &u), LUMEN_EUNSUPPORTED);
	ck_assert_int_eq(ldap_url_parse(v("not a url"), &u), LUMEN_EUNSUPPORTED);
	ck_assert_int_eq(ldap_url_parse(v("ldap://h/dc=x??deep"), &u), LUMEN_EMALFORMED);
	ck_assert_int_eq(ldap_url_parse(v("ldap://h/dc=x?a?base?f?e?extra"), &u),
			 LUMEN_EMALFORMED);
	ck_assert_int_eq(ldap_url_parse(v("ldap://h/dc=%4"), &u), LUMEN_EMALFORMED);
	ck_assert_int_eq(ldap_url_parse(v("ldap://h/dc=%zz"), &u), LUMEN_EMALFORMED);
}
END_TEST

START_TEST(test_decode_dn)
{
	struct arena a;
	struct ldap_url u;
	struct ber_view dn;
	arena_init(&a, 0);
	ck_assert_int_eq(ldap_url_parse(v("ldap://h/cn=J%20Doe,o=x%3F"), &u), LUMEN_OK);
	ck_assert_int_eq(ldap_url_decode_dn(&u, &a, &dn), LUMEN_OK);
	ck_assert_str_eq((const char *)dn.ptr, "cn=J Doe,o=x?");
	arena_free(&a);
}
END_TEST

/* RFC 4511 §4.1.10 / §4.5.3 as slapd writes them. */
START_TEST(test_rewrite)
{
	struct arena a;
	arena_init(&a, 0);
	/* a search below the referral: its DN, the search's scope */
	ck_assert_str_eq(rewrite(&a, "ldap://o.example:389/ou=branch,dc=other", "uid=x,ou=branch,dc=other",
				 LDAP_URL_SCOPE_BASE),
			 "ldap://o.example:389/uid=x,ou=branch,dc=other??base");
	/* an update: no scope */
	ck_assert_str_eq(rewrite(&a, "ldap://h/", "cn=q,dc=x", LDAP_URL_SCOPE_ABSENT),
			 "ldap://h/cn=q,dc=x");
	/* a scope already there wins */
	ck_assert_str_eq(rewrite(&a, "ldap://h/o=y??one", "o=y", LDAP_URL_SCOPE_SUB),
			 "ldap://h/o=y??one");
	/* attributes, filter and extensions are kept */
	ck_assert_str_eq(rewrite(&a, "ldap://h/o=y?cn?" "?(cn=a)", "o=z", LDAP_URL_SCOPE_SUB),
			 "ldap://h/o=z?cn?sub?(cn=a)");
	/* an empty DN */
	ck_assert_str_eq(rewrite(&a, "ldap://g.example:389/", "", LDAP_URL_SCOPE_ONE),
			 "ldap://g.example:389/??one");
	/* escaped on the way out */
	ck_assert_str_eq(rewrite(&a, "ldap://h", "cn=J Doe?,o=x", LDAP_URL_SCOPE_ABSENT),
			 "ldap://h/cn=J%20Doe%3F,o=x");
	ck_assert_str_eq(rewrite(&a, "ldap://h", "cn=\xc3\xa9", LDAP_URL_SCOPE_CHILDREN),
			 "ldap://h/cn=%C3%A9??subordinate");
	arena_free(&a);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("ldap_url");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_parse_parts);
	tcase_add_test(tc, test_parse_errors);
	tcase_add_test(tc, test_decode_dn);
	tcase_add_test(tc, test_rewrite);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
