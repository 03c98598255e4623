/*
 * ldap_txn.c — RFC 5805's End Transaction values (ldap_txn.h).
 */
#include "ldap_txn.h"

#include "lumen_error.h"

int ldap_txn_end_decode(struct ber_view value, struct ldap_txn_end_request *out,
			const char **diagnostic)
{
	struct ber_reader r, seq;
	ber_tag_t tag;
	bool commit = true;
	ber_reader_init(&r, value.ptr, value.len);
	if (ber_enter(&r, BER_TAG_SEQUENCE, &seq) != LUMEN_OK)
		return ber_fail(diagnostic, LUMEN_EMALFORMED, "txnEndReq is not a SEQUENCE");
	if (ber_peek_tag(&seq, &tag) == LUMEN_OK && tag == BER_TAG_BOOLEAN &&
	    ber_read_boolean(&seq, BER_TAG_BOOLEAN, &commit) != LUMEN_OK)
		return ber_fail(diagnostic, LUMEN_EMALFORMED, "txnEndReq commit is not a BOOLEAN");
	struct ber_view identifier;
	if (ber_read_octets(&seq, BER_TAG_OCTET_STRING, &identifier) != LUMEN_OK)
		return ber_fail(diagnostic, LUMEN_EMALFORMED, "txnEndReq has no identifier");
	int rc = ber_expect_end(diagnostic, &seq, "txnEndReq has data after its identifier");
	if (rc == LUMEN_OK)
		rc = ber_expect_end(diagnostic, &r, "txnEndReq has data after its SEQUENCE");
	if (rc == LUMEN_OK)
		*out = (struct ldap_txn_end_request){ commit, identifier };
	return rc;
}

void ldap_txn_end_encode(struct ber_writer *w, const struct ldap_txn_end_request *req)
{
	ber_begin(w, BER_TAG_SEQUENCE);
	if (!req->commit)
		ber_write_boolean(w, BER_TAG_BOOLEAN, false);
	ber_write_octets(w, BER_TAG_OCTET_STRING, req->identifier.ptr, req->identifier.len);
	ber_end(w);
}

/* Controls as a plain SEQUENCE OF Control (not the LDAPMessage's [0]). */
static void write_controls(struct ber_writer *w, const struct ldap_control *controls, size_t n)
{
	ber_begin(w, BER_TAG_SEQUENCE);
	for (size_t i = 0; i < n; i++) {
		ber_begin(w, BER_TAG_SEQUENCE);
		ber_write_octets(w, BER_TAG_OCTET_STRING, controls[i].oid.ptr, controls[i].oid.len);
		if (controls[i].critical)
			ber_write_boolean(w, BER_TAG_BOOLEAN, true);
		if (controls[i].has_value)
			ber_write_octets(w, BER_TAG_OCTET_STRING, controls[i].value.ptr,
					 controls[i].value.len);
		ber_end(w);
	}
	ber_end(w);
}

void ldap_txn_end_response_encode(struct ber_writer *w, bool has_failed,
				  int32_t failed_message_id,
				  const struct ldap_txn_update_controls *updates, size_t n_updates)
{
	ber_begin(w, BER_TAG_SEQUENCE);
	if (has_failed)
		ber_write_integer(w, BER_TAG_INTEGER, failed_message_id);
	if (n_updates > 0) {
		ber_begin(w, BER_TAG_SEQUENCE);
		for (size_t i = 0; i < n_updates; i++) {
			ber_begin(w, BER_TAG_SEQUENCE);
			ber_write_integer(w, BER_TAG_INTEGER, updates[i].message_id);
			write_controls(w, updates[i].controls, updates[i].n_controls);
			ber_end(w);
		}
		ber_end(w);
	}
	ber_end(w);
}
