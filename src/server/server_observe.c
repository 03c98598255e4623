/*
 * server_observe.c — the server's side of observability: database figures
 * for /metrics and cn=Monitor, and the /metrics listener's start-up.
 */
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "config.h"
#include "lumen_error.h"
#include "metrics_http.h"
#include "rootdse.h"
#include "server.h"
#include "stats.h"

static void cache_figures(struct cache_figures *out, uint64_t size, uint64_t capacity,
			  uint64_t hits, uint64_t misses, uint64_t evictions)
{
	*out = (struct cache_figures){ size, capacity, hits, misses, evictions };
}

/* One database's figures; the LMDB part is left out if it cannot be read. */
static void gather_one(const struct server_database *db, struct database_figures *out)
{
	struct backend_stats bs;
	memset(out, 0, sizeof(*out));
	out->suffix = db->config->n_suffixes > 0 ? db->config->suffixes[0] : "";
	out->directory = db->config->directory != NULL ? db->config->directory : "";
	if (db->backend == NULL)
		return;
	if (stats_store_figures(backend_store(db->backend), out) != LUMEN_OK)
		out->have_store = false;
	backend_get_stats(db->backend, &bs);
	cache_figures(&out->entry_cache, bs.entry_cache_size, bs.entry_cache_capacity,
		      bs.entry_cache_hits, bs.entry_cache_misses, bs.entry_cache_evictions);
	cache_figures(&out->idl_cache, bs.idl_cache_size, bs.idl_cache_capacity,
		      bs.idl_cache_hits, bs.idl_cache_misses, bs.idl_cache_evictions);
}

size_t server_gather_databases(void *server, struct database_figures *out, size_t max)
{
	const struct server *s = server;
	for (size_t i = 0; i < s->n_databases && i < max; i++)
		gather_one(&s->databases[i], &out[i]);
	return s->n_databases;
}

int server_metrics_start(struct server *s, char *err, size_t errlen)
{
	const struct config *cfg = s->config;
	if (cfg->metrics_address == NULL)
		return LUMEN_OK;
	struct metrics_http_options options = {
		.address = cfg->metrics_address,
		.port = (uint16_t)cfg->metrics_port,
		.stats = s->stats,
		.databases = { server_gather_databases, s },
		.version = LUMEN_VENDOR_VERSION,
		.max_connections = cfg->metrics_max_connections,
		.timeout_seconds = cfg->metrics_timeout,
		.memory = &s->conn_memory,
	};
	char why[512] = "";
	int rc = metrics_http_start(&options, &s->metrics, why, sizeof(why));
	if (rc != LUMEN_OK)
		snprintf(err, errlen, "%s: metrics-listen: %s", cfg->path, why);
	return rc;
}
