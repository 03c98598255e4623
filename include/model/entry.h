/*
 * entry.h — directory entries in memory, their stored binary form, and
 * schema checking of adds and modifies (model layer).
 *
 * Owns: a struct entry owns all of its memory (DN strings, attribute
 * descriptions, values, normalized values, arrays) in a short private list
 * of malloc'd chunks. A decoded entry lives in exactly one allocation, so an
 * entry cache frees it with one entry_free. Mutations append to the chunk
 * list; memory given up by deleted values is reclaimed only at entry_free
 * (copy-on-write modify works on an entry_dup, which is compact again).
 *
 * Normalization is eager: every value's normalized form (by its type's
 * effective equality rule) is computed when the value enters the entry
 * (entry_add_values, entry_decode, ...) and never again, so filter
 * evaluation and indexing compare bytes. A value whose equality rule cannot
 * normalize it keeps normalized = {NULL, 0}: it matches nothing (filters
 * treat it as Undefined). A type without an equality rule uses the value
 * bytes as their own normalized form (also pointed to, not copied). The
 * object classes named by objectClass values, expanded with all their
 * superclasses, are kept as a bit set (entry_is_instance_of) and the
 * structural class is computed whenever objectClass changes.
 *
 * Read access: the struct fields are public and read-only for callers;
 * change an entry only through the functions below (they keep the object
 * class set and the cached encodings consistent).
 *
 * Binary form (id2entry record), close to the wire:
 *     'L' '1'                         magic and format version
 *     OCTET STRING  dn                user form (RFC 4514)
 *     OCTET STRING  ndn               normalized (dn.h)
 *     SEQUENCE OF PartialAttribute    exactly as in a SearchResultEntry:
 *         SEQUENCE { type OCTET STRING, vals SET OF OCTET STRING }
 * so a SearchResultEntry is the DN plus a memcpy per selected attribute.
 * A decoded entry keeps the record bytes and each attribute's `encoded` view
 * points at its PartialAttribute; a mutation clears the view of the
 * attributes it touches (entry_attribute_write re-encodes those).
 *
 * Thread-safety: an entry is a plain value. Concurrent readers of one entry
 * are safe (nothing is computed lazily); a writer needs exclusive access.
 * The schema must outlive every entry built with it.
 *
 * Caveats:
 *  - Attribute descriptions are stored canonically: the type's primary name
 *    followed by the options as written ("CN;Lang-DE" is stored as
 *    "cn;Lang-DE"); lookups compare options case-insensitively.
 *  - entry_add_values and friends do not validate syntax or schema rules;
 *    entry_check_add / entry_check_modify do (after the changes are applied).
 *  - Binary values (e.g. ;binary, jpegPhoto) are opaque bytes everywhere.
 */
#ifndef LUMEN_ENTRY_H
#define LUMEN_ENTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "ber.h"
#include "ldap_message.h"
#include "schema.h"

/* Bounds that keep a corrupt or hostile record/request from costing much. */
#define ENTRY_MAX_ATTRIBUTES 4096
#define ENTRY_MAX_VALUES     (1u << 20)   /* per attribute */

struct entry_chunk; /* private: the entry's memory */

struct entry_value {
	struct ber_view value;       /* as given by the client */
	struct ber_view normalized;  /* equality-normalized; {NULL,0} if not normalizable */
};

struct entry_attribute {
	struct attribute_description desc;  /* desc.options points into entry memory */
	struct ber_view name;               /* canonical description text: "cn;lang-de" */
	struct entry_value *values;         /* n_values >= 1 while the attribute exists */
	size_t n_values;
	size_t cap_values;                  /* private */
	struct ber_view encoded;            /* PartialAttribute TLV; empty when stale */
};

/* One attribute of a partial entry's outline: what it takes to select it
 * and send it as stored, without its values. */
struct entry_outline_attribute {
	struct attribute_description desc;  /* desc.options points into entry memory */
	struct ber_view name;               /* the description as stored */
	struct ber_view encoded;            /* PartialAttribute TLV, values included */
};

struct entry {
	const struct schema *schema;
	struct ber_view dn;                  /* user form, NUL-terminated in memory */
	struct ber_view ndn;                 /* normalized, NUL-terminated in memory */
	struct entry_attribute *attributes;  /* in insertion (or stored) order */
	size_t n_attributes;
	size_t cap_attributes;               /* private */
	uint64_t *class_bits;                /* object class indexes incl. superclasses */
	size_t n_class_words;
	const struct object_class *structural; /* most derived structural class, or NULL */
	bool two_structural;                 /* objectClass names two unrelated structural classes */
	bool unknown_class;                  /* an objectClass value the schema does not know */
	/* Every attribute of the record, in stored order, when the entry was
	 * decoded in part with entry_selection.outline; NULL otherwise (and
	 * in copies). `attributes` then holds the selected ones alone. */
	const struct entry_outline_attribute *outline;
	size_t n_outline;
	struct ber_view record;              /* with an outline: the record it came from */
	struct entry_chunk *memory;          /* private */
};

/* ------------------------------------------------------- build and free */

/*
 * A new entry with no attributes. ndn may be {NULL,0}: it is then computed
 * with dn_normalize. LUMEN_ENOMEM; from dn_normalize: LUMEN_EMALFORMED,
 * LUMEN_ENOTFOUND, LUMEN_ESCHEMA, LUMEN_ELIMIT.
 */
int entry_create(const struct schema *s, struct ber_view dn, struct ber_view ndn,
		 struct entry **out);
/* Frees the entry and everything it owns; NULL is allowed. */
void entry_free(struct entry *e);
/* Deep copy in one allocation (encoded views are not carried). LUMEN_ENOMEM. */
int entry_dup(const struct entry *e, struct entry **out);
/* Rename (modrdn): ndn as for entry_create. Errors as entry_create. */
int entry_set_dn(struct entry *e, struct ber_view dn, struct ber_view ndn);

/* ---------------------------------------------------------------- lookup */

/* First attribute of exactly this type (any options), or NULL. */
const struct entry_attribute *entry_find_type(const struct entry *e,
					      const struct attribute_type *type);
/* The attribute with exactly this description (type and option set), or NULL. */
const struct entry_attribute *entry_find(const struct entry *e,
					 const struct attribute_description *ad);
/* Index of a value whose normalized form equals `normalized`, or -1. */
long entry_attribute_find_normalized(const struct entry_attribute *a,
				     struct ber_view normalized);
/*
 * Has an attribute matched by `ad` (its type or a subtype, carrying ad's
 * options: attribute_description_matches) a value equal to `value` under
 * the type's equality rule (Compare)? Uses `scratch` to normalize the assertion.
 * LUMEN_OK with *found set; LUMEN_ESCHEMA if the value cannot be normalized
 * (compare → Undefined); LUMEN_EUNSUPPORTED if the type has no equality
 * rule (inappropriateMatching); LUMEN_ENOMEM.
 */
int entry_has_value(const struct entry *e, const struct attribute_description *ad,
		    struct ber_view value, struct arena *scratch, bool *found);
/* True if an objectClass value names oc or a subclass of oc. */
bool entry_is_instance_of(const struct entry *e, const struct object_class *oc);

/* ------------------------------------------------------------- mutation */

/*
 * Add values to the attribute `ad` (created when absent). All or nothing:
 * LUMEN_EEXIST if a value equals (normalized) one present or another in
 * the list (*bad_index, if non-NULL, names it); LUMEN_ESCHEMA if a value
 * cannot be normalized by the equality rule (*bad_index set); LUMEN_ELIMIT
 * beyond ENTRY_MAX_*; LUMEN_EINVAL for n == 0 or an ad without type;
 * LUMEN_ENOMEM.
 */
int entry_add_values(struct entry *e, const struct attribute_description *ad,
		     const struct ber_view *values, size_t n, size_t *bad_index);
/* Convenience for tools and tests: parse `description`, add one C string. */
int entry_add_text(struct entry *e, const char *description, const char *value);
/*
 * Delete values (n > 0) or the whole attribute (n == 0). All or nothing:
 * LUMEN_ENOTFOUND if the attribute or one of the values is absent
 * (noSuchAttribute); LUMEN_ESCHEMA if a value cannot be normalized. An
 * attribute left with no value is removed.
 */
int entry_delete_values(struct entry *e, const struct attribute_description *ad,
			const struct ber_view *values, size_t n, size_t *bad_index);
/*
 * Replace all values (n == 0: delete the attribute if present). Errors as
 * add, and the entry is unchanged, except after LUMEN_ENOMEM (discard it).
 */
int entry_replace_values(struct entry *e, const struct attribute_description *ad,
			 const struct ber_view *values, size_t n, size_t *bad_index);
/*
 * RFC 4525 increment: add the integer `delta` (decimal text) to every value.
 * LUMEN_ENOTFOUND if the attribute is absent; LUMEN_EUNSUPPORTED if the type
 * is not an integer type (constraintViolation); LUMEN_EMALFORMED if delta or
 * a value is not a decimal integer, LUMEN_ELIMIT on int64 overflow;
 * LUMEN_ENOMEM.
 */
int entry_increment(struct entry *e, const struct attribute_description *ad,
		    struct ber_view delta);

/* --------------------------------------------------------- binary form */

/*
 * Bumped whenever a normalizer's output changes for some value (a fix to
 * a matching rule): records store normalized forms, and a database made
 * under another revision must normalize again on read (entry_decode_stored).
 */
#define ENTRY_NORMALIZATION_REVISION 1

/* Append the record to w. Returns ber_writer_error(w) afterwards. */
int entry_encode(const struct entry *e, struct ber_writer *w);
/*
 * Append one attribute as a PartialAttribute (memcpy of `encoded` when
 * present). Returns ber_writer_error(w) afterwards.
 */
int entry_attribute_write(const struct entry_attribute *a, struct ber_writer *w);
/*
 * Decode a record into a new entry (one allocation, which holds a copy of
 * the record). `scratch` holds normalization temporaries (NULL: a private
 * arena is used). LUMEN_EMALFORMED for anything that is not a well-formed
 * record (bad magic, lengths, tags, trailing bytes, empty value set, an
 * attribute description that does not parse), LUMEN_ELIMIT beyond
 * ENTRY_MAX_*, LUMEN_ENOMEM. Unknown attribute types (schema changed since
 * the record was written) are LUMEN_ENOTFOUND.
 */
int entry_decode(const struct schema *s, const void *bytes, size_t len,
		 struct arena *scratch, struct entry **out);
/*
 * entry_decode, but with trust_normalized the normalized forms a record
 * stores (entry_encode writes them) are taken as they are instead of
 * computed again. Only the caller can vouch that they were made under the
 * same rules as s's (each type's equality rule, and
 * ENTRY_NORMALIZATION_REVISION): back-mdb records them (stored_forms.h). A record without
 * stored forms is normalized either way. A stored form list that does not
 * match the values one for one is LUMEN_EMALFORMED.
 */
int entry_decode_stored(const struct schema *s, const void *bytes, size_t len,
			bool trust_normalized, struct arena *scratch, struct entry **out);

/* The attribute types a partial decode keeps: each one and its subtypes
 * (n_types 0: none, the entry is its DN alone). outline: also list every
 * attribute's description and encoded form (entry.outline), for a reader
 * that sends attributes it does not test (a search returning all). */
struct entry_selection {
	const struct attribute_type *const *types;
	size_t n_types;
	bool outline;
};
/*
 * entry_decode_stored keeping only the attributes `only` selects (NULL:
 * all of them). Every description must still parse, but the values of the
 * attributes left out are not read, so a bad value there goes unnoticed:
 * a partial entry serves a reader that looks at nothing else (a bind's
 * password check) or, with only->outline, one that sends the others as
 * stored (a search returning all), never a cache, an index or a write. Its object class
 * set is empty unless objectClass is selected. With no type selected the
 * attributes are not walked at all: only the record's outer framing and
 * its DNs are checked.
 */
int entry_decode_selected(const struct schema *s, const void *bytes, size_t len,
			  bool trust_normalized, const struct entry_selection *only,
			  struct arena *scratch, struct entry **out);

/*
 * The whole entry a partial one with an outline was decoded from, for a
 * reader handed a partial entry that turns out to need the rest (a new
 * entry the caller frees; normalized forms computed again, and the DN
 * the partial entry carries now). LUMEN_EINVAL without an outline; else
 * as entry_decode.
 */
int entry_decode_whole(const struct entry *partial, struct entry **out);

/* Walk a record without decoding it (attribute selection in search). */
struct entry_record {
	struct ber_view dn;
	struct ber_view ndn;
	bool has_normalized;            /* the record stores normalized forms */
	struct ber_reader attributes;   /* private cursor */
};
struct entry_record_attribute {
	struct ber_view description;    /* the type as stored ("cn;lang-de") */
	struct ber_view encoded;        /* whole PartialAttribute TLV */
	struct ber_view values;         /* contents of the SET OF OCTET STRING */
	/* contents of the normalized forms' element (private encoding);
	 * {NULL, 0} in a record without them */
	struct ber_view normalized;
};
/* LUMEN_OK or LUMEN_EMALFORMED (header, dn, ndn or list framing is bad). */
int entry_record_open(const void *bytes, size_t len, struct entry_record *rec);
/* 1 = *out filled, 0 = no more attributes, LUMEN_EMALFORMED. */
int entry_record_next(struct entry_record *rec, struct entry_record_attribute *out);

/* -------------------------------------------------------- schema checks */

/* Why an add or modify violates the schema; each maps to one LDAP code. */
enum schema_violation_kind {
	SCHEMA_VIOLATION_NONE = 0,
	SCHEMA_VIOLATION_NO_OBJECT_CLASS,         /* 65 */
	SCHEMA_VIOLATION_UNKNOWN_OBJECT_CLASS,    /* 65 */
	SCHEMA_VIOLATION_NO_STRUCTURAL_CLASS,     /* 65 */
	SCHEMA_VIOLATION_TWO_STRUCTURAL_CLASSES,  /* 65 */
	SCHEMA_VIOLATION_MISSING_MUST,            /* 65 */
	SCHEMA_VIOLATION_NOT_ALLOWED,             /* 65 */
	SCHEMA_VIOLATION_UNDEFINED_TYPE,          /* 17 */
	SCHEMA_VIOLATION_INVALID_SYNTAX,          /* 21 */
	SCHEMA_VIOLATION_RDN_VALUE_MISSING,       /* 64 */
	SCHEMA_VIOLATION_SINGLE_VALUE,            /* 19 */
	SCHEMA_VIOLATION_VALUE_EXISTS,            /* 20 */
	SCHEMA_VIOLATION_NO_SUCH_ATTRIBUTE,       /* 16 */
	SCHEMA_VIOLATION_STRUCTURAL_CHANGE,       /* 69 */
	SCHEMA_VIOLATION_NO_USER_MODIFICATION,    /* 19 */
	SCHEMA_VIOLATION_NOT_INTEGER,             /* 19 (increment) */
	SCHEMA_VIOLATION_INAPPROPRIATE_MATCHING,  /* 18 */
	SCHEMA_VIOLATION_NO_VALUES,               /* 2: an add without values */
	SCHEMA_VIOLATION_KIND_COUNT
};

#define SCHEMA_VIOLATION_MESSAGE_MAX 256

struct schema_violation {
	enum schema_violation_kind kind;
	int ldap_code;                                /* enum ldap_result_code */
	char message[SCHEMA_VIOLATION_MESSAGE_MAX];   /* diagnosticMessage text */
};

/* The LDAP result code for a kind (LDAP_OTHER for an unknown kind). */
int schema_violation_ldap_code(enum schema_violation_kind kind);

/*
 * Build a new entry from an AddRequest's attribute list. `from_client`
 * rejects NO-USER-MODIFICATION types. On LUMEN_ESCHEMA *v says why
 * (undefined type, invalid syntax, duplicate value, no user modification);
 * other errors as entry_create / entry_add_values. *out is NULL on failure.
 *
 * RDN values the list leaves out are added (RFC 4511 §4.7, as slapd and
 * slapadd do): each AVA of the first RDN whose value the entry lacks,
 * syntax-checked like the others — except a NO-USER-MODIFICATION type from
 * a client, or a SINGLE-VALUE type that already has a different value,
 * which are left for entry_check_add to report. A DN that does not parse
 * is not an error here either.
 *
 * Does not run entry_check_add: object classes, MUST/MAY and the RDN
 * itself are checked only when the caller runs it on the result.
 */
int entry_from_attributes(const struct schema *s, struct ber_view dn, struct ber_view ndn,
			  const struct ldap_attribute *attributes, size_t n,
			  bool from_client, struct entry **out, struct schema_violation *v);
/*
 * Apply one modification (add/delete/replace/increment) to e. Values are
 * syntax-checked. On LUMEN_ESCHEMA *v says why; e may then be partly
 * changed (callers work on an entry_dup and discard it). LUMEN_ENOMEM.
 */
int entry_apply_change(struct entry *e, const struct ldap_change *change,
		       bool from_client, struct schema_violation *v);
/*
 * Check a complete entry against the schema: object classes (present,
 * known, exactly one structural chain), MUST and MAY (extensibleObject
 * allows any user attribute), syntax of every value, single-valued types,
 * and that every RDN AVA is a value of the entry. `scratch` is used to
 * parse the DN. LUMEN_OK, LUMEN_ESCHEMA with *v filled, LUMEN_ENOMEM.
 */
int entry_check_add(const struct entry *e, struct arena *scratch,
		    struct schema_violation *v);
/*
 * entry_check_add without validating each value against its syntax, for
 * trusted input whose values were already validated on the way in
 * (entry_from_attributes does): lumenadd -q. Errors as entry_check_add.
 */
int entry_check_add_structure(const struct entry *e, struct arena *scratch,
			      struct schema_violation *v);
/*
 * entry_check_add on `after` plus: the structural class may not change
 * from `before` (objectClassModsProhibited). Errors as entry_check_add.
 */
int entry_check_modify(const struct entry *before, const struct entry *after,
		       struct arena *scratch, struct schema_violation *v);

#endif
