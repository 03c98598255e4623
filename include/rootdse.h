/*
 * rootdse.h — the root DSE (RFC 4512 §5.1): the entry with the empty DN
 * that tells clients what this server supports (server layer).
 *
 * Built once from the configuration (namingContexts from the suffixes);
 * immutable afterwards. All its attributes are operational, so like
 * OpenLDAP it shows none for "*" and all for "+"; named attributes are
 * matched case-insensitively by name or OID; "1.1" alone selects nothing.
 *
 * Access control: the root DSE is in no database, so the global `access`
 * rules decide, as for ordinary entries (op_search.c): `search` and `read`
 * on the entry (slapd: denied, the base search succeeds with no entry),
 * the filter-oracle rule, `read` per returned attribute. rootdse_entry is
 * the same attributes as an entry (plus objectClass: top) for the ACL
 * engine; under access control the filter is evaluated on it by filter.c
 * (the full evaluator), not by the small one below.
 *
 * Ownership: rootdse_create allocates; rootdse_free releases.
 * Thread-safety: read-only after creation; any number of workers.
 * Caveats:
 *  - Without access rules the filter test is a small evaluator over these
 *    few attributes (presence, equality, AND/OR/NOT; (objectClass=*) is
 *    always true); other items are Undefined, i.e. do not match.
 *  - An attribute whose type the schema does not know is not in the entry,
 *    and not returned when a may_read check applies.
 */
#ifndef LUMEN_ROOTDSE_H
#define LUMEN_ROOTDSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ber.h"
#include "entry.h"
#include "ldap_message.h"
#include "schema.h"
#include "version.h"

struct config;
struct rootdse;

#define LUMEN_VENDOR_NAME "Lumen"
#define LUMEN_VENDOR_VERSION LUMEN_VERSION

/* LUMEN_ENOMEM, LUMEN_ESCHEMA (a value the schema refuses). */
int rootdse_create(const struct config *cfg, struct rootdse **out);
void rootdse_free(struct rootdse *dse);

/* Advertise SASL EXTERNAL (an ldapi listener exists). Before serving only.
 * Errors as rootdse_create. */
int rootdse_set_sasl_external(struct rootdse *dse, bool on);

/* The root DSE as an entry (DN ""), for access-control decisions. */
const struct entry *rootdse_entry(const struct rootdse *dse);

/* True if the filter matches the root DSE. */
bool rootdse_matches(const struct rootdse *dse, const struct ldap_filter *filter);

/*
 * Append a SearchResultEntry for the root DSE with the requested attribute
 * selection to w; may_read (NULL: all) refuses attributes the requester
 * may not read. Errors are left in the writer (ber_writer_error).
 */
void rootdse_encode(const struct rootdse *dse, struct ber_writer *w, int32_t message_id,
		    const struct ber_view *attributes, size_t n_attributes, bool types_only,
		    bool (*may_read)(void *arg, const struct attribute_type *type), void *arg);

#endif
