/*
 * conn_memory.c — byte accounting of client connections (conn_memory.h).
 */
#include "conn_memory.h"

void conn_memory_init(struct conn_memory *m, size_t max_conn, size_t max_conn_auth,
		      uint64_t max_total)
{
	atomic_init(&m->total, 0);
	atomic_init(&m->peak, 0);
	atomic_init(&m->waits, 0);
	m->max_conn = max_conn;
	m->max_conn_auth = max_conn_auth;
	m->max_total = max_total;
}

/* Raise the recorded peak to at least now (racing raisers: the larger wins). */
static void raise_peak(struct conn_memory *m, uint64_t now)
{
	uint64_t peak = atomic_load_explicit(&m->peak, memory_order_relaxed);
	while (now > peak &&
	       !atomic_compare_exchange_weak_explicit(&m->peak, &peak, now, memory_order_relaxed,
						      memory_order_relaxed))
		;
}

void conn_memory_change(struct conn_memory *m, size_t *held, size_t old_bytes,
			size_t new_bytes)
{
	if (new_bytes >= old_bytes) {
		size_t more = new_bytes - old_bytes;
		*held += more;
		uint64_t now = atomic_fetch_add_explicit(&m->total, more, memory_order_relaxed) + more;
		raise_peak(m, now);
	} else {
		size_t less = old_bytes - new_bytes;
		*held -= less;
		atomic_fetch_sub_explicit(&m->total, less, memory_order_relaxed);
	}
}

void conn_memory_release(struct conn_memory *m, size_t *held)
{
	atomic_fetch_sub_explicit(&m->total, *held, memory_order_relaxed);
	*held = 0;
}

bool conn_memory_room(const struct conn_memory *m, size_t held, size_t more, bool bound,
		      unsigned n_pending)
{
	if (n_pending == 0)
		return true;
	size_t max = bound ? m->max_conn_auth : m->max_conn;
	if (held + more > max)
		return false;
	if (m->max_total == 0)
		return true;
	return atomic_load_explicit(&m->total, memory_order_relaxed) + more <= m->max_total;
}

bool conn_memory_over_total(const struct conn_memory *m)
{
	return m->max_total > 0 &&
	       atomic_load_explicit(&m->total, memory_order_relaxed) > m->max_total;
}

bool conn_memory_output_full(const struct conn_memory *m, size_t unsent, size_t max_unsent)
{
	if (unsent >= max_unsent)
		return true;
	return unsent > 0 && conn_memory_over_total(m);
}

bool conn_memory_may_resume(const struct conn_memory *m, size_t unsent, size_t resume_mark)
{
	if (unsent >= resume_mark)
		return false;
	return unsent == 0 || !conn_memory_over_total(m);
}

void conn_memory_count_wait(struct conn_memory *m)
{
	atomic_fetch_add_explicit(&m->waits, 1, memory_order_relaxed);
}

void conn_memory_figures(const struct conn_memory *m, struct conn_memory_figures *out)
{
	out->total = atomic_load_explicit(&m->total, memory_order_relaxed);
	out->peak = atomic_load_explicit(&m->peak, memory_order_relaxed);
	out->waits = atomic_load_explicit(&m->waits, memory_order_relaxed);
	out->max_total = m->max_total;
}
