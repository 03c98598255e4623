/*
 * filter_text.c — RFC 4515 text filter encoder (see filter_text.h).
 *
 * A recursive-descent parser over the text that emits BER as it goes: each
 * production opens its element with ber_begin and closes it with ber_end,
 * so the output is complete as soon as the parse is.
 */
#include "filter_text.h"

#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "lumen_error.h"

struct filter_parser {
	const char *pos;
	const char *end;
	struct ber_writer *w;
	const char *why;
	unsigned depth;
};

enum { TAG_AND = 0, TAG_OR = 1, TAG_NOT = 2, TAG_EQUALITY = 3,
       TAG_SUBSTRINGS = 4, TAG_GE = 5, TAG_LE = 6, TAG_PRESENT = 7,
       TAG_APPROX = 8, TAG_EXTENSIBLE = 9 };

static int fail(struct filter_parser *p, int rc, const char *why)
{
	p->why = why;
	return rc;
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Unescape [from, to) into out (FILTER_TEXT_MAX_VALUE bytes). */
static int unescape(struct filter_parser *p, const char *from, const char *to,
		    char *out, size_t *out_len)
{
	size_t n = 0;
	while (from < to) {
		char c = *from++;
		if (c == '\\') {
			int hi = from < to ? hex_value(from[0]) : -1;
			int lo = from + 1 < to ? hex_value(from[1]) : -1;
			if (hi < 0 || lo < 0)
				return fail(p, LUMEN_EMALFORMED,
					    "'\\' must be followed by two hex digits");
			c = (char)(hi << 4 | lo);
			from += 2;
		} else if (c == '(' || c == ')' || c == '*') {
			return fail(p, LUMEN_EMALFORMED,
				    "unescaped '(', ')' or '*' in a value");
		}
		if (n == FILTER_TEXT_MAX_VALUE)
			return fail(p, LUMEN_ELIMIT, "filter value too long");
		out[n++] = c;
	}
	*out_len = n;
	return LUMEN_OK;
}

static int write_value(struct filter_parser *p, ber_tag_t tag, const char *from,
		       const char *to)
{
	char value[FILTER_TEXT_MAX_VALUE];
	size_t n;
	int rc = unescape(p, from, to, value, &n);
	if (rc == LUMEN_OK)
		ber_write_octets(p->w, tag, value, n);
	return rc;
}

/* attr=in*it*ial*final: the '*' positions split the value. */
static int write_substrings(struct filter_parser *p, const char *attr,
			    size_t attr_len, const char *value, const char *end)
{
	ber_begin(p->w, BER_TAG_CONTEXT_CONS(TAG_SUBSTRINGS));
	ber_write_octets(p->w, BER_TAG_OCTET_STRING, attr, attr_len);
	ber_begin(p->w, BER_TAG_SEQUENCE);
	const char *piece = value;
	bool first = true;
	int rc = LUMEN_OK;
	for (const char *s = value; s <= end && rc == LUMEN_OK; s++) {
		if (s != end && *s != '*')
			continue;
		bool last = (s == end);
		if (s > piece) {
			unsigned kind = first ? 0 : last ? 2 : 1;
			rc = write_value(p, BER_TAG_CONTEXT(kind), piece, s);
		} else if (!first && !last) {
			rc = fail(p, LUMEN_EMALFORMED, "'**' in a substring filter");
		}
		first = false;
		piece = s + 1;
	}
	ber_end(p->w);
	ber_end(p->w);
	return rc;
}

/* attr:dn:rule:=value, where attr, ":dn" and ":rule" are each optional. */
static int write_extensible(struct filter_parser *p, const char *desc,
			    const char *op, const char *value, const char *end)
{
	const char *colon = memchr(desc, ':', (size_t)(op - desc));
	const char *attr_end = colon != NULL ? colon : op;
	bool dn_attributes = false;
	const char *rule = NULL, *rule_end = NULL;
	while (colon != NULL && colon < op) {
		const char *next = memchr(colon + 1, ':', (size_t)(op - colon));
		if (next == NULL)
			next = op;
		size_t n = (size_t)(next - colon - 1);
		if (n == 2 && strncasecmp(colon + 1, "dn", 2) == 0)
			dn_attributes = true;
		else if (n > 0 && rule == NULL)
			rule = colon + 1, rule_end = next;
		else
			return fail(p, LUMEN_EMALFORMED, "bad extensible match");
		colon = next == op ? NULL : next;
	}
	if (attr_end == desc && rule == NULL)
		return fail(p, LUMEN_EMALFORMED,
			    "extensible match needs an attribute or a rule");
	ber_begin(p->w, BER_TAG_CONTEXT_CONS(TAG_EXTENSIBLE));
	if (rule != NULL)
		ber_write_octets(p->w, BER_TAG_CONTEXT(1), rule,
				 (size_t)(rule_end - rule));
	if (attr_end > desc)
		ber_write_octets(p->w, BER_TAG_CONTEXT(2), desc,
				 (size_t)(attr_end - desc));
	int rc = write_value(p, BER_TAG_CONTEXT(3), value, end);
	if (dn_attributes)
		ber_write_boolean(p->w, BER_TAG_CONTEXT(4), true);
	ber_end(p->w);
	return rc;
}

/* One simple item, the text between its parentheses. */
static int write_item(struct filter_parser *p, const char *start, const char *end)
{
	const char *eq = memchr(start, '=', (size_t)(end - start));
	if (eq == NULL)
		return fail(p, LUMEN_EMALFORMED, "filter item has no '='");
	const char *desc_end = eq;
	unsigned tag = TAG_EQUALITY;
	if (eq > start && (eq[-1] == '~' || eq[-1] == '>' || eq[-1] == '<' ||
			   eq[-1] == ':')) {
		desc_end = eq - 1;
		tag = eq[-1] == '~' ? TAG_APPROX : eq[-1] == '>' ? TAG_GE
		    : eq[-1] == '<' ? TAG_LE : TAG_EXTENSIBLE;
	}
	if (tag == TAG_EXTENSIBLE)
		return write_extensible(p, start, desc_end, eq + 1, end);
	size_t attr_len = (size_t)(desc_end - start);
	if (attr_len == 0)
		return fail(p, LUMEN_EMALFORMED, "filter item has no attribute");
	for (const char *s = start; s < desc_end; s++)
		if (*s == '(' || *s == ')' || *s == '*' || *s == '\\' || *s == ' ')
			return fail(p, LUMEN_EMALFORMED, "bad attribute description");
	const char *value = eq + 1;
	bool has_star = memchr(value, '*', (size_t)(end - value)) != NULL;
	if (tag == TAG_EQUALITY && end - value == 1 && *value == '*') {
		ber_write_octets(p->w, BER_TAG_CONTEXT(TAG_PRESENT), start, attr_len);
		return LUMEN_OK;
	}
	if (tag == TAG_EQUALITY && has_star)
		return write_substrings(p, start, attr_len, value, end);
	ber_begin(p->w, BER_TAG_CONTEXT_CONS(tag));
	ber_write_octets(p->w, BER_TAG_OCTET_STRING, start, attr_len);
	int rc = write_value(p, BER_TAG_OCTET_STRING, value, end);
	ber_end(p->w);
	return rc;
}

static int parse_filter(struct filter_parser *p);

/* filter *filter, for & and |; an empty list is allowed (RFC 4526). */
static int parse_list(struct filter_parser *p, unsigned tag)
{
	ber_begin(p->w, BER_TAG_CONTEXT_CONS(tag));
	int rc = LUMEN_OK;
	while (rc == LUMEN_OK && p->pos < p->end && *p->pos == '(')
		rc = parse_filter(p);
	ber_end(p->w);
	return rc;
}

/* "(" filtercomp ")" at p->pos. */
static int parse_filter(struct filter_parser *p)
{
	if (p->pos >= p->end || *p->pos != '(')
		return fail(p, LUMEN_EMALFORMED, "expected '('");
	if (++p->depth > FILTER_TEXT_MAX_DEPTH)
		return fail(p, LUMEN_ELIMIT, "filter nested too deeply");
	p->pos++;
	int rc;
	char kind = p->pos < p->end ? *p->pos : '\0';
	if (kind == '&' || kind == '|') {
		p->pos++;
		rc = parse_list(p, kind == '&' ? TAG_AND : TAG_OR);
	} else if (kind == '!') {
		p->pos++;
		ber_begin(p->w, BER_TAG_CONTEXT_CONS(TAG_NOT));
		rc = parse_filter(p);
		ber_end(p->w);
	} else {
		const char *start = p->pos;
		while (p->pos < p->end && *p->pos != ')' && *p->pos != '(')
			p->pos++;
		if (p->pos < p->end && *p->pos == '(')
			return fail(p, LUMEN_EMALFORMED, "unescaped '(' in a value");
		rc = write_item(p, start, p->pos);
	}
	if (rc != LUMEN_OK)
		return rc;
	if (p->pos >= p->end || *p->pos != ')')
		return fail(p, LUMEN_EMALFORMED, "missing ')'");
	p->pos++;
	p->depth--;
	return LUMEN_OK;
}

int bench_filter_encode(struct ber_writer *w, const char *text, size_t len,
			const char **why)
{
	struct filter_parser p = { .pos = text, .end = text + len, .w = w };
	int rc;
	if (len > 0 && text[0] != '(') {
		/* A bare item, as ldapsearch accepts: "uid=x". */
		rc = write_item(&p, text, text + len);
		p.pos = p.end;
	} else {
		rc = parse_filter(&p);
	}
	if (rc == LUMEN_OK && p.pos != p.end)
		rc = fail(&p, LUMEN_EMALFORMED, "text after the filter");
	if (rc == LUMEN_OK && ber_writer_error(w) != LUMEN_OK)
		rc = fail(&p, ber_writer_error(w), "cannot encode filter");
	if (why != NULL)
		*why = rc == LUMEN_OK ? NULL : p.why;
	return rc;
}
