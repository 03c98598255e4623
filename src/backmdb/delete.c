/*
 * delete.c — the Delete operation: a leaf's tree records, record and index
 * keys go in one transaction.
 */
#include "backend_internal.h"

#include "ldap_result_codes.h"

struct delete_state {
	struct ber_view ndn;
};

static int apply_delete(struct write_job *job, MDB_txn *txn)
{
	struct delete_state *st = job->arg;
	struct entry *e = NULL;
	uint64_t id, children = 0;

	int rc = write_job_load_target(job, txn, st->ndn, &id, &e);
	if (rc == LUMEN_OK)
		rc = dn2id_counts(job->be->store, txn, id, &children, NULL);
	if (rc == LUMEN_OK && children > 0)
		rc = write_job_refuse(job, LUMEN_EBUSY, LDAP_NOT_ALLOWED_ON_NON_LEAF, NULL);
	if (rc == LUMEN_OK)
		rc = write_job_check(job, txn, DATABASE_WRITE_DELETE, e, NULL);
	if (rc == LUMEN_OK)
		rc = write_job_pre_read(job, e);
	if (rc == LUMEN_OK)
		rc = entry_store_delete(job->be, txn, id, e, job->op->arena, &job->changes);
	if (rc == LUMEN_EBUSY && !job->decided)
		rc = write_job_refuse(job, rc, LDAP_NOT_ALLOWED_ON_NON_LEAF, NULL);
	if (rc == LUMEN_OK)
		rc = write_job_notify(job, txn, DATABASE_WRITE_DELETE, e, NULL);
	entry_free(e);
	return rc;
}

int backend_delete(struct backend *be, struct backend_op *op, struct ber_view ndn)
{
	struct delete_state st = { .ndn = ndn };
	struct write_job job = { .be = be, .op = op, .apply = apply_delete, .arg = &st };

	op->matched_dn = (struct ber_view){ NULL, 0 };
	return write_job_run(&job);
}
