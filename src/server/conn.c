/*
 * conn.c — a connection's lifecycle: creation, reference counts, the read
 * event and what it may take (back-pressure), the handshake and first-PDU
 * deadlines, the idle timeout, abort and teardown. Framing is in
 * conn_frame.c, the operation pool in conn_ops.c, output in
 * conn_output.c, TLS and identity in conn_identity.c.
 */
#include "conn_internal.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "event_release.h"
#include "ldap_message.h"
#include "log.h"
#include "lumen_error.h"
#include "ops.h"
#include "stats.h"
#include "tls.h"
#include "tls_memory.h"

static void on_read(evutil_socket_t fd, short what, void *arg);
static void on_kick(evutil_socket_t fd, short what, void *arg);
static void on_deadline(evutil_socket_t fd, short what, void *arg);
static void on_memory_room(struct conn_memory_waiter *w);

/* May the I/O thread take another operation from this connection now?
 * Nothing is read while a StartTLS runs or TLS is being set up: bytes
 * that follow a StartTLS request belong to the handshake. */
bool conn_accepting_ops(const struct conn *c)
{
	return !c->closing && !c->aborting && !c->closed && !c->bind_in_progress &&
	       !(c->bind_waiting && c->n_pending > 0) && c->n_pending < conn_max_pending(c) &&
	       conn_unsent(c) < CONN_MAX_UNSENT && !c->mem_wait && !c->starttls_in_progress &&
	       (c->tls_state == CONN_TLS_NONE || c->tls_state == CONN_TLS_ON);
}

/*
 * While a Bind runs or waits for earlier operations to end, the socket
 * stays armed and what arrives is only buffered, in the room the input
 * buffer already has. Pausing and resuming the read event instead cost two
 * epoll_ctl calls and a cross-thread wake-up per Bind (~13% of the server's
 * CPU in the search-then-bind benchmark). Real back-pressure (pending
 * operations, unsent output) still stops reading.
 */
static bool buffering_only(const struct conn *c)
{
	return (c->bind_in_progress || c->bind_waiting) && !conn_accepting_ops(c) && !c->closing &&
	       !c->aborting && !c->closed && !c->starttls_in_progress &&
	       (c->tls_state == CONN_TLS_NONE || c->tls_state == CONN_TLS_ON) &&
	       (c->in_len < c->in_cap || c->in_len - c->in_start < IO_INPUT_BYTES / 2);
}

/* The read event's timeout: the idle one (a handshake has its deadline). */
static const struct timeval *idle_timeout(const struct conn *c, struct timeval *tv)
{
	unsigned seconds = conn_config(c)->idletimeout;
	if (seconds == 0 || c->tls_state == CONN_TLS_HANDSHAKE)
		return NULL;
	tv->tv_sec = seconds;
	tv->tv_usec = 0;
	return tv;
}

/* I/O thread: (re)start the one-shot deadline, seconds from now; 0 = none. */
void conn_arm_deadline(struct conn *c, unsigned seconds)
{
	event_del(c->deadline_event);
	if (seconds == 0)
		return;
	struct timeval tv = { (time_t)seconds, 0 };
	if (event_add(c->deadline_event, &tv) != 0)
		log_printf(0, "conn=%llu fd=%d cannot arm its deadline", (unsigned long long)c->id,
			   c->fd);
}

/* The deadline that applies now: the handshake's, else the first PDU's. */
void conn_arm_current_deadline(struct conn *c)
{
	if (c->tls_state == CONN_TLS_HANDSHAKE)
		conn_arm_deadline(c, conn_config(c)->tls.handshake_timeout);
	else if (!c->first_pdu_seen)
		conn_arm_deadline(c, conn_config(c)->first_pdu_timeout);
	else
		conn_arm_deadline(c, 0);
}

/* I/O thread: make the read event match what the connection can take. */
void conn_update_reading(struct conn *c)
{
	bool want = conn_accepting_ops(c) || buffering_only(c) ||
		    (c->tls_state == CONN_TLS_HANDSHAKE && !c->closing && !c->aborting);
	if (want && !c->reading) {
		struct timeval tv;
		if (event_add(c->read_event, idle_timeout(c, &tv)) == 0)
			c->reading = true;
	} else if (!want && c->reading) {
		event_del(c->read_event);
		c->reading = false;
	}
}

/* A connection that never started: free its events, close, forget it. */
static void discard_new(struct conn *c)
{
	event_release(&c->read_event);
	event_release(&c->write_event);
	event_release(&c->deadline_event);
	event_release(&c->hold_event);
	event_release(&c->kick_event);
	c->closed = true;
	if (c->counted)
		conn_limits_release(c->io->server->conn_limits, &c->limits_key);
	c->counted = false;
	close(c->fd);
	c->fd = -1;
	conn_unref(c);
}

/*
 * May a connection be accepted with the memory the others hold? Its base,
 * and on ldaps:// the room its TLS handshake takes, must fit under
 * conn_total_memory (what queues waits; these cannot). The log says when
 * refusing starts and when it ends, not each refusal.
 */
static bool memory_admits(struct conn_memory *m, struct conn_memory_held *held, int fd,
			  bool tls)
{
	bool first = false;
	uint64_t refused = 0;
	bool admitted = conn_memory_admit(m, held, sizeof(struct conn),
					  tls ? TLS_MEMORY_HANDSHAKE_PEAK : 0, &first, &refused);
	if (first)
		log_printf(0, "fd=%d refused: the connections' base and TLS memory would pass "
			   "conn_total_memory (%llu bytes); refusing new connections until "
			   "some close", fd, (unsigned long long)m->max_total);
	if (refused > 0)
		log_printf(0, "accepting connections again (%llu refused for "
			   "conn_total_memory so far)", (unsigned long long)refused);
	return admitted;
}

int conn_create(struct io_thread *io, int fd, const struct sockaddr *peer, socklen_t peer_len,
		const char *listener_name, bool is_tcp, bool tls, struct conn **out)
{
	struct server *s = io->server;
	struct conn_memory_held held = { { 0 } };
	*out = NULL;
	if (!memory_admits(&s->conn_memory, &held, fd, tls)) {
		close(fd);
		return LUMEN_ELIMIT;
	}
	struct conn *c = calloc(1, sizeof(*c));
	if (c == NULL) {
		conn_memory_release(&s->conn_memory, &held);
		close(fd);
		return LUMEN_ENOMEM;
	}
	c->mem_held = held;
	pthread_mutex_init(&c->lock, NULL);
	c->refs = 1;
	c->fd = fd;
	c->io = io;
	c->is_tcp = is_tcp;
	c->id = atomic_fetch_add(&s->next_conn_id, 1);
	/* Unix clients are unnamed; like slapd, show the socket's path. */
	if (is_tcp)
		listener_format_address(peer, peer_len, c->peer, sizeof(c->peer));
	else
		snprintf(c->peer, sizeof(c->peer), "%s", listener_name);
	snprintf(c->local, sizeof(c->local), "%s", listener_name);
	c->started = c->last_activity = time(NULL);
	if (is_tcp && !s->config->debug_nagle) {
		/* Nagle would hold small responses back by tens of milliseconds. */
		int one = 1;
		if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0)
			log_printf(LOG_LEVEL_CONNS, "fd=%d TCP_NODELAY not set: %s", fd,
				   strerror(errno));
	}
	c->mem_waiter.wake = on_memory_room;
	c->read_event = event_new(io->base, fd, EV_READ | EV_PERSIST, on_read, c);
	c->write_event = event_new(io->base, fd, EV_WRITE, conn_on_write, c);
	c->deadline_event = evtimer_new(io->base, on_deadline, c);
	c->hold_event = evtimer_new(io->base, conn_on_hold_over, c);
	c->kick_event = event_new(io->base, -1, 0, on_kick, c);
	int rc = c->read_event == NULL || c->write_event == NULL ||
				 c->deadline_event == NULL || c->hold_event == NULL ||
				 c->kick_event == NULL
			 ? LUMEN_ENOMEM : conn_secure_setup(c, peer, peer_len, tls);
	if (rc != LUMEN_OK) {
		discard_new(c);
		return rc;
	}
	log_printf(LOG_LEVEL_STATS, "conn=%llu fd=%d ACCEPT from %s (%s)",
		   (unsigned long long)c->id, fd, c->peer, c->local);
	stats_connection_opened(stats_current());
	pthread_mutex_lock(&c->lock);
	conn_arm_current_deadline(c);
	conn_update_reading(c);
	pthread_mutex_unlock(&c->lock);
	*out = c;
	return LUMEN_OK;
}

void conn_ref(struct conn *c)
{
	pthread_mutex_lock(&c->lock);
	c->refs++;
	pthread_mutex_unlock(&c->lock);
}

int conn_resize_buffer(struct conn *c, enum conn_memory_kind kind, uint8_t **buf, size_t *cap,
		       size_t size)
{
	uint8_t *resized = realloc(*buf, size);
	if (resized == NULL)
		return LUMEN_ENOMEM;
	conn_account(c, kind, *cap, size);
	*buf = resized;
	*cap = size;
	return LUMEN_OK;
}

void conn_shrink_buffer(struct conn *c, enum conn_memory_kind kind, uint8_t **buf, size_t *cap,
			size_t base)
{
	if (*cap <= base)
		return;
	if (base > 0) {
		(void)conn_resize_buffer(c, kind, buf, cap, base);
		return;
	}
	free(*buf);
	conn_account(c, kind, *cap, 0);
	*buf = NULL;
	*cap = 0;
}

void conn_free(struct conn *c)
{
	conn_free_ops(c);
	conn_txn_discard_locked(c);
	conn_sort_discard_locked(c);
	conn_free_identity(c);
	conn_memory_release(conn_memory_of(c), &c->mem_held);
	conn_drop_borrowed_input(c);
	free(c->in);
	free(c->out);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

void conn_unref(struct conn *c)
{
	pthread_mutex_lock(&c->lock);
	unsigned left = --c->refs;
	pthread_mutex_unlock(&c->lock);
	if (left == 0)
		conn_free(c);
}

void conn_abort_locked(struct conn *c, struct ber_writer *w, int code, const char *reason)
{
	if (c->closed || c->aborting)
		return;
	log_printf(LOG_LEVEL_STATS, "conn=%llu fd=%d closing: %s", (unsigned long long)c->id,
		   c->fd, reason);
	ber_writer_reset(w);
	ldap_encode_notice_of_disconnection(w, code, reason);
	if (ber_writer_error(w) == LUMEN_OK)
		conn_send_locked(c, w->buf, w->len);
	c->aborting = true;
	conn_abandon_queued_locked(c);
	if (!io_thread_is_current(c->io))
		conn_kick_locked(c);
}

/* I/O thread, lock held: close the socket and free the events; unlocks and
 * drops the I/O thread's reference. */
void conn_abort(struct conn *c, struct ber_writer *w, int code, const char *reason)
{
	pthread_mutex_lock(&c->lock);
	conn_abort_locked(c, w, code, reason);
	pthread_mutex_unlock(&c->lock);
}

void conn_teardown_locked(struct conn *c)
{
	/* Off the wait list before the kick event goes (a release wakes a
	 * waiter through it, under the list's lock). */
	if (c->mem_listed)
		conn_memory_unwait(conn_memory_of(c), &c->mem_waiter);
	c->mem_listed = false;
	c->closed = true;
	conn_abandon_queued_locked(c);
	/* Parked ops end through the queue like any abandoned one. */
	struct workq_job *parked = conn_take_parked_locked(c, true);
	event_free(c->read_event);
	event_free(c->write_event);
	event_free(c->deadline_event);
	event_free(c->hold_event);
	event_free(c->kick_event);
	c->read_event = c->write_event = c->deadline_event = c->hold_event = c->kick_event = NULL;
	conn_drop_borrowed_input(c);
	log_printf(LOG_LEVEL_STATS, "conn=%llu fd=%d closed", (unsigned long long)c->id, c->fd);
	stats_connection_closed(stats_current());
	if (c->tls != NULL && c->tls_state == CONN_TLS_ON)
		tls_session_shutdown(c->tls);
	if (c->counted)
		conn_limits_release(c->io->server->conn_limits, &c->limits_key);
	c->counted = false;
	close(c->fd);
	c->fd = -1;
	pthread_mutex_unlock(&c->lock);
	io_thread_conn_gone(c->io, c);
	conn_requeue(c, parked);
	conn_unref(c);
}

void conn_begin_close(struct conn *c)
{
	pthread_mutex_lock(&c->lock);
	c->closing = true;
	conn_abandon_queued_locked(c);
	if (c->n_pending == 0) {
		conn_teardown_locked(c);
		return;
	}
	conn_update_reading(c);
	struct workq_job *parked = conn_take_parked_locked(c, true);
	pthread_mutex_unlock(&c->lock);
	conn_requeue(c, parked);
}

/* on_read with the lock held; every path releases it (teardown included). */
static void on_read_locked(struct conn *c, short what, struct op_batch *batch)
{
	conn_memory_woken_locked(c);
	if (!conn_drive_tls_locked(c))
		return;
	if ((what & EV_TIMEOUT) && conn_is_idle(c) && !c->closing) {
		log_printf(LOG_LEVEL_STATS, "conn=%llu fd=%d idle timeout", (unsigned long long)c->id,
			   c->fd);
		conn_teardown_locked(c);
		return;
	}
	if ((what & EV_READ) && (conn_accepting_ops(c) || buffering_only(c)) &&
	    conn_fill_input_locked(c) != LUMEN_OK) {
		conn_teardown_locked(c);             /* client went away */
		return;
	}
	c->inline_this_turn = 0;
	conn_process_input_locked(c, batch);
	if (conn_settle_input_locked(c) != LUMEN_OK)
		conn_abort_locked(c, &c->io->writer, LDAP_OTHER, "out of memory");
	/* Parked ops that were abandoned, or all when closing, end (queued). */
	struct workq_job *parked = conn_take_parked_locked(c, c->closing || c->aborting);
	if (parked != NULL) {
		*batch->tail = parked;
		while (*batch->tail != NULL)
			batch->tail = &(*batch->tail)->next;
	}
	if (c->aborting || (c->closing && c->n_pending == 0)) {
		conn_teardown_locked(c);
		return;
	}
	/* Decrypted bytes may wait in the session with nothing on the socket. */
	if (c->tls_state == CONN_TLS_ON && conn_accepting_ops(c) && tls_session_pending(c->tls))
		conn_kick_locked(c);
	conn_update_reading(c);
	pthread_mutex_unlock(&c->lock);
}

/* The handshake or first-PDU deadline passed: close (I/O thread). */
static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	(void)fd;
	(void)what;
	pthread_mutex_lock(&c->lock);
	const char *why = c->tls_state == CONN_TLS_HANDSHAKE ? "TLS handshake timed out"
			  : !c->first_pdu_seen ? "no complete request within first_pdu_timeout"
					       : NULL;
	if (why == NULL || c->closed) {
		pthread_mutex_unlock(&c->lock);
		return;
	}
	log_printf(LOG_LEVEL_STATS, "conn=%llu fd=%d closing: %s", (unsigned long long)c->id,
		   c->fd, why);
	conn_teardown_locked(c);
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	struct op_batch batch = { NULL, &batch.head };
	(void)fd;
	/* The busy poll's sign of input (io_thread.c), counted as found here:
	 * a non-blocking event_base_loop returns only when a look finds no
	 * event, so one pass can run many reads, and cn=Polled read within it
	 * must see them. */
	c->io->reads_run++;
	if (c->io->polling)
		stats_count_polled(c->io->stats, 1);
	/* The batch's operations hold references: c outlives a teardown here. */
	pthread_mutex_lock(&c->lock);
	on_read_locked(c, what, &batch);
	conn_push_batch(c, &batch);
}

/* conn_kick_locked's event: look again, as if the socket were readable. */
static void on_kick(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	on_read(fd, EV_READ, arg);
}

/*
 * The waiter's wake callback: released memory made room for c. Runs on
 * the releasing thread with the wait list's lock held, so it takes no
 * connection lock; the kick event lives until teardown has taken the
 * waiter off the list under that same lock.
 */
static void on_memory_room(struct conn_memory_waiter *w)
{
	struct conn *c = (struct conn *)((char *)w - offsetof(struct conn, mem_waiter));
	event_active(c->kick_event, EV_READ, 0);
}

void conn_memory_woken_locked(struct conn *c)
{
	if (!atomic_load(&c->mem_waiter.woken))
		return;
	conn_memory_claim(conn_memory_of(c), &c->mem_waiter);
	c->mem_wait = false;
	/* mem_listed stays: it may have been listed again since the wake-up
	 * (only the list's lock knows); the next unwait settles it. */
}

uint64_t conn_number(const struct conn *c)
{
	return c->id;
}

void conn_list_add(struct conn **head, struct conn *c)
{
	c->io_prev = NULL;
	c->io_next = *head;
	if (*head != NULL)
		(*head)->io_prev = c;
	*head = c;
}

void conn_list_remove(struct conn **head, struct conn *c)
{
	if (c->io_prev != NULL)
		c->io_prev->io_next = c->io_next;
	else if (*head == c)
		*head = c->io_next;
	if (c->io_next != NULL)
		c->io_next->io_prev = c->io_prev;
	c->io_prev = c->io_next = NULL;
}

struct conn *conn_list_next(const struct conn *c)
{
	return c->io_next;
}

static int fill_info_locked(const struct conn *c, struct arena *arena, struct conn_info *out)
{
	unsigned executing = 0;
	for (const struct op *op = c->ops; op != NULL; op = op->next)
		executing += op->running;
	*out = (struct conn_info){
		.id = c->id,
		.peer = arena_strndup(arena, c->peer, strlen(c->peer)),
		.local = arena_strndup(arena, c->local, strlen(c->local)),
		.authz_dn = c->authz_dn_len > 0
				    ? arena_strndup(arena, c->authz_dn, c->authz_dn_len) : NULL,
		.ops_received = c->next_op_number,
		.ops_executing = executing,
		.ops_outstanding = c->n_pending,
		.memory = conn_held(c),
		.started = c->started,
		.last_activity = c->last_activity,
		.reading = c->reading,
		.writing = c->write_armed,
	};
	if (out->peer == NULL || out->local == NULL || (c->authz_dn_len > 0 && out->authz_dn == NULL))
		return LUMEN_ENOMEM;
	return LUMEN_OK;
}

int conn_get_info(struct conn *c, struct arena *arena, struct conn_info *out)
{
	pthread_mutex_lock(&c->lock);
	int rc = c->closed ? LUMEN_ENOTFOUND : fill_info_locked(c, arena, out);
	pthread_mutex_unlock(&c->lock);
	return rc;
}
