/*
 * test_write_hook.c — back-mdb's write hook (database.h, "Write hooks";
 * src/backmdb/write_hook.c): what the hook is shown for each operation,
 * changes it makes through the transaction handle committing with the
 * operation (indexes and both caches kept right), refusals and failures
 * undoing everything, the depth bound, and find_equal with and without an
 * equality index.
 */
#include <check.h>

#include "backend_fixture.h"

#define ALICE "uid=alice,ou=People,dc=example,dc=com"
#define BOB "uid=bob,ou=People,dc=example,dc=com"
#define DAVE "uid=dave,ou=Engineering,ou=People,dc=example,dc=com"
#define ADMINS "cn=admins,ou=Groups,dc=example,dc=com"
#define HOOK_MODIFIER "cn=hook,dc=example,dc=com"

struct seen {
	enum database_write_kind kind;
	char before[128], after[128];
	unsigned depth;
};

/* What the test's hook does, and what it saw. */
struct hook_state {
	struct seen seen[16];
	size_t n_seen;
	bool remove_member;        /* on delete: drop the DN from every member */
	bool refuse_after_edit;    /* ... then refuse the operation */
	bool recurse;              /* on every write: edit the same entry again */
	bool leave_alone;          /* on the depth-0 write: an edit that changes nothing */
	const char *find_type;     /* count entries holding the deleted DN here */
	size_t found;
	int edit_rc;
};

static struct hook_state hs;

static void copy_dn(char *out, const struct entry *e)
{
	out[0] = '\0';
	if (e != NULL)
		snprintf(out, 128, "%.*s", (int)e->dn.len, (const char *)e->dn.ptr);
}

struct removal {
	const struct attribute_type *type;
	struct ber_view ndn;
	struct ber_view referrers[8];
	size_t n;
};

static int collect(void *ctx, const struct entry *e)
{
	struct removal *r = ctx;
	ck_assert_uint_lt(r->n, 8);
	r->referrers[r->n++] = (struct ber_view){ arena_memdup(&fx.arena, e->ndn.ptr, e->ndn.len),
						  e->ndn.len };
	return 0;
}

static int drop_value(void *ctx, struct entry *e)
{
	struct removal *r = ctx;
	struct attribute_description ad = { .type = r->type };
	const struct entry_attribute *a = entry_find_type(e, r->type);
	ck_assert_ptr_nonnull(a);
	long at = entry_attribute_find_normalized(a, r->ndn);
	ck_assert_int_ge(at, 0);
	struct ber_view value = a->values[at].value;
	return entry_delete_values(e, &ad, &value, 1, NULL);
}

static int touch_description(void *ctx, struct entry *e)
{
	(void)ctx;
	int rc = entry_add_text(e, "description", "again");
	return rc == LUMEN_EEXIST ? LUMEN_OK : rc;
}

static int change_nothing(void *ctx, struct entry *e)
{
	(void)ctx;
	(void)e;
	return DATABASE_TXN_UNCHANGED;
}

static int count_found(void *ctx, const struct entry *e)
{
	(void)ctx;
	(void)e;
	hs.found++;
	return 0;
}

static int remove_references(struct database_txn *txn, const struct database_txn_ops *ops,
			     const struct entry *gone)
{
	struct removal r = { .type = schema_attribute_type(fx.schema, "member", 6),
			     .ndn = gone->ndn };
	int rc = ops->find_equal(txn, r.type, r.ndn, collect, &r);
	for (size_t i = 0; i < r.n && rc == LUMEN_OK; i++)
		rc = ops->edit(txn, r.referrers[i], fx_ndn(HOOK_MODIFIER),
			       drop_value, &r);
	return rc;
}

static int test_hook(void *ctx, struct database_txn *txn, const struct database_txn_ops *ops,
		     struct backend_op *op, const struct database_write *w)
{
	(void)ctx;
	ck_assert_uint_lt(hs.n_seen, 16);
	struct seen *s = &hs.seen[hs.n_seen++];
	s->kind = w->kind;
	s->depth = w->depth;
	copy_dn(s->before, w->before);
	copy_dn(s->after, w->after);
	int rc = LUMEN_OK;
	if (hs.find_type != NULL && w->kind == DATABASE_WRITE_DELETE)
		rc = ops->find_equal(txn, schema_attribute_type(fx.schema, hs.find_type,
								 strlen(hs.find_type)),
				     w->before->ndn, count_found, NULL);
	if (rc == LUMEN_OK && hs.remove_member && w->kind == DATABASE_WRITE_DELETE)
		rc = remove_references(txn, ops, w->before);
	if (rc == LUMEN_OK && hs.refuse_after_edit) {
		op->result_code = LDAP_CONSTRAINT_VIOLATION;
		op->diagnostic = "refused by the hook";
		return LUMEN_EINVAL;
	}
	if (rc == LUMEN_OK && hs.leave_alone && w->depth == 0)
		rc = ops->edit(txn, fx_ndn(ADMINS), fx_ndn(HOOK_MODIFIER), change_nothing, NULL);
	if (rc == LUMEN_OK && hs.recurse) {
		const struct entry *e = w->after != NULL ? w->after : w->before;
		hs.edit_rc = ops->edit(txn, e->ndn, (struct ber_view){ NULL, 0 },
				       touch_description, NULL);
		rc = hs.edit_rc;
	}
	return rc;
}

static const struct database_write_hook hook = { .on_write = test_hook };

/* What on_commit was shown: each change's kind, DNs, CSN and UUID. */
struct committed {
	enum database_write_kind kind;
	char old_ndn[128], ndn[128], csn[64], uuid[64];
};
static struct committed commits[16];
static size_t n_commits, n_commit_calls;

static void text_of(char *out, struct ber_view v)
{
	snprintf(out, 64, "%.*s", (int)v.len, (const char *)v.ptr);
}

static void test_on_commit(void *ctx, struct backend_op *op,
			   const struct database_change *changes, size_t n)
{
	(void)ctx;
	(void)op;
	n_commit_calls++;
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_lt(n_commits, 16);
		struct committed *c = &commits[n_commits++];
		c->kind = changes[i].kind;
		snprintf(c->old_ndn, sizeof(c->old_ndn), "%.*s", (int)changes[i].old_ndn.len,
			 (const char *)changes[i].old_ndn.ptr);
		snprintf(c->ndn, sizeof(c->ndn), "%.*s", (int)changes[i].ndn.len,
			 (const char *)changes[i].ndn.ptr);
		text_of(c->csn, changes[i].csn);
		text_of(c->uuid, changes[i].uuid);
	}
}

static const struct database_write_hook commit_hook = { .on_write = test_hook,
							 .on_commit = test_on_commit };

static struct backend_op hooked_op(void)
{
	struct backend_op op = fx_op();
	op.write_hook = &hook;
	return op;
}

static void setup(void)
{
	memset(&hs, 0, sizeof(hs));
	n_commits = n_commit_calls = 0;
	fixture_open();
}

static void indexes_verify(void)
{
	uint64_t problems = 1;
	ck_assert_int_eq(backend_check_indexes(fx.be, NULL, NULL, &problems), LUMEN_OK);
	ck_assert_uint_eq(problems, 0);
}

static size_t count_matches(const char *filter)
{
	struct fx_results r = { 0 };
	ck_assert_int_eq(fx_search("dc=example,dc=com", LDAP_SCOPE_SUBTREE, filter, &r),
			 LDAP_SUCCESS);
	size_t n = r.n;
	fx_results_free(&r);
	return n;
}

START_TEST(hook_sees_every_operation)
{
	struct backend_op op = hooked_op();
	ck_assert_int_eq(fx_add_op(&op, "uid=erin,ou=People,dc=example,dc=com", FX_LINES(
		"objectClass: inetOrgPerson", "uid: erin", "cn: Erin", "sn: E")), LDAP_SUCCESS);
	op = hooked_op();
	struct ldap_change change = { .operation = LDAP_MOD_REPLACE };
	struct ber_view sn = fx_view("Erinsson");
	change.modification = (struct ldap_attribute){ fx_view("sn"), &sn, 1 };
	ck_assert_int_eq(backend_modify(fx.be, &op, fx_ndn("uid=erin,ou=People,dc=example,dc=com"),
					&change, 1), LUMEN_OK);
	op = hooked_op();
	ck_assert_int_eq(backend_modrdn(fx.be, &op, fx_ndn("uid=erin,ou=People,dc=example,dc=com"),
					fx_view("uid=erin2"), false, false,
					(struct ber_view){ NULL, 0 }), LUMEN_OK);
	op = hooked_op();
	ck_assert_int_eq(backend_delete(fx.be, &op,
					fx_ndn("uid=erin2,ou=People,dc=example,dc=com")), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);

	ck_assert_uint_eq(hs.n_seen, 4);
	ck_assert_int_eq(hs.seen[0].kind, DATABASE_WRITE_ADD);
	ck_assert_str_eq(hs.seen[0].before, "");
	ck_assert_str_eq(hs.seen[0].after, "uid=erin,ou=People,dc=example,dc=com");
	ck_assert_int_eq(hs.seen[1].kind, DATABASE_WRITE_MODIFY);
	ck_assert_str_eq(hs.seen[1].before, hs.seen[1].after);
	ck_assert_int_eq(hs.seen[2].kind, DATABASE_WRITE_MODRDN);
	ck_assert_str_eq(hs.seen[2].before, "uid=erin,ou=People,dc=example,dc=com");
	ck_assert_str_eq(hs.seen[2].after, "uid=erin2,ou=People,dc=example,dc=com");
	ck_assert_int_eq(hs.seen[3].kind, DATABASE_WRITE_DELETE);
	ck_assert_str_eq(hs.seen[3].after, "");
	for (size_t i = 0; i < hs.n_seen; i++)
		ck_assert_uint_eq(hs.seen[i].depth, 0);
}
END_TEST

START_TEST(refused_operation_is_not_hooked)
{
	struct backend_op op = hooked_op();
	ck_assert_int_eq(backend_delete(fx.be, &op, fx_ndn("uid=nobody,ou=People,dc=example,dc=com")),
			 LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_NO_SUCH_OBJECT);
	ck_assert_uint_eq(hs.n_seen, 0);
}
END_TEST

START_TEST(hook_edits_commit_with_the_operation)
{
	/* cache the member=bob lookup and admins itself before the change */
	ck_assert_uint_eq(count_matches("(member=" BOB ")"), 1);
	ck_assert_uint_eq(count_matches("(member=" ALICE ")"), 1);
	hs.remove_member = true;
	struct backend_op op = hooked_op();
	ck_assert_int_eq(backend_delete(fx.be, &op, fx_ndn(BOB)), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
	/* the hook saw the delete, then its own edit one level down */
	ck_assert_uint_eq(hs.n_seen, 2);
	ck_assert_int_eq(hs.seen[1].kind, DATABASE_WRITE_MODIFY);
	ck_assert_uint_eq(hs.seen[1].depth, 1);
	ck_assert_str_eq(hs.seen[1].after, ADMINS);
	/* IDL cache and entry cache were both invalidated for the edit */
	ck_assert_uint_eq(count_matches("(member=" BOB ")"), 0);
	ck_assert_uint_eq(count_matches("(member=" ALICE ")"), 1);
	struct fx_results r = { 0 };
	ck_assert_int_eq(fx_search(ADMINS, LDAP_SCOPE_BASE, "(member=" BOB ")", &r), LDAP_SUCCESS);
	ck_assert(!fx_results_has(&r, ADMINS));
	fx_results_free(&r);
	ck_assert_uint_eq(count_matches("(modifiersName=" HOOK_MODIFIER ")"), 1);
	indexes_verify();
}
END_TEST

START_TEST(hook_refusal_undoes_everything)
{
	hs.remove_member = true;
	hs.refuse_after_edit = true;
	struct backend_op op = hooked_op();
	ck_assert_int_eq(backend_delete(fx.be, &op, fx_ndn(BOB)), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_CONSTRAINT_VIOLATION);
	ck_assert_str_eq(op.diagnostic, "refused by the hook");
	ck_assert_uint_eq(count_matches("(uid=bob)"), 1);
	ck_assert_uint_eq(count_matches("(member=" BOB ")"), 1);
	ck_assert_uint_eq(count_matches("(modifiersName=" HOOK_MODIFIER ")"), 0);
	indexes_verify();
}
END_TEST

/* backend_op.write_check: what it saw, and whether it refuses. */
static struct seen checked[4];
static size_t n_checked, hooked_when_checked;
static bool check_refuses;

static int test_check(void *ctx, struct database_txn *txn, const struct database_txn_ops *ops,
		      struct backend_op *op, const struct database_write *w)
{
	(void)ctx;
	ck_assert_uint_lt(n_checked, 4);
	/* before the change: a deleted entry is still there to read */
	if (w->kind == DATABASE_WRITE_DELETE)
		ck_assert_int_eq(ops->fetch(txn, w->before->ndn, count_found, NULL), LUMEN_OK);
	struct seen *s = &checked[n_checked++];
	s->kind = w->kind;
	s->depth = w->depth;
	copy_dn(s->before, w->before);
	copy_dn(s->after, w->after);
	hooked_when_checked = hs.n_seen;
	if (!check_refuses)
		return LUMEN_OK;
	op->result_code = LDAP_INSUFFICIENT_ACCESS_RIGHTS;
	op->diagnostic = "refused by the check";
	return LUMEN_EINVAL;
}

static const struct database_write_hook check = { .on_write = test_check };

/* The check sees the operation's own change once, before it is made and
 * before the hook, and not the changes the hook makes; its refusal is the
 * answer, the hook is not called and nothing is written. */
START_TEST(write_check_decides_before_the_hook)
{
	n_checked = hooked_when_checked = 0;
	check_refuses = false;
	hs.remove_member = true;
	struct backend_op op = hooked_op();
	op.write_check = &check;
	ck_assert_int_eq(backend_delete(fx.be, &op, fx_ndn(BOB)), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
	ck_assert_uint_eq(n_checked, 1);
	ck_assert_int_eq(checked[0].kind, DATABASE_WRITE_DELETE);
	ck_assert_str_eq(checked[0].before, BOB);
	ck_assert_uint_eq(checked[0].depth, 0);
	ck_assert_uint_eq(hooked_when_checked, 0);
	ck_assert_uint_eq(hs.found, 1);    /* the entry, read before its delete */
	ck_assert_uint_eq(hs.n_seen, 2);   /* the delete and the hook's own edit */

	n_checked = 0;
	check_refuses = true;
	memset(&hs, 0, sizeof(hs));
	op = fx_op();
	op.write_check = &check;
	struct ldap_change change = { .operation = LDAP_MOD_REPLACE };
	struct ber_view sn = fx_view("Changed");
	change.modification = (struct ldap_attribute){ fx_view("sn"), &sn, 1 };
	ck_assert_int_eq(backend_modify(fx.be, &op, fx_ndn(ALICE), &change, 1), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_INSUFFICIENT_ACCESS_RIGHTS);
	ck_assert_str_eq(op.diagnostic, "refused by the check");
	ck_assert_uint_eq(n_checked, 1);
	ck_assert_str_eq(checked[0].before, ALICE);
	ck_assert_uint_eq(count_matches("(sn=Changed)"), 0);
	indexes_verify();
}
END_TEST

/* on_commit: once per committed write, every change in order (the hook's
 * own edits too), with CSNs in commit order; nothing for a refused write. */
START_TEST(on_commit_sees_committed_changes)
{
	hs.remove_member = true;
	struct backend_op op = fx_op();
	op.write_hook = &commit_hook;
	ck_assert_int_eq(fx_add_op(&op, "uid=erin,ou=People,dc=example,dc=com", FX_LINES(
		"objectClass: inetOrgPerson", "uid: erin", "cn: Erin", "sn: E")), LDAP_SUCCESS);
	op = fx_op();
	op.write_hook = &commit_hook;
	ck_assert_int_eq(backend_delete(fx.be, &op, fx_ndn(BOB)), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
	op = fx_op();
	op.write_hook = &commit_hook;
	ck_assert_int_eq(backend_delete(fx.be, &op, fx_ndn("uid=nobody,ou=People,dc=example,dc=com")),
			 LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_NO_SUCH_OBJECT);

	ck_assert_uint_eq(n_commit_calls, 2);
	ck_assert_uint_eq(n_commits, 3);
	ck_assert_int_eq(commits[0].kind, DATABASE_WRITE_ADD);
	ck_assert_str_eq(commits[0].old_ndn, "");
	ck_assert_str_eq(commits[0].ndn, "uid=erin,ou=people,dc=example,dc=com");
	ck_assert_int_eq(commits[1].kind, DATABASE_WRITE_DELETE);
	ck_assert_str_eq(commits[1].old_ndn, "uid=bob,ou=people,dc=example,dc=com");
	ck_assert_str_eq(commits[1].ndn, "");
	ck_assert_int_eq(commits[2].kind, DATABASE_WRITE_MODIFY);   /* the hook's edit */
	ck_assert_str_eq(commits[2].ndn, "cn=admins,ou=groups,dc=example,dc=com");
	for (size_t i = 0; i < n_commits; i++) {
		ck_assert_uint_eq(strlen(commits[i].csn), CSN_LENGTH);
		ck_assert_uint_eq(strlen(commits[i].uuid), 36);
		if (i > 0)
			ck_assert_int_gt(strcmp(commits[i].csn, commits[i - 1].csn), 0);
	}
}
END_TEST

START_TEST(hook_depth_is_bounded)
{
	hs.recurse = true;
	struct backend_op op = hooked_op();
	struct ldap_change change = { .operation = LDAP_MOD_REPLACE };
	struct ber_view title = fx_view("first");
	change.modification = (struct ldap_attribute){ fx_view("title"), &title, 1 };
	ck_assert_int_ne(backend_modify(fx.be, &op, fx_ndn(DAVE), &change, 1), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_OTHER);
	ck_assert_int_eq(hs.edit_rc, LUMEN_ELIMIT);
	ck_assert_uint_eq(hs.n_seen, DATABASE_WRITE_MAX_DEPTH + 1);
	ck_assert_uint_eq(count_matches("(title=first)"), 0);
	ck_assert_uint_eq(count_matches("(description=again)"), 0);
	indexes_verify();
}
END_TEST

START_TEST(edit_that_changes_nothing_stores_nothing)
{
	hs.leave_alone = true;
	struct backend_op op = hooked_op();
	struct ldap_change change = { .operation = LDAP_MOD_REPLACE };
	struct ber_view title = fx_view("first");
	change.modification = (struct ldap_attribute){ fx_view("title"), &title, 1 };
	ck_assert_int_eq(backend_modify(fx.be, &op, fx_ndn(DAVE), &change, 1), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
	/* no second write was shown to the hook, and admins was not stamped */
	ck_assert_uint_eq(hs.n_seen, 1);
	ck_assert_uint_eq(count_matches("(modifiersName=" HOOK_MODIFIER ")"), 0);
	ck_assert_uint_eq(count_matches("(title=first)"), 1);
}
END_TEST

START_TEST(find_equal_with_and_without_an_index)
{
	/* member has an equality index in the fixture; seeAlso has none */
	struct backend_op op = fx_op();
	struct ldap_change change = { .operation = LDAP_MOD_ADD };
	struct ber_view see = fx_view(ALICE);
	change.modification = (struct ldap_attribute){ fx_view("seeAlso"), &see, 1 };
	ck_assert_int_eq(backend_modify(fx.be, &op, fx_ndn(DAVE), &change, 1), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);

	hs.find_type = "member";
	op = hooked_op();
	ck_assert_int_eq(backend_delete(fx.be, &op, fx_ndn(ALICE)), LUMEN_OK);
	ck_assert_uint_eq(hs.found, 1);
	fixture_close();
	setup();
	op = fx_op();
	ck_assert_int_eq(backend_modify(fx.be, &op, fx_ndn(DAVE), &change, 1), LUMEN_OK);
	hs.find_type = "seeAlso";
	op = hooked_op();
	ck_assert_int_eq(backend_delete(fx.be, &op, fx_ndn(ALICE)), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
	ck_assert_uint_eq(hs.found, 1);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("write_hook");
	TCase *tc = tcase_create("write_hook");
	tcase_add_checked_fixture(tc, setup, fixture_close);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, hook_sees_every_operation);
	tcase_add_test(tc, refused_operation_is_not_hooked);
	tcase_add_test(tc, hook_edits_commit_with_the_operation);
	tcase_add_test(tc, hook_refusal_undoes_everything);
	tcase_add_test(tc, write_check_decides_before_the_hook);
	tcase_add_test(tc, on_commit_sees_committed_changes);
	tcase_add_test(tc, hook_depth_is_bounded);
	tcase_add_test(tc, find_equal_with_and_without_an_index);
	tcase_add_test(tc, edit_that_changes_nothing_stores_nothing);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
