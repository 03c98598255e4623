/*
 * server.c — server start-up, accepting, signals and graceful shutdown.
 */
#include "server.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/thread.h>

#include "backend.h"
#include "config.h"
#include "config_backend.h"
#include "conn_limits.h"
#include "cpu_count.h"
#include "dn.h"
#include "entry.h"
#include "io_thread.h"
#include "log.h"
#include "bind_pace.h"
#include "lumen_error.h"
#include "metrics_http.h"
#include "ops.h"
#include "overlay.h"
#include "syncrepl.h"
#include "own_databases.h"
#include "rootdse.h"
#include "sd_notify.h"
#include "stats.h"
#include "subschema.h"
#include "tls.h"
#include "workq.h"

/* Queued (not yet running) operations across all connections. */
#define SERVER_QUEUE_CAPACITY 65536
/* How long accepting pauses when the process is out of descriptors. */
#define ACCEPT_PAUSE_MS 100
/* Threads that take jobs while workers wait for a group commit (workq.h):
 * three per worker lets 16 writers share one commit with 4 workers. */
#define SPARE_WORKERS_PER_WORKER 3
#define SPARE_WORKERS_MAX 64
/* Connections each of the first I/O threads (one per CPU) takes before any
 * other thread gets one (io_placement.h). */
#define IO_PLACEMENT_FILL 4
/* slapd numbers connections from 1000; log readers are used to it. */
#define FIRST_CONNECTION_ID 1000

int server_normalize_dn(const struct server *s, struct ber_view dn, struct arena *arena,
			struct ber_view *ndn)
{
	return dn_normalize(s->config->schema, (const char *)dn.ptr, dn.len, arena, ndn);
}

const struct server_database *server_find_database(const struct server *s, struct ber_view ndn)
{
	const struct server_database *best = NULL;
	size_t best_len = 0;
	for (size_t i = 0; i < s->n_databases; i++)
		for (size_t j = 0; j < s->databases[i].n_suffixes; j++) {
			struct ber_view suffix = s->databases[i].suffixes[j];
			if (dn_is_within(ndn, suffix) && (best == NULL || suffix.len > best_len)) {
				best = &s->databases[i];
				best_len = suffix.len;
			}
		}
	return best != NULL ? best : own_databases_find(s, ndn);
}

/* Normalize a configured DN into malloc'ed bytes. */
static int normalize_configured(const struct server *s, const char *dn, struct arena *arena,
				struct ber_view *out)
{
	struct ber_view ndn;
	arena_reset(arena);
	int rc = dn_normalize(s->config->schema, dn, strlen(dn), arena, &ndn);
	if (rc != LUMEN_OK)
		return rc;
	uint8_t *copy = malloc(ndn.len + 1);
	if (copy == NULL)
		return LUMEN_ENOMEM;
	memcpy(copy, ndn.ptr, ndn.len);
	copy[ndn.len] = '\0';
	*out = (struct ber_view){ copy, ndn.len };
	return LUMEN_OK;
}

static int prepare_database(struct server *s, const struct config_database *cfg,
			    struct server_database *db, struct arena *arena, char *err,
			    size_t errlen)
{
	int rc = LUMEN_OK;
	db->config = cfg;
	db->lock.fd = -1;
	db->size_limit = config_database_sizelimit(s->config, cfg);
	db->time_limit = config_database_timelimit(s->config, cfg);
	if (cfg->n_suffixes == 0) {
		snprintf(err, errlen, "%s: database mdb: expected at least one \"suffix\"",
			 cfg->origin);
		return LUMEN_EMALFORMED;
	}
	db->suffixes = calloc(cfg->n_suffixes, sizeof(*db->suffixes));
	if (db->suffixes == NULL)
		return LUMEN_ENOMEM;
	for (size_t i = 0; i < cfg->n_suffixes && rc == LUMEN_OK; i++) {
		rc = normalize_configured(s, cfg->suffixes[i], arena, &db->suffixes[i]);
		if (rc == LUMEN_OK)
			db->n_suffixes++;
		else
			snprintf(err, errlen, "%s: suffix \"%s\": not a valid DN (%s)", cfg->origin,
				 cfg->suffixes[i], lumen_strerror(rc));
	}
	if (rc == LUMEN_OK && cfg->rootdn != NULL) {
		rc = normalize_configured(s, cfg->rootdn, arena, &db->rootdn);
		if (rc != LUMEN_OK)
			snprintf(err, errlen, "%s: rootdn \"%s\": not a valid DN (%s)", cfg->origin,
				 cfg->rootdn, lumen_strerror(rc));
	}
	if (rc == LUMEN_OK)
		rc = overlay_chain_create(s->config->schema, cfg, s->config->password_hash,
					  s->config->n_server_ids > 0 ? (int)s->config->server_id : -1,
					  &db->overlays, err, errlen);
	if (rc == LUMEN_OK)
		rc = syncrepl_check(s, db, err, errlen);
	return rc;
}

/* cn=Subschema from the finalized schema; it needs lumen.schema. */
static int build_subschema(struct server *s, char *err, size_t errlen)
{
	int rc = subschema_build(s->config->schema, &s->subschema);
	if (rc == LUMEN_ENOTFOUND)
		snprintf(err, errlen, "%s: the schema lacks the operational attributes of "
			 "lumen.schema: include it, or keep it next to the other schema files",
			 s->config->path);
	else if (rc != LUMEN_OK)
		snprintf(err, errlen, "cannot build the cn=Subschema entry: %s",
			 lumen_strerror(rc));
	return rc;
}

/* Index lines added after the data was loaded: say how to build them. */
static void warn_unbuilt_indexes(const struct server *s, const struct server_database *db)
{
	const char *names[16];
	size_t n = database_unbuilt_indexes(db->database, names, 16);
	for (size_t i = 0; i < n && i < 16; i++)
		log_printf(0, "%s: index for %s is configured but not (fully) built: searches on it "
			   "walk their scope until \"lumenindex -f %s %s\" (with lumend stopped) "
			   "builds it", db->config->origin, names[i], s->config->path, names[i]);
}

/* Records stored under other matching rules: correct, but slower to read. */
static void warn_normalizing_on_read(const struct server *s, const struct server_database *db)
{
	struct database_figures f = { 0 };
	database_figures(db->database, &f);
	if (f.normalizing_on_read && f.entries > 0)
		log_printf(0, "%s: the entries were stored under other matching rules (an "
			   "attribute type's equality rule changed): every read normalizes their "
			   "values again until the data is reloaded (lumencat, then lumenadd into an "
			   "empty directory, with lumend stopped; see %s)",
			   db->config->origin, s->config->path);
}

/* Lock and open one database; err names it on failure. */
static int open_database(struct server *s, struct server_database *db, char *err,
			 size_t errlen)
{
	char why[512] = "";
	struct backend_settings settings;
	const struct config_database *cfg = db->config;
	if (cfg->directory == NULL) {
		snprintf(err, errlen, "%s: the database has no \"directory\" line", cfg->origin);
		return LUMEN_EINVAL;
	}
	int rc = db_lock_acquire(cfg->directory, "lumend", &db->lock, why, sizeof(why));
	if (rc != LUMEN_OK) {
		snprintf(err, errlen, "%s: %s", cfg->origin, why);
		return rc;
	}
	rc = config_backend_settings(cfg, &settings);
	if (rc != LUMEN_OK) {
		snprintf(err, errlen, "%s: out of memory", cfg->origin);
		return rc;
	}
	settings.server_id = s->config->server_id;
	rc = mdb_database_open(s->config->schema, &settings, &db->database, why, sizeof(why));
	config_backend_settings_free(&settings);
	/* The backend's messages already start with the origin (its name). */
	bool named = strncmp(why, cfg->origin, strlen(cfg->origin)) == 0;
	if (rc != LUMEN_OK && named)
		snprintf(err, errlen, "%s", why);
	else if (rc != LUMEN_OK)
		snprintf(err, errlen, "%s: %s", cfg->origin,
			 why[0] != '\0' ? why : lumen_strerror(rc));
	if (rc != LUMEN_OK)
		return rc;
	db->database = overlay_chain_wrap(db->overlays, db->database);
	db->bind_chain = db->overlays;
	db->overlays = NULL;   /* the database owns it now */
	warn_unbuilt_indexes(s, db);
	warn_normalizing_on_read(s, db);
	return rc;
}

int server_open_databases(struct server *s, char *err, size_t errlen)
{
	for (size_t i = 0; i < s->n_databases; i++) {
		int rc = open_database(s, &s->databases[i], err, errlen);
		if (rc != LUMEN_OK)
			return rc;
	}
	return LUMEN_OK;
}

/* TLS context (so -T checks the files) and the connection bounds. */
static int prepare_security(struct server *s, char *err, size_t errlen)
{
	const struct config *cfg = s->config;
	conn_memory_init(&s->conn_memory, cfg->conn_max_memory, cfg->conn_max_memory_auth,
			 cfg->conn_total_memory);
	int rc = conn_limits_create(cfg->conn_max, cfg->conn_max_per_ip, &s->conn_limits);
	if (rc != LUMEN_OK || cfg->tls.certificate_file == NULL)
		return rc;
	rc = tls_context_create(&cfg->tls, &s->tls, err, errlen);
	if (rc == LUMEN_ENOMEM)
		snprintf(err, errlen, "cannot set up TLS: out of memory");
	return rc;
}

/* ldaps:// needs TLS; an ldapi:// listener offers SASL EXTERNAL. */
static int check_listeners(struct server *s, char *err, size_t errlen)
{
	for (size_t i = 0; i < s->listeners.n; i++) {
		const struct listener *l = &s->listeners.items[i];
		if (l->tls && s->tls == NULL) {
			snprintf(err, errlen, "%s: an ldaps:// listener needs TLSCertificateFile and "
				 "TLSCertificateKeyFile in %s", l->name, s->config->path);
			return LUMEN_EINVAL;
		}
		if (l->kind == LISTENER_UNIX)
			s->has_ldapi = true;
	}
	int rc = rootdse_set_sasl_external(s->rootdse, s->has_ldapi);
	if (rc != LUMEN_OK)
		snprintf(err, errlen, "root DSE: %s", lumen_strerror(rc));
	return rc;
}

int server_create(const struct config *cfg, struct server **out, char *err, size_t errlen)
{
	struct arena arena;
	int rc = LUMEN_ENOMEM;
	struct server *s = calloc(1, sizeof(*s));
	*out = NULL;
	if (s == NULL) {
		snprintf(err, errlen, "out of memory");
		return LUMEN_ENOMEM;
	}
	arena_init(&arena, 0);
	s->config = cfg;
	atomic_init(&s->stopping, false);
	atomic_init(&s->next_conn_id, FIRST_CONNECTION_ID);
	ldap_decode_limits_default(&s->limits);
	s->limits.max_filter_depth = cfg->max_filter_depth;
	/* a filter that deep has at least as many nodes */
	if (s->limits.max_filter_nodes < 2 * cfg->max_filter_depth)
		s->limits.max_filter_nodes = 2 * cfg->max_filter_depth;
	s->slowop_all = cfg->slowop_threshold_ms == 0;
	if (cfg->slowop_threshold_ms > 0)
		s->slowop_ns = (uint64_t)cfg->slowop_threshold_ms * 1000000u;
	if (stats_create(&s->stats) != LUMEN_OK)
		goto fail;
	rc = overlay_check_modules(cfg, err, errlen);
	if (rc != LUMEN_OK)
		goto fail;
	rc = LUMEN_ENOMEM;
	s->databases = calloc(cfg->n_databases + 1, sizeof(*s->databases));
	if (s->databases == NULL)
		goto fail;
	for (size_t i = 0; i < cfg->n_databases; i++) {
		rc = prepare_database(s, &cfg->databases[i], &s->databases[i], &arena, err, errlen);
		s->n_databases++;
		if (rc != LUMEN_OK)
			goto fail;
	}
	rc = rootdse_create(cfg, &s->rootdse);
	if (rc != LUMEN_OK)
		goto fail;
	rc = bind_pace_create(cfg->password_hash, &s->bind_pace);
	if (rc != LUMEN_OK) {
		snprintf(err, errlen, "%s: password-hash %s: cannot make the bind decoy: %s",
			 cfg->path, cfg->password_hash, lumen_strerror(rc));
		goto fail;
	}
	rc = prepare_security(s, err, errlen);
	if (rc != LUMEN_OK)
		goto fail;
	rc = build_subschema(s, err, errlen);
	if (rc == LUMEN_OK)
		rc = own_databases_open(s, err, errlen);
	if (rc != LUMEN_OK)
		goto fail;
	arena_free(&arena);
	*out = s;
	return LUMEN_OK;
fail:
	if (rc == LUMEN_ENOMEM)
		snprintf(err, errlen, "out of memory");
	arena_free(&arena);
	server_destroy(s);
	return rc;
}

int server_listen(struct server *s, const char *urls, char *err, size_t errlen)
{
	int rc = listeners_open(urls, &s->listeners, err, errlen);
	if (rc == LUMEN_OK)
		rc = check_listeners(s, err, errlen);
	if (rc != LUMEN_OK)
		return rc;
	/* cn=Monitor lists them after shutdown has closed the live set. */
	free(s->listener_info);
	s->listener_info = calloc(s->listeners.n + 1, sizeof(*s->listener_info));
	if (s->listener_info == NULL) {
		snprintf(err, errlen, "out of memory");
		return LUMEN_ENOMEM;
	}
	memcpy(s->listener_info, s->listeners.items, s->listeners.n * sizeof(*s->listener_info));
	s->n_listener_info = s->listeners.n;
	return LUMEN_OK;
}

/* What an accept callback needs: the server and the listener it serves. */
struct server_accept {
	struct server *server;
	struct listener *listener;
	struct event *event;
};

static void set_accepting(struct server *s, bool on)
{
	/* (none yet when start-up failed before the main events were made) */
	for (size_t i = 0; s->accepting != NULL && i < s->listeners.n; i++) {
		struct event *ev = s->accepting[i].event;
		if (ev == NULL)
			continue;
		if (on)
			event_add(ev, NULL);
		else
			event_del(ev);
	}
}

static void on_accept_resume(evutil_socket_t fd, short what, void *arg)
{
	struct server *s = arg;
	(void)fd;
	(void)what;
	if (!atomic_load(&s->stopping))
		set_accepting(s, true);
}

/* Out of descriptors or memory: pause instead of spinning on accept. */
static bool accept_should_pause(int error)
{
	return error == EMFILE || error == ENFILE || error == ENOBUFS || error == ENOMEM;
}

static void on_accept(evutil_socket_t fd, short what, void *arg)
{
	struct server_accept *a = arg;
	struct server *s = a->server;
	(void)what;
	/* A bounded burst, so one busy listener cannot starve connections. */
	for (int burst = 0; burst < 64; burst++) {
		struct sockaddr_storage peer;
		socklen_t peer_len = sizeof(peer);
		int cfd = accept4(fd, (struct sockaddr *)&peer, &peer_len,
				  SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (cfd < 0) {
			if (accept_should_pause(errno)) {
				log_printf(0, "accept: %s; pausing for %d ms", strerror(errno),
					   ACCEPT_PAUSE_MS);
				struct timeval tv = { 0, ACCEPT_PAUSE_MS * 1000 };
				set_accepting(s, false);
				event_add(s->accept_resume, &tv);
			}
			return;
		}
		unsigned chosen = io_placement_choose(&s->placement);
		if (io_thread_hand_off(&s->io_threads[chosen], cfd, (struct sockaddr *)&peer,
				       peer_len, a->listener->name,
				       a->listener->kind == LISTENER_TCP,
				       a->listener->tls) != LUMEN_OK) {
			io_placement_release(&s->placement, chosen);
			log_printf(0, "cannot hand a connection to I/O thread %u: out of memory",
				   chosen);
		}
	}
}

static void begin_shutdown(struct server *s)
{
	if (atomic_exchange(&s->stopping, true))
		return;
	log_printf(0, "lumend shutting down");
	sd_notify_stopping();
	set_accepting(s, false);
	if (s->accept_resume != NULL)
		event_del(s->accept_resume);
	syncrepl_request_stop(s->syncrepl);
	/* Stop accepting for good: the sockets go, and so do ldapi paths. */
	for (size_t i = 0; s->accepting != NULL && i < s->listeners.n; i++) {
		if (s->accepting[i].event != NULL)
			event_free(s->accepting[i].event);
		s->accepting[i].event = NULL;
	}
	listeners_close(&s->listeners);
	for (unsigned i = 0; i < s->n_io_threads; i++)
		io_thread_request_stop(&s->io_threads[i]);
}

/* SIGHUP: the log file was rotated; write on into a fresh one. */
static void on_sighup(evutil_socket_t signal_number, short what, void *arg)
{
	(void)signal_number;
	(void)what;
	(void)arg;
	log_reopen();
}

static void on_signal(evutil_socket_t signal_number, short what, void *arg)
{
	(void)what;
	log_printf(0, "received signal %d", (int)signal_number);
	begin_shutdown(arg);
}

/* Events of I/O thread 0: accepting, the EMFILE pause, the signals. */
static int setup_main_events(struct server *s, char *err, size_t errlen)
{
	struct event_base *base = s->io_threads[0].base;
	s->accepting = calloc(s->listeners.n + 1, sizeof(*s->accepting));
	s->accept_resume = evtimer_new(base, on_accept_resume, s);
	s->signal_events[0] = evsignal_new(base, SIGTERM, on_signal, s);
	s->signal_events[1] = evsignal_new(base, SIGINT, on_signal, s);
	s->signal_events[2] = evsignal_new(base, SIGHUP, on_sighup, s);
	if (s->accepting == NULL || s->accept_resume == NULL || s->signal_events[0] == NULL ||
	    s->signal_events[1] == NULL || s->signal_events[2] == NULL) {
		snprintf(err, errlen, "cannot set up the main event loop: out of memory");
		return LUMEN_ENOMEM;
	}
	for (size_t i = 0; i < s->listeners.n; i++) {
		struct server_accept *a = &s->accepting[i];
		a->server = s;
		a->listener = &s->listeners.items[i];
		a->event = event_new(base, a->listener->fd, EV_READ | EV_PERSIST, on_accept, a);
		if (a->event == NULL || event_add(a->event, NULL) != 0) {
			snprintf(err, errlen, "cannot watch listener %s", a->listener->name);
			return LUMEN_EIO;
		}
	}
	if (event_add(s->signal_events[0], NULL) != 0 || event_add(s->signal_events[1], NULL) != 0 ||
	    event_add(s->signal_events[2], NULL) != 0) {
		snprintf(err, errlen, "cannot watch SIGTERM/SIGINT/SIGHUP");
		return LUMEN_EIO;
	}
	return LUMEN_OK;
}

/* The CPUs lumend may use, at most the most automatic I/O threads. */
static unsigned usable_cpus(void)
{
	unsigned cpus = cpu_count_usable();
	return cpus > CONFIG_AUTO_LISTENER_THREADS_MAX ? CONFIG_AUTO_LISTENER_THREADS_MAX : cpus;
}

/*
 * listener-threads, or by default one per CPU lumend may use (its affinity
 * mask, so taskset and cpusets count, capped by a cgroup CPU quota). The
 * I/O threads run short reads to completion, so each is busy while it has
 * input; a second one on a CPU only takes turns with the first. Measured
 * on 2 CPUs, interleaved (bench/results/2026-11-28-io-threads-per-cpu/):
 * 2 and 4 I/O threads serve the same rate in every row, and with lumend
 * on a CPU of its own, one thread instead of four took p99 at 32
 * connections from 12.2 ms to 0.66-0.84 ms.
 */
static unsigned io_thread_count(const struct config *cfg, unsigned cpus)
{
	return cfg->listener_threads > 0 ? cfg->listener_threads : cpus;
}

static int start_threads(struct server *s, char *err, size_t errlen)
{
	const struct config *cfg = s->config;
	unsigned spares = cfg->threads * SPARE_WORKERS_PER_WORKER;
	struct workq_config wq = {
		.threads = cfg->threads, .capacity = SERVER_QUEUE_CAPACITY,
		.spare_threads = spares < SPARE_WORKERS_MAX ? spares : SPARE_WORKERS_MAX,
		.worker_start = ops_worker_start, .worker_stop = ops_worker_stop, .arg = s,
	};
	int rc = workq_create(&wq, &s->workq);
	if (rc != LUMEN_OK) {
		snprintf(err, errlen, "cannot start %u worker threads: %s", cfg->threads,
			 lumen_strerror(rc));
		return rc;
	}
	unsigned cpus = usable_cpus(), n_io = io_thread_count(cfg, cpus);
	s->io_threads = calloc(n_io, sizeof(*s->io_threads));
	if (s->io_threads == NULL ||
	    io_placement_init(&s->placement, n_io, cpus, IO_PLACEMENT_FILL) != LUMEN_OK) {
		snprintf(err, errlen, "out of memory");
		return LUMEN_ENOMEM;
	}
	for (unsigned i = 0; i < n_io; i++) {
		rc = io_thread_init(&s->io_threads[i], s, i);
		s->n_io_threads++;
		if (rc != LUMEN_OK) {
			snprintf(err, errlen, "cannot create I/O thread %u: %s", i, lumen_strerror(rc));
			return rc;
		}
	}
	s->io_threads[0].thread = pthread_self();
	rc = setup_main_events(s, err, errlen);
	for (unsigned i = 1; rc == LUMEN_OK && i < s->n_io_threads; i++) {
		rc = io_thread_start(&s->io_threads[i]);
		if (rc != LUMEN_OK)
			snprintf(err, errlen, "cannot start I/O thread %u", i);
	}
	return rc;
}

/* The signals lumend handles, held back until their events exist. */
static void stop_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGHUP);
}

void server_hold_signals(void)
{
	sigset_t set;
	stop_signals(&set);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
}

int server_run(struct server *s, char *err, size_t errlen)
{
	signal(SIGPIPE, SIG_IGN);
	if (evthread_use_pthreads() != 0) {
		snprintf(err, errlen, "libevent has no thread support");
		return LUMEN_EIO;
	}
	/* /metrics answers before the first LDAP request can: a client that
	 * got an LDAP answer may scrape at once. */
	int rc = server_metrics_start(s, err, errlen);
	if (rc == LUMEN_OK)
		rc = start_threads(s, err, errlen);
	if (rc == LUMEN_OK)
		rc = syncrepl_start(s, &s->syncrepl, err, errlen);
	/* Last: a connection the kernel accepts from here on is served. */
	if (rc == LUMEN_OK)
		rc = listeners_start(&s->listeners, err, errlen);
	/* A SIGTERM held since start-up now reaches the loop's signal event
	 * (the threads started above keep them blocked: the main thread takes
	 * them). */
	sigset_t set;
	stop_signals(&set);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	if (rc != LUMEN_OK) {
		begin_shutdown(s);
		return rc;
	}
	log_printf(0, "lumend %s ready: %u workers, %u I/O thread%s", LUMEN_VENDOR_VERSION,
		   s->config->threads, s->n_io_threads, s->n_io_threads == 1 ? "" : "s");
	sd_notify_ready();
	io_thread_run_here(&s->io_threads[0]);
	/* Thread 0's loop ends only once stopping; wait for the others. */
	for (unsigned i = 1; i < s->n_io_threads; i++)
		io_thread_join(&s->io_threads[i]);
	syncrepl_stop(s->syncrepl);
	s->syncrepl = NULL;
	workq_shutdown(s->workq);
	metrics_http_stop(s->metrics);
	s->metrics = NULL;
	return LUMEN_OK;
}

void server_destroy(struct server *s)
{
	if (s == NULL)
		return;
	if (s->io_threads != NULL && s->n_io_threads > 0 && !atomic_load(&s->stopping))
		begin_shutdown(s);
	for (size_t i = 0; s->accepting != NULL && i < s->listeners.n; i++)
		if (s->accepting[i].event != NULL)
			event_free(s->accepting[i].event);
	listeners_close(&s->listeners);
	free(s->accepting);
	if (s->accept_resume != NULL)
		event_free(s->accept_resume);
	for (int i = 0; i < 3; i++)
		if (s->signal_events[i] != NULL)
			event_free(s->signal_events[i]);
	/* The consumers and the metrics thread use the backends: stop them
	 * before they close. */
	syncrepl_stop(s->syncrepl);
	s->syncrepl = NULL;
	metrics_http_stop(s->metrics);
	/* Workers first: a finishing op may still touch its connection. */
	workq_destroy(s->workq);
	for (unsigned i = 0; i < s->n_io_threads; i++)
		io_thread_destroy(&s->io_threads[i]);
	free(s->io_threads);
	io_placement_destroy(&s->placement);
	for (size_t i = 0; s->databases != NULL && i < s->n_databases; i++) {
		struct server_database *db = &s->databases[i];
		for (size_t j = 0; j < db->n_suffixes; j++)
			free((void *)db->suffixes[j].ptr);
		free(db->suffixes);
		free((void *)db->rootdn.ptr);
		database_close(db->database);
		overlay_chain_free(db->overlays);
		db_lock_release(&db->lock);
	}
	free(s->databases);
	own_databases_close(s);
	entry_free(s->subschema);
	rootdse_free(s->rootdse);
	bind_pace_free(s->bind_pace);
	tls_context_free(s->tls);
	conn_limits_free(s->conn_limits);
	conn_memory_destroy(&s->conn_memory);
	free(s->listener_info);
	/* Last: every registered thread has stopped recording. */
	stats_destroy(s->stats);
	free(s);
}
