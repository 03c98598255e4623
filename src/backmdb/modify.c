/*
 * modify.c — the Modify operation (RFC 4511 §4.6, RFC 4525 increment).
 *
 * All changes of one request are applied to a copy of the entry; the copy
 * is checked against the schema as a whole and only then stored, with the
 * index keys that differ between the two, so a failing change leaves
 * nothing behind.
 */
#include "backend_internal.h"

#include <string.h>

#include "dn.h"
#include "ldap_result_codes.h"

struct modify_state {
	struct ber_view ndn;
	const struct ldap_change *changes;
	size_t n_changes;
};

/* True if e still holds every AVA of its own RDN. Errors: dn_parse's. */
static int rdn_intact(const struct entry *e, struct arena *arena, bool *intact)
{
	struct dn dn;

	*intact = true;
	int rc = dn_parse(e->schema, (const char *)e->ndn.ptr, e->ndn.len, arena, &dn);
	if (rc != LUMEN_OK || dn.n_rdns == 0)
		return rc;
	const struct dn_rdn *rdn = &dn.rdns[0];
	for (size_t i = 0; i < rdn->n_avas && *intact; i++) {
		bool found = false;
		for (size_t j = 0; j < e->n_attributes && !found; j++) {
			const struct entry_attribute *a = &e->attributes[j];
			found = a->desc.type == rdn->avas[i].type &&
				entry_attribute_find_normalized(a, rdn->avas[i].normalized) >= 0;
		}
		*intact = found;
	}
	return LUMEN_OK;
}

static int refuse_violation(struct write_job *job, const struct schema_violation *v)
{
	char *text = arena_strndup(job->op->arena, v->message,
				   strnlen(v->message, sizeof(v->message)));
	return write_job_refuse(job, LUMEN_ESCHEMA, v->ldap_code, text);
}

/* Applies the request's changes to after and checks the result. */
static int change_copy(struct write_job *job, const struct modify_state *st,
		       const struct entry *before, struct entry *after)
{
	struct schema_violation v;
	bool from_client = !job->op->from_tool;
	bool intact;
	int rc = LUMEN_OK;

	for (size_t i = 0; i < st->n_changes && rc == LUMEN_OK; i++)
		rc = entry_apply_change(after, &st->changes[i], from_client, &v);
	if (rc == LUMEN_ESCHEMA)
		return refuse_violation(job, &v);
	if (rc == LUMEN_OK)
		rc = rdn_intact(after, job->op->arena, &intact);
	if (rc == LUMEN_OK && !intact)
		return write_job_refuse(job, LUMEN_ESCHEMA, LDAP_NOT_ALLOWED_ON_RDN, NULL);
	if (rc == LUMEN_OK)
		rc = entry_check_modify(before, after, job->op->arena, &v);
	if (rc == LUMEN_ESCHEMA)
		return refuse_violation(job, &v);
	if (rc == LUMEN_OK)
		rc = operational_on_modify(job->be, job->op, after);
	return rc;
}

static int apply_modify(struct write_job *job, MDB_txn *txn)
{
	struct modify_state *st = job->arg;
	struct entry *before = NULL, *after = NULL;
	uint64_t id;

	int rc = write_job_load_target(job, txn, st->ndn, &id, &before);
	if (rc == LUMEN_OK)
		rc = write_job_check(job, txn, DATABASE_WRITE_MODIFY, before, NULL);
	if (rc == LUMEN_OK)
		rc = write_job_pre_read(job, before);
	if (rc == LUMEN_OK)
		rc = entry_dup(before, &after);
	if (rc == LUMEN_OK)
		rc = change_copy(job, st, before, after);
	if (rc == LUMEN_OK)
		rc = write_job_replace(job, txn, id, DATABASE_WRITE_MODIFY, before, after);
	entry_free(before);
	entry_free(after);
	return rc;
}

int backend_modify(struct backend *be, struct backend_op *op, struct ber_view ndn,
		   const struct ldap_change *changes, size_t n)
{
	struct modify_state st = { .ndn = ndn, .changes = changes, .n_changes = n };
	struct write_job job = { .be = be, .op = op, .apply = apply_modify, .arg = &st };

	op->matched_dn = (struct ber_view){ NULL, 0 };
	return write_job_run(&job);
}
