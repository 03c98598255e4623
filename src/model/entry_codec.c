/*
 * entry_codec.c — the id2entry binary form of an entry (entry.h): encode,
 * strict decode into one allocation, a walker over a record that decodes
 * nothing, and entry_dup (a compact deep copy, laid out the same way).
 */
#include "entry.h"

#include <stdalign.h>
#include <string.h>

#include "entry_private.h"

#define RECORD_MAGIC_0 'L'
#define RECORD_MAGIC_1 '1'   /* PartialAttributes only */
#define RECORD_MAGIC_2 '2'   /* each PartialAttribute followed by its normalized forms */

/*
 * Version 2 follows each PartialAttribute with [0] { one element per value,
 * in order }: an OCTET STRING holding the normalized form where it differs
 * from the value, [1] (empty) where it is the value itself, [2] (empty)
 * where the value did not normalize (it matches nothing).
 */
#define NORMS_TAG      BER_TAG(BER_CLASS_CONTEXT, 1, 0)
#define NORM_SAME_TAG  BER_TAG(BER_CLASS_CONTEXT, 0, 1)
#define NORM_NONE_TAG  BER_TAG(BER_CLASS_CONTEXT, 0, 2)

/* --------------------------------------------------------------- encode */

int entry_attribute_write(const struct entry_attribute *a, struct ber_writer *w)
{
	if (a->encoded.len > 0) {
		ber_write_raw(w, a->encoded.ptr, a->encoded.len);
		return ber_writer_error(w);
	}
	ber_begin(w, BER_TAG_SEQUENCE);
	ber_write_octets(w, BER_TAG_OCTET_STRING, a->name.ptr, a->name.len);
	ber_begin(w, BER_TAG_SET);
	for (size_t i = 0; i < a->n_values; i++)
		ber_write_octets(w, BER_TAG_OCTET_STRING, a->values[i].value.ptr,
				 a->values[i].value.len);
	ber_end(w);
	ber_end(w);
	return ber_writer_error(w);
}

static void write_normalized(const struct entry_attribute *a, struct ber_writer *w)
{
	ber_begin(w, NORMS_TAG);
	for (size_t i = 0; i < a->n_values; i++) {
		struct ber_view v = a->values[i].value, n = a->values[i].normalized;
		if (n.ptr == NULL)
			ber_write_octets(w, NORM_NONE_TAG, NULL, 0);
		else if (n.len == v.len && (n.ptr == v.ptr || memcmp(n.ptr, v.ptr, v.len) == 0))
			ber_write_octets(w, NORM_SAME_TAG, NULL, 0);
		else
			ber_write_octets(w, BER_TAG_OCTET_STRING, n.ptr, n.len);
	}
	ber_end(w);
}

int entry_encode(const struct entry *e, struct ber_writer *w)
{
	static const uint8_t magic[2] = { RECORD_MAGIC_0, RECORD_MAGIC_2 };
	ber_write_raw(w, magic, sizeof(magic));
	ber_write_octets(w, BER_TAG_OCTET_STRING, e->dn.ptr, e->dn.len);
	ber_write_octets(w, BER_TAG_OCTET_STRING, e->ndn.ptr, e->ndn.len);
	ber_begin(w, BER_TAG_SEQUENCE);
	for (size_t i = 0; i < e->n_attributes; i++) {
		entry_attribute_write(&e->attributes[i], w);
		write_normalized(&e->attributes[i], w);
	}
	ber_end(w);
	return ber_writer_error(w);
}

/* --------------------------------------------------------------- walker */

/* Inside a record every element is complete: running short is corruption. */
static int as_malformed(int rc)
{
	return rc == LUMEN_OK ? LUMEN_OK : LUMEN_EMALFORMED;
}

int entry_record_open(const void *bytes, size_t len, struct entry_record *rec)
{
	const uint8_t *p = bytes;
	if (len < 2 || p[0] != RECORD_MAGIC_0 || (p[1] != RECORD_MAGIC_1 && p[1] != RECORD_MAGIC_2))
		return LUMEN_EMALFORMED;
	rec->has_normalized = p[1] == RECORD_MAGIC_2;
	struct ber_reader r;
	ber_reader_init(&r, p + 2, len - 2);
	int rc = ber_read_octets(&r, BER_TAG_OCTET_STRING, &rec->dn);
	if (rc == LUMEN_OK)
		rc = ber_read_octets(&r, BER_TAG_OCTET_STRING, &rec->ndn);
	if (rc == LUMEN_OK)
		rc = ber_enter(&r, BER_TAG_SEQUENCE, &rec->attributes);
	if (rc == LUMEN_OK && !ber_reader_at_end(&r))
		rc = LUMEN_EMALFORMED;
	return as_malformed(rc);
}

/* The one-byte identifier of a short tag (number under 31), as stored. */
#define TAG_BYTE(tag) ((uint8_t)((BER_TAG_CLASS(tag) << 6) | (BER_TAG_CONSTRUCTED(tag) << 5) | \
				 BER_TAG_NUMBER(tag)))

/*
 * The common attribute, every length under 128 (a person's attributes all
 * are): its framing read with byte compares alone. The decoder visits every
 * attribute of every record it reads, selected or not, and the element-by-
 * element reader cost a hundred instructions per attribute, a tenth of a
 * Bind. False, with nothing consumed, for anything else: the general
 * reader below then takes it, and says what is wrong with a bad one.
 */
static bool record_next_short(struct entry_record *rec, struct entry_record_attribute *out)
{
	const uint8_t *p = rec->attributes.pos;
	size_t avail = (size_t)(rec->attributes.end - p);
	if (avail < 6 || p[0] != TAG_BYTE(BER_TAG_SEQUENCE) || p[1] >= 0x80 || p[1] > avail - 2 ||
	    p[2] != TAG_BYTE(BER_TAG_OCTET_STRING) || p[3] >= 0x80 || p[3] + 4u > p[1])
		return false;
	size_t attribute_len = 2u + p[1], description_len = p[3];
	const uint8_t *set = p + 4 + description_len;
	/* The SET header is inside the SEQUENCE, and the SET ends it exactly. */
	if (set[0] != TAG_BYTE(BER_TAG_SET) || set[1] >= 0x80 ||
	    4u + description_len + 2u + set[1] != attribute_len)
		return false;
	const uint8_t *next = p + attribute_len;
	struct ber_view normalized = { NULL, 0 };
	if (rec->has_normalized) {
		size_t left = avail - attribute_len;
		if (left < 2 || next[0] != TAG_BYTE(NORMS_TAG) || next[1] >= 0x80 || next[1] > left - 2)
			return false;
		normalized = (struct ber_view){ next + 2, next[1] };
		next += 2u + next[1];
	}
	out->description = (struct ber_view){ p + 4, description_len };
	out->encoded = (struct ber_view){ p, attribute_len };
	out->values = (struct ber_view){ set + 2, set[1] };
	out->normalized = normalized;
	rec->attributes.pos = next;
	return true;
}

/* Any attribute, element by element: long lengths, and every error. */
static int record_next_general(struct entry_record *rec, struct entry_record_attribute *out)
{
	const uint8_t *start = rec->attributes.pos;
	struct ber_reader attr, values;
	int rc = ber_enter(&rec->attributes, BER_TAG_SEQUENCE, &attr);
	if (rc == LUMEN_OK)
		rc = ber_read_octets(&attr, BER_TAG_OCTET_STRING, &out->description);
	if (rc == LUMEN_OK)
		rc = ber_enter(&attr, BER_TAG_SET, &values);
	if (rc == LUMEN_OK && !ber_reader_at_end(&attr))
		rc = LUMEN_EMALFORMED;
	if (rc != LUMEN_OK)
		return as_malformed(rc);
	out->encoded = (struct ber_view){ start, (size_t)(rec->attributes.pos - start) };
	out->values = (struct ber_view){ values.pos, (size_t)(values.end - values.pos) };
	out->normalized = (struct ber_view){ NULL, 0 };
	if (rec->has_normalized) {
		struct ber_reader norms;
		rc = ber_enter(&rec->attributes, NORMS_TAG, &norms);
		if (rc != LUMEN_OK)
			return as_malformed(rc);
		out->normalized = (struct ber_view){ norms.pos, (size_t)(norms.end - norms.pos) };
	}
	return 1;
}

static inline int record_next(struct entry_record *rec, struct entry_record_attribute *out)
{
	if (ber_reader_at_end(&rec->attributes))
		return 0;
	return record_next_short(rec, out) ? 1 : record_next_general(rec, out);
}

int entry_record_next(struct entry_record *rec, struct entry_record_attribute *out)
{
	return record_next(rec, out);
}

/* --------------------------------------------------------------- decode */

/* What the first pass learns about one stored attribute. */
struct staged_attribute {
	struct entry_record_attribute stored;
	struct attribute_description desc;
	size_t first_value;   /* into the staged value array */
	size_t n_values;
};

struct staged_record {
	struct entry_record rec;
	struct staged_attribute *attributes;
	size_t n_attributes, cap_attributes;
	struct entry_value *values;   /* views into the caller's bytes / scratch */
	size_t n_values, cap_values;
	size_t extra_bytes;           /* normalized forms computed into scratch */
	bool trust_normalized;        /* take the record's normalized forms */
	const struct entry_selection *only;  /* NULL: every attribute */
	size_t position;              /* of the next attribute in the record */
	struct entry_outline_attribute *outline;  /* only->outline: every attribute */
	size_t n_outline;
};

/* The arrays were too small for this record: count, then stage again. */
#define STAGE_FULL 1
/* The attribute is not one the caller selected. */
#define STAGE_SKIPPED 2

/* Count attributes and values exactly, for a record the estimate missed. */
static int count_record(struct entry_record rec, size_t *n_attributes, size_t *n_values)
{
	struct entry_record_attribute a;
	int more;
	*n_attributes = *n_values = 0;
	while ((more = entry_record_next(&rec, &a)) == 1) {
		if (++*n_attributes > ENTRY_MAX_ATTRIBUTES)
			return LUMEN_ELIMIT;
		struct ber_reader r;
		ber_reader_init(&r, a.values.ptr, a.values.len);
		while (!ber_reader_at_end(&r)) {
			struct ber_view v;
			if (ber_read_octets(&r, BER_TAG_OCTET_STRING, &v) != LUMEN_OK)
				return LUMEN_EMALFORMED;
			++*n_values;
		}
	}
	return more;  /* 0 or LUMEN_EMALFORMED */
}

/* The stored normalized form of the next value (a version 2 record). */
static int take_stored(struct ber_reader *norms, struct entry_value *v)
{
	struct ber_element el;
	if (ber_read_element(norms, &el) != LUMEN_OK)
		return LUMEN_EMALFORMED;
	switch (el.tag) {
	case BER_TAG_OCTET_STRING:
		v->normalized = el.value;
		return LUMEN_OK;
	case NORM_SAME_TAG:
		v->normalized = v->value;
		return el.value.len == 0 ? LUMEN_OK : LUMEN_EMALFORMED;
	case NORM_NONE_TAG:
		v->normalized = (struct ber_view){ NULL, 0 };
		return el.value.len == 0 ? LUMEN_OK : LUMEN_EMALFORMED;
	default:
		return LUMEN_EMALFORMED;
	}
}

static int stage_value(const struct attribute_type *type, struct staged_record *st,
		       struct ber_view value, struct ber_reader *norms, struct arena *scratch)
{
	struct entry_value *v = &st->values[st->n_values++];
	v->value = value;
	if (norms != NULL)
		return take_stored(norms, v);
	int rc = entry_normalize_value(type, v->value, scratch, &v->normalized);
	if (rc == LUMEN_ENOMEM)
		return rc;
	/* Stored before a schema change: keep the value, it matches nothing. */
	if (rc != LUMEN_OK)
		v->normalized = (struct ber_view){ NULL, 0 };
	else if (v->normalized.len == v->value.len &&
		 (v->value.len == 0 ||
		  memcmp(v->normalized.ptr, v->value.ptr, v->value.len) == 0))
		v->normalized = v->value;  /* alias: no second copy */
	else
		st->extra_bytes += v->normalized.len;
	return LUMEN_OK;
}

/* Asked for every attribute of every record read: the types themselves
 * first, the supertype chain only for a type that has one (most have not). */
static bool selected(const struct entry_selection *only, const struct attribute_type *type)
{
	if (only == NULL)
		return true;
	for (size_t i = 0; i < only->n_types; i++)
		if (type == only->types[i])
			return true;
	for (size_t i = 0; i < only->n_types && type->sup != NULL; i++)
		if (attribute_type_is_subtype(type->sup, only->types[i]))
			return true;
	return false;
}

static int stage_attribute(const struct schema *s, struct staged_record *st,
			   struct staged_attribute *sa, struct arena *scratch)
{
	struct ber_view d = sa->stored.description;
	if (d.len == 0)
		return LUMEN_EMALFORMED;
	int rc = attribute_description_parse_at(s, st->position++, (const char *)d.ptr, d.len,
						&sa->desc);
	if (rc != LUMEN_OK)
		return rc == LUMEN_ENOTFOUND ? LUMEN_ENOTFOUND : LUMEN_EMALFORMED;
	if (st->outline != NULL) {
		if (st->n_outline == st->cap_attributes)
			return STAGE_FULL;
		st->outline[st->n_outline++] = (struct entry_outline_attribute){
			sa->desc, sa->stored.description, sa->stored.encoded };
	}
	if (!selected(st->only, sa->desc.type))
		return STAGE_SKIPPED;
	sa->first_value = st->n_values;
	sa->n_values = 0;
	struct ber_reader r, stored_norms, *norms = NULL;
	ber_reader_init(&r, sa->stored.values.ptr, sa->stored.values.len);
	if (st->trust_normalized && st->rec.has_normalized) {
		ber_reader_init(&stored_norms, sa->stored.normalized.ptr, sa->stored.normalized.len);
		norms = &stored_norms;
	}
	while (!ber_reader_at_end(&r)) {
		struct ber_view value;
		if (ber_read_octets(&r, BER_TAG_OCTET_STRING, &value) != LUMEN_OK)
			return LUMEN_EMALFORMED;
		if (++sa->n_values > ENTRY_MAX_VALUES)
			return LUMEN_ELIMIT;
		if (st->n_values == st->cap_values)
			return STAGE_FULL;
		rc = stage_value(sa->desc.type, st, value, norms, scratch);
		if (rc != LUMEN_OK)
			return rc;
	}
	if (norms != NULL && !ber_reader_at_end(norms))
		return LUMEN_EMALFORMED;   /* more normalized forms than values */
	return sa->n_values == 0 ? LUMEN_EMALFORMED : LUMEN_OK;
}

/* One pass over the record into arrays of the given sizes; STAGE_FULL when
 * the record holds more. */
static int stage_into(const struct schema *s, struct staged_record *st, size_t cap_attributes,
		      size_t cap_values, struct arena *scratch)
{
	st->attributes = arena_alloc(scratch, cap_attributes * sizeof(*st->attributes));
	st->values = arena_alloc(scratch, cap_values * sizeof(*st->values));
	if (st->only != NULL && st->only->outline)
		st->outline = arena_alloc(scratch, cap_attributes * sizeof(*st->outline));
	if (st->attributes == NULL || st->values == NULL ||
	    (st->only != NULL && st->only->outline && st->outline == NULL))
		return LUMEN_ENOMEM;
	st->cap_attributes = cap_attributes;
	st->cap_values = cap_values;
	st->n_attributes = st->n_values = st->n_outline = 0;
	st->position = 0;
	st->extra_bytes = 0;
	struct entry_record walk = st->rec;
	int more;
	while ((more = record_next(&walk, &st->attributes[st->n_attributes].stored)) == 1) {
		if (st->position + 1 > ENTRY_MAX_ATTRIBUTES)
			return LUMEN_ELIMIT;
		int rc = stage_attribute(s, st, &st->attributes[st->n_attributes], scratch);
		if (rc == STAGE_SKIPPED)
			continue;
		if (rc != LUMEN_OK)
			return rc;
		if (++st->n_attributes == st->cap_attributes)
			return entry_record_next(&walk, &(struct entry_record_attribute){ 0 }) == 0
				       ? LUMEN_OK : STAGE_FULL;
	}
	return more;  /* 0 or LUMEN_EMALFORMED */
}

/*
 * One pass with arrays sized from the record's length (a value takes at
 * least two bytes, typical ones a dozen or more), so most records are read
 * once; a record with more is counted exactly and staged again.
 */
static int stage_record(const struct schema *s, const void *bytes, size_t len,
			bool trust_normalized, const struct entry_selection *only,
			struct arena *scratch, struct staged_record *st)
{
	memset(st, 0, sizeof(*st));
	st->trust_normalized = trust_normalized;
	st->only = only;
	int rc = entry_record_open(bytes, len, &st->rec);
	if (rc != LUMEN_OK || (only != NULL && only->n_types == 0 && !only->outline))
		return rc;      /* the DN alone: no attribute to look for */
	rc = stage_into(s, st, len / 24 + 8, len / 12 + 16, scratch);
	if (rc != STAGE_FULL)
		return rc;
	size_t n_attributes, n_values;
	rc = count_record(st->rec, &n_attributes, &n_values);
	if (rc != LUMEN_OK)
		return rc;
	rc = stage_into(s, st, n_attributes + 1, n_values + 1, scratch);
	return rc == STAGE_FULL ? LUMEN_EMALFORMED : rc;
}

/* Move a view that pointed into `from` to the same offset in `to`. */
static struct ber_view rebase(struct ber_view v, const uint8_t *from, const uint8_t *to)
{
	if (v.ptr == NULL)
		return v;
	return (struct ber_view){ to + (v.ptr - from), v.len };
}

/* The outline's views moved from the caller's bytes into the entry's copy. */
static int build_outline(struct entry *e, const struct staged_record *st,
			 const uint8_t *bytes, size_t len, const uint8_t *to)
{
	struct entry_outline_attribute *outline =
		entry_mem_alloc(e, st->n_outline * sizeof(*outline) + 1,
				alignof(struct entry_outline_attribute));
	if (outline == NULL)
		return LUMEN_ENOMEM;
	for (size_t i = 0; i < st->n_outline; i++) {
		const struct entry_outline_attribute *from = &st->outline[i];
		outline[i].desc.type = from->desc.type;
		outline[i].desc.options = rebase(from->desc.options, bytes, to);
		outline[i].name = rebase(from->name, bytes, to);
		outline[i].encoded = rebase(from->encoded, bytes, to);
	}
	e->outline = outline;
	e->n_outline = st->n_outline;
	e->record = (struct ber_view){ to, len };
	return LUMEN_OK;
}

static int build_entry(const struct schema *s, const uint8_t *bytes, size_t len,
		       const struct staged_record *st, struct entry **out)
{
	size_t align = alignof(max_align_t);
	size_t size = len + st->extra_bytes + st->rec.dn.len + st->rec.ndn.len + 2 +
		      st->n_attributes * sizeof(struct entry_attribute) +
		      st->n_values * sizeof(struct entry_value) +
		      st->n_outline * sizeof(struct entry_outline_attribute) + 5 * align;
	struct entry *e;
	int rc = entry_new_sized(s, size, &e);
	if (rc != LUMEN_OK)
		return rc;
	struct ber_view record_copy;
	e->attributes = entry_mem_alloc(e, st->n_attributes * sizeof(*e->attributes) + 1,
					alignof(struct entry_attribute));
	struct entry_value *values = entry_mem_alloc(e, st->n_values * sizeof(*values) + 1,
						     alignof(struct entry_value));
	if (e->attributes == NULL || values == NULL)
		goto nomem;
	rc = entry_mem_copy(e, (struct ber_view){ bytes, len }, false, &record_copy);
	if (rc == LUMEN_OK)
		rc = entry_store_dn(e, st->rec.dn, st->rec.ndn);
	if (rc != LUMEN_OK)
		goto nomem;
	const uint8_t *to = record_copy.ptr;
	for (size_t i = 0; i < st->n_values; i++) {
		struct entry_value v = st->values[i];
		bool aliased = v.normalized.ptr == v.value.ptr;
		bool stored = v.normalized.ptr >= bytes && v.normalized.ptr < bytes + len;
		values[i].value = rebase(v.value, bytes, to);
		if (aliased)
			values[i].normalized = values[i].value;
		else if (stored || v.normalized.ptr == NULL)
			values[i].normalized = rebase(v.normalized, bytes, to);
		else if (entry_mem_copy(e, v.normalized, false, &values[i].normalized) != LUMEN_OK)
			goto nomem;
	}
	for (size_t i = 0; i < st->n_attributes; i++) {
		const struct staged_attribute *sa = &st->attributes[i];
		struct entry_attribute *a = &e->attributes[i];
		a->desc.type = sa->desc.type;
		a->desc.options = rebase(sa->desc.options, bytes, to);
		a->name = rebase(sa->stored.description, bytes, to);
		a->values = &values[sa->first_value];
		a->n_values = a->cap_values = sa->n_values;
		a->encoded = rebase(sa->stored.encoded, bytes, to);
	}
	e->n_attributes = e->cap_attributes = st->n_attributes;
	if (st->outline != NULL && build_outline(e, st, bytes, len, to) != LUMEN_OK)
		goto nomem;
	entry_refresh_classes(e);
	*out = e;
	return LUMEN_OK;
nomem:
	entry_free(e);
	return LUMEN_ENOMEM;
}

int entry_decode(const struct schema *s, const void *bytes, size_t len,
		 struct arena *scratch, struct entry **out)
{
	return entry_decode_stored(s, bytes, len, false, scratch, out);
}

int entry_decode_stored(const struct schema *s, const void *bytes, size_t len,
			bool trust_normalized, struct arena *scratch, struct entry **out)
{
	return entry_decode_selected(s, bytes, len, trust_normalized, NULL, scratch, out);
}

int entry_decode_selected(const struct schema *s, const void *bytes, size_t len,
			  bool trust_normalized, const struct entry_selection *only,
			  struct arena *scratch, struct entry **out)
{
	struct arena own;
	struct staged_record st;
	*out = NULL;
	if (scratch == NULL) {
		arena_init(&own, 0);
		scratch = &own;
	}
	int rc = stage_record(s, bytes, len, trust_normalized, only, scratch, &st);
	if (rc == LUMEN_OK)
		rc = build_entry(s, bytes, len, &st, out);
	if (scratch == &own)
		arena_free(&own);
	return rc;
}

int entry_decode_whole(const struct entry *partial, struct entry **out)
{
	*out = NULL;
	if (partial->outline == NULL)
		return LUMEN_EINVAL;
	struct entry *e;
	int rc = entry_decode(partial->schema, partial->record.ptr, partial->record.len, NULL, &e);
	if (rc == LUMEN_OK && !ber_view_eq(e->ndn, partial->ndn))
		rc = entry_set_dn(e, partial->dn, partial->ndn);   /* corrected since stored */
	if (rc != LUMEN_OK) {
		entry_free(e);
		return rc;
	}
	*out = e;
	return LUMEN_OK;
}

/* ------------------------------------------------------------------ dup */

static size_t dup_size(const struct entry *e)
{
	size_t size = e->dn.len + e->ndn.len + 2 +
		      e->n_attributes * sizeof(struct entry_attribute) + alignof(max_align_t);
	for (size_t i = 0; i < e->n_attributes; i++) {
		const struct entry_attribute *a = &e->attributes[i];
		size += a->name.len + 1 + a->n_values * sizeof(struct entry_value) +
			alignof(max_align_t);
		for (size_t j = 0; j < a->n_values; j++) {
			size += a->values[j].value.len;
			if (a->values[j].normalized.ptr != a->values[j].value.ptr)
				size += a->values[j].normalized.len;
		}
	}
	return size;
}

static int dup_attribute(struct entry *e, const struct entry_attribute *from,
			 struct entry_attribute *to)
{
	memset(to, 0, sizeof(*to));
	int rc = entry_mem_copy(e, from->name, true, &to->name);
	if (rc != LUMEN_OK)
		return rc;
	to->desc.type = from->desc.type;
	to->desc.options = rebase(from->desc.options, from->name.ptr, to->name.ptr);
	to->values = entry_mem_alloc(e, from->n_values * sizeof(*to->values) + 1,
				     alignof(struct entry_value));
	if (to->values == NULL)
		return LUMEN_ENOMEM;
	for (size_t j = 0; j < from->n_values; j++) {
		const struct entry_value *v = &from->values[j];
		rc = entry_mem_copy(e, v->value, false, &to->values[j].value);
		if (rc != LUMEN_OK)
			return rc;
		if (v->normalized.ptr == v->value.ptr || v->normalized.ptr == NULL)
			to->values[j].normalized = v->normalized.ptr ? to->values[j].value
								     : v->normalized;
		else if ((rc = entry_mem_copy(e, v->normalized, false, &to->values[j].normalized)) != LUMEN_OK)
			return rc;
	}
	to->n_values = to->cap_values = from->n_values;
	return LUMEN_OK;
}

int entry_dup(const struct entry *e, struct entry **out)
{
	struct entry *copy;
	*out = NULL;
	int rc = entry_new_sized(e->schema, dup_size(e), &copy);
	if (rc != LUMEN_OK)
		return rc;
	rc = entry_store_dn(copy, e->dn, e->ndn);
	if (rc != LUMEN_OK)
		goto fail;
	copy->attributes = entry_mem_alloc(copy, e->n_attributes * sizeof(*copy->attributes) + 1,
					   alignof(struct entry_attribute));
	if (copy->attributes == NULL) {
		rc = LUMEN_ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < e->n_attributes; i++) {
		rc = dup_attribute(copy, &e->attributes[i], &copy->attributes[i]);
		if (rc != LUMEN_OK)
			goto fail;
		copy->n_attributes = i + 1;
	}
	copy->cap_attributes = e->n_attributes;
	memcpy(copy->class_bits, e->class_bits, e->n_class_words * sizeof(uint64_t));
	copy->structural = e->structural;
	copy->two_structural = e->two_structural;
	copy->unknown_class = e->unknown_class;
	*out = copy;
	return LUMEN_OK;
fail:
	entry_free(copy);
	return rc;
}
