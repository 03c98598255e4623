/*
 * ldif_write.c — the LDIF writer (ldif.h): records out as RFC 2849 text,
 * folded at 76 columns, base64 where a value is not a SAFE-STRING, so
 * that ldif_read gives back exactly the bytes written. Output goes through
 * stdio's buffer; nothing is allocated (base64 is encoded in stack chunks).
 */
#include "ldif.h"

#include <string.h>

#include "base64.h"
#include "lumen_error.h"

/* Input bytes per base64 chunk: 48 bytes become 64 characters. */
#define BASE64_CHUNK 48

/* One output line being written, and how much of its physical line is used. */
struct folded_line {
	FILE *out;
	size_t column;
};

static void fold_put(struct folded_line *f, const void *text, size_t len)
{
	const char *p = text;

	while (len > 0) {
		if (f->column == LDIF_FOLD_COLUMN) {
			fputs("\n ", f->out);
			f->column = 1;
		}
		size_t room = LDIF_FOLD_COLUMN - f->column;
		size_t n = len < room ? len : room;
		fwrite(p, 1, n, f->out);
		p += n;
		len -= n;
		f->column += n;
	}
}

static void fold_put_string(struct folded_line *f, const char *s)
{
	fold_put(f, s, strlen(s));
}

bool ldif_value_needs_base64(const uint8_t *value, size_t len)
{
	if (len == 0)
		return false;
	/* A leading space would be taken for FILL, ':' and '<' for "::" and ":<". */
	if (value[0] == ' ' || value[0] == ':' || value[0] == '<' || value[len - 1] == ' ')
		return true;
	for (size_t i = 0; i < len; i++)
		if (value[i] < 0x20 || value[i] >= 0x7f)
			return true;
	return false;
}

/* The value part of a line: ": value", ":: base64" or ":" for an empty value. */
static void put_value(struct folded_line *f, const uint8_t *value, size_t len)
{
	if (len == 0) {
		fold_put(f, ":", 1);
		return;
	}
	if (!ldif_value_needs_base64(value, len)) {
		fold_put(f, ": ", 2);
		fold_put(f, value, len);
		return;
	}
	fold_put(f, ":: ", 3);
	for (size_t done = 0; done < len; done += BASE64_CHUNK) {
		char chunk[BASE64_CHUNK / 3 * 4];
		size_t n = len - done < BASE64_CHUNK ? len - done : BASE64_CHUNK;
		base64_encode(value + done, n, chunk);
		fold_put(f, chunk, base64_encoded_length(n));
	}
}

static int end_line(struct folded_line *f)
{
	fputc('\n', f->out);
	return ferror(f->out) ? LUMEN_EIO : LUMEN_OK;
}

/* Errors: LUMEN_EIO. */
int ldif_write_line(FILE *out, const char *name, size_t name_len,
		    const uint8_t *value, size_t len)
{
	struct folded_line f = { out, 0 };

	fold_put(&f, name, name_len);
	put_value(&f, value, len);
	return end_line(&f);
}

static int write_view(FILE *out, const char *name, struct ber_view value)
{
	return ldif_write_line(out, name, strlen(name), value.ptr, value.len);
}

static int write_text(FILE *out, const char *name, const char *value)
{
	return ldif_write_line(out, name, strlen(name), (const uint8_t *)value, strlen(value));
}

static int write_control(FILE *out, const struct ldif_control *control)
{
	struct folded_line f = { out, 0 };

	fold_put_string(&f, "control: ");
	fold_put(&f, control->oid.ptr, control->oid.len);
	if (control->critical)
		fold_put_string(&f, " true");
	if (control->has_value)
		put_value(&f, control->value.ptr, control->value.len);
	return end_line(&f);
}

static int write_attributes(FILE *out, const struct ldif_record *record)
{
	int rc = LUMEN_OK;

	for (size_t i = 0; i < record->n_attributes && rc == LUMEN_OK; i++) {
		const struct ldif_attribute_value *av = &record->attributes[i];
		rc = ldif_write_line(out, (const char *)av->description.ptr, av->description.len,
				     av->value.ptr, av->value.len);
	}
	return rc;
}

static int write_modification(FILE *out, const struct ldif_modification *mod)
{
	static const char *const op_names[] = {
		[LDIF_MOD_ADD] = "add", [LDIF_MOD_DELETE] = "delete",
		[LDIF_MOD_REPLACE] = "replace", [LDIF_MOD_INCREMENT] = "increment",
	};
	int rc;

	if ((unsigned)mod->op >= sizeof(op_names) / sizeof(op_names[0]))
		return LUMEN_EINVAL;
	rc = ldif_write_line(out, op_names[mod->op], strlen(op_names[mod->op]),
			     mod->description.ptr, mod->description.len);
	for (size_t i = 0; i < mod->n_values && rc == LUMEN_OK; i++)
		rc = ldif_write_line(out, (const char *)mod->description.ptr, mod->description.len,
				     mod->values[i].ptr, mod->values[i].len);
	if (rc != LUMEN_OK)
		return rc;
	fputs("-\n", out);
	return ferror(out) ? LUMEN_EIO : LUMEN_OK;
}

static int write_moddn(FILE *out, const struct ldif_record *record)
{
	int rc = write_text(out, "changetype", "modrdn");

	if (rc == LUMEN_OK)
		rc = write_view(out, "newrdn", record->new_rdn);
	if (rc == LUMEN_OK)
		rc = write_text(out, "deleteoldrdn", record->delete_old_rdn ? "1" : "0");
	if (rc == LUMEN_OK && record->has_new_superior)
		rc = write_view(out, "newsuperior", record->new_superior);
	return rc;
}

static int write_change(FILE *out, const struct ldif_record *record)
{
	int rc;

	switch (record->kind) {
	case LDIF_CONTENT:
		return write_attributes(out, record);
	case LDIF_CHANGE_ADD:
		rc = write_text(out, "changetype", "add");
		return rc == LUMEN_OK ? write_attributes(out, record) : rc;
	case LDIF_CHANGE_DELETE:
		return write_text(out, "changetype", "delete");
	case LDIF_CHANGE_MODIFY:
		rc = write_text(out, "changetype", "modify");
		for (size_t i = 0; i < record->n_modifications && rc == LUMEN_OK; i++)
			rc = write_modification(out, &record->modifications[i]);
		return rc;
	case LDIF_CHANGE_MODDN:
		return write_moddn(out, record);
	default:
		return LUMEN_EINVAL;
	}
}

/*
 * Errors: LUMEN_EINVAL (unknown kind or modify op, controls on a content
 * record — LDIF has no place for them), LUMEN_EIO.
 */
int ldif_write_record(FILE *out, const struct ldif_record *record)
{
	int rc;

	if (record->kind == LDIF_CONTENT && record->n_controls > 0)
		return LUMEN_EINVAL;
	if ((rc = write_view(out, "dn", record->dn)) != LUMEN_OK)
		return rc;
	for (size_t i = 0; i < record->n_controls; i++)
		if ((rc = write_control(out, &record->controls[i])) != LUMEN_OK)
			return rc;
	if ((rc = write_change(out, record)) != LUMEN_OK)
		return rc;
	fputc('\n', out);
	return ferror(out) ? LUMEN_EIO : LUMEN_OK;
}
