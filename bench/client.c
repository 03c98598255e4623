/*
 * client.c — threads, scheduling and the measured window (see client.h).
 */
#include "client.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "engine.h"
#include "lumen_error.h"
#include "procstat.h"

uint64_t bench_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

bool thread_measuring(const struct bench_thread *t)
{
	return atomic_load_explicit(&t->shared->phase, memory_order_relaxed) ==
	       PHASE_MEASURE;
}

static const struct bench_config *config_of(const struct bench_thread *t)
{
	return t->shared->config;
}

static void push_idle(struct bench_thread *t, struct bench_conn *c)
{
	if (!c->idle_listed) {
		c->idle_listed = true;
		t->idle[t->n_idle++] = c;
	}
}

/* Fixed rate: start every operation that is due on an idle connection. */
static void dispatch_due(struct bench_thread *t)
{
	uint64_t now = bench_now_ns();
	unsigned depth = config_of(t)->depth;
	while (!t->stopping && t->n_idle > 0 && t->next_due_ns <= now) {
		struct bench_conn *c = t->idle[--t->n_idle];
		c->idle_listed = false;
		if (c->state != CONN_READY || c->outstanding >= depth)
			continue;
		/* Latency counts from when the op was due, not when it left. */
		conn_issue(c, t->next_due_ns);
		t->next_due_ns += t->interval_ns;
		if (c->outstanding < depth)
			push_idle(t, c);
		conn_send(c);
	}
}

static unsigned in_flight(const struct bench_thread *t)
{
	unsigned n = 0;
	for (unsigned i = 0; i < t->n_conns; i++)
		n += t->conns[i].outstanding;
	return n;
}

static void finish_all(struct bench_thread *t)
{
	for (unsigned i = 0; i < t->n_conns; i++)
		conn_finish(&t->conns[i]);
	event_del(t->tick_event);
	event_base_loopbreak(t->base);
}

static void check_drained(struct bench_thread *t)
{
	if (in_flight(t) == 0)
		finish_all(t);
}

void thread_conn_ready(struct bench_thread *t, struct bench_conn *c)
{
	const struct bench_config *cfg = config_of(t);
	if (t->stopping)
		return;
	if (c->fresh_op_pending) {
		c->fresh_op_pending = false;
		conn_issue(c, c->fresh_op_start_ns);
	} else if (cfg->rate > 0) {
		push_idle(t, c);
		dispatch_due(t);
		return;
	} else {
		uint64_t now = bench_now_ns();
		while (c->outstanding < cfg->depth && c->state == CONN_READY) {
			unsigned before = c->outstanding;
			conn_issue(c, now);
			if (c->outstanding == before)
				break;   /* could not encode: don't spin */
		}
	}
	conn_send(c);
}

void thread_op_done(struct bench_thread *t, struct bench_conn *c)
{
	const struct bench_config *cfg = config_of(t);
	if (t->stopping) {
		check_drained(t);
		return;
	}
	if (c->state != CONN_READY)
		return;
	if (cfg->reuse_percent < 100 &&
	    bench_draw_next(&t->chooser) % 100 >= cfg->reuse_percent) {
		conn_reopen(c, cfg->rate <= 0, bench_now_ns());
		return;
	}
	if (cfg->rate > 0) {
		push_idle(t, c);
		dispatch_due(t);
	} else {
		/* Sent with the rest of this read's requests by the caller. */
		conn_issue(c, bench_now_ns());
	}
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct bench_thread *t = arg;
	(void)fd;
	(void)what;
	int phase = atomic_load_explicit(&t->shared->phase, memory_order_relaxed);
	if (phase == PHASE_STOP && !t->stopping) {
		t->stopping = true;
		t->drain_deadline_ns = bench_now_ns() +
			(uint64_t)(config_of(t)->drain_seconds * 1e9);
		check_drained(t);
		return;
	}
	if (t->stopping) {
		if (bench_now_ns() >= t->drain_deadline_ns) {
			t->stats->lost_ops += in_flight(t);
			finish_all(t);
		}
		return;
	}
	if (config_of(t)->rate > 0)
		dispatch_due(t);
}

static void *thread_main(void *arg)
{
	struct bench_thread *t = arg;
	t->next_due_ns = bench_now_ns();
	for (unsigned i = 0; i < t->n_conns; i++)
		conn_open(&t->conns[i]);
	if (event_base_dispatch(t->base) < 0)
		t->rc = LUMEN_EIO;
	for (unsigned i = 0; i < t->n_conns; i++)
		bench_stats_count_conn(t->stats, t->conns[i].measured_ops);
	return NULL;
}

static void thread_free(struct bench_thread *t)
{
	for (unsigned i = 0; t->conns != NULL && i < t->n_conns; i++)
		conn_teardown(&t->conns[i]);
	free(t->conns);
	free(t->idle);
	if (t->tick_event != NULL)
		event_free(t->tick_event);
	free(t->stats);
	arena_free(&t->scratch);
	if (t->base != NULL)
		event_base_free(t->base);
}

static int thread_init(struct bench_thread *t, unsigned index, unsigned n_conns,
		       struct bench_shared *shared)
{
	const struct bench_config *cfg = shared->config;
	memset(t, 0, sizeof(*t));
	arena_init(&t->scratch, 0);
	t->index = index;
	t->shared = shared;
	t->n_conns = n_conns;
	bench_draw_init(&t->draw, cfg->fill, cfg->seed * 1000003u + index,
			&cfg->workload->search_sequence);
	bench_draw_init(&t->chooser, BENCH_FILL_RANDOM, ~cfg->seed + index, NULL);
	if (cfg->rate > 0)
		t->interval_ns = (uint64_t)(1e9 * cfg->threads / cfg->rate);
	struct event_config *ec = event_config_new();
	if (ec == NULL)
		return LUMEN_ENOMEM;
	/* One loop per thread, never shared: no locking needed inside. */
	event_config_set_flag(ec, EVENT_BASE_FLAG_NOLOCK);
	t->base = event_base_new_with_config(ec);
	event_config_free(ec);
	t->stats = malloc(sizeof(*t->stats));
	t->conns = calloc(n_conns, sizeof(*t->conns));
	t->idle = calloc(n_conns, sizeof(*t->idle));
	if (t->base == NULL || t->stats == NULL || t->conns == NULL || t->idle == NULL)
		return LUMEN_ENOMEM;
	bench_stats_init(t->stats);
	for (unsigned i = 0; i < n_conns; i++) {
		int rc = conn_setup(&t->conns[i], t);
		if (rc != LUMEN_OK)
			return rc;
	}
	struct timeval period = { 0, cfg->rate > 0 ? 1000 : 10000 };
	t->tick_event = event_new(t->base, -1, EV_PERSIST, on_tick, t);
	if (t->tick_event == NULL || event_add(t->tick_event, &period) != 0)
		return LUMEN_ENOMEM;
	return LUMEN_OK;
}

static void sleep_seconds(double seconds)
{
	struct timespec ts = { (time_t)seconds,
			       (long)((seconds - (double)(time_t)seconds) * 1e9) };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static double rusage_seconds(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

static int validate(const struct bench_config *cfg)
{
	if (cfg->connections == 0 || cfg->threads == 0 ||
	    cfg->threads > cfg->connections || cfg->depth == 0 ||
	    cfg->reuse_percent > 100 || cfg->rate < 0 ||
	    cfg->duration_seconds <= 0 || cfg->warmup_seconds < 0 ||
	    (cfg->reuse_percent < 100 && cfg->depth != 1))
		return LUMEN_EINVAL;
	return LUMEN_OK;
}

/* Warm up, then measure: flip the phase and time the window. */
static void run_phases(struct bench_shared *shared, struct bench_result *result)
{
	const struct bench_config *cfg = shared->config;
	struct rusage before, after;
	double server_before = 0, server_after = 0;
	sleep_seconds(cfg->warmup_seconds);
	getrusage(RUSAGE_SELF, &before);
	bool server_ok = cfg->server_pid > 0 &&
		procstat_cpu_seconds(cfg->server_pid, &server_before) == LUMEN_OK;
	uint64_t start = bench_now_ns();
	atomic_store(&shared->phase, PHASE_MEASURE);
	sleep_seconds(cfg->duration_seconds);
	atomic_store(&shared->phase, PHASE_STOP);
	uint64_t end = bench_now_ns();
	getrusage(RUSAGE_SELF, &after);
	result->measured_seconds = (double)(end - start) / 1e9;
	result->client_user_seconds = rusage_seconds(&after.ru_utime) -
				      rusage_seconds(&before.ru_utime);
	result->client_system_seconds = rusage_seconds(&after.ru_stime) -
					rusage_seconds(&before.ru_stime);
	if (server_ok &&
	    procstat_cpu_seconds(cfg->server_pid, &server_after) == LUMEN_OK &&
	    procstat_memory(cfg->server_pid, &result->server.rss_kib,
			    &result->server.hwm_kib) == LUMEN_OK) {
		result->server.available = true;
		result->server.cpu_seconds = server_after - server_before;
	}
}

int bench_run(const struct bench_config *config, struct bench_result *result)
{
	struct bench_shared shared = { .config = config };
	struct bench_thread *threads = NULL;
	unsigned started = 0;
	int rc = validate(config);
	if (rc != LUMEN_OK)
		return rc;
	atomic_init(&shared.phase, PHASE_WARMUP);
	threads = calloc(config->threads, sizeof(*threads));
	if (threads == NULL)
		return LUMEN_ENOMEM;
	for (unsigned i = 0; i < config->threads && rc == LUMEN_OK; i++) {
		unsigned share = config->connections / config->threads +
				 (i < config->connections % config->threads ? 1 : 0);
		rc = thread_init(&threads[i], i, share, &shared);
	}
	pthread_t *ids = rc == LUMEN_OK ? calloc(config->threads, sizeof(*ids)) : NULL;
	if (rc == LUMEN_OK && ids == NULL)
		rc = LUMEN_ENOMEM;
	for (; rc == LUMEN_OK && started < config->threads; started++)
		if (pthread_create(&ids[started], NULL, thread_main, &threads[started]) != 0)
			rc = LUMEN_EIO;
	if (rc == LUMEN_OK)
		run_phases(&shared, result);
	else
		atomic_store(&shared.phase, PHASE_STOP);
	for (unsigned i = 0; i < started; i++) {
		pthread_join(ids[i], NULL);
		bench_stats_merge(result->stats, threads[i].stats);
		if (rc == LUMEN_OK && threads[i].rc != LUMEN_OK)
			rc = threads[i].rc;
	}
	free(ids);
	for (unsigned i = 0; i < config->threads; i++)
		thread_free(&threads[i]);
	free(threads);
	return rc;
}
