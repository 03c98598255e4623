/*
 * test_backend_write.c — back-mdb writes: add, delete, modify, modrdn and
 * their result codes, operational attributes, pre/post-read, atomicity,
 * subtree renames, index consistency (backend_check_indexes), concurrent
 * searches during writes, a full map, and the bulk-load path (prepare,
 * store, sorted index runs) producing a database lumend can serve.
 */
#include <check.h>
#include <pthread.h>
#include <unistd.h>

#include "backend_fixture.h"
#include "id2entry.h"
#include "idl.h"
#include "index_table.h"
#include "mdb_store.h"

#define BASE "dc=example,dc=com"
#define PEOPLE "ou=People,dc=example,dc=com"
#define ALICE "uid=alice,ou=People,dc=example,dc=com"

static uint64_t index_problems(void)
{
	uint64_t problems = 99;
	ck_assert_int_eq(backend_check_indexes(fx.be, NULL, NULL, &problems), LUMEN_OK);
	return problems;
}

/* The values of one attribute of dn, joined by '|', into buf. */
struct fetch_ctx {
	const char *attribute;
	char buf[512];
};

static int fetch_values(void *ctx, const struct entry *e, const struct backend_entry_info *info)
{
	struct fetch_ctx *f = ctx;
	(void)info;
	f->buf[0] = '\0';
	for (size_t i = 0; i < e->n_attributes; i++) {
		const struct entry_attribute *a = &e->attributes[i];
		if (!ber_view_eq_str_nocase(a->name, f->attribute))
			continue;
		for (size_t j = 0; j < a->n_values; j++) {
			if (f->buf[0] != '\0')
				strcat(f->buf, "|");
			strncat(f->buf, (const char *)a->values[j].value.ptr, a->values[j].value.len);
		}
	}
	return 0;
}

static const char *fx_values(const char *dn, const char *attribute, struct fetch_ctx *f)
{
	struct backend_op op = fx_op();
	f->attribute = attribute;
	f->buf[0] = '\0';
	ck_assert_int_eq(backend_fetch(fx.be, &op, fx_ndn(dn), fetch_values, f), 0);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
	return f->buf;
}

static size_t fx_count(const char *filter)
{
	struct fx_results r = { 0 };
	ck_assert_int_eq(fx_search(BASE, LDAP_SCOPE_SUBTREE, filter, &r), LDAP_SUCCESS);
	size_t n = r.n;
	fx_results_free(&r);
	return n;
}

/* ------------------------------------------------------------------ add */

struct add_case {
	const char *name;
	const char *dn;
	const char *const *lines;
	int code;
	bool client;      /* not the tools path */
};

static const struct add_case add_cases[] = {
	{ "exists", ALICE, FX_LINES("objectClass: inetOrgPerson", "uid: alice", "cn: a", "sn: b"),
	  LDAP_ENTRY_ALREADY_EXISTS, true },
	{ "no parent", "uid=x,ou=Nowhere,dc=example,dc=com",
	  FX_LINES("objectClass: account", "uid: x"), LDAP_NO_SUCH_OBJECT, true },
	{ "missing must", "cn=nosn,ou=People,dc=example,dc=com",
	  FX_LINES("objectClass: person", "cn: nosn"), LDAP_OBJECT_CLASS_VIOLATION, true },
	{ "no user modification", "cn=nm,ou=People,dc=example,dc=com",
	  FX_LINES("objectClass: person", "cn: nm", "sn: x", "createTimestamp: 20200101000000Z"),
	  LDAP_CONSTRAINT_VIOLATION, true },
	{ "undefined type", "cn=ut,ou=People,dc=example,dc=com",
	  FX_LINES("objectClass: person", "cn: ut", "sn: x", "fooBar: 1"),
	  LDAP_UNDEFINED_ATTRIBUTE_TYPE, true },
	/* RFC 4511 §4.7: the server supplies the RDN's values (as slapd) */
	{ "rdn value missing", "cn=rv,ou=People,dc=example,dc=com",
	  FX_LINES("objectClass: person", "cn: other", "sn: x"), LDAP_SUCCESS, true },
	{ "rdn attribute not allowed", "uid=rn,ou=People,dc=example,dc=com",
	  FX_LINES("objectClass: person", "cn: rn", "sn: x"), LDAP_OBJECT_CLASS_VIOLATION, true },
	{ "invalid syntax", "uid=is,ou=People,dc=example,dc=com",
	  FX_LINES("objectClass: posixAccount", "objectClass: account", "uid: is", "cn: is",
		   "uidNumber: abc", "gidNumber: 1", "homeDirectory: /x"),
	  LDAP_INVALID_ATTRIBUTE_SYNTAX, true },
	{ "outside database", "dc=other,dc=org", FX_LINES("objectClass: domain", "dc: other"),
	  LDAP_UNWILLING_TO_PERFORM, true },
	{ "tools keep supplied", "cn=tk,ou=People,dc=example,dc=com",
	  FX_LINES("objectClass: person", "cn: tk", "sn: x", "createTimestamp: 20200101000000Z"),
	  LDAP_SUCCESS, false },
};

START_TEST(add_table)
{
	const struct add_case *c = &add_cases[_i];
	struct backend_op op = fx_op();
	op.from_tool = !c->client;
	int code = fx_add_op(&op, c->dn, c->lines);
	ck_assert_msg(code == c->code, "%s: %d (%s), expected %d", c->name, code,
		      op.diagnostic ? op.diagnostic : "", c->code);
	if (c->code == LDAP_NO_SUCH_OBJECT)
		ck_assert_uint_eq(op.matched_dn.len, strlen(BASE));
	if (!c->client) {
		struct fetch_ctx f;
		ck_assert_str_eq(fx_values(c->dn, "createTimestamp", &f), "20200101000000Z");
		ck_assert_uint_eq(strlen(fx_values(c->dn, "entryUUID", &f)), 36);
	}
	ck_assert_uint_eq(index_problems(), 0);
}
END_TEST

/* The supplied RDN value is stored and indexed like a given one. */
START_TEST(add_supplies_rdn_value)
{
	struct fetch_ctx f;
	ck_assert_int_eq(fx_add("cn=Rdn Only,ou=People,dc=example,dc=com",
				FX_LINES("objectClass: person", "sn: x")), LDAP_SUCCESS);
	ck_assert_str_eq(fx_values("cn=Rdn Only,ou=People,dc=example,dc=com", "cn", &f),
			 "Rdn Only");
	ck_assert_uint_eq(fx_count("(cn=rdn only)"), 1);
	/* another spelling of the value counts as present: no second value */
	ck_assert_int_eq(fx_add("cn=Two  Spaces,ou=People,dc=example,dc=com",
				FX_LINES("objectClass: person", "cn: two spaces", "sn: x")),
			 LDAP_SUCCESS);
	ck_assert_str_eq(fx_values("cn=Two Spaces,ou=People,dc=example,dc=com", "cn", &f),
			 "two spaces");
	ck_assert_uint_eq(index_problems(), 0);
}
END_TEST

START_TEST(add_operational_and_post_read)
{
	struct fetch_ctx f;
	struct backend_op op = fx_op();
	op.is_root = false;
	op.requester_ndn = fx_view("uid=alice,ou=people,dc=example,dc=com");
	op.want_post_read = true;
	ck_assert_int_eq(fx_add_op(&op, "cn=New One,ou=People,dc=example,dc=com",
				   FX_LINES("objectClass: inetOrgPerson", "cn: New One", "sn: One")),
			 LDAP_SUCCESS);
	ck_assert_ptr_nonnull(op.post_read);
	ck_assert_ptr_nonnull(entry_find_type(op.post_read,
		schema_attribute_type(fx.schema, "entryUUID", 9)));
	entry_free(op.post_read);

	const char *dn = "cn=New One,ou=People,dc=example,dc=com";
	const char *uuid = fx_values(dn, "entryUUID", &f);
	ck_assert_uint_eq(strlen(uuid), 36);
	ck_assert_int_eq(uuid[14], '4');
	const char *csn = fx_values(dn, "entryCSN", &f);
	ck_assert_uint_eq(strlen(csn), strlen("20240101000000.000000Z#000000#000#000000"));
	ck_assert(strstr(csn, "Z#") != NULL);
	ck_assert_uint_eq(strlen(fx_values(dn, "createTimestamp", &f)), 15);
	ck_assert_str_eq(fx_values(dn, "creatorsName", &f), "uid=alice,ou=people,dc=example,dc=com");
	ck_assert_str_eq(fx_values(dn, "structuralObjectClass", &f), "inetOrgPerson");
	ck_assert_uint_eq(fx_count("(cn=new one)"), 1);
}
END_TEST

START_TEST(add_suffix_only_without_parent)
{
	/* a fresh database: only the suffix entry may be parentless */
	fixture_close();
	fixture_open_settings((size_t)16 << 20, false);
	ck_assert_int_eq(fx_add(PEOPLE, FX_LINES("objectClass: organizationalUnit", "ou: People")),
			 LDAP_NO_SUCH_OBJECT);
	ck_assert_int_eq(fx_add(BASE, FX_LINES("objectClass: domain", "dc: example")),
			 LDAP_SUCCESS);
	ck_assert_int_eq(fx_add(PEOPLE, FX_LINES("objectClass: organizationalUnit", "ou: People")),
			 LDAP_SUCCESS);
}
END_TEST

/* --------------------------------------------------------------- delete */

START_TEST(delete_cases)
{
	struct backend_op op = fx_op();
	ck_assert_int_eq(backend_delete(fx.be, &op, fx_ndn(PEOPLE)), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_NOT_ALLOWED_ON_NON_LEAF);

	op = fx_op();
	ck_assert_int_eq(backend_delete(fx.be, &op, fx_ndn("uid=zed," PEOPLE)), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_NO_SUCH_OBJECT);
	ck_assert_uint_eq(op.matched_dn.len, strlen(PEOPLE));

	op = fx_op();
	op.assertion = fx_filter("(uid=bob)");
	ck_assert_int_eq(backend_delete(fx.be, &op, fx_ndn(ALICE)), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_ASSERTION_FAILED);

	op = fx_op();
	op.want_pre_read = true;
	ck_assert_int_eq(backend_delete(fx.be, &op, fx_ndn(ALICE)), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
	ck_assert_ptr_nonnull(op.pre_read);
	ck_assert(ber_view_eq_str(op.pre_read->dn, ALICE));
	entry_free(op.pre_read);
	ck_assert_uint_eq(fx_count("(uid=alice)"), 0);
	ck_assert_uint_eq(fx_count("(cn=ali*)"), 0);
	ck_assert_uint_eq(fx_count("(objectClass=*)"), FIXTURE_ENTRIES - 1);
	ck_assert_uint_eq(index_problems(), 0);
}
END_TEST

/* --------------------------------------------------------------- modify */

static struct ldap_change change(enum ldap_modify_operation op, const char *type,
				 const char *v1, const char *v2)
{
	struct ldap_change c = { .operation = op };
	c.modification.type = fx_view(type);
	c.modification.values = arena_alloc(&fx.arena, 2 * sizeof(struct ber_view));
	if (v1 != NULL)
		c.modification.values[c.modification.n_values++] = fx_view(v1);
	if (v2 != NULL)
		c.modification.values[c.modification.n_values++] = fx_view(v2);
	return c;
}

static int modify(struct backend_op *op, const char *dn, struct ldap_change *changes, size_t n)
{
	ck_assert_int_eq(backend_modify(fx.be, op, fx_ndn(dn), changes, n), LUMEN_OK);
	return op->result_code;
}

struct modify_case {
	const char *name;
	enum ldap_modify_operation op;
	const char *type, *v1, *v2;
	int code;
};

static const struct modify_case modify_cases[] = {
	{ "add value", LDAP_MOD_ADD, "mail", "a2@example.com", NULL, LDAP_SUCCESS },
	{ "add existing", LDAP_MOD_ADD, "mail", "ALICE@example.com", NULL,
	  LDAP_ATTRIBUTE_OR_VALUE_EXISTS },
	{ "delete missing value", LDAP_MOD_DELETE, "mail", "zz@example.com", NULL,
	  LDAP_NO_SUCH_ATTRIBUTE },
	{ "delete missing attribute", LDAP_MOD_DELETE, "title", NULL, NULL,
	  LDAP_NO_SUCH_ATTRIBUTE },
	{ "delete rdn value", LDAP_MOD_DELETE, "uid", "alice", NULL, LDAP_NOT_ALLOWED_ON_RDN },
	{ "replace rdn", LDAP_MOD_REPLACE, "uid", "alice2", NULL, LDAP_NOT_ALLOWED_ON_RDN },
	{ "delete must", LDAP_MOD_DELETE, "sn", NULL, NULL, LDAP_OBJECT_CLASS_VIOLATION },
	{ "not allowed", LDAP_MOD_ADD, "uidNumber", "5", NULL, LDAP_OBJECT_CLASS_VIOLATION },
	{ "undefined", LDAP_MOD_ADD, "fooBar", "5", NULL, LDAP_UNDEFINED_ATTRIBUTE_TYPE },
	{ "no user mod", LDAP_MOD_REPLACE, "entryUUID", "x", NULL, LDAP_CONSTRAINT_VIOLATION },
	{ "structural change", LDAP_MOD_REPLACE, "objectClass", "account", NULL,
	  LDAP_OBJECT_CLASS_MODS_PROHIBITED },
	{ "increment non-integer", LDAP_MOD_INCREMENT, "sn", "1", NULL,
	  LDAP_CONSTRAINT_VIOLATION },
	{ "replace", LDAP_MOD_REPLACE, "sn", "Smythe", "Schmidt", LDAP_SUCCESS },
	{ "replace delete", LDAP_MOD_REPLACE, "description", NULL, NULL, LDAP_SUCCESS },
};

START_TEST(modify_table)
{
	const struct modify_case *c = &modify_cases[_i];
	struct backend_op op = fx_op();
	struct ldap_change ch = change(c->op, c->type, c->v1, c->v2);
	int code = modify(&op, ALICE, &ch, 1);
	ck_assert_msg(code == c->code, "%s: %d (%s), expected %d", c->name, code,
		      op.diagnostic ? op.diagnostic : "", c->code);
	ck_assert_uint_eq(index_problems(), 0);
}
END_TEST

START_TEST(modify_no_such_object)
{
	struct backend_op op = fx_op();
	struct ldap_change ch = change(LDAP_MOD_ADD, "mail", "x@example.com", NULL);
	ck_assert_int_eq(modify(&op, "uid=nope,ou=Engineering," PEOPLE, &ch, 1),
			 LDAP_NO_SUCH_OBJECT);
	ck_assert(ber_view_eq_str(op.matched_dn, "ou=Engineering," PEOPLE));
}
END_TEST

/* The second change fails: neither the entry nor its index changes. */
START_TEST(modify_atomic)
{
	struct fetch_ctx f;
	char before_ts[64];
	strcpy(before_ts, fx_values(ALICE, "modifyTimestamp", &f));
	struct backend_op op = fx_op();
	struct ldap_change ch[2] = {
		change(LDAP_MOD_REPLACE, "sn", "Changed", NULL),
		change(LDAP_MOD_DELETE, "mail", "nobody@example.com", NULL),
	};
	ch[1] = change(LDAP_MOD_DELETE, "mail", "nobody@example.com", NULL);
	ck_assert_int_eq(modify(&op, ALICE, ch, 2), LDAP_NO_SUCH_ATTRIBUTE);
	ck_assert_str_eq(fx_values(ALICE, "sn", &f), "Smith");
	ck_assert_uint_eq(fx_count("(sn=changed)"), 0);
	ck_assert_uint_eq(fx_count("(sn=smith)"), 2);
	ck_assert_str_eq(fx_values(ALICE, "modifyTimestamp", &f), before_ts);
	ck_assert_uint_eq(index_problems(), 0);
}
END_TEST

START_TEST(modify_success_updates_everything)
{
	struct fetch_ctx f;
	char csn[64];
	strcpy(csn, fx_values(ALICE, "entryCSN", &f));
	struct backend_op op = fx_op();
	op.requester_ndn = fx_view("uid=bob,ou=people,dc=example,dc=com");
	op.want_pre_read = op.want_post_read = true;
	struct ldap_change ch[3] = {
		change(LDAP_MOD_REPLACE, "sn", "Changed", NULL),
		change(LDAP_MOD_ADD, "cn", "Alicia", NULL),
		change(LDAP_MOD_DELETE, "cn", "Ali", NULL),
	};
	ck_assert_int_eq(modify(&op, ALICE, ch, 3), LDAP_SUCCESS);
	ck_assert_ptr_nonnull(op.pre_read);
	ck_assert_ptr_nonnull(op.post_read);
	entry_free(op.pre_read);
	entry_free(op.post_read);
	ck_assert_str_eq(fx_values(ALICE, "sn", &f), "Changed");
	ck_assert_str_eq(fx_values(ALICE, "cn", &f), "Alice Smith|Alicia");
	ck_assert_str_eq(fx_values(ALICE, "modifiersName", &f), "uid=bob,ou=people,dc=example,dc=com");
	ck_assert_str_ne(fx_values(ALICE, "entryCSN", &f), csn);
	ck_assert_uint_eq(fx_count("(sn=changed)"), 1);
	ck_assert_uint_eq(fx_count("(sn=smith)"), 1);
	ck_assert_uint_eq(fx_count("(cn=ali)"), 0);
	ck_assert_uint_eq(fx_count("(cn=alicia)"), 1);
	ck_assert_uint_eq(fx_count("(cn=*lici*)"), 1);
	ck_assert_uint_eq(index_problems(), 0);
}
END_TEST

START_TEST(modify_increment)
{
	struct fetch_ctx f;
	const char *carol = "uid=carol,ou=Engineering," PEOPLE;
	struct backend_op op = fx_op();
	struct ldap_change ch = change(LDAP_MOD_INCREMENT, "uidNumber", "5", NULL);
	ck_assert_int_eq(modify(&op, carol, &ch, 1), LDAP_SUCCESS);
	ck_assert_str_eq(fx_values(carol, "uidNumber", &f), "1006");
	ck_assert_uint_eq(fx_count("(uidNumber=1006)"), 1);
	ck_assert_uint_eq(fx_count("(uidNumber=1001)"), 0);
	ck_assert_uint_eq(index_problems(), 0);
}
END_TEST

/* --------------------------------------------------------------- modrdn */

static int modrdn(struct backend_op *op, const char *dn, const char *new_rdn, bool delete_old,
		  const char *superior)
{
	struct ber_view sup = superior ? fx_ndn(superior) : (struct ber_view){ NULL, 0 };
	ck_assert_int_eq(backend_modrdn(fx.be, op, fx_ndn(dn), fx_view(new_rdn), delete_old,
					superior != NULL, sup), LUMEN_OK);
	return op->result_code;
}

struct modrdn_case {
	const char *name;
	const char *dn, *new_rdn, *superior;
	bool delete_old;
	int code;
};

static const struct modrdn_case modrdn_cases[] = {
	{ "target exists", ALICE, "uid=bob", NULL, true, LDAP_ENTRY_ALREADY_EXISTS },
	{ "missing entry", "uid=nope," PEOPLE, "uid=x", NULL, true, LDAP_NO_SUCH_OBJECT },
	{ "missing superior", ALICE, "uid=alice", "ou=Nowhere," BASE, false, LDAP_NO_SUCH_OBJECT },
	{ "below itself", PEOPLE, "ou=P2", "ou=Engineering," PEOPLE, false,
	  LDAP_UNWILLING_TO_PERFORM },
	{ "onto itself", PEOPLE, "ou=P2", PEOPLE, false, LDAP_UNWILLING_TO_PERFORM },
	{ "suffix", BASE, "dc=other", NULL, true, LDAP_UNWILLING_TO_PERFORM },
	{ "bad rdn", ALICE, "uid=a,ou=b", NULL, true, LDAP_INVALID_DN_SYNTAX },
	{ "garbage rdn", ALICE, "uid", NULL, true, LDAP_INVALID_DN_SYNTAX },
	{ "outside database", ALICE, "uid=alice", "dc=other,dc=org", false,
	  LDAP_AFFECTS_MULTIPLE_DSAS },
	{ "attribute not allowed", ALICE, "uidNumber=5", NULL, false,
	  LDAP_OBJECT_CLASS_VIOLATION },
	{ "rename leaf", ALICE, "uid=alice2", NULL, true, LDAP_SUCCESS },
	{ "move leaf", ALICE, "uid=alice", "ou=Groups," BASE, false, LDAP_SUCCESS },
};

START_TEST(modrdn_table)
{
	const struct modrdn_case *c = &modrdn_cases[_i];
	struct backend_op op = fx_op();
	int code = modrdn(&op, c->dn, c->new_rdn, c->delete_old, c->superior);
	ck_assert_msg(code == c->code, "%s: %d (%s), expected %d", c->name, code,
		      op.diagnostic ? op.diagnostic : "", c->code);
	ck_assert_uint_eq(index_problems(), 0);
	ck_assert_uint_eq(fx_count("(objectClass=*)"), FIXTURE_ENTRIES);
}
END_TEST

START_TEST(modrdn_values)
{
	struct fetch_ctx f;
	struct backend_op op = fx_op();
	/* keep the old RDN value */
	ck_assert_int_eq(modrdn(&op, ALICE, "uid=alicia", false, NULL), LDAP_SUCCESS);
	ck_assert_str_eq(fx_values("uid=alicia," PEOPLE, "uid", &f), "alice|alicia");
	ck_assert_uint_eq(fx_count("(uid=alice)"), 1);
	/* drop it */
	op = fx_op();
	ck_assert_int_eq(modrdn(&op, "uid=alicia," PEOPLE, "uid=al", true, NULL), LDAP_SUCCESS);
	/* only the old RDN's value goes (RFC 4511 4.9): alice was not in it */
	ck_assert_str_eq(fx_values("uid=al," PEOPLE, "uid", &f), "alice|al");
	ck_assert_uint_eq(fx_count("(uid=alice)"), 1);
	ck_assert_uint_eq(fx_count("(uid=alicia)"), 0);
	ck_assert_uint_eq(fx_count("(uid=al)"), 1);
	/* multi-valued RDN keeps both values */
	op = fx_op();
	ck_assert_int_eq(modrdn(&op, "uid=al," PEOPLE, "uid=al+cn=Ali", true, NULL), LDAP_SUCCESS);
	struct fx_results r = { 0 };
	ck_assert_int_eq(fx_search("cn=ali+uid=al," PEOPLE, LDAP_SCOPE_BASE, NULL, &r),
			 LDAP_SUCCESS);
	ck_assert_uint_eq(r.n, 1);
	fx_results_free(&r);
	ck_assert_uint_eq(index_problems(), 0);
}
END_TEST

/* Rename and move a subtree: descendants come back with their new DNs. */
START_TEST(modrdn_subtree)
{
	struct fx_results r = { 0 };
	/* warm the entry cache with the old DNs */
	ck_assert_int_eq(fx_search(PEOPLE, LDAP_SCOPE_SUBTREE, NULL, &r), LDAP_SUCCESS);
	ck_assert_uint_eq(r.n, 8);
	fx_results_free(&r);

	struct backend_op op = fx_op();
	ck_assert_int_eq(modrdn(&op, PEOPLE, "ou=Staff", true, NULL), LDAP_SUCCESS);
	ck_assert_int_eq(fx_search("ou=Staff," BASE, LDAP_SCOPE_SUBTREE, NULL, &r), LDAP_SUCCESS);
	ck_assert_uint_eq(r.n, 8);
	for (size_t i = 0; i < r.n; i++)
		ck_assert_msg(strstr(r.dns[i], "ou=Staff,dc=example,dc=com") != NULL, "stale %s",
			      r.dns[i]);
	ck_assert(fx_results_has(&r, "uid=carol,ou=Engineering,ou=Staff,dc=example,dc=com"));
	fx_results_free(&r);
	ck_assert_int_eq(fx_search(PEOPLE, LDAP_SCOPE_SUBTREE, NULL, &r), LDAP_NO_SUCH_OBJECT);
	/* twice more: the copies re-derived after the rename, then the copies
	 * confirmed current (no dn2id walk) still carry the new DNs */
	for (int round = 0; round < 2; round++) {
		ck_assert_int_eq(fx_search(BASE, LDAP_SCOPE_SUBTREE, "(uid=carol)", &r),
				 LDAP_SUCCESS);
		ck_assert_uint_eq(r.n, 1);
		ck_assert_str_eq(r.dns[0], "uid=carol,ou=Engineering,ou=Staff,dc=example,dc=com");
		fx_results_free(&r);
	}

	/* move Engineering below Groups; search by an index finds the new DN */
	op = fx_op();
	ck_assert_int_eq(modrdn(&op, "ou=Engineering,ou=Staff," BASE, "ou=Engineering", false,
				"ou=Groups," BASE), LDAP_SUCCESS);
	ck_assert_int_eq(fx_search(BASE, LDAP_SCOPE_SUBTREE, "(uid=carol)", &r), LDAP_SUCCESS);
	ck_assert_uint_eq(r.n, 1);
	ck_assert_str_eq(r.dns[0], "uid=carol,ou=Engineering,ou=Groups,dc=example,dc=com");
	fx_results_free(&r);
	ck_assert_int_eq(fx_search("ou=Groups," BASE, LDAP_SCOPE_SUBTREE, NULL, &r), LDAP_SUCCESS);
	ck_assert_uint_eq(r.n, 5);
	fx_results_free(&r);

	/* a modify of a moved descendant stores the new DN */
	op = fx_op();
	struct ldap_change ch = change(LDAP_MOD_REPLACE, "sn", "Jonas", NULL);
	ck_assert_int_eq(modify(&op, "uid=carol,ou=Engineering,ou=Groups," BASE, &ch, 1),
			 LDAP_SUCCESS);
	ck_assert_uint_eq(index_problems(), 0);
}
END_TEST

/*
 * A database remembers whether any entry with descendants was renamed:
 * until then an entry read from the map carries its current DN and needs
 * no dn2id walk; from then on (also after a restart) every read corrects it.
 */
START_TEST(moved_names_marker)
{
	struct fx_results r = { 0 };
	struct backend_op op = fx_op();

	ck_assert_int_eq(modrdn(&op, "uid=dave,ou=Engineering," PEOPLE, "uid=david", true, NULL),
			 LDAP_SUCCESS);
	op = fx_op();
	ck_assert_int_eq(modrdn(&op, PEOPLE, "ou=Staff", true, NULL), LDAP_SUCCESS);

	/* reopened without an entry cache: every entry comes from the map */
	fixture_reopen(fx.schema, BASE, BACKEND_CACHE_OFF);
	ck_assert_int_eq(fx_search(BASE, LDAP_SCOPE_SUBTREE, "(uid=carol)", &r), LDAP_SUCCESS);
	ck_assert_uint_eq(r.n, 1);
	ck_assert_str_eq(r.dns[0], "uid=carol,ou=Engineering,ou=Staff,dc=example,dc=com");
	fx_results_free(&r);
	ck_assert_int_eq(fx_search(BASE, LDAP_SCOPE_SUBTREE, "(uid=david)", &r), LDAP_SUCCESS);
	ck_assert_uint_eq(r.n, 1);
	ck_assert_str_eq(r.dns[0], "uid=david,ou=Engineering,ou=Staff,dc=example,dc=com");
	fx_results_free(&r);
}
END_TEST

/* ------------------------------------------------------ index checker */

/* The first problems a check reported, and how many calls there were. */
struct problem_log {
	char text[8][384];
	int n;
};

static void log_problem(void *ctx, const char *problem)
{
	struct problem_log *log = ctx;
	if (log->n < 8)
		snprintf(log->text[log->n], sizeof(log->text[0]), "%s", problem);
	log->n++;
}

static bool logged(const struct problem_log *log, const char *needle)
{
	for (int i = 0; i < log->n && i < 8; i++)
		if (strstr(log->text[i], needle) != NULL)
			return true;
	return false;
}

/*
 * Checks once in one round and once with a round per entry (a memory
 * bound of one byte): every ID window must reach the same verdict.
 * Returns the problem count; the first run's reports go to log.
 */
static uint64_t checked_problems(struct problem_log *log)
{
	uint64_t one = 0, many = 0;
	struct backend_index_pass pass = { .memory_limit = 1 };

	memset(log, 0, sizeof(*log));
	ck_assert_int_eq(backend_check_indexes(fx.be, log_problem, log, &one), LUMEN_OK);
	ck_assert_int_eq(backend_check_indexes_with(fx.be, &pass, NULL, NULL, &many), LUMEN_OK);
	ck_assert_uint_gt(pass.rounds, 1);
	ck_assert_uint_eq(pass.entries, FIXTURE_ENTRIES);
	ck_assert_uint_eq(one, many);
	ck_assert_uint_eq(log->n, one);
	return one;
}

/* Reopens fx.be on fx.dir with the fixture's indexes (plus `extra` when given). */
static void reopen_backend(bool tool_mode, const struct backend_index_spec *extra)
{
	char err[256] = "";
	const char *suffixes[] = { BASE };
	size_t n = sizeof(fixture_indexes) / sizeof(fixture_indexes[0]);
	struct backend_index_spec specs[16];
	memcpy(specs, fixture_indexes, sizeof(fixture_indexes));
	if (extra != NULL)
		specs[n++] = *extra;
	struct backend_settings st = {
		.suffixes = suffixes, .n_suffixes = 1, .directory = fx.dir, .dbnosync = true,
		.tool_mode = tool_mode, .indexes = specs, .n_indexes = n,
	};
	fixture_close_database();
	ck_assert_msg(fixture_open_database(&st, err, sizeof(err)) == LUMEN_OK, "%s",
		      err);
}

/*
 * A modify derives a table's keys again only when the attributes feeding
 * it changed (entry_store.c): each kind of change still leaves every table
 * exact. `name` is indexed too, fed by its subtypes cn and sn.
 */
START_TEST(modify_updates_only_the_tables_it_touches)
{
	const struct backend_index_spec name = { "name",
						 BACKEND_INDEX_EQUALITY | BACKEND_INDEX_SUBSTRING };
	struct backend_op op;
	const char *names[] = { "2.5.4.41" };   /* name's OID */
	struct fetch_ctx f;
	reopen_backend(true, &name);   /* a writable open creates the table */
	ck_assert_int_eq(backend_reindex(fx.be, names, 1, NULL), LUMEN_OK);
	reopen_backend(false, &name);
	ck_assert_uint_eq(index_problems(), 0);
	ck_assert_uint_eq(fx_count("(name=alicia)"), 0);
	ck_assert_uint_eq(fx_count("(name=ali)"), 1);

	op = fx_op();   /* no indexed attribute */
	struct ldap_change description = change(LDAP_MOD_REPLACE, "description", "new", NULL);
	ck_assert_int_eq(modify(&op, ALICE, &description, 1), LDAP_SUCCESS);
	ck_assert_uint_eq(index_problems(), 0);

	op = fx_op();   /* a subtype of the indexed type */
	struct ldap_change cn = change(LDAP_MOD_ADD, "cn", "Alicia", NULL);
	ck_assert_int_eq(modify(&op, ALICE, &cn, 1), LDAP_SUCCESS);
	ck_assert_uint_eq(fx_count("(name=alicia)"), 1);
	ck_assert_uint_eq(fx_count("(name=*lici*)"), 1);
	ck_assert_uint_eq(index_problems(), 0);

	op = fx_op();   /* other bytes, the same keys */
	struct ldap_change sn = change(LDAP_MOD_REPLACE, "sn", "SMITH", NULL);
	ck_assert_int_eq(modify(&op, ALICE, &sn, 1), LDAP_SUCCESS);
	ck_assert_str_eq(fx_values(ALICE, "sn", &f), "SMITH");
	ck_assert_uint_eq(fx_count("(sn=smith)"), 2);
	ck_assert_uint_eq(index_problems(), 0);

	op = fx_op();   /* the same number of values, one of them other */
	struct ldap_change sn2 = change(LDAP_MOD_REPLACE, "sn", "Smythe", NULL);
	ck_assert_int_eq(modify(&op, ALICE, &sn2, 1), LDAP_SUCCESS);
	ck_assert_uint_eq(fx_count("(sn=smith)"), 1);
	ck_assert_uint_eq(fx_count("(name=smythe)"), 1);
	ck_assert_uint_eq(index_problems(), 0);

	op = fx_op();   /* a class, whose keys come from the class set */
	struct ldap_change oc = change(LDAP_MOD_ADD, "objectClass", "extensibleObject", NULL);
	ck_assert_int_eq(modify(&op, ALICE, &oc, 1), LDAP_SUCCESS);
	ck_assert_uint_eq(fx_count("(objectClass=extensibleObject)"), 1);
	ck_assert_uint_eq(index_problems(), 0);
}
END_TEST

/* What a damage function gets: one write transaction on the closed database. */
struct damage {
	struct mdb_store *store;
	MDB_txn *txn;
	MDB_dbi uid, cn;
};

/* Runs fn on the database behind the backend's back, then reopens it. */
static void damage(void (*fn)(struct damage *d))
{
	struct damage d;
	struct mdb_store_options o = { .directory = fx.dir };
	char err[256];

	fixture_close_database();
	ck_assert_int_eq(mdb_store_open(&o, &d.store, err, sizeof(err)), LUMEN_OK);
	/* opening a table may write: before the damage's own transaction */
	ck_assert_int_eq(mdb_store_index_open(d.store, "uid", &d.uid), LUMEN_OK);
	ck_assert_int_eq(mdb_store_index_open(d.store, "cn", &d.cn), LUMEN_OK);
	ck_assert_int_eq(mdb_txn_begin(d.store->env, NULL, 0, &d.txn), 0);
	fn(&d);
	ck_assert_int_eq(mdb_txn_commit(d.txn), 0);
	mdb_store_close(d.store);
	reopen_backend(false, NULL);
}

/* The one ID listed under the equality key of a uid value. */
static uint64_t uid_id(struct damage *d, const char *uid)
{
	struct index_key key;
	struct idl ids;
	idl_init(&ids);
	index_key_make(INDEX_EQUALITY, (const uint8_t *)uid, strlen(uid), &key);
	ck_assert_int_eq(index_read(d->txn, d->uid, &key, &ids), LUMEN_OK);
	ck_assert_uint_eq(idl_size(&ids), 1);
	uint64_t id = idl_first(&ids);
	idl_release(&ids);
	return id;
}

static void drop_alice_add_ghost(struct damage *d)
{
	struct index_key key;
	index_key_make(INDEX_EQUALITY, (const uint8_t *)"alice", 5, &key);
	ck_assert_int_eq(index_remove(d->txn, d->uid, &key, uid_id(d, "alice")), LUMEN_OK);
	index_key_make(INDEX_EQUALITY, (const uint8_t *)"ghost", 5, &key);
	ck_assert_int_eq(index_add(d->txn, d->uid, &key, 999), LUMEN_OK);
}

/* A key removed behind the checker's back, and an ID that is no entry. */
START_TEST(check_indexes_detects_damage)
{
	struct problem_log log;
	ck_assert_uint_eq(checked_problems(&log), 0);

	damage(drop_alice_add_ghost);
	ck_assert_uint_eq(checked_problems(&log), 2);
	ck_assert_msg(logged(&log, "index uid, eq key ") &&
		      logged(&log, "(uid=alice,ou=people,dc=example,dc=com) is not listed"),
		      "%s", log.text[0]);
	ck_assert_msg(logged(&log, "lists entry 999, which does not exist"), "%s", log.text[1]);
}
END_TEST

static void list_bob_under_alice(struct damage *d)
{
	struct index_key key;
	index_key_make(INDEX_EQUALITY, (const uint8_t *)"alice", 5, &key);
	ck_assert_int_eq(index_add(d->txn, d->uid, &key, uid_id(d, "bob")), LUMEN_OK);
}

/* An existing entry listed under a key its values do not produce. */
START_TEST(check_indexes_detects_extra_id)
{
	struct problem_log log;
	damage(list_bob_under_alice);
	ck_assert_uint_eq(checked_problems(&log), 1);
	ck_assert_msg(logged(&log, "lists entry ") &&
		      logged(&log, "(uid=bob,ou=people,dc=example,dc=com), whose values do not "
				   "produce the key"), "%s", log.text[0]);
}
END_TEST

/* Replaces the key's IDs by the range [lo, hi] through the run writer. */
static void store_range(struct damage *d, MDB_dbi dbi, const struct index_key *key, uint64_t lo,
			uint64_t hi)
{
	struct index_run_writer w;
	MDB_val k = { INDEX_KEY_SIZE, (void *)key->bytes };
	int mrc = mdb_del(d->txn, dbi, &k, NULL);
	ck_assert(mrc == MDB_SUCCESS || mrc == MDB_NOTFOUND);
	ck_assert_int_eq(index_run_writer_open(&w, d->txn, dbi), LUMEN_OK);
	ck_assert_int_eq(index_run_add_range(&w, key, lo, hi), LUMEN_OK);
	index_run_writer_close(&w);
}

/*
 * cn's presence key (every person and the group: the highest IDs) as a
 * range that stops short of the last entry; a range under a key no entry
 * produces; a range that is a superset of its key's entries (no problem).
 */
static void range_damage(struct damage *d)
{
	struct index_key key;
	uint64_t alice = uid_id(d, "alice");
	index_key_make(INDEX_PRESENCE, NULL, 0, &key);
	store_range(d, d->cn, &key, alice, FIXTURE_ENTRIES - 1);
	index_key_make(INDEX_EQUALITY, (const uint8_t *)"nobody", 6, &key);
	store_range(d, d->cn, &key, 1, 3);
	index_key_make(INDEX_EQUALITY, (const uint8_t *)"dave", 4, &key);
	store_range(d, d->cn, &key, 1, FIXTURE_ENTRIES);
}

START_TEST(check_indexes_detects_range_problems)
{
	struct problem_log log;
	damage(range_damage);
	ck_assert_uint_eq(checked_problems(&log), 2);
	ck_assert_msg(logged(&log, "index cn, pres key 0000000000000000: entry 11 "
				   "(cn=admins,ou=groups,dc=example,dc=com) is not listed"),
		      "%s", log.text[0]);
	ck_assert_msg(logged(&log, "index cn, eq key ") &&
		      logged(&log, "holds the range 1-3 but no entry inside it produces the key"),
		      "%s", log.text[1]);
}
END_TEST

/* A key of the wrong size; an entry record that no longer decodes. */
static void malformed_damage(struct damage *d)
{
	uint64_t id = 1;
	MDB_val key = { 5, "short" }, data = { sizeof(id), &id };
	ck_assert_int_eq(mdb_put(d->txn, d->uid, &key, &data, 0), 0);
	uint8_t garbage[] = { 0xff, 0xfe, 0xfd, 0xfc };
	ck_assert_int_eq(id2entry_replace(d->store, d->txn, uid_id(d, "carol"), garbage,
					  sizeof(garbage)), LUMEN_OK);
}

START_TEST(check_indexes_detects_malformed)
{
	struct problem_log log;
	damage(malformed_damage);
	/* carol's many index IDs are not reported again */
	ck_assert_uint_eq(checked_problems(&log), 2);
	ck_assert_msg(logged(&log, "index uid: malformed record: a key that is not 9 bytes"),
		      "%s", log.text[0]);
	ck_assert_msg(logged(&log, ": record does not decode"), "%s", log.text[1]);
}
END_TEST

/* Reports stop at max_reported; every problem is counted, per table too. */
START_TEST(check_indexes_limits_reports)
{
	struct problem_log log = { 0 };
	uint64_t problems = 0, per_table[16] = { 0 };
	struct backend_index_pass pass = { .max_reported = 1, .table_problems = per_table };

	damage(drop_alice_add_ghost);
	ck_assert_int_eq(backend_check_indexes_with(fx.be, &pass, log_problem, &log, &problems),
			 LUMEN_OK);
	ck_assert_uint_eq(problems, 2);
	ck_assert_int_eq(log.n, 1);
	for (size_t t = 0; t < backend_index_count(fx.be); t++)
		ck_assert_uint_eq(per_table[t],
				  strcmp(backend_index_name(fx.be, t), "uid") == 0 ? 2 : 0);
}
END_TEST

/* backend_reindex rebuilds only what it is asked to, in one or many rounds. */
START_TEST(reindex_named_tables)
{
	struct problem_log log;
	const char *uid[] = { "uid" }, *unindexed[] = { "description" };
	struct backend_index_pass pass = { .memory_limit = 1 };

	damage(range_damage);
	ck_assert_int_eq(backend_reindex(fx.be, uid, 1, NULL), LUMEN_EINVAL); /* not tool mode */
	damage(drop_alice_add_ghost);   /* on top: uid and cn both damaged */
	ck_assert_uint_eq(checked_problems(&log), 4);

	reopen_backend(true, NULL);
	ck_assert_int_eq(backend_reindex(fx.be, unindexed, 1, NULL), LUMEN_ENOTFOUND);
	ck_assert_int_eq(backend_reindex(fx.be, uid, 1, &pass), LUMEN_OK);
	ck_assert_uint_eq(pass.entries, FIXTURE_ENTRIES);
	ck_assert_uint_gt(pass.rounds, 1);
	reopen_backend(false, NULL);
	ck_assert_uint_eq(checked_problems(&log), 2);   /* cn's are left */
	ck_assert_msg(!logged(&log, "index uid"), "%s", log.text[0]);
	ck_assert_uint_eq(fx_count("(uid=alice)"), 1);

	reopen_backend(true, NULL);
	ck_assert_int_eq(backend_reindex(fx.be, NULL, 0, NULL), LUMEN_OK);
	reopen_backend(false, NULL);
	ck_assert_uint_eq(checked_problems(&log), 0);
	ck_assert_uint_eq(fx_count("(cn=*)"), FIXTURE_PERSONS + 1);
}
END_TEST

/* An index line added after the load: its table is missing until a rebuild. */
START_TEST(reindex_new_index_table)
{
	char err[256] = "";
	struct problem_log log;
	const struct backend_index_spec description = { "description", BACKEND_INDEX_EQUALITY };
	const char *names[] = { "2.5.4.13" };   /* description's OID */
	const char *suffixes[] = { BASE };
	size_t n = sizeof(fixture_indexes) / sizeof(fixture_indexes[0]);
	struct backend_index_spec specs[16];
	bool missing[16];
	memcpy(specs, fixture_indexes, sizeof(fixture_indexes));
	specs[n] = description;
	struct backend_settings st = {
		.suffixes = suffixes, .n_suffixes = 1, .directory = fx.dir, .read_only = true,
		.indexes = specs, .n_indexes = n + 1,
	};

	fixture_close_database();
	ck_assert_int_eq(backend_missing_index_tables(fx.schema, &st, missing, err, sizeof(err)),
			 LUMEN_OK);
	for (size_t i = 0; i <= n; i++)
		ck_assert_msg(missing[i] == (i == n), "index line %zu", i);
	ck_assert_int_ne(fixture_open_database(&st, err, sizeof(err)), LUMEN_OK);

	reopen_backend(true, &description);   /* a writable open creates the table */
	ck_assert_int_eq(backend_reindex(fx.be, names, 1, NULL), LUMEN_OK);
	fixture_close_database();
	ck_assert_int_eq(backend_missing_index_tables(fx.schema, &st, missing, err, sizeof(err)),
			 LUMEN_OK);
	ck_assert(!missing[n]);
	reopen_backend(false, &description);
	ck_assert_uint_eq(checked_problems(&log), 0);
	ck_assert_uint_eq(fx_count("(description=first)"), 1);
}
END_TEST

/* A sequence of mixed writes leaves the indexes consistent. */
START_TEST(write_sequence_consistent)
{
	char dn[128], uid[32], cn[64];
	for (int i = 0; i < 40; i++) {
		snprintf(dn, sizeof(dn), "uid=u%d,ou=People,dc=example,dc=com", i);
		snprintf(uid, sizeof(uid), "uid: u%d", i);
		snprintf(cn, sizeof(cn), "cn: User Number %d", i);
		ck_assert_int_eq(fx_add(dn, FX_LINES("objectClass: inetOrgPerson", uid, cn,
						     "sn: Shared")), LDAP_SUCCESS);
	}
	for (int i = 0; i < 40; i += 3) {
		struct backend_op op = fx_op();
		snprintf(dn, sizeof(dn), "uid=u%d,ou=People,dc=example,dc=com", i);
		ck_assert_int_eq(backend_delete(fx.be, &op, fx_ndn(dn)), LUMEN_OK);
		ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
	}
	for (int i = 1; i < 40; i += 3) {
		struct backend_op op = fx_op();
		snprintf(dn, sizeof(dn), "uid=u%d,ou=People,dc=example,dc=com", i);
		struct ldap_change ch = change(LDAP_MOD_REPLACE, "sn", "Other", NULL);
		ck_assert_int_eq(modify(&op, dn, &ch, 1), LDAP_SUCCESS);
	}
	ck_assert_uint_eq(fx_count("(sn=shared)"), 40 - 14 - 13);
	ck_assert_uint_eq(fx_count("(sn=other)"), 13);
	ck_assert_uint_eq(fx_count("(cn=user number*)"), 26);
	ck_assert_uint_eq(index_problems(), 0);
}
END_TEST

/* ---------------------------------------------------------- concurrency */

#define WRITER_ROUNDS 60
#define READER_ROUNDS 60

static void *writer_thread(void *arg)
{
	long n = (long)arg;
	struct arena arena;
	arena_init(&arena, 0);
	for (int i = 0; i < WRITER_ROUNDS; i++) {
		char value[32];
		snprintf(value, sizeof(value), "%ld-%d", n, i);
		arena_reset(&arena);
		struct backend_op op = { .arena = &arena, .is_root = true };
		struct ber_view ndn;
		const char *dn = n == 0 ? ALICE : "uid=bob,ou=People,dc=example,dc=com";
		ck_assert_int_eq(dn_normalize(fx.schema, dn, strlen(dn), &arena, &ndn), LUMEN_OK);
		/* two attributes changed together: readers must see both or neither */
		struct ber_view v = { (const uint8_t *)value, strlen(value) };
		struct ldap_change ch[2] = {
			{ LDAP_MOD_REPLACE, { fx_view("description"), &v, 1 } },
			{ LDAP_MOD_REPLACE, { fx_view("title"), &v, 1 } },
		};
		ck_assert_int_eq(backend_modify(fx.be, &op, ndn, ch, 2), LUMEN_OK);
		ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
	}
	arena_free(&arena);
	return NULL;
}

static int consistent_sink(void *ctx, const struct entry *e, const struct backend_entry_info *info)
{
	(void)info;
	const struct entry_attribute *d = NULL, *t = NULL;
	for (size_t i = 0; i < e->n_attributes; i++) {
		if (ber_view_eq_str(e->attributes[i].name, "description"))
			d = &e->attributes[i];
		if (ber_view_eq_str(e->attributes[i].name, "title"))
			t = &e->attributes[i];
	}
	if (t != NULL) {
		ck_assert_ptr_nonnull(d);
		ck_assert_uint_eq(d->n_values, 1);
		ck_assert_uint_eq(d->values[0].value.len, t->values[0].value.len);
		ck_assert(memcmp(d->values[0].value.ptr, t->values[0].value.ptr,
				 t->values[0].value.len) == 0);
	}
	(*(size_t *)ctx)++;
	return 0;
}

static void *reader_thread(void *arg)
{
	(void)arg;
	struct arena arena;
	arena_init(&arena, 0);
	for (int i = 0; i < READER_ROUNDS; i++) {
		arena_reset(&arena);
		size_t n = 0;
		struct backend_op op = { .arena = &arena, .is_root = true };
		struct ber_view base;
		ck_assert_int_eq(dn_normalize(fx.schema, BASE, strlen(BASE), &arena, &base),
				 LUMEN_OK);
		struct backend_search s = { .base_ndn = base, .scope = LDAP_SCOPE_SUBTREE,
					    .sink = consistent_sink, .sink_ctx = &n };
		ck_assert_int_eq(backend_search(fx.be, &op, &s), LUMEN_OK);
		ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
		ck_assert_uint_eq(n, FIXTURE_ENTRIES);
	}
	arena_free(&arena);
	return NULL;
}

START_TEST(concurrent_reads_and_writes)
{
	pthread_t w[2], r[3];
	for (long i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_create(&w[i], NULL, writer_thread, (void *)i), 0);
	for (long i = 0; i < 3; i++)
		ck_assert_int_eq(pthread_create(&r[i], NULL, reader_thread, NULL), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(w[i], NULL);
	for (int i = 0; i < 3; i++)
		pthread_join(r[i], NULL);
	struct fetch_ctx f;
	char expected[32];
	snprintf(expected, sizeof(expected), "0-%d", WRITER_ROUNDS - 1);
	ck_assert_str_eq(fx_values(ALICE, "title", &f), expected);
	ck_assert_uint_eq(index_problems(), 0);
}
END_TEST

/* The CSNs carry the configured serverID (000 by default). */
START_TEST(csn_carries_server_id)
{
	struct fetch_ctx f;
	ck_assert_ptr_nonnull(strstr(fx_values(BASE, "entryCSN", &f), "#000#"));
	fixture_close();
	fixture_server_id = 0xabc;
	fixture_open_settings((size_t)16 << 20, false);
	fixture_server_id = 0;
	ck_assert_int_eq(fx_add(BASE, FX_LINES("objectClass: domain", "dc: example")),
			 LDAP_SUCCESS);
	const char *csn = fx_values(BASE, "entryCSN", &f);
	ck_assert_msg(strlen(csn) == 40 && memcmp(csn + 29, "#abc#", 5) == 0, "%s", csn);
}
END_TEST

/* ------------------------------------------------------------- map full */

START_TEST(map_full_is_reported)
{
	fixture_close();
	fixture_open_settings((size_t)1 << 20, false);
	ck_assert_int_eq(fx_add(BASE, FX_LINES("objectClass: domain", "dc: example")),
			 LDAP_SUCCESS);
	static char big[8200];
	memset(big, 'x', sizeof(big) - 1);
	memcpy(big, "description: ", 13);
	int code = LDAP_SUCCESS;
	const char *diagnostic = NULL;
	for (int i = 0; i < 1000 && code == LDAP_SUCCESS; i++) {
		char dn[64], cn[32];
		snprintf(dn, sizeof(dn), "cn=e%d,dc=example,dc=com", i);
		snprintf(cn, sizeof(cn), "cn: e%d", i);
		struct backend_op op = fx_op();
		struct ldap_attribute attrs[4];
		size_t n = fx_attributes(FX_LINES("objectClass: device", cn, big), attrs, 4);
		int rc = backend_add(fx.be, &op, fx_view(dn), fx_ndn(dn), attrs, n);
		ck_assert(rc == LUMEN_OK || rc == LUMEN_EFULL);
		code = op.result_code;
		diagnostic = op.diagnostic;
	}
	ck_assert_int_eq(code, LDAP_OTHER);
	ck_assert_ptr_nonnull(diagnostic);
	ck_assert_msg(strstr(diagnostic, "maxsize") != NULL, "%s", diagnostic);
	ck_assert_uint_eq(index_problems(), 0);
}
END_TEST

/* ------------------------------------------------------ bulk-load path */

/* One index posting of the tool path, to be sorted into runs. */
struct tool_posting {
	size_t table;
	struct index_key key;
	uint64_t id;
};

struct tool_run {
	struct backend *be;
	struct backend_tool_load *load;
	struct ber_writer w;
	struct tool_posting *postings;
	size_t n, cap;
};

/* Swaps the fixture's backend for a tool-mode one on an empty directory. */
static void tool_run_start(struct tool_run *t)
{
	char err[512] = "", path[128];
	const char *suffixes[] = { BASE };
	struct backend_settings st = {
		.suffixes = suffixes, .n_suffixes = 1, .directory = fx.dir, .dbnosync = true,
		.tool_mode = true, .indexes = fixture_indexes,
		.n_indexes = sizeof(fixture_indexes) / sizeof(fixture_indexes[0]),
	};
	fixture_close_database();
	snprintf(path, sizeof(path), "%s/data.mdb", fx.dir);
	ck_assert_int_eq(unlink(path), 0);
	memset(t, 0, sizeof(*t));
	ck_assert_int_eq(backend_open(fx.schema, &st, &t->be, err, sizeof(err)), LUMEN_OK);
	ck_assert_int_eq(backend_tool_load_begin(t->be, &t->load), LUMEN_OK);
	ck_assert_int_eq(ber_writer_init(&t->w, 1024, 0), LUMEN_OK);
}

/* Prepares and stores one entry the way lumenadd does; returns the LDAP result. */
static int tool_add(struct tool_run *t, const char *dn, const char *const *lines,
		    enum backend_schema_check check_schema)
{
	struct ldap_attribute attrs[32];
	struct schema_violation v;
	struct entry *e = NULL;
	uint64_t id = 0;

	struct backend_op op = fx_op();
	op.from_tool = true;
	size_t n = fx_attributes(lines, attrs, 32);
	ck_assert_int_eq(entry_from_attributes(fx.schema, fx_view(dn), fx_ndn(dn), attrs, n, false,
					       &e, &v), LUMEN_OK);
	ck_assert_int_eq(backend_tool_prepare(t->be, &op, e, check_schema), LUMEN_OK);
	if (op.result_code == LDAP_SUCCESS) {
		ber_writer_reset(&t->w);
		ck_assert_int_eq(entry_encode(e, &t->w), LUMEN_OK);
		ck_assert_int_eq(backend_tool_store(t->load, &op, e->dn, e->ndn, t->w.buf, t->w.len,
						    &id), LUMEN_OK);
	}
	for (size_t table = 0; op.result_code == LDAP_SUCCESS &&
			       table < backend_index_count(t->be); table++) {
		const struct index_key *keys;
		size_t n_keys;
		ck_assert_int_eq(backend_tool_entry_keys(t->be, table, e, &fx.arena, &keys, &n_keys),
				 LUMEN_OK);
		for (size_t k = 0; k < n_keys; k++) {
			if (t->n == t->cap) {
				t->cap = t->cap ? 2 * t->cap : 1024;
				t->postings = realloc(t->postings, t->cap * sizeof(*t->postings));
				ck_assert_ptr_nonnull(t->postings);
			}
			t->postings[t->n++] = (struct tool_posting){ table, keys[k], id };
		}
	}
	entry_free(e);
	return op.result_code;
}

static int compare_postings(const void *a, const void *b)
{
	const struct tool_posting *x = a, *y = b;
	if (x->table != y->table)
		return x->table < y->table ? -1 : 1;
	int c = memcmp(x->key.bytes, y->key.bytes, INDEX_KEY_SIZE);
	if (c != 0)
		return c;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Hands the postings over sorted, one run per key; the presence key of cn as a range. */
static void tool_flush_postings(struct tool_run *t)
{
	struct index_key presence;
	uint64_t *ids = malloc((t->n ? t->n : 1) * sizeof(*ids));
	ck_assert_ptr_nonnull(ids);
	index_key_make(INDEX_PRESENCE, NULL, 0, &presence);
	qsort(t->postings, t->n, sizeof(*t->postings), compare_postings);
	for (size_t i = 0; i < t->n;) {
		size_t j = i, n = 0;
		while (j < t->n && t->postings[j].table == t->postings[i].table &&
		       memcmp(t->postings[j].key.bytes, t->postings[i].key.bytes, INDEX_KEY_SIZE) == 0)
			ids[n++] = t->postings[j++].id;
		const char *name = backend_index_name(t->be, t->postings[i].table);
		if (strcmp(name, "cn") == 0 &&
		    memcmp(t->postings[i].key.bytes, presence.bytes, INDEX_KEY_SIZE) == 0)
			ck_assert_int_eq(backend_tool_index_range(t->load, t->postings[i].table,
								  &t->postings[i].key, ids[0],
								  ids[n - 1]), LUMEN_OK);
		else
			ck_assert_int_eq(backend_tool_index_run(t->load, t->postings[i].table,
								&t->postings[i].key, ids, n),
					 LUMEN_OK);
		i = j;
	}
	free(ids);
	t->n = 0;
}

/* Ends the load, commits it, and reopens the directory as lumend would. */
static void tool_run_finish(struct tool_run *t)
{
	char err[512] = "";
	const char *suffixes[] = { BASE };
	struct backend_settings st = {
		.suffixes = suffixes, .n_suffixes = 1, .directory = fx.dir, .dbnosync = true,
		.indexes = fixture_indexes,
		.n_indexes = sizeof(fixture_indexes) / sizeof(fixture_indexes[0]),
	};
	backend_tool_load_end(t->load);
	ck_assert_int_eq(backend_tool_flush(t->be), LUMEN_OK);
	backend_close(t->be);
	ber_writer_free(&t->w);
	free(t->postings);
	ck_assert_int_eq(fixture_open_database(&st, err, sizeof(err)), LUMEN_OK);
}

#define TOOL_PEOPLE 300

static int count_sink(void *ctx, const struct entry *e, const struct backend_entry_info *info)
{
	(void)e;
	(void)info;
	(*(size_t *)ctx)++;
	return 0;
}

/* Entries matching filter in scope below base (any number of them). */
static size_t tool_count(const char *base, enum ldap_scope scope, const char *filter)
{
	size_t n = 0;
	struct backend_op op = fx_op();
	struct backend_search s = { .base_ndn = fx_ndn(base), .scope = scope,
				    .filter = fx_filter(filter), .sink = count_sink,
				    .sink_ctx = &n };
	ck_assert_int_eq(backend_search(fx.be, &op, &s), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
	return n;
}

START_TEST(tool_path_builds_consistent_database)
{
	struct tool_run t;
	char dn[128], uid[32], cn[64], mail[64];

	tool_run_start(&t);
	ck_assert_int_eq(tool_add(&t, BASE, FX_LINES("objectClass: domain", "dc: example"), true),
			 LDAP_SUCCESS);
	ck_assert_int_eq(tool_add(&t, PEOPLE, FX_LINES("objectClass: organizationalUnit",
						       "ou: People"), true), LDAP_SUCCESS);
	for (int i = 0; i < TOOL_PEOPLE; i++) {
		snprintf(dn, sizeof(dn), "uid=u%d,ou=People,dc=example,dc=com", i);
		snprintf(uid, sizeof(uid), "uid: u%d", i);
		snprintf(cn, sizeof(cn), "cn: User Number %d", i);
		snprintf(mail, sizeof(mail), "mail: u%d@example.com", i);
		ck_assert_int_eq(tool_add(&t, dn, FX_LINES("objectClass: inetOrgPerson", uid, cn,
							   "sn: Shared", mail), true),
				 LDAP_SUCCESS);
		if (i == TOOL_PEOPLE / 2)
			tool_flush_postings(&t);   /* two rounds: the second merges */
	}
	/* refusals write nothing */
	ck_assert_int_eq(tool_add(&t, "uid=u7,ou=People,dc=example,dc=com",
				  FX_LINES("objectClass: account", "uid: u7"), true),
			 LDAP_ENTRY_ALREADY_EXISTS);
	ck_assert_int_eq(tool_add(&t, "uid=x,ou=Nowhere,dc=example,dc=com",
				  FX_LINES("objectClass: account", "uid: x"), true),
			 LDAP_NO_SUCH_OBJECT);
	ck_assert_int_eq(tool_add(&t, "cn=nosn,ou=People,dc=example,dc=com",
				  FX_LINES("objectClass: person", "cn: nosn"), true),
			 LDAP_OBJECT_CLASS_VIOLATION);
	ck_assert_int_eq(tool_add(&t, "dc=other,dc=org",
				  FX_LINES("objectClass: domain", "dc: other"), true),
			 LDAP_UNWILLING_TO_PERFORM);
	/* -s: the same entry without the schema check is stored */
	ck_assert_int_eq(tool_add(&t, "cn=nosn,ou=People,dc=example,dc=com",
				  FX_LINES("objectClass: person", "cn: nosn"), false), LDAP_SUCCESS);
	tool_flush_postings(&t);
	ck_assert_int_eq(backend_tool_index_run(t.load, backend_index_count(t.be),
						&t.postings[0].key, (const uint64_t[]){ 1 }, 1),
			 LUMEN_EINVAL);
	tool_run_finish(&t);

	ck_assert_uint_eq(index_problems(), 0);
	ck_assert_uint_eq(tool_count(BASE, LDAP_SCOPE_SUBTREE, "(objectClass=*)"), TOOL_PEOPLE + 3);
	ck_assert_uint_eq(tool_count(BASE, LDAP_SCOPE_SUBTREE, "(uid=u123)"), 1);
	ck_assert_uint_eq(tool_count(BASE, LDAP_SCOPE_SUBTREE, "(sn=shared)"), TOOL_PEOPLE);
	ck_assert_uint_eq(tool_count(BASE, LDAP_SCOPE_SUBTREE, "(cn=user number 2*)"), 111);
	ck_assert_uint_eq(tool_count(BASE, LDAP_SCOPE_SUBTREE, "(cn=*)"), TOOL_PEOPLE + 1);
	ck_assert_uint_eq(tool_count(BASE, LDAP_SCOPE_SUBTREE, "(mail=u29*)"), 11);
	ck_assert_uint_eq(tool_count(BASE, LDAP_SCOPE_SUBTREE, "(objectClass=person)"),
			  TOOL_PEOPLE + 1);
	ck_assert_uint_eq(tool_count(PEOPLE, LDAP_SCOPE_ONE, "(objectClass=*)"),
			  TOOL_PEOPLE + 1);
	struct fetch_ctx f;
	ck_assert_str_eq(fx_values("uid=u7,ou=People,dc=example,dc=com", "creatorsName", &f),
			 "cn=manager,dc=example,dc=com");
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("backend_write");
	TCase *tc = tcase_create("write");
	tcase_add_checked_fixture(tc, fixture_open, fixture_close);
	tcase_add_loop_test(tc, add_table, 0, sizeof(add_cases) / sizeof(add_cases[0]));
	tcase_add_test(tc, add_supplies_rdn_value);
	tcase_add_test(tc, add_operational_and_post_read);
	tcase_add_test(tc, csn_carries_server_id);
	tcase_add_test(tc, add_suffix_only_without_parent);
	tcase_add_test(tc, delete_cases);
	tcase_add_loop_test(tc, modify_table, 0, sizeof(modify_cases) / sizeof(modify_cases[0]));
	tcase_add_test(tc, modify_no_such_object);
	tcase_add_test(tc, modify_atomic);
	tcase_add_test(tc, modify_success_updates_everything);
	tcase_add_test(tc, modify_increment);
	tcase_add_test(tc, modify_updates_only_the_tables_it_touches);
	tcase_add_loop_test(tc, modrdn_table, 0, sizeof(modrdn_cases) / sizeof(modrdn_cases[0]));
	tcase_add_test(tc, modrdn_values);
	tcase_add_test(tc, modrdn_subtree);
	tcase_add_test(tc, moved_names_marker);
	tcase_add_test(tc, check_indexes_detects_damage);
	tcase_add_test(tc, check_indexes_detects_extra_id);
	tcase_add_test(tc, check_indexes_detects_range_problems);
	tcase_add_test(tc, check_indexes_detects_malformed);
	tcase_add_test(tc, check_indexes_limits_reports);
	tcase_add_test(tc, reindex_named_tables);
	tcase_add_test(tc, reindex_new_index_table);
	tcase_add_test(tc, write_sequence_consistent);
	tcase_add_test(tc, concurrent_reads_and_writes);
	tcase_add_test(tc, map_full_is_reported);
	tcase_add_test(tc, tool_path_builds_consistent_database);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
