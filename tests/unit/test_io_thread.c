/*
 * test_io_thread.c — the I/O thread's share of inline operations per loop
 * pass (io_thread_take_inline_slot): its event loop runs passes of
 * callbacks made active by hand, as it runs the read events of the
 * connections that epoll reports ready at once.
 */
#include <check.h>
#include <unistd.h>

#include <event2/event.h>

#include "config_fixture.h"
#include "inline_ops.h"
#include "io_thread.h"
#include "server.h"

#define READY 40u

static struct config *cfg;
static struct server server;
static struct io_thread io;
static struct event *ready[READY];
static unsigned granted;

static void take_slot(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	granted += io_thread_take_inline_slot(&io);
}

static void setup(void)
{
	cfg = config_fixture_load("# defaults\n");
	server = (struct server){ .config = cfg };
	ck_assert_int_eq(io_thread_init(&io, &server, 0), LUMEN_OK);
	io.thread = pthread_self();
	for (unsigned i = 0; i < READY; i++) {
		ready[i] = event_new(io.base, -1, 0, take_slot, NULL);
		ck_assert_ptr_nonnull(ready[i]);
	}
	granted = 0;
}

static void teardown(void)
{
	for (unsigned i = 0; i < READY; i++)
		event_free(ready[i]);
	io_thread_destroy(&io);
	config_fixture_free(cfg);
}

/* One pass of the loop over n callbacks made ready together. */
static unsigned pass(unsigned n)
{
	granted = 0;
	usleep(20);              /* a pass is told apart by libevent's cached time (µs) */
	for (unsigned i = 0; i < n; i++)
		event_active(ready[i], EV_READ, 0);
	ck_assert_int_eq(event_base_loop(io.base, EVLOOP_ONCE), 0);
	return granted;
}

START_TEST(a_pass_runs_a_bounded_share_inline)
{
	ck_assert_uint_eq(pass(READY), INLINE_OPS_PER_PASS);
}
END_TEST

START_TEST(every_pass_gets_its_own_share)
{
	ck_assert_uint_eq(pass(READY), INLINE_OPS_PER_PASS);
	ck_assert_uint_eq(pass(5), 5);
	ck_assert_uint_eq(pass(READY), INLINE_OPS_PER_PASS);
}
END_TEST

START_TEST(outside_the_loop_nothing_is_held_back)
{
	/* A test or tool driving a connection by hand has no passes. */
	for (unsigned i = 0; i < 2 * INLINE_OPS_PER_PASS; i++) {
		usleep(2);
		ck_assert(io_thread_take_inline_slot(&io));
	}
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("io_thread");
	TCase *tc = tcase_create("inline share");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, a_pass_runs_a_bounded_share_inline);
	tcase_add_test(tc, every_pass_gets_its_own_share);
	tcase_add_test(tc, outside_the_loop_nothing_is_held_back);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
