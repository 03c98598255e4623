/*
 * journal.h — the journal table: the change history of a database
 * (database.h, "Change history"; back-mdb).
 *
 * Key: the change's CSN (CSN_LENGTH bytes; CSNs sort as text in time
 * order). Value: one byte of kind (enum database_write_kind), one byte of
 * entryUUID length, the entryUUID's text, then the normalized DN (the
 * rest of the value; empty for adds and modifies).
 *
 * Memory: the views a walk hands out point into the LMDB map and are
 * valid during the call only.
 * Thread-safety: as the transaction used (one thread per transaction).
 *
 * Errors: LUMEN_EINVAL (a CSN that is not CSN_LENGTH bytes, an entryUUID
 * longer than 255 bytes), LUMEN_ENOTFOUND (journal_walk: the history does
 * not reach back to the CSN asked for), LUMEN_EFULL (map full: raise
 * maxsize), LUMEN_EIO.
 *
 * Caveats:
 *  - "Reaches back to a CSN" means the oldest kept record is not newer
 *    than it: a cookie exactly one change older than the history gets
 *    no delete phase (conservative, never wrong).
 *  - A store opened read-only from a database made before the table
 *    existed has none (store->has_journal false): walks find nothing.
 */
#ifndef LUMEN_JOURNAL_H
#define LUMEN_JOURNAL_H

#include <lmdb.h>
#include <stddef.h>

#include "database.h"
#include "mdb_store.h"

/*
 * Stores record in write transaction txn, then drops the oldest records
 * until at most keep remain (0: keep all). Errors: LUMEN_EINVAL,
 * LUMEN_EFULL, LUMEN_EIO.
 */
int journal_append(struct mdb_store *store, MDB_txn *txn,
		   const struct database_journal_record *record, size_t keep);

/*
 * The records whose CSN is above after_csn, oldest first, to fn; an empty
 * after_csn: the newest record alone. Errors: LUMEN_ENOTFOUND (history
 * empty or newer than after_csn), LUMEN_EINVAL (a damaged record),
 * fn's, LUMEN_EIO.
 */
int journal_walk(struct mdb_store *store, MDB_txn *txn, struct ber_view after_csn,
		 database_journal_fn fn, void *ctx);

#endif
