/*
 * op_search.c — the Search operation (RFC 4511 §4.5) on the database that
 * holds the base: a configured one, or the server's own in-memory ones for
 * the root DSE, cn=Subschema and cn=Monitor (own_databases.h), all through
 * the one path below. Entries are encoded as the database hands them out
 * and sent in batches. Paged results carry the server's sealed cookie
 * (paged_cookie.h), whose count bounds the whole paged search.
 * A Server Side Sort (and VLV) search collects (ID, sort key) items first
 * and then fetches and sends the entries of its window in order through
 * the same sink (search_sort.h); a VLV search keeps its sorted result on
 * the connection for the next request that names its contextID.
 */
#include <stdio.h>
#include <string.h>

#include "access_glue.h"
#include "config.h"
#include "conn.h"
#include "entry_send.h"
#include "filter.h"
#include "inline_ops.h"
#include "log.h"
#include "lumen_error.h"
#include "ops.h"
#include "overlay.h"
#include "paged_cookie.h"
#include "search_sort.h"
#include "server.h"

/*
 * Encoded bytes collected before they go to the connection: small results
 * leave with their SearchResultDone in one write; big ones stream.
 */
#define SEARCH_FLUSH_BYTES (64u * 1024u)
/* The same while the connections are over conn_total_memory: a client
 * that does not read then leaves at most this much (and one entry) queued
 * when its search pauses, not a whole flush. */
#define SEARCH_FLUSH_BYTES_PRESSED (8u * 1024u)

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

/*
 * RFC 3672 as back-mdb answers it: a subentry (objectClass subentry) is
 * returned by a one-level or subtree search only with the Subentries
 * control TRUE, by a base search unless the control says FALSE; with the
 * control TRUE nothing else is returned. A replication search (Sync
 * Request) sees every entry: a replica must be whole.
 */
struct subentry_rule {
	const struct object_class *subentry;   /* NULL: the schema has none */
	bool base_scope;
	bool control, visibility;
};

static void subentry_rule_init(struct subentry_rule *r, const struct op_context *ctx,
			       const struct op_target *t, const struct ldap_search_request *req)
{
	bool replication = t->controls.has_sync;
	r->subentry = replication ? NULL
				  : schema_object_class(ctx->server->config->schema, "subentry", 8);
	r->base_scope = req->scope == LDAP_SCOPE_BASE;
	r->control = t->controls.subentries && !replication;
	r->visibility = t->controls.subentries_visibility;
}

static bool subentry_rule_hides(const struct subentry_rule *r, const struct entry *e)
{
	bool is_subentry = r->subentry != NULL && entry_is_instance_of(e, r->subentry);
	if (!is_subentry)
		return r->control && r->visibility;
	if (!r->base_scope)
		return !(r->control && r->visibility);
	return r->control && !r->visibility;
}

struct search_sink {
	struct op_context *ctx;
	const struct subentry_rule *subentries;
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
	if (subentry_rule_hides(sink->subentries, e))
		return BACKEND_SINK_SKIPPED;
	if (sink->access != NULL) {
		if (!access_search_entry(sink->access, e, info->filter_tested))
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
	if (ctx->out->len < SEARCH_FLUSH_BYTES &&
	    (ctx->out->len < SEARCH_FLUSH_BYTES_PRESSED || !conn_memory_pressed(ctx->conn)))
		return ber_writer_error(ctx->out) == LUMEN_OK ? 0 : 1;
	int rc = op_flush(ctx);
	op_mark(ctx, STATS_STAGE_SEND);
	if (rc != LUMEN_OK)
		return 1;
	/* The client is behind: free this worker (and the snapshot) until it
	 * reads; the entry just queued counts as sent. */
	return conn_output_full(ctx->conn) ? BACKEND_SINK_PAUSE : 0;
}

/* May the requester see referral object e's reference? As slapd: the
 * entry and its ref values must be readable. */
static bool may_refer(struct search_sink *sink, const struct entry *e)
{
	const struct schema *schema = sink->ctx->server->config->schema;
	if (sink->access == NULL)
		return true;
	return access_search_entry(sink->access, e, false) &&
	       access_search_may_read(sink->access, schema_attribute_type(schema, "ref", 3));
}

/* A referral object met in the scope (RFC 4511 §4.5.3): its
 * SearchResultReference, when the requester may see it. */
static int send_reference(void *arg, const struct entry *e, char *const *urls, size_t n)
{
	struct search_sink *sink = arg;
	struct op_context *ctx = sink->ctx;
	if (!may_refer(sink, e))
		return 0;
	struct ber_view *views = arena_calloc(ctx->arena, n, sizeof(*views));
	if (views == NULL)
		return 1;
	for (size_t i = 0; i < n; i++)
		views[i] = (struct ber_view){ (const uint8_t *)urls[i], strlen(urls[i]) };
	struct ldap_message m = { .message_id = ctx->op->message_id,
				  .op = LDAP_OP_SEARCH_REFERENCE };
	m.u.reference = (struct ldap_search_reference){ views, n };
	ldap_message_encode(ctx->out, &m);
	ctx->n_references++;
	return ber_writer_error(ctx->out) == LUMEN_OK ? 0 : 1;
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
	t->bop.access_tests_values = acc->a.tests_values;
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

/* ------------------------------------------ sorted searches (RFC 2891, VLV) */

/* The paged-results position of a sorted search: the count alone. */
#define SORT_COOKIE_POSITION "sort"

/* Entries fetched from one snapshot when a sorted window is sent by ID. */
#define SORT_FETCH_BATCH 256

struct sort_run {
	struct sort_collection *coll;
	const struct subentry_rule *subentries;
	struct access_search *access;
	int rc;                             /* sort_collection_add's */
};

/* First pass: the item of each entry the requester may see. */
static int collect_entry(void *arg, const struct entry *e, const struct backend_entry_info *info)
{
	struct sort_run *run = arg;
	if (subentry_rule_hides(run->subentries, e) ||
	    (run->access != NULL && !access_search_entry(run->access, e, info->filter_tested)))
		return BACKEND_SINK_SKIPPED;
	run->rc = sort_collection_add(run->coll, e, info->id,
				      run->access != NULL ? access_search_may_read : NULL,
				      run->access);
	return run->rc == LUMEN_OK ? 0 : 1;
}

/* Append a response control to the backend op's list (arena). */
static void add_response_control(struct op_context *ctx, struct backend_op *bop,
				 const struct ldap_control *c)
{
	struct ldap_control *list = arena_alloc(ctx->arena, (bop->n_response_controls + 1) *
							     sizeof(*list));
	if (list == NULL)
		return;
	if (bop->n_response_controls > 0)
		memcpy(list, bop->response_controls, bop->n_response_controls * sizeof(*list));
	list[bop->n_response_controls++] = *c;
	bop->response_controls = list;
}

static void add_sort_response(struct op_context *ctx, struct backend_op *bop, int result)
{
	struct ldap_control c;
	if (controls_sort_response(result, NULL, ctx->scratch, ctx->arena, &c) == LUMEN_OK)
		add_response_control(ctx, bop, &c);
}

/* The VLV response; context_id empty: none yet (an error before sorting). */
static void add_vlv_response(struct op_context *ctx, struct backend_op *bop, uint32_t target,
			     size_t count, int result, struct ber_view context_id)
{
	struct vlv_response r = { target, (uint32_t)count, result, context_id };
	struct ldap_control c;
	if (controls_vlv_response(&r, ctx->scratch, ctx->arena, &c) == LUMEN_OK)
		add_response_control(ctx, bop, &c);
}

static const struct ber_view no_context = { NULL, 0 };

/* An answer with no entries and just the controls gathered in t->bop. */
static void answer_now(struct op_context *ctx, struct op_target *t, int code, const char *why)
{
	t->bop.result_code = code;
	t->bop.diagnostic = why;
	t->next_cookie = (struct ber_view){ NULL, 0 };
	op_target_answer(ctx, t, LUMEN_OK);
}

/*
 * What slapd's sssvlv refuses before searching: VLV without sort
 * (vlvError), VLV with paged results (unwillingToPerform), unknown key
 * types and keys without an ordering rule. False: the answer was sent.
 */
static bool sort_request_usable(struct op_context *ctx, struct op_target *t,
				struct sort_spec *spec)
{
	const char *why = NULL;
	if (t->controls.vlv && !t->controls.sort) {
		add_vlv_response(ctx, &t->bop, 0, 0, SORT_VLV_SORT_MISSING, no_context);
		answer_now(ctx, t, SORT_VLV_ERROR, "Sort control is required with VLV");
		return false;
	}
	if (t->controls.vlv && t->controls.paged) {
		t->controls.paged = false;      /* no Paged Results response (as slapd) */
		answer_now(ctx, t, LDAP_UNWILLING_TO_PERFORM, "VLV incompatible with PagedResults");
		return false;
	}
	int code = sort_spec_resolve(ctx->server->config->schema, &t->controls, spec, &why);
	if (code == LDAP_SUCCESS)
		return true;
	answer_now(ctx, t, code, why);
	return false;
}

/* The window of the sorted items to send; false: the answer was sent. */
static bool sort_window(struct op_context *ctx, struct op_target *t,
			struct sort_context *sorted, uint64_t returned, struct sort_window *w)
{
	size_t n = sorted->coll.n, found = n;
	struct ber_view id = { sorted->id, sizeof(sorted->id) };
	memset(w, 0, sizeof(*w));
	if (!t->controls.vlv) {
		w->start = returned < n ? (size_t)returned : n;
		w->count = n - w->start;
		if (t->controls.paged && t->controls.page_size < w->count)
			w->count = (size_t)t->controls.page_size;
		return true;
	}
	const struct vlv_request *v = &t->controls.vlv_request;
	if (v->by_value) {
		int rc = sort_find_value(&sorted->coll, v->value, &found);
		if (rc != LUMEN_OK) {
			add_vlv_response(ctx, &t->bop, 0, n, rc == LUMEN_ENOMEM ? LDAP_OTHER :
							       LDAP_INAPPROPRIATE_MATCHING, id);
			answer_now(ctx, t, SORT_VLV_ERROR, NULL);
			return false;
		}
	}
	sort_vlv_window(v, n, found, w);
	if (w->vlv_result == 0)
		return true;
	add_vlv_response(ctx, &t->bop, 0, n, w->vlv_result, id);
	answer_now(ctx, t, SORT_VLV_ERROR, NULL);
	return false;
}

/* One entry of the window: the size limit and Abandon, then the sink. */
static int send_sorted_entry(void *arg, const struct entry *e,
			     const struct backend_entry_info *info)
{
	struct search_sink *sink = arg;
	struct op_context *ctx = sink->ctx;
	if (__atomic_load_n(&ctx->op->abandoned, __ATOMIC_RELAXED))
		return 1;                       /* stop: send_window tells why */
	if (sink->size_limit > 0 && sink->returned_before + ctx->n_entries >= sink->size_limit) {
		sink->size_exceeded = true;
		return 1;
	}
	return send_entry(sink, e, info);
}

/* The window by DN, one fetch each (a database without stable IDs). */
static int send_window_by_dn(struct op_target *t, struct search_sink *sink,
			     const struct sort_collection *coll, const struct sort_window *w)
{
	t->bop.fetch_counts = attribute_selection_wants_counts(sink->sel);
	for (size_t i = w->start; i < w->start + w->count; i++) {
		struct ber_view ndn = sort_item_dn(coll, sort_collection_at(coll, i));
		int rc = database_fetch(t->db->database, &t->bop, ndn, send_sorted_entry, sink);
		if (rc != LUMEN_OK && rc != BACKEND_SINK_PAUSE && rc != BACKEND_SINK_SKIPPED)
			return rc;
	}
	return LUMEN_OK;
}

/* Second pass: fetch and send the window's entries in order, by ID in
 * batches (each from one snapshot, renewed between them). */
static int send_window(struct op_context *ctx, struct op_target *t, struct search_sink *sink,
		       const struct sort_collection *coll, const struct sort_window *w)
{
	bool counts = attribute_selection_wants_counts(sink->sel);
	int rc = LUMEN_OK;
	if (coll->keep_dn) {
		rc = send_window_by_dn(t, sink, coll, w);
	} else {
		uint64_t ids[SORT_FETCH_BATCH];
		for (size_t i = w->start; i < w->start + w->count && rc == LUMEN_OK;) {
			size_t n = 0;
			for (; n < SORT_FETCH_BATCH && i < w->start + w->count; n++, i++)
				ids[n] = sort_collection_at(coll, i)->id;
			rc = database_fetch_ids(t->db->database, &t->bop, ids, n, counts,
						send_sorted_entry, sink);
		}
	}
	if (rc == LUMEN_OK || sink->size_exceeded)
		return LUMEN_OK;
	if (__atomic_load_n(&ctx->op->abandoned, __ATOMIC_RELAXED))
		return LUMEN_EBUSY;
	return rc > 0 ? LUMEN_EIO : rc;
}

/* Paged: the next cookie when items remain after this page. */
static void seal_sorted_cookie(struct op_context *ctx, const struct ldap_search_request *req,
			       struct op_target *t, bool more, uint64_t returned)
{
	struct paged_binding b = { conn_number(ctx->conn), req, t->ndn };
	struct ber_view pos = { (const uint8_t *)SORT_COOKIE_POSITION,
				sizeof(SORT_COOKIE_POSITION) - 1 };
	t->next_cookie = (struct ber_view){ NULL, 0 };
	if (!t->controls.paged || !more)
		return;
	if (paged_cookie_seal(&b, returned, pos, ctx->arena, &t->next_cookie) != LUMEN_OK) {
		t->bop.result_code = LDAP_OTHER;
		t->bop.diagnostic = "paged results cookie cannot be made";
	}
}

/* The collection pass's outcome as an answer; false when it was sent. */
static bool collected(struct op_context *ctx, struct op_target *t, struct sort_run *run, int rc)
{
	if (run->rc == LUMEN_ELIMIT) {
		add_sort_response(ctx, &t->bop, LDAP_ADMIN_LIMIT_EXCEEDED);
		answer_now(ctx, t, LDAP_ADMIN_LIMIT_EXCEEDED,
			   "sort: more entries than sortvlv-max");
		return false;
	}
	if (run->rc == LUMEN_OK && rc == LUMEN_OK && t->bop.result_code == LDAP_SUCCESS)
		run->rc = sort_collection_sort(run->coll);
	if (run->rc != LUMEN_OK) {
		answer_now(ctx, t, LDAP_OTHER, lumen_strerror(run->rc));
		return false;
	}
	if (rc != LUMEN_OK || t->bop.result_code != LDAP_SUCCESS) {
		t->next_cookie = (struct ber_view){ NULL, 0 };
		op_target_answer(ctx, t, rc);
		return false;
	}
	return true;
}

/* Appends n bytes at *at (sort_binding_of sized the buffer). */
static uint8_t *put_bytes(uint8_t *at, const void *p, size_t n)
{
	if (n > 0)
		memcpy(at, p, n);
	return at + n;
}

/*
 * What a kept VLV result is bound to (search_sort.h): the request's shaping
 * parts laid end to end, each variable one after its length so that no two
 * requests give the same bytes. False: no memory.
 */
static bool sort_binding_of(struct op_context *ctx, const struct ldap_search_request *req,
			    const struct op_target *t, const struct sort_spec *spec,
			    struct sort_binding *b)
{
	uint8_t fixed[5] = { (uint8_t)req->scope, (uint8_t)req->deref, t->controls.subentries,
			     t->controls.subentries_visibility, t->controls.manage_dsa_it };
	size_t key_bytes = sizeof(spec->keys[0].type) + sizeof(spec->keys[0].rule) +
			   sizeof(spec->keys[0].reverse);
	size_t len = sizeof(fixed) + 2 * sizeof(size_t) + t->ndn.len + req->raw_filter.len +
		     spec->n_keys * key_bytes;
	uint8_t *buf = arena_alloc(ctx->arena, len), *at = buf;
	if (buf == NULL)
		return false;
	at = put_bytes(at, fixed, sizeof(fixed));
	at = put_bytes(at, &t->ndn.len, sizeof(size_t));
	at = put_bytes(at, t->ndn.ptr, t->ndn.len);
	at = put_bytes(at, &req->raw_filter.len, sizeof(size_t));
	at = put_bytes(at, req->raw_filter.ptr, req->raw_filter.len);
	for (size_t i = 0; i < spec->n_keys; i++) {
		const struct sort_key *k = &spec->keys[i];
		at = put_bytes(at, &k->type, sizeof(k->type));
		at = put_bytes(at, &k->rule, sizeof(k->rule));
		at = put_bytes(at, &k->reverse, sizeof(k->reverse));
	}
	*b = (struct sort_binding){ t->db, t->bop.requester_ndn, { buf, (size_t)(at - buf) } };
	return true;
}

/*
 * The sorted result to answer from: the connection's kept one when this
 * VLV request names it and matches its binding, else a fresh search (the
 * kept one, if any, is dropped: one per connection, as slapd). NULL: the
 * answer was sent.
 */
static struct sort_context *sorted_result(struct op_context *ctx,
					  const struct ldap_search_request *req,
					  struct op_target *t, struct search_sink *sink,
					  struct backend_search *search, const struct sort_spec *spec)
{
	struct sort_binding b;
	if (!sort_binding_of(ctx, req, t, spec, &b)) {
		answer_now(ctx, t, LDAP_OTHER, "out of memory");
		return NULL;
	}
	/* Any other sorted search drops what the connection kept. */
	struct sort_context *kept = conn_sort_take(ctx->conn);
	/* An assertion on the base is tested by searching: search again. */
	if (kept != NULL && t->controls.vlv && !t->controls.has_assertion &&
	    sort_context_matches(kept, t->controls.vlv_request.context_id, &b))
		return kept;
	sort_context_free(kept);
	struct sort_context *fresh = NULL;
	int rc = sort_context_create(spec, &b, ctx->server->config->sort_max,
				     !database_has_fetch_ids(t->db->database), &fresh);
	if (rc != LUMEN_OK) {
		answer_now(ctx, t, LDAP_OTHER, lumen_strerror(rc));
		return NULL;
	}
	struct sort_run run = { &fresh->coll, sink->subentries, sink->access, LUMEN_OK };
	search->sink = collect_entry;
	search->sink_ctx = &run;
	search->paged = false;
	/* The collection is timed as one stage: two clock reads per entry
	 * cost more than its filter does. */
	void (*mark)(void *, enum backend_stage) = t->bop.mark;
	t->bop.mark = NULL;
	rc = database_search(t->db->database, &t->bop, search);
	t->bop.mark = mark;
	op_mark(ctx, STATS_STAGE_ENTRIES);
	if (!collected(ctx, t, &run, rc)) {
		sort_context_free(fresh);
		return NULL;
	}
	return fresh;
}

/* A VLV result stays on the connection; anything else goes. */
static void keep_sorted(struct op_context *ctx, const struct op_target *t,
			struct sort_context *sorted)
{
	if (t->controls.vlv)
		(void)conn_sort_keep(ctx->conn, sorted);
	else
		sort_context_free(sorted);
}

static void search_sorted(struct op_context *ctx, const struct ldap_search_request *req,
			  struct op_target *t, struct search_sink *sink,
			  struct backend_search *search, uint64_t returned)
{
	struct sort_spec spec;
	struct sort_window w;
	if (sink->access == NULL)
		sink->size_limit = t->bop.size_limit > 0 ? (unsigned long)t->bop.size_limit : 0;
	if (!sort_request_usable(ctx, t, &spec))
		return;
	t->bop.size_limit = 0;              /* applies to what is sent */
	struct sort_context *sorted = sorted_result(ctx, req, t, sink, search, &spec);
	if (sorted == NULL)
		return;
	size_t n = sorted->coll.n;
	/* Encoded into the arena at once: valid after sorted is kept or freed. */
	struct ber_view id = { sorted->id, sizeof(sorted->id) };
	if (sort_window(ctx, t, sorted, returned, &w)) {
		int rc = send_window(ctx, t, sink, &sorted->coll, &w);
		if (rc == LUMEN_OK) {
			t->bop.result_code = sink->size_exceeded ? LDAP_SIZE_LIMIT_EXCEEDED
								 : LDAP_SUCCESS;
			t->bop.diagnostic = NULL;
		} else if (t->bop.result_code == LDAP_SUCCESS) {
			/* never a success with entries missing; a storage failure
			 * the database answered keeps its own code and message */
			t->bop.result_code = LDAP_OTHER;
			t->bop.diagnostic = "search stopped";
		}
		add_sort_response(ctx, &t->bop, LDAP_SUCCESS);
		if (t->controls.vlv)
			add_vlv_response(ctx, &t->bop, w.target_position, n, 0, id);
		bool more = w.start + w.count < n && !sink->size_exceeded &&
			    t->controls.page_size > 0;
		seal_sorted_cookie(ctx, req, t, more, returned + ctx->n_entries);
		/* Kept before the answer: the client's next request may follow
		 * at once, on another worker. */
		keep_sorted(ctx, t, sorted);
		op_target_answer(ctx, t, rc);
		return;
	}
	keep_sorted(ctx, t, sorted);        /* kept even when out of range */
}

/* The most attribute types a search reads in part; a longer list gains
 * little over decoding the whole entry. */
#define SEARCH_READ_ONLY_MAX 16

/*
 * The attribute types a plain search looks at, when that is less than
 * the whole entry: the filter's types, the attributes asked for and
 * objectClass (subentries and aliases are told by it), each with its
 * subtypes. A search returning all user or all operational attributes
 * decodes the filter's types and objectClass and sends the rest as
 * stored, from the entry's outline. NULL (whole entries) when an access
 * rule's filter= tests the entry (tests_values), when Matched Values
 * must look at the values of all (keep_value), when a typeless
 * extensible match may test any attribute, past SEARCH_READ_ONLY_MAX
 * types, or when the arena is out. Sorted and sync searches never ask:
 * their keys and state are read too.
 */
static const struct entry_selection *search_reads(struct op_context *ctx,
						  const struct filter *filter,
						  const struct attribute_selection *sel,
						  bool tests_values)
{
	const struct schema *schema = ctx->server->config->schema;
	bool all = sel->all_user || sel->all_operational;
	if (tests_values || (all && sel->keep_value != NULL))
		return NULL;
	const struct attribute_type **types = arena_calloc(ctx->arena, SEARCH_READ_ONLY_MAX,
							   sizeof(*types));
	struct entry_selection *only = arena_alloc(ctx->arena, sizeof(*only));
	const struct attribute_type *object_class = schema_attribute_type(schema, "objectClass", 11);
	size_t n = 0;
	if (types == NULL || only == NULL || object_class == NULL ||
	    !filter_tested_types(filter, types, SEARCH_READ_ONLY_MAX, &n) ||
	    !attribute_type_list_add(types, &n, SEARCH_READ_ONLY_MAX, object_class))
		return NULL;
	for (size_t i = 0; i < sel->n_wanted && !all; i++)
		if (!attribute_type_list_add(types, &n, SEARCH_READ_ONLY_MAX, sel->wanted[i].type))
			return NULL;
	*only = (struct entry_selection){ types, n, all };
	return only;
}

static void search_with(struct op_context *ctx, const struct ldap_search_request *req,
			struct op_target *t, struct matched_values *mv)
{
	struct filter filter;
	struct attribute_selection sel;
	struct access_search acc;
	struct ber_view position;
	uint64_t returned;
	if (!sync_answered_here(ctx, t) || !compile_filter(ctx, req, &filter) ||
	    !prepare_selection(ctx, req, &sel) || !open_cookie(ctx, req, t, &position, &returned))
		return;
	matched_values_select(mv, &sel);
	struct subentry_rule subentries;
	subentry_rule_init(&subentries, ctx, t, req);
	struct search_sink sink = { ctx, &subentries, &sel, NULL, 0, returned, false };
	apply_limits(ctx, req, t);
	bool checks = !t->bop.is_root && (ctx->server->config->access.n_rules > 0 ||
					  t->db->config->access.n_rules > 0);
	t->bop.is_root = false;     /* the backend applies the combined limits */
	if (checks && !start_access(ctx, t, &acc, &sink)) {
		access_search_end(&acc);
		return;
	}
	struct backend_search search = {
		.base_ndn = t->ndn, .scope = req->scope, .deref = req->deref, .filter = &filter,
		.want_counts = attribute_selection_wants_counts(&sel),
		.sink = send_entry, .sink_ctx = &sink, .reference = send_reference,
		.reference_ctx = &sink,
		.paged = t->controls.paged, .page_size = t->controls.page_size,
		.cookie = position,
		.fingerprint = t->controls.paged ? paged_fingerprint(req, t->ndn) : 0,
		.resume = ctx->op->resume, .examine_budget = op_search_budget(ctx),
		.intermediate = send_intermediate, .intermediate_ctx = ctx,
		.wake = wake_search, .wake_ctx = ctx->op, .persist = ctx->op->persist,
	};
	/* Request preparation counts as decoding; access checks come next. */
	op_mark(ctx, STATS_STAGE_DECODE);
	op_mark(ctx, STATS_STAGE_ACCESS);
	op_time_backend(ctx, &t->bop);
	if (t->controls.sort || t->controls.vlv) {
		search_sorted(ctx, req, t, &sink, &search, returned);
		if (checks)
			access_search_end(&acc);
		return;
	}
	if (!t->controls.has_sync)
		search.fetch_only = search_reads(ctx, &filter, &sel, checks && acc.a.tests_values);
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

/* The search with its Matched Values scratch around it. */
static void search_database(struct op_context *ctx, const struct ldap_search_request *req,
			    struct op_target *t)
{
	struct matched_values mv;
	matched_values_begin(&mv, t->controls.matched_values ? &t->controls.values_return : NULL);
	search_with(ctx, req, t, &mv);
	matched_values_end(&mv);
}

void op_search(struct op_context *ctx)
{
	const struct ldap_search_request *req = &ctx->msg->u.search;
	struct op_target t;
	/* Too long for an I/O thread (inline_ops.h): a worker runs it. */
	if (ctx->on_io_thread && !inline_search_eligible(ctx->msg) && op_hand_off(ctx))
		return;
	if (!ctx->op->resume.active)
		log_request(ctx, req);
	if (!op_parse_controls(ctx, &t))
		return;
	if (op_target_resolve(ctx, req->base, &t) &&
	    (ctx->op->resume.active || op_target_unrestricted(ctx, &t, false)) &&
	    !op_refuse_copy(ctx, &t, req->base, (int)req->scope))
		search_database(ctx, req, &t);
}
