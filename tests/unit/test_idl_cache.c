/*
 * test_idl_cache.c — index lookup cache: copies, eviction, invalidation
 * with versions, size bound per key and concurrent use.
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "idl_cache.h"
#include "lumen_error.h"

static struct idl_cache *cache;

static struct index_key key_of(const char *s)
{
	struct index_key k;
	index_key_make(INDEX_EQUALITY, (const uint8_t *)s, strlen(s), &k);
	return k;
}

static void list_of(struct idl *l, uint64_t first, size_t n)
{
	idl_init(l);
	for (size_t i = 0; i < n; i++)
		idl_insert(l, first + i);
}

static void setup(void)
{
	ck_assert_int_eq(idl_cache_create(2, 3, &cache), LUMEN_OK);
}

static void teardown(void)
{
	idl_cache_destroy(cache);
	cache = NULL;
}

static struct cache_stats stats(void)
{
	struct cache_stats s;
	idl_cache_get_stats(cache, &s);
	return s;
}

START_TEST(put_get_copies)
{
	struct index_key k = key_of("alice");
	struct idl in, out;

	list_of(&in, 10, 3);
	idl_init(&out);
	ck_assert_int_eq(idl_cache_get(cache, 1, &k, &out), LUMEN_ENOTFOUND);
	ck_assert_int_eq(idl_cache_put(cache, 1, &k, &in, 5), LUMEN_OK);
	idl_insert(&in, 99); /* the cache holds its own copy */
	ck_assert_int_eq(idl_cache_get(cache, 1, &k, &out), LUMEN_OK);
	ck_assert(!out.is_range && out.count == 3 && out.ids[0] == 10 && out.ids[2] == 12);
	ck_assert_int_eq(idl_cache_get(cache, 2, &k, &out), LUMEN_ENOTFOUND); /* other table */

	/* ranges are cached as ranges */
	struct index_key r = key_of("common");
	idl_set_range(&in, 5, 500000);
	ck_assert_int_eq(idl_cache_put(cache, 1, &r, &in, 5), LUMEN_OK);
	ck_assert_int_eq(idl_cache_get(cache, 1, &r, &out), LUMEN_OK);
	ck_assert(out.is_range && out.lo == 5 && out.hi == 500000);

	/* a hit into a too-small caller buffer: covering range */
	uint64_t buf[2];
	struct idl small;
	idl_init_buffer(&small, buf, 2);
	ck_assert_int_eq(idl_cache_get(cache, 1, &k, &small), LUMEN_OK);
	ck_assert(small.is_range && small.lo == 10 && small.hi == 12);

	struct cache_stats s = stats();
	ck_assert_uint_eq(s.hits, 3);
	ck_assert_uint_eq(s.misses, 2);
	ck_assert_uint_eq(s.size, 2);
	idl_release(&in);
	idl_release(&out);
}
END_TEST

START_TEST(evict_and_bound)
{
	struct index_key a = key_of("a"), b = key_of("b"), c = key_of("c"), d = key_of("d");
	struct idl l, out;

	list_of(&l, 1, 2);
	idl_init(&out);
	ck_assert_int_eq(idl_cache_put(cache, 1, &a, &l, 1), LUMEN_OK);
	ck_assert_int_eq(idl_cache_put(cache, 1, &b, &l, 1), LUMEN_OK);
	ck_assert_int_eq(idl_cache_get(cache, 1, &a, &out), LUMEN_OK); /* a referenced */
	ck_assert_int_eq(idl_cache_put(cache, 1, &c, &l, 1), LUMEN_OK);   /* first sight: */
	ck_assert_int_eq(idl_cache_get(cache, 1, &c, &out), LUMEN_ENOTFOUND); /* not kept */
	ck_assert_uint_eq(stats().not_admitted, 1);
	ck_assert_int_eq(idl_cache_put(cache, 1, &c, &l, 1), LUMEN_OK);   /* evicts b */
	ck_assert_int_eq(idl_cache_get(cache, 1, &b, &out), LUMEN_ENOTFOUND);
	ck_assert_int_eq(idl_cache_get(cache, 1, &a, &out), LUMEN_OK);
	ck_assert_int_eq(idl_cache_get(cache, 1, &c, &out), LUMEN_OK);
	ck_assert_uint_eq(stats().evictions, 1);
	ck_assert_uint_eq(stats().size, 2);

	/* lists longer than max_ids (3) are not cached */
	idl_release(&l);
	list_of(&l, 1, 4);
	ck_assert_int_eq(idl_cache_put(cache, 1, &d, &l, 1), LUMEN_OK);
	ck_assert_int_eq(idl_cache_get(cache, 1, &d, &out), LUMEN_ENOTFOUND);
	ck_assert_uint_eq(stats().inserts_refused, 1);
	idl_release(&l);
	idl_release(&out);
}
END_TEST

START_TEST(invalidate_and_versions)
{
	struct index_key k = key_of("k");
	struct idl l, out;

	list_of(&l, 7, 1);
	idl_init(&out);
	ck_assert_int_eq(idl_cache_put(cache, 1, &k, &l, 10), LUMEN_OK);
	idl_cache_invalidate(cache, 1, &k, 11);
	ck_assert_int_eq(idl_cache_get(cache, 1, &k, &out), LUMEN_ENOTFOUND);
	ck_assert_uint_eq(stats().invalidations, 1);
	ck_assert_uint_eq(stats().size, 0);
	/* a snapshot older than the write is refused, a newer one kept */
	ck_assert_int_eq(idl_cache_put(cache, 1, &k, &l, 10), LUMEN_OK);
	ck_assert_int_eq(idl_cache_get(cache, 1, &k, &out), LUMEN_ENOTFOUND);
	ck_assert_int_eq(idl_cache_put(cache, 1, &k, &l, 11), LUMEN_OK);
	ck_assert_int_eq(idl_cache_get(cache, 1, &k, &out), LUMEN_OK);
	/* replacing a cached key updates it in place */
	idl_insert(&l, 8);
	ck_assert_int_eq(idl_cache_put(cache, 1, &k, &l, 12), LUMEN_OK);
	ck_assert_int_eq(idl_cache_get(cache, 1, &k, &out), LUMEN_OK);
	ck_assert_uint_eq(out.count, 2);
	ck_assert_uint_eq(stats().size, 1);
	idl_release(&l);
	idl_release(&out);
}
END_TEST

/*
 * Gets answer "absent" without the lock where no cached key shares their
 * slot: thousands of keys pass through, each found while cached and
 * missed once invalidated, and the one key kept throughout is still
 * found; every get is counted, hit or miss.
 */
START_TEST(kept_key_found_after_churn)
{
	struct index_key kept = key_of("kept");
	struct idl l, out;
	uint64_t version = 1;
	char name[32];

	list_of(&l, 1, 1);
	idl_init(&out);
	ck_assert_int_eq(idl_cache_put(cache, 1, &kept, &l, version), LUMEN_OK);
	for (int i = 0; i < 4000; i++) {
		snprintf(name, sizeof(name), "key-%d", i);
		struct index_key k = key_of(name);
		ck_assert_int_eq(idl_cache_put(cache, 1, &k, &l, ++version), LUMEN_OK);
		ck_assert_int_eq(idl_cache_get(cache, 1, &k, &out), LUMEN_OK);
		idl_cache_invalidate(cache, 1, &k, ++version);
		ck_assert_int_eq(idl_cache_get(cache, 1, &k, &out), LUMEN_ENOTFOUND);
		if (i % 400 == 0)
			ck_assert_int_eq(idl_cache_get(cache, 1, &kept, &out), LUMEN_OK);
	}
	ck_assert_int_eq(idl_cache_get(cache, 1, &kept, &out), LUMEN_OK);
	struct cache_stats s = stats();
	ck_assert_uint_eq(s.hits, 4000 + 11);
	ck_assert_uint_eq(s.misses, 4000);
	ck_assert_uint_eq(s.size, 1);
	idl_release(&l);
	idl_release(&out);
}
END_TEST

START_TEST(disabled_cache)
{
	struct idl_cache *off;
	struct index_key k = key_of("k");
	struct idl l;

	ck_assert_int_eq(idl_cache_create(0, 0, &off), LUMEN_OK);
	list_of(&l, 1, 1);
	ck_assert_int_eq(idl_cache_put(off, 1, &k, &l, 1), LUMEN_OK);
	ck_assert_int_eq(idl_cache_get(off, 1, &k, &l), LUMEN_ENOTFOUND);
	idl_cache_invalidate(off, 1, &k, 2);
	idl_cache_destroy(off);
	idl_release(&l);
}
END_TEST

enum { THREADS = 4, ROUNDS = 20000, KEYS = 200 };
static struct idl_cache *shared;

/* Key n always maps to the list {n, n+1, ..., n + n%3}. */
static void *worker(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	struct idl l, out;
	void *result = NULL;

	idl_init(&l);
	idl_init(&out);
	for (int i = 0; i < ROUNDS && result == NULL; i++) {
		uint64_t n = (uint64_t)(rand_r(&seed) % KEYS) + 1;
		struct index_key k;
		index_key_make(INDEX_EQUALITY, (const uint8_t *)&n, sizeof(n), &k);
		int op = rand_r(&seed) % 8;
		if (op == 0) {
			idl_cache_invalidate(shared, 1, &k, (uint64_t)i);
		} else if (idl_cache_get(shared, 1, &k, &out) == LUMEN_OK) {
			if (out.count != n % 3 + 1 || out.ids[0] != n)
				result = (void *)1;
		} else {
			idl_clear(&l);
			for (uint64_t j = 0; j <= n % 3; j++)
				idl_insert(&l, n + j);
			if (idl_cache_put(shared, 1, &k, &l, (uint64_t)i) != LUMEN_OK)
				result = (void *)1;
		}
	}
	idl_release(&l);
	idl_release(&out);
	return result;
}

START_TEST(concurrent_use)
{
	pthread_t threads[THREADS];

	ck_assert_int_eq(idl_cache_create(128, 0, &shared), LUMEN_OK);
	for (uintptr_t i = 0; i < THREADS; i++)
		ck_assert_int_eq(pthread_create(&threads[i], NULL, worker, (void *)(i + 1)), 0);
	for (int i = 0; i < THREADS; i++) {
		void *result;
		pthread_join(threads[i], &result);
		ck_assert_ptr_null(result);
	}
	struct cache_stats s;
	idl_cache_get_stats(shared, &s);
	ck_assert_uint_le(s.size, 128);
	ck_assert_uint_gt(s.hits, 0);
	ck_assert_uint_gt(s.evictions, 0);
	idl_cache_destroy(shared);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("idl_cache");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, put_get_copies);
	tcase_add_test(tc, evict_and_bound);
	tcase_add_test(tc, invalidate_and_versions);
	tcase_add_test(tc, kept_key_found_after_churn);
	tcase_add_test(tc, disabled_cache);
	tcase_add_test(tc, concurrent_use);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
