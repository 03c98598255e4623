/*
 * ldif_private.h — private to src/model/ldif_*.c: the hand-over from the
 * reader (ldif_read.c: input, unfolding, record framing) to the record
 * grammar (ldif_record.c: turning a record's logical lines into a struct
 * ldif_record).
 */
#ifndef LUMEN_LDIF_PRIVATE_H
#define LUMEN_LDIF_PRIVATE_H

#include <stdarg.h>

#include "ldif.h"

/* ldif_parse_record's positive return: the lines held no record (version only). */
#define LDIF_PARSE_EMPTY 2

/* One unfolded line, in arena memory the grammar may rewrite (base64 in place). */
struct ldif_logical_line {
	char *text;
	size_t len;
	size_t line;                /* physical line number where it starts */
};

struct ldif_parse_context {
	struct ldif_logical_line *lines;
	size_t n_lines;
	size_t record_line;
	bool first_record;          /* a "version:" line is allowed here */
	const struct ldif_options *options;
	struct arena *arena;
	char *error;                /* message buffer */
	size_t error_size;
};

/*
 * Parse a record's logical lines. LUMEN_OK, LDIF_PARSE_EMPTY, or the
 * errors of ldif_read (message written to ctx->error).
 */
int ldif_parse_record(struct ldif_parse_context *ctx, struct ldif_record *record);

/* Write "line N: <message>" (plus the record's line when it differs). */
void ldif_set_error(char *buf, size_t size, size_t line, size_t record_line,
		    const char *format, ...) __attribute__((format(printf, 5, 6)));

#endif
