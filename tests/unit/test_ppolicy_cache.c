/*
 * test_ppolicy_cache.c — parsed policies by DN (src/server/ppolicy_cache.c):
 * hits and misses, negative answers, a write to a policy dropping what was
 * cached and refusing an answer read before it, eviction, long DNs.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "lumen_error.h"
#include "ppolicy_cache.h"

static struct ber_view text(const char *s)
{
	return (struct ber_view){ (const uint8_t *)s, strlen(s) };
}

static struct ppolicy_cache cache;

static void setup(void)
{
	ck_assert_int_eq(ppolicy_cache_init(&cache), LUMEN_OK);
}

static void teardown(void)
{
	ppolicy_cache_destroy(&cache);
}

START_TEST(miss_then_hit)
{
	struct ppolicy p = { .max_failure = 3 }, got;
	bool found;
	uint64_t generation;
	ck_assert(!ppolicy_cache_get(&cache, text("cn=a"), &got, &found, &generation));
	ppolicy_cache_put(&cache, text("cn=a"), generation, &p, true);
	memset(&got, 0, sizeof(got));
	ck_assert(ppolicy_cache_get(&cache, text("cn=a"), &got, &found, &generation));
	ck_assert(found);
	ck_assert_int_eq(got.max_failure, 3);
	ck_assert(!ppolicy_cache_get(&cache, text("cn=b"), &got, &found, &generation));
}
END_TEST

START_TEST(negative_answer)
{
	struct ppolicy got;
	bool found = true;
	uint64_t generation;
	ck_assert(!ppolicy_cache_get(&cache, text("cn=none"), &got, &found, &generation));
	ppolicy_cache_put(&cache, text("cn=none"), generation, NULL, false);
	ck_assert(ppolicy_cache_get(&cache, text("cn=none"), &got, &found, &generation));
	ck_assert(!found);
}
END_TEST

START_TEST(write_drops_and_refuses_stale)
{
	struct ppolicy p = { .max_failure = 3 }, got;
	bool found;
	uint64_t generation, stale;
	ppolicy_cache_get(&cache, text("cn=a"), &got, &found, &generation);
	ppolicy_cache_put(&cache, text("cn=a"), generation, &p, true);
	/* A reader starts, a write to a policy begins: what it read is not kept. */
	ck_assert(!ppolicy_cache_get(&cache, text("cn=b"), &got, &found, &stale));
	ppolicy_cache_changing(&cache);
	ck_assert(!ppolicy_cache_get(&cache, text("cn=a"), &got, &found, &generation));
	ppolicy_cache_put(&cache, text("cn=b"), stale, &p, true);
	ck_assert(!ppolicy_cache_get(&cache, text("cn=b"), &got, &found, &generation));
	/* One read from a snapshot before the commit is dropped at the commit. */
	ppolicy_cache_put(&cache, text("cn=a"), generation, &p, true);
	ck_assert(ppolicy_cache_get(&cache, text("cn=a"), &got, &found, &generation));
	ppolicy_cache_committed(&cache);
	ck_assert(!ppolicy_cache_get(&cache, text("cn=a"), &got, &found, &generation));
	/* Commits of other writes leave the cache alone. */
	ppolicy_cache_put(&cache, text("cn=a"), generation, &p, true);
	ppolicy_cache_committed(&cache);
	ck_assert(ppolicy_cache_get(&cache, text("cn=a"), &got, &found, &generation));
}
END_TEST

START_TEST(eviction_and_long_dns)
{
	struct ppolicy p = { 0 }, got;
	bool found;
	uint64_t generation;
	char dn[32];
	for (int i = 0; i < PPOLICY_CACHE_SLOTS + 4; i++) {
		snprintf(dn, sizeof(dn), "cn=p%d", i);
		p.max_failure = i;
		ppolicy_cache_get(&cache, text(dn), &got, &found, &generation);
		ppolicy_cache_put(&cache, text(dn), generation, &p, true);
		ck_assert(ppolicy_cache_get(&cache, text(dn), &got, &found, &generation));
		ck_assert_int_eq(got.max_failure, i);
	}
	char long_dn[PPOLICY_CACHE_DN_MAX + 8];
	memset(long_dn, 'x', sizeof(long_dn) - 1);
	long_dn[sizeof(long_dn) - 1] = '\0';
	ppolicy_cache_get(&cache, text(long_dn), &got, &found, &generation);
	ppolicy_cache_put(&cache, text(long_dn), generation, &p, true);
	ck_assert(!ppolicy_cache_get(&cache, text(long_dn), &got, &found, &generation));
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("ppolicy_cache");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, miss_then_hit);
	tcase_add_test(tc, negative_answer);
	tcase_add_test(tc, write_drops_and_refuses_stale);
	tcase_add_test(tc, eviction_and_long_dns);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
