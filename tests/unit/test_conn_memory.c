/*
 * test_conn_memory.c — the byte accounting of connections: per-connection
 * figures and the atomic total move together, the peak only rises, the
 * room rules (anonymous and bound bounds, the total, always room for a
 * connection with nothing outstanding, no total bound when 0), the kinds,
 * admission of new connections, and the wait list for room in the total.
 */
#include <check.h>
#include <pthread.h>

#include "conn_memory.h"

#define Q CONN_MEM_QUEUED
#define HELD(h) conn_memory_held_total(&(h))

START_TEST(figures_follow_changes)
{
	struct conn_memory m;
	struct conn_memory_figures f;
	conn_memory_init(&m, 1000, 5000, 10000);
	struct conn_memory_held a = { { 0 } }, b = { { 0 } };
	conn_memory_change(&m, Q, &a, 0, 300);        /* a's input buffer */
	conn_memory_change(&m, Q, &b, 0, 200);
	conn_memory_change(&m, Q, &a, 300, 900);      /* grown for a large PDU */
	ck_assert_uint_eq(HELD(a), 900);
	ck_assert_uint_eq(HELD(b), 200);
	conn_memory_figures(&m, &f);
	ck_assert_uint_eq(f.total, 1100);
	ck_assert_uint_eq(f.peak, 1100);
	conn_memory_change(&m, Q, &a, 900, 300);      /* shrunk back once empty */
	conn_memory_figures(&m, &f);
	ck_assert_uint_eq(HELD(a), 300);
	ck_assert_uint_eq(f.total, 500);
	ck_assert_uint_eq(f.peak, 1100);           /* the peak stays */
	conn_memory_release(&m, &a);
	ck_assert_uint_eq(HELD(a), 0);
	conn_memory_release(&m, &b);
	conn_memory_figures(&m, &f);
	ck_assert_uint_eq(f.total, 0);
	ck_assert_uint_eq(f.max_total, 10000);
}
END_TEST

START_TEST(room_rules)
{
	struct conn_memory m;
	conn_memory_init(&m, 1000, 5000, 10000);
	/* nothing outstanding: always room, even over every bound */
	ck_assert(conn_memory_room(&m, 900, 200000, false, 0));
	/* anonymous bound 1000, bound 5000 */
	ck_assert(conn_memory_room(&m, 900, 100, false, 1));
	ck_assert(!conn_memory_room(&m, 900, 101, false, 1));
	ck_assert(conn_memory_room(&m, 900, 101, true, 1));
	ck_assert(!conn_memory_room(&m, 4000, 1001, true, 3));
	/* the total: 9950 held elsewhere leaves 50 */
	struct conn_memory_held other = { { 0 } };
	conn_memory_change(&m, Q, &other, 0, 9950);
	ck_assert(conn_memory_room(&m, 0, 50, false, 1));
	ck_assert(!conn_memory_room(&m, 0, 51, false, 1));
	ck_assert(!conn_memory_over_total(&m));
	conn_memory_change(&m, Q, &other, 9950, 10001);
	ck_assert(conn_memory_over_total(&m));
	conn_memory_release(&m, &other);
	ck_assert(!conn_memory_over_total(&m));
	conn_memory_count_wait(&m);
	conn_memory_count_wait(&m);
	struct conn_memory_figures f;
	conn_memory_figures(&m, &f);
	ck_assert_uint_eq(f.waits, 2);
}
END_TEST

START_TEST(no_total_bound)
{
	struct conn_memory m;
	conn_memory_init(&m, 1000, 5000, 0);
	struct conn_memory_held big = { { 0 } };
	conn_memory_change(&m, Q, &big, 0, (size_t)1 << 40);
	ck_assert(conn_memory_room(&m, 0, 1000, false, 5));
	ck_assert(!conn_memory_over_total(&m));
	conn_memory_release(&m, &big);
}
END_TEST

/* A client that does not read holds up to its own mark while the total is
 * under the bound; once the total is over it, any output waiting is enough
 * to pause a search (a crowd of non-readers once held 530 MB under a 16 MB
 * bound, each up to the per-connection mark). */
START_TEST(output_full_rules)
{
	struct conn_memory m;
	conn_memory_init(&m, 1000, 5000, 10000);
	struct conn_memory_held held = { { 0 } };
	conn_memory_change(&m, Q, &held, 0, 9000);
	ck_assert(!conn_memory_output_full(&m, 0, 4096));
	ck_assert(!conn_memory_output_full(&m, 4095, 4096));
	ck_assert(conn_memory_output_full(&m, 4096, 4096));
	conn_memory_change(&m, Q, &held, HELD(held), 10001);
	ck_assert(conn_memory_over_total(&m));
	ck_assert(!conn_memory_output_full(&m, 0, 4096));
	ck_assert(conn_memory_output_full(&m, 1, 4096));
	conn_memory_change(&m, Q, &held, HELD(held), 10000);
	ck_assert(!conn_memory_output_full(&m, 1, 4096));
	conn_memory_release(&m, &held);
	conn_memory_destroy(&m);
	/* no total bound: only the per-connection mark */
	conn_memory_init(&m, 1000, 5000, 0);
	conn_memory_change(&m, Q, &held, 0, (size_t)1 << 40);
	ck_assert(!conn_memory_output_full(&m, 4095, 4096));
	conn_memory_release(&m, &held);
}
END_TEST

/* Resuming is the opposite of pausing, over the total too: a search that
 * paused with output waiting must not be requeued while it waits (500
 * non-reading clients once kept the workers spinning on park, requeue,
 * park). */
START_TEST(resume_rules)
{
	struct conn_memory m;
	struct conn_memory_held held = { { 0 } };
	conn_memory_init(&m, 1000, 5000, 10000);
	ck_assert(conn_memory_may_resume(&m, 0, 1024));
	ck_assert(conn_memory_may_resume(&m, 1023, 1024));
	ck_assert(!conn_memory_may_resume(&m, 1024, 1024));
	conn_memory_change(&m, Q, &held, 0, 10001);
	ck_assert(conn_memory_may_resume(&m, 0, 1024));
	ck_assert(!conn_memory_may_resume(&m, 1, 1024));
	/* over the total, exactly one holds whatever is unsent */
	for (size_t unsent = 0; unsent < 5000; unsent += 7)
		ck_assert(conn_memory_may_resume(&m, unsent, 1024) !=
			  conn_memory_output_full(&m, unsent, 4096));
	conn_memory_release(&m, &held);
}
END_TEST

/* Changes from several threads (connections live on several I/O threads
 * and are freed on workers) add up exactly. */
static struct conn_memory shared;

static void *churn(void *arg)
{
	(void)arg;
	struct conn_memory_held held = { { 0 } };
	for (int i = 0; i < 100000; i++) {
		conn_memory_change(&shared, Q, &held, HELD(held), HELD(held) + 16);
		if (i % 3 == 0)
			conn_memory_change(&shared, Q, &held, HELD(held), HELD(held) - 8);
	}
	conn_memory_release(&shared, &held);
	return NULL;
}

START_TEST(threads_add_up)
{
	conn_memory_init(&shared, 1000, 5000, 0);
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, churn, NULL), 0);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	struct conn_memory_figures f;
	conn_memory_figures(&shared, &f);
	ck_assert_uint_eq(f.total, 0);
	ck_assert_uint_ge(f.peak, 100000u * 16u - 33334u * 8u);
}
END_TEST


/* Each kind is its own figure; the total is their sum, and a connection's
 * release gives back every kind. */
START_TEST(kinds_add_up)
{
	struct conn_memory m;
	struct conn_memory_figures f;
	conn_memory_init(&m, 1000, 5000, 10000);
	struct conn_memory_held a = { { 0 } };
	conn_memory_change(&m, CONN_MEM_BASE, &a, 0, 700);
	conn_memory_change(&m, CONN_MEM_QUEUED, &a, 0, 512);
	conn_memory_change(&m, CONN_MEM_OUTPUT, &a, 0, 16384);
	conn_memory_change(&m, CONN_MEM_OUTPUT, &a, 16384, 32768);
	conn_memory_change(&m, CONN_MEM_TLS, &a, 0, 17000);
	conn_memory_figures(&m, &f);
	ck_assert_uint_eq(f.base, 700);
	ck_assert_uint_eq(f.queued, 512);
	ck_assert_uint_eq(f.output, 32768);
	ck_assert_uint_eq(f.tls, 17000);
	ck_assert_uint_eq(f.total, 700 + 512 + 32768 + 17000);
	ck_assert_uint_eq(HELD(a), f.total);
	conn_memory_release(&m, &a);
	conn_memory_figures(&m, &f);
	ck_assert_uint_eq(f.base + f.queued + f.output + f.tls + f.total, 0);
	conn_memory_destroy(&m);
}
END_TEST

/* A new connection is refused when the bases would pass the total (what
 * queues does not count: it waits), and the log hears of the first
 * refusal of a run and of the admission that ends it only. */
START_TEST(admission_counts_bases)
{
	struct conn_memory m;
	struct conn_memory_figures f;
	bool first;
	uint64_t ended;
	conn_memory_init(&m, 1000, 5000, 2000);
	struct conn_memory_held a = { { 0 } }, b = { { 0 } }, c = { { 0 } }, d = { { 0 } };
	conn_memory_change(&m, CONN_MEM_QUEUED, &b, 0, 50000);    /* over, but queued */
	ck_assert(conn_memory_admit(&m, &a, 1000, 0, &first, &ended));
	ck_assert_uint_eq(a.bytes[CONN_MEM_BASE], 1000);
	ck_assert(conn_memory_admit(&m, &c, 1000, 0, &first, &ended));
	ck_assert(!conn_memory_admit(&m, &d, 1000, 0, &first, &ended));
	ck_assert(first);
	ck_assert(!conn_memory_admit(&m, &d, 1000, 0, &first, &ended));
	ck_assert(!first);
	ck_assert_uint_eq(ended, 0);
	ck_assert_uint_eq(HELD(d), 0);
	conn_memory_figures(&m, &f);
	ck_assert_uint_eq(f.base, 2000);
	ck_assert_uint_eq(f.total, 52000);
	conn_memory_release(&m, &c);                          /* one closes */
	ck_assert(conn_memory_admit(&m, &d, 1000, 0, &first, &ended));
	ck_assert_uint_eq(ended, 2);
	conn_memory_release(&m, &d);
	ck_assert(conn_memory_admit(&m, &d, 1000, 0, &first, &ended));
	ck_assert_uint_eq(ended, 0);
	conn_memory_figures(&m, &f);
	ck_assert_uint_eq(f.refused, 2);
	conn_memory_release(&m, &a);
	conn_memory_release(&m, &b);
	conn_memory_release(&m, &d);
	conn_memory_destroy(&m);
	conn_memory_init(&m, 1000, 5000, 0);                    /* no bound */
	conn_memory_change(&m, CONN_MEM_BASE, &a, 0, (size_t)1 << 40);
	ck_assert(conn_memory_admit(&m, &c, 1000, 0, &first, &ended));
	conn_memory_release(&m, &a);
	conn_memory_release(&m, &c);
	conn_memory_destroy(&m);
}
END_TEST

/* A TLS connection is admitted with the room its handshake takes; base
 * and TLS together are what cannot pass the total, so a plain connection
 * still fits where a TLS one does not. */
START_TEST(admission_counts_tls)
{
	struct conn_memory m;
	struct conn_memory_figures f;
	bool first;
	uint64_t ended;
	conn_memory_init(&m, 1000, 5000, 10000);
	struct conn_memory_held a = { { 0 } }, b = { { 0 } }, c = { { 0 } };
	ck_assert(conn_memory_admit(&m, &a, 1000, 6000, &first, &ended));
	ck_assert_uint_eq(a.bytes[CONN_MEM_BASE], 1000);
	ck_assert_uint_eq(a.bytes[CONN_MEM_TLS], 6000);
	ck_assert(!conn_memory_admit(&m, &b, 1000, 6000, &first, &ended));   /* 14000 */
	ck_assert(first);
	ck_assert_uint_eq(HELD(b), 0);
	ck_assert(conn_memory_admit(&m, &b, 1000, 0, &first, &ended));       /* plain: 8000 */
	ck_assert_uint_eq(ended, 1);
	conn_memory_figures(&m, &f);
	ck_assert_uint_eq(f.tls, 6000);
	ck_assert_uint_eq(f.base, 2000);
	ck_assert_uint_eq(f.total, 8000);
	ck_assert_uint_eq(HELD(a), 7000);
	/* the handshake ends: its session holds less; the room goes back */
	ck_assert(conn_memory_set_tls(&m, &a, 1500));
	ck_assert(!conn_memory_admit(&m, &c, 1000, 6000, &first, &ended));   /* 10500 */
	ck_assert(conn_memory_admit(&m, &c, 1000, 5000, &first, &ended));    /* 9500 */
	conn_memory_figures(&m, &f);
	ck_assert_uint_eq(f.tls, 6500);
	ck_assert_uint_eq(f.total, 9500);
	conn_memory_release(&m, &a);
	conn_memory_release(&m, &b);
	conn_memory_release(&m, &c);
	conn_memory_figures(&m, &f);
	ck_assert_uint_eq(f.total + f.tls + f.base, 0);
	ck_assert_uint_eq(f.refused, 2);
	conn_memory_destroy(&m);
}
END_TEST

/* StartTLS reserves the room on an admitted connection; what queues does
 * not count (it waits), bases and TLS do. A handshake that grows past its
 * room and the total is reported (the caller stops it); past the
 * handshake growth is counted without a refusal to act on. */
START_TEST(tls_reserve_and_growth)
{
	struct conn_memory m;
	struct conn_memory_figures f;
	conn_memory_init(&m, 1000, 5000, 10000);
	struct conn_memory_held a = { { 0 } }, b = { { 0 } }, q = { { 0 } };
	conn_memory_change(&m, CONN_MEM_BASE, &a, 0, 1000);
	conn_memory_change(&m, CONN_MEM_BASE, &b, 0, 1000);
	conn_memory_change(&m, CONN_MEM_QUEUED, &q, 0, 50000);      /* over, but it waits */
	ck_assert(conn_memory_reserve_tls(&m, &a, 6000));
	ck_assert(conn_memory_reserve_tls(&m, &a, 6000));            /* held already */
	ck_assert_uint_eq(a.bytes[CONN_MEM_TLS], 6000);
	ck_assert(!conn_memory_reserve_tls(&m, &b, 6000));           /* 14000 > 10000 */
	ck_assert_uint_eq(b.bytes[CONN_MEM_TLS], 0);
	ck_assert(conn_memory_reserve_tls(&m, &b, 2000));            /* exactly 10000 */
	ck_assert(conn_memory_set_tls(&m, &b, 1500));                /* shrinking: fine */
	ck_assert(!conn_memory_set_tls(&m, &a, 8000));               /* 10500: over */
	ck_assert_uint_eq(a.bytes[CONN_MEM_TLS], 8000);              /* counted anyway */
	conn_memory_figures(&m, &f);
	ck_assert_uint_eq(f.tls, 9500);
	ck_assert_uint_eq(f.tls_refused, 1);                         /* the StartTLS */
	conn_memory_count_tls_stop(&m);                              /* the caller stops it */
	conn_memory_figures(&m, &f);
	ck_assert_uint_eq(f.tls_refused, 2);
	ck_assert(conn_memory_set_tls(&m, &a, 0));
	ck_assert(conn_memory_set_tls(&m, &b, 7000));                /* 9000: fits */
	conn_memory_release(&m, &a);
	conn_memory_release(&m, &b);
	conn_memory_release(&m, &q);
	conn_memory_figures(&m, &f);
	ck_assert_uint_eq(f.total, 0);
	conn_memory_destroy(&m);
	conn_memory_init(&m, 1000, 5000, 0);                         /* no bound */
	ck_assert(conn_memory_reserve_tls(&m, &a, (size_t)1 << 40));
	ck_assert(conn_memory_set_tls(&m, &a, (size_t)1 << 41));
	conn_memory_release(&m, &a);
	conn_memory_destroy(&m);
}
END_TEST

/* The I/O threads' scratch buffers are in the reported total and peak,
 * not in what the bound weighs. */
START_TEST(scratch_reported_not_weighed)
{
	struct conn_memory m;
	struct conn_memory_figures f;
	bool first;
	uint64_t ended;
	conn_memory_init(&m, 1000, 5000, 2000);
	conn_memory_add_scratch(&m, 16384);
	conn_memory_add_scratch(&m, 16384);
	struct conn_memory_held a = { { 0 } };
	ck_assert(conn_memory_admit(&m, &a, 1000, 0, &first, &ended));
	ck_assert(conn_memory_room(&m, 0, 1000, false, 1));          /* 2000: fits */
	ck_assert(!conn_memory_over_total(&m));
	conn_memory_figures(&m, &f);
	ck_assert_uint_eq(f.scratch, 32768);
	ck_assert_uint_eq(f.total, 32768 + 1000);
	ck_assert_uint_eq(f.peak, 32768 + 1000);
	conn_memory_release(&m, &a);
	conn_memory_figures(&m, &f);
	ck_assert_uint_eq(f.total, 32768);
	conn_memory_destroy(&m);
}
END_TEST

struct test_waiter {
	struct conn_memory_waiter w;       /* first: the callback's argument */
	int woken;
	int order;
};

static int wake_sequence;

static void test_wake(struct conn_memory_waiter *w)
{
	struct test_waiter *t = (struct test_waiter *)w;
	t->woken++;
	t->order = ++wake_sequence;
}

static void waiter_init(struct test_waiter *t)
{
	*t = (struct test_waiter){ .woken = 0 };
	t->w.wake = test_wake;
}

/* Released memory wakes waiters in order, only as many as it covers, and
 * never one behind a waiter that does not fit yet. */
START_TEST(release_wakes_in_order)
{
	struct conn_memory m;
	struct conn_memory_figures f;
	conn_memory_init(&m, 100000, 100000, 10000);
	struct conn_memory_held full = { { 0 } };
	conn_memory_change(&m, Q, &full, 0, 10000);
	struct test_waiter a, b, c;
	waiter_init(&a);
	waiter_init(&b);
	waiter_init(&c);
	wake_sequence = 0;
	ck_assert(conn_memory_wait(&m, &a.w, 3000));
	ck_assert(conn_memory_wait(&m, &b.w, 5000));
	ck_assert(conn_memory_wait(&m, &c.w, 1000));
	conn_memory_figures(&m, &f);
	ck_assert_uint_eq(f.waiting, 3);
	conn_memory_change(&m, Q, &full, 10000, 6000);     /* 4000 free: a only */
	ck_assert_int_eq(a.woken, 1);
	ck_assert_int_eq(b.woken + c.woken, 0);            /* c fits, but is behind b */
	ck_assert(atomic_load(&a.w.woken));
	/* a's 3000 are promised: 1000 more free is not yet b's 5000 */
	conn_memory_change(&m, Q, &full, 6000, 5000);
	ck_assert_int_eq(b.woken + c.woken, 0);
	conn_memory_claim(&m, &a.w);                       /* a took nothing after all */
	ck_assert(!atomic_load(&a.w.woken));
	conn_memory_change(&m, Q, &full, 5000, 4000);      /* 6000 free: b and c */
	ck_assert_int_eq(b.woken, 1);
	ck_assert_int_eq(c.woken, 1);
	ck_assert_int_lt(b.order, c.order);
	conn_memory_figures(&m, &f);
	ck_assert_uint_eq(f.waiting, 0);
	ck_assert_uint_eq(f.wakeups, 3);
	conn_memory_claim(&m, &b.w);
	conn_memory_claim(&m, &c.w);
	ck_assert_uint_eq(m.promised, 0);
	conn_memory_release(&m, &full);
	conn_memory_destroy(&m);
}
END_TEST

/* Room that appeared between the caller's check and the wait: no wait.
 * A waiter that goes away (teardown) leaves the list, and what it was
 * promised goes to the next. */
START_TEST(wait_and_unwait)
{
	struct conn_memory m;
	conn_memory_init(&m, 100000, 100000, 10000);
	struct test_waiter a, b;
	waiter_init(&a);
	waiter_init(&b);
	ck_assert(!conn_memory_wait(&m, &a.w, 3000));      /* room now */
	ck_assert(!a.w.listed);
	struct conn_memory_held full = { { 0 } };
	conn_memory_change(&m, Q, &full, 0, 9500);
	ck_assert(conn_memory_wait(&m, &a.w, 1000));
	ck_assert(conn_memory_wait(&m, &a.w, 2000));      /* listed once, bytes updated */
	ck_assert(conn_memory_wait(&m, &b.w, 1000));
	ck_assert_uint_eq(atomic_load(&m.n_waiting), 2);
	conn_memory_change(&m, Q, &full, 9500, 7000);      /* 3000 free: a (2000) and b */
	ck_assert_int_eq(a.woken + b.woken, 2);
	conn_memory_claim(&m, &a.w);
	conn_memory_claim(&m, &b.w);
	ck_assert_uint_eq(m.promised, 0);
	conn_memory_change(&m, Q, &full, 7000, 9500);
	waiter_init(&a);
	waiter_init(&b);
	ck_assert(conn_memory_wait(&m, &a.w, 800));
	ck_assert(conn_memory_wait(&m, &b.w, 400));
	conn_memory_change(&m, Q, &full, 9500, 9000);      /* 1000: a is woken */
	ck_assert_int_eq(a.woken, 1);
	ck_assert_int_eq(b.woken, 0);
	conn_memory_unwait(&m, &a.w);                      /* a closes instead */
	ck_assert_int_eq(b.woken, 1);
	conn_memory_unwait(&m, &b.w);
	ck_assert_uint_eq(m.promised, 0);
	ck_assert_uint_eq(atomic_load(&m.n_waiting), 0);
	conn_memory_release(&m, &full);
	conn_memory_destroy(&m);
}
END_TEST

/* A release racing a waiter's listing never leaves it asleep with room
 * free: either the waiter sees the release or the release sees it. */
static struct conn_memory raced;
static atomic_int raced_woken;

static void raced_wake(struct conn_memory_waiter *w)
{
	(void)w;
	atomic_fetch_add(&raced_woken, 1);
}

static void *raced_release(void *arg)
{
	struct conn_memory_held *held = arg;
	conn_memory_change(&raced, Q, held, 1000, 0);
	return NULL;
}

START_TEST(no_lost_wakeup)
{
	for (int round = 0; round < 2000; round++) {
		conn_memory_init(&raced, 100000, 100000, 1000);
		atomic_store(&raced_woken, 0);
		struct conn_memory_held held = { { 0 } };
		conn_memory_change(&raced, Q, &held, 0, 1000);
		struct conn_memory_waiter w = { .wake = raced_wake };
		pthread_t t;
		ck_assert_int_eq(pthread_create(&t, NULL, raced_release, &held), 0);
		bool waiting = !conn_memory_room(&raced, 0, 500, false, 1) &&
			       conn_memory_wait(&raced, &w, 500);
		pthread_join(t, NULL);
		if (waiting)
			ck_assert_int_eq(atomic_load(&raced_woken), 1);
		conn_memory_unwait(&raced, &w);
		conn_memory_destroy(&raced);
	}
}
END_TEST

/* Output buffers double, but near the total's bound they grow to what
 * they hold (4 KiB steps): their slack would count against everyone. */
START_TEST(output_capacity_near_the_bound)
{
	struct conn_memory m;
	conn_memory_init(&m, 1 << 20, 1 << 20, 1000000);
	ck_assert_uint_eq(conn_memory_output_capacity(&m, 0, 100, 16384), 16384);
	ck_assert_uint_eq(conn_memory_output_capacity(&m, 16384, 20000, 16384), 32768);
	ck_assert_uint_eq(conn_memory_output_capacity(&m, 16384, 70000, 16384), 131072);
	struct conn_memory_held held = { { 0 } };
	conn_memory_change(&m, CONN_MEM_OUTPUT, &held, 0, 990000);
	/* doubling 65536 to 131072 would pass 1000000: 70000 in 4 KiB steps */
	ck_assert_uint_eq(conn_memory_output_capacity(&m, 65536, 70000, 16384), 73728);
	/* the exact size is never more than doubling would give */
	ck_assert_uint_eq(conn_memory_output_capacity(&m, 65536, 131072, 16384), 131072);
	ck_assert_uint_eq(conn_memory_output_capacity(&m, 0, 10, 16384), 4096);
	conn_memory_release(&m, &held);
	conn_memory_destroy(&m);
	conn_memory_init(&m, 1 << 20, 1 << 20, 0);         /* no bound: doubling */
	conn_memory_change(&m, CONN_MEM_OUTPUT, &held, 0, (size_t)1 << 40);
	ck_assert_uint_eq(conn_memory_output_capacity(&m, 65536, 70000, 16384), 131072);
	conn_memory_release(&m, &held);
	conn_memory_destroy(&m);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("conn_memory");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, figures_follow_changes);
	tcase_add_test(tc, room_rules);
	tcase_add_test(tc, no_total_bound);
	tcase_add_test(tc, output_full_rules);
	tcase_add_test(tc, resume_rules);
	tcase_add_test(tc, threads_add_up);
	tcase_add_test(tc, kinds_add_up);
	tcase_add_test(tc, admission_counts_bases);
	tcase_add_test(tc, admission_counts_tls);
	tcase_add_test(tc, tls_reserve_and_growth);
	tcase_add_test(tc, scratch_reported_not_weighed);
	tcase_add_test(tc, release_wakes_in_order);
	tcase_add_test(tc, wait_and_unwait);
	tcase_add_test(tc, no_lost_wakeup);
	tcase_add_test(tc, output_capacity_near_the_bound);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
