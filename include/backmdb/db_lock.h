/*
 * db_lock.h — "who is writing this database": an exclusive advisory lock
 * on DIRECTORY/lumen.lock (back-mdb).
 *
 * LMDB lets any number of processes open one environment, so nothing in
 * LMDB stops lumenadd from loading into a database that lumend is serving
 * (its caches would silently go stale). lumend takes this lock for every
 * database it serves, and the offline writers (lumenadd, lumenindex) take
 * it without waiting and refuse to run when it is held. Readers that only
 * export (lumencat) take no lock.
 *
 * The lock is flock(2) on an open file, so the kernel drops it when the
 * holder exits, however it exits (kill -9 included): a leftover lumen.lock
 * file is harmless. The holder writes "PID NAME\n" into the file so a
 * refusal can say who holds it.
 *
 * Ownership: a struct db_lock holds one file descriptor, closed by
 * db_lock_release. Thread-safety: one db_lock per holder; do not share.
 *
 * Caveats:
 *  - Advisory only: a process that does not call db_lock_acquire is not
 *    stopped.
 *  - flock locks belong to the open file: two db_lock_acquire calls in one
 *    process on the same directory also exclude each other (tests rely on
 *    it); a forked child inherits the lock (the descriptor is O_CLOEXEC,
 *    so an exec'd program does not).
 *  - flock over NFS is emulated with fcntl locks by Linux; keep database
 *    directories on local disks anyway (LMDB requires it).
 */
#ifndef LUMEN_DB_LOCK_H
#define LUMEN_DB_LOCK_H

#include <stddef.h>

#define DB_LOCK_FILE "lumen.lock"

struct db_lock {
	int fd;          /* -1 when not held */
};

/*
 * Takes the lock of `directory` without waiting, as program `holder`
 * (e.g. "lumend", "lumenadd"). On failure err holds a sentence naming the
 * directory and the reason, for LUMEN_EBUSY the holder's PID and name when
 * the file says them. Errors: LUMEN_EBUSY (held by someone else),
 * LUMEN_ENOTFOUND (no such directory), LUMEN_EIO (cannot create or lock
 * the file), LUMEN_EINVAL (NULL or empty directory).
 */
int db_lock_acquire(const char *directory, const char *holder, struct db_lock *lock,
		    char *err, size_t errlen);

/* Releases the lock (the file stays). Safe on a lock that is not held. */
void db_lock_release(struct db_lock *lock);

#endif
