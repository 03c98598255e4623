/*
 * conn_ops.c — a connection's operations: the pool of recycled op objects,
 * the list of outstanding ones, Abandon and Unbind (answered on the I/O
 * thread, as Cancel is in conn_cancel.c), the hand-off to the work queue
 * (busy when it is full), short reads run to completion on the I/O thread
 * (inline_ops.h), and the worker side: starting, parking, sending for and
 * ending an op, and the final send and commit point after which a Cancel
 * is too late.
 */
#include "conn_internal.h"

#include <stdlib.h>
#include <string.h>

#include "dlist.h"
#include "inline_ops.h"
#include "ldap_message.h"
#include "log.h"
#include "lumen_error.h"
#include "ops.h"
#include "stats.h"
#include "workq.h"

/* Recycled op objects kept per connection. */
#define CONN_FREE_OPS_KEPT 8u
/* Recycled op objects keep a PDU buffer up to this size (most requests are
 * well under 1 KiB); larger ones are freed with their op. */
#define CONN_OP_PDU_KEPT (16u * 1024u)
/* What an idle connection keeps: one op object, its PDU buffer this small. */
#define CONN_OP_PDU_IDLE 1024u

/* Mark queued operations so workers drop them unanswered. */
void conn_abandon_queued_locked(struct conn *c)
{
	for (struct op *op = c->ops; op != NULL; op = op->next)
		if (!op->running)
			op->abandoned = true;
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
		conn_account(c, CONN_MEM_QUEUED, 0, sizeof(*op));
	}
	if (op->pdu_cap < pdu_len) {
		uint8_t *bigger = realloc(op->pdu, pdu_len);
		if (bigger == NULL) {
			conn_account(c, CONN_MEM_QUEUED, sizeof(*op) + op->pdu_cap, 0);
			free(op->pdu);
			free(op);
			return NULL;
		}
		conn_account(c, CONN_MEM_QUEUED, op->pdu_cap, pdu_len);
		op->pdu = bigger;
		op->pdu_cap = pdu_len;
	}
	return op;
}

/* Recycle an op object; large PDU buffers are not worth keeping. */
static void recycle_op(struct conn *c, struct op *op)
{
	if (c->n_free_ops >= CONN_FREE_OPS_KEPT || op->pdu_cap > CONN_OP_PDU_KEPT) {
		conn_account(c, CONN_MEM_QUEUED, sizeof(*op) + op->pdu_cap, 0);
		free(op->pdu);
		free(op);
		return;
	}
	op->next = c->free_ops;
	c->free_ops = op;
	c->n_free_ops++;
}

static void free_op(struct conn *c, struct op *op)
{
	conn_account(c, CONN_MEM_QUEUED, sizeof(*op) + op->pdu_cap, 0);
	free(op->pdu);
	free(op);
}

void conn_trim_idle_locked(struct conn *c)
{
	if (c->out_start == c->out_len)
		conn_shrink_buffer(c, CONN_MEM_OUTPUT, &c->out, &c->out_cap, 0);
	struct op **link = &c->free_ops;
	bool kept = false;
	while (*link != NULL) {
		struct op *op = *link;
		if (!kept && op->pdu_cap <= CONN_OP_PDU_IDLE) {
			kept = true;
			link = &op->next;
			continue;
		}
		*link = op->next;
		c->n_free_ops--;
		free_op(c, op);
	}
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
	DLIST_UNLINK(c->ops, op);
	c->n_pending--;
}

/*
 * The work queue is full: answer busy instead of waiting for it. Encoded
 * in a writer of its own: a worker requeueing a parked op gets here too,
 * and the I/O thread's writer is that thread's alone.
 */
static void answer_busy_locked(struct conn *c, int32_t message_id, int tag)
{
	int response = ops_response_tag(tag);
	struct ber_writer w;
	if (response < 0 || ber_writer_init(&w, 64, 256) != LUMEN_OK)
		return;
	if (response == LDAP_OP_BIND_RESPONSE)
		ldap_encode_bind_response(&w, message_id, LDAP_BUSY, NULL, "server busy", NULL);
	else if (response == LDAP_OP_EXTENDED_RESPONSE)
		ldap_encode_extended_response(&w, message_id, LDAP_BUSY, "server busy", NULL, NULL);
	else
		ldap_encode_result(&w, message_id, response, LDAP_BUSY, NULL, "server busy", NULL, 0);
	if (ber_writer_error(&w) == LUMEN_OK)
		conn_send_locked(c, w.buf, w.len);
	ber_writer_free(&w);
}

/* What an ended op held back (lock held): a Bind runs alone, and nothing
 * is read while a StartTLS runs. */
static void op_ended_locked(struct conn *c, const struct op *op)
{
	if (op->tag == LDAP_OP_BIND_REQUEST)
		c->bind_in_progress = false;
	if (op->tag == LDAP_OP_EXTENDED_REQUEST && c->starttls_in_progress &&
	    op->message_id == c->starttls_message_id)
		c->starttls_in_progress = false;
}

/* A new outstanding op for one PDU, linked on c (lock held). */
static struct op *start_op(struct conn *c, const uint8_t *pdu, size_t len, int32_t message_id,
			   int tag, unsigned number)
{
	struct op *op = take_op(c, len);
	if (op == NULL)
		return NULL;
	memcpy(op->pdu, pdu, len);
	op->pdu_len = len;
	op->conn = c;
	op->message_id = message_id;
	op->tag = tag;
	op->number = number;
	op->running = false;
	op->abandoned = false;
	op->parked = false;
	op->answered = op->committing = op->cancel_requested = false;
	op->handed_off = false;
	op->persist = NULL;
	op->waiting = op->woken = false;
	op->resume = (struct backend_search_resume){ 0 };
	op->resume_entries = 0;
	op->job.run = ops_run_job;
	op->job.next = NULL;
	clock_gettime(CLOCK_MONOTONIC, &op->queued_at);
	link_op(c, op);
	c->refs++;
	if (tag == LDAP_OP_BIND_REQUEST)
		c->bind_in_progress = true;
	return op;
}

static int queue_op(struct conn *c, const uint8_t *pdu, size_t len, int32_t message_id,
		    int tag, unsigned number, struct op_batch *batch)
{
	struct op *op = start_op(c, pdu, len, message_id, tag, number);
	if (op == NULL)
		return LUMEN_ENOMEM;
	stats_count_dispatch(stats_current(), STATS_RUN_QUEUED);
	*batch->tail = &op->job;
	batch->tail = &op->job.next;
	return LUMEN_OK;
}

/*
 * May this PDU run to completion here? Only with nothing else of the
 * connection outstanding (queued, running or parked: an op never
 * overtakes an earlier one on a worker) and within the turn's share.
 */
static bool may_run_inline(const struct conn *c, int tag)
{
	return c->io->ops_context != NULL && conn_config(c)->inline_reads &&
	       inline_may_start(tag) && c->n_pending == 0 &&
	       c->inline_this_turn < INLINE_OPS_PER_TURN;
}

/*
 * Run the op on this I/O thread (lock held on entry and on return; released
 * meanwhile). Its output goes to the output queue as a worker's would; the
 * input buffer is only ever touched by this thread, so pdu stays valid.
 */
static int run_inline_locked(struct conn *c, const uint8_t *pdu, size_t len,
			     int32_t message_id, int tag, unsigned number)
{
	struct op *op = start_op(c, pdu, len, message_id, tag, number);
	if (op == NULL)
		return LUMEN_ENOMEM;
	c->inline_this_turn++;
	pthread_mutex_unlock(&c->lock);
	ops_run_inline(op, c->io->ops_context);
	pthread_mutex_lock(&c->lock);
	return LUMEN_OK;
}

/* The op ends: its database lets go of it (no lock held). */
static void release_persist(struct op *op)
{
	struct backend_persist *p = op->persist;
	op->persist = NULL;
	if (p != NULL)
		p->release(p);
}

/* The work queue refused op (full, or stopping): answer busy instead. */
static void refuse_op(struct conn *c, struct op *op)
{
	release_persist(op);
	pthread_mutex_lock(&c->lock);
	unlink_op(c, op);
	op_ended_locked(c, op);
	if (!op->abandoned)
		answer_busy_locked(c, op->message_id, op->tag);
	conn_cancel_answer_locked(c, op);
	stats_record_operation(stats_current(), (enum stats_op_type)stats_op_type_of_tag(op->tag),
			       LDAP_BUSY, NULL);
	recycle_op(c, op);
	if (c->n_pending == 0)
		conn_trim_idle_locked(c);
	c->mem_wait = false;
	bool last = --c->refs == 0;          /* the op's reference */
	if (!last && !c->closed) {
		/* Only the I/O thread touches the read event (a parked op may be
		 * requeued by a worker); a closing connection may be done now. */
		if (io_thread_is_current(c->io) && !c->closing && !c->aborting)
			conn_update_reading(c);
		else
			conn_kick_locked(c);
	}
	pthread_mutex_unlock(&c->lock);
	if (last)
		conn_free(c);
}

/* Lock released: hand the batch to the workers. */
void conn_push_batch(struct conn *c, struct op_batch *batch)
{
	conn_requeue(c, batch->head);
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

/* One framed PDU: answer it here (Abandon, Unbind, Cancel, short reads) or queue it. */
int conn_dispatch_pdu_locked(struct conn *c, const uint8_t *pdu, size_t len, int32_t message_id,
			int tag, struct op_batch *batch)
{
	unsigned number = c->next_op_number++;
	struct stats_thread *st = stats_current();
	enum stats_op_type type = (enum stats_op_type)stats_op_type_of_tag(tag);
	stats_count_received(st, 0, 1);
	stats_operation_initiated(st, type);
	switch (tag) {
	case LDAP_OP_UNBIND_REQUEST:
		conn_txn_discard_locked(c);      /* RFC 5805 §3.5 */
		conn_sort_discard_locked(c);
		/* Answered here, never timed: counted complete at once. */
		stats_record_operation(st, type, 0, NULL);
		log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u UNBIND", (unsigned long long)c->id,
			   number);
		c->closing = true;
		conn_abandon_queued_locked(c);
		return LUMEN_OK;
	case LDAP_OP_ABANDON_REQUEST:
		stats_record_operation(st, type, 0, NULL);
		handle_abandon(c, pdu, len, number);
		return LUMEN_OK;
	case LDAP_OP_EXTENDED_REQUEST:
		if (conn_cancel_locked(c, pdu, len, number))
			return LUMEN_OK;
		return queue_op(c, pdu, len, message_id, tag, number, batch);
	case LDAP_OP_BIND_REQUEST:
		conn_txn_discard_locked(c);      /* RFC 5805 §3.5 */
		conn_sort_discard_locked(c);     /* bound to the old identity */
		if (may_run_inline(c, tag))
			return run_inline_locked(c, pdu, len, message_id, tag, number);
		return queue_op(c, pdu, len, message_id, tag, number, batch);
	default:
		if (may_run_inline(c, tag))
			return run_inline_locked(c, pdu, len, message_id, tag, number);
		return queue_op(c, pdu, len, message_id, tag, number, batch);
	}
}

struct workq_job *conn_take_parked_locked(struct conn *c, bool all)
{
	struct workq_job *chain = NULL;
	for (struct op *op = c->ops; op != NULL && c->n_parked > 0; op = op->next) {
		bool go = op->abandoned || (op->waiting ? op->woken : all);
		if (!op->parked || !go)
			continue;
		op->parked = false;
		c->n_parked--;
		if (op->waiting)
			c->n_waiting--;
		op->waiting = op->woken = false;
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

void conn_park_op(struct conn *c, struct op *op, bool wait)
{
	pthread_mutex_lock(&c->lock);
	op->waiting = wait;
	if (op->abandoned || c->closed || c->aborting || c->closing) {
		pthread_mutex_unlock(&c->lock);
		conn_op_done(c, op);
		return;
	}
	op->running = false;
	op->parked = true;
	c->n_parked++;
	if (op->waiting)
		c->n_waiting++;
	/* The client may have caught up while the op ran: the write event
	 * that drained the output found nothing parked, so look here (a
	 * persistent search woken while it ran goes on at once). */
	bool resume = conn_may_resume_locked(c);
	struct workq_job *chain = resume || op->woken ? conn_take_parked_locked(c, resume) : NULL;
	pthread_mutex_unlock(&c->lock);
	conn_requeue(c, chain);
}

void conn_hand_off_op(struct conn *c, struct op *op)
{
	pthread_mutex_lock(&c->lock);
	op->running = false;
	op->job.next = NULL;
	pthread_mutex_unlock(&c->lock);
	conn_requeue(c, &op->job);
}

void conn_wake_op(struct conn *c, struct op *op)
{
	pthread_mutex_lock(&c->lock);
	op->woken = true;
	if (op->parked && op->waiting)
		conn_kick_locked(c);          /* on_read queues it */
	pthread_mutex_unlock(&c->lock);
}

void conn_op_done(struct conn *c, struct op *op)
{
	release_persist(op);
	pthread_mutex_lock(&c->lock);
	unlink_op(c, op);
	conn_txn_op_done_locked(c, op);
	conn_cancel_answer_locked(c, op);
	op_ended_locked(c, op);
	recycle_op(c, op);
	if (c->n_pending == 0)
		conn_trim_idle_locked(c);
	c->mem_wait = false;                /* room may have come back: retry */
	c->refs--;                          /* the op's reference */
	bool last = c->refs == 0;           /* the I/O thread already let go */
	/* Wake the I/O thread if it waits for ops to end or has input left
	 * (not when it ran the op itself: it looks at all that next). */
	if (!last && (c->closing || c->aborting || !c->reading || c->in_len > c->in_start) &&
	    !io_thread_is_current(c->io))
		conn_kick_locked(c);
	pthread_mutex_unlock(&c->lock);
	if (last)
		conn_free(c);
}

void conn_free_ops(struct conn *c)
{
	while (c->free_ops != NULL) {
		struct op *op = c->free_ops;
		c->free_ops = op->next;
		free(op->pdu);
		free(op);
	}
}

enum conn_op_start conn_op_begin(struct conn *c, struct op *op, bool park_if_full)
{
	pthread_mutex_lock(&c->lock);
	enum conn_op_start start = CONN_OP_RUN;
	if (op->abandoned || c->closed || c->aborting)
		start = CONN_OP_SKIP;
	else if (park_if_full && conn_output_full_locked(c))
		start = CONN_OP_PARK;
	op->running = start == CONN_OP_RUN;
	pthread_mutex_unlock(&c->lock);
	return start;
}

int conn_send_op(struct conn *c, const struct op *op, const void *data, size_t len)
{
	pthread_mutex_lock(&c->lock);
	int rc = op->abandoned ? LUMEN_EIO : conn_send_locked(c, data, len);
	pthread_mutex_unlock(&c->lock);
	return rc;
}

int conn_send_final(struct conn *c, struct op *op, const void *data, size_t len)
{
	pthread_mutex_lock(&c->lock);
	int rc = op->abandoned ? LUMEN_EIO : conn_send_locked(c, data, len);
	if (rc == LUMEN_OK)
		op->answered = true;
	pthread_mutex_unlock(&c->lock);
	return rc;
}

bool conn_op_commit(struct conn *c, struct op *op)
{
	pthread_mutex_lock(&c->lock);
	bool go = !op->abandoned && !c->closed && !c->aborting;
	op->committing = go;
	pthread_mutex_unlock(&c->lock);
	return go;
}

bool conn_op_canceled(struct conn *c, const struct op *op)
{
	pthread_mutex_lock(&c->lock);
	bool canceled = op->cancel_requested;
	pthread_mutex_unlock(&c->lock);
	return canceled;
}
