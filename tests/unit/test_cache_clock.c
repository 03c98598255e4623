/*
 * test_cache_clock.c — the CLOCK ring and shard sizing both back-mdb caches
 * use: free positions first, second chances for referenced ones, releases,
 * the staleness mark and the counters; the doorkeeper asked from several
 * threads without the lock while positions come and go under it.
 */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>

#include "cache_clock.h"
#include "lumen_error.h"

START_TEST(test_shards)
{
	ck_assert_uint_eq(cache_shard_count(0), 1);
	ck_assert_uint_eq(cache_shard_count(31), 1);
	ck_assert_uint_eq(cache_shard_count(32), 2);
	ck_assert_uint_eq(cache_shard_count(10000), 16);
	size_t total = 0;
	for (size_t i = 0; i < 16; i++)
		total += cache_shard_capacity(10007, 16, i);
	ck_assert_uint_eq(total, 10007);
	ck_assert_uint_eq(cache_shard_capacity(10007, 16, 0), 626);
	ck_assert_uint_eq(cache_shard_capacity(10007, 16, 15), 625);
}
END_TEST

START_TEST(test_clock)
{
	struct cache_clock c;
	bool evicted;
	ck_assert_int_eq(cache_clock_init(&c, 3), LUMEN_OK);
	/* free positions in order, no eviction */
	for (size_t i = 0; i < 3; i++) {
		ck_assert_uint_eq(cache_clock_take(&c, &evicted), i);
		ck_assert(!evicted);
	}
	ck_assert_uint_eq(c.used, 3);
	/* full: the hand passes over referenced positions once */
	cache_clock_touch(&c, 0);
	cache_clock_touch(&c, 1);
	ck_assert_uint_eq(cache_clock_take(&c, &evicted), 2);
	ck_assert(evicted);
	ck_assert_uint_eq(c.counts.evictions, 1);
	ck_assert_uint_eq(c.used, 3);
	/* their bits were cleared on the way: next the hand takes 0 */
	ck_assert_uint_eq(cache_clock_take(&c, &evicted), 0);
	ck_assert(evicted);
	/* a released position is reused before any eviction */
	cache_clock_release(&c, 1);
	ck_assert_uint_eq(c.used, 2);
	ck_assert_uint_eq(cache_clock_take(&c, &evicted), 1);
	ck_assert(!evicted);
	ck_assert_uint_eq(c.counts.evictions, 2);
	cache_clock_free(&c);
}
END_TEST

START_TEST(test_staleness_and_counters)
{
	struct cache_clock c;
	ck_assert_int_eq(cache_clock_init(&c, 0), LUMEN_OK);
	ck_assert(cache_clock_fresh(&c, 0));
	cache_clock_invalidated(&c, 10);
	cache_clock_invalidated(&c, 7);      /* never moves back */
	ck_assert(!cache_clock_fresh(&c, 9));
	ck_assert(cache_clock_fresh(&c, 10));
	c.counts = (struct cache_counters){ 1, 2, 3, 4, 5, 6 };
	struct cache_counters sum = { 10, 10, 10, 10, 10, 10 };
	cache_counters_add(&sum, &c.counts);
	ck_assert_uint_eq(sum.hits, 11);
	ck_assert_uint_eq(sum.refused, 15);
	ck_assert_uint_eq(sum.not_admitted, 16);
	cache_clock_free(&c);
}
END_TEST

/* The stricter question needs two earlier sightings; the doorkeeper's
 * clearing forgets both. */
START_TEST(test_admit_seen_twice)
{
	struct cache_clock c;
	bool evicted;
	ck_assert_int_eq(cache_clock_init(&c, 2), LUMEN_OK);
	ck_assert(cache_clock_admit_seen_twice(&c, 5ull << 20));      /* free positions */
	cache_clock_take(&c, &evicted);
	cache_clock_take(&c, &evicted);
	ck_assert(!cache_clock_admit_seen_twice(&c, 5ull << 20));
	ck_assert(cache_clock_admit(&c, 5ull << 20));                 /* once suffices here */
	ck_assert(!cache_clock_admit_seen_twice(&c, 5ull << 20));
	ck_assert(cache_clock_admit_seen_twice(&c, 5ull << 20));
	struct cache_counters sum = { 0 };
	cache_clock_add_counters(&sum, &c);
	ck_assert_uint_eq(sum.not_admitted, 2);
	/* capacity (2) more first sightings clear the doorkeeper: 5 is forgotten */
	ck_assert(!cache_clock_admit(&c, 6ull << 20));
	ck_assert(!cache_clock_admit(&c, 7ull << 20));
	ck_assert(!cache_clock_admit_seen_twice(&c, 5ull << 20));
	ck_assert(!cache_clock_admit_seen_twice(&c, 5ull << 20));
	ck_assert(cache_clock_admit_seen_twice(&c, 5ull << 20));
	cache_clock_free(&c);
	/* caching disabled: never */
	ck_assert_int_eq(cache_clock_init(&c, 0), LUMEN_OK);
	ck_assert(!cache_clock_admit_seen_twice(&c, 5ull << 20));
	cache_clock_free(&c);
}
END_TEST

/* Threads asking the doorkeeper without the lock, while the main thread
 * frees and takes positions under it (so the shard is now full, now not). */
#define ASKERS 4
#define ASKS_PER_THREAD 1000000

struct asker {
	struct cache_clock *clock;
	pthread_barrier_t *start;   /* all at once: the races are the point */
	unsigned seed;
	uint64_t refused;
};

static void *ask_many(void *arg)
{
	struct asker *a = arg;
	pthread_barrier_wait(a->start);
	for (unsigned i = 0; i < ASKS_PER_THREAD; i++) {
		uint64_t hash = (uint64_t)(rand_r(&a->seed) % 50000) << 20;
		bool admitted = i % 2 ? cache_clock_admit(a->clock, hash)
				      : cache_clock_admit_seen_twice(a->clock, hash);
		a->refused += !admitted;
	}
	return NULL;
}

START_TEST(test_doorkeeper_without_the_lock)
{
	struct cache_clock c;
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	bool evicted;
	ck_assert_int_eq(cache_clock_init(&c, 64), LUMEN_OK);
	for (int i = 0; i < 64; i++)
		cache_clock_take(&c, &evicted);
	struct asker askers[ASKERS];
	pthread_t threads[ASKERS];
	pthread_barrier_t start;
	pthread_barrier_init(&start, NULL, ASKERS + 1);
	for (unsigned i = 0; i < ASKERS; i++) {
		askers[i] = (struct asker){ .clock = &c, .start = &start, .seed = i + 1 };
		ck_assert_int_eq(pthread_create(&threads[i], NULL, ask_many, &askers[i]), 0);
	}
	pthread_barrier_wait(&start);
	for (unsigned i = 0; i < 20000; i++) {
		pthread_mutex_lock(&lock);
		if (i % 2 == 0)
			cache_clock_release(&c, i % 64);
		else
			cache_clock_take(&c, &evicted);
		pthread_mutex_unlock(&lock);
	}
	uint64_t refused = 0;
	for (unsigned i = 0; i < ASKERS; i++) {
		pthread_join(threads[i], NULL);
		refused += askers[i].refused;
	}
	pthread_barrier_destroy(&start);
	/* Every refusal was counted once, whatever the races. */
	struct cache_counters sum = { 0 };
	cache_clock_add_counters(&sum, &c);
	ck_assert_uint_gt(refused, 0);
	ck_assert_uint_eq(sum.not_admitted, refused);
	/* The last step took the last free position: full, as the flag says;
	 * a position freed is seen at once. */
	ck_assert_uint_eq(c.n_free, 0);
	ck_assert(atomic_load(&c.full));
	cache_clock_release(&c, 5);
	ck_assert(!atomic_load(&c.full));
	ck_assert(cache_clock_admit(&c, 123456ull << 20));
	cache_clock_take(&c, &evicted);
	ck_assert(atomic_load(&c.full));
	cache_clock_free(&c);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("cache_clock");
	TCase *tc = tcase_create("cache_clock");
	tcase_add_test(tc, test_shards);
	tcase_add_test(tc, test_clock);
	tcase_add_test(tc, test_staleness_and_counters);
	tcase_add_test(tc, test_admit_seen_twice);
	tcase_add_test(tc, test_doorkeeper_without_the_lock);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
