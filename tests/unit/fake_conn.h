/*
 * fake_conn.h — a connection for unit suites of the operation layer: it
 * implements conn.h without a socket, an event loop or a work queue.
 * Responses are captured in `sent` (what a client would read, in order);
 * an abort is recorded instead of closing; the identity, SSF and "output
 * full" answer are whatever the test sets.
 *
 * Link: a suite names fake_conn in the Makefile (UNIT_FAKES_<module>);
 * this file then defines every conn.h function, so none of the real
 * conn_*.o is pulled from libserver.a. A function added to conn.h must
 * be added here too (the link fails with a duplicate definition).
 *
 * Ownership: fake_conn_new/fake_conn_free; ops from fake_conn_op belong to
 * the connection until conn_op_done, and to the test after it.
 * Thread-safety: none (one test thread).
 */
#ifndef LUMEN_FAKE_CONN_H
#define LUMEN_FAKE_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ber.h"
#include "conn.h"
#include "ops.h"

struct conn {
	uint64_t id;
	unsigned ssf;                    /* conn_ssf */
	struct conn_security security;   /* conn_get_security (ssf above wins) */
	bool output_full;                /* conn_output_full, conn_op_begin */
	bool closing;                    /* conn_op_begin skips */
	char ndn[256], dn[256];          /* the bound identity; "" anonymous */
	bool bound;
	uint8_t *sent;                   /* every byte sent, in order */
	size_t sent_len, sent_cap;
	bool aborted;                    /* conn_abort was called */
	int abort_code;
	bool tls_started;                /* conn_start_tls succeeded */
	unsigned n_done, n_parked;       /* conn_op_done, conn_park_op calls */
	unsigned n_handed_off;           /* conn_hand_off_op calls */
	bool held;                       /* conn_hold_output was called */
	bool password_change_only;       /* conn_set_password_change_only */
};

struct conn *fake_conn_new(uint64_t id);
void fake_conn_free(struct conn *c);
/* An op for the PDU (message ID and tag peeked), as the I/O thread makes
 * it; NULL when the PDU does not frame. Freed by conn_op_done. */
struct op *fake_conn_op(struct conn *c, const uint8_t *pdu, size_t len);
/* Forget what was sent. */
void fake_conn_clear(struct conn *c);

#endif
