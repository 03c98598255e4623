/*
 * txn.h — the updates of an open LDAP transaction (RFC 5805), as queued
 * between Start Transaction and End Transaction (server layer).
 *
 * A txn_queue holds a copy of each update request's PDU, in arrival
 * order, with its message ID, protocolOp and log number, and the one
 * database all of them write to (a transaction never spans databases:
 * one LMDB transaction applies it). op_txn.c answers the updates as they
 * are queued and replays them through the normal handlers at commit.
 *
 * Bounds (fixed): TXN_MAX_UPDATES updates and TXN_MAX_BYTES bytes of
 * requests per transaction; the update beyond either is refused and the
 * transaction stays as it was. One transaction per connection
 * (conn_txn_*, conn.h): a second Start is refused busy, as slapd does;
 * a client that wants two sets of atomic writes ends one first, and the
 * server keeps one bounded queue per connection.
 *
 * Ownership: the queue owns its updates and their PDUs (txn_queue_free).
 * A connection owns its open queue until End Transaction takes it.
 * Thread-safety: none; the owner serializes (the connection's lock).
 */
#ifndef LUMEN_TXN_H
#define LUMEN_TXN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ber.h"

#define TXN_MAX_UPDATES 256u
#define TXN_MAX_BYTES (1u << 20)
#define TXN_ID_SIZE 8u

struct server_database;

struct txn_update {
	struct txn_update *next;
	int32_t message_id;
	int tag;                       /* protocolOp of the request */
	unsigned number;               /* op=N in the log */
	size_t pdu_len;
	uint8_t pdu[];                 /* the whole LDAPMessage */
};

struct txn_queue {
	uint8_t id[TXN_ID_SIZE];       /* the transaction identifier */
	const struct server_database *db;   /* NULL until the first update */
	struct txn_update *first, **tail;
	size_t n_updates;
	size_t bytes;                  /* memory held, the queue included */
};

/* A new, empty transaction with a fresh identifier. LUMEN_ENOMEM. */
int txn_queue_create(struct txn_queue **out);
/* Is id this transaction's identifier? */
bool txn_queue_is(const struct txn_queue *q, struct ber_view id);
/* The identifier as a view into q. */
struct ber_view txn_queue_id(const struct txn_queue *q);
/*
 * Append a copy of an update's PDU. Errors: LUMEN_ELIMIT (TXN_MAX_UPDATES
 * or TXN_MAX_BYTES reached), LUMEN_EINVAL (db is not the transaction's
 * database), LUMEN_ENOMEM; on error q is unchanged.
 */
int txn_queue_add(struct txn_queue *q, const struct server_database *db, int32_t message_id,
		  int tag, unsigned number, const uint8_t *pdu, size_t pdu_len);
/* Free q and its updates. NULL is fine. */
void txn_queue_free(struct txn_queue *q);

#endif
