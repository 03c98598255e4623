/*
 * response.c — read a response's envelope and result (see response.h).
 */
#include "response.h"

#include <string.h>

#include "ldap_message.h"
#include "lumen_error.h"

#define OID_VLV_RESPONSE "2.16.840.1.113730.3.4.10"

static bool carries_result(int op)
{
	switch (op) {
	case LDAP_OP_BIND_RESPONSE:
	case LDAP_OP_SEARCH_DONE:
	case LDAP_OP_MODIFY_RESPONSE:
	case LDAP_OP_ADD_RESPONSE:
	case LDAP_OP_DELETE_RESPONSE:
	case LDAP_OP_MODDN_RESPONSE:
	case LDAP_OP_COMPARE_RESPONSE:
	case LDAP_OP_EXTENDED_RESPONSE:
		return true;
	default:
		return false;
	}
}

/* VirtualListViewResponse ::= SEQUENCE { targetPosition INTEGER,
 * contentCount INTEGER, virtualListViewResult ENUMERATED,
 * contextID OCTET STRING OPTIONAL }: the contextID, if any. */
static int read_vlv_context(struct ber_view value, struct ber_view *context)
{
	struct ber_reader outer, seq;
	struct ber_element skip;
	ber_reader_init(&outer, value.ptr, value.len);
	int rc = ber_enter(&outer, BER_TAG_SEQUENCE, &seq);
	for (int i = 0; i < 3 && rc == LUMEN_OK; i++)
		rc = ber_read_element(&seq, &skip);
	if (rc == LUMEN_OK && !ber_reader_at_end(&seq))
		rc = ber_read_octets(&seq, BER_TAG_OCTET_STRING, context);
	return rc;
}

/* Controls [0] after the protocolOp: the VLV response's contextID. */
static int read_controls(struct ber_reader *message, struct bench_response *r)
{
	struct ber_reader list;
	if (ber_reader_at_end(message))
		return LUMEN_OK;
	int rc = ber_enter(message, BER_TAG_CONTEXT_CONS(0), &list);
	while (rc == LUMEN_OK && !ber_reader_at_end(&list)) {
		struct ber_reader control;
		struct ber_view oid, value = { NULL, 0 };
		rc = ber_enter(&list, BER_TAG_SEQUENCE, &control);
		if (rc == LUMEN_OK)
			rc = ber_read_octets(&control, BER_TAG_OCTET_STRING, &oid);
		if (rc != LUMEN_OK || oid.len != strlen(OID_VLV_RESPONSE) ||
		    memcmp(oid.ptr, OID_VLV_RESPONSE, oid.len) != 0)
			continue;
		struct ber_element e;
		while (rc == LUMEN_OK && !ber_reader_at_end(&control)) {
			rc = ber_read_element(&control, &e);
			if (rc == LUMEN_OK && e.tag == BER_TAG_OCTET_STRING)
				value = e.value;
		}
		if (rc == LUMEN_OK && value.ptr != NULL)
			rc = read_vlv_context(value, &r->vlv_context);
	}
	return rc;
}

int bench_response_parse(const uint8_t *pdu, size_t len, struct bench_response *r)
{
	struct ber_reader whole, message, body;
	struct ber_element op;
	int64_t id;
	r->has_result = false;
	r->entry_dn.ptr = NULL;
	r->entry_dn.len = 0;
	r->vlv_context.ptr = NULL;
	r->vlv_context.len = 0;
	ber_reader_init(&whole, pdu, len);
	int rc = ber_enter(&whole, BER_TAG_SEQUENCE, &message);
	if (rc == LUMEN_OK)
		rc = ber_read_int_range(&message, BER_TAG_INTEGER, 0,
					LDAP_MAX_MESSAGE_ID, &id);
	if (rc == LUMEN_OK)
		rc = ber_read_element(&message, &op);
	if (rc != LUMEN_OK)
		return LUMEN_EMALFORMED;
	if (BER_TAG_CLASS(op.tag) != BER_CLASS_APPLICATION)
		return LUMEN_EMALFORMED;
	r->message_id = (int32_t)id;
	r->op = (int)BER_TAG_NUMBER(op.tag);
	ber_reader_init(&body, op.value.ptr, op.value.len);
	if (r->op == LDAP_OP_SEARCH_ENTRY) {
		rc = ber_read_octets(&body, BER_TAG_OCTET_STRING, &r->entry_dn);
	} else if (carries_result(r->op)) {
		int64_t code;
		rc = ber_read_int_range(&body, BER_TAG_ENUMERATED, 0, INT32_MAX, &code);
		r->result_code = (int)code;
		r->has_result = rc == LUMEN_OK;
		if (rc == LUMEN_OK && r->op == LDAP_OP_SEARCH_DONE)
			rc = read_controls(&message, r);
	}
	return rc == LUMEN_OK ? LUMEN_OK : LUMEN_EMALFORMED;
}
