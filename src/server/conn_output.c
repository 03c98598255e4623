/*
 * conn_output.c — the output side of a connection: immediate non-blocking
 * writes, the queue of unsent bytes, the EV_WRITE handler, and the
 * deadlines it enforces (writetimeout, and idletimeout while reading is
 * paused for unsent output: the read event is not armed then).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/uio.h>
#include <unistd.h>

#include "conn_internal.h"
#include "log.h"
#include "lumen_error.h"
#include "stats.h"
#include "tls.h"

/* writev that retries EINTR; returns bytes written, 0 on EAGAIN, -1 on error. */
static ssize_t write_vector(int fd, struct iovec *iov, int n)
{
	for (;;) {
		ssize_t w = writev(fd, iov, n);
		if (w >= 0)
			return w;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		return -1;
	}
}

static time_t monotonic_seconds(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec;
}

static int append_output(struct conn *c, const uint8_t *data, size_t len)
{
	/* writetimeout counts from here until some of it leaves. */
	if (c->out_len == c->out_start)
		c->output_since = monotonic_seconds();
	if (c->out_start > 0 && c->out_len + len > c->out_cap) {
		memmove(c->out, c->out + c->out_start, c->out_len - c->out_start);
		c->out_len -= c->out_start;
		c->out_start = 0;
	}
	if (c->out_len + len > c->out_cap) {
		size_t cap = conn_memory_output_capacity(conn_memory_of(c), c->out_cap,
							 c->out_len + len, CONN_BASE_OUTPUT);
		if (conn_resize_buffer(c, CONN_MEM_OUTPUT, &c->out, &c->out_cap, cap) != LUMEN_OK)
			return LUMEN_ENOMEM;
	}
	memcpy(c->out + c->out_len, data, len);
	c->out_len += len;
	return LUMEN_OK;
}

/* The peer is gone or the queue cannot grow: stop everything. */
static void fail_output(struct conn *c)
{
	c->aborting = true;
	c->out_start = c->out_len = 0;
	if (!c->closed)
		conn_kick_locked(c);
}

/*
 * TLS: encrypt and send from buf until the session must wait for the
 * socket. Returns the bytes taken, or -1 when the session failed. A
 * retry after a wait starts with the same bytes (moving buffer mode).
 */
static ssize_t tls_push(struct conn *c, const uint8_t *buf, size_t len)
{
	size_t done = 0;
	while (done < len) {
		size_t sent = 0;
		enum tls_io io = tls_session_write(c->tls, buf + done, len - done, &sent);
		conn_count_tls_locked(c);
		if (io == TLS_IO_OK) {
			done += sent;
			continue;
		}
		if (io == TLS_IO_WANT_WRITE || io == TLS_IO_WANT_READ)
			break;
		return -1;
	}
	return (ssize_t)done;
}

/*
 * Seconds until the first of the connection's output deadlines (may be
 * past: <= 0); false when none applies. writetimeout counts since
 * output_since; idletimeout since the last input, only while reading is
 * stopped (the read event's timer covers the rest).
 */
static bool output_deadline(const struct conn *c, long *wait)
{
	const struct config *cfg = c->io->server->config;
	bool any = false;
	if (c->tls_state == CONN_TLS_HANDSHAKE)
		return false;    /* the handshake has its own deadline */
	if (cfg->writetimeout > 0) {
		*wait = (long)(c->output_since + (time_t)cfg->writetimeout - monotonic_seconds());
		any = true;
	}
	if (cfg->idletimeout > 0 && !c->reading) {
		long idle = (long)(c->last_activity + (time_t)cfg->idletimeout - time(NULL));
		if (!any || idle < *wait)
			*wait = idle;
		any = true;
	}
	return any;
}

void conn_arm_write_locked(struct conn *c)
{
	long wait = 0;
	if (c->write_armed)
		return;
	/* At least a second: a deadline looked at early is simply re-armed. */
	bool timed = output_deadline(c, &wait);
	struct timeval tv = { wait > 1 ? wait : 1, 0 };
	if (event_add(c->write_event, timed ? &tv : NULL) == 0)
		c->write_armed = true;
}

static void arm_write(struct conn *c)
{
	conn_arm_write_locked(c);
}

/* conn_send_locked once TLS is on (or being set up: queue only). */
static int send_tls_locked(struct conn *c, const uint8_t *bytes, size_t len)
{
	size_t queued = c->out_len - c->out_start;
	if (queued > 0 || c->tls_state != CONN_TLS_ON) {
		/* Order: behind what waits; the write event sends it. */
		if (append_output(c, bytes, len) != LUMEN_OK) {
			fail_output(c);
			return LUMEN_ENOMEM;
		}
		if (c->tls_state == CONN_TLS_ON)
			arm_write(c);
		return LUMEN_OK;
	}
	ssize_t w = tls_push(c, bytes, len);
	if (w < 0) {
		fail_output(c);
		return LUMEN_EIO;
	}
	stats_count_sent(stats_current(), (uint64_t)w, 0);
	if ((size_t)w == len)
		return LUMEN_OK;
	if (append_output(c, bytes + w, len - (size_t)w) != LUMEN_OK) {
		fail_output(c);
		return LUMEN_ENOMEM;
	}
	arm_write(c);
	return LUMEN_OK;
}

int conn_send_locked(struct conn *c, const void *data, size_t len)
{
	if (c->closed || c->aborting)
		return LUMEN_EIO;
	if (c->output_held) {
		/* conn_on_hold_over writes it, in this order */
		if (append_output(c, data, len) == LUMEN_OK)
			return LUMEN_OK;
		fail_output(c);
		return LUMEN_ENOMEM;
	}
	if (c->tls_state == CONN_TLS_ON || c->tls_state == CONN_TLS_HANDSHAKE)
		return send_tls_locked(c, data, len);
	const uint8_t *bytes = data;
	struct iovec iov[2];
	int n = 0;
	size_t queued = c->out_len - c->out_start;
	if (queued > 0)
		iov[n++] = (struct iovec){ c->out + c->out_start, queued };
	iov[n++] = (struct iovec){ (void *)bytes, len };
	ssize_t w = write_vector(c->fd, iov, n);
	if (w < 0) {
		fail_output(c);
		return LUMEN_EIO;
	}
	stats_count_sent(stats_current(), (uint64_t)w, 0);
	if (w > 0 && queued > 0)
		c->output_since = monotonic_seconds();   /* the queue moved */
	size_t written = (size_t)w;
	size_t from_queue = written < queued ? written : queued;
	c->out_start += from_queue;
	written -= from_queue;
	if (c->out_start == c->out_len) {
		c->out_start = c->out_len = 0;
		conn_shrink_buffer(c, CONN_MEM_OUTPUT, &c->out, &c->out_cap,
				   c->n_pending > 0 ? CONN_BASE_OUTPUT : 0);
	}
	if (written == len)
		return LUMEN_OK;
	if (append_output(c, bytes + written, len - written) != LUMEN_OK) {
		fail_output(c);
		return LUMEN_ENOMEM;
	}
	arm_write(c);
	return LUMEN_OK;
}

/* Why the connection must close at an EV_TIMEOUT, or NULL. */
static const char *deadline_passed(const struct conn *c)
{
	const struct config *cfg = c->io->server->config;
	if (cfg->writetimeout > 0 && c->out_len > c->out_start &&
	    monotonic_seconds() - c->output_since >= (time_t)cfg->writetimeout)
		return "closing: writetimeout";
	if (cfg->idletimeout > 0 && conn_is_idle(c) &&
	    time(NULL) - c->last_activity >= (time_t)cfg->idletimeout)
		return "idle timeout";
	return NULL;
}

/* Write one turn's worth of the queue. Lock held. */
static void write_some(struct conn *c, evutil_socket_t fd)
{
	if (c->output_held)
		return;   /* conn_on_hold_over arms the write when the hold ends */
	size_t queued = c->out_len - c->out_start;
	if (queued > CONN_WRITE_PER_TURN)
		queued = CONN_WRITE_PER_TURN;
	ssize_t w = 0;
	if (queued > 0) {   /* an idle connection has no buffer: no pointer into it */
		struct iovec iov = { c->out + c->out_start, queued };
		w = c->tls_state == CONN_TLS_ON ? tls_push(c, iov.iov_base, queued)
						: write_vector(fd, &iov, 1);
	}
	if (w < 0) {
		fail_output(c);
		return;
	}
	stats_count_sent(stats_current(), (uint64_t)w, 0);
	c->out_start += (size_t)w;
	if (c->out_start == c->out_len) {
		c->out_start = c->out_len = 0;
		conn_shrink_buffer(c, CONN_MEM_OUTPUT, &c->out, &c->out_cap,
				   c->n_pending > 0 ? CONN_BASE_OUTPUT : 0);
	}
	if (w > 0) {
		c->output_since = monotonic_seconds();
		/* Unsent output may be what held the memory a new request
		 * waited for (mem_wait): with every operation done, nothing
		 * else would retry. */
		c->mem_wait = false;
	}
	if (c->out_len > c->out_start)
		conn_arm_write_locked(c);
	/* Reading may have paused for unsent output, or requests already read
	 * may wait for it (a Bind behind large results leaves the socket
	 * armed, and a client that sent everything sends nothing that would
	 * make it readable): let the loop re-check. */
	if (!c->closed && (!c->reading || (c->in_len > c->in_start &&
					    conn_unsent(c) < CONN_MAX_UNSENT)))
		conn_kick_locked(c);
}

int conn_hold_output(struct conn *c, const struct timeval *delay)
{
	int rc = LUMEN_EIO;
	pthread_mutex_lock(&c->lock);
	if (!c->closed && !c->aborting && event_add(c->hold_event, delay) == 0) {
		c->output_held = true;
		rc = LUMEN_OK;
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}

/* I/O thread: the hold is over; what was queued meanwhile goes out. */
void conn_on_hold_over(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	(void)fd;
	(void)what;
	pthread_mutex_lock(&c->lock);
	c->output_held = false;
	if (!c->closed && c->out_len > c->out_start)
		arm_write(c);
	pthread_mutex_unlock(&c->lock);
}

void conn_on_write(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	struct workq_job *resume = NULL;
	pthread_mutex_lock(&c->lock);
	c->write_armed = false;
	if (c->closed) {
		pthread_mutex_unlock(&c->lock);
		return;
	}
	if (c->tls_state == CONN_TLS_HANDSHAKE) {
		/* The handshake wanted to write: on_read drives it. */
		conn_kick_locked(c);
		pthread_mutex_unlock(&c->lock);
		return;
	}
	const char *why = (what & EV_TIMEOUT) ? deadline_passed(c) : NULL;
	if (why != NULL) {
		/* The client reads nothing: no Notice of Disconnection either. */
		log_printf(LOG_LEVEL_STATS, "conn=%llu fd=%d %s (%zu bytes unsent)",
			   (unsigned long long)c->id, c->fd, why, c->out_len - c->out_start);
		fail_output(c);
	} else {
		write_some(c, fd);
		/* The client caught up: parked searches go on. */
		if (!c->aborting && c->n_parked > 0 && conn_may_resume_locked(c))
			resume = conn_take_parked_locked(c, true);
	}
	pthread_mutex_unlock(&c->lock);
	conn_requeue(c, resume);
}

bool conn_output_full_locked(const struct conn *c)
{
	return conn_memory_output_full(conn_memory_of(c), conn_unsent(c), CONN_MAX_UNSENT);
}

bool conn_may_resume_locked(const struct conn *c)
{
	return conn_memory_may_resume(conn_memory_of(c), conn_unsent(c), CONN_RESUME_UNSENT);
}

bool conn_memory_pressed(const struct conn *c)
{
	return conn_memory_over_total(conn_memory_of(c));
}

bool conn_output_full(struct conn *c)
{
	pthread_mutex_lock(&c->lock);
	bool full = conn_output_full_locked(c);
	pthread_mutex_unlock(&c->lock);
	return full;
}
