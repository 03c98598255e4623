/*
 * pdu_fixture.h — BER test vectors written so that lengths need not be
 * counted by hand, for the unit suites that build PDUs (header-only, like
 * entry_fixture.h): "30( ... )" is a constructed element whose length is
 * filled in, "04'abc'" a primitive element with its length, "'abc'" raw
 * text, "0a0102" raw hex. A malformed spec fails the test.
 */
#ifndef LUMEN_PDU_FIXTURE_H
#define LUMEN_PDU_FIXTURE_H

#include <check.h>
#include <ctype.h>
#include <stdint.h>
#include <string.h>

#include "hex.h"

#define PDU_MAX 4096

struct pdu {
	uint8_t bytes[PDU_MAX];
	size_t len;
};

static void put(struct pdu *p, uint8_t b)
{
	ck_assert_msg(p->len < PDU_MAX, "test PDU too long");
	p->bytes[p->len++] = b;
}

/* Insert a minimal definite length for the contents that start at `at`. */
static void insert_length(struct pdu *p, size_t at)
{
	size_t n = p->len - at;
	uint8_t header[5];
	size_t h = 0;
	if (n < 0x80) {
		header[h++] = (uint8_t)n;
	} else {
		size_t octets = n <= 0xff ? 1 : n <= 0xffff ? 2 : 3;
		header[h++] = (uint8_t)(0x80 | octets);
		for (size_t i = octets; i > 0; i--)
			header[h++] = (uint8_t)(n >> (8 * (i - 1)));
	}
	ck_assert(p->len + h <= PDU_MAX);
	memmove(p->bytes + at + h, p->bytes + at, n);
	memcpy(p->bytes + at, header, h);
	p->len += h;
}

static void build_pdu(const char *spec, struct pdu *p)
{
	size_t open[32];
	size_t depth = 0;
	const char *s = spec;
	p->len = 0;
	while (*s != '\0') {
		if (isspace((unsigned char)*s)) {
			s++;
		} else if (*s == ')') {
			ck_assert_msg(depth > 0, "unbalanced ) in %s", spec);
			insert_length(p, open[--depth]);
			s++;
		} else if (*s == '\'') {
			const char *end = strchr(s + 1, '\'');
			ck_assert_msg(end != NULL, "unterminated text in %s", spec);
			for (const char *c = s + 1; c < end; c++)
				put(p, (uint8_t)*c);
			s = end + 1;
		} else {
			int byte = hex_pair_value(s[0], s[1]);
			ck_assert_msg(byte >= 0, "bad hex at '%s'", s);
			put(p, (uint8_t)byte);
			s += 2;
			if (*s == '(') {
				ck_assert(depth < 32);
				open[depth++] = p->len;
				s++;
			} else if (*s == '\'') {
				const char *end = strchr(s + 1, '\'');
				ck_assert_msg(end != NULL, "unterminated text in %s", spec);
				size_t at = p->len;
				for (const char *c = s + 1; c < end; c++)
					put(p, (uint8_t)*c);
				insert_length(p, at);
				s = end + 1;
			}
		}
	}
	ck_assert_msg(depth == 0, "unbalanced ( in %s", spec);
}

#endif
