/*
 * write_batch.c — group commit: one committer thread, one write txn and one
 * sync per batch, a nested txn per request (write_batch.h).
 */
#include "write_batch.h"

#include <pthread.h>
#include <stdlib.h>

/* The batch whose group this thread holds open (its own submits would
 * wait for the committer forever). */
static __thread struct write_batch *group_owner_of;

struct write_batch {
	struct mdb_store *store;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t work;        /* the committer waits for requests */
	pthread_cond_t finished;    /* submitters wait for their batch */
	struct write_request *head, *tail;
	size_t max_requests;
	bool stopping;
	struct write_batch_stats stats;
};

/* Runs one request in a nested txn of parent; returns its result. */
static int apply_nested(MDB_env *env, MDB_txn *parent, struct write_request *req)
{
	MDB_txn *child = NULL;

	int mrc = mdb_txn_begin(env, parent, 0, &child);
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	int rc = req->apply(child, req->arg);
	if (rc != LUMEN_OK) {
		mdb_txn_abort(child);
		return rc;
	}
	return mdb_store_map_error(mdb_txn_commit(child));
}

/*
 * Applies and commits one batch (a list of requests, lock not held), then
 * runs the after_commit hooks. Sets each request's result.
 */
static void run_batch(struct write_batch *batch, struct write_request *first)
{
	MDB_env *env = batch->store->env;
	MDB_txn *txn = NULL;
	uint64_t txnid = 0;

	int mrc = mdb_txn_begin(env, NULL, 0, &txn);
	int batch_rc = mdb_store_map_error(mrc);
	for (struct write_request *r = first; r != NULL; r = r->next)
		r->result = batch_rc == LUMEN_OK ? apply_nested(env, txn, r) : batch_rc;
	if (batch_rc == LUMEN_OK) {
		txnid = (uint64_t)mdb_txn_id(txn);
		batch_rc = mdb_store_map_error(mdb_txn_commit(txn));
	}
	for (struct write_request *r = first; r != NULL; r = r->next) {
		if (r->result == LUMEN_OK && batch_rc != LUMEN_OK)
			r->result = batch_rc;
		if (r->after_commit != NULL)
			r->after_commit(r->arg, r->result, txnid);
	}
}

/* Detaches up to max_requests waiting requests; lock held. */
static struct write_request *take_requests(struct write_batch *batch, size_t *count)
{
	struct write_request *first = batch->head, *last = first;
	size_t n = 1;

	while (n < batch->max_requests && last->next != NULL) {
		last = last->next;
		n++;
	}
	batch->head = last->next;
	if (batch->head == NULL)
		batch->tail = NULL;
	last->next = NULL;
	*count = n;
	return first;
}

static void finish_requests(struct write_batch *batch, struct write_request *first, size_t n)
{
	batch->stats.commits++;
	batch->stats.requests += n;
	if (n > batch->stats.largest_batch)
		batch->stats.largest_batch = n;
	for (struct write_request *r = first; r != NULL;) {
		struct write_request *next = r->next;
		if (r->result != LUMEN_OK)
			batch->stats.failed_requests++;
		/* After this store the submitter may return and free r. */
		r->done = true;
		r = next;
	}
	pthread_cond_broadcast(&batch->finished);
}

static void *committer(void *arg)
{
	struct write_batch *batch = arg;

	pthread_mutex_lock(&batch->lock);
	for (;;) {
		while (batch->head == NULL && !batch->stopping)
			pthread_cond_wait(&batch->work, &batch->lock);
		if (batch->head == NULL)
			break;
		size_t n;
		struct write_request *first = take_requests(batch, &n);
		pthread_mutex_unlock(&batch->lock);
		run_batch(batch, first);
		pthread_mutex_lock(&batch->lock);
		finish_requests(batch, first, n);
	}
	pthread_mutex_unlock(&batch->lock);
	return NULL;
}

int write_batch_start(struct mdb_store *store, const struct write_batch_options *options,
		      struct write_batch **out)
{
	struct write_batch *batch = calloc(1, sizeof(*batch));

	*out = NULL;
	if (batch == NULL)
		return LUMEN_ENOMEM;
	batch->store = store;
	batch->max_requests = options && options->max_requests ? options->max_requests
							       : WRITE_BATCH_DEFAULT_MAX_REQUESTS;
	pthread_mutex_init(&batch->lock, NULL);
	pthread_cond_init(&batch->work, NULL);
	pthread_cond_init(&batch->finished, NULL);
	if (pthread_create(&batch->thread, NULL, committer, batch) != 0) {
		pthread_cond_destroy(&batch->finished);
		pthread_cond_destroy(&batch->work);
		pthread_mutex_destroy(&batch->lock);
		free(batch);
		return LUMEN_EIO;
	}
	*out = batch;
	return LUMEN_OK;
}

void write_batch_stop(struct write_batch *batch)
{
	if (batch == NULL)
		return;
	pthread_mutex_lock(&batch->lock);
	batch->stopping = true;
	pthread_cond_signal(&batch->work);
	pthread_mutex_unlock(&batch->lock);
	pthread_join(batch->thread, NULL);
	pthread_cond_destroy(&batch->finished);
	pthread_cond_destroy(&batch->work);
	pthread_mutex_destroy(&batch->lock);
	free(batch);
}

int write_batch_submit(struct write_batch *batch, struct write_request *request)
{
	if (request->apply == NULL)
		return request->result = LUMEN_EINVAL;
	if (group_owner_of == batch)
		return request->result = LUMEN_EBUSY;
	request->done = false;
	request->next = NULL;
	pthread_mutex_lock(&batch->lock);
	if (batch->stopping) {
		pthread_mutex_unlock(&batch->lock);
		return request->result = LUMEN_EBUSY;
	}
	if (batch->tail != NULL)
		batch->tail->next = request;
	else
		batch->head = request;
	batch->tail = request;
	pthread_cond_signal(&batch->work);
	while (!request->done)
		pthread_cond_wait(&batch->finished, &batch->lock);
	pthread_mutex_unlock(&batch->lock);
	return request->result;
}

void write_batch_get_stats(struct write_batch *batch, struct write_batch_stats *out)
{
	pthread_mutex_lock(&batch->lock);
	*out = batch->stats;
	pthread_mutex_unlock(&batch->lock);
}

/* ------------------------------------------------------------ groups */

struct write_group {
	struct write_batch *batch;
	struct write_request request;       /* the group's place in the queue */
	pthread_cond_t turn;                /* both sides wait here (batch->lock) */
	bool open;                          /* the committer serves the group */
	struct write_request *member;       /* handed over, not yet applied */
	bool member_done;
	struct write_request *applied;      /* for their after_commit, in order */
	struct write_request **applied_tail;
	bool ending, commit;
};


/* Committer: the group's apply, in the group's nested transaction. */
static int serve_group(MDB_txn *txn, void *arg)
{
	struct write_group *g = arg;
	struct write_batch *batch = g->batch;
	pthread_mutex_lock(&batch->lock);
	g->open = true;
	/* The owner waits where it would learn of a failed batch as well. */
	pthread_cond_broadcast(&batch->finished);
	for (;;) {
		while (g->member == NULL && !g->ending)
			pthread_cond_wait(&g->turn, &batch->lock);
		if (g->member == NULL)
			break;
		struct write_request *m = g->member;
		g->member = NULL;
		pthread_mutex_unlock(&batch->lock);
		m->result = apply_nested(batch->store->env, txn, m);
		pthread_mutex_lock(&batch->lock);
		m->next = NULL;
		*g->applied_tail = m;
		g->applied_tail = &m->next;
		g->member_done = true;
		pthread_cond_broadcast(&g->turn);
	}
	bool commit = g->commit;
	pthread_mutex_unlock(&batch->lock);
	/* Not committing: a failure aborts the group's transaction whole. */
	return commit ? LUMEN_OK : LUMEN_EPOISONED;
}

/* Committer, after the batch's commit: the members' own hooks. */
static void group_committed(void *arg, int result, uint64_t txnid)
{
	struct write_group *g = arg;
	for (struct write_request *m = g->applied; m != NULL; m = m->next) {
		int final = m->result != LUMEN_OK ? m->result : result;
		if (m->after_commit != NULL)
			m->after_commit(m->arg, final, txnid);
	}
}

static void group_free(struct write_group *g)
{
	pthread_cond_destroy(&g->turn);
	free(g);
}

int write_batch_group_begin(struct write_batch *batch, struct write_group **out)
{
	struct write_group *g = calloc(1, sizeof(*g));
	*out = NULL;
	if (g == NULL)
		return LUMEN_ENOMEM;
	g->batch = batch;
	g->applied_tail = &g->applied;
	g->request = (struct write_request){ .apply = serve_group,
					     .after_commit = group_committed, .arg = g };
	pthread_cond_init(&g->turn, NULL);
	pthread_mutex_lock(&batch->lock);
	if (batch->stopping) {
		pthread_mutex_unlock(&batch->lock);
		group_free(g);
		return LUMEN_EBUSY;
	}
	if (batch->tail != NULL)
		batch->tail->next = &g->request;
	else
		batch->head = &g->request;
	batch->tail = &g->request;
	pthread_cond_signal(&batch->work);
	/* The batch's own transaction may fail before the group opens: the
	 * request is then done without its apply ever running. */
	while (!g->open && !g->request.done)
		pthread_cond_wait(&batch->finished, &batch->lock);
	bool opened = g->open;
	pthread_mutex_unlock(&batch->lock);
	if (!opened) {
		int rc = g->request.result;
		group_free(g);
		return rc != LUMEN_OK ? rc : LUMEN_EIO;
	}
	group_owner_of = batch;
	*out = g;
	return LUMEN_OK;
}

int write_group_apply(struct write_group *g, struct write_request *member)
{
	struct write_batch *batch = g->batch;
	if (member->apply == NULL)
		return member->result = LUMEN_EINVAL;
	pthread_mutex_lock(&batch->lock);
	g->member = member;
	g->member_done = false;
	pthread_cond_broadcast(&g->turn);
	while (!g->member_done)
		pthread_cond_wait(&g->turn, &batch->lock);
	pthread_mutex_unlock(&batch->lock);
	return member->result;
}

int write_group_end(struct write_group *g, bool commit)
{
	struct write_batch *batch = g->batch;
	pthread_mutex_lock(&batch->lock);
	g->ending = true;
	g->commit = commit;
	pthread_cond_broadcast(&g->turn);
	while (!g->request.done)
		pthread_cond_wait(&batch->finished, &batch->lock);
	pthread_mutex_unlock(&batch->lock);
	group_owner_of = NULL;
	int rc = g->request.result;
	group_free(g);
	if (!commit)
		return LUMEN_OK;
	return rc;
}
