/*
 * response.h — the little lumenbench needs from a server's reply (bench).
 *
 * A benchmark client only needs each response's message ID, its kind, its
 * result code, (for auth) the DN of a returned entry, and (to scroll a
 * VLV list) the contextID of a VLV response control. This reads just
 * that with the strict BER reader, without decoding attributes or building
 * anything: no allocation, views into the PDU.
 *
 * Ownership: views point into the caller's PDU buffer.
 * Thread-safety: reentrant.
 * Caveats:
 *  - controls other than the VLV response, and referrals, are skipped,
 *    not checked.
 */
#ifndef LUMEN_BENCH_RESPONSE_H
#define LUMEN_BENCH_RESPONSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ber.h"

struct bench_response {
	int32_t message_id;
	int op;                    /* enum ldap_op of the protocolOp */
	bool has_result;           /* op carries an LDAPResult */
	int result_code;
	struct ber_view entry_dn;  /* SearchResultEntry only */
	struct ber_view vlv_context;  /* the VLV response's contextID; ptr NULL: none */
};

/*
 * Read one framed LDAPMessage. LUMEN_EMALFORMED if it is not one (or its
 * result is broken). Everything else about the message is ignored.
 */
int bench_response_parse(const uint8_t *pdu, size_t len, struct bench_response *r);

#endif
