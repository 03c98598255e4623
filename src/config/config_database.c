/*
 * config_database.c — the database section of slapd.conf: `database mdb`
 * opens it, then suffix, rootdn/rootpw, directory, map and reader sizes,
 * dbnosync, indexes and cache sizes fill it in.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "array.h"
#include "config_internal.h"
#include "config_syncrepl.h"
#include "lumen_error.h"

static int apply_database(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	if (strcasecmp(argv[1], "mdb") != 0)
		return config_fail_at(st, LUMEN_EMALFORMED,
				      "database: expected \"mdb\" (the only backend), got \"%s\"",
				      argv[1]);
	struct config *cfg = st->cfg;
	struct config_database *db = ARRAY_PUSH(cfg->databases, cfg->n_databases);
	if (db == NULL)
		return LUMEN_ENOMEM;
	db->maxsize = CONFIG_DEFAULT_MAXSIZE;
	db->maxreaders = CONFIG_DEFAULT_MAXREADERS;
	db->sizelimit = CONFIG_LIMIT_INHERIT;
	db->timelimit = CONFIG_LIMIT_INHERIT;
	st->db = db;
	db->type = strdup("mdb");
	db->origin = config_origin(st);
	return db->type != NULL && db->origin != NULL ? LUMEN_OK : LUMEN_ENOMEM;
}

static int apply_suffix(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	return config_push_string(&st->db->suffixes, &st->db->n_suffixes, argv[1]);
}

static int apply_rootpw(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	if (argv[1][0] == '\0')
		return config_fail_at(st, LUMEN_EMALFORMED,
				      "rootpw: expected a non-empty password");
	return config_set_string(&st->db->rootpw, argv[1]);
}

static int apply_dbnosync(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	(void)argv;
	st->db->dbnosync = true;
	return LUMEN_OK;
}

static int apply_cachesize(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	uint64_t v = CONFIG_CACHE_OFF;
	/* "off": no cache at all (the cache experiment of the benchmarks) */
	int rc = strcasecmp(argv[1], "off") == 0
			 ? LUMEN_OK : config_number_arg(st, argv[0], argv[1], 0, SIZE_MAX >> 1, false, &v);
	if (rc != LUMEN_OK)
		return rc;
	if (strcasecmp(argv[0], "cachesize") == 0)
		st->db->cachesize = (size_t)v;
	else
		st->db->idlcachesize = (size_t)v;
	return LUMEN_OK;
}

static const struct {
	const char *name;
	unsigned kind;
} index_kinds[] = {
	{ "pres", INDEX_KIND_PRESENT },
	{ "eq", INDEX_KIND_EQUALITY },
	{ "sub", INDEX_KIND_SUBSTRING },
	{ "approx", INDEX_KIND_APPROX },
};

/* "pres,eq,sub" → bits; 0 if a word is unknown. */
static unsigned parse_index_kinds(char *list, const char **bad)
{
	unsigned kinds = 0;
	for (char *save = NULL, *word = strtok_r(list, ",", &save); word != NULL;
	     word = strtok_r(NULL, ",", &save)) {
		unsigned found = 0;
		for (size_t i = 0; i < sizeof(index_kinds) / sizeof(index_kinds[0]); i++)
			if (strcasecmp(word, index_kinds[i].name) == 0)
				found = index_kinds[i].kind;
		if (found == 0) {
			*bad = word;
			return 0;
		}
		kinds |= found;
	}
	return kinds;
}

static int apply_index(struct parse_state *st, size_t argc, char **argv)
{
	struct config_database *db = st->db;
	const char *bad = "";
	unsigned kinds = INDEX_KIND_EQUALITY;   /* slapd's default for a bare index */
	if (argc == 3) {
		kinds = parse_index_kinds(argv[2], &bad);
		if (kinds == 0)
			return config_fail_at(st, LUMEN_EMALFORMED,
					      "index: expected index kinds from pres,eq,sub,approx, got \"%s\"",
					      bad);
	}
	struct config_index *ix = ARRAY_PUSH(db->indexes, db->n_indexes);
	if (ix == NULL)
		return LUMEN_ENOMEM;
	ix->kinds = kinds;
	ix->origin = config_origin(st);
	if (ix->origin == NULL)
		return LUMEN_ENOMEM;
	for (char *save = NULL, *attr = strtok_r(argv[1], ",", &save); attr != NULL;
	     attr = strtok_r(NULL, ",", &save)) {
		int rc = config_push_string(&ix->attributes, &ix->n_attributes, attr);
		if (rc != LUMEN_OK)
			return rc;
	}
	if (ix->n_attributes == 0)
		return config_fail_at(st, LUMEN_EMALFORMED,
				      "index: expected a comma-separated attribute list");
	return LUMEN_OK;
}

static int apply_overlay(struct parse_state *st, size_t argc, char **argv)
{
	struct config_database *db = st->db;
	(void)argc;
	struct config_overlay *o = ARRAY_PUSH(db->overlays, db->n_overlays);
	if (o == NULL)
		return LUMEN_ENOMEM;
	o->name = strdup(argv[1]);
	o->origin = config_origin(st);
	return o->name != NULL && o->origin != NULL ? LUMEN_OK : LUMEN_ENOMEM;
}

int config_overlay_keep_line(struct parse_state *st, size_t argc, char **argv)
{
	struct config_overlay *o = &st->db->overlays[st->db->n_overlays - 1];
	struct config_overlay_line *line = ARRAY_PUSH(o->lines, o->n_lines);
	if (line == NULL)
		return LUMEN_ENOMEM;
	line->origin = config_origin(st);
	if (line->origin == NULL)
		return LUMEN_ENOMEM;
	for (size_t i = 0; i < argc; i++) {
		int rc = config_push_string(&line->words, &line->n_words, argv[i]);
		if (rc != LUMEN_OK)
			return rc;
	}
	return LUMEN_OK;
}

static int apply_syncrepl(struct parse_state *st, size_t argc, char **argv)
{
	struct config_database *db = st->db;
	char why[384] = "";
	struct config_syncrepl parsed;
	int rc = config_syncrepl_parse(argv + 1, argc - 1, &parsed, why, sizeof(why));
	if (rc != LUMEN_OK)
		return config_fail_at(st, rc, "syncrepl: %s", why);
	for (size_t i = 0; i < db->n_syncrepl; i++)
		if (db->syncrepl[i].rid == parsed.rid) {
			config_syncrepl_free(&parsed);
			return config_fail_at(st, LUMEN_EMALFORMED,
					      "syncrepl: rid=%03d is already used in this database "
					      "(%s)", db->syncrepl[i].rid, db->syncrepl[i].origin);
		}
	parsed.origin = config_origin(st);
	struct config_syncrepl *bigger =
		realloc(db->syncrepl, (db->n_syncrepl + 1) * sizeof(*bigger));
	if (parsed.origin == NULL || bigger == NULL) {
		config_syncrepl_free(&parsed);
		if (bigger != NULL)
			db->syncrepl = bigger;
		return LUMEN_ENOMEM;
	}
	db->syncrepl = bigger;
	bigger[db->n_syncrepl++] = parsed;
	return LUMEN_OK;
}

/* OpenLDAP: "<updateref> must appear after syncrepl or updatedn". */
static int apply_updateref(struct parse_state *st, size_t argc, char **argv)
{
	bool ldaps;
	unsigned port;
	char *host = NULL;
	(void)argc;
	if (st->db->n_syncrepl == 0)
		return config_fail_at(st, LUMEN_EMALFORMED,
				      "updateref: must appear after a syncrepl line (only a "
				      "replica refers writes elsewhere)");
	int rc = config_syncrepl_url(argv[1], &ldaps, &host, &port);
	free(host);
	if (rc == LUMEN_EMALFORMED)
		return config_fail_at(st, rc, "updateref: expected ldap://HOST[:PORT] or "
				      "ldaps://HOST[:PORT], got \"%s\"", argv[1]);
	if (rc != LUMEN_OK)
		return rc;
	return config_push_string(&st->db->updaterefs, &st->db->n_updaterefs, argv[1]);
}

static void free_overlays(struct config_overlay *overlays, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < overlays[i].n_lines; j++) {
			config_free_strings(overlays[i].lines[j].words, overlays[i].lines[j].n_words);
			free(overlays[i].lines[j].origin);
		}
		free(overlays[i].lines);
		free(overlays[i].name);
		free(overlays[i].origin);
	}
	free(overlays);
}

static const struct directive rows[] = {
	{ "database", SECTION_ANY, 1, 1, "database mdb", apply_database, NULL },
	{ "suffix", SECTION_DATABASE, 1, 1, "suffix <DN>", apply_suffix, NULL },
	{ "rootdn", SECTION_DATABASE, 1, 1, "rootdn <DN>", NULL, DATABASE_STRING(rootdn) },
	{ "rootpw", SECTION_DATABASE, 1, 1, "rootpw <password>", apply_rootpw, NULL },
	{ "directory", SECTION_DATABASE, 1, 1, "directory <path>", NULL,
	  DATABASE_STRING(directory) },
	{ "maxsize", SECTION_DATABASE, 1, 1, "maxsize <bytes>", NULL,
	  DATABASE_NUMBER(maxsize, 1u << 20, UINT64_MAX >> 1, true) },
	{ "maxreaders", SECTION_DATABASE, 1, 1, "maxreaders <count>", NULL,
	  DATABASE_NUMBER(maxreaders, 1, 65536, false) },
	{ "dbnosync", SECTION_DATABASE, 0, 0, "dbnosync", apply_dbnosync, NULL },
	{ "index", SECTION_DATABASE, 1, 2, "index <attr[,attr...]> [pres,eq,sub,approx]",
	  apply_index, NULL },
	{ "cachesize", SECTION_DATABASE, 1, 1, "cachesize <entries>|off", apply_cachesize, NULL },
	{ "idlcachesize", SECTION_DATABASE, 1, 1, "idlcachesize <entries>|off", apply_cachesize,
	  NULL },
	{ "overlay", SECTION_DATABASE, 1, 1, "overlay <name>", apply_overlay, NULL },
	{ "syncrepl", SECTION_DATABASE, 1, CONFIG_ARGS_UNBOUNDED,
	  "syncrepl rid=<NNN> provider=<ldap[s]://host[:port]> searchbase=<DN> [keyword=value ...]",
	  apply_syncrepl, NULL },
	{ "updateref", SECTION_DATABASE, 1, 1, "updateref <ldap[s]://host[:port]>",
	  apply_updateref, NULL },
};

/* The directives of a database section (and `database`, which opens one). */
const struct directive_table config_database_directives = { rows, sizeof(rows) / sizeof(rows[0]) };

void config_free_database(struct config_database *db)
{
	access_rules_free(&db->access);
	config_free_limits(db->limits, db->n_limits);
	free(db->type);
	free(db->origin);
	config_free_strings(db->suffixes, db->n_suffixes);
	free(db->rootdn);
	if (db->rootpw != NULL) {
		explicit_bzero(db->rootpw, strlen(db->rootpw));
		free(db->rootpw);
	}
	free(db->directory);
	for (size_t i = 0; i < db->n_indexes; i++) {
		config_free_strings(db->indexes[i].attributes, db->indexes[i].n_attributes);
		free(db->indexes[i].origin);
	}
	free(db->indexes);
	free_overlays(db->overlays, db->n_overlays);
	for (size_t i = 0; i < db->n_syncrepl; i++)
		config_syncrepl_free(&db->syncrepl[i]);
	free(db->syncrepl);
	config_free_strings(db->updaterefs, db->n_updaterefs);
}
