/*
 * paged_cookie.h — the Simple Paged Results cookie the client sees
 * (RFC 2696): the backend's position wrapped in an authenticated envelope
 * that binds it to one connection and one search (server layer).
 *
 * Why here and not in back-mdb: the backend may use only model and LMDB,
 * and it does not know what the server filtered out (access control) or
 * which connection asks. The backend keeps its own position cookie
 * (backend.h, an ID and a 64-bit non-cryptographic fingerprint); the
 * server seals it with what only the server knows:
 *
 *   [version 1][entries returned so far, u64 LE][backend position ...]
 *   [HMAC-SHA256 over version, count, position, connection id, scope,
 *    typesOnly, base DN, the filter's encoding and the attribute list]
 *
 * The key is 32 random bytes drawn once per process, so a cookie is
 * opaque, tamper-evident (any changed byte fails the MAC), valid only on
 * the connection that received it and for the same search, and dies with
 * the process. The count is what the server returned after access control,
 * so the size limit bounds the whole paged search and the client cannot
 * reset it.
 *
 * Memory: the sealed cookie goes to the caller's arena; opening returns
 * views into the client's cookie. Nothing is malloc'd.
 * Thread-safety: any number of workers (the key is set once, under
 * pthread_once).
 *
 * Caveats:
 *  - The page size is not bound: RFC 2696 lets the client change it
 *    between pages.
 *  - A restart invalidates every outstanding cookie (unwillingToPerform).
 */
#ifndef LUMEN_PAGED_COOKIE_H
#define LUMEN_PAGED_COOKIE_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "ber.h"
#include "ldap_message.h"

/* What a cookie is bound to. */
struct paged_binding {
	uint64_t conn_id;
	const struct ldap_search_request *req;
	struct ber_view base_ndn;
};

/*
 * Seal the backend position `pos` and the count of entries returned so far.
 * *out points into the arena. LUMEN_OK, LUMEN_ENOMEM, LUMEN_EIO (no random
 * key or the MAC failed inside OpenSSL).
 */
int paged_cookie_seal(const struct paged_binding *b, uint64_t returned, struct ber_view pos,
		      struct arena *arena, struct ber_view *out);

/*
 * Check a client's cookie: on LUMEN_OK *pos (a view into cookie) and
 * *returned are set. LUMEN_EMALFORMED: not a cookie issued for this
 * connection and search, or altered (answer unwillingToPerform);
 * LUMEN_ENOMEM, LUMEN_EIO as above.
 */
int paged_cookie_open(const struct paged_binding *b, struct ber_view cookie,
		      struct arena *arena, struct ber_view *pos, uint64_t *returned);

#endif
