/*
 * write_hook.c — the write hook of an operation (database.h, "Write
 * hooks"): called inside the write transaction after each change, with a
 * transaction handle through which the hook (the overlay chain) reads and
 * changes other entries atomically with the operation.
 *
 * A hook's own changes go through the same entry_store functions as the
 * operation's and are noted in the same write_changes, so the caches are
 * invalidated for all of them after the one commit; they call the hook
 * again one level deeper, up to DATABASE_WRITE_MAX_DEPTH.
 */
#include "backend_internal.h"

#include <string.h>

#include "id2entry.h"
#include "index_table.h"
#include "journal.h"
#include "ldap_result_codes.h"

/* Bytes of scratch for one entry read during a hook's walk. */
#define HOOK_ENTRY_SCRATCH (256u * 1024u)

struct database_txn {
	struct write_job *job;
	MDB_txn *txn;
	unsigned depth;
};

static const struct database_txn_ops txn_ops;

/* The change's CSN (see struct database_write), kept as the job's newest. */
static struct ber_view change_csn(struct write_job *job, const struct entry *after,
				  char drawn[CSN_LENGTH + 1])
{
	struct ber_view csn = { NULL, 0 };
	const struct entry_attribute *a =
		after != NULL ? entry_find_type(after, job->be->ops.entry_csn.type) : NULL;
	if (a != NULL) {
		csn = a->values[0].value;
	} else {
		operational_new_csn(job->be, drawn);
		csn = (struct ber_view){ (const uint8_t *)drawn, CSN_LENGTH };
	}
	if (csn.len == CSN_LENGTH && memcmp(csn.ptr, job->newest_csn, CSN_LENGTH) > 0) {
		memcpy(job->newest_csn, csn.ptr, CSN_LENGTH);
		job->newest_csn[CSN_LENGTH] = '\0';
	}
	return csn;
}

static struct ber_view copy_view(struct arena *arena, struct ber_view v, int *rc)
{
	struct ber_view out = { NULL, 0 };
	if (v.len == 0 || *rc != LUMEN_OK)
		return out;
	out.ptr = arena_memdup(arena, v.ptr, v.len);
	out.len = out.ptr != NULL ? v.len : 0;
	if (out.ptr == NULL)
		*rc = LUMEN_ENOMEM;
	return out;
}

/* Notes the change for on_commit (database.h), copied into op->arena. */
static int note_change(struct write_job *job, enum database_write_kind kind,
		       const struct entry *before, const struct entry *after, struct ber_view csn)
{
	struct arena *arena = job->op->arena;
	if (job->n_notes == job->cap_notes) {
		size_t bigger = job->cap_notes > 0 ? job->cap_notes * 2 : 4;
		struct database_change *grown = arena_calloc(arena, bigger, sizeof(*grown));
		if (grown == NULL)
			return LUMEN_ENOMEM;
		if (job->n_notes > 0)
			memcpy(grown, job->notes, job->n_notes * sizeof(*grown));
		job->notes = grown;
		job->cap_notes = bigger;
	}
	const struct entry *e = after != NULL ? after : before;
	const struct entry_attribute *uuid = entry_find_type(e, job->be->ops.entry_uuid.type);
	int rc = LUMEN_OK;
	struct database_change *c = &job->notes[job->n_notes];
	c->kind = kind;
	c->csn = copy_view(arena, csn, &rc);
	c->uuid = copy_view(arena, uuid != NULL ? uuid->values[0].value
					       : (struct ber_view){ NULL, 0 }, &rc);
	c->old_ndn = copy_view(arena, before != NULL ? before->ndn : (struct ber_view){ NULL, 0 },
			       &rc);
	c->ndn = copy_view(arena, after != NULL ? after->ndn : (struct ber_view){ NULL, 0 }, &rc);
	if (rc == LUMEN_OK)
		job->n_notes++;
	return rc;
}

void write_job_committed(struct write_job *job)
{
	const struct database_write_hook *hook = job->op->write_hook;
	if (hook != NULL && hook->on_commit != NULL && job->n_notes > 0)
		hook->on_commit(hook->ctx, job->op, job->notes, job->n_notes);
}

static int call_hook(struct write_job *job, const struct database_write_hook *hook,
		     struct database_txn *handle, const struct database_write *w)
{
	int rc = hook->on_write(hook->ctx, handle, &txn_ops, job->op, w);
	/* an LDAP refusal is the operation's answer, not a storage failure */
	if (rc == LUMEN_EINVAL && job->op->result_code != LDAP_SUCCESS)
		job->decided = true;
	return rc;
}

static int notify_at(struct write_job *job, MDB_txn *txn, enum database_write_kind kind,
		     const struct entry *before, const struct entry *after, unsigned depth)
{
	char drawn[CSN_LENGTH + 1];
	struct ber_view csn = change_csn(job, after, drawn);
	const struct database_write_hook *hook = job->op->write_hook;
	if (hook == NULL)
		return LUMEN_OK;
	if (hook->on_commit != NULL) {
		int noted = note_change(job, kind, before, after, csn);
		if (noted != LUMEN_OK)
			return noted;
	}
	struct database_txn handle = { .job = job, .txn = txn, .depth = depth };
	struct database_write w = { .kind = kind, .before = before, .after = after,
				    .depth = depth, .csn = csn };
	return call_hook(job, hook, &handle, &w);
}

int write_job_check(struct write_job *job, MDB_txn *txn, enum database_write_kind kind,
		    const struct entry *before, const struct entry *after)
{
	const struct database_write_hook *check = job->op->write_check;
	if (check == NULL)
		return LUMEN_OK;
	struct database_txn handle = { .job = job, .txn = txn, .depth = 0 };
	struct database_write w = { .kind = kind, .before = before, .after = after };
	return call_hook(job, check, &handle, &w);
}

int write_job_notify(struct write_job *job, MDB_txn *txn, enum database_write_kind kind,
		     const struct entry *before, const struct entry *after)
{
	return notify_at(job, txn, kind, before, after, 0);
}

static bool holds_value(const struct entry *e, const struct attribute_type *type,
			struct ber_view value)
{
	for (size_t i = 0; i < e->n_attributes; i++)
		if (e->attributes[i].desc.type == type &&
		    entry_attribute_find_normalized(&e->attributes[i], value) >= 0)
			return true;
	return false;
}

/* Loads id and hands it to fn when it holds the value (type NULL: always);
 * a vanished ID is passed over (an index range may name IDs never used). */
static int offer(struct database_txn *t, uint64_t id, const struct attribute_type *type,
		 struct ber_view value, struct arena *scratch, database_txn_entry_fn fn,
		 void *ctx)
{
	struct entry *e = NULL;
	arena_reset(scratch);
	int rc = backend_load_entry(t->job->be, t->txn, id, scratch, &e);
	if (rc == LUMEN_ENOTFOUND)
		return LUMEN_OK;
	if (rc == LUMEN_OK && (type == NULL || holds_value(e, type, value)))
		rc = fn(ctx, e);
	entry_free(e);
	return rc;
}

/* An ID list that may be a range: each ID strictly below base is offered. */
static int offer_below(struct database_txn *t, uint64_t base, const struct idl *ids,
		       struct arena *scratch, database_txn_entry_fn fn, void *ctx)
{
	struct idl_iter it;
	int rc = LUMEN_OK;
	idl_iter_init(ids, &it);
	for (uint64_t id; rc == LUMEN_OK && !idl_is_empty(ids) &&
			  (id = idl_iter_next(ids, &it)) != 0;) {
		if (id == base)
			continue;
		rc = dn2id_is_within(t->job->be->store, t->txn, id, base);
		if (rc == 1)
			rc = offer(t, id, NULL, (struct ber_view){ NULL, 0 }, scratch, fn, ctx);
		else if (rc == 0 || rc == LUMEN_ENOTFOUND)
			rc = LUMEN_OK;
	}
	return rc;
}

static int txn_walk_below(struct database_txn *t, struct ber_view ndn,
			  database_txn_entry_fn fn, void *ctx)
{
	struct idl ids;
	struct arena scratch;
	uint64_t base;

	int rc = dn2id_lookup(t->job->be->store, t->txn, ndn, &base, NULL);
	if (rc != LUMEN_OK)
		return rc;
	idl_init(&ids);
	arena_init(&scratch, HOOK_ENTRY_SCRATCH);
	rc = dn2id_subtree(t->job->be->store, t->txn, base, &ids);
	if (rc == LUMEN_OK)
		rc = offer_below(t, base, &ids, &scratch, fn, ctx);
	arena_free(&scratch);
	idl_release(&ids);
	return rc;
}

static int walk_index(struct database_txn *t, const struct backend_index *ix,
		      const struct attribute_type *type, struct ber_view value,
		      struct arena *scratch, database_txn_entry_fn fn, void *ctx)
{
	struct index_key key;
	struct idl ids;
	struct idl_iter it;

	idl_init(&ids);
	index_key_make(INDEX_EQUALITY, value.ptr, value.len, &key);
	int rc = index_read(t->txn, ix->dbi, &key, &ids);
	if (rc == LUMEN_ENOTFOUND)
		rc = LUMEN_OK;
	idl_iter_init(&ids, &it);
	for (uint64_t id; rc == LUMEN_OK && !idl_is_empty(&ids) &&
			  (id = idl_iter_next(&ids, &it)) != 0;)
		rc = offer(t, id, type, value, scratch, fn, ctx);
	idl_release(&ids);
	return rc;
}

static int walk_all(struct database_txn *t, const struct attribute_type *type,
		    struct ber_view value, struct arena *scratch, database_txn_entry_fn fn,
		    void *ctx)
{
	struct id2entry_cursor c;
	struct ber_view bytes;
	uint64_t id;

	int rc = id2entry_cursor_open(t->job->be->store, t->txn, &c);
	while (rc == LUMEN_OK && (rc = id2entry_cursor_next(&c, &id, &bytes)) == LUMEN_OK)
		rc = offer(t, id, type, value, scratch, fn, ctx);
	if (rc == LUMEN_ENOTFOUND)
		rc = LUMEN_OK;   /* the end of the table */
	id2entry_cursor_close(&c);
	return rc;
}

static int txn_find_equal(struct database_txn *t, const struct attribute_type *type,
			  struct ber_view value, database_txn_entry_fn fn, void *ctx)
{
	const struct backend_index *ix = backend_index_of(t->job->be, type);
	struct arena scratch;

	arena_init(&scratch, HOOK_ENTRY_SCRATCH);
	int rc = ix != NULL && (ix->kinds & BACKEND_INDEX_EQUALITY) != 0
		 ? walk_index(t, ix, type, value, &scratch, fn, ctx)
		 : walk_all(t, type, value, &scratch, fn, ctx);
	arena_free(&scratch);
	return rc;
}

static int txn_fetch(struct database_txn *t, struct ber_view ndn, database_txn_entry_fn fn,
		     void *ctx)
{
	struct entry *e = NULL;
	uint64_t id;
	int rc = dn2id_lookup(t->job->be->store, t->txn, ndn, &id, NULL);
	if (rc == LUMEN_OK)
		rc = backend_load_entry(t->job->be, t->txn, id, t->job->op->arena, &e);
	if (rc == LUMEN_OK)
		rc = fn(ctx, e);
	entry_free(e);
	return rc;
}

/* modifiersName and modifyTimestamp as the hook's identity. */
static int stamp(struct write_job *job, struct ber_view modifier_ndn, struct entry *after)
{
	struct backend_op as_hook = *job->op;
	if (modifier_ndn.len > 0)
		as_hook.requester_ndn = modifier_ndn;
	return operational_on_modify(job->be, &as_hook, after);
}

/* Checks, stamps and stores an edited copy, then tells the hook. */
static int store_edit(struct database_txn *t, uint64_t id, struct ber_view modifier_ndn,
		      const struct entry *before, struct entry *after)
{
	struct write_job *job = t->job;
	struct arena *arena = job->op->arena;
	struct schema_violation v;

	int rc = entry_check_modify(before, after, arena, &v);
	if (rc == LUMEN_OK)
		rc = stamp(job, modifier_ndn, after);
	if (rc == LUMEN_OK)
		rc = entry_store_replace(job->be, t->txn, id, before, after, arena, &job->changes);
	if (rc == LUMEN_OK)
		rc = notify_at(job, t->txn, DATABASE_WRITE_MODIFY, before, after, t->depth + 1);
	return rc;
}

static int txn_edit(struct database_txn *t, struct ber_view ndn, struct ber_view modifier_ndn,
		    database_txn_edit_fn fn, void *ctx)
{
	struct write_job *job = t->job;
	struct entry *before = NULL, *after = NULL;
	uint64_t id;

	if (t->depth + 1 > DATABASE_WRITE_MAX_DEPTH)
		return LUMEN_ELIMIT;
	int rc = dn2id_lookup(job->be->store, t->txn, ndn, &id, NULL);
	if (rc == LUMEN_OK)
		rc = backend_load_entry(job->be, t->txn, id, job->op->arena, &before);
	if (rc == LUMEN_OK)
		rc = entry_dup(before, &after);
	if (rc == LUMEN_OK)
		rc = fn(ctx, after);
	if (rc == LUMEN_OK)
		rc = store_edit(t, id, modifier_ndn, before, after);
	else if (rc == DATABASE_TXN_UNCHANGED)
		rc = LUMEN_OK;
	entry_free(before);
	entry_free(after);
	return rc;
}

static int txn_journal_append(struct database_txn *t,
			      const struct database_journal_record *record, size_t keep)
{
	return journal_append(t->job->be->store, t->txn, record, keep);
}

static const struct database_txn_ops txn_ops = {
	.fetch = txn_fetch,
	.find_equal = txn_find_equal,
	.walk_below = txn_walk_below,
	.edit = txn_edit,
	.journal_append = txn_journal_append,
};
