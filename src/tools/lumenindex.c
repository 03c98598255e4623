/*
 * lumenindex — rebuild or check a database's indexes while lumend is stopped.
 *
 *   lumenindex -f slapd.conf [-b SUFFIX | -n N] [ATTR...]
 *   lumenindex -f slapd.conf [-b SUFFIX | -n N] --check
 *
 * Rebuild: every entry is re-added, parents first, into a staging copy
 * built with the index lines slapd.conf has now, which then replaces the
 * database (tools.h, all-or-nothing; operational attributes are kept as
 * stored). Named attributes must be indexed in slapd.conf; today the
 * rebuild covers every index (the backend has no per-table rebuild yet).
 * --check: backend_check_indexes; exit 1 with the first disagreements.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "arena.h"
#include "backend.h"
#include "db_lock.h"
#include "dn.h"
#include "entry.h"
#include "ldap_result_codes.h"
#include "lumen_error.h"
#include "mdb_store.h"
#include "tools.h"

/* Problems printed by --check before it only counts. */
#define CHECK_PRINT_MAX 20

struct index_args {
	const char *config_path, *suffix;
	int number;
	bool check;
	char **attributes;
	size_t n_attributes;
};

struct rebuild {
	struct backend *be;
	struct arena arena;
	struct ber_view rootdn_ndn;
	uint64_t entries;
	struct tool_progress progress;
	char *err;
	size_t errlen;
};

struct check_report {
	uint64_t printed;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: lumenindex -f slapd.conf [-b SUFFIX | -n N] [--check | ATTR...]\n"
		"  rebuilds the indexes of the database after its index lines changed\n"
		"  (ATTR...: attributes that must be indexed; all indexes are rebuilt);\n"
		"  --check verifies that every index agrees with the entries.\n"
		"The database must not be served by lumend while lumenindex rebuilds.\n");
}

static int parse_args(int argc, char **argv, struct index_args *a)
{
	memset(a, 0, sizeof(*a));
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--check") == 0) {
			a->check = true;
			argv[i] = (char *)"-C";
		}
	int opt;
	while ((opt = getopt(argc, argv, "f:b:n:C")) != -1) {
		switch (opt) {
		case 'f': a->config_path = optarg; break;
		case 'b': a->suffix = optarg; break;
		case 'n': a->number = atoi(optarg); if (a->number <= 0) return LUMEN_EINVAL; break;
		case 'C': a->check = true; break;
		default: return LUMEN_EINVAL;
		}
	}
	a->attributes = argv + optind;
	a->n_attributes = (size_t)(argc - optind);
	if (a->config_path == NULL || (a->suffix != NULL && a->number > 0) ||
	    (a->check && a->n_attributes > 0))
		return LUMEN_EINVAL;
	return LUMEN_OK;
}

/* Every named attribute must have an index line. */
static int check_named(const struct index_args *a, const struct tool_database *t, char *err,
		       size_t errlen)
{
	for (size_t i = 0; i < a->n_attributes; i++) {
		bool found = false;
		for (size_t k = 0; k < t->settings.n_indexes && !found; k++)
			found = strcasecmp(t->settings.indexes[k].attribute, a->attributes[i]) == 0;
		if (!found) {
			tool_error(err, errlen, "%s: \"%s\" has no index line in %s",
				   t->db->origin, a->attributes[i], t->config->path);
			return LUMEN_ENOTFOUND;
		}
	}
	return LUMEN_OK;
}

/* ------------------------------------------------------------- --check */

static void print_problem(void *ctx, const char *problem)
{
	struct check_report *r = ctx;
	if (r->printed++ < CHECK_PRINT_MAX)
		fprintf(stderr, "lumenindex: %s\n", problem);
}

static int run_check(const struct tool_database *t, char *err, size_t errlen)
{
	struct backend_settings settings = t->settings;
	struct backend *be = NULL;
	struct check_report report = { 0 };
	uint64_t problems = 0;

	settings.read_only = true;
	int rc = backend_open(t->config->schema, &settings, &be, err, errlen);
	if (rc != LUMEN_OK)
		return rc;
	rc = backend_check_indexes(be, print_problem, &report, &problems);
	backend_close(be);
	if (rc != LUMEN_OK) {
		tool_error(err, errlen, "check stopped: %s", lumen_strerror(rc));
		return rc;
	}
	if (problems > 0) {
		tool_error(err, errlen, "%llu problem(s) found%s: run lumenindex to rebuild",
			   (unsigned long long)problems,
			   problems > CHECK_PRINT_MAX ? " (first ones listed)" : "");
		return LUMEN_EMALFORMED;
	}
	fprintf(stderr, "lumenindex: every index agrees with the entries\n");
	return LUMEN_OK;
}

/* ------------------------------------------------------------- rebuild */

static int readd_entry(void *ctx, uint64_t id, const struct entry *e)
{
	struct rebuild *r = ctx;
	struct backend_op op;

	memset(&op, 0, sizeof(op));
	arena_reset(&r->arena);
	op.arena = &r->arena;
	op.requester_ndn = r->rootdn_ndn;
	op.is_root = true;
	op.from_tool = true;
	int rc = backend_add_entry(r->be, &op, e);
	if (rc == LUMEN_OK && op.result_code != LDAP_SUCCESS)
		rc = LUMEN_ESCHEMA;
	if (rc != LUMEN_OK) {
		tool_error(r->err, r->errlen, "entry %llu (%s): %s%s%s", (unsigned long long)id,
			   (const char *)e->dn.ptr, ldap_result_name(op.result_code),
			   op.diagnostic != NULL ? ": " : "", op.diagnostic ? op.diagnostic : "");
		return rc;
	}
	tool_progress_update(&r->progress, ++r->entries, 0);
	return LUMEN_OK;
}

/* Re-adds every entry of the live database into be (the staging copy). */
static int copy_entries(const struct tool_database *t, struct rebuild *r)
{
	struct mdb_store *store = NULL;
	MDB_txn *txn = NULL;
	struct mdb_store_options o = {
		.directory = t->db->directory, .maxsize = (size_t)t->db->maxsize, .read_only = true,
	};

	int rc = mdb_store_open(&o, &store, r->err, r->errlen);
	if (rc != LUMEN_OK)
		return rc;
	rc = mdb_store_map_error(mdb_txn_begin(store->env, NULL, MDB_RDONLY, &txn));
	if (rc == LUMEN_OK) {
		struct tool_walk walk = {
			.schema = t->config->schema, .store = store, .txn = txn, .fn = readd_entry,
			.ctx = r, .err = r->err, .errlen = r->errlen,
		};
		rc = tool_walk_tree(&walk, NULL);
		mdb_txn_abort(txn);
	}
	mdb_store_close(store);
	return rc;
}

static int run_rebuild(const struct tool_database *t, char *err, size_t errlen)
{
	struct rebuild r = { .err = err, .errlen = errlen };
	struct backend_settings settings = t->settings;
	struct db_lock lock = { .fd = -1 };
	char staging[4096];
	bool staged = false;
	double start = tool_now();
	struct arena rootdn_arena;

	arena_init(&r.arena, 0);
	arena_init(&rootdn_arena, 0);
	int rc = db_lock_acquire(t->db->directory, "lumenindex", &lock, err, errlen);
	if (rc == LUMEN_OK)
		rc = tool_staging_name(t, "lumenindex", staging, sizeof(staging), err, errlen);
	if (rc != LUMEN_OK)
		goto done;
	staged = true;
	rc = tool_staging_create(t, staging, false, err, errlen);
	settings.directory = staging;
	settings.tool_mode = true;
	if (rc == LUMEN_OK)
		rc = backend_open(t->config->schema, &settings, &r.be, err, errlen);
	/* creatorsName of entries that lack one (none should) */
	if (rc == LUMEN_OK && t->db->rootdn != NULL &&
	    dn_normalize(t->config->schema, t->db->rootdn, strlen(t->db->rootdn), &rootdn_arena,
			 &r.rootdn_ndn) != LUMEN_OK)
		r.rootdn_ndn = (struct ber_view){ NULL, 0 };
	tool_progress_start(&r.progress, 0);
	if (rc == LUMEN_OK)
		rc = copy_entries(t, &r);
	tool_progress_finish(&r.progress);
	if (rc == LUMEN_OK && (rc = backend_tool_flush(r.be)) != LUMEN_OK)
		tool_error(err, errlen, "final commit failed: %s", lumen_strerror(rc));
	backend_close(r.be);
	if (rc == LUMEN_OK)
		rc = tool_staging_commit(t, staging, err, errlen);
	if (rc == LUMEN_OK)
		tool_print_summary(stderr, "reindexed", r.entries, tool_now() - start, NULL);
done:
	if (staged)
		tool_staging_remove(staging);
	db_lock_release(&lock);
	arena_free(&r.arena);
	arena_free(&rootdn_arena);
	return rc;
}

int main(int argc, char **argv)
{
	struct index_args a;
	struct tool_database t;
	char err[1024] = "";

	if (argc == 2 && strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		return TOOL_EXIT_OK;
	}
	if (parse_args(argc, argv, &a) != LUMEN_OK) {
		usage(stderr);
		return TOOL_EXIT_USAGE;
	}
	if (tool_database_open(a.config_path, a.suffix, a.number, &t, err, sizeof(err)) !=
	    LUMEN_OK) {
		fprintf(stderr, "lumenindex: %s\n", err);
		return TOOL_EXIT_FAILURE;
	}
	int rc = check_named(&a, &t, err, sizeof(err));
	if (rc == LUMEN_OK)
		rc = a.check ? run_check(&t, err, sizeof(err)) : run_rebuild(&t, err, sizeof(err));
	if (rc != LUMEN_OK)
		fprintf(stderr, "lumenindex: %s\n", err[0] != '\0' ? err : lumen_strerror(rc));
	tool_database_close(&t);
	return rc == LUMEN_OK ? TOOL_EXIT_OK : TOOL_EXIT_FAILURE;
}
