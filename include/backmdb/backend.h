/*
 * backend.h — the back-mdb LDAP operations: what the server calls (back-mdb).
 *
 * A struct backend is one `database mdb`: its LMDB store (mdb_store.h), its
 * index tables, its entry and IDL caches, and its group-commit writer
 * (write_batch.h). The server builds a struct backend_settings from its
 * configuration (this layer never sees config.h), opens each database with
 * mdb_database_open and calls it only through the database interface
 * (database.h, whose operation types these functions take); the tools and
 * tests call the backend_* functions below directly.
 *
 * Results: every operation function fills op->result_code (an LDAP result
 * code, enum ldap_result_code), op->diagnostic and op->matched_dn, whatever
 * it returns, so the server always just sends them. The return value is
 * LUMEN_OK when the operation ran to an LDAP answer (success or an LDAP
 * error such as noSuchObject), or a negative lumen_err for an internal
 * failure (then result_code is LDAP_OTHER, or LDAP_BUSY while stopping, and
 * the diagnostic says why — for LUMEN_EFULL it names `maxsize`); log it.
 *
 * DNs: the server passes each DN twice, as the user wrote it and normalized
 * (dn.h, dn_normalize with the same schema). The truth for an entry's DN is
 * the dn2id tree: after a subtree rename the descendants' stored records
 * still hold their old DN until they are rewritten, so every entry handed
 * out (search sink, fetch, pre/post-read) carries its current DN (the
 * backend corrects stale copies), and struct backend_entry_info repeats it.
 *
 * Memory: backend_open allocates the backend; backend_close frees it.
 * Strings and views in outputs (diagnostic, matched_dn, info->dn, cookies)
 * live in op->arena or are static; entries passed to a sink are borrowed
 * for the duration of the call; pre/post-read entries are the caller's
 * (entry_free). A search allocates nothing large per operation: ID lists
 * and read transactions come from a pool of per-thread readers kept by the
 * backend and reused (see Caveats); entries decoded on a cache miss go into
 * the entry cache (for a search iterating more than BACKEND_SCAN_IDS
 * candidates, only into a free position: a scan never evicts).
 *
 * Thread-safety: after backend_open, every operation may be called from
 * any number of threads. Writes are queued to the committer thread: writes
 * that arrive together share one LMDB commit and one sync, and each call
 * returns only once the commit holding it is durable (unless dbnosync).
 * Searches never wait for writers (LMDB snapshots).
 *
 * Errors (return values): LUMEN_ENOMEM, LUMEN_EIO (storage), LUMEN_EFULL
 * (map full: raise maxsize), LUMEN_ELIMIT (maxreaders), LUMEN_EBUSY
 * (stopping), LUMEN_EINVAL (bad arguments), plus those named per function.
 *
 * Caveats:
 *  - The read snapshot of a search is released and renewed every
 *    BACKEND_SEARCH_BATCH entries, so a slow client never pins an old
 *    snapshot; entries changed meanwhile are seen in their newer state,
 *    and every candidate is re-tested against scope and filter.
 *  - A search whose client stops reading pauses instead of waiting: the
 *    sink returns BACKEND_SINK_PAUSE, and backend_search returns at once
 *    with search->paused set, its read transaction released (no snapshot
 *    is pinned while the client stalls) and its position in
 *    search->resume. Calling backend_search again with the same request
 *    and that resume state continues after the last entry sent, in a
 *    fresh snapshot with the candidates planned anew (entries added
 *    meanwhile with higher IDs are seen; scope and filter are re-tested);
 *    the size limit, page size and time deadline carry over.
 *  - Writes build and schema-check what they can before queueing (add),
 *    but the read-modify-write of an existing entry runs on the single
 *    committer thread, inside the batch's transaction.
 *  - tool_mode (lumenadd, lumenindex) has no committer thread and no
 *    caches: writes go into large unsynced transactions (write_bulk) that
 *    backend_tool_flush (or backend_close) commits and syncs once. Never
 *    open the same directory in tool mode while the daemon runs (LMDB
 *    would allow it; the caches would go stale).
 *  - Entry IDs in paged-results cookies are only meaningful to the
 *    backend that issued them: cookies carry a per-open secret.
 */
#ifndef LUMEN_BACKEND_H
#define LUMEN_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "arena.h"
#include "ber.h"
#include "database.h"
#include "entry.h"
#include "filter.h"
#include "ldap_message.h"
#include "schema.h"

/* Suffixes one database may serve. */
#define BACKEND_MAX_SUFFIXES 8
/*
 * Alias dereferencing bounds: aliases followed in one chain (OpenLDAP's
 * maxDerefDepth default), and alias entries one search dereferences in
 * its scope (the search's time limit applies too).
 */
#define BACKEND_ALIAS_MAX_CHAIN 15
#define BACKEND_ALIAS_MAX_PER_SEARCH 1024
/* Entries sent between two renewals of a search's read snapshot. */
#define BACKEND_SEARCH_BATCH 256
/* A search iterating more candidates than this is a scan: its entry cache
 * misses take only free positions. */
#define BACKEND_SCAN_IDS 1000

/* Index kinds of one index specification (bits, as slapd.conf's). */
enum backend_index_kind {
	BACKEND_INDEX_PRESENT = 0x1,   /* pres */
	BACKEND_INDEX_EQUALITY = 0x2,  /* eq */
	BACKEND_INDEX_SUBSTRING = 0x4, /* sub */
	BACKEND_INDEX_APPROX = 0x8,    /* approx */
};

/*
 * One `index` specification. attribute is a type name or OID; the name
 * "default" sets the kinds used by specifications whose kinds are 0
 * (slapd.conf's `index default eq` + `index cn`).
 */
struct backend_index_spec {
	const char *attribute;
	unsigned kinds;                /* enum backend_index_kind bits; 0 = default's */
};

/* cachesize/idlcachesize: keep no cache at all. */
#define BACKEND_CACHE_OFF SIZE_MAX

struct backend_settings {
	const char *const *suffixes;   /* user form; at least one */
	size_t n_suffixes;
	const char *directory;         /* must exist */
	size_t maxsize;                /* bytes; 0 = MDB_STORE_DEFAULT_MAXSIZE */
	unsigned maxreaders;           /* 0 = LMDB's default */
	bool dbnosync;
	bool read_only;                /* exporters: no writes at all */
	bool tool_mode;                /* offline bulk writes (see Caveats) */
	const struct backend_index_spec *indexes;
	size_t n_indexes;
	size_t cachesize;              /* entries; 0 = BACKEND_DEFAULT_CACHESIZE; BACKEND_CACHE_OFF */
	size_t idlcachesize;           /* index keys; 0 = BACKEND_DEFAULT_IDLCACHESIZE; BACKEND_CACHE_OFF */
	const char *name;              /* for messages, e.g. "slapd.conf:12"; may be NULL */
	unsigned server_id;            /* serverID stamped into CSNs (0-0xfff); 0 by default */
};

#define BACKEND_DEFAULT_CACHESIZE 10000
#define BACKEND_DEFAULT_IDLCACHESIZE 10000

struct backend;

/* --------------------------------------------------------- lifecycle */

/*
 * Opens the database: the store in settings->directory, every configured
 * index table, caches and (unless tool_mode or read_only) the committer
 * thread. Suffixes are normalized with schema, which must outlive the
 * backend. On failure errbuf (if given) names the database, the object
 * (directory, suffix, index attribute) and the reason.
 * Errors: LUMEN_EINVAL (no suffix, no directory, bad suffix DN, unknown
 * index attribute or kind that the attribute's rules cannot support),
 * LUMEN_ENOTFOUND (directory missing), LUMEN_EBUSY (locked),
 * LUMEN_EUNSUPPORTED (other on-disk format), LUMEN_ELIMIT, LUMEN_ENOMEM,
 * LUMEN_EIO.
 */
int backend_open(const struct schema *schema, const struct backend_settings *settings,
		 struct backend **out, char *errbuf, size_t errlen);
/*
 * backend_open behind the database interface (database.h): a struct
 * database whose operations are this backend's (database_close closes
 * both). Errors as backend_open; LUMEN_ENOMEM.
 */
int mdb_database_open(const struct schema *schema, const struct backend_settings *settings,
		      struct database **out, char *errbuf, size_t errlen);
/* Finishes queued writes (tool mode: commits and syncs), frees everything. */
void backend_close(struct backend *be);

/* Number of suffixes and the i-th one's user form. */
size_t backend_suffix_count(const struct backend *be);
struct ber_view backend_suffix_dn(const struct backend *be, size_t i);

/*
 * The backend among list[0..n) whose suffix holds ndn (the longest such
 * suffix wins), or NULL.
 */
struct backend *backend_select(struct backend *const *list, size_t n, struct ber_view ndn);

/* Tool mode: commit what is pending and sync. Errors: LUMEN_EFULL, LUMEN_EIO,
 * LUMEN_EPOISONED (an earlier commit failed), LUMEN_EINVAL (not tool mode). */
int backend_tool_flush(struct backend *be);

/* ---------------------------------------------------- bulk-load path */
/*
 * lumenadd's path (tool_mode only): the CPU work of an add split from its
 * writes, so a loader runs it on many threads, and the index writes
 * batched by the loader and handed over sorted.
 *   backend_tool_prepare     any thread: backend_add_entry's checks and
 *                            operational attributes, applied to e itself
 *   backend_tool_entry_keys  any thread: e's keys in one index table
 *   backend_tool_store       the load's thread: dn2id and id2entry
 *   backend_tool_index_run   the load's thread: the new IDs of one key
 * Index tables are numbered 0 .. backend_index_count(be) - 1. The loader
 * keeps each stored entry's keys and hands them over table by table, keys
 * ascending (struct index_key bytes, memcmp order), each key's IDs
 * ascending: LMDB then mostly appends. IDs grow in store order.
 * Atomicity: entries are not written in nested transactions, and the
 * load's large transactions commit as they fill, so only a staging copy
 * (lumenadd's) makes a whole load all-or-nothing; a refused entry is
 * refused before any of it is written. Memory: a load holds one cursor
 * and a copy of the last parent DN; backend_tool_load_end frees them.
 */
struct index_key;
struct backend_tool_load;

/* Number of index tables, and one's attribute name (schema-owned). */
size_t backend_index_count(const struct backend *be);
const char *backend_index_name(const struct backend *be, size_t table);

/*
 * Thread-safe. Checks e against the schema (unless !check_schema) and adds
 * its operational attributes (supplied ones are kept when op->from_tool),
 * as backend_add_entry does before storing. Result codes: success, the
 * violation's code (diagnostic in op->arena), unwillingToPerform (outside
 * the database). Errors: LUMEN_ENOMEM, LUMEN_EIO (no randomness).
 */
enum backend_schema_check {
	BACKEND_CHECK_NONE = 0,       /* lumenadd -s */
	BACKEND_CHECK_FULL = 1,       /* entry_check_add */
	BACKEND_CHECK_STRUCTURE = 2,  /* lumenadd -q: entry_check_add_structure */
};
int backend_tool_prepare(struct backend *be, struct backend_op *op, struct entry *e,
			 enum backend_schema_check check);
/*
 * Thread-safe. The keys e produces in index table `table`, sorted and
 * unique, in arena memory (*n may be 0). Errors: LUMEN_ENOMEM,
 * LUMEN_EINVAL (no such table).
 */
int backend_tool_entry_keys(const struct backend *be, size_t table, const struct entry *e,
			    struct arena *arena, const struct index_key **keys, size_t *n);

/* Thread-safe. True if e is a referral object (RFC 3296): the load
 * lists its ID with backend_tool_store_referral once it is stored. */
bool backend_tool_is_referral(const struct backend *be, const struct entry *e);
/* Lists stored entry id among the referral objects. Errors: LUMEN_EFULL,
 * LUMEN_EIO, LUMEN_EPOISONED. */
int backend_tool_store_referral(struct backend_tool_load *load, uint64_t id);

/* Starts a load. Errors: LUMEN_EINVAL (not tool mode, or read-only), LUMEN_ENOMEM. */
int backend_tool_load_begin(struct backend *be, struct backend_tool_load **out);
/*
 * Stores a prepared entry: `encoded` is entry_encode of it after
 * backend_tool_prepare. Sets *id. No index is written. Result codes:
 * success, entryAlreadyExists, noSuchObject with matchedDN (parent
 * missing), unwillingToPerform (no parent and not a suffix). Errors:
 * LUMEN_EFULL (raise maxsize), LUMEN_EIO, LUMEN_ENOMEM, LUMEN_EPOISONED
 * (an earlier failure: the load can only be ended).
 */
int backend_tool_store(struct backend_tool_load *load, struct backend_op *op,
		       struct ber_view dn, struct ber_view ndn, const void *encoded, size_t len,
		       uint64_t *id);
/*
 * Adds ids[0..n) (ascending, stored IDs) under key in index table `table`;
 * a list that grows past the limit becomes a range (index_table.h).
 * backend_tool_index_range: the key's IDs are known to be too many: store
 * the range [lo, hi]. Errors: LUMEN_EINVAL (bad table or IDs),
 * LUMEN_EFULL, LUMEN_EIO, LUMEN_EPOISONED.
 */
int backend_tool_index_run(struct backend_tool_load *load, size_t table,
			   const struct index_key *key, const uint64_t *ids, size_t n);
int backend_tool_index_range(struct backend_tool_load *load, size_t table,
			     const struct index_key *key, uint64_t lo, uint64_t hi);
/*
 * Writes every key held in postings (index_postings.h; its tables are
 * this backend's index tables) with backend_tool_index_run / _range, in
 * the order postings_flush hands them over, and empties the set.
 * Errors: as backend_tool_index_run, LUMEN_ENOMEM.
 */
struct postings;
int backend_tool_index_postings(struct backend_tool_load *load, struct postings *postings);
/* Ends the load (NULL is fine); then backend_tool_flush commits and syncs. */
void backend_tool_load_end(struct backend_tool_load *load);

/* ------------------------------------------------------- operations */

/*
 * Referral objects (RFC 3296; database.h's manage_dsa_it): search,
 * compare, add, delete, modify and modrdn whose target is at or below one
 * also answer referral (10) with op->referrals and matchedDN = the object
 * (without ManageDsaIT; a missing target below one, and an add below one,
 * with it too); a move below one is other ("new superior is a referral").
 * A search meets the ones in its scope through search->reference.
 */

/*
 * Search (RFC 4511 §4.5). Result codes: success, noSuchObject (with
 * matchedDN), sizeLimitExceeded after exactly size_limit entries,
 * timeLimitExceeded, assertionFailed (the base entry), unwillingToPerform
 * for a paged-results cookie that is not this search's, other when the
 * sink stops the search or on abandon (the server sends nothing then).
 * Aliases are dereferenced as search->deref asks, as OpenLDAP's back-mdb
 * does (search_alias.c): aliasProblem / aliasDereferencingProblem with
 * matchedDN for a base that cannot be dereferenced, adminLimitExceeded
 * for more than BACKEND_ALIAS_MAX_PER_SEARCH aliases in scope. Entries come in
 * ascending entry ID order. With search->paused set on return there is
 * no result yet: call again with search->resume to continue.
 */
int backend_search(struct backend *be, struct backend_op *op, struct backend_search *search);

/*
 * Calls fn with the entry named ndn (for bind, access-control group checks,
 * the Pre-Read of the server's own use). Result codes: success,
 * noSuchObject with matchedDN. fn's non-zero return is passed back as the
 * return value. Errors: as the module.
 */
int backend_fetch(struct backend *be, struct backend_op *op, struct ber_view ndn,
		  backend_entry_fn fn, void *ctx);

/*
 * Calls fn with each stored entry of ids[0..n) in that order, from one
 * snapshot (database.h's fetch_ids: what a sorted search sends after
 * sorting what its search collected), with the subordinate counts when
 * want_counts; missing IDs are passed over. fn's return other than 0,
 * BACKEND_SINK_SKIPPED and BACKEND_SINK_PAUSE stops and is returned.
 * Result code: success. Errors: as the module.
 */
int backend_fetch_ids(struct backend *be, struct backend_op *op, const uint64_t *ids,
		      size_t n, bool want_counts, backend_entry_fn fn, void *ctx);

/*
 * Compare: compareTrue / compareFalse under the attribute's equality rule
 * (values of subtypes count), noSuchAttribute (the entry has no such
 * attribute), undefinedAttributeType, inappropriateMatching (no equality
 * rule), invalidAttributeSyntax (the value cannot be normalized),
 * noSuchObject with matchedDN, assertionFailed.
 */
int backend_compare(struct backend *be, struct backend_op *op, struct ber_view ndn,
		    struct ber_view attribute, struct ber_view value);

/*
 * Add the entry dn/ndn built from attributes. Result codes: success,
 * entryAlreadyExists, noSuchObject with matchedDN (parent missing),
 * the schema violation's code (objectClassViolation, namingViolation,
 * undefinedAttributeType, invalidAttributeSyntax, constraintViolation for
 * a NO-USER-MODIFICATION attribute from a client, ...), unwillingToPerform
 * (a parentless entry other than a suffix), post_read when asked.
 */
int backend_add(struct backend *be, struct backend_op *op, struct ber_view dn,
		struct ber_view ndn, const struct ldap_attribute *attributes, size_t n);

/* Delete a leaf. Result codes: success, noSuchObject with matchedDN,
 * notAllowedOnNonLeaf, assertionFailed; pre_read when asked. */
int backend_delete(struct backend *be, struct backend_op *op, struct ber_view ndn);

/*
 * Modify: every change applied on a copy, schema-checked as a whole, then
 * stored with its index differences, or nothing at all. Result codes:
 * success, noSuchObject with matchedDN, noSuchAttribute,
 * attributeOrValueExists, invalidAttributeSyntax, undefinedAttributeType,
 * constraintViolation (NO-USER-MODIFICATION, increment of a non-integer),
 * notAllowedOnRDN, objectClassViolation, objectClassModsProhibited,
 * assertionFailed; pre_read / post_read when asked.
 */
int backend_modify(struct backend *be, struct backend_op *op, struct ber_view ndn,
		   const struct ldap_change *changes, size_t n);

/*
 * ModifyDN: rename (new_rdn, user form, parsed here) and/or move below
 * new_superior (has_new_superior; normalized) the entry and its whole
 * subtree (one dn2id record rewritten; the new DN's user form takes the
 * superior's spelling as stored). Result
 * codes: success, noSuchObject with matchedDN (entry or new superior),
 * entryAlreadyExists, unwillingToPerform (below itself, or the suffix
 * entry), affectsMultipleDSAs (new superior outside this database),
 * invalidDNSyntax (new RDN), namingViolation, objectClassViolation,
 * assertionFailed; pre_read / post_read when asked.
 */
int backend_modrdn(struct backend *be, struct backend_op *op, struct ber_view ndn,
		   struct ber_view new_rdn, bool delete_old_rdn, bool has_new_superior,
		   struct ber_view new_superior_ndn);

/* ----------------------------------------------------- maintenance */

/* One inconsistency found by backend_check_indexes (text in its arena). */
typedef void (*backend_problem_fn)(void *ctx, const char *problem);

/*
 * Options and figures of the whole-database index passes below. Both read
 * id2entry once in ID order, keep every entry's keys in memory
 * (index_postings.h) and, whenever memory_limit is reached and at the end,
 * walk the index tables once in key order: a pass costs one decode per
 * entry plus one ordered walk of the tables per round, and the rounds are
 * few (the memory bound over the size of the postings, ~100 MiB per 100k
 * typical entries with 7 indexed attributes).
 */
#define BACKEND_INDEX_PASS_DEFAULT_MEMORY ((size_t)512 << 20)

struct backend_index_pass {
	/* inputs */
	size_t memory_limit;           /* bytes of postings per round; 0 = default */
	uint64_t max_reported;         /* check: problems passed to report; 0 = all */
	uint64_t *table_problems;      /* check: problems per index table (an array of
					* backend_index_count(be)), or NULL */
	/* outputs */
	uint64_t entries;              /* entries read */
	unsigned rounds;               /* walks of the index tables */
};

/*
 * Checks that the index tables and the tree agree with the stored
 * entries, in one read snapshot. What is checked, per index table, for
 * every key that the entries produce or the table holds:
 *  - a key stored as a list of IDs: every entry producing the key is
 *    listed ("missing"), and every listed ID is an entry that produces it
 *    ("extra": the ID does not exist, or its values lack the key);
 *  - a key stored as a range (index_table.h): every entry producing it
 *    lies inside the range (else "missing"); IDs inside the range that do
 *    not produce the key are not problems (a range is a superset by
 *    design), but a range under a key that no entry produces is "extra";
 *  - more than IDL_MAX_IDS entries produce a key stored as a list: one
 *    problem for the key (the list cannot hold them all);
 *  - a record that is not a 9-byte key with 8-byte IDs is "malformed".
 * And per entry: it decodes, and it has a name in dn2id. IDs listed for
 * an entry that does not decode are not reported again.
 * Calls report (may be NULL) for the first pass->max_reported problems
 * (all when 0 or pass is NULL), each naming the attribute, the key's
 * kind and hash, and the entry ID (and DN, when it exists), and counts
 * every problem in *problems. pass may be NULL (defaults).
 * Errors: LUMEN_ENOMEM, LUMEN_EIO.
 */
int backend_check_indexes_with(struct backend *be, struct backend_index_pass *pass,
			       backend_problem_fn report, void *ctx, uint64_t *problems);
/* backend_check_indexes_with with the defaults. */
int backend_check_indexes(struct backend *be, backend_problem_fn report, void *ctx,
			  uint64_t *problems);

/*
 * Which of settings' index specifications have no table in
 * settings->directory yet (an `index` line added after the data was
 * loaded): missing[i] is set for settings->indexes[i] ("default" and
 * repeated attributes included, never set for "default"). A read-only
 * backend_open fails on such a database; the tools check first. The
 * database must not be open in this process. Errors: those of
 * backend_open's store, LUMEN_EINVAL (unknown attribute type).
 */
/*
 * The attributes whose `index` line has no table in a database that already
 * holds entries (the line was added after loading). lumend does not create
 * such a table — an empty one would make indexed searches miss entries —
 * and searches them as unindexed until `lumenindex ATTR` builds it. Fills up
 * to max names and returns how many there are; tool mode reports none.
 */
size_t backend_unbuilt_indexes(const struct backend *be, const char **names, size_t max);

int backend_missing_index_tables(const struct schema *schema,
				 const struct backend_settings *settings, bool *missing,
				 char *errbuf, size_t errlen);

/*
 * Tool mode: empties the index tables of attributes[0..n) (type names or
 * OIDs; n == 0: every index table) and refills them from id2entry,
 * through the bulk loader's ordered writer. The writes go into the
 * load's large transactions, which commit as they fill: only a staging
 * copy (lumenindex's) makes a rebuild all-or-nothing. Other tables, the
 * tree and the entries are not written. pass may be NULL.
 * The refill reads id2entry from a snapshot held throughout, so LMDB
 * cannot reuse the emptied tables' pages meanwhile: the file grows by
 * about the size of the rebuilt tables (free pages, reused by later
 * writes; a compacting copy drops them).
 * Errors: LUMEN_EINVAL (not tool mode, or read-only), LUMEN_ENOTFOUND (an
 * attribute that is not indexed), LUMEN_EMALFORMED (an entry does not
 * decode), LUMEN_ENOMEM, LUMEN_EFULL, LUMEN_EIO, LUMEN_EPOISONED.
 */
int backend_reindex(struct backend *be, const char *const *attributes, size_t n,
		    struct backend_index_pass *pass);

/* Counters for cn=Monitor. */
struct backend_stats {
	uint64_t entry_cache_hits, entry_cache_misses, entry_cache_size;
	uint64_t idl_cache_hits, idl_cache_misses, idl_cache_size;
	uint64_t commits, writes;
	uint64_t entry_cache_evictions, entry_cache_capacity;
	uint64_t idl_cache_evictions, idl_cache_capacity;
	uint64_t entry_cache_not_admitted, idl_cache_not_admitted;
	/* entries read in part for a bind, compare or search, never cached */
	uint64_t partial_reads;
	/* stored normalized forms not trusted (another schema made them):
	 * every entry read from the map is normalized again */
	bool normalizing_on_read;
};
void backend_get_stats(struct backend *be, struct backend_stats *out);

/*
 * The backend's LMDB store, for the tools and tests that inspect it
 * directly (the server sees only the database interface). Borrowed; valid
 * until backend_close.
 */
struct mdb_store *backend_store(struct backend *be);

#endif
