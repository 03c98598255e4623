/*
 * lumenadd — bulk-load LDIF into a database while lumend is stopped.
 *
 *   lumenadd -f slapd.conf [-b SUFFIX | -n N] [-l FILE.ldif] [-c] [-j THREADS]
 *            [-m MB] [-q] [-s] [-u]
 *
 * Fast path: builder threads (-j) parse, check and encode entries and
 * derive their index keys; the writer stores each entry's records and
 * keeps its index keys in memory (-m), writing them table by table in key
 * order when the bound is reached and at the end, so LMDB appends
 * (bulk_load.h, index_postings.h, backend.h's bulk-load path).
 *
 * All or nothing: the load goes into a staging environment next to the
 * database (DIRECTORY/.lumenadd-PID, a compacted copy of the current data
 * when there is any) and replaces DIRECTORY/data.mdb with one rename(2)
 * only when every record was stored (or, with -c, skipped). A load that
 * stops — bad record, full map, ^C, crash — leaves the database exactly as
 * it was; a leftover .lumenadd-* directory can be deleted. The copy costs
 * time proportional to the data already there, nothing for a new database.
 *
 * With `overlay memberof` in the database's section, memberOf is computed
 * from the groups once everything is loaded (tools.h), so loaded entries
 * carry what adds over LDAP would have given them, whatever the order.
 *
 * The database's lock file (db_lock.h) is held from start to end, so a
 * running lumend makes lumenadd refuse, and lumend cannot start meanwhile.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "bulk_load.h"
#include "cpu_count.h"
#include "db_lock.h"
#include "dn.h"
#include "lumen_error.h"
#include "mdb_store.h"
#include "tools.h"

struct add_args {
	struct tool_target target;     /* first: tool_main reads it */
	bool continue_on_error, quick, skip_schema, dry_run;
	unsigned threads;
	size_t memory_limit;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: lumenadd -f slapd.conf | -F slapd.d [-b SUFFIX | -n N] [-l FILE.ldif] [options]\n"
		"       lumenadd -V | --help\n"
		"  -f FILE     the server's configuration (schema, database, indexes)\n"
		"  -F DIR      or OpenLDAP's cn=config directory (lumend -F)\n"
		"  -b SUFFIX   the database holding SUFFIX (default: the first mdb database)\n"
		"  -n N        the N-th database section of the file\n"
		"  -l FILE     LDIF to load (default or '-': standard input)\n"
		"  -c          continue past bad records (they are listed and counted)\n"
		"  -j THREADS  threads building entries (default: the number of cores)\n"
		"  -m MB       memory for records in flight and index keys waiting to\n"
		"              be written in order (default %zu; more = fewer rounds)\n"
		"  -q          quick: trusted input; values are syntax-checked once, on\n"
		"              the way in, not again by the schema check\n"
		"  -s          skip the schema check (trusted input)\n"
		"  -u          dry run: parse and check, write nothing\n"
		"The database must not be served by lumend while lumenadd runs.\n",
		BULK_LOAD_DEFAULT_MEMORY >> 20);
}

static int parse_unsigned(const char *text, unsigned long max, unsigned long *out)
{
	char *end = NULL;
	errno = 0;
	unsigned long v = strtoul(text, &end, 10);
	if (errno != 0 || end == text || *end != '\0' || v == 0 || v > max)
		return LUMEN_EINVAL;
	*out = v;
	return LUMEN_OK;
}

static int parse_args(int argc, char **argv, void *args)
{
	struct add_args *a = args;
	unsigned long v = 0;
	int opt;

	memset(a, 0, sizeof(*a));
	unsigned cpus = cpu_count_usable();
	a->threads = cpus > BULK_LOAD_MAX_THREADS ? BULK_LOAD_MAX_THREADS : cpus;
	a->memory_limit = BULK_LOAD_DEFAULT_MEMORY;
	while ((opt = tool_getopt(argc, argv, "f:F:b:n:l:cj:m:qsu", &a->target)) != -1) {
		switch (opt) {
		case 'c': a->continue_on_error = true; break;
		case 'j':
			if (parse_unsigned(optarg, BULK_LOAD_MAX_THREADS, &v) != LUMEN_OK)
				return LUMEN_EINVAL;
			a->threads = (unsigned)v;
			break;
		case 'm':
			if (parse_unsigned(optarg, 1UL << 20, &v) != LUMEN_OK)
				return LUMEN_EINVAL;
			a->memory_limit = (size_t)v << 20;
			break;
		case 'q': a->quick = true; break;
		case 's': a->skip_schema = true; break;
		case 'u': a->dry_run = true; break;
		default: return LUMEN_EINVAL;
		}
	}
	return optind == argc ? LUMEN_OK : LUMEN_EINVAL;
}

/* ---------------------------------------------------------------- load */

static int flush(struct backend *be, const char *directory, char *err, size_t errlen)
{
	int rc = backend_tool_flush(be);
	if (rc != LUMEN_OK)
		tool_error(err, errlen, "%s: final commit failed: %s", directory, lumen_strerror(rc));
	return rc;
}

/* `overlay memberof`: memberOf as adds over LDAP would have left it. */
static int memberof(struct backend *be, const struct tool_database *t, const char *directory,
		    char *err, size_t errlen)
{
	uint64_t changed = 0;
	int rc = tool_memberof_rebuild(be, t, &changed, err, errlen);
	if (rc == LUMEN_OK && changed > 0) {
		fprintf(stderr, "lumenadd: memberOf set on %llu entries (overlay memberof)\n",
			(unsigned long long)changed);
		rc = flush(be, directory, err, errlen);
	}
	return rc;
}

static int load_into(const struct tool_database *t, const char *directory, FILE *input,
		     const struct bulk_load_options *o, struct bulk_load_stats *stats,
		     char *err, size_t errlen)
{
	struct backend_settings settings = t->settings;
	struct backend *be = NULL;

	settings.directory = directory;
	settings.tool_mode = true;
	int rc = backend_open(t->config->schema, &settings, &be, err, errlen);
	if (rc != LUMEN_OK)
		return rc;
	rc = bulk_load_run(be, t->config->schema, input, o, stats, err, errlen);
	if (rc == LUMEN_OK)
		rc = flush(be, directory, err, errlen);
	if (rc == LUMEN_OK)
		rc = memberof(be, t, directory, err, errlen);
	backend_close(be);
	return rc;
}

static int run(void *args, struct tool_database *t, FILE *input, char *err, size_t errlen)
{
	const struct add_args *a = args;
	struct bulk_load_options o = {
		.skip_schema = a->skip_schema, .quick = a->quick, .continue_on_error = a->continue_on_error,
		.progress = true, .threads = a->threads, .memory_limit = a->memory_limit,
		.input_size = tool_file_size(input), .errors = stderr,
	};
	struct bulk_load_stats stats;
	struct arena arena;
	struct db_lock lock = { .fd = -1 };
	char staging[4096], extra[128];
	bool staged = false;
	int rc = LUMEN_OK;

	arena_init(&arena, 0);
	if (t->db->rootdn != NULL &&
	    dn_normalize(t->config->schema, t->db->rootdn, strlen(t->db->rootdn), &arena,
			 &o.rootdn_ndn) != LUMEN_OK)
		o.rootdn_ndn = (struct ber_view){ NULL, 0 };
	if (a->dry_run) {
		rc = bulk_load_run(NULL, t->config->schema, input, &o, &stats, err, errlen);
		goto summary;
	}
	rc = db_lock_acquire(t->db->directory, "lumenadd", &lock, err, errlen);
	if (rc != LUMEN_OK)
		goto done;
	rc = tool_staging_name(t, "lumenadd", staging, sizeof(staging), err, errlen);
	if (rc != LUMEN_OK)
		goto done;
	staged = true;
	rc = tool_staging_create(t, staging, true, err, errlen);
	if (rc == LUMEN_OK)
		rc = load_into(t, staging, input, &o, &stats, err, errlen);
	if (rc == LUMEN_OK)
		rc = tool_staging_commit(t, staging, err, errlen);
summary:
	if (rc == LUMEN_OK || rc == LUMEN_EMALFORMED) {
		snprintf(extra, sizeof(extra), "%llu bad record(s) skipped%s",
			 (unsigned long long)stats.skipped,
			 rc != LUMEN_OK ? ", nothing loaded" : a->dry_run ? " (dry run)" : "");
		tool_print_summary(stderr, a->dry_run ? "checked" : "loaded",
				   rc == LUMEN_OK ? stats.loaded : 0, stats.seconds, extra);
	}
done:
	if (staged)
		tool_staging_remove(staging);
	db_lock_release(&lock);
	arena_free(&arena);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct tool_program program = {
		"lumenadd", usage, parse_args, "r", run,
	};
	struct add_args a;
	return tool_main(&program, &a, argc, argv);
}
