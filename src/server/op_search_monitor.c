/*
 * op_search_monitor.c — searches of cn=Monitor: gather what the tree
 * publishes (a statistics snapshot, the open connections, listeners,
 * threads, database figures), let monitor_build make the entries within
 * the scope, and send those that match the filter, with the requested
 * attributes, up to the size limit.
 *
 * Everything gathered lives in the operation's arena. Connections are
 * copied under their I/O thread's lock (the list) and their own lock
 * (conn_get_info), in that order, so the snapshot never points into a
 * connection that may close meanwhile.
 *
 * Access: cn=Monitor belongs to no database, so the global `access` rules
 * decide (access_search of access_glue.h with no database), as for an
 * ordinary entry: search on an entry to let it match, the filter-oracle
 * rule (an item on an attribute without `search` is Undefined), read on
 * the entry to return it, read on each attribute returned (so
 * `attrs=monitorConnectionAuthzDN,monitorConnectionPeerAddress by * none`
 * hides who is connected from where). Without global rules everyone may
 * read it, as with slapd's default policy; restrict it with e.g.
 * `access to dn.subtree="cn=Monitor" by dn.exact="..." read by * none`.
 * The rootdn of a database is not root here (as slapd's frontend).
 */
#include <string.h>

#include "access_glue.h"
#include "acl.h"
#include "config.h"
#include "conn.h"
#include "dn.h"
#include "entry_send.h"
#include "filter.h"
#include "io_thread.h"
#include "ldap_result_codes.h"
#include "lumen_error.h"
#include "monitor.h"
#include "ops.h"
#include "rootdse.h"
#include "server.h"
#include "stats.h"
#include "workq.h"

/* MONITOR_DN normalized (dn_normalize lower-cases cn values). */
static const char monitor_ndn[] = "cn=monitor";

bool op_is_monitor_dn(struct ber_view ndn)
{
	struct ber_view root = { (const uint8_t *)monitor_ndn, sizeof(monitor_ndn) - 1 };
	return dn_is_within(ndn, root);
}

/* Running ops, connections waiting to read / to write, summed over conns. */
struct conn_totals {
	unsigned active;
	uint64_t waiting_read, waiting_write;
};

/* Copy one connection; LUMEN_NOTFOUND when it is closed. LUMEN_ENOMEM. */
static int copy_connection(struct conn *c, struct arena *arena, struct monitor_connection *out,
			   struct conn_totals *totals)
{
	struct conn_info info;
	int rc = conn_get_info(c, arena, &info);
	if (rc != LUMEN_OK)
		return rc;
	*out = (struct monitor_connection){
		.id = info.id,
		.peer = info.peer,
		.local = info.local,
		.bind_dn = info.authz_dn,
		.ops_received = info.ops_received,
		.ops_executing = info.ops_executing,
		.ops_pending = info.ops_outstanding - info.ops_executing,
		.ops_completed = info.ops_received - info.ops_outstanding,
		.memory = info.memory,
		.started = info.started,
		.last_activity = info.last_activity,
	};
	totals->active += info.ops_executing;
	totals->waiting_read += info.reading;
	totals->waiting_write += info.writing;
	return LUMEN_OK;
}

/* Append io's open connections to out[*n..] (room for `room` more). */
static int copy_io_connections(struct io_thread *io, struct arena *arena,
			       struct monitor_connection **out, size_t *n,
			       struct conn_totals *totals)
{
	int rc = LUMEN_OK;
	pthread_mutex_lock(&io->lock);
	struct monitor_connection *grown = arena_calloc(arena, *n + io->n_conns + 1, sizeof(*grown));
	if (grown == NULL) {
		rc = LUMEN_ENOMEM;
		goto done;
	}
	if (*n > 0)
		memcpy(grown, *out, *n * sizeof(*grown));
	*out = grown;
	for (struct conn *c = io->conns; c != NULL && rc == LUMEN_OK; c = conn_list_next(c)) {
		rc = copy_connection(c, arena, &grown[*n], totals);
		if (rc == LUMEN_OK)
			(*n)++;
		else if (rc == LUMEN_ENOTFOUND)
			rc = LUMEN_OK;      /* closed meanwhile */
	}
done:
	pthread_mutex_unlock(&io->lock);
	return rc;
}

static int gather_connections(struct server *s, struct arena *arena, struct monitor_sources *src,
			      struct conn_totals *totals)
{
	struct monitor_connection *list = NULL;
	size_t n = 0;
	for (unsigned i = 0; i < s->n_io_threads; i++) {
		int rc = copy_io_connections(&s->io_threads[i], arena, &list, &n, totals);
		if (rc != LUMEN_OK)
			return rc;
	}
	src->connections = list;
	src->n_connections = n;
	return LUMEN_OK;
}

static int gather_listeners(const struct server *s, struct arena *arena,
			    struct monitor_sources *src)
{
	struct monitor_listener *list = arena_calloc(arena, s->n_listener_info + 1, sizeof(*list));
	if (list == NULL)
		return LUMEN_ENOMEM;
	for (size_t i = 0; i < s->n_listener_info; i++)
		list[i].address = s->listener_info[i].name;
	src->listeners = list;
	src->n_listeners = s->n_listener_info;
	return LUMEN_OK;
}

static int gather_databases(struct server *s, struct arena *arena, struct monitor_sources *src)
{
	struct database_figures *figures =
		arena_calloc(arena, s->n_databases + 1, sizeof(*figures));
	if (figures == NULL)
		return LUMEN_ENOMEM;
	src->n_databases = server_gather_databases(s, figures, s->n_databases);
	src->databases = figures;
	return LUMEN_OK;
}

/* Everything monitor_build reads, in the arena. */
static int gather(struct op_context *ctx, struct monitor_sources *src)
{
	struct server *s = ctx->server;
	struct conn_totals totals = { 0 };
	struct stats_snapshot *snapshot = arena_alloc(ctx->arena, sizeof(*snapshot));
	if (snapshot == NULL)
		return LUMEN_ENOMEM;
	stats_snapshot(s->stats, snapshot);
	*src = (struct monitor_sources){
		.schema = s->config->schema, .stats = snapshot,
		.version = LUMEN_VENDOR_NAME " " LUMEN_VENDOR_VERSION,
	};
	int rc = gather_connections(s, ctx->arena, src, &totals);
	if (rc == LUMEN_OK)
		rc = gather_listeners(s, ctx->arena, src);
	if (rc == LUMEN_OK)
		rc = gather_databases(s, ctx->arena, src);
	unsigned pending = s->workq != NULL ? (unsigned)workq_length(s->workq) : 0;
	src->threads = (struct monitor_threads){
		.max = s->config->threads, .open = s->config->threads, .active = totals.active,
		.pending = pending, .backload = totals.active + pending,
	};
	src->waiters_read = totals.waiting_read;
	src->waiters_write = totals.waiting_write;
	conn_memory_figures(&s->conn_memory, &src->conn_memory);
	return rc;
}

struct monitor_sink {
	struct op_context *ctx;
	struct filter filter;
	struct attribute_selection sel;
	long size_limit;                 /* 0: none */
	struct access_search access;     /* global rules, the requester */
};

/* May the requester see e as a search result (access.target then holds
 * the decision for the attributes)? */
static bool may_return(struct monitor_sink *sink, const struct entry *e)
{
	if (!sink->access.a.checks)
		return filter_evaluate(&sink->filter, e) == FILTER_TRUE;
	return access_search_test(&sink->access, &sink->filter, e);
}

static int send_monitor_entry(void *arg, const struct entry *e)
{
	struct monitor_sink *sink = arg;
	struct op_context *ctx = sink->ctx;
	if (!may_return(sink, e))
		return LUMEN_OK;
	if (sink->size_limit > 0 && ctx->n_entries >= (unsigned long)sink->size_limit)
		return LUMEN_ELIMIT;
	entry_send_message(&sink->sel, e, NULL, ctx->op->message_id, ctx->out);
	ctx->n_entries++;
	return ber_writer_error(ctx->out);
}

/* Compile the filter and the attribute selection; on failure answered. */
static bool prepare_sink(struct op_context *ctx, const struct ldap_search_request *req,
			 struct monitor_sink *sink)
{
	const struct ldap_decode_limits *l = &ctx->server->limits;
	struct filter_limits limits = { l->max_filter_depth, l->max_filter_nodes };
	const struct schema *schema = ctx->server->config->schema;
	struct ber_view requester;
	sink->ctx = ctx;
	sink->size_limit = op_combine_limit((long)req->size_limit, ctx->server->config->sizelimit);
	arena_init(&sink->access.scratch, 0);
	int rc = conn_identity(ctx->conn, ctx->arena, &requester);
	if (rc == LUMEN_OK)
		access_search_begin(&sink->access, ctx->server, NULL, requester, false,
				    &ctx->op->abandoned);
	if (rc == LUMEN_OK)
		rc = filter_compile(schema, req->filter, &limits, ctx->arena, &sink->filter);
	if (rc == LUMEN_OK)
		rc = attribute_selection_init(&sink->sel, schema, req->attributes,
					      req->n_attributes, req->types_only, ctx->arena);
	if (rc == LUMEN_OK && sink->access.a.checks) {
		sink->sel.may_read = access_search_may_read;
		sink->sel.may_read_arg = &sink->access;
	}
	if (rc == LUMEN_OK)
		return true;
	if (rc == LUMEN_ENOMEM)
		op_send_result(ctx, LDAP_OTHER, NULL, "out of memory");
	else
		op_send_result(ctx, LDAP_PROTOCOL_ERROR, NULL, "filter cannot be used");
	return false;
}

/* monitor_build's outcome as an LDAP result. */
static void answer(struct op_context *ctx, int rc, struct ber_view base_ndn)
{
	bool below = !op_is_monitor_dn(base_ndn) ||
		     base_ndn.len != sizeof(monitor_ndn) - 1;
	switch (rc) {
	case LUMEN_OK:
		op_send_result(ctx, LDAP_SUCCESS, NULL, NULL);
		break;
	case LUMEN_ENOTFOUND:
		op_send_result(ctx, LDAP_NO_SUCH_OBJECT, below ? MONITOR_DN : "", NULL);
		break;
	case LUMEN_ELIMIT:
		op_send_result(ctx, LDAP_SIZE_LIMIT_EXCEEDED, NULL, NULL);
		break;
	case LUMEN_EUNSUPPORTED:
		op_send_result(ctx, LDAP_UNWILLING_TO_PERFORM, NULL,
			       "cn=Monitor needs monitor.schema");
		break;
	default:
		op_send_result(ctx, LDAP_OTHER, NULL, lumen_strerror(rc));
		break;
	}
}

void op_search_monitor(struct op_context *ctx, struct ber_view base_ndn)
{
	const struct ldap_search_request *req = &ctx->msg->u.search;
	struct monitor_sink sink;
	struct monitor_sources src;
	if (!prepare_sink(ctx, req, &sink)) {
		access_search_end(&sink.access);
		return;
	}
	op_mark(ctx, STATS_STAGE_ACCESS);
	int rc = gather(ctx, &src);
	op_mark(ctx, STATS_STAGE_CANDIDATES);
	if (rc == LUMEN_OK)
		rc = monitor_build(&src, base_ndn, req->scope, send_monitor_entry, &sink);
	access_search_end(&sink.access);
	answer(ctx, rc, base_ndn);
}
