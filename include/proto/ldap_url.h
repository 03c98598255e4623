/*
 * ldap_url.h — RFC 4516 LDAP URLs as referrals carry them (proto layer):
 * split one into its parts, and write it back with another DN and a
 * scope, as a server does when it hands out a referral (RFC 4511 §4.1.10,
 * §4.5.3).
 *
 * Only the ldap, ldaps and ldapi schemes are LDAP URLs here; the others
 * are someone else's business (a referral may name them: the caller
 * passes them on as they are).
 *
 * Memory: parts are views into the URL given; rewritten URLs are
 * NUL-terminated strings in the caller's arena.
 * Thread-safety: pure functions.
 *
 * Caveats:
 *  - The DN is percent-decoded, not checked as a DN: that is the model
 *    layer's job.
 *  - Extensions and the filter are kept byte for byte, never interpreted.
 */
#ifndef LUMEN_LDAP_URL_H
#define LUMEN_LDAP_URL_H

#include <stdbool.h>

#include "arena.h"
#include "ber.h"

/* The scope field of a URL: absent, or one of RFC 4516's. */
enum ldap_url_scope {
	LDAP_URL_SCOPE_ABSENT = -1,
	LDAP_URL_SCOPE_BASE = 0,
	LDAP_URL_SCOPE_ONE = 1,
	LDAP_URL_SCOPE_SUB = 2,
	LDAP_URL_SCOPE_CHILDREN = 3,     /* OpenLDAP's "subordinate" */
};

struct ldap_url {
	struct ber_view scheme_host;   /* "ldap://host:port", as written */
	struct ber_view dn;            /* percent-encoded as written; may be empty */
	struct ber_view attributes;    /* the fields after the DN, as written */
	enum ldap_url_scope scope;
	struct ber_view filter;
	struct ber_view extensions;
};

/*
 * Split text into *out. Errors: LUMEN_EUNSUPPORTED (not an ldap, ldaps or
 * ldapi URL), LUMEN_EMALFORMED (an unknown scope, more than five fields,
 * a bad percent escape in the DN).
 */
int ldap_url_parse(struct ber_view text, struct ldap_url *out);

/* The URL's DN percent-decoded, NUL-terminated in arena (len without the
 * NUL). Errors: LUMEN_EMALFORMED (bad escape), LUMEN_ENOMEM. */
int ldap_url_decode_dn(const struct ldap_url *url, struct arena *arena, struct ber_view *dn);

/*
 * url written back (scheme, host and the fields after the scope as they
 * were) with dn (plain text, percent-encoded here) in place of its DN and,
 * when it names no scope, with scope (LDAP_URL_SCOPE_ABSENT: none).
 * Trailing empty fields are left out. Errors: LUMEN_ENOMEM.
 */
int ldap_url_write(const struct ldap_url *url, struct ber_view dn, enum ldap_url_scope scope,
		   struct arena *arena, char **out);

#endif
