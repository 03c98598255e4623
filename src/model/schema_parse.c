/*
 * schema_parse.c — reads OpenLDAP-format .schema text: statements
 * (`attributetype`, `objectclass`, `objectidentifier`), '#' comment lines,
 * continuation lines that start with white space. Each definition is parsed
 * into a def (schema_internal.h) with its references still as names, plus the
 * canonical RFC 4512 text the subschema subentry publishes (macros expanded,
 * single spaces, fields in RFC order). Contract: include/schema.h.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "file_read.h"
#include "lumen_error.h"
#include "schema_internal.h"
#include "schema_lex.h"

struct parser {
	struct schema *s;
	struct lexer lx;
	struct schema_origin origin;
	char *err;
	size_t errlen;
};

/* A schema file larger than this is not one (core.schema is 12 KiB). */
#define SCHEMA_MAX_FILE_BYTES (16u << 20)
#define FAIL(p, rc, ...) schema_error((p)->err, (p)->errlen, &(p)->origin, (rc), __VA_ARGS__)

static bool token_is(struct token tok, const char *word)
{
	return tok.kind == TOKEN_WORD && strlen(word) == tok.len &&
	       strncasecmp(tok.text, word, tok.len) == 0;
}

static bool is_alpha(char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static bool is_numericoid(const char *s, size_t len)
{
	bool arc_start = true;
	size_t dots = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '.') {
			if (arc_start)
				return false;
			arc_start = true;
			dots++;
		} else if (is_digit(s[i])) {
			arc_start = false;
		} else {
			return false;
		}
	}
	return !arc_start && dots > 0;
}

static bool is_descr(const char *s, size_t len)
{
	if (len == 0 || !is_alpha(s[0]))
		return false;
	for (size_t i = 1; i < len; i++)
		if (!is_alpha(s[i]) && !is_digit(s[i]) && s[i] != '-')
			return false;
	return true;
}

static char *copy_text(struct parser *p, const char *s, size_t len)
{
	return arena_strndup(&p->s->arena, s, len);
}

/*
 * A numeric OID from a word: itself, an objectidentifier name, or
 * "name:suffix" (the macro's OID, '.', the suffix).
 */
static int resolve_oid(struct parser *p, struct token tok, const char **out)
{
	/* Checked first: a TOKEN_END (input ending after "(") has no text. */
	if (tok.kind != TOKEN_WORD)
		return FAIL(p, LUMEN_EMALFORMED, "OID expected");
	const char *colon = memchr(tok.text, ':', tok.len);
	size_t name_len = colon ? (size_t)(colon - tok.text) : tok.len;

	if (is_numericoid(tok.text, tok.len)) {
		*out = copy_text(p, tok.text, tok.len);
		return *out ? LUMEN_OK : FAIL(p, LUMEN_ENOMEM, "out of memory");
	}
	const char *base = name_table_get(&p->s->oid_macros, tok.text, name_len);
	if (base == NULL)
		return FAIL(p, LUMEN_EMALFORMED, "'%.*s' is neither an OID nor a known "
			    "objectidentifier", (int)tok.len, tok.text);
	if (colon == NULL) {
		*out = base;
		return LUMEN_OK;
	}
	const char *suffix = colon + 1;
	size_t suffix_len = tok.len - name_len - 1;
	if (suffix_len == 0 || (!is_numericoid(suffix, suffix_len) &&
				strspn(suffix, "0123456789") < suffix_len))
		return FAIL(p, LUMEN_EMALFORMED, "bad OID suffix in '%.*s'", (int)tok.len, tok.text);
	size_t base_len = strlen(base);
	char *oid = arena_alloc(&p->s->arena, base_len + 1 + suffix_len + 1);
	if (oid == NULL)
		return FAIL(p, LUMEN_ENOMEM, "out of memory");
	memcpy(oid, base, base_len);
	oid[base_len] = '.';
	memcpy(oid + base_len + 1, suffix, suffix_len);
	oid[base_len + 1 + suffix_len] = '\0';
	*out = oid;
	return LUMEN_OK;
}

/* A reference (SUP, rule, MUST/MAY): a name as written, or a resolved OID. */
static int read_reference(struct parser *p, struct token tok, const char **out)
{
	if (tok.kind != TOKEN_WORD)
		return FAIL(p, LUMEN_EMALFORMED, "name or OID expected");
	if (memchr(tok.text, ':', tok.len) != NULL)
		return resolve_oid(p, tok, out);
	if (!is_descr(tok.text, tok.len) && !is_numericoid(tok.text, tok.len))
		return FAIL(p, LUMEN_EMALFORMED, "bad name or OID '%.*s'", (int)tok.len, tok.text);
	*out = copy_text(p, tok.text, tok.len);
	return *out ? LUMEN_OK : FAIL(p, LUMEN_ENOMEM, "out of memory");
}

/* qdstring contents with \27 and \5C (either case) decoded. */
static char *unescape_quoted(struct parser *p, struct token tok)
{
	char *out = arena_alloc(&p->s->arena, tok.len + 1);
	size_t n = 0;
	if (out == NULL)
		return NULL;
	for (size_t i = 0; i < tok.len; i++) {
		if (tok.text[i] == '\\' && i + 2 < tok.len) {
			if (strncmp(tok.text + i + 1, "27", 2) == 0) {
				out[n++] = '\'';
				i += 2;
				continue;
			}
			if (strncasecmp(tok.text + i + 1, "5c", 2) == 0) {
				out[n++] = '\\';
				i += 2;
				continue;
			}
		}
		out[n++] = tok.text[i];
	}
	out[n] = '\0';
	return out;
}

/*
 * A list: one element, or '(' elements ')' separated by '$' when dollar is
 * set (oids) or by space (qdescrs, qdstrings). Elements go to *list.
 */
static int read_list(struct parser *p, bool quoted, bool dollar, struct name_list *list)
{
	struct token items[256];
	size_t n = 0;
	struct token tok = lexer_next(&p->lx);
	enum token_kind want = quoted ? TOKEN_QUOTED : TOKEN_WORD;

	if (tok.kind == TOKEN_OPEN) {
		for (;;) {
			tok = lexer_next(&p->lx);
			if (tok.kind == TOKEN_CLOSE && n > 0)
				break;
			if (tok.kind == TOKEN_END)
				return FAIL(p, LUMEN_EMALFORMED, "unterminated '('");
			if (tok.kind != want)
				return FAIL(p, LUMEN_EMALFORMED, "%s expected in list",
					    quoted ? "quoted string" : "name or OID");
			if (n == sizeof(items) / sizeof(items[0]))
				return FAIL(p, LUMEN_ELIMIT, "list longer than %zu", n);
			items[n++] = tok;
			struct token next = lexer_peek(&p->lx);
			if (dollar && next.kind == TOKEN_DOLLAR)
				lexer_next(&p->lx);
			else if (dollar && next.kind != TOKEN_CLOSE)
				return FAIL(p, LUMEN_EMALFORMED, "'$' or ')' expected in list");
		}
	} else if (tok.kind == want) {
		items[n++] = tok;
	} else {
		if (tok.kind == TOKEN_UNTERMINATED)
			return FAIL(p, LUMEN_EMALFORMED, "unterminated quoted string");
		return FAIL(p, LUMEN_EMALFORMED, "%s expected",
			    quoted ? "quoted string" : "name or OID");
	}
	list->names = arena_alloc(&p->s->arena, n * sizeof(char *));
	if (list->names == NULL)
		return FAIL(p, LUMEN_ENOMEM, "out of memory");
	list->count = n;
	for (size_t i = 0; i < n; i++) {
		int rc;
		if (quoted) {
			list->names[i] = unescape_quoted(p, items[i]);
			rc = list->names[i] ? LUMEN_OK : FAIL(p, LUMEN_ENOMEM, "out of memory");
		} else {
			rc = read_reference(p, items[i], &list->names[i]);
		}
		if (rc != LUMEN_OK)
			return rc;
	}
	return LUMEN_OK;
}

static int read_names(struct parser *p, struct name_list *names)
{
	int rc = read_list(p, true, false, names);
	for (size_t i = 0; rc == LUMEN_OK && i < names->count; i++)
		if (!is_descr(names->names[i], strlen(names->names[i])))
			rc = FAIL(p, LUMEN_EMALFORMED, "bad NAME '%s'", names->names[i]);
	return rc;
}

static int read_quoted(struct parser *p, const char **out)
{
	struct token tok = lexer_next(&p->lx);
	if (tok.kind == TOKEN_UNTERMINATED)
		return FAIL(p, LUMEN_EMALFORMED, "unterminated quoted string");
	if (tok.kind != TOKEN_QUOTED)
		return FAIL(p, LUMEN_EMALFORMED, "quoted string expected");
	*out = unescape_quoted(p, tok);
	return *out ? LUMEN_OK : FAIL(p, LUMEN_ENOMEM, "out of memory");
}

/* X-NAME qdstrings: kept (in canonical form) in the definition text. */
static int read_extension(struct parser *p, struct token keyword, struct text_buffer *ext)
{
	struct name_list values;
	int rc = read_list(p, true, false, &values);
	if (rc != LUMEN_OK)
		return rc;
	text_append(ext, " ", 1);
	text_append(ext, keyword.text, keyword.len);
	text_append_str(ext, values.count > 1 ? " (" : "");
	for (size_t i = 0; i < values.count; i++) {
		text_append(ext, " ", 1);
		text_append_quoted(ext, values.names[i]);
	}
	text_append_str(ext, values.count > 1 ? " )" : "");
	return LUMEN_OK;
}

static void append_names(struct text_buffer *tb, const char *keyword,
			 const char *const *names, size_t n, bool quoted)
{
	if (n == 0)
		return;
	text_append_str(tb, " ");
	text_append_str(tb, keyword);
	text_append_str(tb, n > 1 ? " (" : "");
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && !quoted)
			text_append_str(tb, " $");
		text_append_str(tb, " ");
		if (quoted)
			text_append_quoted(tb, names[i]);
		else
			text_append_str(tb, names[i]);
	}
	text_append_str(tb, n > 1 ? " )" : "");
}

static void append_field(struct text_buffer *tb, const char *keyword, const char *value)
{
	if (value == NULL)
		return;
	text_append_str(tb, " ");
	text_append_str(tb, keyword);
	text_append_str(tb, " ");
	text_append_str(tb, value);
}

static void append_flag(struct text_buffer *tb, const char *keyword, bool set)
{
	if (set) {
		text_append_str(tb, " ");
		text_append_str(tb, keyword);
	}
}

static int finish_definition(struct parser *p, struct text_buffer *tb, struct text_buffer *ext,
			     const char **out)
{
	if (ext->len > 0)
		text_append(tb, ext->data, ext->len);
	text_append_str(tb, " )");
	if (tb->failed || ext->failed)
		return FAIL(p, LUMEN_ENOMEM, "out of memory");
	*out = copy_text(p, tb->data, tb->len);
	return *out ? LUMEN_OK : FAIL(p, LUMEN_ENOMEM, "out of memory");
}

/* The statement must end right after its closing ')'. */
static int expect_end(struct parser *p)
{
	struct token tok = lexer_next(&p->lx);
	if (tok.kind != TOKEN_END)
		return FAIL(p, LUMEN_EMALFORMED, "unexpected '%.*s' after ')'",
			    (int)tok.len, tok.text);
	return LUMEN_OK;
}

/* A token that should be a keyword inside a description. */
static int check_keyword_token(struct parser *p, struct token tok)
{
	if (tok.kind == TOKEN_END)
		return FAIL(p, LUMEN_EMALFORMED, "unterminated '('");
	if (tok.kind == TOKEN_UNTERMINATED)
		return FAIL(p, LUMEN_EMALFORMED, "unterminated quoted string");
	if (tok.kind != TOKEN_WORD)
		return FAIL(p, LUMEN_EMALFORMED, "keyword expected, found '%.*s'",
			    (int)tok.len, tok.text);
	return LUMEN_OK;
}

/* Opening "( numericoid" of a description. */
static int read_head(struct parser *p, const char **oid)
{
	struct token tok = lexer_next(&p->lx);
	if (tok.kind != TOKEN_OPEN)
		return FAIL(p, LUMEN_EMALFORMED, "'(' expected");
	return resolve_oid(p, lexer_next(&p->lx), oid);
}

/* ---------------------------------------------- description keyword tables */

enum value_kind {
	VALUE_FLAG,         /* bool set by the bare keyword */
	VALUE_NAMES,        /* qdescrs -> struct name_list */
	VALUE_QUOTED,       /* qdstring -> const char * */
	VALUE_REFERENCE,    /* oid -> const char * */
	VALUE_OIDS,         /* oids -> struct name_list */
	VALUE_SYNTAX,       /* noidlen -> syntax_oid + syntax_length */
	VALUE_USAGE,        /* attribute usage */
	VALUE_CLASS_KIND,   /* ABSTRACT / STRUCTURAL / AUXILIARY (the keyword itself) */
};

struct keyword {
	const char *word;
	enum value_kind kind;
	size_t offset;      /* of the field in the def */
	unsigned group;     /* keywords of one group exclude each other */
};

#define AT(field) offsetof(struct attribute_type_def, field)
#define OC(field) offsetof(struct object_class_def, field)

static const struct keyword attribute_type_keywords[] = {
	{ "NAME", VALUE_NAMES, AT(name_list), 0 },
	{ "DESC", VALUE_QUOTED, AT(type.description), 1 },
	{ "OBSOLETE", VALUE_FLAG, AT(type.obsolete), 2 },
	{ "SUP", VALUE_REFERENCE, AT(sup_name), 3 },
	{ "EQUALITY", VALUE_REFERENCE, AT(equality_name), 4 },
	{ "ORDERING", VALUE_REFERENCE, AT(ordering_name), 5 },
	{ "SUBSTR", VALUE_REFERENCE, AT(substr_name), 6 },
	{ "SYNTAX", VALUE_SYNTAX, AT(syntax_oid), 7 },
	{ "SINGLE-VALUE", VALUE_FLAG, AT(type.single_value), 8 },
	{ "COLLECTIVE", VALUE_FLAG, AT(type.collective), 9 },
	{ "NO-USER-MODIFICATION", VALUE_FLAG, AT(type.no_user_modification), 10 },
	{ "USAGE", VALUE_USAGE, AT(type.usage), 11 },
};

static const struct keyword object_class_keywords[] = {
	{ "NAME", VALUE_NAMES, OC(name_list), 0 },
	{ "DESC", VALUE_QUOTED, OC(object_class.description), 1 },
	{ "OBSOLETE", VALUE_FLAG, OC(object_class.obsolete), 2 },
	{ "SUP", VALUE_OIDS, OC(sup_names), 3 },
	{ "ABSTRACT", VALUE_CLASS_KIND, OC(object_class.kind), 4 },
	{ "STRUCTURAL", VALUE_CLASS_KIND, OC(object_class.kind), 4 },
	{ "AUXILIARY", VALUE_CLASS_KIND, OC(object_class.kind), 4 },
	{ "MUST", VALUE_OIDS, OC(must_names), 5 },
	{ "MAY", VALUE_OIDS, OC(may_names), 6 },
};

static const char *const usage_names[] = {
	[ATTRIBUTE_USER_APPLICATIONS] = "userApplications",
	[ATTRIBUTE_DIRECTORY_OPERATION] = "directoryOperation",
	[ATTRIBUTE_DISTRIBUTED_OPERATION] = "distributedOperation",
	[ATTRIBUTE_DSA_OPERATION] = "dSAOperation",
};

static const char *const class_kind_names[] = {
	[OBJECT_CLASS_ABSTRACT] = "ABSTRACT",
	[OBJECT_CLASS_STRUCTURAL] = "STRUCTURAL",
	[OBJECT_CLASS_AUXILIARY] = "AUXILIARY",
};

/* "oid{N}": the OID (macros allowed) and the length bound. */
static int read_syntax(struct parser *p, struct attribute_type_def *def)
{
	struct token tok = lexer_next(&p->lx);
	if (tok.kind == TOKEN_QUOTED)       /* some old files quote it */
		tok.kind = TOKEN_WORD;
	if (tok.kind != TOKEN_WORD)
		return FAIL(p, LUMEN_EMALFORMED, "SYNTAX: OID expected");
	const char *brace = memchr(tok.text, '{', tok.len);
	if (brace != NULL) {
		size_t bound = 0, i = (size_t)(brace - tok.text) + 1;
		if (i >= tok.len - 1 || tok.text[tok.len - 1] != '}')
			return FAIL(p, LUMEN_EMALFORMED, "SYNTAX: bad length in '%.*s'",
				    (int)tok.len, tok.text);
		for (; i < tok.len - 1; i++) {
			if (!is_digit(tok.text[i]) || bound > 100000000)
				return FAIL(p, LUMEN_EMALFORMED, "SYNTAX: bad length in '%.*s'",
					    (int)tok.len, tok.text);
			bound = bound * 10 + (size_t)(tok.text[i] - '0');
		}
		def->type.syntax_length = bound;
		tok.len = (size_t)(brace - tok.text);
	}
	return resolve_oid(p, tok, &def->syntax_oid);
}

static int read_usage(struct parser *p, enum attribute_usage *usage)
{
	struct token tok = lexer_next(&p->lx);
	for (size_t i = 0; i < sizeof(usage_names) / sizeof(usage_names[0]); i++) {
		if (token_is(tok, usage_names[i])) {
			*usage = (enum attribute_usage)i;
			return LUMEN_OK;
		}
	}
	return FAIL(p, LUMEN_EMALFORMED, "USAGE: unknown usage '%.*s'", (int)tok.len, tok.text);
}

static int read_value(struct parser *p, const struct keyword *kw, struct token word, void *def)
{
	void *field = (char *)def + kw->offset;

	switch (kw->kind) {
	case VALUE_FLAG:
		*(bool *)field = true;
		return LUMEN_OK;
	case VALUE_NAMES:
		return read_names(p, field);
	case VALUE_QUOTED:
		return read_quoted(p, field);
	case VALUE_REFERENCE:
		return read_reference(p, lexer_next(&p->lx), field);
	case VALUE_OIDS:
		return read_list(p, false, true, field);
	case VALUE_SYNTAX:
		return read_syntax(p, def);
	case VALUE_USAGE:
		return read_usage(p, field);
	case VALUE_CLASS_KIND:
		for (size_t i = 0; i < 3; i++)
			if (token_is(word, class_kind_names[i]))
				*(enum object_class_kind *)field = (enum object_class_kind)i;
		return LUMEN_OK;
	}
	return LUMEN_EINVAL;
}

/*
 * The keywords after "( numericoid" up to ')', dispatched through the table;
 * X- extensions are appended to ext. A keyword (group) may appear once.
 */
static int read_fields(struct parser *p, const struct keyword *table, size_t n, void *def,
		       struct text_buffer *ext)
{
	unsigned seen = 0;

	for (;;) {
		struct token tok = lexer_next(&p->lx);
		if (tok.kind == TOKEN_CLOSE)
			return expect_end(p);
		int rc = check_keyword_token(p, tok);
		if (rc != LUMEN_OK)
			return rc;
		if (tok.len > 2 && strncasecmp(tok.text, "X-", 2) == 0) {
			rc = read_extension(p, tok, ext);
			if (rc != LUMEN_OK)
				return rc;
			continue;
		}
		const struct keyword *kw = NULL;
		for (size_t i = 0; i < n && kw == NULL; i++)
			if (token_is(tok, table[i].word))
				kw = &table[i];
		if (kw == NULL)
			return FAIL(p, LUMEN_EMALFORMED, "unknown keyword '%.*s'",
				    (int)tok.len, tok.text);
		if (seen & (1u << kw->group))
			return FAIL(p, LUMEN_EMALFORMED, "'%s' given twice", kw->word);
		seen |= 1u << kw->group;
		rc = read_value(p, kw, tok, def);
		if (rc != LUMEN_OK)
			return rc;
	}
}

/* RFC 4512 §4.1.2 rules a description must follow on its own. */
static int check_attribute_type(struct parser *p, const struct attribute_type_def *def)
{
	const struct attribute_type *at = &def->type;
	if (def->sup_name == NULL && def->syntax_oid == NULL)
		return FAIL(p, LUMEN_EMALFORMED, "attribute type %s: neither SUP nor SYNTAX",
			    at->oid);
	if (at->collective && at->usage != ATTRIBUTE_USER_APPLICATIONS)
		return FAIL(p, LUMEN_EMALFORMED, "attribute type %s: COLLECTIVE needs "
			    "userApplications usage", at->oid);
	if (at->no_user_modification && at->usage == ATTRIBUTE_USER_APPLICATIONS)
		return FAIL(p, LUMEN_EMALFORMED, "attribute type %s: NO-USER-MODIFICATION "
			    "needs an operational USAGE", at->oid);
	return LUMEN_OK;
}

static void describe_attribute_type(const struct attribute_type_def *def,
				    struct text_buffer *tb)
{
	const struct attribute_type *at = &def->type;
	char bound[32] = "";

	text_append_str(tb, "( ");
	text_append_str(tb, at->oid);
	append_names(tb, "NAME", at->names, at->n_names, true);
	if (at->description != NULL) {
		text_append_str(tb, " DESC ");
		text_append_quoted(tb, at->description);
	}
	append_flag(tb, "OBSOLETE", at->obsolete);
	append_field(tb, "SUP", def->sup_name);
	append_field(tb, "EQUALITY", def->equality_name);
	append_field(tb, "ORDERING", def->ordering_name);
	append_field(tb, "SUBSTR", def->substr_name);
	append_field(tb, "SYNTAX", def->syntax_oid);
	if (def->syntax_oid != NULL && at->syntax_length > 0) {
		snprintf(bound, sizeof(bound), "{%zu}", at->syntax_length);
		text_append_str(tb, bound);
	}
	append_flag(tb, "SINGLE-VALUE", at->single_value);
	append_flag(tb, "COLLECTIVE", at->collective);
	append_flag(tb, "NO-USER-MODIFICATION", at->no_user_modification);
	if (at->usage != ATTRIBUTE_USER_APPLICATIONS)
		append_field(tb, "USAGE", usage_names[at->usage]);
}

/* "( numericoid" and then the fields of table, into def; extensions into ext. */
static int read_definition(struct parser *p, const char **oid, const struct keyword *table,
			   size_t n, void *def, struct text_buffer *ext)
{
	int rc = read_head(p, oid);
	return rc == LUMEN_OK ? read_fields(p, table, n, def, ext) : rc;
}

static void describe_object_class(const struct object_class_def *def, struct text_buffer *tb)
{
	const struct object_class *oc = &def->object_class;

	text_append_str(tb, "( ");
	text_append_str(tb, oc->oid);
	append_names(tb, "NAME", oc->names, oc->n_names, true);
	if (oc->description != NULL) {
		text_append_str(tb, " DESC ");
		text_append_quoted(tb, oc->description);
	}
	append_flag(tb, "OBSOLETE", oc->obsolete);
	append_names(tb, "SUP", def->sup_names.names, def->sup_names.count, false);
	append_flag(tb, class_kind_names[oc->kind], true);
	append_names(tb, "MUST", def->must_names.names, def->must_names.count, false);
	append_names(tb, "MAY", def->may_names.names, def->may_names.count, false);
}

static int parse_attribute_type(struct parser *p)
{
	struct attribute_type_def *def = arena_calloc(&p->s->arena, 1, sizeof(*def));
	struct text_buffer tb = { 0 }, ext = { 0 };
	int rc;

	if (def == NULL)
		return FAIL(p, LUMEN_ENOMEM, "out of memory");
	def->origin = p->origin;
	rc = read_definition(p, &def->type.oid, attribute_type_keywords,
			     sizeof(attribute_type_keywords) / sizeof(attribute_type_keywords[0]),
			     def, &ext);
	if (rc != LUMEN_OK)
		goto done;
	def->type.names = def->name_list.names;
	def->type.n_names = def->name_list.count;
	rc = check_attribute_type(p, def);
	if (rc != LUMEN_OK)
		goto done;
	describe_attribute_type(def, &tb);
	rc = finish_definition(p, &tb, &ext, &def->type.definition);
	if (rc == LUMEN_OK)
		rc = schema_add_attribute_type(p->s, def, p->err, p->errlen);
done:
	text_free(&tb);
	text_free(&ext);
	return rc;
}

static int parse_object_class(struct parser *p)
{
	struct object_class_def *def = arena_calloc(&p->s->arena, 1, sizeof(*def));
	struct text_buffer tb = { 0 }, ext = { 0 };
	int rc;

	if (def == NULL)
		return FAIL(p, LUMEN_ENOMEM, "out of memory");
	def->origin = p->origin;
	def->object_class.kind = OBJECT_CLASS_STRUCTURAL;
	rc = read_definition(p, &def->object_class.oid, object_class_keywords,
			     sizeof(object_class_keywords) / sizeof(object_class_keywords[0]),
			     def, &ext);
	if (rc != LUMEN_OK)
		goto done;
	def->object_class.names = def->name_list.names;
	def->object_class.n_names = def->name_list.count;
	describe_object_class(def, &tb);
	rc = finish_definition(p, &tb, &ext, &def->object_class.definition);
	if (rc == LUMEN_OK)
		rc = schema_add_object_class(p->s, def, p->err, p->errlen);
done:
	text_free(&tb);
	text_free(&ext);
	return rc;
}

/* ------------------------------------------------------------ statements */

static int parse_objectidentifier(struct parser *p)
{
	struct token name = lexer_next(&p->lx);
	struct token value = lexer_next(&p->lx);
	const char *oid;

	if (name.kind != TOKEN_WORD || !is_descr(name.text, name.len))
		return FAIL(p, LUMEN_EMALFORMED, "objectidentifier: name expected");
	int rc = resolve_oid(p, value, &oid);
	if (rc != LUMEN_OK)
		return rc;
	rc = expect_end(p);
	if (rc != LUMEN_OK)
		return rc;
	char *key = copy_text(p, name.text, name.len);
	if (key == NULL)
		return FAIL(p, LUMEN_ENOMEM, "out of memory");
	rc = name_table_put(&p->s->oid_macros, key, name.len, (void *)oid);
	if (rc == LUMEN_EEXIST)
		return FAIL(p, rc, "duplicate objectidentifier '%s'", key);
	return rc == LUMEN_OK ? rc : FAIL(p, rc, "out of memory");
}

static int parse_statement(struct parser *p)
{
	struct token keyword = lexer_next(&p->lx);

	if (token_is(keyword, "attributetype") || token_is(keyword, "attributetypes"))
		return parse_attribute_type(p);
	if (token_is(keyword, "objectclass") || token_is(keyword, "objectclasses"))
		return parse_object_class(p);
	if (token_is(keyword, "objectidentifier"))
		return parse_objectidentifier(p);
	return FAIL(p, LUMEN_EMALFORMED, "unknown keyword '%.*s'", (int)keyword.len, keyword.text);
}

int schema_load_text(struct schema *s, const char *origin, const char *text,
		     char *err, size_t errlen)
{
	struct parser p = { .s = s, .err = err, .errlen = errlen };
	const char *line = text;
	unsigned line_no = 1;
	int rc = LUMEN_OK;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	p.origin.file = arena_strndup(&s->arena, origin, strlen(origin));
	if (p.origin.file == NULL)
		return LUMEN_ENOMEM;
	p.origin.line = 0;
	if (s->finalized)
		return FAIL(&p, LUMEN_EINVAL, "schema already finalized");

	/*
	 * A statement starts at a line with text in column 0 and runs over the
	 * following lines that start with white space; comment and blank lines
	 * inside are skipped. Line ends inside a statement count as spaces, so
	 * the lexer can run over the raw text of several lines at once, except
	 * that embedded comment lines must not be read: they are blanked by
	 * splitting the statement at them (handled by reading line by line).
	 */
	struct text_buffer statement = { 0 };
	unsigned statement_line = 0;
	while (rc == LUMEN_OK) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		bool at_end = *line == '\0';
		bool comment_or_blank = at_end || line[0] == '#' ||
					strspn(line, " \t\r") >= len;
		bool continuation = !at_end && !comment_or_blank &&
				    (line[0] == ' ' || line[0] == '\t');

		if (continuation && statement_line == 0) {
			p.origin.line = line_no;
			rc = FAIL(&p, LUMEN_EMALFORMED, "continuation line outside a statement");
			break;
		}
		if (at_end || (!continuation && !comment_or_blank)) {
			if (statement_line != 0) {
				if (statement.failed) {
					rc = FAIL(&p, LUMEN_ENOMEM, "out of memory");
					break;
				}
				p.origin.line = statement_line;
				p.lx.pos = statement.data;
				p.lx.end = statement.data + statement.len;
				rc = parse_statement(&p);
				statement.len = 0;
				statement_line = 0;
			}
			if (at_end || rc != LUMEN_OK)
				break;
			statement_line = line_no;
		}
		if (!comment_or_blank) {
			text_append(&statement, line, len);
			text_append(&statement, "\n", 1);
		}
		if (eol == NULL)
			line += len;
		else
			line = eol + 1;
		line_no++;
	}
	text_free(&statement);
	return rc;
}

int schema_load_file(struct schema *s, const char *path, char *err, size_t errlen)
{
	struct schema_origin origin = { path, 0 };
	char *text = NULL;
	size_t size = 0;
	int rc = file_read_all(path, SCHEMA_MAX_FILE_BYTES, &text, &size);
	if (rc == LUMEN_EIO)
		return schema_error(err, errlen, &origin, rc, "cannot read: %s", strerror(errno));
	if (rc == LUMEN_ELIMIT)
		return schema_error(err, errlen, &origin, rc, "larger than %u MiB",
				    SCHEMA_MAX_FILE_BYTES >> 20);
	if (rc != LUMEN_OK)
		return schema_error(err, errlen, &origin, rc, "out of memory");
	if (memchr(text, '\0', size) != NULL)
		rc = schema_error(err, errlen, &origin, LUMEN_EMALFORMED, "NUL byte in file");
	else
		rc = schema_load_text(s, path, text, err, errlen);
	free(text);
	return rc;
}
