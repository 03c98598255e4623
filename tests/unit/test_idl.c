/*
 * test_idl.c — ID list algebra, ranges and the degrade threshold.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "idl.h"

/* Builds a growable list from a 0-terminated array. */
static void make_list(struct idl *idl, const uint64_t *ids)
{
	idl_init(idl);
	for (; *ids; ids++)
		idl_insert(idl, *ids);
}

static void assert_list(const struct idl *idl, const uint64_t *want)
{
	size_t n = 0;

	ck_assert(!idl->is_range);
	for (; want[n]; n++)
		ck_assert_uint_eq(idl->ids[n], want[n]);
	ck_assert_uint_eq(idl->count, n);
}

START_TEST(insert_sorts_and_dedups)
{
	struct idl l;
	make_list(&l, (const uint64_t[]){ 5, 3, 9, 3, 1, 0 });
	assert_list(&l, (const uint64_t[]){ 1, 3, 5, 9, 0 });
	idl_insert(&l, 0); /* ignored */
	ck_assert_uint_eq(l.count, 4);
	ck_assert(idl_contains(&l, 5));
	ck_assert(!idl_contains(&l, 4));
	ck_assert(!idl_contains(&l, 0));
	idl_delete(&l, 3);
	idl_delete(&l, 4); /* absent: no-op */
	assert_list(&l, (const uint64_t[]){ 1, 5, 9, 0 });
	ck_assert_uint_eq(idl_first(&l), 1);
	ck_assert_uint_eq(idl_last(&l), 9);
	idl_release(&l);
}
END_TEST

struct algebra_case {
	const char *name;
	uint64_t a[8], b[8];
	uint64_t and[8], or[8];
};

static const struct algebra_case algebra_cases[] = {
	{ "disjoint", { 1, 3, 5 }, { 2, 4, 6 }, { 0 }, { 1, 2, 3, 4, 5, 6 } },
	{ "overlap", { 1, 2, 3, 7 }, { 2, 3, 4 }, { 2, 3 }, { 1, 2, 3, 4, 7 } },
	{ "equal", { 4, 8 }, { 4, 8 }, { 4, 8 }, { 4, 8 } },
	{ "a empty", { 0 }, { 4, 8 }, { 0 }, { 4, 8 } },
	{ "b empty", { 4, 8 }, { 0 }, { 0 }, { 4, 8 } },
	{ "subset", { 2, 3, 4, 5, 6 }, { 3, 5 }, { 3, 5 }, { 2, 3, 4, 5, 6 } },
	{ "b before a", { 10, 11 }, { 1, 2 }, { 0 }, { 1, 2, 10, 11 } },
};

START_TEST(list_algebra)
{
	const struct algebra_case *c = &algebra_cases[_i];
	struct idl a, b;

	make_list(&a, c->a);
	make_list(&b, c->b);
	idl_intersect(&a, &b);
	assert_list(&a, c->and);
	idl_release(&a);

	make_list(&a, c->a);
	idl_union(&a, &b);
	assert_list(&a, c->or);
	idl_release(&a);
	idl_release(&b);
}
END_TEST

/* Intersections where one side is much longer take the binary-search path. */
START_TEST(intersect_skewed)
{
	struct idl big, small;

	idl_init(&big);
	for (uint64_t id = 2; id <= 2000; id += 2)
		idl_insert(&big, id);
	make_list(&small, (const uint64_t[]){ 3, 4, 1000, 1001, 2000, 3000, 0 });
	struct idl copy;
	idl_init(&copy);
	idl_copy(&copy, &small);

	idl_intersect(&small, &big);
	assert_list(&small, (const uint64_t[]){ 4, 1000, 2000, 0 });
	idl_intersect(&big, &copy);
	assert_list(&big, (const uint64_t[]){ 4, 1000, 2000, 0 });
	idl_release(&big);
	idl_release(&small);
	idl_release(&copy);
}
END_TEST

START_TEST(range_algebra)
{
	struct idl r, l;

	idl_init(&r);
	idl_set_range(&r, 10, 20);
	ck_assert_uint_eq(idl_size(&r), 11);
	ck_assert(idl_contains(&r, 10) && idl_contains(&r, 20) && !idl_contains(&r, 21));

	/* range ∩ list = the list's IDs inside the range */
	make_list(&l, (const uint64_t[]){ 5, 10, 15, 25, 0 });
	idl_intersect(&r, &l);
	assert_list(&r, (const uint64_t[]){ 10, 15, 0 });

	/* list ∩ range */
	idl_set_range(&r, 6, 15);
	idl_intersect(&l, &r);
	assert_list(&l, (const uint64_t[]){ 10, 15, 0 });

	/* range ∪ list widens the range */
	idl_set_range(&r, 8, 12);
	idl_union(&r, &l);
	ck_assert(r.is_range);
	ck_assert_uint_eq(r.lo, 8);
	ck_assert_uint_eq(r.hi, 15);

	/* range ∩ range, and disjoint ranges become empty */
	struct idl r2;
	idl_init(&r2);
	idl_set_range(&r2, 14, 30);
	idl_intersect(&r, &r2);
	ck_assert(r.is_range && r.lo == 14 && r.hi == 15);
	idl_set_range(&r2, 16, 30);
	idl_intersect(&r, &r2);
	ck_assert(idl_is_empty(&r));

	/* deletes trim range ends only */
	idl_set_range(&r, 3, 5);
	idl_delete(&r, 4);
	ck_assert_uint_eq(idl_size(&r), 3);
	idl_delete(&r, 3);
	idl_delete(&r, 5);
	ck_assert(r.lo == 4 && r.hi == 4);
	idl_delete(&r, 4);
	ck_assert(idl_is_empty(&r));

	idl_set_range(&r, 7, 3);
	ck_assert(idl_is_empty(&r));
	idl_release(&r);
	idl_release(&r2);
	idl_release(&l);
}
END_TEST

START_TEST(degrades_beyond_bound)
{
	struct idl l;

	idl_init(&l);
	for (uint64_t id = 1; id <= IDL_MAX_IDS; id++)
		idl_insert(&l, id * 2);
	ck_assert(!l.is_range);
	ck_assert_uint_eq(l.count, IDL_MAX_IDS);
	idl_insert(&l, 1);
	ck_assert(l.is_range);
	ck_assert_uint_eq(l.lo, 1);
	ck_assert_uint_eq(l.hi, IDL_MAX_IDS * 2);
	idl_release(&l);
}
END_TEST

START_TEST(union_beyond_bound_degrades)
{
	struct idl a, b;

	idl_init(&a);
	idl_init(&b);
	for (uint64_t id = 1; id <= IDL_MAX_IDS / 2 + 1; id++) {
		idl_insert(&a, id * 2);
		idl_insert(&b, id * 2 + 1);
	}
	idl_union(&a, &b);
	ck_assert(a.is_range);
	ck_assert_uint_eq(a.lo, 2);
	ck_assert_uint_eq(a.hi, (IDL_MAX_IDS / 2 + 1) * 2 + 1);
	idl_release(&a);
	idl_release(&b);
}
END_TEST

/* A full caller buffer degrades instead of allocating. */
START_TEST(caller_buffer_degrades)
{
	uint64_t buf[4];
	struct idl l, other;

	idl_init_buffer(&l, buf, 4);
	for (uint64_t id = 1; id <= 4; id++)
		idl_insert(&l, id * 10);
	ck_assert(!l.is_range);
	ck_assert(l.ids == buf);
	idl_insert(&l, 5);
	ck_assert(l.is_range && l.lo == 5 && l.hi == 40);

	/* copy of a bigger list into a small buffer: covering range */
	make_list(&other, (const uint64_t[]){ 2, 3, 4, 5, 6, 7, 0 });
	idl_init_buffer(&l, buf, 4);
	idl_copy(&l, &other);
	ck_assert(l.is_range && l.lo == 2 && l.hi == 7);
	ck_assert(!idl_reserve(&l, 5));
	ck_assert(!idl_reserve(&other, IDL_MAX_IDS + 1));
	idl_release(&other);
	idl_release(&l); /* not owned: must not free buf */
}
END_TEST

START_TEST(iterate_list_and_range)
{
	struct idl l;
	struct idl_iter it;
	uint64_t id, n = 0;

	make_list(&l, (const uint64_t[]){ 4, 2, 0 });
	idl_iter_init(&l, &it);
	ck_assert_uint_eq(idl_iter_next(&l, &it), 2);
	ck_assert_uint_eq(idl_iter_next(&l, &it), 4);
	ck_assert_uint_eq(idl_iter_next(&l, &it), 0);

	idl_set_range(&l, 7, 9);
	idl_iter_init(&l, &it);
	while ((id = idl_iter_next(&l, &it)) != 0) {
		ck_assert_uint_eq(id, 7 + n);
		n++;
	}
	ck_assert_uint_eq(n, 3);

	idl_set_range(&l, IDL_ID_MAX, IDL_ID_MAX);
	idl_iter_init(&l, &it);
	ck_assert_uint_eq(idl_iter_next(&l, &it), IDL_ID_MAX);
	ck_assert_uint_eq(idl_iter_next(&l, &it), 0);
	idl_set_all(&l);
	ck_assert_uint_eq(idl_size(&l), IDL_ID_MAX);
	idl_release(&l);
}
END_TEST

START_TEST(sort_unique_after_direct_fill)
{
	struct idl l;

	idl_init(&l);
	ck_assert(idl_reserve(&l, 6));
	uint64_t raw[] = { 9, 0, 3, 9, 1, 3 };
	for (size_t i = 0; i < 6; i++)
		l.ids[i] = raw[i];
	l.count = 6;
	idl_sort_unique(&l);
	assert_list(&l, (const uint64_t[]){ 1, 3, 9, 0 });
	idl_release(&l);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("idl");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, insert_sorts_and_dedups);
	tcase_add_loop_test(tc, list_algebra, 0,
			    (int)(sizeof(algebra_cases) / sizeof(algebra_cases[0])));
	tcase_add_test(tc, intersect_skewed);
	tcase_add_test(tc, range_algebra);
	tcase_add_test(tc, degrades_beyond_bound);
	tcase_add_test(tc, union_beyond_bound_degrades);
	tcase_add_test(tc, caller_buffer_degrades);
	tcase_add_test(tc, iterate_list_and_range);
	tcase_add_test(tc, sort_unique_after_direct_fill);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
