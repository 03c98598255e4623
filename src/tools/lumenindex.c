/*
 * lumenindex — rebuild or check a database's indexes while lumend is stopped.
 *
 *   lumenindex -f slapd.conf [-b SUFFIX | -n N] [-m MiB] [ATTR...]
 *   lumenindex -f slapd.conf [-b SUFFIX | -n N] [-m MiB] --check
 *   lumenindex -f slapd.conf [-b SUFFIX | -n N] --memberof
 *
 * Rebuild: the index tables of the named attributes (every index table
 * when none is named) are emptied and refilled from the stored entries
 * (backend_reindex: one pass over id2entry, keys written in order) in a
 * compacted staging copy of the database, which then replaces it
 * (tools.h, all-or-nothing). Entries, the tree and the other tables are
 * copied as they are. Named attributes must have an index line.
 * --check: backend_check_indexes_with (backend.h says what it checks);
 * prints the first disagreements, which tables to rebuild, and exits 1.
 * An index line whose table does not exist yet (added after the load) is
 * reported as such, and the other tables are still checked.
 * -m: memory for the keys held between two walks of the index tables.
 * --memberof: every memberOf recomputed from the groups, as the
 * database's `overlay memberof` keeps it (tools.h), in a staging copy
 * like a rebuild.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "backend.h"
#include "config_memberof.h"
#include "db_lock.h"
#include "lumen_error.h"
#include "schema.h"
#include "tools.h"

/* Problems printed by --check before it only counts. */
#define CHECK_PRINT_MAX 20

struct index_args {
	struct tool_target target;     /* first: tool_main reads it */
	bool check;
	bool memberof;
	size_t memory_limit;           /* bytes; 0 = the backend's default */
	char **attributes;
	size_t n_attributes;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: lumenindex -f slapd.conf | -F slapd.d [-b SUFFIX | -n N] [-m MiB]\n"
		"                  [--check | --memberof | ATTR...]\n"
		"       lumenindex -V | --help\n"
		"  -F DIR: OpenLDAP's cn=config directory instead of slapd.conf (lumend -F).\n"
		"  rebuilds the index tables of ATTR... (all when none is named) after the\n"
		"  index lines changed; --check verifies that every index agrees with the\n"
		"  entries; --memberof recomputes every memberOf from the groups (the\n"
		"  database needs `overlay memberof`). -m: memory for index keys between\n"
		"  two walks of the tables (default %zu MiB).\n"
		"The database must not be served by lumend while lumenindex rebuilds.\n",
		BACKEND_INDEX_PASS_DEFAULT_MEMORY >> 20);
}

static int parse_args(int argc, char **argv, void *args)
{
	struct index_args *a = args;
	memset(a, 0, sizeof(*a));
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--check") == 0)
			argv[i] = (char *)"-C";
		else if (strcmp(argv[i], "--memberof") == 0)
			argv[i] = (char *)"-M";
	}
	int opt;
	long mib;
	while ((opt = tool_getopt(argc, argv, "f:F:b:n:m:CM", &a->target)) != -1) {
		switch (opt) {
		case 'm':
			mib = atol(optarg);
			if (mib <= 0)
				return LUMEN_EINVAL;
			a->memory_limit = (size_t)mib << 20;
			break;
		case 'C': a->check = true; break;
		case 'M': a->memberof = true; break;
		default: return LUMEN_EINVAL;
		}
	}
	a->attributes = argv + optind;
	a->n_attributes = (size_t)(argc - optind);
	if ((a->check || a->memberof) && a->n_attributes > 0)
		return LUMEN_EINVAL;
	if (a->check && a->memberof)
		return LUMEN_EINVAL;
	return LUMEN_OK;
}

/* Every named attribute must have an index line (names, aliases or OIDs). */
static int check_named(const struct index_args *a, const struct tool_database *t, char *err,
		       size_t errlen)
{
	const struct schema *schema = t->config->schema;

	for (size_t i = 0; i < a->n_attributes; i++) {
		const char *name = a->attributes[i];
		const struct attribute_type *type = schema_attribute_type(schema, name, strlen(name));
		bool found = false;
		for (size_t k = 0; k < t->settings.n_indexes && type != NULL && !found; k++) {
			const char *line = t->settings.indexes[k].attribute;
			found = schema_attribute_type(schema, line, strlen(line)) == type;
		}
		if (!found) {
			tool_error(err, errlen, "%s: \"%s\" has no index line in %s",
				   t->db->origin, name, t->config->path);
			return LUMEN_ENOTFOUND;
		}
	}
	return LUMEN_OK;
}

/* ------------------------------------------------------------- --check */

static void print_problem(void *ctx, const char *problem)
{
	(void)ctx;
	fprintf(stderr, "lumenindex: %s\n", problem);
}

/*
 * The settings without the index lines whose table does not exist yet,
 * each reported; *n_missing counts them. Errors: those of
 * backend_missing_index_tables, LUMEN_ENOMEM.
 */
static int settings_without_missing(const struct tool_database *t, struct backend_settings *out,
				    struct backend_index_spec **specs, size_t *n_missing,
				    char *err, size_t errlen)
{
	size_t n = t->settings.n_indexes;
	bool *missing = calloc(n ? n : 1, sizeof(*missing));

	*out = t->settings;
	*n_missing = 0;
	*specs = calloc(n ? n : 1, sizeof(**specs));
	int rc = missing == NULL || *specs == NULL ? LUMEN_ENOMEM : LUMEN_OK;
	if (rc == LUMEN_OK)
		rc = backend_missing_index_tables(t->config->schema, &t->settings, missing, err,
						  errlen);
	out->indexes = *specs;
	out->n_indexes = 0;
	for (size_t i = 0; i < n && rc == LUMEN_OK; i++) {
		if (!missing[i]) {
			(*specs)[out->n_indexes++] = t->settings.indexes[i];
			continue;
		}
		(*n_missing)++;
		fprintf(stderr, "lumenindex: index table for %s missing: run lumenindex -f %s %s\n",
			t->settings.indexes[i].attribute, t->config->path,
			t->settings.indexes[i].attribute);
	}
	free(missing);
	return rc;
}

/* "run lumenindex -f CONF ATTR..." naming the tables with problems. */
static void advise_rebuild(const struct tool_database *t, struct backend *be,
			   const uint64_t *table_problems)
{
	fprintf(stderr, "lumenindex: to rebuild: lumenindex -f %s", t->config->path);
	for (size_t i = 0; i < backend_index_count(be); i++)
		if (table_problems[i] > 0)
			fprintf(stderr, " %s", backend_index_name(be, i));
	fprintf(stderr, "\n");
}

static int run_check(const struct index_args *a, const struct tool_database *t, char *err,
		     size_t errlen)
{
	struct backend_settings settings;
	struct backend_index_spec *specs = NULL;
	struct backend *be = NULL;
	uint64_t problems = 0, *table_problems = NULL;
	size_t n_missing = 0;
	double start = tool_now();
	struct backend_index_pass pass = {
		.memory_limit = a->memory_limit, .max_reported = CHECK_PRINT_MAX,
	};

	int rc = settings_without_missing(t, &settings, &specs, &n_missing, err, errlen);
	settings.read_only = true;
	if (rc == LUMEN_OK)
		rc = backend_open(t->config->schema, &settings, &be, err, errlen);
	if (rc == LUMEN_OK) {
		table_problems = calloc(backend_index_count(be) + 1, sizeof(*table_problems));
		pass.table_problems = table_problems;
		rc = table_problems == NULL ? LUMEN_ENOMEM
		     : backend_check_indexes_with(be, &pass, print_problem, NULL, &problems);
		if (rc != LUMEN_OK)
			tool_error(err, errlen, "check stopped: %s", lumen_strerror(rc));
	}
	if (rc == LUMEN_OK && problems > 0)
		advise_rebuild(t, be, table_problems);
	backend_close(be);
	free(table_problems);
	free(specs);
	if (rc != LUMEN_OK)
		return rc;
	if (problems > 0 || n_missing > 0) {
		tool_error(err, errlen, "%llu problem(s) found%s, %zu index table(s) missing",
			   (unsigned long long)problems,
			   problems > CHECK_PRINT_MAX ? " (the first ones listed)" : "", n_missing);
		return LUMEN_EMALFORMED;
	}
	char extra[64];
	snprintf(extra, sizeof(extra), "%u round(s)", pass.rounds);
	tool_print_summary(stderr, "checked", pass.entries, tool_now() - start, extra);
	fprintf(stderr, "lumenindex: every index agrees with the entries\n");
	return LUMEN_OK;
}

/* ------------------------------------------------------------- rebuild */

/*
 * Rebuilds the named tables (all when none is named) in a compacted copy
 * of the database, then puts the copy in its place: all-or-nothing. The
 * rebuild commits as it goes (backend.h, backend_reindex), so a single
 * write transaction in place would hold every page of the rebuilt tables
 * dirty in memory until the end; the copy costs one sequential read and
 * write of the data instead.
 */
static int rebuild_in(const struct index_args *a, const struct tool_database *t,
		      const char *staging, struct backend_index_pass *pass, char *err,
		      size_t errlen)
{
	struct backend_settings settings = t->settings;
	struct backend *be = NULL;

	settings.directory = staging;
	settings.tool_mode = true;
	int rc = tool_staging_create(t, staging, true, err, errlen);
	if (rc == LUMEN_OK)
		rc = backend_open(t->config->schema, &settings, &be, err, errlen);
	if (rc != LUMEN_OK)
		return rc;
	if (a->memberof) {
		rc = tool_memberof_rebuild(be, t, &pass->entries, err, errlen);
	} else {
		rc = backend_reindex(be, (const char *const *)a->attributes, a->n_attributes,
				     pass);
		if (rc != LUMEN_OK)
			tool_error(err, errlen, "rebuilding the indexes: %s", lumen_strerror(rc));
	}
	if (rc == LUMEN_OK && (rc = backend_tool_flush(be)) != LUMEN_OK)
		tool_error(err, errlen, "final commit failed: %s", lumen_strerror(rc));
	backend_close(be);
	return rc;
}

static int run_rebuild(const struct index_args *a, const struct tool_database *t, char *err,
		       size_t errlen)
{
	struct db_lock lock = { .fd = -1 };
	struct backend_index_pass pass = { .memory_limit = a->memory_limit };
	char staging[4096], extra[512];
	bool staged = false;
	double start = tool_now();

	int rc = db_lock_acquire(t->db->directory, "lumenindex", &lock, err, errlen);
	if (rc == LUMEN_OK)
		rc = tool_staging_name(t, "lumenindex", staging, sizeof(staging), err, errlen);
	if (rc != LUMEN_OK)
		goto done;
	staged = true;
	rc = rebuild_in(a, t, staging, &pass, err, errlen);
	if (rc == LUMEN_OK)
		rc = tool_staging_commit(t, staging, err, errlen);
	if (rc != LUMEN_OK)
		goto done;
	if (a->memberof) {
		tool_print_summary(stderr, "memberOf recomputed on", pass.entries,
				   tool_now() - start, NULL);
		goto done;
	}
	int at = snprintf(extra, sizeof(extra), "%u round(s), tables:", pass.rounds);
	for (size_t i = 0; i < a->n_attributes && at > 0 && (size_t)at < sizeof(extra); i++)
		at += snprintf(extra + at, sizeof(extra) - (size_t)at, " %s", a->attributes[i]);
	if (a->n_attributes == 0)
		snprintf(extra + at, sizeof(extra) - (size_t)at, " all");
	tool_print_summary(stderr, "reindexed", pass.entries, tool_now() - start, extra);
done:
	if (staged)
		tool_staging_remove(staging);
	db_lock_release(&lock);
	return rc;
}

static int run_tool(void *args, struct tool_database *t, FILE *unused, char *err, size_t errlen)
{
	const struct index_args *a = args;
	(void)unused;
	int rc = check_named(a, t, err, errlen);
	if (rc == LUMEN_OK && a->memberof && config_database_overlay(t->db, "memberof") == NULL) {
		tool_error(err, errlen, "%s: --memberof: the database has no \"overlay memberof\" "
			   "in %s", t->db->origin, t->config->path);
		rc = LUMEN_ENOTFOUND;
	}
	if (rc == LUMEN_OK)
		rc = a->check ? run_check(a, t, err, errlen) : run_rebuild(a, t, err, errlen);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct tool_program program = {
		"lumenindex", usage, parse_args, NULL, run_tool,
	};
	struct index_args a;
	return tool_main(&program, &a, argc, argv);
}
