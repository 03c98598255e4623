/*
 * dn.h — distinguished names (RFC 4514), model layer.
 *
 * Two forms of every DN:
 *  - the parsed form (struct dn) keeps the user's spelling of attribute
 *    names and values, for output;
 *  - the normalized string ("ndn") is the key for storage and comparison:
 *    RDNs separated by ',' with no spaces, attribute types as their primary
 *    name in lower case (OIDs resolved through the schema), values
 *    normalized by the type's equality rule and then escaped per RFC 4514
 *    (so ',', '+', '"', '\\', '<', '>', ';', NUL, a leading '#' or space and
 *    a trailing space are escaped as \XX hex), and the AVAs of a multi-valued
 *    RDN sorted by type name then value. Two DNs name the same entry iff their
 *    ndn strings are byte-equal. The empty DN is the empty string.
 *
 * Memory: everything comes from the caller's arena.
 * Thread-safety: reentrant; the schema is read-only.
 *
 * Errors: LUMEN_EMALFORMED for bad syntax (unterminated escape, bad hex,
 * missing '=', invalid UTF-8 in a value, bad #hex BER), LUMEN_ENOTFOUND for
 * an attribute type the schema does not know, LUMEN_ESCHEMA for a value that
 * the type's equality rule cannot normalize (e.g. "uidNumber=abc"),
 * LUMEN_ELIMIT beyond DN_MAX_RDNS RDNs or DN_MAX_AVAS AVAs, LUMEN_ENOMEM.
 *
 * Caveats:
 *  - dn_parse resolves types and normalizes every value (so it can fail
 *    with LUMEN_ENOTFOUND/LUMEN_ESCHEMA); dn_normalize_parsed only sorts and
 *    prints, and rejects an RDN holding the same AVA twice (LUMEN_EMALFORMED).
 *  - Accepted beyond the RFC 4514 grammar, as OpenLDAP does: spaces around
 *    '=', ',', '+' and at both ends; ';' as an RDN separator; RFC 2253
 *    quoted values (cn="a, b"). Raw '"', '<', '>' and NUL in a value
 *    are rejected. A '#' value must be the hex of one BER string element
 *    (OCTET STRING, UTF8String, PrintableString, IA5String, ...).
 *  - In an ndn every special character of a value is a \XX hex escape,
 *    so a raw ',' or '+' in an ndn is always a separator. The ndn helpers
 *    below also honour backslash-character escapes ("\,") for safety.
 *  - dn_format prints a value that is not valid UTF-8 in '#' hex form.
 */
#ifndef LUMEN_DN_H
#define LUMEN_DN_H

#include <stdbool.h>
#include <stddef.h>

#include "arena.h"
#include "ber.h"
#include "ldap_message.h"
#include "schema.h"

#define DN_MAX_RDNS 256
/* Bound on the AVAs of a whole DN, so sorting multi-valued RDNs stays cheap. */
#define DN_MAX_AVAS 1024

struct dn_ava {
	const struct attribute_type *type;
	struct ber_view attr;        /* the type as written */
	struct ber_view value;       /* unescaped value bytes */
	struct ber_view normalized;  /* by the type's equality rule (value if none) */
};

struct dn_rdn {
	struct dn_ava *avas;         /* in the order written */
	size_t n_avas;
};

struct dn {
	struct dn_rdn *rdns;         /* rdns[0] is the leftmost (the entry's own) RDN */
	size_t n_rdns;
};

int dn_parse(const struct schema *s, const char *text, size_t len,
	     struct arena *arena, struct dn *out);
/* Normalized string of a parsed DN (see above). */
int dn_normalize_parsed(const struct dn *dn, struct arena *arena, struct ber_view *ndn);
/* Parse + normalize in one step. */
int dn_normalize(const struct schema *s, const char *text, size_t len,
		 struct arena *arena, struct ber_view *ndn);
/* RFC 4514 string of a parsed DN in the user's spelling (escaping re-applied). */
int dn_format(const struct dn *dn, struct arena *arena, struct ber_view *out);

/*
 * A normalized AVA value as the normalized DN spells it: the RFC 4514
 * special characters, NUL, a leading '#' or space and a trailing space as
 * \XX (uppercase hex), every other byte as is. dn_ndn_value_length is the
 * bytes dn_ndn_write_value writes at out (no NUL); it returns the end.
 * matching_dn_light writes values the same way, so its keys equal ndns.
 */
size_t dn_ndn_value_length(struct ber_view v);
char *dn_ndn_write_value(char *out, struct ber_view v);

/* --- operations on normalized DN strings (no schema, no allocation) --- */

/* The leftmost RDN of ndn and the rest (the parent's ndn; empty for a top). */
void dn_split_first(struct ber_view ndn, struct ber_view *rdn, struct ber_view *parent);
/* True if ndn equals suffix or lies below it (RDN boundary respected). */
bool dn_is_within(struct ber_view ndn, struct ber_view suffix);
/* Number of RDNs (0 for the empty DN). */
size_t dn_rdn_count(struct ber_view ndn);
/*
 * True if ndn lies in the scope of base: base is ndn itself, one its
 * parent (never for the empty DN), subtree base or below, children below
 * only. An unknown scope holds nothing.
 */
bool dn_in_scope(struct ber_view ndn, struct ber_view base, enum ldap_scope scope);

#endif
