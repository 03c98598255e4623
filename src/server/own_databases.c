/*
 * own_databases.c — the root DSE, cn=Subschema and cn=Monitor as
 * in-memory databases (own_databases.h).
 */
#include "own_databases.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access_rules.h"
#include "config.h"
#include "dn.h"
#include "lumen_error.h"
#include "monitor.h"
#include "rootdse.h"
#include "server.h"
#include "subschema.h"

/* No rules, no limits lines, no rootdn: the global ones decide. */
static const struct config_database own_config = { .origin = "(built in)" };

/* cn=Subschema: one immutable entry built at start-up, with no children. */
static int subschema_source_build(void *server, struct memdb_walk *walk)
{
	const struct server *s = server;
	struct ber_view ndn = s->subschema->ndn;
	if (walk->base_ndn.len != ndn.len || memcmp(walk->base_ndn.ptr, ndn.ptr, ndn.len) != 0)
		return LUMEN_ENOTFOUND;
	return memdb_emit(walk, s->subschema);
}

struct own_spec {
	const struct ber_view *ndn;     /* the suffix, normalized (static) */
	struct memdb_source source;
	bool frontend;
};

static const struct ber_view rootdse_ndn = { (const uint8_t *)"", 0 };
static const struct ber_view subschema_ndn = { (const uint8_t *)"cn=subschema", 12 };
static const struct ber_view monitor_ndn = { (const uint8_t *)"cn=monitor", 10 };

/* Access rules in database sections only: nothing global speaks for cn=Monitor. */
static bool monitor_needs_closing(const struct server *s)
{
	if (s->config->access.n_rules > 0)
		return false;
	for (size_t i = 0; i < s->n_databases; i++)
		if (s->databases[i].config->access.n_rules > 0)
			return true;
	return false;
}

/* cn=Monitor's own `access to * by * none` (own_databases.h, Caveats). */
static int close_monitor(struct server *s, struct server_database *monitor, char *err,
			 size_t errlen)
{
	char words[6][8] = { "access", "to", "*", "by", "*", "none" };
	char *argv[6];
	for (size_t i = 0; i < 6; i++)
		argv[i] = words[i];
	struct config_database *c = calloc(1, sizeof(*c));
	if (c == NULL) {
		snprintf(err, errlen, "out of memory");
		return LUMEN_ENOMEM;
	}
	c->origin = (char *)"(built in: cn=Monitor without global access rules)";
	s->monitor_closed = c;
	int rc = access_rule_parse(&c->access, 6, argv, c->origin, 0, err, errlen);
	if (rc == LUMEN_OK)
		rc = access_rules_compile(&c->access, s->config->schema, err, errlen);
	if (rc == LUMEN_OK)
		monitor->config = c;
	return rc;
}

static int open_one(struct server *s, const struct own_spec *spec, struct server_database *db)
{
	memset(db, 0, sizeof(*db));
	db->config = &own_config;
	db->suffixes = (struct ber_view *)spec->ndn;
	db->n_suffixes = 1;
	db->size_limit = s->config->sizelimit;
	db->time_limit = s->config->timelimit;
	db->lock.fd = -1;
	db->frontend = spec->frontend;
	db->read_only = true;
	return memdb_open(s->config->schema, &spec->source, &db->database);
}

int own_databases_open(struct server *s, char *err, size_t errlen)
{
	const struct own_spec specs[] = {
		{ &rootdse_ndn, { "", rootdse_build, s->rootdse, true, false }, true },
		{ &subschema_ndn, { SUBSCHEMA_DN, subschema_source_build, s, false, true }, true },
		{ &monitor_ndn, { MONITOR_DN, monitor_source_build, s, false, false }, false },
	};
	size_t n = sizeof(specs) / sizeof(specs[0]);
	s->own = calloc(n, sizeof(*s->own));
	if (s->own == NULL) {
		snprintf(err, errlen, "out of memory");
		return LUMEN_ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		int rc = open_one(s, &specs[i], &s->own[i]);
		if (rc != LUMEN_OK) {
			snprintf(err, errlen, "cannot open the %s database: %s",
				 specs[i].source.suffix, lumen_strerror(rc));
			return rc;
		}
		s->n_own++;
	}
	if (monitor_needs_closing(s))
		return close_monitor(s, &s->own[n - 1], err, errlen);
	return LUMEN_OK;
}

void own_databases_close(struct server *s)
{
	for (size_t i = 0; s->own != NULL && i < s->n_own; i++)
		database_close(s->own[i].database);
	free(s->own);
	s->own = NULL;
	s->n_own = 0;
	if (s->monitor_closed != NULL)
		access_rules_free(&s->monitor_closed->access);
	free(s->monitor_closed);
	s->monitor_closed = NULL;
}

const struct server_database *own_databases_find(const struct server *s, struct ber_view ndn)
{
	for (size_t i = 0; i < s->n_own; i++) {
		struct ber_view suffix = s->own[i].suffixes[0];
		bool holds = suffix.len == 0 ? ndn.len == 0 : dn_is_within(ndn, suffix);
		if (holds)
			return &s->own[i];
	}
	return NULL;
}
