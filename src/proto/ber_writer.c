/*
 * ber_writer.c — the growable BER writer (ber.h).
 *
 * A constructed element is opened with a one-octet length placeholder; when
 * it is closed and its contents turn out to need a long-form length, the
 * contents are moved up by the extra octets. Most LDAP elements are short,
 * so the move is rare and small, and the output is always minimal.
 */
#include "ber.h"

#include <stdlib.h>
#include <string.h>

/* Lengths the reader accepts: at most 4 octets. */
#define BER_LARGEST_CONTENT 0xffffffffu

int ber_writer_init(struct ber_writer *w, size_t initial_cap, size_t max)
{
	memset(w, 0, sizeof(*w));
	w->max = max;
	if (initial_cap == 0)
		return LUMEN_OK;
	w->buf = malloc(initial_cap);
	if (w->buf == NULL) {
		w->error = LUMEN_ENOMEM;
		return LUMEN_ENOMEM;
	}
	w->cap = initial_cap;
	return LUMEN_OK;
}

void ber_writer_reset(struct ber_writer *w)
{
	w->len = 0;
	w->error = LUMEN_OK;
	w->depth = 0;
}

void ber_writer_free(struct ber_writer *w)
{
	free(w->buf);
	w->buf = NULL;
	w->len = 0;
	w->cap = 0;
	w->depth = 0;
}

int ber_writer_error(const struct ber_writer *w)
{
	return w->error;
}

static void poison(struct ber_writer *w, int err)
{
	if (w->error == LUMEN_OK)
		w->error = err;
}

/* Make room for n more bytes. False (writer poisoned) when it cannot. */
static bool reserve(struct ber_writer *w, size_t n)
{
	if (w->error != LUMEN_OK)
		return false;
	if (n > SIZE_MAX - w->len || (w->max > 0 && w->len + n > w->max)) {
		poison(w, LUMEN_ELIMIT);
		return false;
	}
	size_t need = w->len + n;
	if (need <= w->cap)
		return true;
	size_t cap = w->cap > 0 ? w->cap : 256;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	if (w->max > 0 && cap > w->max)
		cap = w->max;
	uint8_t *grown = realloc(w->buf, cap);
	if (grown == NULL) {
		poison(w, LUMEN_ENOMEM);
		return false;
	}
	w->buf = grown;
	w->cap = cap;
	return true;
}

/*
 * Octets of a tag or length header: one when the short form holds value
 * (value < limit), else one plus a group of `bits` bits per step
 * (X.690 §8.1.2.4 high tag numbers, §8.1.3.5 long lengths). Inline with
 * constant arguments: the same code as two hand-written loops.
 */
static inline size_t header_octets(uint64_t value, uint64_t limit, unsigned bits)
{
	if (value < limit)
		return 1;
	size_t n = 1;
	for (; value > 0; value >>= bits)
		n++;
	return n;
}

static size_t tag_octets(ber_tag_t tag)
{
	return header_octets(BER_TAG_NUMBER(tag), 0x1f, 7);
}

static void put_tag(uint8_t *p, ber_tag_t tag, size_t octets)
{
	uint8_t first = (uint8_t)((BER_TAG_CLASS(tag) << 6) | (BER_TAG_CONSTRUCTED(tag) << 5));
	uint32_t number = BER_TAG_NUMBER(tag);
	if (octets == 1) {
		p[0] = first | (uint8_t)number;
		return;
	}
	p[0] = first | 0x1f;
	/* Base-128, most significant group first, continuation bit on all but the last. */
	for (size_t i = octets - 1; i >= 1; i--) {
		p[i] = (uint8_t)((number & 0x7f) | (i == octets - 1 ? 0 : 0x80));
		number >>= 7;
	}
}

static size_t length_octets(size_t length)
{
	return header_octets(length, 0x80, 8);
}

static void put_length(uint8_t *p, size_t length, size_t octets)
{
	if (octets == 1) {
		p[0] = (uint8_t)length;
		return;
	}
	p[0] = (uint8_t)(0x80 | (octets - 1));
	for (size_t i = octets - 1; i >= 1; i--) {
		p[i] = (uint8_t)(length & 0xff);
		length >>= 8;
	}
}

/* Append tag and length for n bytes of contents; false if poisoned. */
static bool put_header(struct ber_writer *w, ber_tag_t tag, size_t n)
{
	if (n > BER_LARGEST_CONTENT) {
		poison(w, LUMEN_ELIMIT);
		return false;
	}
	size_t tlen = tag_octets(tag), llen = length_octets(n);
	if (!reserve(w, tlen + llen + n))
		return false;
	put_tag(w->buf + w->len, tag, tlen);
	put_length(w->buf + w->len + tlen, n, llen);
	w->len += tlen + llen;
	return true;
}

void ber_write_octets(struct ber_writer *w, ber_tag_t tag, const void *p, size_t n)
{
	if (!put_header(w, tag, n))
		return;
	if (n > 0)
		memcpy(w->buf + w->len, p, n);
	w->len += n;
}

void ber_write_string(struct ber_writer *w, ber_tag_t tag, const char *s)
{
	ber_write_octets(w, tag, s, s != NULL ? strlen(s) : 0);
}

/* Octets of v's shortest two's complement form (X.690 §8.3.2). */
static size_t integer_octets(int64_t v)
{
	size_t n = 1;
	while (n < 8 && (v < -((int64_t)1 << (8 * n - 1)) || v >= ((int64_t)1 << (8 * n - 1))))
		n++;
	return n;
}

/* Every result carries two small integers and every entry one: written in
 * place, most significant octet first, without a copy through memcpy. */
void ber_write_integer(struct ber_writer *w, ber_tag_t tag, int64_t v)
{
	size_t n = integer_octets(v);
	if (!put_header(w, tag, n))
		return;
	uint64_t u = (uint64_t)v;
	for (size_t i = n; i > 0; i--) {
		w->buf[w->len + i - 1] = (uint8_t)(u & 0xff);
		u >>= 8;
	}
	w->len += n;
}

void ber_write_boolean(struct ber_writer *w, ber_tag_t tag, bool v)
{
	uint8_t octet = v ? 0xff : 0x00;
	ber_write_octets(w, tag, &octet, 1);
}

void ber_write_null(struct ber_writer *w, ber_tag_t tag)
{
	ber_write_octets(w, tag, NULL, 0);
}

void ber_write_raw(struct ber_writer *w, const void *p, size_t n)
{
	if (!reserve(w, n))
		return;
	if (n > 0)
		memcpy(w->buf + w->len, p, n);
	w->len += n;
}

void ber_begin(struct ber_writer *w, ber_tag_t tag)
{
	if (w->error != LUMEN_OK)
		return;
	if (w->depth >= BER_MAX_NESTING) {
		poison(w, LUMEN_ELIMIT);
		return;
	}
	size_t tlen = tag_octets(tag);
	if (!reserve(w, tlen + 1))
		return;
	put_tag(w->buf + w->len, tag, tlen);
	w->len += tlen;
	/* Remember where the one-octet placeholder length sits. */
	w->open[w->depth++] = w->len;
	w->buf[w->len++] = 0;
}

void ber_end(struct ber_writer *w)
{
	if (w->error != LUMEN_OK)
		return;
	if (w->depth == 0) {
		poison(w, LUMEN_EINVAL);
		return;
	}
	size_t at = w->open[--w->depth];
	size_t content_start = at + 1;
	size_t length = w->len - content_start;
	if (length > BER_LARGEST_CONTENT) {
		poison(w, LUMEN_ELIMIT);
		return;
	}
	size_t llen = length_octets(length);
	if (llen > 1) {
		if (!reserve(w, llen - 1))
			return;
		memmove(w->buf + content_start + llen - 1, w->buf + content_start, length);
		w->len += llen - 1;
	}
	put_length(w->buf + at, length, llen);
}
