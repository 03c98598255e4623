/*
 * ldap_cancel.c — the Cancel request value (RFC 3909).
 */
#include "ldap_cancel.h"

#include "lumen_error.h"

int ldap_cancel_decode(struct ber_view value, int32_t *cancel_id, const char **diagnostic)
{
	struct ber_reader r, seq;
	int64_t id;
	ber_reader_init(&r, value.ptr, value.len);
	if (ber_enter(&r, BER_TAG_SEQUENCE, &seq) != LUMEN_OK)
		return ber_fail(diagnostic, LUMEN_EMALFORMED, "Cancel value is not a SEQUENCE");
	if (ber_read_int_range(&seq, BER_TAG_INTEGER, 0, INT32_MAX, &id) != LUMEN_OK)
		return ber_fail(diagnostic, LUMEN_EMALFORMED, "Cancel value has no valid cancelID");
	int rc = ber_expect_end(diagnostic, &seq, "Cancel value has data after cancelID");
	if (rc == LUMEN_OK)
		rc = ber_expect_end(diagnostic, &r, "Cancel value has data after its SEQUENCE");
	if (rc == LUMEN_OK)
		*cancel_id = (int32_t)id;
	return rc;
}

void ldap_cancel_encode(struct ber_writer *w, int32_t cancel_id)
{
	ber_begin(w, BER_TAG_SEQUENCE);
	ber_write_integer(w, BER_TAG_INTEGER, cancel_id);
	ber_end(w);
}
