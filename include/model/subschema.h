/*
 * subschema.h — the subschema subentry (RFC 4512 §4.2), model layer.
 *
 * Builds the entry that `cn=Subschema` publishes so that clients and schema
 * browsers can read the schema: attributeTypes, objectClasses, ldapSyntaxes,
 * matchingRules and matchingRuleUse, plus objectClass (top, subentry-style
 * subschema), cn, structuralObjectClass and the timestamps a browser looks
 * for. The values are the schema's own canonical definitions.
 *
 * Ownership: subschema_build returns a new entry the caller owns (entry_free).
 * Build it once at start-up: the schema is immutable, so the entry is too,
 * and any number of threads may read it.
 *
 * Caveats: requires schema/core.schema and schema/lumen.schema to be loaded
 * (it names the subschema attributes); LUMEN_ENOTFOUND if they are missing.
 */
#ifndef LUMEN_SUBSCHEMA_H
#define LUMEN_SUBSCHEMA_H

#include "entry.h"
#include "schema.h"

#define SUBSCHEMA_DN "cn=Subschema"

/* LUMEN_OK; LUMEN_ENOTFOUND (schema lacks the subschema attributes); LUMEN_ENOMEM. */
int subschema_build(const struct schema *s, struct entry **out);

#endif
