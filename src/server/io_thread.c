/*
 * io_thread.c — I/O threads: event loops, connection hand-off, graceful stop.
 */
#include "io_thread.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "config.h"
#include "conn.h"
#include "event_release.h"
#include "log.h"
#include "lumen_error.h"
#include "ops.h"
#include "server.h"
#include "stats.h"

/* Bytes the I/O thread's scratch arena may use (Abandon decoding). */
#define IO_ARENA_MAX (64u * 1024u)

struct accepted_socket {
	struct accepted_socket *next;
	int fd;
	bool is_tcp;
	bool tls;
	socklen_t peer_len;
	struct sockaddr_storage peer;
	char listener_name[LISTENER_NAME_MAX];
};

static void maybe_exit_loop(struct io_thread *io)
{
	if (io->stopping && io->n_conns == 0)
		event_base_loopexit(io->base, NULL);
}

static void adopt_incoming(struct io_thread *io, struct accepted_socket *list)
{
	while (list != NULL) {
		struct accepted_socket *a = list;
		list = a->next;
		struct conn *c = NULL;
		int rc = LUMEN_OK;
		if (io->stopping) {
			close(a->fd);
			io_placement_release(&io->server->placement, io->index);
		} else if ((rc = conn_create(io, a->fd, (struct sockaddr *)&a->peer, a->peer_len,
					     a->listener_name, a->is_tcp, a->tls, &c)) == LUMEN_OK) {
			/* io->lock: cn=Monitor walks the list from workers. */
			pthread_mutex_lock(&io->lock);
			conn_list_add(&io->conns, c);
			io->n_conns++;
			pthread_mutex_unlock(&io->lock);
		} else {
			io_placement_release(&io->server->placement, io->index);
			/* (a refused connection was logged by conn_create) */
			if (rc != LUMEN_ELIMIT)
				log_printf(0, "cannot set up a connection: %s", lumen_strerror(rc));
		}
		free(a);
	}
}

/* Close every connection gracefully; conn_begin_close may free it at once. */
static void close_all(struct io_thread *io)
{
	struct conn *c = io->conns;
	while (c != NULL) {
		struct conn *next = conn_list_next(c);
		conn_begin_close(c);
		c = next;
	}
}

static void on_control(evutil_socket_t fd, short what, void *arg)
{
	struct io_thread *io = arg;
	(void)fd;
	(void)what;
	pthread_mutex_lock(&io->lock);
	struct accepted_socket *list = io->incoming;
	io->incoming = NULL;
	bool stop = io->stop_requested && !io->stopping;
	pthread_mutex_unlock(&io->lock);
	adopt_incoming(io, list);
	if (stop) {
		io->stopping = true;
		close_all(io);
	}
	maybe_exit_loop(io);
	/* Now carrying every connection: leave the continuous loop to poll. */
	if (io->server->config->busy_poll_us > 0 &&
	    io_placement_alone(&io->server->placement, io->index))
		event_base_loopbreak(io->base);
}

int io_thread_init(struct io_thread *io, struct server *server, unsigned index)
{
	memset(io, 0, sizeof(*io));
	io->server = server;
	io->index = index;
	pthread_mutex_init(&io->lock, NULL);
	arena_init(&io->arena, IO_ARENA_MAX);
	if (ber_writer_init(&io->writer, 256, 0) != LUMEN_OK)
		return LUMEN_ENOMEM;
	io->base = event_base_new();
	if (io->base == NULL)
		return LUMEN_EIO;
	io->control = event_new(io->base, -1, 0, on_control, io);
	io->input = malloc(IO_INPUT_BYTES);
	if (io->control == NULL || io->input == NULL)
		return LUMEN_ENOMEM;
	conn_memory_add_scratch(&server->conn_memory, IO_INPUT_BYTES);
	return LUMEN_OK;
}

/*
 * On the thread itself: count its connections and bytes (stats_current
 * from now on) and make the context it runs short reads with. Without
 * that context (out of memory) every operation goes to the workers.
 */
static void start_on_thread(struct io_thread *io)
{
	struct stats_thread *stats = NULL;
	if (io->server->stats != NULL)
		stats_thread_register(io->server->stats, &stats);
	io->stats = stats;
	io->ops_context = ops_context_create(io->server, io->index, stats);
	if (io->ops_context == NULL)
		log_printf(0, "I/O thread %u: no memory for inline reads; all operations "
			   "go to the workers", io->index);
}

/*
 * Busy polling. A thread that sleeps in epoll as soon as it runs out of
 * input is woken from another CPU for the client's next request, and on
 * the VMs we measure on that wake-up costs more than a short read: with
 * one connection most of lumend's time was the client's and its own
 * wake-ups, and a server that answers without any work (lumen-canned)
 * could not pass 14,000 round trips a second. So after a pass of the
 * loop that ran events, a thread that carries every connection looks
 * again without sleeping until `window_ns` passes with no input. Only
 * that thread polls: with connections spread over several threads, a
 * poller would take a CPU their work needs. False: the loop was told to
 * exit (or failed).
 */
static bool poll_before_sleep(struct io_thread *io, uint64_t window_ns)
{
	uint64_t deadline = stats_now_ns() + window_ns;
	bool running = true;
	io->polling = true;
	/* A connection placed on another thread ends the polling. */
	while (io_placement_alone(&io->server->placement, io->index)) {
		uint64_t before = io->reads_run;
		if (event_base_loop(io->base, EVLOOP_NONBLOCK | EVLOOP_NO_EXIT_ON_EMPTY) < 0 ||
		    event_base_got_exit(io->base)) {
			running = false;
			break;
		}
		uint64_t now = stats_now_ns();
		if (io->reads_run != before)
			deadline = now + window_ns;   /* a busy client keeps it polling for good */
		else if (now >= deadline)
			break;
	}
	io->polling = false;
	return running;
}

/*
 * A thread that shares the connections runs libevent's loop as it is; one
 * that carries them all runs it a pass at a time and polls after each.
 * The continuous loop is broken (on_control) when the thread comes to
 * carry them all, so the passes, their clock reads and placement checks
 * cost nothing while connections are spread.
 */
static void run_events(struct io_thread *io)
{
	uint64_t window_ns = (uint64_t)io->server->config->busy_poll_us * 1000;
	for (;;) {
		bool poll = window_ns > 0 && io_placement_alone(&io->server->placement, io->index);
		int flags = EVLOOP_NO_EXIT_ON_EMPTY | (poll ? EVLOOP_ONCE : 0);
		if (event_base_loop(io->base, flags) < 0 || event_base_got_exit(io->base))
			return;
		if (poll && !poll_before_sleep(io, window_ns))
			return;
	}
}

static void run_loop(struct io_thread *io)
{
	start_on_thread(io);
	run_events(io);
	if (io->ops_context != NULL)
		ops_worker_stop(io->server, io->ops_context);
	io->ops_context = NULL;
}

static void *io_thread_main(void *arg)
{
	struct io_thread *io = arg;
	char name[16];
	/* top -H, perf and /proc/PID/task tell the threads apart by name. */
	snprintf(name, sizeof(name), "lumend-io%u", io->index);
	pthread_setname_np(pthread_self(), name);
	run_loop(io);
	return NULL;
}

int io_thread_start(struct io_thread *io)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int err = pthread_create(&io->thread, NULL, io_thread_main, io);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err != 0)
		return LUMEN_EIO;
	io->own_thread = true;
	return LUMEN_OK;
}

void io_thread_run_here(struct io_thread *io)
{
	io->thread = pthread_self();
	run_loop(io);
}

int io_thread_hand_off(struct io_thread *io, int fd, const struct sockaddr *peer,
		       socklen_t peer_len, const char *listener_name, bool is_tcp, bool tls)
{
	struct accepted_socket *a = calloc(1, sizeof(*a));
	if (a == NULL) {
		close(fd);
		return LUMEN_ENOMEM;
	}
	a->fd = fd;
	a->is_tcp = is_tcp;
	a->tls = tls;
	a->peer_len = peer_len <= sizeof(a->peer) ? peer_len : sizeof(a->peer);
	memcpy(&a->peer, peer, a->peer_len);
	snprintf(a->listener_name, sizeof(a->listener_name), "%s", listener_name);
	pthread_mutex_lock(&io->lock);
	a->next = io->incoming;
	io->incoming = a;
	pthread_mutex_unlock(&io->lock);
	event_active(io->control, EV_READ, 0);
	return LUMEN_OK;
}

void io_thread_request_stop(struct io_thread *io)
{
	pthread_mutex_lock(&io->lock);
	io->stop_requested = true;
	pthread_mutex_unlock(&io->lock);
	/* (none when start-up failed half-way through io_thread_init) */
	if (io->control != NULL)
		event_active(io->control, EV_READ, 0);
}

void io_thread_conn_gone(struct io_thread *io, struct conn *c)
{
	pthread_mutex_lock(&io->lock);
	conn_list_remove(&io->conns, c);
	io->n_conns--;
	pthread_mutex_unlock(&io->lock);
	io_placement_release(&io->server->placement, io->index);
	maybe_exit_loop(io);
	/* The thread left carrying every connection may poll from now on. */
	unsigned sole;
	if (io->server->config->busy_poll_us > 0 &&
	    io_placement_sole(&io->server->placement, &sole) && sole != io->index &&
	    io->server->io_threads[sole].control != NULL)
		event_active(io->server->io_threads[sole].control, EV_READ, 0);
}

bool io_thread_is_current(const struct io_thread *io)
{
	return pthread_equal(pthread_self(), io->thread) != 0;
}

void io_thread_join(struct io_thread *io)
{
	if (io->own_thread)
		pthread_join(io->thread, NULL);
	io->own_thread = false;
}

void io_thread_destroy(struct io_thread *io)
{
	io_thread_join(io);
	/* Sockets handed off but never adopted (stop raced with accept). */
	while (io->incoming != NULL) {
		struct accepted_socket *a = io->incoming;
		io->incoming = a->next;
		close(a->fd);
		free(a);
	}
	event_release(&io->control);
	if (io->base != NULL)
		event_base_free(io->base);
	io->base = NULL;
	ber_writer_free(&io->writer);
	free(io->input);
	io->input = NULL;
	arena_free(&io->arena);
	pthread_mutex_destroy(&io->lock);
}
