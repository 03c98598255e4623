/*
 * ldap_message.h — LDAPMessage decoding and encoding (RFC 4511), proto layer.
 *
 * Decoding is zero-copy: every string in a decoded message is a ber_view into
 * the PDU buffer, and the few arrays and filter nodes a message needs come
 * from a caller-supplied arena (arena.h). The decoded message is valid while
 * both the PDU buffer and the arena live. Decoding is split in two so the
 * I/O thread can queue an operation cheaply: ldap_message_peek reads only the
 * messageID and protocolOp tag; ldap_message_decode (on a worker) reads all.
 *
 * Encoding writes into a ber_writer (ber.h). ldap_message_encode encodes any
 * struct ldap_message (clients, tests, round-trips); the ldap_encode_*
 * helpers are the server's fast paths for responses.
 *
 * Thread-safety: functions are reentrant; each call uses only its arguments.
 *
 * Caveats:
 *  - Bounds (filter depth, number of elements) are in ldap_decode_limits;
 *    exceeding them is LUMEN_ELIMIT, which the server treats as a protocol
 *    error with a diagnostic.
 *  - Unknown protocolOp tags decode as LUMEN_EUNSUPPORTED with op set, so
 *    the server can answer instead of disconnecting when it wants to. A
 *    BindRequest with a context-specific authentication choice other than
 *    simple [0] or sasl [3] is also LUMEN_EUNSUPPORTED (op = bind, message_id
 *    set): answer authMethodNotSupported.
 *  - max_elements bounds the sum over the whole message (attributes, values,
 *    changes, controls, URIs); substring pieces of the filter count
 *    separately against the same bound.
 *  - Encoders leave DEFAULT values out (criticality FALSE, dnAttributes
 *    FALSE), so encode(decode(x)) may be shorter than x but decodes equal.
 */
#ifndef LUMEN_LDAP_MESSAGE_H
#define LUMEN_LDAP_MESSAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "ber.h"
#include "ldap_result_codes.h"

/* protocolOp application tag numbers. */
enum ldap_op {
	LDAP_OP_BIND_REQUEST = 0,
	LDAP_OP_BIND_RESPONSE = 1,
	LDAP_OP_UNBIND_REQUEST = 2,
	LDAP_OP_SEARCH_REQUEST = 3,
	LDAP_OP_SEARCH_ENTRY = 4,
	LDAP_OP_SEARCH_DONE = 5,
	LDAP_OP_MODIFY_REQUEST = 6,
	LDAP_OP_MODIFY_RESPONSE = 7,
	LDAP_OP_ADD_REQUEST = 8,
	LDAP_OP_ADD_RESPONSE = 9,
	LDAP_OP_DELETE_REQUEST = 10,
	LDAP_OP_DELETE_RESPONSE = 11,
	LDAP_OP_MODDN_REQUEST = 12,
	LDAP_OP_MODDN_RESPONSE = 13,
	LDAP_OP_COMPARE_REQUEST = 14,
	LDAP_OP_COMPARE_RESPONSE = 15,
	LDAP_OP_ABANDON_REQUEST = 16,
	LDAP_OP_SEARCH_REFERENCE = 19,
	LDAP_OP_EXTENDED_REQUEST = 23,
	LDAP_OP_EXTENDED_RESPONSE = 24,
	LDAP_OP_INTERMEDIATE_RESPONSE = 25,
};

/* "bindRequest" etc.; "unknown" otherwise. */
const char *ldap_op_name(int op);

#define LDAP_MAX_MESSAGE_ID 2147483647

enum ldap_scope { LDAP_SCOPE_BASE = 0, LDAP_SCOPE_ONE = 1, LDAP_SCOPE_SUBTREE = 2,
		  LDAP_SCOPE_CHILDREN = 3 /* draft subordinate scope */ };
enum ldap_deref { LDAP_DEREF_NEVER = 0, LDAP_DEREF_SEARCHING = 1,
		  LDAP_DEREF_FINDING = 2, LDAP_DEREF_ALWAYS = 3 };
enum ldap_modify_operation { LDAP_MOD_ADD = 0, LDAP_MOD_DELETE = 1,
			     LDAP_MOD_REPLACE = 2, LDAP_MOD_INCREMENT = 3 };
enum ldap_auth_kind { LDAP_AUTH_SIMPLE = 0, LDAP_AUTH_SASL = 3 };

/* Filter CHOICE tags are context-specific numbers 0..9. */
enum ldap_filter_type {
	LDAP_FILTER_AND = 0,
	LDAP_FILTER_OR = 1,
	LDAP_FILTER_NOT = 2,
	LDAP_FILTER_EQUALITY = 3,
	LDAP_FILTER_SUBSTRINGS = 4,
	LDAP_FILTER_GREATER_OR_EQUAL = 5,
	LDAP_FILTER_LESS_OR_EQUAL = 6,
	LDAP_FILTER_PRESENT = 7,
	LDAP_FILTER_APPROX = 8,
	LDAP_FILTER_EXTENSIBLE = 9,
};

/* A decoded Filter: a tree of nodes from the arena, children linked by next. */
struct ldap_filter {
	enum ldap_filter_type type;
	struct ldap_filter *next;                 /* sibling in AND/OR */
	union {
		struct ldap_filter *children;     /* AND, OR: first child (may be NULL: absolute true/false, RFC 4526) */
		struct ldap_filter *child;        /* NOT */
		struct {                          /* EQUALITY, GE, LE, APPROX */
			struct ber_view attr;
			struct ber_view value;
		} ava;
		struct ber_view present;          /* PRESENT: attribute description */
		struct {                          /* SUBSTRINGS */
			struct ber_view attr;
			bool has_initial, has_final;
			struct ber_view initial, final;
			struct ber_view *any;
			size_t n_any;
		} substrings;
		struct {                          /* EXTENSIBLE (MatchingRuleAssertion) */
			bool has_rule, has_attr;
			struct ber_view rule, attr, value;
			bool dn_attributes;
		} extensible;
	} u;
};

struct ldap_control {
	struct ber_view oid;
	bool critical;
	bool has_value;
	struct ber_view value;
};

/* An attribute with its values (AddRequest, modifications, entries). */
struct ldap_attribute {
	struct ber_view type;
	struct ber_view *values;
	size_t n_values;
};

struct ldap_change {
	enum ldap_modify_operation operation;
	struct ldap_attribute modification;
};

/* LDAPResult, the common body of most responses. */
struct ldap_result {
	int code;                         /* enum ldap_result_code */
	struct ber_view matched_dn;
	struct ber_view diagnostic;
	struct ber_view *referrals;       /* URIs; NULL/0 when absent */
	size_t n_referrals;
};

struct ldap_bind_request {
	int64_t version;
	struct ber_view name;
	enum ldap_auth_kind auth;
	struct ber_view password;         /* simple */
	struct ber_view mechanism;        /* sasl */
	bool has_credentials;
	struct ber_view credentials;      /* sasl */
};

struct ldap_search_request {
	struct ber_view base;
	enum ldap_scope scope;
	enum ldap_deref deref;
	int64_t size_limit;
	int64_t time_limit;
	bool types_only;
	struct ldap_filter *filter;
	struct ber_view raw_filter;       /* the filter's encoding, for caching/logging */
	struct ber_view *attributes;
	size_t n_attributes;
};

struct ldap_modify_request {
	struct ber_view object;
	struct ldap_change *changes;
	size_t n_changes;
};

struct ldap_add_request {
	struct ber_view entry;
	struct ldap_attribute *attributes;
	size_t n_attributes;
};

struct ldap_moddn_request {
	struct ber_view entry;
	struct ber_view new_rdn;
	bool delete_old_rdn;
	bool has_new_superior;
	struct ber_view new_superior;
};

struct ldap_compare_request {
	struct ber_view entry;
	struct ber_view attr;
	struct ber_view value;
};

struct ldap_extended_request {
	struct ber_view oid;
	bool has_value;
	struct ber_view value;
};

struct ldap_bind_response {
	struct ldap_result result;
	bool has_sasl_credentials;
	struct ber_view sasl_credentials;
};

struct ldap_search_entry {
	struct ber_view dn;
	struct ldap_attribute *attributes;
	size_t n_attributes;
};

struct ldap_search_reference {
	struct ber_view *uris;
	size_t n_uris;
};

struct ldap_extended_response {
	struct ldap_result result;
	bool has_name, has_value;
	struct ber_view name, value;
};

struct ldap_intermediate_response {
	bool has_name, has_value;
	struct ber_view name, value;
};

struct ldap_message {
	int32_t message_id;
	enum ldap_op op;
	union {
		struct ldap_bind_request bind;
		struct ldap_search_request search;
		struct ldap_modify_request modify;
		struct ldap_add_request add;
		struct ber_view delete_dn;                 /* DelRequest */
		struct ldap_moddn_request moddn;
		struct ldap_compare_request compare;
		int32_t abandon_id;                        /* AbandonRequest */
		struct ldap_extended_request extended;
		struct ldap_bind_response bind_response;
		struct ldap_search_entry entry;
		struct ldap_search_reference reference;
		struct ldap_result result;                 /* other responses */
		struct ldap_extended_response extended_response;
		struct ldap_intermediate_response intermediate;
	} u;
	struct ldap_control *controls;
	size_t n_controls;
};

/* OpenLDAP's maxfilterdepth default: filters this deep are common in
 * generated queries; every recursion over a filter is bounded by it. */
#define LDAP_DEFAULT_MAX_FILTER_DEPTH 1000

struct ldap_decode_limits {
	unsigned max_filter_depth;     /* nesting of AND/OR/NOT (maxfilterdepth) */
	size_t max_filter_nodes;       /* default 1024 */
	size_t max_elements;           /* attributes, values, controls, changes per message; default 65536 */
};

/* Defaults described above. */
void ldap_decode_limits_default(struct ldap_decode_limits *limits);

/*
 * Read the messageID and protocolOp tag of a framed PDU without decoding the
 * body. LUMEN_EMALFORMED if the envelope is broken (message_id may still be
 * set to 0 when unknown).
 */
int ldap_message_peek(const void *pdu, size_t len, int32_t *message_id, int *op);

/*
 * The requestName of a framed ExtendedRequest, pointing into pdu, without
 * decoding the rest (the I/O thread tells StartTLS and Cancel apart from
 * the other extended operations with it). LUMEN_EMALFORMED when the PDU is
 * not an ExtendedRequest or its first field is not a requestName.
 */
int ldap_message_peek_extended_name(const void *pdu, size_t len, struct ber_view *name);

/*
 * Decode one framed PDU (exactly one LDAPMessage occupying all len bytes).
 * Returns LUMEN_OK, LUMEN_EMALFORMED, LUMEN_ELIMIT, LUMEN_ENOMEM (arena),
 * LUMEN_EUNSUPPORTED (unknown protocolOp; out->op and message_id are set) or
 * LUMEN_EINVAL (a well-formed request with a field outside its enumeration,
 * such as a search scope or derefAliases: an error result, not a reason to
 * disconnect, as slapd answers).
 * On failure *diagnostic (if non-NULL) is set to a static English reason.
 */
int ldap_message_decode(const void *pdu, size_t len, struct arena *arena,
			const struct ldap_decode_limits *limits,
			struct ldap_message *out, const char **diagnostic);

/* Decode a Filter element alone (e.g. the Assertion control's value). */
int ldap_filter_decode(struct ber_reader *r, struct arena *arena,
		       const struct ldap_decode_limits *limits,
		       struct ldap_filter **out, const char **diagnostic);

/* Encode any message; errors are left in the writer (ber_writer_error). */
void ldap_message_encode(struct ber_writer *w, const struct ldap_message *m);
void ldap_filter_encode(struct ber_writer *w, const struct ldap_filter *f);

/* --- server fast paths; each writes one whole LDAPMessage --- */

/*
 * A response carrying only an LDAPResult (op is the response's ldap_op).
 * matched/diagnostic may be NULL. controls may be NULL when n_controls is 0.
 */
/* An LDAPMessage's [0] Controls (nothing when n is 0). */
void ldap_encode_controls(struct ber_writer *w, const struct ldap_control *controls, size_t n);
void ldap_encode_result(struct ber_writer *w, int32_t message_id, int op,
			int code, const char *matched_dn, const char *diagnostic,
			const struct ldap_control *controls, size_t n_controls);

void ldap_encode_bind_response(struct ber_writer *w, int32_t message_id, int code,
			       const char *matched_dn, const char *diagnostic,
			       const struct ber_view *server_sasl_credentials);

/* ldap_encode_bind_response with response controls (NULL when n is 0). */
void ldap_encode_bind_result(struct ber_writer *w, int32_t message_id, int code,
			     const char *matched_dn, const char *diagnostic,
			     const struct ber_view *server_sasl_credentials,
			     const struct ldap_control *controls, size_t n_controls);

/* ldap_encode_extended_response with response controls (NULL when n is 0). */
void ldap_encode_extended_result(struct ber_writer *w, int32_t message_id, int code,
				 const char *diagnostic, const char *name,
				 const struct ber_view *value, const struct ldap_control *controls,
				 size_t n_controls);

/* name/value may be NULL. */
void ldap_encode_extended_response(struct ber_writer *w, int32_t message_id,
				   int code, const char *diagnostic,
				   const char *name, const struct ber_view *value);

/*
 * IntermediateResponse (RFC 4511 §4.13) among an operation's results
 * (RFC 4533's Sync Info: name LDAP_SYNC_INFO_OID). name/value may be NULL.
 */
void ldap_encode_intermediate(struct ber_writer *w, int32_t message_id, const char *name,
			      const struct ber_view *value);

/* Notice of Disconnection: messageID 0, OID 1.3.6.1.4.1.1466.20036. */
void ldap_encode_notice_of_disconnection(struct ber_writer *w, int code,
					 const char *diagnostic);

/*
 * SearchResultEntry in pieces, so callers can stream attributes from their
 * own storage: begin, then for each attribute begin_attribute / value... /
 * end_attribute, then end.
 */
void ldap_encode_entry_begin(struct ber_writer *w, int32_t message_id,
			     const void *dn, size_t dn_len);
void ldap_encode_entry_attribute_begin(struct ber_writer *w, const void *type,
				       size_t type_len);
void ldap_encode_entry_value(struct ber_writer *w, const void *value, size_t len);
void ldap_encode_entry_attribute_end(struct ber_writer *w);
/* Closes the entry; controls may be NULL when n_controls is 0. */
void ldap_encode_entry_end(struct ber_writer *w, const struct ldap_control *controls,
			   size_t n_controls);

/* Well-known OIDs. */
#define LDAP_OID_NOTICE_OF_DISCONNECTION "1.3.6.1.4.1.1466.20036"
#define LDAP_OID_WHOAMI                  "1.3.6.1.4.1.4203.1.11.3"
#define LDAP_OID_STARTTLS                "1.3.6.1.4.1.1466.20037"
#define LDAP_OID_PASSWORD_MODIFY         "1.3.6.1.4.1.4203.1.11.1"
#define LDAP_OID_CANCEL                  "1.3.6.1.1.8"
#define LDAP_OID_TXN_START               "1.3.6.1.1.21.1"
#define LDAP_OID_TXN_SPECIFICATION       "1.3.6.1.1.21.2"
#define LDAP_OID_TXN_END                 "1.3.6.1.1.21.3"

#endif
