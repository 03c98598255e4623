/*
 * test_arena.c — per-operation scratch memory (src/proto/arena.c).
 */
#include <check.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "arena.h"

static bool aligned(const void *p)
{
	return ((uintptr_t)p % alignof(max_align_t)) == 0;
}

/* Request sizes that straddle block boundaries, handed out in sequence. */
static const size_t request_sizes[] = { 0, 1, 3, 7, 8, 15, 16, 17, 100, 4000, 4096, 5000, 70000, 1 };

START_TEST(test_allocations_aligned_and_disjoint)
{
	struct arena a;
	uint8_t *ptrs[sizeof(request_sizes) / sizeof(request_sizes[0])];
	arena_init(&a, 0);
	for (size_t i = 0; i < sizeof(request_sizes) / sizeof(request_sizes[0]); i++) {
		ptrs[i] = arena_alloc(&a, request_sizes[i]);
		ck_assert_ptr_nonnull(ptrs[i]);
		ck_assert_msg(aligned(ptrs[i]), "allocation %zu misaligned", i);
		/* Fill with the index; a later overlap would overwrite an earlier fill. */
		memset(ptrs[i], (int)i, request_sizes[i]);
	}
	for (size_t i = 0; i < sizeof(request_sizes) / sizeof(request_sizes[0]); i++)
		for (size_t j = 0; j < request_sizes[i]; j++)
			ck_assert_msg(ptrs[i][j] == (uint8_t)i, "allocation %zu overwritten", i);
	ck_assert_ptr_ne(ptrs[0], ptrs[1]);
	arena_free(&a);
}
END_TEST

START_TEST(test_reset_reuses_blocks)
{
	struct arena a;
	void *first_pass[100];
	arena_init(&a, 0);
	for (int i = 0; i < 100; i++) {
		first_pass[i] = arena_alloc(&a, 300);
		ck_assert_ptr_nonnull(first_pass[i]);
	}
	ck_assert_uint_gt(a.used, 0);
	arena_reset(&a);
	ck_assert_uint_eq(a.used, 0);
#ifndef LUMEN_ARENA_MALLOC
	/* Same work after a reset: the same memory, so no block was added. */
	struct arena_block *blocks = a.blocks;
	for (int i = 0; i < 100; i++)
		ck_assert_ptr_eq(arena_alloc(&a, 300), first_pass[i]);
	ck_assert_ptr_eq(a.blocks, blocks);
#endif
	arena_free(&a);
	ck_assert_ptr_null(a.blocks);
}
END_TEST

START_TEST(test_bound)
{
	struct arena a;
	arena_init(&a, 1024);
	ck_assert_ptr_nonnull(arena_alloc(&a, 512));
	ck_assert_ptr_nonnull(arena_alloc(&a, 512));
	ck_assert_ptr_null(arena_alloc(&a, 1));
	ck_assert_ptr_null(arena_alloc(&a, SIZE_MAX));
	arena_reset(&a);
	ck_assert_ptr_nonnull(arena_alloc(&a, 1024));
	arena_free(&a);
}
END_TEST

START_TEST(test_calloc_and_overflow)
{
	struct arena a;
	arena_init(&a, 0);
	uint32_t *p = arena_alloc(&a, 64 * sizeof(uint32_t));
	ck_assert_ptr_nonnull(p);
	memset(p, 0xab, 64 * sizeof(uint32_t));
	arena_reset(&a);
	/* calloc must zero even memory recycled by the reset. */
	uint32_t *z = arena_calloc(&a, 64, sizeof(uint32_t));
	ck_assert_ptr_nonnull(z);
	for (int i = 0; i < 64; i++)
		ck_assert_uint_eq(z[i], 0);
	ck_assert_ptr_null(arena_calloc(&a, SIZE_MAX / 2, 4));
	ck_assert_ptr_null(arena_alloc(&a, SIZE_MAX));
	ck_assert_ptr_null(arena_alloc(&a, SIZE_MAX / 2 + 1));
	arena_free(&a);
}
END_TEST

START_TEST(test_copies)
{
	struct arena a;
	arena_init(&a, 0);
	char *s = arena_strndup(&a, "cn=admin,dc=x", 8);
	ck_assert_str_eq(s, "cn=admin");
	char *empty = arena_strndup(&a, "", 0);
	ck_assert_str_eq(empty, "");
	const uint8_t bytes[] = { 0, 1, 2, 0, 4 };
	uint8_t *copy = arena_memdup(&a, bytes, sizeof(bytes));
	ck_assert_mem_eq(copy, bytes, sizeof(bytes));
	ck_assert_ptr_nonnull(arena_memdup(&a, NULL, 0));
	ck_assert_ptr_null(arena_strndup(&a, "x", SIZE_MAX));
	arena_free(&a);
}
END_TEST

START_TEST(test_free_empty_and_twice)
{
	struct arena a;
	arena_init(&a, 0);
	arena_reset(&a);
	arena_free(&a);
	arena_free(&a);
	ck_assert_ptr_null(a.blocks);
}
END_TEST

START_TEST(test_reserve_copies_what_is_in_use)
{
	struct arena a;
	size_t cap = 0;
	arena_init(&a, 0);
	int *items = arena_reserve(&a, NULL, 0, &cap, 1, sizeof(*items), 4);
	ck_assert_ptr_nonnull(items);
	ck_assert_uint_eq(cap, 4);
	for (int i = 0; i < 3; i++)
		items[i] = i + 1;
	/* Room already there: the same array. */
	ck_assert_ptr_eq(arena_reserve(&a, items, 3, &cap, 4, sizeof(*items), 4), items);
	int *grown = arena_reserve(&a, items, 3, &cap, 20, sizeof(*items), 4);
	ck_assert_ptr_nonnull(grown);
	ck_assert_ptr_ne(grown, items);
	ck_assert_uint_eq(cap, 32);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(grown[i], i + 1);
	/* A byte size past SIZE_MAX fails and leaves the capacity alone. */
	ck_assert_ptr_null(arena_reserve(&a, grown, 3, &cap, SIZE_MAX / 2, 8, 4));
	ck_assert_uint_eq(cap, 32);
	arena_free(&a);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("arena");
	TCase *tc = tcase_create("arena");
	tcase_add_test(tc, test_allocations_aligned_and_disjoint);
	tcase_add_test(tc, test_reset_reuses_blocks);
	tcase_add_test(tc, test_bound);
	tcase_add_test(tc, test_calloc_and_overflow);
	tcase_add_test(tc, test_copies);
	tcase_add_test(tc, test_free_empty_and_twice);
	tcase_add_test(tc, test_reserve_copies_what_is_in_use);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
