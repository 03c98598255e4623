/*
 * conn_memory.c — byte accounting of client connections, admission of new
 * ones and the wait list for room in the total (conn_memory.h).
 */
#include "conn_memory.h"

void conn_memory_init(struct conn_memory *m, size_t max_conn, size_t max_conn_auth,
		      uint64_t max_total)
{
	atomic_init(&m->total, 0);
	for (int k = 0; k < CONN_MEM_KINDS; k++)
		atomic_init(&m->kind[k], 0);
	atomic_init(&m->fixed, 0);
	atomic_init(&m->peak, 0);
	atomic_init(&m->waits, 0);
	atomic_init(&m->wakeups, 0);
	atomic_init(&m->refused, 0);
	atomic_init(&m->tls_refused, 0);
	atomic_init(&m->n_waiting, 0);
	atomic_init(&m->refusing, false);
	m->max_conn = max_conn;
	m->max_conn_auth = max_conn_auth;
	m->max_total = max_total;
	m->scratch = 0;
	pthread_mutex_init(&m->wait_lock, NULL);
	m->wait_head = m->wait_tail = NULL;
	m->promised = 0;
}

void conn_memory_destroy(struct conn_memory *m)
{
	pthread_mutex_destroy(&m->wait_lock);
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

static void unlink_waiter(struct conn_memory *m, struct conn_memory_waiter *w)
{
	if (w->prev != NULL)
		w->prev->next = w->next;
	else
		m->wait_head = w->next;
	if (w->next != NULL)
		w->next->prev = w->prev;
	else
		m->wait_tail = w->prev;
	w->prev = w->next = NULL;
	w->listed = false;
	atomic_fetch_sub(&m->n_waiting, 1);
}

/* Room left under max_total once promised bytes are set aside (wait_lock). */
static uint64_t free_room(const struct conn_memory *m)
{
	uint64_t taken = atomic_load(&m->total) + m->promised;
	return taken < m->max_total ? m->max_total - taken : 0;
}

/*
 * Wake waiters from the front while the room covers them. FIFO: the first
 * that does not fit stops the pass, so a large request is not overtaken
 * for ever by small ones.
 */
static void wake_waiters(struct conn_memory *m)
{
	pthread_mutex_lock(&m->wait_lock);
	uint64_t room = free_room(m);
	while (m->wait_head != NULL && m->wait_head->bytes <= room) {
		struct conn_memory_waiter *w = m->wait_head;
		unlink_waiter(m, w);
		room -= w->bytes;
		m->promised += w->bytes;
		w->promised = w->bytes;
		atomic_store(&w->woken, true);
		atomic_fetch_add_explicit(&m->wakeups, 1, memory_order_relaxed);
		w->wake(w);
	}
	pthread_mutex_unlock(&m->wait_lock);
}

/*
 * Anybody to wake? Sequentially consistent with conn_memory_wait's
 * listing and re-check: either the waiter sees this release's lower total
 * or this release sees the waiter (no wake-up is lost).
 */
static void after_release(struct conn_memory *m)
{
	if (m->max_total > 0 && atomic_load(&m->n_waiting) > 0)
		wake_waiters(m);
}

/* Kinds that cannot wait for room: what admission weighs (conn_memory_admit). */
static bool is_fixed(enum conn_memory_kind kind)
{
	return kind == CONN_MEM_BASE || kind == CONN_MEM_TLS;
}

void conn_memory_change(struct conn_memory *m, enum conn_memory_kind kind,
			struct conn_memory_held *held, size_t old_bytes, size_t new_bytes)
{
	if (new_bytes >= old_bytes) {
		size_t more = new_bytes - old_bytes;
		held->bytes[kind] += more;
		atomic_fetch_add_explicit(&m->kind[kind], more, memory_order_relaxed);
		if (is_fixed(kind))
			atomic_fetch_add_explicit(&m->fixed, more, memory_order_relaxed);
		uint64_t now = atomic_fetch_add_explicit(&m->total, more, memory_order_relaxed) + more;
		raise_peak(m, now);
	} else {
		size_t less = old_bytes - new_bytes;
		held->bytes[kind] -= less;
		atomic_fetch_sub_explicit(&m->kind[kind], less, memory_order_relaxed);
		if (is_fixed(kind))
			atomic_fetch_sub_explicit(&m->fixed, less, memory_order_relaxed);
		atomic_fetch_sub(&m->total, less);
		after_release(m);
	}
}

void conn_memory_release(struct conn_memory *m, struct conn_memory_held *held)
{
	size_t all = conn_memory_held_total(held);
	atomic_fetch_sub_explicit(&m->fixed, held->bytes[CONN_MEM_BASE] + held->bytes[CONN_MEM_TLS],
				  memory_order_relaxed);
	for (int k = 0; k < CONN_MEM_KINDS; k++) {
		atomic_fetch_sub_explicit(&m->kind[k], held->bytes[k], memory_order_relaxed);
		held->bytes[k] = 0;
	}
	atomic_fetch_sub(&m->total, all);
	if (all > 0)
		after_release(m);
}

/* Take `bytes` of the room under max_total for fixed bytes (bases and TLS
 * sessions); false if it is not there. */
static bool reserve_fixed(struct conn_memory *m, size_t bytes)
{
	uint64_t fixed = atomic_load_explicit(&m->fixed, memory_order_relaxed);
	do {
		if (m->max_total > 0 && fixed + bytes > m->max_total)
			return false;
	} while (!atomic_compare_exchange_weak_explicit(&m->fixed, &fixed, fixed + bytes,
							memory_order_relaxed, memory_order_relaxed));
	return true;
}

/* Count bytes reserved in fixed as kind, in held and the totals. */
static void count_reserved(struct conn_memory *m, struct conn_memory_held *held,
			   enum conn_memory_kind kind, size_t bytes)
{
	held->bytes[kind] += bytes;
	atomic_fetch_add_explicit(&m->kind[kind], bytes, memory_order_relaxed);
	uint64_t now = atomic_fetch_add_explicit(&m->total, bytes, memory_order_relaxed) + bytes;
	raise_peak(m, now);
}

bool conn_memory_admit(struct conn_memory *m, struct conn_memory_held *held, size_t base_bytes,
		       size_t tls_bytes, bool *first_refusal, uint64_t *refused_before)
{
	*first_refusal = false;
	*refused_before = 0;
	if (!reserve_fixed(m, base_bytes + tls_bytes)) {
		atomic_fetch_add_explicit(&m->refused, 1, memory_order_relaxed);
		*first_refusal = !atomic_exchange(&m->refusing, true);
		return false;
	}
	count_reserved(m, held, CONN_MEM_BASE, base_bytes);
	if (tls_bytes > 0)
		count_reserved(m, held, CONN_MEM_TLS, tls_bytes);
	/* Only the admission that ends a run reads the counter. */
	if (atomic_load_explicit(&m->refusing, memory_order_relaxed) &&
	    atomic_exchange(&m->refusing, false))
		*refused_before = atomic_load_explicit(&m->refused, memory_order_relaxed);
	return true;
}

bool conn_memory_reserve_tls(struct conn_memory *m, struct conn_memory_held *held,
			     size_t tls_bytes)
{
	if (held->bytes[CONN_MEM_TLS] >= tls_bytes)
		return true;
	size_t more = tls_bytes - held->bytes[CONN_MEM_TLS];
	if (!reserve_fixed(m, more)) {
		atomic_fetch_add_explicit(&m->tls_refused, 1, memory_order_relaxed);
		return false;
	}
	count_reserved(m, held, CONN_MEM_TLS, more);
	return true;
}

bool conn_memory_set_tls(struct conn_memory *m, struct conn_memory_held *held,
			 size_t tls_bytes)
{
	size_t old = held->bytes[CONN_MEM_TLS];
	conn_memory_change(m, CONN_MEM_TLS, held, old, tls_bytes);
	if (tls_bytes <= old || m->max_total == 0)
		return true;
	return atomic_load_explicit(&m->fixed, memory_order_relaxed) <= m->max_total;
}

void conn_memory_count_tls_stop(struct conn_memory *m)
{
	atomic_fetch_add_explicit(&m->tls_refused, 1, memory_order_relaxed);
}

void conn_memory_add_scratch(struct conn_memory *m, size_t bytes)
{
	m->scratch += bytes;
}

bool conn_memory_room_in_conn(const struct conn_memory *m, size_t held, size_t more, bool bound)
{
	return held + more <= (bound ? m->max_conn_auth : m->max_conn);
}

bool conn_memory_room(const struct conn_memory *m, size_t held, size_t more, bool bound,
		      unsigned n_pending)
{
	if (n_pending == 0)
		return true;
	if (!conn_memory_room_in_conn(m, held, more, bound))
		return false;
	if (m->max_total == 0)
		return true;
	return atomic_load_explicit(&m->total, memory_order_relaxed) + more <= m->max_total;
}

bool conn_memory_wait(struct conn_memory *m, struct conn_memory_waiter *w, size_t more)
{
	if (m->max_total == 0)
		return false;
	pthread_mutex_lock(&m->wait_lock);
	w->bytes = more;
	if (!w->listed) {
		w->next = NULL;
		w->prev = m->wait_tail;
		if (m->wait_tail != NULL)
			m->wait_tail->next = w;
		else
			m->wait_head = w;
		m->wait_tail = w;
		w->listed = true;
		atomic_fetch_add(&m->n_waiting, 1);
	}
	/* After listing (see after_release): a release that came first shows
	 * here. Only the front may take room at once, or FIFO order breaks. */
	bool room = m->wait_head == w && more <= free_room(m);
	if (room)
		unlink_waiter(m, w);
	pthread_mutex_unlock(&m->wait_lock);
	return !room;
}

void conn_memory_claim(struct conn_memory *m, struct conn_memory_waiter *w)
{
	pthread_mutex_lock(&m->wait_lock);
	if (atomic_exchange(&w->woken, false)) {
		m->promised -= w->promised;
		w->promised = 0;
	}
	pthread_mutex_unlock(&m->wait_lock);
}

void conn_memory_unwait(struct conn_memory *m, struct conn_memory_waiter *w)
{
	pthread_mutex_lock(&m->wait_lock);
	if (w->listed)
		unlink_waiter(m, w);
	if (atomic_exchange(&w->woken, false)) {
		m->promised -= w->promised;
		w->promised = 0;
	}
	pthread_mutex_unlock(&m->wait_lock);
	/* What it was promised may cover the next in line. */
	after_release(m);
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

/* Step an output buffer grows by near the total's bound. */
#define OUTPUT_STEP 4096u

size_t conn_memory_output_capacity(const struct conn_memory *m, size_t cap, size_t need,
				   size_t first)
{
	size_t grown = cap ? cap : first;
	while (grown < need)
		grown *= 2;
	if (m->max_total == 0 || grown == need)
		return grown;
	uint64_t total = atomic_load_explicit(&m->total, memory_order_relaxed);
	if (total + (grown - cap) <= m->max_total)
		return grown;
	size_t exact = (need + OUTPUT_STEP - 1) / OUTPUT_STEP * OUTPUT_STEP;
	return exact < grown ? exact : grown;
}

void conn_memory_count_wait(struct conn_memory *m)
{
	atomic_fetch_add_explicit(&m->waits, 1, memory_order_relaxed);
}

void conn_memory_figures(const struct conn_memory *m, struct conn_memory_figures *out)
{
	out->scratch = m->scratch;
	out->total = atomic_load_explicit(&m->total, memory_order_relaxed) + m->scratch;
	out->peak = atomic_load_explicit(&m->peak, memory_order_relaxed) + m->scratch;
	out->waits = atomic_load_explicit(&m->waits, memory_order_relaxed);
	out->max_total = m->max_total;
	out->base = atomic_load_explicit(&m->kind[CONN_MEM_BASE], memory_order_relaxed);
	out->queued = atomic_load_explicit(&m->kind[CONN_MEM_QUEUED], memory_order_relaxed);
	out->output = atomic_load_explicit(&m->kind[CONN_MEM_OUTPUT], memory_order_relaxed);
	out->tls = atomic_load_explicit(&m->kind[CONN_MEM_TLS], memory_order_relaxed);
	out->tls_refused = atomic_load_explicit(&m->tls_refused, memory_order_relaxed);
	out->wakeups = atomic_load_explicit(&m->wakeups, memory_order_relaxed);
	out->refused = atomic_load_explicit(&m->refused, memory_order_relaxed);
	out->waiting = atomic_load_explicit(&m->n_waiting, memory_order_relaxed);
}
