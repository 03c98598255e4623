/*
 * log.h — the server's log: access lines ("conn=1 op=2 SRCH ...") and
 * errors, written off the workers' path (server layer).
 *
 * Callers format a whole line into a per-thread buffer and hand it to one
 * logger thread through a bounded in-memory queue; the logger thread writes
 * batches to stderr (foreground, with a timestamp) or to syslog. Before
 * log_start and after log_stop, lines go straight to stderr.
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

enum log_target { LOG_TO_STDERR, LOG_TO_SYSLOG };

/*
 * Start the logger thread. LUMEN_EBUSY if already started, LUMEN_ENOMEM,
 * LUMEN_EIO (thread creation failed).
 */
int log_start(unsigned level, enum log_target target);
/* Write everything queued, stop the thread. Safe when not started. */
void log_stop(void);
/* Change the level without restarting (e.g. before log_start). */
void log_set_level(unsigned level);

/* True if lines of this level would be written (level 0: always). */
bool log_enabled(unsigned level);

void log_printf(unsigned level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
