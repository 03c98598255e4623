/*
 * overlay_syncprov.c — the provider side of RFC 4533 content
 * synchronization, as OpenLDAP's syncprov overlay (`overlay syncprov`):
 * a search with the Sync Request control in refreshOnly mode returns the
 * entries with a Sync State control each, and a Sync Done control whose
 * cookie ("rid=NNN,csn=CSN", OpenLDAP's form) the consumer presents next
 * time. An unmodified OpenLDAP consumer (`syncrepl ... type=refreshOnly`
 * or `type=refreshAndPersist`) replicates from it.
 *
 * Without a session log the refresh is RFC 4533's present phase: entries
 * changed since the cookie's CSN (entryCSN newer, per serverID) are sent
 * whole with state add; the others are sent as their DN alone with state
 * present; the Sync Done control says refreshDeletes FALSE, so the
 * consumer deletes every entry the refresh did not name. A refresh
 * without a cookie sends every entry whole. With syncprov-sessionlog
 * (syncprov_log.c) a refresh whose cookie the log reaches back to is the
 * delete phase: one Sync Info syncIdSet of the entries deleted since goes
 * first, then only the changed entries, and the end says refreshDeletes
 * TRUE.
 *
 * The cookie's CSNs are the contextCSN: per serverID, the newest CSN of a
 * change known to be committed, read before the search takes its
 * snapshot (with `serverID` set the cookie also says sid=, as OpenLDAP's). back-mdb
 * stamps CSNs on the committer in commit order, and every write reports
 * the newest CSN it stamped (backend_op.change_csn), which the after hook
 * publishes once the write has committed; so every change up to the
 * cookie's CSN is in the refresh that hands it out. At the first
 * synchronization after a start the contextCSN is recovered from the
 * session log's newest record, or without one from the entries (their
 * newest entryCSN per serverID).
 *
 * refreshAndPersist (syncprov_persist.c): the search is registered before
 * its refresh reads the contextCSN; its refresh ends with a Sync Info
 * refreshPresent (refreshDone TRUE, the cookie) instead of SearchResultDone,
 * as OpenLDAP does, and it then stays open: each committed change is
 * queued for it by the committer (on_commit) and pushed by its own runs.
 *
 * Directives (after `overlay syncprov`), OpenLDAP's: syncprov-checkpoint
 * <ops> <minutes>, syncprov-sessionlog <size>, syncprov-nopresent
 * TRUE|FALSE, syncprov-reloadhint TRUE|FALSE, checked and kept (the
 * session log's size is used; see the Caveats for the checkpoint); and
 * Lumen's syncprov-persist-queue <bytes>, the bound of a persistent
 * search's queue.
 *
 * Caveats:
 *  - A delete phase reads only the entries the log names as changed
 *    (through the entryUUID index: without `index entryUUID eq` it walks
 *    the scope), up to SYNCPROV_NARROW_MAX of them; past that, and in a
 *    present phase, the refresh walks the whole scope.
 *  - syncprov-checkpoint writes nothing: a search that returns the suffix
 *    entry shows the current context as its contextCSN (a replica's
 *    stored cookie stays); a filter on contextCSN does not see it.
 *  - A delete phase names the entries deleted or renamed out of the scope;
 *    one that merely stopped matching the filter is not named (a later
 *    present phase removes it from the consumer), and of a subtree moved
 *    out of the scope only its top entry is named.
 *  - The log holds the changes made through lumend with the overlay on:
 *    lumenadd empties it; changes made with the overlay off are not in it
 *    (turning syncprov-sessionlog off and on again is a gap: cookies older
 *    than the gap should be refused, and are not).
 *  - The refresh's contextCSNs are kept in the paused search's state for at
 *    most STATE_MAX_CSNS serverIDs; past them the cookie carries the
 *    consumer's own (older) CSN for the others, so it only asks again.
 *  - A persistent search's after hooks run when its refresh ends, not when
 *    the search does (the chain sees the refresh as the search).
 */
#include "syncprov_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dn.h"
#include "entry.h"
#include "ldap_result_codes.h"
#include "ldap_sync.h"
#include "log.h"
#include "lumen_error.h"
#include "sync_cookie.h"

/* ------------------------------------------------------------- configure */

static int fail(const struct config_overlay_line *line, char *err, size_t errlen,
		const char *expected)
{
	snprintf(err, errlen, "%s: %s: expected %s", line->origin, line->words[0], expected);
	return LUMEN_EMALFORMED;
}

static bool number(const char *text, unsigned long *out)
{
	char *end;
	if (text[0] < '0' || text[0] > '9')
		return false;
	*out = strtoul(text, &end, 10);
	return *end == '\0' && *out <= 1000000000ul;
}

static bool truth(const char *text, bool *out)
{
	*out = strcasecmp(text, "TRUE") == 0 || strcasecmp(text, "on") == 0 ||
	       strcasecmp(text, "yes") == 0;
	return *out || strcasecmp(text, "FALSE") == 0 || strcasecmp(text, "off") == 0 ||
	       strcasecmp(text, "no") == 0;
}

static int apply_line(struct syncprov *sp, const struct config_overlay_line *line, char *err,
		      size_t errlen)
{
	const char *name = line->words[0];
	size_t n = line->n_words;
	if (strcasecmp(name, "syncprov-checkpoint") == 0)
		return n == 3 && number(line->words[1], &sp->checkpoint_ops) &&
		       number(line->words[2], &sp->checkpoint_minutes)
		       ? LUMEN_OK : fail(line, err, errlen, "<ops> <minutes>");
	if (strcasecmp(name, "syncprov-sessionlog") == 0)
		return n == 2 && number(line->words[1], &sp->sessionlog)
		       ? LUMEN_OK : fail(line, err, errlen, "<size>");
	if (strcasecmp(name, "syncprov-nopresent") == 0)
		return n == 2 && truth(line->words[1], &sp->nopresent)
		       ? LUMEN_OK : fail(line, err, errlen, "TRUE or FALSE");
	if (strcasecmp(name, "syncprov-persist-queue") == 0)
		return n == 2 && number(line->words[1], &sp->persist_queue) &&
		       sp->persist_queue >= 4096
		       ? LUMEN_OK : fail(line, err, errlen, "<bytes> (4096 or more)");
	if (strcasecmp(name, "syncprov-reloadhint") == 0)
		return n == 2 && truth(line->words[1], &sp->reloadhint)
		       ? LUMEN_OK : fail(line, err, errlen, "TRUE or FALSE");
	snprintf(err, errlen, "%s: overlay syncprov: unknown directive \"%s\"", line->origin,
		 name);
	return LUMEN_EMALFORMED;
}

static void syncprov_destroy(void *state)
{
	struct syncprov *sp = state;
	if (sp == NULL)
		return;
	syncprov_persist_free_all(sp);
	pthread_mutex_destroy(&sp->lock);
	arena_free(&sp->memory);
	free(sp);
}

static int find_schema(struct syncprov *sp, const struct overlay_setup *setup, char *err,
		       size_t errlen)
{
	const struct config_database *db = setup->database;
	sp->entry_uuid = schema_attribute_type(setup->schema, "entryUUID", 9);
	sp->entry_csn = schema_attribute_type(setup->schema, "entryCSN", 8);
	sp->context_csn = schema_attribute_type(setup->schema, "contextCSN", 10);
	if (sp->entry_uuid == NULL || sp->entry_csn == NULL || sp->context_csn == NULL) {
		snprintf(err, errlen, "%s: overlay syncprov: the schema lacks entryUUID, entryCSN "
			 "or contextCSN",
			 setup->overlay->origin);
		return LUMEN_EMALFORMED;
	}
	if (db->n_suffixes == 0)
		return LUMEN_OK;   /* the server refuses such a database itself */
	const char *suffix = db->suffixes[0];
	int rc = dn_normalize(setup->schema, suffix, strlen(suffix), &sp->memory, &sp->suffix_ndn);
	if (rc != LUMEN_OK)
		snprintf(err, errlen, "%s: overlay syncprov: the suffix is not a DN",
			 setup->overlay->origin);
	return rc == LUMEN_ENOMEM ? rc : (rc != LUMEN_OK ? LUMEN_EMALFORMED : LUMEN_OK);
}

static int syncprov_create(const struct overlay_setup *setup, void **state, char *err,
			   size_t errlen)
{
	struct syncprov *sp = calloc(1, sizeof(*sp));
	if (sp == NULL)
		return LUMEN_ENOMEM;
	pthread_mutex_init(&sp->lock, NULL);
	arena_init(&sp->memory, 4096);
	sp->schema = setup->schema;
	sp->persist_queue = SYNCPROV_PERSIST_QUEUE_DEFAULT;
	sp->server_id = setup->server_id;
	sp->context = (struct sync_cookie){ .rid = -1, .sid = -1 };
	int rc = find_schema(sp, setup, err, errlen);
	for (size_t i = 0; i < setup->overlay->n_lines && rc == LUMEN_OK; i++)
		rc = apply_line(sp, &setup->overlay->lines[i], err, errlen);
	if (rc != LUMEN_OK) {
		syncprov_destroy(sp);
		return rc;
	}
	*state = sp;
	return LUMEN_OK;
}

/* ------------------------------------------------------------ contextCSN */

/* The context's CSN of csn's serverID = the newer of the two. */
static void publish(struct syncprov *sp, const struct csn *csn)
{
	pthread_mutex_lock(&sp->lock);
	if (sync_cookie_merge_csn(&sp->context, csn) != LUMEN_OK)
		log_printf(0, "syncprov: more than %d serverIDs: contextCSN of %03x not kept",
			   SYNC_COOKIE_MAX_CSNS, csn->sid);
	pthread_mutex_unlock(&sp->lock);
}

struct newest {
	const struct attribute_type *entry_csn;
	struct sync_cookie csns;
};

static int note_newest(void *ctx, const struct entry *e, const struct backend_entry_info *info)
{
	struct newest *n = ctx;
	const struct entry_attribute *a = entry_find_type(e, n->entry_csn);
	struct csn csn;
	const char *bad;
	(void)info;
	if (a != NULL && csn_parse((const char *)a->values[0].value.ptr, a->values[0].value.len,
				   &csn, &bad) == LUMEN_OK)
		sync_cookie_merge_csn(&n->csns, &csn);   /* full: that serverID is resent */
	return 0;
}

/* The contextCSN is known: the CSNs found (maybe none) join it. */
static void recovered(struct syncprov *sp, const struct sync_cookie *found, const char *from)
{
	for (size_t i = 0; i < found->n_csns; i++)
		publish(sp, &found->csns[i]);
	pthread_mutex_lock(&sp->lock);
	sp->recovered = true;
	pthread_mutex_unlock(&sp->lock);
	for (size_t i = 0; i < found->n_csns; i++)
		log_printf(0, "syncprov: contextCSN recovered from the %s: %s", from,
			   found->csns[i].text);
	if (found->n_csns == 0)
		log_printf(0, "syncprov: contextCSN recovered from the %s: (none yet)", from);
}

/* Once per start: the session log's newest CSN, or else the newest
 * entryCSN of each serverID in the database, joins the context. */
static int recover(struct syncprov *sp, const struct overlay_request *req)
{
	pthread_mutex_lock(&sp->lock);
	bool done = sp->recovered;
	pthread_mutex_unlock(&sp->lock);
	if (done)
		return LUMEN_OK;
	struct newest n = { .entry_csn = sp->entry_csn, .csns = { .rid = -1, .sid = -1 } };
	char logged[CSN_LENGTH + 1];
	struct csn csn;
	const char *bad;
	if (syncprov_log_newest(sp, req->database, logged) == LUMEN_OK) {
		if (csn_parse(logged, strnlen(logged, sizeof(logged)), &csn, &bad) == LUMEN_OK)
			sync_cookie_merge_csn(&n.csns, &csn);
		recovered(sp, &n.csns, "session log");
		return LUMEN_OK;
	}
	struct backend_op op = { .arena = req->op->arena, .is_root = true,
				 .manage_dsa_it = true };
	struct backend_search s = { .base_ndn = sp->suffix_ndn, .scope = LDAP_SCOPE_SUBTREE,
				    .sink = note_newest, .sink_ctx = &n };
	int rc = database_search(req->database, &op, &s);
	if (rc == LUMEN_OK && op.result_code != LDAP_SUCCESS &&
	    op.result_code != LDAP_NO_SUCH_OBJECT)
		rc = LUMEN_EIO;
	if (rc != LUMEN_OK)
		return rc;
	recovered(sp, &n.csns, "entries");
	return LUMEN_OK;
}

/*
 * resume.overlay_state, kept by value between the calls of a paused search
 * (each call runs in a fresh arena): whether the refresh is a delete
 * phase, then the contextCSNs its cookie will carry, up to STATE_MAX_CSNS
 * serverIDs (CSN_LENGTH bytes each).
 */
#define STATE_DELETE_PHASE 0
#define STATE_N_CSNS 1
#define STATE_CSNS 2
#define STATE_MAX_CSNS ((DATABASE_OVERLAY_STATE_SIZE - STATE_CSNS) / CSN_LENGTH)
_Static_assert(STATE_MAX_CSNS >= 4, "overlay state too small");

/* ---------------------------------------------------------------- refresh */

/* What a refresh needs on every call of a (paused) search. */
struct refresh {
	const struct syncprov *sp;
	backend_entry_fn server_sink;
	void *server_ctx;
	struct sync_cookie cookie;
	bool delete_phase;             /* unchanged entries are not sent */
	uint8_t value[LDAP_SYNC_STATE_VALUE_SIZE];
};

/* e's entryUUID as 16 bytes. */
static bool entry_uuid(const struct refresh *r, const struct entry *e,
		       uint8_t out[LDAP_SYNC_UUID_SIZE])
{
	const struct entry_attribute *a = entry_find_type(e, r->sp->entry_uuid);
	return a != NULL && ldap_sync_uuid_parse(a->values[0].value, out);
}

/* True when e changed after the cookie's CSN of the same serverID. */
static bool changed_since_cookie(const struct refresh *r, const struct entry *e)
{
	const struct entry_attribute *a = entry_find_type(e, r->sp->entry_csn);
	struct csn csn;
	const char *why;
	if (a == NULL || csn_parse((const char *)a->values[0].value.ptr, a->values[0].value.len,
				   &csn, &why) != LUMEN_OK)
		return true;
	const struct csn *seen = sync_cookie_csn_for(&r->cookie, csn.sid);
	return seen == NULL || csn_compare(&csn, seen) > 0;
}

static int refresh_sink(void *ctx, const struct entry *e, const struct backend_entry_info *info)
{
	struct refresh *r = ctx;
	uint8_t uuid[LDAP_SYNC_UUID_SIZE];
	if (!entry_uuid(r, e, uuid)) {
		log_printf(0, "syncprov: \"%.*s\" has no entryUUID: not replicated",
			   (int)e->dn.len, (const char *)e->dn.ptr);
		return BACKEND_SINK_SKIPPED;
	}
	bool changed = changed_since_cookie(r, e);
	if (!changed && r->delete_phase)
		return BACKEND_SINK_SKIPPED;
	ldap_sync_state_write(changed ? LDAP_SYNC_ADD : LDAP_SYNC_PRESENT, uuid, r->value);
	struct ldap_control state = {
		.oid = { (const uint8_t *)LDAP_SYNC_STATE_OID, sizeof(LDAP_SYNC_STATE_OID) - 1 },
		.has_value = true, .value = { r->value, sizeof(r->value) },
	};
	struct backend_entry_info with = *info;
	with.controls = &state;
	with.n_controls = 1;
	with.dn_only = !changed;
	/* stored attributes only: what the server computes (entryDN,
	 * numSubordinates, ...) is the consumer's to compute */
	with.complete = true;
	return r->server_sink(r->server_ctx, e, &with);
}

static int answer(struct overlay_request *req, int code, const char *text)
{
	req->op->result_code = code;
	req->op->diagnostic = text;
	return OVERLAY_ANSWERED;
}

/* The cookie, or an answer naming what is wrong with it. */
static bool read_cookie(struct overlay_request *req, struct sync_cookie *out)
{
	const struct ldap_sync_request *sync = req->op->sync;
	const char *why = NULL;
	struct ber_view text = sync->has_cookie ? sync->cookie : (struct ber_view){ NULL, 0 };
	if (sync_cookie_parse(text, out, &why) == LUMEN_OK)
		return true;
	char *message = arena_alloc(req->op->arena, 128);
	if (message != NULL)
		snprintf(message, 128, "invalid sync cookie: %s", why);
	answer(req, LDAP_PROTOCOL_ERROR, message != NULL ? message : "invalid sync cookie");
	return false;
}

/* The refresh's contextCSNs, as start_refresh kept them in the state. */
static void refresh_context(const struct backend_search *s, struct sync_cookie *out)
{
	const uint8_t *state = s->resume.overlay_state;
	struct csn csn;
	const char *bad;
	*out = (struct sync_cookie){ .rid = -1, .sid = -1 };
	for (size_t i = 0; i < state[STATE_N_CSNS] && i < STATE_MAX_CSNS; i++)
		if (csn_parse((const char *)state + STATE_CSNS + i * CSN_LENGTH, CSN_LENGTH, &csn,
			      &bad) == LUMEN_OK)
			sync_cookie_merge_csn(out, &csn);
}

/* Keeps context in the state; serverIDs past the room are left out (the
 * consumer's own CSN then stands for them: it only asks again). */
static void keep_context(struct backend_search *s, const struct sync_cookie *context)
{
	uint8_t *state = s->resume.overlay_state;
	size_t n = context->n_csns < STATE_MAX_CSNS ? context->n_csns : STATE_MAX_CSNS;
	for (size_t i = 0; i < n; i++)
		memcpy(state + STATE_CSNS + i * CSN_LENGTH, context->csns[i].text, CSN_LENGTH);
	state[STATE_N_CSNS] = (uint8_t)n;
}

/*
 * A new refresh: the contextCSN its cookie will carry, read before the
 * search takes its snapshot (and after a persistent search registered);
 * then, when the session log reaches back to the cookie, the deleted
 * entries and a delete phase.
 */
static int start_refresh(struct syncprov *sp, struct overlay_request *req,
			 const struct sync_cookie *asked)
{
	struct backend_search *s = req->u.search;
	struct sync_cookie context;
	if (recover(sp, req) != LUMEN_OK)
		return answer(req, LDAP_OTHER, "cannot read the contextCSN");
	if (req->op->sync->mode == LDAP_SYNC_REFRESH_AND_PERSIST &&
	    syncprov_persist_start(sp, req, asked) != LUMEN_OK)
		return answer(req, LDAP_OTHER, "out of memory");
	pthread_mutex_lock(&sp->lock);
	context = sp->context;
	pthread_mutex_unlock(&sp->lock);
	keep_context(s, &context);
	int rc = syncprov_log_deletes(sp, req, asked);
	if (rc != LUMEN_OK && rc != LUMEN_ENOTFOUND)
		return answer(req, LDAP_OTHER, "cannot send the deleted entries");
	s->resume.overlay_state[STATE_DELETE_PHASE] = rc == LUMEN_OK;
	return OVERLAY_CONTINUE;
}

/* ------------------------------------------------ the suffix's contextCSN */

/* A plain search that may return the suffix entry. */
struct suffix_read {
	struct syncprov *sp;
	backend_entry_fn server_sink;
	void *server_ctx;
};

static bool is_suffix(const struct syncprov *sp, struct ber_view ndn)
{
	return ndn.len == sp->suffix_ndn.len &&
	       (ndn.len == 0 || memcmp(ndn.ptr, sp->suffix_ndn.ptr, ndn.len) == 0);
}

/*
 * The suffix entry with the context's CSNs as its contextCSN, as
 * OpenLDAP's checkpoints leave it (a replica's stored cookie stays).
 * Lumen keeps the context current in memory and recoverable from the
 * session log, so nothing is written: the value shown is never stale.
 */
/* The context's CSNs as e's contextCSN (e is the sink's own copy). */
static int add_context(struct syncprov *sp, struct entry *e, const struct sync_cookie *context)
{
	struct ber_view values[SYNC_COOKIE_MAX_CSNS];
	for (size_t i = 0; i < context->n_csns; i++)
		values[i] = (struct ber_view){ (const uint8_t *)context->csns[i].text, CSN_LENGTH };
	struct attribute_description ad = { .type = sp->context_csn };
	return entry_replace_values(e, &ad, values, context->n_csns, NULL);
}

/*
 * A copy of the suffix with contextCSN, made from all of it: a search
 * returning all attributes may hand it over decoded in part
 * (entry.outline), which is then decoded whole instead of copied. Out of
 * memory, the search stops (LDAP other): the suffix without its
 * contextCSN would be a wrong answer, not a shorter one. A suffix that
 * cannot hold one more attribute, or whose unread values do not decode,
 * goes as stored, as any other entry would.
 */
static int suffix_sink(void *ctx, const struct entry *e, const struct backend_entry_info *info)
{
	struct suffix_read *r = ctx;
	if (!is_suffix(r->sp, e->ndn) ||
	    (e->outline == NULL && entry_find_type(e, r->sp->context_csn) != NULL))
		return r->server_sink(r->server_ctx, e, info);
	struct sync_cookie context;
	pthread_mutex_lock(&r->sp->lock);
	context = r->sp->context;
	pthread_mutex_unlock(&r->sp->lock);
	if (context.n_csns == 0)
		return r->server_sink(r->server_ctx, e, info);
	struct entry *shown = NULL;
	int rc = e->outline != NULL ? entry_decode_whole(e, &shown) : entry_dup(e, &shown);
	if (rc == LUMEN_OK && entry_find_type(shown, r->sp->context_csn) == NULL)
		rc = add_context(r->sp, shown, &context);
	if (rc == LUMEN_OK)
		rc = r->server_sink(r->server_ctx, shown, info);
	else if (rc != LUMEN_ENOMEM)
		rc = r->server_sink(r->server_ctx, e, info);
	entry_free(shown);
	return rc;
}

/* A search whose scope holds the suffix entry reads it through suffix_sink. */
static int show_context(struct syncprov *sp, struct overlay_request *req)
{
	struct backend_search *s = req->u.search;
	if (s->sink == note_newest)
		return OVERLAY_CONTINUE;   /* recover's own walk, through the chain */
	if (!is_suffix(sp, s->base_ndn) || (s->scope != LDAP_SCOPE_BASE &&
					     s->scope != LDAP_SCOPE_SUBTREE))
		return OVERLAY_CONTINUE;
	if (recover(sp, req) != LUMEN_OK)
		return answer(req, LDAP_OTHER, "cannot read the contextCSN");
	struct suffix_read *r = arena_alloc(req->op->arena, sizeof(*r));
	if (r == NULL)
		return answer(req, LDAP_OTHER, "out of memory");
	*r = (struct suffix_read){ sp, s->sink, s->sink_ctx };
	s->sink = suffix_sink;
	s->sink_ctx = r;
	return OVERLAY_CONTINUE;
}

static int syncprov_before(void *state, struct overlay_request *req)
{
	struct syncprov *sp = state;
	if (req->operation != OVERLAY_SEARCH)
		return OVERLAY_CONTINUE;
	if (req->op->sync == NULL)
		return show_context(sp, req);
	struct backend_search *s = req->u.search;
	if (s->persist != NULL && !syncprov_persist_refreshing(s->persist))
		return syncprov_persist_send(sp, req);
	struct refresh *r = arena_calloc(req->op->arena, 1, sizeof(*r));
	if (r == NULL)
		return answer(req, LDAP_OTHER, "out of memory");
	if (!read_cookie(req, &r->cookie))
		return OVERLAY_ANSWERED;
	int verdict = s->resume.active ? OVERLAY_CONTINUE : start_refresh(sp, req, &r->cookie);
	if (verdict != OVERLAY_CONTINUE)
		return verdict;
	if (s->resume.overlay_state[STATE_DELETE_PHASE] != 0 &&
	    syncprov_log_narrow(sp, req, &r->cookie) == LUMEN_ENOMEM)
		return answer(req, LDAP_OTHER, "out of memory");
	*r = (struct refresh){ .sp = sp, .server_sink = s->sink, .server_ctx = s->sink_ctx,
			       .cookie = r->cookie,
			       .delete_phase = s->resume.overlay_state[STATE_DELETE_PHASE] != 0 };
	s->sink = refresh_sink;
	s->sink_ctx = r;
	s->fetch_only = NULL;       /* refresh_sink reads entryUUID and entryCSN */
	return OVERLAY_CONTINUE;
}

/* ------------------------------------------------------------------ after */

bool syncprov_cookie(const struct syncprov *sp, struct overlay_request *req, int rid,
		     const struct sync_cookie *csns, struct ber_view *out)
{
	struct sync_cookie cookie = *csns;
	char *text = arena_alloc(req->op->arena, SYNC_COOKIE_TEXT_MAX);
	size_t len = 0;
	cookie.rid = rid;
	cookie.sid = sp->server_id;
	cookie.has_delcsn = false;
	if (text == NULL || sync_cookie_format(&cookie, text, SYNC_COOKIE_TEXT_MAX, &len) != LUMEN_OK)
		return false;
	*out = (struct ber_view){ (const uint8_t *)text, len };
	return true;
}

/* The refresh's cookie: the consumer's rid and the refresh's contextCSN
 * per serverID (the consumer's own CSN where nothing is known to be newer). */
static bool refresh_cookie(const struct syncprov *sp, struct overlay_request *req,
			   struct ber_view *out)
{
	struct sync_cookie asked;
	const char *why;
	struct sync_cookie cookie;
	refresh_context(req->u.search, &cookie);
	struct ber_view given = req->op->sync->has_cookie ? req->op->sync->cookie
							   : (struct ber_view){ NULL, 0 };
	if (sync_cookie_parse(given, &asked, &why) != LUMEN_OK)
		return false;
	for (size_t i = 0; i < asked.n_csns; i++)
		if (sync_cookie_csn_for(&cookie, asked.csns[i].sid) == NULL)
			sync_cookie_merge_csn(&cookie, &asked.csns[i]);   /* nothing newer */
	return syncprov_cookie(sp, req, asked.rid, &cookie, out);
}

/* value (encoded with w) as a control of the response; false: no memory. */
static bool add_control(struct overlay_request *req, const char *oid, struct ber_writer *w)
{
	void *value = ber_writer_error(w) == LUMEN_OK ? arena_memdup(req->op->arena, w->buf, w->len)
						      : NULL;
	struct ldap_control c = {
		.oid = { (const uint8_t *)oid, strlen(oid) },
		.has_value = true, .value = { value, w->len },
	};
	return value != NULL && overlay_add_response_control(req->op, &c) == LUMEN_OK;
}

/*
 * The refresh is over. refreshOnly: the Sync Done control with the
 * cookie. refreshAndPersist: a Sync Info refreshPresent (refreshDone
 * TRUE) with the cookie instead of SearchResultDone, as OpenLDAP sends
 * it, and the search goes on waiting for changes.
 */
static void end_refresh(struct syncprov *sp, struct overlay_request *req)
{
	struct backend_search *s = req->u.search;
	struct ber_view cookie;
	struct ber_writer w;
	bool done = false;
	bool deletes = s->resume.overlay_state[STATE_DELETE_PHASE] != 0;
	if (!refresh_cookie(sp, req, &cookie) || ber_writer_init(&w, 64, 0) != LUMEN_OK) {
		log_printf(0, "syncprov: no memory to end a refresh");
		return;
	}
	if (req->op->sync->mode == LDAP_SYNC_REFRESH_ONLY) {
		struct ldap_sync_done d = { .has_cookie = true, .cookie = cookie,
					    .refresh_deletes = deletes };
		ldap_sync_done_encode(&d, &w);
		done = add_control(req, LDAP_SYNC_DONE_OID, &w);
	} else if (s->persist != NULL) {
		struct ldap_sync_info info = { .kind = deletes ? LDAP_SYNC_INFO_REFRESH_DELETE
							       : LDAP_SYNC_INFO_REFRESH_PRESENT,
					       .has_cookie = true, .cookie = cookie,
					       .refresh_done = true };
		ldap_sync_info_encode(&info, &w);
		done = ber_writer_error(&w) == LUMEN_OK &&
		       s->intermediate(s->intermediate_ctx, LDAP_SYNC_INFO_OID,
				       (struct ber_view){ w.buf, w.len }) == 0;
		struct sync_cookie context;
		refresh_context(s, &context);
		if (done)
			syncprov_persist_refreshed(sp, req, &context);
	}
	ber_writer_free(&w);
	if (!done)
		log_printf(0, "syncprov: cannot end a refresh (no memory)");
}

static void syncprov_after(void *state, struct overlay_request *req)
{
	struct syncprov *sp = state;
	bool ok = req->rc == LUMEN_OK && req->op->result_code == LDAP_SUCCESS;
	if (req->operation == OVERLAY_SEARCH) {
		if (ok && req->op->sync != NULL)
			end_refresh(sp, req);
		return;
	}
	struct csn csn;
	const char *bad;
	if (ok && csn_parse(req->op->change_csn, strnlen(req->op->change_csn, CSN_LENGTH + 1),
			    &csn, &bad) == LUMEN_OK)
		publish(sp, &csn);
}

static int syncprov_on_write(void *state, struct database_txn *txn,
			     const struct database_txn_ops *ops, struct backend_op *op,
			     const struct database_write *w)
{
	(void)op;
	return syncprov_log_write(state, txn, ops, w);
}

static void syncprov_on_commit(void *state, struct backend_op *op,
			       const struct database_change *changes, size_t n)
{
	(void)op;
	syncprov_persist_queue(state, changes, n);
}

const struct overlay_type overlay_syncprov = {
	.name = "syncprov",
	.create = syncprov_create,
	.destroy = syncprov_destroy,
	.before = syncprov_before,
	.after = syncprov_after,
	.on_write = syncprov_on_write,
	.on_commit = syncprov_on_commit,
};
