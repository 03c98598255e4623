/*
 * test_ber.c — the strict BER reader and the BER writer (src/proto/ber_*.c).
 *
 * Table-driven: every vector names its input bytes and the exact result the
 * reader must give, so each rule in ber.h has a case that breaks it.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ber.h"

#define BYTES(...) (const uint8_t[]){ __VA_ARGS__ }, sizeof((const uint8_t[]){ __VA_ARGS__ })

struct element_vector {
	int expect;               /* LUMEN_OK or the error */
	const char *name;
	const uint8_t *bytes;
	size_t len;
	ber_tag_t tag;            /* when OK */
	size_t content_len;       /* when OK */
};

static const struct element_vector element_vectors[] = {
	{ LUMEN_OK, "short octet string", BYTES(0x04, 0x03, 'a', 'b', 'c'), BER_TAG_OCTET_STRING, 3 },
	{ LUMEN_OK, "empty sequence", BYTES(0x30, 0x00), BER_TAG_SEQUENCE, 0 },
	{ LUMEN_OK, "non-minimal one-octet long form", BYTES(0x04, 0x81, 0x01, 'a'), BER_TAG_OCTET_STRING, 1 },
	{ LUMEN_OK, "four-octet long form", BYTES(0x04, 0x84, 0, 0, 0, 1, 'a'), BER_TAG_OCTET_STRING, 1 },
	{ LUMEN_OK, "application constructed", BYTES(0x63, 0x00), BER_TAG_APP_CONS(3), 0 },
	{ LUMEN_OK, "context primitive", BYTES(0x87, 0x01, 'x'), BER_TAG_CONTEXT(7), 1 },
	{ LUMEN_OK, "private class", BYTES(0xc1, 0x00), BER_TAG(BER_CLASS_PRIVATE, 0, 1), 0 },
	{ LUMEN_OK, "multi-byte tag 31", BYTES(0x9f, 0x1f, 0x00), BER_TAG_CONTEXT(31), 0 },
	{ LUMEN_OK, "multi-byte tag 200", BYTES(0xbf, 0x81, 0x48, 0x00), BER_TAG_CONTEXT_CONS(200), 0 },
	{ LUMEN_OK, "largest 29-bit tag", BYTES(0x9f, 0x81, 0xff, 0xff, 0xff, 0x7f, 0x00),
	  BER_TAG_CONTEXT(0x1fffffff), 0 },
	{ LUMEN_EINCOMPLETE, "empty input", (const uint8_t[]){ 0 }, 0, 0, 0 },
	{ LUMEN_EINCOMPLETE, "tag only", BYTES(0x04), 0, 0 },
	{ LUMEN_EINCOMPLETE, "truncated contents", BYTES(0x04, 0x05, 'a'), 0, 0 },
	{ LUMEN_EINCOMPLETE, "truncated long length", BYTES(0x04, 0x82, 0x01), 0, 0 },
	{ LUMEN_EINCOMPLETE, "truncated multi-byte tag", BYTES(0x9f, 0x81), 0, 0 },
	{ LUMEN_EINCOMPLETE, "length beyond input", BYTES(0x04, 0x84, 0xff, 0xff, 0xff, 0xff, 0x00), 0, 0 },
	{ LUMEN_EMALFORMED, "indefinite length", BYTES(0x30, 0x80, 0x00, 0x00), 0, 0 },
	{ LUMEN_EMALFORMED, "five-octet length", BYTES(0x04, 0x85, 0, 0, 0, 0, 1, 'a'), 0, 0 },
	{ LUMEN_EMALFORMED, "reserved length 0xff", BYTES(0x04, 0xff, 0x00), 0, 0 },
	{ LUMEN_EMALFORMED, "multi-byte tag padded with 0x80", BYTES(0x9f, 0x80, 0x1f, 0x00), 0, 0 },
	{ LUMEN_EMALFORMED, "multi-byte form for tag below 31", BYTES(0x9f, 0x05, 0x00), 0, 0 },
	{ LUMEN_EMALFORMED, "30-bit tag number", BYTES(0x9f, 0x83, 0xff, 0xff, 0xff, 0x7f, 0x00), 0, 0 },
	{ LUMEN_EMALFORMED, "tag of six number octets",
	  BYTES(0x9f, 0x81, 0x80, 0x80, 0x80, 0x80, 0x00, 0x00), 0, 0 },
};

START_TEST(test_read_element_vectors)
{
	const struct element_vector *v = &element_vectors[_i];
	struct ber_reader r;
	struct ber_element el;
	ber_reader_init(&r, v->bytes, v->len);
	const uint8_t *start = r.pos;
	int rc = ber_read_element(&r, &el);
	ck_assert_msg(rc == v->expect, "%s: got %d want %d", v->name, rc, v->expect);
	if (rc != LUMEN_OK) {
		ck_assert_msg(r.pos == start, "%s: reader moved on error", v->name);
		return;
	}
	ck_assert_msg(el.tag == v->tag, "%s: tag %#x want %#x", v->name, el.tag, v->tag);
	ck_assert_msg(el.value.len == v->content_len, "%s: length", v->name);
	ck_assert_msg(ber_reader_at_end(&r), "%s: not at end", v->name);
	ber_tag_t peeked;
	ber_reader_init(&r, v->bytes, v->len);
	ck_assert_int_eq(ber_peek_tag(&r, &peeked), LUMEN_OK);
	ck_assert_uint_eq(peeked, v->tag);
}
END_TEST

struct integer_vector {
	int expect;
	const char *name;
	const uint8_t *bytes;
	size_t len;
	int64_t value;
};

static const struct integer_vector integer_vectors[] = {
	{ LUMEN_OK, "zero", BYTES(0x02, 0x01, 0x00), 0 },
	{ LUMEN_OK, "127", BYTES(0x02, 0x01, 0x7f), 127 },
	{ LUMEN_OK, "128", BYTES(0x02, 0x02, 0x00, 0x80), 128 },
	{ LUMEN_OK, "-1", BYTES(0x02, 0x01, 0xff), -1 },
	{ LUMEN_OK, "-128", BYTES(0x02, 0x01, 0x80), -128 },
	{ LUMEN_OK, "-129", BYTES(0x02, 0x02, 0xff, 0x7f), -129 },
	{ LUMEN_OK, "2^31-1", BYTES(0x02, 0x04, 0x7f, 0xff, 0xff, 0xff), 2147483647 },
	{ LUMEN_OK, "INT64_MAX", BYTES(0x02, 0x08, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff), INT64_MAX },
	{ LUMEN_OK, "INT64_MIN", BYTES(0x02, 0x08, 0x80, 0, 0, 0, 0, 0, 0, 0), INT64_MIN },
	{ LUMEN_EMALFORMED, "empty contents", BYTES(0x02, 0x00), 0 },
	{ LUMEN_EMALFORMED, "non-minimal positive", BYTES(0x02, 0x02, 0x00, 0x01), 0 },
	{ LUMEN_EMALFORMED, "non-minimal negative", BYTES(0x02, 0x02, 0xff, 0x80), 0 },
	{ LUMEN_EMALFORMED, "nine octets", BYTES(0x02, 0x09, 0x01, 0, 0, 0, 0, 0, 0, 0, 0), 0 },
	{ LUMEN_EMALFORMED, "nine octets of 2^63", BYTES(0x02, 0x09, 0x00, 0x80, 0, 0, 0, 0, 0, 0, 0), 0 },
	{ LUMEN_EMALFORMED, "wrong tag", BYTES(0x0a, 0x01, 0x00), 0 },
	{ LUMEN_EMALFORMED, "constructed integer", BYTES(0x22, 0x01, 0x00), 0 },
	{ LUMEN_EINCOMPLETE, "truncated", BYTES(0x02, 0x02, 0x01), 0 },
};

START_TEST(test_integer_vectors)
{
	const struct integer_vector *v = &integer_vectors[_i];
	struct ber_reader r;
	int64_t value = 12345;
	ber_reader_init(&r, v->bytes, v->len);
	int rc = ber_read_integer(&r, BER_TAG_INTEGER, &value);
	ck_assert_msg(rc == v->expect, "%s: got %d want %d", v->name, rc, v->expect);
	if (rc == LUMEN_OK) {
		ck_assert_msg(value == v->value, "%s: value %lld", v->name, (long long)value);
		ck_assert(ber_reader_at_end(&r));
	} else {
		ck_assert_msg(r.pos == v->bytes, "%s: reader moved on error", v->name);
	}
}
END_TEST

START_TEST(test_integer_range)
{
	struct ber_reader r;
	int64_t value;
	const uint8_t five[] = { 0x02, 0x01, 0x05 };
	ber_reader_init(&r, five, sizeof(five));
	ck_assert_int_eq(ber_read_int_range(&r, BER_TAG_INTEGER, 6, 10, &value), LUMEN_EMALFORMED);
	ck_assert(r.pos == five);
	ck_assert_int_eq(ber_read_int_range(&r, BER_TAG_INTEGER, 0, 4, &value), LUMEN_EMALFORMED);
	ck_assert_int_eq(ber_read_int_range(&r, BER_TAG_INTEGER, 5, 5, &value), LUMEN_OK);
	ck_assert_int_eq(value, 5);
}
END_TEST

struct scalar_vector {
	int expect;
	const char *name;
	const uint8_t *bytes;
	size_t len;
	int kind; /* 0 boolean, 1 null */
	bool value;
};

static const struct scalar_vector scalar_vectors[] = {
	{ LUMEN_OK, "true 0xff", BYTES(0x01, 0x01, 0xff), 0, true },
	{ LUMEN_OK, "true 0x01 (BER)", BYTES(0x01, 0x01, 0x01), 0, true },
	{ LUMEN_OK, "false", BYTES(0x01, 0x01, 0x00), 0, false },
	{ LUMEN_EMALFORMED, "empty boolean", BYTES(0x01, 0x00), 0, false },
	{ LUMEN_EMALFORMED, "two-octet boolean", BYTES(0x01, 0x02, 0x00, 0x00), 0, false },
	{ LUMEN_EMALFORMED, "boolean with integer tag", BYTES(0x02, 0x01, 0x00), 0, false },
	{ LUMEN_OK, "null", BYTES(0x05, 0x00), 1, false },
	{ LUMEN_EMALFORMED, "null with contents", BYTES(0x05, 0x01, 0x00), 1, false },
	{ LUMEN_EMALFORMED, "null with wrong tag", BYTES(0x04, 0x00), 1, false },
};

START_TEST(test_scalar_vectors)
{
	const struct scalar_vector *v = &scalar_vectors[_i];
	struct ber_reader r;
	bool value = !v->value;
	int rc;
	ber_reader_init(&r, v->bytes, v->len);
	if (v->kind == 0)
		rc = ber_read_boolean(&r, BER_TAG_BOOLEAN, &value);
	else
		rc = ber_read_null(&r, BER_TAG_NULL);
	ck_assert_msg(rc == v->expect, "%s: got %d want %d", v->name, rc, v->expect);
	if (rc == LUMEN_OK && v->kind == 0)
		ck_assert_msg(value == v->value, "%s: value", v->name);
	if (rc != LUMEN_OK)
		ck_assert_msg(r.pos == v->bytes, "%s: reader moved on error", v->name);
}
END_TEST

START_TEST(test_enter_bounds_inner_reader)
{
	/* SEQUENCE { OCTET STRING "ab" } followed by NULL; then a lying inner length. */
	const uint8_t good[] = { 0x30, 0x04, 0x04, 0x02, 'a', 'b', 0x05, 0x00 };
	const uint8_t lying[] = { 0x30, 0x03, 0x04, 0x05, 'a', 'b', 'c', 'd', 'e' };
	struct ber_reader r, inner;
	struct ber_view s;
	ber_reader_init(&r, good, sizeof(good));
	ck_assert_int_eq(ber_enter(&r, BER_TAG_SET, &inner), LUMEN_EMALFORMED);
	ck_assert_int_eq(ber_enter(&r, BER_TAG_SEQUENCE, &inner), LUMEN_OK);
	ck_assert_int_eq(ber_read_octets(&inner, BER_TAG_OCTET_STRING, &s), LUMEN_OK);
	ck_assert(ber_view_eq_str(s, "ab"));
	ck_assert(ber_reader_at_end(&inner));
	ck_assert_int_eq(ber_read_null(&r, BER_TAG_NULL), LUMEN_OK);
	ck_assert(ber_reader_at_end(&r));

	/* The inner string claims 5 octets but its SEQUENCE holds only 1 of them. */
	ber_reader_init(&r, lying, sizeof(lying));
	ck_assert_int_eq(ber_enter(&r, BER_TAG_SEQUENCE, &inner), LUMEN_OK);
	ck_assert_int_eq(ber_read_octets(&inner, BER_TAG_OCTET_STRING, &s), LUMEN_EINCOMPLETE);
}
END_TEST

struct frame_vector {
	int expect;
	const char *name;
	const uint8_t *bytes;
	size_t len;
	size_t max_len;
	size_t total;
};

static const struct frame_vector frame_vectors[] = {
	{ LUMEN_OK, "exact", BYTES(0x30, 0x03, 0x02, 0x01, 0x01), 0, 5 },
	{ LUMEN_OK, "followed by the next PDU", BYTES(0x30, 0x00, 0x30, 0x00), 0, 2 },
	{ LUMEN_OK, "at the bound", BYTES(0x30, 0x03, 0x02, 0x01, 0x01), 5, 5 },
	{ LUMEN_EINCOMPLETE, "header only", BYTES(0x30, 0x03), 0, 0 },
	{ LUMEN_EINCOMPLETE, "length octets missing", BYTES(0x30, 0x84, 0x00), 0, 0 },
	{ LUMEN_ELIMIT, "over the bound", BYTES(0x30, 0x03, 0x02, 0x01, 0x01), 4, 0 },
	{ LUMEN_ELIMIT, "huge length refused before its bytes arrive",
	  BYTES(0x30, 0x84, 0x7f, 0xff, 0xff, 0xff), 262144, 0 },
	{ LUMEN_EMALFORMED, "indefinite", BYTES(0x30, 0x80, 0x00, 0x00), 0, 0 },
	{ LUMEN_EMALFORMED, "five length octets", BYTES(0x30, 0x85, 0, 0, 0, 0, 0), 0, 0 },
};

START_TEST(test_frame_vectors)
{
	const struct frame_vector *v = &frame_vectors[_i];
	size_t total = 0;
	int rc = ber_frame(v->bytes, v->len, v->max_len, &total);
	ck_assert_msg(rc == v->expect, "%s: got %d want %d", v->name, rc, v->expect);
	if (rc == LUMEN_OK)
		ck_assert_msg(total == v->total, "%s: total %zu", v->name, total);
}
END_TEST

START_TEST(test_view_compare)
{
	struct ber_view v = { (const uint8_t *)"uid=Jo", 6 };
	struct ber_view empty = { NULL, 0 };
	ck_assert(ber_view_eq_str(v, "uid=Jo"));
	ck_assert(!ber_view_eq_str(v, "uid=jo"));
	ck_assert(!ber_view_eq_str(v, "uid=J"));
	ck_assert(ber_view_eq_str_nocase(v, "UID=JO"));
	ck_assert(!ber_view_eq_str_nocase(v, "UID=JOE"));
	ck_assert(ber_view_eq_str(empty, ""));
	ck_assert(ber_view_eq_str_nocase(empty, ""));
}
END_TEST

/* ---------------------------------------------------------------- writer */

struct write_integer_vector {
	int64_t value;
	const uint8_t *bytes;
	size_t len;
};

static const struct write_integer_vector write_integer_vectors[] = {
	{ 0, BYTES(0x02, 0x01, 0x00) },
	{ 127, BYTES(0x02, 0x01, 0x7f) },
	{ 128, BYTES(0x02, 0x02, 0x00, 0x80) },
	{ 256, BYTES(0x02, 0x02, 0x01, 0x00) },
	{ -1, BYTES(0x02, 0x01, 0xff) },
	{ -128, BYTES(0x02, 0x01, 0x80) },
	{ -129, BYTES(0x02, 0x02, 0xff, 0x7f) },
	{ 2147483647, BYTES(0x02, 0x04, 0x7f, 0xff, 0xff, 0xff) },
	{ INT64_MAX, BYTES(0x02, 0x08, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff) },
	{ INT64_MIN, BYTES(0x02, 0x08, 0x80, 0, 0, 0, 0, 0, 0, 0) },
	{ 32767, BYTES(0x02, 0x02, 0x7f, 0xff) },
	{ 32768, BYTES(0x02, 0x03, 0x00, 0x80, 0x00) },
	{ -32768, BYTES(0x02, 0x02, 0x80, 0x00) },
	{ -32769, BYTES(0x02, 0x03, 0xff, 0x7f, 0xff) },
	{ -2147483649LL, BYTES(0x02, 0x05, 0xff, 0x7f, 0xff, 0xff, 0xff) },
	{ (1LL << 55) - 1, BYTES(0x02, 0x07, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff) },
	{ 1LL << 55, BYTES(0x02, 0x08, 0x00, 0x80, 0, 0, 0, 0, 0, 0) },
	{ -(1LL << 55), BYTES(0x02, 0x07, 0x80, 0, 0, 0, 0, 0, 0) },
	{ -(1LL << 55) - 1, BYTES(0x02, 0x08, 0xff, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff) },
};

/* Around every power of two, both signs: the value reads back, in the
 * fewest octets (X.690 §8.3.2: the first nine bits never all equal). */
START_TEST(test_write_integer_shortest)
{
	struct ber_writer w;
	ck_assert_int_eq(ber_writer_init(&w, 0, 0), LUMEN_OK);
	for (int bit = 0; bit < 63; bit++) {
		int64_t around[] = { (1LL << bit) - 1, 1LL << bit, -(1LL << bit), -(1LL << bit) - 1 };
		for (size_t i = 0; i < 4; i++) {
			ber_writer_reset(&w);
			ber_write_integer(&w, BER_TAG_ENUMERATED, around[i]);
			ck_assert_int_eq(ber_writer_error(&w), LUMEN_OK);
			ck_assert_uint_eq(w.len, 2u + w.buf[1]);
			if (w.buf[1] > 1) {
				bool redundant = (w.buf[2] == 0x00 && (w.buf[3] & 0x80) == 0) ||
						 (w.buf[2] == 0xff && (w.buf[3] & 0x80) != 0);
				ck_assert_msg(!redundant, "%lld in %u octets", (long long)around[i],
					      w.buf[1]);
			}
			struct ber_reader r;
			int64_t back;
			ber_reader_init(&r, w.buf, w.len);
			ck_assert_int_eq(ber_read_integer(&r, BER_TAG_ENUMERATED, &back), LUMEN_OK);
			ck_assert(back == around[i]);
		}
	}
	ber_writer_free(&w);
}
END_TEST

START_TEST(test_write_integer_vectors)
{
	const struct write_integer_vector *v = &write_integer_vectors[_i];
	struct ber_writer w;
	ck_assert_int_eq(ber_writer_init(&w, 0, 0), LUMEN_OK);
	ber_write_integer(&w, BER_TAG_INTEGER, v->value);
	ck_assert_int_eq(ber_writer_error(&w), LUMEN_OK);
	ck_assert_uint_eq(w.len, v->len);
	ck_assert_mem_eq(w.buf, v->bytes, v->len);
	struct ber_reader r;
	int64_t back;
	ber_reader_init(&r, w.buf, w.len);
	ck_assert_int_eq(ber_read_integer(&r, BER_TAG_INTEGER, &back), LUMEN_OK);
	ck_assert(back == v->value);
	ber_writer_free(&w);
}
END_TEST

/* Content sizes around each length-octet boundary; ber_end must move contents. */
static const size_t nested_sizes[] = { 0, 1, 127, 128, 255, 256, 65535, 65536, 70000 };

START_TEST(test_write_nested_lengths)
{
	size_t n = nested_sizes[_i];
	size_t expect_length_octets = n < 0x80 ? 1 : n <= 0xff ? 2 : n <= 0xffff ? 3 : 4;
	uint8_t *payload = malloc(n + 1);
	ck_assert_ptr_nonnull(payload);
	for (size_t i = 0; i < n; i++)
		payload[i] = (uint8_t)(i * 7);
	struct ber_writer w;
	ck_assert_int_eq(ber_writer_init(&w, 16, 0), LUMEN_OK);
	ber_begin(&w, BER_TAG_SEQUENCE);
	ber_begin(&w, BER_TAG_APP_CONS(4));
	ber_write_raw(&w, payload, n);
	ber_end(&w);
	ber_end(&w);
	ck_assert_int_eq(ber_writer_error(&w), LUMEN_OK);
	ck_assert_uint_eq(w.depth, 0);
	/* Outer header + inner header + payload, all minimal. */
	size_t inner_len = 1 + expect_length_octets + n;
	size_t outer_length_octets = inner_len < 0x80 ? 1 : inner_len <= 0xff ? 2 : inner_len <= 0xffff ? 3 : 4;
	ck_assert_uint_eq(w.len, 1 + outer_length_octets + inner_len);
	struct ber_reader r, outer, inner;
	struct ber_view contents;
	ber_reader_init(&r, w.buf, w.len);
	ck_assert_int_eq(ber_enter(&r, BER_TAG_SEQUENCE, &outer), LUMEN_OK);
	ck_assert_int_eq(ber_enter(&outer, BER_TAG_APP_CONS(4), &inner), LUMEN_OK);
	contents.ptr = inner.pos;
	contents.len = (size_t)(inner.end - inner.pos);
	ck_assert_uint_eq(contents.len, n);
	if (n > 0)
		ck_assert_mem_eq(contents.ptr, payload, n);
	ck_assert(ber_reader_at_end(&outer) && ber_reader_at_end(&r));
	ber_writer_free(&w);
	free(payload);
}
END_TEST

START_TEST(test_write_types_round_trip)
{
	struct ber_writer w;
	struct ber_reader r;
	struct ber_view s;
	bool b;
	int64_t i;
	ck_assert_int_eq(ber_writer_init(&w, 0, 0), LUMEN_OK);
	ber_write_boolean(&w, BER_TAG_BOOLEAN, true);
	ber_write_boolean(&w, BER_TAG_CONTEXT(4), false);
	ber_write_null(&w, BER_TAG_APP(2));
	ber_write_string(&w, BER_TAG_OCTET_STRING, "dc=example");
	ber_write_string(&w, BER_TAG_OCTET_STRING, NULL);
	ber_write_octets(&w, BER_TAG_CONTEXT(0x1fffffff), "x", 1);
	ber_write_integer(&w, BER_TAG_ENUMERATED, 2);
	ck_assert_int_eq(ber_writer_error(&w), LUMEN_OK);

	ber_reader_init(&r, w.buf, w.len);
	ck_assert_int_eq(ber_read_boolean(&r, BER_TAG_BOOLEAN, &b), LUMEN_OK);
	ck_assert(b);
	ck_assert_int_eq(ber_read_boolean(&r, BER_TAG_CONTEXT(4), &b), LUMEN_OK);
	ck_assert(!b);
	ck_assert_int_eq(ber_read_null(&r, BER_TAG_APP(2)), LUMEN_OK);
	ck_assert_int_eq(ber_read_octets(&r, BER_TAG_OCTET_STRING, &s), LUMEN_OK);
	ck_assert(ber_view_eq_str(s, "dc=example"));
	ck_assert_int_eq(ber_read_octets(&r, BER_TAG_OCTET_STRING, &s), LUMEN_OK);
	ck_assert_uint_eq(s.len, 0);
	ck_assert_int_eq(ber_read_octets(&r, BER_TAG_CONTEXT(0x1fffffff), &s), LUMEN_OK);
	ck_assert(ber_view_eq_str(s, "x"));
	ck_assert_int_eq(ber_read_integer(&r, BER_TAG_ENUMERATED, &i), LUMEN_OK);
	ck_assert_int_eq(i, 2);
	ck_assert(ber_reader_at_end(&r));
	ber_writer_free(&w);
}
END_TEST

START_TEST(test_writer_poisoned_by_bound)
{
	struct ber_writer w;
	ck_assert_int_eq(ber_writer_init(&w, 0, 8), LUMEN_OK);
	ber_write_string(&w, BER_TAG_OCTET_STRING, "abc");
	ck_assert_int_eq(ber_writer_error(&w), LUMEN_OK);
	size_t len = w.len;
	ber_write_string(&w, BER_TAG_OCTET_STRING, "defgh");
	ck_assert_int_eq(ber_writer_error(&w), LUMEN_ELIMIT);
	ck_assert_uint_eq(w.len, len);
	/* Poisoned: even a write that would fit does nothing. */
	ber_write_null(&w, BER_TAG_NULL);
	ber_begin(&w, BER_TAG_SEQUENCE);
	ber_end(&w);
	ck_assert_uint_eq(w.len, len);
	ck_assert_int_eq(ber_writer_error(&w), LUMEN_ELIMIT);
	/* Reset recycles the buffer and clears the poison. */
	uint8_t *buf = w.buf;
	ber_writer_reset(&w);
	ck_assert_int_eq(ber_writer_error(&w), LUMEN_OK);
	ck_assert_uint_eq(w.len, 0);
	ber_write_null(&w, BER_TAG_NULL);
	ck_assert_int_eq(ber_writer_error(&w), LUMEN_OK);
	ck_assert_ptr_eq(w.buf, buf);
	ber_writer_free(&w);
}
END_TEST

START_TEST(test_writer_bound_hit_by_length_fixup)
{
	/* 200 bytes fit, but the two extra length octets ber_end needs do not. */
	uint8_t payload[200] = { 0 };
	struct ber_writer w;
	ck_assert_int_eq(ber_writer_init(&w, 0, 202), LUMEN_OK);
	ber_begin(&w, BER_TAG_SEQUENCE);
	ber_write_raw(&w, payload, sizeof(payload));
	ck_assert_int_eq(ber_writer_error(&w), LUMEN_OK);
	ber_end(&w);
	ck_assert_int_eq(ber_writer_error(&w), LUMEN_ELIMIT);
	ber_writer_free(&w);
}
END_TEST

START_TEST(test_writer_misuse)
{
	struct ber_writer w;
	ck_assert_int_eq(ber_writer_init(&w, 0, 0), LUMEN_OK);
	ber_end(&w);
	ck_assert_int_eq(ber_writer_error(&w), LUMEN_EINVAL);
	ber_writer_reset(&w);
	for (int i = 0; i < BER_MAX_NESTING; i++)
		ber_begin(&w, BER_TAG_SEQUENCE);
	ck_assert_int_eq(ber_writer_error(&w), LUMEN_OK);
	ber_begin(&w, BER_TAG_SEQUENCE);
	ck_assert_int_eq(ber_writer_error(&w), LUMEN_ELIMIT);
	ber_writer_free(&w);
}
END_TEST

/*
 * ber_read_octets, ber_enter and ber_read_element read short-form elements inline and the rest
 * through the general reader: for every identifier and length octet, every
 * tag asked for and every buffer length, both paths must agree on the
 * result, the contents and where the reader ends.
 */
/* Whether both paths agree on one input (plain compares: tens of millions of
 * Check assertions would each cost a message to the runner). */
static bool same_as_general(const uint8_t *buf, size_t len, ber_tag_t tag)
{
	struct ber_reader fast, general;
	struct ber_view fast_value = { NULL, 0 }, general_value = { NULL, 0 };
	ber_reader_init(&fast, buf, len);
	ber_reader_init(&general, buf, len);
	int fast_rc = ber_read_octets(&fast, tag, &fast_value);
	int general_rc = ber_read_octets_general(&general, tag, &general_value);
	if (fast_rc != general_rc || fast.pos != general.pos ||
	    (fast_rc == LUMEN_OK && (fast_value.ptr != general_value.ptr ||
				     fast_value.len != general_value.len)))
		return false;
	struct ber_element fast_el = { 0, { NULL, 0 } }, general_el = { 0, { NULL, 0 } };
	ber_reader_init(&fast, buf, len);
	ber_reader_init(&general, buf, len);
	fast_rc = ber_read_element(&fast, &fast_el);
	general_rc = ber_read_element_general(&general, &general_el);
	if (fast_rc != general_rc || fast.pos != general.pos ||
	    (fast_rc == LUMEN_OK && (fast_el.tag != general_el.tag ||
				     fast_el.value.ptr != general_el.value.ptr ||
				     fast_el.value.len != general_el.value.len)))
		return false;
	struct ber_reader inner_fast, inner_general;
	ber_reader_init(&fast, buf, len);
	ber_reader_init(&general, buf, len);
	fast_rc = ber_enter(&fast, tag, &inner_fast);
	general_rc = ber_enter_general(&general, tag, &inner_general);
	return fast_rc == general_rc && fast.pos == general.pos &&
	       (fast_rc != LUMEN_OK || (inner_fast.pos == inner_general.pos &&
					inner_fast.end == inner_general.end));
}

START_TEST(test_inline_reads_match_general)
{
	static uint8_t buf[2 + 255 + 1];
	const ber_tag_t tags[] = { BER_TAG_OCTET_STRING, BER_TAG_SEQUENCE, BER_TAG_SET,
				   BER_TAG(BER_CLASS_CONTEXT, 0, 0), BER_TAG(BER_CLASS_CONTEXT, 1, 1),
				   BER_TAG_APP_CONS(3), BER_TAG(BER_CLASS_CONTEXT, 0, 31) };
	unsigned checked = 0, fast_ok = 0;
	memset(buf, 'x', sizeof(buf));
	buf[2] = 0x01;   /* a long form's first length octet */
	for (unsigned id = 0; id < 256; id++) {
		for (unsigned length = 0; length < 256; length++) {
			buf[0] = (uint8_t)id;
			buf[1] = (uint8_t)length;
			size_t short_len = length < 0x80 ? length : 0;
			size_t lens[] = { 0, 1, 2, 3, 2 + short_len - (short_len > 0),
					  2 + short_len, sizeof(buf) };
			for (size_t t = 0; t < sizeof(tags) / sizeof(tags[0]); t++) {
				for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
					if (!same_as_general(buf, lens[l], tags[t]))
						ck_abort_msg("octets %02x %02x, %zu bytes, tag %08x",
							     id, length, lens[l], (unsigned)tags[t]);
					checked++;
				}
			}
			struct ber_reader r;
			struct ber_view v;
			ber_reader_init(&r, buf, sizeof(buf));
			fast_ok += ber_take_short(&r, BER_TAG_OCTET_STRING, &v);
		}
	}
	ck_assert_uint_eq(checked, 256u * 256u * 7u * 7u);
	/* The inline path took exactly the short octet strings: 0x04 and 0..127. */
	ck_assert_uint_eq(fast_ok, 128u);
}
END_TEST

#define N_ELEMENTS(a) ((int)(sizeof(a) / sizeof((a)[0])))

static Suite *make_suite(void)
{
	Suite *s = suite_create("ber");
	TCase *reader = tcase_create("reader");
	tcase_add_loop_test(reader, test_read_element_vectors, 0, N_ELEMENTS(element_vectors));
	tcase_add_loop_test(reader, test_integer_vectors, 0, N_ELEMENTS(integer_vectors));
	tcase_add_test(reader, test_integer_range);
	tcase_add_loop_test(reader, test_scalar_vectors, 0, N_ELEMENTS(scalar_vectors));
	tcase_add_test(reader, test_enter_bounds_inner_reader);
	tcase_add_loop_test(reader, test_frame_vectors, 0, N_ELEMENTS(frame_vectors));
	tcase_add_test(reader, test_view_compare);
	tcase_add_test(reader, test_inline_reads_match_general);
	suite_add_tcase(s, reader);
	TCase *writer = tcase_create("writer");
	tcase_add_loop_test(writer, test_write_integer_vectors, 0, N_ELEMENTS(write_integer_vectors));
	tcase_add_test(writer, test_write_integer_shortest);
	tcase_add_loop_test(writer, test_write_nested_lengths, 0, N_ELEMENTS(nested_sizes));
	tcase_add_test(writer, test_write_types_round_trip);
	tcase_add_test(writer, test_writer_poisoned_by_bound);
	tcase_add_test(writer, test_writer_bound_hit_by_length_fixup);
	tcase_add_test(writer, test_writer_misuse);
	suite_add_tcase(s, writer);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
