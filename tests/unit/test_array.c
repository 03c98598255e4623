/*
 * test_array.c — heap arrays that grow (src/proto/array.c).
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "array.h"

START_TEST(test_reserve_doubles_from_initial)
{
	size_t cap = 0;
	int *a = array_reserve(NULL, &cap, 1, sizeof(*a), 8);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(cap, 8);
	for (int i = 0; i < 8; i++)
		a[i] = i;
	/* Room already there: the same array, the same capacity. */
	ck_assert_ptr_eq(array_reserve(a, &cap, 8, sizeof(*a), 8), a);
	ck_assert_uint_eq(cap, 8);
	a = array_reserve(a, &cap, 9, sizeof(*a), 8);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(cap, 16);
	for (int i = 0; i < 8; i++)
		ck_assert_int_eq(a[i], i);
	/* Far beyond: doubled until it fits. */
	a = array_reserve(a, &cap, 100, sizeof(*a), 8);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(cap, 128);
	free(a);
}
END_TEST

START_TEST(test_reserve_overflow_leaves_array)
{
	size_t cap = 4;
	char *a = malloc(cap);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_null(array_reserve(a, &cap, SIZE_MAX / 2, 16, 4));
	ck_assert_uint_eq(cap, 4);
	ck_assert_ptr_null(array_reserve(a, &cap, SIZE_MAX, 1, 4));
	ck_assert_uint_eq(cap, 4);
	free(a);
}
END_TEST

START_TEST(test_push_zeroes_the_new_element)
{
	struct pair { int a, b; } *p = NULL;
	size_t n = 0;
	for (int i = 0; i < 5; i++) {
		struct pair *added = ARRAY_PUSH(p, n);
		ck_assert_ptr_nonnull(added);
		ck_assert_uint_eq(n, (size_t)i + 1);
		ck_assert_ptr_eq(added, &p[i]);
		ck_assert_int_eq(added->a, 0);
		ck_assert_int_eq(added->b, 0);
		added->a = i;
		added->b = -i;
	}
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(p[i].a + p[i].b, 0);
	/* Too many to count in bytes: nothing changes. */
	struct pair *before = p;
	size_t huge = SIZE_MAX / sizeof(*p);
	ck_assert_ptr_null(ARRAY_PUSH(p, huge));
	ck_assert_ptr_eq(p, before);
	ck_assert_uint_eq(huge, SIZE_MAX / sizeof(*p));
	free(p);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("array");
	TCase *tc = tcase_create("array");
	tcase_add_test(tc, test_reserve_doubles_from_initial);
	tcase_add_test(tc, test_reserve_overflow_leaves_array);
	tcase_add_test(tc, test_push_zeroes_the_new_element);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
