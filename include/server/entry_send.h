/*
 * entry_send.h — which attributes a search returns (RFC 4511 §4.5.1.8,
 * RFC 3673 "+", RFC 4529 "@class") and the encoding of an entry as a
 * SearchResultEntry with that selection (server layer).
 *
 * A selection is built once per operation from the request's attribute
 * list and then applied to every entry: user attributes for none listed
 * or "*", operational ones for "+", named descriptions with their subtypes
 * and options ("name" selects cn and sn, "cn;lang-de" only values tagged
 * lang-de), the MUST and MAY types of "@objectClass", nothing for "1.1"
 * alone; names the schema does not know are ignored. Besides the stored
 * attributes (entryUUID, timestamps, ... kept by the backend), four are
 * computed while encoding: entryDN and subschemaSubentry always,
 * hasSubordinates and numSubordinates when the backend counted children
 * (struct backend_entry_info.has_counts; ask for counts when
 * attribute_selection_wants_counts says so); none for an entry whose info
 * says it is complete (the root DSE).
 *
 * Encoding copies a stored attribute's pre-encoded PartialAttribute
 * (entry.h `encoded`) when the whole attribute is selected, which is the
 * common case; typesOnly writes the descriptions alone.
 *
 * Memory: the selection's arrays live in the caller's arena; nothing is
 * allocated while encoding (errors are left in the writer, ber.h).
 * Thread-safety: a selection belongs to one operation; entries are only
 * read.
 *
 * Caveats:
 *  - The DN written is the backend's current DN (info->dn) when info is
 *    given, else e->dn.
 *  - A type both stored and computed (none today) would be sent twice.
 *  - keep_value (matched values) costs a per-value test and re-encodes the
 *    attributes it filters instead of copying them.
 *  - Access control: when may_read is set (the search's ACL check for the
 *    entry being encoded), attributes it refuses are left out, computed
 *    ones included.
 */
#ifndef LUMEN_ENTRY_SEND_H
#define LUMEN_ENTRY_SEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "database.h"
#include "ber.h"
#include "entry.h"
#include "schema.h"

/* Attributes the server computes instead of storing. */
enum computed_attribute {
	COMPUTED_ENTRY_DN,
	COMPUTED_SUBSCHEMA_SUBENTRY,
	COMPUTED_HAS_SUBORDINATES,
	COMPUTED_NUM_SUBORDINATES,
	COMPUTED_ATTRIBUTE_COUNT
};

struct attribute_selection {
	bool all_user;                        /* none listed, or "*" */
	bool all_operational;                 /* "+" */
	bool types_only;
	struct attribute_description *wanted; /* named ones, from the arena */
	size_t n_wanted;
	const struct attribute_type *computed_type[COMPUTED_ATTRIBUTE_COUNT]; /* NULL: not in schema */
	bool computed[COMPUTED_ATTRIBUTE_COUNT];                             /* selected */
	bool (*may_read)(void *arg, const struct attribute_type *type);      /* NULL: all */
	void *may_read_arg;
	/* RFC 3876 (matched_values.h): send value i of a? NULL: every value.
	 * An attribute with no value kept is left out. */
	bool (*keep_value)(void *arg, const struct entry_attribute *a, size_t i);
	void *keep_value_arg;
};

/*
 * Build the selection of a request's attribute list. Errors: LUMEN_ENOMEM
 * (the arena is exhausted).
 */
int attribute_selection_init(struct attribute_selection *sel, const struct schema *schema,
			     const struct ber_view *names, size_t n_names, bool types_only,
			     struct arena *arena);

/* True if a selected computed attribute needs the backend's child counts. */
bool attribute_selection_wants_counts(const struct attribute_selection *sel);

/*
 * Append the SearchResultEntry protocolOp element ([APPLICATION 4], the
 * shape the Pre-/Post-Read controls carry) for e. info may be NULL.
 */
void entry_send_body(const struct attribute_selection *sel, const struct entry *e,
		     const struct backend_entry_info *info, struct ber_writer *w);

/* Append a whole LDAPMessage holding entry_send_body. */
void entry_send_message(const struct attribute_selection *sel, const struct entry *e,
			const struct backend_entry_info *info, int32_t message_id,
			struct ber_writer *w);

#endif
