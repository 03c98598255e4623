/*
 * test_conn.c — the connection (src/server/conn*.c) on one end of a
 * socketpair, driven by hand on the test thread (its I/O thread; the
 * event loop never runs and nothing reaches the work queue): framing of
 * whole PDUs (split across reads, back to back), the PDU bound and
 * malformed input (a Notice of Disconnection, then close), the pending
 * operations bound, the op pool (recycled, bounded, memory accounted)
 * and Abandon/Unbind.
 */
#include <check.h>
#include <sys/socket.h>
#include <unistd.h>

#include "config_fixture.h"
#include "io_thread.h"
#include "ldap_message.h"
#include "ops.h"
#include "pdu_fixture.h"
#include "server.h"
#include "../../src/server/conn_internal.h"

#define SEARCH(id) "30( 0201" id " 63( 04'' 0a0100 0a0100 020100 020100 010100 " \
		   "87'objectClass' 30( ) ) )"
#define ANONYMOUS_BIND(id) "30( 0201" id " 60( 020103 04'' 80'' ) )"

static struct config *cfg;
static struct server server;
static struct io_thread io;
static struct conn *c;
static int peer;          /* the client's end */

static void setup(void)
{
	int fds[2];
	cfg = config_fixture_load("# defaults\n");
	cfg->max_pending = 2;
	cfg->max_incoming = 64;
	server = (struct server){ .config = cfg };
	conn_memory_init(&server.conn_memory, cfg->conn_max_memory, cfg->conn_max_memory_auth,
			 cfg->conn_total_memory);
	ck_assert_int_eq(io_thread_init(&io, &server, 0), LUMEN_OK);
	io.thread = pthread_self();
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
	peer = fds[1];
	ck_assert_int_eq(conn_create(&io, fds[0], NULL, 0, "PATH=test", false, false, &c),
			 LUMEN_OK);
	conn_list_add(&io.conns, c);
	io.n_conns++;
}

static void teardown(void)
{
	if (c != NULL)
		conn_begin_close(c);
	close(peer);
	io_thread_destroy(&io);
	config_fixture_free(cfg);
}

static void client_sends(const char *spec)
{
	struct pdu p;
	build_pdu(spec, &p);
	ck_assert_int_eq(write(peer, p.bytes, p.len), (ssize_t)p.len);
}

/* What one read turn of the I/O thread frames: the ops, chained. */
static struct op *read_turn(void)
{
	struct op_batch batch = { NULL, &batch.head };
	pthread_mutex_lock(&c->lock);
	ck_assert_int_eq(conn_fill_input_locked(c), LUMEN_OK);
	conn_process_input_locked(c, &batch);
	ck_assert_int_eq(conn_settle_input_locked(c), LUMEN_OK);
	ck_assert(!c->in_borrowed);
	pthread_mutex_unlock(&c->lock);
	return (struct op *)batch.head;
}

static unsigned count(struct op *chain)
{
	unsigned n = 0;
	for (; chain != NULL; chain = (struct op *)chain->job.next)
		n++;
	return n;
}

/* A worker ends every op of the chain. */
static void finish(struct op *chain)
{
	while (chain != NULL) {
		struct op *next = (struct op *)chain->job.next;
		conn_op_done(c, chain);
		chain = next;
	}
}

/* The client reads a Notice of Disconnection. */
static void assert_notice(void)
{
	uint8_t buf[256];
	int32_t id = -1;
	int tag = -1;
	ssize_t n = read(peer, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(ldap_message_peek(buf, (size_t)n, &id, &tag), LUMEN_OK);
	ck_assert_int_eq(id, 0);
	ck_assert_int_eq(tag, LDAP_OP_EXTENDED_RESPONSE);
}

START_TEST(frames_whole_pdus_only)
{
	struct pdu p;
	build_pdu(SEARCH("03"), &p);
	client_sends(SEARCH("01") SEARCH("02"));
	ck_assert_int_eq(write(peer, p.bytes, 5), 5);     /* a third, in part */
	struct op *ops = read_turn();
	ck_assert_uint_eq(count(ops), 2);
	ck_assert_int_eq(ops->message_id, 1);
	ck_assert_uint_eq(c->in_len - c->in_start, 5);    /* kept for the next read */
	finish(ops);
	ck_assert_int_eq(write(peer, p.bytes + 5, p.len - 5), (ssize_t)(p.len - 5));
	ops = read_turn();
	ck_assert_uint_eq(count(ops), 1);
	ck_assert_int_eq(ops->message_id, 3);
	ck_assert_uint_eq(ops->pdu_len, p.len);
	ck_assert(memcmp(ops->pdu, p.bytes, p.len) == 0);
	ck_assert_uint_eq(c->in_len, 0);
	finish(ops);
}
END_TEST

/* Input lives in the I/O thread's scratch buffer: a connection keeps only
 * what is left over, in a buffer just large enough, and nothing once its
 * requests are all taken. */
START_TEST(idle_input_holds_nothing)
{
	struct pdu p;
	build_pdu(SEARCH("07"), &p);
	ck_assert_ptr_null(c->in);                        /* nothing read yet */
	size_t base = conn_held(c);
	ck_assert_uint_eq(base, c->mem_held.bytes[CONN_MEM_BASE]);
	ck_assert_int_eq(write(peer, p.bytes, 5), 5);     /* half a request */
	ck_assert_ptr_null(read_turn());
	ck_assert_ptr_nonnull(c->in);
	ck_assert(c->in != io.input);
	ck_assert_uint_eq(c->in_cap, CONN_MIN_INPUT);
	ck_assert_uint_eq(c->mem_held.bytes[CONN_MEM_QUEUED], CONN_MIN_INPUT);
	ck_assert_int_eq(write(peer, p.bytes + 5, p.len - 5), (ssize_t)(p.len - 5));
	struct op *op = read_turn();
	ck_assert_uint_eq(count(op), 1);
	ck_assert(memcmp(op->pdu, p.bytes, p.len) == 0);
	ck_assert_ptr_null(c->in);                        /* all taken: freed */
	ck_assert_uint_eq(c->in_cap, 0);
	finish(op);
	/* Idle again: the object and one recycled op, no buffer. */
	ck_assert_ptr_null(c->out);
	ck_assert_uint_eq(c->mem_held.bytes[CONN_MEM_OUTPUT], 0);
	ck_assert_uint_eq(conn_held(c), base + sizeof(struct op) + c->free_ops->pdu_cap);
}
END_TEST

START_TEST(oversize_pdu_closes_with_notice)
{
	client_sends("30( 020101 4a'cn=a-name-longer-than-the-sixty-four-byte-bound,dc=example' )");
	ck_assert_ptr_null(read_turn());
	ck_assert(c->aborting);
	assert_notice();
}
END_TEST

START_TEST(garbage_closes_with_notice)
{
	client_sends("ff0102");
	ck_assert_ptr_null(read_turn());
	ck_assert(c->aborting);
	assert_notice();
}
END_TEST

START_TEST(pending_ops_are_bounded)
{
	client_sends(SEARCH("01") SEARCH("02") SEARCH("03"));
	struct op *ops = read_turn();
	ck_assert_uint_eq(count(ops), 2);               /* max_pending */
	ck_assert_uint_eq(c->n_pending, 2);
	ck_assert(!conn_accepting_ops(c));
	ck_assert_ptr_null(read_turn());                /* still full */
	struct op *rest = (struct op *)ops->job.next;
	conn_op_done(c, ops);                           /* one ends: room for one */
	ck_assert(conn_accepting_ops(c));
	struct op *third = read_turn();
	ck_assert_uint_eq(count(third), 1);
	ck_assert_int_eq(third->message_id, 3);
	finish(rest);
	finish(third);
}
END_TEST

START_TEST(ops_are_recycled_and_accounted)
{
	size_t idle = conn_held(c);
	for (int round = 0; round < 3; round++) {
		client_sends(SEARCH("01") SEARCH("02"));
		struct op *ops = read_turn();
		ck_assert_uint_eq(count(ops), 2);
		ck_assert_uint_gt(conn_held(c), idle);
		finish(ops);
		ck_assert_uint_eq(c->n_pending, 0);
		ck_assert_uint_eq(c->n_free_ops, 1);    /* idle: one kept for reuse */
		ck_assert_uint_eq(conn_held(c), idle + sizeof(struct op) + c->free_ops->pdu_cap);
	}
	ck_assert_uint_eq(c->next_op_number, 6);
}
END_TEST

START_TEST(abandon_marks_the_named_op)
{
	cfg->max_pending = 8;
	client_sends(SEARCH("05") SEARCH("06") "30( 020107 50'" "\x05" "' )");
	struct op *ops = read_turn();
	ck_assert_uint_eq(count(ops), 2);          /* Abandon is answered here */
	struct op *second = (struct op *)ops->job.next;
	ck_assert(ops->abandoned);
	ck_assert(!second->abandoned);
	ck_assert_uint_eq(c->next_op_number, 3);
	finish(ops);
}
END_TEST

START_TEST(unbind_abandons_queued_and_closes)
{
	cfg->max_pending = 8;
	client_sends(SEARCH("01") "30( 020102 4200 )");
	struct op *ops = read_turn();
	ck_assert_uint_eq(count(ops), 1);
	ck_assert(ops->abandoned);
	ck_assert(c->closing);
	ck_assert(!conn_accepting_ops(c));
	finish(ops);
}
END_TEST

/*
 * A Bind read behind a search waits for it; the search ends with more than
 * CONN_MAX_UNSENT unsent, so nothing is framed. Once the client has read
 * it all it sends nothing more, so no read event comes: draining the
 * output must make the loop look at the buffered Bind again (a kick).
 */
START_TEST(drained_output_frames_a_waiting_bind)
{
	static uint8_t results[2 * CONN_MAX_UNSENT];
	client_sends(SEARCH("01") ANONYMOUS_BIND("02") SEARCH("03"));
	struct op *search = read_turn();
	ck_assert_uint_eq(count(search), 1);
	ck_assert(c->bind_waiting);
	pthread_mutex_lock(&c->lock);
	ck_assert_int_eq(conn_send_locked(c, results, sizeof(results)), LUMEN_OK);
	ck_assert_uint_ge(conn_unsent(c), CONN_MAX_UNSENT);
	pthread_mutex_unlock(&c->lock);
	finish(search);
	ck_assert_ptr_null(read_turn());                /* output full: the Bind waits */

	uint8_t sink[65536];
	while (conn_unsent(c) > 0) {
		while (read(peer, sink, sizeof(sink)) > 0)
			;
		conn_on_write(c->fd, EV_WRITE, c);
	}
	while (read(peer, sink, sizeof(sink)) > 0)
		;
	ck_assert(event_pending(c->kick_event, EV_READ, NULL));   /* the loop looks again */
	struct op *bind = read_turn();
	ck_assert_uint_eq(count(bind), 1);
	ck_assert_int_eq(bind->message_id, 2);
	ck_assert_int_eq(bind->tag, LDAP_OP_BIND_REQUEST);
	finish(bind);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("conn");
	TCase *tc = tcase_create("input");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, frames_whole_pdus_only);
	tcase_add_test(tc, idle_input_holds_nothing);
	tcase_add_test(tc, oversize_pdu_closes_with_notice);
	tcase_add_test(tc, garbage_closes_with_notice);
	tcase_add_test(tc, pending_ops_are_bounded);
	tcase_add_test(tc, ops_are_recycled_and_accounted);
	tcase_add_test(tc, abandon_marks_the_named_op);
	tcase_add_test(tc, unbind_abandons_queued_and_closes);
	tcase_add_test(tc, drained_output_frames_a_waiting_bind);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
