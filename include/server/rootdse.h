/*
 * rootdse.h — the root DSE (RFC 4512 §5.1): the entry with the empty DN
 * that tells clients what this server supports, and the source of the
 * in-memory database that serves it (memdb.h; server layer).
 *
 * Built once from the configuration (namingContexts from the suffixes);
 * immutable once serving starts. Its attributes are all operational, so
 * "*" shows none and "+" all, and the server computes none for it
 * (memdb_source.complete_entries: no entryDN, no second
 * subschemaSubentry). It has no objectClass: (objectClass=*) matches it
 * as every entry, (objectClass=top) does not.
 *
 * Search, filters, attribute selection and access control are the server's
 * one path (op_search.c): the global `access` rules decide about it, as
 * slapd's frontend does: a root DSE the requester may not see is left out
 * of a successful search.
 *
 * Ownership: rootdse_create allocates; rootdse_free releases.
 * Thread-safety: read-only after rootdse_set_sasl_external; any number of
 * workers.
 * Caveats:
 *  - Only a base-scope search finds it (RFC 4512 §5.1): one-level and
 *    subtree searches of "" answer noSuchObject.
 *  - An attribute whose type the schema does not know is left out.
 */
#ifndef LUMEN_ROOTDSE_H
#define LUMEN_ROOTDSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "entry.h"
#include "ldap_message.h"
#include "schema.h"
#include "version.h"
#include "memdb.h"

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

/* The root DSE as an entry (DN ""). */
const struct entry *rootdse_entry(const struct rootdse *dse);

/* memdb_source.build for the root DSE (ctx: the struct rootdse). */
int rootdse_build(void *dse, struct memdb_walk *walk);

#endif
