/*
 * fault_inject.c — the fault-injection seam: linked into the fault builds
 * of lumend and lumenadd (Makefile: lumend-faults, lumenadd-faults) with
 * `-Wl,--wrap=SYMBOL` for every allocation and LMDB call the project makes,
 * so that each call from Lumen's own code passes through here first and
 * the Nth one can be made to fail. Nothing in src/ knows about it: the
 * linker is the seam, so the production binaries carry no test code.
 *
 * Control (environment, read once):
 *   LUMEN_FAULT=alloc:N      the Nth allocation returns NULL
 *   LUMEN_FAULT=lmdb:N[:E]   the Nth LMDB call fails with E: io (EIO,
 *                            default), full (MDB_MAP_FULL) or nospc (ENOSPC)
 *   LUMEN_FAULT=trace        nothing fails; every counted call is listed
 *   LUMEN_FAULT=stall:MS     nothing fails; every write transaction of its
 *                            own (no parent) waits MS milliseconds before it
 *                            begins, so a test can queue writes behind it
 *                            and act while they wait
 *   LUMEN_FAULT=commit:MS    nothing fails; every write transaction of its
 *                            own waits MS milliseconds before it commits,
 *                            holding LMDB's write lock as a slow disk's
 *                            sync does, so a test can act while writers
 *                            wait for their commit
 *   LUMEN_FAULT_ARM=signal   count only between two SIGUSR2 (lumend: the
 *                            test arms it around one operation, so start-up
 *                            and shutdown do not count); otherwise counting
 *                            starts at once and never stops.
 * Lines on stderr (SITE is the caller as an offset into its object file,
 * the same in every run whatever the address-space layout):
 *   lumen-fault: call alloc #N at SITE        (trace)
 *   lumen-fault: fired lmdb #N at SITE        (the injected failure)
 *   lumen-fault: counted alloc=N lmdb=M       (at disarm or exit)
 *
 * Thread-safety: atomic counters; any thread's call counts.
 */
#include <dlfcn.h>
#include <errno.h>
#include <lmdb.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum fault_kind { FAULT_NONE, FAULT_ALLOC, FAULT_LMDB, FAULT_STALL, FAULT_COMMIT };

static enum fault_kind fault_kind;
static bool tracing;
static unsigned long fault_at;
static int fault_error = EIO;
static atomic_bool armed;
static atomic_ulong alloc_calls, lmdb_calls;
static atomic_bool configured;

static void report_counts(void)
{
	char line[96];
	int n = snprintf(line, sizeof(line), "lumen-fault: counted alloc=%lu lmdb=%lu\n",
			 (unsigned long)atomic_load(&alloc_calls),
			 (unsigned long)atomic_load(&lmdb_calls));
	if (n > 0 && write(STDERR_FILENO, line, (size_t)n) < 0)
		return;
}

/* SIGUSR2: arm, or disarm and report what the window counted. Either way a
 * line says it happened, so that a test waits for it rather than guessing
 * how long signal delivery takes on a loaded machine. */
static void on_arm_signal(int sig)
{
	static const char opened[] = "lumen-fault: window open\n";
	(void)sig;
	if (atomic_exchange(&armed, !atomic_load(&armed)))
		report_counts();
	else if (write(STDERR_FILENO, opened, sizeof(opened) - 1) < 0)
		return;
}

static void parse_error(const char *name)
{
	if (strcmp(name, "full") == 0)
		fault_error = MDB_MAP_FULL;
	else if (strcmp(name, "nospc") == 0)
		fault_error = ENOSPC;
	else
		fault_error = EIO;
}

/* Read LUMEN_FAULT once (the first wrapped call of any thread). */
static void configure(void)
{
	static atomic_flag once = ATOMIC_FLAG_INIT;
	if (atomic_load(&configured) || atomic_flag_test_and_set(&once))
		return;
	const char *spec = getenv("LUMEN_FAULT");
	const char *arm = getenv("LUMEN_FAULT_ARM");
	char kind[16] = "", error[16] = "";
	unsigned long at = 0;
	tracing = spec != NULL && strcmp(spec, "trace") == 0;
	if (spec != NULL && sscanf(spec, "%15[a-z]:%lu:%15[a-z]", kind, &at, error) >= 2) {
		fault_kind = strcmp(kind, "alloc") == 0 ? FAULT_ALLOC :
			     strcmp(kind, "lmdb") == 0 ? FAULT_LMDB :
			     strcmp(kind, "stall") == 0 ? FAULT_STALL :
			     strcmp(kind, "commit") == 0 ? FAULT_COMMIT : FAULT_NONE;
		fault_at = at;
		parse_error(error);
	}
	if (arm != NULL && strcmp(arm, "signal") == 0)
		signal(SIGUSR2, on_arm_signal);
	else
		atomic_store(&armed, true);
	atexit(report_counts);
	atomic_store(&configured, true);
}

/* "object+0xOFFSET" for a code address, stable across runs. */
static void site_name(void *address, char *out, size_t len)
{
	Dl_info info;
	if (dladdr(address, &info) != 0 && info.dli_fbase != NULL) {
		const char *base = info.dli_fname != NULL ? strrchr(info.dli_fname, '/') : NULL;
		snprintf(out, len, "%s+0x%lx", base != NULL ? base + 1 : "?",
			 (unsigned long)((char *)address - (char *)info.dli_fbase));
	} else {
		snprintf(out, len, "%p", address);
	}
}

static void say(const char *what, enum fault_kind k, unsigned long n, void *caller)
{
	char site[160], line[256];
	site_name(caller, site, sizeof(site));
	int len = snprintf(line, sizeof(line), "lumen-fault: %s %s #%lu at %s\n", what,
			   k == FAULT_ALLOC ? "alloc" : "lmdb", n, site);
	if (len > 0 && write(STDERR_FILENO, line, (size_t)len) < 0)
		return;
}

/* Count a call of kind k; true if it is the one to fail. */
static bool should_fail(enum fault_kind k, void *caller)
{
	configure();
	if (!atomic_load(&configured) || !atomic_load(&armed))
		return false;
	unsigned long n = atomic_fetch_add(k == FAULT_ALLOC ? &alloc_calls : &lmdb_calls, 1) + 1;
	if (tracing)
		say("call", k, n, caller);
	if (k != fault_kind || n != fault_at)
		return false;
	say("fired", k, n, caller);
	return true;
}

#define CALLER __builtin_extract_return_addr(__builtin_return_address(0))

/* ------------------------------------------------------------ allocation */

void *__real_malloc(size_t n);
void *__real_calloc(size_t count, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
int __real_posix_memalign(void **out, size_t alignment, size_t n);

void *__wrap_malloc(size_t n)
{
	return should_fail(FAULT_ALLOC, CALLER) ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t count, size_t size)
{
	return should_fail(FAULT_ALLOC, CALLER) ? NULL : __real_calloc(count, size);
}

void *__wrap_realloc(void *p, size_t n)
{
	return should_fail(FAULT_ALLOC, CALLER) ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
	return should_fail(FAULT_ALLOC, CALLER) ? NULL : __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
	return should_fail(FAULT_ALLOC, CALLER) ? NULL : __real_strndup(s, n);
}

int __wrap_posix_memalign(void **out, size_t alignment, size_t n)
{
	return should_fail(FAULT_ALLOC, CALLER) ? ENOMEM : __real_posix_memalign(out, alignment, n);
}

/* ------------------------------------------------------------------ LMDB */

#define LMDB_WRAP(name, params, args)                                      \
	int __real_##name params;                                         \
	int __wrap_##name params                                          \
	{                                                                  \
		return should_fail(FAULT_LMDB, CALLER) ? fault_error : __real_##name args; \
	}

/* The calling thread's last write transaction of its own (no parent):
 * LMDB binds a write transaction to the thread that began it, so its
 * commit comes from here too, and nested ones are told apart by address. */
static __thread MDB_txn *own_write_txn;

int __real_mdb_txn_begin(MDB_env *env, MDB_txn *parent, unsigned flags, MDB_txn **txn);
int __wrap_mdb_txn_begin(MDB_env *env, MDB_txn *parent, unsigned flags, MDB_txn **txn)
{
	if (should_fail(FAULT_LMDB, CALLER))
		return fault_error;
	bool own_write = parent == NULL && (flags & MDB_RDONLY) == 0;
	if (fault_kind == FAULT_STALL && atomic_load(&armed) && own_write)
		usleep((useconds_t)(fault_at * 1000));
	int rc = __real_mdb_txn_begin(env, parent, flags, txn);
	if (rc == MDB_SUCCESS && own_write)
		own_write_txn = *txn;
	return rc;
}
/* A failing commit frees the transaction, as LMDB's own failures do. */
int __real_mdb_txn_commit(MDB_txn *txn);
int __wrap_mdb_txn_commit(MDB_txn *txn)
{
	bool own_write = txn == own_write_txn;
	if (own_write)
		own_write_txn = NULL;
	if (should_fail(FAULT_LMDB, CALLER)) {
		mdb_txn_abort(txn);
		return fault_error;
	}
	if (fault_kind == FAULT_COMMIT && atomic_load(&armed) && own_write)
		usleep((useconds_t)(fault_at * 1000));
	return __real_mdb_txn_commit(txn);
}
LMDB_WRAP(mdb_txn_renew, (MDB_txn *txn), (txn))
LMDB_WRAP(mdb_dbi_open, (MDB_txn *txn, const char *name, unsigned flags, MDB_dbi *dbi),
	  (txn, name, flags, dbi))
LMDB_WRAP(mdb_get, (MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *data),
	  (txn, dbi, key, data))
LMDB_WRAP(mdb_put, (MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *data, unsigned flags),
	  (txn, dbi, key, data, flags))
LMDB_WRAP(mdb_del, (MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *data),
	  (txn, dbi, key, data))
LMDB_WRAP(mdb_drop, (MDB_txn *txn, MDB_dbi dbi, int del), (txn, dbi, del))
LMDB_WRAP(mdb_cursor_open, (MDB_txn *txn, MDB_dbi dbi, MDB_cursor **cursor),
	  (txn, dbi, cursor))
LMDB_WRAP(mdb_cursor_get, (MDB_cursor *cursor, MDB_val *key, MDB_val *data, MDB_cursor_op op),
	  (cursor, key, data, op))
LMDB_WRAP(mdb_cursor_put, (MDB_cursor *cursor, MDB_val *key, MDB_val *data, unsigned flags),
	  (cursor, key, data, flags))
LMDB_WRAP(mdb_cursor_count, (MDB_cursor *cursor, size_t *count), (cursor, count))
LMDB_WRAP(mdb_env_sync, (MDB_env *env, int force), (env, force))
