/*
 * metrics_http.h — a small HTTP/1.1 listener on libevent (one answer per
 * connection) that serves GET /metrics in the Prometheus text exposition
 * format (server layer).
 *
 * What it publishes, from stats.h and the server's database figures:
 *   lumen_build_info{version}                              gauge (1)
 *   lumen_start_time_seconds                               gauge
 *   lumen_connections_current / lumen_connections_total    gauge / counter
 *   lumen_connection_memory_{bytes,peak_bytes,limit_bytes} gauges  (conn_memory.h,
 *   lumen_connection_memory_{base,queued,output}_bytes     gauges   with options.memory)
 *   lumen_connection_memory_waiting                        gauge
 *   lumen_connection_memory_{waits,wakeups,refused}_total  counters
 *   lumen_operations_initiated_total{type}                 counter
 *   lumen_operations_total{type,result,code}               counter (completed)
 *   lumen_bytes_{sent,received}_total, lumen_pdus_{sent,received}_total,
 *   lumen_entries_sent_total, lumen_referrals_sent_total    counters
 *   lumen_operation_duration_seconds{type}                 histogram
 *   lumen_stage_duration_seconds{stage}                    histogram
 *   lumen_{entry,idl}_cache_{hits,misses,evictions}_total{database} counters
 *   lumen_{entry,idl}_cache_{size,capacity}{database}      gauges
 *   lumen_lmdb_{map_size_bytes,page_size_bytes,pages_used,readers_used,
 *   readers_max}{database}, lumen_database_entries{database} gauges
 * Histogram bounds are the 1-2-5 series from 1 µs to 100 s; an observation
 * exactly on a bound is counted in the next bucket (the internal buckets
 * are half-open), which no scrape can tell apart.
 *
 * Any other path is 404; another method on /metrics is 405 (Allow: GET);
 * a method HTTP does not define is 501; a malformed request line 400; a
 * request head over 8 KiB 431. Every answer closes the connection
 * (Connection: close); a request body is never read.
 *
 * Bounds, since the port may be reachable by more than the operator: at
 * most max_connections clients at once (more wait in the kernel's backlog
 * until one leaves), and one deadline per connection from accept to the
 * end of its answer (timeout_seconds; bytes dripped slowly do not extend
 * it). When accept fails for want of descriptors or memory (EMFILE,
 * ENFILE, ENOBUFS, ENOMEM) the listener pauses for 100 ms at a time
 * instead of spinning, and logs that once until an accept succeeds again.
 *
 * Threads: with options.base NULL the listener runs its own event_base on
 * its own thread; otherwise it is added to the given base and served by
 * whoever runs that base. Each scrape takes a stats_snapshot and calls the
 * database figures source on that thread (the source must be thread-safe).
 *
 * Ownership: metrics_http_start allocates the listener; metrics_http_stop
 * closes the socket, joins its thread and frees it. The stats object and
 * the source's context (and options.memory) are borrowed and must outlive it.
 *
 * Caveats:
 *  - With an external base, metrics_http_stop must run on that base's
 *    thread (or after the base stopped running).
 *  - No TLS and no authentication: bind it to loopback (the default) or
 *    protect it with a firewall.
 */
#ifndef LUMEN_METRICS_HTTP_H
#define LUMEN_METRICS_HTTP_H

#include <stdint.h>

#include "conn_memory.h"
#include "stats.h"

struct event_base;
struct evbuffer;
struct metrics_http;

#define METRICS_HTTP_DEFAULT_ADDRESS "127.0.0.1"
#define METRICS_HTTP_DEFAULT_PORT 9330
#define METRICS_HTTP_DEFAULT_MAX_CONNECTIONS 16u
#define METRICS_HTTP_DEFAULT_TIMEOUT 10u

struct metrics_http_options {
	const char *address;                        /* NULL: METRICS_HTTP_DEFAULT_ADDRESS */
	uint16_t port;                              /* 0: any free port (tests) */
	struct stats *stats;                        /* required */
	struct database_figures_source databases;   /* gather may be NULL */
	const char *version;                        /* NULL: "unknown" */
	struct event_base *base;                    /* NULL: own thread */
	unsigned max_connections;                   /* 0: METRICS_HTTP_DEFAULT_MAX_CONNECTIONS */
	unsigned timeout_seconds;                   /* 0: METRICS_HTTP_DEFAULT_TIMEOUT */
	const struct conn_memory *memory;           /* NULL: no connection memory figures */
};

/*
 * Bind and start serving. On failure err names the address and the reason.
 * LUMEN_EINVAL (no stats), LUMEN_EIO (bind/listen failed, e.g. the port is
 * in use, or the thread could not start), LUMEN_ENOMEM.
 */
int metrics_http_start(const struct metrics_http_options *options,
		       struct metrics_http **out, char *err, size_t errlen);

/* The port actually bound (useful with port 0). */
uint16_t metrics_http_port(const struct metrics_http *m);

/* Stop serving, join the thread, free everything. NULL is allowed. */
void metrics_http_stop(struct metrics_http *m);

/*
 * Append the whole exposition text to out (what GET /metrics returns).
 * LUMEN_ENOMEM if the buffer cannot grow.
 */
int metrics_render(struct stats *stats, const struct database_figures_source *databases,
		   const struct conn_memory *memory, const char *version, struct evbuffer *out);

#endif
