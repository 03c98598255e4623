/*
 * rootdse.h — the root DSE (RFC 4512 §5.1): the entry with the empty DN
 * that tells clients what this server supports (server layer).
 *
 * Built once from the configuration (namingContexts from the suffixes);
 * immutable afterwards. All its attributes are operational, so like
 * OpenLDAP it shows none for "*" and all for "+"; named attributes are
 * matched case-insensitively by name or OID; "1.1" alone selects nothing.
 *
 * Ownership: rootdse_create allocates; rootdse_free releases.
 * Thread-safety: read-only after creation; any number of workers.
 * Caveats: the filter test is a small evaluator over these few attributes
 * (presence, equality, AND/OR/NOT; (objectClass=*) is always true); other
 * items are Undefined, i.e. do not match.
 */
#ifndef LUMEN_ROOTDSE_H
#define LUMEN_ROOTDSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ber.h"
#include "ldap_message.h"

struct config;
struct rootdse;

#define LUMEN_VENDOR_NAME "Lumen"
#define LUMEN_VENDOR_VERSION "0.1.0"

/* LUMEN_ENOMEM. */
int rootdse_create(const struct config *cfg, struct rootdse **out);
void rootdse_free(struct rootdse *dse);

/* Advertise SASL EXTERNAL (an ldapi listener exists). Before serving only. */
void rootdse_set_sasl_external(struct rootdse *dse, bool on);

/* True if the filter matches the root DSE. */
bool rootdse_matches(const struct rootdse *dse, const struct ldap_filter *filter);

/*
 * Append a SearchResultEntry for the root DSE with the requested attribute
 * selection to w. Errors are left in the writer (ber_writer_error).
 */
void rootdse_encode(const struct rootdse *dse, struct ber_writer *w, int32_t message_id,
		    const struct ber_view *attributes, size_t n_attributes, bool types_only);

#endif
