/*
 * monitor.h — the read-only cn=Monitor tree, built as struct entry objects
 * on demand from the statistics and the server's figures (server layer).
 *
 * Layout (OpenLDAP back-monitor's, so its monitoring tools work):
 *   cn=Monitor                         monitorServer (monitoredInfo: version)
 *     cn=Connections                   monitorContainer
 *       cn=Total, cn=Current           monitorCounterObject: monitorCounter
 *       cn=Memory, cn=Memory Base,     (Lumen) bytes all connections hold, and
 *       cn=Memory Queued,              of those their base, queued input and
 *       cn=Memory Output,              requests, and output (conn_memory.h);
 *       cn=Memory Peak,                their peak, conn_total_memory (0 =
 *       cn=Memory Limit,               none), times a connection waited for
 *       cn=Memory Waits,               memory, connections waiting now, woken
 *       cn=Memory Waiting,             by released memory, and refused at the
 *       cn=Memory Wakeups,             bound
 *       cn=Memory Refused
 *       cn=Connection N                monitorConnection: number, peer, local
 *                                      address, listener, bind DN, ops
 *                                      received/executing/pending/completed,
 *                                      monitorConnectionMemory (Lumen: bytes
 *                                      held), start and activity time
 *     cn=Operations                    monitorContainer: monitorOpInitiated,
 *                                      monitorOpCompleted (all types)
 *       cn=Bind, cn=Unbind, cn=Search, cn=Compare, cn=Add, cn=Delete,
 *       cn=Modify, cn=Modrdn, cn=Extended, cn=Abandon
 *                                      monitorOperation: the same, per type
 *     cn=Statistics                    monitorContainer
 *       cn=Bytes, cn=PDU, cn=Entries, cn=Referrals
 *                                      monitorCounterObject: sent so far
 *     cn=Threads                       monitorContainer
 *       cn=Max, cn=Open, cn=Active, cn=Pending, cn=Backload
 *                                      monitoredObject: monitoredInfo
 *     cn=Time                          monitorContainer
 *       cn=Start, cn=Current           monitoredObject: monitorTimestamp
 *       cn=Uptime                      monitoredObject: monitoredInfo (s)
 *     cn=Waiters                       monitorContainer
 *       cn=Read, cn=Write              monitorCounterObject: monitorCounter
 *     cn=Listeners                     monitorContainer
 *       cn=Listener N                  monitoredObject: local address, URL
 *     cn=Databases                     monitorContainer
 *       cn=Database N                  monitoredObject: namingContexts,
 *                                      monitoredInfo "mdb" and "name=value"
 *                                      figures (mapSize, pageSize, pagesUsed,
 *                                      readersUsed, readersMax, entries,
 *                                      entryCache*, idlCache*), readOnly
 * Every entry also has hasSubordinates. Database N counts from 1 in
 * slapd.conf order; Listener N and the connection numbers from 0 / conn=N.
 * The attribute types and classes come from schema/monitor.schema (OpenLDAP's
 * names and OIDs), which must be loaded into the schema passed in.
 *
 * monitor_build walks the tree in preorder and hands each entry inside the
 * search scope to a callback; the server applies the filter, the attribute
 * selection and access control. Entries outside the scope are built only
 * as far as needed to find the ones inside (branches that cannot reach the
 * scope are skipped).
 *
 * Ownership: everything in struct monitor_sources is borrowed for the call.
 * Each entry belongs to monitor_build and is freed when the callback
 * returns (entry_dup it to keep it).
 * Thread-safety: reentrant; any number of workers may build at once.
 *
 * Caveats:
 *  - Built on each search: a subtree search of cn=Monitor with thousands of
 *    open connections builds thousands of entries (fine for monitoring, not
 *    meant for a hot path).
 *  - The base must be normalized with the same schema (server_normalize_dn).
 *    The tree's root is MONITOR_DN; route a search to monitor_build when its
 *    normalized base is within the normalized MONITOR_DN (dn_is_within).
 *  - A database's figures name one suffix (the first configured).
 */
#ifndef LUMEN_MONITOR_H
#define LUMEN_MONITOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "ber.h"
#include "conn_memory.h"
#include "ldap_message.h"
#include "stats.h"

struct entry;
struct schema;

#define MONITOR_DN "cn=Monitor"

/* A snapshot of one open connection, taken by the server under its lock. */
struct monitor_connection {
	uint64_t id;                    /* conn=N */
	const char *peer;               /* "IP=192.0.2.1:41234", "PATH=..." */
	const char *local;              /* the listener's name */
	const char *bind_dn;            /* NULL or "" when anonymous */
	uint64_t ops_received, ops_executing, ops_pending, ops_completed;
	uint64_t memory;                /* bytes its buffers hold (conn_memory.h) */
	time_t started;                 /* 0: unknown (attribute left out) */
	time_t last_activity;           /* 0: unknown */
};

struct monitor_listener {
	const char *address;            /* "IP=0.0.0.0:389", "PATH=/run/lumen/ldapi" */
	const char *url;                /* "ldap:///"; NULL: left out */
};

struct monitor_threads {
	unsigned max;                   /* configured workers (threads) */
	unsigned open;                  /* started */
	unsigned active;                /* running an operation now */
	unsigned pending;               /* operations queued, waiting */
	unsigned backload;              /* active + pending */
};

struct monitor_sources {
	const struct schema *schema;            /* with monitor.schema loaded */
	const struct stats_snapshot *stats;
	const char *version;                    /* "Lumen 0.1.0"; NULL: left out */
	time_t now;                             /* 0: time(NULL) */
	const struct monitor_connection *connections;
	size_t n_connections;
	const struct monitor_listener *listeners;
	size_t n_listeners;
	struct monitor_threads threads;
	uint64_t waiters_read;                  /* connections waiting for input */
	uint64_t waiters_write;                 /* connections waiting to write */
	struct conn_memory_figures conn_memory; /* all connections' bytes, bound */
	const struct database_figures *databases;
	size_t n_databases;
	const bool *database_read_only;         /* per database; NULL: all FALSE */
};

/*
 * Called for each entry in scope. Return LUMEN_OK to go on; any other
 * value stops the walk and monitor_build returns it (e.g. a size limit).
 */
typedef int (*monitor_entry_fn)(void *ctx, const struct entry *entry);

/*
 * Hand every entry of the tree within `scope` of base_ndn to fn, parents
 * before children. LUMEN_OK; LUMEN_ENOTFOUND if base_ndn names no entry of
 * the tree (noSuchObject; fn was not called); LUMEN_EUNSUPPORTED if the
 * schema lacks monitor.schema; LUMEN_EINVAL (no schema or stats, or an
 * unknown scope); LUMEN_ENOMEM; or what fn returned.
 */
int monitor_build(const struct monitor_sources *src, struct ber_view base_ndn,
		  enum ldap_scope scope, monitor_entry_fn fn, void *ctx);

#endif
