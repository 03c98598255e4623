/*
 * fuzz_extop_values.c — libFuzzer target for the extended-operation values
 * a client sends that are decoded on their own: Cancel's
 * cancelRequestValue (ldap_cancel.h, decoded on the I/O thread) and RFC
 * 5805's txnEndReq (ldap_txn.h).
 *
 * Invariants on every input (copied to an exact-size allocation, so a read
 * past it is caught): a refusal says why and leaves the outputs alone; a
 * value that decodes encodes (DER) and decodes again to the same fields;
 * a cancelID is within 0..maxInt.
 * Seeds: tests/fuzz/corpus/fuzz_extop_values/.
 * fuzz-layers: proto model
 * fuzz-max-len: 1024
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ldap_cancel.h"
#include "ldap_txn.h"
#include "lumen_error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_cancel(struct ber_view v, struct ber_writer *w)
{
	int32_t id = -7;
	const char *why = NULL;
	int rc = ldap_cancel_decode(v, &id, &why);
	if (rc != LUMEN_OK) {
		if (rc != LUMEN_EMALFORMED || why == NULL || id != -7)
			abort();
		return;
	}
	if (id < 0)
		abort();
	ber_writer_reset(w);
	ldap_cancel_encode(w, id);
	int32_t again = -1;
	why = NULL;
	if (ber_writer_error(w) != LUMEN_OK ||
	    ldap_cancel_decode((struct ber_view){ w->buf, w->len }, &again, &why) != LUMEN_OK ||
	    again != id)
		abort();
}

static void check_txn_end(struct ber_view v, struct ber_writer *w)
{
	struct ldap_txn_end_request r = { false, { NULL, 0 } }, again;
	const char *why = NULL;
	int rc = ldap_txn_end_decode(v, &r, &why);
	if (rc != LUMEN_OK) {
		if (rc != LUMEN_EMALFORMED || why == NULL || r.commit || r.identifier.ptr != NULL)
			abort();
		return;
	}
	ber_writer_reset(w);
	ldap_txn_end_encode(w, &r);
	why = NULL;
	if (ber_writer_error(w) != LUMEN_OK ||
	    ldap_txn_end_decode((struct ber_view){ w->buf, w->len }, &again, &why) != LUMEN_OK ||
	    again.commit != r.commit || !ber_view_eq(again.identifier, r.identifier))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size > 0 ? size : 1);
	struct ber_writer w;
	if (copy == NULL || ber_writer_init(&w, 64, 0) != LUMEN_OK) {
		free(copy);
		return 0;
	}
	if (size > 0)
		memcpy(copy, data, size);
	struct ber_view v = { copy, size };
	check_cancel(v, &w);
	check_txn_end(v, &w);
	ber_writer_free(&w);
	free(copy);
	return 0;
}
