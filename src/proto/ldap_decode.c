/*
 * ldap_decode.c — LDAPMessage decoding (ldap_message.h): the envelope, the
 * controls and one decoder per protocolOp, chosen from a table.
 *
 * Lists (attributes, values, controls, changes, URIs) are read twice: once
 * to count and bound them, then into an array of exactly that size from the
 * arena. Counting is a cheap header walk and saves any growable array.
 */
#include "ldap_message.h"

#include <string.h>

struct message_decoder {
	struct arena *arena;
	const struct ldap_decode_limits *limits;
	size_t elements; /* list members so far, against max_elements */
	const char *diagnostic;
};

void ldap_decode_limits_default(struct ldap_decode_limits *limits)
{
	limits->max_filter_depth = LDAP_DEFAULT_MAX_FILTER_DEPTH;
	limits->max_filter_nodes = 1024;
	limits->max_elements = 65536;
}

static int fail(struct message_decoder *d, int rc, const char *why)
{
	return ber_fail(&d->diagnostic, rc, why);
}

static int expect_end(struct message_decoder *d, const struct ber_reader *r, const char *why)
{
	return ber_expect_end(&d->diagnostic, r, why);
}

/* Count the elements of a constructed value and charge them to the budget. */
static int count_members(struct message_decoder *d, struct ber_view contents, size_t *n)
{
	struct ber_reader r;
	struct ber_element el;
	size_t count = 0;
	ber_reader_init(&r, contents.ptr, contents.len);
	while (!ber_reader_at_end(&r)) {
		int rc = ber_read_element(&r, &el);
		if (rc != LUMEN_OK)
			return fail(d, rc, "bad element in list");
		count++;
	}
	if (count > d->limits->max_elements - d->elements)
		return fail(d, LUMEN_ELIMIT, "too many elements in message");
	d->elements += count;
	*n = count;
	return LUMEN_OK;
}

static void *alloc_array(struct message_decoder *d, size_t n, size_t size)
{
	/* Nothing to hold: leave the array NULL as the header promises. */
	if (n == 0)
		return NULL;
	void *p = arena_calloc(d->arena, n, size);
	if (p == NULL)
		fail(d, LUMEN_ENOMEM, "out of memory decoding message");
	return p;
}

/*
 * The start of a SEQUENCE/SET OF in contents: its *n members counted
 * (against the message's element budget), a zeroed array of *n elements
 * of size bytes returned (NULL when there are none, or on error: *rc
 * says; *n is then 0), and *r at the first member.
 */
static void *open_list(struct message_decoder *d, struct ber_view contents, size_t size,
		       size_t *n, struct ber_reader *r, int *rc)
{
	*n = 0;
	ber_reader_init(r, contents.ptr, contents.len);
	size_t count;
	*rc = count_members(d, contents, &count);
	void *items = *rc == LUMEN_OK ? alloc_array(d, count, size) : NULL;
	if (*rc == LUMEN_OK && count > 0 && items == NULL)
		*rc = LUMEN_ENOMEM;
	if (*rc == LUMEN_OK)
		*n = count;
	return items;
}

/* SEQUENCE/SET OF OCTET STRING (values, URIs, attribute selections). */
static int decode_string_list(struct message_decoder *d, struct ber_view contents,
			      struct ber_view **out, size_t *n_out)
{
	struct ber_reader r;
	int rc;
	*out = open_list(d, contents, sizeof(**out), n_out, &r, &rc);
	for (size_t i = 0; i < *n_out && rc == LUMEN_OK; i++) {
		rc = ber_read_octets(&r, BER_TAG_OCTET_STRING, &(*out)[i]);
		if (rc != LUMEN_OK)
			rc = fail(d, rc, "list member is not an octet string");
	}
	return rc;
}

/* PartialAttribute ::= SEQUENCE { type, vals SET OF value } */
static int decode_attribute(struct message_decoder *d, struct ber_reader *r,
			    struct ldap_attribute *attr)
{
	struct ber_reader inner;
	struct ber_view values;
	int rc = ber_enter(r, BER_TAG_SEQUENCE, &inner);
	if (rc == LUMEN_OK)
		rc = ber_read_octets(&inner, BER_TAG_OCTET_STRING, &attr->type);
	if (rc == LUMEN_OK)
		rc = ber_read_octets(&inner, BER_TAG_SET, &values);
	if (rc != LUMEN_OK)
		return fail(d, rc, "bad attribute");
	rc = expect_end(d, &inner, "trailing data in attribute");
	if (rc == LUMEN_OK)
		rc = decode_string_list(d, values, &attr->values, &attr->n_values);
	return rc;
}

static int decode_attribute_list(struct message_decoder *d, struct ber_view contents,
				 struct ldap_attribute **out, size_t *n_out)
{
	struct ber_reader r;
	int rc;
	*out = open_list(d, contents, sizeof(**out), n_out, &r, &rc);
	for (size_t i = 0; i < *n_out && rc == LUMEN_OK; i++)
		rc = decode_attribute(d, &r, &(*out)[i]);
	return rc;
}

/* The LDAPResult components, read from the reader of the enclosing op. */
static int decode_result_fields(struct message_decoder *d, struct ber_reader *r,
				struct ldap_result *result)
{
	int64_t code;
	ber_tag_t tag;
	int rc = ber_read_int_range(r, BER_TAG_ENUMERATED, 0, INT32_MAX, &code);
	if (rc == LUMEN_OK)
		rc = ber_read_octets(r, BER_TAG_OCTET_STRING, &result->matched_dn);
	if (rc == LUMEN_OK)
		rc = ber_read_octets(r, BER_TAG_OCTET_STRING, &result->diagnostic);
	if (rc != LUMEN_OK)
		return fail(d, rc, "bad LDAPResult");
	result->code = (int)code;
	if (ber_peek_tag(r, &tag) != LUMEN_OK || tag != BER_TAG_CONTEXT_CONS(3))
		return LUMEN_OK;
	struct ber_view uris;
	rc = ber_read_octets(r, tag, &uris);
	if (rc == LUMEN_OK)
		rc = decode_string_list(d, uris, &result->referrals, &result->n_referrals);
	/* Referral ::= SEQUENCE SIZE (1..MAX) OF uri */
	if (rc == LUMEN_OK && result->n_referrals == 0)
		rc = fail(d, LUMEN_EMALFORMED, "empty referral");
	return rc;
}

/* ------------------------------------------------------------- requests */

static int decode_bind_request(struct message_decoder *d, struct ber_reader *r,
			       struct ldap_message *m)
{
	struct ldap_bind_request *bind = &m->u.bind;
	struct ber_element auth;
	int rc = ber_read_int_range(r, BER_TAG_INTEGER, 1, 127, &bind->version);
	if (rc == LUMEN_OK)
		rc = ber_read_octets(r, BER_TAG_OCTET_STRING, &bind->name);
	if (rc == LUMEN_OK)
		rc = ber_read_element(r, &auth);
	if (rc != LUMEN_OK)
		return fail(d, rc, "bad bind request");
	if (auth.tag == BER_TAG_CONTEXT(LDAP_AUTH_SIMPLE)) {
		bind->auth = LDAP_AUTH_SIMPLE;
		bind->password = auth.value;
		return LUMEN_OK;
	}
	if (auth.tag != BER_TAG_CONTEXT_CONS(LDAP_AUTH_SASL)) {
		/* [1] and [2] were Kerberos v4, reserved by RFC 4511: not malformed. */
		uint32_t choice = BER_TAG_NUMBER(auth.tag);
		if (BER_TAG_CLASS(auth.tag) == BER_CLASS_CONTEXT && choice != LDAP_AUTH_SIMPLE &&
		    choice != LDAP_AUTH_SASL)
			return fail(d, LUMEN_EUNSUPPORTED, "authentication method not supported");
		return fail(d, LUMEN_EMALFORMED, "bad authentication choice");
	}
	struct ber_reader sasl;
	bind->auth = LDAP_AUTH_SASL;
	ber_reader_init(&sasl, auth.value.ptr, auth.value.len);
	rc = ber_read_octets(&sasl, BER_TAG_OCTET_STRING, &bind->mechanism);
	if (rc == LUMEN_OK && !ber_reader_at_end(&sasl)) {
		bind->has_credentials = true;
		rc = ber_read_octets(&sasl, BER_TAG_OCTET_STRING, &bind->credentials);
	}
	if (rc != LUMEN_OK)
		return fail(d, rc, "bad SASL credentials");
	return expect_end(d, &sasl, "trailing data in SASL credentials");
}

static int decode_unbind_request(struct message_decoder *d, struct ber_reader *r,
				 struct ldap_message *m)
{
	(void)m;
	/* UnbindRequest ::= [APPLICATION 2] NULL: no contents at all. */
	return expect_end(d, r, "unbind request with contents");
}

static int decode_search_request(struct message_decoder *d, struct ber_reader *r,
				 struct ldap_message *m)
{
	struct ldap_search_request *s = &m->u.search;
	int64_t scope, deref;
	struct ber_view attributes;
	int rc = ber_read_octets(r, BER_TAG_OCTET_STRING, &s->base);
	/* Any enumerated value decodes; one outside the enumeration is an
	 * invalid operation in a well-formed PDU (checked below). */
	if (rc == LUMEN_OK)
		rc = ber_read_int_range(r, BER_TAG_ENUMERATED, INT32_MIN, INT32_MAX, &scope);
	if (rc == LUMEN_OK)
		rc = ber_read_int_range(r, BER_TAG_ENUMERATED, INT32_MIN, INT32_MAX, &deref);
	if (rc == LUMEN_OK)
		rc = ber_read_int_range(r, BER_TAG_INTEGER, 0, INT32_MAX, &s->size_limit);
	if (rc == LUMEN_OK)
		rc = ber_read_int_range(r, BER_TAG_INTEGER, 0, INT32_MAX, &s->time_limit);
	if (rc == LUMEN_OK)
		rc = ber_read_boolean(r, BER_TAG_BOOLEAN, &s->types_only);
	if (rc != LUMEN_OK)
		return fail(d, rc, "bad search request");
	if (scope < LDAP_SCOPE_BASE || scope > LDAP_SCOPE_CHILDREN)
		return fail(d, LUMEN_EINVAL, "invalid scope");
	if (deref < LDAP_DEREF_NEVER || deref > LDAP_DEREF_ALWAYS)
		return fail(d, LUMEN_EINVAL, "invalid deref");
	s->scope = (enum ldap_scope)scope;
	s->deref = (enum ldap_deref)deref;
	const uint8_t *filter_start = r->pos;
	rc = ldap_filter_decode(r, d->arena, d->limits, &s->filter, &d->diagnostic);
	if (rc != LUMEN_OK)
		return fail(d, rc, "bad search filter");
	s->raw_filter.ptr = filter_start;
	s->raw_filter.len = (size_t)(r->pos - filter_start);
	rc = ber_read_octets(r, BER_TAG_SEQUENCE, &attributes);
	if (rc != LUMEN_OK)
		return fail(d, rc, "bad search attribute list");
	return decode_string_list(d, attributes, &s->attributes, &s->n_attributes);
}

/* change ::= SEQUENCE { operation ENUMERATED, modification PartialAttribute } */
static int decode_change(struct message_decoder *d, struct ber_reader *r,
			 struct ldap_change *change)
{
	struct ber_reader inner;
	int64_t operation;
	int rc = ber_enter(r, BER_TAG_SEQUENCE, &inner);
	if (rc == LUMEN_OK)
		rc = ber_read_int_range(&inner, BER_TAG_ENUMERATED, LDAP_MOD_ADD,
					LDAP_MOD_INCREMENT, &operation);
	if (rc != LUMEN_OK)
		return fail(d, rc, "bad modification");
	change->operation = (enum ldap_modify_operation)operation;
	rc = decode_attribute(d, &inner, &change->modification);
	if (rc == LUMEN_OK)
		rc = expect_end(d, &inner, "trailing data in modification");
	return rc;
}

static int decode_modify_request(struct message_decoder *d, struct ber_reader *r,
				 struct ldap_message *m)
{
	struct ldap_modify_request *mod = &m->u.modify;
	struct ber_view changes;
	int rc = ber_read_octets(r, BER_TAG_OCTET_STRING, &mod->object);
	if (rc == LUMEN_OK)
		rc = ber_read_octets(r, BER_TAG_SEQUENCE, &changes);
	if (rc != LUMEN_OK)
		return fail(d, rc, "bad modify request");
	struct ber_reader list;
	mod->changes = open_list(d, changes, sizeof(*mod->changes), &mod->n_changes, &list, &rc);
	for (size_t i = 0; i < mod->n_changes && rc == LUMEN_OK; i++)
		rc = decode_change(d, &list, &mod->changes[i]);
	return rc;
}

static int decode_add_request(struct message_decoder *d, struct ber_reader *r,
			      struct ldap_message *m)
{
	struct ldap_add_request *add = &m->u.add;
	struct ber_view attributes;
	int rc = ber_read_octets(r, BER_TAG_OCTET_STRING, &add->entry);
	if (rc == LUMEN_OK)
		rc = ber_read_octets(r, BER_TAG_SEQUENCE, &attributes);
	if (rc != LUMEN_OK)
		return fail(d, rc, "bad add request");
	/* an attribute without values is the operation's error, not the PDU's
	 * (op_add answers protocolError and the connection stays) */
	return decode_attribute_list(d, attributes, &add->attributes, &add->n_attributes);
}

static int decode_delete_request(struct message_decoder *d, struct ber_reader *r,
				 struct ldap_message *m)
{
	(void)d;
	/* DelRequest ::= [APPLICATION 10] LDAPDN: the contents are the DN. */
	m->u.delete_dn.ptr = r->pos;
	m->u.delete_dn.len = (size_t)(r->end - r->pos);
	r->pos = r->end;
	return LUMEN_OK;
}

static int decode_moddn_request(struct message_decoder *d, struct ber_reader *r,
				struct ldap_message *m)
{
	struct ldap_moddn_request *moddn = &m->u.moddn;
	int rc = ber_read_octets(r, BER_TAG_OCTET_STRING, &moddn->entry);
	if (rc == LUMEN_OK)
		rc = ber_read_octets(r, BER_TAG_OCTET_STRING, &moddn->new_rdn);
	if (rc == LUMEN_OK)
		rc = ber_read_boolean(r, BER_TAG_BOOLEAN, &moddn->delete_old_rdn);
	if (rc == LUMEN_OK && !ber_reader_at_end(r)) {
		moddn->has_new_superior = true;
		rc = ber_read_octets(r, BER_TAG_CONTEXT(0), &moddn->new_superior);
	}
	return rc == LUMEN_OK ? LUMEN_OK : fail(d, rc, "bad modify DN request");
}

static int decode_compare_request(struct message_decoder *d, struct ber_reader *r,
				  struct ldap_message *m)
{
	struct ldap_compare_request *cmp = &m->u.compare;
	struct ber_reader ava;
	int rc = ber_read_octets(r, BER_TAG_OCTET_STRING, &cmp->entry);
	if (rc == LUMEN_OK)
		rc = ber_enter(r, BER_TAG_SEQUENCE, &ava);
	if (rc == LUMEN_OK)
		rc = ber_read_octets(&ava, BER_TAG_OCTET_STRING, &cmp->attr);
	if (rc == LUMEN_OK)
		rc = ber_read_octets(&ava, BER_TAG_OCTET_STRING, &cmp->value);
	if (rc != LUMEN_OK)
		return fail(d, rc, "bad compare request");
	return expect_end(d, &ava, "trailing data in compare assertion");
}

static int decode_abandon_request(struct message_decoder *d, struct ber_reader *r,
				  struct ldap_message *m)
{
	/* AbandonRequest ::= [APPLICATION 16] MessageID: the contents are the integer. */
	int64_t id;
	struct ber_view contents = { r->pos, (size_t)(r->end - r->pos) };
	int rc = ber_decode_integer(contents, &id);
	if (rc != LUMEN_OK || id < 0 || id > LDAP_MAX_MESSAGE_ID)
		return fail(d, LUMEN_EMALFORMED, "bad abandon request");
	m->u.abandon_id = (int32_t)id;
	r->pos = r->end;
	return LUMEN_OK;
}

/* Optional [n] OCTET STRING: sets *present and *value when the next tag is n. */
static int read_optional(struct ber_reader *r, ber_tag_t tag, bool *present,
			 struct ber_view *value)
{
	ber_tag_t next;
	if (ber_reader_at_end(r) || ber_peek_tag(r, &next) != LUMEN_OK || next != tag)
		return LUMEN_OK;
	*present = true;
	return ber_read_octets(r, tag, value);
}

static int decode_extended_request(struct message_decoder *d, struct ber_reader *r,
				   struct ldap_message *m)
{
	struct ldap_extended_request *ext = &m->u.extended;
	int rc = ber_read_octets(r, BER_TAG_CONTEXT(0), &ext->oid);
	if (rc == LUMEN_OK)
		rc = read_optional(r, BER_TAG_CONTEXT(1), &ext->has_value, &ext->value);
	return rc == LUMEN_OK ? LUMEN_OK : fail(d, rc, "bad extended request");
}

/* ------------------------------------------------------------ responses */

static int decode_result(struct message_decoder *d, struct ber_reader *r,
			 struct ldap_message *m)
{
	return decode_result_fields(d, r, &m->u.result);
}

static int decode_bind_response(struct message_decoder *d, struct ber_reader *r,
				struct ldap_message *m)
{
	struct ldap_bind_response *resp = &m->u.bind_response;
	int rc = decode_result_fields(d, r, &resp->result);
	if (rc == LUMEN_OK)
		rc = read_optional(r, BER_TAG_CONTEXT(7), &resp->has_sasl_credentials,
				   &resp->sasl_credentials);
	return rc == LUMEN_OK ? LUMEN_OK : fail(d, rc, "bad bind response");
}

static int decode_search_entry(struct message_decoder *d, struct ber_reader *r,
			       struct ldap_message *m)
{
	struct ldap_search_entry *entry = &m->u.entry;
	struct ber_view attributes;
	int rc = ber_read_octets(r, BER_TAG_OCTET_STRING, &entry->dn);
	if (rc == LUMEN_OK)
		rc = ber_read_octets(r, BER_TAG_SEQUENCE, &attributes);
	if (rc != LUMEN_OK)
		return fail(d, rc, "bad search result entry");
	return decode_attribute_list(d, attributes, &entry->attributes, &entry->n_attributes);
}

static int decode_search_reference(struct message_decoder *d, struct ber_reader *r,
				   struct ldap_message *m)
{
	struct ldap_search_reference *ref = &m->u.reference;
	struct ber_view uris = { r->pos, (size_t)(r->end - r->pos) };
	int rc = decode_string_list(d, uris, &ref->uris, &ref->n_uris);
	if (rc == LUMEN_OK && ref->n_uris == 0)
		rc = fail(d, LUMEN_EMALFORMED, "search result reference without URIs");
	r->pos = r->end;
	return rc;
}

static int decode_extended_response(struct message_decoder *d, struct ber_reader *r,
				    struct ldap_message *m)
{
	struct ldap_extended_response *ext = &m->u.extended_response;
	int rc = decode_result_fields(d, r, &ext->result);
	if (rc == LUMEN_OK)
		rc = read_optional(r, BER_TAG_CONTEXT(10), &ext->has_name, &ext->name);
	if (rc == LUMEN_OK)
		rc = read_optional(r, BER_TAG_CONTEXT(11), &ext->has_value, &ext->value);
	return rc == LUMEN_OK ? LUMEN_OK : fail(d, rc, "bad extended response");
}

static int decode_intermediate_response(struct message_decoder *d, struct ber_reader *r,
					struct ldap_message *m)
{
	struct ldap_intermediate_response *im = &m->u.intermediate;
	int rc = read_optional(r, BER_TAG_CONTEXT(0), &im->has_name, &im->name);
	if (rc == LUMEN_OK)
		rc = read_optional(r, BER_TAG_CONTEXT(1), &im->has_value, &im->value);
	return rc == LUMEN_OK ? LUMEN_OK : fail(d, rc, "bad intermediate response");
}

/* ------------------------------------------------------------- dispatch */

struct op_decoder {
	const char *name;
	bool constructed;
	int (*decode)(struct message_decoder *d, struct ber_reader *r, struct ldap_message *m);
};

/* Indexed by the protocolOp application tag number; gaps are unknown ops. */
static const struct op_decoder op_decoders[] = {
	[LDAP_OP_BIND_REQUEST] = { "bindRequest", true, decode_bind_request },
	[LDAP_OP_BIND_RESPONSE] = { "bindResponse", true, decode_bind_response },
	[LDAP_OP_UNBIND_REQUEST] = { "unbindRequest", false, decode_unbind_request },
	[LDAP_OP_SEARCH_REQUEST] = { "searchRequest", true, decode_search_request },
	[LDAP_OP_SEARCH_ENTRY] = { "searchResEntry", true, decode_search_entry },
	[LDAP_OP_SEARCH_DONE] = { "searchResDone", true, decode_result },
	[LDAP_OP_MODIFY_REQUEST] = { "modifyRequest", true, decode_modify_request },
	[LDAP_OP_MODIFY_RESPONSE] = { "modifyResponse", true, decode_result },
	[LDAP_OP_ADD_REQUEST] = { "addRequest", true, decode_add_request },
	[LDAP_OP_ADD_RESPONSE] = { "addResponse", true, decode_result },
	[LDAP_OP_DELETE_REQUEST] = { "delRequest", false, decode_delete_request },
	[LDAP_OP_DELETE_RESPONSE] = { "delResponse", true, decode_result },
	[LDAP_OP_MODDN_REQUEST] = { "modDNRequest", true, decode_moddn_request },
	[LDAP_OP_MODDN_RESPONSE] = { "modDNResponse", true, decode_result },
	[LDAP_OP_COMPARE_REQUEST] = { "compareRequest", true, decode_compare_request },
	[LDAP_OP_COMPARE_RESPONSE] = { "compareResponse", true, decode_result },
	[LDAP_OP_ABANDON_REQUEST] = { "abandonRequest", false, decode_abandon_request },
	[LDAP_OP_SEARCH_REFERENCE] = { "searchResRef", true, decode_search_reference },
	[LDAP_OP_EXTENDED_REQUEST] = { "extendedReq", true, decode_extended_request },
	[LDAP_OP_EXTENDED_RESPONSE] = { "extendedResp", true, decode_extended_response },
	[LDAP_OP_INTERMEDIATE_RESPONSE] = { "intermediateResponse", true,
					    decode_intermediate_response },
};

#define OP_DECODERS (sizeof(op_decoders) / sizeof(op_decoders[0]))

static const struct op_decoder *find_op(uint32_t number)
{
	if (number >= OP_DECODERS || op_decoders[number].decode == NULL)
		return NULL;
	return &op_decoders[number];
}

const char *ldap_op_name(int op)
{
	const struct op_decoder *entry = op >= 0 ? find_op((uint32_t)op) : NULL;
	return entry != NULL ? entry->name : "unknown";
}

/* Control ::= SEQUENCE { controlType, criticality BOOLEAN DEFAULT FALSE, controlValue OPTIONAL } */
static int decode_control(struct message_decoder *d, struct ber_reader *r,
			  struct ldap_control *control)
{
	struct ber_reader inner;
	ber_tag_t tag;
	int rc = ber_enter(r, BER_TAG_SEQUENCE, &inner);
	if (rc == LUMEN_OK)
		rc = ber_read_octets(&inner, BER_TAG_OCTET_STRING, &control->oid);
	if (rc == LUMEN_OK && ber_peek_tag(&inner, &tag) == LUMEN_OK && tag == BER_TAG_BOOLEAN)
		rc = ber_read_boolean(&inner, BER_TAG_BOOLEAN, &control->critical);
	if (rc == LUMEN_OK)
		rc = read_optional(&inner, BER_TAG_OCTET_STRING, &control->has_value,
				   &control->value);
	if (rc != LUMEN_OK)
		return fail(d, rc, "bad control");
	return expect_end(d, &inner, "trailing data in control");
}

static int decode_controls(struct message_decoder *d, struct ber_view contents,
			   struct ldap_message *m)
{
	struct ber_reader r;
	int rc;
	m->controls = open_list(d, contents, sizeof(*m->controls), &m->n_controls, &r, &rc);
	for (size_t i = 0; i < m->n_controls && rc == LUMEN_OK; i++)
		rc = decode_control(d, &r, &m->controls[i]);
	return rc;
}

/* Open the envelope and read the messageID; *body reads what follows it. */
static int open_envelope(const void *pdu, size_t len, struct ber_reader *body,
			 int32_t *message_id)
{
	struct ber_reader whole;
	int64_t id;
	ber_reader_init(&whole, pdu, len);
	int rc = ber_enter(&whole, BER_TAG_SEQUENCE, body);
	if (rc == LUMEN_OK && !ber_reader_at_end(&whole))
		rc = LUMEN_EMALFORMED;
	if (rc == LUMEN_OK)
		rc = ber_read_int_range(body, BER_TAG_INTEGER, 0, LDAP_MAX_MESSAGE_ID, &id);
	if (rc != LUMEN_OK)
		return LUMEN_EMALFORMED;
	*message_id = (int32_t)id;
	return LUMEN_OK;
}

int ldap_message_peek(const void *pdu, size_t len, int32_t *message_id, int *op)
{
	struct ber_reader body;
	ber_tag_t tag;
	*message_id = 0;
	int rc = open_envelope(pdu, len, &body, message_id);
	if (rc != LUMEN_OK)
		return rc;
	if (ber_peek_tag(&body, &tag) != LUMEN_OK || BER_TAG_CLASS(tag) != BER_CLASS_APPLICATION)
		return LUMEN_EMALFORMED;
	*op = (int)BER_TAG_NUMBER(tag);
	return LUMEN_OK;
}

int ldap_message_peek_extended_name(const void *pdu, size_t len, struct ber_view *name)
{
	struct ber_reader body, op_reader;
	struct ber_element op;
	int32_t message_id;
	int rc = open_envelope(pdu, len, &body, &message_id);
	if (rc == LUMEN_OK)
		rc = ber_read_element(&body, &op);
	if (rc != LUMEN_OK || op.tag != BER_TAG_APP_CONS(LDAP_OP_EXTENDED_REQUEST))
		return LUMEN_EMALFORMED;
	ber_reader_init(&op_reader, op.value.ptr, op.value.len);
	return ber_read_octets(&op_reader, BER_TAG_CONTEXT(0), name) == LUMEN_OK
		       ? LUMEN_OK
		       : LUMEN_EMALFORMED;
}

static int decode_message(struct message_decoder *d, const void *pdu, size_t len,
			  struct ldap_message *out)
{
	struct ber_reader body, op_reader;
	struct ber_element op;
	int rc = open_envelope(pdu, len, &body, &out->message_id);
	if (rc != LUMEN_OK)
		return fail(d, rc, "bad LDAPMessage envelope or messageID");
	rc = ber_read_element(&body, &op);
	if (rc != LUMEN_OK || BER_TAG_CLASS(op.tag) != BER_CLASS_APPLICATION)
		return fail(d, LUMEN_EMALFORMED, "bad protocolOp");
	out->op = (enum ldap_op)BER_TAG_NUMBER(op.tag);
	const struct op_decoder *entry = find_op(BER_TAG_NUMBER(op.tag));
	if (entry == NULL)
		return fail(d, LUMEN_EUNSUPPORTED, "unknown protocolOp");
	if (BER_TAG_CONSTRUCTED(op.tag) != entry->constructed)
		return fail(d, LUMEN_EMALFORMED, "protocolOp has the wrong form");
	ber_reader_init(&op_reader, op.value.ptr, op.value.len);
	rc = entry->decode(d, &op_reader, out);
	if (rc == LUMEN_OK)
		rc = expect_end(d, &op_reader, "trailing data in protocolOp");
	if (rc != LUMEN_OK || ber_reader_at_end(&body))
		return rc;
	struct ber_view controls;
	rc = ber_read_octets(&body, BER_TAG_CONTEXT_CONS(0), &controls);
	if (rc != LUMEN_OK)
		return fail(d, LUMEN_EMALFORMED, "trailing data after protocolOp");
	rc = decode_controls(d, controls, out);
	if (rc == LUMEN_OK)
		rc = expect_end(d, &body, "trailing data after controls");
	return rc;
}

int ldap_message_decode(const void *pdu, size_t len, struct arena *arena,
			const struct ldap_decode_limits *limits,
			struct ldap_message *out, const char **diagnostic)
{
	struct ldap_decode_limits defaults;
	if (limits == NULL) {
		ldap_decode_limits_default(&defaults);
		limits = &defaults;
	}
	struct message_decoder d = { .arena = arena, .limits = limits };
	memset(out, 0, sizeof(*out));
	int rc = decode_message(&d, pdu, len, out);
	/* The PDU is framed: anything running past its end is malformed. */
	if (rc == LUMEN_EINCOMPLETE)
		rc = LUMEN_EMALFORMED;
	if (rc != LUMEN_OK && diagnostic != NULL)
		*diagnostic = d.diagnostic != NULL ? d.diagnostic : lumen_strerror(rc);
	return rc;
}
