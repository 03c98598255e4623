/*
 * write_batch.h — group commit, and bulk writes for offline tools (back-mdb).
 *
 * Group commit: a writer thread submits a request (a function that applies
 * one LDAP operation's changes inside a given MDB_txn, plus its argument)
 * and blocks. One committer thread takes every request waiting (up to
 * max_requests), opens one write transaction, runs each request in its own
 * nested transaction — a request that fails aborts only its nested txn and
 * gets its own error — then commits once (one sync for the whole batch),
 * runs each request's after_commit hook, and only then wakes the
 * submitters. So a success is returned only once the commit holding it is
 * durable (unless dbnosync), and cache invalidations done in after_commit
 * are visible before the client hears back. Readers never wait: LMDB gives
 * them the last committed snapshot.
 *
 * Groups (RFC 5805 transactions): write_batch_group_begin queues a group
 * like a request; once the committer reaches it, it holds a nested
 * transaction open for the group while the group's owner hands it writes
 * one at a time (write_group_apply: each in a nested transaction of its
 * own below the group's, its result returned at once so the owner can go
 * on or give up), then write_group_end commits the group's transaction
 * (all of its writes) or aborts it (none), and waits for the batch's
 * commit. Members' after_commit hooks run at that commit, with the
 * group's final result. While a group is open the committer serves only
 * it: other writers wait, so a group must be short (bounded by its owner).
 *
 * Bulk mode (write_bulk_*): for lumenadd/lumenindex with the daemon
 * stopped. Operations run in nested transactions inside large transactions
 * committed every ops_per_txn operations without sync; one sync at the end.
 *
 * Memory: requests belong to the submitter (usually on its stack) and must
 * stay alive until write_batch_submit returns. The batch owns its thread.
 * Thread-safety: write_batch_submit may be called from any number of
 * threads; start/stop from one. A write_bulk belongs to one thread.
 *
 * Errors: a request's result is its apply function's error, or
 * LUMEN_EFULL (map full: raise maxsize), LUMEN_ENOMEM, LUMEN_EIO from
 * LMDB; LUMEN_EBUSY if the batch is stopping.
 *
 * Caveats:
 *  - apply runs on the committer thread: it must not block on anything a
 *    submitter holds, and must not begin, commit or abort transactions
 *    itself (nor call mdb_store_index_open).
 *  - if the batch's final commit fails, every request of that batch that
 *    had succeeded gets the commit's error.
 *  - after_commit runs on the committer thread for every request (success
 *    or not) before any submitter of the batch is woken: keep it short.
 *  - bulk mode switches the environment to MDB_NOSYNC until finish/abort:
 *    never use it while a write_batch runs on the same store.
 */
#ifndef LUMEN_WRITE_BATCH_H
#define LUMEN_WRITE_BATCH_H

#include <lmdb.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mdb_store.h"

#define WRITE_BATCH_DEFAULT_MAX_REQUESTS 256
#define WRITE_BULK_DEFAULT_OPS_PER_TXN 10000

/* Applies one operation in txn. Returns LUMEN_OK or an error (txn undone). */
typedef int (*write_apply_fn)(MDB_txn *txn, void *arg);
/* After the batch's commit: result is the request's final result, txnid the commit's ID. */
typedef void (*write_after_fn)(void *arg, int result, uint64_t txnid);

struct write_request {
	write_apply_fn apply;
	write_after_fn after_commit;   /* optional */
	void *arg;
	/* owned by the batch while submitted */
	int result;
	bool done;
	struct write_request *next;
};

struct write_batch_options {
	size_t max_requests;           /* per commit; 0 = default */
};

struct write_batch_stats {
	uint64_t commits, requests, failed_requests;
	uint64_t largest_batch;
};

struct write_batch;

/* Starts the committer thread. Errors: LUMEN_ENOMEM, LUMEN_EIO (thread). */
int write_batch_start(struct mdb_store *store, const struct write_batch_options *options,
		      struct write_batch **out);
/* Runs every request already submitted, then stops and frees. NULL is fine. */
void write_batch_stop(struct write_batch *batch);

/*
 * Queues request and waits until the commit holding it is durable.
 * Returns the request's result (also left in request->result).
 * Errors: as the apply function, LUMEN_EFULL, LUMEN_ENOMEM, LUMEN_EIO,
 * LUMEN_EBUSY (stopping), LUMEN_EINVAL (no apply function).
 */
int write_batch_submit(struct write_batch *batch, struct write_request *request);

void write_batch_get_stats(struct write_batch *batch, struct write_batch_stats *out);

/* ------------------------------------------------------------ groups */

struct write_group;

/*
 * Queue a group and wait until the committer has opened its transaction.
 * The calling thread owns the group until write_group_end; its own
 * write_batch_submit calls on this batch meanwhile fail with LUMEN_EBUSY
 * (the committer is serving the group: waiting would never end).
 * Errors: LUMEN_ENOMEM, LUMEN_EBUSY (stopping), the batch transaction's
 * LMDB error.
 */
int write_batch_group_begin(struct write_batch *batch, struct write_group **out);
/*
 * Apply member inside the group (its own nested transaction: a failed
 * member leaves the group as it was). Returns at once with the member's
 * result; after_commit runs at write_group_end's commit, so member (and
 * what its arg points to) must live until then. Errors: as apply.
 */
int write_group_apply(struct write_group *group, struct write_request *member);
/*
 * Commit (every member applied stays) or abort (nothing of the group
 * stays), wait for the batch's commit, run the members' after_commit,
 * and free the group. Returns LUMEN_OK, or the commit's error (then
 * nothing of the group was written).
 */
int write_group_end(struct write_group *group, bool commit);

/* ------------------------------------------------------------ bulk mode */

struct write_bulk {
	struct mdb_store *store;
	MDB_txn *txn;           /* current large transaction, NULL between */
	size_t ops_in_txn, ops_per_txn;
	bool restore_sync;      /* we turned MDB_NOSYNC on */
	int error;              /* first commit failure: only abort is legal */
};

/* Errors: LUMEN_EIO. */
int write_bulk_begin(struct write_bulk *bulk, struct mdb_store *store, size_t ops_per_txn);
/*
 * Applies one operation atomically (nested txn); commits the large txn
 * every ops_per_txn operations. A failing operation leaves no trace and
 * returns its error; a failing commit poisons the bulk (LUMEN_EPOISONED
 * afterwards). Errors: as apply, LUMEN_EFULL, LUMEN_ENOMEM, LUMEN_EIO,
 * LUMEN_EPOISONED.
 */
int write_bulk_apply(struct write_bulk *bulk, write_apply_fn apply, void *arg);
/* Commits what is left and syncs once. Errors: LUMEN_EFULL, LUMEN_EIO, LUMEN_EPOISONED. */
int write_bulk_finish(struct write_bulk *bulk);
/* Drops the current large txn (earlier ones stay committed) and restores sync. */
void write_bulk_abort(struct write_bulk *bulk);

#endif
