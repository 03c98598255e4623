/*
 * arena.h — per-operation scratch memory (proto layer, the lowest).
 *
 * An arena hands out memory that lives until arena_reset() or arena_free().
 * Blocks are kept across resets, so a worker's arena stops allocating once it
 * has grown to its working size. With -DLUMEN_ARENA_MALLOC every allocation
 * is a separate malloc (freed at reset) so sanitizers and valgrind see each
 * one.
 *
 * Ownership: the arena owns everything it returns; callers never free().
 * Thread-safety: none; one arena per worker or per operation.
 * Caveats: arena_alloc returns NULL on failure (never aborts); a bounded
 * arena (max > 0) returns NULL once max bytes are handed out.
 */
#ifndef LUMEN_ARENA_H
#define LUMEN_ARENA_H

#include <stddef.h>

struct arena_block;

struct arena {
	struct arena_block *head;   /* block being carved */
	struct arena_block *blocks; /* all blocks, for reset/free */
	size_t used;                /* bytes handed out since reset */
	size_t max;                 /* 0 = unbounded */
};

void arena_init(struct arena *a, size_t max);
/* Aligned to max_align_t. NULL on failure or when the bound is reached. */
void *arena_alloc(struct arena *a, size_t n);
void *arena_calloc(struct arena *a, size_t count, size_t size);
void *arena_memdup(struct arena *a, const void *p, size_t n);
/*
 * Room for need elements of size bytes in an arena array of capacity *cap
 * whose first n elements are in use: items itself when it fits, else a
 * fresh copy of those n in arena memory of the capacity array.h's
 * array_grown_capacity gives (stored in *cap; the old array stays the
 * arena's). NULL on failure (nothing changed), so need must be > 0.
 */
void *arena_reserve(struct arena *a, void *items, size_t n, size_t *cap, size_t need,
		    size_t size, size_t initial);
/* Copy n bytes and append a NUL. */
char *arena_strndup(struct arena *a, const char *s, size_t n);
void arena_reset(struct arena *a);
void arena_free(struct arena *a);

#endif
