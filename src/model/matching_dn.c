/*
 * matching_dn.c — the light, schema-free distinguishedNameMatch normalizer
 * (matching_dn_light, contract in include/matching.h). dn.c owns real DN
 * handling; this exists so DN-syntax attribute values (member, seeAlso, ...)
 * get a deterministic key without the matching table depending on the schema.
 */
#include <string.h>

#include "lumen_error.h"
#include "matching.h"

static bool is_hex(uint8_t c)
{
	return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

static uint8_t hex_value(uint8_t c)
{
	return (uint8_t)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
}

static bool needs_escape(const uint8_t *v, size_t len, size_t i)
{
	uint8_t c = v[i];
	if (c == ',' || c == '+' || c == '"' || c == '\\' || c == '<' || c == '>' ||
	    c == ';' || c == '\0')
		return true;
	if (i == 0 && (c == '#' || c == ' '))
		return true;
	return i + 1 == len && c == ' ';
}

struct dn_writer {
	uint8_t *buf;
	size_t n;
};

static void write_escaped(struct dn_writer *w, struct ber_view value)
{
	static const char hex[] = "0123456789ABCDEF";
	for (size_t i = 0; i < value.len; i++) {
		uint8_t c = value.ptr[i];
		if (needs_escape(value.ptr, value.len, i)) {
			w->buf[w->n++] = '\\';
			w->buf[w->n++] = (uint8_t)hex[c >> 4];
			w->buf[w->n++] = (uint8_t)hex[c & 15];
		} else {
			w->buf[w->n++] = c;
		}
	}
}

/*
 * Unescape the value starting at *pos into scratch; stops at an unescaped
 * ',', '+' or the end. Returns LUMEN_EMALFORMED for a bad escape.
 */
static int read_value(const uint8_t *v, size_t len, size_t *pos, uint8_t *scratch,
		      size_t *scratch_len)
{
	size_t i = *pos, n = 0;
	while (i < len && v[i] != ',' && v[i] != '+') {
		if (v[i] != '\\') {
			scratch[n++] = v[i++];
			continue;
		}
		if (i + 1 >= len)
			return LUMEN_EMALFORMED;
		if (is_hex(v[i + 1])) {
			if (i + 2 >= len || !is_hex(v[i + 2]))
				return LUMEN_EMALFORMED;
			scratch[n++] = (uint8_t)(hex_value(v[i + 1]) << 4 | hex_value(v[i + 2]));
			i += 3;
		} else {
			scratch[n++] = v[i + 1];
			i += 2;
		}
	}
	*pos = i;
	*scratch_len = n;
	return LUMEN_OK;
}

static size_t skip_spaces(const uint8_t *v, size_t len, size_t i)
{
	while (i < len && v[i] == ' ')
		i++;
	return i;
}

/* One "type=value": type lower-cased, value prepared and re-escaped. */
static int write_ava(const uint8_t *v, size_t len, size_t *pos, uint8_t *scratch,
		     struct arena *arena, struct dn_writer *w)
{
	size_t i = skip_spaces(v, len, *pos), type_start = i;
	while (i < len && v[i] != '=' && v[i] != ' ' && v[i] != ',' && v[i] != '+')
		i++;
	size_t type_end = i;
	i = skip_spaces(v, len, i);
	if (type_end == type_start || i >= len || v[i] != '=')
		return LUMEN_EMALFORMED;
	for (size_t t = type_start; t < type_end; t++) {
		uint8_t c = v[t];
		w->buf[w->n++] = (c >= 'A' && c <= 'Z') ? (uint8_t)(c + 32) : c;
	}
	w->buf[w->n++] = '=';

	size_t raw_len;
	i++;
	int rc = read_value(v, len, &i, scratch, &raw_len);
	if (rc != LUMEN_OK)
		return rc;
	struct ber_view prepared;
	rc = matching_prepare_string(scratch, raw_len, MATCHING_PREP_FOLD_CASE, arena, &prepared);
	if (rc != LUMEN_OK)
		return rc;
	write_escaped(w, prepared);
	*pos = i;
	return LUMEN_OK;
}

int matching_dn_light(const uint8_t *value, size_t len, struct arena *arena,
		      struct ber_view *out)
{
	/* Escaping triples a byte and folding grows one by at most 3/2. */
	struct dn_writer w = { .buf = arena_alloc(arena, len * 5 + 1) };
	uint8_t *scratch = arena_alloc(arena, len + 1);
	size_t pos = skip_spaces(value, len, 0);

	if (w.buf == NULL || scratch == NULL)
		return LUMEN_ENOMEM;
	while (pos < len) {
		int rc = write_ava(value, len, &pos, scratch, arena, &w);
		if (rc != LUMEN_OK)
			return rc;
		if (pos < len) {
			/* read_value stopped at ',' or '+': keep it, and a separator
			 * may not end the DN. */
			w.buf[w.n++] = value[pos++];
			if (skip_spaces(value, len, pos) == len)
				return LUMEN_EMALFORMED;
		}
	}
	out->ptr = w.buf;
	out->len = w.n;
	return LUMEN_OK;
}
