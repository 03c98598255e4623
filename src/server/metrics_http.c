/*
 * metrics_http.c — GET /metrics over a small HTTP/1.1 listener, in the
 * Prometheus text format.
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
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <netdb.h>
#include <netinet/in.h>

#include "dlist.h"
#include "event_release.h"
#include "ldap_result_codes.h"
#include "log.h"
#include "lumen_error.h"

/* A scrape is a handful of small headers and no body. */
#define METRICS_MAX_HEADERS_SIZE 8192
/* Out of descriptors: how long accepting pauses before it is tried again. */
#define METRICS_ACCEPT_PAUSE_MS 100

struct metrics_client;

struct metrics_http {
	struct event_base *base;
	bool own_base;                  /* created here, run on `thread` */
	int fd;                         /* the listening socket */
	struct event *accept_event;     /* persistent, deleted while paused or full */
	struct event *resume_event;     /* the EMFILE pause's end */
	bool paused;                    /* out of descriptors: waiting for resume_event */
	bool full;                      /* max_clients connected: waiting for one to go */
	bool exhausted_logged;          /* the pause was logged; reset by a good accept */
	struct metrics_client *clients;
	unsigned n_clients, max_clients;
	unsigned timeout_seconds;       /* deadline of a whole exchange, from accept */
	struct event *stop_event;       /* own base: wakes the loop to stop */
	int stop_pipe[2];
	pthread_t thread;
	bool thread_started;
	uint16_t port;
	struct stats *stats;
	struct database_figures_source databases;
	const struct conn_memory *memory;
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

/* The server-wide counters, a uint64_t of struct stats_snapshot each. */
static const struct {
	const char *name;
	const char *type;
	const char *help;
	size_t offset;
} server_counters[] = {
#define SNAPSHOT(field) offsetof(struct stats_snapshot, field)
	{ "lumen_connections_current", "gauge", "Open client connections.",
	  SNAPSHOT(connections_current) },
	{ "lumen_connections_total", "counter", "Connections accepted.",
	  SNAPSHOT(connections_total) },
	{ "lumen_bytes_sent_total", "counter", "Bytes sent to clients.", SNAPSHOT(bytes_sent) },
	{ "lumen_bytes_received_total", "counter", "Bytes received from clients.",
	  SNAPSHOT(bytes_received) },
	{ "lumen_pdus_sent_total", "counter", "LDAP messages sent.", SNAPSHOT(pdus_sent) },
	{ "lumen_pdus_received_total", "counter", "LDAP messages received.",
	  SNAPSHOT(pdus_received) },
	{ "lumen_entries_sent_total", "counter", "Search result entries sent.",
	  SNAPSHOT(entries_sent) },
	{ "lumen_referrals_sent_total", "counter", "Search result references sent.",
	  SNAPSHOT(referrals_sent) },
#undef SNAPSHOT
};

static void render_server(struct render *r, const struct stats_snapshot *s, const char *version)
{
	emit_header(r, "lumen_build_info", "gauge", "Lumen version (value is always 1).");
	emit(r, "lumen_build_info{version=\"");
	emit_label_value(r, version);
	emit(r, "\"} 1\n");
	emit_scalar(r, "lumen_start_time_seconds", "gauge",
		    "Start time of the server since the Unix epoch.", (uint64_t)s->start_time);
	size_t n = sizeof(server_counters) / sizeof(server_counters[0]);
	for (size_t i = 0; i < n; i++) {
		uint64_t value;
		memcpy(&value, (const char *)s + server_counters[i].offset, sizeof(value));
		emit_scalar(r, server_counters[i].name, server_counters[i].type,
			    server_counters[i].help, value);
	}
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
/* The six figures each cache has (struct cache_figures), as one family each. */
#define CACHE_METRICS(prefix, field, title, held, setting) \
	{ "lumen_" prefix "_hits_total", "counter", title " hits.", false, FIGURE(field.hits) }, \
	{ "lumen_" prefix "_misses_total", "counter", title " misses.", false, \
	  FIGURE(field.misses) }, \
	{ "lumen_" prefix "_evictions_total", "counter", title " evictions.", false, \
	  FIGURE(field.evictions) }, \
	{ "lumen_" prefix "_not_admitted_total", "counter", title " misses not kept: the " \
	  "doorkeeper had not seen the key (twice, for a reader that can decode less) while " \
	  "the cache is full.", false, \
	  FIGURE(field.not_admitted) }, \
	{ "lumen_" prefix "_size", "gauge", held, false, FIGURE(field.size) }, \
	{ "lumen_" prefix "_capacity", "gauge", title " capacity (" setting ").", false, \
	  FIGURE(field.capacity) }

static const struct database_metric database_metrics[] = {
	CACHE_METRICS("entry_cache", entry_cache, "Entry cache", "Entries held in the entry cache.",
		      "cachesize"),
	CACHE_METRICS("idl_cache", idl_cache, "IDL cache", "Index keys held in the IDL cache.",
		      "idlcachesize"),
	{ "lumen_entry_partial_reads_total", "counter", "Entries decoded in part, never cached: "
	  "the DN alone for an access decision, or the types a bind, compare or search reads "
	  "when the entry cache would not keep the entry.", false, FIGURE(partial_reads) },
	{ "lumen_database_writes_total", "counter", "Writes committed.", false, FIGURE(writes) },
	{ "lumen_database_commits_total", "counter", "Group commits (one sync each) that carried "
	  "the writes.", false, FIGURE(commits) },
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

/* What the connections' buffers hold (conn_memory.h). */
static void render_memory(struct render *r, const struct conn_memory *memory)
{
	struct conn_memory_figures f;
	if (memory == NULL)
		return;
	conn_memory_figures(memory, &f);
	emit_scalar(r, "lumen_connection_memory_bytes", "gauge",
		    "Bytes the buffers and TLS sessions of all client connections hold, "
		    "with the I/O threads' input buffers.", f.total);
	emit_scalar(r, "lumen_connection_memory_peak_bytes", "gauge",
		    "The most bytes client connections held at once.", f.peak);
	emit_scalar(r, "lumen_connection_memory_limit_bytes", "gauge",
		    "conn_total_memory (0: no bound).", f.max_total);
	emit_scalar(r, "lumen_connection_memory_waits_total", "counter",
		    "Times a connection stopped reading for want of memory room.", f.waits);
	emit_scalar(r, "lumen_connection_memory_base_bytes", "gauge",
		    "Bytes of the connection objects themselves.", f.base);
	emit_scalar(r, "lumen_connection_memory_queued_bytes", "gauge",
		    "Bytes of input kept, requests and transaction queues.", f.queued);
	emit_scalar(r, "lumen_connection_memory_output_bytes", "gauge",
		    "Bytes of output queues.", f.output);
	emit_scalar(r, "lumen_connection_memory_tls_bytes", "gauge",
		    "Bytes OpenSSL holds for TLS sessions (and handshakes' reserved room).",
		    f.tls);
	emit_scalar(r, "lumen_connection_memory_scratch_bytes", "gauge",
		    "Bytes of the I/O threads' input buffers (fixed).", f.scratch);
	emit_scalar(r, "lumen_connection_memory_waiting", "gauge",
		    "Connections waiting for room under conn_total_memory.", f.waiting);
	emit_scalar(r, "lumen_connection_memory_wakeups_total", "counter",
		    "Waiting connections woken by released memory.", f.wakeups);
	emit_scalar(r, "lumen_connection_memory_refused_total", "counter",
		    "Connections refused: their base (and TLS handshake) would pass "
		    "conn_total_memory.", f.refused);
	emit_scalar(r, "lumen_connection_memory_tls_refused_total", "counter",
		    "StartTLS refused or TLS handshakes stopped at conn_total_memory.",
		    f.tls_refused);
}

int metrics_render(struct stats *stats, const struct database_figures_source *databases,
		   const struct conn_memory *memory, const char *version, struct evbuffer *out)
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
	render_memory(&r, memory);
	render_operations(&r, snap);
	render_databases(&r, dbs, n_dbs);
	free(dbs);
	free(snap);
	return r.rc;
}

/* ------------------------------------------------------------- serving */

/*
 * The listener accepts itself (evhttp's would spin on EMFILE and log each
 * failed accept, and it has neither a connection cap nor a deadline): each
 * client gets a bufferevent, a deadline from accept, and one answer, after
 * which the connection closes (Connection: close; Prometheus reconnects).
 */
struct metrics_client {
	struct metrics_client *prev, *next;
	struct metrics_http *m;
	struct bufferevent *bev;
	struct event *deadline;
	bool answered;                  /* close once the output drained */
};

/* Methods HTTP defines: anything else is 501, these are 405 off GET. */
static bool known_method(const char *method, size_t len)
{
	static const char *const methods[] = { "GET", "HEAD", "POST", "PUT", "DELETE",
					       "OPTIONS", "TRACE", "CONNECT", "PATCH" };
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (strlen(methods[i]) == len && memcmp(methods[i], method, len) == 0)
			return true;
	return false;
}

static void close_client(struct metrics_client *c)
{
	struct metrics_http *m = c->m;
	DLIST_UNLINK(m->clients, c);
	event_free(c->deadline);
	bufferevent_free(c->bev);
	free(c);
	m->n_clients--;
	/* A slot is free again: resume accepting if the cap had stopped it. */
	if (m->full && !m->paused) {
		m->full = false;
		event_add(m->accept_event, NULL);
	}
}

/* Queue the whole answer; the connection closes once it is written. */
static void answer(struct metrics_client *c, int status, const char *reason,
		   const char *extra_header, struct evbuffer *body, const char *text)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);
	size_t len = body != NULL ? evbuffer_get_length(body) : strlen(text);
	int rc = evbuffer_add_printf(out, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\n"
				     "Content-Length: %zu\r\nConnection: close\r\n%s\r\n", status,
				     reason, body != NULL ? "text/plain; version=0.0.4; charset=utf-8"
							  : "text/plain; charset=utf-8",
				     len, extra_header != NULL ? extra_header : "");
	if (rc >= 0)
		rc = body != NULL ? evbuffer_add_buffer(out, body) : evbuffer_add(out, text, len);
	c->answered = true;
	bufferevent_disable(c->bev, EV_READ);
	if (rc < 0 || evbuffer_get_length(out) == 0)
		close_client(c);
}

static void serve_metrics(struct metrics_client *c)
{
	struct metrics_http *m = c->m;
	struct evbuffer *body = evbuffer_new();
	if (body == NULL ||
	    metrics_render(m->stats, &m->databases, m->memory, m->version, body) != LUMEN_OK)
		answer(c, 500, "Internal Server Error", NULL, NULL, "cannot render metrics\n");
	else
		answer(c, 200, "OK", NULL, body, NULL);
	if (body != NULL)
		evbuffer_free(body);
}

/* The request line of a complete head: route it. */
static void handle_request(struct metrics_client *c, char *line)
{
	char *sp1 = strchr(line, ' ');
	char *sp2 = sp1 != NULL ? strchr(sp1 + 1, ' ') : NULL;
	if (sp1 == NULL || sp2 == NULL || strncmp(sp2 + 1, "HTTP/1.", 7) != 0) {
		answer(c, 400, "Bad Request", NULL, NULL, "malformed request line\n");
		return;
	}
	const char *target = sp1 + 1;
	size_t path_len = strcspn(target, "? ");
	bool is_metrics = path_len == 8 && memcmp(target, "/metrics", 8) == 0;
	if (!known_method(line, (size_t)(sp1 - line)))
		answer(c, 501, "Not Implemented", NULL, NULL, "unknown method\n");
	else if (!is_metrics)
		answer(c, 404, "Not Found", NULL, NULL, "only /metrics is served here\n");
	else if (sp1 - line != 3 || memcmp(line, "GET", 3) != 0)
		answer(c, 405, "Method Not Allowed", "Allow: GET\r\n", NULL,
		       "only GET is allowed on /metrics\n");
	else
		serve_metrics(c);
}

static void on_client_read(struct bufferevent *bev, void *arg)
{
	struct metrics_client *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	if (c->answered)
		return;
	struct evbuffer_ptr end = evbuffer_search(in, "\r\n\r\n", 4, NULL);
	if (end.pos < 0) {
		if (evbuffer_get_length(in) > METRICS_MAX_HEADERS_SIZE)
			answer(c, 431, "Request Header Fields Too Large", NULL, NULL,
			       "request head too large\n");
		return;
	}
	size_t line_len = 0;
	char *line = evbuffer_readln(in, &line_len, EVBUFFER_EOL_CRLF);
	if (line == NULL) {
		answer(c, 500, "Internal Server Error", NULL, NULL, "out of memory\n");
		return;
	}
	handle_request(c, line);
	free(line);
}

static void on_client_write(struct bufferevent *bev, void *arg)
{
	struct metrics_client *c = arg;
	if (c->answered && evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		close_client(c);
}

static void on_client_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		close_client(arg);
}

/* The whole exchange has one deadline from accept: dripping bytes does
 * not extend it (a per-read timeout would restart with each one). */
static void on_client_deadline(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	close_client(arg);
}

static int add_client(struct metrics_http *m, int fd)
{
	struct metrics_client *c = calloc(1, sizeof(*c));
	if (c == NULL)
		goto fail;
	c->m = m;
	c->bev = bufferevent_socket_new(m->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (c->bev == NULL)
		goto fail;
	fd = -1;
	c->deadline = evtimer_new(m->base, on_client_deadline, c);
	struct timeval tv = { (time_t)m->timeout_seconds, 0 };
	if (c->deadline == NULL || evtimer_add(c->deadline, &tv) != 0 ||
	    bufferevent_enable(c->bev, EV_READ) != 0)
		goto fail;
	bufferevent_setcb(c->bev, on_client_read, on_client_write, on_client_event, c);
	c->next = m->clients;
	if (m->clients != NULL)
		m->clients->prev = c;
	m->clients = c;
	m->n_clients++;
	return LUMEN_OK;
fail:
	if (c != NULL && c->deadline != NULL)
		event_free(c->deadline);
	if (c != NULL && c->bev != NULL)
		bufferevent_free(c->bev);
	free(c);
	if (fd >= 0)
		close(fd);
	return LUMEN_ENOMEM;
}

/* Out of descriptors or memory: stop accepting for a moment; log once per
 * episode (the condition may last, and the log must not fill the disk). */
static void pause_accepting(struct metrics_http *m, int error)
{
	if (!m->exhausted_logged)
		log_printf(0, "metrics listener: accept: %s; pausing for %d ms at a time "
			   "until it succeeds", strerror(error), METRICS_ACCEPT_PAUSE_MS);
	m->exhausted_logged = true;
	m->paused = true;
	event_del(m->accept_event);
	struct timeval tv = { 0, METRICS_ACCEPT_PAUSE_MS * 1000 };
	event_add(m->resume_event, &tv);
}

static void on_resume(evutil_socket_t fd, short what, void *arg)
{
	struct metrics_http *m = arg;
	(void)fd;
	(void)what;
	m->paused = false;
	if (!m->full)
		event_add(m->accept_event, NULL);
}

static void on_accept(evutil_socket_t fd, short what, void *arg)
{
	struct metrics_http *m = arg;
	(void)what;
	for (int burst = 0; burst < 16; burst++) {
		if (m->n_clients >= m->max_clients) {
			/* Leave the rest in the backlog until a client leaves. */
			m->full = true;
			event_del(m->accept_event);
			return;
		}
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (cfd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
				pause_accepting(m, errno);
			return;
		}
		if (m->exhausted_logged)
			log_printf(0, "metrics listener: accepting again");
		m->exhausted_logged = false;
		if (add_client(m, cfd) != LUMEN_OK)
			log_printf(0, "metrics listener: out of memory for a connection");
	}
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

/* Bind and listen; err names the address. LUMEN_EIO. */
static int open_socket(struct metrics_http *m, const char *address, uint16_t port, char *err,
		       size_t errlen)
{
	struct addrinfo hints = { .ai_flags = AI_PASSIVE | AI_NUMERICSERV,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai = NULL;
	char service[8];
	snprintf(service, sizeof(service), "%u", (unsigned)port);
	int gai = getaddrinfo(address, service, &hints, &ai);
	if (gai != 0) {
		snprintf(err, errlen, "metrics listener %s:%u: %s", address, (unsigned)port,
			 gai_strerror(gai));
		return LUMEN_EIO;
	}
	int one = 1;
	m->fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (m->fd < 0 || setsockopt(m->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(m->fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(m->fd, 128) != 0) {
		snprintf(err, errlen, "metrics listener %s:%u: %s", address, (unsigned)port,
			 strerror(errno));
		freeaddrinfo(ai);
		return LUMEN_EIO;
	}
	freeaddrinfo(ai);
	return LUMEN_OK;
}

static int bound_port(int fd, uint16_t *port)
{
	struct sockaddr_storage addr;
	socklen_t len = sizeof(addr);
	if (getsockname(fd, (struct sockaddr *)&addr, &len) != 0)
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
	m->max_clients = o->max_connections > 0 ? o->max_connections
						: METRICS_HTTP_DEFAULT_MAX_CONNECTIONS;
	m->timeout_seconds = o->timeout_seconds > 0 ? o->timeout_seconds
						    : METRICS_HTTP_DEFAULT_TIMEOUT;
	int rc = open_socket(m, address, o->port, err, errlen);
	if (rc != LUMEN_OK)
		return rc;
	if (bound_port(m->fd, &m->port) != LUMEN_OK) {
		snprintf(err, errlen, "metrics listener %s:%u: cannot read the bound port",
			 address, (unsigned)o->port);
		return LUMEN_EIO;
	}
	m->accept_event = event_new(m->base, m->fd, EV_READ | EV_PERSIST, on_accept, m);
	m->resume_event = evtimer_new(m->base, on_resume, m);
	if (m->accept_event == NULL || m->resume_event == NULL)
		return LUMEN_ENOMEM;
	if (event_add(m->accept_event, NULL) != 0) {
		snprintf(err, errlen, "metrics listener %s:%u: cannot watch the socket", address,
			 (unsigned)o->port);
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
	m->fd = -1;
	m->stats = options->stats;
	m->databases = options->databases;
	m->memory = options->memory;
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
	while (m->clients != NULL)
		close_client(m->clients);
	event_release(&m->accept_event);
	event_release(&m->resume_event);
	if (m->fd >= 0)
		close(m->fd);
	event_release(&m->stop_event);
	for (int i = 0; i < 2; i++)
		if (m->stop_pipe[i] >= 0)
			close(m->stop_pipe[i]);
	if (m->own_base && m->base != NULL)
		event_base_free(m->base);
	free(m);
}
