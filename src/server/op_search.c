/*
 * op_search.c — the Search operation (RFC 4511 §4.5) on the database that
 * holds the base: a configured one, or the server's own in-memory ones for
 * the root DSE, cn=Subschema and cn=Monitor (own_databases.h), all through
 * the one path below. Entries are encoded as the database hands them out
 * and sent in batches. Paged results carry the server's sealed cookie
 * (paged_cookie.h), whose count bounds the whole paged search.
 */
#include <stdio.h>
#include <string.h>

#include "access_glue.h"
#include "config.h"
#include "conn.h"
#include "entry_send.h"
#include "filter.h"
#include "log.h"
#include "lumen_error.h"
#include "ops.h"
#include "overlay.h"
#include "paged_cookie.h"
#include "server.h"

/*
 * Encoded bytes collected before they go to the connection: small results
 * leave with their SearchResultDone in one write; big ones stream.
 */
#define SEARCH_FLUSH_BYTES (64u * 1024u)

static void log_attributes(struct op_context *ctx, const struct ldap_search_request *req)
{
	char line[LOG_LINE_MAX];
	size_t used = 0;
	for (size_t i = 0; i < req->n_attributes && used + 2 < sizeof(line); i++) {
		int n = snprintf(line + used, sizeof(line) - used, "%s%s", i ? " " : "",
				 op_log_string(ctx, req->attributes[i]));
		if (n < 0)
			break;
		used += (size_t)n;
	}
	log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u SRCH attr=%s",
		   (unsigned long long)conn_number(ctx->conn), ctx->op->number, line);
}

static void log_request(struct op_context *ctx, const struct ldap_search_request *req)
{
	if (!log_enabled(LOG_LEVEL_STATS))
		return;
	struct ber_view filter = { (const uint8_t *)"?", 1 };
	if (req->filter != NULL)
		filter_text_print(req->filter, ctx->arena, &filter);
	log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u SRCH base=\"%s\" scope=%d deref=%d filter=\"%s\"",
		   (unsigned long long)conn_number(ctx->conn), ctx->op->number,
		   op_log_string(ctx, req->base), (int)req->scope, (int)req->deref,
		   op_log_string(ctx, filter));
	if (req->n_attributes > 0)
		log_attributes(ctx, req);
}

/* Compile the request's filter; on failure the result was sent. */
static bool compile_filter(struct op_context *ctx, const struct ldap_search_request *req,
			   struct filter *out)
{
	const struct ldap_decode_limits *l = &ctx->server->limits;
	struct filter_limits limits = { l->max_filter_depth, l->max_filter_nodes };
	int rc = filter_compile(ctx->server->config->schema, req->filter, &limits, ctx->arena, out);
	if (rc == LUMEN_OK)
		return true;
	if (rc == LUMEN_ENOMEM)
		op_send_result(ctx, LDAP_OTHER, NULL, "out of memory");
	else
		op_send_result(ctx, LDAP_PROTOCOL_ERROR, NULL, "filter cannot be used");
	return false;
}

static bool prepare_selection(struct op_context *ctx, const struct ldap_search_request *req,
			      struct attribute_selection *sel)
{
	if (attribute_selection_init(sel, ctx->server->config->schema, req->attributes,
				     req->n_attributes, req->types_only, ctx->arena) == LUMEN_OK)
		return true;
	op_send_result(ctx, LDAP_OTHER, NULL, "out of memory");
	return false;
}

/* 64-bit FNV-1a, continued from `hash`. */
static uint64_t hash_bytes(uint64_t hash, const void *data, size_t len)
{
	const uint8_t *p = data;
	for (size_t i = 0; i < len; i++) {
		hash ^= p[i];
		hash *= 0x100000001b3ull;
	}
	return hash;
}

/* What must not change between the pages of one paged search. */
static uint64_t paged_fingerprint(const struct ldap_search_request *req, struct ber_view ndn)
{
	uint8_t fixed[2] = { (uint8_t)req->scope, (uint8_t)req->types_only };
	uint64_t h = hash_bytes(0xcbf29ce484222325ull, fixed, sizeof(fixed));
	h = hash_bytes(h, ndn.ptr, ndn.len);
	h = hash_bytes(h, "\0", 1);
	h = hash_bytes(h, req->raw_filter.ptr, req->raw_filter.len);
	for (size_t i = 0; i < req->n_attributes; i++) {
		h = hash_bytes(h, "\0", 1);
		h = hash_bytes(h, req->attributes[i].ptr, req->attributes[i].len);
	}
	return h;
}

struct search_sink {
	struct op_context *ctx;
	struct attribute_selection *sel;
	/* Under access control (NULL otherwise): entries are decided here, and
	 * the size limit is counted here since skipped entries do not count. */
	struct access_search *access;
	unsigned long size_limit;            /* 0 = none */
	uint64_t returned_before;            /* paged: entries of earlier pages */
	bool size_exceeded;
};

static int send_entry(void *arg, const struct entry *e, const struct backend_entry_info *info)
{
	struct search_sink *sink = arg;
	struct op_context *ctx = sink->ctx;
	if (sink->access != NULL) {
		if (!access_search_entry(sink->access, e))
			return BACKEND_SINK_SKIPPED;
		if (sink->size_limit > 0 &&
		    sink->returned_before + ctx->n_entries >= sink->size_limit) {
			sink->size_exceeded = true;
			return 1;
		}
	}
	entry_send_message(sink->sel, e, info, ctx->op->message_id, ctx->out);
	ctx->n_entries++;
	op_mark(ctx, STATS_STAGE_ENCODE);
	if (ctx->out->len < SEARCH_FLUSH_BYTES)
		return ber_writer_error(ctx->out) == LUMEN_OK ? 0 : 1;
	int rc = op_flush(ctx);
	op_mark(ctx, STATS_STAGE_SEND);
	if (rc != LUMEN_OK)
		return 1;
	/* The client is behind: free this worker (and the snapshot) until it
	 * reads; the entry just queued counts as sent. */
	return conn_output_full(ctx->conn) ? BACKEND_SINK_PAUSE : 0;
}

/* An IntermediateResponse among the results (syncprov's Sync Info). */
static int send_intermediate(void *arg, const char *oid, struct ber_view value)
{
	struct op_context *ctx = arg;
	ldap_encode_intermediate(ctx->out, ctx->op->message_id, oid, &value);
	return ber_writer_error(ctx->out) == LUMEN_OK ? 0 : 1;
}

/* A persistent search has changes to send (any thread). */
static void wake_search(void *arg)
{
	struct op *op = arg;
	conn_wake_op(op->conn, op);
}

/*
 * The search paused: keep where it stands for its next run (parked by
 * ops_run_job). What it encoded goes out now: a persistent search may
 * wait long for its next change.
 */
static void pause_search(struct op_context *ctx, const struct backend_search *search)
{
	ctx->op->resume = search->resume;
	ctx->op->resume_entries = ctx->n_entries;
	ctx->op->resume_timing = ctx->timing;
	ctx->paused = true;
	ctx->waiting = search->wait;
	if (ctx->out->len > 0)
		op_flush(ctx);
}

static void log_unindexed(struct op_context *ctx, const struct backend_op *bop)
{
	if (!bop->unindexed)
		return;
	log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u SRCH unindexed attr=%s",
		   (unsigned long long)conn_number(ctx->conn), ctx->op->number,
		   bop->unindexed_attribute != NULL ? bop->unindexed_attribute : "?");
}

static bool may_search_base(struct acl_target *t, void *arg)
{
	(void)arg;
	return acl_search_may_match(t);
}

/*
 * Under access control: `search` on the base entry (else
 * insufficientAccessRights, or noSuchObject when it may not be disclosed;
 * not for the frontend's root DSE and cn=Subschema, which are just left
 * out, as slapd does), then the per-entry checks of access_search. False:
 * the answer was sent.
 */
static bool start_access(struct op_context *ctx, struct op_target *t,
			 struct access_search *acc, struct search_sink *sink)
{
	access_search_begin(acc, ctx->server, t->db, t->bop.requester_ndn, false,
			    &ctx->op->abandoned);
	if (!t->db->frontend && !op_target_decide(ctx, t, &acc->a, may_search_base, NULL))
		return false;
	t->hide_matched = true;
	t->bop.filter_access = &acc->hook;
	sink->access = acc;
	sink->sel->may_read = access_search_may_read;
	sink->sel->may_read_arg = acc;
	sink->size_limit = t->bop.size_limit > 0 ? (unsigned long)t->bop.size_limit : 0;
	t->bop.size_limit = 0;
	return true;
}

/* The limits of the requester (`limits`, sizelimit/timelimit); the rootdn
 * escapes the configured ones, not those it asks for (as slapd). */
static void apply_limits(struct op_context *ctx, const struct ldap_search_request *req,
			 struct op_target *t)
{
	long size = CONFIG_LIMIT_UNLIMITED, time = CONFIG_LIMIT_UNLIMITED;
	if (!t->bop.is_root)
		access_limits(ctx->server, t->db, t->bop.requester_ndn, &size, &time);
	t->bop.size_limit = op_combine_limit((long)req->size_limit, size);
	t->bop.time_limit = op_combine_limit((long)req->time_limit, time);
}

/*
 * Paged results: the client's cookie back into the backend's position and
 * the count returned so far (paged_cookie.h). False: the answer was sent.
 */
static bool open_cookie(struct op_context *ctx, const struct ldap_search_request *req,
			struct op_target *t, struct ber_view *pos, uint64_t *returned)
{
	struct paged_binding b = { conn_number(ctx->conn), req, t->ndn };
	*pos = (struct ber_view){ NULL, 0 };
	*returned = 0;
	if (!t->controls.paged || t->controls.cookie.len == 0)
		return true;
	int rc = paged_cookie_open(&b, t->controls.cookie, ctx->arena, pos, returned);
	if (rc == LUMEN_OK)
		return true;
	if (rc == LUMEN_EMALFORMED)
		op_send_result(ctx, LDAP_UNWILLING_TO_PERFORM, NULL,
			       "paged results cookie is invalid");
	else
		op_send_result(ctx, LDAP_OTHER, NULL, lumen_strerror(rc));
	return false;
}

/* The next page's cookie, sealed; on failure the search ends in `other`. */
static void seal_cookie(struct op_context *ctx, const struct ldap_search_request *req,
			struct op_target *t, const struct backend_search *search,
			uint64_t returned, int *rc)
{
	struct paged_binding b = { conn_number(ctx->conn), req, t->ndn };
	struct ber_view pos = { search->next_cookie, search->next_cookie_len };
	t->next_cookie = (struct ber_view){ NULL, 0 };
	if (pos.len == 0 || *rc != LUMEN_OK)
		return;
	int seal = paged_cookie_seal(&b, returned, pos, ctx->arena, &t->next_cookie);
	if (seal == LUMEN_OK)
		return;
	t->bop.result_code = LDAP_OTHER;
	t->bop.diagnostic = "paged results cookie cannot be made";
}

/*
 * RFC 4533: a database answers the Sync Request only with syncprov. Else a
 * critical one is unavailableCriticalExtension (as slapd), a non-critical
 * one is ignored. False when the answer was sent.
 */
static bool sync_answered_here(struct op_context *ctx, struct op_target *t)
{
	if (!t->controls.has_sync || overlay_database_has(t->db->database, "syncprov"))
		return true;
	t->bop.sync = NULL;
	if (!t->controls.sync_critical)
		return true;
	op_send_result(ctx, LDAP_UNAVAILABLE_CRITICAL_EXTENSION, NULL,
		       "content synchronization needs overlay syncprov on the database");
	return false;
}

static void search_database(struct op_context *ctx, const struct ldap_search_request *req,
			    struct op_target *t)
{
	struct filter filter;
	struct attribute_selection sel;
	struct access_search acc;
	struct ber_view position;
	uint64_t returned;
	if (!sync_answered_here(ctx, t) || !compile_filter(ctx, req, &filter) ||
	    !prepare_selection(ctx, req, &sel) || !open_cookie(ctx, req, t, &position, &returned))
		return;
	struct search_sink sink = { ctx, &sel, NULL, 0, returned, false };
	apply_limits(ctx, req, t);
	bool checks = !t->bop.is_root && (ctx->server->config->access.n_rules > 0 ||
					  t->db->config->access.n_rules > 0);
	t->bop.is_root = false;     /* the backend applies the combined limits */
	if (checks && !start_access(ctx, t, &acc, &sink)) {
		access_search_end(&acc);
		return;
	}
	struct backend_search search = {
		.base_ndn = t->ndn, .scope = req->scope, .filter = &filter,
		.want_counts = attribute_selection_wants_counts(&sel),
		.sink = send_entry, .sink_ctx = &sink,
		.paged = t->controls.paged, .page_size = t->controls.page_size,
		.cookie = position,
		.fingerprint = t->controls.paged ? paged_fingerprint(req, t->ndn) : 0,
		.resume = ctx->op->resume,
		.intermediate = send_intermediate, .intermediate_ctx = ctx,
		.wake = wake_search, .wake_ctx = ctx->op, .persist = ctx->op->persist,
	};
	/* Request preparation counts as decoding; access checks come next. */
	op_mark(ctx, STATS_STAGE_DECODE);
	op_mark(ctx, STATS_STAGE_ACCESS);
	op_time_backend(ctx, &t->bop);
	int rc = database_search(t->db->database, &t->bop, &search);
	ctx->op->persist = search.persist;   /* released when the op ends */
	if (search.paused && rc == LUMEN_OK && !sink.size_exceeded) {
		/* Parked by ops_run_job; run again from the PDU to continue. */
		pause_search(ctx, &search);
		if (checks)
			access_search_end(&acc);
		return;
	}
	if (sink.size_exceeded) {
		t->bop.result_code = LDAP_SIZE_LIMIT_EXCEEDED;
		t->bop.diagnostic = NULL;
		rc = LUMEN_OK;
	}
	if (checks)
		access_search_end(&acc);
	log_unindexed(ctx, &t->bop);
	seal_cookie(ctx, req, t, &search, returned + ctx->n_entries, &rc);
	op_target_answer(ctx, t, rc);
}

void op_search(struct op_context *ctx)
{
	const struct ldap_search_request *req = &ctx->msg->u.search;
	struct op_target t;
	if (!ctx->op->resume.active)
		log_request(ctx, req);
	if (!op_parse_controls(ctx, &t))
		return;
	if (op_target_resolve(ctx, req->base, &t))
		search_database(ctx, req, &t);
}
