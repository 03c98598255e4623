/*
 * ldap_filter_text.c — the RFC 4515 string form of filters
 * (ldap_filter_text.h): a recursive-descent parser into struct ldap_filter
 * and a canonical printer.
 *
 * The parser is bounded in depth and node count before it recurses or
 * allocates; a value piece is measured (and its escapes checked) before its
 * one exact arena block is taken.
 */
#include "ldap_filter_text.h"

#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "hex.h"
#include "lumen_error.h"

struct text_parser {
	const char *text;
	size_t len;
	size_t pos;
	struct arena *arena;
	unsigned max_depth;
	size_t max_nodes;
	size_t n_nodes;
};

static int peek(const struct text_parser *p)
{
	return p->pos < p->len ? (unsigned char)p->text[p->pos] : -1;
}

static bool is_description_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == ';' || c == '_';
}

/* attr characters up to the filter type; may be empty (caller decides). */
static struct ber_view scan_description(struct text_parser *p)
{
	size_t start = p->pos;
	while (is_description_char(peek(p)))
		p->pos++;
	return (struct ber_view){ (const uint8_t *)p->text + start, p->pos - start };
}

/*
 * Validate one value piece starting at p->pos: returns the unescaped length
 * in *n, or LUMEN_EMALFORMED with p->pos at the offending byte.
 */
static int measure_value_piece(struct text_parser *p, size_t *n)
{
	size_t i = p->pos;
	*n = 0;
	while (i < p->len) {
		int c = (unsigned char)p->text[i];
		if (c == '*' || c == ')')
			break;
		if (c == '(' || c == '\0') {
			p->pos = i;
			return LUMEN_EMALFORMED;
		}
		if (c == '\\') {
			if (p->len - i < 3 ||
			    hex_pair_value((unsigned char)p->text[i + 1],
					   (unsigned char)p->text[i + 2]) < 0) {
				p->pos = i;
				return LUMEN_EMALFORMED;
			}
			i += 2;
		}
		i++;
		++*n;
	}
	return LUMEN_OK;
}

/*
 * One value piece: unescape up to an unescaped '*' or ')' (or the end, for an
 * unparenthesized filter) into one exact arena block.
 */
static int scan_value_piece(struct text_parser *p, struct ber_view *out)
{
	size_t n;
	int rc = measure_value_piece(p, &n);
	if (rc != LUMEN_OK)
		return rc;
	uint8_t *buf = arena_alloc(p->arena, n + 1);
	if (buf == NULL)
		return LUMEN_ENOMEM;
	for (size_t k = 0; k < n; k++) {
		int c = (unsigned char)p->text[p->pos];
		if (c == '\\') {
			buf[k] = (uint8_t)hex_pair_value((unsigned char)p->text[p->pos + 1],
							 (unsigned char)p->text[p->pos + 2]);
			p->pos += 3;
		} else {
			buf[k] = (uint8_t)c;
			p->pos++;
		}
	}
	buf[n] = '\0';
	*out = (struct ber_view){ buf, n };
	return LUMEN_OK;
}

/* Unescaped '*' from p->pos to the end of the value: bounds the "any" pieces. */
static size_t count_separators(const struct text_parser *p)
{
	size_t n = 0;
	for (size_t i = p->pos; i < p->len && p->text[i] != ')'; i++) {
		if (p->text[i] == '\\')
			i += 2;
		else if (p->text[i] == '*')
			n++;
	}
	return n;
}

static struct ldap_filter *new_node(struct text_parser *p, enum ldap_filter_type type)
{
	struct ldap_filter *f = arena_calloc(p->arena, 1, sizeof(*f));
	if (f != NULL)
		f->type = type;
	return f;
}

/* After "attr=": a plain value, "*" (presence) or substring pieces "a*b*c". */
static int parse_substrings_or_value(struct text_parser *p, struct ldap_filter *f)
{
	struct ber_view first;
	int rc = scan_value_piece(p, &first);
	if (rc != LUMEN_OK)
		return rc;
	if (peek(p) != '*') {
		f->u.ava.value = first;   /* a plain equality */
		return LUMEN_OK;
	}
	struct ber_view attr = f->u.ava.attr;
	p->pos++;
	/* "attr=*" alone is presence */
	if (first.len == 0 && (peek(p) == ')' || peek(p) == -1)) {
		f->type = LDAP_FILTER_PRESENT;
		f->u.present = attr;
		return LUMEN_OK;
	}
	f->type = LDAP_FILTER_SUBSTRINGS;
	memset(&f->u.substrings, 0, sizeof(f->u.substrings));
	f->u.substrings.attr = attr;
	f->u.substrings.has_initial = first.len > 0;
	f->u.substrings.initial = first;
	size_t max_pieces = count_separators(p);
	struct ber_view *any = NULL;
	for (;;) {
		struct ber_view piece;
		rc = scan_value_piece(p, &piece);
		if (rc != LUMEN_OK)
			return rc;
		if (peek(p) != '*') {
			f->u.substrings.has_final = piece.len > 0;
			f->u.substrings.final = piece;
			break;
		}
		p->pos++;
		if (piece.len == 0)
			continue;
		if (any == NULL && (any = arena_calloc(p->arena, max_pieces, sizeof(*any))) == NULL)
			return LUMEN_ENOMEM;
		any[f->u.substrings.n_any++] = piece;
	}
	f->u.substrings.any = any;
	/* "(cn=**)" has no piece at all: not a substring assertion */
	if (!f->u.substrings.has_initial && !f->u.substrings.has_final && any == NULL)
		return LUMEN_EMALFORMED;
	return LUMEN_OK;
}

/* ":dn", ":rule" and ":=" after the (possibly empty) attribute. */
static int parse_extensible(struct text_parser *p, struct ldap_filter *f, struct ber_view attr)
{
	f->type = LDAP_FILTER_EXTENSIBLE;
	f->u.extensible.has_attr = attr.len > 0;
	f->u.extensible.attr = attr;
	while (peek(p) == ':') {
		p->pos++;
		if (peek(p) == '=') {
			p->pos++;
			if (!f->u.extensible.has_attr && !f->u.extensible.has_rule)
				return LUMEN_EMALFORMED;
			int rc = scan_value_piece(p, &f->u.extensible.value);
			if (rc == LUMEN_OK && peek(p) == '*')
				rc = LUMEN_EMALFORMED;
			return rc;
		}
		struct ber_view token = scan_description(p);
		if (token.len == 0)
			return LUMEN_EMALFORMED;
		bool is_dn = token.len == 2 && strncasecmp((const char *)token.ptr, "dn", 2) == 0;
		if (is_dn && !f->u.extensible.dn_attributes && !f->u.extensible.has_rule) {
			f->u.extensible.dn_attributes = true;
		} else if (!f->u.extensible.has_rule) {
			f->u.extensible.has_rule = true;
			f->u.extensible.rule = token;
		} else {
			return LUMEN_EMALFORMED;
		}
	}
	return LUMEN_EMALFORMED;
}

static int parse_item(struct text_parser *p, struct ldap_filter *f)
{
	struct ber_view attr = scan_description(p);
	int c = peek(p);
	if (c == ':')
		return parse_extensible(p, f, attr);
	if (attr.len == 0)
		return LUMEN_EMALFORMED;
	if (c == '~' || c == '>' || c == '<') {
		p->pos++;
		if (peek(p) != '=')
			return LUMEN_EMALFORMED;
		p->pos++;
		f->type = c == '~' ? LDAP_FILTER_APPROX
		      : c == '>' ? LDAP_FILTER_GREATER_OR_EQUAL : LDAP_FILTER_LESS_OR_EQUAL;
		f->u.ava.attr = attr;
		int rc = scan_value_piece(p, &f->u.ava.value);
		if (rc == LUMEN_OK && peek(p) == '*')
			rc = LUMEN_EMALFORMED;
		return rc;
	}
	if (c != '=')
		return LUMEN_EMALFORMED;
	p->pos++;
	f->type = LDAP_FILTER_EQUALITY;
	f->u.ava.attr = attr;
	return parse_substrings_or_value(p, f);
}

static int parse_filter(struct text_parser *p, unsigned depth, struct ldap_filter **out);

/* filterlist: zero or more "(...)" up to the closing ')' (RFC 4526 allows none). */
static int parse_list(struct text_parser *p, unsigned depth, struct ldap_filter **first)
{
	struct ldap_filter **tail = first;
	while (peek(p) == '(') {
		int rc = parse_filter(p, depth, tail);
		if (rc != LUMEN_OK)
			return rc;
		tail = &(*tail)->next;
	}
	return LUMEN_OK;
}

/* The inside of one "( ... )", after '('. */
static int parse_component(struct text_parser *p, unsigned depth, struct ldap_filter *f)
{
	int c = peek(p);
	if (c == '&' || c == '|') {
		p->pos++;
		f->type = c == '&' ? LDAP_FILTER_AND : LDAP_FILTER_OR;
		return parse_list(p, depth + 1, &f->u.children);
	}
	if (c == '!') {
		p->pos++;
		f->type = LDAP_FILTER_NOT;
		if (peek(p) != '(')
			return LUMEN_EMALFORMED;
		return parse_filter(p, depth + 1, &f->u.child);
	}
	return parse_item(p, f);
}

static int parse_filter(struct text_parser *p, unsigned depth, struct ldap_filter **out)
{
	if (depth > p->max_depth || ++p->n_nodes > p->max_nodes)
		return LUMEN_ELIMIT;
	struct ldap_filter *f = new_node(p, LDAP_FILTER_AND);
	if (f == NULL)
		return LUMEN_ENOMEM;
	*out = f;
	if (peek(p) != '(')
		return LUMEN_EMALFORMED;
	p->pos++;
	int rc = parse_component(p, depth, f);
	if (rc != LUMEN_OK)
		return rc;
	if (peek(p) != ')')
		return LUMEN_EMALFORMED;
	p->pos++;
	return LUMEN_OK;
}

int ldap_filter_text_parse(const char *text, size_t len, struct arena *arena,
			   const struct ldap_decode_limits *limits,
			   struct ldap_filter **out, size_t *error_offset)
{
	struct ldap_decode_limits defaults;
	if (limits == NULL) {
		ldap_decode_limits_default(&defaults);
		limits = &defaults;
	}
	struct text_parser p = {
		.text = text, .len = len, .arena = arena,
		.max_depth = limits->max_filter_depth, .max_nodes = limits->max_filter_nodes,
	};
	*out = NULL;
	int rc;
	struct ldap_filter *f = NULL;
	if (len > 0 && text[0] != '(') {
		/* OpenLDAP's tools accept a bare item: "cn=foo" */
		p.n_nodes = 1;
		f = new_node(&p, LDAP_FILTER_AND);
		rc = f == NULL ? LUMEN_ENOMEM : parse_item(&p, f);
	} else {
		rc = parse_filter(&p, 0, &f);
	}
	if (rc == LUMEN_OK && p.pos != len)
		rc = LUMEN_EMALFORMED;
	if (rc != LUMEN_OK) {
		if (error_offset != NULL)
			*error_offset = p.pos;
		return rc;
	}
	*out = f;
	return LUMEN_OK;
}

/* --------------------------------------------------------------- printer */

#define PRINT_MAX_DEPTH (BER_MAX_NESTING * 16)

/* Counts on the first pass (buf NULL), writes on the second. */
struct text_sink {
	char *buf;
	size_t len;
};

static void put(struct text_sink *s, const void *p, size_t n)
{
	if (s->buf != NULL && n > 0)
		memcpy(s->buf + s->len, p, n);
	s->len += n;
}

static void put_str(struct text_sink *s, const char *str)
{
	put(s, str, strlen(str));
}

static void put_escaped(struct text_sink *s, struct ber_view v)
{
	for (size_t i = 0; i < v.len; i++) {
		uint8_t c = v.ptr[i];
		if (c < 0x20 || c >= 0x7f || c == '*' || c == '(' || c == ')' || c == '\\') {
			char e[3] = { '\\' };
			hex_write_byte(e + 1, c, false);
			put(s, e, 3);
		} else {
			put(s, &c, 1);
		}
	}
}

static int print_node(struct text_sink *s, const struct ldap_filter *f, unsigned depth);

static int print_substrings(struct text_sink *s, const struct ldap_filter *f)
{
	if (!f->u.substrings.has_initial && !f->u.substrings.has_final &&
	    f->u.substrings.n_any == 0)
		return LUMEN_EINVAL;
	put(s, f->u.substrings.attr.ptr, f->u.substrings.attr.len);
	put_str(s, "=");
	if (f->u.substrings.has_initial)
		put_escaped(s, f->u.substrings.initial);
	put_str(s, "*");
	for (size_t i = 0; i < f->u.substrings.n_any; i++) {
		put_escaped(s, f->u.substrings.any[i]);
		put_str(s, "*");
	}
	if (f->u.substrings.has_final)
		put_escaped(s, f->u.substrings.final);
	return LUMEN_OK;
}

static void print_extensible(struct text_sink *s, const struct ldap_filter *f)
{
	if (f->u.extensible.has_attr)
		put(s, f->u.extensible.attr.ptr, f->u.extensible.attr.len);
	if (f->u.extensible.dn_attributes)
		put_str(s, ":dn");
	if (f->u.extensible.has_rule) {
		put_str(s, ":");
		put(s, f->u.extensible.rule.ptr, f->u.extensible.rule.len);
	}
	put_str(s, ":=");
	put_escaped(s, f->u.extensible.value);
}

static int print_item(struct text_sink *s, const struct ldap_filter *f)
{
	static const char *const operators[] = {
		[LDAP_FILTER_EQUALITY] = "=", [LDAP_FILTER_GREATER_OR_EQUAL] = ">=",
		[LDAP_FILTER_LESS_OR_EQUAL] = "<=", [LDAP_FILTER_APPROX] = "~=",
	};
	switch (f->type) {
	case LDAP_FILTER_EQUALITY:
	case LDAP_FILTER_GREATER_OR_EQUAL:
	case LDAP_FILTER_LESS_OR_EQUAL:
	case LDAP_FILTER_APPROX:
		put(s, f->u.ava.attr.ptr, f->u.ava.attr.len);
		put_str(s, operators[f->type]);
		put_escaped(s, f->u.ava.value);
		return LUMEN_OK;
	case LDAP_FILTER_PRESENT:
		put(s, f->u.present.ptr, f->u.present.len);
		put_str(s, "=*");
		return LUMEN_OK;
	case LDAP_FILTER_SUBSTRINGS:
		return print_substrings(s, f);
	case LDAP_FILTER_EXTENSIBLE:
		print_extensible(s, f);
		return LUMEN_OK;
	default:
		return LUMEN_EINVAL;
	}
}

static int print_node(struct text_sink *s, const struct ldap_filter *f, unsigned depth)
{
	if (depth > PRINT_MAX_DEPTH)
		return LUMEN_EINVAL;
	int rc = LUMEN_OK;
	put_str(s, "(");
	switch (f->type) {
	case LDAP_FILTER_AND:
	case LDAP_FILTER_OR:
		put_str(s, f->type == LDAP_FILTER_AND ? "&" : "|");
		for (const struct ldap_filter *c = f->u.children; c != NULL && rc == LUMEN_OK; c = c->next)
			rc = print_node(s, c, depth + 1);
		break;
	case LDAP_FILTER_NOT:
		put_str(s, "!");
		rc = f->u.child ? print_node(s, f->u.child, depth + 1) : LUMEN_EINVAL;
		break;
	default:
		rc = print_item(s, f);
		break;
	}
	put_str(s, ")");
	return rc;
}

int ldap_filter_text_print(const struct ldap_filter *f, struct arena *arena,
			   struct ber_view *out)
{
	if (f == NULL)
		return LUMEN_EINVAL;
	struct text_sink count = { NULL, 0 };
	int rc = print_node(&count, f, 0);
	if (rc != LUMEN_OK)
		return rc;
	struct text_sink write = { arena_alloc(arena, count.len + 1), 0 };
	if (write.buf == NULL)
		return LUMEN_ENOMEM;
	print_node(&write, f, 0);
	write.buf[write.len] = '\0';
	*out = (struct ber_view){ (const uint8_t *)write.buf, write.len };
	return LUMEN_OK;
}
