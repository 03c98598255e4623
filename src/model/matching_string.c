/*
 * matching_string.c — RFC 4518 string preparation and the normalizers of the
 * string matching rules (caseIgnore*, caseExact*, *IA5*, numericString*,
 * telephoneNumber*, caseIgnoreList*), plus substring matching and the
 * approximate key. Contracts: include/matching.h, include/schema.h.
 */
#include <ctype.h>
#include <string.h>

#include "lumen_error.h"
#include "matching.h"
#include "matching_rules.h"
#include "unicode.h"

/* Spaces seen since the last kept character, and whether one was kept yet. */
struct prep_state {
	uint8_t *buf;
	size_t n;
	bool kept_any;
	bool pending_space;
};

static void prep_emit(struct prep_state *st, uint32_t cp, unsigned flags)
{
	/* A space run between two kept characters survives as one space; a
	 * leading run survives (as one) only in a substring piece. */
	if (st->pending_space && (st->kept_any || (flags & MATCHING_PREP_PIECE)))
		st->buf[st->n++] = ' ';
	st->pending_space = false;
	st->kept_any = true;
	if (flags & MATCHING_PREP_FOLD_CASE)
		cp = unicode_fold(cp);
	st->n += utf8_encode(cp, st->buf + st->n);
}

/* An ASCII character kept as it is, or folded: most values are all ASCII,
 * and this spares them the code point tables and the UTF-8 encoder. */
static void prep_emit_ascii(struct prep_state *st, uint8_t c, unsigned flags)
{
	if (st->pending_space && (st->kept_any || (flags & MATCHING_PREP_PIECE)))
		st->buf[st->n++] = ' ';
	st->pending_space = false;
	st->kept_any = true;
	if ((flags & MATCHING_PREP_FOLD_CASE) && c >= 'A' && c <= 'Z')
		c = (uint8_t)(c + ('a' - 'A'));
	st->buf[st->n++] = c;
}

int matching_prepare_string(const uint8_t *value, size_t len, unsigned flags,
			    struct arena *arena, struct ber_view *out)
{
	/* Folding may grow a 2-byte character to 3 bytes; +2 for edge spaces. */
	struct prep_state st = { .buf = arena_alloc(arena, len + len / 2 + 2) };

	if (st.buf == NULL)
		return LUMEN_ENOMEM;
	for (size_t i = 0; i < len;) {
		uint32_t cp = value[i];
		/* RFC 4518 §2.2 for ASCII: what unicode_map_class says below. */
		if (cp > 0x20 && cp < 0x7F) {
			prep_emit_ascii(&st, (uint8_t)cp, flags);
			i++;
			continue;
		}
		if (cp < 0x80) {
			i++;
		} else {
			if (flags & MATCHING_PREP_IA5_ONLY)
				return LUMEN_EMALFORMED;
			int rc = utf8_decode_next(value, len, &i, &cp);
			if (rc != LUMEN_OK)
				return rc;
		}
		switch (unicode_map_class(cp)) {
		case UNICODE_MAP_NOTHING:
			break;
		case UNICODE_MAP_SPACE:
			st.pending_space = true;
			break;
		case UNICODE_MAP_KEEP:
			prep_emit(&st, cp, flags);
			break;
		}
	}
	if (st.pending_space && (flags & MATCHING_PREP_PIECE))
		st.buf[st.n++] = ' ';
	out->ptr = st.buf;
	out->len = st.n;
	return LUMEN_OK;
}

/* ---------------------------------------------------- rule normalizers */

/* A normalizer that is string preparation with fixed flags; each a row. */
#define PREPARED(name, flags) \
	NORMALIZER(name) \
	{ \
		return matching_prepare_string(v, len, (flags), a, out); \
	}

PREPARED(norm_case_ignore, MATCHING_PREP_FOLD_CASE)
PREPARED(norm_case_ignore_piece, MATCHING_PREP_FOLD_CASE | MATCHING_PREP_PIECE)
PREPARED(norm_case_exact, 0)
PREPARED(norm_case_exact_piece, MATCHING_PREP_PIECE)
PREPARED(norm_ia5_ignore, MATCHING_PREP_FOLD_CASE | MATCHING_PREP_IA5_ONLY)
PREPARED(norm_ia5_ignore_piece, MATCHING_PREP_FOLD_CASE | MATCHING_PREP_IA5_ONLY |
	 MATCHING_PREP_PIECE)
PREPARED(norm_ia5_exact, MATCHING_PREP_IA5_ONLY)
PREPARED(norm_ia5_exact_piece, MATCHING_PREP_IA5_ONLY | MATCHING_PREP_PIECE)

/* Prepare, then drop every byte in `drop` (RFC 4518 §2.6.2, §2.6.3). */
static int prepare_and_drop(const uint8_t *v, size_t len, unsigned flags, const char *drop,
			    struct arena *a, struct ber_view *out)
{
	int rc = matching_prepare_string(v, len, flags, a, out);
	if (rc != LUMEN_OK)
		return rc;
	uint8_t *buf = (uint8_t *)out->ptr;
	size_t n = 0;
	for (size_t i = 0; i < out->len; i++)
		if (strchr(drop, buf[i]) == NULL)
			buf[n++] = buf[i];
	out->len = n;
	return LUMEN_OK;
}

int norm_numeric_string(const uint8_t *v, size_t len, struct arena *a, struct ber_view *out)
{
	for (size_t i = 0; i < len; i++)
		if (!(v[i] >= '0' && v[i] <= '9') && v[i] != ' ')
			return LUMEN_EMALFORMED;
	return prepare_and_drop(v, len, MATCHING_PREP_IA5_ONLY, " ", a, out);
}

int norm_telephone(const uint8_t *v, size_t len, struct arena *a, struct ber_view *out)
{
	return prepare_and_drop(v, len, MATCHING_PREP_FOLD_CASE, " -", a, out);
}

/* caseIgnoreList: each '$'-separated line prepared alone, joined by '$'. */
int norm_case_ignore_list(const uint8_t *v, size_t len, struct arena *a,
			  struct ber_view *out)
{
	uint8_t *buf = arena_alloc(a, len + len / 2 + 2);
	size_t n = 0, start = 0;

	if (buf == NULL)
		return LUMEN_ENOMEM;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && v[i] != '$')
			continue;
		struct ber_view line;
		int rc = matching_prepare_string(v + start, i - start, MATCHING_PREP_FOLD_CASE,
						 a, &line);
		if (rc != LUMEN_OK)
			return rc;
		if (start > 0)
			buf[n++] = '$';
		memcpy(buf + n, line.ptr, line.len);
		n += line.len;
		start = i + 1;
	}
	out->ptr = buf;
	out->len = n;
	return LUMEN_OK;
}

/* ------------------------------------------------------------ helpers */

int matching_compare_bytes(struct ber_view a, struct ber_view b)
{
	size_t n = a.len < b.len ? a.len : b.len;
	int c = n ? memcmp(a.ptr, b.ptr, n) : 0;

	if (c != 0)
		return c;
	return (a.len > b.len) - (a.len < b.len);
}

bool matching_substrings(struct ber_view value, const struct ber_view *initial,
			 const struct ber_view *any, size_t n_any,
			 const struct ber_view *final)
{
	size_t pos = 0, end = value.len;

	if (initial != NULL) {
		if (initial->len > end || memcmp(value.ptr, initial->ptr, initial->len) != 0)
			return false;
		pos = initial->len;
	}
	if (final != NULL) {
		if (final->len > end - pos ||
		    memcmp(value.ptr + end - final->len, final->ptr, final->len) != 0)
			return false;
		end -= final->len;
	}
	/* Leftmost match of each piece leaves the most room for the next. */
	for (size_t i = 0; i < n_any; i++) {
		if (any[i].len == 0)
			continue;
		const uint8_t *hit = memmem(value.ptr + pos, end - pos, any[i].ptr, any[i].len);
		if (hit == NULL)
			return false;
		pos = (size_t)(hit - value.ptr) + any[i].len;
	}
	return true;
}

/*
 * The phonetic code of one word, as OpenLDAP's slapd computes it (its
 * Metaphone variant, quirks included, so that ~= selects the same entries):
 * the word's leading ASCII letters (at most APPROX_WORD_LETTERS), upper
 * case, coded letter by letter with one letter of look-behind and two of
 * look-ahead, and cut at MATCHING_APPROX_CODE_MAX characters.
 */
#define APPROX_WORD_LETTERS 31
#define APPROX_PAD 4            /* look-behind / look-ahead room, always 0 */

enum { L_VOWEL = 1, L_SAME = 2, L_VARSON = 4, L_FRONTV = 8, L_NOGHF = 16 };

static bool letter_is(char c, unsigned what)
{
	static const uint8_t kinds[26] = {
		/* A */ L_VOWEL, L_NOGHF, L_VARSON, L_NOGHF, L_VOWEL | L_FRONTV, L_SAME,
		/* G */ L_VARSON, L_NOGHF, L_VOWEL | L_FRONTV, L_SAME, 0, L_SAME, L_SAME,
		/* N */ L_SAME, L_VOWEL, L_VARSON, 0, L_SAME, L_VARSON, L_VARSON,
		/* U */ L_VOWEL, 0, 0, 0, L_FRONTV, 0,
	};
	return c >= 'A' && c <= 'Z' && (kinds[c - 'A'] & what);
}

/* Drops the silent first letter of PN, KN, GN, AE, WR; WH sounds W; X sounds S. */
static size_t approx_word_start(char *w)
{
	switch (w[0]) {
	case 'P': case 'K': case 'G':
		return w[1] == 'N' ? (w[0] = 0, 1) : 0;
	case 'A':
		return w[1] == 'E' ? (w[0] = 0, 1) : 0;
	case 'W':
		if (w[1] == 'R' || w[1] == 'H') {
			w[1] = w[1] == 'H' ? 'W' : 'R';
			w[0] = 0;
			return 1;
		}
		return 0;
	case 'X':
		w[0] = 'S';
		return 0;
	default:
		return 0;
	}
}

/* The sound of the consonant w[i] in its context, or 0 when silent. */
static char approx_consonant(const char *w, size_t i, size_t start, size_t len, bool *ks)
{
	/* Offsets from `at`, never `w[i - k]`: with i == 0 an unsigned i - k
	 * would form w + SIZE_MAX, out of bounds even though it wraps back. */
	const char *at = w + i;
	char c = at[0], prev = at[-1], next = at[1], next2 = at[2];

	switch (c) {
	case 'B':   /* silent except last, and then not after M */
		return i + 1 == len && prev != 'M' ? 'B' : 0;
	case 'C':
		if (prev == 'S' && letter_is(next, L_FRONTV))
			return 0;
		if (next == 'I' && next2 == 'A')
			return 'X';
		if (letter_is(next, L_FRONTV))
			return 'S';
		if (next == 'H')
			return (i == start && !letter_is(next2, L_VOWEL)) || prev == 'S' ? 'K' : 'X';
		return 'K';
	case 'D':
		return next == 'G' && letter_is(next2, L_FRONTV) ? 'J' : 'T';
	case 'G':
		/* slapd tests 'J' where the rule means 'H'; kept for the same codes */
		if ((next != 'J' || letter_is(next2, L_VOWEL)) &&
		    (next != 'N' || (i + 1 < len && (next2 != 'E' || w[i + 3] != 'D'))) &&
		    (prev != 'D' || !letter_is(next, L_FRONTV)))
			return letter_is(next, L_FRONTV) && next2 != 'G' ? 'G' : 'K';
		return next == 'H' && !letter_is(at[-3], L_NOGHF) && at[-4] != 'H' ? 'F' : 0;
	case 'H':
		return !letter_is(prev, L_VARSON) &&
		       (!letter_is(prev, L_VOWEL) || letter_is(next, L_VOWEL)) ? 'H' : 0;
	case 'K':
		return prev != 'C' ? 'K' : 0;
	case 'P':
		return next == 'H' ? 'F' : 'P';
	case 'Q':
		return 'K';
	case 'S':
		return next == 'H' || (next == 'I' && (next2 == 'O' || next2 == 'A')) ? 'X' : 'S';
	case 'T':
		if (next == 'I' && (next2 == 'O' || next2 == 'A'))
			return 'X';
		if (next == 'H')
			return '0';
		return next == 'C' && next2 == 'H' ? 0 : 'T';
	case 'V':
		return 'F';
	case 'W': case 'Y':
		return letter_is(next, L_VOWEL) ? c : 0;
	case 'X':
		if (i == start)
			return 'S';
		*ks = true;          /* K now, S in place of the next letter */
		return 'K';
	case 'Z':
		return 'S';
	default:
		return 0;
	}
}

/* Appends the code of the word at text[0..len) (stops at its first non-letter). */
static size_t approx_word_code(const uint8_t *text, size_t len, uint8_t *out)
{
	char buf[APPROX_PAD + APPROX_WORD_LETTERS + APPROX_PAD] = { 0 };
	char *w = buf + APPROX_PAD;
	size_t n = 0, code = 0;

	while (n < len && n < APPROX_WORD_LETTERS && isalpha(text[n]) && text[n] < 0x80) {
		w[n] = (char)toupper(text[n]);
		n++;
	}
	if (n == 0)
		return 0;
	size_t start = approx_word_start(w);
	bool ks = false;
	/* one step past the last letter: a final X still owes its S */
	for (size_t i = start; i <= n && code < MATCHING_APPROX_CODE_MAX; i++) {
		char sound;
		if (ks) {
			ks = false;
			sound = 'S';
		} else if (w[i] == (w + i)[-1] && w[i] != 'C') {   /* see approx_consonant */
			continue;
		} else if (letter_is(w[i], L_SAME) || (i == start && letter_is(w[i], L_VOWEL))) {
			sound = w[i];
		} else {
			sound = approx_consonant(w, i, start, n, &ks);
		}
		if (sound != 0)
			out[code++] = (uint8_t)sound;
	}
	return code;
}

/*
 * Latin letters with diacritics (U+00C0..U+017F) as their base letter, '.'
 * for the others: slapd's approx drops combining marks after decomposing
 * (NFD), so "Muller" and "Müller" share a code.
 */
static const char latin_base[] =
	"aaaaaa.ceeeeiiii.nooooo..uuuuy.."
	"aaaaaa.ceeeeiiii.nooooo..uuuuy.y"
	"aaaaaaccccccccdd..eeeeeeeeeegggg"
	"gggghh..iiiiiiiii...jjkk.llllll."
	"...nnnnnn...oooooo..rrrrrrssssss"
	"sstttt..uuuuuuuuuuuuwwyyyzzzzzz.";

/* text with every letter of latin_base replaced by its base (never longer). */
static int strip_diacritics(struct ber_view text, struct arena *arena, struct ber_view *out)
{
	uint8_t *buf = arena_alloc(arena, text.len + 1);
	size_t n = 0;
	if (buf == NULL)
		return LUMEN_ENOMEM;
	for (size_t i = 0; i < text.len; i++) {
		uint8_t c = text.ptr[i];
		if (c >= 0xC3 && c <= 0xC5 && i + 1 < text.len) {
			unsigned cp = ((unsigned)(c & 0x1F) << 6) | (text.ptr[i + 1] & 0x3F);
			char base = cp >= 0xC0 && cp < 0x180 ? latin_base[cp - 0xC0] : '.';
			if (base != '.') {
				buf[n++] = (uint8_t)base;
				i++;
				continue;
			}
		}
		buf[n++] = c;
	}
	*out = (struct ber_view){ buf, n };
	return LUMEN_OK;
}

int matching_approx_key(const uint8_t *value, size_t len, struct arena *arena,
			struct ber_view *out)
{
	struct ber_view prepared;
	int rc = matching_prepare_string(value, len, MATCHING_PREP_FOLD_CASE, arena, &prepared);
	if (rc == LUMEN_OK)
		rc = strip_diacritics(prepared, arena, &prepared);
	if (rc != LUMEN_OK)
		return rc;
	/* per word at most its code and a space; words are at least one byte */
	uint8_t *buf = arena_alloc(arena, prepared.len * (MATCHING_APPROX_CODE_MAX + 1) + 1);
	size_t n = 0;
	if (buf == NULL)
		return LUMEN_ENOMEM;
	for (size_t i = 0; i < prepared.len;) {
		if (prepared.ptr[i] == ' ') {
			i++;
			continue;
		}
		size_t word = i;
		while (i < prepared.len && prepared.ptr[i] != ' ')
			i++;
		buf[n++] = ' ';     /* before every code, so an empty code still counts */
		n += approx_word_code(prepared.ptr + word, i - word, buf + n);
	}
	out->ptr = buf;
	out->len = n;
	return LUMEN_OK;
}

bool matching_approx_next_code(struct ber_view key, size_t *pos, struct ber_view *code)
{
	size_t i = *pos;
	if (i >= key.len || key.ptr[i] != ' ')
		return false;
	size_t end = ++i;
	while (end < key.len && key.ptr[end] != ' ')
		end++;
	*code = (struct ber_view){ key.ptr + i, end - i };
	*pos = end;
	return true;
}

bool matching_approx_matches(struct ber_view value_key, struct ber_view assertion_key)
{
	struct ber_view want, have;
	size_t apos = 0, vpos = 0;
	bool any = false;

	while (matching_approx_next_code(assertion_key, &apos, &want)) {
		bool found = false;
		while (!found && matching_approx_next_code(value_key, &vpos, &have))
			found = have.len == want.len && memcmp(have.ptr, want.ptr, want.len) == 0;
		if (!found)
			return false;
		any = true;
	}
	return any;
}
