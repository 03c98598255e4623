/*
 * arena.c — per-operation scratch memory (arena.h).
 *
 * Blocks form a list in the order they were created; `head` is the block
 * being carved. A reset rewinds every block and points head back at the
 * first, so an arena that has grown to its working size allocates nothing
 * more. Built with -DLUMEN_ARENA_MALLOC, every allocation is its own block
 * of exactly the requested size, freed at reset, so sanitizers see each one.
 */
#include "arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"

#define ARENA_FIRST_BLOCK 4096u
/* Doubling stops here so one huge request does not make every later block huge. */
#define ARENA_LARGEST_GROWTH (1u << 20)

struct arena_block {
	struct arena_block *next;
	size_t size; /* usable bytes in data */
	size_t used;
	max_align_t data[]; /* max_align_t elements keep data suitably aligned */
};

void arena_init(struct arena *a, size_t max)
{
	a->head = NULL;
	a->blocks = NULL;
	a->used = 0;
	a->max = max;
}

static size_t round_to_alignment(size_t n)
{
	size_t align = alignof(max_align_t);
	return (n + align - 1) & ~(align - 1);
}

static struct arena_block *block_new(size_t size)
{
	if (size > SIZE_MAX - sizeof(struct arena_block))
		return NULL;
	struct arena_block *b = malloc(sizeof(*b) + size);
	if (b == NULL)
		return NULL;
	b->next = NULL;
	b->size = size;
	b->used = 0;
	return b;
}

#ifdef LUMEN_ARENA_MALLOC

static void *carve(struct arena *a, size_t n)
{
	struct arena_block *b = block_new(n);
	if (b == NULL)
		return NULL;
	b->used = n;
	b->next = a->blocks;
	a->blocks = b;
	a->head = b;
	return b->data;
}

#else

/* A block for an n-byte request placed after `last` (NULL: first block). */
static struct arena_block *grow(struct arena *a, struct arena_block *last, size_t n)
{
	size_t size = ARENA_FIRST_BLOCK;
	if (last != NULL)
		size = last->size < ARENA_LARGEST_GROWTH ? last->size * 2 : last->size;
	if (size < n)
		size = n;
	struct arena_block *b = block_new(size);
	if (b == NULL)
		return NULL;
	if (last == NULL)
		a->blocks = b;
	else
		last->next = b;
	return b;
}

static void *carve(struct arena *a, size_t n)
{
	struct arena_block *last = NULL;
	/* Blocks too full for this request are skipped for the rest of the cycle. */
	for (struct arena_block *b = a->head; b != NULL; last = b, b = b->next) {
		if (b->size - b->used >= n) {
			a->head = b;
			void *p = (char *)b->data + b->used;
			b->used += n;
			return p;
		}
	}
	/* head is NULL only before the first block, so last is the list's tail. */
	struct arena_block *b = grow(a, last, n);
	if (b == NULL)
		return NULL;
	a->head = b;
	b->used = n;
	return b->data;
}

#endif

void *arena_alloc(struct arena *a, size_t n)
{
	/* Zero-byte requests still get a distinct, valid pointer. */
	if (n == 0)
		n = 1;
	if (n > SIZE_MAX / 2)
		return NULL;
	n = round_to_alignment(n);
	if (a->max > 0 && (n > a->max || a->used > a->max - n))
		return NULL;
	void *p = carve(a, n);
	if (p != NULL)
		a->used += n;
	return p;
}

void *arena_calloc(struct arena *a, size_t count, size_t size)
{
	if (size != 0 && count > SIZE_MAX / size)
		return NULL;
	void *p = arena_alloc(a, count * size);
	if (p != NULL)
		memset(p, 0, count * size);
	return p;
}

void *arena_memdup(struct arena *a, const void *p, size_t n)
{
	void *copy = arena_alloc(a, n);
	if (copy != NULL && n > 0)
		memcpy(copy, p, n);
	return copy;
}

void *arena_reserve(struct arena *a, void *items, size_t n, size_t *cap, size_t need,
		    size_t size, size_t initial)
{
	if (need <= *cap)
		return items;
	size_t grown = array_grown_capacity(*cap, need, size, initial);
	void *copy = grown != 0 ? arena_alloc(a, grown * size) : NULL;
	if (copy == NULL)
		return NULL;
	if (n > 0)
		memcpy(copy, items, n * size);
	*cap = grown;
	return copy;
}

char *arena_strndup(struct arena *a, const char *s, size_t n)
{
	if (n == SIZE_MAX)
		return NULL;
	char *copy = arena_alloc(a, n + 1);
	if (copy == NULL)
		return NULL;
	if (n > 0)
		memcpy(copy, s, n);
	copy[n] = '\0';
	return copy;
}

static void free_blocks(struct arena *a)
{
	struct arena_block *b = a->blocks;
	while (b != NULL) {
		struct arena_block *next = b->next;
		free(b);
		b = next;
	}
	a->blocks = NULL;
	a->head = NULL;
}

void arena_reset(struct arena *a)
{
#ifdef LUMEN_ARENA_MALLOC
	free_blocks(a);
#else
	for (struct arena_block *b = a->blocks; b != NULL; b = b->next)
		b->used = 0;
	a->head = a->blocks;
#endif
	a->used = 0;
}

void arena_free(struct arena *a)
{
	free_blocks(a);
	a->used = 0;
}
