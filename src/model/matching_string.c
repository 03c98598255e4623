/*
 * matching_string.c — RFC 4518 string preparation and the normalizers of the
 * string matching rules (caseIgnore*, caseExact*, *IA5*, numericString*,
 * telephoneNumber*, caseIgnoreList*), plus substring matching and the
 * approximate key. Contracts: include/matching.h, include/schema.h.
 */
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

int matching_prepare_string(const uint8_t *value, size_t len, unsigned flags,
			    struct arena *arena, struct ber_view *out)
{
	/* Folding may grow a 2-byte character to 3 bytes; +2 for edge spaces. */
	struct prep_state st = { .buf = arena_alloc(arena, len + len / 2 + 2) };

	if (st.buf == NULL)
		return LUMEN_ENOMEM;
	for (size_t i = 0; i < len;) {
		uint32_t cp = value[i];
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

/* Soundex consonant classes; 0 for letters that separate (vowels) or vanish. */
static char approx_class(uint8_t c)
{
	static const char classes[26] = {
		/* a */ 0, '1', '2', '3', 0, '1', '2', 0, 0, '2', '2', '4', '5',
		/* n */ '5', 0, '1', '2', '6', '2', '3', 0, '1', 0, '2', 0, '2',
	};
	return classes[c - 'a'];
}

int matching_approx_key(const uint8_t *value, size_t len, struct arena *arena,
			struct ber_view *out)
{
	struct ber_view prepared;
	int rc = matching_prepare_string(value, len, MATCHING_PREP_FOLD_CASE, arena, &prepared);
	if (rc != LUMEN_OK)
		return rc;

	/* The key is never longer than the prepared text. */
	uint8_t *buf = arena_alloc(arena, prepared.len + 1);
	size_t n = 0;
	bool word_started = false;
	char last = 0;

	if (buf == NULL)
		return LUMEN_ENOMEM;
	for (size_t i = 0; i < prepared.len; i++) {
		uint8_t c = prepared.ptr[i];
		if (c == ' ') {
			if (word_started)
				buf[n++] = ' ';
			word_started = false;
			last = 0;
		} else if (c >= 'a' && c <= 'z') {
			char cls = approx_class(c);
			if (!word_started) {
				buf[n++] = c;
				word_started = true;
			} else if (cls != 0 && cls != last) {
				buf[n++] = (uint8_t)cls;
			}
			/* h and w do not separate equal classes; vowels do. */
			if (c != 'h' && c != 'w')
				last = cls;
		} else if ((c >= '0' && c <= '9') || c >= 0x80) {
			buf[n++] = c;
			word_started = true;
			last = 0;
		}
	}
	if (n > 0 && buf[n - 1] == ' ')
		n--;
	out->ptr = buf;
	out->len = n;
	return LUMEN_OK;
}
