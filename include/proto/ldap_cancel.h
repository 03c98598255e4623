/*
 * ldap_cancel.h — the Cancel extended operation's request value
 * (RFC 3909), proto layer.
 *
 *   cancelRequestValue ::= SEQUENCE { cancelID MessageID }
 *   MessageID ::= INTEGER (0 .. maxInt)
 *
 * Owns nothing: decoding reads the caller's bytes and writes one integer.
 * Thread-safety: reentrant. Errors: LUMEN_EMALFORMED with a static reason
 * in *diagnostic (for the client's protocolError).
 *
 * Caveats:
 *  - The value is strict DER as the rest of the reader: one SEQUENCE, one
 *    minimal INTEGER inside, nothing after either.
 */
#ifndef LUMEN_LDAP_CANCEL_H
#define LUMEN_LDAP_CANCEL_H

#include <stdint.h>

#include "ber.h"

/*
 * Decode a Cancel request value into *cancel_id (a message ID in
 * 0..maxInt). LUMEN_OK, or LUMEN_EMALFORMED with *diagnostic set (it must
 * be NULL on entry).
 */
int ldap_cancel_decode(struct ber_view value, int32_t *cancel_id, const char **diagnostic);

/* Encode a Cancel request value for cancel_id (clients and tests). */
void ldap_cancel_encode(struct ber_writer *w, int32_t cancel_id);

#endif
