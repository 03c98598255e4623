/*
 * syncprov_persist.c — RFC 4533's refreshAndPersist on the provider: the
 * persistent searches of a syncprov overlay (syncprov_internal.h).
 *
 * A persistent search is registered on its first call, before its
 * refresh reads the contextCSN. From then on the committer hands every
 * committed change (on_commit, in commit order) to each search whose base
 * the change's old or new DN lies under: a small copy (CSN, kind,
 * entryUUID, DNs) is appended to the search's queue and the search is
 * woken (conn_wake_op through the server's wake: it marks and kicks, the
 * committer never waits). Once the refresh has ended (its Sync Info
 * refreshPresent or refreshDelete went out instead of SearchResultDone),
 * each run of the search on a worker sends what is queued, in order: the
 * entry as it is now with state add or modify when it is in the search's
 * scope and filter, else state delete with the DN when it was (a delete, a
 * rename out of the scope); each Sync State control carries the cookie of
 * the change's CSN. The server's sink applies access control to every
 * message, as to the refresh: a delete for an entry a change took out of
 * the search is decided on that entry under its old DN. A deleted entry
 * leaves only its DN, on which access rules that test values (filter=)
 * cannot decide: under such rules the search ends with
 * e-syncRefreshRequired instead, and the consumer's refresh decides on
 * the entries that remain. A full output pauses the search until its
 * client reads.
 *
 * Bounds: a queue holds at most syncprov-persist-queue bytes. A consumer
 * that falls further behind (it does not read, so its output stays full
 * and its queue grows) is dropped back to a refresh: its queue is freed,
 * nothing more is queued for it, and its search ends with
 * e-syncRefreshRequired (4096), which OpenLDAP's consumer answers with a
 * new refresh from its cookie; the log says so. Writers never wait on it.
 *
 * Lifetime: the server releases a search when its operation ends however
 * it ends (Abandon, Unbind, close, its result): release unlinks it under
 * sp->lock, after which it is never woken again.
 */
#include "syncprov_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlist.h"
#include "dn.h"
#include "entry.h"
#include "ldap_result_codes.h"
#include "ldap_sync.h"
#include "log.h"
#include "lumen_error.h"

/* Changes one run sends before it lets other work have the worker (and
 * bounds what one run takes from the operation's arena). */
#define PERSIST_CHANGES_PER_RUN 256u
/* push_one: a delete the requester's access rules cannot decide (they
 * test values, and the entry is gone): the search goes back to a refresh,
 * which decides on the entries that are there. */
#define PERSIST_UNDECIDABLE 1

/* One queued change: the struct and its strings in one allocation. */
struct queued_change {
	struct queued_change *next;
	size_t size;                      /* bytes charged to the queue */
	enum database_write_kind kind;
	char csn[CSN_LENGTH + 1];
	struct ber_view uuid, old_ndn, ndn;
};

struct psearch {
	struct backend_persist base;      /* first: the server's handle */
	struct syncprov *sp;
	struct psearch *prev, *next;      /* sp->persistent */
	void (*wake)(void *ctx);
	void *wake_ctx;
	int rid;
	int consumer_sid;                 /* the consumer's serverID; -1 none */
	struct ber_view base_ndn;         /* the search's base (malloc) */
	/* under sp->lock: */
	struct queued_change *head, *tail;
	size_t queued;                    /* bytes */
	bool overflowed;                  /* dropped: ends with e-syncRefreshRequired */
	bool woken;                       /* woken since its last run emptied the queue */
	bool refreshing;                  /* the refresh has not ended */
	struct sync_cookie since;         /* the refresh's CSNs: older changes are in it */
};

static void free_queue(struct psearch *ps)
{
	while (ps->head != NULL) {
		struct queued_change *c = ps->head;
		ps->head = c->next;
		free(c);
	}
	ps->tail = NULL;
	ps->queued = 0;
}

static void unlink_locked(struct syncprov *sp, struct psearch *ps)
{
	DLIST_UNLINK(sp->persistent, ps);
}

static void free_search(struct psearch *ps)
{
	free_queue(ps);
	free((void *)ps->base_ndn.ptr);
	free(ps);
}

static void release(struct backend_persist *p)
{
	struct psearch *ps = (struct psearch *)p;
	struct syncprov *sp = ps->sp;
	pthread_mutex_lock(&sp->lock);
	unlink_locked(sp, ps);
	pthread_mutex_unlock(&sp->lock);
	free_search(ps);
}

void syncprov_persist_free_all(struct syncprov *sp)
{
	while (sp->persistent != NULL) {
		struct psearch *ps = sp->persistent;
		sp->persistent = ps->next;
		free_search(ps);
	}
}

int syncprov_persist_start(struct syncprov *sp, struct overlay_request *req,
			   const struct sync_cookie *asked)
{
	struct backend_search *s = req->u.search;
	struct psearch *ps = calloc(1, sizeof(*ps));
	void *base = ps != NULL ? malloc(s->base_ndn.len + 1) : NULL;
	if (base == NULL) {
		free(ps);
		return LUMEN_ENOMEM;
	}
	memcpy(base, s->base_ndn.ptr, s->base_ndn.len);
	*ps = (struct psearch){ .base = { release }, .sp = sp, .wake = s->wake,
				.wake_ctx = s->wake_ctx, .rid = asked->rid,
				.consumer_sid = asked->sid,
				.base_ndn = { base, s->base_ndn.len }, .refreshing = true };
	pthread_mutex_lock(&sp->lock);
	ps->next = sp->persistent;
	if (ps->next != NULL)
		ps->next->prev = ps;
	sp->persistent = ps;
	pthread_mutex_unlock(&sp->lock);
	s->persist = &ps->base;
	return LUMEN_OK;
}

bool syncprov_persist_refreshing(const struct backend_persist *p)
{
	const struct psearch *ps = (const struct psearch *)p;
	struct syncprov *sp = ps->sp;
	pthread_mutex_lock(&sp->lock);
	bool refreshing = ps->refreshing;
	pthread_mutex_unlock(&sp->lock);
	return refreshing;
}

void syncprov_persist_refreshed(struct syncprov *sp, struct overlay_request *req,
				const struct sync_cookie *context)
{
	struct backend_search *s = req->u.search;
	struct psearch *ps = (struct psearch *)s->persist;
	pthread_mutex_lock(&sp->lock);
	ps->refreshing = false;
	ps->since = *context;
	/* changes queued during the refresh: the next run sends them */
	bool pending = (ps->head != NULL || ps->overflowed) && !ps->woken;
	if (pending) {
		ps->woken = true;
		ps->wake(ps->wake_ctx);
	}
	pthread_mutex_unlock(&sp->lock);
	s->paused = true;
	s->wait = true;
	s->resume.active = true;
}

/* ---------------------------------------------------------------- queue */

static struct queued_change *copy_change(const struct database_change *c)
{
	size_t size = sizeof(struct queued_change) + c->uuid.len + c->old_ndn.len + c->ndn.len;
	struct queued_change *q = malloc(size);
	if (q == NULL)
		return NULL;
	char *tail = (char *)(q + 1);
	*q = (struct queued_change){ .size = size, .kind = c->kind };
	snprintf(q->csn, sizeof(q->csn), "%.*s", (int)c->csn.len, (const char *)c->csn.ptr);
	const struct ber_view *from[] = { &c->uuid, &c->old_ndn, &c->ndn };
	struct ber_view *to[] = { &q->uuid, &q->old_ndn, &q->ndn };
	for (size_t i = 0; i < 3; i++) {
		if (from[i]->len > 0)
			memcpy(tail, from[i]->ptr, from[i]->len);
		*to[i] = (struct ber_view){ (const uint8_t *)tail, from[i]->len };
		tail += from[i]->len;
	}
	return q;
}

/* Over its bound (or out of memory): the search goes back to a refresh. */
static void overflow_locked(struct psearch *ps, const char *why)
{
	char rid[16] = "none";
	if (ps->rid >= 0)
		snprintf(rid, sizeof(rid), "%03d", ps->rid);
	log_printf(0, "syncprov: persistent search rid=%s on \"%.*s\" %s: dropped back to a "
		   "refresh (e-syncRefreshRequired)", rid, (int)ps->base_ndn.len,
		   (const char *)ps->base_ndn.ptr, why);
	free_queue(ps);
	ps->overflowed = true;
}

static bool concerns(const struct psearch *ps, const struct database_change *c)
{
	return (c->old_ndn.len > 0 && dn_is_within(c->old_ndn, ps->base_ndn)) ||
	       (c->ndn.len > 0 && dn_is_within(c->ndn, ps->base_ndn));
}

static void queue_one_locked(struct psearch *ps, const struct database_change *c)
{
	if (ps->overflowed || !concerns(ps, c))
		return;
	struct queued_change *q = copy_change(c);
	if (q == NULL) {
		overflow_locked(ps, "found no memory for a change");
		return;
	}
	if (ps->queued + q->size > ps->sp->persist_queue) {
		free(q);
		overflow_locked(ps, "fell more than syncprov-persist-queue bytes behind");
		return;
	}
	if (ps->tail != NULL)
		ps->tail->next = q;
	else
		ps->head = q;
	ps->tail = q;
	ps->queued += q->size;
}

void syncprov_persist_queue(struct syncprov *sp, const struct database_change *changes,
			    size_t n)
{
	pthread_mutex_lock(&sp->lock);
	for (struct psearch *ps = sp->persistent; ps != NULL; ps = ps->next) {
		bool was = ps->head != NULL || ps->overflowed;
		for (size_t i = 0; i < n; i++)
			queue_one_locked(ps, &changes[i]);
		bool now = ps->head != NULL || ps->overflowed;
		if (now && !was && !ps->woken && !ps->refreshing) {
			ps->woken = true;
			ps->wake(ps->wake_ctx);
		}
	}
	pthread_mutex_unlock(&sp->lock);
}

/* ----------------------------------------------------------------- send */

/* One change being sent: what the fetch callback needs. */
struct push {
	struct syncprov *sp;
	struct overlay_request *req;
	const struct queued_change *change;
	struct ber_view cookie;
	int sent;                         /* the sink's answer; -1: not sent */
};

static bool in_scope(const struct backend_search *s, struct ber_view ndn)
{
	struct ber_view rdn, parent;
	if (!dn_is_within(ndn, s->base_ndn))
		return false;
	if (s->scope == LDAP_SCOPE_BASE)
		return ndn.len == s->base_ndn.len;
	if (s->scope == LDAP_SCOPE_ONE) {
		dn_split_first(ndn, &rdn, &parent);
		return ndn.len != s->base_ndn.len && parent.len == s->base_ndn.len;
	}
	return true;
}

/* The Sync State control (state, entryUUID, cookie) in the arena. */
static bool state_control(struct push *p, enum ldap_sync_state state, const uint8_t *uuid,
			  struct ldap_control *out)
{
	struct ldap_sync_state_value v = { .state = state, .has_cookie = true,
					   .cookie = p->cookie };
	struct ber_writer w;
	memcpy(v.uuid, uuid, LDAP_SYNC_UUID_SIZE);
	if (ber_writer_init(&w, 128, 0) != LUMEN_OK)
		return false;
	ldap_sync_state_encode(&v, &w);
	void *value = ber_writer_error(&w) == LUMEN_OK
		      ? arena_memdup(p->req->op->arena, w.buf, w.len) : NULL;
	*out = (struct ldap_control){
		.oid = { (const uint8_t *)LDAP_SYNC_STATE_OID, sizeof(LDAP_SYNC_STATE_OID) - 1 },
		.has_value = true, .value = { value, w.len },
	};
	ber_writer_free(&w);
	return value != NULL;
}

static int send_with(struct push *p, const struct entry *e, const struct backend_entry_info *info,
		     enum ldap_sync_state state, const uint8_t *uuid)
{
	struct ldap_control control;
	if (!state_control(p, state, uuid, &control))
		return LUMEN_ENOMEM;
	struct backend_entry_info with = *info;
	with.controls = &control;
	with.n_controls = 1;
	with.dn_only = state == LDAP_SYNC_DELETE;
	with.complete = true;   /* stored attributes only, as in the refresh */
	struct backend_search *s = p->req->u.search;
	p->sent = s->sink(s->sink_ctx, e, &with);
	return LUMEN_OK;
}

/*
 * State delete with the DN the consumer knew (ndn: the change's old one).
 * Access is decided on `now`, the entry as it is now (a modify or rename
 * took it out of the search), under the DN the consumer knew; for a
 * deleted entry (now NULL) on that DN alone, which the caller allows only
 * when no access rule tests values.
 */
static int send_delete(struct push *p, struct ber_view ndn, const struct entry *now,
		       const uint8_t *uuid)
{
	struct entry *e = NULL;
	int rc = now != NULL ? entry_dup(now, &e) : entry_create(p->sp->schema, ndn, ndn, &e);
	if (rc == LUMEN_OK && now != NULL)
		rc = entry_set_dn(e, ndn, ndn);
	if (rc != LUMEN_OK) {
		entry_free(e);
		return rc;
	}
	struct backend_entry_info info = { .dn = e->dn, .ndn = e->ndn };
	rc = send_with(p, e, &info, LDAP_SYNC_DELETE, uuid);
	entry_free(e);
	return rc;
}

static bool matches(struct overlay_request *req, const struct entry *e)
{
	const struct backend_search *s = req->u.search;
	struct filter_evaluation how = { .access = req->op->filter_access };
	enum filter_result r = FILTER_TRUE;
	if (!in_scope(s, e->ndn))
		return false;
	return s->filter == NULL || (filter_test(s->filter, e, &how, &r) == LUMEN_OK &&
				     r == FILTER_TRUE);
}

/* The entry as it is now: sent when it is in the search, else a delete
 * when it was (the change moved it out of the scope or the filter). */
static int fetched(void *ctx, const struct entry *e, const struct backend_entry_info *info)
{
	struct push *p = ctx;
	const struct queued_change *c = p->change;
	uint8_t uuid[LDAP_SYNC_UUID_SIZE];
	if (!ldap_sync_uuid_parse(c->uuid, uuid))
		return LUMEN_OK;
	if (matches(p->req, e))
		return send_with(p, e, info, c->kind == DATABASE_WRITE_ADD ? LDAP_SYNC_ADD
									  : LDAP_SYNC_MODIFY, uuid);
	if (c->kind == DATABASE_WRITE_ADD)
		return LUMEN_OK;
	struct ber_view was = c->old_ndn.len > 0 ? c->old_ndn : c->ndn;
	return in_scope(p->req->u.search, was) ? send_delete(p, was, e, uuid) : LUMEN_OK;
}

/* Sends one change; p->sent is the sink's answer (-1: nothing sent). */
static int push_one(struct push *p)
{
	const struct queued_change *c = p->change;
	struct overlay_request *req = p->req;
	uint8_t uuid[LDAP_SYNC_UUID_SIZE];
	p->sent = -1;
	struct sync_cookie one = { .rid = -1, .sid = -1 };
	struct csn csn;
	const char *bad;
	if (csn_parse(c->csn, strnlen(c->csn, CSN_LENGTH + 1), &csn, &bad) == LUMEN_OK)
		sync_cookie_merge_csn(&one, &csn);
	if (!syncprov_cookie(p->sp, req, ((struct psearch *)req->u.search->persist)->rid, &one,
			     &p->cookie))
		return LUMEN_ENOMEM;
	if (c->kind == DATABASE_WRITE_DELETE) {
		if (!ldap_sync_uuid_parse(c->uuid, uuid) || !in_scope(req->u.search, c->old_ndn))
			return LUMEN_OK;
		/* the entry is gone: rules that test its values cannot be decided */
		return req->op->access_tests_values ? PERSIST_UNDECIDABLE
						    : send_delete(p, c->old_ndn, NULL, uuid);
	}
	int rc = database_fetch(req->database, req->op, c->ndn, fetched, p);
	return rc == LUMEN_ENOTFOUND ? LUMEN_OK : rc;   /* gone since: its delete follows */
}

/* The next change to send (NULL: none), or *dropped when over the bound. */
static struct queued_change *take(struct psearch *ps, bool *dropped)
{
	struct syncprov *sp = ps->sp;
	pthread_mutex_lock(&sp->lock);
	*dropped = ps->overflowed;
	struct queued_change *c = *dropped ? NULL : ps->head;
	if (c != NULL) {
		ps->head = c->next;
		if (ps->head == NULL)
			ps->tail = NULL;
		ps->queued -= c->size;
	} else {
		ps->woken = false;   /* the next change wakes it */
	}
	pthread_mutex_unlock(&sp->lock);
	return c;
}

static int answer(struct overlay_request *req, int code, const char *text)
{
	req->op->result_code = code;
	req->op->diagnostic = text;
	return OVERLAY_ANSWERED;
}

/*
 * Is a queued change already in what the refresh sent (not newer than its
 * CSN of the same serverID), or the consumer's own change coming back?
 */
static bool in_refresh(const struct psearch *ps, const struct queued_change *c)
{
	struct csn csn;
	const char *bad;
	if (csn_parse(c->csn, strnlen(c->csn, CSN_LENGTH + 1), &csn, &bad) != LUMEN_OK)
		return false;
	if (ps->consumer_sid >= 0 && csn.sid == (unsigned)ps->consumer_sid)
		return true;
	const struct csn *seen = sync_cookie_csn_for(&ps->since, csn.sid);
	return seen != NULL && csn_compare(&csn, seen) <= 0;
}

int syncprov_persist_send(struct syncprov *sp, struct overlay_request *req)
{
	struct backend_search *s = req->u.search;
	struct psearch *ps = (struct psearch *)s->persist;
	bool dropped = false, empty = false;
	for (unsigned n = 0; n < PERSIST_CHANGES_PER_RUN && !empty; n++) {
		struct queued_change *c = take(ps, &dropped);
		empty = c == NULL;
		if (empty)
			break;
		struct push p = { .sp = sp, .req = req, .change = c, .sent = -1 };
		int rc = in_refresh(ps, c) ? LUMEN_OK : push_one(&p);
		free(c);
		if (rc == PERSIST_UNDECIDABLE)
			return answer(req, LDAP_SYNC_REFRESH_REQUIRED,
				      "an entry was deleted and access rules with filter= "
				      "cannot decide on its DN alone: refresh required");
		if (rc != LUMEN_OK)
			return answer(req, LDAP_OTHER, "cannot send a change");
		if (p.sent == BACKEND_SINK_PAUSE) {
			s->paused = true;   /* until the client reads */
			return OVERLAY_ANSWERED;
		}
		if (p.sent > 0 && p.sent != BACKEND_SINK_SKIPPED)
			return answer(req, LDAP_OTHER, "search stopped");
	}
	if (dropped)
		return answer(req, LDAP_SYNC_REFRESH_REQUIRED,
			      "the consumer fell too far behind: refresh required");
	/* emptied: wait for the next change; else let other work in first */
	s->paused = true;
	s->wait = empty;
	return OVERLAY_ANSWERED;
}
