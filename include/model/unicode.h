/*
 * unicode.h — UTF-8 decoding and validation, simple case folding beyond
 * ASCII, and the RFC 4518 §2.2 character mapping classes (model layer).
 *
 * Owns: a read-only case-fold table generated from the Unicode data by
 * src/model/gen_casefold.py (unicode_casefold.c; regenerate, never edit).
 * Memory: unicode_fold_utf8 allocates its output from the caller's arena;
 * everything else works on caller buffers and allocates nothing.
 * Thread-safety: all functions are pure; safe from any thread.
 *
 * UTF-8 is strict (RFC 3629): no overlong forms, no surrogates
 * (U+D800..U+DFFF), nothing above U+10FFFF; any of these, a stray
 * continuation byte or a truncated sequence is LUMEN_EMALFORMED.
 *
 * Caveats:
 *  - Folding is *simple* folding: one code point to one. Foldings that
 *    expand (U+00DF sharp s -> "ss", U+0130 -> "i" + combining dot) leave
 *    the code point unchanged, so "STRASSE" and "straße" do not match.
 *  - No Unicode normalization (NFKC): a precomposed "é" and "e" + U+0301
 *    are different strings. Clients overwhelmingly send precomposed text.
 */
#ifndef LUMEN_UNICODE_H
#define LUMEN_UNICODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "ber.h"
#include "lumen_error.h"

#define UNICODE_MAX_CODE_POINT 0x10FFFFu

/*
 * Decode one code point from s (len > 0 bytes available). Returns the number
 * of bytes it used (1..4) and stores the code point in *cp, or
 * LUMEN_EMALFORMED (invalid or truncated sequence; *cp untouched).
 */
int utf8_decode(const uint8_t *s, size_t len, uint32_t *cp);

/*
 * utf8_decode of the sequence at s[*i] of s[0..len), moving *i past it:
 * LUMEN_OK, or LUMEN_EMALFORMED (*i untouched). Inline: the loops of the
 * string-preparation path call it per non-ASCII character.
 */
static inline int utf8_decode_next(const uint8_t *s, size_t len, size_t *i, uint32_t *cp)
{
	int used = utf8_decode(s + *i, len - *i, cp);
	if (used < 0)
		return used;
	*i += (size_t)used;
	return LUMEN_OK;
}

/* LUMEN_OK if s[0..len) is entirely valid UTF-8, else LUMEN_EMALFORMED. */
int utf8_validate(const uint8_t *s, size_t len);

/* Encode cp (must be a valid scalar value) into out; returns 1..4 bytes. */
size_t utf8_encode(uint32_t cp, uint8_t out[4]);

/* Simple case fold of one code point (ASCII 'A'..'Z' -> 'a'..'z', Ä -> ä, Σ -> σ). */
uint32_t unicode_fold(uint32_t cp);

/*
 * Case-fold a UTF-8 string into arena memory. LUMEN_EMALFORMED for invalid
 * UTF-8, LUMEN_ENOMEM. Output may be longer than input (at most 3/2).
 */
int unicode_fold_utf8(const uint8_t *s, size_t len, struct arena *arena,
		      struct ber_view *out);

/* What RFC 4518 §2.2 (Map) does with a code point before comparison. */
enum unicode_map_class {
	UNICODE_MAP_KEEP = 0,   /* kept as is (then possibly case-folded) */
	UNICODE_MAP_SPACE,      /* mapped to U+0020: tabs, line ends, every Zs space */
	UNICODE_MAP_NOTHING,    /* dropped: soft hyphen, zero-width chars, controls, VS */
};
enum unicode_map_class unicode_map_class(uint32_t cp);

#endif
