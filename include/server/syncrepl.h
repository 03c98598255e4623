/*
 * syncrepl.h — the RFC 4533 consumers of the server's databases (server
 * layer): one thread per `syncrepl` line, which connects to its provider
 * (syncrepl_conn.h), binds, sends the search with the Sync Request
 * control carrying its cookie and applies what comes back
 * (syncrepl_apply.h) — refreshOnly: a refresh every `interval`;
 * refreshAndPersist: a refresh, then the changes the provider pushes.
 *
 * Failures follow OpenLDAP's retry schedule ("5 10 60 +": every 5 s ten
 * times, then every 60 s forever; a schedule that runs out stops the
 * consumer, which the log says); a successful session starts it over.
 * Each attempt, failure and give-up is logged with rid, the provider's
 * URL and the reason. The cookie is saved only after a refresh completed
 * (and, in persist mode, with each change the provider's cookie covers),
 * so a provider that vanishes mid-refresh leaves the consumer to refresh
 * again from its last cookie; entries applied by then stay applied, each
 * one whole.
 *
 * Ownership: syncrepl_start allocates the set and its threads;
 * syncrepl_stop stops, joins and frees them. Thread-safety:
 * syncrepl_request_stop from any thread (a signal handler's event);
 * the rest from the main thread. Consumers stop within about a second.
 *
 * Caveats:
 *  - Consumers write through the database's overlay chain as its rootdn.
 *  - The databases must stay open until syncrepl_stop returns.
 */
#ifndef LUMEN_SYNCREPL_H
#define LUMEN_SYNCREPL_H

#include <stddef.h>

struct server;
struct server_database;
struct syncrepl_set;

/*
 * Checks db's syncrepl lines against the schema and its suffix (the
 * searchbase inside it, the filter). err names the line. LUMEN_EINVAL,
 * LUMEN_ENOMEM.
 */
int syncrepl_check(const struct server *s, const struct server_database *db, char *err,
		   size_t errlen);

/*
 * Starts a consumer thread for every syncrepl line of every open
 * database (*out NULL when there is none). LUMEN_ENOMEM, LUMEN_EIO
 * (a thread did not start: err says which).
 */
int syncrepl_start(struct server *s, struct syncrepl_set **out, char *err, size_t errlen);
/* Asks every consumer to stop (returns at once). NULL is allowed. */
void syncrepl_request_stop(struct syncrepl_set *set);
/* Stops, joins and frees. NULL is allowed. */
void syncrepl_stop(struct syncrepl_set *set);

#endif
