/*
 * controls.c — request controls by OID, and the response controls
 * (controls.h).
 */
#include "controls.h"

#include <string.h>

#include "lumen_error.h"

/* What a control's parser gets. */
struct control_parse {
	const struct ldap_control *control;
	const struct schema *schema;
	const struct ldap_decode_limits *limits;
	struct arena *arena;
	struct request_controls *out;
	const char **diagnostic;
};

/* Operations a control applies to, as bits of their request tags. */
#define OP_BIT(tag) (1u << (tag))
#define UPDATE_OPS (OP_BIT(LDAP_OP_ADD_REQUEST) | OP_BIT(LDAP_OP_DELETE_REQUEST) | \
		    OP_BIT(LDAP_OP_MODIFY_REQUEST) | OP_BIT(LDAP_OP_MODDN_REQUEST))
#define ENTRY_OPS (UPDATE_OPS | OP_BIT(LDAP_OP_SEARCH_REQUEST) | OP_BIT(LDAP_OP_COMPARE_REQUEST))

static int fail(const struct control_parse *p, int rc, const char *why)
{
	*p->diagnostic = why;
	return rc;
}

static int parse_manage_dsa_it(const struct control_parse *p)
{
	p->out->manage_dsa_it = true;
	return LUMEN_OK;
}

static int parse_assertion(const struct control_parse *p)
{
	struct ber_reader r;
	struct ldap_filter *decoded;
	const char *why = NULL;
	struct filter_limits fl = { p->limits->max_filter_depth, p->limits->max_filter_nodes };
	if (!p->control->has_value)
		return fail(p, LUMEN_EMALFORMED, "assertion control without a value");
	ber_reader_init(&r, p->control->value.ptr, p->control->value.len);
	int rc = ldap_filter_decode(&r, p->arena, p->limits, &decoded, &why);
	if (rc == LUMEN_OK && !ber_reader_at_end(&r))
		rc = LUMEN_EMALFORMED;
	if (rc == LUMEN_EINCOMPLETE)
		rc = LUMEN_EMALFORMED;
	if (rc != LUMEN_OK)
		return fail(p, rc, "assertion control value is not a filter");
	rc = filter_compile(p->schema, decoded, &fl, p->arena, &p->out->assertion);
	if (rc != LUMEN_OK)
		return fail(p, rc, "assertion control filter cannot be compiled");
	p->out->has_assertion = true;
	return LUMEN_OK;
}

/* AttributeSelection ::= SEQUENCE OF selector LDAPString (RFC 4527 §3). */
static int parse_read_selection(const struct control_parse *p, struct attribute_selection *sel)
{
	struct ber_reader list, counter;
	struct ber_view name;
	size_t n = 0;
	if (!p->control->has_value)
		return fail(p, LUMEN_EMALFORMED, "read control without a value");
	ber_reader_init(&counter, p->control->value.ptr, p->control->value.len);
	int rc = ber_enter(&counter, BER_TAG_SEQUENCE, &list);
	if (rc != LUMEN_OK || !ber_reader_at_end(&counter))
		return fail(p, LUMEN_EMALFORMED, "read control value is not an attribute list");
	counter = list;
	while (!ber_reader_at_end(&counter)) {
		if (ber_read_octets(&counter, BER_TAG_OCTET_STRING, &name) != LUMEN_OK ||
		    n >= p->limits->max_elements)
			return fail(p, LUMEN_EMALFORMED, "read control value is not an attribute list");
		n++;
	}
	struct ber_view *names = arena_calloc(p->arena, n ? n : 1, sizeof(*names));
	if (names == NULL)
		return LUMEN_ENOMEM;
	for (size_t i = 0; i < n; i++)
		ber_read_octets(&list, BER_TAG_OCTET_STRING, &names[i]);
	return attribute_selection_init(sel, p->schema, names, n, false, p->arena);
}

static int parse_pre_read(const struct control_parse *p)
{
	p->out->pre_read = true;
	return parse_read_selection(p, &p->out->pre_read_selection);
}

static int parse_post_read(const struct control_parse *p)
{
	p->out->post_read = true;
	return parse_read_selection(p, &p->out->post_read_selection);
}

/* realSearchControlValue ::= SEQUENCE { size INTEGER, cookie OCTET STRING } */
static int parse_paged_results(const struct control_parse *p)
{
	struct ber_reader outer, seq;
	int64_t size;
	if (!p->control->has_value)
		return fail(p, LUMEN_EMALFORMED, "paged results control without a value");
	ber_reader_init(&outer, p->control->value.ptr, p->control->value.len);
	if (ber_enter(&outer, BER_TAG_SEQUENCE, &seq) != LUMEN_OK || !ber_reader_at_end(&outer) ||
	    ber_read_int_range(&seq, BER_TAG_INTEGER, 0, INT32_MAX, &size) != LUMEN_OK ||
	    ber_read_octets(&seq, BER_TAG_OCTET_STRING, &p->out->cookie) != LUMEN_OK ||
	    !ber_reader_at_end(&seq))
		return fail(p, LUMEN_EMALFORMED, "paged results control value does not decode");
	p->out->paged = true;
	p->out->page_size = (uint64_t)size;
	return LUMEN_OK;
}

/* SortKeyList ::= SEQUENCE OF SEQUENCE { attributeType AttributeDescription,
 * orderingRule [0] MatchingRuleId OPTIONAL, reverseOrder [1] BOOLEAN DEFAULT FALSE } */
static int parse_sort_key(struct ber_reader *list, struct sort_key_request *k)
{
	struct ber_reader seq;
	ber_tag_t tag;
	memset(k, 0, sizeof(*k));
	if (ber_enter(list, BER_TAG_SEQUENCE, &seq) != LUMEN_OK ||
	    ber_read_octets(&seq, BER_TAG_OCTET_STRING, &k->attribute) != LUMEN_OK ||
	    k->attribute.len == 0)
		return LUMEN_EMALFORMED;
	if (!ber_reader_at_end(&seq) && ber_peek_tag(&seq, &tag) == LUMEN_OK &&
	    tag == BER_TAG_CONTEXT(0) &&
	    ber_read_octets(&seq, BER_TAG_CONTEXT(0), &k->ordering_rule) != LUMEN_OK)
		return LUMEN_EMALFORMED;
	if (!ber_reader_at_end(&seq) &&
	    ber_read_boolean(&seq, BER_TAG_CONTEXT(1), &k->reverse) != LUMEN_OK)
		return LUMEN_EMALFORMED;
	return ber_reader_at_end(&seq) ? LUMEN_OK : LUMEN_EMALFORMED;
}

static int parse_sort_request(const struct control_parse *p)
{
	struct ber_reader outer, list;
	struct request_controls *out = p->out;
	const char *bad = "sort control value does not decode";
	if (!p->control->has_value)
		return fail(p, LUMEN_EMALFORMED, "sort control without a value");
	ber_reader_init(&outer, p->control->value.ptr, p->control->value.len);
	if (ber_enter(&outer, BER_TAG_SEQUENCE, &list) != LUMEN_OK || !ber_reader_at_end(&outer))
		return fail(p, LUMEN_EMALFORMED, bad);
	while (!ber_reader_at_end(&list)) {
		if (out->n_sort_keys == CONTROLS_MAX_SORT_KEYS)
			return fail(p, LUMEN_EMALFORMED, "too many sort keys");
		if (parse_sort_key(&list, &out->sort_keys[out->n_sort_keys]) != LUMEN_OK)
			return fail(p, LUMEN_EMALFORMED, bad);
		out->n_sort_keys++;
	}
	if (out->n_sort_keys == 0)
		return fail(p, LUMEN_EMALFORMED, "sort control without a key");
	out->sort = true;
	out->sort_critical = p->control->critical;
	return LUMEN_OK;
}

/* byOffset [0] SEQUENCE { offset INTEGER, contentCount INTEGER } or
 * greaterThanOrEqual [1] AssertionValue. */
static int parse_vlv_target(struct ber_reader *seq, struct vlv_request *v)
{
	struct ber_reader by;
	int64_t offset, count;
	ber_tag_t tag;
	if (ber_peek_tag(seq, &tag) != LUMEN_OK)
		return LUMEN_EMALFORMED;
	if (tag == BER_TAG_CONTEXT(1)) {
		v->by_value = true;
		return ber_read_octets(seq, BER_TAG_CONTEXT(1), &v->value);
	}
	if (ber_enter(seq, BER_TAG_CONTEXT_CONS(0), &by) != LUMEN_OK ||
	    ber_read_int_range(&by, BER_TAG_INTEGER, 0, INT32_MAX, &offset) != LUMEN_OK ||
	    ber_read_int_range(&by, BER_TAG_INTEGER, 0, INT32_MAX, &count) != LUMEN_OK ||
	    !ber_reader_at_end(&by))
		return LUMEN_EMALFORMED;
	v->offset = (uint32_t)offset;
	v->content_count = (uint32_t)count;
	return LUMEN_OK;
}

/* VirtualListViewRequest ::= SEQUENCE { beforeCount INTEGER, afterCount
 * INTEGER, target CHOICE, contextID OCTET STRING OPTIONAL } */
static int parse_vlv_request(const struct control_parse *p)
{
	struct ber_reader outer, seq;
	int64_t before, after;
	struct vlv_request *v = &p->out->vlv_request;
	memset(v, 0, sizeof(*v));
	if (!p->control->has_value)
		return fail(p, LUMEN_EMALFORMED, "VLV control without a value");
	ber_reader_init(&outer, p->control->value.ptr, p->control->value.len);
	if (ber_enter(&outer, BER_TAG_SEQUENCE, &seq) != LUMEN_OK || !ber_reader_at_end(&outer) ||
	    ber_read_int_range(&seq, BER_TAG_INTEGER, 0, INT32_MAX, &before) != LUMEN_OK ||
	    ber_read_int_range(&seq, BER_TAG_INTEGER, 0, INT32_MAX, &after) != LUMEN_OK ||
	    parse_vlv_target(&seq, v) != LUMEN_OK ||
	    (!ber_reader_at_end(&seq) &&
	     ber_read_octets(&seq, BER_TAG_OCTET_STRING, &v->context_id) != LUMEN_OK) ||
	    !ber_reader_at_end(&seq))
		return fail(p, LUMEN_EMALFORMED, "VLV control value does not decode");
	v->before = (uint32_t)before;
	v->after = (uint32_t)after;
	p->out->vlv = true;
	return LUMEN_OK;
}

/* RFC 4533 §2.2; whether a database answers it is syncprov's to say. */
static int parse_sync_request(const struct control_parse *p)
{
	if (!p->control->has_value ||
	    ldap_sync_request_decode(p->control->value, &p->out->sync) != LUMEN_OK)
		return fail(p, LUMEN_EMALFORMED, "Sync Request control value does not decode");
	p->out->has_sync = true;
	p->out->sync_critical = p->control->critical;
	return LUMEN_OK;
}

/* draft-behera-10 §6.1: the request control has no value. */
static int parse_password_policy(const struct control_parse *p)
{
	if (p->control->has_value)
		return fail(p, LUMEN_EMALFORMED, "passwordPolicyRequest control value not absent");
	p->out->password_policy = true;
	return LUMEN_OK;
}

/* RFC 5805 §2.2: critical, the value is the transaction identifier. */
static int parse_txn_spec(const struct control_parse *p)
{
	if (!p->control->critical)
		return fail(p, LUMEN_EMALFORMED, "txnSpec control must be marked critical");
	if (!p->control->has_value)
		return fail(p, LUMEN_EMALFORMED, "txnSpec control has no transaction identifier");
	p->out->has_txn = true;
	p->out->txn_id = p->control->value;
	return LUMEN_OK;
}

/* RFC 4370 §3: the value is an authzId, possibly empty; whether it may be
 * assumed is proxy_authz_decide's question. */
static int parse_proxy_authz(const struct control_parse *p)
{
	if (!p->control->has_value)
		return fail(p, LUMEN_EMALFORMED, "proxy authorization control value absent");
	p->out->proxy_authz = true;
	p->out->authzid = p->control->value;
	return LUMEN_OK;
}

/* RFC 6171 §3: no value. Criticality FALSE is accepted, as by slapd. */
static int parse_dont_use_copy(const struct control_parse *p)
{
	if (p->control->has_value)
		return fail(p, LUMEN_EMALFORMED, "dontUseCopy control value not absent");
	p->out->dont_use_copy = true;
	return LUMEN_OK;
}

/* RFC 3672 §3: visibility BOOLEAN, nothing else. */
static int parse_subentries(const struct control_parse *p)
{
	struct ber_reader r;
	ber_reader_init(&r, p->control->value.ptr, p->control->value.len);
	if (!p->control->has_value ||
	    ber_read_boolean(&r, BER_TAG_BOOLEAN, &p->out->subentries_visibility) != LUMEN_OK ||
	    !ber_reader_at_end(&r))
		return fail(p, LUMEN_EMALFORMED, "subentries control value encoding is bogus");
	p->out->subentries = true;
	return LUMEN_OK;
}

/* RFC 3876 §2; slapd's diagnostics. */
static int parse_matched_values(const struct control_parse *p)
{
	if (!p->control->has_value)
		return fail(p, LUMEN_EMALFORMED, "valuesReturnFilter control value is absent");
	int rc = values_return_filter_decode(p->control->value, p->schema, p->limits, p->arena,
					     &p->out->values_return);
	if (rc == LUMEN_ENOMEM)
		return rc;
	if (rc != LUMEN_OK)
		return fail(p, LUMEN_EMALFORMED, "error decoding vrFilter");
	p->out->matched_values = true;
	return LUMEN_OK;
}

struct control_handler {
	const char *oid;
	unsigned ops;                  /* OP_BIT of the requests it applies to */
	int (*parse)(const struct control_parse *p);
};

/* Adding a control is adding a row (and handling its fields in the ops). */
static const struct control_handler handlers[] = {
	{ CONTROL_MANAGE_DSA_IT, ENTRY_OPS, parse_manage_dsa_it },
	{ CONTROL_ASSERTION, ENTRY_OPS, parse_assertion },
	{ CONTROL_PRE_READ, OP_BIT(LDAP_OP_DELETE_REQUEST) | OP_BIT(LDAP_OP_MODIFY_REQUEST) |
				    OP_BIT(LDAP_OP_MODDN_REQUEST), parse_pre_read },
	{ CONTROL_POST_READ, OP_BIT(LDAP_OP_ADD_REQUEST) | OP_BIT(LDAP_OP_MODIFY_REQUEST) |
				     OP_BIT(LDAP_OP_MODDN_REQUEST), parse_post_read },
	{ CONTROL_PAGED_RESULTS, OP_BIT(LDAP_OP_SEARCH_REQUEST), parse_paged_results },
	{ CONTROL_PASSWORD_POLICY, OP_BIT(LDAP_OP_BIND_REQUEST) | OP_BIT(LDAP_OP_MODIFY_REQUEST) |
					   OP_BIT(LDAP_OP_ADD_REQUEST) |
					   OP_BIT(LDAP_OP_EXTENDED_REQUEST), parse_password_policy },
	{ CONTROL_SYNC_REQUEST, OP_BIT(LDAP_OP_SEARCH_REQUEST), parse_sync_request },
	{ CONTROL_SORT_REQUEST, OP_BIT(LDAP_OP_SEARCH_REQUEST), parse_sort_request },
	{ CONTROL_VLV_REQUEST, OP_BIT(LDAP_OP_SEARCH_REQUEST), parse_vlv_request },
	{ CONTROL_TXN_SPEC, UPDATE_OPS, parse_txn_spec },
	{ CONTROL_PROXY_AUTHZ, ENTRY_OPS | OP_BIT(LDAP_OP_EXTENDED_REQUEST), parse_proxy_authz },
	{ CONTROL_DONT_USE_COPY, OP_BIT(LDAP_OP_SEARCH_REQUEST) | OP_BIT(LDAP_OP_COMPARE_REQUEST),
	  parse_dont_use_copy },
	{ CONTROL_SUBENTRIES, OP_BIT(LDAP_OP_SEARCH_REQUEST), parse_subentries },
	{ CONTROL_MATCHED_VALUES, OP_BIT(LDAP_OP_SEARCH_REQUEST), parse_matched_values },
};
#define N_HANDLERS (sizeof(handlers) / sizeof(handlers[0]))

static const char *const supported[N_HANDLERS] = {
	CONTROL_MANAGE_DSA_IT, CONTROL_ASSERTION, CONTROL_PRE_READ, CONTROL_POST_READ,
	CONTROL_PAGED_RESULTS, CONTROL_PASSWORD_POLICY, CONTROL_SYNC_REQUEST,
	CONTROL_SORT_REQUEST, CONTROL_VLV_REQUEST, CONTROL_TXN_SPEC, CONTROL_PROXY_AUTHZ,
	CONTROL_DONT_USE_COPY, CONTROL_SUBENTRIES, CONTROL_MATCHED_VALUES,
};

size_t controls_supported(const char *const **oids)
{
	*oids = supported;
	return N_HANDLERS;
}

static const struct control_handler *find_handler(struct ber_view oid, int op)
{
	for (size_t i = 0; i < N_HANDLERS; i++)
		if (ber_view_eq_str(oid, handlers[i].oid))
			return (handlers[i].ops & OP_BIT(op)) != 0 ? &handlers[i] : NULL;
	return NULL;
}

static bool sent_twice(const struct ldap_message *msg, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (msg->controls[j].oid.len == msg->controls[i].oid.len &&
		    memcmp(msg->controls[j].oid.ptr, msg->controls[i].oid.ptr,
			   msg->controls[i].oid.len) == 0)
			return true;
	return false;
}

int controls_parse(const struct ldap_message *msg, const struct schema *schema,
		   const struct ldap_decode_limits *limits, struct arena *arena,
		   struct request_controls *out, const char **diagnostic)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < msg->n_controls; i++) {
		const struct ldap_control *c = &msg->controls[i];
		const struct control_handler *h = find_handler(c->oid, (int)msg->op);
		if (h == NULL) {
			if (!c->critical)
				continue;
			*diagnostic = "critical extension is unavailable";
			return LUMEN_EUNSUPPORTED;
		}
		if (sent_twice(msg, i)) {
			*diagnostic = "control specified multiple times";
			return LUMEN_EMALFORMED;
		}
		struct control_parse p = { c, schema, limits, arena, out, diagnostic };
		int rc = h->parse(&p);
		if (rc != LUMEN_OK)
			return rc;
	}
	return LUMEN_OK;
}

/* Finish a response control whose value sits in scratch: copy it out. */
static int take_value(const char *oid, struct ber_writer *scratch, struct arena *arena,
		      struct ldap_control *out)
{
	int rc = ber_writer_error(scratch);
	if (rc != LUMEN_OK)
		return rc;
	uint8_t *value = arena_memdup(arena, scratch->buf, scratch->len);
	if (value == NULL && scratch->len > 0)
		return LUMEN_ENOMEM;
	*out = (struct ldap_control){
		.oid = { (const uint8_t *)oid, strlen(oid) },
		.has_value = true,
		.value = { value, scratch->len },
	};
	return LUMEN_OK;
}

int controls_read_entry_response(const char *oid, const struct attribute_selection *sel,
				 const struct entry *e, struct ber_writer *scratch,
				 struct arena *arena, struct ldap_control *out)
{
	ber_writer_reset(scratch);
	entry_send_body(sel, e, NULL, scratch);
	return take_value(oid, scratch, arena, out);
}

int controls_paged_response(const uint8_t *cookie, size_t cookie_len,
			    struct ber_writer *scratch, struct arena *arena,
			    struct ldap_control *out)
{
	ber_writer_reset(scratch);
	ber_begin(scratch, BER_TAG_SEQUENCE);
	ber_write_integer(scratch, BER_TAG_INTEGER, 0);   /* size estimate: unknown */
	ber_write_octets(scratch, BER_TAG_OCTET_STRING, cookie, cookie_len);
	ber_end(scratch);
	return take_value(CONTROL_PAGED_RESULTS, scratch, arena, out);
}

int controls_sort_response(int result, const char *attribute, struct ber_writer *scratch,
			   struct arena *arena, struct ldap_control *out)
{
	ber_writer_reset(scratch);
	ber_begin(scratch, BER_TAG_SEQUENCE);
	ber_write_integer(scratch, BER_TAG_ENUMERATED, result);
	if (attribute != NULL)
		ber_write_string(scratch, BER_TAG_CONTEXT(0), attribute);
	ber_end(scratch);
	return take_value(CONTROL_SORT_RESPONSE, scratch, arena, out);
}

int controls_vlv_response(const struct vlv_response *r, struct ber_writer *scratch,
			  struct arena *arena, struct ldap_control *out)
{
	ber_writer_reset(scratch);
	ber_begin(scratch, BER_TAG_SEQUENCE);
	ber_write_integer(scratch, BER_TAG_INTEGER, r->target_position);
	ber_write_integer(scratch, BER_TAG_INTEGER, r->content_count);
	ber_write_integer(scratch, BER_TAG_ENUMERATED, r->result);
	if (r->context_id.len > 0)
		ber_write_octets(scratch, BER_TAG_OCTET_STRING, r->context_id.ptr,
				 r->context_id.len);
	ber_end(scratch);
	return take_value(CONTROL_VLV_RESPONSE, scratch, arena, out);
}

/* A BER INTEGER's content octets, minimal (0 .. INT32_MAX): their count. */
static size_t integer_octets(uint32_t v, uint8_t out[5])
{
	uint8_t big[5] = { 0, (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8),
			   (uint8_t)v };
	size_t skip = 0;
	while (skip < 4 && big[skip] == 0 && (big[skip + 1] & 0x80) == 0)
		skip++;
	memcpy(out, big + skip, 5 - skip);
	return 5 - skip;
}

int controls_password_policy_response(const struct password_policy_response *r,
				      struct arena *arena, struct ldap_control *out)
{
	uint8_t buf[2 + 4 + 5 + 3], number[5];
	size_t n = 2;
	if (r->warning != PASSWORD_POLICY_NO_WARNING) {
		size_t len = integer_octets(r->warning_value, number);
		buf[n++] = 0xa0;                               /* warning [0] */
		buf[n++] = (uint8_t)(2 + len);
		buf[n++] = r->warning == PASSWORD_POLICY_TIME_BEFORE_EXPIRATION ? 0x80 : 0x81;
		buf[n++] = (uint8_t)len;
		memcpy(buf + n, number, len);
		n += len;
	}
	if (r->error != PASSWORD_POLICY_NO_ERROR) {
		buf[n++] = 0x81;                               /* error [1] ENUMERATED */
		buf[n++] = 1;
		buf[n++] = (uint8_t)r->error;
	}
	buf[0] = 0x30;
	buf[1] = (uint8_t)(n - 2);
	uint8_t *value = arena_memdup(arena, buf, n);
	if (value == NULL)
		return LUMEN_ENOMEM;
	*out = (struct ldap_control){
		.oid = { (const uint8_t *)CONTROL_PASSWORD_POLICY,
			 sizeof(CONTROL_PASSWORD_POLICY) - 1 },
		.has_value = true,
		.value = { value, n },
	};
	return LUMEN_OK;
}
