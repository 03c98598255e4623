/*
 * mdb_store.h — one database's LMDB environment and its tables (back-mdb).
 *
 * A store owns the MDB_env of one `database mdb` and the handles of its
 * named tables:
 *   id2entry  entry ID (native uint64, MDB_INTEGERKEY) → encoded entry
 *   dn2id     parent ID → children (see dn2id.h)
 *   id2name   entry ID → parent ID, normalized and user-form RDN (dn2id.h)
 *   subcount  entry ID → number of descendants (dn2id.h)
 *   meta      "version" → format version, "next_id" → next entry ID,
 *             "names_current" → present while every stored entry's DN is
 *             its current one (see mdb_store_names_moved),
 *             "normalization" → the rules stored normalized forms follow
 *             (stored_forms.h)
 *   journal   CSN → one change of the history (journal.h)
 *   referrals entry ID → nothing: the referral objects (RFC 3296)
 *   index:<attribute>  one per indexed attribute (index_table.h)
 * The environment is opened with MDB_NOTLS so a worker's read transaction
 * (struct mdb_reader) can be reset, renewed and reused from any thread.
 *
 * Memory: mdb_store_open allocates the store; mdb_store_close frees it and
 * closes the environment. Data pointers LMDB hands out live until their
 * transaction ends.
 * Thread-safety: the table handles are read-only after open, except that
 * mdb_store_index_open may add index tables at any time (it serializes
 * itself). LMDB allows one write transaction at a time (write_batch.h owns
 * it in the server) and any number of readers.
 *
 * Errors: functions return LUMEN_OK or a negative lumen_err. LMDB codes are
 * mapped by mdb_store_map_error: MDB_MAP_FULL → LUMEN_EFULL (the operator
 * must raise `maxsize`; mdb_store_describe says so), MDB_NOTFOUND →
 * LUMEN_ENOTFOUND, MDB_KEYEXIST → LUMEN_EEXIST, ENOMEM → LUMEN_ENOMEM,
 * MDB_READERS_FULL → LUMEN_ELIMIT, anything else → LUMEN_EIO.
 *
 * Caveats:
 *  - mdb_store_index_open starts its own write transaction when the table is
 *    new: never call it while the same thread holds a write transaction
 *    (inside a write_batch apply function it would deadlock). Open every
 *    configured index table at start-up and keep the handles.
 *  - with dbnosync a crash may lose the last commits (never consistency).
 *  - entry IDs start at 1 and are never reused.
 */
#ifndef LUMEN_MDB_STORE_H
#define LUMEN_MDB_STORE_H

#include <lmdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lumen_error.h"

/* Defaults when the matching option is 0. */
#define MDB_STORE_DEFAULT_MAXSIZE ((size_t)10 << 30)  /* 10 GiB, sparse */
#define MDB_STORE_DEFAULT_MAXREADERS 126
#define MDB_STORE_DEFAULT_MAXINDEXES 128
/*
 * Bumped whenever the on-disk layout (records, hashes, keys) changes.
 * 2: entry records store their values' normalized forms (entry.h). A
 * version 1 database is still read (its records normalize on read) and
 * becomes version 2 when opened for writing, so that an older lumend
 * refuses it instead of misreading the new records.
 */
#define MDB_STORE_FORMAT_VERSION 2
#define MDB_STORE_FORMAT_OLDEST 1
/* Longest attribute name usable as an index table name. */
#define MDB_STORE_INDEX_NAME_MAX 128

struct mdb_store_options {
	const char *directory;   /* must exist */
	size_t maxsize;          /* map size in bytes; 0 = default */
	unsigned maxreaders;     /* 0 = default */
	unsigned maxindexes;     /* index tables at most; 0 = default */
	bool dbnosync;           /* MDB_NOSYNC: commits do not wait for the disk */
	bool read_only;          /* MDB_RDONLY, e.g. for an exporter */
};

struct mdb_store_index {
	char name[MDB_STORE_INDEX_NAME_MAX + 1];
	MDB_dbi dbi;
};

struct mdb_store {
	MDB_env *env;
	uint64_t serial;         /* no other store of this process has it (lookup memos) */
	MDB_dbi id2entry, dn2id, id2name, subcount, meta, journal;
	bool has_journal;        /* false: read-only, and the table was never made */
	/* The IDs of the entries of class referral (RFC 3296), so that the
	 * many databases without one learn it from one lookup (referral.c). */
	MDB_dbi referrals;
	bool has_referrals;      /* false: read-only, and the table was never made */
	/* The table may hold an ID: set at open when it does, and for good
	 * before a write that lists one commits. False: no snapshot begun
	 * since open holds one, which spares every operation a look at the
	 * table (mdb_stat on a named table searches the main one in each
	 * new snapshot: ~600 instructions). */
	atomic_bool referrals_listed;
	/* No entry with descendants was ever renamed or moved: the DN stored
	 * in each entry is its current one (read at open; cleared for good by
	 * mdb_store_names_moved). A database made before the marker existed
	 * lacks it, and its readers keep correcting DNs. */
	atomic_bool names_current;
	char *directory;
	size_t maxsize;
	bool dbnosync;
	/* Counts index tables opened: a parked snapshot older than an open
	 * does not know the table's handle, and opening a table that exists
	 * commits nothing a reader could see (mdb_reader_begin). */
	atomic_uint_fast64_t tables_opened;
	/* index tables opened so far, guarded by index_lock */
	pthread_mutex_t index_lock;
	struct mdb_store_index *indexes;
	size_t n_indexes, max_indexes;
};

/*
 * Opens (creating if needed) the environment in options->directory and its
 * tables, and checks the format version. On failure writes a message naming
 * the directory and the reason into errbuf (if given).
 * Errors: LUMEN_EINVAL (no directory), LUMEN_ENOTFOUND (directory missing),
 * LUMEN_EUNSUPPORTED (other format version), LUMEN_EBUSY (locked by another
 * process), LUMEN_ENOMEM, LUMEN_EIO.
 */
int mdb_store_open(const struct mdb_store_options *options, struct mdb_store **out,
		   char *errbuf, size_t errlen);
/* Closes the environment; every transaction must have ended. NULL is fine. */
void mdb_store_close(struct mdb_store *store);

/* Maps an LMDB return code (or errno value) to a lumen_err; 0 → LUMEN_OK. */
int mdb_store_map_error(int mdb_rc);
/*
 * The highest 8-byte integer key of table dbi (the last ID given out, for
 * the tables keyed by entry ID); 0 when the table is empty. Errors as
 * mdb_store_map_error.
 */
int mdb_store_last_key(MDB_txn *txn, MDB_dbi dbi, uint64_t *id);
/*
 * A log-able sentence for err in this store's terms (for LUMEN_EFULL: which
 * setting to raise and its current value). Returns buf.
 */
const char *mdb_store_describe(const struct mdb_store *store, int err, char *buf, size_t len);

/*
 * The handle of the index table of attribute name (lower-case primary
 * name), creating the table if needed.
 * Errors: LUMEN_EINVAL (empty or too long name), LUMEN_ELIMIT (more than
 * maxindexes tables), LUMEN_EFULL, LUMEN_EIO.
 */
int mdb_store_index_open(struct mdb_store *store, const char *name, MDB_dbi *out);

/*
 * Whether the index table of attribute name exists, without creating it.
 * Errors: LUMEN_EINVAL (empty or too long name), LUMEN_EIO.
 */
int mdb_store_index_exists(struct mdb_store *store, const char *name, bool *exists);

/*
 * The index kinds (backend_index_kind bits) recorded as fully built for the
 * table of attribute name; *found is false when none were recorded.
 * Errors: LUMEN_EINVAL (bad name), LUMEN_EIO.
 */
int mdb_store_index_kinds(struct mdb_store *store, const char *name, unsigned *kinds,
			  bool *found);
/*
 * Record kinds as built for name inside txn (a write txn), or in a txn of
 * its own when txn is NULL. Errors: LUMEN_EINVAL, LUMEN_EFULL, LUMEN_EIO.
 */
int mdb_store_set_index_kinds(struct mdb_store *store, MDB_txn *txn, const char *name,
			      unsigned kinds);

/* Whether the store holds no entry at all. Errors: LUMEN_EIO. */
int mdb_store_is_empty(struct mdb_store *store, bool *empty);

/*
 * Allocates the next entry ID inside write transaction txn (rolled back with
 * it). Errors: LUMEN_EFULL, LUMEN_EIO.
 */
/*
 * In a write transaction renaming or moving an entry that has descendants
 * (their stored DNs now lag behind): clears names_current and removes its
 * marker. The flag drops before the commit, so a reader whose snapshot
 * sees the move also sees the flag down. Errors: LUMEN_EIO, LUMEN_EFULL.
 */
int mdb_store_names_moved(struct mdb_store *store, MDB_txn *txn);

int mdb_store_next_id(struct mdb_store *store, MDB_txn *txn, uint64_t *id);
/* Forces the data to disk (after a bulk load). Errors: LUMEN_EIO. */
int mdb_store_sync(struct mdb_store *store);

/* ------------------------------------------------ per-worker read txns */

/*
 * A reusable read transaction. Begin it for a batch of reads, end it when
 * the batch is done (or refresh it between batches of a long search) so the
 * old snapshot is not pinned.
 */
/* dn2id and the index tables a search or a bind reads (one or two each). */
#define MDB_READER_KEPT_CURSORS 8

struct mdb_reader {
	struct mdb_store *store;
	MDB_txn *txn;     /* NULL until first begin */
	uint64_t snapshot;        /* counts begins: which snapshot is current */
	uint64_t tables_known;    /* store->tables_opened before the snapshot began */
	/* Cursors kept from snapshot to snapshot, one per table, in the order
	 * first asked for; cursor NULL past the last. */
	struct mdb_kept_cursor {
		MDB_dbi table;
		MDB_cursor *cursor;
		uint64_t snapshot;    /* renewed for this snapshot */
	} kept[MDB_READER_KEPT_CURSORS];
	bool active;
	bool parked;              /* active, but set aside by mdb_reader_park */
};

void mdb_reader_init(struct mdb_reader *reader, struct mdb_store *store);
/*
 * Starts (or renews) the snapshot. A parked reader whose snapshot is still
 * the newest commit carries on with it: no renew, and LMDB's tables and
 * the kept cursors stay current (renewing costs each table used a lookup of
 * its root, a twentieth of an indexed search's instructions).
 * Errors: LUMEN_ELIMIT (maxreaders), LUMEN_EIO.
 */
int mdb_reader_begin(struct mdb_reader *reader);
/* Releases the snapshot; the transaction is kept for the next begin. */
void mdb_reader_end(struct mdb_reader *reader);
/*
 * Sets an active reader aside with its snapshot, for a later begin to take
 * up if nothing has been committed since; a snapshot that is no longer the
 * newest is ended instead. A parked snapshot pins the pages a later commit
 * frees, as any reader does, until mdb_reader_end: whoever parks readers
 * must end them once a write commits (mdb_reader_older_than), and must
 * park under the same lock, so that a commit between the check here and
 * the parking is not missed.
 */
void mdb_reader_park(struct mdb_reader *reader);
/* A parked reader whose snapshot is older than txnid. */
bool mdb_reader_older_than(const struct mdb_reader *reader, uint64_t txnid);
/* end + begin: moves to the newest snapshot. Errors: as mdb_reader_begin. */
int mdb_reader_refresh(struct mdb_reader *reader);
/* Frees the transaction and the kept cursors (before mdb_store_close). */
void mdb_reader_free(struct mdb_reader *reader);
/*
 * A cursor on `table` in the reader's current snapshot, kept by the reader
 * and renewed for each snapshot: opening and closing one per lookup was a
 * seventh of a Bind's name lookup, and 3 % of an indexed search's
 * instructions (LMDB allocates and initializes each one). NULL when the
 * reader is not active, already keeps MDB_READER_KEPT_CURSORS other
 * tables, or none could be had: the caller opens its own, which reports
 * why. The reader owns it; mdb_reader_free closes it.
 */
MDB_cursor *mdb_reader_cursor(struct mdb_reader *reader, MDB_dbi table);
/* mdb_reader_cursor on the store's dn2id table. */
MDB_cursor *mdb_reader_dn2id_cursor(struct mdb_reader *reader);

#endif
