/*
 * fuzz_controls.c — libFuzzer target for the request controls (controls.h):
 * every supported control's value parser, the per-operation table, the
 * critical/unknown and sent-twice rules, and the response controls built
 * from what parsed.
 *
 * fuzz-layers: proto model backmdb config server
 *
 * Input, structured mode (first byte < 0x80): byte 0 picks the operation;
 * then each control is a header byte h and a value:
 *   h & 7   OID: 0..4 the supported ones (controls.h), 5 Matched Values,
 *           6 the value bytes are the OID (no value; an unknown one, or
 *           any other supported OID), 7 an empty OID
 *   h & 8   critical          h & 16  has a value
 *   h & 32  two length bytes (big-endian) follow instead of one
 * and the value is the next length bytes (fewer at the end of the input).
 * Raw mode (first byte >= 0x80): the rest is one LDAPMessage, decoded with
 * ldap_message_decode, whose controls are parsed as the server would.
 *
 * Invariants: the return code is one controls_parse documents, and every
 * failure but LUMEN_ENOMEM has a diagnostic; parsing is deterministic; what
 * parsed is consistent with the controls sent (a flag only for a supported
 * control of this operation, the paged cookie inside its control's value,
 * a page size within 0..2^31-1); an assertion filter evaluates on a sample
 * entry; a Pre-/Post-Read selection encodes the sample entry into a
 * response control that decodes as a SearchResultEntry; a paged cookie
 * comes back unchanged from the response control; every item of a
 * ValuesReturnFilter is applied to every value of the sample entry.
 * Seeds: tests/fuzz/corpus/fuzz_controls/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_shipped_schema.h"
#include "controls.h"
#include "lumen_error.h"
#include "matched_values.h"
#include "schema.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_CONTROLS 16

static struct schema *schema;
static struct entry *sample;
static struct ber_writer scratch;

static const char *const oids[] = {
	CONTROL_MANAGE_DSA_IT, CONTROL_ASSERTION, CONTROL_PRE_READ, CONTROL_POST_READ,
	CONTROL_PAGED_RESULTS, CONTROL_MATCHED_VALUES,
};

static const enum ldap_op ops[] = {
	LDAP_OP_SEARCH_REQUEST, LDAP_OP_ADD_REQUEST,    LDAP_OP_MODIFY_REQUEST,
	LDAP_OP_DELETE_REQUEST, LDAP_OP_MODDN_REQUEST,  LDAP_OP_COMPARE_REQUEST,
	LDAP_OP_BIND_REQUEST,   LDAP_OP_EXTENDED_REQUEST, LDAP_OP_ABANDON_REQUEST,
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const files[] = { "schema/core.schema", "schema/cosine.schema",
					     "schema/inetorgperson.schema", "schema/lumen.schema" };
	static const char *const attrs[][2] = {
		{ "objectClass", "inetOrgPerson" }, { "objectClass", "top" }, { "cn", "Fuzz Ee" },
		{ "cn;lang-de", "Fuzzi" }, { "sn", "Ee" }, { "mail", "fuzz@example.com" },
		{ "description", "sample" }, { "telephoneNumber", "+1 555 0100" },
		{ "entryUUID", "4b0e1a3c-0f9e-4d5e-8c1a-2b3c4d5e6f70" },
		{ "createTimestamp", "20260101000000Z" },
	};
	const char *dn = "cn=Fuzz Ee,ou=People,dc=example,dc=com";

	(void)argc;
	(void)argv;
	schema = fuzz_load_schema("fuzz_controls", files, sizeof(files) / sizeof(files[0]));
	if (entry_create(schema, (struct ber_view){ (const uint8_t *)dn, strlen(dn) },
			 (struct ber_view){ NULL, 0 }, &sample) != LUMEN_OK)
		abort();
	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++)
		if (entry_add_text(sample, attrs[i][0], attrs[i][1]) != LUMEN_OK)
			abort();
	if (ber_writer_init(&scratch, 256, 0) != LUMEN_OK)
		abort();
	return 0;
}

/* Build msg's controls from the structured input; views point into data. */
static void build_controls(const uint8_t *data, size_t size, struct ldap_message *msg,
			   struct ldap_control *controls)
{
	size_t pos = 1;
	msg->op = ops[data[0] % (sizeof(ops) / sizeof(ops[0]))];
	msg->message_id = 1;
	msg->controls = controls;
	msg->n_controls = 0;
	while (pos < size && msg->n_controls < MAX_CONTROLS) {
		uint8_t h = data[pos++];
		size_t len = 0;
		if (pos < size)
			len = data[pos++];
		if ((h & 32) && pos < size)
			len = len << 8 | data[pos++];
		if (len > size - pos)
			len = size - pos;
		struct ber_view value = { data + pos, len };
		pos += len;
		struct ldap_control *c = &controls[msg->n_controls++];
		memset(c, 0, sizeof(*c));
		c->critical = (h & 8) != 0;
		switch (h & 7) {
		case 6:
			c->oid = value;
			break;
		case 7:
			c->oid = (struct ber_view){ (const uint8_t *)"", 0 };
			c->has_value = (h & 16) != 0;
			c->value = value;
			break;
		default:
			c->oid = (struct ber_view){ (const uint8_t *)oids[h & 7], strlen(oids[h & 7]) };
			c->has_value = (h & 16) != 0;
			c->value = c->has_value ? value : (struct ber_view){ NULL, 0 };
			break;
		}
	}
}

static bool is_oid(struct ber_view v, const char *oid)
{
	return v.len == strlen(oid) && memcmp(v.ptr, oid, v.len) == 0;
}

/* The control with this OID in msg (NULL: none). */
static const struct ldap_control *find(const struct ldap_message *msg, const char *oid)
{
	for (size_t i = 0; i < msg->n_controls; i++)
		if (is_oid(msg->controls[i].oid, oid))
			return &msg->controls[i];
	return NULL;
}

static bool within(struct ber_view inner, struct ber_view outer)
{
	if (inner.len == 0)
		return true;
	return inner.ptr >= outer.ptr && inner.len <= outer.len &&
	       (size_t)(inner.ptr - outer.ptr) <= outer.len - inner.len;
}

/* A response control value must decode as a SearchResultEntry body. */
static void check_read_response(const char *oid, const struct attribute_selection *sel,
				struct arena *arena)
{
	struct ldap_control resp;
	struct ber_writer w;
	struct ldap_message m;
	const char *why = NULL;
	struct ldap_decode_limits limits;

	if (controls_read_entry_response(oid, sel, sample, &scratch, arena, &resp) != LUMEN_OK ||
	    !is_oid(resp.oid, oid) || !resp.has_value)
		abort();
	/* Wrap it as LDAPMessage { messageID 1, body } and decode that. */
	if (ber_writer_init(&w, 256, 0) != LUMEN_OK)
		abort();
	ber_begin(&w, BER_TAG_SEQUENCE);
	ber_write_integer(&w, BER_TAG_INTEGER, 1);
	ber_write_raw(&w, resp.value.ptr, resp.value.len);
	ber_end(&w);
	if (ber_writer_error(&w) != LUMEN_OK)
		abort();
	ldap_decode_limits_default(&limits);
	if (ldap_message_decode(w.buf, w.len, arena, &limits, &m, &why) != LUMEN_OK ||
	    m.op != LDAP_OP_SEARCH_ENTRY) {
		fprintf(stderr, "fuzz_controls: %s response does not decode: %s\n", oid,
			why ? why : "wrong op");
		abort();
	}
	ber_writer_free(&w);
}

static void check_paged_response(struct ber_view cookie, struct arena *arena)
{
	struct ldap_control resp;
	struct ber_reader r, seq;
	struct ber_view back;
	int64_t size;

	if (controls_paged_response(cookie.ptr, cookie.len, &scratch, arena, &resp) != LUMEN_OK)
		abort();
	ber_reader_init(&r, resp.value.ptr, resp.value.len);
	if (ber_enter(&r, BER_TAG_SEQUENCE, &seq) != LUMEN_OK || !ber_reader_at_end(&r) ||
	    ber_read_integer(&seq, BER_TAG_INTEGER, &size) != LUMEN_OK ||
	    ber_read_octets(&seq, BER_TAG_OCTET_STRING, &back) != LUMEN_OK ||
	    !ber_reader_at_end(&seq) || back.len != cookie.len ||
	    (cookie.len > 0 && memcmp(back.ptr, cookie.ptr, cookie.len) != 0))
		abort();
}

/* Every value of the sample entry through the ValuesReturnFilter. */
static void check_matched_values(const struct values_return_filter *vrf)
{
	struct matched_values mv;
	matched_values_begin(&mv, vrf);
	for (size_t i = 0; i < sample->n_attributes; i++)
		for (size_t j = 0; j < sample->attributes[i].n_values; j++)
			(void)matched_values_keep(&mv, &sample->attributes[i], j);
	matched_values_end(&mv);
}

/* A flag may only be set by a supported control that applies to the op. */
static void check_flag(bool set, const struct ldap_message *msg, const char *oid, unsigned ops_mask)
{
	if (!set)
		return;
	if (find(msg, oid) == NULL || (ops_mask & (1u << msg->op)) == 0)
		abort();
}

#define BIT(op) (1u << (op))
#define UPDATES (BIT(LDAP_OP_ADD_REQUEST) | BIT(LDAP_OP_DELETE_REQUEST) | \
		 BIT(LDAP_OP_MODIFY_REQUEST) | BIT(LDAP_OP_MODDN_REQUEST))
#define ENTRY_OPS (UPDATES | BIT(LDAP_OP_SEARCH_REQUEST) | BIT(LDAP_OP_COMPARE_REQUEST))

static void check(const struct ldap_message *msg, struct arena *arena)
{
	struct ldap_decode_limits limits;
	struct request_controls out, again;
	const char *why = NULL, *why_again = NULL;

	ldap_decode_limits_default(&limits);
	int rc = controls_parse(msg, schema, &limits, arena, &out, &why);
	int rc_again = controls_parse(msg, schema, &limits, arena, &again, &why_again);
	if (rc != rc_again)
		abort();
	if (rc != LUMEN_OK) {
		if (rc != LUMEN_EMALFORMED && rc != LUMEN_ELIMIT && rc != LUMEN_EUNSUPPORTED &&
		    rc != LUMEN_ENOMEM) {
			fprintf(stderr, "fuzz_controls: undocumented error %d\n", rc);
			abort();
		}
		if (rc != LUMEN_ENOMEM && (why == NULL || why[0] == '\0'))
			abort();
		return;
	}
	if (out.manage_dsa_it != again.manage_dsa_it || out.has_assertion != again.has_assertion ||
	    out.pre_read != again.pre_read || out.post_read != again.post_read ||
	    out.paged != again.paged || out.page_size != again.page_size)
		abort();

	check_flag(out.manage_dsa_it, msg, CONTROL_MANAGE_DSA_IT, ENTRY_OPS);
	check_flag(out.has_assertion, msg, CONTROL_ASSERTION, ENTRY_OPS);
	check_flag(out.pre_read, msg, CONTROL_PRE_READ,
		   BIT(LDAP_OP_DELETE_REQUEST) | BIT(LDAP_OP_MODIFY_REQUEST) | BIT(LDAP_OP_MODDN_REQUEST));
	check_flag(out.post_read, msg, CONTROL_POST_READ,
		   BIT(LDAP_OP_ADD_REQUEST) | BIT(LDAP_OP_MODIFY_REQUEST) | BIT(LDAP_OP_MODDN_REQUEST));
	check_flag(out.paged, msg, CONTROL_PAGED_RESULTS, BIT(LDAP_OP_SEARCH_REQUEST));
	check_flag(out.matched_values, msg, CONTROL_MATCHED_VALUES, BIT(LDAP_OP_SEARCH_REQUEST));
	if (out.matched_values)
		check_matched_values(&out.values_return);

	if (out.has_assertion) {
		enum filter_result result;
		struct filter_evaluation how = { NULL, NULL, NULL };
		if (filter_test(&out.assertion, sample, &how, &result) != LUMEN_OK ||
		    (result != FILTER_TRUE && result != FILTER_FALSE && result != FILTER_UNDEFINED))
			abort();
	}
	if (out.pre_read)
		check_read_response(CONTROL_PRE_READ, &out.pre_read_selection, arena);
	if (out.post_read)
		check_read_response(CONTROL_POST_READ, &out.post_read_selection, arena);
	if (out.paged) {
		const struct ldap_control *c = find(msg, CONTROL_PAGED_RESULTS);
		if (out.page_size > INT32_MAX || !within(out.cookie, c->value))
			abort();
		check_paged_response(out.cookie, arena);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct arena arena;
	struct ldap_message msg;
	struct ldap_control controls[MAX_CONTROLS];

	if (size == 0)
		return 0;
	arena_init(&arena, 0);
	if (data[0] & 0x80) {
		struct ldap_decode_limits limits;
		const char *why = NULL;
		ldap_decode_limits_default(&limits);
		if (ldap_message_decode(data + 1, size - 1, &arena, &limits, &msg, &why) == LUMEN_OK)
			check(&msg, &arena);
	} else {
		memset(&msg, 0, sizeof(msg));
		build_controls(data, size, &msg, controls);
		check(&msg, &arena);
	}
	arena_free(&arena);
	return 0;
}
