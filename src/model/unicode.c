/*
 * unicode.c — strict UTF-8, simple case folding, RFC 4518 mapping classes.
 * See include/unicode.h for the contract.
 */
#include "unicode.h"

#include "lumen_error.h"
#include "unicode_casefold.h"

int utf8_decode(const uint8_t *s, size_t len, uint32_t *cp)
{
	uint8_t lead = s[0];
	size_t need;
	uint32_t value;
	uint32_t minimum;

	if (lead < 0x80) {
		*cp = lead;
		return 1;
	}
	if (lead < 0xC2)        /* continuation byte, or overlong 2-byte lead */
		return LUMEN_EMALFORMED;
	if (lead < 0xE0) {
		need = 2; value = lead & 0x1Fu; minimum = 0x80;
	} else if (lead < 0xF0) {
		need = 3; value = lead & 0x0Fu; minimum = 0x800;
	} else if (lead < 0xF5) {
		need = 4; value = lead & 0x07u; minimum = 0x10000;
	} else {
		return LUMEN_EMALFORMED;
	}
	if (len < need)
		return LUMEN_EMALFORMED;
	for (size_t i = 1; i < need; i++) {
		if ((s[i] & 0xC0u) != 0x80u)
			return LUMEN_EMALFORMED;
		value = (value << 6) | (s[i] & 0x3Fu);
	}
	if (value < minimum || value > UNICODE_MAX_CODE_POINT ||
	    (value >= 0xD800 && value <= 0xDFFF))
		return LUMEN_EMALFORMED;
	*cp = value;
	return (int)need;
}

int utf8_validate(const uint8_t *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		/* Runs of ASCII are the common case in directory data. */
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		uint32_t cp;
		int rc = utf8_decode_next(s, len, &i, &cp);
		if (rc != LUMEN_OK)
			return rc;
	}
	return LUMEN_OK;
}

size_t utf8_encode(uint32_t cp, uint8_t out[4])
{
	if (cp < 0x80) {
		out[0] = (uint8_t)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (uint8_t)(0xC0 | (cp >> 6));
		out[1] = (uint8_t)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (uint8_t)(0xE0 | (cp >> 12));
		out[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
		out[2] = (uint8_t)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (uint8_t)(0xF0 | (cp >> 18));
	out[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
	out[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
	out[3] = (uint8_t)(0x80 | (cp & 0x3F));
	return 4;
}

uint32_t unicode_fold(uint32_t cp)
{
	if (cp < 0x80)
		return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;

	size_t low = 0, high = unicode_fold_table_len;
	while (low < high) {
		size_t mid = low + (high - low) / 2;
		uint32_t from = unicode_fold_table[mid].from;
		if (from == cp)
			return unicode_fold_table[mid].to;
		if (from < cp)
			low = mid + 1;
		else
			high = mid;
	}
	return cp;
}

int unicode_fold_utf8(const uint8_t *s, size_t len, struct arena *arena,
		      struct ber_view *out)
{
	/* A fold can turn a 2-byte sequence into a 3-byte one: 3/2 bounds growth. */
	uint8_t *buf = arena_alloc(arena, len + len / 2 + 1);
	size_t n = 0;

	if (buf == NULL)
		return LUMEN_ENOMEM;
	for (size_t i = 0; i < len;) {
		if (s[i] < 0x80) {
			uint8_t c = s[i++];
			buf[n++] = (c >= 'A' && c <= 'Z') ? (uint8_t)(c + 32) : c;
			continue;
		}
		uint32_t cp;
		int rc = utf8_decode_next(s, len, &i, &cp);
		if (rc != LUMEN_OK)
			return rc;
		n += utf8_encode(unicode_fold(cp), buf + n);
	}
	out->ptr = buf;
	out->len = n;
	return LUMEN_OK;
}

enum unicode_map_class unicode_map_class(uint32_t cp)
{
	/* RFC 4518 §2.2: these controls become a space, the rest vanish. */
	if ((cp >= 0x09 && cp <= 0x0D) || cp == 0x85 || cp == 0x20)
		return UNICODE_MAP_SPACE;
	if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F))
		return UNICODE_MAP_NOTHING;
	if (cp < 0xA0)
		return UNICODE_MAP_KEEP;
	switch (cp) {
	case 0x00A0: case 0x1680: case 0x2028: case 0x2029:
	case 0x202F: case 0x205F: case 0x3000:
		return UNICODE_MAP_SPACE;
	case 0x00AD: case 0x034F: case 0x06DD: case 0x070F: case 0x1806:
	case 0x180E: case 0x200B: case 0x200C: case 0x200D: case 0x200E:
	case 0x200F: case 0xFEFF: case 0xFFF9: case 0xFFFA: case 0xFFFB:
	case 0xFFFC:
		return UNICODE_MAP_NOTHING;
	default:
		break;
	}
	if (cp >= 0x2000 && cp <= 0x200A)
		return UNICODE_MAP_SPACE;
	if ((cp >= 0x180B && cp <= 0x180D) || (cp >= 0x202A && cp <= 0x202E) ||
	    (cp >= 0x2060 && cp <= 0x2063) || (cp >= 0x206A && cp <= 0x206F) ||
	    (cp >= 0xFE00 && cp <= 0xFE0F) || (cp >= 0x1D173 && cp <= 0x1D17A) ||
	    cp == 0xE0001 || (cp >= 0xE0020 && cp <= 0xE007F))
		return UNICODE_MAP_NOTHING;
	return UNICODE_MAP_KEEP;
}
