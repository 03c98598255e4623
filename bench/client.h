/*
 * client.h — lumenbench's load engine (bench).
 *
 * bench_run opens the connections, drives them from `threads` threads (each
 * with its own libevent loop over its share of the connections), runs the
 * warm-up and the measured window, drains what is still outstanding, and
 * returns the merged counts. Load shapes: nose-to-tail (a connection issues
 * its next operation as soon as one completes, up to `depth` outstanding),
 * a fixed offered rate (operations start on a schedule; latency is measured
 * from the scheduled start, so a stalled server is not hidden by a waiting
 * client), and connection churn (`reuse_percent` < 100: an operation
 * starts on a fresh connection that is connected, bound, used once and
 * unbound; its latency includes the connect and the bind).
 *
 * Per operation nothing is allocated: connections own recycled input and
 * output buffers, requests are encoded into them from the workload.
 *
 * Ownership: the caller owns config and the workload (shared, read-only
 * except its atomic sequences); *result is filled in and owns nothing.
 * Thread-safety: call bench_run from one thread at a time.
 * Caveats:
 *  - with reuse_percent < 100 the depth is forced to 1.
 *  - auth with depth > 1 binds while other operations are outstanding; RFC
 *    4511 lets a server delay that bind, so prefer depth 1 for auth.
 */
#ifndef LUMEN_BENCH_CLIENT_H
#define LUMEN_BENCH_CLIENT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "bench_stats.h"
#include "template.h"
#include "workload.h"

struct bench_config {
	struct bench_workload *workload;
	struct sockaddr_storage address;
	socklen_t address_len;
	unsigned connections;
	unsigned threads;
	unsigned depth;            /* outstanding operations per connection */
	double rate;               /* offered ops/s over all threads; 0 = nose-to-tail */
	unsigned reuse_percent;    /* 100 = persistent connections */
	bool nagle;                /* leave TCP_NODELAY off (experiment) */
	const char *bind_dn;       /* initial bind; NULL = none (anonymous) */
	const char *bind_password;
	enum bench_fill fill;
	uint64_t seed;
	double warmup_seconds;
	double duration_seconds;
	double drain_seconds;      /* how long to wait for outstanding ops at the end */
	int server_pid;            /* > 0: sample that process's CPU and memory */
};

struct bench_server_figure {
	bool available;
	double cpu_seconds;        /* user + system during the measured window */
	uint64_t rss_kib;          /* VmRSS at the end */
	uint64_t hwm_kib;          /* VmHWM at the end */
};

struct bench_result {
	struct bench_stats *stats;     /* merged; owned by the caller */
	double measured_seconds;
	double client_user_seconds;    /* getrusage over the measured window */
	double client_system_seconds;
	struct bench_server_figure server;
};

/*
 * Run the benchmark. result->stats must point at a zeroed-out struct
 * (bench_stats_init). LUMEN_EINVAL for a nonsense config, LUMEN_ENOMEM,
 * LUMEN_EIO if a thread or event loop cannot be created. Connection
 * failures during the run are counted, not returned.
 */
int bench_run(const struct bench_config *config, struct bench_result *result);

#endif
