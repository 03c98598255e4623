/*
 * overlay_unique.h — attribute uniqueness (OpenLDAP's unique overlay,
 * slapo-unique(5)): the unique_uri lines of `overlay unique` parsed into
 * domains (server layer, src/server/overlay_unique.c; the overlay type
 * itself is overlay_unique in overlay.h). Exposed for the unit tests.
 *
 *   unique_uri [strict ][ignore ][serialize ]URI[ URI...]
 *   URI = ldap:///[base DN]?[attr[,attr...]]?scope[?filter]
 *
 * Each line is one domain. The base defaults to the database's (first)
 * suffix and must lie within one of its suffixes; scope is base, one or
 * sub (base makes the URI check nothing: a group of one is unique, as in
 * slapd); the filter restricts the entries the URI covers. Without
 * attributes a URI covers every user attribute; with `ignore` it covers
 * every user attribute except those listed. `strict` also counts empty
 * values, which are otherwise never in conflict. `serialize` is accepted
 * and changes nothing: Lumen's checks always run inside the serialized
 * write transaction. Base DN and filter may be %-escaped.
 *
 * Memory: everything in the caller's arena (the overlay's). Thread-safety:
 * a parsed domain is read-only and shared by every writer.
 */
#ifndef LUMEN_OVERLAY_UNIQUE_H
#define LUMEN_OVERLAY_UNIQUE_H

#include <stdbool.h>
#include <stddef.h>

#include "arena.h"
#include "ber.h"
#include "filter.h"
#include "ldap_message.h"
#include "schema.h"

struct unique_uri {
	struct ber_view base_ndn;
	enum ldap_scope scope;              /* BASE, ONE or SUBTREE */
	const struct attribute_type **types;/* as listed; n_types 0: none listed */
	size_t n_types;
	struct filter *filter;              /* NULL: every entry */
};

struct unique_domain {
	bool strict, ignore;
	struct unique_uri *uris;
	size_t n_uris;
};

/*
 * Parses one unique_uri line's arguments (the words after the directive,
 * joined with spaces or not: quoted and unquoted forms both work). The
 * suffixes are the database's normalized suffixes (at least one).
 * Errors: LUMEN_EMALFORMED with why saying what is wrong (a keyword, a
 * URI's prefix, base, attribute, scope or filter), LUMEN_ENOMEM.
 */
int unique_domain_parse(const struct schema *schema, const struct ber_view *suffixes,
			size_t n_suffixes, const char *const *words, size_t n_words,
			struct arena *arena, struct unique_domain *out, char *why, size_t whylen);

/* True if u covers attributes of type in domain d. */
bool unique_covers(const struct unique_domain *d, const struct unique_uri *u,
		   const struct attribute_type *type);

/* True if the entry ndn lies in u's scope. */
bool unique_in_scope(const struct unique_uri *u, struct ber_view ndn);

#endif
