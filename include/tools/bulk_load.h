/*
 * bulk_load.h — lumenadd's pipeline: LDIF records in, entries stored
 * (tools layer, src/tools/bulk_load.c).
 *
 * Three stages run at once, joined by a ring of record batches:
 *   reader   (one thread)  ldif_read into a batch's arena, in input order
 *   builders (-j threads)  build each record's entry (DN and values
 *                          normalized), then backend_tool_prepare (schema
 *                          check unless skip_schema, operational
 *                          attributes), entry_encode and the entry's keys
 *                          per index table (backend_tool_entry_keys);
 *                          the entry itself is freed there
 *   writer   (the caller)  takes the batches in input order, stores each
 *                          entry's records (backend_tool_store: dn2id,
 *                          id2entry) and files its keys under its new ID
 *                          in memory (index_postings.h); when the postings
 *                          reach their share of the memory bound, and at
 *                          the end, they are written table by table in key
 *                          order (backend_tool_index_run), so LMDB appends
 * IDs follow the input order; the backend alone decides the table layout,
 * the keys, the operational attributes and the checks. Memory is bounded
 * by options->memory_limit (batches in flight plus postings), not by the
 * input size; a bigger bound means fewer, larger index rounds.
 *
 * Bad records: a record that does not parse, names an undefined type, has
 * a bad value, violates the schema or lacks its parent is reported on
 * options->errors as "lumenadd: line N: dn: what is wrong". Without
 * continue_on_error the load stops at the first one (the caller discards
 * the staging copy, see lumenadd.c: the backend commits as it goes); with
 * it, the record is skipped and counted (nothing of it is written; its
 * entry ID, if it had one, stays unused).
 *
 * Ownership: the caller owns the backend, the schema, the input stream
 * and the error stream. Thread-safety: bulk_load_run is called from one
 * thread; it starts and joins its own threads.
 *
 * Caveats:
 *  - Only content records and "changetype: add" are accepted; other change
 *    records are bad records.
 *  - A dry run (be == NULL) checks syntax and schema but not parents or
 *    duplicate DNs.
 *  - Index keys of stored entries live only in memory until their round is
 *    written: a load that fails leaves the tables without them, which is
 *    why a failed load must be discarded as a whole (staging copy).
 */
#ifndef LUMEN_BULK_LOAD_H
#define LUMEN_BULK_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "backend.h"
#include "ber.h"
#include "schema.h"

/*
 * Default memory bound (lumenadd -m), bytes: 1/BULK_LOAD_RING_SHARE of it
 * for the record batches in flight, the rest for index postings waiting
 * to be written in key order (index_postings.h). LMDB's pages of the
 * current transaction (tool_load.c) come on top. Only what the input
 * needs is allocated (100k typical entries: ~60 MiB of postings, one
 * round); the bound matters for millions of entries, where every round
 * after the first merges into large tables instead of appending.
 */
#define BULK_LOAD_DEFAULT_MEMORY ((size_t)1024 << 20)
#define BULK_LOAD_RING_SHARE 8
/* Records per batch at most (smaller when the memory bound says so). */
#define BULK_LOAD_BATCH_RECORDS 512
#define BULK_LOAD_MAX_THREADS 64

struct bulk_load_options {
	bool skip_schema;          /* -s: no schema check (trusted input) */
	bool quick;                /* -q: no second syntax check of each value */
	bool continue_on_error;    /* -c */
	bool progress;             /* progress line on stderr (when a tty) */
	unsigned threads;          /* -j: builder threads, 1..BULK_LOAD_MAX_THREADS */
	size_t memory_limit;       /* bytes of batches in flight; 0 = default */
	uint64_t input_size;       /* for the ETA; 0 = unknown */
	struct ber_view rootdn_ndn;/* creatorsName/modifiersName of new entries */
	FILE *errors;              /* where bad records are reported */
};

struct bulk_load_stats {
	uint64_t records;          /* records read (good and bad) */
	uint64_t loaded;           /* entries stored (or checked, in a dry run) */
	uint64_t skipped;          /* bad records skipped (-c) */
	double seconds;
};

/*
 * Loads `input` into be (NULL: dry run). Returns LUMEN_OK when every
 * record was stored or (with continue_on_error) skipped; LUMEN_EMALFORMED
 * when a bad record stopped the load; or the storage error that stopped it
 * (LUMEN_EFULL: raise maxsize; LUMEN_EIO; LUMEN_ENOMEM), with err naming
 * it. Errors: as said, LUMEN_EINVAL (bad options).
 */
int bulk_load_run(struct backend *be, const struct schema *schema, FILE *input,
		  const struct bulk_load_options *options, struct bulk_load_stats *stats,
		  char *err, size_t errlen);

#endif
