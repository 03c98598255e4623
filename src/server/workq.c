/*
 * workq.c — bounded FIFO of intrusive jobs, drained by a fixed thread pool.
 */
#include "workq.h"

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>

#include "lumen_error.h"

struct worker {
	struct workq *queue;
	unsigned index;
	pthread_t thread;
	bool started;
};

struct workq {
	pthread_mutex_t lock;
	pthread_cond_t nonempty;
	pthread_cond_t ready;          /* worker_start results reported */
	struct workq_job *head, *tail;
	size_t length;
	size_t capacity;
	bool stopping;
	bool joined;
	unsigned started_ok, started_failed;
	struct workq_config config;
	struct worker *workers;
};

static struct workq_job *take_job(struct workq *q)
{
	while (q->head == NULL && !q->stopping)
		pthread_cond_wait(&q->nonempty, &q->lock);
	struct workq_job *job = q->head;
	if (job != NULL) {
		q->head = job->next;
		if (q->head == NULL)
			q->tail = NULL;
		q->length--;
		job->next = NULL;
	}
	return job;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct workq *q = w->queue;
	void *context = NULL;

	if (q->config.worker_start != NULL)
		context = q->config.worker_start(q->config.arg, w->index);
	pthread_mutex_lock(&q->lock);
	if (q->config.worker_start != NULL && context == NULL)
		q->started_failed++;
	else
		q->started_ok++;
	pthread_cond_broadcast(&q->ready);
	bool ok = q->config.worker_start == NULL || context != NULL;
	for (struct workq_job *job; ok && (job = take_job(q)) != NULL;) {
		pthread_mutex_unlock(&q->lock);
		job->run(job, context);
		pthread_mutex_lock(&q->lock);
	}
	pthread_mutex_unlock(&q->lock);
	if (context != NULL && q->config.worker_stop != NULL)
		q->config.worker_stop(q->config.arg, context);
	return NULL;
}

static void join_workers(struct workq *q)
{
	for (unsigned i = 0; i < q->config.threads; i++)
		if (q->workers[i].started)
			pthread_join(q->workers[i].thread, NULL);
	q->joined = true;
}

static int start_workers(struct workq *q)
{
	sigset_t all, old;
	sigfillset(&all);
	/* Signals belong to the main thread's event loop, never to workers. */
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = LUMEN_OK;
	for (unsigned i = 0; i < q->config.threads; i++) {
		q->workers[i].queue = q;
		q->workers[i].index = i;
		if (pthread_create(&q->workers[i].thread, NULL, worker_main, &q->workers[i]) != 0) {
			rc = LUMEN_EIO;
			break;
		}
		q->workers[i].started = true;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

int workq_create(const struct workq_config *config, struct workq **out)
{
	*out = NULL;
	if (config->threads == 0 || config->capacity == 0)
		return LUMEN_EINVAL;
	struct workq *q = calloc(1, sizeof(*q));
	if (q == NULL)
		return LUMEN_ENOMEM;
	q->config = *config;
	q->capacity = config->capacity;
	q->workers = calloc(config->threads, sizeof(*q->workers));
	if (q->workers == NULL) {
		free(q);
		return LUMEN_ENOMEM;
	}
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->nonempty, NULL);
	pthread_cond_init(&q->ready, NULL);

	int rc = start_workers(q);
	unsigned started = 0;
	for (unsigned i = 0; i < config->threads; i++)
		started += q->workers[i].started;
	pthread_mutex_lock(&q->lock);
	while (q->started_ok + q->started_failed < started)
		pthread_cond_wait(&q->ready, &q->lock);
	if (q->started_failed > 0)
		rc = LUMEN_EIO;
	pthread_mutex_unlock(&q->lock);
	if (rc != LUMEN_OK) {
		workq_destroy(q);
		return rc;
	}
	*out = q;
	return LUMEN_OK;
}

int workq_push(struct workq *q, struct workq_job *job)
{
	int rc = LUMEN_OK;
	pthread_mutex_lock(&q->lock);
	if (q->stopping) {
		rc = LUMEN_EINVAL;
	} else if (q->length >= q->capacity) {
		rc = LUMEN_EFULL;
	} else {
		job->next = NULL;
		if (q->tail != NULL)
			q->tail->next = job;
		else
			q->head = job;
		q->tail = job;
		q->length++;
		pthread_cond_signal(&q->nonempty);
	}
	pthread_mutex_unlock(&q->lock);
	return rc;
}

size_t workq_length(struct workq *q)
{
	pthread_mutex_lock(&q->lock);
	size_t n = q->length;
	pthread_mutex_unlock(&q->lock);
	return n;
}

void workq_shutdown(struct workq *q)
{
	pthread_mutex_lock(&q->lock);
	q->stopping = true;
	pthread_cond_broadcast(&q->nonempty);
	pthread_mutex_unlock(&q->lock);
	if (!q->joined)
		join_workers(q);
}

void workq_destroy(struct workq *q)
{
	if (q == NULL)
		return;
	workq_shutdown(q);
	pthread_cond_destroy(&q->ready);
	pthread_cond_destroy(&q->nonempty);
	pthread_mutex_destroy(&q->lock);
	free(q->workers);
	free(q);
}
