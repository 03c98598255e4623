/*
 * test_txn.c — an open transaction's queue (src/server/txn.c): identifiers
 * unique and matched exactly, updates kept in order with their PDUs, one
 * database per transaction, and the update and byte bounds refused with
 * the queue unchanged.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "lumen_error.h"
#include "txn.h"

/* Stand-ins: the queue only compares database pointers. */
static const struct server_database *const db_a = (const struct server_database *)&db_a;
static const struct server_database *const db_b = (const struct server_database *)&db_b;

START_TEST(ids_are_unique_and_exact)
{
	struct txn_queue *q1, *q2;
	ck_assert_int_eq(txn_queue_create(&q1), LUMEN_OK);
	ck_assert_int_eq(txn_queue_create(&q2), LUMEN_OK);
	struct ber_view id1 = txn_queue_id(q1), id2 = txn_queue_id(q2);
	ck_assert_uint_eq(id1.len, TXN_ID_SIZE);
	ck_assert(!ber_view_eq(id1, id2));
	ck_assert(txn_queue_is(q1, id1) && !txn_queue_is(q1, id2) && !txn_queue_is(NULL, id1));
	struct ber_view shorter = { id1.ptr, id1.len - 1 };
	ck_assert(!txn_queue_is(q1, shorter));
	txn_queue_free(q1);
	txn_queue_free(q2);
	txn_queue_free(NULL);
}
END_TEST

START_TEST(updates_in_order_one_database)
{
	struct txn_queue *q;
	ck_assert_int_eq(txn_queue_create(&q), LUMEN_OK);
	size_t empty = q->bytes;
	ck_assert_int_eq(txn_queue_add(q, db_a, 2, 8, 10, (const uint8_t *)"first", 5), LUMEN_OK);
	ck_assert_int_eq(txn_queue_add(q, db_a, 3, 6, 11, (const uint8_t *)"second", 6), LUMEN_OK);
	ck_assert_int_eq(txn_queue_add(q, db_b, 4, 6, 12, (const uint8_t *)"other", 5),
			 LUMEN_EINVAL);
	ck_assert_uint_eq(q->n_updates, 2);
	ck_assert_uint_gt(q->bytes, empty + 11);
	ck_assert_int_eq(q->first->message_id, 2);
	ck_assert_int_eq(q->first->tag, 8);
	ck_assert_mem_eq(q->first->pdu, "first", 5);
	ck_assert_int_eq(q->first->next->message_id, 3);
	ck_assert_ptr_null(q->first->next->next);
	txn_queue_free(q);
}
END_TEST

START_TEST(bounds_leave_the_queue_unchanged)
{
	struct txn_queue *q;
	ck_assert_int_eq(txn_queue_create(&q), LUMEN_OK);
	for (unsigned i = 0; i < TXN_MAX_UPDATES; i++)
		ck_assert_int_eq(txn_queue_add(q, db_a, (int32_t)i + 1, 8, i, (const uint8_t *)"x", 1),
				 LUMEN_OK);
	size_t bytes = q->bytes;
	ck_assert_int_eq(txn_queue_add(q, db_a, 999, 8, 999, (const uint8_t *)"x", 1),
			 LUMEN_ELIMIT);
	ck_assert_uint_eq(q->n_updates, TXN_MAX_UPDATES);
	ck_assert_uint_eq(q->bytes, bytes);
	txn_queue_free(q);

	ck_assert_int_eq(txn_queue_create(&q), LUMEN_OK);
	uint8_t *big = calloc(1, TXN_MAX_BYTES);
	ck_assert_ptr_nonnull(big);
	ck_assert_int_eq(txn_queue_add(q, db_a, 1, 8, 1, big, TXN_MAX_BYTES), LUMEN_ELIMIT);
	ck_assert_int_eq(txn_queue_add(q, db_a, 1, 8, 1, big, TXN_MAX_BYTES / 2), LUMEN_OK);
	ck_assert_int_eq(txn_queue_add(q, db_a, 2, 8, 2, big, TXN_MAX_BYTES / 2), LUMEN_ELIMIT);
	ck_assert_uint_eq(q->n_updates, 1);
	free(big);
	txn_queue_free(q);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("txn");
	TCase *tc = tcase_create("txn");
	tcase_add_test(tc, ids_are_unique_and_exact);
	tcase_add_test(tc, updates_in_order_one_database);
	tcase_add_test(tc, bounds_leave_the_queue_unchanged);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
