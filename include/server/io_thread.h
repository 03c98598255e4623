/*
 * io_thread.h — I/O threads: one libevent event_base each, owning the
 * connections handed to it (server layer).
 *
 * The listener (on I/O thread 0, which is the main thread) accepts sockets
 * and hands each to the I/O thread io_placement.h chooses, with
 * io_thread_hand_off (which releases the place when the connection ends); the
 * receiving thread creates the connection in its own loop, so a
 * connection's events are only ever touched by that thread.
 *
 * Ownership: an io_thread owns its base, its connections (one reference
 * each), the input scratch buffer its connections read into (so an idle
 * connection holds no input buffer), a scratch arena and BER writer used
 * for the answers the I/O
 * thread gives itself (busy, notices of disconnection), and the context it
 * runs short reads with (ops.h, inline_ops.h: its own arena and writers,
 * as a worker's; made on the thread when its loop starts).
 * Thread-safety: hand_off and request_stop from any thread; everything
 * else from the owning thread or the controlling main thread as noted.
 *
 * Caveats:
 *  - After io_thread_request_stop the loop ends once its last connection is
 *    gone (running operations are allowed to finish first).
 */
#ifndef LUMEN_IO_THREAD_H
#define LUMEN_IO_THREAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "arena.h"
#include "ber.h"

struct server;
struct conn;
struct event;
struct event_base;
struct accepted_socket;
struct worker_context;

/* The input scratch buffer's size: the most one read takes. */
#define IO_INPUT_BYTES 16384u

struct io_thread {
	struct server *server;
	unsigned index;
	pthread_t thread;
	bool own_thread;                 /* false for thread 0 (the main thread) */
	struct event_base *base;
	struct event *control;           /* activated for hand-offs and stop */
	pthread_mutex_t lock;            /* guards incoming, stop_requested, and changes
					    to conns/n_conns (readers on other
					    threads, cn=Monitor, take it; lock
					    order: io->lock before conn->lock) */
	struct accepted_socket *incoming;
	bool stop_requested;
	bool stopping;                   /* stop seen by the loop (its thread) */
	struct conn *conns;              /* (its thread) */
	size_t n_conns;
	struct arena arena;
	struct ber_writer writer;
	/* What a connection reads into when it holds no input of its own:
	 * lent for one read-and-frame pass (its thread; conn_frame.c). */
	uint8_t *input;
	struct worker_context *ops_context;  /* inline reads; NULL: none (no memory) */
	struct stats_thread *stats;      /* its counters; NULL: none (its thread) */
	uint64_t reads_run;              /* readable-connection callbacks (its thread) */
	bool polling;                    /* in a busy poll: reads are counted as found */
};

/* Create the base and control event. LUMEN_ENOMEM, LUMEN_EIO. */
int io_thread_init(struct io_thread *io, struct server *server, unsigned index);
/* Start a thread running the loop (index > 0). LUMEN_EIO. */
int io_thread_start(struct io_thread *io);
/* Run the loop in the calling thread (thread 0) until stopped. */
void io_thread_run_here(struct io_thread *io);

/*
 * Give an accepted socket to io's thread. Takes ownership of fd (closed on
 * failure). LUMEN_ENOMEM.
 */
int io_thread_hand_off(struct io_thread *io, int fd, const struct sockaddr *peer,
		       socklen_t peer_len, const char *listener_name, bool is_tcp, bool tls);

/* Ask the loop to close its connections gracefully and end. Any thread. */
void io_thread_request_stop(struct io_thread *io);

/* The connection's teardown: unlink it (its thread). */
void io_thread_conn_gone(struct io_thread *io, struct conn *c);

/* True if the caller runs io's loop. */
bool io_thread_is_current(const struct io_thread *io);

/* Wait for the thread (if it has its own) to end its loop. Idempotent. */
void io_thread_join(struct io_thread *io);

/* Join if needed and free everything. */
void io_thread_destroy(struct io_thread *io);

#endif
