/*
 * conn_txn.c — a connection's open transaction (RFC 5805): at most one,
 * its queued updates counted in the connection's memory, discarded on
 * Bind, Unbind and close (RFC 5805 §3.5), taken whole by End Transaction.
 */
#include "conn_internal.h"

#include <string.h>

#include "lumen_error.h"
#include "ops.h"
#include "txn.h"

int conn_txn_start(struct conn *c, uint8_t id[TXN_ID_SIZE])
{
	struct txn_queue *q = NULL;
	int rc = txn_queue_create(&q);
	if (rc != LUMEN_OK)
		return rc;
	pthread_mutex_lock(&c->lock);
	if (c->txn != NULL) {
		pthread_mutex_unlock(&c->lock);
		txn_queue_free(q);
		return LUMEN_EBUSY;
	}
	c->txn = q;
	conn_account(c, CONN_MEM_QUEUED, 0, q->bytes);
	memcpy(id, q->id, TXN_ID_SIZE);
	pthread_mutex_unlock(&c->lock);
	return LUMEN_OK;
}

int conn_txn_add(struct conn *c, struct ber_view id, const struct server_database *db,
		 const struct op *op)
{
	pthread_mutex_lock(&c->lock);
	int rc = LUMEN_ENOTFOUND;
	if (txn_queue_is(c->txn, id)) {
		size_t before = c->txn->bytes;
		rc = txn_queue_add(c->txn, db, op->message_id, op->tag, op->number, op->pdu,
				   op->pdu_len);
		conn_account(c, CONN_MEM_QUEUED, before, c->txn->bytes);
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}

/* An update that came before end is still queued or running and not yet
 * answered: it may be one of the transaction's, not yet in the queue (an
 * update is queued before it is answered; an answered one may still be
 * finishing). */
static bool earlier_update_outstanding(const struct conn *c, const struct op *end)
{
	for (const struct op *o = c->ops; o != NULL; o = o->next) {
		bool update = o->tag == LDAP_OP_ADD_REQUEST || o->tag == LDAP_OP_DELETE_REQUEST ||
			      o->tag == LDAP_OP_MODIFY_REQUEST || o->tag == LDAP_OP_MODDN_REQUEST;
		if (o != end && update && !o->answered && o->number < end->number)
			return true;
	}
	return false;
}

int conn_txn_take(struct conn *c, struct ber_view id, const struct op *end,
		  struct txn_queue **out)
{
	pthread_mutex_lock(&c->lock);
	int rc = LUMEN_ENOTFOUND;
	*out = NULL;
	if (txn_queue_is(c->txn, id))
		rc = earlier_update_outstanding(c, end) ? LUMEN_EBUSY : LUMEN_OK;
	/* The End waits for those updates; conn_txn_op_done_locked wakes it. */
	c->txn_end_waiting = rc == LUMEN_EBUSY ? (struct op *)end : NULL;
	if (rc == LUMEN_OK) {
		*out = c->txn;
		c->txn = NULL;
		conn_account(c, CONN_MEM_QUEUED, (*out)->bytes, 0);
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}

void conn_txn_op_done_locked(struct conn *c, const struct op *op)
{
	struct op *end = c->txn_end_waiting;
	if (end == NULL)
		return;
	if (op == end) {
		c->txn_end_waiting = NULL;
		return;
	}
	if (earlier_update_outstanding(c, end))
		return;
	c->txn_end_waiting = NULL;
	end->woken = true;
	if (end->parked && end->waiting)
		conn_kick_locked(c);             /* on_read queues it */
}

void conn_txn_discard_locked(struct conn *c)
{
	if (c->txn == NULL)
		return;
	conn_account(c, CONN_MEM_QUEUED, c->txn->bytes, 0);
	txn_queue_free(c->txn);
	c->txn = NULL;
}
