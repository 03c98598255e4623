/*
 * syncprov_internal.h — what the files of the syncprov overlay share
 * (server layer, private to overlay_syncprov.c and syncprov_persist.c).
 *
 * overlay_syncprov.c: configuration, the contextCSN, the refresh (present
 * or delete phase) and the hooks; syncprov_log.c: the session log (the
 * change history behind the delete phase); syncprov_persist.c:
 * refreshAndPersist's persistent searches, their queues of committed
 * changes and the sending of those changes.
 *
 * Thread-safety: sp->lock guards context, recovered and the list of
 * persistent searches with their queues; everything else is fixed after
 * create. Lock order: sp->lock, then a connection's lock (the wake).
 */
#ifndef LUMEN_SYNCPROV_INTERNAL_H
#define LUMEN_SYNCPROV_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "overlay.h"
#include "sync_cookie.h"

/* syncprov-persist-queue's default: bytes of changes a persistent search
 * may fall behind before it is dropped back to a refresh. */
#define SYNCPROV_PERSIST_QUEUE_DEFAULT (1024u * 1024u)

struct psearch;

struct syncprov {
	pthread_mutex_t lock;
	struct sync_cookie context;       /* newest committed CSN per serverID */
	bool recovered;                   /* context read from the entries */
	struct psearch *persistent;       /* the persistent searches (lock) */
	struct ber_view suffix_ndn;       /* the database's first suffix */
	const struct schema *schema;
	const struct attribute_type *entry_uuid, *entry_csn, *context_csn;
	unsigned long checkpoint_ops, checkpoint_minutes, sessionlog;
	unsigned long persist_queue;      /* bytes (syncprov-persist-queue) */
	bool nopresent, reloadhint;
	int server_id;                    /* serverID for the cookies' sid=; -1 none */
	struct arena memory;
};


/* The cookie "rid=NNN[,sid=SSS],csn=CSN[;CSN...]" of csns (rid -1: none;
 * sid: the server's serverID when one is configured) in req's arena;
 * false: no memory. */
bool syncprov_cookie(const struct syncprov *sp, struct overlay_request *req, int rid,
		     const struct sync_cookie *csns, struct ber_view *out);

/* ----------------------------------------------------- syncprov_log.c */

/*
 * on_write: the change joins the session log (nothing without
 * syncprov-sessionlog). Errors: the transaction's (the write aborts).
 */
int syncprov_log_write(struct syncprov *sp, struct database_txn *txn,
		       const struct database_txn_ops *ops, const struct database_write *w);
/*
 * The CSN of the log's newest record (for the contextCSN at start).
 * Errors: LUMEN_ENOTFOUND (no log, or an empty one), the storage's.
 */
int syncprov_log_newest(struct syncprov *sp, struct database *db, char csn[CSN_LENGTH + 1]);
/*
 * A new refresh (req's search, first call) with cookie: when the log
 * reaches back to the cookie's CSN, sends the Sync Info syncIdSet of the
 * entries deleted since (none when nothing was) and returns LUMEN_OK:
 * the refresh is then a delete phase. LUMEN_ENOTFOUND: no log, or the
 * cookie is older than it (the present phase; a log that cannot be read
 * is logged and answers this too); LUMEN_ENOMEM, LUMEN_EIO (the client
 * is gone): the refresh fails.
 */
int syncprov_log_deletes(struct syncprov *sp, struct overlay_request *req,
			 const struct sync_cookie *cookie);
/*
 * A delete phase reads only what changed: req's search filter becomes
 * (&(its filter)(|(entryUUID=u1)...)) over the entries the log names as
 * added, modified or renamed since the cookie, so the search takes its
 * candidates from the entryUUID index (when there is one) instead of
 * walking its whole scope. Called on every call of the refresh (a paused
 * one reads the log again; entries already sent stay behind its resume
 * point). LUMEN_ENOTFOUND: the search is left as it was (no log, the log
 * no longer reaches back, more than SYNCPROV_NARROW_MAX entries changed);
 * LUMEN_ENOMEM.
 */
#define SYNCPROV_NARROW_MAX 1000
int syncprov_log_narrow(struct syncprov *sp, struct overlay_request *req,
			const struct sync_cookie *cookie);

/* ------------------------------------------------- syncprov_persist.c */

/*
 * A persistent search starts (req's search, first call): registered now,
 * before the refresh reads the contextCSN, so no change committed from here
 * on is missed; handed to the server as req->u.search->persist. asked: the
 * consumer's cookie (its rid; its sid, whose own changes are not sent back
 * to it, as OpenLDAP's syncprov does). Errors: LUMEN_ENOMEM.
 */
int syncprov_persist_start(struct syncprov *sp, struct overlay_request *req,
			   const struct sync_cookie *asked);
/* True while the search's refresh has not ended. */
bool syncprov_persist_refreshing(const struct backend_persist *p);
/*
 * The refresh of req's persistent search ended (its after hook, success):
 * changes older than context are in it. The search then waits for changes
 * (paused, wait). Cannot fail.
 */
void syncprov_persist_refreshed(struct syncprov *sp, struct overlay_request *req,
				const struct sync_cookie *context);
/* A later call of a persistent search: send what is queued (before hook). */
int syncprov_persist_send(struct syncprov *sp, struct overlay_request *req);
/* Committed changes, in commit order, to every persistent search (on_commit). */
void syncprov_persist_queue(struct syncprov *sp, const struct database_change *changes,
			    size_t n);
/* Destroy: frees the searches whose operations never ended. */
void syncprov_persist_free_all(struct syncprov *sp);

#endif
