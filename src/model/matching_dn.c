/*
 * matching_dn.c — the light, schema-free distinguishedNameMatch normalizer
 * (matching_dn_light, contract in include/matching.h). dn.c owns real DN
 * handling; this exists so DN-syntax attribute values (member, seeAlso, ...)
 * get a deterministic key without the matching table depending on the schema.
 */
#include <string.h>

#include "dn.h"
#include "hex.h"
#include "lumen_error.h"
#include "matching.h"

struct dn_writer {
	uint8_t *buf;
	size_t n;
};

/* Escaped exactly as dn.c writes a normalized DN, so the keys agree. */
static void write_escaped(struct dn_writer *w, struct ber_view value)
{
	char *start = (char *)w->buf;
	w->n = (size_t)(dn_ndn_write_value(start + w->n, value) - start);
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
		if (hex_value(v[i + 1]) >= 0) {
			int byte = i + 2 < len ? hex_pair_value(v[i + 1], v[i + 2]) : -1;
			if (byte < 0)
				return LUMEN_EMALFORMED;
			scratch[n++] = (uint8_t)byte;
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
