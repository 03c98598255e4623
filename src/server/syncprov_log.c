/*
 * syncprov_log.c — syncprov's session log (`syncprov-sessionlog N`): the
 * last N changes kept in the database's change history (database.h,
 * "Change history"), written in each change's own transaction, so a
 * refresh whose cookie is still inside it gets RFC 4533's delete phase
 * (the changed entries and the entryUUIDs of the deleted ones) instead
 * of the present phase, also after a restart; the entries a delete phase
 * reads (only those the log names as changed, through the entryUUID
 * index); and the contextCSN at start from its newest record.
 */
#include "syncprov_internal.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dn.h"
#include "filter.h"
#include "ldap_result_codes.h"
#include "ldap_sync.h"
#include "log.h"
#include "lumen_error.h"

/* ------------------------------------------------------------- writing */

static struct ber_view uuid_of(const struct syncprov *sp, const struct entry *e)
{
	const struct entry_attribute *a = e != NULL ? entry_find_type(e, sp->entry_uuid) : NULL;
	return a != NULL ? a->values[0].value : (struct ber_view){ NULL, 0 };
}

int syncprov_log_write(struct syncprov *sp, struct database_txn *txn,
		       const struct database_txn_ops *ops, const struct database_write *w)
{
	if (sp->sessionlog == 0 || w->csn.len != CSN_LENGTH)
		return LUMEN_OK;
	struct database_journal_record r = { .kind = w->kind, .csn = w->csn };
	r.uuid = uuid_of(sp, w->after != NULL ? w->after : w->before);
	if (w->kind == DATABASE_WRITE_DELETE)
		r.ndn = w->before->ndn;
	else if (w->kind == DATABASE_WRITE_MODRDN)
		r.ndn = w->after->ndn;
	return ops->journal_append(txn, &r, sp->sessionlog);
}

/* ------------------------------------------------------------- reading */

static int note_newest(void *ctx, const struct database_journal_record *r)
{
	char *csn = ctx;
	memcpy(csn, r->csn.ptr, CSN_LENGTH);
	csn[CSN_LENGTH] = '\0';
	return 0;
}

int syncprov_log_newest(struct syncprov *sp, struct database *db, char csn[CSN_LENGTH + 1])
{
	csn[0] = '\0';
	if (sp->sessionlog == 0)
		return LUMEN_ENOTFOUND;
	return database_journal_read(db, (struct ber_view){ NULL, 0 }, note_newest, csn);
}

/* The entryUUIDs a refresh is to delete, 16 bytes each, in arena. */
struct deletes {
	struct arena *arena;
	struct ber_view base_ndn;
	enum ldap_scope scope;
	uint8_t *uuids;
	size_t n, cap;
};

static int add_uuid(struct deletes *d, struct ber_view text)
{
	uint8_t bytes[LDAP_SYNC_UUID_SIZE];
	if (!ldap_sync_uuid_parse(text, bytes))
		return 0;   /* an entry without an entryUUID was never replicated */
	uint8_t *grown = arena_reserve(d->arena, d->uuids, d->n, &d->cap, d->n + 1,
				       LDAP_SYNC_UUID_SIZE, 16);
	if (grown == NULL)
		return LUMEN_ENOMEM;
	d->uuids = grown;
	memcpy(d->uuids + d->n * LDAP_SYNC_UUID_SIZE, bytes, LDAP_SYNC_UUID_SIZE);
	d->n++;
	return 0;
}

static bool same(struct ber_view a, struct ber_view b)
{
	return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

/* Is ndn in the search's scope? */
static bool in_scope(const struct deletes *d, struct ber_view ndn)
{
	struct ber_view rdn, parent;
	switch (d->scope) {
	case LDAP_SCOPE_BASE:
		return same(ndn, d->base_ndn);
	case LDAP_SCOPE_ONE:
		dn_split_first(ndn, &rdn, &parent);
		return ndn.len > 0 && same(parent, d->base_ndn);
	case LDAP_SCOPE_CHILDREN:
		return !same(ndn, d->base_ndn) && dn_is_within(ndn, d->base_ndn);
	case LDAP_SCOPE_SUBTREE:
		break;
	}
	return dn_is_within(ndn, d->base_ndn);
}

/*
 * A delete in the search's scope, and a rename that took an entry out
 * of it: the consumer is to drop the entry. (A change that made an entry
 * stop matching the filter is not seen: see the Caveats of
 * overlay_syncprov.c.)
 */
static int note_delete(void *ctx, const struct database_journal_record *r)
{
	struct deletes *d = ctx;
	bool inside = in_scope(d, r->ndn);
	if ((r->kind == DATABASE_WRITE_DELETE && inside) ||
	    (r->kind == DATABASE_WRITE_MODRDN && !inside))
		return add_uuid(d, r->uuid);
	return 0;
}

/* The oldest CSN of the cookie: the history must reach back to it. */
static struct ber_view oldest_csn(const struct sync_cookie *cookie)
{
	const struct csn *oldest = &cookie->csns[0];
	for (size_t i = 1; i < cookie->n_csns; i++)
		if (memcmp(cookie->csns[i].text, oldest->text, CSN_LENGTH) < 0)
			oldest = &cookie->csns[i];
	return (struct ber_view){ (const uint8_t *)oldest->text, CSN_LENGTH };
}

/* The Sync Info syncIdSet (refreshDeletes TRUE) of the deleted entries. */
static int send_id_set(struct overlay_request *req, const struct deletes *d)
{
	struct backend_search *s = req->u.search;
	struct ldap_sync_info info = { .kind = LDAP_SYNC_INFO_ID_SET, .refresh_deletes = true,
				       .uuids = d->uuids, .n_uuids = d->n };
	struct ber_writer w;
	if (ber_writer_init(&w, 64 + d->n * (LDAP_SYNC_UUID_SIZE + 2), 0) != LUMEN_OK)
		return LUMEN_ENOMEM;
	ldap_sync_info_encode(&info, &w);
	int rc = ber_writer_error(&w);
	if (rc == LUMEN_OK) {
		int sent = s->intermediate(s->intermediate_ctx, LDAP_SYNC_INFO_OID,
					   (struct ber_view){ w.buf, w.len });
		rc = sent == 0 || sent == BACKEND_SINK_PAUSE ? LUMEN_OK : LUMEN_EIO;
	}
	ber_writer_free(&w);
	return rc;
}

int syncprov_log_deletes(struct syncprov *sp, struct overlay_request *req,
			 const struct sync_cookie *cookie)
{
	if (sp->sessionlog == 0 || cookie->n_csns == 0)
		return LUMEN_ENOTFOUND;
	struct deletes d = { .arena = req->op->arena, .base_ndn = req->u.search->base_ndn,
			     .scope = req->u.search->scope };
	int rc = database_journal_read(req->database, oldest_csn(cookie), note_delete, &d);
	if (rc == LUMEN_ENOTFOUND || rc == LUMEN_EUNSUPPORTED)
		return LUMEN_ENOTFOUND;
	if (rc != LUMEN_OK) {
		log_printf(0, "syncprov: cannot read the session log (%s): present phase",
			   lumen_strerror(rc));
		return LUMEN_ENOTFOUND;
	}
	return d.n > 0 ? send_id_set(req, &d) : LUMEN_OK;
}

/* ------------------------------------------------------------ narrowing */

#define UUID_TEXT_LENGTH 36   /* 8-4-4-4-12 hexadecimal digits */

/* The entryUUIDs (text) of the entries added, modified or renamed. */
struct changed {
	struct arena *arena;
	char *uuids;                  /* UUID_TEXT_LENGTH bytes each */
	size_t n, cap;
	bool too_many;
};

static int note_changed(void *ctx, const struct database_journal_record *r)
{
	struct changed *c = ctx;
	if (r->kind == DATABASE_WRITE_DELETE || r->uuid.len != UUID_TEXT_LENGTH || c->too_many)
		return 0;
	if (c->n == SYNCPROV_NARROW_MAX) {
		c->too_many = true;   /* keeps reading: the log's errors still count */
		return 0;
	}
	char *grown = arena_reserve(c->arena, c->uuids, c->n, &c->cap, c->n + 1,
				    UUID_TEXT_LENGTH, 64);
	if (grown == NULL)
		return LUMEN_ENOMEM;
	c->uuids = grown;
	memcpy(c->uuids + c->n * UUID_TEXT_LENGTH, r->uuid.ptr, UUID_TEXT_LENGTH);
	c->n++;
	return 0;
}

static int compare_uuids(const void *a, const void *b)
{
	return strncasecmp(a, b, UUID_TEXT_LENGTH);
}

/* Sorted, each once (an entry changed ten times is read once). */
static void unique_uuids(struct changed *c)
{
	size_t kept = 0;
	if (c->n < 2)
		return;
	qsort(c->uuids, c->n, UUID_TEXT_LENGTH, compare_uuids);
	for (size_t i = 0; i < c->n; i++) {
		const char *u = c->uuids + i * UUID_TEXT_LENGTH;
		if (kept > 0 && compare_uuids(u, c->uuids + (kept - 1) * UUID_TEXT_LENGTH) == 0)
			continue;
		memmove(c->uuids + kept * UUID_TEXT_LENGTH, u, UUID_TEXT_LENGTH);
		kept++;
	}
	c->n = kept;
}

/* No entry ever has the nil UUID: an index lookup that finds nothing. */
static const char nil_uuid[UUID_TEXT_LENGTH + 1] = "00000000-0000-0000-0000-000000000000";

/* (|(entryUUID=u1)...), compiled into arena; with nothing changed, the
 * nil UUID's lookup (an empty OR is not RFC 4515 text). */
static int uuid_filter(const struct syncprov *sp, const struct changed *c,
		       struct arena *arena, struct filter *out)
{
	static const char item[] = "(entryUUID=)";
	size_t n = c->n > 0 ? c->n : 1;
	size_t len = 3 + n * (sizeof(item) - 1 + UUID_TEXT_LENGTH);
	char *text = arena_alloc(arena, len + 1);
	if (text == NULL)
		return LUMEN_ENOMEM;
	size_t at = 0;
	text[at++] = '(';
	text[at++] = '|';
	for (size_t i = 0; i < n; i++)
		at += (size_t)sprintf(text + at, "(entryUUID=%.*s)", UUID_TEXT_LENGTH,
				      c->n > 0 ? c->uuids + i * UUID_TEXT_LENGTH : nil_uuid);
	text[at++] = ')';
	const struct filter_limits limits = { .max_depth = 2, .max_nodes = n + 2 };
	struct ldap_filter *parsed;
	size_t bad;
	int rc = filter_text_parse(text, at, arena, &limits, &parsed, &bad);
	if (rc == LUMEN_OK)
		rc = filter_compile(sp->schema, parsed, &limits, arena, out);
	return rc == LUMEN_ENOMEM ? rc : (rc != LUMEN_OK ? LUMEN_ENOTFOUND : LUMEN_OK);
}

/* (&(search's filter)(uuids)); the search's own nodes are not changed. */
static int narrowed(const struct backend_search *s, struct filter *uuids, struct arena *arena)
{
	if (s->filter == NULL || s->filter->root == NULL)
		return LUMEN_OK;
	struct filter_node *and = arena_calloc(arena, 1, sizeof(*and));
	struct filter_node *first = arena_alloc(arena, sizeof(*first));
	if (and == NULL || first == NULL)
		return LUMEN_ENOMEM;
	*first = *s->filter->root;
	first->next = uuids->root;
	and->type = LDAP_FILTER_AND;
	and->children = first;
	uuids->root = and;
	uuids->n_nodes += s->filter->n_nodes + 1;
	return LUMEN_OK;
}

int syncprov_log_narrow(struct syncprov *sp, struct overlay_request *req,
			const struct sync_cookie *cookie)
{
	if (sp->sessionlog == 0 || cookie->n_csns == 0)
		return LUMEN_ENOTFOUND;
	struct backend_search *s = req->u.search;
	struct arena *arena = req->op->arena;
	struct changed c = { .arena = arena };
	int rc = database_journal_read(req->database, oldest_csn(cookie), note_changed, &c);
	if (rc == LUMEN_ENOMEM)
		return rc;
	if (rc != LUMEN_OK || c.too_many)
		return LUMEN_ENOTFOUND;
	unique_uuids(&c);
	struct filter *f = arena_alloc(arena, sizeof(*f));
	if (f == NULL)
		return LUMEN_ENOMEM;
	rc = uuid_filter(sp, &c, arena, f);
	if (rc == LUMEN_OK)
		rc = narrowed(s, f, arena);
	if (rc == LUMEN_OK)
		s->filter = f;
	return rc;
}
