/*
 * fake_conn.c — conn.h without a socket (fake_conn.h).
 */
#include "fake_conn.h"

#include <stdlib.h>
#include <string.h>

#include "ldap_message.h"
#include "lumen_error.h"

struct conn *fake_conn_new(uint64_t id)
{
	struct conn *c = calloc(1, sizeof(*c));
	if (c != NULL)
		c->id = id;
	return c;
}

void fake_conn_free(struct conn *c)
{
	free(c->sent);
	free(c);
}

void fake_conn_clear(struct conn *c)
{
	c->sent_len = 0;
}

struct op *fake_conn_op(struct conn *c, const uint8_t *pdu, size_t len)
{
	struct op *op = calloc(1, sizeof(*op));
	if (op == NULL)
		return NULL;
	op->pdu = malloc(len);
	if (op->pdu == NULL || ldap_message_peek(pdu, len, &op->message_id, &op->tag) != LUMEN_OK) {
		free(op->pdu);
		free(op);
		return NULL;
	}
	memcpy(op->pdu, pdu, len);
	op->pdu_len = op->pdu_cap = len;
	op->conn = c;
	op->job.run = ops_run_job;
	clock_gettime(CLOCK_MONOTONIC, &op->queued_at);
	return op;
}

static int capture(struct conn *c, const void *data, size_t len)
{
	if (c->sent_len + len > c->sent_cap) {
		size_t cap = (c->sent_len + len) * 2;
		uint8_t *bigger = realloc(c->sent, cap);
		if (bigger == NULL)
			return LUMEN_ENOMEM;
		c->sent = bigger;
		c->sent_cap = cap;
	}
	memcpy(c->sent + c->sent_len, data, len);
	c->sent_len += len;
	return LUMEN_OK;
}

/* ----------------------------------------------------------- conn.h */

int conn_create(struct io_thread *io, int fd, const struct sockaddr *peer, socklen_t peer_len,
		const char *listener_name, bool is_tcp, bool tls, struct conn **out)
{
	(void)io, (void)fd, (void)peer, (void)peer_len, (void)listener_name, (void)is_tcp,
		(void)tls;
	*out = NULL;
	return LUMEN_EIO;
}

void conn_begin_close(struct conn *c)
{
	c->closing = true;
}

void conn_list_add(struct conn **head, struct conn *c)
{
	(void)head, (void)c;
}

void conn_list_remove(struct conn **head, struct conn *c)
{
	(void)head, (void)c;
}

struct conn *conn_list_next(const struct conn *c)
{
	(void)c;
	return NULL;
}

uint64_t conn_number(const struct conn *c)
{
	return c->id;
}

int conn_get_info(struct conn *c, struct arena *arena, struct conn_info *out)
{
	(void)arena;
	*out = (struct conn_info){ .id = c->id, .peer = "IP=192.0.2.1:1", .local = "fake" };
	return LUMEN_OK;
}

enum conn_op_start conn_op_begin(struct conn *c, struct op *op, bool park_if_full)
{
	if (op->abandoned || c->closing || c->aborted)
		return CONN_OP_SKIP;
	if (park_if_full && c->output_full)
		return CONN_OP_PARK;
	op->running = true;
	return CONN_OP_RUN;
}

int conn_send_op(struct conn *c, const struct op *op, const void *data, size_t len)
{
	if (op->abandoned || c->aborted)
		return LUMEN_EIO;
	return capture(c, data, len);
}

bool conn_output_full(struct conn *c)
{
	return c->output_full;
}

bool conn_memory_pressed(const struct conn *c)
{
	(void)c;
	return false;
}

void conn_park_op(struct conn *c, struct op *op, bool wait)
{
	op->waiting = wait;
	op->running = false;
	op->parked = true;
	c->n_parked++;
}

void conn_hand_off_op(struct conn *c, struct op *op)
{
	op->running = false;
	c->n_handed_off++;
}

void conn_wake_op(struct conn *c, struct op *op)
{
	(void)c;
	op->woken = true;
}

void conn_op_done(struct conn *c, struct op *op)
{
	if (op->persist != NULL)
		op->persist->release(op->persist);
	c->n_done++;
	free(op->pdu);
	free(op);
}

void conn_abort(struct conn *c, struct ber_writer *w, int code, const char *reason)
{
	ber_writer_reset(w);
	ldap_encode_notice_of_disconnection(w, code, reason);
	if (!c->aborted && ber_writer_error(w) == LUMEN_OK)
		capture(c, w->buf, w->len);
	c->aborted = true;
	c->abort_code = code;
}

int conn_hold_output(struct conn *c, const struct timeval *delay)
{
	(void)delay;
	c->held = true;
	return LUMEN_OK;
}

int conn_start_tls(struct conn *c, const struct op *op, const void *response, size_t len)
{
	if (c->tls_started)
		return LUMEN_EEXIST;
	c->tls_started = true;
	return conn_send_op(c, op, response, len);
}

void conn_get_security(struct conn *c, struct conn_security *out)
{
	*out = c->security;
	out->ssf = c->ssf;
}

unsigned conn_ssf(struct conn *c)
{
	return c->ssf;
}

static void copy_dn(char *to, size_t room, struct ber_view v)
{
	size_t n = v.len < room - 1 ? v.len : room - 1;
	if (n > 0)
		memcpy(to, v.ptr, n);
	to[n] = '\0';
}

int conn_set_identity(struct conn *c, struct ber_view ndn, struct ber_view dn, bool bound)
{
	copy_dn(c->ndn, sizeof(c->ndn), ndn);
	copy_dn(c->dn, sizeof(c->dn), dn);
	c->bound = bound;
	return LUMEN_OK;
}

void conn_set_password_change_only(struct conn *c, bool on)
{
	c->password_change_only = on;
}

bool conn_password_change_only(struct conn *c)
{
	return c->password_change_only;
}

static int copy_out(const char *dn, struct arena *arena, struct ber_view *out)
{
	size_t len = strlen(dn);
	out->len = len;
	out->ptr = (const uint8_t *)"";
	if (len > 0 && (out->ptr = arena_memdup(arena, dn, len)) == NULL)
		return LUMEN_ENOMEM;
	return LUMEN_OK;
}

int conn_identity(struct conn *c, struct arena *arena, struct ber_view *ndn)
{
	return copy_out(c->ndn, arena, ndn);
}

int conn_authz_dn(struct conn *c, struct arena *arena, struct ber_view *dn)
{
	return copy_out(c->dn, arena, dn);
}

int conn_send_final(struct conn *c, struct op *op, const void *data, size_t len)
{
	int rc = conn_send_op(c, op, data, len);
	if (rc == LUMEN_OK)
		op->answered = true;
	return rc;
}

bool conn_op_commit(struct conn *c, struct op *op)
{
	bool go = !op->abandoned && !c->aborted;
	op->committing = go;
	return go;
}

bool conn_op_canceled(struct conn *c, const struct op *op)
{
	(void)c;
	return op->cancel_requested;
}
