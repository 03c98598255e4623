/*
 * fuzz_ldap_message.c — libFuzzer target for the LDAPMessage decoder and
 * encoder (src/proto/ldap_*.c, ber_*.c).
 *
 * Properties checked on every input:
 *  - decoding never crashes, leaks or reads outside the input (sanitizers);
 *  - a message that decodes re-encodes without error, the encoding decodes
 *    to the same messageID and op, and encoding that again gives the same
 *    bytes (the encoder is canonical);
 *  - ldap_message_peek agrees with the full decode.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ldap_message.h"

/* Kept across inputs, as a worker keeps them across operations. */
static struct arena arena;
static struct ber_writer first, second;
static int ready;

static void check(int condition)
{
	if (!condition)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ldap_message m, again;
	const char *why = NULL;
	size_t framed;
	if (!ready) {
		arena_init(&arena, 16u << 20);
		check(ber_writer_init(&first, 0, 0) == LUMEN_OK);
		check(ber_writer_init(&second, 0, 0) == LUMEN_OK);
		ready = 1;
	}
	arena_reset(&arena);
	ber_writer_reset(&first);
	ber_writer_reset(&second);

	(void)ber_frame(data, size, 1u << 20, &framed);
	int rc = ldap_message_decode(data, size, &arena, NULL, &m, &why);
	check(rc == LUMEN_OK || rc == LUMEN_EMALFORMED || rc == LUMEN_ELIMIT ||
	      rc == LUMEN_EUNSUPPORTED || rc == LUMEN_ENOMEM || rc == LUMEN_EINVAL);
	if (rc != LUMEN_OK) {
		check(why != NULL);
		return 0;
	}
	int32_t peek_id;
	int peek_op;
	check(ldap_message_peek(data, size, &peek_id, &peek_op) == LUMEN_OK);
	check(peek_id == m.message_id && peek_op == (int)m.op);

	ldap_message_encode(&first, &m);
	check(ber_writer_error(&first) == LUMEN_OK);
	rc = ldap_message_decode(first.buf, first.len, &arena, NULL, &again, &why);
	check(rc == LUMEN_OK);
	check(again.message_id == m.message_id && again.op == m.op);
	check(again.n_controls == m.n_controls);

	ldap_message_encode(&second, &again);
	check(ber_writer_error(&second) == LUMEN_OK);
	check(second.len == first.len && memcmp(second.buf, first.buf, first.len) == 0);
	return 0;
}
