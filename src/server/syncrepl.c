/*
 * syncrepl.c — the consumer threads: sessions with the provider (bind,
 * the synchronizing search, its messages applied), the poll interval and
 * the retry schedule (syncrepl.h).
 */
#include "syncrepl.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arena.h"
#include "config.h"
#include "config_syncrepl.h"
#include "controls.h"
#include "ldap_filter_text.h"
#include "ldap_message.h"
#include "ldap_result_codes.h"
#include "ldap_sync.h"
#include "log.h"
#include "lumen_error.h"
#include "server.h"
#include "syncrepl_apply.h"
#include "syncrepl_conn.h"

#define WHY_MAX 512
#define MAX_DEFERRED 100000u
#define SASL_EXTERNAL "EXTERNAL"

/* How a session ended, beyond an error. */
enum session_end { SESSION_DONE, SESSION_REFRESH_REQUIRED };

struct deferred {
	uint8_t *pdu;
	size_t len;
};

struct consumer {
	const struct config_syncrepl *cfg;
	struct server_database *db;
	const struct schema *schema;
	atomic_bool *stop;
	pthread_t thread;
	bool started;
	struct syncrepl_apply *apply;
	struct sync_cookie cookie;      /* what we hold (rid set) */
	/* one session's state */
	struct syncrepl_conn *conn;
	struct arena arena;             /* per message */
	struct ber_writer out;
	struct ldap_decode_limits limits;
	int32_t next_id, search_id;
	bool refreshing;                /* before the refresh's end */
	bool cookie_dirty;              /* the provider's cookie moved on */
	struct deferred *deferred;
	size_t n_deferred;
	uint64_t applied, deleted;
	bool server_id_set;             /* a serverID is configured */
	unsigned server_id;
};

struct syncrepl_set {
	atomic_bool stop;
	struct consumer *consumers;
	size_t n;
};

/* ------------------------------------------------------------- logging */

static void say(const struct consumer *c, unsigned level, const char *fmt, const char *what)
{
	log_printf(level, "syncrepl rid=%03d provider=%s: %s%s", c->cfg->rid, c->cfg->provider,
		   fmt, what != NULL ? what : "");
}

/* ---------------------------------------------------------- messages */

static struct ber_view view_of(const char *s)
{
	return (struct ber_view){ (const uint8_t *)s, s != NULL ? strlen(s) : 0 };
}

static int send_message(struct consumer *c, const struct ldap_message *m, char *why,
			size_t whylen)
{
	ber_writer_reset(&c->out);
	ldap_message_encode(&c->out, m);
	int rc = ber_writer_error(&c->out);
	if (rc != LUMEN_OK) {
		snprintf(why, whylen, "cannot encode a request: %s", lumen_strerror(rc));
		return rc;
	}
	return syncrepl_conn_send(c->conn, &c->out, why, whylen);
}

/* The next message, decoded into c->arena. */
static int read_message(struct consumer *c, unsigned timeout, struct ldap_message *m,
			const uint8_t **raw, size_t *raw_len, char *why, size_t whylen)
{
	const char *diag = NULL;
	const uint8_t *pdu;
	size_t len;
	int rc = syncrepl_conn_read(c->conn, timeout, &pdu, &len, why, whylen);
	if (rc != LUMEN_OK)
		return rc;
	arena_reset(&c->arena);
	rc = ldap_message_decode(pdu, len, &c->arena, &c->limits, m, &diag);
	if (rc != LUMEN_OK) {
		snprintf(why, whylen, "the provider sent a malformed message: %s",
			 diag != NULL ? diag : lumen_strerror(rc));
		return rc == LUMEN_ENOMEM ? rc : LUMEN_EMALFORMED;
	}
	if (m->message_id == 0) {
		snprintf(why, whylen, "the provider disconnected (notice of disconnection)");
		return LUMEN_EIO;
	}
	if (raw != NULL) {
		*raw = pdu;
		*raw_len = len;
	}
	return LUMEN_OK;
}

static int bind(struct consumer *c, char *why, size_t whylen)
{
	struct ldap_message m = { .message_id = c->next_id++, .op = LDAP_OP_BIND_REQUEST };
	m.u.bind.version = 3;
	if (c->cfg->bindmethod == SYNCREPL_BIND_SASL_EXTERNAL) {
		m.u.bind.auth = LDAP_AUTH_SASL;
		m.u.bind.mechanism = view_of(SASL_EXTERNAL);
		/* An empty initial response (no authzid), as libldap sends it:
		 * without one, Cyrus SASL (slapd) answers saslBindInProgress. */
		m.u.bind.has_credentials = true;
		m.u.bind.credentials = (struct ber_view){ (const uint8_t *)"", 0 };
	} else {
		m.u.bind.auth = LDAP_AUTH_SIMPLE;
		m.u.bind.name = view_of(c->cfg->binddn);
		m.u.bind.password = view_of(c->cfg->credentials);
	}
	int rc = send_message(c, &m, why, whylen);
	ber_writer_reset(&c->out);   /* no password left in the buffer */
	memset(c->out.buf, 0, c->out.cap);
	if (rc == LUMEN_OK)
		rc = read_message(c, c->cfg->timeout, &m, NULL, NULL, why, whylen);
	if (rc != LUMEN_OK)
		return rc;
	if (m.op != LDAP_OP_BIND_RESPONSE) {
		snprintf(why, whylen, "bind: the provider answered with %s", ldap_op_name(m.op));
		return LUMEN_EMALFORMED;
	}
	int code = m.u.bind_response.result.code;
	if (code == LDAP_SUCCESS)
		return LUMEN_OK;
	snprintf(why, whylen, "bind as \"%s\" failed: %s (%.*s)",
		 c->cfg->binddn != NULL ? c->cfg->binddn : "", ldap_result_name(code),
		 (int)(m.u.bind_response.result.diagnostic.len > 200
			       ? 200 : m.u.bind_response.result.diagnostic.len),
		 (const char *)m.u.bind_response.result.diagnostic.ptr);
	return LUMEN_EINVAL;
}

/* The Sync Request control with our cookie (none before the first sync). */
static int sync_control(struct consumer *c, struct ldap_control *control, char *why,
			size_t whylen)
{
	struct ldap_sync_request req = { .mode = (enum ldap_sync_mode)c->cfg->type };
	char *text = arena_alloc(&c->arena, SYNC_COOKIE_TEXT_MAX);
	struct ber_writer w;
	size_t len = 0;
	if (text == NULL || ber_writer_init(&w, 128, 0) != LUMEN_OK)
		return LUMEN_ENOMEM;
	int rc = LUMEN_OK;
	if (c->cookie.n_csns > 0) {
		rc = sync_cookie_format(&c->cookie, text, SYNC_COOKIE_TEXT_MAX, &len);
		req.has_cookie = true;
		req.cookie = (struct ber_view){ (const uint8_t *)text, len };
	}
	if (rc == LUMEN_OK) {
		ldap_sync_request_encode(&req, &w);
		rc = ber_writer_error(&w);
	}
	uint8_t *value = rc == LUMEN_OK ? arena_memdup(&c->arena, w.buf, w.len) : NULL;
	size_t value_len = w.len;
	ber_writer_free(&w);
	if (rc == LUMEN_OK && value == NULL)
		rc = LUMEN_ENOMEM;
	if (rc != LUMEN_OK) {
		snprintf(why, whylen, "cannot encode the Sync Request: %s", lumen_strerror(rc));
		return rc;
	}
	*control = (struct ldap_control){ view_of(LDAP_SYNC_REQUEST_OID), true, true,
					  { value, value_len } };
	return LUMEN_OK;
}

static int send_search(struct consumer *c, char *why, size_t whylen)
{
	const struct config_syncrepl *cfg = c->cfg;
	struct ldap_message m = { .message_id = c->next_id++, .op = LDAP_OP_SEARCH_REQUEST };
	struct ldap_search_request *s = &m.u.search;
	/* the Sync Request, and ManageDsaIT: referral objects replicate as
	 * the entries they are, not as references */
	struct ldap_control *control = arena_calloc(&c->arena, 2, sizeof(*control));
	s->attributes = arena_calloc(&c->arena, cfg->n_attrs + 1, sizeof(*s->attributes));
	if (control == NULL || s->attributes == NULL)
		return LUMEN_ENOMEM;
	int rc = ldap_filter_text_parse(cfg->filter, strlen(cfg->filter), &c->arena, NULL,
					&s->filter, NULL);
	if (rc == LUMEN_OK)
		rc = sync_control(c, control, why, whylen);
	if (rc != LUMEN_OK)
		return rc;
	s->base = view_of(cfg->searchbase);
	s->scope = (enum ldap_scope)cfg->scope;
	s->deref = LDAP_DEREF_NEVER;
	for (size_t i = 0; i < cfg->n_attrs; i++)
		s->attributes[s->n_attributes++] = view_of(cfg->attrs[i]);
	control[1] = (struct ldap_control){
		.oid = { (const uint8_t *)CONTROL_MANAGE_DSA_IT, strlen(CONTROL_MANAGE_DSA_IT) },
		.critical = true,
	};
	m.controls = control;
	m.n_controls = 2;
	c->search_id = m.message_id;
	return send_message(c, &m, why, whylen);
}

/* ----------------------------------------------------------- cookies */

/* Takes the provider's CSNs from a cookie it sent. */
static int take_cookie(struct consumer *c, struct ber_view text, char *why, size_t whylen)
{
	struct sync_cookie got;
	const char *bad = NULL;
	if (sync_cookie_parse(text, &got, &bad) != LUMEN_OK) {
		snprintf(why, whylen, "the provider sent an invalid cookie: %s",
			 bad != NULL ? bad : "malformed");
		return LUMEN_EMALFORMED;
	}
	for (size_t i = 0; i < got.n_csns; i++) {
		const struct csn *have = sync_cookie_csn_for(&c->cookie, got.csns[i].sid);
		if (have == NULL || csn_compare(have, &got.csns[i]) < 0)
			c->cookie_dirty = true;
		if (sync_cookie_merge_csn(&c->cookie, &got.csns[i]) != LUMEN_OK) {
			snprintf(why, whylen, "the provider's cookie names too many servers");
			return LUMEN_ELIMIT;
		}
	}
	return LUMEN_OK;
}

static int save_cookie(struct consumer *c, char *why, size_t whylen)
{
	if (!c->cookie_dirty || c->refreshing)
		return LUMEN_OK;
	int rc = syncrepl_apply_save_cookie(c->apply, &c->cookie, why, whylen);
	if (rc == LUMEN_ENOTFOUND) {
		say(c, LOG_LEVEL_SYNC, "no suffix entry to keep the cookie in yet", NULL);
		return LUMEN_OK;
	}
	if (rc == LUMEN_OK)
		c->cookie_dirty = false;
	return rc;
}

/* ------------------------------------------------------------ entries */

static const struct ldap_control *find_control(const struct ldap_message *m, const char *oid)
{
	for (size_t i = 0; i < m->n_controls; i++)
		if (ber_view_eq_str(m->controls[i].oid, oid) && m->controls[i].has_value)
			return &m->controls[i];
	return NULL;
}

static int keep_deferred(struct consumer *c, const uint8_t *pdu, size_t len)
{
	if (c->n_deferred == MAX_DEFERRED)
		return LUMEN_ELIMIT;
	struct deferred *bigger = realloc(c->deferred, (c->n_deferred + 1) * sizeof(*bigger));
	if (bigger == NULL)
		return LUMEN_ENOMEM;
	c->deferred = bigger;
	bigger[c->n_deferred].pdu = malloc(len);
	if (bigger[c->n_deferred].pdu == NULL)
		return LUMEN_ENOMEM;
	memcpy(bigger[c->n_deferred].pdu, pdu, len);
	bigger[c->n_deferred++].len = len;
	return LUMEN_OK;
}

static void drop_deferred(struct consumer *c)
{
	for (size_t i = 0; i < c->n_deferred; i++)
		free(c->deferred[i].pdu);
	free(c->deferred);
	c->deferred = NULL;
	c->n_deferred = 0;
}

/* A pushed change that changed the database, for the sync log level. */
static void log_changed(const struct consumer *c, enum ldap_sync_state state, struct ber_view dn)
{
	char line[320];
	snprintf(line, sizeof(line), "applied %s \"%.*s\"",
		 state == LDAP_SYNC_DELETE ? "delete" : "change", (int)(dn.len > 256 ? 256 : dn.len),
		 (const char *)dn.ptr);
	say(c, LOG_LEVEL_SYNC, line, NULL);
}

/* One SearchResultEntry; may_defer: a missing parent puts it aside. */
static int on_entry(struct consumer *c, const struct ldap_message *m, const uint8_t *raw,
		    size_t raw_len, bool may_defer, char *why, size_t whylen)
{
	struct ldap_sync_state_value state;
	bool changed = false;
	const struct ldap_control *ctl = find_control(m, LDAP_SYNC_STATE_OID);
	if (ctl == NULL || ldap_sync_state_decode(ctl->value, &state) != LUMEN_OK) {
		snprintf(why, whylen, "an entry without a valid Sync State control");
		return LUMEN_EMALFORMED;
	}
	int rc = syncrepl_apply_entry(c->apply, state.state, state.uuid, m->u.entry.dn,
				      m->u.entry.attributes, m->u.entry.n_attributes, &changed,
				      why, whylen);
	if (rc == LUMEN_ENOTFOUND && may_defer && raw != NULL)
		return keep_deferred(c, raw, raw_len);
	if (rc != LUMEN_OK) {
		size_t n = strlen(why);
		snprintf(why + n, whylen - n, " [%.*s]", (int)(m->u.entry.dn.len > 200
							       ? 200 : m->u.entry.dn.len),
			 (const char *)m->u.entry.dn.ptr);
		return rc;
	}
	c->applied += changed;
	if (changed && !c->refreshing)
		log_changed(c, state.state, m->u.entry.dn);
	if (state.has_cookie)
		rc = take_cookie(c, state.cookie, why, whylen);
	return rc == LUMEN_OK ? save_cookie(c, why, whylen) : rc;
}

/* Entries whose parent came later: again until nothing moves. */
static int apply_deferred(struct consumer *c, char *why, size_t whylen)
{
	while (c->n_deferred > 0) {
		size_t before = c->n_deferred, kept = 0;
		struct deferred *list = c->deferred;
		c->deferred = NULL;
		c->n_deferred = 0;
		int rc = LUMEN_OK;
		for (size_t i = 0; i < before; i++) {
			struct ldap_message m;
			arena_reset(&c->arena);
			if (rc == LUMEN_OK)
				rc = ldap_message_decode(list[i].pdu, list[i].len, &c->arena,
							 &c->limits, &m, NULL);
			if (rc == LUMEN_OK)
				rc = on_entry(c, &m, list[i].pdu, list[i].len, true, why, whylen);
			free(list[i].pdu);
		}
		free(list);
		kept = c->n_deferred;
		if (rc != LUMEN_OK)
			return rc;
		if (kept == before) {
			snprintf(why, whylen, "%zu entries whose parent the provider never sent",
				 kept);
			return LUMEN_EINVAL;
		}
	}
	return LUMEN_OK;
}

static void log_refresh(const struct consumer *c)
{
	char line[160];
	snprintf(line, sizeof(line), "refresh done: %llu entries applied, %llu deleted",
		 (unsigned long long)c->applied, (unsigned long long)c->deleted);
	say(c, c->applied + c->deleted > 0 ? 0 : LOG_LEVEL_SYNC, line, NULL);
}

/*
 * multiprovider: what the provider has seen (the cookie that ends its
 * refresh), so its present phase does not delete what it has not
 * received yet. An unusable cookie counts as having seen nothing.
 */
static void note_provider_state(struct consumer *c, bool has_cookie, struct ber_view cookie)
{
	struct sync_cookie seen = { .rid = -1, .sid = -1 };
	const char *bad;
	if (!has_cookie || sync_cookie_parse(cookie, &seen, &bad) != LUMEN_OK)
		seen.n_csns = 0;
	syncrepl_apply_provider_state(c->apply, &seen);
}

/* The refresh is over: put-aside entries, then the present phase's deletes. */
static int end_refresh(struct consumer *c, bool present_phase, char *why, size_t whylen)
{
	size_t deleted = 0;
	if (!c->refreshing)
		return LUMEN_OK;
	int rc = apply_deferred(c, why, whylen);
	if (rc == LUMEN_OK && present_phase)
		rc = syncrepl_apply_delete_nonpresent(c->apply, &deleted, why, whylen);
	if (rc != LUMEN_OK)
		return rc;
	c->deleted += deleted;
	c->refreshing = false;
	log_refresh(c);
	return LUMEN_OK;
}

static int on_id_set(struct consumer *c, const struct ldap_sync_info *info,
		     struct ber_reader *set, char *why, size_t whylen)
{
	uint8_t uuid[LDAP_SYNC_UUID_SIZE];
	while (!ber_reader_at_end(set)) {
		int rc = ldap_sync_info_next_uuid(set, uuid);
		if (rc != LUMEN_OK) {
			snprintf(why, whylen, "a malformed syncIdSet");
			return LUMEN_EMALFORMED;
		}
		rc = syncrepl_apply_id(c->apply, uuid, info->refresh_deletes, why, whylen);
		if (rc != LUMEN_OK)
			return rc;
		c->deleted += info->refresh_deletes;
	}
	return LUMEN_OK;
}

static int on_info(struct consumer *c, const struct ldap_message *m, char *why, size_t whylen)
{
	struct ldap_sync_info info;
	struct ber_reader set;
	const struct ldap_intermediate_response *ir = &m->u.intermediate;
	if (!ir->has_name || !ber_view_eq_str(ir->name, LDAP_SYNC_INFO_OID))
		return LUMEN_OK;   /* not ours: ignored */
	if (!ir->has_value || ldap_sync_info_decode(ir->value, &info, &set) != LUMEN_OK) {
		snprintf(why, whylen, "a malformed Sync Info message");
		return LUMEN_EMALFORMED;
	}
	int rc = LUMEN_OK;
	note_provider_state(c, info.has_cookie, info.cookie);
	if (info.kind == LDAP_SYNC_INFO_ID_SET)
		rc = on_id_set(c, &info, &set, why, whylen);
	else if (info.kind == LDAP_SYNC_INFO_REFRESH_PRESENT)
		rc = info.refresh_done ? end_refresh(c, true, why, whylen)
		     : syncrepl_apply_delete_nonpresent(c->apply, &(size_t){ 0 }, why, whylen);
	else if (info.kind == LDAP_SYNC_INFO_REFRESH_DELETE && info.refresh_done)
		rc = end_refresh(c, false, why, whylen);
	if (rc == LUMEN_OK && info.has_cookie)
		rc = take_cookie(c, info.cookie, why, whylen);
	return rc == LUMEN_OK ? save_cookie(c, why, whylen) : rc;
}

static int on_done(struct consumer *c, const struct ldap_message *m, enum session_end *end,
		   char *why, size_t whylen)
{
	const struct ldap_result *r = &m->u.result;
	struct ldap_sync_done done = { 0 };
	if (r->code == LDAP_SYNC_REFRESH_REQUIRED) {
		*end = SESSION_REFRESH_REQUIRED;
		return LUMEN_OK;
	}
	if (r->code != LDAP_SUCCESS) {
		snprintf(why, whylen, "the search failed: %s (%.*s)", ldap_result_name(r->code),
			 (int)(r->diagnostic.len > 200 ? 200 : r->diagnostic.len),
			 (const char *)r->diagnostic.ptr);
		return LUMEN_EINVAL;
	}
	const struct ldap_control *ctl = find_control(m, LDAP_SYNC_DONE_OID);
	if (ctl != NULL && ldap_sync_done_decode(ctl->value, &done) != LUMEN_OK) {
		snprintf(why, whylen, "a malformed Sync Done control");
		return LUMEN_EMALFORMED;
	}
	note_provider_state(c, done.has_cookie, done.cookie);
	int rc = end_refresh(c, !done.refresh_deletes, why, whylen);
	if (rc == LUMEN_OK && done.has_cookie)
		rc = take_cookie(c, done.cookie, why, whylen);
	if (rc == LUMEN_OK)
		rc = save_cookie(c, why, whylen);
	*end = SESSION_DONE;
	return rc;
}

/* ----------------------------------------------------------- sessions */

/* Messages of the search until its Done. */
static int run_search(struct consumer *c, enum session_end *end, char *why, size_t whylen)
{
	for (;;) {
		struct ldap_message m;
		const uint8_t *raw;
		size_t raw_len;
		/* silence is normal once persisting, not while refreshing */
		unsigned timeout = c->refreshing ? c->cfg->network_timeout : 0;
		int rc = read_message(c, timeout, &m, &raw, &raw_len, why, whylen);
		if (rc != LUMEN_OK)
			return rc;
		if (m.message_id != c->search_id)
			continue;
		if (m.op == LDAP_OP_SEARCH_ENTRY)
			rc = on_entry(c, &m, raw, raw_len, c->refreshing, why, whylen);
		else if (m.op == LDAP_OP_INTERMEDIATE_RESPONSE)
			rc = on_info(c, &m, why, whylen);
		else if (m.op == LDAP_OP_SEARCH_DONE)
			return on_done(c, &m, end, why, whylen);
		if (rc != LUMEN_OK)
			return rc;
	}
}

static int session(struct consumer *c, enum session_end *end, char *why, size_t whylen)
{
	c->next_id = 1;
	c->refreshing = true;
	c->applied = c->deleted = 0;
	syncrepl_apply_begin_refresh(c->apply);
	int rc = syncrepl_conn_open(c->cfg, c->stop, &c->conn, why, whylen);
	if (rc == LUMEN_OK && syncrepl_conn_tls(c->conn))
		c->next_id = 2;   /* StartTLS took 1 */
	if (rc == LUMEN_OK)
		rc = bind(c, why, whylen);
	if (rc == LUMEN_OK) {
		arena_reset(&c->arena);
		rc = send_search(c, why, whylen);
	}
	if (rc == LUMEN_OK)
		rc = run_search(c, end, why, whylen);
	syncrepl_conn_close(c->conn);
	c->conn = NULL;
	drop_deferred(c);
	return rc;
}

/* ------------------------------------------------------------- timing */

/* Sleeps seconds unless stopped; false when stopped. */
static bool pause_for(const struct consumer *c, unsigned seconds)
{
	struct timespec tick = { 0, 100 * 1000 * 1000 };
	for (unsigned long i = 0; i < (unsigned long)seconds * 10u; i++) {
		if (atomic_load(c->stop))
			return false;
		nanosleep(&tick, NULL);
	}
	return !atomic_load(c->stop);
}

/* The retry schedule: the wait before failure number `failures` (from 1),
 * or 0 when the schedule ran out. */
static unsigned retry_wait(const struct config_syncrepl *cfg, unsigned long failures)
{
	unsigned long seen = 0;
	for (size_t i = 0; i < cfg->n_retry; i++) {
		if (cfg->retry[i].count == SYNCREPL_RETRY_FOREVER)
			return cfg->retry[i].seconds;
		seen += (unsigned long)cfg->retry[i].count;
		if (failures <= seen)
			return cfg->retry[i].seconds;
	}
	return 0;
}

static void *consumer_main(void *arg)
{
	struct consumer *c = arg;
	char why[WHY_MAX];
	unsigned long failures = 0;
	if (syncrepl_apply_load_cookie(c->apply, &c->cookie) != LUMEN_OK)
		say(c, 0, "cannot read the stored cookie; starting without one", NULL);
	c->cookie.rid = c->cfg->rid;
	/* as OpenLDAP's consumer: our serverID in the cookie, so a provider
	 * does not send our own changes back */
	if (c->server_id_set)
		c->cookie.sid = (int)c->server_id;
	while (!atomic_load(c->stop)) {
		enum session_end end = SESSION_DONE;
		why[0] = '\0';
		say(c, failures > 0 ? 0 : LOG_LEVEL_SYNC, "connecting", NULL);
		int rc = session(c, &end, why, sizeof(why));
		if (atomic_load(c->stop))
			break;
		if (rc == LUMEN_OK && end == SESSION_REFRESH_REQUIRED) {
			say(c, 0, "the provider asks for a full refresh (e-syncRefreshRequired)",
			    NULL);
			c->cookie.n_csns = 0;
			continue;
		}
		if (rc == LUMEN_OK) {
			failures = 0;
			if (c->cfg->type == SYNCREPL_REFRESH_AND_PERSIST)
				say(c, 0, "the provider ended the persistent search", NULL);
			if (!pause_for(c, c->cfg->type == SYNCREPL_REFRESH_ONLY ? c->cfg->interval
						: c->cfg->retry[0].seconds))
				break;
			continue;
		}
		say(c, 0, "failed: ", why);
		unsigned wait = retry_wait(c->cfg, ++failures);
		if (wait == 0) {
			say(c, 0, "the retry schedule ran out: this consumer stops", NULL);
			break;
		}
		char line[64];
		snprintf(line, sizeof(line), "retrying in %u s (failure %lu)", wait, failures);
		say(c, 0, line, NULL);
		if (!pause_for(c, wait))
			break;
	}
	return NULL;
}

/* ---------------------------------------------------------- life cycle */

static int apply_settings(const struct server *s, const struct server_database *db,
			  const struct config_syncrepl *cfg, struct syncrepl_apply **out,
			  char *err, size_t errlen)
{
	char why[WHY_MAX] = "";
	struct syncrepl_apply_settings settings = {
		.schema = s->config->schema, .database = db->database,
		.context_ndn = db->suffixes[0], .rootdn_ndn = db->rootdn,
		.searchbase = cfg->searchbase, .scope = (enum ldap_scope)cfg->scope,
		.filter = cfg->filter,
		.multiprovider = db->config->multiprovider, .server_id = s->config->server_id,
	};
	for (size_t i = 0; i < cfg->n_attrs; i++)
		settings.all_operational |= strcmp(cfg->attrs[i], "+") == 0;
	if (settings.rootdn_ndn.ptr == NULL)
		settings.rootdn_ndn = (struct ber_view){ (const uint8_t *)"", 0 };
	int rc = syncrepl_apply_create(&settings, out, why, sizeof(why));
	if (rc != LUMEN_OK)
		snprintf(err, errlen, "%s: syncrepl rid=%03d: %s", cfg->origin, cfg->rid, why);
	return rc;
}

int syncrepl_check(const struct server *s, const struct server_database *db, char *err,
		   size_t errlen)
{
	for (size_t i = 0; i < db->config->n_syncrepl; i++) {
		struct syncrepl_apply *a = NULL;
		int rc = apply_settings(s, db, &db->config->syncrepl[i], &a, err, errlen);
		syncrepl_apply_free(a);
		if (rc != LUMEN_OK)
			return rc;
	}
	return LUMEN_OK;
}

static int start_consumer(struct server *s, struct syncrepl_set *set,
			  struct server_database *db, const struct config_syncrepl *cfg,
			  char *err, size_t errlen)
{
	struct consumer *c = &set->consumers[set->n++];
	c->cfg = cfg;
	c->db = db;
	c->schema = s->config->schema;
	c->stop = &set->stop;
	c->server_id_set = s->config->n_server_ids > 0;
	c->server_id = s->config->server_id;
	arena_init(&c->arena, 0);
	ldap_decode_limits_default(&c->limits);
	int rc = ber_writer_init(&c->out, 4096, SYNCREPL_MAX_PDU);
	if (rc == LUMEN_OK)
		rc = apply_settings(s, db, cfg, &c->apply, err, errlen);
	if (rc != LUMEN_OK)
		return rc;
	if (pthread_create(&c->thread, NULL, consumer_main, c) != 0) {
		snprintf(err, errlen, "%s: syncrepl rid=%03d: cannot start its thread",
			 cfg->origin, cfg->rid);
		return LUMEN_EIO;
	}
	c->started = true;
	return LUMEN_OK;
}

int syncrepl_start(struct server *s, struct syncrepl_set **out, char *err, size_t errlen)
{
	size_t total = 0;
	*out = NULL;
	for (size_t i = 0; i < s->n_databases; i++)
		total += s->databases[i].config->n_syncrepl;
	if (total == 0)
		return LUMEN_OK;
	struct syncrepl_set *set = calloc(1, sizeof(*set));
	if (set == NULL || (set->consumers = calloc(total, sizeof(*set->consumers))) == NULL) {
		free(set);
		snprintf(err, errlen, "out of memory");
		return LUMEN_ENOMEM;
	}
	atomic_init(&set->stop, false);
	int rc = LUMEN_OK;
	for (size_t i = 0; i < s->n_databases && rc == LUMEN_OK; i++) {
		struct server_database *db = &s->databases[i];
		for (size_t j = 0; j < db->config->n_syncrepl && rc == LUMEN_OK; j++)
			rc = start_consumer(s, set, db, &db->config->syncrepl[j], err, errlen);
	}
	if (rc != LUMEN_OK) {
		if (rc == LUMEN_ENOMEM)
			snprintf(err, errlen, "out of memory");
		syncrepl_stop(set);
		return rc;
	}
	*out = set;
	return LUMEN_OK;
}

void syncrepl_request_stop(struct syncrepl_set *set)
{
	if (set != NULL)
		atomic_store(&set->stop, true);
}

void syncrepl_stop(struct syncrepl_set *set)
{
	if (set == NULL)
		return;
	syncrepl_request_stop(set);
	for (size_t i = 0; i < set->n; i++) {
		struct consumer *c = &set->consumers[i];
		if (c->started)
			pthread_join(c->thread, NULL);
		syncrepl_apply_free(c->apply);
		arena_free(&c->arena);
		ber_writer_free(&c->out);
	}
	free(set->consumers);
	free(set);
}
