/*
 * ldap_txn.h — the values of LDAP Transactions (RFC 5805), proto layer:
 * the End Transaction request and response values. (The Start request has
 * no value; its response value and the Transaction Specification
 * control's value are the transaction identifier itself, an OCTET STRING's
 * contents.)
 *
 *   txnEndReq ::= SEQUENCE { commit BOOLEAN DEFAULT TRUE,
 *                            identifier OCTET STRING }
 *   txnEndRes ::= SEQUENCE { messageID MessageID OPTIONAL,
 *                            updatesControls SEQUENCE OF SEQUENCE {
 *                                messageID MessageID, controls Controls }
 *                            OPTIONAL }
 *
 * Owns nothing: decoded identifiers are views into the caller's bytes.
 * Thread-safety: reentrant. Errors: LUMEN_EMALFORMED with a static reason.
 */
#ifndef LUMEN_LDAP_TXN_H
#define LUMEN_LDAP_TXN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ber.h"
#include "ldap_message.h"

struct ldap_txn_end_request {
	bool commit;                   /* DEFAULT TRUE */
	struct ber_view identifier;
};

/* Decode a txnEndReq. LUMEN_OK, or LUMEN_EMALFORMED with *diagnostic. */
int ldap_txn_end_decode(struct ber_view value, struct ldap_txn_end_request *out,
			const char **diagnostic);
/* Encode a txnEndReq (clients and tests); commit TRUE is left out (DER). */
void ldap_txn_end_encode(struct ber_writer *w, const struct ldap_txn_end_request *req);

/* One update's response controls in a txnEndRes. */
struct ldap_txn_update_controls {
	int32_t message_id;
	const struct ldap_control *controls;
	size_t n_controls;             /* at least one */
};

/*
 * Encode a txnEndRes: failed_message_id when has_failed (the update a
 * non-success result is about), then updatesControls when n_updates > 0.
 * The caller sends no value at all when it would be empty (RFC 5805 §2.3).
 */
void ldap_txn_end_response_encode(struct ber_writer *w, bool has_failed,
				  int32_t failed_message_id,
				  const struct ldap_txn_update_controls *updates, size_t n_updates);

#endif
