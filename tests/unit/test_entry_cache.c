/*
 * test_entry_cache.c — hits, misses, CLOCK eviction, a scan's inserts
 * that never evict, invalidation with versions, reference counting and
 * concurrent use.
 */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "entry_cache.h"
#include "lumen_error.h"

struct object {
	uint64_t id;
	uint64_t magic;
};

#define MAGIC 0x5eed5eed5eed5eedull

static atomic_ulong created, destroyed;

static void destroy_object(void *p, void *ctx)
{
	struct object *o = p;
	(void)ctx;
	ck_assert_uint_eq(o->magic, MAGIC);
	o->magic = 0;
	free(o);
	atomic_fetch_add(&destroyed, 1);
}

static struct object *new_object(uint64_t id)
{
	struct object *o = malloc(sizeof(*o));
	ck_assert_ptr_nonnull(o);
	o->id = id;
	o->magic = MAGIC;
	atomic_fetch_add(&created, 1);
	return o;
}

static struct entry_cache *cache;

static void setup(void)
{
	atomic_store(&created, 0);
	atomic_store(&destroyed, 0);
	ck_assert_int_eq(entry_cache_create(4, destroy_object, NULL, &cache), LUMEN_OK);
}

static void teardown(void)
{
	entry_cache_destroy(cache);
	cache = NULL;
	ck_assert_uint_eq(atomic_load(&created), atomic_load(&destroyed));
}

static void put(uint64_t id, uint64_t version)
{
	struct entry_cache_handle *h;
	ck_assert_int_eq(entry_cache_insert(cache, id, new_object(id), version, &h), LUMEN_OK);
	ck_assert_uint_eq(((struct object *)entry_cache_object(h))->id, id);
	entry_cache_release(cache, h);
}

static void put_scan(uint64_t id, uint64_t version)
{
	struct entry_cache_handle *h;
	ck_assert_int_eq(entry_cache_insert_scan(cache, id, new_object(id), version, &h),
			 LUMEN_OK);
	ck_assert_uint_eq(((struct object *)entry_cache_object(h))->id, id);
	entry_cache_release(cache, h);
}

static bool cached(uint64_t id)
{
	struct entry_cache_handle *h;
	int rc = entry_cache_get(cache, id, &h);
	if (rc == LUMEN_ENOTFOUND)
		return false;
	ck_assert_int_eq(rc, LUMEN_OK);
	ck_assert_uint_eq(((struct object *)entry_cache_object(h))->id, id);
	entry_cache_release(cache, h);
	return true;
}

static struct cache_stats stats(void)
{
	struct cache_stats s;
	entry_cache_get_stats(cache, &s);
	return s;
}

START_TEST(hit_miss_evict)
{
	for (uint64_t id = 1; id <= 4; id++)
		put(id, 1);
	ck_assert_uint_eq(stats().size, 4);
	ck_assert(cached(1));    /* sets 1's CLOCK bit */
	put(5, 1);               /* full, and 5 never seen: not admitted */
	ck_assert(!cached(5));
	ck_assert_uint_eq(stats().not_admitted, 1);
	ck_assert_uint_eq(stats().evictions, 0);
	put(5, 1);               /* seen before: the hand passes 1, evicts 2 */
	ck_assert(!cached(2));
	ck_assert(cached(1));
	ck_assert(cached(5));
	struct cache_stats s = stats();
	ck_assert_uint_eq(s.hits, 3);
	ck_assert_uint_eq(s.misses, 2);
	ck_assert_uint_eq(s.evictions, 1);
	ck_assert_uint_eq(s.not_admitted, 1);
	ck_assert_uint_eq(s.size, 4);
	ck_assert_uint_eq(s.capacity, 4);
	ck_assert_uint_eq(atomic_load(&destroyed), 2);   /* 5's first copy, and 2 */
}
END_TEST

/* Under uniform access to many more keys than fit, a first sight while
 * full evicts nothing; the doorkeeper forgets after `capacity` refusals, so
 * a key must come back soon to get in, and a freed position admits
 * anyone. */
START_TEST(admission_once_full)
{
	for (uint64_t id = 1; id <= 4; id++)
		put(id, 1);
	for (uint64_t id = 100; id < 200; id++)
		put(id, 1);
	struct cache_stats s = stats();
	ck_assert_uint_eq(s.evictions, 0);
	ck_assert_uint_eq(s.not_admitted, 100);
	for (uint64_t id = 1; id <= 4; id++)
		ck_assert(cached(id));
	put(198, 1);             /* seen within the last `capacity` refusals */
	ck_assert(cached(198));
	ck_assert_uint_eq(stats().evictions, 1);
	put(100, 1);             /* seen, but 98 refusals ago: forgotten */
	ck_assert(!cached(100));
	entry_cache_invalidate(cache, 198, 2);
	put(150, 2);             /* a free position: in at first sight */
	ck_assert(cached(150));
}
END_TEST

/* A held object is handed back, never cached, counted nowhere, and
 * destroyed at its release; the cache's own objects stay as they were. */
START_TEST(hold_never_caches)
{
	put(1, 1);
	struct entry_cache_handle *held, *again;
	ck_assert_int_eq(entry_cache_hold(cache, 2, new_object(2), &held), LUMEN_OK);
	ck_assert_uint_eq(((struct object *)entry_cache_object(held))->id, 2);
	ck_assert(!cached(2));
	/* an ID the cache holds: the held copy is another object */
	ck_assert_int_eq(entry_cache_hold(cache, 1, new_object(1), &again), LUMEN_OK);
	ck_assert_ptr_ne(entry_cache_object(again), NULL);
	entry_cache_release(cache, again);
	ck_assert(cached(1));
	entry_cache_release(cache, held);
	ck_assert_uint_eq(atomic_load(&destroyed), 2);
	struct cache_stats s = stats();
	ck_assert_uint_eq(s.size, 1);
	ck_assert_uint_eq(s.inserts_refused, 0);
	ck_assert_uint_eq(s.not_admitted, 0);
	ck_assert_uint_eq(s.held, 2);
	put(2, 1);               /* a free position: held before does not matter */
	ck_assert(cached(2));
}
END_TEST

/* entry_cache_admits: yes while a position is free; once full, only an ID
 * seen twice before, each refusal a sighting; an insert needs one. */
START_TEST(admits_after_two_sightings)
{
	for (uint64_t id = 1; id <= 3; id++)
		put(id, 1);
	ck_assert(entry_cache_admits(cache, 50));      /* one position is free */
	put(4, 1);
	ck_assert(!entry_cache_admits(cache, 60));     /* full, first sighting */
	ck_assert(!entry_cache_admits(cache, 60));     /* second sighting */
	ck_assert_uint_eq(stats().not_admitted, 2);
	ck_assert(entry_cache_admits(cache, 60));      /* seen twice: admitted */
	ck_assert(entry_cache_admits(cache, 60));      /* asking again notes nothing */
	ck_assert_uint_eq(stats().not_admitted, 2);
	put(60, 1);
	ck_assert(cached(60));
	ck_assert(!entry_cache_admits(cache, 70));
	put(70, 1);                                    /* an insert needs one sighting */
	ck_assert(cached(70));
	ck_assert_uint_eq(stats().not_admitted, 3);
	/* an insert's refusal is a first sighting for the question too */
	put(80, 1);
	ck_assert(!cached(80));
	ck_assert(!entry_cache_admits(cache, 80));
	ck_assert(entry_cache_admits(cache, 80));
	ck_assert_uint_eq(stats().not_admitted, 5);
}
END_TEST

/* A disabled cache admits nothing. */
START_TEST(disabled_cache_admits_nothing)
{
	struct entry_cache *off;
	struct entry_cache_handle *h;
	ck_assert_int_eq(entry_cache_create(0, destroy_object, NULL, &off), LUMEN_OK);
	ck_assert(!entry_cache_admits(off, 1));
	ck_assert_int_eq(entry_cache_hold(off, 1, new_object(1), &h), LUMEN_OK);
	entry_cache_release(off, h);
	entry_cache_destroy(off);
}
END_TEST

/* A scan's misses fill free positions and never evict, however often a
 * key comes back; an ordinary insert still can. */
START_TEST(scan_never_evicts)
{
	put_scan(1, 1);
	put_scan(2, 1);
	ck_assert(cached(1) && cached(2));
	put(3, 1);
	put_scan(4, 1);                           /* the last free position */
	for (int pass = 0; pass < 3; pass++)
		for (uint64_t id = 10; id < 20; id++)
			put_scan(id, 1);         /* seen again and again: still out */
	struct cache_stats s = stats();
	ck_assert_uint_eq(s.size, 4);
	ck_assert_uint_eq(s.evictions, 0);
	for (uint64_t id = 1; id <= 4; id++)
		ck_assert(cached(id));
	ck_assert(!cached(10) && !cached(19));
	put(19, 1);              /* scans leave no doorkeeper mark: first sight */
	ck_assert(!cached(19));
	put(19, 1);                               /* seen while full: admitted */
	ck_assert(cached(19));
	ck_assert_uint_eq(stats().evictions, 1);
}
END_TEST

START_TEST(evicted_object_lives_while_held)
{
	struct entry_cache_handle *held;

	put(1, 1);
	ck_assert_int_eq(entry_cache_get(cache, 1, &held), LUMEN_OK);
	for (uint64_t id = 2; id <= 9; id++) {
		put(id, 1);
		put(id, 1);      /* the second sight gets in once full */
	}
	ck_assert(!cached(1));
	ck_assert_uint_eq(((struct object *)entry_cache_object(held))->magic, MAGIC);
	uint64_t before = atomic_load(&destroyed);
	entry_cache_release(cache, held);
	ck_assert_uint_eq(atomic_load(&destroyed), before + 1);
}
END_TEST

START_TEST(invalidate_and_versions)
{
	struct entry_cache_handle *h;

	put(1, 10);
	entry_cache_invalidate(cache, 1, 12);
	ck_assert(!cached(1));
	ck_assert_uint_eq(stats().invalidations, 1);
	ck_assert_uint_eq(atomic_load(&destroyed), 1);

	/* a reader whose snapshot predates the write must not re-insert */
	ck_assert_int_eq(entry_cache_insert(cache, 1, new_object(1), 11, &h), LUMEN_OK);
	ck_assert_uint_eq(((struct object *)entry_cache_object(h))->id, 1);
	entry_cache_release(cache, h);
	ck_assert(!cached(1));
	ck_assert_uint_eq(stats().inserts_refused, 1);
	put(1, 12);
	ck_assert(cached(1));

	/* a second insert of a cached ID keeps the first object */
	ck_assert_int_eq(entry_cache_insert(cache, 1, new_object(1), 13, &h), LUMEN_OK);
	entry_cache_release(cache, h);
	ck_assert_uint_eq(stats().size, 1);
	ck_assert_uint_eq(stats().inserts_refused, 2);

	/* invalidating an absent ID only records the version */
	entry_cache_invalidate(cache, 77, 20);
	ck_assert_uint_eq(stats().invalidations, 1);
}
END_TEST

/*
 * A held handle released on another thread becomes that thread's spare:
 * holds made on one thread and released on another, both threads then
 * ending, leave every object destroyed and (under LeakSanitizer) every
 * handle freed; the count of holds stays exact.
 */
static void *release_all(void *arg)
{
	struct entry_cache_handle **handles = arg;
	for (int i = 0; i < 100; i++)
		entry_cache_release(cache, handles[i]);
	return NULL;
}

static void *hold_then_hand_over(void *arg)
{
	(void)arg;
	struct entry_cache_handle *handles[100];
	for (int round = 0; round < 3; round++) {
		for (uint64_t i = 0; i < 100; i++)
			if (entry_cache_hold(cache, i, new_object(i), &handles[i]) != LUMEN_OK ||
			    ((struct object *)entry_cache_object(handles[i]))->id != i)
				return (void *)1;
		pthread_t releaser;
		if (pthread_create(&releaser, NULL, release_all, handles) != 0 ||
		    pthread_join(releaser, NULL) != 0)
			return (void *)1;
	}
	struct entry_cache_handle *h;
	for (int i = 0; i < 50; i++) {   /* here: the thread's own spare, again and again */
		if (entry_cache_hold(cache, 7, new_object(7), &h) != LUMEN_OK)
			return (void *)1;
		entry_cache_release(cache, h);
	}
	return NULL;
}

START_TEST(holds_released_on_other_threads)
{
	pthread_t holder;
	void *result = (void *)1;
	ck_assert_int_eq(pthread_create(&holder, NULL, hold_then_hand_over, NULL), 0);
	ck_assert_int_eq(pthread_join(holder, &result), 0);
	ck_assert_ptr_null(result);
	ck_assert_uint_eq(atomic_load(&destroyed), 350);
	ck_assert_uint_eq(stats().held, 350);
	ck_assert_uint_eq(stats().size, 0);
}
END_TEST

/*
 * Gets answer "absent" without the lock where no resident ID shares their
 * slot: thousands of IDs pass through the cache, each found while
 * resident and missed once gone, and the IDs that stay resident on
 * slots so many others came and went from are still found.
 */
START_TEST(residents_found_after_churn)
{
	uint64_t version = 1;
	for (uint64_t id = 1; id <= 3; id++)
		put(id, version);
	for (uint64_t id = 100; id < 5100; id++) {
		put(id, ++version);
		ck_assert(cached(id));
		entry_cache_invalidate(cache, id, ++version);
		ck_assert(!cached(id));
		if (id % 500 == 0)
			for (uint64_t kept = 1; kept <= 3; kept++)
				ck_assert(cached(kept));
	}
	for (uint64_t kept = 1; kept <= 3; kept++)
		ck_assert(cached(kept));
	struct cache_stats s = stats();
	ck_assert_uint_eq(s.hits, 5000 + 11 * 3);
	ck_assert_uint_eq(s.misses, 5000);
	ck_assert_uint_eq(s.size, 3);
}
END_TEST

START_TEST(disabled_cache)
{
	struct entry_cache *off;
	struct entry_cache_handle *h;

	ck_assert_int_eq(entry_cache_create(0, destroy_object, NULL, &off), LUMEN_OK);
	ck_assert_int_eq(entry_cache_insert(off, 1, new_object(1), 1, &h), LUMEN_OK);
	ck_assert_uint_eq(((struct object *)entry_cache_object(h))->id, 1);
	entry_cache_release(off, h);
	ck_assert_int_eq(entry_cache_get(off, 1, &h), LUMEN_ENOTFOUND);
	entry_cache_destroy(off);
	ck_assert_int_eq(entry_cache_create(4, NULL, NULL, &off), LUMEN_EINVAL);
	ck_assert_ptr_null(off);
}
END_TEST

enum { THREADS = 4, ROUNDS = 20000, IDS = 300 };

static struct entry_cache *shared;

static void *worker(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;

	for (int i = 0; i < ROUNDS; i++) {
		uint64_t id = (uint64_t)(rand_r(&seed) % IDS) + 1;
		struct entry_cache_handle *h;
		int op = rand_r(&seed) % 10;
		if (op == 0) {
			entry_cache_invalidate(shared, id, (uint64_t)i);
			continue;
		}
		if (entry_cache_get(shared, id, &h) != LUMEN_OK &&
		    entry_cache_insert(shared, id, new_object(id), (uint64_t)i, &h) != LUMEN_OK)
			return (void *)1;
		struct object *o = entry_cache_object(h);
		if (o->id != id || o->magic != MAGIC)
			return (void *)1;
		entry_cache_release(shared, h);
	}
	return NULL;
}

START_TEST(concurrent_use)
{
	pthread_t threads[THREADS];

	ck_assert_int_eq(entry_cache_create(128, destroy_object, NULL, &shared), LUMEN_OK);
	for (uintptr_t i = 0; i < THREADS; i++)
		ck_assert_int_eq(pthread_create(&threads[i], NULL, worker, (void *)(i + 1)), 0);
	for (int i = 0; i < THREADS; i++) {
		void *result;
		pthread_join(threads[i], &result);
		ck_assert_ptr_null(result);
	}
	struct cache_stats s;
	entry_cache_get_stats(shared, &s);
	ck_assert_uint_le(s.size, 128);
	ck_assert_uint_gt(s.hits, 0);
	ck_assert_uint_gt(s.evictions, 0);
	ck_assert_uint_eq(atomic_load(&created) - atomic_load(&destroyed), s.size);
	entry_cache_destroy(shared);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("entry_cache");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, hit_miss_evict);
	tcase_add_test(tc, scan_never_evicts);
	tcase_add_test(tc, evicted_object_lives_while_held);
	tcase_add_test(tc, admission_once_full);
	tcase_add_test(tc, hold_never_caches);
	tcase_add_test(tc, admits_after_two_sightings);
	tcase_add_test(tc, disabled_cache_admits_nothing);
	tcase_add_test(tc, invalidate_and_versions);
	tcase_add_test(tc, residents_found_after_churn);
	tcase_add_test(tc, holds_released_on_other_threads);
	tcase_add_test(tc, disabled_cache);
	tcase_add_test(tc, concurrent_use);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
