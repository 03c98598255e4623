/*
 * lumenbackup — a consistent, compacted copy of a database, taken while
 * lumend keeps serving it.
 *
 *   lumenbackup -f slapd.conf [-b SUFFIX | -n N] -o DIR
 *
 * LMDB copies one read snapshot (mdb_env_copy2 with MDB_CP_COMPACT): the
 * copy holds every write committed before it started and none after, and
 * leaves out free pages, so it is often smaller than the live file. Writers
 * are not blocked; the snapshot only keeps the pages it reads from being
 * reused until the copy ends. DIR receives data.mdb and nothing else (no
 * lock file, no configuration). DIR is created if missing and must be
 * empty otherwise, so an older backup is never overwritten half-way.
 *
 * Restore: stop lumend, replace data.mdb in the database's directory with
 * the backup's (remove the stale lock.mdb too), start lumend.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lumen_error.h"
#include "mdb_store.h"
#include "tools.h"

#define BACKUP_DATA_FILE "data.mdb"

struct backup_args {
	struct tool_target target;   /* -f/-F, -b, -n */
	const char *output_dir;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: lumenbackup -f slapd.conf | -F slapd.d [-b SUFFIX | -n N] -o DIR\n"
		"       lumenbackup -V | --help\n"
		"  -f FILE     the server's configuration\n"
		"  -F DIR      or OpenLDAP's cn=config directory (lumend -F)\n"
		"  -b SUFFIX   back up the database holding SUFFIX\n"
		"  -n N        back up the N-th database section (default: the first mdb)\n"
		"  -o DIR      write DIR/" BACKUP_DATA_FILE " (DIR must be empty or absent)\n"
		"Safe to run while lumend serves the database. To restore, stop lumend and\n"
		"put the backup's " BACKUP_DATA_FILE " in place of the database's.\n");
}

static int parse_args(int argc, char **argv, struct backup_args *a)
{
	int opt;
	memset(a, 0, sizeof(*a));
	while ((opt = tool_getopt(argc, argv, "f:F:b:n:o:", &a->target)) != -1) {
		if (opt != 'o')
			return LUMEN_EINVAL;
		a->output_dir = optarg;
	}
	if (optind != argc || a->output_dir == NULL || tool_target_check(&a->target) != LUMEN_OK)
		return LUMEN_EINVAL;
	return LUMEN_OK;
}

/*
 * Create DIR, or accept it if it exists and is empty. LUMEN_EEXIST (not
 * empty, or not a directory), LUMEN_EIO (cannot create or read it).
 */
static int prepare_output(const char *dir, char *err, size_t errlen)
{
	if (mkdir(dir, 0700) == 0)
		return LUMEN_OK;
	if (errno != EEXIST) {
		tool_error(err, errlen, "%s: cannot create: %s", dir, strerror(errno));
		return LUMEN_EIO;
	}
	DIR *d = opendir(dir);
	if (d == NULL) {
		tool_error(err, errlen, "%s: %s", dir, strerror(errno));
		return errno == ENOTDIR ? LUMEN_EEXIST : LUMEN_EIO;
	}
	int rc = LUMEN_OK;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
			tool_error(err, errlen, "%s: not empty (found %s); refusing to overwrite",
				   dir, de->d_name);
			rc = LUMEN_EEXIST;
			break;
		}
	}
	closedir(d);
	return rc;
}

/* Copy the snapshot; a failed copy leaves no partial data file behind. */
static int copy_store(struct mdb_store *store, const char *dir, char *err, size_t errlen)
{
	int mdb_rc = mdb_env_copy2(store->env, dir, MDB_CP_COMPACT);
	if (mdb_rc == 0)
		return LUMEN_OK;
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, BACKUP_DATA_FILE);
	unlink(path);
	tool_error(err, errlen, "copying %s to %s: %s", store->directory, dir,
		   mdb_strerror(mdb_rc));
	return mdb_store_map_error(mdb_rc);
}

static int open_live_store(const struct tool_database *t, struct mdb_store **store,
			   char *err, size_t errlen)
{
	/* Read-only: a backup takes no writer lock and needs no write access to data.mdb. */
	struct mdb_store_options options = {
		.directory = t->db->directory,
		.maxsize = (size_t)t->db->maxsize,
		.maxreaders = t->db->maxreaders,
		.read_only = true,
	};
	return mdb_store_open(&options, store, err, errlen);
}

static void print_result(const char *dir, const char *source, double seconds)
{
	char path[4096];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s", dir, BACKUP_DATA_FILE);
	unsigned long long bytes = stat(path, &st) == 0 ? (unsigned long long)st.st_size : 0;
	fprintf(stderr, "lumenbackup: %s -> %s: %.1f MiB (%llu bytes) in %.2f s\n", source, path,
		(double)bytes / (1024.0 * 1024.0), bytes, seconds);
}

static int run(const struct backup_args *a, char *err, size_t errlen)
{
	struct tool_database t;
	struct mdb_store *store = NULL;
	int rc = tool_database_open(a->target.config_path, a->target.slapd_d, a->target.suffix,
				    a->target.number, &t, err, errlen);
	if (rc != LUMEN_OK)
		return rc;
	double start = tool_now();
	rc = prepare_output(a->output_dir, err, errlen);
	if (rc == LUMEN_OK)
		rc = open_live_store(&t, &store, err, errlen);
	if (rc == LUMEN_OK)
		rc = copy_store(store, a->output_dir, err, errlen);
	if (rc == LUMEN_OK)
		print_result(a->output_dir, t.db->directory, tool_now() - start);
	mdb_store_close(store);
	tool_database_close(&t);
	return rc;
}

int main(int argc, char **argv)
{
	struct backup_args args;
	char err[1024] = "";
	if (tool_answer_help_version("lumenbackup", usage, argc, argv))
		return TOOL_EXIT_OK;
	if (parse_args(argc, argv, &args) != LUMEN_OK) {
		usage(stderr);
		return TOOL_EXIT_USAGE;
	}
	if (run(&args, err, sizeof(err)) != LUMEN_OK) {
		fprintf(stderr, "lumenbackup: %s\n", err);
		return TOOL_EXIT_FAILURE;
	}
	return TOOL_EXIT_OK;
}
