/*
 * test_metrics_http.c — the /metrics listener on a free local port, fetched
 * with a plain socket; the exposition text parsed and checked against the
 * statistics recorded; 404/405; bind and argument errors.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "lumen_error.h"
#include "metrics_http.h"
#include "stats.h"

/* ------------------------------------------------------------ helpers */

/* Send `request` to 127.0.0.1:port and read the whole response (HTTP/1.0). */
static char *http_exchange(uint16_t port, const char *request)
{
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons(port) };
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	size_t len = strlen(request);
	ck_assert_int_eq(write(fd, request, len), (ssize_t)len);
	size_t cap = 1 << 16, used = 0;
	char *buf = malloc(cap);
	ck_assert_ptr_nonnull(buf);
	for (;;) {
		if (cap - used < 4096) {
			cap *= 2;
			buf = realloc(buf, cap);
			ck_assert_ptr_nonnull(buf);
		}
		ssize_t n = read(fd, buf + used, cap - used - 1);
		ck_assert_int_ge(n, 0);
		if (n == 0)
			break;
		used += (size_t)n;
	}
	buf[used] = '\0';
	close(fd);
	return buf;
}

static char *http_get(uint16_t port, const char *path)
{
	char request[256];
	snprintf(request, sizeof(request), "GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n", path);
	return http_exchange(port, request);
}

static int status_of(const char *response)
{
	int status = 0;
	ck_assert_int_eq(sscanf(response, "HTTP/1.%*d %d", &status), 1);
	return status;
}

/* The value of the sample line that starts with exactly `series` + ' '. */
static bool sample(const char *text, const char *series, double *value)
{
	size_t n = strlen(series);
	for (const char *line = text; line != NULL && *line != '\0';) {
		if (strncmp(line, series, n) == 0 && line[n] == ' ') {
			*value = strtod(line + n + 1, NULL);
			return true;
		}
		line = strchr(line, '\n');
		if (line != NULL)
			line++;
	}
	return false;
}

static double must_sample(const char *text, const char *series)
{
	double v = -1;
	ck_assert_msg(sample(text, series, &v), "no sample %s", series);
	return v;
}

/* A fake server source: two databases, the second without a store. */
static size_t fake_databases(void *ctx, struct database_figures *out, size_t max)
{
	atomic_int *calls = ctx;
	atomic_fetch_add(calls, 1);
	struct database_figures dbs[2] = {
		{ .suffix = "dc=example,dc=com", .have_store = true, .map_size = 1 << 30,
		  .page_size = 4096, .pages_used = 77, .readers_used = 2, .readers_max = 126,
		  .entries = 1234,
		  .entry_cache = { .size = 10, .capacity = 1000, .hits = 5, .misses = 6,
				   .evictions = 7 },
		  .idl_cache = { .size = 3, .capacity = 100, .hits = 8, .misses = 9,
				 .evictions = 1 } },
		{ .suffix = "o=\"quoted\\\"", .have_store = false },
	};
	for (size_t i = 0; i < max && i < 2; i++)
		out[i] = dbs[i];
	return 2;
}

struct fixture {
	struct stats *stats;
	struct stats_thread *thread;
	struct metrics_http *http;
	atomic_int gather_calls;
};

static void record_some(struct stats_thread *t)
{
	struct op_timing timing;
	for (int i = 0; i < 3; i++) {
		op_timing_start(&timing, stats_now_ns() - 2500000);   /* 2.5 ms ago */
		op_timing_mark(&timing, STATS_STAGE_QUEUE);
		stats_operation_initiated(t, STATS_OP_SEARCH);
		stats_record_operation(t, STATS_OP_SEARCH, 0, &timing);
	}
	stats_operation_initiated(t, STATS_OP_BIND);
	stats_record_operation(t, STATS_OP_BIND, 49, NULL);
	stats_count_sent(t, 1000, 4);
	stats_count_received(t, 200, 4);
	stats_connection_opened(t);
	stats_connection_opened(t);
	stats_connection_closed(t);
}

static void fixture_start_bounded(struct fixture *f, struct event_base *base, unsigned max,
				  unsigned timeout);

static void fixture_start(struct fixture *f, struct event_base *base)
{
	fixture_start_bounded(f, base, 0, 0);
}

static void fixture_start_bounded(struct fixture *f, struct event_base *base, unsigned max,
				  unsigned timeout)
{
	char err[256] = "";
	memset(f, 0, sizeof(*f));
	ck_assert_int_eq(stats_create(&f->stats), LUMEN_OK);
	ck_assert_int_eq(stats_thread_register(f->stats, &f->thread), LUMEN_OK);
	record_some(f->thread);
	struct metrics_http_options o = {
		.address = "127.0.0.1", .port = 0, .stats = f->stats,
		.databases = { fake_databases, &f->gather_calls }, .version = "1.2.3",
		.base = base, .max_connections = max, .timeout_seconds = timeout,
	};
	int rc = metrics_http_start(&o, &f->http, err, sizeof(err));
	ck_assert_msg(rc == LUMEN_OK, "start: %s", err);
	ck_assert_uint_gt(metrics_http_port(f->http), 0);
}

static void fixture_stop(struct fixture *f)
{
	metrics_http_stop(f->http);
	stats_destroy(f->stats);
}

/* -------------------------------------------------------------- tests */

START_TEST(serves_metrics)
{
	struct fixture f;
	fixture_start(&f, NULL);
	char *response = http_get(metrics_http_port(f.http), "/metrics");
	ck_assert_int_eq(status_of(response), 200);
	ck_assert_ptr_nonnull(strstr(response, "Content-Type: text/plain; version=0.0.4"));
	const char *text = strstr(response, "\r\n\r\n");
	ck_assert_ptr_nonnull(text);

	ck_assert_ptr_nonnull(strstr(text, "# TYPE lumen_connections_current gauge\n"));
	ck_assert_ptr_nonnull(strstr(text, "# HELP lumen_operations_total "));
	ck_assert_ptr_nonnull(strstr(text, "# TYPE lumen_operation_duration_seconds histogram\n"));
	ck_assert(must_sample(text, "lumen_build_info{version=\"1.2.3\"}") == 1);
	ck_assert(must_sample(text, "lumen_connections_current") == 1);
	ck_assert(must_sample(text, "lumen_connections_total") == 2);
	ck_assert(must_sample(text, "lumen_bytes_sent_total") == 1000);
	ck_assert(must_sample(text, "lumen_bytes_received_total") == 200);
	ck_assert(must_sample(text, "lumen_operations_initiated_total{type=\"search\"}") == 3);
	ck_assert(must_sample(text, "lumen_operations_total{type=\"search\",result=\"success\","
			      "code=\"0\"}") == 3);
	ck_assert(must_sample(text, "lumen_operations_total{type=\"bind\",result=\""
			      "invalidCredentials\",code=\"49\"}") == 1);
	double unused;
	ck_assert(!sample(text, "lumen_operations_total{type=\"add\",result=\"success\","
			  "code=\"0\"}", &unused));

	/* the search histogram: 2.5 ms lands between le=0.002 and le=0.005 */
	const char *h = "lumen_operation_duration_seconds_bucket{type=\"search\",le=";
	char series[128];
	snprintf(series, sizeof(series), "%s\"0.002\"}", h);
	ck_assert(must_sample(text, series) == 0);
	snprintf(series, sizeof(series), "%s\"0.005\"}", h);
	ck_assert(must_sample(text, series) == 3);
	snprintf(series, sizeof(series), "%s\"+Inf\"}", h);
	ck_assert(must_sample(text, series) == 3);
	ck_assert(must_sample(text, "lumen_operation_duration_seconds_count{type=\"search\"}") == 3);
	double sum = must_sample(text, "lumen_operation_duration_seconds_sum{type=\"search\"}");
	ck_assert(sum >= 0.0075 && sum < 10);
	ck_assert(must_sample(text, "lumen_stage_duration_seconds_count{stage=\"queue\"}") == 3);
	ck_assert(must_sample(text, "lumen_stage_duration_seconds_count{stage=\"send\"}") == 0);

	/* buckets are cumulative: never decreasing along a series */
	double previous = -1;
	const char *p = text;
	while ((p = strstr(p, h)) != NULL) {
		double v = strtod(strchr(p, ' ') + 1, NULL);
		ck_assert(v >= previous);
		previous = v;
		p++;
	}

	ck_assert(must_sample(text, "lumen_entry_cache_hits_total{database=\"dc=example,dc=com\"}")
		  == 5);
	ck_assert(must_sample(text, "lumen_idl_cache_size{database=\"dc=example,dc=com\"}") == 3);
	ck_assert(must_sample(text, "lumen_lmdb_pages_used{database=\"dc=example,dc=com\"}") == 77);
	ck_assert(must_sample(text, "lumen_database_entries{database=\"dc=example,dc=com\"}")
		  == 1234);
	/* the label value is escaped; LMDB figures left out without a store */
	ck_assert(must_sample(text, "lumen_entry_cache_size{database=\"o=\\\"quoted\\\\\\\"\"}")
		  == 0);
	ck_assert(!sample(text, "lumen_lmdb_pages_used{database=\"o=\\\"quoted\\\\\\\"\"}", &unused));
	ck_assert_int_ge(atomic_load(&f.gather_calls), 1);
	free(response);
	fixture_stop(&f);
}
END_TEST

START_TEST(other_paths_and_methods)
{
	static const struct {
		const char *request;
		int status;
	} cases[] = {
		{ "GET / HTTP/1.0\r\n\r\n", 404 },
		{ "GET /metrics/ HTTP/1.0\r\n\r\n", 404 },
		{ "GET /metricsx HTTP/1.0\r\n\r\n", 404 },
		{ "GET /../metrics HTTP/1.0\r\n\r\n", 404 },
		{ "GET /metrics?name=x HTTP/1.0\r\n\r\n", 200 },
		{ "POST /metrics HTTP/1.0\r\nContent-Length: 0\r\n\r\n", 405 },
		{ "PUT /metrics HTTP/1.0\r\nContent-Length: 0\r\n\r\n", 405 },
		{ "DELETE /metrics HTTP/1.0\r\n\r\n", 405 },
		{ "HEAD /metrics HTTP/1.0\r\n\r\n", 405 },
		{ "POST /other HTTP/1.0\r\nContent-Length: 0\r\n\r\n", 404 },
		{ "BREW /metrics HTTP/1.0\r\n\r\n", 501 },     /* evhttp: unknown method */
	};
	struct fixture f;
	fixture_start(&f, NULL);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *response = http_exchange(metrics_http_port(f.http), cases[i].request);
		ck_assert_msg(strncmp(response, "HTTP/1.", 7) == 0 &&
			      status_of(response) == cases[i].status,
			      "%s: got %.40s", cases[i].request, response);
		if (cases[i].status == 405)
			ck_assert_ptr_nonnull(strstr(response, "Allow: GET"));
		free(response);
	}
	fixture_stop(&f);
}
END_TEST

START_TEST(start_errors)
{
	char err[256] = "";
	struct metrics_http *m = (struct metrics_http *)1;
	struct fixture f;
	fixture_start(&f, NULL);

	/* no stats */
	struct metrics_http_options o = { .address = "127.0.0.1" };
	ck_assert_int_eq(metrics_http_start(&o, &m, err, sizeof(err)), LUMEN_EINVAL);
	ck_assert_ptr_null(m);
	ck_assert_ptr_nonnull(strstr(err, "metrics"));

	/* the port is taken by the fixture's listener */
	o.stats = f.stats;
	o.port = metrics_http_port(f.http);
	ck_assert_int_eq(metrics_http_start(&o, &m, err, sizeof(err)), LUMEN_EIO);
	ck_assert_ptr_null(m);
	char want[64];
	snprintf(want, sizeof(want), "127.0.0.1:%u", (unsigned)o.port);
	ck_assert_msg(strstr(err, want) != NULL, "err: %s", err);

	/* an address that is not local */
	o.port = 0;
	o.address = "192.0.2.1";
	ck_assert_int_eq(metrics_http_start(&o, &m, err, sizeof(err)), LUMEN_EIO);
	ck_assert_ptr_null(m);
	ck_assert_ptr_nonnull(strstr(err, "192.0.2.1"));
	metrics_http_stop(NULL);
	fixture_stop(&f);
}
END_TEST

/* External base: the test thread runs the base while a client fetches. */
struct client_args {
	uint16_t port;
	char *response;
	atomic_bool done;
};

static void *client(void *arg)
{
	struct client_args *a = arg;
	a->response = http_get(a->port, "/metrics");
	atomic_store(&a->done, true);
	return NULL;
}

START_TEST(external_base)
{
	struct event_base *base = event_base_new();
	ck_assert_ptr_nonnull(base);
	struct fixture f;
	fixture_start(&f, base);
	struct client_args a = { .port = metrics_http_port(f.http) };
	pthread_t thread;
	ck_assert_int_eq(pthread_create(&thread, NULL, client, &a), 0);
	while (!atomic_load(&a.done)) {
		event_base_loop(base, EVLOOP_NONBLOCK);
		usleep(1000);
	}
	pthread_join(thread, NULL);
	ck_assert_int_eq(status_of(a.response), 200);
	ck_assert_ptr_nonnull(strstr(a.response, "lumen_connections_total 2\n"));
	free(a.response);
	fixture_stop(&f);
	event_base_free(base);
}
END_TEST

START_TEST(render_without_databases)
{
	struct stats *s = NULL;
	ck_assert_int_eq(stats_create(&s), LUMEN_OK);
	struct evbuffer *out = evbuffer_new();
	ck_assert_int_eq(metrics_render(s, NULL, NULL, NULL, out), LUMEN_OK);
	size_t len = evbuffer_get_length(out);
	char *text = calloc(1, len + 1);
	evbuffer_remove(out, text, len);
	ck_assert_ptr_nonnull(strstr(text, "lumen_build_info{version=\"unknown\"} 1\n"));
	ck_assert_ptr_null(strstr(text, "lumen_entry_cache"));
	/* every sample line belongs to a family announced by TYPE */
	for (char *line = strtok(text, "\n"); line != NULL; line = strtok(NULL, "\n")) {
		if (line[0] == '#')
			continue;
		ck_assert_msg(strncmp(line, "lumen_", 6) == 0, "stray line %s", line);
	}
	free(text);
	evbuffer_free(out);
	stats_destroy(s);
}
END_TEST

static int connect_to(uint16_t port)
{
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons(port) };
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	return fd;
}

/* Has the server closed fd? (EOF or reset, without blocking.) */
static bool peer_closed(int fd)
{
	char c;
	ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);
	return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

/*
 * Slowloris: two clients (the cap) drip a request head a byte every 100 ms.
 * The deadline (1 s) counts from accept, so both are closed although bytes
 * keep coming; a third client waits in the backlog meanwhile and is served
 * only once a slot is free.
 */
START_TEST(cap_and_deadline)
{
	struct fixture f;
	fixture_start_bounded(&f, NULL, 2, 1);
	uint16_t port = metrics_http_port(f.http);
	int slow[2] = { connect_to(port), connect_to(port) };
	const char *head = "GET /metrics HTTP/1.0\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
			   "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	bool closed[2] = { false, false };
	/* up to ~10 s of dripping; the deadline is 1 s */
	for (size_t i = 0; i < 100 && !(closed[0] && closed[1]); i++) {
		for (int k = 0; k < 2; k++) {
			if (closed[k])
				continue;
			if (send(slow[k], head + (i % strlen(head)), 1, MSG_NOSIGNAL) != 1 ||
			    peer_closed(slow[k]))
				closed[k] = true;
		}
		usleep(100 * 1000);
	}
	ck_assert_msg(closed[0] && closed[1], "dripping clients outlived the deadline");
	close(slow[0]);
	close(slow[1]);

	/* The cap: two idle clients hold both slots; the third is answered
	 * only after they were closed at their deadline. */
	int idle[2] = { connect_to(port), connect_to(port) };
	usleep(200 * 1000);                 /* both accepted before the third */
	int third = connect_to(port);
	const char *get = "GET /metrics HTTP/1.0\r\n\r\n";
	ck_assert_int_eq(write(third, get, strlen(get)), (ssize_t)strlen(get));
	char buf[64] = "";
	ssize_t n = read(third, buf, sizeof(buf) - 1);
	ck_assert_int_gt(n, 0);
	ck_assert_msg(strncmp(buf, "HTTP/1.1 200", 12) == 0, "%s", buf);
	/* At least one idle client was closed before the third was served
	 * (both, unless the server freed a slow client's slot late and
	 * accepted the second idle client after the first: then only the
	 * first has reached its deadline). */
	ck_assert_msg(peer_closed(idle[0]) || peer_closed(idle[1]),
		      "the third client was served while the cap was reached");
	close(idle[0]);
	close(idle[1]);
	close(third);
	fixture_stop(&f);
}
END_TEST

/* A head over 8 KiB without its end is refused, not buffered further. */
START_TEST(oversized_head)
{
	struct fixture f;
	fixture_start(&f, NULL);
	size_t len = 10000;
	char *request = malloc(len + 1);
	ck_assert_ptr_nonnull(request);
	const char *start = "GET /metrics HTTP/1.0\r\nX: ";
	memcpy(request, start, strlen(start));
	memset(request + strlen(start), 'a', len - strlen(start));
	request[len] = '\0';
	char *response = http_exchange(metrics_http_port(f.http), request);
	ck_assert_int_eq(status_of(response), 431);
	free(response);
	free(request);
	fixture_stop(&f);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("metrics_http");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, serves_metrics);
	tcase_add_test(tc, other_paths_and_methods);
	tcase_add_test(tc, start_errors);
	tcase_add_test(tc, external_base);
	tcase_add_test(tc, render_without_databases);
	tcase_add_test(tc, cap_and_deadline);
	tcase_add_test(tc, oversized_head);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
