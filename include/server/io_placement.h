/*
 * io_placement.h — which I/O thread a new connection goes to (server layer).
 *
 * lumend runs two I/O threads per CPU by default (server.c), so that a
 * thread stalled on a page fault of a map larger than memory holds up half
 * of a CPU's connections, not all of them. With few connections the other
 * threads only cost wake-ups: a connection goes to the first of the
 * `preferred` threads (one per CPU) holding fewer than `fill`, and to the
 * least loaded of all threads once each of those holds `fill`. So up to
 * `fill` connections share thread 0, which then never sleeps while they
 * keep it busy (0.04 context switches per search at 4 connections on the
 * 100k lab, against 0.74 with two threads taking two each), a few more
 * fill one thread per CPU, and many spread over every thread as
 * round-robin placed them. While one thread holds every connection it may
 * also poll for input before it sleeps (io_thread.c, `busy-poll`).
 *
 * Ownership: an io_placement owns its count array (io_placement_destroy).
 * Thread-safety: io_placement_choose from the accepting thread only;
 * io_placement_release from any thread (the counts are atomic, and a count
 * read while it changes only moves one connection to a neighbour).
 */
#ifndef LUMEN_IO_PLACEMENT_H
#define LUMEN_IO_PLACEMENT_H

#include <stdatomic.h>
#include <stdbool.h>

struct io_placement {
	unsigned n_threads;
	unsigned preferred;        /* the first threads, filled first */
	unsigned fill;             /* connections a preferred thread takes first */
	atomic_uint *connections;  /* per thread: placed and not yet released */
};

/* Counts start at zero; preferred is clamped to [1, n_threads]. LUMEN_ENOMEM. */
int io_placement_init(struct io_placement *p, unsigned n_threads, unsigned preferred,
		      unsigned fill);
void io_placement_destroy(struct io_placement *p);

/* The thread for a new connection, counted as placed there. */
unsigned io_placement_choose(struct io_placement *p);

/* True when no thread but `index` holds a connection. Any thread; a
 * placement racing with it is seen on the next call. */
bool io_placement_alone(const struct io_placement *p, unsigned index);

/* True when exactly one thread holds connections; *index is that one. */
bool io_placement_sole(const struct io_placement *p, unsigned *index);

/* A connection placed on thread `index` is gone (or was never set up). */
void io_placement_release(struct io_placement *p, unsigned index);

#endif
