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
#include "dn.h"
#include "lumen_error.h"
#include "password.h"
#include "schema.h"

#define CONFIG_MAX_INCLUDE_DEPTH 16

/* The schema file of the operational attributes the daemon always needs. */
#define OPERATIONAL_SCHEMA_FILE "lumen.schema"
/* The cn=Monitor tree's types and classes, loaded the same way. */
#define MONITOR_SCHEMA_FILE "monitor.schema"
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
	bool monitor_schema_seen;        /* an include named monitor.schema */
	char *monitor_schema_path;       /* monitor.schema next to an included file */
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

static int apply_metrics_listen(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	char *address = NULL;
	unsigned port = 0;
	int rc = config_parse_metrics_listen(argv[1], &address, &port);
	if (rc == LUMEN_EMALFORMED)
		return fail_at(st, rc, "metrics-listen: expected ADDRESS:PORT ([v6]:PORT) or "
			       "none, got \"%s\"", argv[1]);
	if (rc != LUMEN_OK)
		return rc;
	free(st->cfg->metrics_address);
	st->cfg->metrics_address = address;
	st->cfg->metrics_port = port;
	return LUMEN_OK;
}

static int apply_slowop_threshold(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	if (config_parse_slowop_threshold(argv[1], &st->cfg->slowop_threshold_ms) != LUMEN_OK)
		return fail_at(st, LUMEN_EMALFORMED, "slowop-threshold: expected milliseconds "
			       "(0 = every operation) or off, got \"%s\"", argv[1]);
	return LUMEN_OK;
}

static int apply_logfile(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	return set_string(&st->cfg->logfile, argv[1]);
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

/* ------------------------------------------------ security directives */

/* `access to ...`: grammar now, schema names after the whole file. */
/*
 * `access to ...`: grammar now, schema names after the whole file. The
 * parsed rule keeps views into its words (a filter='s text), so the words
 * are copied into memory the config owns for as long as the rules live.
 */
static int apply_access(struct parse_state *st, size_t argc, char **argv)
{
	struct config *cfg = st->cfg;
	struct access_rules *rules = st->db != NULL ? &st->db->access : &cfg->access;
	char *copies[CONFIG_MAX_ARGS];
	size_t total = 0;
	for (size_t i = 0; i < argc; i++)
		total += strlen(argv[i]) + 1;
	char **bigger = realloc(cfg->access_text, (cfg->n_access_text + 1) * sizeof(*bigger));
	if (bigger == NULL)
		return LUMEN_ENOMEM;
	cfg->access_text = bigger;
	char *block = malloc(total);
	if (block == NULL)
		return LUMEN_ENOMEM;
	bigger[cfg->n_access_text++] = block;
	for (size_t i = 0; i < argc; i++) {
		size_t n = strlen(argv[i]) + 1;
		copies[i] = memcpy(block, argv[i], n);
		block += n;
	}
	return access_rule_parse(rules, argc, copies, st->file->path, st->file->line, st->err,
				 st->errlen);
}

static int apply_tls_file(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	struct config_tls *tls = &st->cfg->tls;
	if (argv[1][0] == '\0')
		return fail_at(st, LUMEN_EMALFORMED, "%s: expected a file name", argv[0]);
	if (strcasecmp(argv[0], "TLSCertificateFile") == 0)
		return set_string(&tls->certificate_file, argv[1]);
	if (strcasecmp(argv[0], "TLSCertificateKeyFile") == 0)
		return set_string(&tls->key_file, argv[1]);
	if (strcasecmp(argv[0], "TLSCACertificateFile") == 0)
		return set_string(&tls->ca_file, argv[1]);
	return set_string(&tls->cipher_suite, argv[1]);
}

/* TLSProtocolMin: OpenLDAP's "3.3" (= TLS 1.2) form, or "TLS1.2"/"1.2". */
static int apply_tls_protocol_min(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	static const struct { const char *name; unsigned version; } names[] = {
		{ "3.1", 0x0301 }, { "3.2", 0x0302 }, { "3.3", 0x0303 }, { "3.4", 0x0304 },
		{ "TLS1.0", 0x0301 }, { "TLS1.1", 0x0302 }, { "TLS1.2", 0x0303 },
		{ "TLS1.3", 0x0304 }, { "1.0", 0x0301 }, { "1.1", 0x0302 }, { "1.2", 0x0303 },
		{ "1.3", 0x0304 },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcasecmp(argv[1], names[i].name) != 0)
			continue;
		if (names[i].version < CONFIG_TLS_1_2)
			return fail_at(st, LUMEN_EMALFORMED,
				       "TLSProtocolMin: TLS older than 1.2 (3.3) is not supported, "
				       "got \"%s\"", argv[1]);
		st->cfg->tls.protocol_min = names[i].version;
		return LUMEN_OK;
	}
	return fail_at(st, LUMEN_EMALFORMED,
		       "TLSProtocolMin: expected 3.3 (TLS 1.2) or 3.4 (TLS 1.3), got \"%s\"",
		       argv[1]);
}

static int apply_tls_verify_client(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	static const struct { const char *name; enum config_tls_verify v; } names[] = {
		{ "never", CONFIG_TLS_VERIFY_NEVER }, { "allow", CONFIG_TLS_VERIFY_ALLOW },
		{ "try", CONFIG_TLS_VERIFY_ALLOW }, { "demand", CONFIG_TLS_VERIFY_DEMAND },
		{ "hard", CONFIG_TLS_VERIFY_DEMAND }, { "true", CONFIG_TLS_VERIFY_DEMAND },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcasecmp(argv[1], names[i].name) == 0) {
			st->cfg->tls.verify_client = names[i].v;
			return LUMEN_OK;
		}
	return fail_at(st, LUMEN_EMALFORMED,
		       "TLSVerifyClient: expected never, allow, try or demand, got \"%s\"", argv[1]);
}

static int apply_tls_handshake_timeout(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	uint64_t v;
	int rc = number_arg(st, argv[0], argv[1], 1, 3600, false, &v);
	if (rc == LUMEN_OK)
		st->cfg->tls.handshake_timeout = (unsigned)v;
	return rc;
}

/* `security ssf=N simple_bind=N ...`: each word NAME=N. */
static int apply_security(struct parse_state *st, size_t argc, char **argv)
{
	for (size_t i = 1; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		uint64_t v;
		unsigned *slot = NULL;
		if (eq != NULL) {
			*eq = '\0';
			if (strcasecmp(argv[i], "ssf") == 0)
				slot = &st->cfg->security.ssf;
			else if (strcasecmp(argv[i], "simple_bind") == 0)
				slot = &st->cfg->security.simple_bind;
			*eq = '=';
		}
		if (slot == NULL || parse_unsigned(eq + 1, 0, 65535, false, &v) != LUMEN_OK)
			return fail_at(st, LUMEN_EMALFORMED,
				       "security: expected ssf=N or simple_bind=N (N from 0 to "
				       "65535), got \"%s\"", argv[i]);
		*slot = (unsigned)v;
	}
	return LUMEN_OK;
}

static int apply_password_hash(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	if (!password_scheme_known(argv[1]))
		return fail_at(st, LUMEN_EMALFORMED,
			       "password-hash: unknown scheme \"%s\" (expected {SSHA512}, {SSHA}, "
			       "{PBKDF2-SHA512}, {ARGON2}, {CRYPT}, ...)", argv[1]);
	return set_string(&st->cfg->password_hash, argv[1]);
}

static int apply_password_cleartext(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	if (strcasecmp(argv[1], "on") == 0 || strcasecmp(argv[1], "yes") == 0)
		st->cfg->password_allow_cleartext = true;
	else if (strcasecmp(argv[1], "off") == 0 || strcasecmp(argv[1], "no") == 0)
		st->cfg->password_allow_cleartext = false;
	else
		return fail_at(st, LUMEN_EMALFORMED,
			       "password-allow-cleartext: expected on or off, got \"%s\"", argv[1]);
	return LUMEN_OK;
}

static int apply_authz_regexp(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	struct config *cfg = st->cfg;
	struct config_authz_regexp *bigger =
		realloc(cfg->authz_regexps, (cfg->n_authz_regexps + 1) * sizeof(*bigger));
	if (bigger == NULL)
		return LUMEN_ENOMEM;
	cfg->authz_regexps = bigger;
	struct config_authz_regexp *r = &bigger[cfg->n_authz_regexps++];
	memset(r, 0, sizeof(*r));
	r->origin = origin_string(st);
	r->pattern = strdup(argv[1]);
	r->replacement = strdup(argv[2]);
	if (r->origin == NULL || r->pattern == NULL || r->replacement == NULL)
		return LUMEN_ENOMEM;
	int err = regcomp(&r->regex, r->pattern, REG_EXTENDED | REG_ICASE);
	if (err != 0) {
		char why[160];
		regerror(err, &r->regex, why, sizeof(why));
		return fail_at(st, LUMEN_EMALFORMED, "authz-regexp: bad pattern \"%s\": %s",
			       r->pattern, why);
	}
	r->compiled = true;
	if (r->regex.re_nsub > 9)
		return fail_at(st, LUMEN_EMALFORMED,
			       "authz-regexp: at most 9 groups can be substituted");
	for (const char *p = r->replacement; (p = strchr(p, '$')) != NULL; p++)
		if (p[1] < '0' || p[1] > '9' || (size_t)(p[1] - '0') > r->regex.re_nsub)
			return fail_at(st, LUMEN_EMALFORMED,
				       "authz-regexp: \"%s\": $ must be followed by the number of "
				       "a group of the pattern", r->replacement);
	return LUMEN_OK;
}

/* `limits WHO LIMIT...`: WHO as slapd.conf(5) (a subset), LIMIT size=/time=. */
static int limit_who(struct parse_state *st, const char *text, struct config_limit *l)
{
	static const struct { const char *prefix; enum config_limit_who who; } dn_forms[] = {
		{ "dn=", LIMIT_WHO_DN_EXACT }, { "dn.exact=", LIMIT_WHO_DN_EXACT },
		{ "dn.base=", LIMIT_WHO_DN_EXACT }, { "dn.subtree=", LIMIT_WHO_DN_SUBTREE },
	};
	if (strcmp(text, "*") == 0) {
		l->who = LIMIT_WHO_ANYONE;
		return LUMEN_OK;
	}
	if (strcasecmp(text, "anonymous") == 0) {
		l->who = LIMIT_WHO_ANONYMOUS;
		return LUMEN_OK;
	}
	if (strcasecmp(text, "users") == 0) {
		l->who = LIMIT_WHO_USERS;
		return LUMEN_OK;
	}
	for (size_t i = 0; i < sizeof(dn_forms) / sizeof(dn_forms[0]); i++) {
		size_t n = strlen(dn_forms[i].prefix);
		if (strncasecmp(text, dn_forms[i].prefix, n) != 0)
			continue;
		const char *dn = text + n;
		size_t len = strlen(dn);
		if (len >= 2 && dn[0] == '"' && dn[len - 1] == '"')
			l->dn_text = strndup(dn + 1, len - 2);
		else
			l->dn_text = strdup(dn);
		l->who = dn_forms[i].who;
		return l->dn_text != NULL ? LUMEN_OK : LUMEN_ENOMEM;
	}
	return fail_at(st, LUMEN_EMALFORMED,
		       "limits: expected *, anonymous, users, dn.exact=\"DN\" or "
		       "dn.subtree=\"DN\", got \"%s\"", text);
}

static int limit_value(struct parse_state *st, const char *text, struct config_limit *l)
{
	static const struct { const char *name; bool is_size; } kinds[] = {
		{ "size=", true }, { "size.soft=", true }, { "size.hard=", true },
		{ "time=", false }, { "time.soft=", false }, { "time.hard=", false },
	};
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		size_t n = strlen(kinds[i].name);
		if (strncasecmp(text, kinds[i].name, n) == 0)
			return limit_arg(st, "limits", text + n, kinds[i].is_size ? &l->size : &l->time);
	}
	return fail_at(st, LUMEN_EMALFORMED,
		       "limits: expected size=N|unlimited or time=N|unlimited, got \"%s\"", text);
}

static int apply_limits(struct parse_state *st, size_t argc, char **argv)
{
	struct config_limit **list = st->db != NULL ? &st->db->limits : &st->cfg->limits;
	size_t *n = st->db != NULL ? &st->db->n_limits : &st->cfg->n_limits;
	struct config_limit *bigger = realloc(*list, (*n + 1) * sizeof(*bigger));
	if (bigger == NULL)
		return LUMEN_ENOMEM;
	*list = bigger;
	struct config_limit *l = &bigger[(*n)++];
	memset(l, 0, sizeof(*l));
	l->size = l->time = CONFIG_LIMIT_INHERIT;
	l->origin = origin_string(st);
	if (l->origin == NULL)
		return LUMEN_ENOMEM;
	int rc = limit_who(st, argv[1], l);
	for (size_t i = 2; rc == LUMEN_OK && i < argc; i++)
		rc = limit_value(st, argv[i], l);
	return rc;
}

static int apply_conn_max(struct parse_state *st, size_t argc, char **argv)
{
	(void)argc;
	uint64_t v;
	int rc = number_arg(st, argv[0], argv[1], 0, 1u << 24, false, &v);
	if (rc != LUMEN_OK)
		return rc;
	if (strcasecmp(argv[0], "conn_max") == 0)
		st->cfg->conn_max = (unsigned)v;
	else
		st->cfg->conn_max_per_ip = (unsigned)v;
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
	{ "metrics-listen", SECTION_GLOBAL, 1, 1, "metrics-listen <address:port>|none",
	  apply_metrics_listen },
	{ "slowop-threshold", SECTION_GLOBAL, 1, 1, "slowop-threshold <milliseconds>|off",
	  apply_slowop_threshold },
	{ "logfile", SECTION_GLOBAL, 1, 1, "logfile <file>", apply_logfile },
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
	{ "access", SECTION_ANY, 3, UNBOUNDED, "access to <what> by <who> <access>...",
	  apply_access },
	{ "limits", SECTION_ANY, 2, UNBOUNDED,
	  "limits <*|anonymous|users|dn.exact=DN|dn.subtree=DN> size=N time=N", apply_limits },
	{ "security", SECTION_GLOBAL, 1, UNBOUNDED, "security ssf=N simple_bind=N",
	  apply_security },
	{ "password-hash", SECTION_GLOBAL, 1, 1, "password-hash <{SCHEME}>", apply_password_hash },
	{ "password-allow-cleartext", SECTION_GLOBAL, 1, 1, "password-allow-cleartext on|off",
	  apply_password_cleartext },
	{ "authz-regexp", SECTION_GLOBAL, 2, 2, "authz-regexp <pattern> <replacement>",
	  apply_authz_regexp },
	{ "conn_max", SECTION_GLOBAL, 1, 1, "conn_max <connections>", apply_conn_max },
	{ "conn_max_per_ip", SECTION_GLOBAL, 1, 1, "conn_max_per_ip <connections>",
	  apply_conn_max },
	{ "TLSCertificateFile", SECTION_GLOBAL, 1, 1, "TLSCertificateFile <file>", apply_tls_file },
	{ "TLSCertificateKeyFile", SECTION_GLOBAL, 1, 1, "TLSCertificateKeyFile <file>",
	  apply_tls_file },
	{ "TLSCACertificateFile", SECTION_GLOBAL, 1, 1, "TLSCACertificateFile <file>",
	  apply_tls_file },
	{ "TLSCipherSuite", SECTION_GLOBAL, 1, 1, "TLSCipherSuite <OpenSSL cipher list>",
	  apply_tls_file },
	{ "TLSProtocolMin", SECTION_GLOBAL, 1, 1, "TLSProtocolMin 3.3|3.4", apply_tls_protocol_min },
	{ "TLSVerifyClient", SECTION_GLOBAL, 1, 1, "TLSVerifyClient never|allow|demand",
	  apply_tls_verify_client },
	{ "tls_handshake_timeout", SECTION_GLOBAL, 1, 1, "tls_handshake_timeout <seconds>",
	  apply_tls_handshake_timeout },
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
	cfg->slowop_threshold_ms = CONFIG_SLOWOP_OFF;
	cfg->tls.protocol_min = CONFIG_TLS_1_2;
	cfg->tls.handshake_timeout = CONFIG_DEFAULT_TLS_HANDSHAKE_TIMEOUT;
	cfg->password_allow_cleartext = true;
	cfg->password_hash = strdup(CONFIG_DEFAULT_PASSWORD_HASH);
	cfg->path = strdup(path);
	if (cfg->path == NULL || cfg->password_hash == NULL ||
	    schema_create(&cfg->schema) != LUMEN_OK) {
		config_free(cfg);
		return NULL;
	}
	return cfg;
}

/* Normalize the DN of each `limits` line of a list. */
static int finish_limits(struct config *cfg, struct config_limit *limits, size_t n,
			 struct arena *arena, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		struct config_limit *l = &limits[i];
		struct ber_view ndn;
		if (l->dn_text == NULL)
			continue;
		arena_reset(arena);
		int rc = dn_normalize(cfg->schema, l->dn_text, strlen(l->dn_text), arena, &ndn);
		if (rc != LUMEN_OK) {
			snprintf(err, errlen, "%s: limits: \"%s\" is not a valid DN (%s)", l->origin,
				 l->dn_text, lumen_strerror(rc));
			return LUMEN_EMALFORMED;
		}
		l->ndn = strndup((const char *)ndn.ptr, ndn.len);
		if (l->ndn == NULL)
			return LUMEN_ENOMEM;
		l->ndn_len = ndn.len;
	}
	return LUMEN_OK;
}

/* What needs the final schema: access rules and limits DNs. */
static int finish_security(struct config *cfg, char *err, size_t errlen)
{
	struct arena arena;
	arena_init(&arena, 0);
	int rc = access_rules_compile(&cfg->access, cfg->schema, err, errlen);
	if (rc == LUMEN_OK)
		rc = finish_limits(cfg, cfg->limits, cfg->n_limits, &arena, err, errlen);
	for (size_t i = 0; rc == LUMEN_OK && i < cfg->n_databases; i++) {
		struct config_database *db = &cfg->databases[i];
		rc = access_rules_compile(&db->access, cfg->schema, err, errlen);
		if (rc == LUMEN_OK)
			rc = finish_limits(cfg, db->limits, db->n_limits, &arena, err, errlen);
	}
	arena_free(&arena);
	return rc;
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
	if (rc == LUMEN_OK)
		rc = finish_security(st.cfg, err, errlen);
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

static void free_strings(char **strings, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(strings[i]);
	free(strings);
}

static void free_limits(struct config_limit *limits, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(limits[i].ndn);
		free(limits[i].dn_text);
		free(limits[i].origin);
	}
	free(limits);
}

static void free_security(struct config *cfg)
{
	access_rules_free(&cfg->access);
	free_limits(cfg->limits, cfg->n_limits);
	for (size_t i = 0; i < cfg->n_authz_regexps; i++) {
		struct config_authz_regexp *r = &cfg->authz_regexps[i];
		if (r->compiled)
			regfree(&r->regex);
		free(r->pattern);
		free(r->replacement);
		free(r->origin);
	}
	free(cfg->authz_regexps);
	for (size_t i = 0; i < cfg->n_access_text; i++)
		free(cfg->access_text[i]);
	free(cfg->access_text);
	free(cfg->tls.certificate_file);
	free(cfg->tls.key_file);
	free(cfg->tls.ca_file);
	free(cfg->tls.cipher_suite);
	free(cfg->password_hash);
}

static void free_database(struct config_database *db)
{
	access_rules_free(&db->access);
	free_limits(db->limits, db->n_limits);
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
	free_security(cfg);
	if (cfg->schema != NULL)
		schema_free(cfg->schema);
	free(cfg->path);
	free(cfg->pidfile);
	free(cfg->argsfile);
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
