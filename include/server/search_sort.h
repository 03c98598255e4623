/*
 * search_sort.h — Server Side Sort (RFC 2891) and Virtual List View
 * (draft-ietf-ldapext-ldapv3-vlv-09) for the search path (server layer).
 *
 * A sorted search runs in two passes. The first collects, for each entry
 * the requester may see, one small item: the entry's normalized DN and the
 * normalized sort key values (the least value of each key; the greatest
 * for a reverse key), never the entry. Items live in the collection's own
 * arena, at most `max` of them (sortvlv-max): one more is LUMEN_ELIMIT.
 * The items are then sorted (ties keep the order the database found them
 * in) and the server fetches the entries of the window to send (all, one
 * page, or the VLV window) by DN through the database interface, so
 * access control, the attribute selection and the size limit apply as
 * for any search.
 *
 * Keys are resolved as OpenLDAP's sssvlv does: an unknown attribute is
 * noSuchAttribute, a type with neither an orderingRule in the key nor an
 * ORDERING rule is inappropriateMatching (critical or not, as slapd
 * answers). A key value the requester may not read (may_read) counts as
 * absent, so the order leaks nothing; absent values sort after every
 * value (before, for a reverse key).
 *
 * Memory: sort_collection_free releases everything a collection holds;
 * the resolved keys point into the schema. Thread-safety: per operation.
 *
 * Caveats:
 *  - Items hold DNs: an entry renamed or deleted between the passes is
 *    skipped when it is fetched.
 *  - VLV greaterThanOrEqual compares with the first key only (as slapd).
 */
#ifndef LUMEN_SEARCH_SORT_H
#define LUMEN_SEARCH_SORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "ber.h"
#include "controls.h"
#include "entry.h"
#include "schema.h"

/* virtualListViewResult codes beyond the LDAP ones. */
#define SORT_VLV_ERROR 76               /* resultCode vlvError */
#define SORT_VLV_SORT_MISSING 76        /* sortControlMissing */
#define SORT_VLV_OFFSET_RANGE 77        /* offsetRangeError */

struct sort_key {
	const struct attribute_type *type;
	const struct matching_rule *rule;
	bool reverse;
};

struct sort_spec {
	struct sort_key keys[CONTROLS_MAX_SORT_KEYS];
	size_t n_keys;
};

/*
 * Resolve the request's keys. Returns an LDAP result code: 0, or
 * noSuchAttribute (16) / inappropriateMatching (18) with *diagnostic.
 */
int sort_spec_resolve(const struct schema *schema, const struct request_controls *c,
		      struct sort_spec *spec, const char **diagnostic);

/* One collected entry: keys[i].ptr NULL = absent. */
struct sort_item {
	struct ber_view ndn;
	struct ber_view *keys;
	uint64_t seq;                   /* arrival order, the tie-breaker */
};

struct sort_collection {
	const struct sort_spec *spec;
	struct arena memory;            /* items' DNs and keys */
	struct arena scratch;           /* per-entry normalization */
	struct sort_item *items;        /* malloc'd */
	size_t n, cap, max;
};

void sort_collection_init(struct sort_collection *c, const struct sort_spec *spec, size_t max);
void sort_collection_free(struct sort_collection *c);

/*
 * Collect e (may_read: the requester's read right on a type, NULL: all).
 * Errors: LUMEN_ELIMIT (already `max` items), LUMEN_ENOMEM.
 */
int sort_collection_add(struct sort_collection *c, const struct entry *e,
			bool (*may_read)(void *arg, const struct attribute_type *type),
			void *may_read_arg);

/* Sort the items. */
void sort_collection_sort(struct sort_collection *c);

/* <0, 0, >0: a's key values before, like, after b's (no tie-break). */
int sort_compare_keys(const struct sort_spec *spec, const struct ber_view *a,
		      const struct ber_view *b);

/* The index of the first sorted item whose first key is at or after the
 * assertion value (n: none). LUMEN_OK or LUMEN_EMALFORMED (the value
 * cannot be normalized: inappropriateMatching) or LUMEN_ENOMEM. */
int sort_find_value(struct sort_collection *c, struct ber_view value, size_t *index);

/* The items to send for a VLV request and what its response says. */
struct sort_window {
	size_t start, count;
	uint32_t target_position;
	int vlv_result;                 /* 0, or SORT_VLV_OFFSET_RANGE */
};

/*
 * The window over n sorted items (found: sort_find_value's index for
 * greaterThanOrEqual), the way slapd's sssvlv positions it: offset equal
 * to contentCount is the last entry, 1 the first, else offset scaled by
 * n/contentCount; an offset beyond contentCount (or n) is an
 * offsetRangeError; a value after every entry targets n + 1 and the
 * window ends at the last entry.
 */
void sort_vlv_window(const struct vlv_request *v, size_t n, size_t found,
		     struct sort_window *w);

#endif
