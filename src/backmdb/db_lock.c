/*
 * db_lock.c — the writer's lock file of a database directory (db_lock.h).
 */
#include "db_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "lumen_error.h"

/* Reads the holder's "PID NAME" line into text (NUL-terminated, no newline). */
static void read_holder(int fd, char *text, size_t len)
{
	ssize_t n = pread(fd, text, len - 1, 0);
	if (n < 0)
		n = 0;
	text[n] = '\0';
	text[strcspn(text, "\n")] = '\0';
}

static void write_holder(int fd, const char *holder)
{
	char line[128];
	int n = snprintf(line, sizeof(line), "%ld %s\n", (long)getpid(), holder);
	/* informational only: a failure here does not weaken the lock */
	if (ftruncate(fd, 0) == 0 && n > 0)
		(void)!pwrite(fd, line, (size_t)n, 0);
}

int db_lock_acquire(const char *directory, const char *holder, struct db_lock *lock,
		    char *err, size_t errlen)
{
	char path[4096];
	int rc = LUMEN_OK;

	lock->fd = -1;
	if (directory == NULL || directory[0] == '\0') {
		snprintf(err, errlen, "no database directory given");
		return LUMEN_EINVAL;
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", directory, DB_LOCK_FILE) >=
	    sizeof(path)) {
		snprintf(err, errlen, "%s: directory name too long", directory);
		return LUMEN_EINVAL;
	}
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = errno == ENOENT ? LUMEN_ENOTFOUND : LUMEN_EIO;
		snprintf(err, errlen, "%s: cannot open lock file: %s", path, strerror(errno));
		return rc;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		if (errno == EWOULDBLOCK) {
			char who[128];
			read_holder(fd, who, sizeof(who));
			snprintf(err, errlen,
				 "%s is in use by another process (%s): stop it first",
				 directory, who[0] != '\0' ? who : "holder unknown");
			rc = LUMEN_EBUSY;
		} else {
			snprintf(err, errlen, "%s: cannot lock: %s", path, strerror(errno));
			rc = LUMEN_EIO;
		}
		close(fd);
		return rc;
	}
	write_holder(fd, holder != NULL ? holder : "unknown");
	lock->fd = fd;
	return LUMEN_OK;
}

void db_lock_release(struct db_lock *lock)
{
	if (lock->fd < 0)
		return;
	/* empty the file first so a stale name is never reported */
	(void)!ftruncate(lock->fd, 0);
	flock(lock->fd, LOCK_UN);
	close(lock->fd);
	lock->fd = -1;
}
