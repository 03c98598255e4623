/*
 * txn.c — the queued updates of an open transaction (txn.h).
 */
#include "txn.h"

#include <stdlib.h>
#include <string.h>

#include "lumen_error.h"

/* Identifiers are unique for the life of the process, never reused: an
 * End naming an old transaction cannot reach a new one. */
static uint64_t next_txn_id = 1;

int txn_queue_create(struct txn_queue **out)
{
	struct txn_queue *q = calloc(1, sizeof(*q));
	*out = NULL;
	if (q == NULL)
		return LUMEN_ENOMEM;
	uint64_t id = __atomic_fetch_add(&next_txn_id, 1, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < TXN_ID_SIZE; i++)
		q->id[i] = (uint8_t)(id >> (8 * (TXN_ID_SIZE - 1 - i)));
	q->tail = &q->first;
	q->bytes = sizeof(*q);
	*out = q;
	return LUMEN_OK;
}

bool txn_queue_is(const struct txn_queue *q, struct ber_view id)
{
	return q != NULL && id.len == TXN_ID_SIZE && memcmp(id.ptr, q->id, TXN_ID_SIZE) == 0;
}

struct ber_view txn_queue_id(const struct txn_queue *q)
{
	return (struct ber_view){ q->id, TXN_ID_SIZE };
}

int txn_queue_add(struct txn_queue *q, const struct server_database *db, int32_t message_id,
		  int tag, unsigned number, const uint8_t *pdu, size_t pdu_len)
{
	size_t size = sizeof(struct txn_update) + pdu_len;
	if (q->n_updates >= TXN_MAX_UPDATES || size > TXN_MAX_BYTES ||
	    q->bytes - sizeof(*q) > TXN_MAX_BYTES - size)
		return LUMEN_ELIMIT;
	if (q->db != NULL && q->db != db)
		return LUMEN_EINVAL;
	struct txn_update *u = malloc(size);
	if (u == NULL)
		return LUMEN_ENOMEM;
	*u = (struct txn_update){ .message_id = message_id, .tag = tag, .number = number,
				  .pdu_len = pdu_len };
	memcpy(u->pdu, pdu, pdu_len);
	*q->tail = u;
	q->tail = &u->next;
	q->n_updates++;
	q->bytes += size;
	q->db = db;
	return LUMEN_OK;
}

void txn_queue_free(struct txn_queue *q)
{
	if (q == NULL)
		return;
	for (struct txn_update *u = q->first; u != NULL;) {
		struct txn_update *next = u->next;
		free(u);
		u = next;
	}
	free(q);
}
