/*
 * matched_values.h — the Matched Values control (RFC 3876): decoding its
 * ValuesReturnFilter and choosing, per attribute value, what a search
 * result carries (server layer).
 *
 * ValuesReturnFilter ::= SEQUENCE OF SimpleFilterItem, each an equality,
 * substrings, >=, <=, present, approx or extensible item (the Filter
 * CHOICE tags 3..9). The list is flat: each item is decoded on its own
 * with a depth bound of 0 and a node bound of 1, and the list holds at
 * most max_elements items, so a hostile value costs little. An element of
 * another tag (AND, OR, NOT, a primitive where a constructed one belongs)
 * is an item that never matches, as slapd 2.5 reads it; an item of a known
 * tag that does not decode is a protocolError, and so is an extensible
 * match with neither rule nor type (RFC 4511 §4.5.1.7.7 requires one;
 * slapd lets it match nothing).
 *
 * Selection, as slapd 2.5 does: with at least one item, a value is sent
 * when some item matches it (filter.h filter_item_keeps_value), and an
 * attribute none of whose values is kept is left out (RFC 3876 §2 would
 * send it with no values; slapd omits it, and so do we). Access control
 * applies first: an attribute the requester may not read is never sent,
 * whatever its values. An empty list selects nothing away. typesOnly
 * ignores the filter (RFC 3876 §2 step 2).
 *
 * Memory: the decoded items in the operation's arena; matching scratch in
 * the matched_values' own arena, reset per value, freed by
 * matched_values_end. Thread-safety: per operation.
 */
#ifndef LUMEN_MATCHED_VALUES_H
#define LUMEN_MATCHED_VALUES_H

#include <stdbool.h>
#include <stddef.h>

#include "arena.h"
#include "ber.h"
#include "filter.h"
#include "ldap_message.h"
#include "schema.h"

struct attribute_selection;

struct values_return_filter {
	struct filter *items;     /* one compiled item each; NULL root: never matches */
	size_t n_items;
};

/*
 * Decode and compile a control value. LUMEN_OK, LUMEN_EMALFORMED (not a
 * ValuesReturnFilter), LUMEN_ELIMIT (more items than limits->max_elements),
 * LUMEN_ENOMEM.
 */
int values_return_filter_decode(struct ber_view value, const struct schema *schema,
				const struct ldap_decode_limits *limits, struct arena *arena,
				struct values_return_filter *out);

/* Applying one filter to a search's results. */
struct matched_values {
	const struct values_return_filter *filter;   /* NULL: inactive */
	struct arena scratch;
};

/* Start (filter NULL: the control was not sent). Never fails. */
void matched_values_begin(struct matched_values *mv, const struct values_return_filter *filter);
/* Make sel send only the values mv keeps (nothing changes when inactive,
 * the list is empty or sel is typesOnly). */
void matched_values_select(struct matched_values *mv, struct attribute_selection *sel);
/* Does a value of an attribute pass? For attribute_selection.keep_value. */
bool matched_values_keep(void *mv, const struct entry_attribute *a, size_t i);
void matched_values_end(struct matched_values *mv);

#endif
