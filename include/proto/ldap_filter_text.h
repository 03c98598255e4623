/*
 * ldap_filter_text.h — the RFC 4515 string form of a search filter, parsed
 * into and printed from the decoded Filter of ldap_message.h (proto layer).
 *
 * A text filter needs no schema: attribute descriptions and matching rule
 * names stay as written, and values are raw bytes once unescaped. So the
 * one parser lives here, under every user: the server and tools compile
 * the result with filter_compile (filter.h, which keeps the
 * filter_text_parse/print spellings as wrappers), and lumenbench, which
 * may use only this layer, encodes it with ldap_filter_encode.
 *
 * Memory: every node, every unescaped value and the printed text come from
 * the caller's arena; nothing is freed individually. Attribute
 * descriptions and matching rule names are views into the parsed text, so
 * the text must live as long as the tree (copy it first when it does not).
 * Thread-safety: reentrant; each call uses only its arguments.
 *
 * Grammar: strict about RFC 4515 (every '(' closed, \XX escapes of exactly
 * two hex digits, no unescaped '(' ')' '*' NUL inside a value except '*' as
 * the substring separator), and lenient in two ways OpenLDAP's tools are:
 * an unparenthesized top-level item ("cn=x") is one item, and empty "any"
 * pieces of a substring collapse ("a**b" is "a*b").
 *
 * Caveats:
 *  - Bounds come from ldap_decode_limits' max_filter_depth (nesting of
 *    AND/OR/NOT below the root; a lone item is depth 0) and
 *    max_filter_nodes (items and operators together); they are checked
 *    before anything is allocated for a node.
 *  - ldap_filter_text_print escapes '*', '(', ')', '\\', NUL and every byte
 *    outside printable ASCII as lowercase \xx, so its output is ASCII and
 *    canonical: printing a parse of printed text gives the same text.
 */
#ifndef LUMEN_LDAP_FILTER_TEXT_H
#define LUMEN_LDAP_FILTER_TEXT_H

#include <stddef.h>

#include "arena.h"
#include "ber.h"
#include "ldap_message.h"

/*
 * Parse text[0..len) into *out. limits may be NULL (the defaults of
 * ldap_decode_limits_default). LUMEN_EMALFORMED for a grammar error
 * (unbalanced parentheses, bad \XX escape, empty attribute description,
 * bad extensible form, trailing text) with *error_offset (if non-NULL) set
 * to the byte where it was detected; LUMEN_ELIMIT beyond the depth/node
 * bounds; LUMEN_ENOMEM. *out is NULL on any error.
 */
int ldap_filter_text_parse(const char *text, size_t len, struct arena *arena,
			   const struct ldap_decode_limits *limits,
			   struct ldap_filter **out, size_t *error_offset);

/*
 * Print f in canonical RFC 4515 form ("(&(cn=a*b)(!(sn=x)))") into arena
 * memory, NUL-terminated (out->len excludes the NUL). LUMEN_ENOMEM;
 * LUMEN_EINVAL for a tree that cannot be printed (NULL, substrings without
 * pieces, NOT without a child, nesting beyond BER_MAX_NESTING * 16).
 */
int ldap_filter_text_print(const struct ldap_filter *f, struct arena *arena,
			   struct ber_view *out);

#endif
