/*
 * config.c — slapd.conf directives: the table of known directives, their
 * argument checks, includes, and the hand-off of schema definitions.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "config_lexer.h"
#include "lumen_error.h"
#include "schema.h"

#define CONFIG_MAX_INCLUDE_DEPTH 16

/* The schema file of the operational attributes the daemon always needs. */
#define OPERATIONAL_SCHEMA_FILE "lumen.schema"
/* Where an installed Lumen keeps its schema files (override with -D). */
#ifndef LUMEN_SCHEMA_DIR
#define LUMEN_SCHEMA_DIR "/usr/share/lumen/schema"
#endif

struct parse_state {
	struct config *cfg;
	struct config_database *db;      /* current database section, or NULL */
	struct config_file *file;        /* file being read */
	unsigned depth;                  /* include nesting */
	bool operational_schema_seen;    /* an include named lumen.schema */
	char *operational_schema_path;   /* lumen.schema next to an included file */
	char *err;
	size_t errlen;
};

enum directive_section { SECTION_GLOBAL = 1, SECTION_DATABASE = 2,
			 SECTION_ANY = SECTION_GLOBAL | SECTION_DATABASE };

struct directive {
	const char *name;
	unsigned sections;
	size_t min_args;                  /* not counting the directive itself */
	size_t max_args;
	const char *usage;                /* what was expected, for errors */
	int (*apply)(struct parse_state *st, size_t argc, char **argv);
};

static int load_file(struct parse_state *st, const char *path);

/* "FILE:LINE: " + message, into the caller's buffer. Returns code. */
static int fail_at(struct parse_state *st, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail_at(struct parse_state *st, int code, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(st->err, st->errlen, "%s:%u: ", st->file->path, st->file->line);
	if (n >= 0 && (size_t)n < st->errlen) {
		va_start(ap, fmt);
		vsnprintf(st->err + n, st->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return code;
}

static char *origin_string(const struct parse_state *st)
{
	char *s = NULL;
	if (asprintf(&s, "%s:%u", st->file->path, st->file->line) < 0)
		return NULL;
	return s;
}

/* Replace *slot with a copy of value. */
static int set_string(char **slot, const char *value)
{
	char *copy = strdup(value);
	if (copy == NULL)
		return LUMEN_ENOMEM;
	free(*slot);
	*slot = copy;
	return LUMEN_OK;
}

/* Append a copy of value to a string array. */
static int push_string(char ***array, size_t *n, const char *value)
{
	char **bigger = realloc(*array, (*n + 1) * sizeof(**array));
	if (bigger == NULL)
		return LUMEN_ENOMEM;
	*array = bigger;
	bigger[*n] = strdup(value);
	if (bigger[*n] == NULL)
		return LUMEN_ENOMEM;
	(*n)++;
	return LUMEN_OK;
}

/* Decimal unsigned number in [min, max], with an optional K/M/G/T suffix
 * (powers of 1024) when allow_suffix is set. */
static int parse_unsigned(const char *text, uint64_t min, uint64_t max,
			  bool allow_suffix, uint64_t *out)
{
	if (text[0] < '0' || text[0] > '9')
		return LUMEN_EMALFORMED;
	errno = 0;
	char *end = NULL;
	unsigned long long v = strtoull(text, &end, 10);
	if (errno != 0)
		return LUMEN_EMALFORMED;
	if (allow_suffix && *end != '\0' && end[1] == '\0') {
		unsigned shift = 0;
		switch (*end) {
		case 'k': case 'K': shift = 10; break;
		case 'm': case 'M': shift = 20; break;
		case 'g': case 'G': shift = 30; break;
		case 't': case 'T': shift = 40; break;
		default: return LUMEN_EMALFORMED;
		}
		if (v > (UINT64_MAX >> shift))
			return LUMEN_EMALFORMED;
		v <<= shift;
		end++;
	}
	if (*end != '\0' || v < min || v > max)
		return LUMEN_EMALFORMED;
	*out = v;
	return LUMEN_OK;
}

static int number_arg(struct parse_state *st, const char *directive, const char *text,
		      uint64_t min, uint64_t max, bool allow_suffix, uint64_t *out)
{
	if (parse_unsigned(text, min, max, allow_suffix, out) != LUMEN_OK)
		return fail_at(st, LUMEN_EMALFORMED,
			       "%s: expected an integer between %llu and %llu%s, got \"%s\"",
			       directive, (unsigned long long)min, (unsigned long long)max,
			       allow_suffix ? " (optionally with K, M, G or T)" : "", text);
	return LUMEN_OK;
}

/* A sizelimit/timelimit value: a count, "unlimited" or -1. */
static int limit_arg(struct parse_state *st, const char *directive, const char *text,
		     long *out)
{
	uint64_t v;
	if (strcasecmp(text, "unlimited") == 0 || strcmp(text, "-1") == 0) {
		*out = CONFIG_LIMIT_UNLIMITED;
		return LUMEN_OK;
	}
	if (parse_unsigned(text, 0, INT_MAX, false, &v) != LUMEN_OK)
		return fail_at(st, LUMEN_EMALFORMED,
			       "%s: expected a non-negative integer or \"unlimited\", got \"%s\"",
			       directive, text);
	*out = (long)v;
	return LUMEN_OK;
}

/* ------------------------------------------------------ global directives */

/*
 * Remembers whether lumen.schema was included and, if not yet found, whether
 * it sits next to this included file (so config_load can add it). Errors:
 * LUMEN_ENOMEM.
 */
static int note_operational_schema(struct parse_state *st, const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash != NULL ? slash + 1 : path;
	if (strcmp(base, OPERATIONAL_SCHEMA_FILE) == 0) {
		st->operational_schema_seen = true;
		return LUMEN_OK;
	}
	if (st->operational_schema_path != NULL)
		return LUMEN_OK;
	char *candidate;
	int dir_len = slash != NULL ? (int)(slash - path) : 1;
	if (asprintf(&candidate, "%.*s/%s", dir_len, slash != NULL ? path : ".",
		     OPERATIONAL_SCHEMA_FILE) < 0)
		return LUMEN_ENOMEM;
	if (access(candidate, R_OK) == 0)
		st->operational_schema_path = candidate;
	else
		free(candidate);
	return LUMEN_OK;
}

/*
 * The daemon always needs lumen.schema (entryUUID, the subschema and root
 * DSE attributes); a slapd.conf that does not include it gets it from the
 * directory of its other schema files, else from LUMEN_SCHEMA_DIR. Not
 * finding it is not an error here: the server and the backend say what is
 * missing. Errors: those of schema_load_file.
 */
static int load_operational_schema(struct parse_state *st)
{
	const char *path = st->operational_schema_path;
	if (st->operational_schema_seen)
		return LUMEN_OK;
	if (path == NULL && access(LUMEN_SCHEMA_DIR "/" OPERATIONAL_SCHEMA_FILE, R_OK) == 0)
		path = LUMEN_SCHEMA_DIR "/" OPERATIONAL_SCHEMA_FILE;
	if (path == NULL)
		return LUMEN_OK;
	return schema_load_file(st->cfg->schema, path, st->err, st->errlen);
}

static int apply_include(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	if (st->depth >= CONFIG_MAX_INCLUDE_DEPTH)
		return fail_at(st, LUMEN_ELIMIT, "include: nested more than %d deep",
			       CONFIG_MAX_INCLUDE_DEPTH);
	const char *name = argv[1];
	char *resolved = NULL;
	/* Like slapd: relative to the working directory; as a convenience,
	 * also relative to the including file's directory. */
	if (name[0] != '/' && access(name, F_OK) != 0) {
		const char *slash = strrchr(st->file->path, '/');
		if (slash != NULL) {
			int dir_len = (int)(slash - st->file->path);
			if (asprintf(&resolved, "%.*s/%s", dir_len, st->file->path, name) < 0)
				return LUMEN_ENOMEM;
			if (access(resolved, F_OK) != 0) {
				free(resolved);
				resolved = NULL;
			}
		}
	}
	struct config_file *including = st->file;
	int rc = note_operational_schema(st, resolved != NULL ? resolved : name);
	if (rc != LUMEN_OK) {
		free(resolved);
		return rc;
	}
	st->depth++;
	rc = load_file(st, resolved != NULL ? resolved : name);
	st->depth--;
	st->file = including;
	if (rc == LUMEN_EIO && st->err[0] == '\0')
		rc = fail_at(st, rc, "include: cannot read \"%s\": %s", name, strerror(errno));
	free(resolved);
	return rc;
}

static int apply_pidfile(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	return set_string(&st->cfg->pidfile, argv[1]);
}

static int apply_argsfile(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	return set_string(&st->cfg->argsfile, argv[1]);
}

static int apply_threads(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	uint64_t v;
	int rc = number_arg(st, argv[0], argv[1], 1, 1024, false, &v);
	if (rc == LUMEN_OK)
		st->cfg->threads = (unsigned)v;
	return rc;
}

static int apply_listener_threads(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	uint64_t v;
	int rc = number_arg(st, argv[0], argv[1], 1, 64, false, &v);
	if (rc == LUMEN_OK)
		st->cfg->listener_threads = (unsigned)v;
	return rc;
}

static int apply_loglevel(struct parse_state *st, size_t argc, char **argv)
{
	unsigned level;
	if (config_parse_loglevel((const char *const *)argv + 1, argc - 1, &level) != LUMEN_OK)
		return fail_at(st, LUMEN_EMALFORMED,
			       "loglevel: expected numbers or level names (trace, packets, "
			       "args, conns, BER, filter, config, ACL, stats, stats2, shell, "
			       "parse, sync, none, any)");
	st->cfg->loglevel = level;
	return LUMEN_OK;
}

static int apply_sizelimit(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	return limit_arg(st, argv[0], argv[1],
			 st->db != NULL ? &st->db->sizelimit : &st->cfg->sizelimit);
}

static int apply_timelimit(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	return limit_arg(st, argv[0], argv[1],
			 st->db != NULL ? &st->db->timelimit : &st->cfg->timelimit);
}

static int apply_idletimeout(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	uint64_t v;
	int rc = number_arg(st, argv[0], argv[1], 0, INT_MAX, false, &v);
	if (rc == LUMEN_OK)
		st->cfg->idletimeout = (unsigned)v;
	return rc;
}

/* Frontend PDU bounds: at least one small PDU, at most 1 GiB. */
static int apply_max_incoming(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	uint64_t v;
	int rc = number_arg(st, argv[0], argv[1], 64, 1u << 30, true, &v);
	if (rc != LUMEN_OK)
		return rc;
	if (strcasecmp(argv[0], "sockbuf_max_incoming") == 0)
		st->cfg->max_incoming = (size_t)v;
	else
		st->cfg->max_incoming_auth = (size_t)v;
	return LUMEN_OK;
}

static int apply_max_pending(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	uint64_t v;
	int rc = number_arg(st, argv[0], argv[1], 1, 65536, false, &v);
	if (rc != LUMEN_OK)
		return rc;
	if (strcasecmp(argv[0], "conn_max_pending") == 0)
		st->cfg->max_pending = (unsigned)v;
	else
		st->cfg->max_pending_auth = (unsigned)v;
	return LUMEN_OK;
}

/* `allow`/`disallow` features; only the bind ones exist so far. */
static int apply_allow(struct parse_state *st, size_t argc, char **argv)
{
	bool allow = strcasecmp(argv[0], "allow") == 0;
	for (size_t i = 1; i < argc; i++) {
		if (strcasecmp(argv[i], "bind_anon_dn") == 0)
			st->cfg->allow_bind_anon_dn = allow;
		else if (!allow || strcasecmp(argv[i], "none") != 0)
			return fail_at(st, LUMEN_EMALFORMED,
				       "%s: expected bind_anon_dn%s, got \"%s\"", argv[0],
				       allow ? " or none" : "", argv[i]);
		else
			st->cfg->allow_bind_anon_dn = false;
	}
	return LUMEN_OK;
}

static int apply_database(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	if (strcasecmp(argv[1], "mdb") != 0)
		return fail_at(st, LUMEN_EMALFORMED,
			       "database: expected \"mdb\" (the only backend), got \"%s\"",
			       argv[1]);
	struct config *cfg = st->cfg;
	struct config_database *bigger =
		realloc(cfg->databases, (cfg->n_databases + 1) * sizeof(*bigger));
	if (bigger == NULL)
		return LUMEN_ENOMEM;
	cfg->databases = bigger;
	struct config_database *db = &bigger[cfg->n_databases++];
	memset(db, 0, sizeof(*db));
	db->maxsize = CONFIG_DEFAULT_MAXSIZE;
	db->maxreaders = CONFIG_DEFAULT_MAXREADERS;
	db->sizelimit = CONFIG_LIMIT_INHERIT;
	db->timelimit = CONFIG_LIMIT_INHERIT;
	st->db = db;
	db->type = strdup("mdb");
	db->origin = origin_string(st);
	return db->type != NULL && db->origin != NULL ? LUMEN_OK : LUMEN_ENOMEM;
}

/* ---------------------------------------------------- database directives */

static int apply_suffix(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	return push_string(&st->db->suffixes, &st->db->n_suffixes, argv[1]);
}

static int apply_rootdn(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	return set_string(&st->db->rootdn, argv[1]);
}

static int apply_rootpw(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	if (argv[1][0] == '\0')
		return fail_at(st, LUMEN_EMALFORMED, "rootpw: expected a non-empty password");
	return set_string(&st->db->rootpw, argv[1]);
}

static int apply_directory(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	return set_string(&st->db->directory, argv[1]);
}

static int apply_maxsize(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	return number_arg(st, argv[0], argv[1], 1u << 20, UINT64_MAX >> 1, true,
			  &st->db->maxsize);
}

static int apply_maxreaders(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	uint64_t v;
	int rc = number_arg(st, argv[0], argv[1], 1, 65536, false, &v);
	if (rc == LUMEN_OK)
		st->db->maxreaders = (unsigned)v;
	return rc;
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
	uint64_t v;
	int rc = number_arg(st, argv[0], argv[1], 0, SIZE_MAX >> 1, false, &v);
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
			return fail_at(st, LUMEN_EMALFORMED,
				       "index: expected index kinds from pres,eq,sub,approx, got \"%s\"",
				       bad);
	}
	struct config_index *bigger =
		realloc(db->indexes, (db->n_indexes + 1) * sizeof(*bigger));
	if (bigger == NULL)
		return LUMEN_ENOMEM;
	db->indexes = bigger;
	struct config_index *ix = &bigger[db->n_indexes++];
	memset(ix, 0, sizeof(*ix));
	ix->kinds = kinds;
	ix->origin = origin_string(st);
	if (ix->origin == NULL)
		return LUMEN_ENOMEM;
	for (char *save = NULL, *attr = strtok_r(argv[1], ",", &save); attr != NULL;
	     attr = strtok_r(NULL, ",", &save)) {
		int rc = push_string(&ix->attributes, &ix->n_attributes, attr);
		if (rc != LUMEN_OK)
			return rc;
	}
	if (ix->n_attributes == 0)
		return fail_at(st, LUMEN_EMALFORMED,
			       "index: expected a comma-separated attribute list");
	return LUMEN_OK;
}

#define UNBOUNDED CONFIG_MAX_ARGS

static const struct directive directives[] = {
	{ "include", SECTION_ANY, 1, 1, "include <file>", apply_include },
	{ "pidfile", SECTION_GLOBAL, 1, 1, "pidfile <file>", apply_pidfile },
	{ "argsfile", SECTION_GLOBAL, 1, 1, "argsfile <file>", apply_argsfile },
	{ "threads", SECTION_GLOBAL, 1, 1, "threads <count>", apply_threads },
	{ "listener-threads", SECTION_GLOBAL, 1, 1, "listener-threads <count>",
	  apply_listener_threads },
	{ "loglevel", SECTION_GLOBAL, 1, UNBOUNDED, "loglevel <level>...", apply_loglevel },
	{ "sizelimit", SECTION_ANY, 1, 1, "sizelimit <entries>|unlimited", apply_sizelimit },
	{ "timelimit", SECTION_ANY, 1, 1, "timelimit <seconds>|unlimited", apply_timelimit },
	{ "idletimeout", SECTION_GLOBAL, 1, 1, "idletimeout <seconds>", apply_idletimeout },
	{ "sockbuf_max_incoming", SECTION_GLOBAL, 1, 1, "sockbuf_max_incoming <bytes>",
	  apply_max_incoming },
	{ "sockbuf_max_incoming_auth", SECTION_GLOBAL, 1, 1,
	  "sockbuf_max_incoming_auth <bytes>", apply_max_incoming },
	{ "conn_max_pending", SECTION_GLOBAL, 1, 1, "conn_max_pending <operations>",
	  apply_max_pending },
	{ "conn_max_pending_auth", SECTION_GLOBAL, 1, 1,
	  "conn_max_pending_auth <operations>", apply_max_pending },
	{ "allow", SECTION_GLOBAL, 1, UNBOUNDED, "allow <feature>...", apply_allow },
	{ "disallow", SECTION_GLOBAL, 1, UNBOUNDED, "disallow <feature>...", apply_allow },
	{ "database", SECTION_ANY, 1, 1, "database mdb", apply_database },
	{ "suffix", SECTION_DATABASE, 1, 1, "suffix <DN>", apply_suffix },
	{ "rootdn", SECTION_DATABASE, 1, 1, "rootdn <DN>", apply_rootdn },
	{ "rootpw", SECTION_DATABASE, 1, 1, "rootpw <password>", apply_rootpw },
	{ "directory", SECTION_DATABASE, 1, 1, "directory <path>", apply_directory },
	{ "maxsize", SECTION_DATABASE, 1, 1, "maxsize <bytes>", apply_maxsize },
	{ "maxreaders", SECTION_DATABASE, 1, 1, "maxreaders <count>", apply_maxreaders },
	{ "dbnosync", SECTION_DATABASE, 0, 0, "dbnosync", apply_dbnosync },
	{ "index", SECTION_DATABASE, 1, 2, "index <attr[,attr...]> [pres,eq,sub,approx]",
	  apply_index },
	{ "cachesize", SECTION_DATABASE, 1, 1, "cachesize <entries>", apply_cachesize },
	{ "idlcachesize", SECTION_DATABASE, 1, 1, "idlcachesize <entries>", apply_cachesize },
};

static const char *const schema_keywords[] = {
	"attributetype", "attributetypes", "objectclass", "objectclasses",
	"objectidentifier",
};

static const struct directive *find_directive(const char *name)
{
	for (size_t i = 0; i < sizeof(directives) / sizeof(directives[0]); i++)
		if (strcasecmp(name, directives[i].name) == 0)
			return &directives[i];
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
		return fail_at(st, LUMEN_EMALFORMED, "%s", why);
	if (argc == 0)
		return LUMEN_OK;
	const struct directive *d = find_directive(argv[0]);
	if (d == NULL)
		return fail_at(st, LUMEN_EMALFORMED, "unknown directive \"%s\"", argv[0]);
	unsigned section = st->db != NULL ? SECTION_DATABASE : SECTION_GLOBAL;
	if ((d->sections & section) == 0)
		return fail_at(st, LUMEN_EMALFORMED, "%s: %s", d->name,
			       section == SECTION_GLOBAL
				       ? "allowed only inside a database section (after \"database mdb\")"
				       : "a global directive: move it before the first \"database\" line");
	if (argc - 1 < d->min_args || argc - 1 > d->max_args)
		return fail_at(st, LUMEN_EMALFORMED, "%s: wrong number of arguments, expected \"%s\"",
			       d->name, d->usage);
	return d->apply(st, argc, argv);
}

static int load_file(struct parse_state *st, const char *path)
{
	struct config_file file;
	int rc = config_file_open(&file, path);
	if (rc != LUMEN_OK) {
		int saved = errno;
		if (rc == LUMEN_EIO && st->file != NULL)
			rc = fail_at(st, rc, "include: cannot read \"%s\": %s", path,
				     strerror(saved));
		else if (rc == LUMEN_EIO)
			snprintf(st->err, st->errlen, "%s: cannot read: %s", path,
				 strerror(saved));
		return rc;
	}
	st->file = &file;
	while ((rc = config_file_next_line(&file)) == LUMEN_OK) {
		rc = apply_line(st, file.logical);
		if (rc != LUMEN_OK)
			goto done;
	}
	if (rc == LUMEN_EMALFORMED)
		rc = fail_at(st, rc, "NUL byte in configuration file");
	else if (rc == LUMEN_ENOTFOUND)
		rc = LUMEN_OK;
done:
	config_file_close(&file);
	return rc;
}

static struct config *config_new(const char *path)
{
	struct config *cfg = calloc(1, sizeof(*cfg));
	if (cfg == NULL)
		return NULL;
	cfg->threads = CONFIG_DEFAULT_THREADS;
	cfg->listener_threads = CONFIG_DEFAULT_LISTENER_THREADS;
	cfg->loglevel = LOG_LEVEL_STATS;
	cfg->sizelimit = CONFIG_DEFAULT_SIZELIMIT;
	cfg->timelimit = CONFIG_DEFAULT_TIMELIMIT;
	cfg->max_incoming = CONFIG_DEFAULT_MAX_INCOMING;
	cfg->max_incoming_auth = CONFIG_DEFAULT_MAX_INCOMING_AUTH;
	cfg->max_pending = CONFIG_DEFAULT_MAX_PENDING;
	cfg->max_pending_auth = CONFIG_DEFAULT_MAX_PENDING_AUTH;
	cfg->path = strdup(path);
	if (cfg->path == NULL || schema_create(&cfg->schema) != LUMEN_OK) {
		config_free(cfg);
		return NULL;
	}
	return cfg;
}

int config_load(const char *path, struct config **out, char *err, size_t errlen)
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
	rc = load_file(&st, path);
	if (rc == LUMEN_OK)
		rc = load_operational_schema(&st);
	if (rc == LUMEN_ENOMEM && err[0] == '\0')
		snprintf(err, errlen, "%s: out of memory", path);
	if (rc != LUMEN_OK)
		goto fail;
	rc = schema_finalize(st.cfg->schema, err, errlen);
	if (rc != LUMEN_OK)
		goto fail;
	free(st.operational_schema_path);
	*out = st.cfg;
	return LUMEN_OK;
fail:
	free(st.operational_schema_path);
	config_free(st.cfg);
	return rc;
}

static void free_strings(char **strings, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(strings[i]);
	free(strings);
}

static void free_database(struct config_database *db)
{
	free(db->type);
	free(db->origin);
	free_strings(db->suffixes, db->n_suffixes);
	free(db->rootdn);
	if (db->rootpw != NULL) {
		explicit_bzero(db->rootpw, strlen(db->rootpw));
		free(db->rootpw);
	}
	free(db->directory);
	for (size_t i = 0; i < db->n_indexes; i++) {
		free_strings(db->indexes[i].attributes, db->indexes[i].n_attributes);
		free(db->indexes[i].origin);
	}
	free(db->indexes);
}

void config_free(struct config *cfg)
{
	if (cfg == NULL)
		return;
	for (size_t i = 0; i < cfg->n_databases; i++)
		free_database(&cfg->databases[i]);
	free(cfg->databases);
	if (cfg->schema != NULL)
		schema_free(cfg->schema);
	free(cfg->path);
	free(cfg->pidfile);
	free(cfg->argsfile);
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
