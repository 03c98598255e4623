/*
 * conn_sort.c — the sorted result a connection keeps for its next VLV
 * request (search_sort.h's struct sort_context): at most one, as slapd's
 * sssvlv keeps one per connection, counted in the connection's memory
 * (as queued bytes: state the connection holds between requests),
 * dropped on Bind (another identity), Unbind and close.
 */
#include "conn_internal.h"

#include "search_sort.h"

struct sort_context *conn_sort_take(struct conn *c)
{
	pthread_mutex_lock(&c->lock);
	struct sort_context *ctx = c->sort_context;
	if (ctx != NULL) {
		conn_account(c, CONN_MEM_QUEUED, c->sort_context_bytes, 0);
		c->sort_context = NULL;
		c->sort_context_bytes = 0;
	}
	pthread_mutex_unlock(&c->lock);
	return ctx;
}

bool conn_sort_keep(struct conn *c, struct sort_context *ctx)
{
	size_t bytes = sort_context_bytes(ctx);
	struct sort_context *old = NULL;
	bool kept = false;
	pthread_mutex_lock(&c->lock);
	if (!c->closing) {
		old = c->sort_context;
		conn_account(c, CONN_MEM_QUEUED, c->sort_context_bytes, 0);
		c->sort_context = NULL;
		c->sort_context_bytes = 0;
		/* Within the connection's bound, as if a request were pending:
		 * a kept result must not hold back the client's next ones. */
		kept = conn_memory_room(conn_memory_of(c), conn_held(c), bytes, c->bound, 1);
	}
	if (kept) {
		c->sort_context = ctx;
		c->sort_context_bytes = bytes;
		conn_account(c, CONN_MEM_QUEUED, 0, bytes);
	}
	pthread_mutex_unlock(&c->lock);
	sort_context_free(old);
	if (!kept)
		sort_context_free(ctx);
	return kept;
}

void conn_sort_discard_locked(struct conn *c)
{
	if (c->sort_context == NULL)
		return;
	conn_account(c, CONN_MEM_QUEUED, c->sort_context_bytes, 0);
	sort_context_free(c->sort_context);
	c->sort_context = NULL;
	c->sort_context_bytes = 0;
}
