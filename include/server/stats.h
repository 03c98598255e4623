/*
 * stats.h — operation counters and latency histograms, recorded per thread
 * without locks and merged when someone reads them (server layer).
 *
 * Each worker and I/O thread registers one struct stats_thread and from
 * then on is the only writer of it: a counter update is a relaxed atomic
 * load and store of a word in memory no other thread writes (a plain `mov`
 * on x86, no lock prefix, no shared cache line). A reader (stats_snapshot,
 * from /metrics or a cn=Monitor search) sums every registered thread with
 * relaxed atomic loads, so it never tears a word and never stalls a writer;
 * the sums are a moment's picture, not a transaction (a completed count may
 * briefly run ahead of its histogram's count).
 *
 * Timing an operation: struct op_timing travels with the operation. It
 * starts at the moment the I/O thread queued it; each op_timing_mark(t, S)
 * reads CLOCK_MONOTONIC and charges the time since the previous mark to
 * stage S, so stages that interleave (a search retrieves, filters and
 * encodes entry after entry) add up correctly and the stages always sum to
 * the elapsed time. stats_record_operation files the stage times and the
 * total into log-linear histograms (per operation type for the total, per
 * stage for the stages) and counts the operation by type and result code.
 *
 * Histograms: 1-2-3-...-9 steps per decade from 1 µs to 100 s (nine linear
 * buckets in each power of ten), plus one bucket below 1 µs and one at or
 * above 100 s: relative error under 50 % at a bucket's low end, readable
 * bounds, and every Prometheus bound of the 1-2-5 series is a bucket edge.
 *
 * Ownership: stats_create allocates the struct stats; registered threads'
 * records belong to it and are freed by stats_destroy (after every
 * registered thread has stopped recording). Snapshots are caller memory.
 * Thread-safety: stats_thread_register and stats_snapshot take an internal
 * mutex (rare calls); the recording functions take none and must only be
 * called by the thread that registered the record. Any function taking a
 * struct stats_thread * accepts NULL and then does nothing, so code paths
 * shared with tools or tests need no registration.
 *
 * Caveats:
 *  - The send stage measures the hand-off of the response to the kernel by
 *    the worker; output left queued after EAGAIN is written later by the
 *    I/O thread and its time is not charged to the operation.
 *  - Result codes above STATS_RESULT_CODES - 2 are counted together under
 *    STATS_RESULT_OTHER.
 *  - The thread-local "current" record (stats_current) is per thread, not
 *    per struct stats: a thread registers with one struct stats only.
 */
#ifndef LUMEN_STATS_H
#define LUMEN_STATS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "database.h"

struct mdb_store;

/* The operation types counted (cn=Operations children, metric labels). */
enum stats_op_type {
	STATS_OP_BIND,
	STATS_OP_UNBIND,
	STATS_OP_SEARCH,
	STATS_OP_COMPARE,
	STATS_OP_ADD,
	STATS_OP_DELETE,
	STATS_OP_MODIFY,
	STATS_OP_MODRDN,
	STATS_OP_EXTENDED,
	STATS_OP_ABANDON,
	STATS_OP_COUNT
};

/* Where an operation's time goes, in the order a search meets them. */
enum stats_stage {
	STATS_STAGE_QUEUE,       /* queued until a worker picks it up */
	STATS_STAGE_DECODE,      /* PDU → struct ldap_message, DN normalization */
	STATS_STAGE_ACCESS,      /* access control checks */
	STATS_STAGE_CANDIDATES,  /* index / dn2id lookups */
	STATS_STAGE_ENTRIES,     /* entry retrieval (cache or LMDB) */
	STATS_STAGE_FILTER,      /* filter evaluation */
	STATS_STAGE_ENCODE,      /* response encoding */
	STATS_STAGE_SEND,        /* handing the response to the kernel */
	STATS_STAGE_COUNT
};

/* Where an operation ran (inline_ops.h): to the end on an I/O thread;
 * started there and continued on a worker; queued for a worker at once. */
enum stats_run {
	STATS_RUN_INLINE,
	STATS_RUN_DEFERRED,
	STATS_RUN_QUEUED,
	STATS_RUN_COUNT
};

/* Histogram buckets: [0] < 1 µs, then 9 per decade up to 100 s, then >= 100 s. */
#define STATS_HISTOGRAM_DECADES 8
#define STATS_HISTOGRAM_BUCKETS (1 + 9 * STATS_HISTOGRAM_DECADES + 1)

/* Result codes tracked one by one; larger codes share the last slot. */
#define STATS_RESULT_CODES 128
#define STATS_RESULT_OTHER (STATS_RESULT_CODES - 1)

/* Per-thread counters; written only by their thread (see the contract). */
struct stats_histogram_cells {
	_Atomic uint64_t buckets[STATS_HISTOGRAM_BUCKETS];
	_Atomic uint64_t count;
	_Atomic uint64_t sum_ns;
};

struct stats_thread {
	struct stats_thread *next;                      /* registration list */
	_Atomic uint64_t initiated[STATS_OP_COUNT];
	_Atomic uint64_t completed[STATS_OP_COUNT];
	_Atomic uint64_t results[STATS_OP_COUNT][STATS_RESULT_CODES];
	struct stats_histogram_cells op_duration[STATS_OP_COUNT];
	struct stats_histogram_cells stage_duration[STATS_STAGE_COUNT];
	_Atomic uint64_t bytes_sent, bytes_received;
	_Atomic uint64_t pdus_sent, pdus_received;
	_Atomic uint64_t entries_sent, referrals_sent;
	_Atomic uint64_t connections_opened, connections_closed;
	_Atomic uint64_t dispatched[STATS_RUN_COUNT];
	_Atomic uint64_t polled_reads;  /* input an I/O thread's busy poll found */
};

struct stats;

/* A merged histogram (plain numbers). */
struct stats_histogram {
	uint64_t buckets[STATS_HISTOGRAM_BUCKETS];
	uint64_t count;
	uint64_t sum_ns;
};

/* Every thread's counters summed at one moment. About 21 KiB. */
struct stats_snapshot {
	uint64_t initiated[STATS_OP_COUNT];
	uint64_t completed[STATS_OP_COUNT];
	uint64_t results[STATS_OP_COUNT][STATS_RESULT_CODES];
	struct stats_histogram op_duration[STATS_OP_COUNT];
	struct stats_histogram stage_duration[STATS_STAGE_COUNT];
	uint64_t bytes_sent, bytes_received;
	uint64_t pdus_sent, pdus_received;
	uint64_t entries_sent, referrals_sent;
	uint64_t connections_total;     /* accepted since start */
	uint64_t connections_current;   /* open now */
	uint64_t dispatched[STATS_RUN_COUNT];   /* operations by where they ran */
	uint64_t polled_reads;                  /* input found by busy polls */
	time_t start_time;              /* wall clock at stats_create */
};

/* An operation's stage times (nanoseconds); a plain value, one owner. */
struct op_timing {
	uint64_t start_ns;                    /* when it was queued */
	uint64_t last_ns;                     /* the latest mark */
	uint64_t stage_ns[STATS_STAGE_COUNT];
	uint32_t stages_marked;               /* bit per stage that was marked */
};

/* ------------------------------------------------------------ lifecycle */

/* A new, empty statistics object; start time = now. LUMEN_ENOMEM. */
int stats_create(struct stats **out);
/* Frees it and every registered record; NULL is allowed. */
void stats_destroy(struct stats *s);

/*
 * Register the calling thread: *out is its record, also returned by
 * stats_current() on this thread from now on. Records are never
 * unregistered, so a stopped thread's counts stay in the totals.
 * LUMEN_ENOMEM.
 */
int stats_thread_register(struct stats *s, struct stats_thread **out);
/* The calling thread's registered record, or NULL. */
struct stats_thread *stats_current(void);

/* Sum every thread into *out. Never fails. */
void stats_snapshot(struct stats *s, struct stats_snapshot *out);

/* ------------------------------------------------------------- timing */

/* CLOCK_MONOTONIC now, and a timespec from it, in nanoseconds. */
uint64_t stats_now_ns(void);
uint64_t stats_timespec_ns(const struct timespec *ts);

/* Start timing at queued_ns (0: now). Clears every stage. */
void op_timing_start(struct op_timing *t, uint64_t queued_ns);
/* Charge the time since the previous mark (or the start) to stage. */
void op_timing_mark(struct op_timing *t, enum stats_stage stage);
/* From the start to the latest mark. */
uint64_t op_timing_elapsed_ns(const struct op_timing *t);

/*
 * The slow-operation breakdown for the access log:
 * "qtime=0.000012 decode=... acl=... candidates=... entries=... filter=...
 * encode=... send=... etime=0.012345" (seconds, 6 decimals). Returns the
 * length snprintf would have written (>= len means truncated).
 */
int op_timing_format(const struct op_timing *t, char *buf, size_t len);
/* True if the operation took at least threshold_ns (0 = never slow). */
bool op_timing_is_slow(const struct op_timing *t, uint64_t threshold_ns);

/* ---------------------------------------------------------- recording */

/* protocolOp request tag → type; -1 for tags that are not requests. */
int stats_op_type_of_tag(int request_tag);
/* "bind", "search", ... (metric labels); "unknown" outside the enum. */
const char *stats_op_type_name(enum stats_op_type type);
/* "Bind", "Search", ... (cn=Operations children's RDN values). */
const char *stats_op_type_title(enum stats_op_type type);
/* "queue", "decode", "acl", "candidates", ... */
const char *stats_stage_name(enum stats_stage stage);

/* An operation of this type was taken off the wire. */
void stats_operation_initiated(struct stats_thread *t, enum stats_op_type type);
/*
 * The operation ended with result_code (an LDAP result code; abandon and
 * unbind pass 0): counts it completed and files its timing (t may be NULL
 * for types that are not timed).
 */
void stats_record_operation(struct stats_thread *t, enum stats_op_type type,
			    int result_code, const struct op_timing *timing);
/*
 * The two halves of stats_record_operation, for a server that counts the
 * operation complete before its last response leaves (so a client that
 * saw the response also sees the count in cn=Monitor or /metrics) and
 * files the timing, send stage included, just after.
 */
void stats_record_completion(struct stats_thread *t, enum stats_op_type type,
			     int result_code);
void stats_record_timing(struct stats_thread *t, enum stats_op_type type,
			 const struct op_timing *timing);

void stats_count_received(struct stats_thread *t, uint64_t bytes, uint64_t pdus);
void stats_count_sent(struct stats_thread *t, uint64_t bytes, uint64_t pdus);
void stats_count_entries_sent(struct stats_thread *t, uint64_t entries, uint64_t referrals);
/* One operation ran (or was queued to run) as `run` says. */
void stats_count_dispatch(struct stats_thread *t, enum stats_run run);
/* Readable connections an I/O thread found while polling (io_thread.c). */
void stats_count_polled(struct stats_thread *t, uint64_t reads);
void stats_connection_opened(struct stats_thread *t);
void stats_connection_closed(struct stats_thread *t);

/* ---------------------------------------------------------- histograms */

/* The bucket a duration falls into. */
size_t stats_histogram_bucket(uint64_t ns);
/* Exclusive upper bound of bucket i in ns (UINT64_MAX for the last). */
uint64_t stats_histogram_upper_ns(size_t i);
/* Observations below upper_ns (a bucket edge), for cumulative le buckets. */
uint64_t stats_histogram_count_below(const struct stats_histogram *h, uint64_t upper_ns);

/* ------------------------------------------------- database figures */

/*
 * The server's source of database figures: fill out[0..max) and return the
 * number of databases (which may exceed max: call again with more room).
 * Called from the metrics thread and from workers: must be thread-safe.
 */
struct database_figures_source {
	size_t (*gather)(void *ctx, struct database_figures *out, size_t max);
	void *ctx;
};

#endif
