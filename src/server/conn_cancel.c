/*
 * conn_cancel.c — Cancel (RFC 3909), answered on the I/O thread like
 * Abandon: the request names an outstanding operation of the same
 * connection, which is stopped where Abandon stops it; unlike Abandon,
 * both are answered once it has ended: the operation with canceled (118),
 * then the Cancel with success.
 *
 * What cannot be cancelled (answered at once): an unknown message ID
 * (noSuchOperation); Bind, StartTLS and an operation already being
 * cancelled or abandoned (cannotCancel, operationsError, tooLate as slapd
 * 2.5); an operation whose final result was sent or a write that reached
 * its commit (tooLate). A Cancel waiting for its target cannot be
 * cancelled either (cannotCancel); Unbind, Abandon and answered Cancels
 * are never outstanding, so naming one is noSuchOperation.
 */
#include "conn_internal.h"

#include <string.h>

#include "ldap_cancel.h"
#include "ldap_message.h"
#include "log.h"
#include "lumen_error.h"
#include "ops.h"
#include "stats.h"

/* Room for the two small results a cancellation ends with. */
#define CANCEL_ANSWER_BYTES 128u

/* A decision about a Cancel: its result code and why (NULL: none). */
struct cancel_verdict {
	int code;
	const char *why;
	bool deferred;           /* answered when the target ends */
};

static void log_cancel_result(const struct conn *c, unsigned number, int code, const char *why)
{
	log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u RESULT oid= err=%d text=%s",
		   (unsigned long long)c->id, number, code, why != NULL ? why : "");
}

/* Append the Cancel's own ExtendedResponse to w; count and log it. */
static void append_cancel_response(struct conn *c, struct ber_writer *w, int32_t message_id,
				   unsigned number, int code, const char *why)
{
	ldap_encode_extended_response(w, message_id, code, why, NULL, NULL);
	stats_record_operation(stats_current(), STATS_OP_EXTENDED, code, NULL);
	log_cancel_result(c, number, code, why);
}

/* Send what w holds; a writer that failed sends nothing (logged). */
static void send_writer_locked(struct conn *c, const struct ber_writer *w)
{
	int rc = ber_writer_error(w);
	if (rc == LUMEN_OK)
		rc = conn_send_locked(c, w->buf, w->len);
	if (rc != LUMEN_OK)
		log_printf(0, "conn=%llu cannot send the Cancel results: %s",
			   (unsigned long long)c->id, lumen_strerror(rc));
}

static bool is_starttls_op(const struct conn *c, const struct op *op)
{
	return op->tag == LDAP_OP_EXTENDED_REQUEST && c->starttls_in_progress &&
	       op->message_id == c->starttls_message_id;
}

/* What to do with a Cancel naming target (NULL: not outstanding). */
static struct cancel_verdict judge(const struct conn *c, const struct op *target)
{
	if (target == NULL)
		return (struct cancel_verdict){ LDAP_NO_SUCH_OPERATION, "message ID not found", false };
	if (target->tag == LDAP_OP_BIND_REQUEST || is_starttls_op(c, target))
		return (struct cancel_verdict){ LDAP_CANNOT_CANCEL, NULL, false };
	if (target->cancel_requested)
		return (struct cancel_verdict){ LDAP_OPERATIONS_ERROR,
						"message ID already being cancelled", false };
	if (target->abandoned)
		return (struct cancel_verdict){ LDAP_TOO_LATE, "operation was abandoned", false };
	if (target->answered)
		return (struct cancel_verdict){ LDAP_TOO_LATE, "operation already answered", false };
	if (target->committing)
		return (struct cancel_verdict){ LDAP_TOO_LATE, "write already committing", false };
	return (struct cancel_verdict){ LDAP_SUCCESS, NULL, true };
}

static struct op *find_op(struct conn *c, int32_t message_id)
{
	for (struct op *op = c->ops; op != NULL; op = op->next)
		if (op->message_id == message_id)
			return op;
	return NULL;
}

/* Is message_id a Cancel still waiting for its target to end? */
static bool is_pending_cancel(const struct conn *c, int32_t message_id)
{
	for (const struct op *op = c->ops; op != NULL; op = op->next)
		if (op->cancel_requested && op->cancel_message_id == message_id)
			return true;
	return false;
}

/* The request itself: its value and controls. LDAP_SUCCESS when usable. */
static struct cancel_verdict check_request(const struct ldap_message *msg, int32_t *cancel_id)
{
	const struct ldap_extended_request *req = &msg->u.extended;
	for (size_t i = 0; i < msg->n_controls; i++)
		if (msg->controls[i].critical)
			return (struct cancel_verdict){ LDAP_UNAVAILABLE_CRITICAL_EXTENSION,
							"critical control not supported with Cancel",
							false };
	if (!req->has_value)
		return (struct cancel_verdict){ LDAP_PROTOCOL_ERROR, "no message ID supplied", false };
	const char *why = NULL;
	if (ldap_cancel_decode(req->value, cancel_id, &why) != LUMEN_OK)
		return (struct cancel_verdict){ LDAP_PROTOCOL_ERROR, why, false };
	return (struct cancel_verdict){ LDAP_SUCCESS, NULL, false };
}

bool conn_cancel_locked(struct conn *c, const uint8_t *pdu, size_t len, unsigned number)
{
	struct ldap_message msg;
	struct ber_view name;
	struct io_thread *io = c->io;
	/* Only a Cancel is decoded here; anything that does not decode goes
	 * the usual way (a worker rejects it). */
	if (ldap_message_peek_extended_name(pdu, len, &name) != LUMEN_OK ||
	    !ber_view_eq_str(name, LDAP_OID_CANCEL))
		return false;
	arena_reset(&io->arena);
	if (ldap_message_decode(pdu, len, &io->arena, &io->server->limits, &msg, NULL) != LUMEN_OK)
		return false;
	int32_t cancel_id = -1;
	struct cancel_verdict v = check_request(&msg, &cancel_id);
	log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u EXT oid=" LDAP_OID_CANCEL,
		   (unsigned long long)c->id, number);
	log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u CANCEL msg=%d", (unsigned long long)c->id,
		   number, (int)cancel_id);
	if (v.code == LDAP_SUCCESS) {
		struct op *target = find_op(c, cancel_id);
		v = is_pending_cancel(c, cancel_id)
			    ? (struct cancel_verdict){ LDAP_CANNOT_CANCEL, "a Cancel cannot be cancelled",
						       false }
			    : judge(c, target);
		if (v.deferred) {
			/* Stop it where Abandon would; conn_cancel_answer_locked
			 * answers both once it has ended. */
			target->abandoned = true;
			target->cancel_requested = true;
			target->cancel_message_id = msg.message_id;
			target->cancel_number = number;
			return true;
		}
	}
	ber_writer_reset(&io->writer);
	append_cancel_response(c, &io->writer, msg.message_id, number, v.code, v.why);
	send_writer_locked(c, &io->writer);
	return true;
}

void conn_cancel_answer_locked(struct conn *c, const struct op *op)
{
	if (!op->cancel_requested || c->closed || c->aborting || c->closing)
		return;
	/* Not on the hot path (one small buffer per cancellation), and the
	 * caller may be a worker or the I/O thread: a writer of its own. */
	struct ber_writer w;
	if (ber_writer_init(&w, CANCEL_ANSWER_BYTES, 0) != LUMEN_OK) {
		log_printf(0, "conn=%llu op=%u cannot answer Cancel: out of memory",
			   (unsigned long long)c->id, op->cancel_number);
		return;
	}
	int response = ops_response_tag(op->tag);
	if (response == LDAP_OP_EXTENDED_RESPONSE)
		ldap_encode_extended_response(&w, op->message_id, LDAP_CANCELED, NULL, NULL, NULL);
	else if (response >= 0)
		ldap_encode_result(&w, op->message_id, response, LDAP_CANCELED, NULL, NULL, NULL, 0);
	log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u RESULT tag=%d err=%d text=canceled",
		   (unsigned long long)c->id, op->number, 0x60 | response, LDAP_CANCELED);
	append_cancel_response(c, &w, op->cancel_message_id, op->cancel_number, LDAP_SUCCESS, NULL);
	send_writer_locked(c, &w);
	ber_writer_free(&w);
}
