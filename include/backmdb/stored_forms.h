/*
 * stored_forms.h — whether the normalized forms entry records store may be
 * taken as they are (back-mdb).
 *
 * Entry records hold each value's normalized form (entry.h, format
 * version 2), made by the equality rule its type had when it was written.
 * The meta table's "normalization" value records the rules they were made
 * under: ENTRY_NORMALIZATION_REVISION and, for every attribute type the
 * database has known, its OID and equality rule. A schema may add types
 * (their values are in no record yet) and may drop some (their records no
 * longer decode at all); it may not give a recorded type another equality
 * rule: then no stored form can be trusted, for good (records made under
 * both rules may coexist), until the data is reloaded into an empty
 * database.
 *
 * Memory: nothing kept; temporaries are the function's own.
 * Thread-safety: call it at open, before the database serves (it runs its
 * own write transaction when the store is writable).
 * Errors: LUMEN_ENOMEM, LUMEN_EIO, LUMEN_EFULL.
 */
#ifndef LUMEN_STORED_FORMS_H
#define LUMEN_STORED_FORMS_H

#include <stdbool.h>

#include "mdb_store.h"
#include "schema.h"

/*
 * Sets *trusted: may the stored normalized forms be read as they are under
 * schema? The first open of a database records schema's rules; a later one
 * with new types adds them; one that changes a recorded type's equality
 * rule (or the revision) answers false and, writable, records that no
 * later open may trust them.
 */
int stored_forms_check(struct mdb_store *store, const struct schema *schema, bool *trusted);

#endif
