/*
 * server_observe.c — the server's side of observability: database figures
 * for /metrics and cn=Monitor, and the /metrics listener's start-up.
 */
#include <stdio.h>
#include <string.h>

#include "database.h"
#include "config.h"
#include "lumen_error.h"
#include "metrics_http.h"
#include "rootdse.h"
#include "server.h"
#include "stats.h"

/* One database's figures; the storage part is left out if it cannot be read. */
static void gather_one(const struct server_database *db, struct database_figures *out)
{
	memset(out, 0, sizeof(*out));
	out->suffix = db->config->n_suffixes > 0 ? db->config->suffixes[0] : "";
	out->directory = db->config->directory != NULL ? db->config->directory : "";
	if (db->database != NULL)
		database_figures(db->database, out);
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
