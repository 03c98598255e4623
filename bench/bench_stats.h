/*
 * bench_stats.h — what one lumenbench run counted (bench).
 *
 * Each client thread fills its own struct bench_stats without locks; the
 * main thread merges them when the threads are done. Latencies are in
 * nanoseconds, one histogram per operation kind.
 *
 * Ownership: plain values (about 300 KiB: allocate, don't put on a stack).
 * Thread-safety: none; one per thread, merged after join.
 * Caveats:
 *  - only operations that complete inside the measured window are counted
 *    in latency/ops/results; completed_total counts every operation that
 *    completed at all (warm-up and drain too), which is what a server log
 *    shows.
 */
#ifndef LUMEN_BENCH_STATS_H
#define LUMEN_BENCH_STATS_H

#include <stdint.h>

#include "histogram.h"
#include "workload.h"

/* Result codes 0..127 are counted one by one, anything above in the last. */
#define BENCH_RESULT_SLOTS 129

struct bench_stats {
	struct histogram latency[BENCH_OP_COUNT];
	uint64_t ops[BENCH_OP_COUNT];         /* measured, any result */
	uint64_t failed[BENCH_OP_COUNT];      /* measured, result not a success */
	uint64_t results[BENCH_RESULT_SLOTS]; /* measured final result codes */
	uint64_t completed_total;             /* every completed op, any phase */
	uint64_t entries;                     /* search entries received (measured) */
	uint64_t connections_opened;
	uint64_t connect_errors;              /* refused, reset while connecting */
	uint64_t connections_lost;            /* closed or reset under us */
	uint64_t protocol_errors;             /* unparsable or unexpected PDUs */
	uint64_t lost_ops;                    /* outstanding when a connection died */
	uint64_t encode_errors;               /* a template or filter did not encode */
	uint64_t auth_no_entry;               /* auth search found no entry */
	uint64_t bind_failures;               /* initial/per-connection bind refused */
	/* Fairness: measured operations per connection (bench_stats_count_conn). */
	uint64_t conns_counted;
	uint64_t conn_ops_min, conn_ops_max;
	uint64_t conns_starved;               /* completed nothing while measured */
};

/* Zero everything. Cannot fail. */
void bench_stats_init(struct bench_stats *s);
/* Add from into into. Cannot fail. */
void bench_stats_merge(struct bench_stats *into, const struct bench_stats *from);
/* Count one connection's measured operations into the fairness figures. */
void bench_stats_count_conn(struct bench_stats *s, uint64_t measured_ops);
/* Slot of a result code in results[]. */
unsigned bench_result_slot(int code);
/* True for the codes a benchmark counts as success (0, compareFalse/True). */
int bench_result_is_success(int code);

#endif
