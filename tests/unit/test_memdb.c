/*
 * test_memdb.c — the in-memory database over a small fixed source: scopes,
 * filters (through filter.c and an access hook), size limit, paged results
 * and their positions, pause and resume, fetch, compare, refused writes.
 */
#include <check.h>
#include <string.h>

#include "database.h"
#include "entry_fixture.h"
#include "filter.h"
#include "ldap_result_codes.h"
#include "lumen_error.h"
#include "memdb.h"

/* ou=Own > cn=a, cn=b > cn=c, in that order. */
static const char *const dns[] = { "ou=Own", "cn=a,ou=Own", "cn=b,ou=Own", "cn=c,cn=b,ou=Own" };
#define N_ENTRIES 4
static struct entry *entries[N_ENTRIES];
static int builds;

static bool has_entry(struct ber_view ndn)
{
	for (size_t i = 0; i < N_ENTRIES; i++)
		if (ndn.len == entries[i]->ndn.len && memcmp(ndn.ptr, entries[i]->ndn.ptr, ndn.len) == 0)
			return true;
	return false;
}

/* The contract: LUMEN_ENOTFOUND when the base is none of the entries. */
static int build(void *ctx, struct memdb_walk *walk)
{
	(void)ctx;
	builds++;
	if (!has_entry(walk->base_ndn))
		return LUMEN_ENOTFOUND;
	for (size_t i = 0; i < N_ENTRIES; i++) {
		int rc = memdb_emit(walk, entries[i]);
		if (rc != LUMEN_OK)
			return rc;
	}
	return LUMEN_OK;
}

static struct database *db;
static struct arena arena;

static void open_db(bool complete, bool leaves)
{
	struct memdb_source src = { "ou=Own", build, NULL, complete, leaves };
	database_close(db);
	ck_assert_int_eq(memdb_open(fixture_schema, &src, &db), LUMEN_OK);
}

static void setup(void)
{
	fixture_schema_setup();
	entries[0] = fixture_entry(dns[0], "objectClass: organizationalUnit\nou: Own");
	entries[1] = fixture_entry(dns[1], "objectClass: person\ncn: a\nsn: Apple\n"
				   "telephoneNumber: 1\nuidNumber: 10");
	entries[2] = fixture_entry(dns[2], "objectClass: person\ncn: b\nsn: Banana\n"
				   "telephoneNumber: 2\nuidNumber: 20");
	entries[3] = fixture_entry(dns[3], "objectClass: person\ncn: c\nsn: Cherry");
	arena_init(&arena, 0);
	db = NULL;
	open_db(false, false);
}

static void teardown(void)
{
	database_close(db);
	db = NULL;
	for (size_t i = 0; i < N_ENTRIES; i++)
		entry_free(entries[i]);
	arena_free(&arena);
	fixture_schema_teardown();
}

/* ------------------------------------------------------------- helpers */

struct seen {
	const char *dns[8];
	size_t n;
	int verdict;                    /* what the sink answers */
	size_t pause_after;             /* answer PAUSE at this count (0: never) */
	struct backend_entry_info last;
};

static int collect(void *ctx, const struct entry *e, const struct backend_entry_info *info)
{
	struct seen *s = ctx;
	s->dns[s->n++] = (const char *)e->dn.ptr;
	s->last = *info;
	if (s->pause_after > 0 && s->n == s->pause_after)
		return BACKEND_SINK_PAUSE;
	return s->verdict;
}

static struct filter *compile(const char *text)
{
	struct ldap_filter *parsed;
	size_t at;
	struct filter *f = arena_alloc(&arena, sizeof(*f));
	ck_assert_int_eq(filter_text_parse(text, strlen(text), &arena, NULL, &parsed, &at),
			 LUMEN_OK);
	ck_assert_int_eq(filter_compile(fixture_schema, parsed, NULL, &arena, f), LUMEN_OK);
	return f;
}

static struct backend_search search_of(const char *base, enum ldap_scope scope,
				       const char *filter, struct seen *seen)
{
	return (struct backend_search){
		.base_ndn = fixture_view(base), .scope = scope,
		.filter = filter != NULL ? compile(filter) : NULL,
		.sink = collect, .sink_ctx = seen,
	};
}

static struct backend_op new_op(void)
{
	return (struct backend_op){ .arena = &arena };
}

/* Search and return the number of entries the sink got. */
static size_t run(struct backend_op *op, struct backend_search *s, struct seen *seen)
{
	seen->n = 0;
	ck_assert_int_eq(database_search(db, op, s), LUMEN_OK);
	return seen->n;
}

/* -------------------------------------------------------------- scopes */

START_TEST(scopes)
{
	struct seen seen = { 0 };
	struct backend_op op = new_op();
	struct backend_search s = search_of("ou=own", LDAP_SCOPE_SUBTREE, NULL, &seen);
	ck_assert_uint_eq(run(&op, &s, &seen), 4);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
	for (size_t i = 0; i < 4; i++)
		ck_assert_str_eq(seen.dns[i], dns[i]);
	s = search_of("ou=own", LDAP_SCOPE_ONE, NULL, &seen);
	ck_assert_uint_eq(run(&op, &s, &seen), 2);
	s = search_of("ou=own", LDAP_SCOPE_CHILDREN, NULL, &seen);
	ck_assert_uint_eq(run(&op, &s, &seen), 3);
	s = search_of("cn=b,ou=own", LDAP_SCOPE_BASE, NULL, &seen);
	ck_assert_uint_eq(run(&op, &s, &seen), 1);
	ck_assert_str_eq(seen.dns[0], "cn=b,ou=Own");
	ck_assert(!seen.last.has_counts && !seen.last.complete);
}
END_TEST

START_TEST(missing_base)
{
	struct seen seen = { 0 };
	struct backend_op op = new_op();
	struct backend_search s = search_of("ou=other", LDAP_SCOPE_BASE, NULL, &seen);
	ck_assert_uint_eq(run(&op, &s, &seen), 0);
	ck_assert_int_eq(op.result_code, LDAP_NO_SUCH_OBJECT);
	ck_assert_uint_eq(op.matched_dn.len, strlen("ou=Own"));
}
END_TEST

/* ------------------------------------------------------------- filters */

START_TEST(filters)
{
	static const struct { const char *filter; size_t n; } cases[] = {
		{ "(cn=b)", 1 }, { "(sn=B*)", 1 }, { "(sn=*an*)", 1 },
		{ "(telephoneNumber=*)", 2 }, { "(uidNumber>=15)", 1 }, { "(uidNumber<=10)", 1 },
		{ "(sn~=Banana)", 1 }, { "(sn:caseExactMatch:=Cherry)", 1 },
		{ "(sn:caseExactMatch:=cherry)", 0 }, { "(&(objectClass=person)(!(cn=a)))", 2 },
		{ "(|(cn=a)(ou=Own))", 2 }, { "(objectClass=*)", 4 }, { "(nosuchtype=x)", 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct seen seen = { 0 };
		struct backend_op op = new_op();
		struct backend_search s = search_of("ou=own", LDAP_SCOPE_SUBTREE, cases[i].filter,
						    &seen);
		ck_assert_msg(run(&op, &s, &seen) == cases[i].n, "%s", cases[i].filter);
	}
}
END_TEST

static bool deny_sn(void *ctx, const struct attribute_type *type)
{
	(void)ctx;
	return strcmp(attribute_type_name(type), "sn") != 0;
}

/* An attribute the requester may not search makes its items Undefined. */
START_TEST(filter_access)
{
	struct filter_access hook = { NULL, deny_sn, NULL };
	struct seen seen = { 0 };
	struct backend_op op = new_op();
	op.filter_access = &hook;
	struct backend_search s = search_of("ou=own", LDAP_SCOPE_SUBTREE, "(sn=Banana)", &seen);
	ck_assert_uint_eq(run(&op, &s, &seen), 0);
	s = search_of("ou=own", LDAP_SCOPE_SUBTREE, "(cn=b)", &seen);
	ck_assert_uint_eq(run(&op, &s, &seen), 1);
}
END_TEST

/* -------------------------------------------------------------- limits */

START_TEST(size_limit)
{
	struct seen seen = { 0 };
	struct backend_op op = new_op();
	op.size_limit = 3;
	struct backend_search s = search_of("ou=own", LDAP_SCOPE_SUBTREE, NULL, &seen);
	ck_assert_uint_eq(run(&op, &s, &seen), 3);
	ck_assert_int_eq(op.result_code, LDAP_SIZE_LIMIT_EXCEEDED);
	/* the rootdn escapes the configured limit, not its request's */
	op = new_op();
	op.is_root = true;
	op.size_limit = 1;
	op.request_size_limit = 2;
	ck_assert_uint_eq(run(&op, &s, &seen), 2);
	ck_assert_int_eq(op.result_code, LDAP_SIZE_LIMIT_EXCEEDED);
	op.request_size_limit = 4;
	ck_assert_uint_eq(run(&op, &s, &seen), 4);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
}
END_TEST

/* Refused entries fill no page and count toward no limit. */
START_TEST(skipped_entries)
{
	struct seen seen = { .verdict = BACKEND_SINK_SKIPPED };
	struct backend_op op = new_op();
	op.size_limit = 1;
	struct backend_search s = search_of("ou=own", LDAP_SCOPE_SUBTREE, NULL, &seen);
	ck_assert_uint_eq(run(&op, &s, &seen), 4);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
	ck_assert_uint_eq(op.entries_sent, 0);
}
END_TEST

/* --------------------------------------------------------------- pages */

START_TEST(paged)
{
	struct seen seen = { 0 };
	struct backend_op op = new_op();
	struct backend_search s = search_of("ou=own", LDAP_SCOPE_SUBTREE, NULL, &seen);
	s.paged = true;
	s.page_size = 3;
	s.fingerprint = 42;
	ck_assert_uint_eq(run(&op, &s, &seen), 3);
	ck_assert_uint_eq(s.next_cookie_len, BACKEND_COOKIE_SIZE);
	uint8_t cookie[BACKEND_COOKIE_SIZE];
	memcpy(cookie, s.next_cookie, sizeof(cookie));
	s.cookie = (struct ber_view){ cookie, sizeof(cookie) };
	ck_assert_uint_eq(run(&op, &s, &seen), 1);
	ck_assert_str_eq(seen.dns[0], dns[3]);
	ck_assert_uint_eq(s.next_cookie_len, 0);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
	/* the size limit counts the entries of every page */
	op.size_limit = 3;
	ck_assert_uint_eq(run(&op, &s, &seen), 0);
	ck_assert_int_eq(op.result_code, LDAP_SIZE_LIMIT_EXCEEDED);
	/* another search's cookie, a broken one */
	op = new_op();
	s.fingerprint = 43;
	ck_assert_uint_eq(run(&op, &s, &seen), 0);
	ck_assert_int_eq(op.result_code, LDAP_UNWILLING_TO_PERFORM);
	s.cookie.len--;
	ck_assert_uint_eq(run(&op, &s, &seen), 0);
	ck_assert_int_eq(op.result_code, LDAP_UNWILLING_TO_PERFORM);
}
END_TEST

START_TEST(paged_abandon)
{
	struct seen seen = { 0 };
	struct backend_op op = new_op();
	struct backend_search s = search_of("ou=own", LDAP_SCOPE_SUBTREE, NULL, &seen);
	s.paged = true;
	s.page_size = 0;
	builds = 0;
	ck_assert_uint_eq(run(&op, &s, &seen), 0);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
	ck_assert_int_eq(builds, 0);
}
END_TEST

START_TEST(pause_resume)
{
	struct seen seen = { .pause_after = 2 };
	struct backend_op op = new_op();
	struct backend_search s = search_of("ou=own", LDAP_SCOPE_SUBTREE, "(objectClass=person)",
					    &seen);
	op.size_limit = 3;
	ck_assert_uint_eq(run(&op, &s, &seen), 2);
	ck_assert(s.paused && s.resume.active);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
	seen.pause_after = 0;
	ck_assert_uint_eq(run(&op, &s, &seen), 1);
	ck_assert(!s.paused);
	ck_assert_str_eq(seen.dns[0], dns[3]);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
}
END_TEST

START_TEST(assertion)
{
	struct seen seen = { 0 };
	struct backend_op op = new_op();
	op.assertion = compile("(ou=Other)");
	struct backend_search s = search_of("ou=own", LDAP_SCOPE_SUBTREE, NULL, &seen);
	ck_assert_uint_eq(run(&op, &s, &seen), 0);
	ck_assert_int_eq(op.result_code, LDAP_ASSERTION_FAILED);
	op.assertion = compile("(ou=Own)");
	ck_assert_uint_eq(run(&op, &s, &seen), 4);
	/* also when the base is outside the scope */
	s = search_of("ou=own", LDAP_SCOPE_ONE, NULL, &seen);
	ck_assert_uint_eq(run(&op, &s, &seen), 2);
	op.assertion = compile("(ou=Other)");
	ck_assert_uint_eq(run(&op, &s, &seen), 0);
	ck_assert_int_eq(op.result_code, LDAP_ASSERTION_FAILED);
}
END_TEST

START_TEST(entry_flags)
{
	struct seen seen = { 0 };
	struct backend_op op = new_op();
	open_db(true, true);
	struct backend_search s = search_of("cn=a,ou=own", LDAP_SCOPE_BASE, NULL, &seen);
	ck_assert_uint_eq(run(&op, &s, &seen), 1);
	ck_assert(seen.last.complete && seen.last.has_counts && !seen.last.has_subordinates);
}
END_TEST

/* ------------------------------------------------ fetch, compare, writes */

START_TEST(fetch)
{
	struct seen seen = { 0 };
	struct backend_op op = new_op();
	ck_assert_int_eq(database_fetch(db, &op, fixture_view("cn=c,cn=b,ou=own"), collect, &seen),
			 LUMEN_OK);
	ck_assert_uint_eq(seen.n, 1);
	ck_assert_str_eq(seen.dns[0], dns[3]);
	ck_assert_int_eq(op.result_code, LDAP_SUCCESS);
	seen.n = 0;
	ck_assert_int_eq(database_fetch(db, &op, fixture_view("cn=d,ou=own"), collect, &seen),
			 LUMEN_OK);
	ck_assert_uint_eq(seen.n, 0);
	ck_assert_int_eq(op.result_code, LDAP_NO_SUCH_OBJECT);
}
END_TEST

static int compare(const char *dn, const char *attr, const char *value,
		   const struct filter_access *access)
{
	struct backend_op op = new_op();
	op.compare_access = access;
	ck_assert_int_eq(database_compare(db, &op, fixture_view(dn), fixture_view(attr),
					  fixture_view(value)), LUMEN_OK);
	return op.result_code;
}

START_TEST(compares)
{
	struct filter_access hook = { NULL, deny_sn, NULL };
	ck_assert_int_eq(compare("cn=a,ou=own", "sn", "apple", NULL), LDAP_COMPARE_TRUE);
	ck_assert_int_eq(compare("cn=a,ou=own", "name", "APPLE", NULL), LDAP_COMPARE_TRUE);
	ck_assert_int_eq(compare("cn=a,ou=own", "sn", "pear", NULL), LDAP_COMPARE_FALSE);
	ck_assert_int_eq(compare("cn=c,cn=b,ou=own", "telephoneNumber", "1", NULL),
			 LDAP_NO_SUCH_ATTRIBUTE);
	ck_assert_int_eq(compare("cn=a,ou=own", "nosuchtype", "x", NULL),
			 LDAP_UNDEFINED_ATTRIBUTE_TYPE);
	ck_assert_int_eq(compare("cn=x,ou=own", "sn", "x", NULL), LDAP_NO_SUCH_OBJECT);
	ck_assert_int_eq(compare("cn=a,ou=own", "sn", "pear", &hook),
			 LDAP_INSUFFICIENT_ACCESS_RIGHTS);
	ck_assert_int_eq(compare("cn=a,ou=own", "name", "a", &hook), LDAP_COMPARE_TRUE);
}
END_TEST

START_TEST(writes_refused)
{
	struct backend_op op = new_op();
	struct ber_view dn = fixture_view("cn=a,ou=own");
	ck_assert_int_eq(database_delete(db, &op, dn), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_UNWILLING_TO_PERFORM);
	op = new_op();
	ck_assert_int_eq(database_modify(db, &op, dn, NULL, 0), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_UNWILLING_TO_PERFORM);
	op = new_op();
	ck_assert_int_eq(database_add(db, &op, dn, dn, NULL, 0), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_UNWILLING_TO_PERFORM);
	op = new_op();
	ck_assert_int_eq(database_modrdn(db, &op, dn, fixture_view("cn=z"), true, false,
					 (struct ber_view){ NULL, 0 }), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_UNWILLING_TO_PERFORM);
}
END_TEST

START_TEST(open_errors)
{
	struct database *other = NULL;
	struct memdb_source src = { "ou=Own", NULL, NULL, false, false };
	ck_assert_int_eq(memdb_open(fixture_schema, &src, &other), LUMEN_EINVAL);
	ck_assert_ptr_null(other);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("memdb");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, scopes);
	tcase_add_test(tc, missing_base);
	tcase_add_test(tc, filters);
	tcase_add_test(tc, filter_access);
	tcase_add_test(tc, size_limit);
	tcase_add_test(tc, skipped_entries);
	tcase_add_test(tc, paged);
	tcase_add_test(tc, paged_abandon);
	tcase_add_test(tc, pause_resume);
	tcase_add_test(tc, assertion);
	tcase_add_test(tc, entry_flags);
	tcase_add_test(tc, fetch);
	tcase_add_test(tc, compares);
	tcase_add_test(tc, writes_refused);
	tcase_add_test(tc, open_errors);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
