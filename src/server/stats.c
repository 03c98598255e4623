/*
 * stats.c — per-thread counters and histograms, merged on read.
 */
#include "stats.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldap_message.h"
#include "lumen_error.h"

struct stats {
	pthread_mutex_t lock;          /* guards the list, not the counters */
	struct stats_thread *threads;
	time_t start_time;
};

static _Thread_local struct stats_thread *current_thread;

/* ---------------------------------------------------------------- cells */

/*
 * Only the owning thread writes a cell, so load + store is an exact
 * increment; the atomics only keep readers from seeing torn words.
 */
static inline void cell_add(_Atomic uint64_t *cell, uint64_t n)
{
	uint64_t v = atomic_load_explicit(cell, memory_order_relaxed);
	atomic_store_explicit(cell, v + n, memory_order_relaxed);
}

static inline uint64_t cell_read(_Atomic uint64_t *cell)
{
	return atomic_load_explicit(cell, memory_order_relaxed);
}

/* ----------------------------------------------------------- lifecycle */

int stats_create(struct stats **out)
{
	struct stats *s = calloc(1, sizeof(*s));
	*out = NULL;
	if (s == NULL)
		return LUMEN_ENOMEM;
	if (pthread_mutex_init(&s->lock, NULL) != 0) {
		free(s);
		return LUMEN_ENOMEM;
	}
	s->start_time = time(NULL);
	*out = s;
	return LUMEN_OK;
}

void stats_destroy(struct stats *s)
{
	if (s == NULL)
		return;
	struct stats_thread *t = s->threads;
	while (t != NULL) {
		struct stats_thread *next = t->next;
		if (current_thread == t)
			current_thread = NULL;
		free(t);
		t = next;
	}
	pthread_mutex_destroy(&s->lock);
	free(s);
}

int stats_thread_register(struct stats *s, struct stats_thread **out)
{
	/* calloc zeroes the atomics: all-bits-zero is 0 for atomic integers here. */
	struct stats_thread *t = calloc(1, sizeof(*t));
	*out = NULL;
	if (t == NULL)
		return LUMEN_ENOMEM;
	pthread_mutex_lock(&s->lock);
	t->next = s->threads;
	s->threads = t;
	pthread_mutex_unlock(&s->lock);
	current_thread = t;
	*out = t;
	return LUMEN_OK;
}

struct stats_thread *stats_current(void)
{
	return current_thread;
}

/* ------------------------------------------------------------ snapshot */

static void merge_counters(_Atomic uint64_t *from, uint64_t *into, size_t n)
{
	for (size_t i = 0; i < n; i++)
		into[i] += cell_read(&from[i]);
}

static void merge_histogram(struct stats_histogram_cells *from, struct stats_histogram *into)
{
	merge_counters(from->buckets, into->buckets, STATS_HISTOGRAM_BUCKETS);
	into->count += cell_read(&from->count);
	into->sum_ns += cell_read(&from->sum_ns);
}

static void merge_thread(struct stats_thread *t, struct stats_snapshot *out)
{
	merge_counters(t->initiated, out->initiated, STATS_OP_COUNT);
	merge_counters(t->completed, out->completed, STATS_OP_COUNT);
	for (size_t i = 0; i < STATS_OP_COUNT; i++) {
		merge_counters(t->results[i], out->results[i], STATS_RESULT_CODES);
		merge_histogram(&t->op_duration[i], &out->op_duration[i]);
	}
	for (size_t i = 0; i < STATS_STAGE_COUNT; i++)
		merge_histogram(&t->stage_duration[i], &out->stage_duration[i]);
	out->bytes_sent += cell_read(&t->bytes_sent);
	out->bytes_received += cell_read(&t->bytes_received);
	out->pdus_sent += cell_read(&t->pdus_sent);
	out->pdus_received += cell_read(&t->pdus_received);
	out->entries_sent += cell_read(&t->entries_sent);
	out->referrals_sent += cell_read(&t->referrals_sent);
	merge_counters(t->dispatched, out->dispatched, STATS_RUN_COUNT);
	out->polled_reads += cell_read(&t->polled_reads);
	out->connections_total += cell_read(&t->connections_opened);
	/* closed counts are folded in by the caller: the sums must be complete first */
}

void stats_snapshot(struct stats *s, struct stats_snapshot *out)
{
	uint64_t closed = 0;
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&s->lock);
	for (struct stats_thread *t = s->threads; t != NULL; t = t->next) {
		merge_thread(t, out);
		closed += cell_read(&t->connections_closed);
	}
	pthread_mutex_unlock(&s->lock);
	/* A close read before its open (different threads) must not wrap. */
	out->connections_current = out->connections_total > closed
					   ? out->connections_total - closed : 0;
	out->start_time = s->start_time;
}

/* -------------------------------------------------------------- timing */

uint64_t stats_timespec_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

uint64_t stats_now_ns(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return stats_timespec_ns(&now);
}

void op_timing_start(struct op_timing *t, uint64_t queued_ns)
{
	memset(t, 0, sizeof(*t));
	t->start_ns = queued_ns != 0 ? queued_ns : stats_now_ns();
	t->last_ns = t->start_ns;
}

void op_timing_mark(struct op_timing *t, enum stats_stage stage)
{
	uint64_t now = stats_now_ns();
	if ((unsigned)stage >= STATS_STAGE_COUNT)
		return;
	/* A queued time taken on another CPU may read a hair ahead of ours. */
	if (now > t->last_ns) {
		t->stage_ns[stage] += now - t->last_ns;
		t->last_ns = now;
	}
	t->stages_marked |= 1u << stage;
}

uint64_t op_timing_elapsed_ns(const struct op_timing *t)
{
	return t->last_ns - t->start_ns;
}

bool op_timing_is_slow(const struct op_timing *t, uint64_t threshold_ns)
{
	return threshold_ns != 0 && op_timing_elapsed_ns(t) >= threshold_ns;
}

/* Seconds with 6 decimals without going through double: exact and cheap. */
static int format_seconds(char *buf, size_t len, const char *name, uint64_t ns,
			  const char *separator)
{
	uint64_t micro = ns / 1000u;
	return snprintf(buf, len, "%s=%llu.%06llu%s", name,
			(unsigned long long)(micro / 1000000u),
			(unsigned long long)(micro % 1000000u), separator);
}

int op_timing_format(const struct op_timing *t, char *buf, size_t len)
{
	int total = 0;
	for (size_t i = 0; i <= STATS_STAGE_COUNT; i++) {
		bool last = i == STATS_STAGE_COUNT;
		const char *name = last ? "etime"
			: i == STATS_STAGE_QUEUE ? "qtime" : stats_stage_name((enum stats_stage)i);
		uint64_t ns = last ? op_timing_elapsed_ns(t) : t->stage_ns[i];
		size_t used = (size_t)total < len ? (size_t)total : len;
		int n = format_seconds(buf != NULL ? buf + used : NULL, len - used, name, ns,
				       last ? "" : " ");
		if (n < 0)
			return n;
		total += n;
	}
	return total;
}

/* ------------------------------------------------------------- names */

static const struct {
	int request_tag;
	const char *name;
	const char *title;
} op_types[STATS_OP_COUNT] = {
	[STATS_OP_BIND] = { LDAP_OP_BIND_REQUEST, "bind", "Bind" },
	[STATS_OP_UNBIND] = { LDAP_OP_UNBIND_REQUEST, "unbind", "Unbind" },
	[STATS_OP_SEARCH] = { LDAP_OP_SEARCH_REQUEST, "search", "Search" },
	[STATS_OP_COMPARE] = { LDAP_OP_COMPARE_REQUEST, "compare", "Compare" },
	[STATS_OP_ADD] = { LDAP_OP_ADD_REQUEST, "add", "Add" },
	[STATS_OP_DELETE] = { LDAP_OP_DELETE_REQUEST, "delete", "Delete" },
	[STATS_OP_MODIFY] = { LDAP_OP_MODIFY_REQUEST, "modify", "Modify" },
	[STATS_OP_MODRDN] = { LDAP_OP_MODDN_REQUEST, "modrdn", "Modrdn" },
	[STATS_OP_EXTENDED] = { LDAP_OP_EXTENDED_REQUEST, "extended", "Extended" },
	[STATS_OP_ABANDON] = { LDAP_OP_ABANDON_REQUEST, "abandon", "Abandon" },
};

static const char *const stage_names[STATS_STAGE_COUNT] = {
	[STATS_STAGE_QUEUE] = "queue",
	[STATS_STAGE_DECODE] = "decode",
	[STATS_STAGE_ACCESS] = "acl",
	[STATS_STAGE_CANDIDATES] = "candidates",
	[STATS_STAGE_ENTRIES] = "entries",
	[STATS_STAGE_FILTER] = "filter",
	[STATS_STAGE_ENCODE] = "encode",
	[STATS_STAGE_SEND] = "send",
};

int stats_op_type_of_tag(int request_tag)
{
	for (int i = 0; i < STATS_OP_COUNT; i++)
		if (op_types[i].request_tag == request_tag)
			return i;
	return -1;
}

const char *stats_op_type_name(enum stats_op_type type)
{
	return (unsigned)type < STATS_OP_COUNT ? op_types[type].name : "unknown";
}

const char *stats_op_type_title(enum stats_op_type type)
{
	return (unsigned)type < STATS_OP_COUNT ? op_types[type].title : "Unknown";
}

const char *stats_stage_name(enum stats_stage stage)
{
	return (unsigned)stage < STATS_STAGE_COUNT ? stage_names[stage] : "unknown";
}

/* ---------------------------------------------------------- histograms */

/* 1 µs · 10^d for d = 0 .. STATS_HISTOGRAM_DECADES. */
static const uint64_t decade_ns[STATS_HISTOGRAM_DECADES + 1] = {
	1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull, 100000000ull,
	1000000000ull, 10000000000ull, 100000000000ull,
};

size_t stats_histogram_bucket(uint64_t ns)
{
	if (ns < decade_ns[0])
		return 0;
	for (size_t d = 0; d < STATS_HISTOGRAM_DECADES; d++)
		if (ns < decade_ns[d + 1])
			return 1 + d * 9 + (size_t)(ns / decade_ns[d]) - 1;
	return STATS_HISTOGRAM_BUCKETS - 1;
}

uint64_t stats_histogram_upper_ns(size_t i)
{
	if (i == 0)
		return decade_ns[0];
	if (i >= STATS_HISTOGRAM_BUCKETS - 1)
		return UINT64_MAX;
	size_t d = (i - 1) / 9, step = (i - 1) % 9;
	return decade_ns[d] * (step + 2);
}

uint64_t stats_histogram_count_below(const struct stats_histogram *h, uint64_t upper_ns)
{
	uint64_t n = 0;
	for (size_t i = 0; i < STATS_HISTOGRAM_BUCKETS && stats_histogram_upper_ns(i) <= upper_ns;
	     i++)
		n += h->buckets[i];
	return n;
}

static void histogram_add(struct stats_histogram_cells *h, uint64_t ns)
{
	cell_add(&h->buckets[stats_histogram_bucket(ns)], 1);
	cell_add(&h->count, 1);
	cell_add(&h->sum_ns, ns);
}

/* ----------------------------------------------------------- recording */

void stats_operation_initiated(struct stats_thread *t, enum stats_op_type type)
{
	if (t != NULL && (unsigned)type < STATS_OP_COUNT)
		cell_add(&t->initiated[type], 1);
}

void stats_record_operation(struct stats_thread *t, enum stats_op_type type,
			    int result_code, const struct op_timing *timing)
{
	stats_record_completion(t, type, result_code);
	stats_record_timing(t, type, timing);
}

void stats_record_completion(struct stats_thread *t, enum stats_op_type type,
			     int result_code)
{
	if (t == NULL || (unsigned)type >= STATS_OP_COUNT)
		return;
	size_t code = result_code >= 0 && result_code < STATS_RESULT_OTHER
			      ? (size_t)result_code : STATS_RESULT_OTHER;
	cell_add(&t->completed[type], 1);
	cell_add(&t->results[type][code], 1);
}

void stats_record_timing(struct stats_thread *t, enum stats_op_type type,
			 const struct op_timing *timing)
{
	if (t == NULL || (unsigned)type >= STATS_OP_COUNT || timing == NULL)
		return;
	histogram_add(&t->op_duration[type], op_timing_elapsed_ns(timing));
	for (size_t i = 0; i < STATS_STAGE_COUNT; i++)
		if (timing->stages_marked & (1u << i))
			histogram_add(&t->stage_duration[i], timing->stage_ns[i]);
}

void stats_count_received(struct stats_thread *t, uint64_t bytes, uint64_t pdus)
{
	if (t == NULL)
		return;
	cell_add(&t->bytes_received, bytes);
	cell_add(&t->pdus_received, pdus);
}

void stats_count_sent(struct stats_thread *t, uint64_t bytes, uint64_t pdus)
{
	if (t == NULL)
		return;
	cell_add(&t->bytes_sent, bytes);
	cell_add(&t->pdus_sent, pdus);
}

void stats_count_entries_sent(struct stats_thread *t, uint64_t entries, uint64_t referrals)
{
	if (t == NULL)
		return;
	cell_add(&t->entries_sent, entries);
	cell_add(&t->referrals_sent, referrals);
}

void stats_count_dispatch(struct stats_thread *t, enum stats_run run)
{
	if (t != NULL && run < STATS_RUN_COUNT)
		cell_add(&t->dispatched[run], 1);
}

void stats_count_polled(struct stats_thread *t, uint64_t reads)
{
	if (t != NULL && reads > 0)
		cell_add(&t->polled_reads, reads);
}

void stats_connection_opened(struct stats_thread *t)
{
	if (t != NULL)
		cell_add(&t->connections_opened, 1);
}

void stats_connection_closed(struct stats_thread *t)
{
	if (t != NULL)
		cell_add(&t->connections_closed, 1);
}
