/*
 * matching.h — helpers around the built-in matching rules (model layer):
 * substring matching on normalized values, the approximate-match key, the
 * RFC 4518 string preparation shared by the string rules, and the byte-order
 * comparator the equality rules use.
 *
 * The rules themselves are the table behind matching_rule_find() in
 * schema.h. How filter evaluation uses them:
 *   equality   normalize(value) == normalize(assertion), byte for byte;
 *   ordering   compare(normalize(value), normalize(assertion)) with the
 *              ORDERING rule (its normalize may differ from the equality one);
 *   substrings normalize(value) with the SUBSTR rule, each piece with its
 *              normalize_piece, then matching_substrings();
 *   approx     matching_approx_matches(matching_approx_key(value),
 *              matching_approx_key(assertion)): word by word, as slapd.
 *
 * Memory: outputs come from the caller's arena. Thread-safety: pure functions.
 *
 * Caveats:
 *  - String preparation follows RFC 4518 except Unicode normalization (NFKC),
 *    which is not done (see unicode.h), and uses simple case folding.
 *  - Spaces: a value is trimmed and internal runs of spaces become one space.
 *    A substring piece keeps one leading/trailing space if it had any, so
 *    (cn=foo *) requires a space after "foo" while (cn=foo*) does not.
 *  - distinguishedNameMatch here is a light, schema-free canonicalization
 *    (see matching_dn_light). The DN module's dn_normalize() is the real one
 *    (it knows attribute types and their rules); code that has the schema at
 *    hand should use it for DN-valued attributes, as the ndn of an entry does.
 */
#ifndef LUMEN_MATCHING_H
#define LUMEN_MATCHING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "ber.h"

/* How matching_prepare_string treats the text. Combine with |. */
enum matching_prep_flags {
	MATCHING_PREP_FOLD_CASE = 1u << 0,  /* Unicode simple case folding */
	MATCHING_PREP_IA5_ONLY  = 1u << 1,  /* reject anything beyond ASCII */
	MATCHING_PREP_PIECE     = 1u << 2,  /* substring piece: keep one edge space */
};

/*
 * RFC 4518 preparation of a string value into arena memory: map (drop
 * controls and zero-width characters, every space-like character becomes
 * U+0020), optional case fold, insignificant space handling (see Caveats).
 * ASCII input takes a fast path. LUMEN_EMALFORMED for invalid UTF-8 (or
 * non-ASCII with MATCHING_PREP_IA5_ONLY), LUMEN_ENOMEM.
 */
int matching_prepare_string(const uint8_t *value, size_t len, unsigned flags,
			    struct arena *arena, struct ber_view *out);

/*
 * True if the normalized value matches initial* any[0] * ... any[n-1] * final,
 * each piece normalized by the rule's normalize_piece. initial/final may be
 * NULL (absent). Pieces must not overlap, in order (RFC 4511 §4.5.1.7.2).
 */
bool matching_substrings(struct ber_view value, const struct ber_view *initial,
			 const struct ber_view *any, size_t n_any,
			 const struct ber_view *final);

/*
 * Approximate matching (~=) as OpenLDAP's slapd does it, so that the same
 * filters select the same entries. The key of a value: the value prepared
 * as by caseIgnoreMatch, Latin letters with diacritics as their base letter
 * (as slapd's decomposition does: "Müller" is "muller"), split into words
 * at spaces, each word replaced by
 * its phonetic code — slapd's Metaphone variant of the word's leading ASCII
 * letters (a digit, punctuation or non-ASCII letter ends what is coded),
 * at most MATCHING_APPROX_CODE_MAX characters, possibly empty — and each
 * code preceded by one space: "Alice Smith" is " ALS SM0", "Smyth" is
 * " SM0". LUMEN_EMALFORMED for invalid UTF-8, LUMEN_ENOMEM.
 */
#define MATCHING_APPROX_CODE_MAX 4
int matching_approx_key(const uint8_t *value, size_t len, struct arena *arena,
			struct ber_view *out);
/*
 * A value matches an assertion when every code of the assertion's key is
 * found among the value's codes, in the same order (other words may come
 * between): (cn~=Smyth) and (cn~=Alice Smith) match "Alice Smith". An
 * assertion without words matches nothing.
 */
bool matching_approx_matches(struct ber_view value_key, struct ber_view assertion_key);
/* Steps through a key's codes: start with *pos = 0; false after the last. */
bool matching_approx_next_code(struct ber_view key, size_t *pos, struct ber_view *code);

/*
 * distinguishedNameMatch without a schema: RDNs and AVAs re-joined without
 * insignificant spaces, attribute types lower-cased, values prepared as by
 * caseIgnoreMatch with escapes kept canonical (\XX upper-case hex for a
 * character that needs escaping, plain character otherwise).
 * LUMEN_EMALFORMED for an obviously broken DN, LUMEN_ENOMEM.
 */
int matching_dn_light(const uint8_t *value, size_t len, struct arena *arena,
		      struct ber_view *out);

/* memcmp-like order of two byte strings (shorter prefix first). */
int matching_compare_bytes(struct ber_view a, struct ber_view b);

#endif
