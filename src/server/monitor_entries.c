/*
 * monitor_entries.c — one builder per branch of cn=Monitor (see monitor.h
 * for the layout). Each opens and closes its container, then builds the
 * children only when the search scope can reach them.
 */
#include <stdio.h>
#include <string.h>

#include "lumen_error.h"
#include "monitor_internal.h"

/* The first error wins; closing always frees the node's entry. */
static int finish(struct monitor_walk *w, struct monitor_node *node, int rc)
{
	int close_rc = monitor_node_close(w, node);
	return rc != LUMEN_OK ? rc : close_rc;
}

/* A leaf holding one number, e.g. cn=Total's monitorCounter. */
static int number_leaf(struct monitor_walk *w, const char *parent, const char *cn,
		       const char *object_class, const char *attribute, uint64_t value)
{
	struct monitor_node node;
	int rc = monitor_node_open(w, &node, parent, cn, object_class, false);
	monitor_node_number(&node, attribute, value);
	return finish(w, &node, rc);
}

/*
 * Emit the container cn=CN,PARENT. *descend says whether its children can
 * be in scope; node->dn stays valid as their parent.
 */
static int container(struct monitor_walk *w, const char *parent, const char *cn,
		     struct monitor_node *node, bool *descend)
{
	int rc = monitor_node_open(w, node, parent, cn, "monitorContainer", true);
	*descend = rc == LUMEN_OK && node->descend;
	return finish(w, node, rc);
}

/* ------------------------------------------------------------ connections */

static int connection_entry(struct monitor_walk *w, const char *parent,
			    const struct monitor_connection *c)
{
	struct monitor_node node;
	char cn[48];
	snprintf(cn, sizeof(cn), "Connection %llu", (unsigned long long)c->id);
	int rc = monitor_node_open(w, &node, parent, cn, "monitorConnection", false);
	monitor_node_number(&node, "monitorConnectionNumber", c->id);
	monitor_node_text(&node, "monitorConnectionProtocol", "3");
	monitor_node_number(&node, "monitorConnectionOpsReceived", c->ops_received);
	monitor_node_number(&node, "monitorConnectionOpsExecuting", c->ops_executing);
	monitor_node_number(&node, "monitorConnectionOpsPending", c->ops_pending);
	monitor_node_number(&node, "monitorConnectionOpsCompleted", c->ops_completed);
	monitor_node_number(&node, "monitorConnectionMemory", c->memory);
	if (c->bind_dn != NULL && c->bind_dn[0] != '\0')
		monitor_node_text(&node, "monitorConnectionAuthzDN", c->bind_dn);
	monitor_node_text(&node, "monitorConnectionListener", c->local);
	monitor_node_text(&node, "monitorConnectionLocalAddress", c->local);
	monitor_node_text(&node, "monitorConnectionPeerAddress", c->peer);
	if (c->started != 0)
		monitor_node_time(&node, "monitorConnectionStartTime", c->started);
	if (c->last_activity != 0)
		monitor_node_time(&node, "monitorConnectionActivityTime", c->last_activity);
	return finish(w, &node, rc);
}

/* Lumen's leaves: the bytes all connections hold, by kind (conn_memory.h),
 * with the I/O threads' scratch buffers, their peak, the bound (conn_total_memory, 0 = none), how often a
 * connection waited for room, was woken by released memory or was refused
 * (a StartTLS refused or a handshake stopped: TLS Refused),
 * and how many wait now. */
static int connection_memory(struct monitor_walk *w, const char *parent,
			     const struct conn_memory_figures *m)
{
	const struct {
		const char *rdn;
		uint64_t value;
	} leaves[] = {
		{ "Memory", m->total },
		{ "Memory Base", m->base },
		{ "Memory Queued", m->queued },
		{ "Memory Output", m->output },
		{ "Memory TLS", m->tls },
		{ "Memory Scratch", m->scratch },
		{ "Memory Peak", m->peak },
		{ "Memory Limit", m->max_total },
		{ "Memory Waits", m->waits },
		{ "Memory Waiting", m->waiting },
		{ "Memory Wakeups", m->wakeups },
		{ "Memory Refused", m->refused },
		{ "Memory TLS Refused", m->tls_refused },
	};
	int rc = LUMEN_OK;
	for (size_t i = 0; rc == LUMEN_OK && i < sizeof(leaves) / sizeof(leaves[0]); i++)
		rc = number_leaf(w, parent, leaves[i].rdn, "monitorCounterObject",
				 "monitorCounter", leaves[i].value);
	return rc;
}

int monitor_build_connections(struct monitor_walk *w, const char *parent)
{
	struct monitor_node node;
	bool descend;
	const struct stats_snapshot *s = w->src->stats;
	int rc = container(w, parent, "Connections", &node, &descend);
	if (rc != LUMEN_OK || !descend)
		return rc;
	rc = number_leaf(w, node.dn, "Total", "monitorCounterObject", "monitorCounter",
			 s->connections_total);
	if (rc == LUMEN_OK)
		rc = number_leaf(w, node.dn, "Current", "monitorCounterObject", "monitorCounter",
				 s->connections_current);
	rc = rc != LUMEN_OK ? rc : connection_memory(w, node.dn, &w->src->conn_memory);
	for (size_t i = 0; rc == LUMEN_OK && i < w->src->n_connections; i++)
		rc = connection_entry(w, node.dn, &w->src->connections[i]);
	return rc;
}

/* ------------------------------------------------------------- operations */

/* OpenLDAP's order of cn=Operations children. */
static const enum stats_op_type operation_order[] = {
	STATS_OP_BIND,   STATS_OP_UNBIND, STATS_OP_SEARCH, STATS_OP_COMPARE,
	STATS_OP_MODIFY, STATS_OP_MODRDN, STATS_OP_ADD,    STATS_OP_DELETE,
	STATS_OP_ABANDON, STATS_OP_EXTENDED,
};

int monitor_build_operations(struct monitor_walk *w, const char *parent)
{
	struct monitor_node node;
	const struct stats_snapshot *s = w->src->stats;
	uint64_t initiated = 0, completed = 0;
	for (size_t t = 0; t < STATS_OP_COUNT; t++) {
		initiated += s->initiated[t];
		completed += s->completed[t];
	}
	int rc = monitor_node_open(w, &node, parent, "Operations", "monitorContainer", true);
	monitor_node_number(&node, "monitorOpInitiated", initiated);
	monitor_node_number(&node, "monitorOpCompleted", completed);
	bool descend = rc == LUMEN_OK && node.descend;
	rc = finish(w, &node, rc);
	size_t n = sizeof(operation_order) / sizeof(operation_order[0]);
	for (size_t i = 0; rc == LUMEN_OK && descend && i < n; i++) {
		struct monitor_node op;
		enum stats_op_type type = operation_order[i];
		rc = monitor_node_open(w, &op, node.dn, stats_op_type_title(type),
				       "monitorOperation", false);
		monitor_node_number(&op, "monitorOpInitiated", s->initiated[type]);
		monitor_node_number(&op, "monitorOpCompleted", s->completed[type]);
		rc = finish(w, &op, rc);
	}
	return rc;
}

/* ------------------------------------------------------------- statistics */

int monitor_build_statistics(struct monitor_walk *w, const char *parent)
{
	struct monitor_node node;
	bool descend;
	const struct stats_snapshot *s = w->src->stats;
	int rc = container(w, parent, "Statistics", &node, &descend);
	const struct {
		const char *cn;
		uint64_t value;
	} leaves[] = {
		{ "Bytes", s->bytes_sent },
		{ "PDU", s->pdus_sent },
		{ "Entries", s->entries_sent },
		{ "Referrals", s->referrals_sent },
	};
	for (size_t i = 0; rc == LUMEN_OK && descend && i < sizeof(leaves) / sizeof(leaves[0]); i++)
		rc = number_leaf(w, node.dn, leaves[i].cn, "monitorCounterObject", "monitorCounter",
				 leaves[i].value);
	return rc;
}

/* ---------------------------------------------------------------- threads */

int monitor_build_threads(struct monitor_walk *w, const char *parent)
{
	struct monitor_node node;
	bool descend;
	const struct monitor_threads *t = &w->src->threads;
	int rc = container(w, parent, "Threads", &node, &descend);
	const struct {
		const char *cn;
		unsigned value;
	} leaves[] = {
		{ "Max", t->max },
		{ "Open", t->open },
		{ "Active", t->active },
		{ "Pending", t->pending },
		{ "Backload", t->backload },
	};
	/* Where operations ran (inline_ops.h): to the end on an I/O thread,
	 * started there and continued on a worker, or queued at once. */
	const struct {
		const char *cn;
		uint64_t value;
	} runs[] = {
		{ "Inline", w->src->stats->dispatched[STATS_RUN_INLINE] },
		{ "Deferred", w->src->stats->dispatched[STATS_RUN_DEFERRED] },
		{ "Queued", w->src->stats->dispatched[STATS_RUN_QUEUED] },
		/* Input an I/O thread found while it polled instead of sleeping
		 * (io_thread.c): wake-ups saved. */
		{ "Polled", w->src->stats->polled_reads },
	};
	for (size_t i = 0; rc == LUMEN_OK && descend && i < sizeof(leaves) / sizeof(leaves[0]); i++)
		rc = number_leaf(w, node.dn, leaves[i].cn, "monitoredObject", "monitoredInfo",
				 leaves[i].value);
	for (size_t i = 0; rc == LUMEN_OK && descend && i < sizeof(runs) / sizeof(runs[0]); i++)
		rc = number_leaf(w, node.dn, runs[i].cn, "monitorCounterObject", "monitorCounter",
				 runs[i].value);
	return rc;
}

/* ------------------------------------------------------------------- time */

int monitor_build_time(struct monitor_walk *w, const char *parent)
{
	struct monitor_node node, leaf;
	bool descend;
	time_t start = w->src->stats->start_time;
	int rc = container(w, parent, "Time", &node, &descend);
	if (rc != LUMEN_OK || !descend)
		return rc;
	rc = monitor_node_open(w, &leaf, node.dn, "Start", "monitoredObject", false);
	monitor_node_time(&leaf, "monitorTimestamp", start);
	rc = finish(w, &leaf, rc);
	if (rc != LUMEN_OK)
		return rc;
	rc = monitor_node_open(w, &leaf, node.dn, "Current", "monitoredObject", false);
	monitor_node_time(&leaf, "monitorTimestamp", w->now);
	rc = finish(w, &leaf, rc);
	if (rc != LUMEN_OK)
		return rc;
	/* A clock stepped back before the start must not read as centuries. */
	uint64_t uptime = w->now > start ? (uint64_t)(w->now - start) : 0;
	return number_leaf(w, node.dn, "Uptime", "monitoredObject", "monitoredInfo", uptime);
}

/* ---------------------------------------------------------------- waiters */

int monitor_build_waiters(struct monitor_walk *w, const char *parent)
{
	struct monitor_node node;
	bool descend;
	int rc = container(w, parent, "Waiters", &node, &descend);
	if (rc != LUMEN_OK || !descend)
		return rc;
	rc = number_leaf(w, node.dn, "Read", "monitorCounterObject", "monitorCounter",
			 w->src->waiters_read);
	if (rc == LUMEN_OK)
		rc = number_leaf(w, node.dn, "Write", "monitorCounterObject", "monitorCounter",
				 w->src->waiters_write);
	return rc;
}

/* -------------------------------------------------------------- listeners */

int monitor_build_listeners(struct monitor_walk *w, const char *parent)
{
	struct monitor_node node;
	bool descend;
	int rc = container(w, parent, "Listeners", &node, &descend);
	for (size_t i = 0; rc == LUMEN_OK && descend && i < w->src->n_listeners; i++) {
		const struct monitor_listener *l = &w->src->listeners[i];
		struct monitor_node leaf;
		char cn[32];
		snprintf(cn, sizeof(cn), "Listener %zu", i);
		rc = monitor_node_open(w, &leaf, node.dn, cn, "monitoredObject", false);
		monitor_node_text(&leaf, "monitorConnectionLocalAddress", l->address);
		monitor_node_text(&leaf, "labeledURI", l->url);
		rc = finish(w, &leaf, rc);
	}
	return rc;
}

/* -------------------------------------------------------------- databases */

static void cache_text(struct monitor_node *node, const char *prefix,
		       const struct cache_figures *c)
{
	monitor_node_printf(node, "monitoredInfo", "%sSize=%llu", prefix,
			    (unsigned long long)c->size);
	monitor_node_printf(node, "monitoredInfo", "%sCapacity=%llu", prefix,
			    (unsigned long long)c->capacity);
	monitor_node_printf(node, "monitoredInfo", "%sHits=%llu", prefix,
			    (unsigned long long)c->hits);
	monitor_node_printf(node, "monitoredInfo", "%sMisses=%llu", prefix,
			    (unsigned long long)c->misses);
	monitor_node_printf(node, "monitoredInfo", "%sEvictions=%llu", prefix,
			    (unsigned long long)c->evictions);
	monitor_node_printf(node, "monitoredInfo", "%sNotAdmitted=%llu", prefix,
			    (unsigned long long)c->not_admitted);
}

static void database_figures_text(struct monitor_node *node, const struct database_figures *d)
{
	if (d->have_store) {
		monitor_node_printf(node, "monitoredInfo", "mapSize=%llu",
				    (unsigned long long)d->map_size);
		monitor_node_printf(node, "monitoredInfo", "pageSize=%llu",
				    (unsigned long long)d->page_size);
		monitor_node_printf(node, "monitoredInfo", "pagesUsed=%llu",
				    (unsigned long long)d->pages_used);
		monitor_node_printf(node, "monitoredInfo", "readersUsed=%llu",
				    (unsigned long long)d->readers_used);
		monitor_node_printf(node, "monitoredInfo", "readersMax=%llu",
				    (unsigned long long)d->readers_max);
		monitor_node_printf(node, "monitoredInfo", "entries=%llu",
				    (unsigned long long)d->entries);
	}
	cache_text(node, "entryCache", &d->entry_cache);
	monitor_node_printf(node, "monitoredInfo", "entryPartialReads=%llu",
			    (unsigned long long)d->partial_reads);
	cache_text(node, "idlCache", &d->idl_cache);
	monitor_node_printf(node, "monitoredInfo", "writes=%llu", (unsigned long long)d->writes);
	monitor_node_printf(node, "monitoredInfo", "commits=%llu", (unsigned long long)d->commits);
}

int monitor_build_databases(struct monitor_walk *w, const char *parent)
{
	struct monitor_node node;
	bool descend;
	int rc = container(w, parent, "Databases", &node, &descend);
	for (size_t i = 0; rc == LUMEN_OK && descend && i < w->src->n_databases; i++) {
		const struct database_figures *d = &w->src->databases[i];
		bool read_only = w->src->database_read_only != NULL && w->src->database_read_only[i];
		struct monitor_node db;
		char cn[32];
		snprintf(cn, sizeof(cn), "Database %zu", i + 1);
		rc = monitor_node_open(w, &db, node.dn, cn, "monitoredObject", false);
		monitor_node_text(&db, "monitoredInfo", "mdb");
		if (d->suffix != NULL && d->suffix[0] != '\0')
			monitor_node_text(&db, "namingContexts", d->suffix);
		if (d->directory != NULL)
			monitor_node_printf(&db, "monitoredInfo", "directory=%s", d->directory);
		database_figures_text(&db, d);
		monitor_node_text(&db, "readOnly", read_only ? "TRUE" : "FALSE");
		monitor_node_text(&db, "monitorIsShadow", "FALSE");
		rc = finish(w, &db, rc);
	}
	return rc;
}
