/*
 * log.c — asynchronous line log: per-thread formatting, one writer thread.
 */
#include "log.h"

#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <syslog.h>
#include <sys/time.h>
#include <unistd.h>

#include "lumen_error.h"

/* Enough for bursts of a few thousand access lines. */
#define LOG_QUEUE_BYTES (1u << 20)

static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	bool running;
	bool stopping;
	enum log_target target;
	char *queue;               /* lines, each ending in '\n' */
	size_t used;
	unsigned long dropped;
	int file_fd;               /* LOG_TO_FILE; -1 otherwise */
	char *file_path;
} logger = { .file_fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER };

static atomic_uint log_level;
/* Set by log_reopen (maybe from a signal handler), honoured by the thread. */
static atomic_bool reopen_requested;

void log_set_level(unsigned level)
{
	atomic_store_explicit(&log_level, level, memory_order_relaxed);
}

bool log_enabled(unsigned level)
{
	return level == 0 ||
	       (atomic_load_explicit(&log_level, memory_order_relaxed) & level) != 0;
}

static void write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w <= 0)
			return;             /* nowhere left to report it */
		p += w;
		n -= (size_t)w;
	}
}

/* Prefix each line with a timestamp, like slapd -d does. */
static void write_stamped_lines(int fd, char *batch, size_t n)
{
	char out[LOG_LINE_MAX + 64];
	for (size_t pos = 0; pos < n;) {
		char *nl = memchr(batch + pos, '\n', n - pos);
		size_t len = (size_t)(nl - (batch + pos));
		struct timeval tv;
		gettimeofday(&tv, NULL);
		int head = snprintf(out, sizeof(out), "%08lx.%06ld ", (unsigned long)tv.tv_sec,
				    (long)tv.tv_usec);
		if (len > sizeof(out) - (size_t)head - 1)
			len = sizeof(out) - (size_t)head - 1;
		memcpy(out + head, batch + pos, len);
		out[(size_t)head + len] = '\n';
		write_all(fd, out, (size_t)head + len + 1);
		pos = (size_t)(nl - batch) + 1;
	}
}

static void write_stderr_lines(char *batch, size_t n)
{
	write_stamped_lines(STDERR_FILENO, batch, n);
}

static int open_log_file(const char *path)
{
	return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
}

int log_open_file(const char *path)
{
	int fd = open_log_file(path);
	if (fd < 0)
		return LUMEN_EIO;
	char *copy = strdup(path);
	if (copy == NULL) {
		close(fd);
		return LUMEN_ENOMEM;
	}
	if (logger.file_fd >= 0)
		close(logger.file_fd);
	free(logger.file_path);
	logger.file_fd = fd;
	logger.file_path = copy;
	return LUMEN_OK;
}

void log_reopen(void)
{
	atomic_store(&reopen_requested, true);
}

/* Logger thread: after a rotation, continue in a new file at the path.
 * If it cannot be opened, keep writing to the old one (and say so). */
static void reopen_if_asked(void)
{
	if (!atomic_exchange(&reopen_requested, false) || logger.file_fd < 0)
		return;
	int fd = open_log_file(logger.file_path);
	if (fd < 0) {
		char line[LOG_LINE_MAX];
		int n = snprintf(line, sizeof(line), "cannot reopen log file %s: %s\n",
				 logger.file_path, strerror(errno));
		if (n > 0)
			write_stamped_lines(logger.file_fd, line, (size_t)n < sizeof(line)
					    ? (size_t)n : sizeof(line) - 1);
		return;
	}
	close(logger.file_fd);
	logger.file_fd = fd;
}

static void write_syslog_lines(char *batch, size_t n)
{
	for (size_t pos = 0; pos < n;) {
		char *nl = memchr(batch + pos, '\n', n - pos);
		*nl = '\0';
		syslog(LOG_DEBUG, "%s", batch + pos);
		pos = (size_t)(nl - batch) + 1;
	}
}

static void *logger_main(void *arg)
{
	char *batch = arg;
	pthread_mutex_lock(&logger.lock);
	for (;;) {
		while (logger.used == 0 && !logger.stopping)
			pthread_cond_wait(&logger.wake, &logger.lock);
		if (logger.used == 0 && logger.stopping)
			break;
		size_t n = logger.used;
		memcpy(batch, logger.queue, n);
		logger.used = 0;
		unsigned long dropped = logger.dropped;
		logger.dropped = 0;
		pthread_mutex_unlock(&logger.lock);
		if (dropped > 0)
			n += (size_t)snprintf(batch + n, 64, "log queue full: %lu lines dropped\n",
					      dropped);
		if (logger.target == LOG_TO_SYSLOG) {
			write_syslog_lines(batch, n);
		} else if (logger.target == LOG_TO_FILE) {
			reopen_if_asked();
			write_stamped_lines(logger.file_fd, batch, n);
		} else {
			write_stderr_lines(batch, n);
		}
		pthread_mutex_lock(&logger.lock);
	}
	pthread_mutex_unlock(&logger.lock);
	free(batch);
	return NULL;
}

int log_start(unsigned level, enum log_target target)
{
	if (logger.running)
		return LUMEN_EBUSY;
	if (target == LOG_TO_FILE && logger.file_fd < 0)
		return LUMEN_EINVAL;
	log_set_level(level);
	logger.queue = malloc(LOG_QUEUE_BYTES);
	char *batch = malloc(LOG_QUEUE_BYTES + 64);
	if (logger.queue == NULL || batch == NULL) {
		free(logger.queue);
		free(batch);
		logger.queue = NULL;
		return LUMEN_ENOMEM;
	}
	logger.target = target;
	logger.used = 0;
	logger.stopping = false;
	if (target == LOG_TO_SYSLOG)
		openlog("lumend", LOG_PID | LOG_NDELAY, LOG_LOCAL4);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int err = pthread_create(&logger.thread, NULL, logger_main, batch);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err != 0) {
		free(logger.queue);
		free(batch);
		logger.queue = NULL;
		return LUMEN_EIO;
	}
	pthread_mutex_lock(&logger.lock);
	logger.running = true;
	pthread_mutex_unlock(&logger.lock);
	return LUMEN_OK;
}

static void close_log_file(void)
{
	if (logger.file_fd >= 0)
		close(logger.file_fd);
	logger.file_fd = -1;
	free(logger.file_path);
	logger.file_path = NULL;
}

void log_stop(void)
{
	if (!logger.running) {
		close_log_file();
		return;
	}
	pthread_mutex_lock(&logger.lock);
	logger.stopping = true;
	pthread_cond_signal(&logger.wake);
	pthread_mutex_unlock(&logger.lock);
	pthread_join(logger.thread, NULL);
	pthread_mutex_lock(&logger.lock);
	logger.running = false;
	free(logger.queue);
	logger.queue = NULL;
	pthread_mutex_unlock(&logger.lock);
	if (logger.target == LOG_TO_SYSLOG)
		closelog();
	close_log_file();
}

void (log_printf)(unsigned level, const char *fmt, ...)
{
	static __thread char line[LOG_LINE_MAX];
	if (!log_enabled(level))
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	size_t len = (size_t)n < sizeof(line) - 1 ? (size_t)n : sizeof(line) - 2;
	line[len++] = '\n';

	pthread_mutex_lock(&logger.lock);
	if (!logger.running || logger.stopping) {
		pthread_mutex_unlock(&logger.lock);
		write_stderr_lines(line, len);
		return;
	}
	if (logger.used + len > LOG_QUEUE_BYTES) {
		logger.dropped++;
	} else {
		memcpy(logger.queue + logger.used, line, len);
		logger.used += len;
		pthread_cond_signal(&logger.wake);
	}
	pthread_mutex_unlock(&logger.lock);
}
