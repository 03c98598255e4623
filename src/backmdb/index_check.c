/*
 * index_check.c — backend_check_indexes: do the index tables and the tree
 * agree with the stored entries? (backend.h lists what is checked.) Used
 * by `lumenindex --check`, the crash tests and the unit tests.
 *
 * One read snapshot, one decode per entry. index_pass_run (tool_load.h)
 * reads id2entry in ID order, checks each entry's name in dn2id and files
 * its keys in postings; each round then merges two sorted streams per
 * index table: the keys the entries of the round's ID window [lo, hi]
 * produce (postings_flush order) and a cursor walking the table in key
 * order, of whose IDs only those inside the window count. The windows
 * partition the IDs, so every listed ID is compared exactly once and a
 * round costs one walk of the tables (the table layout is index_table.h's:
 * 9-byte keys, sorted 8-byte native IDs, a range led by the marker 0).
 *
 * A range is only "extra" when no entry at all produces its key, which no
 * single round can tell: the range keys met in the first round (every
 * round meets every stored key) are kept with a flag, set when a round
 * finds an entry inside, and judged at the end. They are few: a key turns
 * into a range only past IDL_MAX_IDS IDs.
 */
#include "backend_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "array.h"
#include "id2entry.h"
#include "index_postings.h"
#include "tool_load.h"

/* The first duplicate of a key stored as a range (index_table.h). */
#define RANGE_MARKER 0
/* Not a problem of one index table. */
#define NO_TABLE SIZE_MAX

/* A stored range: does any entry producing its key lie inside? */
struct range_key {
	size_t table;
	struct index_key key;
	uint64_t lo, hi;
	bool covered;
};

struct check_run {
	struct backend *be;
	MDB_txn *txn;
	struct arena arena;            /* DNs of the entries being described */
	backend_problem_fn report;
	void *ctx;
	uint64_t max_reported, problems;
	uint64_t *table_problems;
	struct postings *postings;
	uint64_t *bad_ids;             /* entries that do not decode, ascending */
	size_t n_bad, bad_cap;
	struct range_key *ranges;      /* sorted by (table, key) */
	size_t n_ranges, ranges_cap;
	/* the round: entries [lo, hi], the table being walked and its cursor's key */
	uint64_t lo, hi;
	unsigned round;
	size_t table;
	MDB_cursor *cursor;
	bool stored;                   /* the cursor stands on a key */
	struct index_key key;
};

/* ------------------------------------------------------------ reports */

static const char *kind_name(const struct index_key *key)
{
	static const char *const names[] = {
		[INDEX_PRESENCE] = "pres", [INDEX_EQUALITY] = "eq", [INDEX_APPROX] = "approx",
		[INDEX_SUB_INITIAL] = "sub initial", [INDEX_SUB_ANY] = "sub any",
		[INDEX_SUB_FINAL] = "sub final",
	};
	uint8_t kind = key->bytes[0];
	return kind < sizeof(names) / sizeof(names[0]) && names[kind] ? names[kind] : "unknown";
}

static uint64_t key_hash(const struct index_key *key)
{
	uint64_t h = 0;
	for (int i = 1; i < INDEX_KEY_SIZE; i++)
		h = h << 8 | key->bytes[i];
	return h;
}

/* Counts one problem; true when it is to be described to report. */
static bool count_problem(struct check_run *c, size_t table)
{
	c->problems++;
	if (table != NO_TABLE && c->table_problems != NULL)
		c->table_problems[table]++;
	return c->report != NULL && (c->max_reported == 0 || c->problems <= c->max_reported);
}

/* "index ATTR, KIND key HASH: " + the formatted rest, to report. */
static void describe(struct check_run *c, size_t table, const struct index_key *key,
		     const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void describe(struct check_run *c, size_t table, const struct index_key *key,
		     const char *fmt, ...)
{
	char text[768];
	int at = 0;
	va_list ap;

	if (table != NO_TABLE)
		at = snprintf(text, sizeof(text), "index %s%s",
			      attribute_type_name(c->be->indexes[table].type), key ? ", " : ": ");
	if (key != NULL)
		at += snprintf(text + at, sizeof(text) - (size_t)at, "%s key %016" PRIx64 ": ",
			       kind_name(key), key_hash(key));
	va_start(ap, fmt);
	vsnprintf(text + at, sizeof(text) - (size_t)at, fmt, ap);
	va_end(ap);
	c->report(c->ctx, text);
}

/* "entry ID (DN)" into buf, or "entry ID" when it has no name. */
static const char *entry_label(struct check_run *c, uint64_t id, char *buf, size_t len)
{
	struct ber_view ndn;

	arena_reset(&c->arena);
	if (dn2id_names(c->be->store, c->txn, id, &c->arena, &ndn, NULL) == LUMEN_OK)
		snprintf(buf, len, "entry %" PRIu64 " (%.*s)", id, (int)ndn.len,
			 (const char *)ndn.ptr);
	else
		snprintf(buf, len, "entry %" PRIu64, id);
	return buf;
}

static bool is_bad(const struct check_run *c, uint64_t id)
{
	size_t lo = 0, hi = c->n_bad;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->bad_ids[mid] == id)
			return true;
		if (c->bad_ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* An entry that produces key but is not listed under it. */
static void missing(struct check_run *c, const struct index_key *key, uint64_t id)
{
	char label[512];
	if (count_problem(c, c->table))
		describe(c, c->table, key, "%s is not listed", entry_label(c, id, label,
									    sizeof(label)));
}

/* An ID listed under key that no entry producing key has. */
static void extra(struct check_run *c, const struct index_key *key, uint64_t id)
{
	char label[512];
	struct ber_view bytes;

	if (is_bad(c, id) || !count_problem(c, c->table))
		return;
	if (id2entry_get(c->be->store, c->txn, id, &bytes) == LUMEN_ENOTFOUND)
		describe(c, c->table, key, "lists entry %" PRIu64 ", which does not exist", id);
	else
		describe(c, c->table, key, "lists %s, whose values do not produce the key",
			 entry_label(c, id, label, sizeof(label)));
}

/* Every round meets a malformed record: only the first one reports it. */
static void malformed(struct check_run *c, const char *what)
{
	if (c->round == 0 && count_problem(c, c->table))
		describe(c, c->table, NULL, "malformed record: %s", what);
}

/* ------------------------------------------------------------ entries */

static int remember_bad(struct check_run *c, uint64_t id)
{
	uint64_t *ids = array_reserve(c->bad_ids, &c->bad_cap, c->n_bad + 1, sizeof(*ids), 64);
	if (ids == NULL)
		return LUMEN_ENOMEM;
	c->bad_ids = ids;
	c->bad_ids[c->n_bad++] = id;
	return LUMEN_OK;
}

/* Each entry: it decodes, and it has a name in dn2id. */
static int check_entry(void *ctx, uint64_t id, const struct entry *e)
{
	struct check_run *c = ctx;

	if (e == NULL) {
		if (count_problem(c, NO_TABLE))
			describe(c, NO_TABLE, NULL, "entry %" PRIu64 ": record does not decode", id);
		return remember_bad(c, id);
	}
	arena_reset(&c->arena);
	struct ber_view ndn;
	int rc = dn2id_names(c->be->store, c->txn, id, &c->arena, &ndn, NULL);
	if (rc == LUMEN_ENOMEM)
		return rc;
	if (rc != LUMEN_OK && count_problem(c, NO_TABLE))
		describe(c, NO_TABLE, NULL, "entry %" PRIu64 ": no name in dn2id", id);
	return LUMEN_OK;
}

/* ------------------------------------------------------ stored ranges */

static int compare_range_keys(size_t table, const struct index_key *key,
			      const struct range_key *r)
{
	if (table != r->table)
		return table < r->table ? -1 : 1;
	return memcmp(key->bytes, r->key.bytes, INDEX_KEY_SIZE);
}

/* Notes the range under the cursor's key; covered: a round's entry lies inside. */
static int note_range(struct check_run *c, uint64_t lo, uint64_t hi, bool covered)
{
	if (c->round > 0) {   /* the first round listed them all, in this order */
		size_t a = 0, b = c->n_ranges;
		while (a < b) {
			size_t mid = a + (b - a) / 2;
			int cmp = compare_range_keys(c->table, &c->key, &c->ranges[mid]);
			if (cmp == 0) {
				c->ranges[mid].covered |= covered;
				return LUMEN_OK;
			}
			if (cmp < 0)
				b = mid;
			else
				a = mid + 1;
		}
		return LUMEN_OK;
	}
	struct range_key *r = array_reserve(c->ranges, &c->ranges_cap, c->n_ranges + 1,
					    sizeof(*r), 64);
	if (r == NULL)
		return LUMEN_ENOMEM;
	c->ranges = r;
	c->ranges[c->n_ranges++] = (struct range_key){ c->table, c->key, lo, hi, covered };
	return LUMEN_OK;
}

static void judge_ranges(struct check_run *c)
{
	for (size_t i = 0; i < c->n_ranges; i++) {
		const struct range_key *r = &c->ranges[i];
		if (!r->covered && count_problem(c, r->table))
			describe(c, r->table, &r->key,
				 "holds the range %" PRIu64 "-%" PRIu64 " but no entry inside it "
				 "produces the key", r->lo, r->hi);
	}
}

/* ------------------------------------------------------- stored lists */

/* The IDs of the cursor's key inside the round's window, in order. */
struct listed {
	MDB_cursor *cursor;
	uint64_t hi;
	bool have;
	uint64_t id;
};

static int listed_step(struct listed *it, int mrc, const MDB_val *data)
{
	it->have = false;
	if (mrc == MDB_NOTFOUND)
		return LUMEN_OK;
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	if (data->mv_size != sizeof(it->id))
		return LUMEN_EIO;   /* DUPFIXED: the first duplicate had this size */
	memcpy(&it->id, data->mv_data, sizeof(it->id));
	it->have = it->id <= it->hi;
	return LUMEN_OK;
}

static int listed_first(struct check_run *c, struct listed *it)
{
	uint64_t lo = c->lo;
	MDB_val key = { INDEX_KEY_SIZE, c->key.bytes }, data = { sizeof(lo), &lo };

	it->cursor = c->cursor;
	it->hi = c->hi;
	return listed_step(it, mdb_cursor_get(c->cursor, &key, &data, MDB_GET_BOTH_RANGE), &data);
}

static int listed_next(struct listed *it)
{
	MDB_val key, data;
	return listed_step(it, mdb_cursor_get(it->cursor, &key, &data, MDB_NEXT_DUP), &data);
}

/* Merges the window's listed IDs of the cursor's key with ids[0..n). */
static int compare_list(struct check_run *c, const uint64_t *ids, size_t n)
{
	struct listed it;
	size_t i = 0;

	int rc = listed_first(c, &it);
	while (rc == LUMEN_OK && (it.have || i < n)) {
		if (it.have && (i == n || it.id < ids[i])) {
			extra(c, &c->key, it.id);
			rc = listed_next(&it);
		} else if (!it.have || ids[i] < it.id) {
			missing(c, &c->key, ids[i++]);
		} else {
			i++;
			rc = listed_next(&it);
		}
	}
	return rc;
}

/* --------------------------------------------------------- one key */

/* What the cursor's key holds: a range [*lo, *hi], or a list (*is_range false). */
static int stored_shape(struct check_run *c, bool *is_range, uint64_t *lo, uint64_t *hi)
{
	MDB_val key, data;
	uint64_t bounds[3];

	*is_range = false;
	for (int i = 0; i < 3; i++) {
		int mrc = mdb_cursor_get(c->cursor, &key, &data, i == 0 ? MDB_FIRST_DUP
							 : MDB_NEXT_DUP);
		if (mrc != MDB_SUCCESS || data.mv_size != sizeof(bounds[i])) {
			malformed(c, i == 0 ? "an ID that is not 8 bytes" : "a range without bounds");
			return mrc == MDB_SUCCESS || mrc == MDB_NOTFOUND ? LUMEN_ENOTFOUND
					: mdb_store_map_error(mrc);
		}
		memcpy(&bounds[i], data.mv_data, sizeof(bounds[i]));
		if (i == 0 && bounds[0] != RANGE_MARKER)
			return LUMEN_OK;
	}
	*is_range = true;
	*lo = bounds[1];
	*hi = bounds[2];
	return LUMEN_OK;
}

/*
 * The cursor's key against what the round's entries produce under it:
 * ids[0..n), or (expected_range) at least IDL_MAX_IDS entries from ids[0]
 * to ids[1]; n == 0 when none of them does.
 */
static int compare_key(struct check_run *c, const uint64_t *ids, size_t n, bool expected_range)
{
	bool is_range;
	uint64_t lo = 0, hi = 0;

	int rc = stored_shape(c, &is_range, &lo, &hi);
	if (rc != LUMEN_OK)
		return rc == LUMEN_ENOTFOUND ? LUMEN_OK : rc;   /* reported */
	if (!is_range && expected_range) {
		if (count_problem(c, c->table))
			describe(c, c->table, &c->key, "more than %zu entries (IDs %" PRIu64 " to %"
				 PRIu64 ") produce the key, but it holds a list", IDL_MAX_IDS,
				 ids[0], ids[1]);
		return LUMEN_OK;
	}
	if (!is_range)
		return compare_list(c, ids, n);
	size_t n_ids = expected_range ? 2 : n;
	bool covered = false;
	for (size_t i = 0; i < n_ids; i++) {
		if (ids[i] >= lo && ids[i] <= hi)
			covered = true;
		else
			missing(c, &c->key, ids[i]);
	}
	return note_range(c, lo, hi, covered);
}

/* A key no stored record has: every entry producing it is missing. */
static void absent_key(struct check_run *c, const struct index_key *key, const uint64_t *ids,
		       size_t n, bool expected_range)
{
	if (!expected_range) {
		for (size_t i = 0; i < n; i++)
			missing(c, key, ids[i]);
	} else if (count_problem(c, c->table)) {
		describe(c, c->table, key, "not stored, though more than %zu entries (IDs %"
			 PRIu64 " to %" PRIu64 ") produce it", IDL_MAX_IDS, ids[0], ids[1]);
	}
}

/* ------------------------------------------------------ table walks */

/* Moves the cursor to the first (or next) well-formed key. */
static int walk_step(struct check_run *c, MDB_cursor_op op)
{
	MDB_val key, data;

	for (;;) {
		int mrc = mdb_cursor_get(c->cursor, &key, &data, op);
		c->stored = mrc == MDB_SUCCESS;
		if (mrc != MDB_SUCCESS)
			return mrc == MDB_NOTFOUND ? LUMEN_OK : mdb_store_map_error(mrc);
		if (key.mv_size == INDEX_KEY_SIZE) {
			memcpy(c->key.bytes, key.mv_data, INDEX_KEY_SIZE);
			return LUMEN_OK;
		}
		malformed(c, "a key that is not 9 bytes");
		op = MDB_NEXT_NODUP;
	}
}

static void walk_close(struct check_run *c)
{
	if (c->cursor != NULL)
		mdb_cursor_close(c->cursor);
	c->cursor = NULL;
	c->stored = false;
}

static int walk_open(struct check_run *c, size_t table)
{
	walk_close(c);
	c->table = table;
	if (table >= c->be->n_indexes)
		return LUMEN_OK;
	int mrc = mdb_cursor_open(c->txn, c->be->indexes[table].dbi, &c->cursor);
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	return walk_step(c, MDB_FIRST);
}

/* Judges every stored key before `key` of the table (all when key is NULL). */
static int walk_past(struct check_run *c, const struct index_key *key)
{
	int rc = LUMEN_OK;

	while (rc == LUMEN_OK && c->stored &&
	       (key == NULL || memcmp(c->key.bytes, key->bytes, INDEX_KEY_SIZE) < 0)) {
		rc = compare_key(c, NULL, 0, false);
		if (rc == LUMEN_OK)
			rc = walk_step(c, MDB_NEXT_NODUP);
	}
	return rc;
}

/* Finishes the tables before `table` and opens it. */
static int walk_to_table(struct check_run *c, size_t table)
{
	int rc = LUMEN_OK;

	while (rc == LUMEN_OK && c->table < table) {
		rc = walk_past(c, NULL);
		if (rc == LUMEN_OK)
			rc = walk_open(c, c->table + 1);
	}
	return rc;
}

/* postings_flush's sink: one key the round's entries produce. */
static int check_key(void *ctx, size_t table, const struct index_key *key, const uint64_t *ids,
		     size_t n, bool is_range)
{
	struct check_run *c = ctx;

	int rc = walk_to_table(c, table);
	if (rc == LUMEN_OK)
		rc = walk_past(c, key);
	if (rc != LUMEN_OK)
		return rc;
	if (!c->stored || memcmp(c->key.bytes, key->bytes, INDEX_KEY_SIZE) != 0) {
		absent_key(c, key, ids, n, is_range);
		return LUMEN_OK;
	}
	rc = compare_key(c, ids, n, is_range);
	return rc == LUMEN_OK ? walk_step(c, MDB_NEXT_NODUP) : rc;
}

static int check_round(void *ctx, uint64_t lo, uint64_t hi)
{
	struct check_run *c = ctx;

	c->lo = lo;
	c->hi = hi;
	int rc = walk_open(c, 0);
	if (rc == LUMEN_OK)
		rc = postings_flush(c->postings, check_key, c);
	if (rc == LUMEN_OK)
		rc = walk_to_table(c, c->be->n_indexes);
	walk_close(c);
	c->round++;
	return rc;
}

/* ------------------------------------------------------------- entry */

static void check_free(struct check_run *c)
{
	walk_close(c);
	if (c->txn != NULL)
		mdb_txn_abort(c->txn);
	postings_free(c->postings);
	free(c->bad_ids);
	free(c->ranges);
	arena_free(&c->arena);
}

int backend_check_indexes_with(struct backend *be, struct backend_index_pass *options,
			       backend_problem_fn report, void *ctx, uint64_t *problems)
{
	struct check_run c = { .be = be, .report = report, .ctx = ctx };
	struct index_pass pass = {
		.be = be, .on_entry = check_entry, .on_round = check_round, .ctx = &c,
		.memory_limit = BACKEND_INDEX_PASS_DEFAULT_MEMORY,
	};

	arena_init(&c.arena, 0);
	if (options != NULL) {
		c.max_reported = options->max_reported;
		c.table_problems = options->table_problems;
		if (options->memory_limit != 0)
			pass.memory_limit = options->memory_limit;
	}
	if (c.table_problems != NULL)
		memset(c.table_problems, 0, be->n_indexes * sizeof(*c.table_problems));
	int rc = mdb_store_map_error(mdb_txn_begin(be->store->env, NULL, MDB_RDONLY, &c.txn));
	if (rc == LUMEN_OK)
		rc = postings_create(be->n_indexes, &c.postings);
	pass.txn = c.txn;
	pass.postings = c.postings;
	if (rc == LUMEN_OK)
		rc = index_pass_run(&pass);
	if (rc == LUMEN_OK)
		judge_ranges(&c);
	if (options != NULL) {
		options->entries = pass.entries;
		options->rounds = pass.rounds;
	}
	if (problems != NULL)
		*problems = c.problems;
	check_free(&c);
	return rc;
}

int backend_check_indexes(struct backend *be, backend_problem_fn report, void *ctx,
			  uint64_t *problems)
{
	return backend_check_indexes_with(be, NULL, report, ctx, problems);
}

/* ---------------------------------------------------- missing tables */

int backend_missing_index_tables(const struct schema *schema,
				 const struct backend_settings *settings, bool *missing,
				 char *errbuf, size_t errlen)
{
	struct mdb_store *store = NULL;
	struct mdb_store_options o = {
		.directory = settings->directory, .maxsize = settings->maxsize,
		.maxreaders = settings->maxreaders, .read_only = true,
	};

	int rc = mdb_store_open(&o, &store, errbuf, errlen);
	for (size_t i = 0; i < settings->n_indexes && rc == LUMEN_OK; i++) {
		const char *name = settings->indexes[i].attribute;
		MDB_dbi dbi;
		missing[i] = false;
		if (strcasecmp(name, "default") == 0)
			continue;
		const struct attribute_type *type = schema_attribute_type(schema, name, strlen(name));
		if (type == NULL) {
			if (errbuf != NULL)
				snprintf(errbuf, errlen, "index: unknown attribute type \"%s\"",
					 name);
			rc = LUMEN_EINVAL;
			break;
		}
		/* a read-only store opens existing tables and creates none */
		rc = mdb_store_index_open(store, attribute_type_name(type), &dbi);
		missing[i] = rc == LUMEN_ENOTFOUND;
		if (missing[i])
			rc = LUMEN_OK;
	}
	mdb_store_close(store);
	return rc;
}
