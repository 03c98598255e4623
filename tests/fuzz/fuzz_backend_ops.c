/*
 * fuzz_backend_ops.c — libFuzzer target for the back-mdb operations
 * (backend.h) driven by decoded LDAP requests: Add, Delete, Modify,
 * ModifyDN, Search and Compare, with their controls (Assertion, Pre-/Post-
 * Read, Paged Results, ManageDsaIT; controls.h), on a small real LMDB
 * database.
 *
 * fuzz-layers: proto model backmdb config server
 * fuzz-max-len: 4096
 *
 * This is the structure-aware path below the operation handlers: it needs
 * no connection, so it calls the backend as op_target.c would (DNs
 * normalized with dn_normalize, filters compiled with the decode limits,
 * the rootdn's rights), without access control.
 *
 * Set-up (once per process): a template database in a mkdtemp directory
 * under $TMPDIR, holding a tree of 11 entries (suffix, two OUs, people with
 * posixAccount and UTF-8 names, a group) with eq/pres/sub/approx indexes.
 * Each input gets a fresh copy of it (files copied, backend opened with
 * small caches so evictions happen), then up to 32 LDAPMessages, read one
 * after the other from the input (each a complete BER element; decoding
 * stops at the first that is not), are applied in order.
 *
 * Invariants, after each operation: it returns LUMEN_OK (an internal
 * failure on a 64 MiB map is a bug) with a known result code; a successful
 * Add/ModifyDN makes the new name fetchable and a successful Delete/
 * ModifyDN makes the old one disappear; Pre/Post-Read entries carry the
 * operation's DN; every entry a search returns lies in its scope and
 * (when no computed attribute is named) matches its filter. After all
 * operations: backend_check_indexes finds no problem, and a subtree
 * search with counts agrees with the tree (every entry's parent is there,
 * numSubordinates/hasSubordinates equal the children actually found,
 * every entry fetches by its name). Everything is freed (LeakSanitizer).
 * Seeds: tests/fuzz/corpus/fuzz_backend_ops/ (sequences of requests,
 * built by tests/fuzz/seeds/gen_backend_ops.py).
 */
#include <dirent.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "fuzz_shipped_schema.h"
#include "backend.h"
#include "controls.h"
#include "dn.h"
#include "filter.h"
#include "ldap_result_codes.h"
#include "lumen_error.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_OPS 32
#define MAX_TREE 512
#define SUFFIX "dc=example,dc=com"

static struct schema *schema;
static char template_dir[4096], work_dir[4096];
static struct ber_view suffix_ndn;
static struct arena fixed;                 /* lives as long as the process */
static const struct attribute_type *virtual_types[4];
static struct filter_virtual virtuals;

static const struct backend_index_spec indexes[] = {
	{ "default", BACKEND_INDEX_EQUALITY },
	{ "objectClass", 0 },
	{ "cn", BACKEND_INDEX_PRESENT | BACKEND_INDEX_EQUALITY | BACKEND_INDEX_SUBSTRING },
	{ "sn", BACKEND_INDEX_EQUALITY | BACKEND_INDEX_SUBSTRING | BACKEND_INDEX_APPROX },
	{ "uid", 0 },
	{ "mail", BACKEND_INDEX_EQUALITY | BACKEND_INDEX_SUBSTRING },
	{ "member", BACKEND_INDEX_EQUALITY },
	{ "uidNumber", BACKEND_INDEX_EQUALITY },
};

static const char *const tree[] = {
	SUFFIX, "objectClass: top\nobjectClass: dcObject\nobjectClass: organization\n"
		"dc: example\no: Example Corp",
	"ou=People," SUFFIX, "objectClass: organizationalUnit\nou: People",
	"ou=Groups," SUFFIX, "objectClass: organizationalUnit\nou: Groups",
	"ou=Engineering,ou=People," SUFFIX,
		"objectClass: organizationalUnit\nou: Engineering\ndescription: builds things",
	"uid=alice,ou=People," SUFFIX,
		"objectClass: inetOrgPerson\nuid: alice\ncn: Alice Smith\ncn: Ali\nsn: Smith\n"
		"mail: alice@example.com\ntelephoneNumber: +1 555 0100\ndescription: first",
	"uid=bob,ou=People," SUFFIX,
		"objectClass: inetOrgPerson\nuid: bob\ncn: Bob Smyth\nsn: Smyth\nmail: bob@example.com",
	"cn=J\xc3\xbcrgen M\xc3\xbcller,ou=People," SUFFIX,
		"objectClass: inetOrgPerson\nuid: jmueller\ncn: J\xc3\xbcrgen M\xc3\xbcller\n"
		"sn: M\xc3\xbcller\ndescription: \xc3\xa9t\xc3\xa9",
	"cn=Smith\\, John,ou=People," SUFFIX, "objectClass: person\ncn: Smith, John\nsn: Smith",
	"uid=carol,ou=Engineering,ou=People," SUFFIX,
		"objectClass: inetOrgPerson\nobjectClass: posixAccount\nuid: carol\ncn: Carol\n"
		"sn: Jones\nuidNumber: 1001\ngidNumber: 100\nhomeDirectory: /home/carol",
	"uid=dave,ou=Engineering,ou=People," SUFFIX,
		"objectClass: inetOrgPerson\nuid: dave\ncn: Dave\nsn: Brown",
	"cn=admins,ou=Groups," SUFFIX,
		"objectClass: groupOfNames\ncn: admins\nmember: uid=alice,ou=People," SUFFIX
		"\nmember: uid=bob,ou=People," SUFFIX,
};

static struct ber_view view(const char *s)
{
	return (struct ber_view){ (const uint8_t *)s, strlen(s) };
}

static bool same(struct ber_view a, struct ber_view b)
{
	return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

static void die(const char *what, int rc)
{
	fprintf(stderr, "fuzz_backend_ops: %s: %s\n", what, lumen_strerror(rc));
	abort();
}

static int open_backend(const char *dir, struct backend **be)
{
	const char *suffixes[] = { SUFFIX };
	char err[512] = "";
	struct backend_settings settings = {
		.suffixes = suffixes, .n_suffixes = 1, .directory = dir,
		.maxsize = (size_t)64 << 20, .dbnosync = true,
		.indexes = indexes, .n_indexes = sizeof(indexes) / sizeof(indexes[0]),
		.cachesize = 4, .idlcachesize = 16, /* small: evictions and misses */
	};
	int rc = backend_open(schema, &settings, be, err, sizeof(err));
	if (rc != LUMEN_OK)
		fprintf(stderr, "fuzz_backend_ops: backend_open: %s\n", err);
	return rc;
}

/* Splits "type: value" lines (consecutive lines of one type form one
 * attribute) into attrs; the views point into buf. */
static size_t template_attributes(char *buf, struct ldap_attribute *attrs, size_t cap,
				  struct ber_view *values, size_t values_cap)
{
	size_t n = 0, n_values = 0;
	char *save = NULL;

	for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strstr(line, ": ");
		if (colon == NULL || n_values == values_cap)
			abort();
		struct ber_view type = { (const uint8_t *)line, (size_t)(colon - line) };
		if (n == 0 || attrs[n - 1].type.len != type.len ||
		    memcmp(attrs[n - 1].type.ptr, type.ptr, type.len) != 0) {
			if (n == cap)
				abort();
			attrs[n++] = (struct ldap_attribute){ .type = type, .values = &values[n_values] };
		}
		values[n_values++] = view(colon + 2);
		attrs[n - 1].n_values++;
	}
	return n;
}

static void add_template_entry(struct backend *be, const char *dn, const char *lines)
{
	struct arena arena;
	char buf[1024];
	struct ldap_attribute attrs[16];
	struct ber_view values[32];
	struct ber_view ndn;
	struct backend_op op;

	arena_init(&arena, 0);
	snprintf(buf, sizeof(buf), "%s", lines);
	size_t n = template_attributes(buf, attrs, 16, values, 32);
	if (dn_normalize(schema, dn, strlen(dn), &arena, &ndn) != LUMEN_OK)
		abort();
	memset(&op, 0, sizeof(op));
	op.arena = &arena;
	op.is_root = true;
	int rc = backend_add(be, &op, view(dn), ndn, attrs, n);
	if (rc != LUMEN_OK || op.result_code != LDAP_SUCCESS) {
		fprintf(stderr, "fuzz_backend_ops: template %s: %s\n", dn,
			op.diagnostic ? op.diagnostic : lumen_strerror(rc));
		abort();
	}
	arena_free(&arena);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void remove_dirs(void)
{
	nftw(template_dir, remove_one, 8, FTW_DEPTH | FTW_PHYS);
	nftw(work_dir, remove_one, 8, FTW_DEPTH | FTW_PHYS);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const virtual_oids[] = { "1.3.6.1.1.20", "2.5.18.10", "2.5.18.9",
						    "1.3.6.1.4.1.453.16.2.103" };
	const char *tmp = getenv("TMPDIR");
	struct backend *be;

	(void)argc;
	(void)argv;
	schema = fuzz_load_schema("fuzz_backend_ops", fuzz_schema_files, 5);
	for (size_t i = 0; i < 4; i++) {
		virtual_types[i] = schema_attribute_type(schema, virtual_oids[i], strlen(virtual_oids[i]));
		if (virtual_types[i] == NULL)
			abort();
	}
	virtuals.types = virtual_types;
	virtuals.n_types = 4;
	arena_init(&fixed, 0);
	if (dn_normalize(schema, SUFFIX, strlen(SUFFIX), &fixed, &suffix_ndn) != LUMEN_OK)
		abort();

	snprintf(template_dir, sizeof(template_dir), "%s/fuzz_backend_ops-t-XXXXXX",
		 tmp && tmp[0] ? tmp : "/tmp");
	snprintf(work_dir, sizeof(work_dir), "%s/fuzz_backend_ops-w-XXXXXX",
		 tmp && tmp[0] ? tmp : "/tmp");
	if (mkdtemp(template_dir) == NULL || mkdtemp(work_dir) == NULL) {
		perror("fuzz_backend_ops: mkdtemp");
		abort();
	}
	atexit(remove_dirs);
	if (open_backend(template_dir, &be) != LUMEN_OK)
		abort();
	for (size_t i = 0; i < sizeof(tree) / sizeof(tree[0]); i += 2)
		add_template_entry(be, tree[i], tree[i + 1]);
	backend_close(be);
	return 0;
}

/* Work directory := template (every file but the lock file). */
static void fresh_copy(void)
{
	DIR *d = opendir(template_dir);
	struct dirent *de;
	char from[8192], to[8192];
	static char buf[1 << 16];

	if (d == NULL)
		abort();
	snprintf(to, sizeof(to), "%s/lock.mdb", work_dir);
	unlink(to);
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || strcmp(de->d_name, "lock.mdb") == 0)
			continue;
		snprintf(from, sizeof(from), "%s/%s", template_dir, de->d_name);
		snprintf(to, sizeof(to), "%s/%s", work_dir, de->d_name);
		FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
		if (in == NULL || out == NULL)
			abort();
		size_t n;
		while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
			if (fwrite(buf, 1, n, out) != n)
				abort();
		fclose(in);
		if (fclose(out) != 0)
			abort();
	}
	closedir(d);
}

/* ------------------------------------------------------------ checks */

struct fetched {
	bool found;
	struct ber_view ndn;   /* a copy in arena: the entry lives only during the call */
	struct arena *arena;
};

static int fetch_sink(void *ctx, const struct entry *e, const struct backend_entry_info *info)
{
	struct fetched *f = ctx;
	if (!same(info->ndn, e->ndn) || !same(info->dn, e->dn))
		abort();
	uint8_t *copy = arena_alloc(f->arena, info->ndn.len + 1);
	if (copy == NULL)
		abort();
	memcpy(copy, info->ndn.ptr, info->ndn.len);
	f->found = true;
	f->ndn = (struct ber_view){ copy, info->ndn.len };
	return 0;
}

/* True if ndn names an entry; aborts on internal failures. */
static bool exists(struct backend *be, struct ber_view ndn)
{
	struct arena arena;
	struct backend_op op;
	arena_init(&arena, 0);
	struct fetched f = { false, { NULL, 0 }, &arena };

	memset(&op, 0, sizeof(op));
	op.arena = &arena;
	op.is_root = true;
	int rc = backend_fetch(be, &op, ndn, fetch_sink, &f);
	if (rc != LUMEN_OK)
		die("fetch", rc);
	if ((op.result_code == LDAP_SUCCESS) != f.found ||
	    (op.result_code != LDAP_SUCCESS && op.result_code != LDAP_NO_SUCH_OBJECT))
		abort();
	if (f.found && !same(f.ndn, ndn))
		abort();
	arena_free(&arena);
	return f.found;
}

struct search_check {
	struct ber_view base;
	enum ldap_scope scope;
	const struct filter *filter;
	bool filter_checkable;
	uint64_t n;
};

static bool in_scope(struct ber_view ndn, struct ber_view base, enum ldap_scope scope)
{
	struct ber_view rdn, parent;
	switch (scope) {
	case LDAP_SCOPE_BASE:
		return same(ndn, base);
	case LDAP_SCOPE_ONE:
		dn_split_first(ndn, &rdn, &parent);
		return !same(ndn, base) && same(parent, base);
	case LDAP_SCOPE_SUBTREE:
		return dn_is_within(ndn, base);
	case LDAP_SCOPE_CHILDREN:
		return !same(ndn, base) && dn_is_within(ndn, base);
	}
	return false;
}

static int search_sink(void *ctx, const struct entry *e, const struct backend_entry_info *info)
{
	struct search_check *c = ctx;
	if (!same(info->ndn, e->ndn) || !in_scope(info->ndn, c->base, c->scope)) {
		fprintf(stderr, "fuzz_backend_ops: entry \"%.*s\" out of scope %d of \"%.*s\"\n",
			(int)info->ndn.len, (const char *)info->ndn.ptr, (int)c->scope,
			(int)c->base.len, (const char *)c->base.ptr);
		abort();
	}
	if (c->filter != NULL && c->filter_checkable &&
	    filter_evaluate(c->filter, e) != FILTER_TRUE) {
		fprintf(stderr, "fuzz_backend_ops: entry \"%.*s\" does not match the filter\n",
			(int)info->ndn.len, (const char *)info->ndn.ptr);
		abort();
	}
	c->n++;
	return 0;
}

struct node {
	struct ber_view ndn;
	uint64_t num_subordinates;
	bool has_subordinates;
};

struct walk {
	struct node nodes[MAX_TREE];
	size_t n;
	struct arena *arena;
};

static int walk_sink(void *ctx, const struct entry *e, const struct backend_entry_info *info)
{
	struct walk *w = ctx;
	(void)e;
	if (!info->has_counts || w->n == MAX_TREE)
		abort();
	struct node *nd = &w->nodes[w->n++];
	uint8_t *copy = arena_memdup(w->arena, info->ndn.ptr, info->ndn.len);
	if (copy == NULL && info->ndn.len > 0)
		abort();
	nd->ndn = (struct ber_view){ copy, info->ndn.len };
	nd->num_subordinates = info->num_subordinates;
	nd->has_subordinates = info->has_subordinates;
	return 0;
}

static void problem(void *ctx, const char *text)
{
	(void)ctx;
	fprintf(stderr, "fuzz_backend_ops: index problem: %s\n", text);
}

/* The tree and the indexes agree with the entries. */
static void check_database(struct backend *be)
{
	uint64_t problems = 0;
	int rc = backend_check_indexes(be, problem, NULL, &problems);
	if (rc != LUMEN_OK)
		die("check_indexes", rc);
	if (problems != 0)
		abort();

	struct arena arena;
	struct backend_op op;
	struct walk *w = calloc(1, sizeof(*w));
	if (w == NULL)
		abort();
	arena_init(&arena, 0);
	memset(&op, 0, sizeof(op));
	op.arena = &arena;
	op.is_root = true;
	w->arena = &arena;
	struct backend_search s = { .base_ndn = suffix_ndn, .scope = LDAP_SCOPE_SUBTREE,
				    .want_counts = true, .sink = walk_sink, .sink_ctx = w };
	rc = backend_search(be, &op, &s);
	if (rc != LUMEN_OK)
		die("subtree search", rc);
	if (op.result_code == LDAP_NO_SUCH_OBJECT) {
		if (w->n != 0 || exists(be, suffix_ndn))
			abort();
		goto done;
	}
	if (op.result_code != LDAP_SUCCESS)
		abort();
	for (size_t i = 0; i < w->n; i++) {
		struct ber_view rdn, parent;
		uint64_t children = 0;
		for (size_t j = 0; j < w->n; j++) {
			dn_split_first(w->nodes[j].ndn, &rdn, &parent);
			if (j != i && same(parent, w->nodes[i].ndn))
				children++;
		}
		if (w->nodes[i].num_subordinates != children ||
		    w->nodes[i].has_subordinates != (children > 0)) {
			fprintf(stderr, "fuzz_backend_ops: \"%.*s\" counts %llu children, has %llu\n",
				(int)w->nodes[i].ndn.len, (const char *)w->nodes[i].ndn.ptr,
				(unsigned long long)w->nodes[i].num_subordinates,
				(unsigned long long)children);
			abort();
		}
		if (!same(w->nodes[i].ndn, suffix_ndn)) {
			bool parent_found = false;
			dn_split_first(w->nodes[i].ndn, &rdn, &parent);
			for (size_t j = 0; j < w->n && !parent_found; j++)
				parent_found = same(parent, w->nodes[j].ndn);
			if (!parent_found)
				abort();
		}
		if (!exists(be, w->nodes[i].ndn))
			abort();
	}
done:
	free(w);
	arena_free(&arena);
}

static bool known_code(int code)
{
	return strcmp(ldap_result_name(code), "unknown") != 0;
}

/* ----------------------------------------------------------- operations */

/* Normalize a request DN as the server does; false: the server would
 * answer invalidDNSyntax (or noSuchObject) without calling the backend. */
static bool normalize(struct ber_view dn, struct arena *arena, struct ber_view *ndn)
{
	return dn_normalize(schema, (const char *)dn.ptr, dn.len, arena, ndn) == LUMEN_OK;
}

static void check_read_entry(const struct entry *e, struct ber_view ndn)
{
	if (e != NULL && !same(e->ndn, ndn))
		abort();
}

static void apply(struct backend *be, const struct ldap_message *msg, struct arena *arena)
{
	struct ldap_decode_limits limits;
	struct request_controls ctl;
	const char *why = NULL;
	struct backend_op op;
	struct ber_view ndn, new_superior = { NULL, 0 };
	int rc;

	ldap_decode_limits_default(&limits);
	if (controls_parse(msg, schema, &limits, arena, &ctl, &why) != LUMEN_OK)
		return;                 /* answered by the server, before the backend */
	memset(&op, 0, sizeof(op));
	op.arena = arena;
	op.is_root = true;
	op.requester_ndn = view("cn=manager," SUFFIX);
	op.assertion = ctl.has_assertion ? &ctl.assertion : NULL;
	op.want_pre_read = ctl.pre_read;
	op.want_post_read = ctl.post_read;
	op.manage_dsa_it = ctl.manage_dsa_it;

	switch (msg->op) {
	case LDAP_OP_ADD_REQUEST:
		if (!normalize(msg->u.add.entry, arena, &ndn))
			return;
		rc = backend_add(be, &op, msg->u.add.entry, ndn, msg->u.add.attributes,
				 msg->u.add.n_attributes);
		if (rc != LUMEN_OK)
			die("add", rc);
		if (op.result_code == LDAP_SUCCESS && !exists(be, ndn))
			abort();
		check_read_entry(op.post_read, ndn);
		break;
	case LDAP_OP_DELETE_REQUEST:
		if (!normalize(msg->u.delete_dn, arena, &ndn))
			return;
		rc = backend_delete(be, &op, ndn);
		if (rc != LUMEN_OK)
			die("delete", rc);
		if (op.result_code == LDAP_SUCCESS && exists(be, ndn))
			abort();
		check_read_entry(op.pre_read, ndn);
		break;
	case LDAP_OP_MODIFY_REQUEST:
		if (!normalize(msg->u.modify.object, arena, &ndn))
			return;
		rc = backend_modify(be, &op, ndn, msg->u.modify.changes, msg->u.modify.n_changes);
		if (rc != LUMEN_OK)
			die("modify", rc);
		if (op.result_code == LDAP_SUCCESS && !exists(be, ndn))
			abort();
		check_read_entry(op.pre_read, ndn);
		check_read_entry(op.post_read, ndn);
		break;
	case LDAP_OP_MODDN_REQUEST:
		if (!normalize(msg->u.moddn.entry, arena, &ndn))
			return;
		if (msg->u.moddn.has_new_superior &&
		    !normalize(msg->u.moddn.new_superior, arena, &new_superior))
			return;
		rc = backend_modrdn(be, &op, ndn, msg->u.moddn.new_rdn, msg->u.moddn.delete_old_rdn,
				    msg->u.moddn.has_new_superior, new_superior);
		if (rc != LUMEN_OK)
			die("modrdn", rc);
		check_read_entry(op.pre_read, ndn);
		if (op.result_code == LDAP_SUCCESS) {
			if (op.post_read == NULL && op.want_post_read)
				abort();
			if (op.post_read != NULL) {
				/* The new name exists; the old one only if it is the same. */
				if (!exists(be, op.post_read->ndn) ||
				    (!same(op.post_read->ndn, ndn) && exists(be, ndn)))
					abort();
			}
		}
		break;
	case LDAP_OP_COMPARE_REQUEST:
		if (!normalize(msg->u.compare.entry, arena, &ndn))
			return;
		rc = backend_compare(be, &op, ndn, msg->u.compare.attr, msg->u.compare.value);
		if (rc != LUMEN_OK)
			die("compare", rc);
		break;
	case LDAP_OP_SEARCH_REQUEST: {
		const struct ldap_search_request *sr = &msg->u.search;
		struct filter filter;
		struct filter_limits fl = { limits.max_filter_depth, limits.max_filter_nodes };
		if (!normalize(sr->base, arena, &ndn))
			return;
		if (filter_compile(schema, sr->filter, &fl, arena, &filter) != LUMEN_OK)
			return;
		struct search_check check = { ndn, sr->scope, &filter,
					      !filter_names_virtual(&filter, &virtuals), 0 };
		struct backend_search s = {
			.base_ndn = ndn, .scope = sr->scope, .filter = &filter,
			.want_counts = true, .sink = search_sink, .sink_ctx = &check,
			.paged = ctl.paged, .page_size = ctl.page_size, .cookie = ctl.cookie,
			.fingerprint = 42,
		};
		op.request_size_limit = sr->size_limit > 0 ? sr->size_limit : 0;
		op.size_limit = op.request_size_limit;
		rc = backend_search(be, &op, &s);
		if (rc != LUMEN_OK)
			die("search", rc);
		if (op.entries_sent != check.n)
			abort();
		if (op.result_code == LDAP_SIZE_LIMIT_EXCEEDED &&
		    check.n != (uint64_t)op.request_size_limit)
			abort();
		if (s.next_cookie_len > BACKEND_COOKIE_SIZE)
			abort();
		break;
	}
	default:
		return;
	}
	if (!known_code(op.result_code)) {
		fprintf(stderr, "fuzz_backend_ops: %s: unknown result code %d\n",
			ldap_op_name(msg->op), op.result_code);
		abort();
	}
	entry_free(op.pre_read);
	entry_free(op.post_read);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct backend *be;
	struct ber_reader r;
	struct arena arena;
	struct ldap_decode_limits limits;
	size_t ops = 0;

	fresh_copy();
	if (open_backend(work_dir, &be) != LUMEN_OK)
		abort();
	arena_init(&arena, 0);
	ldap_decode_limits_default(&limits);
	ber_reader_init(&r, data, size);
	while (!ber_reader_at_end(&r) && ops < MAX_OPS) {
		const uint8_t *start = r.pos;
		struct ber_element el;
		struct ldap_message msg;
		const char *why = NULL;
		if (ber_read_element(&r, &el) != LUMEN_OK)
			break;
		if (ldap_message_decode(start, (size_t)(r.pos - start), &arena, &limits, &msg,
					&why) != LUMEN_OK)
			break;
		apply(be, &msg, &arena);
		arena_reset(&arena);
		ops++;
	}
	check_database(be);
	arena_free(&arena);
	backend_close(be);
	return 0;
}
