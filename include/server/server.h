/*
 * server.h — the daemon's top object: configuration-derived state, the
 * work queue, the I/O threads and the listeners, and the run/shutdown
 * sequence (server layer).
 *
 * server_create prepares everything that can fail without touching the
 * network or the databases (normalized suffixes and rootdn, the root DSE,
 * the cn=Subschema entry, the in-memory databases serving them and
 * cn=Monitor), so `lumend -T` checks the configuration without
 * opening anything. server_open_databases takes each database's db_lock
 * and opens its backend; server_listen opens the sockets;
 * server_run starts the workers and I/O threads, runs I/O thread 0 in the
 * calling thread, and returns after SIGTERM/SIGINT once connections are
 * closed and the threads are joined.
 *
 * Ownership: the server borrows the config (which must outlive it) and owns
 * everything else; server_destroy frees it all and removes ldapi sockets.
 * Thread-safety: the fields are read-only once server_run starts, except
 * `stopping` (atomic) and the counters.
 *
 * Caveats:
 *  - Databases are closed by server_destroy, after the workers stopped.
 *  - SIGPIPE is ignored process-wide by server_run.
 *  - Only one server per process (signals).
 */
#ifndef LUMEN_SERVER_H
#define LUMEN_SERVER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "ber.h"
#include "conn_memory.h"
#include "io_placement.h"
#include "db_lock.h"
#include "ldap_message.h"
#include "listener.h"

struct backend;
struct config;
struct config_database;
struct io_thread;
struct entry;
struct rootdse;
struct workq;
struct event;
struct server_accept;
struct stats;
struct metrics_http;
struct tls_context;
struct conn_limits;
struct database_figures;

struct overlay_chain;
struct syncrepl_set;

struct server_database {
	const struct config_database *config;
	struct ber_view *suffixes;       /* normalized; bytes owned */
	size_t n_suffixes;
	struct ber_view rootdn;          /* normalized; ptr NULL when none */
	long size_limit;                 /* effective; CONFIG_LIMIT_UNLIMITED */
	long time_limit;                 /* effective; CONFIG_LIMIT_UNLIMITED */
	struct database *database;       /* NULL until server_open_databases */
	/* The `overlay` lines, parsed at start-up; once the database opens,
	 * database is this chain over it (and owns it). */
	struct overlay_chain *overlays;
	struct overlay_chain *bind_chain; /* the wrapped chain, borrowed (op_bind: its
					    bind hooks); NULL: none */
	struct db_lock lock;             /* held while the backend is open */
	/* The root DSE or cn=Subschema (own_databases.h): no `search` check on
	 * the base, no `security ssf=` requirement. */
	bool frontend;
	/* Writes are refused before any access check (own_databases.h). */
	bool read_only;
};

struct server {
	const struct config *config;
	struct server_database *databases;
	size_t n_databases;
	struct rootdse *rootdse;
	struct bind_pace *bind_pace;     /* failed binds all cost the same */
	struct entry *subschema;         /* cn=Subschema, built once */
	/* The root DSE, cn=Subschema and cn=Monitor (own_databases.h). */
	struct server_database *own;
	size_t n_own;
	struct config_database *monitor_closed;   /* own_databases.c; NULL: not closed */
	struct ldap_decode_limits limits;
	struct workq *workq;
	struct io_thread *io_threads;
	unsigned n_io_threads;
	struct io_placement placement;   /* which I/O thread takes a connection */
	struct listener_set listeners;
	struct server_accept *accepting; /* one per listener (server.c) */
	struct event *accept_resume;     /* re-enables accepting after EMFILE */
	struct event *signal_events[3];  /* SIGTERM, SIGINT, SIGHUP (log reopen) */
	atomic_bool stopping;
	atomic_uint_fast64_t next_conn_id;
	/* Security (server.c creates them from the configuration). */
	struct tls_context *tls;         /* NULL unless TLSCertificateFile is set */
	struct conn_limits *conn_limits; /* conn_max, conn_max_per_ip */
	struct conn_memory conn_memory;  /* bytes connections hold; conn_*_memory bounds */
	bool has_ldapi;                  /* an ldapi:// listener (SASL EXTERNAL) */
	/* Observability (server_observe.c). */
	struct stats *stats;             /* per-thread counters; created with the server */
	struct metrics_http *metrics;    /* /metrics listener; NULL unless configured */
	uint64_t slowop_ns;              /* stage breakdown in RESULT lines from here */
	bool slowop_all;                 /* slowop-threshold 0: every operation */
	struct syncrepl_set *syncrepl;   /* the consumers (syncrepl.h); NULL: none */
	struct listener *listener_info;  /* copy of the listeners for cn=Monitor */
	size_t n_listener_info;          /* (valid until server_destroy) */
};

/*
 * Prepare a server for cfg. On failure err says what and where (the
 * database's FILE:LINE). LUMEN_EMALFORMED (a suffix or rootdn that is not a
 * valid DN under the schema), LUMEN_ENOMEM.
 */
int server_create(const struct config *cfg, struct server **out, char *err, size_t errlen);

/*
 * Take the lock of every database directory (as "lumend") and open its
 * backend. On failure err names the database and the reason; what was
 * opened stays open for server_destroy. LUMEN_EBUSY (another process holds
 * a database: lumenadd, lumenindex or another lumend), the errors of
 * db_lock_acquire and backend_open.
 */
int server_open_databases(struct server *s, char *err, size_t errlen);

/* Open the listeners for space-separated URLs (listener.h errors). */
int server_listen(struct server *s, const char *urls, char *err, size_t errlen);

/*
 * Run until SIGTERM or SIGINT, then shut down gracefully: stop accepting,
 * let running operations finish, close connections, join the threads.
 * LUMEN_OK, LUMEN_ENOMEM or LUMEN_EIO (threads or events could not start;
 * err says which).
 */
int server_run(struct server *s, char *err, size_t errlen);
/*
 * Block SIGTERM, SIGINT and SIGHUP in the calling thread (and the threads it
 * starts) until server_run has their events: a stop requested during
 * start-up then ends in an orderly shutdown instead of the default action.
 */
void server_hold_signals(void);

/* Free everything (listeners closed, ldapi sockets removed). NULL ok. */
void server_destroy(struct server *s);

/*
 * Normalize a DN from a request with the configured schema into the arena.
 * LUMEN_EMALFORMED / LUMEN_ENOTFOUND / LUMEN_ESCHEMA as dn_normalize,
 * LUMEN_ENOMEM.
 */
int server_normalize_dn(const struct server *s, struct ber_view dn, struct arena *arena,
			struct ber_view *ndn);

/*
 * Figures of every open database (LMDB, entry and IDL caches) into
 * out[0..max); returns the number of databases. Thread-safe (the metrics
 * thread and workers call it); the shape of database_figures_source.
 */
size_t server_gather_databases(void *server, struct database_figures *out, size_t max);

/*
 * Start the /metrics listener if metrics-listen is configured. On failure
 * err names the address. LUMEN_OK, metrics_http_start's errors.
 */
int server_metrics_start(struct server *s, char *err, size_t errlen);

/*
 * The database holding ndn (at or below one of its suffixes; the longest
 * suffix wins), else the server's own one holding it (the root DSE for "",
 * cn=Subschema, cn=Monitor: own_databases.h), or NULL.
 */
const struct server_database *server_find_database(const struct server *s,
						   struct ber_view ndn);

#endif
