/*
 * ldap_encode.c — LDAPMessage encoding (ldap_message.h): the generic
 * encoder for any struct ldap_message, and the server's response fast paths.
 *
 * Everything appends to a caller-owned ber_writer, so a connection's output
 * buffer is reused across responses; errors stay in the writer (poisoned).
 * Optional fields with a DEFAULT (criticality, dnAttributes) are left out
 * when they hold the default, as DER would, so encodings are canonical.
 */
#include "ldap_message.h"

#include <string.h>

static void write_view(struct ber_writer *w, ber_tag_t tag, struct ber_view v)
{
	ber_write_octets(w, tag, v.ptr, v.len);
}

static void write_string_list(struct ber_writer *w, ber_tag_t tag,
			      const struct ber_view *items, size_t n)
{
	ber_begin(w, tag);
	for (size_t i = 0; i < n; i++)
		write_view(w, BER_TAG_OCTET_STRING, items[i]);
	ber_end(w);
}

static void write_attribute(struct ber_writer *w, const struct ldap_attribute *attr)
{
	ber_begin(w, BER_TAG_SEQUENCE);
	write_view(w, BER_TAG_OCTET_STRING, attr->type);
	write_string_list(w, BER_TAG_SET, attr->values, attr->n_values);
	ber_end(w);
}

static void write_attribute_list(struct ber_writer *w, const struct ldap_attribute *attrs,
				 size_t n)
{
	ber_begin(w, BER_TAG_SEQUENCE);
	for (size_t i = 0; i < n; i++)
		write_attribute(w, &attrs[i]);
	ber_end(w);
}

void ldap_encode_controls(struct ber_writer *w, const struct ldap_control *controls, size_t n)
{
	if (n == 0)
		return;
	ber_begin(w, BER_TAG_CONTEXT_CONS(0));
	for (size_t i = 0; i < n; i++) {
		ber_begin(w, BER_TAG_SEQUENCE);
		write_view(w, BER_TAG_OCTET_STRING, controls[i].oid);
		if (controls[i].critical)
			ber_write_boolean(w, BER_TAG_BOOLEAN, true);
		if (controls[i].has_value)
			write_view(w, BER_TAG_OCTET_STRING, controls[i].value);
		ber_end(w);
	}
	ber_end(w);
}

/* The LDAPResult components, inside the response's own element. */
static void write_result_fields(struct ber_writer *w, const struct ldap_result *result)
{
	ber_write_integer(w, BER_TAG_ENUMERATED, result->code);
	write_view(w, BER_TAG_OCTET_STRING, result->matched_dn);
	write_view(w, BER_TAG_OCTET_STRING, result->diagnostic);
	if (result->n_referrals > 0)
		write_string_list(w, BER_TAG_CONTEXT_CONS(3), result->referrals,
				  result->n_referrals);
}

/* ------------------------------------------------------------ op bodies */

static void encode_bind_request(struct ber_writer *w, const struct ldap_message *m)
{
	const struct ldap_bind_request *bind = &m->u.bind;
	ber_write_integer(w, BER_TAG_INTEGER, bind->version);
	write_view(w, BER_TAG_OCTET_STRING, bind->name);
	if (bind->auth == LDAP_AUTH_SIMPLE) {
		write_view(w, BER_TAG_CONTEXT(LDAP_AUTH_SIMPLE), bind->password);
		return;
	}
	ber_begin(w, BER_TAG_CONTEXT_CONS(LDAP_AUTH_SASL));
	write_view(w, BER_TAG_OCTET_STRING, bind->mechanism);
	if (bind->has_credentials)
		write_view(w, BER_TAG_OCTET_STRING, bind->credentials);
	ber_end(w);
}

static void encode_search_request(struct ber_writer *w, const struct ldap_message *m)
{
	const struct ldap_search_request *s = &m->u.search;
	write_view(w, BER_TAG_OCTET_STRING, s->base);
	ber_write_integer(w, BER_TAG_ENUMERATED, s->scope);
	ber_write_integer(w, BER_TAG_ENUMERATED, s->deref);
	ber_write_integer(w, BER_TAG_INTEGER, s->size_limit);
	ber_write_integer(w, BER_TAG_INTEGER, s->time_limit);
	ber_write_boolean(w, BER_TAG_BOOLEAN, s->types_only);
	/* A caller with only the filter's encoding (e.g. a replayed request) passes raw_filter. */
	if (s->filter != NULL)
		ldap_filter_encode(w, s->filter);
	else
		ber_write_raw(w, s->raw_filter.ptr, s->raw_filter.len);
	write_string_list(w, BER_TAG_SEQUENCE, s->attributes, s->n_attributes);
}

static void encode_modify_request(struct ber_writer *w, const struct ldap_message *m)
{
	const struct ldap_modify_request *mod = &m->u.modify;
	write_view(w, BER_TAG_OCTET_STRING, mod->object);
	ber_begin(w, BER_TAG_SEQUENCE);
	for (size_t i = 0; i < mod->n_changes; i++) {
		ber_begin(w, BER_TAG_SEQUENCE);
		ber_write_integer(w, BER_TAG_ENUMERATED, mod->changes[i].operation);
		write_attribute(w, &mod->changes[i].modification);
		ber_end(w);
	}
	ber_end(w);
}

static void encode_add_request(struct ber_writer *w, const struct ldap_message *m)
{
	write_view(w, BER_TAG_OCTET_STRING, m->u.add.entry);
	write_attribute_list(w, m->u.add.attributes, m->u.add.n_attributes);
}

static void encode_moddn_request(struct ber_writer *w, const struct ldap_message *m)
{
	const struct ldap_moddn_request *moddn = &m->u.moddn;
	write_view(w, BER_TAG_OCTET_STRING, moddn->entry);
	write_view(w, BER_TAG_OCTET_STRING, moddn->new_rdn);
	ber_write_boolean(w, BER_TAG_BOOLEAN, moddn->delete_old_rdn);
	if (moddn->has_new_superior)
		write_view(w, BER_TAG_CONTEXT(0), moddn->new_superior);
}

static void encode_compare_request(struct ber_writer *w, const struct ldap_message *m)
{
	const struct ldap_compare_request *cmp = &m->u.compare;
	write_view(w, BER_TAG_OCTET_STRING, cmp->entry);
	ber_begin(w, BER_TAG_SEQUENCE);
	write_view(w, BER_TAG_OCTET_STRING, cmp->attr);
	write_view(w, BER_TAG_OCTET_STRING, cmp->value);
	ber_end(w);
}

static void encode_extended_request(struct ber_writer *w, const struct ldap_message *m)
{
	const struct ldap_extended_request *ext = &m->u.extended;
	write_view(w, BER_TAG_CONTEXT(0), ext->oid);
	if (ext->has_value)
		write_view(w, BER_TAG_CONTEXT(1), ext->value);
}

static void encode_result(struct ber_writer *w, const struct ldap_message *m)
{
	write_result_fields(w, &m->u.result);
}

static void encode_bind_response(struct ber_writer *w, const struct ldap_message *m)
{
	const struct ldap_bind_response *resp = &m->u.bind_response;
	write_result_fields(w, &resp->result);
	if (resp->has_sasl_credentials)
		write_view(w, BER_TAG_CONTEXT(7), resp->sasl_credentials);
}

static void encode_search_entry(struct ber_writer *w, const struct ldap_message *m)
{
	write_view(w, BER_TAG_OCTET_STRING, m->u.entry.dn);
	write_attribute_list(w, m->u.entry.attributes, m->u.entry.n_attributes);
}

static void encode_search_reference(struct ber_writer *w, const struct ldap_message *m)
{
	for (size_t i = 0; i < m->u.reference.n_uris; i++)
		write_view(w, BER_TAG_OCTET_STRING, m->u.reference.uris[i]);
}

static void encode_extended_response(struct ber_writer *w, const struct ldap_message *m)
{
	const struct ldap_extended_response *ext = &m->u.extended_response;
	write_result_fields(w, &ext->result);
	if (ext->has_name)
		write_view(w, BER_TAG_CONTEXT(10), ext->name);
	if (ext->has_value)
		write_view(w, BER_TAG_CONTEXT(11), ext->value);
}

static void encode_intermediate_response(struct ber_writer *w, const struct ldap_message *m)
{
	const struct ldap_intermediate_response *im = &m->u.intermediate;
	if (im->has_name)
		write_view(w, BER_TAG_CONTEXT(0), im->name);
	if (im->has_value)
		write_view(w, BER_TAG_CONTEXT(1), im->value);
}

struct op_encoder {
	void (*encode)(struct ber_writer *w, const struct ldap_message *m);
};

/* Indexed by protocolOp number. The three primitive ops are handled apart. */
static const struct op_encoder op_encoders[] = {
	[LDAP_OP_BIND_REQUEST] = { encode_bind_request },
	[LDAP_OP_BIND_RESPONSE] = { encode_bind_response },
	[LDAP_OP_SEARCH_REQUEST] = { encode_search_request },
	[LDAP_OP_SEARCH_ENTRY] = { encode_search_entry },
	[LDAP_OP_SEARCH_DONE] = { encode_result },
	[LDAP_OP_MODIFY_REQUEST] = { encode_modify_request },
	[LDAP_OP_MODIFY_RESPONSE] = { encode_result },
	[LDAP_OP_ADD_REQUEST] = { encode_add_request },
	[LDAP_OP_ADD_RESPONSE] = { encode_result },
	[LDAP_OP_DELETE_RESPONSE] = { encode_result },
	[LDAP_OP_MODDN_REQUEST] = { encode_moddn_request },
	[LDAP_OP_MODDN_RESPONSE] = { encode_result },
	[LDAP_OP_COMPARE_REQUEST] = { encode_compare_request },
	[LDAP_OP_COMPARE_RESPONSE] = { encode_result },
	[LDAP_OP_SEARCH_REFERENCE] = { encode_search_reference },
	[LDAP_OP_EXTENDED_REQUEST] = { encode_extended_request },
	[LDAP_OP_EXTENDED_RESPONSE] = { encode_extended_response },
	[LDAP_OP_INTERMEDIATE_RESPONSE] = { encode_intermediate_response },
};

#define OP_ENCODERS (sizeof(op_encoders) / sizeof(op_encoders[0]))

/* Encode the protocolOp element; false if m->op is not an operation. */
static bool encode_op(struct ber_writer *w, const struct ldap_message *m)
{
	switch (m->op) {
	case LDAP_OP_UNBIND_REQUEST:
		ber_write_null(w, BER_TAG_APP(LDAP_OP_UNBIND_REQUEST));
		return true;
	case LDAP_OP_DELETE_REQUEST:
		write_view(w, BER_TAG_APP(LDAP_OP_DELETE_REQUEST), m->u.delete_dn);
		return true;
	case LDAP_OP_ABANDON_REQUEST:
		ber_write_integer(w, BER_TAG_APP(LDAP_OP_ABANDON_REQUEST), m->u.abandon_id);
		return true;
	default:
		break;
	}
	if ((unsigned)m->op >= OP_ENCODERS || op_encoders[m->op].encode == NULL)
		return false;
	ber_begin(w, BER_TAG_APP_CONS(m->op));
	op_encoders[m->op].encode(w, m);
	ber_end(w);
	return true;
}

void ldap_message_encode(struct ber_writer *w, const struct ldap_message *m)
{
	if (ber_writer_error(w) != LUMEN_OK)
		return;
	ber_begin(w, BER_TAG_SEQUENCE);
	ber_write_integer(w, BER_TAG_INTEGER, m->message_id);
	if (!encode_op(w, m)) {
		if (w->error == LUMEN_OK)
			w->error = LUMEN_EINVAL;
		return;
	}
	ldap_encode_controls(w, m->controls, m->n_controls);
	ber_end(w);
}

/* ------------------------------------------------------------ fast paths */

static void write_result_strings(struct ber_writer *w, int code, const char *matched_dn,
				 const char *diagnostic)
{
	ber_write_integer(w, BER_TAG_ENUMERATED, code);
	ber_write_string(w, BER_TAG_OCTET_STRING, matched_dn);
	ber_write_string(w, BER_TAG_OCTET_STRING, diagnostic);
}

void ldap_encode_result(struct ber_writer *w, int32_t message_id, int op,
			int code, const char *matched_dn, const char *diagnostic,
			const struct ldap_control *controls, size_t n_controls)
{
	ber_begin(w, BER_TAG_SEQUENCE);
	ber_write_integer(w, BER_TAG_INTEGER, message_id);
	ber_begin(w, BER_TAG_APP_CONS((uint32_t)op));
	write_result_strings(w, code, matched_dn, diagnostic);
	ber_end(w);
	ldap_encode_controls(w, controls, n_controls);
	ber_end(w);
}

void ldap_encode_bind_result(struct ber_writer *w, int32_t message_id, int code,
			     const char *matched_dn, const char *diagnostic,
			     const struct ber_view *server_sasl_credentials,
			     const struct ldap_control *controls, size_t n_controls)
{
	ber_begin(w, BER_TAG_SEQUENCE);
	ber_write_integer(w, BER_TAG_INTEGER, message_id);
	ber_begin(w, BER_TAG_APP_CONS(LDAP_OP_BIND_RESPONSE));
	write_result_strings(w, code, matched_dn, diagnostic);
	if (server_sasl_credentials != NULL)
		write_view(w, BER_TAG_CONTEXT(7), *server_sasl_credentials);
	ber_end(w);
	ldap_encode_controls(w, controls, n_controls);
	ber_end(w);
}

void ldap_encode_bind_response(struct ber_writer *w, int32_t message_id, int code,
			       const char *matched_dn, const char *diagnostic,
			       const struct ber_view *server_sasl_credentials)
{
	ldap_encode_bind_result(w, message_id, code, matched_dn, diagnostic,
				server_sasl_credentials, NULL, 0);
}

void ldap_encode_extended_result(struct ber_writer *w, int32_t message_id, int code,
				 const char *diagnostic, const char *name,
				 const struct ber_view *value, const struct ldap_control *controls,
				 size_t n_controls)
{
	ber_begin(w, BER_TAG_SEQUENCE);
	ber_write_integer(w, BER_TAG_INTEGER, message_id);
	ber_begin(w, BER_TAG_APP_CONS(LDAP_OP_EXTENDED_RESPONSE));
	write_result_strings(w, code, NULL, diagnostic);
	if (name != NULL)
		ber_write_string(w, BER_TAG_CONTEXT(10), name);
	if (value != NULL)
		write_view(w, BER_TAG_CONTEXT(11), *value);
	ber_end(w);
	ldap_encode_controls(w, controls, n_controls);
	ber_end(w);
}

void ldap_encode_extended_response(struct ber_writer *w, int32_t message_id,
				   int code, const char *diagnostic,
				   const char *name, const struct ber_view *value)
{
	ldap_encode_extended_result(w, message_id, code, diagnostic, name, value, NULL, 0);
}

void ldap_encode_intermediate(struct ber_writer *w, int32_t message_id, const char *name,
			      const struct ber_view *value)
{
	ber_begin(w, BER_TAG_SEQUENCE);
	ber_write_integer(w, BER_TAG_INTEGER, message_id);
	ber_begin(w, BER_TAG_APP_CONS(LDAP_OP_INTERMEDIATE_RESPONSE));
	if (name != NULL)
		ber_write_octets(w, BER_TAG_CONTEXT(0), name, strlen(name));
	if (value != NULL)
		ber_write_octets(w, BER_TAG_CONTEXT(1), value->ptr, value->len);
	ber_end(w);
	ber_end(w);
}

void ldap_encode_notice_of_disconnection(struct ber_writer *w, int code,
					 const char *diagnostic)
{
	ldap_encode_extended_response(w, 0, code, diagnostic,
				      LDAP_OID_NOTICE_OF_DISCONNECTION, NULL);
}

void ldap_encode_entry_begin(struct ber_writer *w, int32_t message_id,
			     const void *dn, size_t dn_len)
{
	ber_begin(w, BER_TAG_SEQUENCE);
	ber_write_integer(w, BER_TAG_INTEGER, message_id);
	ber_begin(w, BER_TAG_APP_CONS(LDAP_OP_SEARCH_ENTRY));
	ber_write_octets(w, BER_TAG_OCTET_STRING, dn, dn_len);
	ber_begin(w, BER_TAG_SEQUENCE);
}

void ldap_encode_entry_attribute_begin(struct ber_writer *w, const void *type,
				       size_t type_len)
{
	ber_begin(w, BER_TAG_SEQUENCE);
	ber_write_octets(w, BER_TAG_OCTET_STRING, type, type_len);
	ber_begin(w, BER_TAG_SET);
}

void ldap_encode_entry_value(struct ber_writer *w, const void *value, size_t len)
{
	ber_write_octets(w, BER_TAG_OCTET_STRING, value, len);
}

void ldap_encode_entry_attribute_end(struct ber_writer *w)
{
	ber_end(w); /* SET of values */
	ber_end(w); /* PartialAttribute */
}

void ldap_encode_entry_end(struct ber_writer *w, const struct ldap_control *controls,
			   size_t n_controls)
{
	ber_end(w); /* attribute list */
	ber_end(w); /* SearchResultEntry */
	ldap_encode_controls(w, controls, n_controls);
	ber_end(w); /* LDAPMessage */
}
