/*
 * workq.h — the bounded work queue and the worker threads behind it
 * (server layer).
 *
 * Jobs are intrusive: the caller embeds a struct workq_job in its own object
 * (an operation) and the queue links it, so queueing allocates nothing. Each
 * worker thread gets its own context from worker_start (per-worker scratch:
 * an arena, a BER writer) that is handed to every job it runs and released
 * by worker_stop when the thread ends.
 *
 * Ownership: the queue owns its threads; it never owns jobs — a job's run
 * function is responsible for its object. workq_destroy after workq_shutdown
 * frees the queue.
 * Thread-safety: workq_push, workq_push_chain and workq_length may be
 * called from any thread; workq_shutdown and workq_destroy from one
 * controlling thread.
 *
 * Caveats:
 *  - workq_shutdown drains: jobs already queued still run before the
 *    workers exit, so every job's run function is called exactly once.
 *  - A full queue refuses the job (LUMEN_EFULL) instead of blocking the
 *    caller: an I/O thread must never wait on workers.
 *  - At most `threads` workers run jobs at once, but a job may step out of
 *    that count while it waits for something other than the CPU
 *    (workq_blocking_begin/end: a write waiting for its group commit), and
 *    one of `spare_threads` more threads takes the next job meanwhile, so
 *    more writes share a commit's sync (4 workers, 16 connections adding
 *    entries: 8 writes per commit instead of 2, twice the adds a second).
 *  - Wake-ups are counted, not broadcast: a push wakes a parked worker only
 *    when more jobs are queued than workers are between jobs (those look
 *    at the queue before they park), so a busy pool takes jobs without
 *    any system call. Push after releasing locks a job's run function
 *    takes: a woken worker would block on them at once.
 */
#ifndef LUMEN_WORKQ_H
#define LUMEN_WORKQ_H

#include <stddef.h>

struct workq_job {
	struct workq_job *next;   /* owned by the queue while queued */
	void (*run)(struct workq_job *job, void *worker_context);
};

struct workq_config {
	unsigned threads;         /* >= 1: jobs run at once, not counting blocking sections */
	unsigned spare_threads;   /* threads more, for jobs taken while others block */
	size_t capacity;          /* max queued (not running) jobs, >= 1 */
	/* Called in each worker thread before its first job; NULL result means
	 * the worker cannot start (workq_create then fails). May be NULL. */
	void *(*worker_start)(void *arg, unsigned worker_index);
	/* Called in the worker thread as it exits. May be NULL. */
	void (*worker_stop)(void *arg, void *worker_context);
	void *arg;
};

struct workq;

/*
 * Create the queue and start its threads (with all signals blocked in them).
 * LUMEN_EINVAL for a bad config, LUMEN_ENOMEM, LUMEN_EIO (a thread could not
 * start or worker_start failed; already started threads are stopped).
 */
int workq_create(const struct workq_config *config, struct workq **out);

/* Queue a job. LUMEN_EFULL at capacity, LUMEN_EINVAL after workq_shutdown. */
int workq_push(struct workq *q, struct workq_job *job);

/*
 * Queue a chain of jobs linked through their next fields, under one lock,
 * waking as many parked workers as the queue now needs. Returns the jobs
 * that were refused (capacity reached, or after workq_shutdown), chained
 * in their original order; NULL when all were queued.
 */
struct workq_job *workq_push_chain(struct workq *q, struct workq_job *chain);

/*
 * Called by a job's run function around a wait that does not use the CPU:
 * the worker does not count against `threads` in between, so a spare
 * thread may take a queued job. No-ops on a thread that is not one of q's
 * workers (an I/O thread, a replication consumer). Pair them on one thread.
 * The wait must not be for another job of q: once workq_shutdown runs, a
 * spare that finds `threads` jobs running ends instead of parking, so
 * there may be no thread left to take that job (a write waits for the
 * committer thread, which is not a job).
 */
void workq_blocking_begin(struct workq *q);
void workq_blocking_end(struct workq *q);

/* Jobs queued and not yet taken by a worker. */
size_t workq_length(struct workq *q);

/* Refuse new jobs, run the queued ones, join the threads. Idempotent. */
void workq_shutdown(struct workq *q);

/* Shut down if needed and free the queue. NULL is allowed. */
void workq_destroy(struct workq *q);

#endif
