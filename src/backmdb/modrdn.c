/*
 * modrdn.c — the ModifyDN operation: rename and/or move an entry with its
 * whole subtree. Only the moved entry's tree records and its own record
 * change; descendants keep their parent links, and their stored copies
 * learn the new DN lazily (backend_load_entry and the entry cache check
 * every DN they hand out against dn2id).
 */
#include "backend_internal.h"

#include <string.h>

#include "dn.h"
#include "ldap_result_codes.h"

struct modrdn_state {
	struct ber_view ndn;
	struct dn new_rdn;            /* parsed, one RDN */
	struct ber_view new_nrdn;     /* normalized */
	struct ber_view new_rdn_text; /* user form, re-escaped */
	bool delete_old_rdn;
	bool has_new_superior;
	struct ber_view new_superior_ndn;
};

static bool rdn_has_ava(const struct dn_rdn *rdn, const struct dn_ava *ava)
{
	for (size_t i = 0; i < rdn->n_avas; i++)
		if (rdn->avas[i].type == ava->type &&
		    rdn->avas[i].normalized.len == ava->normalized.len &&
		    memcmp(rdn->avas[i].normalized.ptr, ava->normalized.ptr,
			   ava->normalized.len) == 0)
			return true;
	return false;
}

/* Adds the new RDN's values; removes the old ones if asked (RFC 4511 §4.9). */
static int change_rdn_values(struct write_job *job, const struct modrdn_state *st,
			     const struct entry *before, struct entry *after)
{
	const struct dn_rdn *new_rdn = &st->new_rdn.rdns[0];
	struct dn old;
	int rc = LUMEN_OK;

	for (size_t i = 0; i < new_rdn->n_avas && rc == LUMEN_OK; i++) {
		struct attribute_description ad = { new_rdn->avas[i].type, { NULL, 0 } };
		rc = entry_add_values(after, &ad, &new_rdn->avas[i].value, 1, NULL);
		if (rc == LUMEN_EEXIST)
			rc = LUMEN_OK;
	}
	if (rc == LUMEN_ESCHEMA)
		return write_job_refuse(job, rc, LDAP_INVALID_ATTRIBUTE_SYNTAX, "new RDN value");
	if (rc != LUMEN_OK || !st->delete_old_rdn)
		return rc;
	rc = dn_parse(before->schema, (const char *)before->ndn.ptr, before->ndn.len,
		      job->op->arena, &old);
	for (size_t i = 0; rc == LUMEN_OK && old.n_rdns > 0 && i < old.rdns[0].n_avas; i++) {
		const struct dn_ava *ava = &old.rdns[0].avas[i];
		if (rdn_has_ava(new_rdn, ava))
			continue;
		struct attribute_description ad = { ava->type, { NULL, 0 } };
		rc = entry_delete_values(after, &ad, &ava->value, 1, NULL);
		if (rc == LUMEN_ENOTFOUND)
			rc = LUMEN_OK;   /* the value was already gone: nothing to remove */
	}
	return rc;
}

/* Nothing may move below a referral object, ManageDsaIT or not (slapd:
 * other, "new superior is a referral"); a consumer mirrors its provider. */
static int refuse_referral_superior(struct write_job *job, MDB_txn *txn, uint64_t parent_id)
{
	uint64_t ref_id = 0;
	if (job->op->replica)
		return LUMEN_OK;
	int rc = referral_above(job->be, txn, parent_id, &ref_id);
	if (rc != LUMEN_OK || ref_id == 0)
		return rc;
	return write_job_refuse(job, LUMEN_EINVAL, LDAP_OTHER, "new superior is a referral");
}

/* The new parent's ID, refusing moves out of the database or below itself. */
static int find_new_parent(struct write_job *job, MDB_txn *txn, const struct modrdn_state *st,
			   uint64_t id, uint64_t *parent_id)
{
	struct backend *be = job->be;
	struct dn2id_match match = { 0 };

	if (!st->has_new_superior)
		return dn2id_parent(be->store, txn, id, parent_id);
	if (backend_select(&be, 1, st->new_superior_ndn) != be)
		return write_job_refuse(job, LUMEN_EINVAL, LDAP_AFFECTS_MULTIPLE_DSAS,
					"the new superior is outside this database");
	int rc = dn2id_lookup(be->store, txn, st->new_superior_ndn, parent_id, &match);
	if (rc == LUMEN_ENOTFOUND)
		return write_job_no_such_object(job, txn, &match);
	if (rc != LUMEN_OK)
		return rc;
	rc = refuse_referral_superior(job, txn, *parent_id);
	if (rc != LUMEN_OK)
		return rc;
	rc = dn2id_is_within(be->store, txn, *parent_id, id);
	if (rc == 1)
		return write_job_refuse(job, LUMEN_EINVAL, LDAP_UNWILLING_TO_PERFORM,
					"cannot move an entry below itself");
	return rc < 0 ? rc : LUMEN_OK;
}

/* "rdn,parent" into the arena. */
static int join_dn(struct arena *arena, struct ber_view rdn, struct ber_view parent,
		   struct ber_view *out)
{
	uint8_t *p = arena_alloc(arena, rdn.len + 1 + parent.len + 1);
	if (p == NULL)
		return LUMEN_ENOMEM;
	memcpy(p, rdn.ptr, rdn.len);
	p[rdn.len] = ',';
	memcpy(p + rdn.len + 1, parent.ptr, parent.len);
	p[rdn.len + 1 + parent.len] = '\0';
	*out = (struct ber_view){ p, rdn.len + 1 + parent.len };
	return LUMEN_OK;
}

/* An entry with descendants moved: their stored DNs lag from now on. */
static int note_names_moved(struct backend *be, MDB_txn *txn, uint64_t id)
{
	uint64_t children = 0;

	if (!atomic_load(&be->store->names_current))
		return LUMEN_OK;
	int rc = dn2id_child_count(be->store, txn, id, &children);
	if (rc != LUMEN_OK || children == 0)
		return rc;
	return mdb_store_names_moved(be->store, txn);
}

/* Moves the tree record and names the copy after the move. */
static int move_and_rename(struct write_job *job, MDB_txn *txn, const struct modrdn_state *st,
			   uint64_t id, struct entry *after)
{
	struct backend *be = job->be;
	struct ber_view parent_ndn, parent_dn, ndn, dn;
	uint64_t parent_id;

	int rc = find_new_parent(job, txn, st, id, &parent_id);
	if (rc == LUMEN_OK)
		rc = dn2id_names(be->store, txn, parent_id, job->op->arena, &parent_ndn, &parent_dn);
	if (rc == LUMEN_OK)
		rc = dn2id_move(be->store, txn, id, parent_id, st->new_nrdn, st->new_rdn_text);
	if (rc == LUMEN_OK)
		rc = note_names_moved(be, txn, id);
	if (rc == LUMEN_OK)   /* before the commit: see backend_internal.h */
		atomic_store(&be->dn_moved_txn, mdb_txn_id(txn));
	if (rc == LUMEN_EEXIST)
		return write_job_refuse(job, rc, LDAP_ENTRY_ALREADY_EXISTS, NULL);
	if (rc == LUMEN_EINVAL && !job->decided)
		return write_job_refuse(job, rc, LDAP_UNWILLING_TO_PERFORM,
					"cannot move an entry below itself");
	if (rc == LUMEN_OK)
		rc = join_dn(job->op->arena, st->new_nrdn, parent_ndn, &ndn);
	if (rc == LUMEN_OK)
		rc = join_dn(job->op->arena, st->new_rdn_text, parent_dn, &dn);
	if (rc == LUMEN_OK)
		rc = entry_set_dn(after, dn, ndn);
	return rc;
}

static int apply_modrdn(struct write_job *job, MDB_txn *txn)
{
	struct modrdn_state *st = job->arg;
	struct entry *before = NULL, *after = NULL;
	struct schema_violation v;
	uint64_t id;

	int rc = write_job_load_target(job, txn, st->ndn, &id, &before);
	if (rc == LUMEN_OK && backend_is_suffix(job->be, st->ndn))
		rc = write_job_refuse(job, LUMEN_EINVAL, LDAP_UNWILLING_TO_PERFORM,
				      "cannot rename the suffix entry");
	if (rc == LUMEN_OK)
		rc = write_job_check(job, txn, DATABASE_WRITE_MODRDN, before, NULL);
	if (rc == LUMEN_OK)
		rc = write_job_pre_read(job, before);
	if (rc == LUMEN_OK)
		rc = entry_dup(before, &after);
	if (rc == LUMEN_OK)
		rc = move_and_rename(job, txn, st, id, after);
	if (rc == LUMEN_OK)
		rc = change_rdn_values(job, st, before, after);
	if (rc == LUMEN_OK) {
		rc = entry_check_modify(before, after, job->op->arena, &v);
		if (rc == LUMEN_ESCHEMA)
			rc = write_job_refuse(job, rc, v.ldap_code,
					      arena_strndup(job->op->arena, v.message,
							    strnlen(v.message, sizeof(v.message))));
	}
	if (rc == LUMEN_OK)
		rc = operational_on_modify(job->be, job->op, after);
	if (rc == LUMEN_OK)
		rc = write_job_replace(job, txn, id, DATABASE_WRITE_MODRDN, before, after);
	entry_free(before);
	entry_free(after);
	return rc;
}

/* Parses the new RDN on the caller's thread. Sets op's result on failure. */
static int parse_new_rdn(struct backend *be, struct backend_op *op, struct ber_view text,
			 struct modrdn_state *st)
{
	int rc = dn_parse(be->schema, (const char *)text.ptr, text.len, op->arena, &st->new_rdn);
	if (rc == LUMEN_OK && st->new_rdn.n_rdns != 1)
		rc = LUMEN_EMALFORMED;
	if (rc == LUMEN_OK)
		rc = dn_normalize_parsed(&st->new_rdn, op->arena, &st->new_nrdn);
	if (rc == LUMEN_OK)
		rc = dn_format(&st->new_rdn, op->arena, &st->new_rdn_text);
	if (rc == LUMEN_ENOMEM)
		return backend_fail(be, op, rc);
	if (rc != LUMEN_OK)
		backend_result(op, LDAP_INVALID_DN_SYNTAX, "invalid new RDN");
	return rc;
}

int backend_modrdn(struct backend *be, struct backend_op *op, struct ber_view ndn,
		   struct ber_view new_rdn, bool delete_old_rdn, bool has_new_superior,
		   struct ber_view new_superior_ndn)
{
	struct modrdn_state st = {
		.ndn = ndn, .delete_old_rdn = delete_old_rdn,
		.has_new_superior = has_new_superior, .new_superior_ndn = new_superior_ndn,
	};
	struct write_job job = { .be = be, .op = op, .apply = apply_modrdn, .arg = &st };

	op->matched_dn = (struct ber_view){ NULL, 0 };
	int rc = parse_new_rdn(be, op, new_rdn, &st);
	if (rc == LUMEN_ENOMEM)
		return rc;
	if (rc != LUMEN_OK)
		return LUMEN_OK;
	return write_job_run(&job);
}
