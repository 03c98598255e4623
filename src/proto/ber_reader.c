/*
 * ber_reader.c — the strict BER reader (ber.h).
 *
 * Everything is parsed in place; a header is validated completely before its
 * length is trusted, and a length is compared with what remains before any
 * pointer arithmetic, so a hostile length can never point outside the input.
 */
#include "ber.h"

#include <string.h>

/* LDAP allows at most 4 length octets (2^32 - 1 bytes). */
#define BER_MAX_LENGTH_OCTETS 4
/* 29 bits of tag number fit ber_tag_t: five base-128 octets after the first. */
#define BER_MAX_TAG_NUMBER_OCTETS 5

bool ber_view_eq_str(struct ber_view v, const char *s)
{
	size_t n = strlen(s);
	return v.len == n && (n == 0 || memcmp(v.ptr, s, n) == 0);
}

static unsigned char ascii_lower(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') ? (unsigned char)(c - 'A' + 'a') : c;
}

bool ber_view_eq_str_nocase(struct ber_view v, const char *s)
{
	size_t n = strlen(s);
	if (v.len != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (ascii_lower(v.ptr[i]) != ascii_lower((unsigned char)s[i]))
			return false;
	}
	return true;
}

void ber_reader_init(struct ber_reader *r, const void *buf, size_t len)
{
	r->pos = buf;
	/* Offsetting a NULL pointer, even by zero, is undefined. */
	r->end = len > 0 ? r->pos + len : r->pos;
}

/*
 * Parse an identifier. Returns octets used via *used. EINCOMPLETE if the
 * buffer ends inside it; EMALFORMED for a non-minimal or oversized number.
 */
static int parse_tag(const uint8_t *p, size_t avail, ber_tag_t *tag, size_t *used)
{
	if (avail == 0)
		return LUMEN_EINCOMPLETE;
	uint32_t cls = p[0] >> 6;
	uint32_t constructed = (p[0] >> 5) & 1u;
	uint64_t number = p[0] & 0x1fu;
	size_t i = 1;
	if (number == 0x1f) {
		number = 0;
		for (;;) {
			if (i >= avail)
				return LUMEN_EINCOMPLETE;
			uint8_t b = p[i++];
			/* A leading 0x80 octet would only pad the number. */
			if (i == 2 && b == 0x80)
				return LUMEN_EMALFORMED;
			if (i > 1 + BER_MAX_TAG_NUMBER_OCTETS)
				return LUMEN_EMALFORMED;
			number = (number << 7) | (b & 0x7fu);
			if ((b & 0x80) == 0)
				break;
		}
		/* Numbers below 31 must use the one-octet form. */
		if (number < 0x1f || number > 0x1fffffffu)
			return LUMEN_EMALFORMED;
	}
	*tag = BER_TAG(cls, constructed, (uint32_t)number);
	*used = i;
	return LUMEN_OK;
}

/*
 * Parse a definite length of at most 4 octets. Non-minimal long forms are
 * accepted because widely deployed encoders always emit 0x84 lengths.
 */
static int parse_length(const uint8_t *p, size_t avail, size_t *length, size_t *used)
{
	if (avail == 0)
		return LUMEN_EINCOMPLETE;
	if (p[0] < 0x80) {
		*length = p[0];
		*used = 1;
		return LUMEN_OK;
	}
	size_t octets = p[0] & 0x7fu;
	/* 0x80 is the indefinite form; 0xff is reserved; >4 octets is too big. */
	if (octets == 0 || octets > BER_MAX_LENGTH_OCTETS)
		return LUMEN_EMALFORMED;
	if (avail < 1 + octets)
		return LUMEN_EINCOMPLETE;
	uint64_t value = 0;
	for (size_t i = 1; i <= octets; i++)
		value = (value << 8) | p[i];
	if (value > SIZE_MAX)
		return LUMEN_ELIMIT;
	*length = (size_t)value;
	*used = 1 + octets;
	return LUMEN_OK;
}

static int parse_header(const uint8_t *p, size_t avail, ber_tag_t *tag,
			size_t *header_len, size_t *content_len)
{
	size_t tag_len, length_len;
	int rc = parse_tag(p, avail, tag, &tag_len);
	if (rc != LUMEN_OK)
		return rc;
	rc = parse_length(p + tag_len, avail - tag_len, content_len, &length_len);
	if (rc != LUMEN_OK)
		return rc;
	*header_len = tag_len + length_len;
	return LUMEN_OK;
}

int ber_frame(const void *buf, size_t len, size_t max_len, size_t *total)
{
	ber_tag_t tag;
	size_t header_len, content_len;
	int rc = parse_header(buf, len, &tag, &header_len, &content_len);
	if (rc != LUMEN_OK)
		return rc;
	if (content_len > SIZE_MAX - header_len)
		return LUMEN_ELIMIT;
	size_t whole = header_len + content_len;
	/* Refuse an oversized PDU before waiting for (or buffering) its bytes. */
	if (max_len > 0 && whole > max_len)
		return LUMEN_ELIMIT;
	if (whole > len)
		return LUMEN_EINCOMPLETE;
	*total = whole;
	return LUMEN_OK;
}

/* Parse the next element without moving r; *next is where it ends. */
static int next_element(const struct ber_reader *r, struct ber_element *el,
			const uint8_t **next)
{
	size_t avail = (size_t)(r->end - r->pos);
	size_t header_len, content_len;
	const uint8_t *p = r->pos;
	/* Most elements of a request or a stored entry have a one-octet tag and
	 * a short length: read them here (decoding an entry reads dozens). */
	if (avail >= 2 && (p[0] & 0x1fu) != 0x1fu && p[1] < 0x80) {
		if (p[1] > avail - 2)
			return LUMEN_EINCOMPLETE;
		el->tag = BER_TAG((uint32_t)(p[0] >> 6), (uint32_t)(p[0] >> 5) & 1u,
				  (uint32_t)(p[0] & 0x1fu));
		el->value.ptr = p + 2;
		el->value.len = p[1];
		*next = el->value.ptr + el->value.len;
		return LUMEN_OK;
	}
	int rc = parse_header(p, avail, &el->tag, &header_len, &content_len);
	if (rc == LUMEN_ELIMIT)
		return LUMEN_EINCOMPLETE; /* longer than any buffer: cannot fit */
	if (rc != LUMEN_OK)
		return rc;
	if (content_len > avail - header_len)
		return LUMEN_EINCOMPLETE;
	el->value.ptr = r->pos + header_len;
	el->value.len = content_len;
	*next = el->value.ptr + content_len;
	return LUMEN_OK;
}

int ber_peek_tag(const struct ber_reader *r, ber_tag_t *tag)
{
	struct ber_element el;
	const uint8_t *next;
	int rc = next_element(r, &el, &next);
	if (rc == LUMEN_OK)
		*tag = el.tag;
	return rc;
}

int ber_read_element_general(struct ber_reader *r, struct ber_element *el)
{
	const uint8_t *next;
	int rc = next_element(r, el, &next);
	if (rc == LUMEN_OK)
		r->pos = next;
	return rc;
}

/* Read an element that must carry `tag`; r moves only on success. */
static int read_tagged(struct ber_reader *r, ber_tag_t tag, struct ber_view *value)
{
	struct ber_element el;
	const uint8_t *next;
	int rc = next_element(r, &el, &next);
	if (rc != LUMEN_OK)
		return rc;
	if (el.tag != tag)
		return LUMEN_EMALFORMED;
	*value = el.value;
	r->pos = next;
	return LUMEN_OK;
}

int ber_read_octets_general(struct ber_reader *r, ber_tag_t tag, struct ber_view *out)
{
	return read_tagged(r, tag, out);
}

int ber_decode_integer(struct ber_view contents, int64_t *out)
{
	const uint8_t *p = contents.ptr;
	if (contents.len == 0 || contents.len > 8)
		return LUMEN_EMALFORMED;
	/* Nine leading equal bits mean the first octet was padding. */
	if (contents.len > 1 && ((p[0] == 0x00 && (p[1] & 0x80) == 0) ||
				 (p[0] == 0xff && (p[1] & 0x80) != 0)))
		return LUMEN_EMALFORMED;
	/* Start from the sign so shifting in octets sign-extends. */
	uint64_t value = (p[0] & 0x80) ? UINT64_MAX : 0;
	for (size_t i = 0; i < contents.len; i++)
		value = (value << 8) | p[i];
	*out = (int64_t)value;
	return LUMEN_OK;
}

int ber_read_integer(struct ber_reader *r, ber_tag_t tag, int64_t *out)
{
	struct ber_reader saved = *r;
	struct ber_view contents;
	int rc = read_tagged(r, tag, &contents);
	if (rc == LUMEN_OK)
		rc = ber_decode_integer(contents, out);
	if (rc != LUMEN_OK)
		*r = saved;
	return rc;
}

int ber_read_int_range(struct ber_reader *r, ber_tag_t tag, int64_t min,
		       int64_t max, int64_t *out)
{
	struct ber_reader saved = *r;
	int64_t value;
	int rc = ber_read_integer(r, tag, &value);
	if (rc != LUMEN_OK)
		return rc;
	if (value < min || value > max) {
		*r = saved;
		return LUMEN_EMALFORMED;
	}
	*out = value;
	return LUMEN_OK;
}

/* A primitive of exactly len octets; the reader is left as it was if not. */
static int read_fixed(struct ber_reader *r, ber_tag_t tag, size_t len, struct ber_view *contents)
{
	struct ber_reader saved = *r;
	int rc = read_tagged(r, tag, contents);
	if (rc == LUMEN_OK && contents->len != len) {
		*r = saved;
		rc = LUMEN_EMALFORMED;
	}
	return rc;
}

int ber_read_boolean(struct ber_reader *r, ber_tag_t tag, bool *out)
{
	struct ber_view contents;
	int rc = read_fixed(r, tag, 1, &contents);
	/* BER (unlike DER) lets any non-zero octet mean TRUE. */
	if (rc == LUMEN_OK)
		*out = contents.ptr[0] != 0;
	return rc;
}

int ber_read_null(struct ber_reader *r, ber_tag_t tag)
{
	struct ber_view contents;
	return read_fixed(r, tag, 0, &contents);
}

int ber_enter_general(struct ber_reader *r, ber_tag_t tag, struct ber_reader *inner)
{
	struct ber_view contents;
	int rc = read_tagged(r, tag, &contents);
	if (rc != LUMEN_OK)
		return rc;
	ber_reader_init(inner, contents.ptr, contents.len);
	return LUMEN_OK;
}
