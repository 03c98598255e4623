/*
 * metrics_http.c — GET /metrics over evhttp, in the Prometheus text format.
 */
#include "metrics_http.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <netinet/in.h>

#include "ldap_result_codes.h"
#include "lumen_error.h"

/* A scrape is a handful of small headers and no body. */
#define METRICS_MAX_HEADERS_SIZE 8192
#define METRICS_TIMEOUT_SECONDS 10

struct metrics_http {
	struct event_base *base;
	bool own_base;                  /* created here, run on `thread` */
	struct evhttp *http;
	struct event *stop_event;       /* own base: wakes the loop to stop */
	int stop_pipe[2];
	pthread_t thread;
	bool thread_started;
	uint16_t port;
	struct stats *stats;
	struct database_figures_source databases;
	const char *version;
};

/* ------------------------------------------------------------ rendering */

/* evbuffer_add_printf fails only when the buffer cannot grow. */
struct render {
	struct evbuffer *out;
	int rc;
};

static void emit(struct render *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void emit(struct render *r, const char *fmt, ...)
{
	va_list ap;
	if (r->rc != LUMEN_OK)
		return;
	va_start(ap, fmt);
	if (evbuffer_add_vprintf(r->out, fmt, ap) < 0)
		r->rc = LUMEN_ENOMEM;
	va_end(ap);
}

static void emit_header(struct render *r, const char *name, const char *type, const char *help)
{
	emit(r, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Label values escape backslash, double quote and newline (the format's rule). */
static void emit_label_value(struct render *r, const char *value)
{
	for (const char *p = value; *p != '\0' && r->rc == LUMEN_OK; p++) {
		if (*p == '\\')
			emit(r, "\\\\");
		else if (*p == '"')
			emit(r, "\\\"");
		else if (*p == '\n')
			emit(r, "\\n");
		else if (evbuffer_add(r->out, p, 1) != 0)
			r->rc = LUMEN_ENOMEM;
	}
}

static double seconds(uint64_t ns)
{
	return (double)ns / 1e9;
}

/* The exposition's bounds: 1, 2, 5 per decade from 1 µs, then 100 s. */
static size_t exposition_bounds(uint64_t *bounds, size_t max)
{
	static const unsigned steps[] = { 1, 2, 5 };
	uint64_t decade = 1000;
	size_t n = 0;
	for (int d = 0; d < STATS_HISTOGRAM_DECADES; d++, decade *= 10)
		for (size_t s = 0; s < 3 && n < max; s++)
			bounds[n++] = decade * steps[s];
	if (n < max)
		bounds[n++] = decade;
	return n;
}

/* One histogram's _bucket/_sum/_count lines; label is `key="value"`. */
static void emit_histogram(struct render *r, const char *name, const char *key,
			   const char *value, const struct stats_histogram *h)
{
	uint64_t bounds[3 * STATS_HISTOGRAM_DECADES + 1];
	size_t n = exposition_bounds(bounds, sizeof(bounds) / sizeof(bounds[0]));
	for (size_t i = 0; i < n; i++)
		emit(r, "%s_bucket{%s=\"%s\",le=\"%g\"} %llu\n", name, key, value,
		     seconds(bounds[i]),
		     (unsigned long long)stats_histogram_count_below(h, bounds[i]));
	emit(r, "%s_bucket{%s=\"%s\",le=\"+Inf\"} %llu\n", name, key, value,
	     (unsigned long long)h->count);
	emit(r, "%s_sum{%s=\"%s\"} %.9f\n", name, key, value, seconds(h->sum_ns));
	emit(r, "%s_count{%s=\"%s\"} %llu\n", name, key, value, (unsigned long long)h->count);
}

static void emit_scalar(struct render *r, const char *name, const char *type,
			const char *help, uint64_t value)
{
	emit_header(r, name, type, help);
	emit(r, "%s %llu\n", name, (unsigned long long)value);
}

static void render_server(struct render *r, const struct stats_snapshot *s, const char *version)
{
	emit_header(r, "lumen_build_info", "gauge", "Lumen version (value is always 1).");
	emit(r, "lumen_build_info{version=\"");
	emit_label_value(r, version);
	emit(r, "\"} 1\n");
	emit_scalar(r, "lumen_start_time_seconds", "gauge",
		    "Start time of the server since the Unix epoch.", (uint64_t)s->start_time);
	emit_scalar(r, "lumen_connections_current", "gauge", "Open client connections.",
		    s->connections_current);
	emit_scalar(r, "lumen_connections_total", "counter", "Connections accepted.",
		    s->connections_total);
	emit_scalar(r, "lumen_bytes_sent_total", "counter", "Bytes sent to clients.",
		    s->bytes_sent);
	emit_scalar(r, "lumen_bytes_received_total", "counter", "Bytes received from clients.",
		    s->bytes_received);
	emit_scalar(r, "lumen_pdus_sent_total", "counter", "LDAP messages sent.", s->pdus_sent);
	emit_scalar(r, "lumen_pdus_received_total", "counter", "LDAP messages received.",
		    s->pdus_received);
	emit_scalar(r, "lumen_entries_sent_total", "counter", "Search result entries sent.",
		    s->entries_sent);
	emit_scalar(r, "lumen_referrals_sent_total", "counter", "Search result references sent.",
		    s->referrals_sent);
}

static void render_operations(struct render *r, const struct stats_snapshot *s)
{
	emit_header(r, "lumen_operations_initiated_total", "counter",
		    "Operations received, by type.");
	for (int t = 0; t < STATS_OP_COUNT; t++)
		emit(r, "lumen_operations_initiated_total{type=\"%s\"} %llu\n",
		     stats_op_type_name((enum stats_op_type)t),
		     (unsigned long long)s->initiated[t]);
	emit_header(r, "lumen_operations_total", "counter",
		    "Operations completed, by type and LDAP result.");
	for (int t = 0; t < STATS_OP_COUNT; t++) {
		for (int code = 0; code < STATS_RESULT_CODES; code++) {
			/* Only results that happened: 128 mostly-zero series per type help nobody. */
			if (s->results[t][code] == 0)
				continue;
			bool other = code == STATS_RESULT_OTHER;
			char number[16];
			snprintf(number, sizeof(number), "%d", code);
			emit(r, "lumen_operations_total{type=\"%s\",result=\"%s\",code=\"%s\"} %llu\n",
			     stats_op_type_name((enum stats_op_type)t),
			     other ? "other" : ldap_result_name(code), other ? "other" : number,
			     (unsigned long long)s->results[t][code]);
		}
	}
	emit_header(r, "lumen_operation_duration_seconds", "histogram",
		    "Time from queueing to the last response byte handed to the kernel.");
	for (int t = 0; t < STATS_OP_COUNT; t++)
		emit_histogram(r, "lumen_operation_duration_seconds", "type",
			       stats_op_type_name((enum stats_op_type)t), &s->op_duration[t]);
	emit_header(r, "lumen_stage_duration_seconds", "histogram",
		    "Time operations spent in each stage, all types together.");
	for (int st = 0; st < STATS_STAGE_COUNT; st++)
		emit_histogram(r, "lumen_stage_duration_seconds", "stage",
			       stats_stage_name((enum stats_stage)st), &s->stage_duration[st]);
}

/* One per-database metric family: header, then a line per database. */
struct database_metric {
	const char *name;
	const char *type;
	const char *help;
	bool needs_store;     /* LMDB figures: skipped for databases without them */
	size_t offset;        /* of the uint64_t in struct database_figures */
};

#define FIGURE(field) offsetof(struct database_figures, field)

static const struct database_metric database_metrics[] = {
	{ "lumen_entry_cache_hits_total", "counter", "Entry cache hits.", false,
	  FIGURE(entry_cache.hits) },
	{ "lumen_entry_cache_misses_total", "counter", "Entry cache misses.", false,
	  FIGURE(entry_cache.misses) },
	{ "lumen_entry_cache_evictions_total", "counter", "Entry cache evictions.", false,
	  FIGURE(entry_cache.evictions) },
	{ "lumen_entry_cache_size", "gauge", "Entries held in the entry cache.", false,
	  FIGURE(entry_cache.size) },
	{ "lumen_entry_cache_capacity", "gauge", "Entry cache capacity (cachesize).", false,
	  FIGURE(entry_cache.capacity) },
	{ "lumen_idl_cache_hits_total", "counter", "IDL cache hits.", false,
	  FIGURE(idl_cache.hits) },
	{ "lumen_idl_cache_misses_total", "counter", "IDL cache misses.", false,
	  FIGURE(idl_cache.misses) },
	{ "lumen_idl_cache_evictions_total", "counter", "IDL cache evictions.", false,
	  FIGURE(idl_cache.evictions) },
	{ "lumen_idl_cache_size", "gauge", "Index keys held in the IDL cache.", false,
	  FIGURE(idl_cache.size) },
	{ "lumen_idl_cache_capacity", "gauge", "IDL cache capacity (idlcachesize).", false,
	  FIGURE(idl_cache.capacity) },
	{ "lumen_lmdb_map_size_bytes", "gauge", "LMDB map size (maxsize).", true,
	  FIGURE(map_size) },
	{ "lumen_lmdb_page_size_bytes", "gauge", "LMDB page size.", true, FIGURE(page_size) },
	{ "lumen_lmdb_pages_used", "gauge", "LMDB pages in use (last page number + 1).", true,
	  FIGURE(pages_used) },
	{ "lumen_lmdb_readers_used", "gauge", "LMDB reader slots holding a snapshot.", true,
	  FIGURE(readers_used) },
	{ "lumen_lmdb_readers_max", "gauge", "LMDB reader slots (maxreaders).", true,
	  FIGURE(readers_max) },
	{ "lumen_database_entries", "gauge", "Entries stored in the database.", true,
	  FIGURE(entries) },
};

static void render_databases(struct render *r, const struct database_figures *dbs, size_t n)
{
	size_t n_metrics = sizeof(database_metrics) / sizeof(database_metrics[0]);
	for (size_t m = 0; m < n_metrics && n > 0; m++) {
		const struct database_metric *dm = &database_metrics[m];
		emit_header(r, dm->name, dm->type, dm->help);
		for (size_t i = 0; i < n; i++) {
			if (dm->needs_store && !dbs[i].have_store)
				continue;
			uint64_t value;
			memcpy(&value, (const char *)&dbs[i] + dm->offset, sizeof(value));
			emit(r, "%s{database=\"", dm->name);
			emit_label_value(r, dbs[i].suffix != NULL ? dbs[i].suffix : "");
			emit(r, "\"} %llu\n", (unsigned long long)value);
		}
	}
}

/* Ask the source how many databases there are, then for their figures. */
static int gather_databases(const struct database_figures_source *src,
			    struct database_figures **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (src == NULL || src->gather == NULL)
		return LUMEN_OK;
	size_t count = src->gather(src->ctx, NULL, 0);
	if (count == 0)
		return LUMEN_OK;
	struct database_figures *dbs = calloc(count, sizeof(*dbs));
	if (dbs == NULL)
		return LUMEN_ENOMEM;
	size_t filled = src->gather(src->ctx, dbs, count);
	*out = dbs;
	*n = filled < count ? filled : count;
	return LUMEN_OK;
}

int metrics_render(struct stats *stats, const struct database_figures_source *databases,
		   const char *version, struct evbuffer *out)
{
	struct render r = { .out = out, .rc = LUMEN_OK };
	struct database_figures *dbs = NULL;
	size_t n_dbs = 0;
	/* ~21 KiB: too big for the stack of an event thread that may be small. */
	struct stats_snapshot *snap = malloc(sizeof(*snap));
	if (snap == NULL)
		return LUMEN_ENOMEM;
	stats_snapshot(stats, snap);
	r.rc = gather_databases(databases, &dbs, &n_dbs);
	render_server(&r, snap, version != NULL ? version : "unknown");
	render_operations(&r, snap);
	render_databases(&r, dbs, n_dbs);
	free(dbs);
	free(snap);
	return r.rc;
}

/* ------------------------------------------------------------- serving */

static void serve_metrics(struct evhttp_request *req, struct metrics_http *m)
{
	struct evbuffer *body = evbuffer_new();
	if (body == NULL || metrics_render(m->stats, &m->databases, m->version, body) != LUMEN_OK) {
		evhttp_send_error(req, HTTP_INTERNAL, NULL);
		goto done;
	}
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
			  "text/plain; version=0.0.4; charset=utf-8");
	evhttp_send_reply(req, HTTP_OK, "OK", body);
done:
	if (body != NULL)
		evbuffer_free(body);
}

static void handle_request(struct evhttp_request *req, void *arg)
{
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *path = uri != NULL ? evhttp_uri_get_path(uri) : NULL;
	if (path == NULL || strcmp(path, "/metrics") != 0) {
		evhttp_send_error(req, HTTP_NOTFOUND, NULL);
		return;
	}
	if (evhttp_request_get_command(req) != EVHTTP_REQ_GET) {
		/* evhttp_send_error would drop the Allow header: reply by hand. */
		struct evkeyvalq *headers = evhttp_request_get_output_headers(req);
		evhttp_add_header(headers, "Allow", "GET");
		evhttp_add_header(headers, "Content-Type", "text/plain; charset=utf-8");
		evhttp_add_header(headers, "Connection", "close");
		struct evbuffer *body = evbuffer_new();
		if (body != NULL)
			evbuffer_add_printf(body, "only GET is allowed on /metrics\n");
		evhttp_send_reply(req, 405, "Method Not Allowed", body);
		if (body != NULL)
			evbuffer_free(body);
		return;
	}
	serve_metrics(req, arg);
}

static void stop_loop(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopbreak(arg);
}

static void *run_loop(void *arg)
{
	struct metrics_http *m = arg;
	event_base_dispatch(m->base);
	return NULL;
}

static int bound_port(struct evhttp_bound_socket *handle, uint16_t *port)
{
	struct sockaddr_storage addr;
	socklen_t len = sizeof(addr);
	if (getsockname(evhttp_bound_socket_get_fd(handle), (struct sockaddr *)&addr, &len) != 0)
		return LUMEN_EIO;
	if (addr.ss_family == AF_INET)
		*port = ntohs(((struct sockaddr_in *)&addr)->sin_port);
	else if (addr.ss_family == AF_INET6)
		*port = ntohs(((struct sockaddr_in6 *)&addr)->sin6_port);
	else
		return LUMEN_EIO;
	return LUMEN_OK;
}

static int setup_http(struct metrics_http *m, const struct metrics_http_options *o,
		      char *err, size_t errlen)
{
	const char *address = o->address != NULL ? o->address : METRICS_HTTP_DEFAULT_ADDRESS;
	m->http = evhttp_new(m->base);
	if (m->http == NULL)
		return LUMEN_ENOMEM;
	/* Every method reaches handle_request, which answers 405 itself. */
	evhttp_set_allowed_methods(m->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD |
				   EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS |
				   EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT | EVHTTP_REQ_PATCH);
	evhttp_set_max_headers_size(m->http, METRICS_MAX_HEADERS_SIZE);
	evhttp_set_max_body_size(m->http, 0);
	evhttp_set_timeout(m->http, METRICS_TIMEOUT_SECONDS);
	evhttp_set_gencb(m->http, handle_request, m);
	errno = 0;
	struct evhttp_bound_socket *handle = evhttp_bind_socket_with_handle(m->http, address, o->port);
	if (handle == NULL || bound_port(handle, &m->port) != LUMEN_OK) {
		snprintf(err, errlen, "metrics listener %s:%u: %s", address, (unsigned)o->port,
			 errno != 0 ? strerror(errno) : "cannot bind");
		return LUMEN_EIO;
	}
	return LUMEN_OK;
}

/* Own base: a pipe whose read end stops the loop, then the thread. */
static int start_thread(struct metrics_http *m, char *err, size_t errlen)
{
	if (pipe2(m->stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
		m->stop_pipe[0] = m->stop_pipe[1] = -1;
		snprintf(err, errlen, "metrics listener: pipe: %s", strerror(errno));
		return LUMEN_EIO;
	}
	m->stop_event = event_new(m->base, m->stop_pipe[0], EV_READ, stop_loop, m->base);
	if (m->stop_event == NULL || event_add(m->stop_event, NULL) != 0)
		return LUMEN_ENOMEM;
	int e = pthread_create(&m->thread, NULL, run_loop, m);
	if (e != 0) {
		snprintf(err, errlen, "metrics listener: thread: %s", strerror(e));
		return LUMEN_EIO;
	}
	m->thread_started = true;
	return LUMEN_OK;
}

int metrics_http_start(const struct metrics_http_options *options,
		       struct metrics_http **out, char *err, size_t errlen)
{
	int rc;
	struct metrics_http *m = NULL;
	*out = NULL;
	if (options == NULL || options->stats == NULL) {
		snprintf(err, errlen, "metrics listener: no statistics to publish");
		return LUMEN_EINVAL;
	}
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return LUMEN_ENOMEM;
	m->stop_pipe[0] = m->stop_pipe[1] = -1;
	m->stats = options->stats;
	m->databases = options->databases;
	m->version = options->version;
	m->base = options->base;
	if (m->base == NULL) {
		m->own_base = true;
		m->base = event_base_new();
		if (m->base == NULL) {
			rc = LUMEN_ENOMEM;
			goto fail;
		}
	}
	rc = setup_http(m, options, err, errlen);
	if (rc == LUMEN_OK && m->own_base)
		rc = start_thread(m, err, errlen);
	if (rc != LUMEN_OK)
		goto fail;
	*out = m;
	return LUMEN_OK;
fail:
	if (rc == LUMEN_ENOMEM)
		snprintf(err, errlen, "metrics listener: out of memory");
	metrics_http_stop(m);
	return rc;
}

uint16_t metrics_http_port(const struct metrics_http *m)
{
	return m->port;
}

void metrics_http_stop(struct metrics_http *m)
{
	if (m == NULL)
		return;
	if (m->thread_started) {
		/* A full pipe already holds a wake-up: the loop stops either way. */
		ssize_t ignored = write(m->stop_pipe[1], "x", 1);
		(void)ignored;
		pthread_join(m->thread, NULL);
	}
	if (m->http != NULL)
		evhttp_free(m->http);
	if (m->stop_event != NULL)
		event_free(m->stop_event);
	for (int i = 0; i < 2; i++)
		if (m->stop_pipe[i] >= 0)
			close(m->stop_pipe[i]);
	if (m->own_base && m->base != NULL)
		event_base_free(m->base);
	free(m);
}
