/*
 * journal.c — the journal table, the change history (journal.h).
 */
#include "journal.h"

#include <stdint.h>
#include <string.h>

/* A value's head: kind and entryUUID length. */
#define JOURNAL_HEAD 2u

static int check_record(const struct database_journal_record *r)
{
	if (r->csn.len != CSN_LENGTH || r->uuid.len > UINT8_MAX)
		return LUMEN_EINVAL;
	return LUMEN_OK;
}

/* Drops the oldest records until at most keep remain. */
static int trim(struct mdb_store *store, MDB_txn *txn, size_t keep)
{
	MDB_stat st;
	MDB_cursor *cursor = NULL;
	MDB_val key, data;
	char oldest[CSN_LENGTH];

	int mrc = mdb_stat(txn, store->journal, &st);
	if (mrc == MDB_SUCCESS && keep > 0 && st.ms_entries > keep)
		mrc = mdb_cursor_open(txn, store->journal, &cursor);
	for (size_t n = st.ms_entries; mrc == MDB_SUCCESS && keep > 0 && n > keep; n--) {
		mrc = mdb_cursor_get(cursor, &key, &data, MDB_FIRST);
		if (mrc != MDB_SUCCESS)
			break;
		if (key.mv_size != sizeof(oldest)) {
			mrc = MDB_CORRUPTED;
			break;
		}
		memcpy(oldest, key.mv_data, sizeof(oldest));
		key.mv_data = oldest;
		mrc = mdb_del(txn, store->journal, &key, NULL);
	}
	if (cursor != NULL)
		mdb_cursor_close(cursor);
	return mdb_store_map_error(mrc);
}

int journal_append(struct mdb_store *store, MDB_txn *txn,
		   const struct database_journal_record *record, size_t keep)
{
	int rc = check_record(record);
	if (rc != LUMEN_OK)
		return rc;
	size_t len = JOURNAL_HEAD + record->uuid.len + record->ndn.len;
	MDB_val key = { CSN_LENGTH, (void *)record->csn.ptr };
	MDB_val data = { len, NULL };
	int mrc = mdb_put(txn, store->journal, &key, &data, MDB_RESERVE);
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	uint8_t *out = data.mv_data;
	out[0] = (uint8_t)record->kind;
	out[1] = (uint8_t)record->uuid.len;
	if (record->uuid.len > 0)
		memcpy(out + JOURNAL_HEAD, record->uuid.ptr, record->uuid.len);
	if (record->ndn.len > 0)
		memcpy(out + JOURNAL_HEAD + record->uuid.len, record->ndn.ptr, record->ndn.len);
	return trim(store, txn, keep);
}

/* A stored record as views into the map. */
static int decode(const MDB_val *key, const MDB_val *data, struct database_journal_record *out)
{
	const uint8_t *v = data->mv_data;
	if (key->mv_size != CSN_LENGTH || data->mv_size < JOURNAL_HEAD ||
	    data->mv_size < JOURNAL_HEAD + (size_t)v[1] || v[0] > DATABASE_WRITE_MODRDN)
		return LUMEN_EINVAL;
	out->kind = (enum database_write_kind)v[0];
	out->csn = (struct ber_view){ key->mv_data, CSN_LENGTH };
	out->uuid = (struct ber_view){ v + JOURNAL_HEAD, v[1] };
	out->ndn = (struct ber_view){ v + JOURNAL_HEAD + v[1], data->mv_size - JOURNAL_HEAD - v[1] };
	return LUMEN_OK;
}

static int hand(const MDB_val *key, const MDB_val *data, database_journal_fn fn, void *ctx)
{
	struct database_journal_record r;
	int rc = decode(key, data, &r);
	return rc == LUMEN_OK ? fn(ctx, &r) : rc;
}

/* key's CSN compared with csn (CSN_LENGTH bytes). */
static int compare_csn(const MDB_val *key, struct ber_view csn)
{
	return memcmp(key->mv_data, csn.ptr, CSN_LENGTH);
}

/* From the oldest record on: LUMEN_ENOTFOUND unless it is not newer than
 * after; then every record above after. */
static int walk_after(MDB_cursor *cursor, struct ber_view after, database_journal_fn fn,
		      void *ctx)
{
	MDB_val key, data;
	int mrc = mdb_cursor_get(cursor, &key, &data, MDB_FIRST);
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	if (key.mv_size != CSN_LENGTH)
		return LUMEN_EINVAL;
	if (compare_csn(&key, after) > 0)
		return LUMEN_ENOTFOUND;
	key = (MDB_val){ CSN_LENGTH, (void *)after.ptr };
	mrc = mdb_cursor_get(cursor, &key, &data, MDB_SET_RANGE);
	if (mrc == MDB_SUCCESS && compare_csn(&key, after) == 0)
		mrc = mdb_cursor_get(cursor, &key, &data, MDB_NEXT);
	int rc = LUMEN_OK;
	while (mrc == MDB_SUCCESS && rc == LUMEN_OK) {
		rc = hand(&key, &data, fn, ctx);
		if (rc == LUMEN_OK)
			mrc = mdb_cursor_get(cursor, &key, &data, MDB_NEXT);
	}
	if (rc != LUMEN_OK)
		return rc;
	return mrc == MDB_NOTFOUND ? LUMEN_OK : mdb_store_map_error(mrc);
}

int journal_walk(struct mdb_store *store, MDB_txn *txn, struct ber_view after_csn,
		 database_journal_fn fn, void *ctx)
{
	MDB_cursor *cursor = NULL;
	MDB_val key, data;

	if (after_csn.len != 0 && after_csn.len != CSN_LENGTH)
		return LUMEN_EINVAL;
	if (!store->has_journal)
		return LUMEN_ENOTFOUND;
	int mrc = mdb_cursor_open(txn, store->journal, &cursor);
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	int rc;
	if (after_csn.len == 0) {
		mrc = mdb_cursor_get(cursor, &key, &data, MDB_LAST);
		rc = mrc == MDB_SUCCESS ? hand(&key, &data, fn, ctx) : mdb_store_map_error(mrc);
	} else {
		rc = walk_after(cursor, after_csn, fn, ctx);
	}
	mdb_cursor_close(cursor);
	return rc;
}
