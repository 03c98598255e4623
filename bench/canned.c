/*
 * lumen-canned — the fastest possible "LDAP server": it answers every
 * request with a canned result without looking at it (search: one fixed
 * entry and success; bind: success; compare: compareTrue; others: success;
 * unbind: close). Run lumenbench against it to find the ceiling that the
 * client and the kernel's loopback allow on this machine: no real server can
 * beat it, so a server's figure divided by the canned one says how much of
 * the machine the server leaves on the table.
 *
 * Per read it answers every whole request in the buffer and sends all the
 * answers in one write(): read, write and epoll_wait per round trip.
 *
 * With --work-us N each answer first spends N microseconds of the thread's
 * CPU (a stand-in for a real server's work per request): how a threading
 * model shares the machine shows without any server code in the way, e.g.
 * the tail latency of per-thread event loops against one loop
 * (bench/tail.sh).
 *
 * Two threading models (--model): `loops` (the default) gives each thread
 * an event loop and a listener of its own (SO_REUSEPORT), so a connection is
 * served by one thread for its life; `shared` puts every connection in one
 * epoll set that all threads wait on, each socket armed one-shot, so
 * whichever thread is on a CPU serves the connection that became ready
 * first.
 *
 *   lumen-canned [-p PORT] [--listen ADDR] [--threads N] [--model loops|shared]
 *                [--work-us N] [--nagle]
 *
 * With -p 0 it picks a free port and prints "port N" on stdout.
 */
#include <errno.h>
#include <time.h>
#include <event2/event.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ber.h"
#include "ldap_message.h"
#include "lumen_error.h"
#include "version.h"

#define INPUT_INITIAL (64 * 1024)
#define PDU_MAX (16 * 1024 * 1024)

/* Pre-encoded protocolOps, shared read-only by every thread. */
struct canned_answers {
	struct ber_writer entry;        /* SearchResultEntry body */
	struct ber_writer done;         /* SearchResultDone, success */
};

struct canned_thread {
	struct event_base *base;        /* model loops */
	int shared_epoll;               /* model shared: the set all threads wait on; else -1 */
	int listen_fd;
	bool nagle;
	unsigned work_us;               /* CPU spent per answer (--work-us) */
	const struct canned_answers *answers;
	pthread_t id;
};

struct canned_conn {
	int fd;
	struct canned_thread *thread;
	struct event *read_event, *write_event;
	uint8_t *in;
	size_t in_len, in_cap;
	struct ber_writer out;
	size_t out_sent;
};

static int build_answers(struct canned_answers *a)
{
	static const struct { const char *type, *value; } attributes[] = {
		{ "objectClass", "inetOrgPerson" }, { "uid", "user.1" },
		{ "cn", "Aaron Abbott" }, { "sn", "Abbott" }, { "givenName", "Aaron" },
		{ "mail", "user.1@example.com" }, { "employeeNumber", "1" },
		{ "telephoneNumber", "+1 408 555 0101" },
		{ "description", "This is the description for Aaron Abbott." },
	};
	int rc = ber_writer_init(&a->entry, 512, 0);
	if (rc == LUMEN_OK)
		rc = ber_writer_init(&a->done, 32, 0);
	if (rc != LUMEN_OK)
		return rc;
	const char *dn = "uid=user.1,ou=people,dc=example,dc=com";
	ber_begin(&a->entry, BER_TAG_APP_CONS(LDAP_OP_SEARCH_ENTRY));
	ber_write_string(&a->entry, BER_TAG_OCTET_STRING, dn);
	ber_begin(&a->entry, BER_TAG_SEQUENCE);
	for (size_t i = 0; i < sizeof(attributes) / sizeof(attributes[0]); i++) {
		ber_begin(&a->entry, BER_TAG_SEQUENCE);
		ber_write_string(&a->entry, BER_TAG_OCTET_STRING, attributes[i].type);
		ber_begin(&a->entry, BER_TAG_SET);
		ber_write_string(&a->entry, BER_TAG_OCTET_STRING, attributes[i].value);
		ber_end(&a->entry);
		ber_end(&a->entry);
	}
	ber_end(&a->entry);
	ber_end(&a->entry);
	ber_begin(&a->done, BER_TAG_APP_CONS(LDAP_OP_SEARCH_DONE));
	ber_write_integer(&a->done, BER_TAG_ENUMERATED, LDAP_SUCCESS);
	ber_write_string(&a->done, BER_TAG_OCTET_STRING, "");
	ber_write_string(&a->done, BER_TAG_OCTET_STRING, "");
	ber_end(&a->done);
	rc = ber_writer_error(&a->entry);
	return rc != LUMEN_OK ? rc : ber_writer_error(&a->done);
}

static void conn_free(struct canned_conn *c)
{
	if (c->read_event != NULL)
		event_free(c->read_event);
	if (c->write_event != NULL)
		event_free(c->write_event);
	close(c->fd);
	free(c->in);
	ber_writer_free(&c->out);
	free(c);
}

static void write_message(struct ber_writer *w, int32_t id, const struct ber_writer *op)
{
	ber_begin(w, BER_TAG_SEQUENCE);
	ber_write_integer(w, BER_TAG_INTEGER, id);
	ber_write_raw(w, op->buf, op->len);
	ber_end(w);
}

/* Busy for `us` microseconds of this thread's CPU time: time it spends
 * preempted does not count, as a real server's work would not progress. */
static void spend_cpu(unsigned us)
{
	struct timespec start, now;
	if (us == 0 || clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start) != 0)
		return;
	int64_t goal = (int64_t)us * 1000;
	do {
		if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now) != 0)
			return;
	} while ((int64_t)(now.tv_sec - start.tv_sec) * 1000000000 +
		 (now.tv_nsec - start.tv_nsec) < goal);
}

/* Append the answer to one request; false when the connection should end. */
static bool answer(struct canned_conn *c, const uint8_t *pdu, size_t len)
{
	struct ber_reader whole, message;
	int64_t id;
	ber_tag_t tag;
	ber_reader_init(&whole, pdu, len);
	if (ber_enter(&whole, BER_TAG_SEQUENCE, &message) != LUMEN_OK ||
	    ber_read_int_range(&message, BER_TAG_INTEGER, 0, LDAP_MAX_MESSAGE_ID,
			       &id) != LUMEN_OK ||
	    ber_peek_tag(&message, &tag) != LUMEN_OK ||
	    BER_TAG_CLASS(tag) != BER_CLASS_APPLICATION)
		return false;
	int op = (int)BER_TAG_NUMBER(tag);
	struct ber_writer *w = &c->out;
	if (op != LDAP_OP_UNBIND_REQUEST && op != LDAP_OP_ABANDON_REQUEST)
		spend_cpu(c->thread->work_us);
	switch (op) {
	case LDAP_OP_UNBIND_REQUEST:
		return false;
	case LDAP_OP_ABANDON_REQUEST:
		return true;
	case LDAP_OP_SEARCH_REQUEST:
		write_message(w, (int32_t)id, &c->thread->answers->entry);
		write_message(w, (int32_t)id, &c->thread->answers->done);
		return true;
	case LDAP_OP_BIND_REQUEST:
		ldap_encode_bind_response(w, (int32_t)id, LDAP_SUCCESS, NULL, NULL, NULL);
		return true;
	case LDAP_OP_EXTENDED_REQUEST:
		ldap_encode_extended_response(w, (int32_t)id, LDAP_SUCCESS, NULL, NULL, NULL);
		return true;
	case LDAP_OP_COMPARE_REQUEST:
		ldap_encode_result(w, (int32_t)id, LDAP_OP_COMPARE_RESPONSE,
				   LDAP_COMPARE_TRUE, NULL, NULL, NULL, 0);
		return true;
	case LDAP_OP_MODIFY_REQUEST:
	case LDAP_OP_ADD_REQUEST:
	case LDAP_OP_DELETE_REQUEST:
	case LDAP_OP_MODDN_REQUEST:
		/* Each of these responses is its request's tag plus one. */
		ldap_encode_result(w, (int32_t)id, op + 1, LDAP_SUCCESS, NULL, NULL,
				   NULL, 0);
		return true;
	default:
		return false;
	}
}

/* What a connection's turn left: all sent, output waiting for room, or
 * the connection freed (closed by the peer, an error or an unbind). */
enum turn_end { TURN_SENT, TURN_BLOCKED, TURN_FREED };

static enum turn_end flush(struct canned_conn *c)
{
	while (c->out_sent < c->out.len) {
		ssize_t n = write(c->fd, c->out.buf + c->out_sent, c->out.len - c->out_sent);
		if (n > 0) {
			c->out_sent += (size_t)n;
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else if (n < 0 && errno == EAGAIN) {
			return TURN_BLOCKED;
		} else {
			conn_free(c);
			return TURN_FREED;
		}
	}
	ber_writer_reset(&c->out);
	c->out_sent = 0;
	return TURN_SENT;
}

static void on_writable(evutil_socket_t fd, short what, void *arg)
{
	struct canned_conn *c = arg;
	(void)fd;
	(void)what;
	if (flush(c) == TURN_BLOCKED)
		event_add(c->write_event, NULL);
}

/* Answer every whole request in the buffer; false to close. */
static bool answer_all(struct canned_conn *c)
{
	size_t offset = 0;
	while (offset < c->in_len) {
		size_t total;
		int rc = ber_frame(c->in + offset, c->in_len - offset, PDU_MAX, &total);
		if (rc == LUMEN_EINCOMPLETE)
			break;
		if (rc != LUMEN_OK || !answer(c, c->in + offset, total))
			return false;
		offset += total;
	}
	memmove(c->in, c->in + offset, c->in_len - offset);
	c->in_len -= offset;
	if (c->in_len == c->in_cap) {
		uint8_t *bigger = c->in_cap < PDU_MAX ? realloc(c->in, c->in_cap * 2) : NULL;
		if (bigger == NULL)
			return false;
		c->in = bigger;
		c->in_cap *= 2;
	}
	return ber_writer_error(&c->out) == LUMEN_OK;
}

/* Read once, answer every whole request, send the answers. */
static enum turn_end read_and_answer(struct canned_conn *c)
{
	ssize_t n = read(c->fd, c->in + c->in_len, c->in_cap - c->in_len);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return TURN_SENT;
	if (n <= 0) {
		conn_free(c);
		return TURN_FREED;
	}
	c->in_len += (size_t)n;
	bool keep = answer_all(c);
	if (!keep) {
		/* Send what was answered before the unbind, best effort. */
		if (c->out.len > c->out_sent && ber_writer_error(&c->out) == LUMEN_OK)
			(void)!write(c->fd, c->out.buf + c->out_sent, c->out.len - c->out_sent);
		conn_free(c);
		return TURN_FREED;
	}
	return flush(c);
}

static void on_readable(evutil_socket_t fd, short what, void *arg)
{
	struct canned_conn *c = arg;
	(void)fd;
	(void)what;
	if (read_and_answer(c) == TURN_BLOCKED)
		event_add(c->write_event, NULL);
}

/* Model shared: watch c once more, for room to write or for a request. */
static bool shared_arm(struct canned_thread *t, struct canned_conn *c, int op, bool out)
{
	struct epoll_event ev = { .events = (out ? EPOLLOUT : EPOLLIN) | EPOLLONESHOT,
				  .data.ptr = c };
	return epoll_ctl(t->shared_epoll, op, c->fd, &ev) == 0;
}

/* Model shared: one turn of a connection epoll handed to this thread (no
 * other thread can have it: it stays disarmed until shared_arm). */
static void shared_turn(struct canned_thread *t, struct canned_conn *c)
{
	enum turn_end end = c->out_sent < c->out.len ? flush(c) : read_and_answer(c);
	if (end != TURN_FREED && !shared_arm(t, c, EPOLL_CTL_MOD, end == TURN_BLOCKED))
		conn_free(c);
}

/* A connection for an accepted socket; NULL (nothing kept) on failure. */
static struct canned_conn *conn_new(struct canned_thread *t, int fd)
{
	struct canned_conn *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->fd = fd;
	c->thread = t;
	c->in_cap = INPUT_INITIAL;
	c->in = malloc(INPUT_INITIAL);
	bool watched;
	if (t->shared_epoll >= 0) {
		watched = true;   /* armed below, once c is whole */
	} else {
		c->read_event = event_new(t->base, fd, EV_READ | EV_PERSIST, on_readable, c);
		c->write_event = event_new(t->base, fd, EV_WRITE, on_writable, c);
		watched = c->read_event != NULL && c->write_event != NULL &&
			  event_add(c->read_event, NULL) == 0;
	}
	if (ber_writer_init(&c->out, 4096, 0) != LUMEN_OK || c->in == NULL || !watched ||
	    (t->shared_epoll >= 0 && !shared_arm(t, c, EPOLL_CTL_ADD, false))) {
		if (c->read_event != NULL)
			event_free(c->read_event);
		if (c->write_event != NULL)
			event_free(c->write_event);
		free(c->in);
		ber_writer_free(&c->out);
		free(c);
		return NULL;
	}
	return c;
}

static void accept_all(struct canned_thread *t, int listen_fd)
{
	int one = 1;
	for (;;) {
		int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;   /* EAGAIN, or EMFILE: try again on the next event */
		if (!t->nagle)
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (conn_new(t, fd) == NULL)
			close(fd);
	}
}

static void on_accept(evutil_socket_t listen_fd, short what, void *arg)
{
	(void)what;
	accept_all(arg, listen_fd);
}

/* A listening socket; SO_REUSEPORT lets each thread have its own. */
static int open_listener(const char *address, unsigned port, unsigned *bound_port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int one = 1;
	if (inet_pton(AF_INET, address, &sin.sin_addr) != 1)
		return -1;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	socklen_t len = sizeof(sin);
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0 ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0 ||
	    listen(fd, 4096) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) != 0) {
		close(fd);
		return -1;
	}
	*bound_port = ntohs(sin.sin_port);
	return fd;
}

/* Events one thread takes per wait in model shared: few, so that a thread
 * preempted mid-batch holds back few connections. */
#define SHARED_BATCH 4

/* Model shared: take the next ready sockets from the common set, forever.
 * The listener is in the set with data.ptr NULL, one-shot like the rest. */
static void shared_loop(struct canned_thread *t)
{
	struct epoll_event ready[SHARED_BATCH];
	for (;;) {
		int n = epoll_wait(t->shared_epoll, ready, SHARED_BATCH, -1);
		for (int i = 0; i < n; i++) {
			if (ready[i].data.ptr != NULL) {
				shared_turn(t, ready[i].data.ptr);
				continue;
			}
			accept_all(t, t->listen_fd);
			struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT };
			if (epoll_ctl(t->shared_epoll, EPOLL_CTL_MOD, t->listen_fd, &ev) != 0) {
				perror("lumen-canned: epoll_ctl");
				exit(1);
			}
		}
		if (n < 0 && errno != EINTR) {
			perror("lumen-canned: epoll_wait");
			exit(1);
		}
	}
}

static void *thread_main(void *arg)
{
	struct canned_thread *t = arg;
	if (t->shared_epoll >= 0)
		shared_loop(t);
	else
		event_base_dispatch(t->base);
	return NULL;
}

static void usage(FILE *out)
{
	fputs("usage: lumen-canned [-p PORT] [--listen ADDR] [--threads N]\n"
	      "                    [--model loops|shared] [--work-us N] [--nagle]\n"
	      "  answers every LDAP request with a canned success (see bench/README.md);\n"
	      "  -p 0 picks a free port and prints it as \"port N\"\n"
	      "  --model M      loops: an event loop per thread (default); shared: every\n"
	      "                 thread takes the next ready connection from one epoll set\n"
	      "  --work-us N    spend N microseconds of CPU (0..1000000) before each answer\n"
	      "  -V, --version  print the version and exit\n", out);
}

/* Model loops: a base and a listener per thread. 0, or -1 (errno set). */
static int setup_loops(struct canned_thread *all, unsigned threads, const char *address,
		       unsigned *port)
{
	for (unsigned i = 0; i < threads; i++) {
		struct canned_thread *t = &all[i];
		t->listen_fd = open_listener(address, *port, port);
		t->base = event_base_new();
		if (t->listen_fd < 0 || t->base == NULL)
			return -1;
		/* (Port 0: the first listener picked one, the others share it.) */
		struct event *ev = event_new(t->base, t->listen_fd, EV_READ | EV_PERSIST,
					     on_accept, t);
		if (ev == NULL || event_add(ev, NULL) != 0)
			return -1;
	}
	return 0;
}

/* Model shared: one listener and one epoll set for all threads. */
static int setup_shared(struct canned_thread *all, unsigned threads, const char *address,
			unsigned *port)
{
	int listen_fd = open_listener(address, *port, port);
	int epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT, .data.ptr = NULL };
	if (listen_fd < 0 || epoll_fd < 0 ||
	    epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listen_fd, &ev) != 0)
		return -1;
	for (unsigned i = 0; i < threads; i++) {
		all[i].listen_fd = listen_fd;
		all[i].shared_epoll = epoll_fd;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "listen", required_argument, NULL, 'l' },
		{ "threads", required_argument, NULL, 't' },
		{ "work-us", required_argument, NULL, 'w' },
		{ "model", required_argument, NULL, 'm' },
		{ "nagle", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *address = "127.0.0.1";
	unsigned port = 3899, threads = 1, work_us = 0;
	bool nagle = false, shared = false;
	int opt;
	while ((opt = getopt_long(argc, argv, "p:l:t:w:m:nhV", options, NULL)) != -1) {
		char *end = NULL;
		unsigned long v = 0;
		if (opt == 'p' || opt == 't' || opt == 'w')
			v = strtoul(optarg, &end, 10);
		bool number = end != NULL && end != optarg && *end == '\0';
		if (opt == 'p' && number && v < 65536)
			port = (unsigned)v;
		else if (opt == 't' && number && v >= 1 && v <= 256)
			threads = (unsigned)v;
		else if (opt == 'w' && number && v <= 1000000)
			work_us = (unsigned)v;
		else if (opt == 'l')
			address = optarg;
		else if (opt == 'm' && (strcmp(optarg, "loops") == 0 || strcmp(optarg, "shared") == 0))
			shared = strcmp(optarg, "shared") == 0;
		else if (opt == 'n')
			nagle = true;
		else if (opt == 'V') {
			printf("lumen-canned %s\n", LUMEN_VERSION);
			return 0;
		} else {
			usage(opt == 'h' ? stdout : stderr);
			return opt == 'h' ? 0 : 2;
		}
	}
	signal(SIGPIPE, SIG_IGN);
	struct canned_answers answers;
	if (build_answers(&answers) != LUMEN_OK) {
		fprintf(stderr, "lumen-canned: cannot encode the canned answers\n");
		return 1;
	}
	struct canned_thread *all = calloc(threads, sizeof(*all));
	if (all == NULL)
		return 1;
	for (unsigned i = 0; i < threads; i++)
		all[i] = (struct canned_thread){ .answers = &answers, .nagle = nagle,
						 .work_us = work_us, .shared_epoll = -1 };
	if ((shared ? setup_shared(all, threads, address, &port)
		    : setup_loops(all, threads, address, &port)) != 0) {
		fprintf(stderr, "lumen-canned: cannot listen on %s:%u: %s\n", address, port,
			strerror(errno));
		return 1;
	}
	printf("port %u\n", port);
	fflush(stdout);
	for (unsigned i = 1; i < threads; i++)
		pthread_create(&all[i].id, NULL, thread_main, &all[i]);
	thread_main(&all[0]);
	return 0;
}
