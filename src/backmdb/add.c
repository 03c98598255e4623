/*
 * add.c — the Add operation. The entry is built, schema-checked and given
 * its operational attributes on the submitter's thread; only the lookups
 * and the writes run on the committer thread, so concurrent adds share a
 * commit without sharing the CPU work.
 */
#include "backend_internal.h"

#include <string.h>

#include "dn.h"
#include "ldap_result_codes.h"
#include "ldap_url.h"

struct add_state {
	struct entry *entry;      /* owned by backend_add_owned */
};

/* The violation's code with its message copied into the arena. */
static void refuse_violation(struct backend_op *op, const struct schema_violation *v)
{
	char *text = arena_strndup(op->arena, v->message, strnlen(v->message,
								   sizeof(v->message)));
	backend_result(op, v->ldap_code, text);
}

/*
 * Nothing is added below a referral object, ManageDsaIT or not: the
 * subtree lives where its URLs say (slapd answers a referral there too).
 * id: the parent, or its closest existing ancestor. A consumer mirrors
 * its provider.
 */
static int parent_referral(struct write_job *job, MDB_txn *txn, uint64_t id,
			   const struct entry *e)
{
	uint64_t ref_id = 0;
	if (job->op->replica)
		return LUMEN_OK;
	int rc = referral_above(job->be, txn, id, &ref_id);
	if (rc != LUMEN_OK || ref_id == 0)
		return rc;
	rc = referral_answer(job->be, job->op, txn, ref_id, e->dn, e->ndn, LDAP_URL_SCOPE_ABSENT);
	if (rc != BACKEND_ANSWERED)
		return rc;
	job->decided = true;
	return LUMEN_EINVAL;
}

static int find_parent(struct write_job *job, MDB_txn *txn, const struct entry *e,
		       uint64_t *parent_id)
{
	struct backend *be = job->be;
	struct ber_view rdn, parent_ndn;
	struct dn2id_match match = { 0 };

	if (backend_is_suffix(be, e->ndn)) {
		*parent_id = 0;
		return LUMEN_OK;
	}
	dn_split_first(e->ndn, &rdn, &parent_ndn);
	if (parent_ndn.len == 0 || backend_select(&be, 1, parent_ndn) != be)
		return write_job_refuse(job, LUMEN_EINVAL, LDAP_UNWILLING_TO_PERFORM,
					"only the suffix entry may be added without a parent");
	int rc = dn2id_lookup(be->store, txn, parent_ndn, parent_id, &match);
	if (rc == LUMEN_OK || rc == LUMEN_ENOTFOUND) {
		int answered = parent_referral(job, txn, rc == LUMEN_OK ? *parent_id : match.id, e);
		if (answered != LUMEN_OK)
			return answered;
	}
	if (rc == LUMEN_ENOTFOUND)
		return write_job_no_such_object(job, txn, &match);
	return rc;
}

static int apply_add(struct write_job *job, MDB_txn *txn)
{
	struct add_state *st = job->arg;
	const struct entry *e = st->entry;
	uint64_t id, parent_id;

	int rc = dn2id_lookup(job->be->store, txn, e->ndn, &id, NULL);
	if (rc == LUMEN_OK)
		return write_job_refuse(job, LUMEN_EEXIST, LDAP_ENTRY_ALREADY_EXISTS, NULL);
	if (rc != LUMEN_ENOTFOUND)
		return rc;
	rc = find_parent(job, txn, e, &parent_id);
	if (rc == LUMEN_OK)
		rc = write_job_check(job, txn, DATABASE_WRITE_ADD, NULL, e);
	if (rc == LUMEN_OK)
		rc = operational_restamp_add(job->be, job->op, st->entry);
	if (rc != LUMEN_OK)
		return rc;
	rc = entry_store_add(job->be, txn, parent_id, e, job->op->arena, &job->changes, &id);
	if (rc == LUMEN_EEXIST)
		return write_job_refuse(job, rc, LDAP_ENTRY_ALREADY_EXISTS, NULL);
	if (rc == LUMEN_OK)
		rc = write_job_notify(job, txn, DATABASE_WRITE_ADD, NULL, e);
	if (rc == LUMEN_OK)
		rc = write_job_post_read(job, e);
	return rc;
}

/* Checks, stamps and stores e, which it frees. */
static int backend_add_owned(struct backend *be, struct backend_op *op, struct entry *e)
{
	struct schema_violation v;
	struct add_state st = { .entry = e };
	struct write_job job = { .be = be, .op = op, .apply = apply_add, .arg = &st };
	int rc;

	if (backend_select(&be, 1, e->ndn) != be) {
		backend_result(op, LDAP_UNWILLING_TO_PERFORM, "the entry is outside the database");
		rc = LUMEN_OK;
		goto done;
	}
	rc = entry_check_add(e, op->arena, &v);
	if (rc == LUMEN_ESCHEMA) {
		refuse_violation(op, &v);
		rc = LUMEN_OK;
		goto done;
	}
	if (rc == LUMEN_OK && op->assertion != NULL) {
		bool match = false;
		rc = backend_filter_matches(op, op->assertion, e, NULL, op->arena, &match);
		if (rc == LUMEN_ENOMEM || !match) {
			if (rc == LUMEN_ENOMEM)
				backend_filter_exhausted(op);
			else
				backend_result(op, LDAP_ASSERTION_FAILED, NULL);
			rc = LUMEN_OK;
			goto done;
		}
	}
	if (rc == LUMEN_OK)
		rc = operational_on_add(be, op, e);
	if (rc != LUMEN_OK) {
		rc = backend_fail(be, op, rc);
		goto done;
	}
	rc = write_job_run(&job);
done:
	entry_free(e);
	return rc;
}

int backend_add(struct backend *be, struct backend_op *op, struct ber_view dn,
		struct ber_view ndn, const struct ldap_attribute *attributes, size_t n)
{
	struct schema_violation v;
	struct entry *e = NULL;

	op->matched_dn = (struct ber_view){ NULL, 0 };
	int rc = entry_from_attributes(be->schema, dn, ndn, attributes, n, !op->from_tool, &e,
				       &v);
	switch (rc) {
	case LUMEN_OK:
		return backend_add_owned(be, op, e);
	case LUMEN_ESCHEMA:
		refuse_violation(op, &v);
		return LUMEN_OK;
	case LUMEN_ENOMEM:
		return backend_fail(be, op, rc);
	case LUMEN_ELIMIT:
		backend_result(op, LDAP_ADMIN_LIMIT_EXCEEDED, "too many attributes or values");
		return LUMEN_OK;
	default:
		backend_result(op, LDAP_INVALID_DN_SYNTAX, "invalid DN");
		return LUMEN_OK;
	}
}
