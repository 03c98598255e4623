/*
 * ldif_record.c — the RFC 2849 record grammar (ldif.h): a record's logical
 * lines, already unfolded into arena memory by ldif_read.c, become a
 * struct ldif_record. Values are views into those lines; base64 values are
 * decoded in place (decoding only shrinks), so a record costs its arrays
 * and nothing per value.
 */
#include "ldif_private.h"

#include <errno.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "base64.h"
#include "hex.h"
#include "lumen_error.h"

enum value_kind { VALUE_PLAIN, VALUE_BASE64, VALUE_URL };

/* One "name: value" line taken apart (value not yet decoded). */
struct split_line {
	struct ber_view name;
	char *value;
	size_t value_len;
	enum value_kind kind;
	size_t line;
};

#define ERROR(ctx, at, ...) \
	ldif_set_error((ctx)->error, (ctx)->error_size, (at), (ctx)->record_line, __VA_ARGS__)

/* A printable, bounded rendering of untrusted bytes for error messages. */
static const char *shown(struct ber_view v, char *buf, size_t size)
{
	size_t n = 0;
	for (size_t i = 0; i < v.len && n + 4 < size; i++) {
		uint8_t c = v.ptr[i];
		buf[n++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
	}
	if (v.len > 0 && n < v.len && n + 4 <= size) {
		memcpy(buf + n, "...", 3);
		n += 3;
	}
	buf[n] = '\0';
	return buf;
}

static bool is_keychar(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-';
}

static bool is_digit(uint8_t c)
{
	return c >= '0' && c <= '9';
}

/* numericoid: number *( "." number ), no empty components. */
static bool is_numeric_oid(const uint8_t *s, size_t len)
{
	bool after_dot = true;
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '.') {
			if (after_dot)
				return false;
			after_dot = true;
		} else if (is_digit(s[i])) {
			after_dot = false;
		} else {
			return false;
		}
	}
	return !after_dot;
}

/* RFC 4512 attribute description: (descr / numericoid) *(";" option). */
static bool is_attribute_description(struct ber_view d)
{
	size_t type_len = 0;
	while (type_len < d.len && d.ptr[type_len] != ';')
		type_len++;
	if (type_len == 0)
		return false;
	if (is_digit(d.ptr[0])) {
		if (!is_numeric_oid(d.ptr, type_len))
			return false;
	} else {
		if (!((d.ptr[0] >= 'a' && d.ptr[0] <= 'z') || (d.ptr[0] >= 'A' && d.ptr[0] <= 'Z')))
			return false;
		for (size_t i = 1; i < type_len; i++)
			if (!is_keychar(d.ptr[i]))
				return false;
	}
	size_t option_len = 0;
	for (size_t i = type_len + 1; i < d.len; i++) {
		if (d.ptr[i] == ';') {
			if (option_len == 0)
				return false;
			option_len = 0;
		} else if (is_keychar(d.ptr[i])) {
			option_len++;
		} else {
			return false;
		}
	}
	return type_len == d.len || option_len > 0;
}

static bool name_is(struct ber_view name, const char *keyword)
{
	return ber_view_eq_str_nocase(name, keyword);
}

static bool view_is(const uint8_t *p, size_t len, const char *keyword)
{
	struct ber_view v = { p, len };
	return ber_view_eq_str_nocase(v, keyword);
}

/* True if line `index` exists and is "keyword:..." (a probe: no error). */
static bool line_has_name(const struct ldif_parse_context *ctx, size_t index,
			  const char *keyword)
{
	if (index >= ctx->n_lines)
		return false;
	const struct ldif_logical_line *l = &ctx->lines[index];
	size_t n = strlen(keyword);
	return l->len > n && l->text[n] == ':' && strncasecmp(l->text, keyword, n) == 0;
}

/* A lone "-" (trailing spaces tolerated) ends a modify section. */
static bool is_section_end(const struct ldif_logical_line *l)
{
	if (l->len == 0 || l->text[0] != '-')
		return false;
	for (size_t i = 1; i < l->len; i++)
		if (l->text[i] != ' ')
			return false;
	return true;
}

/*
 * Take "name:[:|<] value" apart; FILL spaces after the separator are
 * dropped. LUMEN_EMALFORMED for a line without ':' or with an empty name.
 */
static int split(struct ldif_parse_context *ctx, size_t index, struct split_line *out)
{
	const struct ldif_logical_line *l = &ctx->lines[index];
	char *colon = memchr(l->text, ':', l->len);
	char buf[64];

	out->line = l->line;
	if (colon == NULL || colon == l->text) {
		struct ber_view all = { (const uint8_t *)l->text, l->len };
		ERROR(ctx, l->line, colon == NULL ? "missing ':' in line '%s'" :
			      "empty attribute description in line '%s'", shown(all, buf, 40));
		return LUMEN_EMALFORMED;
	}
	out->name.ptr = (const uint8_t *)l->text;
	out->name.len = (size_t)(colon - l->text);
	char *p = colon + 1, *end = l->text + l->len;
	out->kind = VALUE_PLAIN;
	if (p < end && *p == ':') {
		out->kind = VALUE_BASE64;
		p++;
	} else if (p < end && *p == '<') {
		out->kind = VALUE_URL;
		p++;
	}
	while (p < end && *p == ' ')
		p++;
	out->value = p;
	out->value_len = (size_t)(end - p);
	return LUMEN_OK;
}

/* file:// URL to a NUL-terminated path with %XX escapes decoded. */
static int url_to_path(struct ldif_parse_context *ctx, const struct split_line *s, char **path)
{
	const char *url = s->value;
	size_t len = s->value_len;
	char buf[64];

	if (len < 7 || strncasecmp(url, "file://", 7) != 0) {
		struct ber_view v = { (const uint8_t *)url, len };
		ERROR(ctx, s->line, "unsupported URL '%s' (only file:// is)", shown(v, buf, 48));
		return LUMEN_EUNSUPPORTED;
	}
	url += 7;
	len -= 7;
	if (len >= 9 && strncasecmp(url, "localhost", 9) == 0) {
		url += 9;
		len -= 9;
	}
	char *out = arena_alloc(ctx->arena, len + 1);
	if (out == NULL)
		return LUMEN_ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < len; i++) {
		int byte = i + 2 < len ? hex_pair_value(url[i + 1], url[i + 2]) : -1;
		/* %00 would cut the path short: keep it literally (and fail to open). */
		if (url[i] == '%' && byte > 0) {
			out[n++] = (char)byte;
			i += 2;
			continue;
		}
		out[n++] = url[i];
	}
	out[n] = '\0';
	*path = out;
	return LUMEN_OK;
}

/* Read the file a URL value names into the arena. */
static int read_url(struct ldif_parse_context *ctx, const struct split_line *s,
		    struct ber_view *value)
{
	char *path, buf[64], reason[128];
	int rc;

	if (!ctx->options->allow_file_urls) {
		ERROR(ctx, s->line, "URL value of '%s' refused: file URLs are not enabled",
		      shown(s->name, buf, 48));
		return LUMEN_EUNSUPPORTED;
	}
	if ((rc = url_to_path(ctx, s, &path)) != LUMEN_OK)
		return rc;
	FILE *fp = fopen(path, "rb");
	struct stat st;
	if (fp == NULL || fstat(fileno(fp), &st) != 0) {
		ERROR(ctx, s->line, "cannot read '%s': %s", path,
		      strerror_r(errno, reason, sizeof(reason)));
		rc = LUMEN_EIO;
		goto done;
	}
	if ((uint64_t)st.st_size > ctx->options->max_record) {
		ERROR(ctx, s->line, "file '%s' is larger than the bound on one record", path);
		rc = LUMEN_ELIMIT;
		goto done;
	}
	size_t size = (size_t)st.st_size;
	uint8_t *data = arena_alloc(ctx->arena, size > 0 ? size : 1);
	if (data == NULL) {
		rc = LUMEN_ENOMEM;
		goto done;
	}
	if (size > 0 && fread(data, 1, size, fp) != size) {
		ERROR(ctx, s->line, "cannot read '%s': short read", path);
		rc = LUMEN_EIO;
		goto done;
	}
	value->ptr = data;
	value->len = size;
	rc = LUMEN_OK;
done:
	if (fp != NULL)
		fclose(fp);
	return rc;
}

/*
 * The bytes a split line's value stands for. LUMEN_EMALFORMED for invalid
 * base64 or a NUL in a plain value, and read_url's errors.
 */
static int decode_value(struct ldif_parse_context *ctx, const struct split_line *s,
			struct ber_view *value)
{
	char buf[64];
	size_t len;

	switch (s->kind) {
	case VALUE_BASE64:
		if (base64_decode(s->value, s->value_len, (uint8_t *)s->value, &len) != LUMEN_OK) {
			ERROR(ctx, s->line, "invalid base64 in value of '%s'", shown(s->name, buf, 48));
			return LUMEN_EMALFORMED;
		}
		value->ptr = (const uint8_t *)s->value;
		value->len = len;
		return LUMEN_OK;
	case VALUE_URL:
		return read_url(ctx, s, value);
	case VALUE_PLAIN:
	default:
		if (memchr(s->value, '\0', s->value_len) != NULL) {
			ERROR(ctx, s->line, "NUL byte in value of '%s'", shown(s->name, buf, 48));
			return LUMEN_EMALFORMED;
		}
		value->ptr = (const uint8_t *)s->value;
		value->len = s->value_len;
		return LUMEN_OK;
	}
}

/* Split line `index`, require the name `keyword`, decode its value. */
static int keyword_line(struct ldif_parse_context *ctx, size_t index, const char *keyword,
			struct ber_view *value)
{
	struct split_line s;
	int rc;

	if (index >= ctx->n_lines) {
		size_t at = ctx->lines[ctx->n_lines - 1].line;
		ERROR(ctx, at, "missing '%s:' line", keyword);
		return LUMEN_EMALFORMED;
	}
	if ((rc = split(ctx, index, &s)) != LUMEN_OK)
		return rc;
	if (!name_is(s.name, keyword)) {
		char buf[64];
		ERROR(ctx, s.line, "expected '%s:', found '%s:'", keyword, shown(s.name, buf, 48));
		return LUMEN_EMALFORMED;
	}
	return decode_value(ctx, &s, value);
}

/* An attribute line: checked description, decoded value. */
static int attribute_line(struct ldif_parse_context *ctx, size_t index,
			  struct ldif_attribute_value *out)
{
	struct split_line s;
	char buf[64];
	int rc;

	if ((rc = split(ctx, index, &s)) != LUMEN_OK)
		return rc;
	if (name_is(s.name, "dn")) {
		ERROR(ctx, s.line, "'dn:' inside a record (missing blank line?)");
		return LUMEN_EMALFORMED;
	}
	if (!is_attribute_description(s.name)) {
		ERROR(ctx, s.line, "invalid attribute description '%s'", shown(s.name, buf, 48));
		return LUMEN_EMALFORMED;
	}
	out->description = s.name;
	return decode_value(ctx, &s, &out->value);
}

/* ---------------------------------------------------------------- records */

/* Lines [first, n_lines) as attributes (content and add records). */
static int parse_attributes(struct ldif_parse_context *ctx, size_t first,
			    struct ldif_record *record)
{
	size_t count = ctx->n_lines - first;
	int rc;

	if (count == 0) {
		ERROR(ctx, ctx->lines[ctx->n_lines - 1].line, "record has no attributes");
		return LUMEN_EMALFORMED;
	}
	record->attributes = arena_alloc(ctx->arena, count * sizeof(*record->attributes));
	if (record->attributes == NULL)
		return LUMEN_ENOMEM;
	for (size_t i = first; i < ctx->n_lines; i++) {
		if ((rc = attribute_line(ctx, i, &record->attributes[i - first])) != LUMEN_OK)
			return rc;
	}
	record->n_attributes = count;
	return LUMEN_OK;
}

static int parse_modify_op(struct ldif_parse_context *ctx, const struct split_line *s,
			   enum ldif_modify_op *op)
{
	static const struct { const char *name; enum ldif_modify_op op; } ops[] = {
		{ "add", LDIF_MOD_ADD }, { "delete", LDIF_MOD_DELETE },
		{ "replace", LDIF_MOD_REPLACE }, { "increment", LDIF_MOD_INCREMENT },
	};
	char buf[64];

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		if (name_is(s->name, ops[i].name)) {
			*op = ops[i].op;
			return LUMEN_OK;
		}
	}
	ERROR(ctx, s->line, "expected add:, delete:, replace: or increment:, found '%s:'",
	      shown(s->name, buf, 48));
	return LUMEN_EMALFORMED;
}

/*
 * One modify section starting at *index: "op: description", values of that
 * description, "-". Values are appended to the shared values array.
 */
static int parse_modify_section(struct ldif_parse_context *ctx, size_t *index,
				struct ldif_modification *mod, struct ber_view *values)
{
	struct split_line s;
	char buf[64];
	int rc;

	if ((rc = split(ctx, *index, &s)) != LUMEN_OK ||
	    (rc = parse_modify_op(ctx, &s, &mod->op)) != LUMEN_OK)
		return rc;
	struct ber_view description = { (const uint8_t *)s.value, s.value_len };
	if (s.kind != VALUE_PLAIN || !is_attribute_description(description)) {
		ERROR(ctx, s.line, "invalid attribute description '%s'", shown(description, buf, 48));
		return LUMEN_EMALFORMED;
	}
	mod->description = description;
	mod->values = values;
	mod->n_values = 0;
	size_t section_line = s.line;
	for (size_t i = *index + 1; i < ctx->n_lines; i++) {
		if (is_section_end(&ctx->lines[i])) {
			*index = i + 1;
			return LUMEN_OK;
		}
		struct ldif_attribute_value av;
		if ((rc = attribute_line(ctx, i, &av)) != LUMEN_OK)
			return rc;
		if (av.description.len != description.len ||
		    strncasecmp((const char *)av.description.ptr, (const char *)description.ptr,
				description.len) != 0) {
			ERROR(ctx, ctx->lines[i].line, "attribute '%s' in a modify section for '%s'"
			      " (missing '-'?)", shown(av.description, buf, 32),
			      shown(description, buf + 32, 32));
			return LUMEN_EMALFORMED;
		}
		values[mod->n_values++] = av.value;
	}
	ERROR(ctx, section_line, "modify section for '%s' not ended by '-'",
	      shown(description, buf, 48));
	return LUMEN_EMALFORMED;
}

static int parse_modify(struct ldif_parse_context *ctx, size_t first, struct ldif_record *record)
{
	size_t count = ctx->n_lines - first;
	int rc;

	if (count == 0)
		return LUMEN_OK;
	record->modifications = arena_alloc(ctx->arena, count * sizeof(*record->modifications));
	struct ber_view *values = arena_alloc(ctx->arena, count * sizeof(*values));
	if (record->modifications == NULL || values == NULL)
		return LUMEN_ENOMEM;
	size_t index = first;
	while (index < ctx->n_lines) {
		struct ldif_modification *mod = &record->modifications[record->n_modifications];
		if ((rc = parse_modify_section(ctx, &index, mod, values)) != LUMEN_OK)
			return rc;
		values += mod->n_values;
		record->n_modifications++;
	}
	return LUMEN_OK;
}

static int parse_moddn(struct ldif_parse_context *ctx, size_t first, struct ldif_record *record)
{
	struct ber_view flag;
	struct split_line s;
	int rc;

	if ((rc = keyword_line(ctx, first, "newrdn", &record->new_rdn)) != LUMEN_OK ||
	    (rc = keyword_line(ctx, first + 1, "deleteoldrdn", &flag)) != LUMEN_OK)
		return rc;
	if (flag.len != 1 || (flag.ptr[0] != '0' && flag.ptr[0] != '1')) {
		ERROR(ctx, ctx->lines[first + 1].line, "deleteoldrdn must be 0 or 1");
		return LUMEN_EMALFORMED;
	}
	record->delete_old_rdn = flag.ptr[0] == '1';
	size_t next = first + 2;
	if (line_has_name(ctx, next, "newsuperior")) {
		if ((rc = split(ctx, next, &s)) != LUMEN_OK ||
		    (rc = decode_value(ctx, &s, &record->new_superior)) != LUMEN_OK)
			return rc;
		record->has_new_superior = true;
		next++;
	}
	if (next < ctx->n_lines) {
		ERROR(ctx, ctx->lines[next].line, "unexpected line after a modrdn change");
		return LUMEN_EMALFORMED;
	}
	return LUMEN_OK;
}

static int parse_change(struct ldif_parse_context *ctx, size_t index, struct ldif_record *record)
{
	struct ber_view type;
	char buf[64];
	int rc;

	if ((rc = keyword_line(ctx, index, "changetype", &type)) != LUMEN_OK)
		return rc;
	size_t at = ctx->lines[index].line;
	if (view_is(type.ptr, type.len, "add")) {
		record->kind = LDIF_CHANGE_ADD;
		return parse_attributes(ctx, index + 1, record);
	}
	if (view_is(type.ptr, type.len, "delete")) {
		record->kind = LDIF_CHANGE_DELETE;
		if (index + 1 < ctx->n_lines) {
			ERROR(ctx, ctx->lines[index + 1].line, "unexpected line after changetype: delete");
			return LUMEN_EMALFORMED;
		}
		return LUMEN_OK;
	}
	if (view_is(type.ptr, type.len, "modify")) {
		record->kind = LDIF_CHANGE_MODIFY;
		return parse_modify(ctx, index + 1, record);
	}
	if (view_is(type.ptr, type.len, "modrdn") || view_is(type.ptr, type.len, "moddn")) {
		record->kind = LDIF_CHANGE_MODDN;
		return parse_moddn(ctx, index + 1, record);
	}
	ERROR(ctx, at, "unknown changetype '%s'", shown(type, buf, 48));
	return LUMEN_EMALFORMED;
}

/*
 * "control:" FILL numericoid [SPACE ("true"/"false")] [value-spec]. The
 * value-spec is decoded in place like any attribute value.
 */
static int parse_control(struct ldif_parse_context *ctx, const struct split_line *s,
			 struct ldif_control *control)
{
	char *p = s->value, *end = s->value + s->value_len;

	if (s->kind != VALUE_PLAIN)
		goto bad;
	char *oid = p;
	while (p < end && *p != ' ' && *p != ':')
		p++;
	if (!is_numeric_oid((const uint8_t *)oid, (size_t)(p - oid)))
		goto bad;
	control->oid.ptr = (const uint8_t *)oid;
	control->oid.len = (size_t)(p - oid);
	while (p < end && *p == ' ')
		p++;
	char *word = p;
	while (p < end && *p != ' ' && *p != ':')
		p++;
	if (view_is((const uint8_t *)word, (size_t)(p - word), "true"))
		control->critical = true;
	else if (!view_is((const uint8_t *)word, (size_t)(p - word), "false"))
		p = word;
	while (p < end && *p == ' ')
		p++;
	if (p == end)
		return LUMEN_OK;
	if (*p != ':')
		goto bad;
	struct split_line value = { .name = s->name, .line = s->line, .kind = VALUE_PLAIN };
	p++;
	if (p < end && (*p == ':' || *p == '<'))
		value.kind = *p++ == ':' ? VALUE_BASE64 : VALUE_URL;
	while (p < end && *p == ' ')
		p++;
	value.value = p;
	value.value_len = (size_t)(end - p);
	control->has_value = true;
	return decode_value(ctx, &value, &control->value);
bad:
	ERROR(ctx, s->line, "malformed control line");
	return LUMEN_EMALFORMED;
}

/* Control lines from *index on; leaves *index at the first other line. */
static int parse_controls(struct ldif_parse_context *ctx, size_t *index,
			  struct ldif_record *record)
{
	struct split_line s;
	size_t first = *index, count = 0;
	int rc;

	while (line_has_name(ctx, first + count, "control"))
		count++;
	if (count == 0)
		return LUMEN_OK;
	record->controls = arena_calloc(ctx->arena, count, sizeof(*record->controls));
	if (record->controls == NULL)
		return LUMEN_ENOMEM;
	for (size_t i = 0; i < count; i++) {
		split(ctx, first + i, &s);
		if ((rc = parse_control(ctx, &s, &record->controls[i])) != LUMEN_OK)
			return rc;
	}
	record->n_controls = count;
	*index = first + count;
	return LUMEN_OK;
}

/* "version: 1" before the first record. Sets *skip to the lines it used. */
static int parse_version(struct ldif_parse_context *ctx, size_t *skip)
{
	struct split_line s;
	struct ber_view v;
	int rc;

	*skip = 0;
	if (!ctx->first_record || !line_has_name(ctx, 0, "version"))
		return LUMEN_OK;
	if ((rc = split(ctx, 0, &s)) != LUMEN_OK || (rc = decode_value(ctx, &s, &v)) != LUMEN_OK)
		return rc;
	if (!view_is(v.ptr, v.len, "1")) {
		ERROR(ctx, s.line, "unsupported LDIF version (only 1 is)");
		return LUMEN_EMALFORMED;
	}
	*skip = 1;
	return LUMEN_OK;
}

/* Errors: see ldif_read in ldif.h. */
int ldif_parse_record(struct ldif_parse_context *ctx, struct ldif_record *record)
{
	size_t index;
	int rc;

	memset(record, 0, sizeof(*record));
	if ((rc = parse_version(ctx, &index)) != LUMEN_OK)
		return rc;
	if (index == ctx->n_lines)
		return LDIF_PARSE_EMPTY;
	if (index > 0)
		ctx->record_line = ctx->lines[index].line;
	record->line = ctx->record_line;
	struct split_line s;
	if ((rc = split(ctx, index, &s)) != LUMEN_OK)
		return rc;
	if (!name_is(s.name, "dn")) {
		ERROR(ctx, s.line, "record does not start with 'dn:'");
		return LUMEN_EMALFORMED;
	}
	if (s.kind == VALUE_URL) {
		ERROR(ctx, s.line, "a DN cannot be given as a URL");
		return LUMEN_EMALFORMED;
	}
	if ((rc = decode_value(ctx, &s, &record->dn)) != LUMEN_OK)
		return rc;
	index++;
	if ((rc = parse_controls(ctx, &index, record)) != LUMEN_OK)
		return rc;
	if (line_has_name(ctx, index, "changetype"))
		return parse_change(ctx, index, record);
	if (record->n_controls > 0) {
		ERROR(ctx, record->line, "control lines without a changetype");
		return LUMEN_EMALFORMED;
	}
	record->kind = LDIF_CONTENT;
	return parse_attributes(ctx, index, record);
}
