/*
 * array.h — heap arrays that grow (proto layer, libc only).
 *
 * Two ways a table of structs grows in place: by doubling up to a
 * capacity the caller keeps (array_reserve: amortized O(1) appends), or by
 * exactly one zeroed element (ARRAY_PUSH: small arrays filled once, such
 * as the lines of a configuration file).
 *
 * Ownership: the caller owns the array before and after and frees it with
 * free(). On failure (NULL) the old array is untouched, still the
 * caller's, with its contents, count and capacity unchanged.
 * Thread-safety: none; the caller's array.
 * Caveats: NULL always means failure, so array_reserve needs need > 0.
 * A byte size that would overflow size_t is a failure.
 */
#ifndef LUMEN_ARRAY_H
#define LUMEN_ARRAY_H

#include <stddef.h>

/*
 * The capacity that a full array of cap elements grows to so that it holds
 * need > cap: the first of cap*2, cap*4, ... (initial, initial*2, ... when
 * cap is 0) that does, or 0 if that many elements of size bytes overflow
 * size_t. The rule array_reserve and arena_reserve (arena.h) share.
 */
size_t array_grown_capacity(size_t cap, size_t need, size_t size, size_t initial);

/*
 * Room for need elements of size bytes: array itself when *cap already
 * holds them; else a realloc to array_grown_capacity(*cap, need, initial),
 * stored in *cap.
 */
void *array_reserve(void *array, size_t *cap, size_t need, size_t size, size_t initial);

/*
 * One more element of size bytes, zeroed, at the end of the array *slot
 * points at (a T ** as void *), whose count *n then grows by one: a
 * pointer to that element, or NULL. Called through ARRAY_PUSH, which
 * derives slot, n and size from the array and count themselves.
 */
void *array_push(void *slot, size_t *n, size_t size);

/* ARRAY_PUSH(db->indexes, db->n_indexes): the new, zeroed last element. */
#define ARRAY_PUSH(array, n) array_push(&(array), &(n), sizeof(*(array)))

#endif
