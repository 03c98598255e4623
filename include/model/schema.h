/*
 * schema.h — the directory schema: attribute types, object classes, and the
 * built-in syntaxes and matching rules they refer to (model layer).
 *
 * A struct schema is built once at start-up (schema_create, schema_load_file
 * for each `include`d .schema file in the OpenLDAP format, schema_finalize)
 * and is immutable afterwards: any number of threads may read it without
 * locks. It owns every attribute_type and object_class it returns; pointers
 * stay valid until schema_free. Syntaxes and matching rules are static tables
 * compiled into Lumen (src/model/syntax.c and matching*.c implement them;
 * matching.h has the helpers filter evaluation uses) and live forever.
 *
 * Names and OIDs are resolved case-insensitively. Effective properties are
 * computed by schema_finalize: an attribute type's equality/ordering/substr
 * rules and syntax are inherited through SUP when not given; an object
 * class's must/may lists include its superclasses' (duplicates removed).
 *
 * Errors: loading reports "FILE:LINE: reason" into the caller's err buffer
 * and returns LUMEN_EMALFORMED (bad syntax), LUMEN_EEXIST (duplicate name or
 * OID), LUMEN_ENOTFOUND (dangling SUP/MUST/MAY/rule/syntax reference, found by
 * schema_finalize, which names the file and line of the referring definition).
 * Also: LUMEN_EMALFORMED from schema_finalize for a SUP cycle, a rule of the
 * wrong kind or a USAGE that differs from SUP's; LUMEN_EIO for an unreadable
 * file; LUMEN_ELIMIT for a list of more than 256 names; LUMEN_ENOMEM.
 * Thread-safety: build on one thread; after schema_finalize, read anywhere.
 *
 * Files (schema/): core.schema (RFC 4512 basics, RFC 4519, RFC 4523, RFC 2079)
 * loads first; cosine.schema, inetorgperson.schema, nis.schema follow in
 * that order; lumen.schema (every operational attribute the server keeps or
 * publishes, the subschema class) needs only core.schema and must always be
 * loaded by the daemon. A definition's `definition` string is canonical:
 * objectidentifier macros expanded, single spaces, fields in RFC 4512 order,
 * X- extensions kept; it is what the subschema subentry publishes.
 *
 * Caveats:
 *  - schema_load_file/schema_load_text after schema_finalize is LUMEN_EINVAL.
 *  - Until schema_finalize succeeds, sup/equality/syntax/must/may are unset.
 *    A failed finalize leaves the schema unusable: free it.
 *  - distinguishedNameMatch's normalizer is schema-free (matching.h); the
 *    canonical DN of an entry comes from dn_normalize() in dn.h.
 *  - No certificateExactMatch: certificate attributes have no EQUALITY.
 *  - An attribute description is "type;option;option"; options are kept as
 *    written (case-insensitive compare), see attribute_description_parse.
 */
#ifndef LUMEN_SCHEMA_H
#define LUMEN_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>

#include "arena.h"
#include "ber.h"

/* ------------------------------------------------ syntaxes, matching rules */

struct syntax {
	const char *oid;
	const char *description;
	bool binary;            /* not human-readable (RFC 4517 X-NOT-HUMAN-READABLE) */
	/* LUMEN_OK if the value is valid for the syntax, else LUMEN_EMALFORMED. */
	int (*validate)(const uint8_t *value, size_t len);
};

enum matching_usage { MATCHING_EQUALITY, MATCHING_ORDERING, MATCHING_SUBSTRINGS };

struct matching_rule {
	const char *oid;
	const char *name;
	const char *syntax_oid;     /* assertion syntax */
	enum matching_usage usage;
	/*
	 * Normalize a value (RFC 4518 preparation where it applies) into memory
	 * from the arena. Two values match under an equality rule iff their
	 * normalized forms are byte-equal; index keys are built from this form,
	 * so it must be deterministic. LUMEN_EMALFORMED if the value cannot be
	 * normalized by this rule (e.g. not an integer), LUMEN_ENOMEM.
	 */
	int (*normalize)(const uint8_t *value, size_t len, struct arena *arena,
			 struct ber_view *out);
	/* Order two normalized values: <0, 0, >0 (ordering rules; memcmp-like otherwise). */
	int (*compare)(struct ber_view a, struct ber_view b);
	/*
	 * Substring rules only (NULL otherwise): normalize one piece of a
	 * substring assertion (initial/any/final). Same errors as normalize.
	 * Pieces keep a single edge space where normalize would trim it.
	 */
	int (*normalize_piece)(const uint8_t *value, size_t len, struct arena *arena,
			       struct ber_view *out);
};

/* Built-in tables; NULL when unknown. Names and OIDs, case-insensitive. */
const struct syntax *syntax_find(const char *oid, size_t len);
const struct matching_rule *matching_rule_find(const char *name_or_oid, size_t len);
/* Iterate the built-ins (for the subschema subentry): index 0.. until NULL. */
const struct syntax *syntax_at(size_t i);
const struct matching_rule *matching_rule_at(size_t i);

/* ------------------------------------------------------- attribute types */

enum attribute_usage {
	ATTRIBUTE_USER_APPLICATIONS = 0,
	ATTRIBUTE_DIRECTORY_OPERATION,
	ATTRIBUTE_DISTRIBUTED_OPERATION,
	ATTRIBUTE_DSA_OPERATION,
};

struct attribute_type {
	const char *oid;
	const char *const *names;       /* names[0] is the primary name; may be 0 names */
	size_t n_names;
	const char *description;
	const struct attribute_type *sup;
	const struct matching_rule *equality;   /* effective (inherited); may be NULL */
	const struct matching_rule *ordering;
	const struct matching_rule *substr;
	const struct syntax *syntax;            /* effective */
	size_t syntax_length;                   /* {N} bound, 0 = none */
	bool single_value;
	bool collective;
	bool no_user_modification;
	bool obsolete;
	enum attribute_usage usage;
	unsigned index;                         /* dense 0..n-1, for per-type arrays */
	const char *definition;                 /* the RFC 4512 description, normalized spacing */
	bool is_object_class;                   /* objectClass (2.5.4.0) itself */
};

/* The type's primary name (names[0]) or its OID when it has no name. */
const char *attribute_type_name(const struct attribute_type *at);
/* True if at is sup or one of its descendants through SUP. */
bool attribute_type_is_subtype(const struct attribute_type *at,
			       const struct attribute_type *sup);
bool attribute_type_is_operational(const struct attribute_type *at);
/* Adds at to list[0 .. *n) unless it is there; false when that would
 * take more than cap entries (the list is left as it was). */
bool attribute_type_list_add(const struct attribute_type **list, size_t *n, size_t cap,
			     const struct attribute_type *at);

/* --------------------------------------------------------- object classes */

enum object_class_kind { OBJECT_CLASS_ABSTRACT, OBJECT_CLASS_STRUCTURAL,
			 OBJECT_CLASS_AUXILIARY };

struct object_class {
	const char *oid;
	const char *const *names;
	size_t n_names;
	const char *description;
	const struct object_class *const *sups;
	size_t n_sups;
	enum object_class_kind kind;
	const struct attribute_type *const *must;   /* effective, incl. superclasses */
	size_t n_must;
	const struct attribute_type *const *may;    /* effective, incl. superclasses */
	size_t n_may;
	bool obsolete;
	unsigned index;
	const char *definition;
};

const char *object_class_name(const struct object_class *oc);
/* True if oc is sup or inherits from it. */
bool object_class_is_subclass(const struct object_class *oc,
			      const struct object_class *sup);

/* ---------------------------------------------------------------- schema */

struct schema;

int schema_create(struct schema **out);
/* Frees the schema and everything loaded into it; NULL is allowed. */
void schema_free(struct schema *s);

/*
 * A number no other schema of this process has, set by schema_finalize
 * (0 before): what per-thread memos of lookups are keyed by, since a freed
 * schema's address can come back.
 */
uint64_t schema_serial(const struct schema *s);

/* Parse one .schema file (attributetype / objectclass / objectidentifier). */
int schema_load_file(struct schema *s, const char *path, char *err, size_t errlen);
/* Parse definitions from memory; `origin` names them in errors. */
int schema_load_text(struct schema *s, const char *origin, const char *text,
		     char *err, size_t errlen);
/* Resolve references, compute inherited properties, freeze. */
int schema_finalize(struct schema *s, char *err, size_t errlen);

const struct attribute_type *schema_attribute_type(const struct schema *s,
						   const char *name_or_oid, size_t len);
const struct object_class *schema_object_class(const struct schema *s,
					       const char *name_or_oid, size_t len);
size_t schema_attribute_type_count(const struct schema *s);
const struct attribute_type *schema_attribute_type_at(const struct schema *s, size_t i);
size_t schema_object_class_count(const struct schema *s);
const struct object_class *schema_object_class_at(const struct schema *s, size_t i);

/* ------------------------------------------------- attribute descriptions */

/* "cn;lang-de;binary": the type and the option list as written. */
struct attribute_description {
	const struct attribute_type *type;
	struct ber_view options;    /* text after the first ';', empty when none */
};

/*
 * Parse an attribute description (RFC 4512 §2.5). LUMEN_EMALFORMED for bad
 * characters, LUMEN_ENOTFOUND for an unknown type (ad->type NULL).
 */
int attribute_description_parse(const struct schema *s, const char *text, size_t len,
				 struct attribute_description *ad);
/*
 * attribute_description_parse for the description at `position` of a
 * sequence parsed again and again in the same order (the attributes of
 * stored entries): the calling thread remembers the last description at
 * each position, so a repeat costs a compare of its bytes.
 */
int attribute_description_parse_at(const struct schema *s, size_t position, const char *text,
				   size_t len, struct attribute_description *ad);
/*
 * True if `have` (an entry's description) is matched by `want` (a request's):
 * have's type is want's type or a subtype, and have carries every option of
 * want (options case-insensitive; an option ending in '-' is a range, so
 * "lang-en-" matches "lang-en" and "lang-en-us", RFC 4512 §2.5.2 / RFC 3866).
 * "binary" is a transfer option and never restricts the match.
 */
bool attribute_description_matches(const struct attribute_description *want,
				   const struct attribute_description *have);

#endif
