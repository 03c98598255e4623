/*
 * own_databases.h — the entries the server publishes itself: the root DSE,
 * cn=Subschema and cn=Monitor, each an in-memory database (memdb.h) that
 * server_find_database hands out when no configured database holds the DN,
 * so that the one search path serves them (server layer).
 *
 * They have no access rules, limits or rootdn of their own: the global
 * `access` rules, `limits` lines, sizelimit and timelimit apply, and no
 * rootdn is root there (as in slapd, whose frontend and back-monitor use
 * the global rules). The root DSE and cn=Subschema are frontend entries
 * (server_database.frontend), as in slapd: no `search` check on the base
 * (an entry the requester may not see is left out of a successful search)
 * and no `security ssf=` requirement (clients read them to learn how to
 * protect the connection). cn=Monitor is an ordinary database: a base the
 * requester may not see answers noSuchObject, as back-monitor does.
 *
 * Ownership: own_databases_open fills s->own (nothing touches the network
 * or the disk, so `lumend -T` opens them too); own_databases_close frees
 * them. Thread-safety: read-only once open; the sources are reentrant.
 *
 * Caveats:
 *  - A configured database whose suffix holds cn=Monitor or cn=Subschema
 *    wins: server_find_database looks at the configured ones first.
 *  - The root DSE's database holds the empty DN alone: it is no catch-all
 *    for DNs outside every suffix.
 *  - When access rules exist only inside database sections, no global rule
 *    speaks for cn=Monitor and "no rule at all" would open it to everyone,
 *    other connections' bind DNs and addresses included: then it gets the
 *    one rule `access to * by * none` of its own (slapd has no monitor
 *    database unless one is configured). A global rule naming cn=Monitor
 *    opens it as before.
 */
#ifndef LUMEN_OWN_DATABASES_H
#define LUMEN_OWN_DATABASES_H

#include <stddef.h>

#include "ber.h"
#include "memdb.h"

struct server;
struct server_database;

/* On failure err says why. LUMEN_ENOMEM, memdb_open's errors. */
int own_databases_open(struct server *s, char *err, size_t errlen);
/* Close and free them (NULL and never opened are fine). */
void own_databases_close(struct server *s);

/* The own database holding ndn (normalized), or NULL. */
const struct server_database *own_databases_find(const struct server *s, struct ber_view ndn);

/* cn=Monitor's memdb_source.build (monitor_gather.c); ctx: the server. */
int monitor_source_build(void *server, struct memdb_walk *walk);

#endif
