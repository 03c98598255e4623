/*
 * ldif.h — LDIF (RFC 2849) reader and writer, model layer.
 *
 * Reader: streams records from a FILE* or a memory buffer, one per
 * ldif_read call. Physical lines are unfolded into a record buffer the
 * reader owns and reuses (it grows to the largest record seen, up to
 * max_record bytes), so steady-state reading allocates nothing but the
 * caller's arena: one copy of the record's text, in which base64 values are
 * decoded in place, plus the record's arrays. Every view in a record points
 * into that arena memory and stays valid until the arena is reset, whatever
 * the reader does next. The reader is schema-free: attribute descriptions
 * are checked for RFC 4512 syntax only, DNs are returned as bytes.
 *
 * Records: a content record (dn + attribute lines) or a change record
 * (dn, optional control lines, changetype add/delete/modify/modrdn/moddn).
 * Attribute lines are kept flat and in file order (the same description
 * may come back non-adjacent); grouping is the entry module's business.
 * A leading "version: 1" line is accepted (and required to say 1).
 *
 * Errors from ldif_read: LUMEN_EMALFORMED (grammar, base64, a changetype
 * or modify section that is wrong), LUMEN_EUNSUPPORTED (a ":<" URL value
 * when file URLs are not enabled, or a URL that is not file://), LUMEN_ELIMIT
 * (record larger than max_record), LUMEN_EIO (reading the input or a file
 * URL failed), LUMEN_ENOMEM. ldif_reader_error() then holds a message that
 * names the line, e.g. "line 12: invalid base64 in value of 'cn'" (with
 * "(record at line N)" when the bad line is not the record's first).
 * After any error the reader stands at the start of the next record, so a
 * caller may report and continue (lumenadd -c) — except after LUMEN_EIO
 * from the input stream or LUMEN_ENOMEM while framing a record, which
 * poison the reader (every later ldif_read is LUMEN_EPOISONED).
 *
 * Writer: ldif_write_record prints a record followed by a blank line;
 * lines fold at 76 columns; values (and DNs, newrdn, newsuperior) that are
 * not SAFE-STRINGs are base64-encoded, so writer output reads back into the
 * same record byte for byte.
 *
 * Thread-safety: a reader is a plain object, one thread at a time; the
 * writer functions are reentrant (the FILE* is the caller's).
 *
 * Caveats:
 *  - File URLs are off by default (a loader fed an untrusted LDIF must not
 *    read /etc/shadow into the directory); set allow_file_urls to enable.
 *  - Plain values may hold raw UTF-8 (as OpenLDAP accepts), not only the
 *    RFC's ASCII SAFE-STRING; a plain value keeps trailing spaces.
 *  - Comments are dropped, also inside records; a comment line's folded
 *    continuation lines belong to the comment. A continuation line may
 *    start with a tab instead of a space (as OpenLDAP allows).
 */
#ifndef LUMEN_LDIF_H
#define LUMEN_LDIF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "arena.h"
#include "ber.h"

#define LDIF_DEFAULT_MAX_RECORD (64u << 20)
#define LDIF_FOLD_COLUMN 76
/* ldif_read's positive return at the clean end of the input. */
#define LDIF_END 1

enum ldif_record_kind {
	LDIF_CONTENT = 0,   /* dn + attributes, no changetype */
	LDIF_CHANGE_ADD,
	LDIF_CHANGE_DELETE,
	LDIF_CHANGE_MODIFY,
	LDIF_CHANGE_MODDN,  /* "modrdn" or "moddn" */
};

enum ldif_modify_op {
	LDIF_MOD_ADD = 0,
	LDIF_MOD_DELETE,
	LDIF_MOD_REPLACE,
	LDIF_MOD_INCREMENT, /* RFC 4525 */
};

struct ldif_attribute_value {
	struct ber_view description;    /* "cn;lang-de", as written */
	struct ber_view value;          /* decoded bytes */
};

struct ldif_modification {
	enum ldif_modify_op op;
	struct ber_view description;
	struct ber_view *values;        /* n_values may be 0 (delete all, replace with none) */
	size_t n_values;
};

struct ldif_control {
	struct ber_view oid;
	bool critical;
	bool has_value;
	struct ber_view value;
};

struct ldif_record {
	enum ldif_record_kind kind;
	size_t line;                    /* line number of the record's first line */
	struct ber_view dn;
	struct ldif_control *controls;
	size_t n_controls;
	/* LDIF_CONTENT and LDIF_CHANGE_ADD */
	struct ldif_attribute_value *attributes;
	size_t n_attributes;
	/* LDIF_CHANGE_MODIFY */
	struct ldif_modification *modifications;
	size_t n_modifications;
	/* LDIF_CHANGE_MODDN */
	struct ber_view new_rdn;
	bool delete_old_rdn;
	bool has_new_superior;
	struct ber_view new_superior;
};

struct ldif_options {
	bool allow_file_urls;           /* honour ":< file://..." values */
	size_t max_record;              /* unfolded bytes per record; 0 = default */
};

struct ldif_reader;

/*
 * Create a reader over fp (not closed by the reader) or over the memory
 * buffer buf[0..len) (not copied: keep it alive while reading). options
 * may be NULL for the defaults. LUMEN_ENOMEM.
 */
int ldif_reader_open_file(FILE *fp, const struct ldif_options *options,
			  struct ldif_reader **out);
int ldif_reader_open_memory(const void *buf, size_t len, const struct ldif_options *options,
			    struct ldif_reader **out);
void ldif_reader_free(struct ldif_reader *r);

/*
 * Read the next record into *record (memory from arena). LUMEN_OK,
 * LDIF_END when no record is left, or one of the errors listed above.
 */
int ldif_read(struct ldif_reader *r, struct arena *arena, struct ldif_record *record);

/* Message of the last error ("" if none); valid until the next ldif_read. */
const char *ldif_reader_error(const struct ldif_reader *r);

/* Number of physical lines consumed so far. */
size_t ldif_reader_line(const struct ldif_reader *r);

/* --------------------------------------------------------------- writer */

/* True if value must be written base64 (":: "); also used for DNs. */
bool ldif_value_needs_base64(const uint8_t *value, size_t len);

/*
 * Write "name: value" (or "name:: base64") folded at 76 columns.
 * LUMEN_EIO if the stream reports a write error.
 */
int ldif_write_line(FILE *out, const char *name, size_t name_len,
		    const uint8_t *value, size_t len);


/*
 * Write one record and the blank line after it. LUMEN_EINVAL for an
 * unknown kind or modify op, LUMEN_EIO for a write error.
 */
int ldif_write_record(FILE *out, const struct ldif_record *record);

#endif
