/*
 * conn.c — connection lifecycle and input side: reading, PDU framing,
 * queueing operations, Abandon/Unbind, back-pressure, teardown.
 * The output side is in conn_output.c.
 */
#include "conn.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "access_glue.h"
#include "config.h"
#include "io_thread.h"
#include "ldap_message.h"
#include "log.h"
#include "lumen_error.h"
#include "ops.h"
#include "server.h"
#include "stats.h"
#include "tls.h"
#include "workq.h"

#define CONN_INITIAL_INPUT 16384u
#define CONN_BASE_OUTPUT 16384u
#define CONN_FREE_OPS_KEPT 8u
/* Recycled op objects keep a PDU buffer up to this size (most requests are
 * well under 1 KiB); larger ones are freed with their op. */
#define CONN_OP_PDU_KEPT (16u * 1024u)

static void on_read(evutil_socket_t fd, short what, void *arg);
static void on_deadline(evutil_socket_t fd, short what, void *arg);
void conn_on_write(evutil_socket_t fd, short what, void *arg);
void conn_on_hold_over(evutil_socket_t fd, short what, void *arg);

static const struct config *conn_config(const struct conn *c)
{
	return c->io->server->config;
}

static size_t max_pdu(const struct conn *c)
{
	const struct config *cfg = conn_config(c);
	return c->bound ? cfg->max_incoming_auth : cfg->max_incoming;
}

static unsigned max_pending(const struct conn *c)
{
	const struct config *cfg = conn_config(c);
	return c->bound ? cfg->max_pending_auth : cfg->max_pending;
}

static struct conn_memory *memory_of(const struct conn *c)
{
	return &c->io->server->conn_memory;
}

/* One of c's buffers went from old_bytes to new_bytes (lock held or c new). */
static void account(struct conn *c, size_t old_bytes, size_t new_bytes)
{
	conn_memory_change(memory_of(c), &c->mem_held, old_bytes, new_bytes);
}

static size_t unsent(const struct conn *c)
{
	return c->out_len - c->out_start;
}

/* May the I/O thread take another operation from this connection now?
 * Nothing is read while a StartTLS runs or TLS is being set up: bytes
 * that follow a StartTLS request belong to the handshake. */
static bool accepting_ops(const struct conn *c)
{
	return !c->closing && !c->aborting && !c->closed && !c->bind_in_progress &&
	       !(c->bind_waiting && c->n_pending > 0) && c->n_pending < max_pending(c) &&
	       unsent(c) < CONN_MAX_UNSENT && !c->mem_wait && !c->starttls_in_progress &&
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
	return (c->bind_in_progress || c->bind_waiting) && !accepting_ops(c) && !c->closing &&
	       !c->aborting && !c->closed && !c->starttls_in_progress &&
	       (c->tls_state == CONN_TLS_NONE || c->tls_state == CONN_TLS_ON) &&
	       c->in_len < c->in_cap;
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
static void arm_deadline(struct conn *c, unsigned seconds)
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
static void arm_current_deadline(struct conn *c)
{
	if (c->tls_state == CONN_TLS_HANDSHAKE)
		arm_deadline(c, conn_config(c)->tls.handshake_timeout);
	else if (!c->first_pdu_seen)
		arm_deadline(c, conn_config(c)->first_pdu_timeout);
	else
		arm_deadline(c, 0);
}

/* I/O thread: make the read event match what the connection can take. */
static void update_reading(struct conn *c)
{
	bool want = accepting_ops(c) || buffering_only(c) ||
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
	if (c->read_event != NULL)
		event_free(c->read_event);
	if (c->write_event != NULL)
		event_free(c->write_event);
	if (c->deadline_event != NULL)
		event_free(c->deadline_event);
	if (c->hold_event != NULL)
		event_free(c->hold_event);
	c->read_event = c->write_event = c->deadline_event = c->hold_event = NULL;
	c->closed = true;
	if (c->counted)
		conn_limits_release(c->io->server->conn_limits, &c->limits_key);
	c->counted = false;
	close(c->fd);
	c->fd = -1;
	conn_unref(c);
}

/* ldapi: the peer's uid/gid (SASL EXTERNAL) and the local SSF. */
static void read_peer_credentials(struct conn *c)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	c->is_local = true;
	c->ssf = ACCESS_SSF_LOCAL;
	if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && len == sizeof(cred)) {
		c->has_peer_cred = true;
		c->peer_uid = cred.uid;
		c->peer_gid = cred.gid;
	}
}

/*
 * The connection bounds, peer credentials and (ldaps) the TLS session.
 * LUMEN_ELIMIT (refused by conn_max/conn_max_per_ip, logged), LUMEN_ENOMEM,
 * LUMEN_EIO (no TLS session).
 */
static int secure_setup(struct conn *c, const struct sockaddr *peer, socklen_t peer_len,
			bool tls)
{
	struct server *s = c->io->server;
	char why[96] = "";
	if (c->is_tcp)
		conn_limits_key_of(peer, peer_len, &c->limits_key);
	int rc = s->conn_limits != NULL
			 ? conn_limits_admit(s->conn_limits, &c->limits_key, why, sizeof(why))
			 : LUMEN_OK;
	if (rc != LUMEN_OK) {
		log_printf(0, "conn=%llu fd=%d connection from %s (%s) refused: %s",
			   (unsigned long long)c->id, c->fd, c->peer, c->local, why);
		return LUMEN_ELIMIT;
	}
	c->counted = s->conn_limits != NULL;
	if (!c->is_tcp)
		read_peer_credentials(c);
	if (!tls)
		return LUMEN_OK;
	if (s->tls == NULL)
		return LUMEN_EIO;
	rc = tls_session_new(s->tls, c->fd, &c->tls);
	if (rc == LUMEN_OK)
		c->tls_state = CONN_TLS_HANDSHAKE;
	return rc;
}

int conn_create(struct io_thread *io, int fd, const struct sockaddr *peer, socklen_t peer_len,
		const char *listener_name, bool is_tcp, bool tls, struct conn **out)
{
	struct server *s = io->server;
	struct conn *c = calloc(1, sizeof(*c));
	*out = NULL;
	if (c == NULL) {
		close(fd);
		return LUMEN_ENOMEM;
	}
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
	account(c, 0, sizeof(*c));
	c->in = malloc(CONN_INITIAL_INPUT);
	if (c->in != NULL) {
		account(c, 0, CONN_INITIAL_INPUT);
		c->in_cap = CONN_INITIAL_INPUT;
	}
	c->read_event = event_new(io->base, fd, EV_READ | EV_PERSIST, on_read, c);
	c->write_event = event_new(io->base, fd, EV_WRITE, conn_on_write, c);
	c->deadline_event = evtimer_new(io->base, on_deadline, c);
	c->hold_event = evtimer_new(io->base, conn_on_hold_over, c);
	int rc = c->in == NULL || c->read_event == NULL || c->write_event == NULL ||
				 c->deadline_event == NULL || c->hold_event == NULL
			 ? LUMEN_ENOMEM : secure_setup(c, peer, peer_len, tls);
	if (rc != LUMEN_OK) {
		discard_new(c);
		return rc;
	}
	log_printf(LOG_LEVEL_STATS, "conn=%llu fd=%d ACCEPT from %s (%s)",
		   (unsigned long long)c->id, fd, c->peer, c->local);
	stats_connection_opened(stats_current());
	pthread_mutex_lock(&c->lock);
	arm_current_deadline(c);
	update_reading(c);
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

static void free_conn(struct conn *c)
{
	while (c->free_ops != NULL) {
		struct op *op = c->free_ops;
		c->free_ops = op->next;
		free(op->pdu);
		free(op);
	}
	conn_memory_release(memory_of(c), &c->mem_held);
	free(c->in);
	free(c->out);
	free(c->bind_dn);
	free(c->authz_dn);
	tls_session_free(c->tls);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

void conn_unref(struct conn *c)
{
	pthread_mutex_lock(&c->lock);
	unsigned left = --c->refs;
	pthread_mutex_unlock(&c->lock);
	if (left == 0)
		free_conn(c);
}

/* Wake the I/O thread: it re-examines buffered input and its state. */
static void kick_locked(struct conn *c)
{
	if (!c->closed)
		event_active(c->read_event, EV_READ, 0);
}

/* Mark queued operations so workers drop them unanswered. */
static void abandon_queued_locked(struct conn *c)
{
	for (struct op *op = c->ops; op != NULL; op = op->next)
		if (!op->running)
			op->abandoned = true;
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
	abandon_queued_locked(c);
	if (!io_thread_is_current(c->io))
		kick_locked(c);
}

/* I/O thread, lock held: close the socket and free the events; unlocks and
 * drops the I/O thread's reference. */
static void teardown_locked(struct conn *c)
{
	c->closed = true;
	abandon_queued_locked(c);
	/* Parked ops end through the queue like any abandoned one. */
	struct workq_job *parked = conn_take_parked_locked(c, true);
	event_free(c->read_event);
	event_free(c->write_event);
	event_free(c->deadline_event);
	event_free(c->hold_event);
	c->read_event = c->write_event = c->deadline_event = c->hold_event = NULL;
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
	abandon_queued_locked(c);
	if (c->n_pending == 0) {
		teardown_locked(c);
		return;
	}
	update_reading(c);
	struct workq_job *parked = conn_take_parked_locked(c, true);
	pthread_mutex_unlock(&c->lock);
	conn_requeue(c, parked);
}

static struct op *take_op(struct conn *c, size_t pdu_len)
{
	struct op *op = c->free_ops;
	if (op != NULL) {
		c->free_ops = op->next;
		c->n_free_ops--;
	} else {
		op = calloc(1, sizeof(*op));
		if (op == NULL)
			return NULL;
		account(c, 0, sizeof(*op));
	}
	if (op->pdu_cap < pdu_len) {
		uint8_t *bigger = realloc(op->pdu, pdu_len);
		if (bigger == NULL) {
			account(c, sizeof(*op) + op->pdu_cap, 0);
			free(op->pdu);
			free(op);
			return NULL;
		}
		account(c, op->pdu_cap, pdu_len);
		op->pdu = bigger;
		op->pdu_cap = pdu_len;
	}
	return op;
}

/* Recycle an op object; large PDU buffers are not worth keeping. */
static void recycle_op(struct conn *c, struct op *op)
{
	if (c->n_free_ops >= CONN_FREE_OPS_KEPT || op->pdu_cap > CONN_OP_PDU_KEPT) {
		account(c, sizeof(*op) + op->pdu_cap, 0);
		free(op->pdu);
		free(op);
		return;
	}
	op->next = c->free_ops;
	c->free_ops = op;
	c->n_free_ops++;
}

static void link_op(struct conn *c, struct op *op)
{
	op->prev = NULL;
	op->next = c->ops;
	if (c->ops != NULL)
		c->ops->prev = op;
	c->ops = op;
	c->n_pending++;
}

static void unlink_op(struct conn *c, struct op *op)
{
	if (op->prev != NULL)
		op->prev->next = op->next;
	else
		c->ops = op->next;
	if (op->next != NULL)
		op->next->prev = op->prev;
	c->n_pending--;
}

/* The work queue is full: answer busy instead of waiting for it. */
static void answer_busy_locked(struct conn *c, int32_t message_id, int tag)
{
	int response = ops_response_tag(tag);
	struct ber_writer *w = &c->io->writer;
	if (response < 0)
		return;
	ber_writer_reset(w);
	if (response == LDAP_OP_BIND_RESPONSE)
		ldap_encode_bind_response(w, message_id, LDAP_BUSY, NULL, "server busy", NULL);
	else if (response == LDAP_OP_EXTENDED_RESPONSE)
		ldap_encode_extended_response(w, message_id, LDAP_BUSY, "server busy", NULL, NULL);
	else
		ldap_encode_result(w, message_id, response, LDAP_BUSY, NULL, "server busy", NULL, 0);
	if (ber_writer_error(w) == LUMEN_OK)
		conn_send_locked(c, w->buf, w->len);
}

/*
 * Operations framed in one on_read, queued after the connection's lock is
 * released: a worker woken while the I/O thread still held the lock would
 * block on it at once (two futex calls per operation, measured).
 */
struct op_batch {
	struct workq_job *head;
	struct workq_job **tail;
};

static void batch_init(struct op_batch *b)
{
	b->head = NULL;
	b->tail = &b->head;
}

static int queue_op(struct conn *c, const uint8_t *pdu, size_t len, int32_t message_id,
		    int tag, unsigned number, struct op_batch *batch)
{
	struct op *op = take_op(c, len);
	if (op == NULL)
		return LUMEN_ENOMEM;
	memcpy(op->pdu, pdu, len);
	op->pdu_len = len;
	op->conn = c;
	op->message_id = message_id;
	op->tag = tag;
	op->number = number;
	op->running = false;
	op->abandoned = false;
	op->parked = false;
	op->resume = (struct backend_search_resume){ 0 };
	op->resume_entries = 0;
	op->job.run = ops_run_job;
	clock_gettime(CLOCK_MONOTONIC, &op->queued_at);
	link_op(c, op);
	c->refs++;
	if (tag == LDAP_OP_BIND_REQUEST)
		c->bind_in_progress = true;
	op->job.next = NULL;
	*batch->tail = &op->job;
	batch->tail = &op->job.next;
	return LUMEN_OK;
}

/* The work queue refused op (full, or stopping): answer busy instead. */
static void refuse_op(struct conn *c, struct op *op)
{
	pthread_mutex_lock(&c->lock);
	unlink_op(c, op);
	if (op->tag == LDAP_OP_BIND_REQUEST)
		c->bind_in_progress = false;
	if (!op->abandoned)
		answer_busy_locked(c, op->message_id, op->tag);
	stats_record_operation(stats_current(), (enum stats_op_type)stats_op_type_of_tag(op->tag),
			       LDAP_BUSY, NULL);
	recycle_op(c, op);
	c->mem_wait = false;
	bool last = --c->refs == 0;          /* the op's reference */
	if (!last && !c->closed) {
		/* Only the I/O thread touches the read event (a parked op may be
		 * requeued by a worker); a closing connection may be done now. */
		if (io_thread_is_current(c->io) && !c->closing && !c->aborting)
			update_reading(c);
		else
			kick_locked(c);
	}
	pthread_mutex_unlock(&c->lock);
	if (last)
		free_conn(c);
}

/* Lock released: hand the batch to the workers. */
static void push_batch(struct conn *c, struct op_batch *batch)
{
	if (batch->head == NULL)
		return;
	struct workq_job *refused = workq_push_chain(c->io->server->workq, batch->head);
	while (refused != NULL) {
		struct op *op = (struct op *)refused;
		refused = refused->next;
		refuse_op(c, op);
	}
}

static void handle_abandon(struct conn *c, const uint8_t *pdu, size_t len, unsigned number)
{
	struct ldap_message msg;
	struct io_thread *io = c->io;
	arena_reset(&io->arena);
	if (ldap_message_decode(pdu, len, &io->arena, &io->server->limits, &msg, NULL) != LUMEN_OK) {
		conn_abort_locked(c, &io->writer, LDAP_PROTOCOL_ERROR, "malformed Abandon request");
		return;
	}
	log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u ABANDON msg=%d", (unsigned long long)c->id,
		   number, (int)msg.u.abandon_id);
	for (struct op *op = c->ops; op != NULL; op = op->next)
		if (op->message_id == msg.u.abandon_id)
			op->abandoned = true;
}

/* One framed PDU: answer it here (Abandon, Unbind) or queue it. */
static int dispatch_pdu(struct conn *c, const uint8_t *pdu, size_t len, int32_t message_id,
			int tag, struct op_batch *batch)
{
	unsigned number = c->next_op_number++;
	struct stats_thread *st = stats_current();
	enum stats_op_type type = (enum stats_op_type)stats_op_type_of_tag(tag);
	stats_count_received(st, 0, 1);
	stats_operation_initiated(st, type);
	switch (tag) {
	case LDAP_OP_UNBIND_REQUEST:
		/* Answered here, never timed: counted complete at once. */
		stats_record_operation(st, type, 0, NULL);
		log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u UNBIND", (unsigned long long)c->id,
			   number);
		c->closing = true;
		abandon_queued_locked(c);
		return LUMEN_OK;
	case LDAP_OP_ABANDON_REQUEST:
		stats_record_operation(st, type, 0, NULL);
		handle_abandon(c, pdu, len, number);
		return LUMEN_OK;
	default:
		return queue_op(c, pdu, len, message_id, tag, number, batch);
	}
}

/* An ExtendedRequest naming StartTLS: the OID is the request's first field,
 * so finding its bytes in a PDU this short is a sound cheap test (a false
 * positive only pauses reading until that operation ends). */
static bool is_starttls(const uint8_t *pdu, size_t len, int tag)
{
	static const char oid[] = LDAP_OID_STARTTLS;
	return tag == LDAP_OP_EXTENDED_REQUEST && len < 128 &&
	       memmem(pdu, len, oid, sizeof(oid) - 1) != NULL;
}

/*
 * Is there memory room for `more` bytes (a new request, or input room for
 * one)? If not, the connection waits (mem_wait): for one of its operations
 * to end, or for the I/O thread's retry when the total was the reason.
 */
static bool memory_room(struct conn *c, size_t more)
{
	struct conn_memory *m = memory_of(c);
	if (conn_memory_room(m, c->mem_held, more, c->bound, c->n_pending))
		return true;
	c->mem_wait = true;
	conn_memory_count_wait(m);
	if (conn_memory_over_total(m) || c->mem_held + more <= (c->bound ? m->max_conn_auth
									 : m->max_conn))
		io_thread_retry_memory(c->io);
	return false;
}

/* The input buffer is empty: give a buffer grown for a large PDU back. */
static void shrink_input(struct conn *c)
{
	if (c->in_cap <= CONN_INITIAL_INPUT)
		return;
	uint8_t *smaller = realloc(c->in, CONN_INITIAL_INPUT);
	if (smaller == NULL)
		return;                     /* keep the larger one; still counted */
	account(c, c->in_cap, CONN_INITIAL_INPUT);
	c->in = smaller;
	c->in_cap = CONN_INITIAL_INPUT;
}

/* Frame and dispatch whole PDUs from the input buffer while allowed. */
static void process_input(struct conn *c, struct op_batch *batch)
{
	struct ber_writer *w = &c->io->writer;
	while (c->in_len > c->in_start && accepting_ops(c)) {
		const uint8_t *pdu = c->in + c->in_start;
		size_t avail = c->in_len - c->in_start, total = 0;
		/* Every LDAPMessage is a SEQUENCE: fail fast instead of waiting for
		 * the "length" of garbage to arrive. */
		int rc = pdu[0] == 0x30 ? ber_frame(pdu, avail, max_pdu(c), &total)
					: LUMEN_EMALFORMED;
		if (rc == LUMEN_EINCOMPLETE)
			break;
		if (rc != LUMEN_OK) {
			conn_abort_locked(c, w, LDAP_PROTOCOL_ERROR,
					  rc == LUMEN_ELIMIT ? "PDU exceeds the size limit"
							     : "malformed PDU");
			return;
		}
		int32_t message_id = 0;
		int tag = -1;
		if (ldap_message_peek(pdu, total, &message_id, &tag) != LUMEN_OK) {
			conn_abort_locked(c, w, LDAP_PROTOCOL_ERROR, "malformed LDAPMessage");
			return;
		}
		if (tag == LDAP_OP_BIND_REQUEST && c->n_pending > 0) {
			c->bind_waiting = true;     /* a Bind runs alone */
			break;
		}
		if (tag != LDAP_OP_UNBIND_REQUEST && tag != LDAP_OP_ABANDON_REQUEST &&
		    !memory_room(c, total + sizeof(struct op)))
			break;
		if (is_starttls(pdu, total, tag)) {
			c->starttls_in_progress = true;   /* read nothing more until it ends */
			c->starttls_message_id = message_id;
		}
		c->bind_waiting = false;
		if (!c->first_pdu_seen) {
			c->first_pdu_seen = true;
			arm_deadline(c, 0);
		}
		if (dispatch_pdu(c, pdu, total, message_id, tag, batch) != LUMEN_OK) {
			conn_abort_locked(c, w, LDAP_OTHER, "out of memory");
			return;
		}
		c->in_start += total;
	}
	if (c->in_start == c->in_len) {
		c->in_start = c->in_len = 0;
		shrink_input(c);
	}
}

/* Make room for reading: compact, then grow up to the PDU bound. */
static int make_input_room(struct conn *c)
{
	if (c->in_start > 0 && c->in_len == c->in_cap) {
		memmove(c->in, c->in + c->in_start, c->in_len - c->in_start);
		c->in_len -= c->in_start;
		c->in_start = 0;
	}
	if (c->in_len < c->in_cap)
		return LUMEN_OK;
	size_t bound = max_pdu(c) + 16;   /* header octets beyond the contents */
	if (c->in_cap >= bound)
		return LUMEN_ELIMIT;
	size_t cap = c->in_cap * 2 < bound ? c->in_cap * 2 : bound;
	if (!memory_room(c, cap - c->in_cap))
		return LUMEN_EBUSY;
	uint8_t *bigger = realloc(c->in, cap);
	if (bigger == NULL)
		return LUMEN_ENOMEM;
	account(c, c->in_cap, cap);
	c->in = bigger;
	c->in_cap = cap;
	return LUMEN_OK;
}

/* Read decrypted bytes once. As fill_input. */
static int fill_input_tls(struct conn *c)
{
	size_t got = 0;
	switch (tls_session_read(c->tls, c->in + c->in_len, c->in_cap - c->in_len, &got)) {
	case TLS_IO_OK:
		c->in_len += got;
		c->last_activity = time(NULL);
		stats_count_received(stats_current(), (uint64_t)got, 0);
		return LUMEN_OK;
	case TLS_IO_WANT_READ:
		return LUMEN_OK;
	case TLS_IO_WANT_WRITE:
		/* The session must write first; conn_on_write wakes reading. */
		conn_arm_write_locked(c);
		return LUMEN_OK;
	default:
		return LUMEN_EIO;
	}
}

/* Read once. LUMEN_OK (data or nothing yet), LUMEN_EIO (EOF or error). */
static int fill_input(struct conn *c)
{
	int rc = make_input_room(c);
	if (rc == LUMEN_ELIMIT || rc == LUMEN_EBUSY)
		return LUMEN_OK;   /* framing reports the oversize PDU; or waiting for memory */
	if (rc != LUMEN_OK)
		return rc;
	if (c->tls_state == CONN_TLS_ON)
		return fill_input_tls(c);
	ssize_t n = read(c->fd, c->in + c->in_len, c->in_cap - c->in_len);
	if (n > 0) {
		c->in_len += (size_t)n;
		c->last_activity = time(NULL);
		stats_count_received(stats_current(), (uint64_t)n, 0);
		return LUMEN_OK;
	}
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return LUMEN_OK;
	return LUMEN_EIO;
}

/* Nothing queued or running: parked ops and unsent output wait on the
 * client, which does not make it active (slapd's idletimeout alike). */
static bool is_idle(const struct conn *c)
{
	return c->n_pending == c->n_parked;
}

/* Handshake finished: record the SSF, switch to the idle timeout. */
static void tls_established(struct conn *c)
{
	c->tls_state = CONN_TLS_ON;
	c->ssf = tls_session_ssf(c->tls);
	log_printf(LOG_LEVEL_STATS, "conn=%llu fd=%d TLS established tls_ssf=%u ssf=%u "
		   "tls_proto=%s tls_cipher=%s", (unsigned long long)c->id, c->fd, c->ssf, c->ssf,
		   tls_session_protocol(c->tls), tls_session_cipher(c->tls));
	arm_current_deadline(c);
	if (c->reading) {
		event_del(c->read_event);
		c->reading = false;
	}
}

/*
 * The TLS set-up steps the I/O thread owns: start the handshake once a
 * StartTLS answer is out, then drive it. Returns false when the connection
 * was torn down (lock released).
 */
static bool drive_tls(struct conn *c)
{
	char why[160] = "";
	if (c->tls_state == CONN_TLS_STARTING && c->n_pending == 0 && unsent(c) == 0 &&
	    !c->closing && !c->aborting) {
		if (tls_session_new(c->io->server->tls, c->fd, &c->tls) != LUMEN_OK) {
			log_printf(0, "conn=%llu fd=%d cannot start TLS: out of memory",
				   (unsigned long long)c->id, c->fd);
			teardown_locked(c);
			return false;
		}
		c->tls_state = CONN_TLS_HANDSHAKE;
		arm_current_deadline(c);
	}
	if (c->tls_state != CONN_TLS_HANDSHAKE || c->closing || c->aborting)
		return true;
	switch (tls_session_handshake(c->tls, why, sizeof(why))) {
	case TLS_IO_OK:
		tls_established(c);
		return true;
	case TLS_IO_WANT_READ:
		return true;
	case TLS_IO_WANT_WRITE:
		conn_arm_write_locked(c);
		return true;
	default:
		log_printf(LOG_LEVEL_STATS, "conn=%llu fd=%d closing: TLS handshake failed: %s",
			   (unsigned long long)c->id, c->fd, why[0] ? why : "connection closed");
		teardown_locked(c);
		return false;
	}
}

/* on_read with the lock held; every path releases it (teardown included). */
static void on_read_locked(struct conn *c, short what, struct op_batch *batch)
{
	if (!drive_tls(c))
		return;
	if ((what & EV_TIMEOUT) && is_idle(c) && !c->closing) {
		log_printf(LOG_LEVEL_STATS, "conn=%llu fd=%d idle timeout", (unsigned long long)c->id,
			   c->fd);
		teardown_locked(c);
		return;
	}
	if ((what & EV_READ) && (accepting_ops(c) || buffering_only(c)) &&
	    fill_input(c) != LUMEN_OK) {
		teardown_locked(c);             /* client went away */
		return;
	}
	process_input(c, batch);
	/* Parked ops that were abandoned, or all when closing, end (queued). */
	struct workq_job *parked = conn_take_parked_locked(c, c->closing || c->aborting);
	if (parked != NULL) {
		*batch->tail = parked;
		while (*batch->tail != NULL)
			batch->tail = &(*batch->tail)->next;
	}
	if (c->aborting || (c->closing && c->n_pending == 0)) {
		teardown_locked(c);
		return;
	}
	/* Decrypted bytes may wait in the session with nothing on the socket. */
	if (c->tls_state == CONN_TLS_ON && accepting_ops(c) && tls_session_pending(c->tls))
		event_active(c->read_event, EV_READ, 0);
	update_reading(c);
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
	teardown_locked(c);
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	struct op_batch batch;
	(void)fd;
	batch_init(&batch);
	/* The batch's operations hold references: c outlives a teardown here. */
	pthread_mutex_lock(&c->lock);
	on_read_locked(c, what, &batch);
	push_batch(c, &batch);
}

int conn_start_tls(struct conn *c, const struct op *op, const void *response, size_t len)
{
	int rc = LUMEN_OK;
	pthread_mutex_lock(&c->lock);
	if (c->closed || c->aborting || c->closing)
		rc = LUMEN_EIO;
	else if (c->tls_state != CONN_TLS_NONE)
		rc = LUMEN_EEXIST;
	else if (c->n_pending != 1 || c->ops != op || c->in_len > c->in_start)
		rc = LUMEN_EBUSY;
	if (rc == LUMEN_OK) {
		/* The answer leaves in the clear; the I/O thread starts the
		 * handshake once it is out and this operation has ended. */
		rc = conn_send_locked(c, response, len);
		if (rc == LUMEN_OK)
			c->tls_state = CONN_TLS_STARTING;
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}

void conn_get_security(struct conn *c, struct conn_security *out)
{
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&c->lock);
	out->ssf = c->ssf;
	out->is_local = c->is_local;
	out->has_peer_cred = c->has_peer_cred;
	out->uid = c->peer_uid;
	out->gid = c->peer_gid;
	out->tls = c->tls_state == CONN_TLS_ON;
	if (out->tls && tls_session_peer_subject(c->tls, out->tls_subject,
						 sizeof(out->tls_subject)) != LUMEN_OK)
		out->tls_subject[0] = '\0';
	pthread_mutex_unlock(&c->lock);
}

bool conn_output_full_locked(const struct conn *c)
{
	return unsent(c) >= CONN_MAX_UNSENT;
}

bool conn_output_full(struct conn *c)
{
	pthread_mutex_lock(&c->lock);
	bool full = conn_output_full_locked(c);
	pthread_mutex_unlock(&c->lock);
	return full;
}

struct workq_job *conn_take_parked_locked(struct conn *c, bool all)
{
	struct workq_job *chain = NULL;
	for (struct op *op = c->ops; op != NULL && c->n_parked > 0; op = op->next) {
		if (!op->parked || !(all || op->abandoned))
			continue;
		op->parked = false;
		c->n_parked--;
		op->job.next = chain;
		chain = &op->job;
	}
	return chain;
}

void conn_requeue(struct conn *c, struct workq_job *chain)
{
	if (chain == NULL)
		return;
	struct workq_job *refused = workq_push_chain(c->io->server->workq, chain);
	while (refused != NULL) {
		struct op *op = (struct op *)refused;
		refused = refused->next;
		refuse_op(c, op);
	}
}

void conn_park_op(struct conn *c, struct op *op)
{
	pthread_mutex_lock(&c->lock);
	if (op->abandoned || c->closed || c->aborting || c->closing) {
		pthread_mutex_unlock(&c->lock);
		conn_op_done(c, op);
		return;
	}
	op->running = false;
	op->parked = true;
	c->n_parked++;
	/* The client may have caught up while the op ran: the write event
	 * that drained the output found nothing parked, so look here. */
	struct workq_job *chain = unsent(c) < CONN_RESUME_UNSENT
					  ? conn_take_parked_locked(c, true) : NULL;
	pthread_mutex_unlock(&c->lock);
	conn_requeue(c, chain);
}

void conn_op_done(struct conn *c, struct op *op)
{
	pthread_mutex_lock(&c->lock);
	unlink_op(c, op);
	if (op->tag == LDAP_OP_BIND_REQUEST)
		c->bind_in_progress = false;
	if (op->tag == LDAP_OP_EXTENDED_REQUEST && c->starttls_in_progress &&
	    op->message_id == c->starttls_message_id)
		c->starttls_in_progress = false;
	recycle_op(c, op);
	c->mem_wait = false;                /* room may have come back: retry */
	c->refs--;                          /* the op's reference */
	bool last = c->refs == 0;           /* the I/O thread already let go */
	/* Wake the I/O thread if it waits for ops to end or has input left. */
	if (!last && (c->closing || c->aborting || !c->reading || c->in_len > c->in_start))
		kick_locked(c);
	pthread_mutex_unlock(&c->lock);
	if (last)
		free_conn(c);
}

void conn_output_resized_locked(struct conn *c, size_t old_cap)
{
	account(c, old_cap, c->out_cap);
}

void conn_output_drained_locked(struct conn *c)
{
	if (c->out_cap <= CONN_BASE_OUTPUT)
		return;
	uint8_t *smaller = realloc(c->out, CONN_BASE_OUTPUT);
	if (smaller == NULL)
		return;                     /* keep the larger one; still counted */
	account(c, c->out_cap, CONN_BASE_OUTPUT);
	c->out = smaller;
	c->out_cap = CONN_BASE_OUTPUT;
}

void conn_retry_memory(struct conn *c)
{
	pthread_mutex_lock(&c->lock);
	if (c->mem_wait && !c->closed) {
		c->mem_wait = false;
		kick_locked(c);
	}
	pthread_mutex_unlock(&c->lock);
}

/* Copy v into a connection-owned buffer grown as needed. LUMEN_ENOMEM. */
static int keep_copy(char **buf, size_t *cap, size_t *len, struct ber_view v)
{
	if (v.len + 1 > *cap) {
		char *bigger = realloc(*buf, v.len + 1);
		if (bigger == NULL)
			return LUMEN_ENOMEM;
		*buf = bigger;
		*cap = v.len + 1;
	}
	if (v.len > 0)
		memcpy(*buf, v.ptr, v.len);
	*len = v.len;
	return LUMEN_OK;
}

int conn_set_identity(struct conn *c, struct ber_view ndn, struct ber_view dn, bool bound)
{
	pthread_mutex_lock(&c->lock);
	int rc = keep_copy(&c->bind_dn, &c->bind_dn_cap, &c->bind_dn_len, ndn);
	if (rc == LUMEN_OK)
		rc = keep_copy(&c->authz_dn, &c->authz_dn_cap, &c->authz_dn_len, dn);
	if (rc != LUMEN_OK) {
		c->bind_dn_len = c->authz_dn_len = 0;
		bound = false;
	}
	c->bound = bound;
	pthread_mutex_unlock(&c->lock);
	return rc;
}

/* Copy a connection-owned DN into the arena under the lock. */
static int copy_out(struct conn *c, char *const *buf, const size_t *len, struct arena *arena,
		    struct ber_view *out)
{
	int rc = LUMEN_OK;
	pthread_mutex_lock(&c->lock);
	out->len = *len;
	out->ptr = (const uint8_t *)"";
	if (*len > 0) {
		out->ptr = arena_memdup(arena, *buf, *len);
		if (out->ptr == NULL)
			rc = LUMEN_ENOMEM;
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}

int conn_authz_dn(struct conn *c, struct arena *arena, struct ber_view *dn)
{
	return copy_out(c, &c->authz_dn, &c->authz_dn_len, arena, dn);
}

int conn_identity(struct conn *c, struct arena *arena, struct ber_view *ndn)
{
	return copy_out(c, &c->bind_dn, &c->bind_dn_len, arena, ndn);
}
