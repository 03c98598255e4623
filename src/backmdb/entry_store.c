/*
 * entry_store.c — the one implementation of the table layout of an entry:
 * id2entry record, dn2id/id2name/subcount records and index keys, written,
 * rewritten and removed together in the caller's write transaction. The
 * daemon's writes and the bulk loader (tool mode) both come through here:
 * the loader stores the records of each entry with entry_store_add_record
 * and hands the index keys it derived (index_keys_of_entry) to the index
 * tables afterwards, sorted, as runs of IDs (tool_load.c).
 *
 * Index maintenance diffs key sets, never values: a shared substring gram
 * of two values of one entry must survive when only one value goes.
 */
#include "backend_internal.h"

#include <string.h>

#include "dn.h"
#include "id2entry.h"
#include "tool_load.h"

/* Records the touched keys of one table for the IDL cache (room reserved
 * by update_indexes: at most two rows per table). */
static int note_touched(struct write_changes *changes, struct arena *arena, uint32_t table,
			const struct index_key *keys, size_t n)
{
	if (n == 0)
		return LUMEN_OK;
	struct index_touch *t = &changes->touched[changes->n_touched++];
	t->table = table;
	t->keys = arena_memdup(arena, keys, n * sizeof(*keys));
	t->n = n;
	return t->keys != NULL ? LUMEN_OK : LUMEN_ENOMEM;
}

static int note_id(struct write_changes *changes, struct arena *arena, uint64_t id)
{
	for (size_t i = 0; i < changes->n_ids; i++)
		if (changes->ids[i] == id)
			return LUMEN_OK;
	uint64_t *ids = arena_reserve(arena, changes->ids, changes->n_ids, &changes->cap_ids,
				      changes->n_ids + 1, sizeof(*ids), 8);
	if (ids == NULL)
		return LUMEN_ENOMEM;
	changes->ids = ids;
	changes->ids[changes->n_ids++] = id;
	return LUMEN_OK;
}

/* The next attribute from i on that feeds ix (its type or a subtype);
 * n_attributes when none is left. */
static size_t next_indexed(const struct backend_index *ix, const struct entry *e, size_t i)
{
	while (i < e->n_attributes && (e->attributes[i].desc.type == NULL ||
				       !attribute_type_is_subtype(e->attributes[i].desc.type,
								  ix->type)))
		i++;
	return i;
}

static bool same_values(const struct entry_attribute *a, const struct entry_attribute *b)
{
	if (a->n_values != b->n_values || !ber_view_eq(a->name, b->name))
		return false;
	for (size_t j = 0; j < a->n_values; j++)
		if (!ber_view_eq(a->values[j].value, b->values[j].value))
			return false;
	return true;
}

/*
 * Do before and after hold, in the same order, the same values of every
 * attribute that feeds ix? A table's keys are a function of those alone
 * (index_keys_of_entry), so a modify that touched none of them leaves the
 * table as it is: most modifies change unindexed attributes, and deriving
 * both key sets (substring keys above all) was a third of a modify's cost
 * on the committer. A reordering counts as a change: the keys are derived
 * again, which is always correct.
 */
static bool same_indexed_values(const struct backend_index *ix, const struct entry *before,
				const struct entry *after)
{
	size_t i = next_indexed(ix, before, 0), j = next_indexed(ix, after, 0);
	while (i < before->n_attributes && j < after->n_attributes) {
		if (!same_values(&before->attributes[i], &after->attributes[j]))
			return false;
		i = next_indexed(ix, before, i + 1);
		j = next_indexed(ix, after, j + 1);
	}
	return i == before->n_attributes && j == after->n_attributes;
}

/*
 * Moves one table from before's keys to after's: removes keys only before
 * produces, adds keys only after produces. Both may be NULL.
 */
static int update_one_index(struct backend *be, MDB_txn *txn, const struct backend_index *ix,
			    uint64_t id, const struct entry *before, const struct entry *after,
			    struct arena *arena, struct write_changes *changes)
{
	if (before != NULL && after != NULL && same_indexed_values(ix, before, after))
		return LUMEN_OK;
	struct index_key_set old_keys, new_keys;
	int rc = index_keys_of_entry(be, ix, before, arena, &old_keys);
	if (rc == LUMEN_OK)
		rc = index_keys_of_entry(be, ix, after, arena, &new_keys);
	if (rc != LUMEN_OK)
		return rc;
	/* subtract works in place: keep the other set intact */
	struct index_key *gone = NULL, *added = NULL;
	size_t n_gone = 0, n_added = 0;
	if (old_keys.n > 0) {
		gone = arena_memdup(arena, old_keys.keys, old_keys.n * sizeof(*gone));
		if (gone == NULL)
			return LUMEN_ENOMEM;
		n_gone = index_keys_subtract(gone, old_keys.n, new_keys.keys, new_keys.n);
	}
	if (new_keys.n > 0) {
		added = arena_memdup(arena, new_keys.keys, new_keys.n * sizeof(*added));
		if (added == NULL)
			return LUMEN_ENOMEM;
		n_added = index_keys_subtract(added, new_keys.n, old_keys.keys, old_keys.n);
	}
	for (size_t i = 0; i < n_gone && rc == LUMEN_OK; i++)
		rc = index_remove(txn, ix->dbi, &gone[i], id);
	for (size_t i = 0; i < n_added && rc == LUMEN_OK; i++)
		rc = index_add(txn, ix->dbi, &added[i], id);
	if (rc == LUMEN_OK)
		rc = note_touched(changes, arena, ix->table, gone, n_gone);
	if (rc == LUMEN_OK)
		rc = note_touched(changes, arena, ix->table, added, n_added);
	return rc;
}

/* note_touched may add two rows per table: reserve room for that. */
static int update_indexes(struct backend *be, MDB_txn *txn, uint64_t id,
			  const struct entry *before, const struct entry *after,
			  struct arena *arena, struct write_changes *changes)
{
	int rc = LUMEN_OK;
	size_t need = changes->n_touched + 2 * be->n_indexes;
	if (need > changes->cap_touched) {
		struct index_touch *touched = arena_reserve(arena, changes->touched,
							    changes->n_touched,
							    &changes->cap_touched, need,
							    sizeof(*touched), 8);
		if (touched == NULL)
			rc = LUMEN_ENOMEM;
		else
			changes->touched = touched;
	}
	for (size_t i = 0; i < be->n_indexes && rc == LUMEN_OK; i++)
		rc = update_one_index(be, txn, &be->indexes[i], id, before, after, arena,
				      changes);
	return rc;
}

/*
 * Encodes e and stores it. Writes may allocate (they are bounded by the
 * disk, not the CPU); the search path never comes here.
 */
static int write_record(struct backend *be, MDB_txn *txn, uint64_t id, const struct entry *e,
			bool replace)
{
	struct ber_writer w;

	int rc = ber_writer_init(&w, 1024, 0);
	if (rc != LUMEN_OK)
		return rc;
	rc = entry_encode(e, &w);
	if (rc == LUMEN_OK && replace)
		rc = id2entry_replace(be->store, txn, id, w.buf, w.len);
	else if (rc == LUMEN_OK)
		rc = id2entry_add(be->store, txn, id, w.buf, w.len);
	ber_writer_free(&w);
	return rc;
}

int entry_store_add_record(struct backend *be, MDB_txn *txn, uint64_t parent_id,
			   struct ber_view dn, struct ber_view ndn, const void *encoded,
			   size_t len, uint64_t *id_out)
{
	struct ber_view nrdn, parent_ndn, rdn, parent_dn;
	uint64_t id;

	if (parent_id == 0) {
		/* a suffix entry: its "RDN" is its whole DN (dn2id.h) */
		nrdn = ndn;
		rdn = dn;
	} else {
		dn_split_first(ndn, &nrdn, &parent_ndn);
		dn_split_first(dn, &rdn, &parent_dn);
	}
	int rc = mdb_store_next_id(be->store, txn, &id);
	if (rc == LUMEN_OK)
		rc = dn2id_add(be->store, txn, parent_id, nrdn, rdn, id);
	if (rc == LUMEN_OK)
		rc = id2entry_add(be->store, txn, id, encoded, len);
	if (rc == LUMEN_OK)
		*id_out = id;
	return rc;
}

int entry_store_add(struct backend *be, MDB_txn *txn, uint64_t parent_id,
		    const struct entry *e, struct arena *arena, struct write_changes *changes,
		    uint64_t *id_out)
{
	struct ber_writer w;
	uint64_t id;

	int rc = ber_writer_init(&w, 1024, 0);
	if (rc != LUMEN_OK)
		return rc;
	rc = entry_encode(e, &w);
	if (rc == LUMEN_OK)
		rc = entry_store_add_record(be, txn, parent_id, e->dn, e->ndn, w.buf, w.len, &id);
	ber_writer_free(&w);
	if (rc == LUMEN_OK)
		rc = update_indexes(be, txn, id, NULL, e, arena, changes);
	if (rc == LUMEN_OK)
		rc = referral_note_change(be, txn, id, NULL, e);
	if (rc == LUMEN_OK)
		rc = note_id(changes, arena, id);
	if (rc == LUMEN_OK && id_out != NULL)
		*id_out = id;
	return rc;
}

int entry_store_replace(struct backend *be, MDB_txn *txn, uint64_t id,
			const struct entry *before, const struct entry *after,
			struct arena *arena, struct write_changes *changes)
{
	int rc = write_record(be, txn, id, after, true);
	if (rc == LUMEN_OK)
		rc = update_indexes(be, txn, id, before, after, arena, changes);
	if (rc == LUMEN_OK)
		rc = referral_note_change(be, txn, id, before, after);
	if (rc == LUMEN_OK)
		rc = note_id(changes, arena, id);
	return rc;
}

int entry_store_delete(struct backend *be, MDB_txn *txn, uint64_t id, const struct entry *e,
		       struct arena *arena, struct write_changes *changes)
{
	int rc = dn2id_delete(be->store, txn, id);
	if (rc == LUMEN_OK)
		rc = id2entry_delete(be->store, txn, id);
	if (rc == LUMEN_OK)
		rc = update_indexes(be, txn, id, e, NULL, arena, changes);
	if (rc == LUMEN_OK)
		rc = referral_note_change(be, txn, id, e, NULL);
	if (rc == LUMEN_OK)
		rc = note_id(changes, arena, id);
	return rc;
}

void write_changes_invalidate(struct backend *be, const struct write_changes *changes,
			      uint64_t txnid)
{
	for (size_t i = 0; i < changes->n_ids; i++)
		entry_cache_invalidate(be->entry_cache, changes->ids[i], txnid);
	for (size_t i = 0; i < changes->n_touched; i++) {
		const struct index_touch *t = &changes->touched[i];
		for (size_t k = 0; k < t->n; k++)
			idl_cache_invalidate(be->idl_cache, t->table, &t->keys[k], txnid);
	}
}
