/*
 * config_lexer.h — private to the config layer: turns one slapd.conf file
 * into logical lines (continuations joined, comments dropped) and splits a
 * logical line into arguments.
 *
 * Ownership: a config_file owns the file's bytes and the current logical
 * line; both are released by config_file_close. Arguments handed out by
 * config_split point into the logical line and live until the next
 * config_file_next_line or close.
 * Thread-safety: none needed (start-up only).
 * Caveats: the logical line keeps the newlines between continued physical
 * lines, so schema definitions reach the schema engine as written.
 */
#ifndef LUMEN_CONFIG_LEXER_H
#define LUMEN_CONFIG_LEXER_H

#include <stddef.h>

#define CONFIG_MAX_ARGS 128

struct config_file {
	char *path;          /* as opened */
	char *data;          /* whole file, NUL-terminated */
	size_t size;
	size_t pos;          /* next unread byte */
	unsigned next_line;  /* number of the physical line at pos */
	char *logical;       /* current logical line, NUL-terminated */
	size_t logical_cap;
	unsigned line;       /* first physical line of the logical line */
};

/* Read the whole file. LUMEN_EIO (errno kept) or LUMEN_ENOMEM. */
int config_file_open(struct config_file *f, const char *path);
/* A config_file over a copy of text, named path, its first line numbered
 * first_line (lines translated from elsewhere keep their origin).
 * LUMEN_ENOMEM. */
int config_file_from_text(struct config_file *f, const char *path, unsigned first_line,
			  const char *text);
void config_file_close(struct config_file *f);

/*
 * Advance to the next logical line (f->logical, f->line). Returns LUMEN_OK,
 * LUMEN_ENOTFOUND at end of file, LUMEN_EMALFORMED for a NUL byte in the
 * file, LUMEN_ENOMEM.
 */
int config_file_next_line(struct config_file *f);

/*
 * Split `text` in place into at most CONFIG_MAX_ARGS arguments. Quotes
 * group words and are removed; \" and \\ inside quotes are unescaped.
 * LUMEN_EMALFORMED with *why set for an unterminated quote or too many
 * arguments.
 */
int config_split(char *text, char **argv, size_t *argc, const char **why);

#endif
