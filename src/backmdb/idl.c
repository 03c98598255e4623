/*
 * idl.c — ID lists and their algebra (idl.h).
 *
 * Every operation that cannot represent its exact result degrades to the
 * covering range instead of failing: a superset of candidates is always a
 * correct answer for the search code above us.
 */
#include "idl.h"

#include <stdlib.h>
#include <string.h>

/* When one list is this many times longer, probe it by binary search. */
#define IDL_GALLOP_RATIO 16

void idl_init(struct idl *idl)
{
	memset(idl, 0, sizeof(*idl));
	idl->owns = true;
}

void idl_init_buffer(struct idl *idl, uint64_t *buffer, size_t capacity)
{
	memset(idl, 0, sizeof(*idl));
	idl->ids = buffer;
	idl->capacity = capacity;
}

void idl_release(struct idl *idl)
{
	if (idl->owns)
		free(idl->ids);
	idl_init(idl);
}

void idl_clear(struct idl *idl)
{
	idl->count = 0;
	idl->is_range = false;
	idl->lo = idl->hi = 0;
}

void idl_set_range(struct idl *idl, uint64_t lo, uint64_t hi)
{
	if (lo == 0)
		lo = 1;
	if (hi > IDL_ID_MAX)
		hi = IDL_ID_MAX;
	idl->count = 0;
	if (lo > hi) {
		idl_clear(idl);
		return;
	}
	idl->is_range = true;
	idl->lo = lo;
	idl->hi = hi;
}

void idl_set_all(struct idl *idl)
{
	idl_set_range(idl, 1, IDL_ID_MAX);
}

bool idl_is_empty(const struct idl *idl)
{
	return idl->is_range ? false : idl->count == 0;
}

uint64_t idl_size(const struct idl *idl)
{
	return idl->is_range ? idl->hi - idl->lo + 1 : idl->count;
}

uint64_t idl_first(const struct idl *idl)
{
	if (idl->is_range)
		return idl->lo;
	return idl->count ? idl->ids[0] : 0;
}

uint64_t idl_last(const struct idl *idl)
{
	if (idl->is_range)
		return idl->hi;
	return idl->count ? idl->ids[idl->count - 1] : 0;
}

/* Index of the first ID >= id in ids[from..count). */
static size_t lower_bound(const uint64_t *ids, size_t from, size_t count, uint64_t id)
{
	size_t lo = from, hi = count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool idl_contains(const struct idl *idl, uint64_t id)
{
	if (id == 0)
		return false;
	if (idl->is_range)
		return id >= idl->lo && id <= idl->hi;
	size_t at = lower_bound(idl->ids, 0, idl->count, id);
	return at < idl->count && idl->ids[at] == id;
}

bool idl_reserve(struct idl *idl, size_t n)
{
	if (n > IDL_MAX_IDS)
		return false;
	if (n <= idl->capacity)
		return true;
	if (!idl->owns)
		return false;
	/* Grow geometrically so a run of inserts costs amortized O(1) allocations. */
	size_t want = idl->capacity ? idl->capacity : 16;
	while (want < n)
		want *= 2;
	if (want > IDL_MAX_IDS)
		want = IDL_MAX_IDS;
	uint64_t *grown = realloc(idl->ids, want * sizeof(*grown));
	if (grown == NULL)
		return false;
	idl->ids = grown;
	idl->capacity = want;
	return true;
}

/* Degrades to the range [lo, hi], widened to cover what the IDL held. */
static void degrade(struct idl *idl, uint64_t lo, uint64_t hi)
{
	if (!idl_is_empty(idl)) {
		if (idl_first(idl) < lo)
			lo = idl_first(idl);
		if (idl_last(idl) > hi)
			hi = idl_last(idl);
	}
	idl_set_range(idl, lo, hi);
}

void idl_insert(struct idl *idl, uint64_t id)
{
	if (id == 0)
		return;
	if (idl->is_range) {
		if (id < idl->lo)
			idl->lo = id;
		if (id > idl->hi)
			idl->hi = id;
		return;
	}
	size_t at = lower_bound(idl->ids, 0, idl->count, id);
	if (at < idl->count && idl->ids[at] == id)
		return;
	if (!idl_reserve(idl, idl->count + 1)) {
		degrade(idl, id, id);
		return;
	}
	memmove(idl->ids + at + 1, idl->ids + at, (idl->count - at) * sizeof(*idl->ids));
	idl->ids[at] = id;
	idl->count++;
}

void idl_delete(struct idl *idl, uint64_t id)
{
	if (idl->is_range) {
		if (id == idl->lo && id == idl->hi)
			idl_clear(idl);
		else if (id == idl->lo)
			idl->lo++;
		else if (id == idl->hi)
			idl->hi--;
		return;
	}
	size_t at = lower_bound(idl->ids, 0, idl->count, id);
	if (at == idl->count || idl->ids[at] != id)
		return;
	memmove(idl->ids + at, idl->ids + at + 1, (idl->count - at - 1) * sizeof(*idl->ids));
	idl->count--;
}

/* Keeps the IDs of list a that b (a list) also holds; in place. */
static void intersect_lists(struct idl *a, const struct idl *b)
{
	size_t out = 0, i = 0, j = 0;

	if (a->count * IDL_GALLOP_RATIO < b->count) {
		for (i = 0; i < a->count && j < b->count; i++) {
			j = lower_bound(b->ids, j, b->count, a->ids[i]);
			if (j < b->count && b->ids[j] == a->ids[i])
				a->ids[out++] = a->ids[i];
		}
	} else if (b->count * IDL_GALLOP_RATIO < a->count) {
		/* Found positions only grow, and out never passes them. */
		for (j = 0; j < b->count && i < a->count; j++) {
			i = lower_bound(a->ids, i, a->count, b->ids[j]);
			if (i < a->count && a->ids[i] == b->ids[j])
				a->ids[out++] = a->ids[i++];
		}
	} else {
		while (i < a->count && j < b->count) {
			if (a->ids[i] < b->ids[j]) {
				i++;
			} else if (a->ids[i] > b->ids[j]) {
				j++;
			} else {
				a->ids[out++] = a->ids[i];
				i++;
				j++;
			}
		}
	}
	a->count = out;
}

/* Keeps the IDs of list a within [lo, hi]; in place. */
static void clip_list(struct idl *a, uint64_t lo, uint64_t hi)
{
	size_t start = lower_bound(a->ids, 0, a->count, lo);
	size_t end = hi == UINT64_MAX ? a->count : lower_bound(a->ids, start, a->count, hi + 1);

	memmove(a->ids, a->ids + start, (end - start) * sizeof(*a->ids));
	a->count = end - start;
}

void idl_intersect(struct idl *a, const struct idl *b)
{
	if (a == b)
		return;
	if (idl_is_empty(a) || idl_is_empty(b)) {
		idl_clear(a);
		return;
	}
	if (!a->is_range && !b->is_range) {
		intersect_lists(a, b);
	} else if (!a->is_range) {
		clip_list(a, b->lo, b->hi);
	} else if (!b->is_range) {
		uint64_t lo = a->lo, hi = a->hi;
		idl_copy(a, b);
		if (a->is_range)
			idl_set_range(a, lo > a->lo ? lo : a->lo, hi < a->hi ? hi : a->hi);
		else
			clip_list(a, lo, hi);
	} else {
		idl_set_range(a, a->lo > b->lo ? a->lo : b->lo, a->hi < b->hi ? a->hi : b->hi);
	}
}

/* Size of the union of two lists. */
static size_t union_count(const struct idl *a, const struct idl *b)
{
	size_t i = 0, j = 0, n = 0;

	while (i < a->count && j < b->count) {
		if (a->ids[i] < b->ids[j])
			i++;
		else if (a->ids[i] > b->ids[j])
			j++;
		else {
			i++;
			j++;
		}
		n++;
	}
	return n + (a->count - i) + (b->count - j);
}

/* Merges list b into list a from the back, so no scratch buffer is needed. */
static void merge_lists_backward(struct idl *a, const struct idl *b, size_t total)
{
	size_t i = a->count, j = b->count, k = total;

	while (j > 0) {
		if (i > 0 && a->ids[i - 1] > b->ids[j - 1]) {
			a->ids[--k] = a->ids[--i];
		} else {
			if (i > 0 && a->ids[i - 1] == b->ids[j - 1])
				i--;
			a->ids[--k] = b->ids[--j];
		}
	}
	a->count = total;
}

void idl_union(struct idl *a, const struct idl *b)
{
	if (a == b || idl_is_empty(b))
		return;
	if (idl_is_empty(a)) {
		idl_copy(a, b);
		return;
	}
	if (a->is_range || b->is_range) {
		degrade(a, idl_first(b), idl_last(b));
		return;
	}
	size_t total = union_count(a, b);
	if (!idl_reserve(a, total)) {
		degrade(a, idl_first(b), idl_last(b));
		return;
	}
	merge_lists_backward(a, b, total);
}

void idl_copy(struct idl *dst, const struct idl *src)
{
	if (dst == src)
		return;
	idl_clear(dst);
	if (src->is_range) {
		idl_set_range(dst, src->lo, src->hi);
		return;
	}
	if (src->count == 0)
		return;
	if (!idl_reserve(dst, src->count)) {
		idl_set_range(dst, src->ids[0], src->ids[src->count - 1]);
		return;
	}
	memcpy(dst->ids, src->ids, src->count * sizeof(*src->ids));
	dst->count = src->count;
}

static int compare_ids(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return (a > b) - (a < b);
}

void idl_sort_unique(struct idl *idl)
{
	size_t out = 0;

	if (idl->is_range)
		return;
	qsort(idl->ids, idl->count, sizeof(*idl->ids), compare_ids);
	for (size_t i = 0; i < idl->count; i++) {
		if (idl->ids[i] == 0 || (out > 0 && idl->ids[out - 1] == idl->ids[i]))
			continue;
		idl->ids[out++] = idl->ids[i];
	}
	idl->count = out;
}

void idl_iter_init(const struct idl *idl, struct idl_iter *it)
{
	it->pos = 0;
	it->next = idl->is_range ? idl->lo : 0;
}

uint64_t idl_iter_next(const struct idl *idl, struct idl_iter *it)
{
	if (idl->is_range) {
		uint64_t id = it->next;
		if (id == 0)
			return 0;
		it->next = id < idl->hi ? id + 1 : 0;
		return id;
	}
	return it->pos < idl->count ? idl->ids[it->pos++] : 0;
}
