/*
 * index_postings.c — (table, key) → ascending IDs, in memory, flushed in
 * key order (index_postings.h).
 *
 * An open-addressing hash table of 32-bit slots points into an array of
 * lists. A list keeps its first and last ID; the gaps between consecutive
 * IDs are LEB128 varints written into a chain of 64-byte blocks (a 4-byte
 * link and 60 bytes of deltas) carved from 1 MiB chunks. Keys are already
 * hashes, so the slot hash only mixes in the table and the key kind.
 */
#include "index_postings.h"

#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "idl.h"
#include "lumen_error.h"

#define BLOCK_SIZE 64
#define BLOCK_LINK 4
#define BLOCK_DATA (BLOCK_SIZE - BLOCK_LINK)
#define BLOCKS_PER_CHUNK 16384
#define INITIAL_SLOTS 4096

struct posting_list {
	uint64_t first, last;
	uint32_t count;
	uint32_t head, tail;          /* block numbers (1-based); 0 = no block yet */
	uint16_t table;
	uint8_t tail_used;            /* bytes used in the tail block */
	bool is_range;
	struct index_key key;
};

struct postings {
	size_t n_tables;
	struct posting_list *lists;
	size_t n_lists, lists_cap;
	uint32_t *slots;              /* list index + 1; 0 = empty */
	size_t n_slots;               /* a power of two */
	uint8_t **chunks;
	size_t n_chunks, chunks_cap;
	uint32_t n_blocks;            /* blocks handed out since the last flush */
	uint64_t *ids;                /* flush: one list decoded (IDL_MAX_IDS) */
};

int postings_create(size_t n_tables, struct postings **out)
{
	*out = NULL;
	if (n_tables > POSTINGS_MAX_TABLES)
		return LUMEN_EINVAL;
	struct postings *p = calloc(1, sizeof(*p));
	if (p == NULL)
		return LUMEN_ENOMEM;
	p->n_tables = n_tables;
	p->n_slots = INITIAL_SLOTS;
	p->slots = calloc(p->n_slots, sizeof(*p->slots));
	p->ids = malloc(IDL_MAX_IDS * sizeof(*p->ids));
	if (p->slots == NULL || p->ids == NULL) {
		postings_free(p);
		return LUMEN_ENOMEM;
	}
	*out = p;
	return LUMEN_OK;
}

void postings_free(struct postings *p)
{
	if (p == NULL)
		return;
	for (size_t i = 0; i < p->n_chunks; i++)
		free(p->chunks[i]);
	free(p->chunks);
	free(p->lists);
	free(p->slots);
	free(p->ids);
	free(p);
}

size_t postings_memory(const struct postings *p)
{
	/* what is in use, not what is held: a flush must bring it back down, or
	 * every add after the first flush would ask for another one */
	return p->n_lists * (sizeof(*p->lists) + 2 * sizeof(*p->slots)) +
	       (size_t)p->n_blocks * BLOCK_SIZE;
}

size_t postings_key_count(const struct postings *p)
{
	return p->n_lists;
}

/* ------------------------------------------------------------- hashing */

static size_t slot_hash(size_t table, const struct index_key *key)
{
	uint64_t h = 0;

	for (int i = 1; i < INDEX_KEY_SIZE; i++)
		h = (h << 8) | key->bytes[i];
	/* presence keys all hash to 0: the table and kind must spread them */
	h ^= ((uint64_t)table << 8 | key->bytes[0]) * 0x9e3779b97f4a7c15u;
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9u;
	h ^= h >> 29;
	return (size_t)h;
}

static bool list_is(const struct posting_list *l, size_t table, const struct index_key *key)
{
	return l->table == table && memcmp(l->key.bytes, key->bytes, INDEX_KEY_SIZE) == 0;
}

static int grow_slots(struct postings *p)
{
	size_t n = p->n_slots * 2;
	uint32_t *slots = calloc(n, sizeof(*slots));

	if (slots == NULL)
		return LUMEN_ENOMEM;
	for (size_t i = 0; i < p->n_lists; i++) {
		const struct posting_list *l = &p->lists[i];
		size_t s = slot_hash(l->table, &l->key) & (n - 1);
		while (slots[s] != 0)
			s = (s + 1) & (n - 1);
		slots[s] = (uint32_t)(i + 1);
	}
	free(p->slots);
	p->slots = slots;
	p->n_slots = n;
	return LUMEN_OK;
}

static int grow_lists(struct postings *p)
{
	/* list numbers are 32-bit: the doubled capacity must stay below UINT32_MAX */
	if (p->lists_cap > (UINT32_MAX - 1) / 2)
		return LUMEN_ENOMEM;
	struct posting_list *lists = array_reserve(p->lists, &p->lists_cap, p->lists_cap + 1,
						   sizeof(*lists), INITIAL_SLOTS);
	if (lists == NULL)
		return LUMEN_ENOMEM;
	p->lists = lists;
	return LUMEN_OK;
}

/* The list of (table, key), created holding id when new (*created). */
static int find_list(struct postings *p, size_t table, const struct index_key *key, uint64_t id,
		     struct posting_list **out, bool *created)
{
	int rc = LUMEN_OK;

	/* keep the table at most 70% full so probes stay short */
	if ((p->n_lists + 1) * 10 > p->n_slots * 7)
		rc = grow_slots(p);
	if (rc == LUMEN_OK && p->n_lists == p->lists_cap)
		rc = grow_lists(p);
	if (rc != LUMEN_OK)
		return rc;
	size_t mask = p->n_slots - 1;
	size_t s = slot_hash(table, key) & mask;
	while (p->slots[s] != 0) {
		struct posting_list *l = &p->lists[p->slots[s] - 1];
		if (list_is(l, table, key)) {
			*out = l;
			*created = false;
			return LUMEN_OK;
		}
		s = (s + 1) & mask;
	}
	struct posting_list *l = &p->lists[p->n_lists++];
	memset(l, 0, sizeof(*l));
	l->first = l->last = id;
	l->count = 1;
	l->table = (uint16_t)table;
	l->key = *key;
	p->slots[s] = (uint32_t)p->n_lists;
	*out = l;
	*created = true;
	return LUMEN_OK;
}

/* -------------------------------------------------------------- blocks */

static uint8_t *block_at(const struct postings *p, uint32_t number)
{
	uint32_t i = number - 1;
	return p->chunks[i / BLOCKS_PER_CHUNK] + (size_t)(i % BLOCKS_PER_CHUNK) * BLOCK_SIZE;
}

/* A fresh block (its link cleared); 0 when out of memory. */
static uint32_t new_block(struct postings *p)
{
	if (p->n_blocks == UINT32_MAX - 1)
		return 0;
	if (p->n_blocks / BLOCKS_PER_CHUNK >= p->n_chunks) {
		if (p->n_chunks == p->chunks_cap) {
			uint8_t **chunks = array_reserve(p->chunks, &p->chunks_cap, p->n_chunks + 1,
							 sizeof(*chunks), 16);
			if (chunks == NULL)
				return 0;
			p->chunks = chunks;
		}
		p->chunks[p->n_chunks] = malloc((size_t)BLOCKS_PER_CHUNK * BLOCK_SIZE);
		if (p->chunks[p->n_chunks] == NULL)
			return 0;
		p->n_chunks++;
	}
	uint32_t number = ++p->n_blocks;
	memset(block_at(p, number), 0, BLOCK_LINK);
	return number;
}

static int put_byte(struct postings *p, struct posting_list *l, uint8_t byte)
{
	if (l->tail == 0 || l->tail_used == BLOCK_DATA) {
		uint32_t number = new_block(p);
		if (number == 0)
			return LUMEN_ENOMEM;
		if (l->tail == 0)
			l->head = number;
		else
			memcpy(block_at(p, l->tail), &number, BLOCK_LINK);
		l->tail = number;
		l->tail_used = 0;
	}
	block_at(p, l->tail)[BLOCK_LINK + l->tail_used++] = byte;
	return LUMEN_OK;
}

static int put_delta(struct postings *p, struct posting_list *l, uint64_t delta)
{
	int rc = LUMEN_OK;

	while (rc == LUMEN_OK && delta >= 0x80) {
		rc = put_byte(p, l, (uint8_t)(delta | 0x80));
		delta >>= 7;
	}
	return rc == LUMEN_OK ? put_byte(p, l, (uint8_t)delta) : rc;
}

int postings_add(struct postings *p, size_t table, const struct index_key *key, uint64_t id)
{
	struct posting_list *l = NULL;
	bool created = false;

	if (id == 0 || table >= p->n_tables)
		return LUMEN_EINVAL;
	int rc = find_list(p, table, key, id, &l, &created);
	if (rc != LUMEN_OK || created)
		return rc;
	if (id <= l->last)
		return LUMEN_EINVAL;
	if (!l->is_range && l->count + 1 > IDL_MAX_IDS)
		l->is_range = true;   /* from here on the bounds are all it stores */
	if (!l->is_range)
		rc = put_delta(p, l, id - l->last);
	if (rc != LUMEN_OK)
		return rc;
	l->last = id;
	l->count++;
	return LUMEN_OK;
}

/* -------------------------------------------------------------- flush */

/* Decodes l's IDs into p->ids (count is at most IDL_MAX_IDS for a list). */
static void decode_list(const struct postings *p, const struct posting_list *l)
{
	uint32_t block = l->head;
	size_t at = 0;
	uint64_t id = l->first;

	p->ids[0] = id;
	for (uint32_t i = 1; i < l->count; i++) {
		uint64_t delta = 0;
		unsigned shift = 0;
		uint8_t byte;
		do {
			if (at == BLOCK_DATA) {
				memcpy(&block, block_at(p, block), BLOCK_LINK);
				at = 0;
			}
			byte = block_at(p, block)[BLOCK_LINK + at++];
			delta |= (uint64_t)(byte & 0x7f) << shift;
			shift += 7;
		} while (byte & 0x80);
		id += delta;
		p->ids[i] = id;
	}
}

/* qsort has no context argument: the flush sorts lists by value instead. */
static int compare_lists(const void *a, const void *b)
{
	const struct posting_list *x = a, *y = b;

	if (x->table != y->table)
		return x->table < y->table ? -1 : 1;
	return memcmp(x->key.bytes, y->key.bytes, INDEX_KEY_SIZE);
}

static void empty(struct postings *p)
{
	p->n_lists = 0;
	p->n_blocks = 0;
	memset(p->slots, 0, p->n_slots * sizeof(*p->slots));
}

int postings_flush(struct postings *p, postings_sink_fn sink, void *ctx)
{
	int rc = LUMEN_OK;

	/* the slots are rebuilt empty anyway: sorting the lists in place is free
	 * (no lists at all: no array either, and qsort wants one) */
	if (p->n_lists > 1)
		qsort(p->lists, p->n_lists, sizeof(*p->lists), compare_lists);
	for (size_t i = 0; i < p->n_lists && rc == LUMEN_OK; i++) {
		const struct posting_list *l = &p->lists[i];
		if (l->is_range) {
			uint64_t bounds[2] = { l->first, l->last };
			rc = sink(ctx, l->table, &l->key, bounds, 2, true);
		} else {
			decode_list(p, l);
			rc = sink(ctx, l->table, &l->key, p->ids, l->count, false);
		}
	}
	empty(p);
	return rc;
}
