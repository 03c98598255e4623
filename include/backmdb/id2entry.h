/*
 * id2entry.h — the id2entry table: entry ID → encoded entry bytes (back-mdb).
 *
 * The bytes are opaque here (the model layer's binary entry form). Reads
 * are zero-copy: the view points into the LMDB map.
 *
 * Memory: views returned by reads (and id2entry_reserve's buffer) are owned
 * by LMDB and valid until the transaction ends or, in a write transaction,
 * until the next write to the table.
 * Thread-safety: as the transaction used (one thread per transaction).
 *
 * Errors: LUMEN_ENOTFOUND (no such ID), LUMEN_EEXIST (ID in use),
 * LUMEN_EINVAL (ID 0), LUMEN_EFULL (map full: raise maxsize), LUMEN_EIO.
 *
 * Caveats:
 *  - id2entry_add appends (MDB_APPEND) when id is above every stored ID,
 *    the common case since IDs grow; it falls back to a normal insert.
 */
#ifndef LUMEN_ID2ENTRY_H
#define LUMEN_ID2ENTRY_H

#include <lmdb.h>
#include <stddef.h>
#include <stdint.h>

#include "ber.h"
#include "mdb_store.h"

/* Stores a new entry. Errors: LUMEN_EEXIST, LUMEN_EINVAL, LUMEN_EFULL, LUMEN_EIO. */
int id2entry_add(struct mdb_store *store, MDB_txn *txn, uint64_t id,
		 const void *bytes, size_t len);
/*
 * Like id2entry_add, but hands back a len-byte buffer in the map to encode
 * into directly (no intermediate copy). Errors: as id2entry_add.
 */
int id2entry_reserve(struct mdb_store *store, MDB_txn *txn, uint64_t id, size_t len,
		     void **buffer);
/* Overwrites an existing entry. Errors: LUMEN_ENOTFOUND, LUMEN_EFULL, LUMEN_EIO. */
int id2entry_replace(struct mdb_store *store, MDB_txn *txn, uint64_t id,
		     const void *bytes, size_t len);
/* Errors: LUMEN_ENOTFOUND, LUMEN_EIO. */
int id2entry_get(struct mdb_store *store, MDB_txn *txn, uint64_t id, struct ber_view *out);
/* Errors: LUMEN_ENOTFOUND, LUMEN_EFULL, LUMEN_EIO. */
int id2entry_delete(struct mdb_store *store, MDB_txn *txn, uint64_t id);
/* Highest stored ID, 0 if the table is empty. Errors: LUMEN_EIO. */
int id2entry_last_id(struct mdb_store *store, MDB_txn *txn, uint64_t *id);

/* Walks every entry in ID order (exporters, index rebuilds). */
struct id2entry_cursor {
	MDB_cursor *cursor;
	int started;
};

/* Errors: LUMEN_ENOMEM, LUMEN_EIO. */
int id2entry_cursor_open(struct mdb_store *store, MDB_txn *txn, struct id2entry_cursor *c);
/* Next entry; LUMEN_ENOTFOUND after the last. Errors: LUMEN_EIO. */
int id2entry_cursor_next(struct id2entry_cursor *c, uint64_t *id, struct ber_view *bytes);
void id2entry_cursor_close(struct id2entry_cursor *c);

#endif
