/*
 * dn_parse.c — RFC 4514 string to struct dn (dn.h).
 *
 * One pass over a private copy of the text. The parse costs three arena
 * allocations whatever the DN: the text copy plus a scratch area of the same
 * size for unescaped values (a value never unescapes to more bytes than it
 * was written with), the AVA array and the RDN array (both sized by an upper
 * bound derived from the length, see array_bounds).
 * Values are then normalized by their type's equality rule, which allocates
 * what the rule needs.
 */
#include "dn.h"

#include <string.h>

#include "hex.h"
#include "lumen_error.h"
#include "unicode.h"

struct dn_parser {
	const struct schema *schema;
	struct arena *arena;
	const char *text;       /* arena copy of the input */
	size_t len;
	size_t pos;
	uint8_t *values;        /* scratch for unescaped values, len bytes */
	size_t values_used;
};

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool at_separator(const struct dn_parser *p)
{
	if (p->pos >= p->len)
		return true;
	char c = p->text[p->pos];
	return c == ',' || c == ';' || c == '+';
}

static void skip_spaces(struct dn_parser *p)
{
	while (p->pos < p->len && p->text[p->pos] == ' ')
		p->pos++;
}

/* Characters RFC 4514 lets a backslash escape as themselves. */
static bool is_escapable(char c)
{
	return strchr(" \"#+,;<=>\\", c) != NULL && c != '\0';
}

/*
 * Consume one escape at p->pos (which is a backslash) and store the byte it
 * stands for. LUMEN_EMALFORMED for a backslash at the end, a lone hex digit
 * or a character that may not be escaped.
 */
static int parse_escape(struct dn_parser *p, uint8_t *byte)
{
	if (p->pos + 1 >= p->len)
		return LUMEN_EMALFORMED;
	char c = p->text[p->pos + 1];
	int high = hex_value(c);
	if (high >= 0) {
		int low = p->pos + 2 < p->len ? hex_value(p->text[p->pos + 2]) : -1;
		if (low < 0)
			return LUMEN_EMALFORMED;
		*byte = (uint8_t)(high << 4 | low);
		p->pos += 3;
		return LUMEN_OK;
	}
	if (!is_escapable(c))
		return LUMEN_EMALFORMED;
	*byte = (uint8_t)c;
	p->pos += 2;
	return LUMEN_OK;
}

/*
 * attributeType: a keystring (ALPHA *(ALPHA / DIGIT / '-')) or a numeric
 * OID, resolved through the schema. LUMEN_EMALFORMED when empty or badly
 * formed, LUMEN_ENOTFOUND when the schema does not know it.
 */
static int parse_type(struct dn_parser *p, struct dn_ava *ava)
{
	size_t start = p->pos;

	if (p->pos < p->len && is_alpha(p->text[p->pos])) {
		while (p->pos < p->len && (is_alpha(p->text[p->pos]) ||
					   is_digit(p->text[p->pos]) || p->text[p->pos] == '-'))
			p->pos++;
	} else if (p->pos < p->len && is_digit(p->text[p->pos])) {
		bool after_dot = false;
		while (p->pos < p->len && (is_digit(p->text[p->pos]) || p->text[p->pos] == '.')) {
			bool dot = p->text[p->pos] == '.';
			if (dot && after_dot)
				return LUMEN_EMALFORMED;
			after_dot = dot;
			p->pos++;
		}
		if (after_dot)
			return LUMEN_EMALFORMED;
	} else {
		return LUMEN_EMALFORMED;
	}
	ava->attr.ptr = (const uint8_t *)p->text + start;
	ava->attr.len = p->pos - start;
	ava->type = schema_attribute_type(p->schema, p->text + start, ava->attr.len);
	return ava->type != NULL ? LUMEN_OK : LUMEN_ENOTFOUND;
}

/* Universal, primitive string types a '#' value may carry. */
static bool is_string_tag(ber_tag_t tag)
{
	if (BER_TAG_CLASS(tag) != BER_CLASS_UNIVERSAL || BER_TAG_CONSTRUCTED(tag))
		return false;
	switch (BER_TAG_NUMBER(tag)) {
	case 4:  /* OCTET STRING */
	case 12: /* UTF8String */
	case 18: /* NumericString */
	case 19: /* PrintableString */
	case 20: /* TeletexString */
	case 22: /* IA5String */
	case 26: /* VisibleString */
	case 27: /* GeneralString */
		return true;
	default:
		return false;
	}
}

/*
 * '#' hexstring: the hex of one BER string element; the value is its
 * contents. LUMEN_EMALFORMED for odd or missing hex digits, anything but
 * spaces before the next separator, or BER that is not exactly one string
 * element.
 */
static int parse_hex_value(struct dn_parser *p, struct dn_ava *ava)
{
	uint8_t *out = p->values + p->values_used;
	size_t n = 0;
	int byte;

	p->pos++; /* '#' */
	while (p->pos + 1 < p->len &&
	       (byte = hex_pair_value(p->text[p->pos], p->text[p->pos + 1])) >= 0) {
		out[n++] = (uint8_t)byte;
		p->pos += 2;
	}
	skip_spaces(p);
	if (n == 0 || !at_separator(p))
		return LUMEN_EMALFORMED;

	struct ber_reader reader;
	struct ber_element element;
	ber_reader_init(&reader, out, n);
	if (ber_read_element(&reader, &element) != LUMEN_OK || !ber_reader_at_end(&reader) ||
	    !is_string_tag(element.tag))
		return LUMEN_EMALFORMED;
	if (BER_TAG_NUMBER(element.tag) == 12 &&
	    utf8_validate(element.value.ptr, element.value.len) != LUMEN_OK)
		return LUMEN_EMALFORMED;
	ava->value = element.value;
	p->values_used += n;
	return LUMEN_OK;
}

/*
 * RFC 2253 quoted value: everything up to the closing quote is literal
 * except escapes. LUMEN_EMALFORMED if unterminated, followed by anything
 * but spaces and a separator, or not UTF-8.
 */
static int parse_quoted_value(struct dn_parser *p, struct dn_ava *ava)
{
	uint8_t *out = p->values + p->values_used;
	size_t n = 0;
	int rc;

	p->pos++; /* opening quote */
	for (;;) {
		if (p->pos >= p->len)
			return LUMEN_EMALFORMED;
		char c = p->text[p->pos];
		if (c == '"')
			break;
		if (c == '\\') {
			if ((rc = parse_escape(p, &out[n])) != LUMEN_OK)
				return rc;
			n++;
			continue;
		}
		if (c == '\0')
			return LUMEN_EMALFORMED;
		out[n++] = (uint8_t)c;
		p->pos++;
	}
	p->pos++; /* closing quote */
	skip_spaces(p);
	if (!at_separator(p) || utf8_validate(out, n) != LUMEN_OK)
		return LUMEN_EMALFORMED;
	ava->value.ptr = out;
	ava->value.len = n;
	p->values_used += n;
	return LUMEN_OK;
}

/* How parse_string_value treats each byte of a value (zero: copy it). */
enum value_byte {
	VALUE_BYTE_PLAIN = 0,
	VALUE_BYTE_END,         /* ',' ';' '+' end the value */
	VALUE_BYTE_ESCAPE,
	VALUE_BYTE_FORBIDDEN,   /* must be escaped: '"' '<' '>' NUL */
};

static const uint8_t value_byte_class[256] = {
	['\0'] = VALUE_BYTE_FORBIDDEN, ['"'] = VALUE_BYTE_FORBIDDEN,
	['<'] = VALUE_BYTE_FORBIDDEN, ['>'] = VALUE_BYTE_FORBIDDEN,
	[','] = VALUE_BYTE_END, [';'] = VALUE_BYTE_END, ['+'] = VALUE_BYTE_END,
	['\\'] = VALUE_BYTE_ESCAPE,
};

/*
 * The RFC 4514 string form; unescaped trailing spaces are insignificant.
 * LUMEN_EMALFORMED for a bad escape, a raw '"', '<', '>' or NUL, or a value
 * that is not UTF-8 once unescaped. This is the hot loop of every DN: runs
 * of plain bytes are found with a byte table and copied at once, and UTF-8
 * is validated only when a byte above 0x7f was seen.
 */
static int parse_string_value(struct dn_parser *p, struct dn_ava *ava)
{
	const uint8_t *text = (const uint8_t *)p->text;
	uint8_t *out = p->values + p->values_used;
	size_t pos = p->pos, len = p->len, n = 0, escaped_end = 0;
	uint8_t seen = 0; /* OR of every byte: bit 7 set means non-ASCII */
	int rc;

	while (pos < len) {
		size_t run = pos;
		while (pos < len && value_byte_class[text[pos]] == VALUE_BYTE_PLAIN)
			seen |= text[pos++];
		memcpy(out + n, text + run, pos - run);
		n += pos - run;
		if (pos == len || value_byte_class[text[pos]] == VALUE_BYTE_END)
			break;
		if (value_byte_class[text[pos]] == VALUE_BYTE_FORBIDDEN)
			return LUMEN_EMALFORMED;
		p->pos = pos;
		if ((rc = parse_escape(p, &out[n])) != LUMEN_OK)
			return rc;
		seen |= out[n];
		escaped_end = ++n;
		pos = p->pos;
	}
	p->pos = pos;
	while (n > escaped_end && out[n - 1] == ' ')
		n--;
	if ((seen & 0x80) != 0 && utf8_validate(out, n) != LUMEN_OK)
		return LUMEN_EMALFORMED;
	ava->value.ptr = out;
	ava->value.len = n;
	p->values_used += n;
	return LUMEN_OK;
}

/* Equality-normalize one value; a value the rule rejects is LUMEN_ESCHEMA. */
static int normalize_value(struct dn_parser *p, struct dn_ava *ava)
{
	const struct matching_rule *rule = ava->type->equality;

	if (rule == NULL || rule->normalize == NULL) {
		ava->normalized = ava->value;
		return LUMEN_OK;
	}
	int rc = rule->normalize(ava->value.ptr, ava->value.len, p->arena, &ava->normalized);
	return rc == LUMEN_EMALFORMED ? LUMEN_ESCHEMA : rc;
}

/* type '=' value, with insignificant spaces around each part. */
static int parse_ava(struct dn_parser *p, struct dn_ava *ava)
{
	int rc;

	skip_spaces(p);
	if ((rc = parse_type(p, ava)) != LUMEN_OK)
		return rc;
	skip_spaces(p);
	if (p->pos >= p->len || p->text[p->pos] != '=')
		return LUMEN_EMALFORMED;
	p->pos++;
	skip_spaces(p);
	if (p->pos < p->len && p->text[p->pos] == '#')
		rc = parse_hex_value(p, ava);
	else if (p->pos < p->len && p->text[p->pos] == '"')
		rc = parse_quoted_value(p, ava);
	else
		rc = parse_string_value(p, ava);
	if (rc != LUMEN_OK)
		return rc;
	return normalize_value(p, ava);
}

/*
 * Upper bound of the AVAs (and so RDNs) in len bytes: the shortest AVA is
 * "a=" and AVAs are separated by one byte, so n AVAs take 3n - 1 bytes.
 * Sizing the arrays by length instead of counting separators costs unused
 * arena space (bounded by DN_MAX_AVAS) but no pass over the text.
 */
static void array_bounds(size_t len, size_t *max_avas, size_t *max_rdns)
{
	size_t bound = (len + 1) / 3 + 1;

	*max_avas = bound < DN_MAX_AVAS ? bound : DN_MAX_AVAS;
	*max_rdns = bound < DN_MAX_RDNS ? bound : DN_MAX_RDNS;
}

static bool is_all_spaces(const char *text, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (text[i] != ' ')
			return false;
	return true;
}

/* Set up the parser's text copy, value scratch and the output arrays. */
static int parser_init(struct dn_parser *p, const struct schema *s, const char *text,
		       size_t len, struct arena *arena, struct dn *out,
		       size_t *max_avas, size_t *max_rdns)
{
	char *copy = arena_alloc(arena, 2 * len);
	if (copy == NULL)
		return LUMEN_ENOMEM;
	memcpy(copy, text, len);
	p->schema = s;
	p->arena = arena;
	p->text = copy;
	p->len = len;
	p->pos = 0;
	p->values = (uint8_t *)copy + len;
	p->values_used = 0;

	array_bounds(len, max_avas, max_rdns);
	out->rdns = arena_alloc(arena, *max_rdns * sizeof(*out->rdns));
	struct dn_ava *avas = arena_alloc(arena, *max_avas * sizeof(*avas));
	if (out->rdns == NULL || avas == NULL)
		return LUMEN_ENOMEM;
	out->rdns[0].avas = avas;
	out->rdns[0].n_avas = 0;
	return LUMEN_OK;
}

/*
 * Errors: see dn.h — LUMEN_EMALFORMED, LUMEN_ENOTFOUND, LUMEN_ESCHEMA,
 * LUMEN_ELIMIT, LUMEN_ENOMEM. On error *out is left empty.
 */
int dn_parse(const struct schema *s, const char *text, size_t len,
	     struct arena *arena, struct dn *out)
{
	struct dn_parser p;
	size_t max_avas, max_rdns, n_avas = 0;
	int rc;

	out->rdns = NULL;
	out->n_rdns = 0;
	if (is_all_spaces(text, len))
		return LUMEN_OK;
	if ((rc = parser_init(&p, s, text, len, arena, out, &max_avas, &max_rdns)) != LUMEN_OK)
		goto fail;

	struct dn_ava *avas = out->rdns[0].avas;
	struct dn_rdn *rdn = &out->rdns[0];
	out->n_rdns = 1;
	for (;;) {
		if (n_avas == max_avas) {
			rc = LUMEN_ELIMIT;
			goto fail;
		}
		if ((rc = parse_ava(&p, &avas[n_avas])) != LUMEN_OK)
			goto fail;
		n_avas++;
		rdn->n_avas++;
		if (p.pos >= p.len)
			break;
		char separator = p.text[p.pos++];
		if (separator == '+')
			continue;
		if (out->n_rdns == max_rdns) {
			rc = LUMEN_ELIMIT;
			goto fail;
		}
		rdn = &out->rdns[out->n_rdns++];
		rdn->avas = &avas[n_avas];
		rdn->n_avas = 0;
	}
	return LUMEN_OK;

fail:
	out->rdns = NULL;
	out->n_rdns = 0;
	return rc;
}
