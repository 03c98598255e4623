/*
 * array.c — heap arrays that grow by doubling or by one (array.h).
 */
#include "array.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

size_t array_grown_capacity(size_t cap, size_t need, size_t size, size_t initial)
{
	size_t grown = cap != 0 ? cap : initial != 0 ? initial : 1;
	if (cap != 0 || grown < need) {
		do {
			if (grown > SIZE_MAX / 2)
				return 0;
			grown *= 2;
		} while (grown < need);
	}
	return size != 0 && grown > SIZE_MAX / size ? 0 : grown;
}

void *array_reserve(void *array, size_t *cap, size_t need, size_t size, size_t initial)
{
	if (need <= *cap)
		return array;
	size_t grown = array_grown_capacity(*cap, need, size, initial);
	void *bigger = grown != 0 ? realloc(array, grown * size) : NULL;
	if (bigger != NULL)
		*cap = grown;
	return bigger;
}

void *array_push(void *slot, size_t *n, size_t size)
{
	uint8_t *array;
	if (size != 0 && *n >= SIZE_MAX / size)
		return NULL;
	/* memcpy: *slot is a T *, read and written as the pointer it is */
	memcpy(&array, slot, sizeof(array));
	uint8_t *bigger = realloc(array, (*n + 1) * size);
	if (bigger == NULL)
		return NULL;
	memcpy(slot, &bigger, sizeof(bigger));
	uint8_t *added = bigger + (*n)++ * size;
	memset(added, 0, size);
	return added;
}
