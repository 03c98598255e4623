/*
 * log.h — the server's log: access lines ("conn=1 op=2 SRCH ...") and
 * errors, written off the workers' path (server layer).
 *
 * Callers format a whole line into a per-thread buffer and hand it to one
 * logger thread through a bounded in-memory queue; the logger thread writes
 * batches to stderr (foreground, with a timestamp), to a log file (the
 * same lines; `logfile` in slapd.conf) or to syslog. Before log_start and
 * after log_stop, lines go straight to stderr.
 *
 * Rotation: rename the file, then log_reopen (lumend: SIGHUP); the logger
 * thread opens the path anew before its next batch, so no line is lost
 * and the renamed file is complete once the next line appears in the new
 * one.
 *
 * Levels are slapd's loglevel bits (config.h). A line with level 0 is an
 * error or notice and is always written.
 *
 * Ownership: the module owns its queue and thread (module-wide state, one
 * per process). Thread-safety: log_enabled and log_printf from any thread;
 * log_start/log_stop from the main thread only.
 *
 * Caveats:
 *  - A full queue drops the line instead of blocking the caller; the number
 *    of dropped lines is logged when the queue drains.
 *  - Lines longer than LOG_LINE_MAX are truncated. Never pass passwords.
 */
#ifndef LUMEN_LOG_H
#define LUMEN_LOG_H

#include <stdbool.h>

#define LOG_LINE_MAX 2048

enum log_target { LOG_TO_STDERR, LOG_TO_SYSLOG, LOG_TO_FILE };

/*
 * Start the logger thread. LUMEN_EBUSY if already started, LUMEN_ENOMEM,
 * LUMEN_EIO (thread creation failed).
 */
int log_start(unsigned level, enum log_target target);
/*
 * The file for LOG_TO_FILE: opened (created 0640, appended to) now, so an
 * unwritable path fails at start-up. Call before log_start. LUMEN_EIO
 * (errno says why), LUMEN_ENOMEM.
 */
int log_open_file(const char *path);
/* Reopen the log file by its path before the next batch (rotation).
 * Async-signal-safe; does nothing unless logging to a file. */
void log_reopen(void);
/* Write everything queued, stop the thread. Safe when not started. */
void log_stop(void);
/* Change the level without restarting (e.g. before log_start). */
void log_set_level(unsigned level);

/* True if lines of this level would be written (level 0: always). */
bool log_enabled(unsigned level);

void log_printf(unsigned level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * The arguments are evaluated only when the level is on: access lines pass
 * escaped DNs and filters (op_log_string) that cost a bind about 3 % of its
 * instructions with logging off. `level` is evaluated twice.
 */
#define log_printf(level, ...)                                  \
	do {                                                    \
		if (log_enabled(level))                         \
			(log_printf)((level), __VA_ARGS__);     \
	} while (0)

#endif
