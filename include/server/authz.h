/*
 * authz.h — authorization identities and the rules that say who may act
 * as whom (server layer): the authzId of the Proxied Authorization control
 * (RFC 4370, RFC 4513 §5.2.1.8) and the authzTo/authzFrom rules that
 * `authz-policy` consults, in the forms OpenLDAP accepts.
 *
 * authzId: "dn:DN" (empty DN: anonymous) or "u:user", the prefix in any
 * case. A user becomes "uid=user,cn=auth", then the `authz-regexp` lines
 * map it (struct authz_env.map_identity).
 *
 * Rules: "dn:DN", "dn.exact:DN", "dn.base:DN" (that DN), "dn.subtree:DN"
 * (it and below), "dn.children:DN" (strictly below), "dn.onelevel:DN"
 * (its children), "dn.regex:RE" (POSIX extended, case-insensitive, on the
 * normalized DN), "u:user" (mapped as above), "*" (any non-anonymous DN),
 * and "ldap:///base??scope?filter" (the DN is in scope of base and names
 * an entry matching the filter; without a filter nothing, as in slapd). No host, attributes or extensions
 * in a URL; scope base, one(level), sub(tree), children/subord(inate).
 * "group[/objectClass[/attributeType]]:DN": the entry DN is of that class
 * (default groupOfNames) and that attribute (default member, the type
 * itself, not its subtypes) lists the DN, as slapd's group form.
 *
 * Memory: everything from env->arena. The entry handed out by env->fetch
 * belongs to the caller of fetch, who frees it here.
 * Thread-safety: pure functions of their arguments.
 *
 * Caveats:
 *  - A rule that does not parse, or whose DN does not normalize, matches
 *    nothing (as in slapd, which ignores such values).
 *  - OpenLDAP's SASL-mechanism form (u.mech/realm:) is not read: Lumen's
 *    only SASL mechanism is EXTERNAL, whose identities are DNs.
 */
#ifndef LUMEN_AUTHZ_H
#define LUMEN_AUTHZ_H

#include <stdbool.h>
#include <stddef.h>

#include "arena.h"
#include "ber.h"
#include "entry.h"
#include "schema.h"

struct authz_env {
	const struct schema *schema;
	struct arena *arena;
	/* An identity ("uid=user,cn=auth") to its normalized DN through
	 * authz-regexp. LUMEN_OK or an error (then nothing matches). */
	int (*map_identity)(void *ctx, const char *identity, struct arena *arena,
			    struct ber_view *ndn);
	/* The entry ndn, a copy the caller frees (*out NULL: none). May be
	 * NULL: URL rules with a filter then match nothing. */
	int (*fetch)(void *ctx, struct ber_view ndn, struct entry **out);
	void *ctx;
};

/*
 * The normalized DN an authzId names (empty: anonymous). LUMEN_OK,
 * LUMEN_EMALFORMED (neither form, an empty user, a DN that does not
 * normalize, a mapping that fails), LUMEN_ENOMEM.
 */
int authz_id_resolve(const struct authz_env *env, struct ber_view authzid,
		     struct ber_view *ndn);

/* Does rule (an authzTo/authzFrom value) let the DN assert_ndn in? False
 * also on any error: a rule that cannot be decided grants nothing. */
bool authz_rule_matches(const struct authz_env *env, struct ber_view rule,
			struct ber_view assert_ndn);

#endif
