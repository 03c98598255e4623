/*
 * conn_frame.c — a connection's input: reading (plain or through TLS)
 * within the PDU bound and the memory bounds, and framing whole PDUs by
 * BER length; each is peeked and handed to conn_ops.c.
 *
 * Where the bytes go: a connection with no input left over reads into its
 * I/O thread's scratch buffer (lent for one on_read: the thread serves no
 * other connection meanwhile, and an op copies its PDU before the buffer
 * is lent again). Whatever is left once framing stops — a partial request,
 * or requests held back — moves to a buffer of the connection's own, just
 * large enough, which is freed once empty. So an idle connection holds no
 * input buffer, and a slow client dripping a request holds only what it
 * sent.
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

/* An ExtendedRequest whose requestName is StartTLS: read, not searched for,
 * since the OID's bytes may sit anywhere in another request (a Cancel's
 * control), and a flag set for one that never becomes an operation would
 * stop reading for good. */
static bool is_starttls(const uint8_t *pdu, size_t len, int tag)
{
	struct ber_view name;
	return tag == LDAP_OP_EXTENDED_REQUEST &&
	       ldap_message_peek_extended_name(pdu, len, &name) == LUMEN_OK &&
	       ber_view_eq_str(name, LDAP_OID_STARTTLS);
}

/*
 * Is there memory room for `more` bytes (a new request, or input room for
 * one)? If not, the connection waits (mem_wait): for one of its operations
 * to end, or, when the total is the reason, also for released memory to
 * wake it (conn_memory_wait), whichever comes first.
 */
static bool memory_room(struct conn *c, size_t more)
{
	struct conn_memory *m = conn_memory_of(c);
	if (conn_memory_room(m, conn_held(c), more, c->bound, c->n_pending)) {
		/* Room came another way (an op of its own ended): leave the
		 * list, or a stale entry would hold up those behind it. */
		if (c->mem_listed)
			conn_memory_unwait(m, &c->mem_waiter);
		c->mem_listed = false;
		return true;
	}
	if (conn_memory_room_in_conn(m, conn_held(c), more, c->bound)) {
		if (!conn_memory_wait(m, &c->mem_waiter, more))
			return true;              /* memory was released meanwhile */
		c->mem_listed = true;
	}
	c->mem_wait = true;
	conn_memory_count_wait(m);
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
}

void conn_drop_borrowed_input(struct conn *c)
{
	if (!c->in_borrowed)
		return;
	c->in = c->kept_in;
	c->in_cap = c->kept_in_cap;
	c->kept_in = NULL;
	c->kept_in_cap = 0;
	c->in_start = c->in_len = 0;
	c->in_borrowed = false;
}

/* Capacity for `left` bytes: a power of two, at least CONN_MIN_INPUT. */
static size_t kept_input_size(size_t left)
{
	size_t cap = CONN_MIN_INPUT;
	while (cap < left)
		cap *= 2;
	return cap;
}

/* Move what is left of the scratch buffer into c's own buffer, resized
 * to fit it unless it already does. */
static int keep_borrowed_input(struct conn *c)
{
	const uint8_t *from = c->in + c->in_start;
	size_t left = c->in_len - c->in_start;
	conn_drop_borrowed_input(c);
	size_t cap = kept_input_size(left);
	if (c->in_cap < left || c->in_cap > 2 * cap) {
		if (conn_resize_buffer(c, CONN_MEM_QUEUED, &c->in, &c->in_cap, cap) != LUMEN_OK)
			return LUMEN_ENOMEM;
	}
	memcpy(c->in, from, left);
	c->in_len = left;
	return LUMEN_OK;
}

int conn_settle_input_locked(struct conn *c)
{
	if (c->in_start < c->in_len) {
		if (c->in_borrowed)
			return keep_borrowed_input(c);
		return LUMEN_OK;
	}
	conn_drop_borrowed_input(c);
	conn_shrink_buffer(c, CONN_MEM_QUEUED, &c->in, &c->in_cap, 0);
	c->in_start = c->in_len = 0;
	return LUMEN_OK;
}

/*
 * Read into the scratch buffer, after what c kept (little: a partial
 * request), so that reads stay large; c's own buffer stays allocated and
 * takes the rest back when framing stops (conn_settle_input_locked).
 */
static void borrow_input(struct conn *c)
{
	size_t left = c->in_len - c->in_start;
	if (left > 0)
		memcpy(c->io->input, c->in + c->in_start, left);
	c->kept_in = c->in;
	c->kept_in_cap = c->in_cap;
	c->in = c->io->input;
	c->in_cap = IO_INPUT_BYTES;
	c->in_start = 0;
	c->in_len = left;
	c->in_borrowed = true;
}

/* Make room for reading: the scratch buffer unless a large request is
 * being read; else compact, then grow up to the PDU bound. */
static int make_input_room(struct conn *c)
{
	/* (Read twice in one pass: what the first read left is c's again.) */
	if (c->in_borrowed && keep_borrowed_input(c) != LUMEN_OK)
		return LUMEN_ENOMEM;
	if (c->in_len - c->in_start < IO_INPUT_BYTES / 2) {
		borrow_input(c);
		return LUMEN_OK;
	}
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
	return conn_resize_buffer(c, CONN_MEM_QUEUED, &c->in, &c->in_cap, cap);
}

/* Read decrypted bytes once. As fill_input. */
static int fill_input_tls(struct conn *c)
{
	size_t got = 0;
	enum tls_io io = tls_session_read(c->tls, c->in + c->in_len, c->in_cap - c->in_len, &got);
	conn_count_tls_locked(c);
	switch (io) {
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
