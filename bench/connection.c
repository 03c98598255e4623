/*
 * connection.c — one lumenbench connection: connect, bind, issue requests,
 * read and account responses (see engine.h).
 *
 * Input is read in large chunks and every whole PDU in it is handled before
 * the next read; requests issued while handling a chunk are encoded into
 * the connection's writer and leave in one write() at the end, so a busy
 * connection costs about one read and one write per round trip.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "engine.h"
#include "ldap_message.h"
#include "lumen_error.h"
#include "response.h"

#define INPUT_INITIAL (64 * 1024)
#define PDU_MAX (64 * 1024 * 1024)
/* Wait before reconnecting, so a dead server is not hammered. */
#define RETRY_DELAY_USEC 100000

static void on_readable(evutil_socket_t fd, short what, void *arg);
static void on_writable(evutil_socket_t fd, short what, void *arg);
static void on_connect_done(evutil_socket_t fd, short what, void *arg);
static void on_retry(evutil_socket_t fd, short what, void *arg);

static int32_t next_message_id(struct bench_conn *c)
{
	int32_t id = c->next_message_id;
	c->next_message_id = id == LDAP_MAX_MESSAGE_ID ? 1 : id + 1;
	return id;
}

int conn_setup(struct bench_conn *c, struct bench_thread *t)
{
	const struct bench_config *cfg = t->shared->config;
	const struct bench_workload *wl = cfg->workload;
	size_t event_size = event_get_struct_event_size();
	memset(c, 0, sizeof(*c));
	c->thread = t;
	c->fd = -1;
	c->next_message_id = 1;
	int rc = ber_writer_init(&c->out, 4096, 0);
	if (rc != LUMEN_OK)
		return rc;
	c->in_cap = INPUT_INITIAL;
	c->in = malloc(c->in_cap);
	c->slots = calloc(cfg->depth, sizeof(*c->slots));
	c->read_event = malloc(event_size);
	c->write_event = malloc(event_size);
	c->retry_event = malloc(event_size);
	if (c->in == NULL || c->slots == NULL || c->read_event == NULL ||
	    c->write_event == NULL || c->retry_event == NULL)
		return LUMEN_ENOMEM;
	if (wl->weights[BENCH_OP_AUTH] > 0) {
		for (unsigned i = 0; i < cfg->depth; i++) {
			c->slots[i].dn = malloc(AUTH_DN_MAX);
			if (c->slots[i].dn == NULL)
				return LUMEN_ENOMEM;
		}
	}
	if (evtimer_assign(c->retry_event, t->base, on_retry, c) != 0)
		return LUMEN_EIO;
	return LUMEN_OK;
}

static void close_socket(struct bench_conn *c)
{
	if (c->fd >= 0) {
		event_del(c->read_event);
		event_del(c->write_event);
		close(c->fd);
	}
	c->fd = -1;
	c->generation++;
	c->has_vlv_context = false;     /* a context lives on its connection */
	c->state = CONN_CLOSED;
	c->in_len = 0;
	c->out_sent = 0;
	ber_writer_reset(&c->out);
	c->outstanding = 0;
	for (unsigned i = 0; i < c->thread->shared->config->depth; i++)
		c->slots[i].used = false;
}

void conn_teardown(struct bench_conn *c)
{
	if (c->thread == NULL)
		return;
	if (c->fd >= 0)
		close_socket(c);
	if (c->retry_event != NULL)
		event_del(c->retry_event);
	for (unsigned i = 0; c->slots != NULL &&
	     i < c->thread->shared->config->depth; i++)
		free(c->slots[i].dn);
	free(c->slots);
	free(c->in);
	free(c->read_event);
	free(c->write_event);
	free(c->retry_event);
	ber_writer_free(&c->out);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

static void schedule_retry(struct bench_conn *c)
{
	struct timeval delay = { 0, RETRY_DELAY_USEC };
	c->state = CONN_WAITING;
	if (!c->thread->stopping)
		evtimer_add(c->retry_event, &delay);
}

/* The connection died under us: count it, drop its operations, retry. */
static void conn_lost(struct bench_conn *c)
{
	struct bench_stats *s = c->thread->stats;
	s->connections_lost++;
	s->lost_ops += c->outstanding + (c->fresh_op_pending ? 1u : 0u);
	c->fresh_op_pending = false;
	close_socket(c);
	schedule_retry(c);
	thread_op_done(c->thread, c);
}

/* Write what is queued; on EAGAIN wait for the socket to drain. */
static void conn_flush(struct bench_conn *c)
{
	while (c->out_sent < c->out.len) {
		ssize_t n = write(c->fd, c->out.buf + c->out_sent,
				  c->out.len - c->out_sent);
		if (n > 0) {
			c->out_sent += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			event_add(c->write_event, NULL);
			return;
		}
		conn_lost(c);
		return;
	}
	ber_writer_reset(&c->out);
	c->out_sent = 0;
}

static bool needs_bind(const struct bench_config *cfg)
{
	return cfg->bind_dn != NULL || cfg->reuse_percent < 100;
}

static void connected(struct bench_conn *c)
{
	const struct bench_config *cfg = c->thread->shared->config;
	/* The write event waited for the connect; from now on it waits for room. */
	event_assign(c->write_event, c->thread->base, c->fd, EV_WRITE,
		     on_writable, c);
	event_add(c->read_event, NULL);
	if (!needs_bind(cfg)) {
		c->state = CONN_READY;
		thread_conn_ready(c->thread, c);
		return;
	}
	const char *dn = cfg->bind_dn != NULL ? cfg->bind_dn : "";
	c->bind_message_id = next_message_id(c);
	c->state = CONN_BINDING;
	if (bench_encode_bind(&c->out, c->bind_message_id, dn, strlen(dn),
			      cfg->bind_password) != LUMEN_OK) {
		c->thread->stats->encode_errors++;
		conn_lost(c);
		return;
	}
	conn_flush(c);
}

static void connect_failed(struct bench_conn *c)
{
	c->thread->stats->connect_errors++;
	if (c->fresh_op_pending)
		c->thread->stats->lost_ops++;
	c->fresh_op_pending = false;
	close_socket(c);
	schedule_retry(c);
}

void conn_open(struct bench_conn *c)
{
	const struct bench_config *cfg = c->thread->shared->config;
	int one = 1;
	event_del(c->retry_event);
	if (c->fd >= 0)
		close_socket(c);
	c->fd = socket(cfg->address.ss_family,
		       SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		connect_failed(c);
		return;
	}
	c->thread->stats->connections_opened++;
	/* Both events exist from here on, so close_socket may always delete them. */
	event_assign(c->read_event, c->thread->base, c->fd, EV_READ | EV_PERSIST,
		     on_readable, c);
	event_assign(c->write_event, c->thread->base, c->fd, EV_WRITE,
		     on_connect_done, c);
	if (!cfg->nagle)
		setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(c->fd, (const struct sockaddr *)&cfg->address,
		    cfg->address_len) == 0) {
		connected(c);
		return;
	}
	if (errno != EINPROGRESS) {
		connect_failed(c);
		return;
	}
	c->state = CONN_CONNECTING;
	event_add(c->write_event, NULL);
}

static void on_connect_done(evutil_socket_t fd, short what, void *arg)
{
	struct bench_conn *c = arg;
	int error = 0;
	socklen_t len = sizeof(error);
	(void)what;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0 || error != 0) {
		connect_failed(c);
		return;
	}
	connected(c);
}

static void on_retry(evutil_socket_t fd, short what, void *arg)
{
	struct bench_conn *c = arg;
	(void)fd;
	(void)what;
	if (!c->thread->stopping)
		conn_open(c);
}

static void on_writable(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	conn_flush(arg);
}

void conn_issue(struct bench_conn *c, uint64_t start_ns)
{
	struct bench_thread *t = c->thread;
	const struct bench_config *cfg = t->shared->config;
	struct bench_slot *slot = NULL;
	for (unsigned i = 0; i < cfg->depth && slot == NULL; i++)
		if (!c->slots[i].used)
			slot = &c->slots[i];
	if (slot == NULL || c->state != CONN_READY)
		return;
	enum bench_op op = bench_workload_pick(cfg->workload,
					       bench_draw_next(&t->chooser));
	int32_t id = next_message_id(c);
	size_t before = c->out.len;
	const char *why;
	struct ber_view context = { c->has_vlv_context ? c->vlv_context : NULL,
				    c->vlv_context_len };
	int rc = bench_encode_op(&c->out, cfg->workload, &t->scratch, op, id,
				 bench_draw_next(&t->draw), context, &why);
	if (rc != LUMEN_OK) {
		t->stats->encode_errors++;
		if (ber_writer_error(&c->out) != LUMEN_OK) {
			conn_lost(c);
			return;
		}
		/* Drop the half-written request; the writer itself is sound. */
		c->out.len = before;
		return;
	}
	*slot = (struct bench_slot){ .used = true, .op = (uint8_t)op,
		.message_id = id, .start_ns = start_ns, .dn = slot->dn };
	c->outstanding++;
}

static void complete(struct bench_conn *c, struct bench_slot *slot, int code)
{
	struct bench_thread *t = c->thread;
	struct bench_stats *s = t->stats;
	s->completed_total++;
	if (thread_measuring(t)) {
		uint64_t now = bench_now_ns();
		s->ops[slot->op]++;
		c->measured_ops++;
		histogram_record(&s->latency[slot->op],
				 now > slot->start_ns ? now - slot->start_ns : 0);
		s->results[bench_result_slot(code)]++;
		if (!bench_result_is_success(code))
			s->failed[slot->op]++;
	}
	slot->used = false;
	c->outstanding--;
	thread_op_done(t, c);
}

/* The search of an auth found its entry (or not): bind as it next. */
static void auth_search_done(struct bench_conn *c, struct bench_slot *slot, int code)
{
	const struct bench_config *cfg = c->thread->shared->config;
	if (code != LDAP_SUCCESS) {
		complete(c, slot, code);
		return;
	}
	if (slot->dn_len == 0) {
		c->thread->stats->auth_no_entry++;
		complete(c, slot, LDAP_NO_SUCH_OBJECT);
		return;
	}
	slot->step = 1;
	slot->message_id = next_message_id(c);
	if (bench_encode_bind(&c->out, slot->message_id, slot->dn, slot->dn_len,
			      cfg->workload->password) != LUMEN_OK) {
		c->thread->stats->encode_errors++;
		conn_lost(c);
	}
}

static void bind_done(struct bench_conn *c, int code)
{
	struct bench_thread *t = c->thread;
	if (code != LDAP_SUCCESS) {
		t->stats->bind_failures++;
		if (c->fresh_op_pending)
			t->stats->lost_ops++;
		c->fresh_op_pending = false;
		close_socket(c);
		schedule_retry(c);
		return;
	}
	c->state = CONN_READY;
	thread_conn_ready(t, c);
}

static struct bench_slot *find_slot(struct bench_conn *c, int32_t id)
{
	for (unsigned i = 0; i < c->thread->shared->config->depth; i++)
		if (c->slots[i].used && c->slots[i].message_id == id)
			return &c->slots[i];
	return NULL;
}

static void handle_pdu(struct bench_conn *c, const uint8_t *pdu, size_t len)
{
	struct bench_response r;
	struct bench_stats *s = c->thread->stats;
	if (bench_response_parse(pdu, len, &r) != LUMEN_OK) {
		s->protocol_errors++;
		conn_lost(c);
		return;
	}
	if (r.message_id == 0) {
		/* A Notice of Disconnection: the server is closing on us. */
		conn_lost(c);
		return;
	}
	if (c->state == CONN_BINDING && r.message_id == c->bind_message_id) {
		bind_done(c, r.has_result ? r.result_code : LDAP_PROTOCOL_ERROR);
		return;
	}
	struct bench_slot *slot = find_slot(c, r.message_id);
	if (slot == NULL) {
		s->protocol_errors++;
		return;
	}
	if (r.op == LDAP_OP_SEARCH_ENTRY) {
		if (thread_measuring(c->thread))
			s->entries++;
		if (slot->op == BENCH_OP_AUTH && slot->dn_len == 0 &&
		    r.entry_dn.len > 0 && r.entry_dn.len <= AUTH_DN_MAX) {
			memcpy(slot->dn, r.entry_dn.ptr, r.entry_dn.len);
			slot->dn_len = (uint16_t)r.entry_dn.len;
		}
		return;
	}
	if (!r.has_result)
		return;   /* references, intermediate responses */
	if (r.vlv_context.ptr != NULL) {
		c->has_vlv_context = r.vlv_context.len <= sizeof(c->vlv_context);
		c->vlv_context_len = c->has_vlv_context ? r.vlv_context.len : 0;
		if (c->has_vlv_context && r.vlv_context.len > 0)
			memcpy(c->vlv_context, r.vlv_context.ptr, r.vlv_context.len);
	}
	if (slot->op == BENCH_OP_AUTH && slot->step == 0)
		auth_search_done(c, slot, r.result_code);
	else
		complete(c, slot, r.result_code);
}

/* Make room for a PDU that does not fit in what is left of the buffer. */
static int grow_input(struct bench_conn *c)
{
	if (c->in_cap >= PDU_MAX)
		return LUMEN_ELIMIT;
	uint8_t *bigger = realloc(c->in, c->in_cap * 2);
	if (bigger == NULL)
		return LUMEN_ENOMEM;
	c->in = bigger;
	c->in_cap *= 2;
	return LUMEN_OK;
}

static void on_readable(evutil_socket_t fd, short what, void *arg)
{
	struct bench_conn *c = arg;
	(void)what;
	ssize_t n = read(fd, c->in + c->in_len, c->in_cap - c->in_len);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		conn_lost(c);
		return;
	}
	c->in_len += (size_t)n;
	unsigned generation = c->generation;
	size_t offset = 0;
	while (offset < c->in_len) {
		size_t total;
		int rc = ber_frame(c->in + offset, c->in_len - offset, PDU_MAX, &total);
		if (rc == LUMEN_EINCOMPLETE)
			break;
		if (rc != LUMEN_OK) {
			c->thread->stats->protocol_errors++;
			conn_lost(c);
			return;
		}
		handle_pdu(c, c->in + offset, total);
		/* Handling may have closed or replaced the socket. */
		if (c->generation != generation)
			return;
		offset += total;
	}
	memmove(c->in, c->in + offset, c->in_len - offset);
	c->in_len -= offset;
	if (c->in_len == c->in_cap && grow_input(c) != LUMEN_OK) {
		c->thread->stats->protocol_errors++;
		conn_lost(c);
		return;
	}
	conn_flush(c);
}

void conn_send(struct bench_conn *c)
{
	if (c->fd >= 0 && c->state >= CONN_BINDING)
		conn_flush(c);
}

void conn_finish(struct bench_conn *c)
{
	if (c->fd >= 0 && c->state == CONN_READY &&
	    bench_encode_unbind(&c->out, next_message_id(c)) == LUMEN_OK)
		conn_flush(c);
	if (c->fd >= 0)
		close_socket(c);
	event_del(c->retry_event);
}

/* Churn: unbind and close, then open a fresh connection for the next op. */
void conn_reopen(struct bench_conn *c, bool with_op, uint64_t start_ns)
{
	conn_finish(c);
	c->fresh_op_pending = with_op;
	c->fresh_op_start_ns = start_ns;
	conn_open(c);
}
