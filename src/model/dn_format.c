/*
 * dn_format.c — a parsed DN back to an RFC 4514 string in the user's
 * spelling (dn.h).
 *
 * Types are printed as written. Values are re-escaped with the short
 * backslash-character form that people write ("a\,b"); a value that is not
 * UTF-8 (it came in '#' hex form) goes back out as the hex of a BER OCTET
 * STRING, the only way RFC 4514 can carry it. Measure, then write: one
 * arena allocation.
 */
#include "dn.h"

#include <string.h>

#include "hex.h"
#include "lumen_error.h"
#include "unicode.h"

enum escape_kind { ESCAPE_NONE, ESCAPE_CHARACTER, ESCAPE_HEX };

static enum escape_kind format_escape(const uint8_t *v, size_t len, size_t i)
{
	switch (v[i]) {
	case ',': case '+': case '"': case '\\': case '<': case '>': case ';':
		return ESCAPE_CHARACTER;
	case '\0':
		return ESCAPE_HEX;
	case '#':
		return i == 0 ? ESCAPE_CHARACTER : ESCAPE_NONE;
	case ' ':
		return (i == 0 || i == len - 1) ? ESCAPE_CHARACTER : ESCAPE_NONE;
	default:
		return ESCAPE_NONE;
	}
}

/* Octets of the BER length field for a definite length n. */
static size_t ber_length_octets(size_t n)
{
	size_t octets = 1;
	if (n >= 128)
		for (size_t rest = n; rest > 0; rest >>= 8)
			octets++;
	return octets;
}

static size_t format_value_length(struct ber_view v, bool as_hex)
{
	if (as_hex)
		return 1 + 2 * (1 + ber_length_octets(v.len) + v.len);
	size_t n = v.len;
	for (size_t i = 0; i < v.len; i++) {
		enum escape_kind kind = format_escape(v.ptr, v.len, i);
		n += kind == ESCAPE_HEX ? 2 : kind == ESCAPE_CHARACTER ? 1 : 0;
	}
	return n;
}

static char *format_hex_value(char *out, struct ber_view v)
{
	size_t octets = ber_length_octets(v.len);

	*out++ = '#';
	out = hex_write_byte(out, 0x04, true); /* OCTET STRING */
	if (octets == 1) {
		out = hex_write_byte(out, (uint8_t)v.len, true);
	} else {
		out = hex_write_byte(out, (uint8_t)(0x80 | (octets - 1)), true);
		for (size_t k = octets - 1; k > 0; k--)
			out = hex_write_byte(out, (uint8_t)(v.len >> (8 * (k - 1))), true);
	}
	for (size_t i = 0; i < v.len; i++)
		out = hex_write_byte(out, v.ptr[i], true);
	return out;
}

static char *format_string_value(char *out, struct ber_view v)
{
	for (size_t i = 0; i < v.len; i++) {
		switch (format_escape(v.ptr, v.len, i)) {
		case ESCAPE_HEX:
			*out++ = '\\';
			out = hex_write_byte(out, v.ptr[i], true);
			break;
		case ESCAPE_CHARACTER:
			*out++ = '\\';
			*out++ = (char)v.ptr[i];
			break;
		case ESCAPE_NONE:
			*out++ = (char)v.ptr[i];
			break;
		}
	}
	return out;
}

static bool value_needs_hex(struct ber_view v)
{
	return utf8_validate(v.ptr, v.len) != LUMEN_OK;
}

/* Errors: LUMEN_ENOMEM. */
int dn_format(const struct dn *dn, struct arena *arena, struct ber_view *out)
{
	size_t total = 0;

	out->ptr = NULL;
	out->len = 0;
	for (size_t i = 0; i < dn->n_rdns; i++) {
		for (size_t j = 0; j < dn->rdns[i].n_avas; j++) {
			const struct dn_ava *ava = &dn->rdns[i].avas[j];
			total += ava->attr.len + 2 +
				 format_value_length(ava->value, value_needs_hex(ava->value));
		}
	}
	if (total == 0)
		return LUMEN_OK;

	char *buf = arena_alloc(arena, total);
	if (buf == NULL)
		return LUMEN_ENOMEM;
	char *pos = buf;
	for (size_t i = 0; i < dn->n_rdns; i++) {
		for (size_t j = 0; j < dn->rdns[i].n_avas; j++) {
			const struct dn_ava *ava = &dn->rdns[i].avas[j];
			if (i > 0 || j > 0)
				*pos++ = j > 0 ? '+' : ',';
			memcpy(pos, ava->attr.ptr, ava->attr.len);
			pos += ava->attr.len;
			*pos++ = '=';
			if (value_needs_hex(ava->value))
				pos = format_hex_value(pos, ava->value);
			else
				pos = format_string_value(pos, ava->value);
		}
	}
	out->ptr = (const uint8_t *)buf;
	out->len = (size_t)(pos - buf);
	return LUMEN_OK;
}
