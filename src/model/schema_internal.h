/*
 * schema_internal.h — private to src/model/schema*.c: the schema's storage
 * and what the parser hands the finalizer (names of references, where each
 * definition came from). The public view is include/schema.h.
 */
#ifndef LUMEN_SCHEMA_INTERNAL_H
#define LUMEN_SCHEMA_INTERNAL_H

#include <stdarg.h>

#include "schema.h"

/* Where a definition was read, for "FILE:LINE: reason" errors. */
struct schema_origin {
	const char *file;
	unsigned line;
};

struct name_list {
	const char **names;
	size_t count;
};

/* An attribute type plus its unresolved references (NULL when not given). */
struct attribute_type_def {
	struct attribute_type type;     /* first: a public pointer is a def pointer */
	struct schema_origin origin;
	struct name_list name_list;     /* backs type.names */
	const char *sup_name;
	const char *equality_name;
	const char *ordering_name;
	const char *substr_name;
	const char *syntax_oid;
	int resolve_state;              /* 0 new, 1 in progress, 2 done (SUP cycles) */
};

struct object_class_def {
	struct object_class object_class;
	struct schema_origin origin;
	struct name_list name_list;     /* backs object_class.names */
	struct name_list sup_names;
	struct name_list must_names;
	struct name_list may_names;
	int resolve_state;
};

/* Case-insensitive name/OID -> object map (open addressing). */
struct name_table {
	struct name_slot { const char *key; size_t key_len; size_t hash; void *value; } *slots;
	size_t capacity;                /* power of two, or 0 */
	size_t count;
};

struct schema {
	struct arena arena;             /* every string and definition */
	struct attribute_type_def **types;
	size_t n_types, cap_types;
	struct object_class_def **classes;
	size_t n_classes, cap_classes;
	struct name_table type_names;
	struct name_table class_names;
	struct name_table oid_macros;   /* objectidentifier name -> OID string */
	bool finalized;
	uint64_t serial;                /* unique per finalized schema, from 1 */
};

/* schema.c */
void *name_table_get(const struct name_table *t, const char *key, size_t len);
/* LUMEN_EEXIST if key is present, LUMEN_ENOMEM. key must outlive the table. */
int name_table_put(struct name_table *t, const char *key, size_t len, void *value);
/* Register a parsed definition under its OID and names: LUMEN_EEXIST, LUMEN_ENOMEM. */
int schema_add_attribute_type(struct schema *s, struct attribute_type_def *def,
			      char *err, size_t errlen);
int schema_add_object_class(struct schema *s, struct object_class_def *def,
			    char *err, size_t errlen);
/* Write "FILE:LINE: reason" into err and return rc. */
int schema_error(char *err, size_t errlen, const struct schema_origin *origin, int rc,
		 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#endif
