/*
 * schema_lex.c — tokenizer of RFC 4512 descriptions and the text buffer the
 * parser builds canonical definitions in. Contract: schema_lex.h.
 */
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "schema_lex.h"

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

struct token lexer_next(struct lexer *lx)
{
	struct token tok = { TOKEN_END, NULL, 0 };

	while (lx->pos < lx->end && is_space(*lx->pos))
		lx->pos++;
	if (lx->pos == lx->end)
		return tok;
	tok.text = lx->pos;
	switch (*lx->pos) {
	case '(': tok.kind = TOKEN_OPEN; tok.len = 1; lx->pos++; return tok;
	case ')': tok.kind = TOKEN_CLOSE; tok.len = 1; lx->pos++; return tok;
	case '$': tok.kind = TOKEN_DOLLAR; tok.len = 1; lx->pos++; return tok;
	case '\'': {
		const char *close = memchr(lx->pos + 1, '\'', (size_t)(lx->end - lx->pos - 1));
		if (close == NULL) {
			tok.kind = TOKEN_UNTERMINATED;
			lx->pos = lx->end;
			return tok;
		}
		tok.kind = TOKEN_QUOTED;
		tok.text = lx->pos + 1;
		tok.len = (size_t)(close - tok.text);
		lx->pos = close + 1;
		return tok;
	}
	default:
		break;
	}
	tok.kind = TOKEN_WORD;
	while (lx->pos < lx->end && !is_space(*lx->pos) && strchr("()$'", *lx->pos) == NULL)
		lx->pos++;
	tok.len = (size_t)(lx->pos - tok.text);
	return tok;
}

struct token lexer_peek(const struct lexer *lx)
{
	struct lexer copy = *lx;
	return lexer_next(&copy);
}

void text_append(struct text_buffer *tb, const char *s, size_t len)
{
	if (tb->failed)
		return;
	char *grown = array_reserve(tb->data, &tb->cap, tb->len + len + 1, 1, 256);
	if (grown == NULL) {
		tb->failed = true;
		return;
	}
	tb->data = grown;
	memcpy(tb->data + tb->len, s, len);
	tb->len += len;
	tb->data[tb->len] = '\0';
}

void text_append_str(struct text_buffer *tb, const char *s)
{
	text_append(tb, s, strlen(s));
}

void text_append_quoted(struct text_buffer *tb, const char *s)
{
	text_append(tb, "'", 1);
	for (; *s; s++) {
		if (*s == '\'')
			text_append(tb, "\\27", 3);
		else if (*s == '\\')
			text_append(tb, "\\5C", 3);
		else
			text_append(tb, s, 1);
	}
	text_append(tb, "'", 1);
}

void text_free(struct text_buffer *tb)
{
	free(tb->data);
	tb->data = NULL;
	tb->len = tb->cap = 0;
}
