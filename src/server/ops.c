/*
 * ops.c — running queued operations: decode, dispatch by protocolOp,
 * answer, log the RESULT line.
 */
#include "ops.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "conn.h"
#include "inline_ops.h"
#include "log.h"
#include "lumen_error.h"
#include "server.h"
#include "stats.h"

struct op_handler {
	int request;          /* protocolOp of the request */
	int response;         /* protocolOp of its final response, or -1 */
	const char *log_name; /* as in slapd's access log */
	void (*run)(struct op_context *ctx);
};

/* Adding an operation (or the backend behind one) is changing a row. */
static const struct op_handler handlers[] = {
	{ LDAP_OP_BIND_REQUEST, LDAP_OP_BIND_RESPONSE, "BIND", op_bind },
	{ LDAP_OP_SEARCH_REQUEST, LDAP_OP_SEARCH_DONE, "SRCH", op_search },
	{ LDAP_OP_MODIFY_REQUEST, LDAP_OP_MODIFY_RESPONSE, "MOD", op_modify },
	{ LDAP_OP_ADD_REQUEST, LDAP_OP_ADD_RESPONSE, "ADD", op_add },
	{ LDAP_OP_DELETE_REQUEST, LDAP_OP_DELETE_RESPONSE, "DEL", op_delete },
	{ LDAP_OP_MODDN_REQUEST, LDAP_OP_MODDN_RESPONSE, "MODRDN", op_moddn },
	{ LDAP_OP_COMPARE_REQUEST, LDAP_OP_COMPARE_RESPONSE, "CMP", op_compare },
	{ LDAP_OP_EXTENDED_REQUEST, LDAP_OP_EXTENDED_RESPONSE, "EXT", op_extended },
};

static const struct op_handler *find_handler(int request)
{
	for (size_t i = 0; i < sizeof(handlers) / sizeof(handlers[0]); i++)
		if (handlers[i].request == request)
			return &handlers[i];
	return NULL;
}

int ops_response_tag(int request_tag)
{
	const struct op_handler *h = find_handler(request_tag);
	return h != NULL ? h->response : -1;
}

struct worker_context *ops_context_create(struct server *server, unsigned index,
					  struct stats_thread *stats)
{
	struct worker_context *w = calloc(1, sizeof(*w));
	if (w == NULL)
		return NULL;
	w->server = server;
	w->index = index;
	w->stats = stats;
	arena_init(&w->arena, OPS_ARENA_MAX);
	if (ber_writer_init(&w->writer, 4096, 0) != LUMEN_OK) {
		free(w);
		return NULL;
	}
	if (ber_writer_init(&w->scratch, 1024, 0) != LUMEN_OK) {
		ber_writer_free(&w->writer);
		free(w);
		return NULL;
	}
	return w;
}

void *ops_worker_start(void *server, unsigned index)
{
	struct server *s = server;
	struct stats_thread *stats = NULL;
	char name[16];
	snprintf(name, sizeof(name), "lumend-w%u", index);
	pthread_setname_np(pthread_self(), name);
	/* Runs on the worker thread: the record becomes this thread's own.
	 * Without one (out of memory) the worker serves, uncounted. */
	if (s->stats != NULL)
		stats_thread_register(s->stats, &stats);
	return ops_context_create(s, index, stats);
}

void ops_worker_stop(void *server, void *worker_context)
{
	struct worker_context *w = worker_context;
	(void)server;
	arena_free(&w->arena);
	ber_writer_free(&w->writer);
	ber_writer_free(&w->scratch);
	free(w);
}

void op_mark(struct op_context *ctx, enum stats_stage stage)
{
	op_timing_mark(&ctx->timing, stage);
}

static const enum stats_stage backend_stages[] = {
	[BACKEND_STAGE_CANDIDATES] = STATS_STAGE_CANDIDATES,
	[BACKEND_STAGE_ENTRIES] = STATS_STAGE_ENTRIES,
	[BACKEND_STAGE_FILTER] = STATS_STAGE_FILTER,
};

static void mark_backend_stage(void *ctx, enum backend_stage stage)
{
	op_mark(ctx, backend_stages[stage]);
}

void op_time_backend(struct op_context *ctx, struct backend_op *bop)
{
	bop->mark = mark_backend_stage;
	bop->mark_ctx = ctx;
}

static void step_out_while_waiting(void *queue, bool waiting)
{
	if (waiting)
		workq_blocking_begin(queue);
	else
		workq_blocking_end(queue);
}

void op_wait_off_worker(struct op_context *ctx, struct backend_op *bop)
{
	bop->wait = step_out_while_waiting;
	bop->wait_ctx = ctx->server->workq;
}

/* µs resolution, as slapd prints etime. */
static int format_seconds(char *buf, size_t len, const char *name, uint64_t ns)
{
	uint64_t micro = ns / 1000u;
	return snprintf(buf, len, "%s=%llu.%06llu", name, (unsigned long long)(micro / 1000000u),
			(unsigned long long)(micro % 1000000u));
}

/*
 * "qtime=... etime=..." (slapd 2.5's shape), or for a slow operation the
 * whole stage breakdown "qtime=... decode=... ... send=... etime=...".
 */
static void format_times(const struct op_context *ctx, char *buf, size_t len)
{
	const struct server *s = ctx->server;
	if (s->slowop_all || op_timing_is_slow(&ctx->timing, s->slowop_ns)) {
		op_timing_format(&ctx->timing, buf, len);
		return;
	}
	int n = format_seconds(buf, len, "qtime", ctx->timing.stage_ns[STATS_STAGE_QUEUE]);
	if (n > 0 && (size_t)n + 1 < len) {
		buf[n] = ' ';
		format_seconds(buf + n + 1, len - (size_t)n - 1, "etime",
			       op_timing_elapsed_ns(&ctx->timing));
	}
}

static void log_result(struct op_context *ctx, int code, const char *diagnostic)
{
	char times[512];
	if (!log_enabled(LOG_LEVEL_STATS))
		return;
	format_times(ctx, times, sizeof(times));
	const char *text = diagnostic != NULL ? diagnostic : "";
	unsigned long long conn_id = (unsigned long long)conn_number(ctx->conn);
	int response = ops_response_tag(ctx->op->tag);
	if (response == LDAP_OP_SEARCH_DONE)
		log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u SEARCH RESULT tag=%d err=%d "
			   "%s nentries=%lu text=%s", conn_id, ctx->op->number, 0x60 | response,
			   code, times, ctx->n_entries, text);
	else if (response == LDAP_OP_EXTENDED_RESPONSE)
		log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u RESULT oid= err=%d %s text=%s",
			   conn_id, ctx->op->number, code, times, text);
	else
		log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u RESULT tag=%d err=%d %s text=%s",
			   conn_id, ctx->op->number, 0x60 | response, code, times, text);
}

static void send_batch(struct op_context *ctx)
{
	int rc = ber_writer_error(ctx->out);
	if (rc != LUMEN_OK) {
		log_printf(0, "conn=%llu op=%u cannot encode the response: %s",
			   (unsigned long long)conn_number(ctx->conn), ctx->op->number, lumen_strerror(rc));
		return;
	}
	/* An operation abandoned while it ran is never answered (RFC 4511 §4.11). */
	conn_send_final(ctx->conn, ctx->op, ctx->out->buf, ctx->out->len);
}

static enum stats_op_type op_type(const struct op_context *ctx)
{
	return (enum stats_op_type)stats_op_type_of_tag(ctx->op->tag);
}

/*
 * Count the operation complete, once. Done before its last response leaves,
 * so a client that saw the response sees the count (cn=Monitor, /metrics).
 * false if it was counted already.
 */
static bool count_completion(struct op_context *ctx, int code)
{
	if (ctx->recorded)
		return false;
	ctx->recorded = true;
	stats_record_completion(ctx->stats, op_type(ctx), code);
	stats_count_entries_sent(ctx->stats, ctx->n_entries, ctx->n_references);
	stats_count_sent(ctx->stats, 0, ctx->n_entries + ctx->n_references + 1);
	return true;
}

/* An operation that ends without a (final) send: count and time it. */
static void record_op(struct op_context *ctx, int code)
{
	if (count_completion(ctx, code))
		stats_record_timing(ctx->stats, op_type(ctx), &ctx->timing);
}

/* Once the final response left: log it and, if this counted it, time it. */
static void end_op(struct op_context *ctx, int code, const char *diagnostic, bool first)
{
	op_mark(ctx, STATS_STAGE_SEND);
	log_result(ctx, code, diagnostic);
	if (first)
		stats_record_timing(ctx->stats, op_type(ctx), &ctx->timing);
}

/* After the final response was encoded into ctx->out: count, send, log, time. */
static void finish_op(struct op_context *ctx, int code, const char *diagnostic)
{
	op_mark(ctx, STATS_STAGE_ENCODE);
	bool first = count_completion(ctx, code);
	send_batch(ctx);
	end_op(ctx, code, diagnostic, first);
}

void op_finish_sent(struct op_context *ctx, int code, const char *diagnostic)
{
	end_op(ctx, code, diagnostic, count_completion(ctx, code));
}

int op_flush(struct op_context *ctx)
{
	int rc = ber_writer_error(ctx->out);
	if (rc != LUMEN_OK)
		return rc;
	rc = conn_send_op(ctx->conn, ctx->op, ctx->out->buf, ctx->out->len);
	ber_writer_reset(ctx->out);
	return rc;
}

bool op_commit(struct op_context *ctx)
{
	return conn_op_commit(ctx->conn, ctx->op);
}

void op_send_result(struct op_context *ctx, int code, const char *matched,
		    const char *diagnostic)
{
	op_send_result_controls(ctx, code, matched, diagnostic, NULL, 0);
}

/* An update replayed in a transaction: keep its answer for the End. */
static void capture_result(struct op_context *ctx, int code, const char *diagnostic,
			   const struct ldap_control *controls, size_t n_controls)
{
	struct op_capture *cap = ctx->capture;
	*cap = (struct op_capture){ .answered = true, .code = code };
	if (diagnostic != NULL)
		cap->diagnostic = arena_memdup(ctx->arena, diagnostic, strlen(diagnostic) + 1);
	if (n_controls > 0) {
		cap->controls = arena_memdup(ctx->arena, controls, n_controls * sizeof(*controls));
		cap->n_controls = cap->controls != NULL ? n_controls : 0;
	}
}

void op_send_result_controls(struct op_context *ctx, int code, const char *matched,
			     const char *diagnostic, const struct ldap_control *controls,
			     size_t n_controls)
{
	if (ctx->capture != NULL) {
		capture_result(ctx, code, diagnostic, controls, n_controls);
		return;
	}
	int response = ops_response_tag(ctx->op->tag);
	/* Whatever the handler (or backend) did since its last mark. */
	op_mark(ctx, STATS_STAGE_ENTRIES);
	if (response == LDAP_OP_BIND_RESPONSE)
		ldap_encode_bind_result(ctx->out, ctx->op->message_id, code, matched,
					diagnostic, NULL, controls, n_controls);
	else if (response == LDAP_OP_EXTENDED_RESPONSE)
		ldap_encode_extended_result(ctx->out, ctx->op->message_id, code, diagnostic,
					    NULL, NULL, controls, n_controls);
	else
		ldap_encode_result(ctx->out, ctx->op->message_id, response, code, matched,
				   diagnostic, controls, n_controls);
	finish_op(ctx, code, diagnostic);
}

void op_send_referral(struct op_context *ctx, char *const *urls, size_t n)
{
	op_send_referral_controls(ctx, NULL, urls, n, NULL, 0);
}

void op_send_referral_controls(struct op_context *ctx, const char *matched,
			       char *const *urls, size_t n,
			       const struct ldap_control *controls, size_t n_controls)
{
	if (ctx->capture != NULL) {
		capture_result(ctx, LDAP_REFERRAL, "referral in a transaction", NULL, 0);
		return;
	}
	struct ber_view *views = arena_calloc(ctx->arena, n + 1, sizeof(*views));
	if (views == NULL) {
		op_send_result(ctx, LDAP_OTHER, NULL, "out of memory");
		return;
	}
	for (size_t i = 0; i < n; i++)
		views[i] = (struct ber_view){ (const uint8_t *)urls[i], strlen(urls[i]) };
	struct ldap_message m = { .message_id = ctx->op->message_id,
				  .op = ops_response_tag(ctx->op->tag),
				  .controls = (struct ldap_control *)controls,
				  .n_controls = n_controls };
	m.u.result = (struct ldap_result){ .code = LDAP_REFERRAL, .referrals = views,
					   .n_referrals = n };
	if (matched != NULL)
		m.u.result.matched_dn = (struct ber_view){ (const uint8_t *)matched,
							   strlen(matched) };
	op_mark(ctx, STATS_STAGE_ENTRIES);
	ldap_message_encode(ctx->out, &m);
	finish_op(ctx, LDAP_REFERRAL, NULL);
}

void op_send_extended(struct op_context *ctx, int code, const char *diagnostic,
		      const char *name, const struct ber_view *value)
{
	op_send_extended_controls(ctx, code, diagnostic, name, value, NULL, 0);
}

void op_send_extended_controls(struct op_context *ctx, int code, const char *diagnostic,
			       const char *name, const struct ber_view *value,
			       const struct ldap_control *controls, size_t n_controls)
{
	op_mark(ctx, STATS_STAGE_ENTRIES);
	ldap_encode_extended_result(ctx->out, ctx->op->message_id, code, diagnostic, name,
				    value, controls, n_controls);
	finish_op(ctx, code, diagnostic);
}

const char *op_log_string(struct op_context *ctx, struct ber_view v)
{
	char *out = arena_alloc(ctx->arena, v.len * 3 + 1);
	if (out == NULL)
		return "";
	size_t o = 0;
	for (size_t i = 0; i < v.len; i++) {
		uint8_t b = v.ptr[i];
		if (b >= 0x20 && b < 0x7f && b != '"' && b != '\\') {
			out[o++] = (char)b;
		} else {
			static const char hex[] = "0123456789ABCDEF";
			out[o++] = '\\';
			out[o++] = hex[b >> 4];
			out[o++] = hex[b & 15];
		}
	}
	out[o] = '\0';
	return out;
}

/*
 * The PDU does not decode: tell the client and close, as for bad framing;
 * a request over a limit or with an invalid field gets protocolError and
 * the connection stays (as slapd).
 */
static void reject_pdu(struct op_context *ctx, int rc, const char *diagnostic)
{
	const char *reason = diagnostic != NULL ? diagnostic : "malformed request";
	if ((rc == LUMEN_ELIMIT || rc == LUMEN_EINVAL) && ops_response_tag(ctx->op->tag) >= 0) {
		op_send_result(ctx, LDAP_PROTOCOL_ERROR, NULL, reason);
		return;
	}
	conn_abort(ctx->conn, ctx->out, LDAP_PROTOCOL_ERROR,
		   rc == LUMEN_EUNSUPPORTED ? "unknown operation" : reason);
}

/* How run_op left an operation. */
enum run_outcome {
	RUN_ENDED,        /* answered (or dropped): conn_op_done */
	RUN_PAUSED,       /* paused (op->resume): park it (wait: until woken) */
	RUN_HANDED_OFF,   /* op_hand_off on an I/O thread: queue it for a worker */
};

static enum run_outcome run_op(struct op *op, struct worker_context *w, bool on_io_thread,
			       bool *wait)
{
	struct ldap_message msg;
	const char *diagnostic = NULL;
	struct op_context ctx = {
		.server = w->server, .conn = op->conn, .op = op, .msg = &msg,
		.arena = &w->arena, .out = &w->writer, .scratch = &w->scratch,
		.stats = w->stats, .on_io_thread = on_io_thread,
		/* a resumed search goes on counting where it stopped */
		.n_entries = op->resume.active ? op->resume_entries : 0,
	};
	clock_gettime(CLOCK_MONOTONIC, &ctx.started_at);
	if (op->resume.active) {
		/* One operation over all its runs: the time it was parked (and
		 * requeued) went to the client draining its output. */
		ctx.timing = op->resume_timing;
		op_mark(&ctx, STATS_STAGE_SEND);
	} else {
		op_timing_start(&ctx.timing, stats_timespec_ns(&op->queued_at));
		op_mark(&ctx, STATS_STAGE_QUEUE);
	}
	arena_reset(&w->arena);
	ber_writer_reset(&w->writer);
	int rc = ldap_message_decode(op->pdu, op->pdu_len, &w->arena, &w->server->limits,
				     &msg, &diagnostic);
	op_mark(&ctx, STATS_STAGE_DECODE);
	const struct op_handler *h = find_handler(op->tag);
	if (rc == LUMEN_OK && h == NULL)
		rc = LUMEN_EUNSUPPORTED;   /* a response or unknown op from a client */
	if (rc != LUMEN_OK) {
		reject_pdu(&ctx, rc, diagnostic);
		record_op(&ctx, LDAP_PROTOCOL_ERROR);
		return RUN_ENDED;
	}
	ctx.log_name = h->log_name;
	h->run(&ctx);
	*wait = ctx.waiting;
	if (ctx.hand_off)
		return RUN_HANDED_OFF;
	if (ctx.paused)
		return RUN_PAUSED;
	/* Ended without a result (abandoned or cancelled while it ran): still
	 * completed. */
	op_mark(&ctx, STATS_STAGE_ENTRIES);
	record_op(&ctx, conn_op_canceled(op->conn, op) ? LDAP_CANCELED : LDAP_OTHER);
	return RUN_ENDED;
}

bool op_hand_off(struct op_context *ctx)
{
	if (!ctx->on_io_thread)
		return false;
	ctx->hand_off = true;
	ctx->op->handed_off = true;
	return true;
}

uint64_t op_search_budget(const struct op_context *ctx)
{
	return ctx->on_io_thread ? INLINE_SEARCH_BUDGET : 0;
}

void ops_run_job(struct workq_job *job, void *worker_context)
{
	struct op *op = (struct op *)job;
	struct conn *c = op->conn;
	/* A new search whose client has not read what waits would only pause
	 * after its first batch: park it before it starts. */
	bool wait = false;
	enum conn_op_start start = conn_op_begin(c, op, op->tag == LDAP_OP_SEARCH_REQUEST);
	if (start == CONN_OP_PARK ||
	    (start == CONN_OP_RUN && run_op(op, worker_context, false, &wait) == RUN_PAUSED))
		conn_park_op(c, op, wait);
	else
		conn_op_done(c, op);
}

void ops_run_inline(struct op *op, struct worker_context *io_context)
{
	struct conn *c = op->conn;
	bool wait = false;
	/* Nothing else of this connection is outstanding, so its output is
	 * below the pause mark (the connection would not be read otherwise). */
	enum conn_op_start start = conn_op_begin(c, op, false);
	enum run_outcome outcome = start == CONN_OP_RUN ? run_op(op, io_context, true, &wait)
							: RUN_ENDED;
	stats_count_dispatch(io_context->stats, outcome == RUN_ENDED ? STATS_RUN_INLINE
								    : STATS_RUN_DEFERRED);
	if (outcome == RUN_HANDED_OFF)
		conn_hand_off_op(c, op);
	else if (outcome == RUN_PAUSED)
		conn_park_op(c, op, wait);   /* a worker goes on from the pause */
	else
		conn_op_done(c, op);
}
