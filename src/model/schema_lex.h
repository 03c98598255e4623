/*
 * schema_lex.h — private to src/model/schema_parse*.c: the tokenizer of
 * RFC 4512 descriptions and a growable text buffer for the canonical
 * definition strings. Startup-only code; the buffer uses malloc.
 */
#ifndef LUMEN_SCHEMA_LEX_H
#define LUMEN_SCHEMA_LEX_H

#include <stdbool.h>
#include <stddef.h>

enum token_kind {
	TOKEN_END,
	TOKEN_OPEN,         /* ( */
	TOKEN_CLOSE,        /* ) */
	TOKEN_DOLLAR,       /* $ */
	TOKEN_QUOTED,       /* 'text' (text excludes the quotes, still escaped) */
	TOKEN_WORD,         /* anything else up to a space or one of ()$' */
	TOKEN_UNTERMINATED, /* a quote that never closes */
};

struct token {
	enum token_kind kind;
	const char *text;
	size_t len;
};

struct lexer {
	const char *pos;
	const char *end;
};

struct token lexer_next(struct lexer *lx);
struct token lexer_peek(const struct lexer *lx);

/* Growable text; the first failed append poisons it (failed == true). */
struct text_buffer {
	char *data;
	size_t len, cap;
	bool failed;
};

void text_append(struct text_buffer *tb, const char *s, size_t len);
void text_append_str(struct text_buffer *tb, const char *s);
/* 'text' with ' and \ written as \27 and \5C (RFC 4512 qdstring). */
void text_append_quoted(struct text_buffer *tb, const char *s);
void text_free(struct text_buffer *tb);

#endif
