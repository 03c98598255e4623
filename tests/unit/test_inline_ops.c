/*
 * test_inline_ops.c — which operations an I/O thread may run itself:
 * the protocolOps that may start there, the searches that stay (base
 * scope, an equality alone or in an AND, only cheap controls) and the
 * stored passwords cheap enough to check there.
 */
#include <check.h>
#include <string.h>

#include "controls.h"
#include "inline_ops.h"

static struct ber_view view(const char *s)
{
	return (struct ber_view){ (const uint8_t *)s, strlen(s) };
}

START_TEST(protocol_ops)
{
	ck_assert(inline_may_start(LDAP_OP_BIND_REQUEST));
	ck_assert(inline_may_start(LDAP_OP_COMPARE_REQUEST));
	ck_assert(inline_may_start(LDAP_OP_SEARCH_REQUEST));
	ck_assert(!inline_may_start(LDAP_OP_MODIFY_REQUEST));
	ck_assert(!inline_may_start(LDAP_OP_ADD_REQUEST));
	ck_assert(!inline_may_start(LDAP_OP_DELETE_REQUEST));
	ck_assert(!inline_may_start(LDAP_OP_MODDN_REQUEST));
	ck_assert(!inline_may_start(LDAP_OP_EXTENDED_REQUEST));
	ck_assert(!inline_may_start(LDAP_OP_UNBIND_REQUEST));
	ck_assert(!inline_may_start(LDAP_OP_ABANDON_REQUEST));
	ck_assert(!inline_may_start(-1));
}
END_TEST

static struct ldap_filter equality = { .type = LDAP_FILTER_EQUALITY };
static struct ldap_filter present = { .type = LDAP_FILTER_PRESENT };
static struct ldap_filter substrings = { .type = LDAP_FILTER_SUBSTRINGS };

struct search_case {
	const char *name;
	enum ldap_scope scope;
	struct ldap_filter *filter;
	const char *control;        /* one control's OID, or NULL */
	bool eligible;
};

/* AND and OR nodes built per case (children linked through next). */
static struct ldap_filter and_eq_sub, and_sub_pres, or_eq, not_eq, and_empty;

static void build_filters(void)
{
	static struct ldap_filter eq1 = { .type = LDAP_FILTER_EQUALITY };
	static struct ldap_filter sub1 = { .type = LDAP_FILTER_SUBSTRINGS };
	static struct ldap_filter sub2 = { .type = LDAP_FILTER_SUBSTRINGS };
	static struct ldap_filter pres2 = { .type = LDAP_FILTER_PRESENT };
	static struct ldap_filter eq3 = { .type = LDAP_FILTER_EQUALITY };
	static struct ldap_filter eq4 = { .type = LDAP_FILTER_EQUALITY };
	sub1.next = &eq1;                          /* (&(cn=*x*)(uid=a)) */
	and_eq_sub = (struct ldap_filter){ .type = LDAP_FILTER_AND, .u.children = &sub1 };
	sub2.next = &pres2;                        /* (&(cn=*x*)(mail=*)) */
	and_sub_pres = (struct ldap_filter){ .type = LDAP_FILTER_AND, .u.children = &sub2 };
	or_eq = (struct ldap_filter){ .type = LDAP_FILTER_OR, .u.children = &eq3 };
	not_eq = (struct ldap_filter){ .type = LDAP_FILTER_NOT, .u.child = &eq4 };
	and_empty = (struct ldap_filter){ .type = LDAP_FILTER_AND, .u.children = NULL };
}

static const struct search_case search_cases[] = {
	{ "base, any filter", LDAP_SCOPE_BASE, &present, NULL, true },
	{ "base, substrings", LDAP_SCOPE_BASE, &substrings, NULL, true },
	{ "sub, equality", LDAP_SCOPE_SUBTREE, &equality, NULL, true },
	{ "one, equality", LDAP_SCOPE_ONE, &equality, NULL, true },
	{ "sub, AND with an equality", LDAP_SCOPE_SUBTREE, &and_eq_sub, NULL, true },
	{ "sub, AND without one", LDAP_SCOPE_SUBTREE, &and_sub_pres, NULL, false },
	{ "sub, presence", LDAP_SCOPE_SUBTREE, &present, NULL, false },
	{ "sub, substrings", LDAP_SCOPE_SUBTREE, &substrings, NULL, false },
	{ "sub, OR of an equality", LDAP_SCOPE_SUBTREE, &or_eq, NULL, false },
	{ "sub, NOT of an equality", LDAP_SCOPE_SUBTREE, &not_eq, NULL, false },
	{ "sub, absolute true", LDAP_SCOPE_SUBTREE, &and_empty, NULL, false },
	{ "sub, no filter", LDAP_SCOPE_SUBTREE, NULL, NULL, false },
	{ "paged", LDAP_SCOPE_SUBTREE, &equality, CONTROL_PAGED_RESULTS, true },
	{ "assertion", LDAP_SCOPE_BASE, &present, CONTROL_ASSERTION, true },
	{ "ManageDsaIT", LDAP_SCOPE_SUBTREE, &equality, CONTROL_MANAGE_DSA_IT, true },
	{ "sort", LDAP_SCOPE_SUBTREE, &equality, CONTROL_SORT_REQUEST, false },
	{ "VLV", LDAP_SCOPE_BASE, &present, CONTROL_VLV_REQUEST, false },
	{ "sync", LDAP_SCOPE_SUBTREE, &equality, CONTROL_SYNC_REQUEST, false },
	{ "unknown control", LDAP_SCOPE_BASE, &present, "1.2.3.4", false },
};

START_TEST(searches)
{
	const struct search_case *c = &search_cases[_i];
	struct ldap_control control = { .oid = view(c->control ? c->control : "") };
	struct ldap_message msg = { .op = LDAP_OP_SEARCH_REQUEST };
	build_filters();
	msg.u.search.scope = c->scope;
	msg.u.search.filter = c->filter;
	if (c->control != NULL) {
		msg.controls = &control;
		msg.n_controls = 1;
	}
	ck_assert_msg(inline_search_eligible(&msg) == c->eligible, "%s", c->name);
}
END_TEST

struct password_case {
	const char *stored;
	bool cheap;
};

static const struct password_case password_cases[] = {
	{ "secret", true },
	{ "", true },
	{ "{SHA}5en6G6MezRroT3XKqkdPOmY/BfQ=", true },
	{ "{ssha}abcdefghijklmnopqrstuvwxyz01234567", true },
	{ "{SSHA256}x", true },
	{ "{SSHA512}x", true },
	{ "{SHA256}x", true },
	{ "{SHA512}x", true },
	{ "{PBKDF2}10000$abc$def", false },
	{ "{PBKDF2-SHA512}10000$abc$def", false },
	{ "{ARGON2}$argon2id$v=19$m=4096,t=3,p=1$s$h", false },
	{ "{CRYPT}$6$salt$hash", false },
	{ "{UNKNOWN}x", false },
	{ "{SHA", false },
};

START_TEST(passwords)
{
	const struct password_case *c = &password_cases[_i];
	ck_assert_msg(inline_password_cheap(c->stored, strlen(c->stored)) == c->cheap, "%s",
		      c->stored);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("inline_ops");
	TCase *tc = tcase_create("inline_ops");
	tcase_add_test(tc, protocol_ops);
	tcase_add_loop_test(tc, searches, 0, sizeof(search_cases) / sizeof(search_cases[0]));
	tcase_add_loop_test(tc, passwords, 0, sizeof(password_cases) / sizeof(password_cases[0]));
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
