/*
 * ldif_read.c — the LDIF reader's input side (ldif.h): physical lines from
 * a FILE* or memory, unfolding into logical lines, framing records at
 * blank lines. The record grammar is ldif_record.c.
 *
 * Memory: a FILE* reader keeps one input buffer (64 KiB, grown only while a
 * single physical line does not fit, up to the record bound) and reuses its
 * record buffer and line table across records, so reading allocates only
 * when a record is bigger than any before it. A memory reader reads the
 * caller's buffer in place. Per record the caller's arena receives one copy
 * of the unfolded text, which the grammar decodes base64 into in place.
 *
 * Errors are collected while the record is framed (the first one wins) and
 * returned only once the whole record has been consumed, so the next call
 * starts on the next record.
 */
#include "ldif_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "lumen_error.h"

#define LDIF_INPUT_CHUNK (64u << 10)
/* next_physical_line: a line longer than the bound was consumed and dropped. */
#define LINE_TOO_LONG 2

/* Where one logical line lies in the record buffer. */
struct line_mark {
	size_t offset;
	size_t len;
	size_t line;
};

struct ldif_reader {
	struct ldif_options options;
	FILE *fp;                   /* NULL for a memory reader */
	char *input;                /* FILE* readers: buffered input */
	size_t input_cap;
	const char *pos, *end;      /* unread input */
	bool eof;                   /* nothing more will arrive after end */
	bool dropping_line;         /* inside a physical line over the bound */
	bool poisoned;
	bool seen_record;
	size_t line;                /* physical lines consumed */

	char *record;               /* unfolded text of the current record */
	size_t record_len, record_cap;
	struct line_mark *marks;
	size_t n_marks, marks_cap;
	struct ldif_logical_line *lines;
	size_t lines_cap;

	int pending;                /* first error of the record being framed */
	char error[320];
};

/* State of framing one record. */
struct framing {
	bool in_comment;            /* continuation lines belong to a comment */
	size_t first_line;          /* first non-blank line of the record, 0 if none */
};

void ldif_set_error(char *buf, size_t size, size_t line, size_t record_line,
		    const char *format, ...)
{
	va_list ap;
	int n = snprintf(buf, size, "line %zu: ", line);

	if (n < 0 || (size_t)n >= size)
		return;
	va_start(ap, format);
	int m = vsnprintf(buf + n, size - (size_t)n, format, ap);
	va_end(ap);
	if (m >= 0 && (size_t)(n + m) < size && record_line != 0 && record_line != line)
		snprintf(buf + n + m, size - (size_t)(n + m), " (record at line %zu)", record_line);
}

static int reader_new(const struct ldif_options *options, struct ldif_reader **out)
{
	struct ldif_reader *r = calloc(1, sizeof(*r));

	*out = NULL;
	if (r == NULL)
		return LUMEN_ENOMEM;
	if (options != NULL)
		r->options = *options;
	if (r->options.max_record == 0)
		r->options.max_record = LDIF_DEFAULT_MAX_RECORD;
	*out = r;
	return LUMEN_OK;
}

/* Errors: LUMEN_ENOMEM. */
int ldif_reader_open_file(FILE *fp, const struct ldif_options *options,
			  struct ldif_reader **out)
{
	int rc = reader_new(options, out);

	if (rc != LUMEN_OK)
		return rc;
	struct ldif_reader *r = *out;
	r->input_cap = LDIF_INPUT_CHUNK;
	r->input = malloc(r->input_cap);
	if (r->input == NULL) {
		free(r);
		*out = NULL;
		return LUMEN_ENOMEM;
	}
	r->fp = fp;
	r->pos = r->end = r->input;
	return LUMEN_OK;
}

/* Errors: LUMEN_ENOMEM. */
int ldif_reader_open_memory(const void *buf, size_t len, const struct ldif_options *options,
			    struct ldif_reader **out)
{
	int rc = reader_new(options, out);

	if (rc != LUMEN_OK)
		return rc;
	(*out)->pos = buf;
	(*out)->end = (const char *)buf + len;
	(*out)->eof = true;
	return LUMEN_OK;
}

void ldif_reader_free(struct ldif_reader *r)
{
	if (r == NULL)
		return;
	free(r->input);
	free(r->record);
	free(r->marks);
	free(r->lines);
	free(r);
}

const char *ldif_reader_error(const struct ldif_reader *r)
{
	return r->error;
}

size_t ldif_reader_line(const struct ldif_reader *r)
{
	return r->line;
}

/* ------------------------------------------------------------ input side */

/*
 * Make room for and read more input. A physical line that fills the whole
 * buffer doubles it, up to the record bound; beyond that the line's bytes
 * are dropped (dropping_line) and reported once its end is found.
 * Errors: LUMEN_EIO, LUMEN_ENOMEM.
 */
static int refill(struct ldif_reader *r)
{
	size_t unread = (size_t)(r->end - r->pos);
	size_t line_bound = r->options.max_record + 2; /* the line, CR and LF */

	if (unread == r->input_cap) {
		if (r->input_cap >= line_bound) {
			r->dropping_line = true;
			unread = 0;
		} else {
			size_t cap = r->input_cap * 2 < line_bound ? r->input_cap * 2 : line_bound;
			char *grown = realloc(r->input, cap);
			if (grown == NULL)
				return LUMEN_ENOMEM;
			r->input = grown;
			r->pos = grown;
			r->input_cap = cap;
		}
	}
	memmove(r->input, r->pos, unread);
	r->pos = r->input;
	r->end = r->input + unread;
	size_t n = fread(r->input + unread, 1, r->input_cap - unread, r->fp);
	r->end += n;
	if (n == 0) {
		if (ferror(r->fp))
			return LUMEN_EIO;
		r->eof = true;
	}
	return LUMEN_OK;
}

/*
 * The next physical line without its line end (LF or CRLF). Returns 1 with
 * a line, 0 at the end of input, LINE_TOO_LONG for a line that was dropped,
 * LUMEN_EIO or LUMEN_ENOMEM.
 */
static int next_physical_line(struct ldif_reader *r, const char **line, size_t *len)
{
	for (;;) {
		size_t unread = (size_t)(r->end - r->pos);
		const char *newline = unread > 0 ? memchr(r->pos, '\n', unread) : NULL;
		if (newline != NULL) {
			*line = r->pos;
			*len = (size_t)(newline - r->pos);
			r->pos = newline + 1;
			break;
		}
		if (r->eof) {
			if (unread == 0 && !r->dropping_line)
				return 0;
			*line = r->pos;
			*len = unread;
			r->pos = r->end;
			break;
		}
		int rc = refill(r);
		if (rc != LUMEN_OK)
			return rc;
	}
	r->line++;
	if (r->dropping_line) {
		r->dropping_line = false;
		return LINE_TOO_LONG;
	}
	if (*len > 0 && (*line)[*len - 1] == '\r')
		(*len)--;
	return 1;
}

/* ------------------------------------------------------------- framing */

static void record_error(struct ldif_reader *r, int rc, size_t line, size_t record_line,
			 const char *message)
{
	if (r->pending != LUMEN_OK)
		return;
	r->pending = rc;
	ldif_set_error(r->error, sizeof(r->error), line, record_line, "%s", message);
}

/* Grow *buf so it holds at least need elements of size each. LUMEN_ENOMEM. */
static int ensure_capacity(void **buf, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return LUMEN_OK;
	void *grown = array_reserve(*buf, cap, need, size, 16);
	if (grown == NULL)
		return LUMEN_ENOMEM;
	*buf = grown;
	return LUMEN_OK;
}

/* Append text to the record; past max_record, note the error instead. */
static int record_append(struct ldif_reader *r, const char *text, size_t len,
			 const struct framing *f)
{
	if (r->record_len + len > r->options.max_record) {
		record_error(r, LUMEN_ELIMIT, r->line, f->first_line,
			     "record larger than the bound on one record");
		return LUMEN_OK;
	}
	int rc = ensure_capacity((void **)&r->record, &r->record_cap, r->record_len + len, 1);
	if (rc != LUMEN_OK)
		return rc;
	memcpy(r->record + r->record_len, text, len);
	r->record_len += len;
	return LUMEN_OK;
}

/* Take one non-blank physical line into the record being framed. */
static int frame_line(struct ldif_reader *r, struct framing *f, const char *line, size_t len)
{
	/* RFC 2849 folds with a space; OpenLDAP also takes a tab, and so do we. */
	if (line[0] == ' ' || line[0] == '\t') {
		if (f->in_comment)
			return LUMEN_OK;
		if (r->n_marks == 0) {
			record_error(r, LUMEN_EMALFORMED, r->line, f->first_line,
				     "continuation line with no line to continue");
			return LUMEN_OK;
		}
		size_t before = r->record_len;
		int rc = record_append(r, line + 1, len - 1, f);
		r->marks[r->n_marks - 1].len += r->record_len - before;
		return rc;
	}
	if (line[0] == '#') {
		f->in_comment = true;
		return LUMEN_OK;
	}
	f->in_comment = false;
	int rc = ensure_capacity((void **)&r->marks, &r->marks_cap, r->n_marks + 1,
				 sizeof(*r->marks));
	if (rc != LUMEN_OK)
		return rc;
	struct line_mark *mark = &r->marks[r->n_marks++];
	mark->offset = r->record_len;
	mark->line = r->line;
	size_t before = r->record_len;
	rc = record_append(r, line, len, f);
	mark->len = r->record_len - before;
	return rc;
}

/*
 * Consume physical lines up to the blank line (or end of input) that ends
 * the next record. Blank lines and comment-only blocks before it are
 * skipped. Returns LUMEN_OK (r->n_marks may be 0 at the end of input) or
 * LUMEN_EIO / LUMEN_ENOMEM; grammar-independent errors go to r->pending.
 */
static int frame_record(struct ldif_reader *r, size_t *record_line)
{
	struct framing f = { .in_comment = false, .first_line = 0 };
	const char *line;
	size_t len;

	r->record_len = 0;
	r->n_marks = 0;
	r->pending = LUMEN_OK;
	for (;;) {
		int rc = next_physical_line(r, &line, &len);
		if (rc < 0)
			return rc;
		if (rc == 0)
			break;
		if (rc != LINE_TOO_LONG && len == 0) {
			if (r->n_marks > 0 || r->pending != LUMEN_OK)
				break;
			f.in_comment = false; /* a comment-only block: not a record */
			f.first_line = 0;
			continue;
		}
		if (f.first_line == 0)
			f.first_line = r->line;
		if (rc == LINE_TOO_LONG) {
			record_error(r, LUMEN_ELIMIT, r->line, f.first_line,
				     "line longer than the bound on one record");
			continue;
		}
		if ((rc = frame_line(r, &f, line, len)) != LUMEN_OK)
			return rc;
	}
	*record_line = r->n_marks > 0 ? r->marks[0].line : f.first_line;
	return LUMEN_OK;
}

/* Copy the framed record into the arena and describe its logical lines. */
static int hand_over_lines(struct ldif_reader *r, struct arena *arena)
{
	char *text = arena_alloc(arena, r->record_len > 0 ? r->record_len : 1);
	if (text == NULL)
		return LUMEN_ENOMEM;
	memcpy(text, r->record, r->record_len);
	int rc = ensure_capacity((void **)&r->lines, &r->lines_cap, r->n_marks, sizeof(*r->lines));
	if (rc != LUMEN_OK)
		return rc;
	for (size_t i = 0; i < r->n_marks; i++) {
		r->lines[i].text = text + r->marks[i].offset;
		r->lines[i].len = r->marks[i].len;
		r->lines[i].line = r->marks[i].line;
	}
	return LUMEN_OK;
}

/*
 * An input error or allocation failure while framing leaves the reader in
 * the middle of a record: it cannot go on, so it is poisoned.
 */
static int poison(struct ldif_reader *r, int rc)
{
	char reason[128];

	r->poisoned = true;
	if (rc == LUMEN_EIO)
		ldif_set_error(r->error, sizeof(r->error), r->line, 0, "read error: %s",
			       strerror_r(errno, reason, sizeof(reason)));
	else
		ldif_set_error(r->error, sizeof(r->error), r->line, 0, "out of memory");
	return rc;
}

/* Errors: see ldif.h. */
int ldif_read(struct ldif_reader *r, struct arena *arena, struct ldif_record *record)
{
	size_t record_line;
	int rc;

	memset(record, 0, sizeof(*record));
	r->error[0] = '\0';
	if (r->poisoned)
		return LUMEN_EPOISONED;
	for (;;) {
		if ((rc = frame_record(r, &record_line)) != LUMEN_OK)
			return poison(r, rc);
		if (r->pending != LUMEN_OK)
			return r->pending;
		if (r->n_marks == 0)
			return LDIF_END;
		if ((rc = hand_over_lines(r, arena)) != LUMEN_OK) {
			ldif_set_error(r->error, sizeof(r->error), record_line, 0, "out of memory");
			return rc;
		}
		struct ldif_parse_context ctx = {
			.lines = r->lines,
			.n_lines = r->n_marks,
			.record_line = record_line,
			.first_record = !r->seen_record,
			.options = &r->options,
			.arena = arena,
			.error = r->error,
			.error_size = sizeof(r->error),
		};
		r->seen_record = true;
		rc = ldif_parse_record(&ctx, record);
		if (rc < 0 && r->error[0] == '\0') /* the grammar names its own errors, bar ENOMEM */
			ldif_set_error(r->error, sizeof(r->error), record_line, 0, "%s",
				       lumen_strerror(rc));
		if (rc != LDIF_PARSE_EMPTY)
			return rc;
	}
}
