/*
 * monitor_gather.c — the source of cn=Monitor's in-memory database
 * (own_databases.h): on every operation, gather what the tree publishes (a
 * statistics snapshot, the open connections, listeners, threads, database
 * figures) and let monitor_build hand the entries within the scope to the
 * operation's walk (memdb.h), which applies the filter, the limits and
 * paging; the server's search path applies attribute selection and the
 * global `access` rules as for any entry.
 *
 * Everything gathered lives in the operation's arena. Connections are
 * copied under their I/O thread's lock (the list) and their own lock (the
 * fields), in that order, so the snapshot never points into a connection
 * that may close meanwhile.
 */
#include <string.h>

#include "config.h"
#include "conn.h"
#include "io_thread.h"
#include "lumen_error.h"
#include "memdb.h"
#include "monitor.h"
#include "ops.h"
#include "own_databases.h"
#include "rootdse.h"
#include "server.h"
#include "stats.h"
#include "workq.h"

/* Running ops, connections waiting to read / to write, summed over conns. */
struct conn_totals {
	unsigned active;
	uint64_t waiting_read, waiting_write;
};

/* Copy one connection; LUMEN_ENOTFOUND when it is closed. LUMEN_ENOMEM. */
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
static int gather(struct server *s, struct arena *arena, struct monitor_sources *src)
{
	struct conn_totals totals = { 0 };
	struct stats_snapshot *snapshot = arena_alloc(arena, sizeof(*snapshot));
	if (snapshot == NULL)
		return LUMEN_ENOMEM;
	stats_snapshot(s->stats, snapshot);
	*src = (struct monitor_sources){
		.schema = s->config->schema, .stats = snapshot,
		.version = LUMEN_VENDOR_NAME " " LUMEN_VENDOR_VERSION,
	};
	int rc = gather_connections(s, arena, src, &totals);
	if (rc == LUMEN_OK)
		rc = gather_listeners(s, arena, src);
	if (rc == LUMEN_OK)
		rc = gather_databases(s, arena, src);
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

/* monitor_build's callback: the entry goes to the operation's walk. */
static int emit_entry(void *walk, const struct entry *e)
{
	return memdb_emit(walk, e);
}

int monitor_source_build(void *server, struct memdb_walk *walk)
{
	struct monitor_sources src;
	int rc = gather(server, walk->arena, &src);
	if (rc == LUMEN_OK)
		rc = monitor_build(&src, walk->base_ndn, walk->scope, emit_entry, walk);
	return rc;
}
