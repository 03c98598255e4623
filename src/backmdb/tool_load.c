/*
 * tool_load.c — the bulk-load path of backend.h: prepare entries on any
 * thread, store their records, and take the loader's sorted index runs.
 *
 * Where the time went before: one nested transaction per entry and ~150
 * index puts per entry in hash order, each a full B-tree search and a
 * copy-on-write of a random page. Here an entry is two short record
 * writes (dn2id, id2entry append) in the large transaction, and each index
 * key is written once per loader flush with all its IDs, keys ascending,
 * so LMDB appends. Large transactions commit every TOOL_TXN_BYTES of
 * estimated writes: LMDB keeps a transaction's dirty pages in memory (and
 * reuses the freed pages afterwards), so that bound is also most of the
 * load's LMDB memory.
 *
 * backend_reindex reuses the same writer: one pass over id2entry (shared
 * with the index checker, index_pass_run) files every entry's keys of the
 * emptied tables into postings, which are written in key order each time
 * they fill their memory bound.
 */
#include "backend_internal.h"

#include <stdlib.h>
#include <string.h>

#include "dn.h"
#include "id2entry.h"
#include "index_postings.h"
#include "ldap_result_codes.h"
#include "tool_load.h"

/* Estimated bytes written between two commits of a load. */
#define TOOL_TXN_BYTES ((size_t)32 << 20)
/* Bytes counted per stored entry on top of its record (dn2id, id2name, counts). */
#define TOOL_ENTRY_OVERHEAD 128
/* Bytes counted per index key on top of its IDs. */
#define TOOL_KEY_OVERHEAD 32
/* A key merged into a stored table rather than appended: LMDB copies the
 * leaf it lands on; sorted keys share leaves, about eight to a page. */
#define TOOL_MERGED_KEY_BYTES 512

struct backend_tool_load {
	struct backend *be;
	size_t txn_bytes;               /* estimated writes since the last commit */
	struct index_run_writer writer; /* open on writer_table when writer_open */
	size_t writer_table;
	bool writer_open;
	/* the last parent found: siblings come together in an LDIF file */
	uint8_t *parent_ndn;
	size_t parent_len, parent_cap;
	uint64_t parent_id;
	bool parent_known;
	bool journal_emptied;           /* the change history no longer holds */
};

size_t backend_index_count(const struct backend *be)
{
	return be->n_indexes;
}

const char *backend_index_name(const struct backend *be, size_t table)
{
	return table < be->n_indexes ? attribute_type_name(be->indexes[table].type) : NULL;
}

/* ------------------------------------------------------------ prepare */

int backend_tool_prepare(struct backend *be, struct backend_op *op, struct entry *e,
			 enum backend_schema_check check)
{
	struct schema_violation v;

	op->matched_dn = (struct ber_view){ NULL, 0 };
	if (backend_select(&be, 1, e->ndn) != be) {
		backend_result(op, LDAP_UNWILLING_TO_PERFORM, "the entry is outside the database");
		return LUMEN_OK;
	}
	int rc = check == BACKEND_CHECK_FULL ? entry_check_add(e, op->arena, &v)
		 : check == BACKEND_CHECK_STRUCTURE ? entry_check_add_structure(e, op->arena, &v)
		 : LUMEN_OK;
	if (rc == LUMEN_ESCHEMA) {
		const char *text = arena_strndup(op->arena, v.message,
						 strnlen(v.message, sizeof(v.message)));
		backend_result(op, v.ldap_code, text);
		return LUMEN_OK;
	}
	if (rc == LUMEN_OK)
		rc = operational_on_add(be, op, e);
	if (rc != LUMEN_OK)
		return backend_fail(be, op, rc);
	backend_result(op, LDAP_SUCCESS, NULL);
	return LUMEN_OK;
}

int backend_tool_entry_keys(const struct backend *be, size_t table, const struct entry *e,
			    struct arena *arena, const struct index_key **keys, size_t *n)
{
	struct index_key_set set;

	*keys = NULL;
	*n = 0;
	if (table >= be->n_indexes)
		return LUMEN_EINVAL;
	int rc = index_keys_of_entry(be, &be->indexes[table], e, arena, &set);
	if (rc != LUMEN_OK)
		return rc;
	*keys = set.keys;
	*n = set.n;
	return LUMEN_OK;
}

/* ------------------------------------------------------------ the load */

int backend_tool_load_begin(struct backend *be, struct backend_tool_load **out)
{
	*out = NULL;
	if (!be->tool_mode || be->read_only)
		return LUMEN_EINVAL;
	struct backend_tool_load *load = calloc(1, sizeof(*load));
	if (load == NULL)
		return LUMEN_ENOMEM;
	load->be = be;
	*out = load;
	return LUMEN_OK;
}

static void close_writer(struct backend_tool_load *load)
{
	if (load->writer_open)
		index_run_writer_close(&load->writer);
	load->writer_open = false;
}

void backend_tool_load_end(struct backend_tool_load *load)
{
	if (load == NULL)
		return;
	close_writer(load);
	free(load->parent_ndn);
	free(load);
}

/* Counts bytes written; commits the large transaction once it is full enough. */
static int account(struct backend_tool_load *load, size_t bytes)
{
	load->txn_bytes += bytes;
	if (load->txn_bytes < TOOL_TXN_BYTES)
		return LUMEN_OK;
	/* the writer's cursor belongs to the transaction: it goes first */
	close_writer(load);
	load->txn_bytes = 0;
	return write_bulk_commit(&load->be->bulk);
}

static int remember_parent(struct backend_tool_load *load, struct ber_view ndn, uint64_t id)
{
	if (ndn.len > load->parent_cap) {
		uint8_t *bigger = realloc(load->parent_ndn, ndn.len);
		if (bigger == NULL)
			return LUMEN_ENOMEM;
		load->parent_ndn = bigger;
		load->parent_cap = ndn.len;
	}
	memcpy(load->parent_ndn, ndn.ptr, ndn.len);
	load->parent_len = ndn.len;
	load->parent_id = id;
	load->parent_known = true;
	return LUMEN_OK;
}

/*
 * The parent ID of ndn (0 for a suffix). A refusal sets op's result and
 * returns LUMEN_ENOTFOUND (or LUMEN_EINVAL); storage errors are returned.
 */
static int find_parent(struct backend_tool_load *load, struct backend_op *op, MDB_txn *txn,
		       struct ber_view ndn, uint64_t *parent_id)
{
	struct backend *be = load->be;
	struct ber_view rdn, parent_ndn;
	struct dn2id_match match = { 0 };

	*parent_id = 0;
	if (backend_is_suffix(be, ndn))
		return LUMEN_OK;
	dn_split_first(ndn, &rdn, &parent_ndn);
	if (parent_ndn.len == 0 || backend_select(&be, 1, parent_ndn) != be) {
		backend_result(op, LDAP_UNWILLING_TO_PERFORM,
			       "only the suffix entry may be added without a parent");
		return LUMEN_EINVAL;
	}
	if (load->parent_known && load->parent_len == parent_ndn.len &&
	    memcmp(load->parent_ndn, parent_ndn.ptr, parent_ndn.len) == 0) {
		*parent_id = load->parent_id;
		return LUMEN_OK;
	}
	int rc = dn2id_lookup(be->store, txn, parent_ndn, parent_id, &match);
	if (rc == LUMEN_ENOTFOUND)
		return backend_no_such_object(be, op, txn, &match);
	if (rc == LUMEN_OK)
		rc = remember_parent(load, parent_ndn, *parent_id);
	return rc;
}

/* A load writes no change history: the history there was (journal.h) no
 * longer tells every change since its oldest record, so it goes. */
static int empty_journal(struct backend_tool_load *load, MDB_txn *txn)
{
	if (load->journal_emptied)
		return LUMEN_OK;
	int rc = mdb_store_map_error(mdb_drop(txn, load->be->store->journal, 0));
	load->journal_emptied = rc == LUMEN_OK;
	return rc;
}

int backend_tool_store(struct backend_tool_load *load, struct backend_op *op,
		       struct ber_view dn, struct ber_view ndn, const void *encoded, size_t len,
		       uint64_t *id)
{
	struct backend *be = load->be;
	MDB_txn *txn = NULL;
	uint64_t parent_id = 0;

	op->matched_dn = (struct ber_view){ NULL, 0 };
	op->result_code = LDAP_OTHER;
	int rc = write_bulk_txn(&be->bulk, &txn);
	if (rc != LUMEN_OK)
		return backend_fail(be, op, rc);
	rc = empty_journal(load, txn);
	if (rc == LUMEN_OK)
		rc = find_parent(load, op, txn, ndn, &parent_id);
	if (rc != LUMEN_OK)
		/* a refusal already set its LDAP result; anything else is storage */
		return op->result_code != LDAP_OTHER ? LUMEN_OK : backend_fail(be, op, rc);
	rc = entry_store_add_record(be, txn, parent_id, dn, ndn, encoded, len, id);
	if (rc == LUMEN_EEXIST) {
		backend_result(op, LDAP_ENTRY_ALREADY_EXISTS, NULL);
		return LUMEN_OK;
	}
	if (rc == LUMEN_OK)
		rc = account(load, len + TOOL_ENTRY_OVERHEAD);
	if (rc != LUMEN_OK)
		return backend_fail(be, op, rc);
	__atomic_add_fetch(&be->writes, 1, __ATOMIC_RELAXED);
	backend_result(op, LDAP_SUCCESS, NULL);
	return LUMEN_OK;
}

bool backend_tool_is_referral(const struct backend *be, const struct entry *e)
{
	return referral_entry_is(be, e);
}

int backend_tool_store_referral(struct backend_tool_load *load, uint64_t id)
{
	MDB_txn *txn = NULL;
	int rc = write_bulk_txn(&load->be->bulk, &txn);
	if (rc == LUMEN_OK)
		rc = referral_list(load->be, txn, id, true);
	return rc;
}

/* The run writer of table, opened in the current large transaction. */
static int writer_for(struct backend_tool_load *load, size_t table)
{
	MDB_txn *txn = NULL;

	if (table >= load->be->n_indexes)
		return LUMEN_EINVAL;
	if (load->writer_open && load->writer_table == table)
		return LUMEN_OK;
	close_writer(load);
	int rc = write_bulk_txn(&load->be->bulk, &txn);
	if (rc == LUMEN_OK)
		rc = index_run_writer_open(&load->writer, txn, load->be->indexes[table].dbi);
	if (rc != LUMEN_OK)
		return rc;
	load->writer_table = table;
	load->writer_open = true;
	return LUMEN_OK;
}

/* What one key's write cost the transaction, appended or merged. */
static size_t key_cost(const struct backend_tool_load *load, size_t merged_before, size_t ids)
{
	size_t bytes = TOOL_KEY_OVERHEAD + ids * sizeof(uint64_t);
	return load->writer.merged > merged_before ? bytes + TOOL_MERGED_KEY_BYTES : bytes;
}

int backend_tool_index_run(struct backend_tool_load *load, size_t table,
			   const struct index_key *key, const uint64_t *ids, size_t n)
{
	int rc = writer_for(load, table);
	size_t merged = load->writer.merged;
	if (rc == LUMEN_OK)
		rc = index_run_add(&load->writer, key, ids, n);
	if (rc == LUMEN_OK)
		rc = account(load, key_cost(load, merged, n));
	return rc;
}

int backend_tool_index_range(struct backend_tool_load *load, size_t table,
			     const struct index_key *key, uint64_t lo, uint64_t hi)
{
	int rc = writer_for(load, table);
	size_t merged = load->writer.merged;
	if (rc == LUMEN_OK)
		rc = index_run_add_range(&load->writer, key, lo, hi);
	if (rc == LUMEN_OK)
		rc = account(load, key_cost(load, merged, 0));
	return rc;
}

static int index_sink(void *ctx, size_t table, const struct index_key *key, const uint64_t *ids,
		      size_t n, bool is_range)
{
	struct backend_tool_load *load = ctx;

	if (is_range)
		return backend_tool_index_range(load, table, key, ids[0], ids[1]);
	return backend_tool_index_run(load, table, key, ids, n);
}

int backend_tool_index_postings(struct backend_tool_load *load, struct postings *postings)
{
	return postings_flush(postings, index_sink, load);
}

/* ------------------------------------------------- pass over id2entry */

/* Decodes one entry and files its keys in the chosen tables. */
static int pass_entry(struct index_pass *p, struct arena *arena, uint64_t id,
		      struct ber_view bytes)
{
	struct entry *e = NULL;
	struct index_key_set keys;

	arena_reset(arena);
	int rc = entry_decode(p->be->schema, bytes.ptr, bytes.len, arena, &e);
	if (rc == LUMEN_ENOMEM)
		return rc;
	p->entries++;
	rc = p->on_entry(p->ctx, id, rc == LUMEN_OK ? e : NULL);
	for (size_t t = 0; e != NULL && t < p->be->n_indexes && rc == LUMEN_OK; t++) {
		if (p->tables != NULL && !p->tables[t])
			continue;
		rc = index_keys_of_entry(p->be, &p->be->indexes[t], e, arena, &keys);
		for (size_t k = 0; k < keys.n && rc == LUMEN_OK; k++)
			rc = postings_add(p->postings, t, &keys.keys[k], id);
	}
	entry_free(e);
	return rc;
}

int index_pass_run(struct index_pass *p)
{
	struct id2entry_cursor cursor;
	struct arena arena;
	struct ber_view bytes;
	uint64_t id = 0, lo = 1;
	bool more = true;

	arena_init(&arena, 0);
	int rc = id2entry_cursor_open(p->be->store, p->txn, &cursor);
	if (rc != LUMEN_OK)
		goto done;
	while (rc == LUMEN_OK && more) {
		rc = id2entry_cursor_next(&cursor, &id, &bytes);
		more = rc == LUMEN_OK;
		if (rc == LUMEN_ENOTFOUND)
			rc = LUMEN_OK;
		if (more && rc == LUMEN_OK)
			rc = pass_entry(p, &arena, id, bytes);
		if (more && rc == LUMEN_OK && postings_memory(p->postings) < p->memory_limit)
			continue;
		if (rc == LUMEN_OK) {
			p->rounds++;
			rc = p->on_round(p->ctx, lo, more ? id : UINT64_MAX);
			lo = id + 1;
		}
	}
	id2entry_cursor_close(&cursor);
done:
	arena_free(&arena);
	return rc;
}

/* ------------------------------------------------------------ reindex */

struct reindex {
	struct backend_tool_load *load;
	struct postings *postings;
};

/* A rebuild cannot leave an entry out: one that does not decode stops it. */
static int reindex_entry(void *ctx, uint64_t id, const struct entry *e)
{
	(void)ctx;
	(void)id;
	return e != NULL ? LUMEN_OK : LUMEN_EMALFORMED;
}

static int reindex_round(void *ctx, uint64_t lo, uint64_t hi)
{
	struct reindex *r = ctx;

	(void)lo;
	(void)hi;
	return backend_tool_index_postings(r->load, r->postings);
}

/* Marks the tables of attributes[0..n) (all when n == 0) in chosen. */
static int choose_tables(const struct backend *be, const char *const *attributes, size_t n,
			 bool *chosen)
{
	for (size_t t = 0; t < be->n_indexes; t++)
		chosen[t] = n == 0;
	for (size_t i = 0; i < n; i++) {
		const struct attribute_type *type =
			schema_attribute_type(be->schema, attributes[i], strlen(attributes[i]));
		const struct backend_index *ix = backend_index_of(be, type);
		if (ix == NULL)
			return LUMEN_ENOTFOUND;
		chosen[ix->table] = true;
	}
	return LUMEN_OK;
}

/* Empties the chosen tables in the load's current transaction. */
static int empty_tables(struct backend *be, const bool *chosen)
{
	MDB_txn *txn = NULL;
	int rc = write_bulk_txn(&be->bulk, &txn);

	for (size_t t = 0; t < be->n_indexes && rc == LUMEN_OK; t++)
		if (chosen[t])
			rc = mdb_store_map_error(mdb_drop(txn, be->indexes[t].dbi, 0));
	return rc;
}

/* Refills the chosen (empty) tables from a snapshot of id2entry. */
static int refill_tables(struct backend *be, const bool *chosen, struct index_pass *pass)
{
	struct reindex r = { NULL, NULL };
	MDB_txn *snapshot = NULL;

	/* the environment is MDB_NOTLS: this thread may read beside its write txn */
	int rc = mdb_store_map_error(mdb_txn_begin(be->store->env, NULL, MDB_RDONLY, &snapshot));
	if (rc == LUMEN_OK)
		rc = backend_tool_load_begin(be, &r.load);
	if (rc == LUMEN_OK)
		rc = postings_create(be->n_indexes, &r.postings);
	if (rc == LUMEN_OK) {
		pass->be = be;
		pass->txn = snapshot;
		pass->tables = chosen;
		pass->postings = r.postings;
		pass->on_entry = reindex_entry;
		pass->on_round = reindex_round;
		pass->ctx = &r;
		rc = index_pass_run(pass);
	}
	backend_tool_load_end(r.load);
	postings_free(r.postings);
	if (snapshot != NULL)
		mdb_txn_abort(snapshot);
	return rc;
}

/* The rebuilt tables now hold every configured kind: say so for lumend. */
static int record_rebuilt_kinds(struct backend *be, const bool *chosen)
{
	MDB_txn *txn = NULL;
	int rc = write_bulk_txn(&be->bulk, &txn);
	for (size_t i = 0; i < be->n_indexes && rc == LUMEN_OK; i++)
		if (chosen[i])
			rc = mdb_store_set_index_kinds(be->store, txn,
						       attribute_type_name(be->indexes[i].type),
						       be->indexes[i].kinds);
	return rc;
}

int backend_reindex(struct backend *be, const char *const *attributes, size_t n,
		    struct backend_index_pass *options)
{
	struct index_pass pass = { 0 };

	if (!be->tool_mode || be->read_only)
		return LUMEN_EINVAL;
	bool *chosen = calloc(be->n_indexes ? be->n_indexes : 1, sizeof(*chosen));
	if (chosen == NULL)
		return LUMEN_ENOMEM;
	pass.memory_limit = options != NULL && options->memory_limit ? options->memory_limit
				: BACKEND_INDEX_PASS_DEFAULT_MEMORY;
	int rc = choose_tables(be, attributes, n, chosen);
	if (rc == LUMEN_OK)
		rc = empty_tables(be, chosen);
	if (rc == LUMEN_OK)
		rc = refill_tables(be, chosen, &pass);
	if (rc == LUMEN_OK)
		rc = record_rebuilt_kinds(be, chosen);
	if (options != NULL) {
		options->entries = pass.entries;
		options->rounds = pass.rounds;
	}
	free(chosen);
	return rc;
}
