/*
 * io_placement.h — which I/O thread a new connection goes to (server layer).
 *
 * lumend runs two I/O threads per CPU by default (server.c), so that a
 * thread stalled on a page fault of a map larger than memory holds up half
 * of a CPU's connections, not all of them. With few connections the second
 * thread only costs wake-ups: four connections on four threads on two CPUs
 * make nearly every request a context switch (0.90 per search, against 0.48
 * with the four on two threads, perf stat on the 100k lab). So a connection
 * goes to the least loaded of the first `preferred` threads (one per CPU)
 * while that one holds fewer than `fill` connections, and to the least
 * loaded of all threads after that: few connections share one thread per
 * CPU, many spread over every thread as round-robin placed them.
 *
 * Ownership: an io_placement owns its count array (io_placement_destroy).
 * Thread-safety: io_placement_choose from the accepting thread only;
 * io_placement_release from any thread (the counts are atomic, and a count
 * read while it changes only moves one connection to a neighbour).
 */
#ifndef LUMEN_IO_PLACEMENT_H
#define LUMEN_IO_PLACEMENT_H

#include <stdatomic.h>

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

/* A connection placed on thread `index` is gone (or was never set up). */
void io_placement_release(struct io_placement *p, unsigned index);

#endif
