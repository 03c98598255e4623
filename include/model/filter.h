/*
 * filter.h — search filters: compiling a decoded Filter (ldap_message.h) into
 * an evaluable tree, evaluating it against entries (RFC 4511 §4.5.1.7), and
 * the RFC 4515 string form's model spelling (model layer).
 *
 * One compile path: BER filters arrive decoded as struct ldap_filter;
 * textual filters (tools, config, tests) are parsed by filter_text_parse
 * (ldap_filter_text.h) into the same struct ldap_filter, then
 * filter_compile resolves attribute descriptions and matching rules and
 * normalizes assertion values once.
 *
 * Memory: filter_compile and filter_text_parse take everything from the
 * caller's arena; nothing is freed individually. Evaluation allocates
 * nothing, except for the rare items whose matching rule normalizes
 * differently from the attribute's equality rule (an ordering or
 * substrings rule with its own normalizer, an extensible match with
 * another rule, dnAttributes, approx), which normalize the entry's values
 * into the evaluation's scratch arena (filter_evaluation.scratch, by
 * default the filter's own). A caller that evaluates many entries passes a
 * scratch arena it resets per entry, so a long search does not grow; when
 * the scratch runs out, filter_test fails (LUMEN_ENOMEM) instead of
 * quietly calling the entry a non-match. Items on virtual attributes
 * (filter_virtual, below) take their values from the provider.
 *
 * Thread-safety: a compiled filter belongs to one operation (one thread);
 * entries and the schema are only read.
 *
 * Three-valued logic (RFC 4511 §4.5.1.7): an item is Undefined when its
 * attribute type is unknown, when it needs a matching rule the type lacks
 * (e.g. >= without an ordering rule), or when the assertion value cannot be
 * normalized by the rule. AND is FALSE if any child is FALSE, else Undefined
 * if any is Undefined, else TRUE (the empty AND is TRUE); OR is TRUE if any
 * child is TRUE, else Undefined if any is Undefined, else FALSE (the empty
 * OR is FALSE); NOT swaps TRUE and FALSE and keeps Undefined.
 *
 * Matching rules of the items:
 *  - equality, >=, <= and substrings on a type also match its subtypes
 *    ((name=x) tests cn, sn, ...) and honour options ((cn;lang-de=x) only
 *    tests values whose description carries lang-de);
 *  - (objectClass=C) is TRUE when the entry belongs to C or a subclass of C
 *    (entry_is_instance_of), so (objectClass=person) matches inetOrgPerson;
 *  - present is TRUE if any attribute of the type or a subtype exists;
 *    (objectClass=*) is TRUE for every entry;
 *  - approx (~=): TRUE if matching_approx_matches (matching.h: slapd's
 *    phonetic codes, every word of the assertion found among a value's
 *    words in order); the backend's approx index keys each word's code.
 *    For types whose equality
 *    rule is not a case*Match string rule (integers, DNs, ...) approx is
 *    equality. Keys of entry values are computed into the arena.
 *  - extensible: the rule named (or the type's equality rule) applied to the
 *    type's values, or, without a type, to every attribute whose syntax is
 *    the rule's assertion syntax; an ordering rule asserts "value < assertion"
 *    (X.520), a substrings rule is Undefined (not supported); dnAttributes
 *    also tests the AVAs of the entry's DN.
 *
 * Caveats:
 *  - A compiled item with `undefined` set still carries what was resolved
 *    (e.g. the type), so the backend can walk it; it never matches.
 */
#ifndef LUMEN_FILTER_H
#define LUMEN_FILTER_H

#include <stdbool.h>
#include <stddef.h>

#include "arena.h"
#include "ber.h"
#include "entry.h"
#include "ldap_filter_text.h"
#include "ldap_message.h"
#include "schema.h"

enum filter_result { FILTER_FALSE = 0, FILTER_TRUE = 1, FILTER_UNDEFINED = 2 };

/* Defaults: the same bounds as ldap_decode_limits_default. */
#define FILTER_DEFAULT_MAX_DEPTH 32
#define FILTER_DEFAULT_MAX_NODES 1024

struct filter_limits {
	unsigned max_depth;   /* nesting of AND/OR/NOT (a lone item is depth 0) */
	size_t max_nodes;     /* items and operators together */
};

/* One node of a compiled filter. Read-only for callers (walk it freely). */
struct filter_node {
	enum ldap_filter_type type;     /* the LDAP filter choice */
	struct filter_node *next;       /* sibling under AND/OR */
	struct filter_node *children;   /* AND/OR: first child; NOT: the child */
	bool undefined;                 /* the item always evaluates Undefined */

	/* Items (all but AND/OR/NOT); desc.type may be NULL for an extensible
	 * match without a type, or when the type is unknown (undefined set). */
	struct attribute_description desc;
	const struct matching_rule *rule;   /* the rule the item applies */
	/* true if the rule's normalizer is the type's equality normalizer, so
	 * the entry's stored normalized values can be compared directly */
	bool uses_stored_normalized;
	struct ber_view value;              /* normalized assertion value */
	/* APPROX: value is the assertion's matching_approx_key (word codes) */
	bool approx_words;

	/* SUBSTRINGS: normalized pieces (the rule's normalizer) */
	bool has_initial, has_final;
	struct ber_view initial, final;
	struct ber_view *any;
	size_t n_any;

	/* EXTENSIBLE */
	bool dn_attributes;
	/* EQUALITY on objectClass: the class asserted (NULL if unknown) */
	const struct object_class *object_class;
};

struct filter {
	struct filter_node *root;
	const struct schema *schema;
	struct arena *arena;        /* see Memory above */
	size_t n_nodes;
};

/*
 * Compile a decoded filter. limits may be NULL (defaults). LUMEN_ELIMIT if
 * the tree is deeper or larger than the limits, LUMEN_EMALFORMED for an
 * extensible match with neither type nor rule (RFC 4511 requires one) or a
 * substrings item with no piece, LUMEN_ENOMEM. Unknown types, unknown rules
 * and unnormalizable values are not errors: they make the item Undefined.
 */
int filter_compile(const struct schema *s, const struct ldap_filter *in,
		   const struct filter_limits *limits, struct arena *arena,
		   struct filter *out);

/*
 * Who may test what during an evaluation (access control; the server's
 * ACL engine implements it). begin(ctx, e) is called once per evaluation,
 * before anything of e is tested: false means e may not be tested at all
 * (the filter is Undefined for it). may_test(ctx, type) is asked for the
 * type of every attribute actually tested: a stored attribute's own type
 * (so (name=x) asks for cn and sn separately, never for name), a computed
 * type, objectClass for class items, a DN component's type for
 * dnAttributes. An attribute that may not be tested contributes Undefined,
 * never TRUE or FALSE, so the result reveals nothing about its values,
 * only what the attributes that may be tested say.
 */
struct filter_access {
	bool (*begin)(void *ctx, const struct entry *e);   /* NULL: every entry */
	bool (*may_test)(void *ctx, const struct attribute_type *type);
	void *ctx;
};

/* How to evaluate; every member may be NULL. */
struct filter_evaluation {
	const struct filter_virtual *virtual;  /* computed attributes (below) */
	const struct filter_access *access;    /* NULL: everything may be tested */
	/* Where entry values are normalized for the rules that need it; the
	 * caller resets it between entries. NULL: the filter's arena. */
	struct arena *scratch;
};

/*
 * Evaluate f against e: *out is TRUE, FALSE or UNDEFINED. Returns
 * LUMEN_OK, LUMEN_ENOMEM when the scratch arena ran out (then *out is
 * meaningless: the caller must fail the operation, not treat the entry as
 * a non-match), LUMEN_EINVAL for a NULL filter or entry.
 */
int filter_test(const struct filter *f, const struct entry *e,
		const struct filter_evaluation *how, enum filter_result *out);

/*
 * RFC 3876 (matched values): does value i of attribute a satisfy item, a
 * node of f that is not AND, OR or NOT? An item that does not name a's
 * type (its type or a supertype, with its options; an extensible match
 * without a type: a's syntax) keeps nothing; (objectClass=C) keeps the
 * values naming C or a subclass of it. Values are normalized into scratch
 * (NULL: f's arena) when the rule needs it. LUMEN_OK with *keep set, or
 * LUMEN_ENOMEM (the scratch ran out).
 */
int filter_item_keeps_value(const struct filter *f, const struct filter_node *item,
			    const struct entry_attribute *a, size_t i, struct arena *scratch,
			    bool *keep);

/*
 * The attribute types whose values f can test, each once, into
 * types[0 .. *n) (at most cap): every item's type, objectClass for class
 * items. An item on a type also tests its subtypes, as an
 * entry_selection of the same types keeps them, so an entry decoded with
 * these types alone (and its DN, which dnAttributes reads) evaluates as
 * the whole entry does. An item on an unknown type names nothing (it
 * never matches). False when that is not so: an extensible match without
 * a type (it may test any attribute), or more than cap types.
 */
bool filter_tested_types(const struct filter *f, const struct attribute_type **types,
			 size_t cap, size_t *n);

/* filter_test without access control, computed attributes or scratch;
 * a failure reads as FILTER_UNDEFINED (tools and tests only). */
enum filter_result filter_evaluate(const struct filter *f, const struct entry *e);

/* ------------------------------------------------- virtual attributes */

/*
 * Virtual attributes are values an entry does not store but that filters
 * treat as its own: entryDN, hasSubordinates, ... which the backend
 * computes from its tree. A provider names the types it computes; an item
 * on one of them (exactly that type, no options) tests the provider's
 * values instead of the stored ones, so (hasSubordinates=TRUE) and
 * (entryDN=*) work. A type the provider names is never looked up among the
 * stored attributes.
 *
 * values(): the values of `type` for entry e into out[0 .. *n), at most
 * `cap`, each with its raw form and its form normalized by the type's
 * equality rule ({NULL,0} if none). Memory from `arena` (the provider's
 * per-entry scratch, handed back as given; NULL: the evaluation's scratch). *n = 0: the entry has none.
 * A non-OK return makes the item Undefined.
 *
 * Cost: nothing unless an item names a provided type (filter_names_virtual
 * lets a caller skip the provider for the common filter altogether).
 */
#define FILTER_VIRTUAL_MAX_VALUES 4

struct filter_virtual {
	const struct attribute_type *const *types;   /* the provided types */
	size_t n_types;
	int (*values)(void *ctx, const struct attribute_type *type, const struct entry *e,
		      struct arena *arena, struct entry_value *out, size_t cap, size_t *n);
	void *ctx;
	struct arena *arena;       /* for values(); NULL = the evaluation's scratch */
};

/* True if some item of f (even an undefined one) names a type v provides. */
bool filter_names_virtual(const struct filter *f, const struct filter_virtual *v);
/* True if v provides type (NULL v or type: false). */
bool filter_virtual_provides(const struct filter_virtual *v, const struct attribute_type *type);
/* ------------------------------------------------ RFC 4515 string form */

/*
 * The model layer's spelling of ldap_filter_text_parse/print (proto,
 * ldap_filter_text.h, where the parser lives because it needs no schema),
 * taking the same filter_limits as filter_compile (NULL: the defaults).
 * Errors and memory as there: the tree keeps views into text.
 */
static inline int filter_text_parse(const char *text, size_t len, struct arena *arena,
				    const struct filter_limits *limits,
				    struct ldap_filter **out, size_t *error_offset)
{
	struct ldap_decode_limits bounds;
	ldap_decode_limits_default(&bounds);
	if (limits != NULL) {
		bounds.max_filter_depth = limits->max_depth;
		bounds.max_filter_nodes = limits->max_nodes;
	}
	return ldap_filter_text_parse(text, len, arena, &bounds, out, error_offset);
}

static inline int filter_text_print(const struct ldap_filter *f, struct arena *arena,
				    struct ber_view *out)
{
	return ldap_filter_text_print(f, arena, out);
}

#endif
