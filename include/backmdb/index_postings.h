/*
 * index_postings.h — index postings held in memory until they are
 * written (or compared) in key order (back-mdb, src/backmdb/index_postings.c):
 * lumenadd's bulk loader, backend_reindex and backend_check_indexes.
 *
 * Owns: for each (index table, key) seen since the last flush, the entry
 * IDs filed under it, in the order given (which must be ascending per
 * key: IDs grow as entries are stored). IDs are kept as variable-length
 * deltas in 64-byte blocks, so a posting costs one or two bytes, and a
 * key's list stops growing once it passes IDL_MAX_IDS: from then on only
 * its first and last ID count, as the stored range will (index_table.h).
 * postings_flush hands every key over sorted by table, then key bytes —
 * the order LMDB stores them in — and empties the set, keeping its memory
 * for the next round.
 *
 * Memory: everything is allocated by the set and freed by postings_free;
 * postings_memory says how much the keys since the last flush take, so
 * the caller can flush when its bound is reached. The ID arrays passed to the sink live until the
 * sink returns.
 * Thread-safety: none; one thread uses a set.
 *
 * Errors: LUMEN_ENOMEM, LUMEN_EINVAL (an ID not above the key's last one,
 * ID 0, table out of range); a sink's error stops the flush and is
 * returned (the set is emptied anyway: a failed flush ends the load).
 *
 * Caveats:
 *  - the memory a list wrote before turning into a range is only reclaimed
 *    at the next flush (at most IDL_MAX_IDS deltas per such key).
 */
#ifndef LUMEN_INDEX_POSTINGS_H
#define LUMEN_INDEX_POSTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "index_table.h"

/* Index tables a set can tell apart. */
#define POSTINGS_MAX_TABLES 65535

struct postings;

/*
 * Receives one key's IDs: ids[0..n) ascending; or, when is_range, the
 * range [ids[0], ids[1]] that replaces a list too long to keep.
 * Returns LUMEN_OK to go on.
 */
typedef int (*postings_sink_fn)(void *ctx, size_t table, const struct index_key *key,
				const uint64_t *ids, size_t n, bool is_range);

/* Errors: LUMEN_ENOMEM, LUMEN_EINVAL (n_tables above POSTINGS_MAX_TABLES). */
int postings_create(size_t n_tables, struct postings **out);
void postings_free(struct postings *p);

/* Files id under (table, key). Errors: LUMEN_ENOMEM, LUMEN_EINVAL. */
int postings_add(struct postings *p, size_t table, const struct index_key *key, uint64_t id);

/*
 * Bytes in use since the last flush (lists, their hash slots, delta
 * blocks): 0 after a flush, although the set keeps its allocations (at
 * most about twice the largest figure reached) for the next round.
 */
size_t postings_memory(const struct postings *p);
/* Keys held since the last flush. */
size_t postings_key_count(const struct postings *p);

/*
 * Calls sink for every key, sorted by (table, key bytes), then empties the
 * set. Errors: LUMEN_ENOMEM, or the sink's first error.
 */
int postings_flush(struct postings *p, postings_sink_fn sink, void *ctx);

#endif
