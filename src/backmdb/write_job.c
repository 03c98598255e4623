/*
 * write_job.c — runs one LDAP write through group commit (or the bulk
 * writer in tool mode) and turns its outcome into the operation's result.
 *
 * The apply function runs on the committer thread while the submitter
 * waits, so it may use the submitter's arena: nobody else touches it then.
 * An LDAP-level refusal (noSuchObject, entryAlreadyExists, ...) is a
 * failed apply: its nested transaction is aborted, so nothing of it is
 * written, and `decided` tells the result apart from a storage failure.
 */
#include "backend_internal.h"

#include <string.h>

#include "ldap_result_codes.h"

int write_job_refuse(struct write_job *job, int err, int code, const char *diagnostic)
{
	backend_result(job->op, code, diagnostic);
	job->decided = true;
	return err != LUMEN_OK ? err : LUMEN_EINVAL;
}

int write_job_no_such_object(struct write_job *job, MDB_txn *txn, const struct dn2id_match *m)
{
	int rc = backend_no_such_object(job->be, job->op, txn, m);
	/* naming the ancestor failed: that is a storage failure, not an answer */
	job->decided = job->op->result_code == LDAP_NO_SUCH_OBJECT;
	return rc;
}

int write_job_check_assertion(struct write_job *job, const struct entry *e)
{
	const struct filter *f = job->op->assertion;
	bool match = false;
	if (f == NULL)
		return LUMEN_OK;
	int rc = backend_filter_matches(job->op, f, e, NULL, job->op->arena, &match);
	if (rc == LUMEN_ENOMEM) {
		job->decided = true;
		return backend_filter_exhausted(job->op);
	}
	if (match)
		return LUMEN_OK;
	return write_job_refuse(job, LUMEN_EINVAL, LDAP_ASSERTION_FAILED, NULL);
}

static int apply_trampoline(MDB_txn *txn, void *arg)
{
	struct write_job *job = arg;

	/* a retried or earlier-failed attempt must not leave stale notes */
	job->changes = (struct write_changes){ 0 };
	job->decided = false;
	job->newest_csn[0] = '\0';
	job->notes = NULL;
	job->n_notes = job->cap_notes = 0;
	return job->apply(job, txn);
}

static void after_commit(void *arg, int result, uint64_t txnid)
{
	struct write_job *job = arg;

	if (result != LUMEN_OK)
		return;
	backend_readers_committed(job->be, txnid);
	write_changes_invalidate(job->be, &job->changes, txnid);
	write_job_committed(job);
}

static void drop_reads(struct backend_op *op)
{
	entry_free(op->pre_read);
	entry_free(op->post_read);
	op->pre_read = op->post_read = NULL;
}

/*
 * A write in a group: applied at once in the group's transaction; its
 * after_commit runs when the group ends, after this call has returned, so
 * the job and a snapshot of op move to op's arena (which lives as long as
 * the group: database.h).
 */
static int run_in_group(struct write_job *job)
{
	struct backend_op *op = job->op;
	struct write_job *kept = arena_alloc(op->arena, sizeof(*kept));
	struct write_request *request = arena_alloc(op->arena, sizeof(*request));
	struct backend_op *op_after = arena_alloc(op->arena, sizeof(*op_after));
	if (kept == NULL || request == NULL || op_after == NULL)
		return LUMEN_ENOMEM;
	*kept = *job;
	*request = (struct write_request){
		.apply = apply_trampoline, .after_commit = after_commit, .arg = kept,
	};
	int rc = write_group_apply((struct write_group *)op->group, request);
	*job = *kept;                  /* what apply decided and noted */
	*op_after = *op;
	kept->op = op_after;
	return rc;
}

/* Hand the job to the committer (or its group) and wait for the outcome,
 * telling the caller around it (backend_op.wait). */
static int submit_and_wait(struct write_job *job)
{
	struct backend_op *op = job->op;
	struct write_request request = {
		.apply = apply_trampoline, .after_commit = after_commit, .arg = job,
	};
	backend_op_waiting(op, true);
	int rc = op->group != NULL ? run_in_group(job) : write_batch_submit(job->be->batch, &request);
	backend_op_waiting(op, false);
	return rc;
}

int write_job_run(struct write_job *job)
{
	struct backend *be = job->be;
	struct backend_op *op = job->op;
	int rc;

	if (be->read_only) {
		backend_result(op, LDAP_UNWILLING_TO_PERFORM, "the database is read-only");
		return LUMEN_OK;
	}
	if (be->tool_mode)
		rc = write_bulk_apply(&be->bulk, apply_trampoline, job);
	else
		rc = submit_and_wait(job);
	if (rc == LUMEN_OK) {
		__atomic_add_fetch(&be->writes, 1, __ATOMIC_RELAXED);
		memcpy(op->change_csn, job->newest_csn, sizeof(op->change_csn));
		backend_result(op, LDAP_SUCCESS, NULL);
		op->matched_dn = (struct ber_view){ NULL, 0 };
		return LUMEN_OK;
	}
	drop_reads(op);
	if (job->decided)
		return LUMEN_OK;
	return backend_fail(be, op, rc);
}

int write_job_referral(struct write_job *job, MDB_txn *txn, uint64_t id,
		       const struct dn2id_match *m, struct ber_view ndn)
{
	int rc = referral_check_target(job->be, job->op, txn, id, m, ndn);
	if (rc != BACKEND_ANSWERED)
		return rc;
	job->decided = true;
	return LUMEN_EINVAL;   /* aborts the transaction: nothing was written */
}

int write_job_load_target(struct write_job *job, MDB_txn *txn, struct ber_view ndn,
			  uint64_t *id, struct entry **out)
{
	struct dn2id_match match = { 0 };

	*out = NULL;
	int rc = dn2id_lookup(job->be->store, txn, ndn, id, &match);
	if (rc == LUMEN_OK || rc == LUMEN_ENOTFOUND) {
		int answered = write_job_referral(job, txn, rc == LUMEN_OK ? *id : 0, &match, ndn);
		if (answered != LUMEN_OK)
			return answered;
	}
	if (rc == LUMEN_ENOTFOUND)
		return write_job_no_such_object(job, txn, &match);
	if (rc == LUMEN_OK)
		rc = backend_load_entry(job->be, txn, *id, job->op->arena, out);
	if (rc == LUMEN_OK)
		rc = write_job_check_assertion(job, *out);
	if (rc != LUMEN_OK) {
		entry_free(*out);
		*out = NULL;
	}
	return rc;
}

/* A copy of e in *slot for a Pre-/Post-Read control when asked (replacing
 * any copy an earlier attempt of the write left). */
static int read_control_copy(bool wanted, const struct entry *e, struct entry **slot)
{
	if (!wanted)
		return LUMEN_OK;
	entry_free(*slot);
	*slot = NULL;
	return entry_dup(e, slot);
}

int write_job_pre_read(struct write_job *job, const struct entry *e)
{
	return read_control_copy(job->op->want_pre_read, e, &job->op->pre_read);
}

int write_job_post_read(struct write_job *job, const struct entry *e)
{
	return read_control_copy(job->op->want_post_read, e, &job->op->post_read);
}

int write_job_replace(struct write_job *job, MDB_txn *txn, uint64_t id,
		      enum database_write_kind kind, const struct entry *before,
		      const struct entry *after)
{
	int rc = entry_store_replace(job->be, txn, id, before, after, job->op->arena,
				     &job->changes);
	if (rc == LUMEN_OK)
		rc = write_job_notify(job, txn, kind, before, after);
	if (rc == LUMEN_OK)
		rc = write_job_post_read(job, after);
	return rc;
}
