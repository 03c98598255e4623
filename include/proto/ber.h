/*
 * ber.h — strict BER reader and growable BER writer (proto layer).
 *
 * Reader: works on a caller-owned buffer and hands out zero-copy views
 * (struct ber_view) into it; nothing is allocated. The rules are LDAP's
 * (RFC 4511 §5.1): definite lengths only, at most 4 length octets (a
 * non-minimal long form such as 0x84 00 00 00 05 is accepted: common
 * encoders emit it), tag numbers that fit 29 bits (all ber_tag_t holds) in
 * their shortest form, minimal INTEGER encodings of at most 8 octets,
 * BOOLEAN of exactly one octet (any non-zero octet is TRUE). Every length
 * is checked against what remains of the enclosing element before it is
 * used. A short buffer is told apart
 * from a malformed one: LUMEN_EINCOMPLETE vs LUMEN_EMALFORMED.
 *
 * Writer: owns its buffer (grown with realloc, kept across ber_writer_reset
 * so connection and worker buffers are recycled). Constructed elements are
 * opened with ber_begin and closed with ber_end, which fixes up a minimal
 * length. The first failure poisons the writer: later calls do nothing and
 * ber_writer_error() reports the first error; the content must be discarded.
 *
 * Thread-safety: readers and writers are plain values; one thread each.
 *
 * Caveats:
 *  - views point into the reader's input: keep the input alive while they live.
 *  - ber_end must match ber_begin; at most BER_MAX_NESTING open elements.
 */
#ifndef LUMEN_BER_H
#define LUMEN_BER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lumen_error.h"

/*
 * A tag is the class, the constructed bit and the number packed in one word:
 *   bits 31..30 class, bit 29 constructed, bits 28..0 number.
 */
typedef uint32_t ber_tag_t;

#define BER_CLASS_UNIVERSAL   0u
#define BER_CLASS_APPLICATION 1u
#define BER_CLASS_CONTEXT     2u
#define BER_CLASS_PRIVATE     3u

#define BER_TAG(cls, constructed, number) \
	((ber_tag_t)(((cls) << 30) | ((constructed) ? (1u << 29) : 0u) | ((number) & 0x1fffffffu)))
#define BER_TAG_CLASS(t)       ((t) >> 30)
#define BER_TAG_CONSTRUCTED(t) (((t) >> 29) & 1u)
#define BER_TAG_NUMBER(t)      ((t) & 0x1fffffffu)

#define BER_TAG_BOOLEAN     BER_TAG(BER_CLASS_UNIVERSAL, 0, 1)
#define BER_TAG_INTEGER     BER_TAG(BER_CLASS_UNIVERSAL, 0, 2)
#define BER_TAG_BIT_STRING  BER_TAG(BER_CLASS_UNIVERSAL, 0, 3)
#define BER_TAG_OCTET_STRING BER_TAG(BER_CLASS_UNIVERSAL, 0, 4)
#define BER_TAG_NULL        BER_TAG(BER_CLASS_UNIVERSAL, 0, 5)
#define BER_TAG_ENUMERATED  BER_TAG(BER_CLASS_UNIVERSAL, 0, 10)
#define BER_TAG_SEQUENCE    BER_TAG(BER_CLASS_UNIVERSAL, 1, 16)
#define BER_TAG_SET         BER_TAG(BER_CLASS_UNIVERSAL, 1, 17)
#define BER_TAG_CONTEXT(n)      BER_TAG(BER_CLASS_CONTEXT, 0, n)
#define BER_TAG_CONTEXT_CONS(n) BER_TAG(BER_CLASS_CONTEXT, 1, n)
#define BER_TAG_APP(n)          BER_TAG(BER_CLASS_APPLICATION, 0, n)
#define BER_TAG_APP_CONS(n)     BER_TAG(BER_CLASS_APPLICATION, 1, n)

#define BER_MAX_NESTING 64

/* A borrowed byte range; never NUL-terminated. */
struct ber_view {
	const uint8_t *ptr;
	size_t len;
};

/* True if the two views hold the same bytes (inline: dn2id and the
 * filter compare with it per value). */
static inline bool ber_view_eq(struct ber_view a, struct ber_view b)
{
	return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}
/* True if the view's bytes equal the NUL-terminated string s exactly. */
bool ber_view_eq_str(struct ber_view v, const char *s);
/* ASCII case-insensitive comparison with a NUL-terminated string. */
bool ber_view_eq_str_nocase(struct ber_view v, const char *s);

/* ---------------------------------------------------------------- reader */

struct ber_reader {
	const uint8_t *pos;
	const uint8_t *end;
};

/* One element as read: its tag and a view of its contents. */
struct ber_element {
	ber_tag_t tag;
	struct ber_view value;
};

void ber_reader_init(struct ber_reader *r, const void *buf, size_t len);
static inline bool ber_reader_at_end(const struct ber_reader *r)
{
	return r->pos >= r->end;
}

/*
 * For decoders built on the reader, which report the first reason they
 * failed (a static string) in *diagnostic: keeps why unless a reason is
 * already there (an inner failure is the more precise one), returns rc.
 */
static inline int ber_fail(const char **diagnostic, int rc, const char *why)
{
	if (*diagnostic == NULL)
		*diagnostic = why;
	return rc;
}

/* LUMEN_OK when r is used up, else ber_fail with LUMEN_EMALFORMED and why. */
static inline int ber_expect_end(const char **diagnostic, const struct ber_reader *r,
				 const char *why)
{
	return ber_reader_at_end(r) ? LUMEN_OK : ber_fail(diagnostic, LUMEN_EMALFORMED, why);
}

/*
 * Frame one element at the start of buf (a PDU on a stream): on success sets
 * *total to header + contents length. LUMEN_EINCOMPLETE: need more bytes;
 * LUMEN_EMALFORMED: bad tag or length (incl. indefinite); LUMEN_ELIMIT: the
 * element would be larger than max_len (0 = no bound), reported as soon as
 * the header is in, before the contents arrive.
 */
int ber_frame(const void *buf, size_t len, size_t max_len, size_t *total);

/* Read the next tag without consuming anything. Errors as ber_read_element. */
int ber_peek_tag(const struct ber_reader *r, ber_tag_t *tag);

/*
 * Read the next element (any tag). LUMEN_EINCOMPLETE if the reader ends
 * first (inside a fully framed PDU this means malformed: callers map it),
 * LUMEN_EMALFORMED for a bad tag or length.
 */
static inline int ber_read_element(struct ber_reader *r, struct ber_element *el);

/*
 * Typed reads: each checks that the next tag equals `tag` (LUMEN_EMALFORMED if
 * not) and that the contents are a valid encoding of the type.
 */
static inline int ber_read_octets(struct ber_reader *r, ber_tag_t tag, struct ber_view *out);
int ber_read_integer(struct ber_reader *r, ber_tag_t tag, int64_t *out);
/* As ber_read_integer, but the value must lie in [min, max]. */
int ber_read_int_range(struct ber_reader *r, ber_tag_t tag, int64_t min,
		       int64_t max, int64_t *out);
int ber_read_boolean(struct ber_reader *r, ber_tag_t tag, bool *out);
int ber_read_null(struct ber_reader *r, ber_tag_t tag);
/* Enter a constructed element: *inner reads its contents; r moves past it. */
static inline int ber_enter(struct ber_reader *r, ber_tag_t tag, struct ber_reader *inner);

/*
 * The general readers behind ber_read_octets and ber_enter. Those two read
 * the form most elements take (a one-octet tag, a length under 128) inline:
 * decoding a stored entry or a request reads dozens of elements, and a call
 * per element cost as much as the read. Both paths give the same results.
 */
int ber_read_octets_general(struct ber_reader *r, ber_tag_t tag, struct ber_view *out);
int ber_enter_general(struct ber_reader *r, ber_tag_t tag, struct ber_reader *inner);
int ber_read_element_general(struct ber_reader *r, struct ber_element *el);

/* The next element if it has the short form, whatever its tag. */
static inline bool ber_take_short_any(struct ber_reader *r, struct ber_element *el)
{
	const uint8_t *p = r->pos;
	size_t avail = (size_t)(r->end - p);
	if (avail < 2 || (p[0] & 0x1fu) == 0x1fu || p[1] >= 0x80 || p[1] > avail - 2)
		return false;
	el->tag = BER_TAG((uint32_t)(p[0] >> 6), (uint32_t)(p[0] >> 5) & 1u, (uint32_t)(p[0] & 0x1fu));
	el->value.ptr = p + 2;
	el->value.len = p[1];
	r->pos = p + 2 + p[1];
	return true;
}

static inline int ber_read_element(struct ber_reader *r, struct ber_element *el)
{
	return ber_take_short_any(r, el) ? LUMEN_OK : ber_read_element_general(r, el);
}

/* Take the next element if it has the short form and carries `tag`. */
static inline bool ber_take_short(struct ber_reader *r, ber_tag_t tag, struct ber_view *out)
{
	const uint8_t *p = r->pos;
	size_t avail = (size_t)(r->end - p);
	if (BER_TAG_NUMBER(tag) >= 0x1fu || avail < 2 || p[1] >= 0x80 || p[1] > avail - 2)
		return false;
	if (p[0] != (uint8_t)((BER_TAG_CLASS(tag) << 6) | (BER_TAG_CONSTRUCTED(tag) << 5) |
			      BER_TAG_NUMBER(tag)))
		return false;
	out->ptr = p + 2;
	out->len = p[1];
	r->pos = p + 2 + p[1];
	return true;
}

static inline int ber_read_octets(struct ber_reader *r, ber_tag_t tag, struct ber_view *out)
{
	return ber_take_short(r, tag, out) ? LUMEN_OK : ber_read_octets_general(r, tag, out);
}

static inline int ber_enter(struct ber_reader *r, ber_tag_t tag, struct ber_reader *inner)
{
	struct ber_view contents;
	if (!ber_take_short(r, tag, &contents))
		return ber_enter_general(r, tag, inner);
	inner->pos = contents.ptr;
	inner->end = contents.ptr + contents.len;
	return LUMEN_OK;
}

/* Decode INTEGER contents (no tag/length); minimal, at most 8 octets. */
int ber_decode_integer(struct ber_view contents, int64_t *out);

/* ---------------------------------------------------------------- writer */

struct ber_writer {
	uint8_t *buf;
	size_t len;
	size_t cap;
	size_t max;                         /* 0 = unbounded */
	int error;                          /* first error, poisons the writer */
	unsigned depth;
	size_t open[BER_MAX_NESTING];       /* offsets of open elements' headers */
};

/* initial_cap may be 0. max bounds the buffer (LUMEN_ELIMIT beyond); 0 = none. */
int ber_writer_init(struct ber_writer *w, size_t initial_cap, size_t max);
/* Empty the writer, keep its buffer, clear the error. */
void ber_writer_reset(struct ber_writer *w);
void ber_writer_free(struct ber_writer *w);
/* LUMEN_OK or the first error that poisoned the writer. */
int ber_writer_error(const struct ber_writer *w);

void ber_write_integer(struct ber_writer *w, ber_tag_t tag, int64_t v);
void ber_write_boolean(struct ber_writer *w, ber_tag_t tag, bool v);
void ber_write_null(struct ber_writer *w, ber_tag_t tag);
void ber_write_octets(struct ber_writer *w, ber_tag_t tag, const void *p, size_t n);
void ber_write_string(struct ber_writer *w, ber_tag_t tag, const char *s);
/* Append already-encoded bytes (e.g. a cached, encoded element). */
void ber_write_raw(struct ber_writer *w, const void *p, size_t n);
void ber_begin(struct ber_writer *w, ber_tag_t tag);
void ber_end(struct ber_writer *w);

#endif
