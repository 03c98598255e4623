/*
 * config_lexer.c — slapd.conf logical lines and argument splitting.
 */
#include "config_lexer.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "file_read.h"
#include "lumen_error.h"

/* Config files are small; anything larger is almost certainly a mistake. */
#define CONFIG_MAX_FILE_SIZE (64u * 1024u * 1024u)

int config_file_from_text(struct config_file *f, const char *path, unsigned first_line,
			  const char *text)
{
	memset(f, 0, sizeof(*f));
	f->next_line = first_line;
	f->path = strdup(path);
	f->data = strdup(text);
	if (f->path == NULL || f->data == NULL) {
		free(f->path);
		free(f->data);
		return LUMEN_ENOMEM;
	}
	f->size = strlen(text);
	return LUMEN_OK;
}

int config_file_open(struct config_file *f, const char *path)
{
	memset(f, 0, sizeof(*f));
	f->next_line = 1;
	f->path = strdup(path);
	if (f->path == NULL)
		return LUMEN_ENOMEM;
	int rc = file_read_all(path, CONFIG_MAX_FILE_SIZE, &f->data, &f->size);
	if (rc != LUMEN_OK) {
		int saved = errno;
		config_file_close(f);
		errno = saved;
		/* Too large reads as "cannot read: File too large" (EFBIG). */
		return rc == LUMEN_ELIMIT ? LUMEN_EIO : rc;
	}
	return LUMEN_OK;
}

void config_file_close(struct config_file *f)
{
	free(f->path);
	free(f->data);
	free(f->logical);
	memset(f, 0, sizeof(*f));
}

/* Length of the physical line at pos, without its newline. */
static size_t physical_length(const struct config_file *f)
{
	const char *start = f->data + f->pos;
	const char *nl = memchr(start, '\n', f->size - f->pos);
	return nl != NULL ? (size_t)(nl - start) : f->size - f->pos;
}

static void skip_physical(struct config_file *f, size_t len)
{
	f->pos += len;
	if (f->pos < f->size)
		f->pos++;               /* the newline */
	f->next_line++;
}

static bool is_blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

static int append_logical(struct config_file *f, size_t *used, const char *s,
			  size_t len, bool newline_first)
{
	size_t need = *used + len + 2;
	char *bigger = array_reserve(f->logical, &f->logical_cap, need, 1, 256);
	if (bigger == NULL)
		return LUMEN_ENOMEM;
	f->logical = bigger;
	if (newline_first)
		f->logical[(*used)++] = '\n';
	memcpy(f->logical + *used, s, len);
	*used += len;
	f->logical[*used] = '\0';
	return LUMEN_OK;
}

int config_file_next_line(struct config_file *f)
{
	size_t used = 0;
	bool have = false;

	while (f->pos < f->size) {
		const char *s = f->data + f->pos;
		size_t len = physical_length(f);
		if (memchr(s, '\0', len) != NULL) {
			f->line = f->next_line;
			return LUMEN_EMALFORMED;
		}
		/* Windows line endings: the CR is not part of the data. */
		size_t content = (len > 0 && s[len - 1] == '\r') ? len - 1 : len;
		bool continuation = content > 0 && (s[0] == ' ' || s[0] == '\t');

		if (content == 0 || s[0] == '#' || is_blank(s, content)) {
			/* Comments and blank lines neither start nor end a line. */
			skip_physical(f, len);
			continue;
		}
		if (have && !continuation)
			break;
		if (!have) {
			f->line = f->next_line;
			have = true;
		}
		int rc = append_logical(f, &used, s, content, used > 0);
		if (rc != LUMEN_OK)
			return rc;
		skip_physical(f, len);
	}
	return have ? LUMEN_OK : LUMEN_ENOTFOUND;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int config_split(char *text, char **argv, size_t *argc, const char **why)
{
	char *in = text;
	size_t n = 0;

	for (;;) {
		while (is_space(*in))
			in++;
		if (*in == '\0')
			break;
		if (n == CONFIG_MAX_ARGS) {
			*why = "too many arguments";
			return LUMEN_EMALFORMED;
		}
		char *out = in;
		argv[n++] = out;
		bool quoted = false;
		while (*in != '\0' && (quoted || !is_space(*in))) {
			if (*in == '"') {
				quoted = !quoted;
				in++;
			} else if (quoted && *in == '\\' && (in[1] == '"' || in[1] == '\\')) {
				*out++ = in[1];
				in += 2;
			} else {
				*out++ = *in++;
			}
		}
		if (quoted) {
			*why = "unterminated quoted argument";
			return LUMEN_EMALFORMED;
		}
		/* out never passes in, so terminating here is safe. */
		bool at_end = *in == '\0';
		*out = '\0';
		if (at_end)
			break;
		in++;
	}
	*argc = n;
	return LUMEN_OK;
}
