/*
 * tool_staging.c — all-or-nothing rewrites of a database for lumenadd and
 * lumenindex (tools.h): build the new data in DIRECTORY/.TOOL-PID, then
 * rename(2) its data.mdb over the database's.
 */
#include "tools.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lumen_error.h"
#include "mdb_store.h"

int tool_staging_name(const struct tool_database *t, const char *tool, char *out, size_t len,
		      char *err, size_t errlen)
{
	if ((size_t)snprintf(out, len, "%s/.%s-%ld", t->db->directory, tool, (long)getpid()) >=
	    len) {
		snprintf(err, errlen, "%s: directory name too long", t->db->directory);
		return LUMEN_EINVAL;
	}
	return LUMEN_OK;
}

/* dir/name into out; false if it does not fit. */
static bool path_join(char *out, size_t len, const char *dir, const char *name)
{
	return (size_t)snprintf(out, len, "%s/%s", dir, name) < len;
}

/* Removes the staging directory and the LMDB files in it. */
void tool_staging_remove(const char *staging)
{
	char path[4096];
	DIR *d = opendir(staging);
	struct dirent *de;

	while (d != NULL && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (path_join(path, sizeof(path), staging, de->d_name))
			unlink(path);
	}
	if (d != NULL)
		closedir(d);
	rmdir(staging);
}

/*
 * Makes the staging directory and, if the database has data, a compacted
 * copy of it there. Errors: LUMEN_EIO, and those of mdb_store_open.
 */
int tool_staging_create(const struct tool_database *t, const char *staging, bool copy_current,
			char *err, size_t errlen)
{
	char data[4096];
	struct mdb_store *store = NULL;

	if (mkdir(staging, 0700) != 0) {
		tool_error(err, errlen, "%s: cannot create: %s", staging, strerror(errno));
		return LUMEN_EIO;
	}
	if (!path_join(data, sizeof(data), t->db->directory, "data.mdb")) {
		tool_error(err, errlen, "%s: directory name too long", t->db->directory);
		return LUMEN_EINVAL;
	}
	if (!copy_current || access(data, F_OK) != 0)
		return LUMEN_OK;   /* a new database: nothing to carry over */
	struct mdb_store_options o = {
		.directory = t->db->directory, .maxsize = (size_t)t->db->maxsize, .read_only = true,
	};
	int rc = mdb_store_open(&o, &store, err, errlen);
	if (rc != LUMEN_OK)
		return rc;
	int mrc = mdb_env_copy2(store->env, staging, MDB_CP_COMPACT);
	mdb_store_close(store);
	if (mrc != MDB_SUCCESS) {
		tool_error(err, errlen, "%s: cannot copy the database to %s: %s", t->db->directory,
			 staging, mdb_strerror(mrc));
		return LUMEN_EIO;
	}
	return LUMEN_OK;
}

/* Moves the loaded data.mdb over the database's, atomically, and syncs the directory. */
int tool_staging_commit(const struct tool_database *t, const char *staging, char *err,
			  size_t errlen)
{
	char from[4096], to[4096];

	if (!path_join(from, sizeof(from), staging, "data.mdb") ||
	    !path_join(to, sizeof(to), t->db->directory, "data.mdb")) {
		tool_error(err, errlen, "%s: directory name too long", t->db->directory);
		return LUMEN_EINVAL;
	}
	if (rename(from, to) != 0) {
		tool_error(err, errlen, "cannot move %s to %s: %s", from, to, strerror(errno));
		return LUMEN_EIO;
	}
	int fd = open(t->db->directory, O_RDONLY | O_DIRECTORY);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	return LUMEN_OK;
}

