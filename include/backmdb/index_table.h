/*
 * index_table.h — attribute index keys and their ID lists (back-mdb).
 *
 * One LMDB table per indexed attribute (mdb_store_index_open), DUPSORT |
 * DUPFIXED | INTEGERDUP: each key holds the sorted 8-byte IDs of the
 * entries that produce it. A key is INDEX_KEY_SIZE bytes: one kind byte and
 * the big-endian stable 64-bit hash of the normalized bytes:
 *   presence        kind only (hash 0): every entry with the attribute
 *   equality        hash of the normalized value
 *   approx          hash of the value's approximate form (the caller
 *                   computes it, e.g. a phonetic code)
 *   substring       grams of INDEX_GRAM (3) bytes of the normalized value:
 *                   SUB_INITIAL  the value's first 1, 2 and 3 bytes
 *                   SUB_FINAL    the value's last 1, 2 and 3 bytes
 *                   SUB_ANY      every 3-byte window
 *                   (so a value of n bytes has min(n,3)*2 + max(n-2,0)
 *                   keys; grams are bytes, not characters, which is
 *                   consistent because values and assertions are
 *                   normalized the same way)
 * When a key's list would exceed IDL_MAX_IDS it is replaced by a range
 * marker: the duplicates 0, lo, hi (ID 0 sorts first and is never an
 * entry ID). A range only widens afterwards; removing an ID from it is a
 * no-op (a superset of candidates is always correct).
 *
 * Memory: key functions write into caller arrays; reads fill a caller IDL
 * (see idl.h for its allocation rules); nothing else allocates beyond LMDB
 * cursors (a run writer holds one until closed).
 * Thread-safety: key functions are pure; table functions and run writers
 * as their txn.
 *
 * Errors: LUMEN_EFULL (map full: raise maxsize), LUMEN_EIO (storage error
 * or a malformed stored list), LUMEN_EUNSUPPORTED (a substring assertion
 * with no indexable piece: fall back to the scope's candidates),
 * LUMEN_EINVAL (ID 0).
 *
 * Caveats:
 *  - hash collisions only add candidates; callers must re-test them.
 *  - when an entry changes, remove only the keys its new values no longer
 *    produce (index_keys_subtract), or a shared gram loses a live ID.
 */
#ifndef LUMEN_INDEX_TABLE_H
#define LUMEN_INDEX_TABLE_H

#include <lmdb.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ber.h"
#include "idl.h"

#define INDEX_KEY_SIZE 9
#define INDEX_GRAM 3

enum index_kind {
	INDEX_PRESENCE = 1,
	INDEX_EQUALITY = 2,
	INDEX_APPROX = 3,
	INDEX_SUB_INITIAL = 4,
	INDEX_SUB_ANY = 5,
	INDEX_SUB_FINAL = 6,
};

struct index_key {
	uint8_t bytes[INDEX_KEY_SIZE];
};

/* The key of one value of one kind (the value is ignored for presence). */
void index_key_make(enum index_kind kind, const uint8_t *value, size_t len,
		    struct index_key *out);
/* Number of substring keys a value of len bytes produces. */
size_t index_substring_key_count(size_t len);
/*
 * Writes the substring keys of a normalized value into out (room for cap);
 * returns how many the value has (write at most cap, so a return above cap
 * means the array was too small).
 */
size_t index_substring_keys(const uint8_t *value, size_t len, struct index_key *out, size_t cap);

/* Sorts keys and drops duplicates; returns the new count. */
size_t index_keys_sort_unique(struct index_key *keys, size_t n);
/* Removes from sorted a[] every key in sorted b[]; returns a's new count. */
size_t index_keys_subtract(struct index_key *a, size_t na, const struct index_key *b, size_t nb);

/* Adds id under key (no-op if there). Errors: LUMEN_EINVAL, LUMEN_EFULL, LUMEN_EIO. */
int index_add(MDB_txn *txn, MDB_dbi dbi, const struct index_key *key, uint64_t id);
/*
 * Adds ids[0..n) — ascending, unique, non-zero — under key in one go:
 * one lookup of the key, then one multi-item put (appended behind the
 * stored IDs when they all come after them, the bulk-load case). When the
 * stored count plus n would pass IDL_MAX_IDS the key becomes the range
 * covering both. Errors: LUMEN_EINVAL (n == 0, an ID 0 or unsorted IDs),
 * LUMEN_EFULL, LUMEN_EIO.
 */
int index_add_ids(MDB_txn *txn, MDB_dbi dbi, const struct index_key *key, const uint64_t *ids,
		  size_t n);

/*
 * Sorted runs for bulk loads: the keys of one table handed over in
 * ascending byte order, each with all its new IDs (index_run_add) or,
 * when the caller already knows the key has too many, the bounds of its
 * range (index_run_add_range). Keys that sort after the last key the
 * table held when the writer was opened are appended (MDB_APPEND), which
 * skips the B-tree search and leaves the pages full; the others go
 * through the normal lookup. Keys out of order are still stored right,
 * only slower. The writer owns one cursor of txn: close it before txn
 * ends. Errors: as index_add_ids, LUMEN_ENOMEM (open).
 */
struct index_run_writer {
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_cursor *cursor;
	struct index_key table_last;   /* the table's last key at open */
	bool table_empty;
	/* keys so far that went through the B-tree search (each may copy a page) */
	size_t merged;
};

int index_run_writer_open(struct index_run_writer *w, MDB_txn *txn, MDB_dbi dbi);
int index_run_add(struct index_run_writer *w, const struct index_key *key, const uint64_t *ids,
		  size_t n);
/* lo <= hi, lo > 0. Errors: LUMEN_EINVAL, LUMEN_EFULL, LUMEN_EIO. */
int index_run_add_range(struct index_run_writer *w, const struct index_key *key, uint64_t lo,
			uint64_t hi);
void index_run_writer_close(struct index_run_writer *w);
/* Removes id from key (no-op if absent or a range). Errors: LUMEN_EFULL, LUMEN_EIO. */
int index_remove(MDB_txn *txn, MDB_dbi dbi, const struct index_key *key, uint64_t id);
/* The IDs under key (empty if none). Errors: LUMEN_ENOMEM, LUMEN_EIO. */
int index_read(MDB_txn *txn, MDB_dbi dbi, const struct index_key *key, struct idl *out);
/* index_read through a cursor the caller keeps on the table (a reader's:
 * mdb_reader_cursor), which saves LMDB's allocation of one per read. */
int index_read_cursor(MDB_cursor *cursor, const struct index_key *key, struct idl *out);

/* A substring assertion's normalized pieces; a piece of length 0 is absent. */
struct index_substring {
	struct ber_view initial;
	const struct ber_view *any;
	size_t n_any;
	struct ber_view final;
};

/*
 * Candidates for a substring assertion: the intersection of its pieces'
 * gram lists. scratch is working space (any IDL; its contents are lost).
 * Pieces of 1–2 bytes in the middle cannot be looked up and are skipped.
 * Errors: LUMEN_EUNSUPPORTED (no indexable piece), LUMEN_ENOMEM, LUMEN_EIO.
 */
int index_read_substring(MDB_txn *txn, MDB_dbi dbi, const struct index_substring *assertion,
			 struct idl *out, struct idl *scratch);
/* index_read_substring through a cursor the caller keeps on the table. */
int index_read_substring_cursor(MDB_cursor *cursor, const struct index_substring *assertion,
				struct idl *out, struct idl *scratch);

#endif
