/*
 * response.c — read a response's envelope and result (see response.h).
 */
#include "response.h"

#include "ldap_message.h"
#include "lumen_error.h"

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

int bench_response_parse(const uint8_t *pdu, size_t len, struct bench_response *r)
{
	struct ber_reader whole, message, body;
	struct ber_element op;
	int64_t id;
	r->has_result = false;
	r->entry_dn.ptr = NULL;
	r->entry_dn.len = 0;
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
	}
	return rc == LUMEN_OK ? LUMEN_OK : LUMEN_EMALFORMED;
}
