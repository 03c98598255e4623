/*
 * entry.c — in-memory entries: their memory, lookup and mutation (entry.h).
 *
 * Memory is a list of chunks owned by the entry; the struct entry itself
 * lives in the first chunk carved, so one entry_free releases everything.
 * Bytes are carved unaligned, arrays aligned for their element type.
 */
#include "entry.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dn.h"
#include "entry_private.h"

#define CHUNK_MIN 512u

struct entry_chunk {
	struct entry_chunk *next;
	size_t size;
	size_t used;
	max_align_t data[];
};

static struct entry_chunk *chunk_new(size_t size)
{
	if (size > SIZE_MAX - sizeof(struct entry_chunk))
		return NULL;
	struct entry_chunk *c = malloc(sizeof(*c) + size);
	if (c == NULL)
		return NULL;
	c->next = NULL;
	c->size = size;
	c->used = 0;
	return c;
}

static void *chunk_carve(struct entry_chunk *c, size_t n, size_t align)
{
	size_t start = (c->used + align - 1) & ~(align - 1);
	if (start > c->size || c->size - start < n)
		return NULL;
	c->used = start + n;
	return (uint8_t *)c->data + start;
}

void *entry_mem_alloc(struct entry *e, size_t n, size_t align)
{
	void *p = chunk_carve(e->memory, n, align);
	if (p != NULL)
		return p;
	/* Grow geometrically so an entry built value by value stays a few chunks. */
	size_t size = e->memory->size * 2;
	if (size < n + align)
		size = n + align;
	struct entry_chunk *c = chunk_new(size);
	if (c == NULL)
		return NULL;
	c->next = e->memory;
	e->memory = c;
	return chunk_carve(c, n, align);
}

int entry_mem_copy(struct entry *e, struct ber_view in, bool nul, struct ber_view *out)
{
	uint8_t *p = entry_mem_alloc(e, in.len + (nul ? 1 : 0), 1);
	if (p == NULL)
		return LUMEN_ENOMEM;
	if (in.len > 0)
		memcpy(p, in.ptr, in.len);
	if (nul)
		p[in.len] = '\0';
	out->ptr = p;
	out->len = in.len;
	return LUMEN_OK;
}

int entry_new_sized(const struct schema *s, size_t size, struct entry **out)
{
	size_t classes = schema_object_class_count(s);
	size_t words = (classes + 63) / 64;
	size_t need = sizeof(struct entry) + words * sizeof(uint64_t) + 2 * alignof(max_align_t);
	/* The header on top: a size that left it out made every decoded
	 * entry spill into a second chunk twice as big (3x the memory). */
	if (size > SIZE_MAX - need)
		return LUMEN_ENOMEM;
	struct entry_chunk *c = chunk_new(size + need);
	if (c == NULL)
		return LUMEN_ENOMEM;
	struct entry *e = chunk_carve(c, sizeof(*e), alignof(struct entry));
	if (e == NULL) {          /* cannot happen: need covers it */
		free(c);
		return LUMEN_ENOMEM;
	}
	memset(e, 0, sizeof(*e));
	e->schema = s;
	e->memory = c;
	e->n_class_words = words;
	e->class_bits = chunk_carve(c, words * sizeof(uint64_t) + 1, alignof(uint64_t));
	memset(e->class_bits, 0, words * sizeof(uint64_t));
	*out = e;
	return LUMEN_OK;
}

void entry_free(struct entry *e)
{
	if (e == NULL)
		return;
	struct entry_chunk *c = e->memory;  /* e itself lives in one of these */
	while (c != NULL) {
		struct entry_chunk *next = c->next;
		free(c);
		c = next;
	}
}

/* dn and ndn into entry memory; ndn computed when the caller has none. */
int entry_store_dn(struct entry *e, struct ber_view dn, struct ber_view ndn)
{
	struct arena tmp;
	int rc = LUMEN_OK;
	arena_init(&tmp, 0);
	if (ndn.ptr == NULL) {
		rc = dn_normalize(e->schema, (const char *)dn.ptr, dn.len, &tmp, &ndn);
		if (rc != LUMEN_OK)
			goto done;
	}
	rc = entry_mem_copy(e, dn, true, &e->dn);
	if (rc == LUMEN_OK)
		rc = entry_mem_copy(e, ndn, true, &e->ndn);
done:
	arena_free(&tmp);
	return rc;
}

int entry_create(const struct schema *s, struct ber_view dn, struct ber_view ndn,
		 struct entry **out)
{
	struct entry *e = NULL;
	*out = NULL;
	int rc = entry_new_sized(s, CHUNK_MIN + dn.len * 2, &e);
	if (rc != LUMEN_OK)
		return rc;
	rc = entry_store_dn(e, dn, ndn);
	if (rc != LUMEN_OK) {
		entry_free(e);
		return rc;
	}
	*out = e;
	return LUMEN_OK;
}

int entry_set_dn(struct entry *e, struct ber_view dn, struct ber_view ndn)
{
	return entry_store_dn(e, dn, ndn);
}

/* ---------------------------------------------------------------- lookup */

/* Options as sets, compared case-insensitively ("a;B" equals "b;a"). */
static bool option_in(struct ber_view option, struct ber_view options)
{
	const uint8_t *p = options.ptr, *end = options.ptr + options.len;
	while (p < end) {
		const uint8_t *semi = memchr(p, ';', (size_t)(end - p));
		size_t n = (size_t)((semi ? semi : end) - p);
		if (n == option.len && strncasecmp((const char *)p, (const char *)option.ptr, n) == 0)
			return true;
		p += n + 1;
	}
	return false;
}

static size_t option_count(struct ber_view options)
{
	if (options.len == 0)
		return 0;
	size_t n = 1;
	for (size_t i = 0; i < options.len; i++)
		n += options.ptr[i] == ';';
	return n;
}

bool entry_options_equal(struct ber_view a, struct ber_view b)
{
	if (option_count(a) != option_count(b))
		return false;
	if (a.len == 0)
		return true;    /* both without options; a.ptr may be NULL */
	const uint8_t *p = a.ptr, *end = a.ptr + a.len;
	while (p < end) {
		const uint8_t *semi = memchr(p, ';', (size_t)(end - p));
		struct ber_view one = { p, (size_t)((semi ? semi : end) - p) };
		if (!option_in(one, b))
			return false;
		p += one.len + 1;
	}
	return true;
}

long entry_attribute_index(const struct entry *e, const struct attribute_description *ad)
{
	for (size_t i = 0; i < e->n_attributes; i++) {
		const struct entry_attribute *a = &e->attributes[i];
		if (a->desc.type == ad->type && entry_options_equal(a->desc.options, ad->options))
			return (long)i;
	}
	return -1;
}

const struct entry_attribute *entry_find(const struct entry *e,
					 const struct attribute_description *ad)
{
	long i = entry_attribute_index(e, ad);
	return i < 0 ? NULL : &e->attributes[i];
}

const struct entry_attribute *entry_find_type(const struct entry *e,
					      const struct attribute_type *type)
{
	for (size_t i = 0; i < e->n_attributes; i++)
		if (e->attributes[i].desc.type == type)
			return &e->attributes[i];
	return NULL;
}

static bool view_equal(struct ber_view a, struct ber_view b)
{
	return a.ptr != NULL && b.ptr != NULL && a.len == b.len &&
	       (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

long entry_attribute_find_normalized(const struct entry_attribute *a,
				     struct ber_view normalized)
{
	for (size_t i = 0; i < a->n_values; i++)
		if (view_equal(a->values[i].normalized, normalized))
			return (long)i;
	return -1;
}

bool entry_is_instance_of(const struct entry *e, const struct object_class *oc)
{
	if (oc == NULL || oc->index / 64 >= e->n_class_words)
		return false;
	return (e->class_bits[oc->index / 64] >> (oc->index % 64)) & 1u;
}

int entry_normalize_value(const struct attribute_type *type, struct ber_view value,
			  struct arena *scratch, struct ber_view *out)
{
	if (type->equality == NULL) {
		*out = value;
		return LUMEN_OK;
	}
	int rc = type->equality->normalize(value.ptr, value.len, scratch, out);
	if (rc == LUMEN_EMALFORMED)
		return LUMEN_ESCHEMA;
	return rc;
}

int entry_has_value(const struct entry *e, const struct attribute_description *ad,
		    struct ber_view value, struct arena *scratch, bool *found)
{
	*found = false;
	if (ad->type == NULL)
		return LUMEN_EINVAL;
	if (ad->type->equality == NULL)
		return LUMEN_EUNSUPPORTED;
	struct ber_view normalized;
	int rc = entry_normalize_value(ad->type, value, scratch, &normalized);
	if (rc != LUMEN_OK)
		return rc;
	for (size_t i = 0; i < e->n_attributes && !*found; i++) {
		const struct entry_attribute *a = &e->attributes[i];
		if (attribute_description_matches(ad, &a->desc))
			*found = entry_attribute_find_normalized(a, normalized) >= 0;
	}
	return LUMEN_OK;
}

/* ---------------------------------------------------------- object classes */

static bool is_object_class_type(const struct attribute_type *type)
{
	return type != NULL && type->is_object_class;
}

static void mark_class(struct entry *e, const struct object_class *oc)
{
	if (oc->index / 64 >= e->n_class_words || entry_is_instance_of(e, oc))
		return;
	e->class_bits[oc->index / 64] |= (uint64_t)1 << (oc->index % 64);
	for (size_t i = 0; i < oc->n_sups; i++)
		mark_class(e, oc->sups[i]);
}

/* Keep the most derived structural class; note unrelated ones. */
static void consider_structural(struct entry *e, const struct object_class *oc)
{
	if (oc->kind != OBJECT_CLASS_STRUCTURAL)
		return;
	if (e->structural == NULL || object_class_is_subclass(oc, e->structural))
		e->structural = oc;
	else if (!object_class_is_subclass(e->structural, oc))
		e->two_structural = true;
}

void entry_refresh_classes(struct entry *e)
{
	memset(e->class_bits, 0, e->n_class_words * sizeof(uint64_t));
	e->structural = NULL;
	e->two_structural = false;
	e->unknown_class = false;
	for (size_t i = 0; i < e->n_attributes; i++) {
		const struct entry_attribute *a = &e->attributes[i];
		if (!is_object_class_type(a->desc.type))
			continue;
		for (size_t j = 0; j < a->n_values; j++) {
			struct ber_view v = a->values[j].value;
			const struct object_class *oc =
				schema_object_class(e->schema, (const char *)v.ptr, v.len);
			if (oc == NULL) {
				e->unknown_class = true;
				continue;
			}
			mark_class(e, oc);
			consider_structural(e, oc);
		}
	}
}

/* ------------------------------------------------------------- mutation */

/* A copy of an array's n elements in fresh entry memory of cap elements,
 * *old_cap set to cap (the old copy stays in the entry's chunks until
 * entry_free); NULL (nothing changed) when out of memory. */
static void *regrow(struct entry *e, const void *old, size_t n, size_t *old_cap, size_t cap,
		    size_t size, size_t align)
{
	void *grown = entry_mem_alloc(e, cap * size, align);
	if (grown == NULL)
		return NULL;
	if (n > 0)
		memcpy(grown, old, n * size);
	*old_cap = cap;
	return grown;
}

static int grow_attributes(struct entry *e)
{
	if (e->n_attributes < e->cap_attributes)
		return LUMEN_OK;
	if (e->n_attributes >= ENTRY_MAX_ATTRIBUTES)
		return LUMEN_ELIMIT;
	size_t cap = e->cap_attributes ? e->cap_attributes * 2 : 8;
	struct entry_attribute *n = regrow(e, e->attributes, e->n_attributes, &e->cap_attributes,
					   cap, sizeof(*n), alignof(struct entry_attribute));
	if (n == NULL)
		return LUMEN_ENOMEM;
	e->attributes = n;
	return LUMEN_OK;
}

static int grow_values(struct entry *e, struct entry_attribute *a, size_t extra)
{
	if (a->cap_values - a->n_values >= extra)
		return LUMEN_OK;
	if (extra > ENTRY_MAX_VALUES || a->n_values + extra > ENTRY_MAX_VALUES)
		return LUMEN_ELIMIT;
	size_t cap = a->cap_values ? a->cap_values * 2 : 4;
	if (cap < a->n_values + extra)
		cap = a->n_values + extra;
	struct entry_value *n = regrow(e, a->values, a->n_values, &a->cap_values, cap, sizeof(*n),
				       alignof(struct entry_value));
	if (n == NULL)
		return LUMEN_ENOMEM;
	a->values = n;
	return LUMEN_OK;
}

/* The canonical description text: primary name, then options as written. */
static int store_description(struct entry *e, const struct attribute_description *ad,
			     struct entry_attribute *a)
{
	const char *name = attribute_type_name(ad->type);
	size_t name_len = strlen(name);
	size_t len = name_len + (ad->options.len ? 1 + ad->options.len : 0);
	uint8_t *p = entry_mem_alloc(e, len + 1, 1);
	if (p == NULL)
		return LUMEN_ENOMEM;
	memcpy(p, name, name_len);
	if (ad->options.len) {
		p[name_len] = ';';
		memcpy(p + name_len + 1, ad->options.ptr, ad->options.len);
	}
	p[len] = '\0';
	a->name = (struct ber_view){ p, len };
	a->desc.type = ad->type;
	a->desc.options = ad->options.len
		? (struct ber_view){ p + name_len + 1, ad->options.len }
		: (struct ber_view){ p + len, 0 };
	return LUMEN_OK;
}

/* Index of the attribute with description ad, creating it (empty) if absent. */
static int attribute_for_update(struct entry *e, const struct attribute_description *ad,
				size_t *index)
{
	long i = entry_attribute_index(e, ad);
	if (i >= 0) {
		*index = (size_t)i;
		return LUMEN_OK;
	}
	int rc = grow_attributes(e);
	if (rc != LUMEN_OK)
		return rc;
	struct entry_attribute *a = &e->attributes[e->n_attributes];
	memset(a, 0, sizeof(*a));
	rc = store_description(e, ad, a);
	if (rc != LUMEN_OK)
		return rc;
	*index = e->n_attributes++;
	return LUMEN_OK;
}

static void remove_attribute(struct entry *e, size_t index)
{
	memmove(&e->attributes[index], &e->attributes[index + 1],
		(e->n_attributes - index - 1) * sizeof(e->attributes[0]));
	e->n_attributes--;
}

/* Copy a value and its normalized form in; the normalized form aliases the value when equal. */
static int store_value(struct entry *e, struct ber_view value, struct ber_view normalized,
		       struct entry_value *out)
{
	int rc = entry_mem_copy(e, value, false, &out->value);
	if (rc != LUMEN_OK)
		return rc;
	if (normalized.ptr == NULL) {
		out->normalized = normalized;
		return LUMEN_OK;
	}
	if (normalized.len == value.len &&
	    (value.len == 0 || memcmp(normalized.ptr, value.ptr, value.len) == 0)) {
		out->normalized = out->value;
		return LUMEN_OK;
	}
	return entry_mem_copy(e, normalized, false, &out->normalized);
}

struct pending_value {
	struct ber_view normalized;
	size_t index;      /* in the caller's list; SIZE_MAX for a value already present */
};

static int compare_pending(const void *pa, const void *pb)
{
	const struct pending_value *a = pa, *b = pb;
	size_t n = a->normalized.len < b->normalized.len ? a->normalized.len : b->normalized.len;
	int c = n ? memcmp(a->normalized.ptr, b->normalized.ptr, n) : 0;
	if (c != 0)
		return c;
	if (a->normalized.len != b->normalized.len)
		return a->normalized.len < b->normalized.len ? -1 : 1;
	/* present values (SIZE_MAX) sort after new ones: report the new one */
	return a->index < b->index ? -1 : (a->index > b->index);
}

/*
 * Normalize the new values into scratch and find duplicates among them and
 * against `existing` (may be NULL) by sorting all normalized forms together.
 */
static int normalize_new_values(const struct attribute_type *type,
				const struct entry_attribute *existing,
				const struct ber_view *values, size_t n,
				struct arena *scratch, struct ber_view **normalized,
				size_t *bad_index)
{
	size_t n_old = existing ? existing->n_values : 0;
	struct ber_view *norm = arena_calloc(scratch, n, sizeof(*norm));
	struct pending_value *all = arena_calloc(scratch, n + n_old, sizeof(*all));
	if (norm == NULL || all == NULL)
		return LUMEN_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int rc = entry_normalize_value(type, values[i], scratch, &norm[i]);
		if (rc != LUMEN_OK) {
			if (bad_index)
				*bad_index = i;
			return rc;
		}
		all[i] = (struct pending_value){ norm[i], i };
	}
	size_t total = n;
	for (size_t i = 0; i < n_old; i++)
		if (existing->values[i].normalized.ptr != NULL)
			all[total++] = (struct pending_value){ existing->values[i].normalized, SIZE_MAX };
	qsort(all, total, sizeof(*all), compare_pending);
	for (size_t i = 1; i < total; i++) {
		if (compare_pending(&(struct pending_value){ all[i - 1].normalized, 0 },
				    &(struct pending_value){ all[i].normalized, 0 }) == 0) {
			if (bad_index)
				*bad_index = all[i - 1].index != SIZE_MAX ? all[i - 1].index : all[i].index;
			return LUMEN_EEXIST;
		}
	}
	*normalized = norm;
	return LUMEN_OK;
}

static int add_values_scratch(struct entry *e, const struct attribute_description *ad,
			      const struct ber_view *values, size_t n, size_t *bad_index,
			      struct arena *scratch)
{
	if (ad == NULL || ad->type == NULL || n == 0)
		return LUMEN_EINVAL;
	if (n > ENTRY_MAX_VALUES)
		return LUMEN_ELIMIT;
	long found = entry_attribute_index(e, ad);
	const struct entry_attribute *existing = found >= 0 ? &e->attributes[found] : NULL;
	struct ber_view *normalized = NULL;
	int rc = normalize_new_values(ad->type, existing, values, n, scratch, &normalized, bad_index);
	if (rc != LUMEN_OK)
		return rc;
	size_t index;
	rc = attribute_for_update(e, ad, &index);
	if (rc != LUMEN_OK)
		return rc;
	struct entry_attribute *a = &e->attributes[index];
	rc = grow_values(e, a, n);
	for (size_t i = 0; rc == LUMEN_OK && i < n; i++)
		rc = store_value(e, values[i], normalized[i], &a->values[a->n_values + i]);
	if (rc != LUMEN_OK) {
		if (a->n_values == 0)
			remove_attribute(e, index);
		return rc;
	}
	a->n_values += n;
	a->encoded = (struct ber_view){ NULL, 0 };
	return LUMEN_OK;
}

/* An add, delete or replace of values, normalizing into scratch memory. */
typedef int (*values_update_fn)(struct entry *e, const struct attribute_description *ad,
				const struct ber_view *values, size_t n, size_t *bad_index,
				struct arena *scratch);

/* Runs update with a scratch arena of its own, freed after, and refreshes
 * the class bits when it changed objectClass; LUMEN_EINVAL without an
 * attribute type. */
static int with_scratch(values_update_fn update, struct entry *e,
			const struct attribute_description *ad, const struct ber_view *values,
			size_t n, size_t *bad_index)
{
	if (ad == NULL || ad->type == NULL)
		return LUMEN_EINVAL;
	struct arena scratch;
	arena_init(&scratch, 0);
	int rc = update(e, ad, values, n, bad_index, &scratch);
	arena_free(&scratch);
	if (rc == LUMEN_OK && is_object_class_type(ad->type))
		entry_refresh_classes(e);
	return rc;
}

int entry_add_values(struct entry *e, const struct attribute_description *ad,
		     const struct ber_view *values, size_t n, size_t *bad_index)
{
	return with_scratch(add_values_scratch, e, ad, values, n, bad_index);
}

int entry_add_text(struct entry *e, const char *description, const char *value)
{
	struct attribute_description ad;
	int rc = attribute_description_parse(e->schema, description, strlen(description), &ad);
	if (rc != LUMEN_OK)
		return rc;
	struct ber_view v = { (const uint8_t *)value, strlen(value) };
	return entry_add_values(e, &ad, &v, 1, NULL);
}

static int delete_values_scratch(struct entry *e, const struct attribute_description *ad,
				 const struct ber_view *values, size_t n, size_t *bad_index,
				 struct arena *scratch)
{
	long index = entry_attribute_index(e, ad);
	if (index < 0)
		return LUMEN_ENOTFOUND;
	struct entry_attribute *a = &e->attributes[index];
	if (n == 0) {
		remove_attribute(e, (size_t)index);
		return LUMEN_OK;
	}
	/* Find every value first so a missing one leaves the entry untouched. */
	bool *doomed = arena_calloc(scratch, a->n_values, sizeof(*doomed));
	if (doomed == NULL)
		return LUMEN_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct ber_view normalized;
		int rc = entry_normalize_value(ad->type, values[i], scratch, &normalized);
		long at = rc == LUMEN_OK ? entry_attribute_find_normalized(a, normalized) : -1;
		if (at < 0 || doomed[at]) {
			if (bad_index)
				*bad_index = i;
			return rc == LUMEN_ENOMEM ? rc : LUMEN_ENOTFOUND;
		}
		doomed[at] = true;
	}
	size_t kept = 0;
	for (size_t i = 0; i < a->n_values; i++)
		if (!doomed[i])
			a->values[kept++] = a->values[i];
	a->n_values = kept;
	a->encoded = (struct ber_view){ NULL, 0 };
	if (kept == 0)
		remove_attribute(e, (size_t)index);
	return LUMEN_OK;
}

int entry_delete_values(struct entry *e, const struct attribute_description *ad,
			const struct ber_view *values, size_t n, size_t *bad_index)
{
	return with_scratch(delete_values_scratch, e, ad, values, n, bad_index);
}

static int replace_values_scratch(struct entry *e, const struct attribute_description *ad,
				  const struct ber_view *values, size_t n, size_t *bad_index,
				  struct arena *scratch)
{
	struct ber_view *normalized = NULL;
	/* Validate the whole new set before the old one is dropped. */
	if (n > 0) {
		int rc = normalize_new_values(ad->type, NULL, values, n, scratch, &normalized,
					      bad_index);
		if (rc != LUMEN_OK)
			return rc;
	}
	long index = entry_attribute_index(e, ad);
	if (index >= 0) {
		e->attributes[index].n_values = 0;
		remove_attribute(e, (size_t)index);
	}
	if (n > 0)
		return add_values_scratch(e, ad, values, n, bad_index, scratch);
	return LUMEN_OK;
}

int entry_replace_values(struct entry *e, const struct attribute_description *ad,
			 const struct ber_view *values, size_t n, size_t *bad_index)
{
	return with_scratch(replace_values_scratch, e, ad, values, n, bad_index);
}

/* ------------------------------------------------------------- increment */

static bool is_integer_type(const struct attribute_type *type)
{
	return type->equality != NULL && type->equality->name != NULL &&
	       strcasecmp(type->equality->name, "integerMatch") == 0;
}

/* Strict decimal: optional '-', digits, no leading zeros beyond "0". */
static int parse_int64(struct ber_view text, int64_t *out)
{
	size_t i = 0;
	bool negative = false;
	if (text.len > 0 && (text.ptr[0] == '-' || text.ptr[0] == '+')) {
		negative = text.ptr[0] == '-';
		i = 1;
	}
	if (i == text.len)
		return LUMEN_EMALFORMED;
	uint64_t magnitude = 0;
	for (; i < text.len; i++) {
		uint8_t c = text.ptr[i];
		if (c < '0' || c > '9')
			return LUMEN_EMALFORMED;
		if (magnitude > (UINT64_MAX - 9) / 10)
			return LUMEN_ELIMIT;
		magnitude = magnitude * 10 + (uint64_t)(c - '0');
	}
	if (magnitude > (uint64_t)INT64_MAX + (negative ? 1u : 0u))
		return LUMEN_ELIMIT;
	*out = negative ? (int64_t)(0 - magnitude) : (int64_t)magnitude;
	return LUMEN_OK;
}

int entry_increment(struct entry *e, const struct attribute_description *ad,
		    struct ber_view delta)
{
	if (ad == NULL || ad->type == NULL)
		return LUMEN_EINVAL;
	if (!is_integer_type(ad->type))
		return LUMEN_EUNSUPPORTED;
	int64_t by;
	int rc = parse_int64(delta, &by);
	if (rc != LUMEN_OK)
		return rc;
	long index = entry_attribute_index(e, ad);
	if (index < 0)
		return LUMEN_ENOTFOUND;
	struct entry_attribute *a = &e->attributes[index];
	/* Compute every new value before changing any (all or nothing). */
	char (*text)[24] = malloc(a->n_values * sizeof(*text));
	if (text == NULL)
		return LUMEN_ENOMEM;
	for (size_t i = 0; i < a->n_values; i++) {
		int64_t v;
		rc = parse_int64(a->values[i].value, &v);
		if (rc == LUMEN_OK && __builtin_add_overflow(v, by, &v))
			rc = LUMEN_ELIMIT;
		if (rc != LUMEN_OK)
			goto done;
		snprintf(text[i], sizeof(text[i]), "%lld", (long long)v);
	}
	for (size_t i = 0; i < a->n_values; i++) {
		struct ber_view v = { (const uint8_t *)text[i], strlen(text[i]) };
		/* a canonical decimal is its own integerMatch normal form */
		rc = store_value(e, v, v, &a->values[i]);
		if (rc != LUMEN_OK)
			goto done;
	}
	a->encoded = (struct ber_view){ NULL, 0 };
done:
	free(text);
	return rc;
}
