/*
 * conn_frame.c — a connection's input: reading (plain or through TLS) into
 * its buffer within the PDU bound and the memory bounds, and framing whole
 * PDUs by BER length; each is peeked and handed to conn_ops.c.
 */
#include "conn_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ldap_message.h"
#include "lumen_error.h"
#include "ops.h"
#include "stats.h"
#include "tls.h"

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
	struct conn_memory *m = conn_memory_of(c);
	if (conn_memory_room(m, c->mem_held, more, c->bound, c->n_pending))
		return true;
	c->mem_wait = true;
	conn_memory_count_wait(m);
	if (conn_memory_over_total(m) || c->mem_held + more <= (c->bound ? m->max_conn_auth
									 : m->max_conn))
		io_thread_retry_memory(c->io);
	return false;
}

/* Frame and dispatch whole PDUs from the input buffer while allowed. */
void conn_process_input_locked(struct conn *c, struct op_batch *batch)
{
	struct ber_writer *w = &c->io->writer;
	while (c->in_len > c->in_start && conn_accepting_ops(c)) {
		const uint8_t *pdu = c->in + c->in_start;
		size_t avail = c->in_len - c->in_start, total = 0;
		/* Every LDAPMessage is a SEQUENCE: fail fast instead of waiting for
		 * the "length" of garbage to arrive. */
		int rc = pdu[0] == 0x30 ? ber_frame(pdu, avail, conn_max_pdu(c), &total)
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
			conn_arm_deadline(c, 0);
		}
		if (conn_dispatch_pdu_locked(c, pdu, total, message_id, tag, batch) != LUMEN_OK) {
			conn_abort_locked(c, w, LDAP_OTHER, "out of memory");
			return;
		}
		c->in_start += total;
	}
	if (c->in_start == c->in_len) {
		c->in_start = c->in_len = 0;
		conn_shrink_buffer(c, &c->in, &c->in_cap, CONN_INITIAL_INPUT);
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
	size_t bound = conn_max_pdu(c) + 16;   /* header octets beyond the contents */
	if (c->in_cap >= bound)
		return LUMEN_ELIMIT;
	size_t cap = c->in_cap * 2 < bound ? c->in_cap * 2 : bound;
	if (!memory_room(c, cap - c->in_cap))
		return LUMEN_EBUSY;
	return conn_resize_buffer(c, &c->in, &c->in_cap, cap);
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
int conn_fill_input_locked(struct conn *c)
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
