/*
 * tools.h — what the operator tools share (tools layer: lumenadd,
 * lumencat, lumenindex, lumenpasswd; src/tools/tool_common.c).
 *
 * Owns: struct tool_database, the tools' view of one `database mdb`
 * section of slapd.conf: the loaded configuration, the chosen database
 * and the struct backend_settings built from it (so the tools open a
 * database exactly as lumend does, indexes included). tool_database_close
 * frees all of it. Progress lines and the closing summary go to stderr.
 *
 * Thread-safety: none needed: every function runs on the tool's main
 * thread.
 *
 * Caveats:
 *  - tool_backend_settings belongs with the configuration (lumend builds
 *    the same struct); it lives here until config offers it.
 *  - The progress line is written only when stderr is a terminal, at most
 *    a few times a second, and erased by tool_progress_finish.
 */
#ifndef LUMEN_TOOLS_H
#define LUMEN_TOOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "backend.h"
#include "config.h"

/* Exit codes of every tool. */
#define TOOL_EXIT_OK 0
#define TOOL_EXIT_FAILURE 1   /* bad input, check failed, database error */
#define TOOL_EXIT_USAGE 2     /* bad command line */

struct tool_database {
	struct config *config;
	const struct config_database *db;
	struct backend_settings settings;   /* points into config and the arrays below */
	const char **suffixes;
	struct backend_index_spec *indexes;
};

/*
 * Loads conf_path (a slapd.conf, or with slapd_d OpenLDAP's cn=config
 * directory: config_load_slapd_d) and picks the database: the one holding `suffix` (a
 * user-form DN equal to or below one of its suffixes) when suffix is not
 * NULL, else the number-th `database` section (1-based, as slapadd -n)
 * when number > 0, else the first mdb database. err receives
 * "what: why" on failure. Errors: those of config_load, LUMEN_ENOTFOUND
 * (no such database), LUMEN_EUNSUPPORTED (not an mdb database),
 * LUMEN_EINVAL (no directory configured), LUMEN_ENOMEM.
 */
int tool_database_open(const char *conf_path, bool slapd_d, const char *suffix, int number,
		       struct tool_database *out, char *err, size_t errlen);
void tool_database_close(struct tool_database *t);

/* ----------------------------------------------- the database tools' main */

/*
 * The options every database tool takes (-f FILE | -F SLAPD.D, -b SUFFIX |
 * -n N, and -l FILE for the tools with a data stream). A tool's argument struct
 * starts with one, so tool_main can open the database it names.
 */
struct tool_target {
	const char *config_path;   /* -f or -F, required */
	bool slapd_d;              /* it came from -F: OpenLDAP's cn=config directory */
	const char *suffix;        /* -b */
	int number;                /* -n, > 0 */
	const char *stream_path;   /* -l; NULL or "-": standard input/output */
};
/* 1 if opt is -f/-F/-b/-n/-l (recorded in t), 0 if it is another option,
 * LUMEN_EINVAL for an -n that is not a number from 1 to 1000 or a second
 * -f/-F. */
int tool_target_option(struct tool_target *t, int opt, const char *arg);
/*
 * getopt(3) over `options` that records -f/-F/-b/-n/-l in t itself: returns
 * the next other option, -1 at the end, '?' for an unknown option or a bad
 * -n.
 */
int tool_getopt(int argc, char **argv, const char *options, struct tool_target *t);
/* LUMEN_OK when -f or -F was given and not both -b and -n, else LUMEN_EINVAL. */
int tool_target_check(const struct tool_target *t);

/* One database tool: what tool_main needs to drive it. */
struct tool_program {
	const char *name;                      /* "lumenadd": prefixes every message */
	void (*usage)(FILE *out);
	/* Fill args (starting with a struct tool_target) from argv; LUMEN_EINVAL
	 * for a bad command line. */
	int (*parse_args)(int argc, char **argv, void *args);
	/* "r" (default standard input), "w" (standard output), or NULL: none. */
	const char *stream_mode;
	/* The work; err holds the reason on failure. */
	int (*run)(void *args, struct tool_database *t, FILE *stream, char *err, size_t errlen);
};

/*
 * `NAME --help` (usage on standard output) and `NAME -V` (the version) as
 * the whole command line: true when answered, and the tool exits 0.
 */
bool tool_answer_help_version(const char *name, void (*usage)(FILE *out), int argc,
			      char **argv);

/*
 * The whole main() of a database tool: --help, -V, the command line (usage and
 * TOOL_EXIT_USAGE when wrong), the database, the stream, run, the error
 * message and the exit code (a stream that fails to flush fails the run).
 */
int tool_main(const struct tool_program *p, void *args, int argc, char **argv);

/*
 * The file path opened with mode, or fallback (stdin/stdout) when path is
 * NULL or "-". NULL after printing "TOOL: PATH: reason" to stderr.
 */
FILE *tool_stream_open(const char *tool, const char *path, const char *mode, FILE *fallback);
/*
 * Closes a stream from tool_stream_open (the fallback stays open).
 * LUMEN_EIO, after printing the reason, when buffered output was lost.
 */
int tool_stream_close(const char *tool, const char *path, FILE *f, FILE *fallback);

/*
 * The backend settings of a configured database: suffixes, directory,
 * map size, readers, sync, indexes. The arrays are allocated into
 * *suffixes and *indexes (caller frees both). Errors: LUMEN_ENOMEM.
 */
int tool_backend_settings(const struct config_database *db, struct backend_settings *out,
			  const char ***suffixes, struct backend_index_spec **indexes);

/* printf into err (truncated if need be: it is a message). */
void tool_error(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Seconds on the monotonic clock. */
double tool_now(void);
/* Peak resident set size of this process, in bytes (getrusage). */
uint64_t tool_peak_rss(void);

struct tool_progress {
	bool enabled;            /* stderr is a terminal */
	double start, last;
	uint64_t total_bytes;    /* input size for the ETA; 0 = unknown */
	bool printed;
};

/* Starts the clock; total_bytes 0 when the input size is unknown (a pipe). */
void tool_progress_start(struct tool_progress *p, uint64_t total_bytes);
/* "N entries, R/s, elapsed, ETA" when due (cheap to call per entry). */
void tool_progress_update(struct tool_progress *p, uint64_t entries, uint64_t bytes_done);
/* Erases the progress line. */
void tool_progress_finish(struct tool_progress *p);

/*
 * The closing line: "VERB: N entries in S s (R entries/s), peak memory M MiB"
 * plus `extra` when not NULL.
 */
void tool_print_summary(FILE *out, const char *verb, uint64_t entries, double seconds,
			const char *extra);

/* Size of a regular file (for the ETA); 0 for a pipe or on error. */
uint64_t tool_file_size(FILE *fp);

/* ------------------------------------------------- walking the tree */
/*
 * Every entry of a database, parents before children: depth-first through
 * dn2id from base (or from every suffix entry), each entry decoded and
 * given its current DN from the tree. lumencat exports with it, lumenindex
 * re-adds with it. The entry passed to fn lives until fn returns.
 */
struct entry;
struct mdb_store;
typedef int (*tool_entry_fn)(void *ctx, uint64_t id, const struct entry *e);

struct tool_walk {
	const struct schema *schema;
	struct mdb_store *store;
	void *txn;                  /* MDB_txn *, read-only snapshot */
	tool_entry_fn fn;
	void *ctx;
	char *err;                  /* filled when the walk itself fails */
	size_t errlen;
	void *scratch;              /* private */
};

/*
 * Calls fn per entry below base (user-form DN; NULL: all suffixes). A
 * base that does not exist is an empty walk. Returns fn's first non-OK
 * result, or LUMEN_ENOTFOUND / LUMEN_EMALFORMED / LUMEN_ENOMEM /
 * LUMEN_EIO from reading the tables (err set).
 */
int tool_walk_tree(struct tool_walk *w, const char *base);

/* ------------------------------------------------- memberOf from groups */
/*
 * The database's `overlay memberof` in a tool (lumenadd, lumenindex
 * --memberof): every entry's memberOf (memberof-memberof-ad) becomes the
 * DNs of the groups (memberof-group-oc) whose member attribute names it,
 * as the overlay keeps it over LDAP; entries already right are not
 * written. Nothing to do (LUMEN_OK) when the section has no such
 * overlay. be is open in tool mode with no write pending
 * (backend_tool_flush first); the changes go through backend_modify,
 * stamped with memberof-dn. *changed counts the entries written.
 * Errors: LUMEN_EMALFORMED (the overlay's directives, or an entry refused
 * the change), LUMEN_ENOMEM, the storage's; err says which.
 */
int tool_memberof_rebuild(struct backend *be, const struct tool_database *t, uint64_t *changed,
			  char *err, size_t errlen);

/* ------------------------------------------- all-or-nothing rewrites */
/*
 * lumenadd and lumenindex never write into the live environment: they
 * build the new data in a staging directory inside the database directory
 * (starting from a compacted copy of the current data, if any) and then
 * rename(2) the staging data.mdb over the database's. A run that stops
 * early leaves the database as it was. Hold the database's db_lock
 * throughout. A stale LMDB lock.mdb left in the directory is reset by
 * LMDB's next opener.
 */

/* "DIRECTORY/.TOOL-PID" into out. Errors: LUMEN_EINVAL (too long). */
int tool_staging_name(const struct tool_database *t, const char *tool, char *out, size_t len,
		      char *err, size_t errlen);
/*
 * Creates the staging directory; copies the current data into it
 * (compacted) when copy_current and the database has data.
 * Errors: LUMEN_EIO, LUMEN_EINVAL, those of mdb_store_open.
 */
int tool_staging_create(const struct tool_database *t, const char *staging, bool copy_current,
			char *err, size_t errlen);
/* Moves the staging data.mdb over the database's and syncs the directory. LUMEN_EIO. */
int tool_staging_commit(const struct tool_database *t, const char *staging, char *err,
			size_t errlen);
/* Deletes the staging directory and its files (after commit or failure). */
void tool_staging_remove(const char *staging);

#endif
