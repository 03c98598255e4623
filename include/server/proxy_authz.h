/*
 * proxy_authz.h — the Proxied Authorization control (RFC 4370) decided as
 * slapd 2.5 decides it (server layer): may the connection's identity run
 * one operation as the identity the control names?
 *
 * Decision, in order: an anonymous client may not proxy; an empty
 * authzId is anonymous and always allowed; an authzId that does not
 * resolve (authz.h) is refused; acting as oneself is allowed, and so is
 * the rootdn of the database holding the proxied DN; else `authz-policy`
 * decides: `to` reads the authzTo values of the client's entry, `from`
 * the authzFrom values of the proxied entry, `any` either, `all` both.
 * Reading a rule needs `auth` access to it for the client (as slapd).
 *
 * Memory: the result and all scratch in the caller's arena; entries read
 * for rules are copies freed before returning.
 * Thread-safety: per operation; the server is shared read-only.
 */
#ifndef LUMEN_PROXY_AUTHZ_H
#define LUMEN_PROXY_AUTHZ_H

#include <stdbool.h>

#include "arena.h"
#include "ber.h"

struct server;

/*
 * May authc_ndn act as authzid? LUMEN_OK with *authz_ndn (normalized,
 * empty: anonymous); LUMEN_ENOTFOUND with *diagnostic when refused
 * (authorizationDenied, 123), LUMEN_ENOMEM.
 */
int proxy_authz_decide(const struct server *s, struct arena *arena, const bool *abandoned,
		       struct ber_view authc_ndn, struct ber_view authzid,
		       struct ber_view *authz_ndn, const char **diagnostic);

#endif
