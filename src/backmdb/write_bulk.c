/*
 * write_bulk.c — large unsynced transactions for offline loads (write_batch.h).
 *
 * Syncing per transaction is what makes a naive bulk load disk-bound; a
 * load that dies half-way is rerun anyway, so only the end is synced.
 */
#include "write_batch.h"

#include <string.h>

#include "tool_load.h"

int write_bulk_begin(struct write_bulk *bulk, struct mdb_store *store, size_t ops_per_txn)
{
	unsigned flags = 0;

	memset(bulk, 0, sizeof(*bulk));
	bulk->store = store;
	bulk->ops_per_txn = ops_per_txn ? ops_per_txn : WRITE_BULK_DEFAULT_OPS_PER_TXN;
	int mrc = mdb_env_get_flags(store->env, &flags);
	if (mrc == MDB_SUCCESS && !(flags & MDB_NOSYNC)) {
		mrc = mdb_env_set_flags(store->env, MDB_NOSYNC, 1);
		bulk->restore_sync = mrc == MDB_SUCCESS;
	}
	return mdb_store_map_error(mrc);
}

/* Commits the current large txn, if any; a failure poisons the bulk. */
static int commit_current(struct write_bulk *bulk)
{
	if (bulk->txn == NULL)
		return LUMEN_OK;
	int rc = mdb_store_map_error(mdb_txn_commit(bulk->txn));
	bulk->txn = NULL;
	bulk->ops_in_txn = 0;
	if (rc != LUMEN_OK)
		bulk->error = rc;
	return rc;
}

int write_bulk_txn(struct write_bulk *bulk, MDB_txn **txn)
{
	if (bulk->error != LUMEN_OK)
		return LUMEN_EPOISONED;
	if (bulk->txn == NULL) {
		int mrc = mdb_txn_begin(bulk->store->env, NULL, 0, &bulk->txn);
		if (mrc != MDB_SUCCESS) {
			bulk->txn = NULL;
			return mdb_store_map_error(mrc);
		}
	}
	*txn = bulk->txn;
	return LUMEN_OK;
}

int write_bulk_commit(struct write_bulk *bulk)
{
	if (bulk->error != LUMEN_OK)
		return LUMEN_EPOISONED;
	return commit_current(bulk);
}

int write_bulk_apply(struct write_bulk *bulk, write_apply_fn apply, void *arg)
{
	MDB_txn *child = NULL, *parent = NULL;
	int rc = write_bulk_txn(bulk, &parent);
	if (rc != LUMEN_OK)
		return rc;
	rc = mdb_store_map_error(mdb_txn_begin(bulk->store->env, parent, 0, &child));
	if (rc != LUMEN_OK)
		return rc;
	rc = apply(child, arg);
	if (rc != LUMEN_OK) {
		mdb_txn_abort(child);
		return rc;
	}
	rc = mdb_store_map_error(mdb_txn_commit(child));
	if (rc != LUMEN_OK)
		return rc;
	if (++bulk->ops_in_txn >= bulk->ops_per_txn)
		rc = commit_current(bulk);
	return rc;
}

static void restore_sync(struct write_bulk *bulk)
{
	if (bulk->restore_sync)
		mdb_env_set_flags(bulk->store->env, MDB_NOSYNC, 0);
	bulk->restore_sync = false;
}

int write_bulk_finish(struct write_bulk *bulk)
{
	int rc = bulk->error != LUMEN_OK ? LUMEN_EPOISONED : commit_current(bulk);

	if (bulk->txn != NULL)
		mdb_txn_abort(bulk->txn);
	bulk->txn = NULL;
	restore_sync(bulk);
	if (rc == LUMEN_OK)
		rc = mdb_store_sync(bulk->store);
	return rc;
}

void write_bulk_abort(struct write_bulk *bulk)
{
	if (bulk->txn != NULL)
		mdb_txn_abort(bulk->txn);
	bulk->txn = NULL;
	restore_sync(bulk);
}
