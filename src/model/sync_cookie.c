/*
 * sync_cookie.c — CSNs and OpenLDAP's sync cookie (sync_cookie.h): a
 * strict parser (every byte from a consumer is hostile) and the writer.
 */
#include "sync_cookie.h"

#include <stdio.h>
#include <string.h>

#include "hex.h"
#include "lumen_error.h"

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* n hex digits at p into *value, lower-cased into out. */
static bool read_hex(const char *p, size_t n, char *out, unsigned *value)
{
	*value = 0;
	for (size_t i = 0; i < n; i++) {
		int v = hex_value((unsigned char)p[i]);
		if (v < 0)
			return false;
		*value = *value * 16 + (unsigned)v;
		out[i] = "0123456789abcdef"[v];
	}
	return true;
}

static bool all_digits(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!is_digit(p[i]))
			return false;
	return true;
}

int csn_parse(const char *text, size_t len, struct csn *out, const char **why)
{
	unsigned count, sid, mod;
	*why = "a CSN is YYYYmmddHHMMSS.uuuuuuZ#cccccc#sss#mmmmmm";
	if (len != CSN_LENGTH)
		return LUMEN_EMALFORMED;
	memcpy(out->text, text, CSN_LENGTH);
	out->text[CSN_LENGTH] = '\0';
	if (!all_digits(text, 14) || text[14] != '.' || !all_digits(text + 15, 6) ||
	    text[21] != 'Z' || text[22] != '#' || text[29] != '#' || text[33] != '#')
		return LUMEN_EMALFORMED;
	if (!read_hex(text + 23, 6, out->text + 23, &count) ||
	    !read_hex(text + 30, 3, out->text + 30, &sid) ||
	    !read_hex(text + 34, 6, out->text + 34, &mod))
		return LUMEN_EMALFORMED;
	out->sid = sid;
	*why = NULL;
	return LUMEN_OK;
}

int csn_compare(const struct csn *a, const struct csn *b)
{
	return memcmp(a->text, b->text, CSN_LENGTH);
}

const struct csn *sync_cookie_csn_for(const struct sync_cookie *c, unsigned sid)
{
	for (size_t i = 0; i < c->n_csns; i++)
		if (c->csns[i].sid == sid)
			return &c->csns[i];
	return NULL;
}

int sync_cookie_merge_csn(struct sync_cookie *c, const struct csn *csn)
{
	size_t at = 0;
	while (at < c->n_csns && c->csns[at].sid < csn->sid)
		at++;
	if (at < c->n_csns && c->csns[at].sid == csn->sid) {
		if (csn_compare(csn, &c->csns[at]) > 0)
			c->csns[at] = *csn;
		return LUMEN_OK;
	}
	if (c->n_csns == SYNC_COOKIE_MAX_CSNS)
		return LUMEN_ELIMIT;
	memmove(&c->csns[at + 1], &c->csns[at], (c->n_csns - at) * sizeof(c->csns[0]));
	c->csns[at] = *csn;
	c->n_csns++;
	return LUMEN_OK;
}

/* ------------------------------------------------------------- parsing */

/* A number of 1..max_digits digits in the given base, at most limit. */
static int read_number(const char *p, size_t n, unsigned base, size_t max_digits,
		       unsigned limit, int *out)
{
	unsigned v = 0;
	if (n == 0 || n > max_digits)
		return LUMEN_EMALFORMED;
	for (size_t i = 0; i < n; i++) {
		int d = base == 16 ? hex_value(p[i]) : (is_digit(p[i]) ? p[i] - '0' : -1);
		if (d < 0)
			return LUMEN_EMALFORMED;
		v = v * base + (unsigned)d;
	}
	if (v > limit)
		return LUMEN_EMALFORMED;
	*out = (int)v;
	return LUMEN_OK;
}

static int parse_csn_list(const char *p, size_t n, struct sync_cookie *c, const char **why)
{
	size_t start = 0;
	while (start <= n) {
		const char *semi = memchr(p + start, ';', n - start);
		size_t end = semi != NULL ? (size_t)(semi - p) : n;
		struct csn csn;
		int rc = csn_parse(p + start, end - start, &csn, why);
		if (rc != LUMEN_OK)
			return rc;
		if (sync_cookie_csn_for(c, csn.sid) != NULL) {
			*why = "csn: two CSNs of the same serverID";
			return LUMEN_EMALFORMED;
		}
		if (sync_cookie_merge_csn(c, &csn) != LUMEN_OK) {
			*why = "csn: too many CSNs";
			return LUMEN_ELIMIT;
		}
		start = end + 1;
	}
	return LUMEN_OK;
}

struct part {
	const char *key;
	const char *usage;
};

static const struct part parts[] = {
	{ "rid=", "rid: expected 1 to 3 decimal digits (0-999)" },
	{ "sid=", "sid: expected 1 to 3 hexadecimal digits" },
	{ "csn=", NULL },
	{ "delcsn=", NULL },
};

static int parse_part(const char *p, size_t n, struct sync_cookie *c, unsigned *seen,
		      const char **why)
{
	for (unsigned i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		size_t klen = strlen(parts[i].key);
		if (n < klen || memcmp(p, parts[i].key, klen) != 0)
			continue;
		if (*seen & (1u << i)) {
			*why = "a part of the cookie appears twice";
			return LUMEN_EMALFORMED;
		}
		*seen |= 1u << i;
		p += klen;
		n -= klen;
		*why = parts[i].usage;
		switch (i) {
		case 0: return read_number(p, n, 10, 3, 999, &c->rid);
		case 1: return read_number(p, n, 16, 3, 0xfff, &c->sid);
		case 2: return parse_csn_list(p, n, c, why);
		default:
			c->has_delcsn = true;
			return csn_parse(p, n, &c->delcsn, why);
		}
	}
	*why = "expected rid=, sid=, csn= or delcsn=";
	return LUMEN_EMALFORMED;
}

int sync_cookie_parse(struct ber_view text, struct sync_cookie *out, const char **why)
{
	const char *p = (const char *)text.ptr;
	size_t start = 0;
	unsigned seen = 0;

	memset(out, 0, sizeof(*out));
	out->rid = out->sid = -1;
	*why = NULL;
	if (text.len == 0)
		return LUMEN_OK;
	if (memchr(p, '\0', text.len) != NULL) {
		*why = "a NUL byte in the cookie";
		return LUMEN_EMALFORMED;
	}
	while (start <= text.len) {
		const char *comma = memchr(p + start, ',', text.len - start);
		size_t end = comma != NULL ? (size_t)(comma - p) : text.len;
		int rc = parse_part(p + start, end - start, out, &seen, why);
		if (rc != LUMEN_OK)
			return rc;
		start = end + 1;
	}
	*why = NULL;
	return LUMEN_OK;
}

/* ------------------------------------------------------------- writing */

struct text_out {
	char *p;
	size_t size, used;
	bool overflow;
};

static void put(struct text_out *t, const char *fmt, const char *arg, int number)
{
	if (t->overflow)
		return;
	int n = arg != NULL ? snprintf(t->p + t->used, t->size - t->used, fmt, arg)
			    : snprintf(t->p + t->used, t->size - t->used, fmt, number);
	if (n < 0 || (size_t)n >= t->size - t->used)
		t->overflow = true;
	else
		t->used += (size_t)n;
}

int sync_cookie_format(const struct sync_cookie *c, char *out, size_t size, size_t *len)
{
	struct text_out t = { .p = out, .size = size };
	if (size == 0)
		return LUMEN_ELIMIT;
	out[0] = '\0';
	const char *sep = "";
	if (c->rid >= 0) {
		put(&t, "rid=%03d", NULL, c->rid);
		sep = ",";
	}
	if (c->sid >= 0) {
		put(&t, "%s", sep, 0);
		put(&t, "sid=%03x", NULL, c->sid);
		sep = ",";
	}
	for (size_t i = 0; i < c->n_csns; i++) {
		put(&t, "%s", i == 0 ? sep : ";", 0);
		put(&t, i == 0 ? "csn=%s" : "%s", c->csns[i].text, 0);
		sep = ",";
	}
	if (c->has_delcsn) {
		put(&t, "%s", sep, 0);
		put(&t, "delcsn=%s", c->delcsn.text, 0);
	}
	if (t.overflow)
		return LUMEN_ELIMIT;
	*len = t.used;
	return LUMEN_OK;
}
