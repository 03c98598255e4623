/*
 * schema.c — the schema registry: creation, name/OID tables, lookups,
 * accessors, and attribute descriptions (RFC 4512 §2.5). Parsing lives in
 * schema_parse.c, reference resolution in schema_finalize.c.
 * Contract: include/schema.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "array.h"
#include "lumen_error.h"
#include "schema_internal.h"

int schema_error(char *err, size_t errlen, const struct schema_origin *origin, int rc,
		 const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rc = lumen_vfail_at(err, errlen, origin->file, origin->line, NULL, rc, fmt, ap);
	va_end(ap);
	return rc;
}

/* ------------------------------------------------------------ name table */

static size_t hash_nocase(const char *key, size_t len)
{
	size_t h = 1469598103934665603ull;   /* FNV-1a over lower-cased bytes */
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)key[i];
		h ^= (c >= 'A' && c <= 'Z') ? c + 32u : c;
		h *= 1099511628211ull;
	}
	return h;
}

/* The slot holding key, or the free slot where it would go. Each slot
 * keeps its key's hash: a probe past other names costs a compare of two
 * words, not a case-insensitive string compare (decoding an entry looks
 * up every attribute name it holds). */
/* ASCII case-insensitive equality of two strings of length len (names are
 * ASCII: locale-aware comparison buys nothing here). */
static bool ascii_equal_nocase(const char *a, const char *b, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
		if (x == y)
			continue;
		if ((x | 0x20u) != (y | 0x20u) || (x | 0x20u) < 'a' || (x | 0x20u) > 'z')
			return false;
	}
	return true;
}

static struct name_slot *name_table_find_hashed(const struct name_table *t, const char *key,
						size_t len, size_t hash)
{
	if (t->capacity == 0)
		return NULL;
	size_t mask = t->capacity - 1;
	for (size_t i = hash & mask;; i = (i + 1) & mask) {
		struct name_slot *slot = &t->slots[i];
		if (slot->key == NULL ||
		    (slot->hash == hash && slot->key_len == len &&
		     ascii_equal_nocase(slot->key, key, len)))
			return slot;
	}
}

static struct name_slot *name_table_find(const struct name_table *t, const char *key,
					 size_t len)
{
	return name_table_find_hashed(t, key, len, hash_nocase(key, len));
}

void *name_table_get(const struct name_table *t, const char *key, size_t len)
{
	struct name_slot *slot = name_table_find(t, key, len);
	return slot != NULL && slot->key != NULL ? slot->value : NULL;
}

static int name_table_grow(struct name_table *t)
{
	size_t capacity = t->capacity ? t->capacity * 2 : 64;
	struct name_table grown = { calloc(capacity, sizeof(struct name_slot)), capacity, 0 };

	if (grown.slots == NULL)
		return LUMEN_ENOMEM;
	for (size_t i = 0; i < t->capacity; i++) {
		struct name_slot *old = &t->slots[i];
		if (old->key != NULL) {
			*name_table_find_hashed(&grown, old->key, old->key_len, old->hash) = *old;
			grown.count++;
		}
	}
	free(t->slots);
	*t = grown;
	return LUMEN_OK;
}

int name_table_put(struct name_table *t, const char *key, size_t len, void *value)
{
	/* Keep the load at most 1/2: probing stays short (every attribute name
	 * of every entry read is looked up here) and always terminates. */
	if ((t->count + 1) * 2 > t->capacity) {
		int rc = name_table_grow(t);
		if (rc != LUMEN_OK)
			return rc;
	}
	size_t hash = hash_nocase(key, len);
	struct name_slot *slot = name_table_find_hashed(t, key, len, hash);
	if (slot->key != NULL)
		return LUMEN_EEXIST;
	slot->key = key;
	slot->key_len = len;
	slot->hash = hash;
	slot->value = value;
	t->count++;
	return LUMEN_OK;
}

/* ---------------------------------------------------------- create/free */

int schema_create(struct schema **out)
{
	struct schema *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return LUMEN_ENOMEM;
	arena_init(&s->arena, 0);
	*out = s;
	return LUMEN_OK;
}

void schema_free(struct schema *s)
{
	if (s == NULL)
		return;
	free(s->types);
	free(s->classes);
	free(s->type_names.slots);
	free(s->class_names.slots);
	free(s->oid_macros.slots);
	arena_free(&s->arena);
	free(s);
}

/* Register oid and every name; on a clash name the clashing key. */
static int register_keys(struct name_table *table, const char *oid,
			 const char *const *names, size_t n_names, void *value,
			 const struct schema_origin *origin, const char *what,
			 char *err, size_t errlen)
{
	int rc = name_table_put(table, oid, strlen(oid), value);
	if (rc == LUMEN_EEXIST)
		return schema_error(err, errlen, origin, rc, "duplicate %s OID %s", what, oid);
	for (size_t i = 0; rc == LUMEN_OK && i < n_names; i++) {
		rc = name_table_put(table, names[i], strlen(names[i]), value);
		if (rc == LUMEN_EEXIST)
			return schema_error(err, errlen, origin, rc, "duplicate %s name '%s'",
					    what, names[i]);
	}
	if (rc != LUMEN_OK)
		return schema_error(err, errlen, origin, rc, "out of memory");
	return LUMEN_OK;
}

int schema_add_attribute_type(struct schema *s, struct attribute_type_def *def,
			      char *err, size_t errlen)
{
	struct attribute_type_def **types = array_reserve(s->types, &s->cap_types, s->n_types + 1,
							  sizeof(*types), 64);
	if (types == NULL)
		return schema_error(err, errlen, &def->origin, LUMEN_ENOMEM, "out of memory");
	s->types = types;
	int rc = register_keys(&s->type_names, def->type.oid, def->type.names, def->type.n_names,
			   def, &def->origin, "attribute type", err, errlen);
	if (rc != LUMEN_OK)
		return rc;
	def->type.index = (unsigned)s->n_types;
	def->type.is_object_class = strcmp(def->type.oid, "2.5.4.0") == 0;
	s->types[s->n_types++] = def;
	return LUMEN_OK;
}

int schema_add_object_class(struct schema *s, struct object_class_def *def,
			    char *err, size_t errlen)
{
	struct object_class_def **classes = array_reserve(s->classes, &s->cap_classes,
							  s->n_classes + 1, sizeof(*classes), 64);
	if (classes == NULL)
		return schema_error(err, errlen, &def->origin, LUMEN_ENOMEM, "out of memory");
	s->classes = classes;
	int rc = register_keys(&s->class_names, def->object_class.oid, def->object_class.names,
			   def->object_class.n_names, def, &def->origin, "object class",
			   err, errlen);
	if (rc != LUMEN_OK)
		return rc;
	def->object_class.index = (unsigned)s->n_classes;
	s->classes[s->n_classes++] = def;
	return LUMEN_OK;
}

/* ------------------------------------------------------------ name memo */

/*
 * A thread's memo of the names it looked up last, by their exact bytes:
 * decoding an entry parses every attribute description and objectClass
 * value it holds, and a directory's entries spell the same few dozen names
 * again and again. A hit costs a compare of the bytes instead of
 * validation, case-folded hashing and a probe of the name table. Only
 * successes against a finalized (immutable) schema are kept, under its
 * serial (never its address, which a later schema may reuse); a slot
 * another name maps to is simply overwritten.
 */
#define NAME_MEMO_SLOTS 256u
#define NAME_MEMO_BYTES 45u

enum name_memo_kind { MEMO_DESCRIPTION, MEMO_CLASS };

struct name_memo {
	uint64_t serial;
	const void *value;      /* attribute_type or object_class */
	uint8_t kind, len;
	uint8_t type_len;       /* a description's bytes before its options */
	char text[NAME_MEMO_BYTES];
};

static _Thread_local struct name_memo name_memos[NAME_MEMO_SLOTS];

/* Two candidate slots per name (an entry's thirty-odd names would collide
 * in one-choice hashing and evict each other on every entry). */
static inline void memo_slots(enum name_memo_kind kind, const char *text, size_t len,
			      struct name_memo *slot[2])
{
	const unsigned char *t = (const unsigned char *)text;
	uint32_t h = ((uint32_t)len * 2u + (uint32_t)kind) * 0x9e3779b1u;
	h = (h ^ t[0]) * 0x85ebca6bu;
	h = (h ^ t[len / 2]) * 0xc2b2ae35u;
	h = (h ^ t[len - 1]) * 0x27d4eb2fu;
	h ^= h >> 15;
	slot[0] = &name_memos[h & (NAME_MEMO_SLOTS - 1)];
	slot[1] = &name_memos[(h >> 16) & (NAME_MEMO_SLOTS - 1)];
}

/* Names are a dozen bytes: word compares beat a call to memcmp, and the
 * last word overlapping the one before takes the tail in one compare. */
static inline bool bytes_equal(const char *a, const char *b, size_t n)
{
	if (n >= 8) {
		uint64_t x, y;
		for (size_t i = 0; i + 8 < n; i += 8) {
			memcpy(&x, a + i, 8);
			memcpy(&y, b + i, 8);
			if (x != y)
				return false;
		}
		memcpy(&x, a + n - 8, 8);
		memcpy(&y, b + n - 8, 8);
		return x == y;
	}
	if (n >= 4) {
		uint32_t x[2], y[2];
		memcpy(&x[0], a, 4);
		memcpy(&y[0], b, 4);
		memcpy(&x[1], a + n - 4, 4);
		memcpy(&y[1], b + n - 4, 4);
		return x[0] == y[0] && x[1] == y[1];
	}
	for (; n > 0; n--)
		if (*a++ != *b++)
			return false;
	return true;
}

static inline bool memo_holds(const struct name_memo *m, uint64_t serial,
			      enum name_memo_kind kind, const char *text, size_t len)
{
	return m->serial == serial && m->kind == kind && m->len == len &&
	       bytes_equal(m->text, text, len);
}

static const struct name_memo *memo_find(const struct schema *s, enum name_memo_kind kind,
					 const char *text, size_t len)
{
	if (s->serial == 0 || len == 0 || len > NAME_MEMO_BYTES)
		return NULL;
	struct name_memo *slot[2];
	memo_slots(kind, text, len, slot);
	if (memo_holds(slot[0], s->serial, kind, text, len))
		return slot[0];
	if (memo_holds(slot[1], s->serial, kind, text, len))
		return slot[1];
	return NULL;
}

/* Into a slot of another schema first, else the second choice when the
 * first holds a name of this schema (two names sharing both choices
 * alternate, which costs only the slow path). */
static void memo_keep(const struct schema *s, enum name_memo_kind kind, const char *text,
		      size_t len, size_t type_len, const void *value)
{
	if (s->serial == 0 || len == 0 || len > NAME_MEMO_BYTES)
		return;
	struct name_memo *slot[2];
	memo_slots(kind, text, len, slot);
	struct name_memo *m = slot[0]->serial == s->serial ? slot[1] : slot[0];
	m->serial = s->serial;
	m->value = value;
	m->kind = (uint8_t)kind;
	m->len = (uint8_t)len;
	m->type_len = (uint8_t)type_len;
	memcpy(m->text, text, len);
}

/* ------------------------------------------------------------- lookups */

const struct attribute_type *schema_attribute_type(const struct schema *s,
						   const char *name_or_oid, size_t len)
{
	const struct name_memo *m = memo_find(s, MEMO_DESCRIPTION, name_or_oid, len);
	if (m != NULL && m->type_len == len)   /* a bare type, no options */
		return m->value;
	struct attribute_type_def *def = name_table_get(&s->type_names, name_or_oid, len);
	if (def == NULL)
		return NULL;
	memo_keep(s, MEMO_DESCRIPTION, name_or_oid, len, len, &def->type);
	return &def->type;
}

const struct object_class *schema_object_class(const struct schema *s,
					       const char *name_or_oid, size_t len)
{
	const struct name_memo *m = memo_find(s, MEMO_CLASS, name_or_oid, len);
	if (m != NULL)
		return m->value;
	struct object_class_def *def = name_table_get(&s->class_names, name_or_oid, len);
	if (def == NULL)
		return NULL;
	memo_keep(s, MEMO_CLASS, name_or_oid, len, len, &def->object_class);
	return &def->object_class;
}

uint64_t schema_serial(const struct schema *s)
{
	return s->serial;
}

size_t schema_attribute_type_count(const struct schema *s)
{
	return s->n_types;
}

const struct attribute_type *schema_attribute_type_at(const struct schema *s, size_t i)
{
	return i < s->n_types ? &s->types[i]->type : NULL;
}

size_t schema_object_class_count(const struct schema *s)
{
	return s->n_classes;
}

const struct object_class *schema_object_class_at(const struct schema *s, size_t i)
{
	return i < s->n_classes ? &s->classes[i]->object_class : NULL;
}

const char *attribute_type_name(const struct attribute_type *at)
{
	return at->n_names > 0 ? at->names[0] : at->oid;
}

bool attribute_type_is_subtype(const struct attribute_type *at,
			       const struct attribute_type *sup)
{
	for (; at != NULL; at = at->sup)
		if (at == sup)
			return true;
	return false;
}

bool attribute_type_is_operational(const struct attribute_type *at)
{
	return at->usage != ATTRIBUTE_USER_APPLICATIONS;
}

bool attribute_type_list_add(const struct attribute_type **list, size_t *n, size_t cap,
			     const struct attribute_type *at)
{
	for (size_t i = 0; i < *n; i++)
		if (list[i] == at)
			return true;
	if (*n == cap)
		return false;
	list[(*n)++] = at;
	return true;
}

const char *object_class_name(const struct object_class *oc)
{
	return oc->n_names > 0 ? oc->names[0] : oc->oid;
}

bool object_class_is_subclass(const struct object_class *oc, const struct object_class *sup)
{
	if (oc == sup)
		return true;
	for (size_t i = 0; i < oc->n_sups; i++)
		if (object_class_is_subclass(oc->sups[i], sup))
			return true;
	return false;
}

/* -------------------------------------------------- attribute descriptions */

static bool is_key_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-';
}

/* A remembered description: its type, and its options in `text`. */
static void describe_from(const struct attribute_type *type, size_t type_len, const char *text,
			  size_t len, struct attribute_description *ad)
{
	ad->type = type;
	ad->options = type_len < len ? (struct ber_view){ (const uint8_t *)text + type_len + 1,
							  len - type_len - 1 }
				     : (struct ber_view){ NULL, 0 };
}

int attribute_description_parse(const struct schema *s, const char *text, size_t len,
				 struct attribute_description *ad)
{
	size_t type_len = 0;

	const struct name_memo *m = memo_find(s, MEMO_DESCRIPTION, text, len);
	ad->type = NULL;
	ad->options.ptr = NULL;
	ad->options.len = 0;
	if (m != NULL) {
		describe_from(m->value, m->type_len, text, len, ad);
		return LUMEN_OK;
	}
	while (type_len < len && text[type_len] != ';')
		type_len++;
	if (type_len == 0)
		return LUMEN_EMALFORMED;
	/* descr (keychar run) or numericoid (digits and dots). */
	for (size_t i = 0; i < type_len; i++)
		if (!is_key_char(text[i]) && text[i] != '.')
			return LUMEN_EMALFORMED;
	/* Options: ';'-separated non-empty keychar runs. */
	for (size_t i = type_len; i < len; i++) {
		if (text[i] == ';') {
			if (i + 1 == len || text[i + 1] == ';')
				return LUMEN_EMALFORMED;
		} else if (!is_key_char(text[i])) {
			return LUMEN_EMALFORMED;
		}
	}
	if (type_len < len) {
		ad->options.ptr = (const uint8_t *)text + type_len + 1;
		ad->options.len = len - type_len - 1;
	}
	ad->type = schema_attribute_type(s, text, type_len);
	if (ad->type == NULL)
		return LUMEN_ENOTFOUND;
	if (type_len < len)   /* the bare type was kept by schema_attribute_type */
		memo_keep(s, MEMO_DESCRIPTION, text, len, type_len, ad->type);
	return LUMEN_OK;
}

/*
 * Descriptions by position: a thread's memo of the last description parsed
 * at each position of a sequence parsed again and again in the same order.
 * A directory's entries mostly list the same attributes in the same order,
 * so the bytes at position i of a record are usually those seen there last,
 * and comparing them skips the name memo's hashing and probing (a fifth of
 * decoding an entry). Keyed by the schema's serial like the name memo.
 */
#define POSITION_MEMO_SLOTS 64u
#define POSITION_MEMO_BYTES 38u

struct position_memo {
	uint64_t serial;
	const struct attribute_type *type;
	uint8_t len, type_len;
	char text[POSITION_MEMO_BYTES];
};

static _Thread_local struct position_memo position_memos[POSITION_MEMO_SLOTS];

int attribute_description_parse_at(const struct schema *s, size_t position, const char *text,
				   size_t len, struct attribute_description *ad)
{
	if (position >= POSITION_MEMO_SLOTS || s->serial == 0 || len == 0 ||
	    len > POSITION_MEMO_BYTES)
		return attribute_description_parse(s, text, len, ad);
	struct position_memo *m = &position_memos[position];
	if (m->serial == s->serial && m->len == len && bytes_equal(m->text, text, len)) {
		describe_from(m->type, m->type_len, text, len, ad);
		return LUMEN_OK;
	}
	int rc = attribute_description_parse(s, text, len, ad);
	if (rc != LUMEN_OK)
		return rc;
	m->serial = s->serial;
	m->type = ad->type;
	m->len = (uint8_t)len;
	m->type_len = (uint8_t)(ad->options.ptr == NULL ? len : len - ad->options.len - 1);
	memcpy(m->text, text, len);
	return LUMEN_OK;
}

/* Next ';'-separated option of *rest, consumed; false at the end. */
static bool next_option(struct ber_view *rest, struct ber_view *option)
{
	if (rest->len == 0)
		return false;
	size_t n = 0;
	while (n < rest->len && rest->ptr[n] != ';')
		n++;
	option->ptr = rest->ptr;
	option->len = n;
	rest->ptr += n < rest->len ? n + 1 : n;
	rest->len -= n < rest->len ? n + 1 : n;
	return true;
}

static bool views_equal_nocase(struct ber_view a, const uint8_t *b, size_t b_len)
{
	return a.len == b_len && strncasecmp((const char *)a.ptr, (const char *)b, b_len) == 0;
}

/*
 * A wanted option is satisfied by an equal option, or, when it is a range
 * ending in '-' (RFC 4512 §2.5.2, RFC 3866 "lang-en-"), by one it prefixes
 * or by the range without its final '-'.
 */
static bool option_satisfied(struct ber_view want, struct ber_view have_options)
{
	struct ber_view rest = have_options, have;
	bool range = want.len > 1 && want.ptr[want.len - 1] == '-';

	/* binary is a transfer option, not a subtype: it never restricts. */
	if (views_equal_nocase(want, (const uint8_t *)"binary", 6))
		return true;
	while (next_option(&rest, &have)) {
		if (views_equal_nocase(want, have.ptr, have.len))
			return true;
		if (range && have.len >= want.len - 1 &&
		    strncasecmp((const char *)have.ptr, (const char *)want.ptr, want.len - 1) == 0 &&
		    (have.len == want.len - 1 || have.ptr[want.len - 1] == '-'))
			return true;
	}
	return false;
}

bool attribute_description_matches(const struct attribute_description *want,
				   const struct attribute_description *have)
{
	struct ber_view rest = want->options, option;

	if (want->type == NULL || have->type == NULL ||
	    !attribute_type_is_subtype(have->type, want->type))
		return false;
	while (next_option(&rest, &option))
		if (!option_satisfied(option, have->options))
			return false;
	return true;
}
