/*
 * test_monitor.c — the cn=Monitor tree built from fake sources: DNs,
 * structural classes, counters, scopes, missing bases, and errors.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "dn.h"
#include "entry.h"
#include "lumen_error.h"
#include "monitor.h"
#include "schema.h"
#include "stats.h"

static struct schema *schema;           /* core + lumen + monitor */
static struct schema *schema_without;   /* core + lumen only */

static struct schema *load_schema(bool with_monitor)
{
	static const char *const files[] = { "schema/core.schema", "schema/lumen.schema",
					     "schema/monitor.schema" };
	char err[512] = "";
	struct schema *s = NULL;
	ck_assert_int_eq(schema_create(&s), LUMEN_OK);
	for (size_t i = 0; i < (with_monitor ? 3u : 2u); i++)
		ck_assert_msg(schema_load_file(s, files[i], err, sizeof(err)) == LUMEN_OK, "%s", err);
	ck_assert_msg(schema_finalize(s, err, sizeof(err)) == LUMEN_OK, "%s", err);
	return s;
}

static void setup(void)
{
	schema = load_schema(true);
	schema_without = load_schema(false);
}

static void teardown(void)
{
	schema_free(schema);
	schema_free(schema_without);
}

/* ------------------------------------------------------------ sources */

static struct stats_snapshot snapshot;
static const struct monitor_connection connections[] = {
	{ .id = 17, .peer = "IP=192.0.2.7:40001", .local = "IP=0.0.0.0:389",
	  .bind_dn = "cn=admin,dc=example,dc=com", .ops_received = 12, .ops_executing = 1,
	  .ops_pending = 2, .ops_completed = 9, .memory = 20480, .started = 1700000000,
	  .last_activity = 1700000100 },
	{ .id = 18, .peer = "PATH=/run/lumen/ldapi", .local = "PATH=/run/lumen/ldapi" },
};
static const struct monitor_listener listeners[] = {
	{ "IP=0.0.0.0:389", "ldap:///" },
	{ "PATH=/run/lumen/ldapi", NULL },
};
static const struct database_figures databases[] = {
	{ .suffix = "dc=example,dc=com", .directory = "/var/lib/lumen", .have_store = true,
	  .map_size = 1073741824, .page_size = 4096, .pages_used = 55, .readers_used = 1,
	  .readers_max = 126, .entries = 1234,
	  .entry_cache = { .size = 10, .capacity = 100, .hits = 11, .misses = 12, .evictions = 13 },
	  .idl_cache = { .size = 20, .capacity = 200, .hits = 21, .misses = 22, .evictions = 23 } },
};

static struct monitor_sources sources(void)
{
	memset(&snapshot, 0, sizeof(snapshot));
	snapshot.connections_total = 7;
	snapshot.connections_current = 3;
	snapshot.initiated[STATS_OP_SEARCH] = 100;
	snapshot.completed[STATS_OP_SEARCH] = 99;
	snapshot.initiated[STATS_OP_BIND] = 5;
	snapshot.completed[STATS_OP_BIND] = 5;
	snapshot.bytes_sent = 4096;
	snapshot.dispatched[STATS_RUN_INLINE] = 60;
	snapshot.dispatched[STATS_RUN_DEFERRED] = 6;
	snapshot.dispatched[STATS_RUN_QUEUED] = 40;
	snapshot.polled_reads = 77;
	snapshot.pdus_sent = 200;
	snapshot.entries_sent = 150;
	snapshot.referrals_sent = 2;
	snapshot.start_time = 1700000000;        /* 2023-11-14 22:13:20 UTC */
	return (struct monitor_sources){
		.schema = schema, .stats = &snapshot, .version = "Lumen 0.1.0",
		.now = 1700003600,
		.connections = connections, .n_connections = 2,
		.listeners = listeners, .n_listeners = 2,
		.threads = { .max = 4, .open = 4, .active = 1, .pending = 3, .backload = 4 },
		.waiters_read = 6, .waiters_write = 1,
		.conn_memory = { .total = 123456, .peak = 234567, .waits = 5, .max_total = 1u << 30,
				 .base = 23456, .queued = 60000, .output = 40000, .tls = 70000,
				 .scratch = 32768, .waiting = 2, .wakeups = 9, .refused = 3,
				 .tls_refused = 4 },
		.databases = databases, .n_databases = 1,
	};
}

/* ---------------------------------------------------------- collecting */

#define MAX_COLLECTED 64

struct collected {
	struct entry *entries[MAX_COLLECTED];
	size_t n;
	size_t stop_after;     /* 0: never stop */
};

static int collect(void *ctx, const struct entry *e)
{
	struct collected *c = ctx;
	if (c->n >= MAX_COLLECTED)
		return LUMEN_ELIMIT;
	if (entry_dup(e, &c->entries[c->n]) != LUMEN_OK)
		return LUMEN_ENOMEM;
	c->n++;
	if (c->stop_after != 0 && c->n == c->stop_after)
		return LUMEN_ELIMIT;
	return LUMEN_OK;
}

static void collected_free(struct collected *c)
{
	for (size_t i = 0; i < c->n; i++)
		entry_free(c->entries[i]);
	c->n = 0;
}

static int build(const struct monitor_sources *src, const char *base, enum ldap_scope scope,
		 struct collected *out)
{
	struct arena arena;
	struct ber_view ndn;
	arena_init(&arena, 0);
	ck_assert_int_eq(dn_normalize(schema, base, strlen(base), &arena, &ndn), LUMEN_OK);
	int rc = monitor_build(src, ndn, scope, collect, out);
	arena_free(&arena);
	return rc;
}

static const struct entry *find_dn(const struct collected *c, const char *dn)
{
	for (size_t i = 0; i < c->n; i++)
		if (ber_view_eq_str(c->entries[i]->dn, dn))
			return c->entries[i];
	return NULL;
}

/* True if the attribute named has exactly this value among its values. */
static bool has_value(const struct entry *e, const char *attribute, const char *value)
{
	const struct attribute_type *at = schema_attribute_type(schema, attribute, strlen(attribute));
	ck_assert_msg(at != NULL, "unknown type %s", attribute);
	const struct entry_attribute *a = entry_find_type(e, at);
	for (size_t i = 0; a != NULL && i < a->n_values; i++)
		if (ber_view_eq_str(a->values[i].value, value))
			return true;
	return false;
}

/* --------------------------------------------------------------- tests */

static const struct {
	const char *dn;
	const char *structural;
	const char *attribute;   /* NULL: only the class is checked */
	const char *value;
} expected[] = {
	{ "cn=Monitor", "monitorServer", "monitoredInfo", "Lumen 0.1.0" },
	{ "cn=Connections,cn=Monitor", "monitorContainer", "hasSubordinates", "TRUE" },
	{ "cn=Total,cn=Connections,cn=Monitor", "monitorCounterObject", "monitorCounter", "7" },
	{ "cn=Current,cn=Connections,cn=Monitor", "monitorCounterObject", "monitorCounter", "3" },
	{ "cn=Memory,cn=Connections,cn=Monitor", "monitorCounterObject", "monitorCounter",
	  "123456" },
	{ "cn=Memory Peak,cn=Connections,cn=Monitor", "monitorCounterObject", "monitorCounter",
	  "234567" },
	{ "cn=Memory Limit,cn=Connections,cn=Monitor", "monitorCounterObject", "monitorCounter",
	  "1073741824" },
	{ "cn=Memory Waits,cn=Connections,cn=Monitor", "monitorCounterObject", "monitorCounter",
	  "5" },
	{ "cn=Memory Base,cn=Connections,cn=Monitor", "monitorCounterObject", "monitorCounter",
	  "23456" },
	{ "cn=Memory Queued,cn=Connections,cn=Monitor", "monitorCounterObject", "monitorCounter",
	  "60000" },
	{ "cn=Memory Output,cn=Connections,cn=Monitor", "monitorCounterObject", "monitorCounter",
	  "40000" },
	{ "cn=Memory Waiting,cn=Connections,cn=Monitor", "monitorCounterObject", "monitorCounter",
	  "2" },
	{ "cn=Memory Wakeups,cn=Connections,cn=Monitor", "monitorCounterObject", "monitorCounter",
	  "9" },
	{ "cn=Memory Refused,cn=Connections,cn=Monitor", "monitorCounterObject", "monitorCounter",
	  "3" },
	{ "cn=Memory TLS,cn=Connections,cn=Monitor", "monitorCounterObject", "monitorCounter",
	  "70000" },
	{ "cn=Memory Scratch,cn=Connections,cn=Monitor", "monitorCounterObject", "monitorCounter",
	  "32768" },
	{ "cn=Memory TLS Refused,cn=Connections,cn=Monitor", "monitorCounterObject",
	  "monitorCounter", "4" },
	{ "cn=Connection 17,cn=Connections,cn=Monitor", "monitorConnection",
	  "monitorConnectionMemory", "20480" },
	{ "cn=Connection 17,cn=Connections,cn=Monitor", "monitorConnection",
	  "monitorConnectionPeerAddress", "IP=192.0.2.7:40001" },
	{ "cn=Connection 17,cn=Connections,cn=Monitor", "monitorConnection",
	  "monitorConnectionAuthzDN", "cn=admin,dc=example,dc=com" },
	{ "cn=Connection 17,cn=Connections,cn=Monitor", "monitorConnection",
	  "monitorConnectionOpsCompleted", "9" },
	{ "cn=Connection 17,cn=Connections,cn=Monitor", "monitorConnection",
	  "monitorConnectionStartTime", "20231114221320Z" },
	{ "cn=Connection 18,cn=Connections,cn=Monitor", "monitorConnection",
	  "monitorConnectionNumber", "18" },
	{ "cn=Operations,cn=Monitor", "monitorContainer", "monitorOpInitiated", "105" },
	{ "cn=Operations,cn=Monitor", "monitorContainer", "monitorOpCompleted", "104" },
	{ "cn=Search,cn=Operations,cn=Monitor", "monitorOperation", "monitorOpInitiated", "100" },
	{ "cn=Search,cn=Operations,cn=Monitor", "monitorOperation", "monitorOpCompleted", "99" },
	{ "cn=Bind,cn=Operations,cn=Monitor", "monitorOperation", "monitorOpCompleted", "5" },
	{ "cn=Modrdn,cn=Operations,cn=Monitor", "monitorOperation", "monitorOpInitiated", "0" },
	{ "cn=Abandon,cn=Operations,cn=Monitor", "monitorOperation", NULL, NULL },
	{ "cn=Extended,cn=Operations,cn=Monitor", "monitorOperation", NULL, NULL },
	{ "cn=Unbind,cn=Operations,cn=Monitor", "monitorOperation", NULL, NULL },
	{ "cn=Bytes,cn=Statistics,cn=Monitor", "monitorCounterObject", "monitorCounter", "4096" },
	{ "cn=PDU,cn=Statistics,cn=Monitor", "monitorCounterObject", "monitorCounter", "200" },
	{ "cn=Entries,cn=Statistics,cn=Monitor", "monitorCounterObject", "monitorCounter", "150" },
	{ "cn=Referrals,cn=Statistics,cn=Monitor", "monitorCounterObject", "monitorCounter", "2" },
	{ "cn=Max,cn=Threads,cn=Monitor", "monitoredObject", "monitoredInfo", "4" },
	{ "cn=Pending,cn=Threads,cn=Monitor", "monitoredObject", "monitoredInfo", "3" },
	{ "cn=Inline,cn=Threads,cn=Monitor", "monitorCounterObject", "monitorCounter", "60" },
	{ "cn=Deferred,cn=Threads,cn=Monitor", "monitorCounterObject", "monitorCounter", "6" },
	{ "cn=Queued,cn=Threads,cn=Monitor", "monitorCounterObject", "monitorCounter", "40" },
	{ "cn=Polled,cn=Threads,cn=Monitor", "monitorCounterObject", "monitorCounter", "77" },
	{ "cn=Start,cn=Time,cn=Monitor", "monitoredObject", "monitorTimestamp", "20231114221320Z" },
	{ "cn=Current,cn=Time,cn=Monitor", "monitoredObject", "monitorTimestamp", "20231114231320Z" },
	{ "cn=Uptime,cn=Time,cn=Monitor", "monitoredObject", "monitoredInfo", "3600" },
	{ "cn=Read,cn=Waiters,cn=Monitor", "monitorCounterObject", "monitorCounter", "6" },
	{ "cn=Write,cn=Waiters,cn=Monitor", "monitorCounterObject", "monitorCounter", "1" },
	{ "cn=Listener 0,cn=Listeners,cn=Monitor", "monitoredObject",
	  "monitorConnectionLocalAddress", "IP=0.0.0.0:389" },
	{ "cn=Listener 0,cn=Listeners,cn=Monitor", "monitoredObject", "labeledURI", "ldap:///" },
	{ "cn=Listener 1,cn=Listeners,cn=Monitor", "monitoredObject",
	  "monitorConnectionLocalAddress", "PATH=/run/lumen/ldapi" },
	{ "cn=Database 1,cn=Databases,cn=Monitor", "monitoredObject", "namingContexts",
	  "dc=example,dc=com" },
	{ "cn=Database 1,cn=Databases,cn=Monitor", "monitoredObject", "monitoredInfo", "mdb" },
	{ "cn=Database 1,cn=Databases,cn=Monitor", "monitoredObject", "monitoredInfo",
	  "entries=1234" },
	{ "cn=Database 1,cn=Databases,cn=Monitor", "monitoredObject", "monitoredInfo",
	  "pagesUsed=55" },
	{ "cn=Database 1,cn=Databases,cn=Monitor", "monitoredObject", "monitoredInfo",
	  "entryCacheHits=11" },
	{ "cn=Database 1,cn=Databases,cn=Monitor", "monitoredObject", "monitoredInfo",
	  "idlCacheEvictions=23" },
	{ "cn=Database 1,cn=Databases,cn=Monitor", "monitoredObject", "readOnly", "FALSE" },
	{ "cn=Database 1,cn=Databases,cn=Monitor", "monitoredObject", "hasSubordinates", "FALSE" },
};

/* root 1, Connections 1+2+10+2, Operations 1+10, Statistics 1+4, Threads 1+8,
 * Time 1+3, Waiters 1+2, Listeners 1+2, Databases 1+1 */
#define TREE_SIZE 57

START_TEST(whole_tree)
{
	struct monitor_sources src = sources();
	struct collected c = { .n = 0 };
	ck_assert_int_eq(build(&src, "cn=Monitor", LDAP_SCOPE_SUBTREE, &c), LUMEN_OK);
	ck_assert_uint_eq(c.n, TREE_SIZE);
	ck_assert(ber_view_eq_str(c.entries[0]->dn, "cn=Monitor"));
	/* preorder: a parent always comes before its children; DNs unique */
	for (size_t i = 0; i < c.n; i++) {
		struct ber_view rdn, parent;
		dn_split_first(c.entries[i]->ndn, &rdn, &parent);
		bool parent_seen = i == 0;
		for (size_t j = 0; j < i; j++) {
			ck_assert(c.entries[j]->ndn.len != c.entries[i]->ndn.len ||
				  memcmp(c.entries[j]->ndn.ptr, c.entries[i]->ndn.ptr,
					 c.entries[i]->ndn.len) != 0);
			if (c.entries[j]->ndn.len == parent.len &&
			    memcmp(c.entries[j]->ndn.ptr, parent.ptr, parent.len) == 0)
				parent_seen = true;
		}
		ck_assert_msg(parent_seen, "entry %zu before its parent", i);
	}
	for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++) {
		const struct entry *e = find_dn(&c, expected[i].dn);
		ck_assert_msg(e != NULL, "missing %s", expected[i].dn);
		ck_assert_ptr_nonnull(e->structural);
		ck_assert_str_eq(object_class_name(e->structural), expected[i].structural);
		ck_assert(!e->unknown_class);
		if (expected[i].attribute != NULL)
			ck_assert_msg(has_value(e, expected[i].attribute, expected[i].value),
				      "%s: no %s: %s", expected[i].dn, expected[i].attribute,
				      expected[i].value);
	}
	/* left out when unknown: anonymous connection, listener without URL */
	const struct entry *anonymous = find_dn(&c, "cn=Connection 18,cn=Connections,cn=Monitor");
	const struct attribute_type *authz =
		schema_attribute_type(schema, "monitorConnectionAuthzDN", 24);
	ck_assert_ptr_null(entry_find_type(anonymous, authz));
	collected_free(&c);
}
END_TEST

static const struct {
	const char *base;
	enum ldap_scope scope;
	size_t count;
	const char *first;       /* DN of the first entry, NULL: not checked */
} scope_cases[] = {
	{ "cn=Monitor", LDAP_SCOPE_BASE, 1, "cn=Monitor" },
	{ "CN=MONITOR", LDAP_SCOPE_BASE, 1, "cn=Monitor" },
	{ "cn=Monitor", LDAP_SCOPE_ONE, 8, "cn=Connections,cn=Monitor" },
	{ "cn=Monitor", LDAP_SCOPE_CHILDREN, TREE_SIZE - 1, "cn=Connections,cn=Monitor" },
	{ "cn=Operations,cn=Monitor", LDAP_SCOPE_ONE, 10, "cn=Bind,cn=Operations,cn=Monitor" },
	{ "cn=Operations,cn=Monitor", LDAP_SCOPE_SUBTREE, 11, "cn=Operations,cn=Monitor" },
	{ "cn=Connections,cn=Monitor", LDAP_SCOPE_ONE, 17, "cn=Total,cn=Connections,cn=Monitor" },
	{ "cn=Search,cn=Operations,cn=Monitor", LDAP_SCOPE_BASE, 1,
	  "cn=Search,cn=Operations,cn=Monitor" },
	{ "cn=Search,cn=Operations,cn=Monitor", LDAP_SCOPE_ONE, 0, NULL },
	{ "cn=Search,cn=Operations,cn=Monitor", LDAP_SCOPE_SUBTREE, 1, NULL },
	{ "cn=Connection 18,cn=Connections,cn=Monitor", LDAP_SCOPE_BASE, 1,
	  "cn=Connection 18,cn=Connections,cn=Monitor" },
	{ "cn=Database 1,cn=Databases,cn=Monitor", LDAP_SCOPE_SUBTREE, 1,
	  "cn=Database 1,cn=Databases,cn=Monitor" },
	{ "cn=Uptime,cn=Time,cn=Monitor", LDAP_SCOPE_BASE, 1, NULL },
};

START_TEST(scopes)
{
	struct monitor_sources src = sources();
	for (size_t i = 0; i < sizeof(scope_cases) / sizeof(scope_cases[0]); i++) {
		struct collected c = { .n = 0 };
		ck_assert_int_eq(build(&src, scope_cases[i].base, scope_cases[i].scope, &c), LUMEN_OK);
		ck_assert_msg(c.n == scope_cases[i].count, "%s scope %d: %zu entries",
			      scope_cases[i].base, scope_cases[i].scope, c.n);
		if (scope_cases[i].first != NULL)
			ck_assert(ber_view_eq_str(c.entries[0]->dn, scope_cases[i].first));
		collected_free(&c);
	}
}
END_TEST

START_TEST(missing_bases)
{
	static const char *const bases[] = {
		"cn=Nothing,cn=Monitor",
		"cn=Connection 99,cn=Connections,cn=Monitor",
		"cn=Database 2,cn=Databases,cn=Monitor",
		"cn=Listener 2,cn=Listeners,cn=Monitor",
		"cn=X,cn=Search,cn=Operations,cn=Monitor",
		"dc=example,dc=com",
		"cn=Monitor,dc=example,dc=com",
		"",
	};
	struct monitor_sources src = sources();
	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		for (int scope = LDAP_SCOPE_BASE; scope <= LDAP_SCOPE_CHILDREN; scope++) {
			struct collected c = { .n = 0 };
			ck_assert_msg(build(&src, bases[i], (enum ldap_scope)scope, &c) ==
					      LUMEN_ENOTFOUND, "%s scope %d", bases[i], scope);
			ck_assert_uint_eq(c.n, 0);
		}
	}
}
END_TEST

START_TEST(callback_stops_walk)
{
	struct monitor_sources src = sources();
	struct collected c = { .stop_after = 3 };
	ck_assert_int_eq(build(&src, "cn=Monitor", LDAP_SCOPE_SUBTREE, &c), LUMEN_ELIMIT);
	ck_assert_uint_eq(c.n, 3);
	collected_free(&c);
}
END_TEST

START_TEST(bad_arguments)
{
	struct monitor_sources src = sources();
	struct ber_view base = { (const uint8_t *)"cn=monitor", 10 };
	struct collected c = { .n = 0 };
	ck_assert_int_eq(monitor_build(NULL, base, LDAP_SCOPE_BASE, collect, &c), LUMEN_EINVAL);
	ck_assert_int_eq(monitor_build(&src, base, LDAP_SCOPE_BASE, NULL, &c), LUMEN_EINVAL);
	ck_assert_int_eq(monitor_build(&src, base, (enum ldap_scope)7, collect, &c), LUMEN_EINVAL);
	src.stats = NULL;
	ck_assert_int_eq(monitor_build(&src, base, LDAP_SCOPE_BASE, collect, &c), LUMEN_EINVAL);
	src = sources();
	src.schema = NULL;
	ck_assert_int_eq(monitor_build(&src, base, LDAP_SCOPE_BASE, collect, &c), LUMEN_EINVAL);
	src.schema = schema_without;
	ck_assert_int_eq(monitor_build(&src, base, LDAP_SCOPE_BASE, collect, &c),
			 LUMEN_EUNSUPPORTED);
	ck_assert_uint_eq(c.n, 0);
}
END_TEST

START_TEST(empty_server)
{
	/* nothing open, no listener, no database: containers only */
	struct monitor_sources src = sources();
	src.n_connections = 0;
	src.n_listeners = 0;
	src.n_databases = 0;
	src.version = NULL;
	src.now = 0;
	struct collected c = { .n = 0 };
	ck_assert_int_eq(build(&src, "cn=Monitor", LDAP_SCOPE_SUBTREE, &c), LUMEN_OK);
	ck_assert_uint_eq(c.n, TREE_SIZE - 5);
	ck_assert(!has_value(c.entries[0], "monitoredInfo", "Lumen 0.1.0"));
	ck_assert_ptr_nonnull(find_dn(&c, "cn=Databases,cn=Monitor"));
	collected_free(&c);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("monitor");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, whole_tree);
	tcase_add_test(tc, scopes);
	tcase_add_test(tc, missing_bases);
	tcase_add_test(tc, callback_stops_walk);
	tcase_add_test(tc, bad_arguments);
	tcase_add_test(tc, empty_server);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
