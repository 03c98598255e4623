/*
 * config.c — reading slapd.conf: files and includes, the schema
 * definitions handed to the schema engine, the schema files the daemon
 * loads when the configuration does not include them, and the dispatch of
 * every other line to its directive (config_global.c, config_database.c,
 * config_security.c); the same for the lines an OpenLDAP slapd.d stands
 * for (config_slapd_d.c).
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "config_internal.h"
#include "config_server_id.h"
#include "lumen_error.h"
#include "schema.h"

#define CONFIG_MAX_INCLUDE_DEPTH 16

/* The schema file of the operational attributes the daemon always needs. */
#define OPERATIONAL_SCHEMA_FILE "lumen.schema"
/* The cn=Monitor tree's types and classes, loaded the same way. */
#define MONITOR_SCHEMA_FILE "monitor.schema"
/*
 * Where an installed Lumen keeps its data ($(datadir)/lumen) and schema
 * files ($(datadir)/lumen/schema): the Makefile passes both (-D) from its
 * install paths.
 */
#ifndef LUMEN_DATA_DIR
#define LUMEN_DATA_DIR "/usr/share/lumen"
#endif
#ifndef LUMEN_SCHEMA_DIR
#define LUMEN_SCHEMA_DIR LUMEN_DATA_DIR "/schema"
#endif

static int load_file(struct parse_state *st, const char *path);

/* ------------------------------------------------------------ includes */

/*
 * Remembers whether the schema file `name` was included (*seen) and, if
 * not yet found, whether it sits next to this included file (*candidate),
 * so config_load can add it. Errors: LUMEN_ENOMEM.
 */
static int note_schema_file(const char *path, const char *name, bool *seen, char **candidate)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash != NULL ? slash + 1 : path;
	if (strcmp(base, name) == 0) {
		*seen = true;
		return LUMEN_OK;
	}
	if (*candidate != NULL)
		return LUMEN_OK;
	char *next_to;
	int dir_len = slash != NULL ? (int)(slash - path) : 1;
	if (asprintf(&next_to, "%.*s/%s", dir_len, slash != NULL ? path : ".", name) < 0)
		return LUMEN_ENOMEM;
	if (access(next_to, R_OK) == 0)
		*candidate = next_to;
	else
		free(next_to);
	return LUMEN_OK;
}

static int note_operational_schema(struct parse_state *st, const char *path)
{
	int rc = note_schema_file(path, OPERATIONAL_SCHEMA_FILE, &st->operational_schema_seen,
				  &st->operational_schema_path);
	if (rc == LUMEN_OK)
		rc = note_schema_file(path, MONITOR_SCHEMA_FILE, &st->monitor_schema_seen,
				      &st->monitor_schema_path);
	return rc;
}

/* Load `name` from the candidate path or LUMEN_SCHEMA_DIR, if found. */
static int load_implied_schema(struct parse_state *st, const char *candidate, const char *name)
{
	char installed[PATH_MAX];
	const char *path = candidate;
	snprintf(installed, sizeof(installed), "%s/%s", LUMEN_SCHEMA_DIR, name);
	if (path == NULL && access(installed, R_OK) == 0)
		path = installed;
	if (path == NULL)
		return LUMEN_OK;
	return schema_load_file(st->cfg->schema, path, st->err, st->errlen);
}

/*
 * The daemon always needs lumen.schema (entryUUID, the subschema and root
 * DSE attributes) and monitor.schema (cn=Monitor); a slapd.conf that does
 * not include them gets them from the directory of its other schema files,
 * else from LUMEN_SCHEMA_DIR. Not finding them is not an error here: the
 * server and the backend say what is missing. monitor.schema builds on
 * core.schema's name and cn, so a configuration without those (unit tests,
 * tools on bare schemas) goes without cn=Monitor. Errors: those of
 * schema_load_file.
 */
static int load_operational_schema(struct parse_state *st)
{
	int rc = LUMEN_OK;
	if (!st->operational_schema_seen)
		rc = load_implied_schema(st, st->operational_schema_path, OPERATIONAL_SCHEMA_FILE);
	if (rc != LUMEN_OK || st->monitor_schema_seen ||
	    schema_attribute_type(st->cfg->schema, "name", 4) == NULL ||
	    schema_attribute_type(st->cfg->schema, "cn", 2) == NULL)
		return rc;
	return load_implied_schema(st, st->monitor_schema_path, MONITOR_SCHEMA_FILE);
}

/*
 * Where a relative include that is not in the working directory lives:
 * like slapd, the working directory first; as a convenience, then the
 * including file's directory, then the installed data directory (so
 * "schema/core.schema", the tree's spelling, finds the installed copy),
 * then the installed schema directory ("core.schema"). *resolved is the
 * malloc'd path found, or NULL to open `name` as given (absolute, in the
 * working directory, or nowhere: load_file says so). LUMEN_ENOMEM.
 */
static int resolve_include(const struct parse_state *st, const char *name, char **resolved)
{
	*resolved = NULL;
	if (name[0] == '/' || access(name, F_OK) == 0)
		return LUMEN_OK;
	const char *slash = strrchr(st->file->path, '/');
	const struct { const char *dir; int len; } places[] = {
		{ st->file->path, slash != NULL ? (int)(slash - st->file->path) : -1 },
		{ LUMEN_DATA_DIR, (int)strlen(LUMEN_DATA_DIR) },
		{ LUMEN_SCHEMA_DIR, (int)strlen(LUMEN_SCHEMA_DIR) },
	};
	for (size_t i = 0; i < sizeof(places) / sizeof(places[0]); i++) {
		if (places[i].len < 0)
			continue;
		if (asprintf(resolved, "%.*s/%s", places[i].len, places[i].dir, name) < 0) {
			*resolved = NULL;
			return LUMEN_ENOMEM;
		}
		if (access(*resolved, F_OK) == 0)
			return LUMEN_OK;
		free(*resolved);
		*resolved = NULL;
	}
	return LUMEN_OK;
}

static int apply_include(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	if (st->depth >= CONFIG_MAX_INCLUDE_DEPTH)
		return config_fail_at(st, LUMEN_ELIMIT, "include: nested more than %d deep",
				      CONFIG_MAX_INCLUDE_DEPTH);
	const char *name = argv[1];
	char *resolved;
	int rc = resolve_include(st, name, &resolved);
	if (rc != LUMEN_OK)
		return rc;
	struct config_file *including = st->file;
	rc = note_operational_schema(st, resolved != NULL ? resolved : name);
	if (rc != LUMEN_OK) {
		free(resolved);
		return rc;
	}
	st->depth++;
	rc = load_file(st, resolved != NULL ? resolved : name);
	st->depth--;
	st->file = including;
	if (rc == LUMEN_EIO && st->err[0] == '\0')
		rc = config_fail_at(st, rc, "include: cannot read \"%s\": %s", name,
				    strerror(errno));
	free(resolved);
	return rc;
}

/* --------------------------------------------------------- dispatching */

/* include is the loader's own directive; the groups bring theirs. */
static const struct directive loader_rows[] = {
	{ "include", SECTION_ANY, 1, 1, "include <file>", apply_include, NULL },
};

static const struct directive_table loader_directives = {
	loader_rows, sizeof(loader_rows) / sizeof(loader_rows[0])
};

static const struct directive_table *const directive_tables[] = {
	&loader_directives, &config_global_directives, &config_database_directives,
	&config_security_directives, &config_replication_directives,
};

static const char *const schema_keywords[] = {
	"attributetype", "attributetypes", "objectclass", "objectclasses",
	"objectidentifier",
};

static const struct directive *find_directive(const char *name)
{
	for (size_t t = 0; t < sizeof(directive_tables) / sizeof(directive_tables[0]); t++) {
		const struct directive_table *table = directive_tables[t];
		for (size_t i = 0; i < table->n_rows; i++)
			if (strcasecmp(name, table->rows[i].name) == 0)
				return &table->rows[i];
	}
	return NULL;
}

static bool is_schema_line(const char *line)
{
	size_t word = strcspn(line, " \t\n\r");
	for (size_t i = 0; i < sizeof(schema_keywords) / sizeof(schema_keywords[0]); i++)
		if (strlen(schema_keywords[i]) == word &&
		    strncasecmp(line, schema_keywords[i], word) == 0)
			return true;
	return false;
}

static int apply_schema_line(struct parse_state *st, const char *line)
{
	char origin[PATH_MAX + 32];
	snprintf(origin, sizeof(origin), "%s:%u", st->file->path, st->file->line);
	return schema_load_text(st->cfg->schema, origin, line, st->err, st->errlen);
}

static int apply_line(struct parse_state *st, char *line)
{
	if (is_schema_line(line))
		return apply_schema_line(st, line);

	char *argv[CONFIG_MAX_ARGS];
	size_t argc = 0;
	const char *why = NULL;
	if (config_split(line, argv, &argc, &why) != LUMEN_OK)
		return config_fail_at(st, LUMEN_EMALFORMED, "%s", why);
	if (argc == 0)
		return LUMEN_OK;
	const struct directive *d = find_directive(argv[0]);
	if (d == NULL && st->db != NULL && st->db->n_overlays > 0)
		return config_overlay_keep_line(st, argc, argv);
	if (d == NULL)
		return config_fail_at(st, LUMEN_EMALFORMED, "unknown directive \"%s\"", argv[0]);
	unsigned section = st->db != NULL ? SECTION_DATABASE : SECTION_GLOBAL;
	if ((d->sections & section) == 0)
		return config_fail_at(st, LUMEN_EMALFORMED, "%s: %s", d->name,
				      section == SECTION_GLOBAL
				      ? "allowed only inside a database section (after \"database mdb\")"
				      : "a global directive: move it before the first \"database\" line");
	if (argc - 1 < d->min_args || argc - 1 > d->max_args)
		return config_fail_at(st, LUMEN_EMALFORMED, "%s: wrong number of arguments, expected \"%s\"",
				      d->name, d->usage);
	if (d->field != NULL)
		return config_apply_field(st, d->field, argv);
	return d->apply(st, argc, argv);
}

/* Every logical line of an open file, through its directive. */
static int apply_lines(struct parse_state *st, struct config_file *file)
{
	int rc;
	st->file = file;
	while ((rc = config_file_next_line(file)) == LUMEN_OK) {
		rc = apply_line(st, file->logical);
		if (rc != LUMEN_OK)
			return rc;
	}
	if (rc == LUMEN_EMALFORMED)
		return config_fail_at(st, rc, "NUL byte in configuration file");
	return rc == LUMEN_ENOTFOUND ? LUMEN_OK : rc;
}

static int load_file(struct parse_state *st, const char *path)
{
	struct config_file file;
	int rc = config_file_open(&file, path);
	if (rc != LUMEN_OK) {
		int saved = errno;
		if (rc == LUMEN_EIO && st->file != NULL)
			rc = config_fail_at(st, rc, "include: cannot read \"%s\": %s", path,
					    strerror(saved));
		else if (rc == LUMEN_EIO)
			snprintf(st->err, st->errlen, "%s: cannot read: %s", path,
				 strerror(saved));
		return rc;
	}
	rc = apply_lines(st, &file);
	config_file_close(&file);
	return rc;
}

/* A line translated from a slapd.d file, applied under that file's name. */
static int apply_translated_line(void *ctx, const char *path, unsigned line, const char *text)
{
	struct parse_state *st = ctx;
	struct config_file file;
	int rc = config_file_from_text(&file, path, line, text);
	if (rc != LUMEN_OK)
		return rc;
	rc = apply_lines(st, &file);
	config_file_close(&file);
	st->file = NULL;
	/* An error inside an included schema file names that file: say which
	 * slapd.d entry included it. */
	size_t used = strlen(st->err);
	if (rc != LUMEN_OK && used > 0 && strstr(st->err, path) == NULL)
		snprintf(st->err + used, st->errlen - used, " (from %s:%u)", path, line);
	return rc;
}

static int load_slapd_d(struct parse_state *st, const char *dir)
{
	return config_slapd_d_translate(dir, true, apply_translated_line, st, st->err, st->errlen);
}

/* ------------------------------------------------------ whole config */

static struct config *config_new(const char *path)
{
	struct config *cfg = calloc(1, sizeof(*cfg));
	if (cfg == NULL)
		return NULL;
	cfg->threads = CONFIG_DEFAULT_THREADS;
	cfg->max_filter_depth = LDAP_DEFAULT_MAX_FILTER_DEPTH;
	cfg->sort_max = CONFIG_DEFAULT_SORT_MAX;
	cfg->writetimeout = CONFIG_DEFAULT_WRITETIMEOUT;
	cfg->listener_threads = CONFIG_DEFAULT_LISTENER_THREADS;
	cfg->busy_poll_us = CONFIG_DEFAULT_BUSY_POLL_US;
	cfg->loglevel = LOG_LEVEL_STATS;
	cfg->sizelimit = CONFIG_DEFAULT_SIZELIMIT;
	cfg->timelimit = CONFIG_DEFAULT_TIMELIMIT;
	cfg->max_incoming = CONFIG_DEFAULT_MAX_INCOMING;
	cfg->max_incoming_auth = CONFIG_DEFAULT_MAX_INCOMING_AUTH;
	cfg->max_pending = CONFIG_DEFAULT_MAX_PENDING;
	cfg->max_pending_auth = CONFIG_DEFAULT_MAX_PENDING_AUTH;
	cfg->conn_max_memory = CONFIG_DEFAULT_CONN_MAX_MEMORY;
	cfg->conn_max_memory_auth = CONFIG_DEFAULT_CONN_MAX_MEMORY_AUTH;
	cfg->conn_total_memory = CONFIG_DEFAULT_CONN_TOTAL_MEMORY;
	cfg->first_pdu_timeout = CONFIG_DEFAULT_FIRST_PDU_TIMEOUT;
	cfg->slowop_threshold_ms = CONFIG_SLOWOP_OFF;
	cfg->tls.protocol_min = CONFIG_TLS_1_2;
	cfg->tls.handshake_timeout = CONFIG_DEFAULT_TLS_HANDSHAKE_TIMEOUT;
	cfg->password_allow_cleartext = true;
	cfg->inline_reads = true;
	cfg->password_hash = strdup(CONFIG_DEFAULT_PASSWORD_HASH);
	cfg->path = strdup(path);
	if (cfg->path == NULL || cfg->password_hash == NULL ||
	    schema_create(&cfg->schema) != LUMEN_OK) {
		config_free(cfg);
		return NULL;
	}
	return cfg;
}

/* config_load and config_load_slapd_d: read, then finish the schema and
 * the security settings. */
static int load_config(const char *path, int (*read)(struct parse_state *, const char *),
		       struct config **out, char *err, size_t errlen)
{
	int rc;
	struct parse_state st = { .err = err, .errlen = errlen };

	*out = NULL;
	if (errlen > 0)
		err[0] = '\0';
	st.cfg = config_new(path);
	if (st.cfg == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		return LUMEN_ENOMEM;
	}
	rc = read(&st, path);
	if (rc == LUMEN_OK)
		rc = load_operational_schema(&st);
	if (rc == LUMEN_ENOMEM && err[0] == '\0')
		snprintf(err, errlen, "%s: out of memory", path);
	if (rc != LUMEN_OK)
		goto fail;
	rc = schema_finalize(st.cfg->schema, err, errlen);
	if (rc == LUMEN_OK)
		rc = config_finish_security(st.cfg, err, errlen);
	if (rc != LUMEN_OK)
		goto fail;
	free(st.operational_schema_path);
	free(st.monitor_schema_path);
	*out = st.cfg;
	return LUMEN_OK;
fail:
	free(st.operational_schema_path);
	free(st.monitor_schema_path);
	config_free(st.cfg);
	return rc;
}

int config_load(const char *path, struct config **out, char *err, size_t errlen)
{
	return load_config(path, load_file, out, err, errlen);
}

int config_load_slapd_d(const char *dir, struct config **out, char *err, size_t errlen)
{
	return load_config(dir, load_slapd_d, out, err, errlen);
}

/* config_print_slapd_d: each line, under a comment naming its file. */
struct printer {
	FILE *out;
	char *last_file;
};

static int print_line(void *ctx, const char *path, unsigned line, const char *text)
{
	struct printer *p = ctx;
	(void)line;
	if (p->last_file == NULL || strcmp(p->last_file, path) != 0) {
		free(p->last_file);
		p->last_file = strdup(path);
		if (p->last_file == NULL)
			return LUMEN_ENOMEM;
		fprintf(p->out, "\n# %s\n", path);
	}
	return fprintf(p->out, "%s\n", text) < 0 ? LUMEN_EIO : LUMEN_OK;
}

int config_print_slapd_d(const char *dir, FILE *out, char *err, size_t errlen)
{
	struct printer p = { out, NULL };
	if (errlen > 0)
		err[0] = '\0';
	fprintf(out, "# slapd.conf for Lumen, translated from OpenLDAP's %s\n", dir);
	int rc = config_slapd_d_translate(dir, false, print_line, &p, err, errlen);
	free(p.last_file);
	if (rc == LUMEN_EIO && err[0] == '\0')
		snprintf(err, errlen, "writing the configuration: %s", strerror(errno));
	return rc;
}

void config_free(struct config *cfg)
{
	if (cfg == NULL)
		return;
	for (size_t i = 0; i < cfg->n_databases; i++)
		config_free_database(&cfg->databases[i]);
	free(cfg->databases);
	config_free_security(cfg);
	schema_free(cfg->schema);
	free(cfg->path);
	free(cfg->pidfile);
	free(cfg->argsfile);
	config_free_modules(cfg);
	config_free_strings(cfg->referrals, cfg->n_referrals);
	config_free_server_ids(cfg);
	free(cfg->metrics_address);
	free(cfg->logfile);
	free(cfg);
}

long config_database_sizelimit(const struct config *cfg, const struct config_database *db)
{
	return db->sizelimit == CONFIG_LIMIT_INHERIT ? cfg->sizelimit : db->sizelimit;
}

long config_database_timelimit(const struct config *cfg, const struct config_database *db)
{
	return db->timelimit == CONFIG_LIMIT_INHERIT ? cfg->timelimit : db->timelimit;
}
