/*
 * id2entry.c — entry ID → encoded entry (id2entry.h).
 */
#include "id2entry.h"

#include <string.h>

/* Puts with MDB_APPEND first: IDs grow, so new entries land at the end. */
static int put_new(struct mdb_store *store, MDB_txn *txn, uint64_t id, MDB_val *data,
		   unsigned extra_flags)
{
	MDB_val key = { sizeof(id), &id };

	if (id == 0)
		return LUMEN_EINVAL;
	int mrc = mdb_put(txn, store->id2entry, &key, data, MDB_APPEND | extra_flags);
	if (mrc == MDB_KEYEXIST) /* not the highest ID: insert in place */
		mrc = mdb_put(txn, store->id2entry, &key, data, MDB_NOOVERWRITE | extra_flags);
	return mdb_store_map_error(mrc);
}

int id2entry_add(struct mdb_store *store, MDB_txn *txn, uint64_t id, const void *bytes, size_t len)
{
	MDB_val data = { len, (void *)bytes };

	return put_new(store, txn, id, &data, 0);
}

int id2entry_reserve(struct mdb_store *store, MDB_txn *txn, uint64_t id, size_t len, void **buffer)
{
	MDB_val data = { len, NULL };

	int rc = put_new(store, txn, id, &data, MDB_RESERVE);
	*buffer = rc == LUMEN_OK ? data.mv_data : NULL;
	return rc;
}

int id2entry_replace(struct mdb_store *store, MDB_txn *txn, uint64_t id, const void *bytes,
		     size_t len)
{
	MDB_val key = { sizeof(id), &id };
	MDB_val data;

	int mrc = mdb_get(txn, store->id2entry, &key, &data);
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	data.mv_size = len;
	data.mv_data = (void *)bytes;
	return mdb_store_map_error(mdb_put(txn, store->id2entry, &key, &data, 0));
}

int id2entry_get(struct mdb_store *store, MDB_txn *txn, uint64_t id, struct ber_view *out)
{
	MDB_val key = { sizeof(id), &id };
	MDB_val data;

	int mrc = mdb_get(txn, store->id2entry, &key, &data);
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	out->ptr = data.mv_data;
	out->len = data.mv_size;
	return LUMEN_OK;
}

int id2entry_delete(struct mdb_store *store, MDB_txn *txn, uint64_t id)
{
	MDB_val key = { sizeof(id), &id };

	return mdb_store_map_error(mdb_del(txn, store->id2entry, &key, NULL));
}

int id2entry_last_id(struct mdb_store *store, MDB_txn *txn, uint64_t *id)
{
	return mdb_store_last_key(txn, store->id2entry, id);
}

int id2entry_cursor_open(struct mdb_store *store, MDB_txn *txn, struct id2entry_cursor *c)
{
	c->started = 0;
	return mdb_store_map_error(mdb_cursor_open(txn, store->id2entry, &c->cursor));
}

int id2entry_cursor_next(struct id2entry_cursor *c, uint64_t *id, struct ber_view *bytes)
{
	MDB_val key, data;

	int mrc = mdb_cursor_get(c->cursor, &key, &data, c->started ? MDB_NEXT : MDB_FIRST);
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	c->started = 1;
	if (key.mv_size != sizeof(*id))
		return LUMEN_EIO;
	memcpy(id, key.mv_data, sizeof(*id));
	bytes->ptr = data.mv_data;
	bytes->len = data.mv_size;
	return LUMEN_OK;
}

void id2entry_cursor_close(struct id2entry_cursor *c)
{
	if (c->cursor != NULL)
		mdb_cursor_close(c->cursor);
	c->cursor = NULL;
}
