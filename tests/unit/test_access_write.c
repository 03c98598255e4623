/*
 * test_access_write.c — a write's rights decided again inside its
 * transaction (src/server/access_write.c): the check each access_write_*
 * leaves in backend_op.write_check, run as the database runs it
 * (write_hook.c: write_job_check) on a fake transaction whose entries
 * differ from what the handler decided on. Covered: ModifyDN with
 * deleteOldRDN needing write on the old RDN's types in the transaction
 * too; a parent the transaction cannot read (a storage error, returned as
 * it came so the database answers LDAP other) told apart from one that is
 * not there (decided without it); Password Modify's old password, which
 * must still be stored as the handler matched it, whatever the rules.
 *
 * The rules are the list of the one database of a bare server (holding
 * dc=example,dc=com, no global rules), so access_op_init sets the
 * operation up as the handlers do; every DN below is written normalized.
 */
#include <check.h>
#include <string.h>

#include "access_rules_fixture.h"
#include "access_write.h"
#include "config.h"
#include "entry_fixture.h"
#include "ldap_result_codes.h"
#include "lumen_error.h"
#include "server.h"

#define SUFFIX "dc=example,dc=com"
#define PEOPLE "ou=people," SUFFIX
#define GROUPS "ou=groups," SUFFIX
#define ALICE "uid=alice," PEOPLE
#define CAROL "uid=carol," PEOPLE

#define ACCESS_CHANGED "access changed before the write"
#define OLD_PASSWORD_GONE "unwilling to verify old password"

/*
 * The write's transaction as the check reads it: the entries it holds,
 * and one DN whose read fails as a storage error would. fetch is all the
 * check may use; the other operations are NULL, so a call would crash.
 */
struct database_txn {
	const struct entry *entries[3];
	size_t n_entries;
	struct ber_view unreadable_ndn;   /* fetch answers LUMEN_EIO */
};

static int txn_fetch(struct database_txn *txn, struct ber_view ndn, database_txn_entry_fn fn,
		     void *ctx)
{
	if (txn->unreadable_ndn.len > 0 && ber_view_eq(ndn, txn->unreadable_ndn))
		return LUMEN_EIO;
	for (size_t i = 0; i < txn->n_entries; i++)
		if (ber_view_eq(txn->entries[i]->ndn, ndn))
			return fn(ctx, txn->entries[i]);
	return LUMEN_ENOTFOUND;
}

static const struct database_txn_ops txn_ops = { .fetch = txn_fetch };

static struct arena arena;
static struct config cfg;
static struct config_database db_config;   /* its rules: the database's list */
static struct ber_view suffix_ndn;
static struct server_database sdb;
static struct server server;
static const bool not_abandoned;
static struct database_txn txn;
static struct entry *suffix, *people, *groups;

static void setup(void)
{
	fixture_schema_setup();
	arena_init(&arena, 0);
	cfg = (struct config){ .schema = fixture_schema };
	suffix_ndn = fixture_view(SUFFIX);
	db_config = (struct config_database){ 0 };
	sdb = (struct server_database){ .config = &db_config, .suffixes = &suffix_ndn,
					.n_suffixes = 1 };
	server = (struct server){ .config = &cfg, .databases = &sdb, .n_databases = 1 };
	suffix = fixture_entry(SUFFIX, "objectClass: organization\nobjectClass: dcObject\n"
				       "o: Example\ndc: example");
	people = fixture_entry(PEOPLE, "objectClass: organizationalUnit\nou: people");
	groups = fixture_entry(GROUPS, "objectClass: organizationalUnit\nou: groups");
	txn = (struct database_txn){ { suffix, people, groups }, 3, { NULL, 0 } };
}

static void teardown(void)
{
	entry_free(suffix);
	entry_free(people);
	entry_free(groups);
	access_rules_free(&db_config.access);
	arena_free(&arena);
	fixture_schema_teardown();
}

/* alice as the transaction holds her: inetOrgPerson plus extra lines. */
static struct entry *alice_with(const char *extra)
{
	char lines[512];
	snprintf(lines, sizeof(lines), "objectClass: inetOrgPerson\ncn: Alice Liddell\n"
		 "sn: Liddell\nuid: alice\n%s", extra);
	return fixture_entry(ALICE, lines);
}

/* The operation of requester_ndn (not the rootdn) under the loaded rules. */
static void operation_of(struct access_op *a, struct backend_op *bop, const char *requester_ndn)
{
	access_op_init(a, &server, &sdb, fixture_view(requester_ndn), false, &arena,
		       &not_abandoned);
	*bop = (struct backend_op){ .arena = &arena, .requester_ndn = fixture_view(requester_ndn) };
}

/* The check bop carries, run as the database runs it on a change whose
 * target the transaction holds as before (after: an add's new entry). */
static int run_check(struct backend_op *bop, enum database_write_kind kind,
		     const struct entry *before, const struct entry *after)
{
	ck_assert_ptr_nonnull(bop->write_check);
	struct database_write change = { .kind = kind, .before = before, .after = after };
	return bop->write_check->on_write(bop->write_check->ctx, &txn, &txn_ops, bop, &change);
}

static void assert_allowed(int rc, const struct backend_op *bop)
{
	ck_assert_int_eq(rc, LUMEN_OK);
	ck_assert_int_eq(bop->result_code, LDAP_SUCCESS);
	ck_assert_ptr_null(bop->diagnostic);
}

/* An LDAP refusal: write_hook.c answers it as it is (LUMEN_EINVAL with a
 * result code set), nothing written. */
static void assert_refused(int rc, const struct backend_op *bop, int result_code,
			   const char *diagnostic)
{
	ck_assert_int_eq(rc, LUMEN_EINVAL);
	ck_assert_int_eq(bop->result_code, result_code);
	ck_assert_ptr_nonnull(bop->diagnostic);
	ck_assert_str_eq(bop->diagnostic, diagnostic);
}

static const struct dn_rdn *rdn_of(const char *text)
{
	struct dn dn;
	ck_assert_int_eq(dn_parse(fixture_schema, text, strlen(text), &arena, &dn), LUMEN_OK);
	return &dn.rdns[0];
}

/* ------------------------------------------------ ModifyDN, deleteOldRDN */

/* alice may write uid while she is an editor (a filter= rule: the
 * decision is made again in the transaction); cn and her entry always. */
static const char rename_rules[] =
	"access to dn.base=\"" PEOPLE "\" attrs=children by users write\n"
	"access to filter=(employeeType=editor) attrs=uid by self write by * read\n"
	"access to dn.subtree=\"" PEOPLE "\" attrs=entry,cn by self write by * read\n"
	"access to * by * read";

/* uid=alice -> cn=Alice Liddell in place; old_rdn: uid=alice when
 * deleteOldRDN, else NULL. */
static int rename_alice(const struct entry *alice_in_txn, const struct dn_rdn *old_rdn,
			struct backend_op *bop)
{
	struct access_op a;
	struct access_write w;
	operation_of(&a, bop, ALICE);
	access_write_rename(&w, &a, &sdb, fixture_view(PEOPLE), rdn_of("cn=Alice Liddell"),
			    old_rdn, bop);
	ck_assert_ptr_eq(bop->write_check, &w.hook);
	return run_check(bop, DATABASE_WRITE_MODRDN, alice_in_txn, NULL);
}

/* The handler saw alice an editor; by the transaction she is not: dropping
 * her uid values is refused there, keeping them is not. */
START_TEST(rename_deleting_the_old_rdn_needs_write_on_it_in_the_txn)
{
	access_rules_load(&db_config.access, rename_rules);
	struct entry *editor = alice_with("employeeType: editor");
	struct entry *no_longer = alice_with("employeeType: reader");
	const struct dn_rdn *old_rdn = rdn_of("uid=alice");
	struct backend_op bop;

	assert_refused(rename_alice(no_longer, old_rdn, &bop), &bop,
		       LDAP_INSUFFICIENT_ACCESS_RIGHTS, ACCESS_CHANGED);
	assert_allowed(rename_alice(no_longer, NULL, &bop), &bop);
	assert_allowed(rename_alice(editor, old_rdn, &bop), &bop);
	entry_free(editor);
	entry_free(no_longer);
}
END_TEST

/* ------------------------------------------------- unreadable parents */

/* Everyone may write everything; the filter= rule (which selects no entry
 * here) makes the decision one made again in the transaction. */
static const char permissive_rules[] =
	"access to filter=(objectClass=device) by * none\n"
	"access to * by users write by * read";

enum parent_case { ADD_BELOW, DELETE_BELOW, RENAME_IN_PLACE, RENAME_TO_NEW_PARENT };

static const struct {
	enum parent_case op;
	const char *parent;    /* the parent the check reads */
} parent_cases[] = {
	{ ADD_BELOW, PEOPLE },
	{ DELETE_BELOW, PEOPLE },
	{ RENAME_IN_PLACE, PEOPLE },
	{ RENAME_TO_NEW_PARENT, PEOPLE },
	{ RENAME_TO_NEW_PARENT, GROUPS },
};

/* The write of `op` by alice, with its check run in the transaction. */
static int write_below_a_parent(enum parent_case op, struct backend_op *bop)
{
	struct access_op a;
	struct access_write w;
	struct entry *carol = fixture_entry(CAROL, "objectClass: inetOrgPerson\ncn: Carol\n"
					    "sn: C\nuid: carol");
	int rc;
	operation_of(&a, bop, ALICE);
	if (op == ADD_BELOW) {
		access_write_add(&w, &a, &sdb, carol, bop);
		rc = run_check(bop, DATABASE_WRITE_ADD, NULL, carol);
	} else if (op == DELETE_BELOW) {
		access_write_delete(&w, &a, &sdb, bop);
		rc = run_check(bop, DATABASE_WRITE_DELETE, carol, NULL);
	} else {
		access_write_rename(&w, &a, &sdb,
				    fixture_view(op == RENAME_IN_PLACE ? PEOPLE : GROUPS),
				    rdn_of("uid=carol2"), NULL, bop);
		rc = run_check(bop, DATABASE_WRITE_MODRDN, carol, NULL);
	}
	entry_free(carol);
	return rc;
}

/* A storage error reading a parent is the check's answer as it came, with
 * no LDAP result set: write_hook.c does not take it for a refusal, and the
 * database aborts the write with LDAP other (test_write_hook.c:
 * hook_depth_is_bounded). Rules that allow everything must not make it a
 * success. */
START_TEST(unreadable_parent_aborts_the_write)
{
	access_rules_load(&db_config.access, permissive_rules);
	txn.unreadable_ndn = fixture_view(parent_cases[_i].parent);
	struct backend_op bop;
	int rc = write_below_a_parent(parent_cases[_i].op, &bop);
	ck_assert_int_eq(rc, LUMEN_EIO);
	ck_assert_int_eq(bop.result_code, LDAP_SUCCESS);
	ck_assert_ptr_null(bop.diagnostic);
}
END_TEST

/* A parent that is not there is no error: the rules decide without it. */
START_TEST(absent_parent_is_decided_without_it)
{
	access_rules_load(&db_config.access, permissive_rules);
	txn.n_entries = 0;
	struct backend_op bop;
	assert_allowed(write_below_a_parent(parent_cases[_i].op, &bop), &bop);
}
END_TEST

/* ------------------------------------------ Password Modify, old password */

/* alice may write her password while she is an editor (filter=). */
static const char password_rules[] =
	"access to filter=(employeeType=editor) attrs=userPassword by self write\n"
	"access to attrs=userPassword by * none\n"
	"access to * by self write by * read";

/* Rules that read no entry: only the old password makes a check. */
static const char dn_only_rules[] = "access to * by self write by * read";

static struct ber_view new_password = { (const uint8_t *)"new", 3 };
static const struct ldap_change store_new_password = {
	.operation = LDAP_MOD_REPLACE,
	.modification = { { (const uint8_t *)"userPassword", 12 }, &new_password, 1 },
};

/* alice's Password Modify storing "new" (a and w: the handler's); verified:
 * the handler's copy of the stored value her old password matched (NULL:
 * none given). */
static void change_password(struct access_op *a, struct access_write *w, struct backend_op *bop,
			    const char *verified)
{
	struct ber_view copy = { NULL, 0 };
	if (verified != NULL)
		copy = (struct ber_view){ arena_memdup(&arena, verified, strlen(verified) + 1),
					  strlen(verified) };
	operation_of(a, bop, ALICE);
	access_write_password(w, a, &sdb, &store_new_password,
			      schema_attribute_type(fixture_schema, "userPassword", 12), copy, bop);
}

static int password_check(const struct entry *alice_in_txn, const char *verified,
			  struct backend_op *bop)
{
	struct access_op a;
	struct access_write w;
	change_password(&a, &w, bop, verified);
	ck_assert_ptr_eq(bop->write_check, &w.hook);
	return run_check(bop, DATABASE_WRITE_MODIFY, alice_in_txn, NULL);
}

/* Changed in between: the old password no longer proves anything, even
 * where the rules would not make the decision again. */
START_TEST(old_password_changed_before_the_write_is_refused)
{
	access_rules_load(&db_config.access, dn_only_rules);
	struct entry *changed = alice_with("userPassword: changed");
	struct backend_op bop;
	assert_refused(password_check(changed, "secret", &bop), &bop,
		       LDAP_UNWILLING_TO_PERFORM, OLD_PASSWORD_GONE);
	/* compared byte for byte: a prefix or another case is another value */
	assert_refused(password_check(changed, "change", &bop), &bop,
		       LDAP_UNWILLING_TO_PERFORM, OLD_PASSWORD_GONE);
	assert_refused(password_check(changed, "Changed", &bop), &bop,
		       LDAP_UNWILLING_TO_PERFORM, OLD_PASSWORD_GONE);
	entry_free(changed);
}
END_TEST

/* Still among the stored values (the handler's copy, not the entry's own
 * memory): the write goes on. An empty copy is an old password given
 * (op_passwd.c copies one byte more so that its ptr is not NULL), and no
 * empty value is stored. */
START_TEST(old_password_still_stored_is_allowed)
{
	access_rules_load(&db_config.access, dn_only_rules);
	struct entry *two = alice_with("userPassword: other\nuserPassword: secret");
	struct backend_op bop;
	assert_allowed(password_check(two, "secret", &bop), &bop);
	assert_refused(password_check(two, "", &bop), &bop, LDAP_UNWILLING_TO_PERFORM,
		       OLD_PASSWORD_GONE);
	entry_free(two);
}
END_TEST

/* Where the rules read entries the write right is decided again as well;
 * the old password is checked first. */
START_TEST(old_password_and_write_right_both_decided_again)
{
	access_rules_load(&db_config.access, password_rules);
	struct entry *editor = alice_with("employeeType: editor\nuserPassword: secret");
	struct entry *reader = alice_with("employeeType: reader\nuserPassword: secret");
	struct entry *reader_changed = alice_with("employeeType: reader\nuserPassword: changed");
	struct backend_op bop;
	assert_allowed(password_check(editor, "secret", &bop), &bop);
	assert_refused(password_check(reader, "secret", &bop), &bop,
		       LDAP_INSUFFICIENT_ACCESS_RIGHTS, ACCESS_CHANGED);
	assert_refused(password_check(reader_changed, "secret", &bop), &bop,
		       LDAP_UNWILLING_TO_PERFORM, OLD_PASSWORD_GONE);
	entry_free(editor);
	entry_free(reader);
	entry_free(reader_changed);
}
END_TEST

/* No old password and rules that read no entry: nothing to decide again. */
START_TEST(no_old_password_needs_no_check)
{
	access_rules_load(&db_config.access, dn_only_rules);
	struct access_op a;
	struct access_write w;
	struct backend_op bop;
	change_password(&a, &w, &bop, NULL);
	ck_assert_ptr_null(bop.write_check);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("access_write");
	TCase *tc = tcase_create("access_write");
	size_t n_parent_cases = sizeof(parent_cases) / sizeof(parent_cases[0]);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, rename_deleting_the_old_rdn_needs_write_on_it_in_the_txn);
	tcase_add_loop_test(tc, unreadable_parent_aborts_the_write, 0, (int)n_parent_cases);
	tcase_add_loop_test(tc, absent_parent_is_decided_without_it, 0, (int)n_parent_cases);
	tcase_add_test(tc, old_password_changed_before_the_write_is_refused);
	tcase_add_test(tc, old_password_still_stored_is_allowed);
	tcase_add_test(tc, old_password_and_write_right_both_decided_again);
	tcase_add_test(tc, no_old_password_needs_no_check);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
