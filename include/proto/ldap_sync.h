/*
 * ldap_sync.h — the values of RFC 4533's controls and intermediate
 * response (proto layer): Sync Request, Sync State and Sync Done controls
 * and the Sync Info message, decoded and encoded for both sides of a
 * replication (a provider decodes requests and encodes the rest; a
 * consumer the other way round).
 *
 *   syncRequestValue ::= SEQUENCE { mode ENUMERATED { refreshOnly (1),
 *       refreshAndPersist (3) }, cookie syncCookie OPTIONAL,
 *       reloadHint BOOLEAN DEFAULT FALSE }
 *   syncStateValue ::= SEQUENCE { state ENUMERATED { present (0), add (1),
 *       modify (2), delete (3) }, entryUUID syncUUID, cookie OPTIONAL }
 *   syncDoneValue ::= SEQUENCE { cookie OPTIONAL,
 *       refreshDeletes BOOLEAN DEFAULT FALSE }
 *   syncInfoValue ::= CHOICE { newcookie [0] syncCookie,
 *       refreshDelete [1] SEQUENCE { cookie OPTIONAL, refreshDone BOOLEAN
 *       DEFAULT TRUE }, refreshPresent [2] (the same),
 *       syncIdSet [3] SEQUENCE { cookie OPTIONAL, refreshDeletes BOOLEAN
 *       DEFAULT FALSE, syncUUIDs SET OF syncUUID } }
 *
 * Decoding is strict (ber.h's reader; a syncUUID is exactly 16 bytes,
 * nothing may follow a value) and returns views into the input. Encoding
 * writes DER (defaults omitted) into a ber_writer and leaves its error to
 * ber_writer_error.
 *
 * Thread-safety: reentrant. Errors: LUMEN_EMALFORMED for a value that is
 * not what the ASN.1 above says.
 */
#ifndef LUMEN_LDAP_SYNC_H
#define LUMEN_LDAP_SYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ber.h"

#define LDAP_SYNC_REQUEST_OID "1.3.6.1.4.1.4203.1.9.1.1"
#define LDAP_SYNC_STATE_OID "1.3.6.1.4.1.4203.1.9.1.2"
#define LDAP_SYNC_DONE_OID "1.3.6.1.4.1.4203.1.9.1.3"
#define LDAP_SYNC_INFO_OID "1.3.6.1.4.1.4203.1.9.1.4"
/* The result code that asks the consumer to start over (e-syncRefreshRequired). */
#define LDAP_SYNC_REFRESH_REQUIRED 4096
#define LDAP_SYNC_UUID_SIZE 16

enum ldap_sync_mode { LDAP_SYNC_REFRESH_ONLY = 1, LDAP_SYNC_REFRESH_AND_PERSIST = 3 };

struct ldap_sync_request {
	enum ldap_sync_mode mode;
	bool has_cookie;
	struct ber_view cookie;
	bool reload_hint;
};

enum ldap_sync_state {
	LDAP_SYNC_PRESENT = 0, LDAP_SYNC_ADD = 1, LDAP_SYNC_MODIFY = 2, LDAP_SYNC_DELETE = 3,
};

struct ldap_sync_state_value {
	enum ldap_sync_state state;
	uint8_t uuid[LDAP_SYNC_UUID_SIZE];
	bool has_cookie;
	struct ber_view cookie;
};

struct ldap_sync_done {
	bool has_cookie;
	struct ber_view cookie;
	bool refresh_deletes;
};

enum ldap_sync_info_kind {
	LDAP_SYNC_INFO_NEW_COOKIE = 0, LDAP_SYNC_INFO_REFRESH_DELETE = 1,
	LDAP_SYNC_INFO_REFRESH_PRESENT = 2, LDAP_SYNC_INFO_ID_SET = 3,
};

struct ldap_sync_info {
	enum ldap_sync_info_kind kind;
	bool has_cookie;               /* always true for NEW_COOKIE */
	struct ber_view cookie;
	bool refresh_done;             /* REFRESH_DELETE/PRESENT; default true */
	bool refresh_deletes;          /* ID_SET */
	const uint8_t *uuids;          /* ID_SET: n_uuids × 16 bytes */
	size_t n_uuids;
};

int ldap_sync_request_decode(struct ber_view value, struct ldap_sync_request *out);
void ldap_sync_request_encode(const struct ldap_sync_request *in, struct ber_writer *w);

/* Characters of a UUID's text form (8-4-4-4-12 hex digits), without NUL. */
#define LDAP_SYNC_UUID_TEXT 36

/* entryUUID's text (RFC 4122: 8-4-4-4-12 hex digits, either case) as the
 * 16 bytes of a syncUUID; false when text is not that form. */
bool ldap_sync_uuid_parse(struct ber_view text, uint8_t uuid[LDAP_SYNC_UUID_SIZE]);
/* The text form in lower case, NUL-terminated. */
void ldap_sync_uuid_format(const uint8_t uuid[LDAP_SYNC_UUID_SIZE],
			   char out[LDAP_SYNC_UUID_TEXT + 1]);

/* Bytes of a syncStateValue without a cookie. */
#define LDAP_SYNC_STATE_VALUE_SIZE 23

int ldap_sync_state_decode(struct ber_view value, struct ldap_sync_state_value *out);
/*
 * The value a provider attaches to each entry (no cookie), written into
 * out without allocating: the same DER as ldap_sync_state_encode.
 */
void ldap_sync_state_write(enum ldap_sync_state state, const uint8_t uuid[LDAP_SYNC_UUID_SIZE],
			   uint8_t out[LDAP_SYNC_STATE_VALUE_SIZE]);
void ldap_sync_state_encode(const struct ldap_sync_state_value *in, struct ber_writer *w);

int ldap_sync_done_decode(struct ber_view value, struct ldap_sync_done *out);
void ldap_sync_done_encode(const struct ldap_sync_done *in, struct ber_writer *w);

/*
 * Decoding an ID_SET leaves uuids NULL: walk the set with
 * ldap_sync_info_next_uuid, which checks each member (16 bytes).
 */
int ldap_sync_info_decode(struct ber_view value, struct ldap_sync_info *out,
			  struct ber_reader *uuid_set);
int ldap_sync_info_next_uuid(struct ber_reader *uuid_set, uint8_t uuid[LDAP_SYNC_UUID_SIZE]);
void ldap_sync_info_encode(const struct ldap_sync_info *in, struct ber_writer *w);

#endif
