/*
 * test_referral.c — referral objects in back-mdb (referral.c): the URLs of
 * a referral result (DN of the target put under the URL's DN, the search's
 * scope, labels dropped, other schemes kept, unparsable LDAP URLs dropped),
 * continuation references and what a search leaves out below them,
 * ManageDsaIT, and the referrals table kept in step with the writes.
 */
#include <check.h>

#include "backend_fixture.h"

#define BASE "dc=example,dc=com"
#define REMOTE "ou=Remote,dc=example,dc=com"

/* A search's references, next to its entries. */
struct refs {
	struct fx_results entries;
	char urls[8][160];
	size_t n_urls, n_refs;
};

static int collect_reference(void *ctx, const struct entry *e, char *const *urls, size_t n)
{
	struct refs *r = ctx;
	(void)e;
	r->n_refs++;
	for (size_t i = 0; i < n && r->n_urls < 8; i++)
		snprintf(r->urls[r->n_urls++], sizeof(r->urls[0]), "%s", urls[i]);
	return 0;
}

static int search_refs(struct backend_op *op, const char *base, enum ldap_scope scope,
		       const char *filter, struct refs *out)
{
	memset(out, 0, sizeof(*out));
	op->target_dn = fx_view(base);
	struct backend_search s = {
		.base_ndn = fx_ndn(base), .scope = scope,
		.filter = filter ? fx_filter(filter) : NULL,
		.sink = fx_collect, .sink_ctx = &out->entries,
		.reference = collect_reference, .reference_ctx = out,
	};
	ck_assert_int_eq(backend_search(fx.be, op, &s), LUMEN_OK);
	return op->result_code;
}

static void add_remote(const char *const *refs)
{
	struct ldap_attribute attrs[4];
	size_t n = fx_attributes(FX_LINES("objectClass: referral", "objectClass: extensibleObject",
					  "ou: Remote"), attrs, 4);
	struct ber_view values[8];
	size_t k = 0;
	for (; refs[k] != NULL; k++)
		values[k] = fx_view(refs[k]);
	attrs[n++] = (struct ldap_attribute){ fx_view("ref"), values, k };
	struct backend_op op = fx_op();
	ck_assert_int_eq(backend_add(fx.be, &op, fx_view(REMOTE), fx_ndn(REMOTE), attrs, n),
			 LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
}

static void assert_matched(const struct backend_op *op, const char *dn)
{
	ck_assert_uint_eq(op->matched_dn.len, strlen(dn));
	ck_assert(memcmp(op->matched_dn.ptr, dn, op->matched_dn.len) == 0);
}

START_TEST(referral_urls_for_a_base_below)
{
	struct refs r;
	add_remote(FX_LINES("ldap://h.example/ou=Branch,o=Other", "ldap://bare.example",
			    "ldap://labelled.example/o=L a label", "http://www.example/x",
			    "ldap://bad.example/o=x??nosuchscope"));
	struct backend_op op = fx_op();
	ck_assert_int_eq(search_refs(&op, "uid=X,ou=Staff," REMOTE, LDAP_SCOPE_ONE, NULL, &r),
			 LDAP_REFERRAL);
	assert_matched(&op, REMOTE);
	ck_assert_uint_eq(op.n_referrals, 4);   /* the malformed one is dropped */
	ck_assert_str_eq(op.referrals[0], "ldap://h.example/uid=X,ou=Staff,ou=Branch,o=Other??one");
	ck_assert_str_eq(op.referrals[1], "ldap://bare.example/uid=X,ou=Staff," REMOTE "??one");
	ck_assert_str_eq(op.referrals[2], "ldap://labelled.example/uid=X,ou=Staff,o=L??one");
	ck_assert_str_eq(op.referrals[3], "http://www.example/x");
	ck_assert_uint_eq(r.entries.n, 0);
	/* the object itself: its own URLs */
	op = fx_op();
	ck_assert_int_eq(search_refs(&op, REMOTE, LDAP_SCOPE_BASE, NULL, &r), LDAP_REFERRAL);
	ck_assert_str_eq(op.referrals[0], "ldap://h.example/ou=Branch,o=Other??base");
}
END_TEST

START_TEST(referral_without_usable_url_is_no_such_object)
{
	struct refs r;
	add_remote(FX_LINES("ldap://bad.example/o=x??nosuchscope"));
	struct backend_op op = fx_op();
	ck_assert_int_eq(search_refs(&op, "cn=y," REMOTE, LDAP_SCOPE_BASE, NULL, &r),
			 LDAP_NO_SUCH_OBJECT);
	assert_matched(&op, REMOTE);
	/* a search without a reference callback passes the object over */
	struct fx_results plain = { 0 };
	ck_assert_int_eq(fx_search(BASE, LDAP_SCOPE_SUBTREE, NULL, &plain), LDAP_SUCCESS);
	ck_assert_uint_eq(plain.n, FIXTURE_ENTRIES);
	ck_assert(!fx_results_has(&plain, REMOTE));
	fx_results_free(&plain);
}
END_TEST

START_TEST(subtree_search_sends_references)
{
	struct refs r;
	add_remote(FX_LINES("ldap://h.example/ou=Branch,o=Other", "ldap://bare.example/"));
	struct backend_op op = fx_op();
	ck_assert_int_eq(search_refs(&op, BASE, LDAP_SCOPE_SUBTREE, "(uid=alice)", &r),
			 LDAP_SUCCESS);
	ck_assert_uint_eq(r.entries.n, 1);
	ck_assert_uint_eq(r.n_refs, 1);
	ck_assert_str_eq(r.urls[0], "ldap://h.example/ou=Branch,o=Other??sub");
	ck_assert_str_eq(r.urls[1], "ldap://bare.example/" REMOTE "??sub");
	fx_results_free(&r.entries);
	op = fx_op();
	ck_assert_int_eq(search_refs(&op, BASE, LDAP_SCOPE_ONE, NULL, &r), LDAP_SUCCESS);
	ck_assert_str_eq(r.urls[0], "ldap://h.example/ou=Branch,o=Other??base");
	ck_assert(!fx_results_has(&r.entries, REMOTE));
	fx_results_free(&r.entries);
	/* ManageDsaIT: an entry like the others */
	op = fx_op();
	op.manage_dsa_it = true;
	ck_assert_int_eq(search_refs(&op, BASE, LDAP_SCOPE_SUBTREE, NULL, &r), LDAP_SUCCESS);
	ck_assert_uint_eq(r.n_refs, 0);
	ck_assert(fx_results_has(&r.entries, REMOTE));
	fx_results_free(&r.entries);
}
END_TEST

/* A consumer copies entries below a referral object (its provider had
 * them): a search without ManageDsaIT leaves them out. */
START_TEST(entries_below_a_referral_are_left_out)
{
	struct refs r;
	add_remote(FX_LINES("ldap://h.example/"));
	struct backend_op op = fx_op();
	op.replica = op.from_tool = true;
	ck_assert_int_eq(fx_add_op(&op, "cn=hidden," REMOTE, FX_LINES(
		"objectClass: person", "cn: hidden", "sn: h")), LDAP_SUCCESS);
	op = fx_op();
	ck_assert_int_eq(search_refs(&op, BASE, LDAP_SCOPE_SUBTREE, NULL, &r), LDAP_SUCCESS);
	ck_assert_uint_eq(r.n_refs, 1);
	ck_assert_uint_eq(r.entries.n, FIXTURE_ENTRIES);
	fx_results_free(&r.entries);
	op = fx_op();
	op.manage_dsa_it = true;
	ck_assert_int_eq(search_refs(&op, BASE, LDAP_SCOPE_SUBTREE, NULL, &r), LDAP_SUCCESS);
	ck_assert_uint_eq(r.entries.n, FIXTURE_ENTRIES + 2);
	fx_results_free(&r.entries);
}
END_TEST

START_TEST(writes_at_and_below)
{
	add_remote(FX_LINES("ldap://h.example/o=Other"));
	struct backend_op op = fx_op();
	op.target_dn = fx_view("cn=Q," REMOTE);
	ck_assert_int_eq(backend_delete(fx.be, &op, fx_ndn("cn=Q," REMOTE)), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_REFERRAL);
	ck_assert_str_eq(op.referrals[0], "ldap://h.example/cn=Q,o=Other");
	assert_matched(&op, REMOTE);
	op = fx_op();
	op.manage_dsa_it = true;   /* an add below is referred all the same */
	ck_assert_int_eq(fx_add_op(&op, "cn=q," REMOTE, FX_LINES(
		"objectClass: person", "cn: q", "sn: q")), LDAP_REFERRAL);
	op = fx_op();
	op.target_dn = fx_view(REMOTE);
	ck_assert_int_eq(backend_compare(fx.be, &op, fx_ndn(REMOTE), fx_view("ou"),
					 fx_view("remote")), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_REFERRAL);
	op = fx_op();
	op.manage_dsa_it = true;
	ck_assert_int_eq(backend_compare(fx.be, &op, fx_ndn(REMOTE), fx_view("ou"),
					 fx_view("remote")), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_COMPARE_TRUE);
	/* deleted with ManageDsaIT: the table forgets it */
	op = fx_op();
	op.manage_dsa_it = true;
	ck_assert_int_eq(backend_delete(fx.be, &op, fx_ndn(REMOTE)), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
	op = fx_op();
	ck_assert_int_eq(backend_delete(fx.be, &op, fx_ndn("cn=Q," REMOTE)), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_NO_SUCH_OBJECT);
	assert_matched(&op, BASE);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("referral");
	TCase *tc = tcase_create("referral");
	tcase_add_checked_fixture(tc, fixture_open, fixture_close);
	tcase_add_test(tc, referral_urls_for_a_base_below);
	tcase_add_test(tc, referral_without_usable_url_is_no_such_object);
	tcase_add_test(tc, subtree_search_sends_references);
	tcase_add_test(tc, entries_below_a_referral_are_left_out);
	tcase_add_test(tc, writes_at_and_below);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
