/*
 * fake_database.c — canned answers behind the database interface
 * (fake_database.h).
 */
#include "fake_database.h"

#include <string.h>

#include "ldap_result_codes.h"
#include "lumen_error.h"

static struct fake_database *fake_of(struct database *db)
{
	return db->impl;
}

static void copy_view(char *to, size_t room, struct ber_view v)
{
	size_t n = v.len < room - 1 ? v.len : room - 1;
	if (n > 0)
		memcpy(to, v.ptr, n);
	to[n] = '\0';
}

/* Record the call and set the canned result on op. */
static int answer(struct database *db, struct backend_op *op, enum fake_database_call call,
		  struct ber_view ndn)
{
	struct fake_database *f = fake_of(db);
	f->last_call = call;
	f->n_calls++;
	copy_view(f->last_ndn, sizeof(f->last_ndn), ndn);
	copy_view(f->requester, sizeof(f->requester), op->requester_ndn);
	op->result_code = f->result_code;
	op->diagnostic = f->diagnostic;
	return LUMEN_OK;
}

static int fake_search(struct database *db, struct backend_op *op, struct backend_search *s)
{
	struct fake_database *f = fake_of(db);
	for (size_t i = 0; i < f->n_entries; i++) {
		const struct entry *e = f->entries[i];
		struct backend_entry_info info = { .id = i + 1, .dn = e->dn, .ndn = e->ndn };
		if (s->sink(s->sink_ctx, e, &info) == 0)
			op->entries_sent++;
	}
	return answer(db, op, FAKE_DB_SEARCH, s->base_ndn);
}

/* The server's own reads (access control, bind) find the stored entries. */
static int fake_fetch(struct database *db, struct backend_op *op, struct ber_view ndn,
		      backend_entry_fn fn, void *ctx)
{
	(void)op;
	struct fake_database *f = fake_of(db);
	for (size_t i = 0; i < f->n_stored; i++) {
		const struct entry *e = f->stored[i];
		struct backend_entry_info info = { .id = i + 1, .dn = e->dn, .ndn = e->ndn };
		if (ber_view_eq(e->ndn, ndn))
			return fn(ctx, e, &info);
	}
	return LUMEN_OK;
}

static int fake_compare(struct database *db, struct backend_op *op, struct ber_view ndn,
			struct ber_view attribute, struct ber_view value)
{
	(void)attribute, (void)value;
	return answer(db, op, FAKE_DB_COMPARE, ndn);
}

static int fake_add(struct database *db, struct backend_op *op, struct ber_view dn,
		    struct ber_view ndn, const struct ldap_attribute *attributes, size_t n)
{
	(void)dn, (void)attributes, (void)n;
	return answer(db, op, FAKE_DB_ADD, ndn);
}

static int fake_delete(struct database *db, struct backend_op *op, struct ber_view ndn)
{
	return answer(db, op, FAKE_DB_DELETE, ndn);
}

static int fake_modify(struct database *db, struct backend_op *op, struct ber_view ndn,
		       const struct ldap_change *changes, size_t n)
{
	(void)changes, (void)n;
	return answer(db, op, FAKE_DB_MODIFY, ndn);
}

static int fake_modrdn(struct database *db, struct backend_op *op, struct ber_view ndn,
		       struct ber_view new_rdn, bool delete_old_rdn, bool has_new_superior,
		       struct ber_view new_superior_ndn)
{
	(void)new_rdn, (void)delete_old_rdn, (void)has_new_superior, (void)new_superior_ndn;
	return answer(db, op, FAKE_DB_MODRDN, ndn);
}

static void fake_figures(struct database *db, struct database_figures *out)
{
	(void)db, (void)out;
}

static size_t fake_unbuilt_indexes(struct database *db, const char **names, size_t max)
{
	(void)db, (void)names, (void)max;
	return 0;
}

static void fake_close(struct database *db)
{
	(void)db;
}

static const struct database_ops fake_ops = {
	.search = fake_search, .fetch = fake_fetch, .compare = fake_compare,
	.add = fake_add, .delete = fake_delete, .modify = fake_modify,
	.modrdn = fake_modrdn, .figures = fake_figures,
	.unbuilt_indexes = fake_unbuilt_indexes, .close = fake_close,
};

void fake_database_init(struct fake_database *f)
{
	memset(f, 0, sizeof(*f));
	f->db.ops = &fake_ops;
	f->db.impl = f;
	f->result_code = LDAP_SUCCESS;
}
