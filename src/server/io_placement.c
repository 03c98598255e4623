/*
 * io_placement.c — fill thread 0, then one I/O thread per CPU, then spread.
 */
#include "io_placement.h"

#include <stdlib.h>

#include "lumen_error.h"

int io_placement_init(struct io_placement *p, unsigned n_threads, unsigned preferred,
		      unsigned fill)
{
	p->n_threads = n_threads > 0 ? n_threads : 1;
	p->preferred = preferred < 1 ? 1 : preferred > p->n_threads ? p->n_threads : preferred;
	p->fill = fill;
	p->connections = calloc(p->n_threads, sizeof(*p->connections));
	return p->connections != NULL ? LUMEN_OK : LUMEN_ENOMEM;
}

void io_placement_destroy(struct io_placement *p)
{
	free(p->connections);
	p->connections = NULL;
}

/* The lowest-numbered of the threads holding the fewest. */
static unsigned least_loaded(const struct io_placement *p)
{
	unsigned best = 0;
	unsigned load = atomic_load_explicit(&p->connections[0], memory_order_relaxed);
	for (unsigned i = 1; i < p->n_threads; i++) {
		unsigned n = atomic_load_explicit(&p->connections[i], memory_order_relaxed);
		if (n < load) {
			best = i;
			load = n;
		}
	}
	return best;
}

/* The lowest-numbered of the first `limit` threads holding fewer than fill. */
static bool first_not_full(const struct io_placement *p, unsigned limit, unsigned *chosen)
{
	for (unsigned i = 0; i < limit; i++) {
		if (atomic_load_explicit(&p->connections[i], memory_order_relaxed) < p->fill) {
			*chosen = i;
			return true;
		}
	}
	return false;
}

unsigned io_placement_choose(struct io_placement *p)
{
	unsigned chosen;
	if (!first_not_full(p, p->preferred, &chosen))
		chosen = least_loaded(p);
	atomic_fetch_add_explicit(&p->connections[chosen], 1, memory_order_relaxed);
	return chosen;
}

void io_placement_release(struct io_placement *p, unsigned index)
{
	if (index < p->n_threads)
		atomic_fetch_sub_explicit(&p->connections[index], 1, memory_order_relaxed);
}

bool io_placement_alone(const struct io_placement *p, unsigned index)
{
	for (unsigned i = 0; i < p->n_threads; i++) {
		if (i != index && atomic_load_explicit(&p->connections[i], memory_order_relaxed) > 0)
			return false;
	}
	return true;
}

bool io_placement_sole(const struct io_placement *p, unsigned *index)
{
	unsigned holders = 0;
	for (unsigned i = 0; i < p->n_threads; i++) {
		if (atomic_load_explicit(&p->connections[i], memory_order_relaxed) > 0) {
			*index = i;
			holders++;
		}
	}
	return holders == 1;
}
