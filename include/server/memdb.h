/*
 * memdb.h — an in-memory database behind the database interface
 * (database.h): read-only entries that a source builds on every operation
 * (server layer). The server's own entries (the root DSE, cn=Subschema,
 * cn=Monitor) are each one, so they get the same filters (filter.c),
 * attribute selection, access control, limits and paged results as any
 * entry of back-mdb: the server's one search path cannot tell them apart.
 *
 * The source: build(ctx, walk) hands every entry it has to memdb_emit,
 * parents before children and in the same order on every call (an entry's
 * position is its ordinal in that order). walk->base_ndn and walk->scope
 * say what the operation asks for, so a source may skip branches that
 * cannot be in scope; memdb checks the scope of each entry itself. build
 * returns LUMEN_OK, LUMEN_ENOTFOUND when the base names none of its
 * entries (noSuchObject, the source's suffix as matchedDN), its own error,
 * or the first value other than LUMEN_OK that memdb_emit returned (then it
 * must stop building at once).
 *
 * Operations (database.h, with back-mdb's result codes, backend.h):
 * search (base lookup, scope, filter through op->filter_access, size and
 * time limits, paged results, pause and resume), fetch, compare (the
 * asserted type's equality rule on the type and its subtypes, each under
 * op->compare_access); add, delete, modify and modrdn answer
 * unwillingToPerform (a read-only database, database_refuse_change).
 *
 * Paged results: a position is [version][ordinal of the last entry handed
 * to the sink][the server's request fingerprint][entries sent], the 25
 * bytes back-mdb issues, sealed by the server (paged_cookie.h) alike.
 *
 * Memory: entries are the source's, borrowed for memdb_emit; what an
 * operation needs lives in op->arena, plus a per-operation scratch arena
 * for filter evaluation that memdb frees before returning. memdb_open
 * mallocs the handle; database_close frees it (not the source's context).
 * Thread-safety: as database.h, provided build is reentrant.
 *
 * Caveats:
 *  - Positions are ordinals: when the source's entries change between two
 *    pages (a connection of cn=Monitor opens or closes), a page may repeat
 *    or miss an entry.
 *  - Every operation builds: no index, no cache; not for hot paths.
 *  - Entries get no computed child counts (has_counts is false) unless the
 *    source says they are leaves: a source with children that publishes
 *    hasSubordinates stores it (cn=Monitor).
 */
#ifndef LUMEN_MEMDB_H
#define LUMEN_MEMDB_H

#include <stdbool.h>

#include "arena.h"
#include "ber.h"
#include "database.h"
#include "entry.h"
#include "ldap_message.h"
#include "schema.h"

/* What build is asked for (read-only for the source). */
struct memdb_walk {
	struct ber_view base_ndn;       /* normalized */
	enum ldap_scope scope;
	struct arena *arena;            /* the operation's: for the source's scratch */
};

struct memdb_source {
	const char *suffix;             /* user form; matchedDN of a missing base */
	int (*build)(void *ctx, struct memdb_walk *walk);
	void *ctx;
	/* The entries hold every attribute they have: the server computes none
	 * for them (entryDN, subschemaSubentry; the root DSE). */
	bool complete_entries;
	/* Every entry is a leaf: the server computes hasSubordinates FALSE and
	 * numSubordinates 0 for it (cn=Subschema). Else none (Caveats). */
	bool leaves;
};

/*
 * Hand e (borrowed for the call) to the operation walking the entries.
 * LUMEN_OK: go on; anything else: stop building and return it.
 */
int memdb_emit(struct memdb_walk *walk, const struct entry *e);

/*
 * A database over src (copied; src->ctx must outlive it) for the entries'
 * schema. LUMEN_EINVAL (no build function or suffix), LUMEN_ENOMEM.
 */
int memdb_open(const struct schema *schema, const struct memdb_source *src,
	       struct database **out);

#endif
