/*
 * search_sort.h — Server Side Sort (RFC 2891) and Virtual List View
 * (draft-ietf-ldapext-ldapv3-vlv-09) for the search path (server layer).
 *
 * A sorted search runs in two passes. The first collects, for each entry
 * the requester may see, one small item: the entry's ID (and its
 * normalized DN, for a database that cannot fetch by ID) and the
 * normalized sort key values (the least value of each key; the greatest
 * for a reverse key), never the entry. Items live in the collection's own
 * arena, at most `max` of them (sortvlv-max): one more is LUMEN_ELIMIT.
 * The items are then sorted (ties keep the order the database found them
 * in) and the server fetches the entries of the window to send (all, one
 * page, or the VLV window) by ID or DN through the database interface, so
 * access control, the attribute selection and the size limit apply as
 * for any search.
 *
 * Sorting compares most pairs without the matching rule: each item's rank
 * carries the first eight bytes of its first key when that key's ordering
 * rule orders normalized values bytewise (caseIgnoreOrderingMatch and the
 * like: matching_compare_bytes), so the rule is called only on ties.
 *
 * Keys are resolved as OpenLDAP's sssvlv does: an unknown attribute is
 * noSuchAttribute, a type with neither an orderingRule in the key nor an
 * ORDERING rule is inappropriateMatching (critical or not, as slapd
 * answers). A key value the requester may not read (may_read) counts as
 * absent, so the order leaks nothing; absent values sort after every
 * value (before, for a reverse key).
 *
 * A VLV search keeps its sorted result on its connection (struct
 * sort_context, conn.h's conn_sort_take/conn_sort_keep) under a random
 * contextID sent in the VLV response; a follow-up VLV request carrying
 * that contextID, from the same identity with the same database, base,
 * scope, filter, sort keys and controls that shape the result (bound by
 * struct sort_binding), is answered from it without searching again.
 *
 * Memory: sort_collection_free releases everything a collection holds,
 * sort_context_free a context and its collection; the resolved keys point
 * into the schema. Thread-safety: per operation; a kept context belongs to
 * one connection and is taken by one operation at a time.
 *
 * Caveats:
 *  - Items hold IDs (or DNs): an entry deleted between the passes (or
 *    since a kept context was sorted) is skipped when it is fetched; one
 *    changed meanwhile is sent as it is now, in the place its old key
 *    gave it (as slapd's sssvlv does).
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

/* Bytes of a contextID (random: opaque, and useless on another connection). */
#define SORT_CONTEXT_ID_SIZE 16

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

/* One collected entry: keys[i].ptr NULL = absent; keys[n_keys] is its
 * normalized DN when the collection keeps DNs (sort_item_dn). */
struct sort_item {
	uint64_t id;                    /* the database's entry ID (info->id) */
	struct ber_view *keys;
};

/* An item's place in the sorted order (items[item]; item is also its
 * arrival order, the tie-breaker). */
struct sort_rank {
	uint64_t prefix;                /* first key's leading bytes, or 0 */
	size_t item;
};

struct sort_collection {
	const struct sort_spec *spec;
	bool keep_dn;                   /* the database fetches by DN only */
	struct arena memory;            /* items' DNs and keys */
	struct arena scratch;           /* per-entry normalization */
	struct sort_item *items;        /* malloc'd, arrival order */
	struct sort_rank *order;        /* malloc'd by sort_collection_sort */
	size_t n, cap, max;
};

void sort_collection_init(struct sort_collection *c, const struct sort_spec *spec, size_t max,
			  bool keep_dn);
void sort_collection_free(struct sort_collection *c);

/*
 * Collect e, whose ID is id (may_read: the requester's read right on a
 * type, NULL: all). Errors: LUMEN_ELIMIT (already `max` items),
 * LUMEN_ENOMEM.
 */
int sort_collection_add(struct sort_collection *c, const struct entry *e, uint64_t id,
			bool (*may_read)(void *arg, const struct attribute_type *type),
			void *may_read_arg);

/* Sort the items. Errors: LUMEN_ENOMEM (nothing sorted). */
int sort_collection_sort(struct sort_collection *c);

/* The i-th item in sorted order (i < c->n, after sort_collection_sort). */
static inline const struct sort_item *sort_collection_at(const struct sort_collection *c,
							 size_t i)
{
	return &c->items[c->order[i].item];
}

/* The item's normalized DN (ptr NULL unless the collection keeps DNs). */
static inline struct ber_view sort_item_dn(const struct sort_collection *c,
					   const struct sort_item *it)
{
	return c->keep_dn ? it->keys[c->spec->n_keys] : (struct ber_view){ NULL, 0 };
}

/* Bytes the collection holds (what a kept context counts). */
size_t sort_collection_bytes(const struct sort_collection *c);

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

/* ------------------------------------------------ kept VLV results */

/*
 * What a kept result is bound to: the database, the requester (normalized
 * bind DN, empty for anonymous) and the bytes of the request that shapes
 * the result (base, scope, alias dereferencing, filter, sort keys,
 * subentries and ManageDsaIT controls; compared whole, so no two requests
 * can pass for each other) — not the attribute list or the window, which
 * may change from request to request.
 */
struct sort_binding {
	const void *database;
	struct ber_view requester;
	struct ber_view request;
};

struct sort_context {
	struct sort_spec spec;          /* the collection's keys */
	struct sort_collection coll;
	const void *database;
	struct ber_view requester;      /* in coll.memory */
	struct ber_view request;        /* in coll.memory */
	uint8_t id[SORT_CONTEXT_ID_SIZE];
};

/*
 * A new, empty context for spec and binding b with a fresh random
 * contextID; collect into (*out)->coll. Errors: LUMEN_ENOMEM, LUMEN_EIO
 * (no randomness).
 */
int sort_context_create(const struct sort_spec *spec, const struct sort_binding *b, size_t max,
			bool keep_dn, struct sort_context **out);
/* NULL is fine. */
void sort_context_free(struct sort_context *ctx);

/* May a request bound to b that sent context_id be answered from ctx? */
bool sort_context_matches(const struct sort_context *ctx, struct ber_view context_id,
			  const struct sort_binding *b);

/* Bytes the context holds, as its connection counts them. */
size_t sort_context_bytes(const struct sort_context *ctx);

#endif
