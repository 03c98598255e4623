/*
 * fuzz_sync_cookie.c — libFuzzer target for what a replication peer sends:
 * the content-synchronization cookie and CSNs (sync_cookie.h), and the
 * values of RFC 4533's controls and Sync Info message (ldap_sync.h).
 *
 * Invariants on every input: parsing never reads past the input (the
 * buffer is copied to an exact-size allocation) and says why when it
 * refuses; a cookie that parses formats into a buffer of
 * SYNC_COOKIE_TEXT_MAX, parses again to the same values and formats to
 * the same text; its CSN list is sorted by serverID without duplicates.
 * Every input is also decoded as each RFC 4533 value: one that decodes
 * encodes (DER) and decodes again to the same fields.
 * Seeds: tests/fuzz/corpus/fuzz_sync_cookie/ (cookies and values).
 * fuzz-layers: proto model
 * fuzz-max-len: 4096
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ldap_sync.h"
#include "lumen_error.h"
#include "sync_cookie.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_same(const struct sync_cookie *a, const struct sync_cookie *b)
{
	if (a->rid != b->rid || a->sid != b->sid || a->n_csns != b->n_csns ||
	    a->has_delcsn != b->has_delcsn)
		abort();
	for (size_t i = 0; i < a->n_csns; i++)
		if (csn_compare(&a->csns[i], &b->csns[i]) != 0 || a->csns[i].sid != b->csns[i].sid)
			abort();
	for (size_t i = 1; i < a->n_csns; i++)
		if (a->csns[i - 1].sid >= a->csns[i].sid)
			abort();
}

static bool same_view(struct ber_view a, struct ber_view b)
{
	return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

/* Decode as each value; re-encode what decodes and compare. */
static void sync_values(struct ber_view v)
{
	struct ber_writer w;
	struct ldap_sync_request req, req2;
	struct ldap_sync_state_value st, st2;
	struct ldap_sync_info info, info2;
	struct ber_reader set, set2;
	if (ber_writer_init(&w, 64, 0) != LUMEN_OK)
		return;
	if (ldap_sync_request_decode(v, &req) == LUMEN_OK) {
		ldap_sync_request_encode(&req, &w);
		if (ldap_sync_request_decode((struct ber_view){ w.buf, w.len }, &req2) != LUMEN_OK ||
		    req.mode != req2.mode || req.reload_hint != req2.reload_hint ||
		    !same_view(req.cookie, req2.cookie))
			abort();
	}
	ber_writer_reset(&w);
	if (ldap_sync_state_decode(v, &st) == LUMEN_OK) {
		ldap_sync_state_encode(&st, &w);
		if (ldap_sync_state_decode((struct ber_view){ w.buf, w.len }, &st2) != LUMEN_OK ||
		    st.state != st2.state || memcmp(st.uuid, st2.uuid, sizeof(st.uuid)) != 0)
			abort();
	}
	ber_writer_reset(&w);
	if (ldap_sync_info_decode(v, &info, &set) == LUMEN_OK &&
	    info.kind != LDAP_SYNC_INFO_ID_SET) {
		ldap_sync_info_encode(&info, &w);
		if (ldap_sync_info_decode((struct ber_view){ w.buf, w.len }, &info2, &set2) !=
		    LUMEN_OK || info.kind != info2.kind || !same_view(info.cookie, info2.cookie))
			abort();
	}
	ber_writer_free(&w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sync_cookie first, second;
	static char text[SYNC_COOKIE_TEXT_MAX], again[SYNC_COOKIE_TEXT_MAX];
	const char *why = NULL;
	size_t len, len2;
	uint8_t *copy = malloc(size ? size : 1);

	if (copy == NULL)
		return 0;
	memcpy(copy, data, size);
	sync_values((struct ber_view){ copy, size });
	int rc = sync_cookie_parse((struct ber_view){ copy, size }, &first, &why);
	if (rc != LUMEN_OK) {
		if (why == NULL || (rc != LUMEN_EMALFORMED && rc != LUMEN_ELIMIT))
			abort();
		free(copy);
		return 0;
	}
	if (sync_cookie_format(&first, text, sizeof(text), &len) != LUMEN_OK)
		abort();
	if (sync_cookie_parse((struct ber_view){ (const uint8_t *)text, len }, &second, &why) !=
	    LUMEN_OK)
		abort();
	check_same(&first, &second);
	if (sync_cookie_format(&second, again, sizeof(again), &len2) != LUMEN_OK || len != len2 ||
	    memcmp(text, again, len) != 0)
		abort();
	free(copy);
	return 0;
}
