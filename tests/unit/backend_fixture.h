/*
 * backend_fixture.h — a back-mdb database with the shipped schema and a
 * small realistic tree, for the backend suites.
 *
 * fixture_open() loads schema/{core,cosine,inetorgperson,nis,lumen}.schema
 * (tests run from the repository root), opens a backend in a fresh mkdtemp
 * directory and adds the tree below through backend_add; fixture_close()
 * frees everything and removes the directory. Entries are written as
 * "type: value" lines; consecutive lines of one type form one attribute.
 */
#ifndef LUMEN_BACKEND_FIXTURE_H
#define LUMEN_BACKEND_FIXTURE_H

#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "dn.h"
#include "filter.h"
#include "ldap_result_codes.h"

#define FIXTURE_ROOT "cn=Manager,dc=example,dc=com"

struct fixture {
	char dir[64];
	struct schema *schema;
	struct database *db;     /* the database interface over be */
	struct backend *be;      /* back-mdb itself, for its own functions */
	struct arena arena;
};

static struct fixture fx;

static const char *const fixture_schema_files[] = {
	"schema/core.schema", "schema/cosine.schema", "schema/inetorgperson.schema",
	"schema/nis.schema", "schema/lumen.schema",
};

static const struct backend_index_spec fixture_indexes[] = {
	{ "default", BACKEND_INDEX_EQUALITY },
	{ "objectClass", 0 },
	{ "cn", BACKEND_INDEX_PRESENT | BACKEND_INDEX_EQUALITY | BACKEND_INDEX_SUBSTRING },
	{ "sn", BACKEND_INDEX_EQUALITY | BACKEND_INDEX_SUBSTRING | BACKEND_INDEX_APPROX },
	{ "uid", 0 },
	{ "mail", BACKEND_INDEX_EQUALITY },
	{ "member", BACKEND_INDEX_EQUALITY },
	{ "uidNumber", BACKEND_INDEX_EQUALITY },
};

static struct ber_view fx_view(const char *s)
{
	return (struct ber_view){ (const uint8_t *)s, strlen(s) };
}

static int fixture_remove(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* An operation context as the server would fill it for the rootdn. */
static struct backend_op fx_op(void)
{
	arena_reset(&fx.arena);
	struct backend_op op = { .arena = &fx.arena };
	op.requester_ndn = fx_view("cn=manager,dc=example,dc=com");
	op.is_root = true;
	return op;
}

static struct ber_view fx_ndn(const char *dn)
{
	struct ber_view ndn = { NULL, 0 };
	int rc = dn_normalize(fx.schema, dn, strlen(dn), &fx.arena, &ndn);
	ck_assert_msg(rc == LUMEN_OK, "normalize %s: %d", dn, rc);
	return ndn;
}

/* Builds the attribute list of "type: value" lines (NULL-terminated). */
static size_t fx_attributes(const char *const *lines, struct ldap_attribute *out, size_t cap)
{
	size_t n = 0;
	for (size_t i = 0; lines[i] != NULL; i++) {
		const char *colon = strstr(lines[i], ": ");
		ck_assert_ptr_nonnull(colon);
		struct ber_view type = { (const uint8_t *)lines[i], (size_t)(colon - lines[i]) };
		struct ber_view value = fx_view(colon + 2);
		if (n == 0 || out[n - 1].type.len != type.len ||
		    memcmp(out[n - 1].type.ptr, type.ptr, type.len) != 0) {
			ck_assert_uint_lt(n, cap);
			out[n].type = type;
			out[n].values = arena_alloc(&fx.arena, 16 * sizeof(struct ber_view));
			out[n].n_values = 0;
			n++;
		}
		out[n - 1].values[out[n - 1].n_values++] = value;
	}
	return n;
}

/* Adds an entry; returns the LDAP result code. */
static int fx_add_op(struct backend_op *op, const char *dn, const char *const *lines)
{
	struct ldap_attribute attrs[32];
	size_t n = fx_attributes(lines, attrs, 32);
	int rc = backend_add(fx.be, op, fx_view(dn), fx_ndn(dn), attrs, n);
	ck_assert_msg(rc == LUMEN_OK, "add %s: %s", dn, lumen_strerror(rc));
	return op->result_code;
}

static int fx_add(const char *dn, const char *const *lines)
{
	struct backend_op op = fx_op();
	return fx_add_op(&op, dn, lines);
}

#define FX_LINES(...) ((const char *const[]){ __VA_ARGS__, NULL })

static const char *const fixture_people[] = {
	"uid=alice,ou=People,dc=example,dc=com",
	"uid=bob,ou=People,dc=example,dc=com",
	"cn=J\xc3\xbcrgen M\xc3\xbcller,ou=People,dc=example,dc=com",
	"cn=Smith\\, John,ou=People,dc=example,dc=com",
	"uid=carol,ou=Engineering,ou=People,dc=example,dc=com",
	"uid=dave,ou=Engineering,ou=People,dc=example,dc=com",
};
#define FIXTURE_ENTRIES 11   /* every entry of the tree */
#define FIXTURE_PERSONS 6

static void fixture_tree(void)
{
	ck_assert_int_eq(fx_add("dc=example,dc=com", FX_LINES(
		"objectClass: top", "objectClass: dcObject", "objectClass: organization",
		"dc: example", "o: Example Corp")), LDAP_SUCCESS);
	ck_assert_int_eq(fx_add("ou=People,dc=example,dc=com", FX_LINES(
		"objectClass: organizationalUnit", "ou: People")), LDAP_SUCCESS);
	ck_assert_int_eq(fx_add("ou=Groups,dc=example,dc=com", FX_LINES(
		"objectClass: organizationalUnit", "ou: Groups")), LDAP_SUCCESS);
	ck_assert_int_eq(fx_add("ou=Engineering,ou=People,dc=example,dc=com", FX_LINES(
		"objectClass: organizationalUnit", "ou: Engineering",
		"description: builds things")), LDAP_SUCCESS);
	ck_assert_int_eq(fx_add(fixture_people[0], FX_LINES(
		"objectClass: inetOrgPerson", "uid: alice", "cn: Alice Smith", "cn: Ali",
		"sn: Smith", "mail: alice@example.com", "telephoneNumber: +1 555 0100",
		"description: first")), LDAP_SUCCESS);
	ck_assert_int_eq(fx_add(fixture_people[1], FX_LINES(
		"objectClass: inetOrgPerson", "uid: bob", "cn: Bob Smyth", "sn: Smyth",
		"mail: bob@example.com")), LDAP_SUCCESS);
	ck_assert_int_eq(fx_add(fixture_people[2], FX_LINES(
		"objectClass: inetOrgPerson", "uid: jmueller", "cn: J\xc3\xbcrgen M\xc3\xbcller",
		"sn: M\xc3\xbcller", "description: \xc3\xa9t\xc3\xa9")), LDAP_SUCCESS);
	ck_assert_int_eq(fx_add(fixture_people[3], FX_LINES(
		"objectClass: person", "cn: Smith, John", "sn: Smith")), LDAP_SUCCESS);
	ck_assert_int_eq(fx_add(fixture_people[4], FX_LINES(
		"objectClass: inetOrgPerson", "objectClass: posixAccount", "uid: carol",
		"cn: Carol", "sn: Jones", "uidNumber: 1001", "gidNumber: 100",
		"homeDirectory: /home/carol")), LDAP_SUCCESS);
	ck_assert_int_eq(fx_add(fixture_people[5], FX_LINES(
		"objectClass: inetOrgPerson", "uid: dave", "cn: Dave", "sn: Brown")), LDAP_SUCCESS);
	ck_assert_int_eq(fx_add("cn=admins,ou=Groups,dc=example,dc=com", FX_LINES(
		"objectClass: groupOfNames", "cn: admins",
		"member: uid=alice,ou=People,dc=example,dc=com",
		"member: uid=bob,ou=People,dc=example,dc=com")), LDAP_SUCCESS);
}

/* Entry cache size of the next fixture_open (a test may turn it off). */
static size_t fixture_cachesize = 4;
/* serverID the next fixture_open stamps into CSNs. */
static unsigned fixture_server_id = 0;

static void fixture_open_settings(size_t maxsize, bool build_tree)
{
	char err[512] = "";
	ck_assert_int_eq(schema_create(&fx.schema), LUMEN_OK);
	for (size_t i = 0; i < sizeof(fixture_schema_files) / sizeof(fixture_schema_files[0]); i++)
		ck_assert_msg(schema_load_file(fx.schema, fixture_schema_files[i], err,
					       sizeof(err)) == LUMEN_OK, "%s", err);
	ck_assert_msg(schema_finalize(fx.schema, err, sizeof(err)) == LUMEN_OK, "%s", err);
	strcpy(fx.dir, "/tmp/lumen-backend-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(fx.dir));
	const char *suffixes[] = { "dc=example,dc=com" };
	struct backend_settings settings = {
		.suffixes = suffixes, .n_suffixes = 1, .directory = fx.dir,
		.maxsize = maxsize, .dbnosync = true,
		.indexes = fixture_indexes,
		.n_indexes = sizeof(fixture_indexes) / sizeof(fixture_indexes[0]),
		.cachesize = fixture_cachesize, /* small: evictions and misses get exercised */
		.idlcachesize = 16,
		.server_id = fixture_server_id,
	};
	int rc = mdb_database_open(fx.schema, &settings, &fx.db, err, sizeof(err));
	ck_assert_msg(rc == LUMEN_OK, "mdb_database_open: %s", err);
	fx.be = fx.db->impl;
	arena_init(&fx.arena, 0);
	if (build_tree)
		fixture_tree();
}

/* Close the database under test (tests that reopen it another way). */
static inline void fixture_close_database(void)
{
	database_close(fx.db);
	fx.db = NULL;
	fx.be = NULL;
}

/* (Re)open the database under test with st; fx.db and fx.be on success. */
static inline int fixture_open_database(const struct backend_settings *st, char *err,
					size_t errlen)
{
	int rc = mdb_database_open(fx.schema, st, &fx.db, err, errlen);
	fx.be = rc == LUMEN_OK ? fx.db->impl : NULL;
	return rc;
}

/* Reopen the database under test with another schema, suffix or entry
 * cache size (BACKEND_CACHE_OFF: every read comes from the map). */
static inline void fixture_reopen(const struct schema *schema, const char *suffix,
				  size_t cachesize)
{
	char err[256] = "";
	const char *suffixes[] = { suffix };
	struct backend_settings st = {
		.suffixes = suffixes, .n_suffixes = 1, .directory = fx.dir,
		.maxsize = (size_t)64 << 20, .dbnosync = true,
		.indexes = fixture_indexes,
		.n_indexes = sizeof(fixture_indexes) / sizeof(fixture_indexes[0]),
		.cachesize = cachesize,
	};
	fixture_close_database();
	int rc = mdb_database_open(schema, &st, &fx.db, err, sizeof(err));
	ck_assert_msg(rc == LUMEN_OK, "reopen: %s", err);
	fx.be = fx.db->impl;
}

static void fixture_open(void)
{
	fixture_open_settings((size_t)64 << 20, true);
}

static void fixture_close(void)
{
	fixture_close_database();
	schema_free(fx.schema);
	fx.schema = NULL;
	arena_free(&fx.arena);
	nftw(fx.dir, fixture_remove, 8, FTW_DEPTH | FTW_PHYS);
}

/* ------------------------------------------------------------- search */

#define FX_MAX_RESULTS 64

struct fx_results {
	char *dns[FX_MAX_RESULTS];
	size_t n;
	int stop_after;    /* sink returns non-zero after this many; 0 = never */
};

static int fx_collect(void *ctx, const struct entry *e, const struct backend_entry_info *info)
{
	struct fx_results *r = ctx;
	ck_assert_uint_lt(r->n, FX_MAX_RESULTS);
	ck_assert_uint_eq(info->dn.len, e->dn.len);
	r->dns[r->n++] = strndup((const char *)info->dn.ptr, info->dn.len);
	return r->stop_after > 0 && (int)r->n >= r->stop_after;
}

static void fx_results_free(struct fx_results *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->dns[i]);
	r->n = 0;
}

static bool fx_results_has(const struct fx_results *r, const char *dn)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->dns[i], dn) == 0)
			return true;
	return false;
}

static struct filter *fx_filter(const char *text)
{
	struct ldap_filter *parsed;
	struct filter *f = arena_alloc(&fx.arena, sizeof(*f));
	ck_assert_int_eq(filter_text_parse(text, strlen(text), &fx.arena, NULL, &parsed, NULL),
			 LUMEN_OK);
	ck_assert_int_eq(filter_compile(fx.schema, parsed, NULL, &fx.arena, f), LUMEN_OK);
	return f;
}

/* Runs a search with op already prepared; returns the result code. */
static int fx_search_op(struct backend_op *op, const char *base, enum ldap_scope scope,
			const char *filter, struct fx_results *out)
{
	struct backend_search s = {
		.base_ndn = fx_ndn(base), .scope = scope,
		.filter = filter ? fx_filter(filter) : NULL,
		.sink = fx_collect, .sink_ctx = out,
	};
	int rc = backend_search(fx.be, op, &s);
	ck_assert_msg(rc == LUMEN_OK, "search: %s", lumen_strerror(rc));
	return op->result_code;
}

static int fx_search(const char *base, enum ldap_scope scope, const char *filter,
		     struct fx_results *out)
{
	struct backend_op op = fx_op();
	return fx_search_op(&op, base, scope, filter, out);
}

#endif
