/*
 * test_workq.c — the bounded work queue: every job runs exactly once, on a
 * worker with its own context; a full queue refuses; shutdown drains.
 */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>
#include <time.h>

#include "lumen_error.h"
#include "workq.h"

struct counter_job {
	struct workq_job job;
	atomic_int *runs;
	int worker_seen;
	bool blocks;                 /* runs a blocking section (lets a spare in) */
};

static struct workq *counting_queue;   /* the queue count_job blocks in */

static atomic_int contexts_started, contexts_stopped;

static void *start_context(void *arg, unsigned index)
{
	(void)arg;
	atomic_fetch_add(&contexts_started, 1);
	int *ctx = malloc(sizeof(int));
	if (ctx != NULL)
		*ctx = (int)index + 1;
	return ctx;
}

static void stop_context(void *arg, void *ctx)
{
	(void)arg;
	atomic_fetch_add(&contexts_stopped, 1);
	free(ctx);
}

static void count_job(struct workq_job *job, void *ctx)
{
	struct counter_job *j = (struct counter_job *)job;
	j->worker_seen = *(int *)ctx;
	if (j->blocks) {
		workq_blocking_begin(counting_queue);
		usleep(200);
		workq_blocking_end(counting_queue);
	}
	atomic_fetch_add(j->runs, 1);
}

/*
 * Shutdown drains: every queued job runs once, with and without spare
 * threads (with them, one job in ten blocks, so spares take jobs too, and a
 * spare that finds the running count full at shutdown must not strand any).
 */
START_TEST(test_every_job_runs_once)
{
	enum { N = 2000 };
	static const unsigned spares_of_run[] = { 0, 6 };
	unsigned spares = spares_of_run[_i];
	int workers = 4 + (int)spares;
	static struct counter_job jobs[N];
	static atomic_int runs[N];
	struct workq *q = NULL;
	struct workq_config cfg = { .threads = 4, .spare_threads = spares, .capacity = N,
				    .worker_start = start_context, .worker_stop = stop_context };
	atomic_store(&contexts_started, 0);
	atomic_store(&contexts_stopped, 0);
	ck_assert_int_eq(workq_create(&cfg, &q), LUMEN_OK);
	counting_queue = q;
	ck_assert_int_eq(atomic_load(&contexts_started), workers);
	for (int i = 0; i < N; i++) {
		atomic_store(&runs[i], 0);
		jobs[i] = (struct counter_job){ .job.run = count_job, .runs = &runs[i],
						.blocks = spares > 0 && i % 10 == 0 };
		ck_assert_int_eq(workq_push(q, &jobs[i].job), LUMEN_OK);
	}
	workq_shutdown(q);
	for (int i = 0; i < N; i++) {
		ck_assert_int_eq(atomic_load(&runs[i]), 1);
		ck_assert(jobs[i].worker_seen >= 1 && jobs[i].worker_seen <= workers);
	}
	ck_assert_int_eq(atomic_load(&contexts_stopped), workers);
	ck_assert_int_eq(workq_push(q, &jobs[0].job), LUMEN_EINVAL);
	workq_destroy(q);
}
END_TEST

/* A job that blocks its worker until released, to fill the queue. */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static bool gate_open, gate_entered;

static void gate_job(struct workq_job *job, void *ctx)
{
	(void)job;
	(void)ctx;
	pthread_mutex_lock(&gate_lock);
	gate_entered = true;
	pthread_cond_broadcast(&gate_cond);
	while (!gate_open)
		pthread_cond_wait(&gate_cond, &gate_lock);
	pthread_mutex_unlock(&gate_lock);
}

START_TEST(test_full_queue_refuses)
{
	struct workq *q = NULL;
	struct workq_config cfg = { .threads = 1, .capacity = 2 };
	struct workq_job gate = { .run = gate_job };
	atomic_int runs[3];
	struct counter_job jobs[3];
	gate_open = gate_entered = false;
	ck_assert_int_eq(workq_create(&cfg, &q), LUMEN_OK);
	ck_assert_int_eq(workq_push(q, &gate), LUMEN_OK);
	pthread_mutex_lock(&gate_lock);
	while (!gate_entered)
		pthread_cond_wait(&gate_cond, &gate_lock);
	pthread_mutex_unlock(&gate_lock);
	for (int i = 0; i < 3; i++) {
		atomic_store(&runs[i], 0);
		jobs[i] = (struct counter_job){ .job.run = gate_job, .runs = &runs[i] };
	}
	ck_assert_int_eq(workq_push(q, &jobs[0].job), LUMEN_OK);
	ck_assert_int_eq(workq_push(q, &jobs[1].job), LUMEN_OK);
	ck_assert_uint_eq(workq_length(q), 2);
	ck_assert_int_eq(workq_push(q, &jobs[2].job), LUMEN_EFULL);
	/* A chain that does not fit comes back whole, in order. */
	struct counter_job extra[2] = { { .job.run = gate_job }, { .job.run = gate_job } };
	extra[0].job.next = &extra[1].job;
	extra[1].job.next = NULL;
	struct workq_job *refused = workq_push_chain(q, &extra[0].job);
	ck_assert_ptr_eq(refused, &extra[0].job);
	ck_assert_ptr_eq(refused->next, &extra[1].job);
	ck_assert_ptr_null(extra[1].job.next);
	ck_assert_uint_eq(workq_length(q), 2);
	pthread_mutex_lock(&gate_lock);
	gate_open = true;
	pthread_cond_broadcast(&gate_cond);
	pthread_mutex_unlock(&gate_lock);
	workq_destroy(q);
}
END_TEST

/* Chains of jobs from several pushers, as I/O threads queue one read's
 * operations: every job still runs exactly once. */
START_TEST(test_chains_run_once)
{
	enum { N = 3000, CHAIN = 7 };
	static struct counter_job jobs[N];
	static atomic_int runs[N];
	struct workq *q = NULL;
	struct workq_config cfg = { .threads = 3, .capacity = N, .worker_start = start_context,
				    .worker_stop = stop_context };
	ck_assert_int_eq(workq_create(&cfg, &q), LUMEN_OK);
	for (int i = 0; i < N; i += CHAIN) {
		struct workq_job *head = NULL, **tail = &head;
		for (int j = i; j < N && j < i + CHAIN; j++) {
			atomic_store(&runs[j], 0);
			jobs[j] = (struct counter_job){ .job.run = count_job, .runs = &runs[j] };
			*tail = &jobs[j].job;
			tail = &jobs[j].job.next;
		}
		*tail = NULL;
		ck_assert_ptr_null(workq_push_chain(q, head));
	}
	workq_shutdown(q);
	for (int i = 0; i < N; i++)
		ck_assert_int_eq(atomic_load(&runs[i]), 1);
	workq_destroy(q);
}
END_TEST

static void *failing_start(void *arg, unsigned index)
{
	(void)arg;
	return index == 1 ? NULL : malloc(1);
}

static void free_context(void *arg, void *ctx)
{
	(void)arg;
	free(ctx);
}

struct bad_config_case {
	struct workq_config config;
	int rc;
};

static const struct bad_config_case bad_configs[] = {
	{ { .threads = 0, .capacity = 1 }, LUMEN_EINVAL },
	{ { .threads = 1, .capacity = 0 }, LUMEN_EINVAL },
	{ { .threads = 3, .capacity = 4, .worker_start = failing_start,
	    .worker_stop = free_context }, LUMEN_EIO },
};

START_TEST(test_bad_config)
{
	struct workq *q = (struct workq *)1;
	ck_assert_int_eq(workq_create(&bad_configs[_i].config, &q), bad_configs[_i].rc);
	ck_assert_ptr_null(q);
	/* a cleanup path destroys whatever create left: NULL must be a no-op */
	workq_destroy(q);
}
END_TEST

/* Jobs that note how many run at once, outside blocking sections. */
static atomic_int running_now, running_most;

static void busy_job(struct workq_job *job, void *ctx)
{
	(void)job;
	(void)ctx;
	int now = atomic_fetch_add(&running_now, 1) + 1;
	int most = atomic_load(&running_most);
	while (now > most && !atomic_compare_exchange_weak(&running_most, &most, now))
		;
	usleep(2000);
	atomic_fetch_sub(&running_now, 1);
}

/* Spare threads take no job while the workers run without blocking. */
START_TEST(test_spares_idle_unless_blocked)
{
	enum { N = 40 };
	struct workq_job jobs[N];
	struct workq *q = NULL;
	struct workq_config cfg = { .threads = 2, .spare_threads = 6, .capacity = N };
	atomic_store(&running_now, 0);
	atomic_store(&running_most, 0);
	ck_assert_int_eq(workq_create(&cfg, &q), LUMEN_OK);
	/* Not a worker of q: a no-op, the count stays at 2. */
	workq_blocking_begin(q);
	for (int i = 0; i < N; i++) {
		jobs[i] = (struct workq_job){ .run = busy_job };
		ck_assert_int_eq(workq_push(q, &jobs[i]), LUMEN_OK);
	}
	workq_shutdown(q);
	workq_blocking_end(q);
	ck_assert_int_eq(atomic_load(&running_most), 2);
	workq_destroy(q);
}
END_TEST

/*
 * A job that waits in a blocking section for a later job: with one worker
 * it can only finish because a spare thread takes that job meanwhile.
 */
static struct workq *blocking_queue;
static pthread_mutex_t later_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t later_cond = PTHREAD_COND_INITIALIZER;
static bool later_ran, waiter_saw_it;

static void waiting_job(struct workq_job *job, void *ctx)
{
	(void)job;
	(void)ctx;
	struct timespec deadline;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 10;
	workq_blocking_begin(blocking_queue);
	pthread_mutex_lock(&later_lock);
	while (!later_ran &&
	       pthread_cond_timedwait(&later_cond, &later_lock, &deadline) == 0)
		;
	waiter_saw_it = later_ran;
	pthread_mutex_unlock(&later_lock);
	workq_blocking_end(blocking_queue);
}

static void later_job(struct workq_job *job, void *ctx)
{
	(void)job;
	(void)ctx;
	pthread_mutex_lock(&later_lock);
	later_ran = true;
	pthread_cond_broadcast(&later_cond);
	pthread_mutex_unlock(&later_lock);
}

START_TEST(test_blocked_worker_lets_a_spare_run)
{
	struct workq_config cfg = { .threads = 1, .spare_threads = 1, .capacity = 8 };
	struct workq_job waiter = { .run = waiting_job }, later = { .run = later_job };
	later_ran = waiter_saw_it = false;
	ck_assert_int_eq(workq_create(&cfg, &blocking_queue), LUMEN_OK);
	ck_assert_int_eq(workq_push(blocking_queue, &waiter), LUMEN_OK);
	usleep(20000);                 /* the waiter is in its section */
	ck_assert_int_eq(workq_push(blocking_queue, &later), LUMEN_OK);
	workq_shutdown(blocking_queue);
	ck_assert(later_ran);
	ck_assert_msg(waiter_saw_it, "the later job did not run while the worker blocked");
	workq_destroy(blocking_queue);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("workq");
	TCase *tc = tcase_create("workq");
	tcase_add_loop_test(tc, test_every_job_runs_once, 0, 2);
	tcase_add_test(tc, test_full_queue_refuses);
	tcase_add_test(tc, test_chains_run_once);
	tcase_add_test(tc, test_spares_idle_unless_blocked);
	tcase_add_test(tc, test_blocked_worker_lets_a_spare_run);
	tcase_add_loop_test(tc, test_bad_config, 0, sizeof(bad_configs) / sizeof(bad_configs[0]));
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
