/*
 * tool_load.h — what the bulk-load path (tool_load.c) shares with the
 * files that own the pieces it composes (private to src/backmdb).
 *
 * entry_store.c keeps the one description of an entry's records;
 * write_bulk.c keeps the large unsynced transactions of tool mode. The
 * bulk path uses both without nested transactions: a refused entry is
 * refused before anything of it is written, and any storage failure
 * stops the whole load (lumenadd then discards its staging copy).
 *
 * Thread-safety: everything here runs on the loader's writer thread.
 * Caveats:
 *  - these declarations belong in backend_internal.h / write_batch.h;
 *    they live here until those headers' owners take them.
 */
#ifndef LUMEN_TOOL_LOAD_H
#define LUMEN_TOOL_LOAD_H

#include <lmdb.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ber.h"
#include "write_batch.h"

struct backend;

/*
 * Stores the records of a new entry below parent_id (0: a suffix entry):
 * a fresh ID, dn2id/id2name/subcount, and id2entry from the already
 * encoded bytes (appended: IDs grow). No index is written. A refusal
 * (LUMEN_EEXIST, LUMEN_ENOTFOUND) writes nothing but uses up the ID.
 * Errors: LUMEN_EEXIST (DN taken), LUMEN_ENOTFOUND (parent),
 * LUMEN_EINVAL, LUMEN_EFULL, LUMEN_EIO.
 */
int entry_store_add_record(struct backend *be, MDB_txn *txn, uint64_t parent_id,
			   struct ber_view dn, struct ber_view ndn, const void *encoded,
			   size_t len, uint64_t *id_out);

/*
 * The bulk's current large transaction, begun if there is none. Writes
 * made in it directly are not undone one by one: see above.
 * Errors: LUMEN_EPOISONED, LUMEN_ENOMEM, LUMEN_EIO.
 */
int write_bulk_txn(struct write_bulk *bulk, MDB_txn **txn);
/* Commits the current large transaction (no sync). Errors: LUMEN_EFULL,
 * LUMEN_EIO, LUMEN_EPOISONED (an earlier commit failed; this one too). */
int write_bulk_commit(struct write_bulk *bulk);

/*
 * One pass over id2entry, shared by backend_reindex and
 * backend_check_indexes: every entry of txn in ID order is decoded and
 * its keys in the chosen index tables are filed into postings under its
 * ID. Whenever the postings pass memory_limit, and once at the end,
 * on_round gets them: they then hold the keys of the entries whose IDs
 * lie in [lo, hi] (hi is UINT64_MAX on the last round, so the rounds
 * partition every possible ID) and on_round must flush them.
 */
struct entry;
struct postings;

struct index_pass {
	struct backend *be;
	MDB_txn *txn;                  /* a snapshot to read id2entry in */
	const bool *tables;            /* per index table: file its keys? NULL = all */
	struct postings *postings;
	size_t memory_limit;
	/* each entry before its keys are filed; e is NULL when it does not decode */
	int (*on_entry)(void *ctx, uint64_t id, const struct entry *e);
	int (*on_round)(void *ctx, uint64_t lo, uint64_t hi);
	void *ctx;
	uint64_t entries;              /* out: entries read */
	unsigned rounds;               /* out: calls of on_round */
};

/* Errors: LUMEN_ENOMEM, LUMEN_EIO, or the first error of a callback. */
int index_pass_run(struct index_pass *p);

#endif
