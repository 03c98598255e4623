/*
 * controls.h — the request controls Lumen honours and the response
 * controls it sends (server layer), one table row per control OID.
 *
 * Supported: ManageDsaIT (RFC 3296: referral objects are ordinary
 * entries, database.h), Assertion (RFC 4528), Pre-Read and Post-Read (RFC 4527),
 * Simple Paged Results (RFC 2696, search only), Server Side Sort (RFC 2891)
 * and Virtual List View (draft-ietf-ldapext-ldapv3-vlv-09), search only,
 * parsed here and answered by op_search with search_sort.h, the Password Policy
 * request (draft-behera-ldap-password-policy-10 §6.1: Bind, Modify and
 * Password Modify; no value; the ppolicy overlay answers it), the
 * Transaction Specification (RFC 5805, updates only: critical, its value
 * the identifier; op_txn.c queues the update), Proxied
 * Authorization (RFC 4370: the authzId is kept here, decided by
 * proxy_authz.h; criticality FALSE is accepted as slapd accepts it; not on
 * a Bind, where slapd refuses it), Don't Use Copy (RFC 6171, search and
 * compare, no value; a replica answers it in op_refuse_copy), Subentries
 * (RFC 3672, search only, a BOOLEAN; op_search applies it), Matched
 * Values (RFC 3876, search only, matched_values.h). A control that the table
 * does not know, or knows but not for this operation, is ignored when
 * non-critical and refused with unavailableCriticalExtension when critical.
 *
 * Memory: everything parsed (views into the PDU, the compiled assertion
 * filter, the read selections, response control values) lives in the
 * operation's arena. Response values are encoded with a caller-supplied
 * scratch writer and copied into the arena, so the writer can be reused.
 * Thread-safety: per operation; the table is constant.
 *
 * Caveats:
 *  - A control sent twice in one request is a protocolError.
 *  - The assertion filter is compiled with the decode limits' depth and
 *    node bounds, like a search filter.
 */
#ifndef LUMEN_CONTROLS_H
#define LUMEN_CONTROLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "ber.h"
#include "entry.h"
#include "entry_send.h"
#include "filter.h"
#include "ldap_message.h"
#include "matched_values.h"
#include "schema.h"

#define CONTROL_MANAGE_DSA_IT "2.16.840.1.113730.3.4.2"
#define CONTROL_ASSERTION     "1.3.6.1.1.12"
#define CONTROL_PRE_READ      "1.3.6.1.1.13.1"
#define CONTROL_POST_READ     "1.3.6.1.1.13.2"
#define CONTROL_PAGED_RESULTS "1.2.840.113556.1.4.319"
#define CONTROL_PASSWORD_POLICY "1.3.6.1.4.1.42.2.27.8.5.1"
#define CONTROL_SYNC_REQUEST LDAP_SYNC_REQUEST_OID
#define CONTROL_SORT_REQUEST  "1.2.840.113556.1.4.473"
#define CONTROL_SORT_RESPONSE "1.2.840.113556.1.4.474"
#define CONTROL_VLV_REQUEST   "2.16.840.1.113730.3.4.9"
#define CONTROL_VLV_RESPONSE  "2.16.840.1.113730.3.4.10"
#define CONTROL_TXN_SPEC      LDAP_OID_TXN_SPECIFICATION
#define CONTROL_PROXY_AUTHZ   "2.16.840.1.113730.3.4.18"
#define CONTROL_DONT_USE_COPY "1.3.6.1.1.22"
#define CONTROL_SUBENTRIES    "1.3.6.1.4.1.4203.1.10.1"
#define CONTROL_MATCHED_VALUES "1.2.826.0.1.3344810.2.3"

/* Sort keys one request may carry (more: protocolError). */
#define CONTROLS_MAX_SORT_KEYS 8

/* One RFC 2891 sort key as sent (views into the PDU). */
struct sort_key_request {
	struct ber_view attribute;
	struct ber_view ordering_rule;   /* empty: the type's ORDERING */
	bool reverse;
};

/* draft-ietf-ldapext-ldapv3-vlv-09 VirtualListViewRequest. */
struct vlv_request {
	uint32_t before, after;
	bool by_value;                   /* greaterThanOrEqual, else byOffset */
	uint32_t offset, content_count;  /* byOffset */
	struct ber_view value;           /* greaterThanOrEqual */
	struct ber_view context_id;      /* empty: none */
};

/* What a request's controls ask for. Zeroed: no control. */
struct request_controls {
	bool manage_dsa_it;
	bool has_assertion;
	struct filter assertion;
	bool pre_read;
	struct attribute_selection pre_read_selection;
	bool post_read;
	struct attribute_selection post_read_selection;
	bool paged;
	uint64_t page_size;
	struct ber_view cookie;
	bool password_policy;
	bool has_sync;                 /* RFC 4533 Sync Request (syncprov answers it) */
	bool sync_critical;
	struct ldap_sync_request sync;
	bool sort;                     /* RFC 2891 Server Side Sort */
	bool sort_critical;
	struct sort_key_request sort_keys[CONTROLS_MAX_SORT_KEYS];
	size_t n_sort_keys;
	bool vlv;                      /* Virtual List View */
	struct vlv_request vlv_request;
	bool has_txn;                  /* RFC 5805 Transaction Specification */
	struct ber_view txn_id;        /* its transaction identifier */
	bool proxy_authz;              /* RFC 4370 Proxied Authorization */
	struct ber_view authzid;       /* its value (empty: anonymous) */
	bool dont_use_copy;            /* RFC 6171 Don't Use Copy */
	bool subentries;               /* RFC 3672 Subentries, search only: */
	bool subentries_visibility;    /* TRUE only subentries, FALSE none */
	bool matched_values;           /* RFC 3876 Matched Values, search only */
	struct values_return_filter values_return;
};

/*
 * Parse msg's controls into *out. On failure *diagnostic says why.
 * Errors: LUMEN_EMALFORMED (a supported control's value does not decode:
 * protocolError), LUMEN_ELIMIT (assertion filter beyond the limits:
 * protocolError), LUMEN_EUNSUPPORTED (an unknown critical control:
 * unavailableCriticalExtension), LUMEN_ENOMEM.
 */
int controls_parse(const struct ldap_message *msg, const struct schema *schema,
		   const struct ldap_decode_limits *limits, struct arena *arena,
		   struct request_controls *out, const char **diagnostic);

/* The OIDs of the supported controls (for the root DSE's supportedControl). */
size_t controls_supported(const char *const **oids);

/*
 * A Pre-Read or Post-Read response control (oid CONTROL_PRE_READ or
 * CONTROL_POST_READ) carrying e with the selection. Errors: LUMEN_ENOMEM
 * and the writer's errors.
 */
int controls_read_entry_response(const char *oid, const struct attribute_selection *sel,
				 const struct entry *e, struct ber_writer *scratch,
				 struct arena *arena, struct ldap_control *out);

/* The Paged Results response control with the next cookie (empty: last page).
 * Errors: LUMEN_ENOMEM and the writer's errors. */
int controls_paged_response(const uint8_t *cookie, size_t cookie_len,
			    struct ber_writer *scratch, struct arena *arena,
			    struct ldap_control *out);

/*
 * RFC 2891 SortResult { sortResult ENUMERATED, attributeType [0] OPTIONAL }
 * (attribute NULL: none). Errors: LUMEN_ENOMEM and the writer's.
 */
int controls_sort_response(int result, const char *attribute, struct ber_writer *scratch,
			   struct arena *arena, struct ldap_control *out);

/* VirtualListViewResponse { targetPosition, contentCount,
 * virtualListViewResult ENUMERATED, contextID OPTIONAL (empty: none) }. */
struct vlv_response {
	uint32_t target_position, content_count;
	int result;
	struct ber_view context_id;
};

/* Errors: LUMEN_ENOMEM and the writer's. */
int controls_vlv_response(const struct vlv_response *r, struct ber_writer *scratch,
			  struct arena *arena, struct ldap_control *out);

/* The Password Policy response (draft-behera-10 §6.2): one warning or
 * none, an error or none. */
enum password_policy_warning {
	PASSWORD_POLICY_NO_WARNING,
	PASSWORD_POLICY_TIME_BEFORE_EXPIRATION,   /* [0] seconds */
	PASSWORD_POLICY_GRACE_REMAINING,          /* [1] binds */
};

enum password_policy_error {
	PASSWORD_POLICY_EXPIRED = 0,
	PASSWORD_POLICY_ACCOUNT_LOCKED = 1,
	PASSWORD_POLICY_CHANGE_AFTER_RESET = 2,
	PASSWORD_POLICY_MOD_NOT_ALLOWED = 3,
	PASSWORD_POLICY_MUST_SUPPLY_OLD = 4,
	PASSWORD_POLICY_INSUFFICIENT_QUALITY = 5,
	PASSWORD_POLICY_TOO_SHORT = 6,
	PASSWORD_POLICY_TOO_YOUNG = 7,
	PASSWORD_POLICY_IN_HISTORY = 8,
	PASSWORD_POLICY_TOO_LONG = 9,        /* OpenLDAP 2.5, draft-behera-11 */
	PASSWORD_POLICY_NO_ERROR = -1,
};

struct password_policy_response {
	enum password_policy_warning warning;
	uint32_t warning_value;                   /* 0 .. INT32_MAX */
	enum password_policy_error error;
};

/* The Password Policy response control, its value in arena. LUMEN_ENOMEM. */
int controls_password_policy_response(const struct password_policy_response *r,
				      struct arena *arena, struct ldap_control *out);

#endif
