/*
 * index_check.c — backend_check_indexes: do the index tables and the tree
 * agree with the stored entries? Used by `lumenindex --check`, crash tests
 * and the unit tests after sequences of writes.
 *
 * Two passes over one read snapshot: entries → keys (every key an entry
 * produces must list it), then keys → entries (every listed ID must exist
 * and produce that key). The second pass reads the index tables in the
 * layout index_table.h documents (9-byte keys, sorted 8-byte native IDs,
 * range markers led by ID 0, which are supersets and not checked).
 */
#include "backend_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "id2entry.h"

struct check_run {
	struct backend *be;
	MDB_txn *txn;
	struct arena arena;
	backend_problem_fn report;
	void *ctx;
	uint64_t problems;
	struct idl ids;
};

static void problem(struct check_run *c, const char *fmt, uint64_t id, const char *what)
{
	char text[256];

	c->problems++;
	if (c->report == NULL)
		return;
	snprintf(text, sizeof(text), fmt, id, what);
	c->report(c->ctx, text);
}

/* Every key of e in every index lists id. */
static int check_entry_keys(struct check_run *c, uint64_t id, const struct entry *e)
{
	for (size_t i = 0; i < c->be->n_indexes; i++) {
		const struct backend_index *ix = &c->be->indexes[i];
		struct index_key_set keys;
		int rc = index_keys_of_entry(c->be, ix, e, &c->arena, &keys);
		if (rc != LUMEN_OK)
			return rc;
		for (size_t k = 0; k < keys.n; k++) {
			idl_clear(&c->ids);
			rc = index_read(c->txn, ix->dbi, &keys.keys[k], &c->ids);
			if (rc != LUMEN_OK)
				return rc;
			if (!idl_contains(&c->ids, id))
				problem(c, "entry %" PRIu64 ": a key is missing from index %s", id,
					attribute_type_name(ix->type));
		}
	}
	return LUMEN_OK;
}

static int check_entries(struct check_run *c)
{
	struct id2entry_cursor cursor;
	struct ber_view bytes, ndn;
	uint64_t id;

	int rc = id2entry_cursor_open(c->be->store, c->txn, &cursor);
	if (rc != LUMEN_OK)
		return rc;
	while ((rc = id2entry_cursor_next(&cursor, &id, &bytes)) == LUMEN_OK) {
		struct entry *e = NULL;
		arena_reset(&c->arena);
		rc = entry_decode(c->be->schema, bytes.ptr, bytes.len, &c->arena, &e);
		if (rc == LUMEN_ENOMEM)
			break;
		if (rc != LUMEN_OK) {
			problem(c, "entry %" PRIu64 ": %s", id, "record does not decode");
			continue;
		}
		if (dn2id_names(c->be->store, c->txn, id, &c->arena, &ndn, NULL) != LUMEN_OK)
			problem(c, "entry %" PRIu64 ": %s", id, "no name in dn2id");
		rc = check_entry_keys(c, id, e);
		entry_free(e);
		if (rc != LUMEN_OK)
			break;
	}
	id2entry_cursor_close(&cursor);
	return rc == LUMEN_ENOTFOUND ? LUMEN_OK : rc;
}

/* Does entry id exist and produce key in ix? */
static int check_listed(struct check_run *c, const struct backend_index *ix, uint64_t id,
			const struct index_key *key)
{
	struct ber_view bytes;
	struct entry *e = NULL;
	struct index_key_set keys;

	arena_reset(&c->arena);
	int rc = id2entry_get(c->be->store, c->txn, id, &bytes);
	if (rc == LUMEN_ENOTFOUND) {
		problem(c, "index %2$s lists entry %1$" PRIu64 ", which does not exist", id,
			attribute_type_name(ix->type));
		return LUMEN_OK;
	}
	if (rc == LUMEN_OK)
		rc = entry_decode(c->be->schema, bytes.ptr, bytes.len, &c->arena, &e);
	if (rc != LUMEN_OK)
		return rc == LUMEN_ENOMEM || rc == LUMEN_EIO ? rc : LUMEN_OK;
	rc = index_keys_of_entry(c->be, ix, e, &c->arena, &keys);
	if (rc == LUMEN_OK) {
		bool found = false;
		for (size_t k = 0; k < keys.n && !found; k++)
			found = memcmp(keys.keys[k].bytes, key->bytes, INDEX_KEY_SIZE) == 0;
		if (!found)
			problem(c, "index %2$s lists entry %1$" PRIu64 " under a key it lacks", id,
				attribute_type_name(ix->type));
	}
	entry_free(e);
	return rc;
}

static int check_table(struct check_run *c, const struct backend_index *ix)
{
	MDB_cursor *cursor;
	MDB_val key, data;
	int rc = LUMEN_OK;

	int mrc = mdb_cursor_open(c->txn, ix->dbi, &cursor);
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	mrc = mdb_cursor_get(cursor, &key, &data, MDB_FIRST);
	while (mrc == MDB_SUCCESS && rc == LUMEN_OK) {
		uint64_t id;
		struct index_key k;
		if (key.mv_size != INDEX_KEY_SIZE || data.mv_size != sizeof(id)) {
			problem(c, "index %2$s: malformed record near ID %1$" PRIu64, 0,
				attribute_type_name(ix->type));
			mrc = mdb_cursor_get(cursor, &key, &data, MDB_NEXT_NODUP);
			continue;
		}
		memcpy(&id, data.mv_data, sizeof(id));
		if (id == 0) {   /* a range marker: a superset, nothing to verify */
			mrc = mdb_cursor_get(cursor, &key, &data, MDB_NEXT_NODUP);
			continue;
		}
		memcpy(k.bytes, key.mv_data, INDEX_KEY_SIZE);
		rc = check_listed(c, ix, id, &k);
		mrc = mdb_cursor_get(cursor, &key, &data, MDB_NEXT);
	}
	mdb_cursor_close(cursor);
	if (rc != LUMEN_OK)
		return rc;
	return mrc == MDB_NOTFOUND ? LUMEN_OK : mdb_store_map_error(mrc);
}

int backend_check_indexes(struct backend *be, backend_problem_fn report, void *ctx,
			  uint64_t *problems)
{
	struct check_run c = { .be = be, .report = report, .ctx = ctx };

	int mrc = mdb_txn_begin(be->store->env, NULL, MDB_RDONLY, &c.txn);
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	arena_init(&c.arena, 0);
	idl_init(&c.ids);
	int rc = check_entries(&c);
	for (size_t i = 0; i < be->n_indexes && rc == LUMEN_OK; i++)
		rc = check_table(&c, &be->indexes[i]);
	mdb_txn_abort(c.txn);
	idl_release(&c.ids);
	arena_free(&c.arena);
	if (problems != NULL)
		*problems = c.problems;
	return rc;
}
