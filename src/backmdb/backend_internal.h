/*
 * backend_internal.h — what the back-mdb operation files share (private to
 * src/backmdb; the public contract is include/backend.h).
 *
 * Layout: backend.c (open/close, routing, readers, result helpers),
 * entry_store.c (the one writer of entry + dn2id + index records),
 * index_keys.c (which index keys an entry produces), write_job.c (group
 * commit plumbing), operational.c, virtual_attrs.c (computed attributes
 * for filters and compare), candidates.c, search.c, search_alias.c
 * (dereferencing aliases for search), compare.c, add.c,
 * delete.c, modify.c, modrdn.c, index_check.c, referral.c (referral
 * objects: the referrals table, referral URLs, references).
 *
 * Memory: everything per operation comes from op->arena; readers and their
 * scratch ID lists belong to the backend's pool.
 * Thread-safety: a backend_reader is used by one thread at a time (taken
 * from and returned to the pool under reader_lock).
 */
#ifndef LUMEN_BACKEND_INTERNAL_H
#define LUMEN_BACKEND_INTERNAL_H

#include <lmdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "backend.h"
#include "dn2id.h"
#include "entry_cache.h"
#include "idl.h"
#include "idl_cache.h"
#include "index_table.h"
#include "mdb_store.h"
#include "write_batch.h"

/* Scratch ID lists per reader: search uses the first four, filters nest below. */
#define BACKEND_SCRATCH_IDLS 42
#define BACKEND_SCRATCH_CANDIDATES 0
#define BACKEND_SCRATCH_SCOPE 1
#define BACKEND_SCRATCH_REFERRALS 2         /* referral objects in the scope */
#define BACKEND_SCRATCH_BELOW_REFERRALS 3   /* entries below them */
#define BACKEND_SCRATCH_FIRST_FREE 4
/* Once the candidates are computed, alias dereferencing (search_alias.c)
 * reuses the filter's slots: the alias entries, one root's scope, and the
 * aliases already dereferenced. */
#define BACKEND_SCRATCH_ALIASES (BACKEND_SCRATCH_FIRST_FREE + 0)
#define BACKEND_SCRATCH_ALIAS_SCOPE (BACKEND_SCRATCH_FIRST_FREE + 1)
#define BACKEND_SCRATCH_ALIASES_DONE (BACKEND_SCRATCH_FIRST_FREE + 2)

/* One indexed attribute type: its kinds and table. */
#define BACKEND_MAX_UNBUILT 64

struct backend_index {
	const struct attribute_type *type;
	unsigned kinds;        /* enum backend_index_kind bits */
	MDB_dbi dbi;
	uint32_t table;        /* IDL cache table number (position in be->indexes) */
};

/* A reusable read transaction with its scratch (see backend.h Memory). */
struct backend_reader {
	struct mdb_reader reader;
	struct idl scratch[BACKEND_SCRATCH_IDLS];
	struct arena entry_arena;      /* per-candidate temporaries, reset per entry */
	/* A large search (BACKEND_SCAN_IDS): its misses enter the entry cache
	 * only where a position is free (entry_cache_insert_scan). */
	bool scan;
	struct backend_reader *next;   /* pool link */
};

/* Attribute descriptions of the operational attributes the backend keeps. */
struct backend_operational {
	struct attribute_description object_class, entry_uuid, entry_csn, create_timestamp,
		modify_timestamp, creators_name, modifiers_name, structural_object_class;
};

struct backend {
	const struct schema *schema;
	/* RFC 3296's referral class and ref type; NULL when the schema lacks
	 * them (then no entry is a referral object). */
	const struct object_class *referral_class;
	const struct attribute_type *ref_type;
	struct mdb_store *store;
	char *name;
	struct ber_view suffix_ndn[BACKEND_MAX_SUFFIXES];
	struct ber_view suffix_dn[BACKEND_MAX_SUFFIXES];
	size_t n_suffixes;
	/* One suffix and at most one entry without a parent when opened: then
	 * every entry lies below the suffix entry, and stays so (a parentless
	 * entry must be the suffix). A subtree search at the suffix needs no
	 * scope check. */
	bool suffix_holds_all;
	/* The normalized forms entry records store were made under this
	 * schema's rules (stored_forms.h): reads take them. */
	bool trust_normalized;
	struct backend_index *indexes;
	size_t n_indexes;
	struct backend_index **index_by_type;   /* schema type index → index or NULL */
	/* Configured but never built (no table while entries exist): searched
	 * as unindexed until lumenindex builds them. */
	struct backend_unbuilt {
		const struct attribute_type *type;
		unsigned kinds;             /* backend_index_kind bits not built */
	} unbuilt[BACKEND_MAX_UNBUILT];
	size_t n_unbuilt;
	size_t n_types;
	struct entry_cache *entry_cache;
	struct idl_cache *idl_cache;
	struct write_batch *batch;              /* NULL in tool / read-only mode */
	struct write_bulk bulk;                 /* tool mode */
	bool tool_mode, read_only;
	pthread_mutex_t reader_lock;
	struct backend_reader *free_readers;
	/* The newest commit whose parked snapshots were ended: the requests
	 * of one batch share a commit, and the first ends them. */
	atomic_uint_fast64_t readers_ended_txn;
	struct backend_operational ops;
	/* RFC 4512 §2.6, from the schema; NULL when it lacks them (no aliases). */
	const struct object_class *alias_class;
	const struct attribute_type *aliased_object_name;
	pthread_mutex_t csn_lock;
	uint64_t last_csn_usec;
	unsigned csn_count;
	unsigned server_id;                     /* the sid field of the CSNs stamped */
	uint64_t cookie_secret;
	uint64_t writes;
	/*
	 * The write transaction of the latest ModifyDN (0: none since open),
	 * stored before it commits. A cached entry's DN can only have gone
	 * stale through a rename above it, so while this is not newer than
	 * both the reader's snapshot and the cached copy, the copy's DN is
	 * current and the per-hit dn2id walk is skipped (backend_entry_get).
	 */
	atomic_uint_fast64_t dn_moved_txn;
};

/* ------------------------------------------------------ backend.c */

/* A reader from the pool with its snapshot begun (the one it was parked
 * with if nothing was committed since). Errors: LUMEN_ENOMEM,
 * LUMEN_ELIMIT, LUMEN_EIO. */
int backend_reader_acquire(struct backend *be, struct backend_reader **out);
/* Returns the reader to the pool, its snapshot parked (mdb_reader_park) for
 * the next operation. NULL is fine. */
void backend_reader_release(struct backend *be, struct backend_reader *rd);
/* Ends the pool's parked snapshots older than txnid, so they pin nothing
 * a later write could reuse: called once txnid is committed (by each
 * request of the batch; the first does the work). */
void backend_readers_committed(struct backend *be, uint64_t txnid);

/* Sets op's result to code with a static or arena diagnostic. */
void backend_result(struct backend_op *op, int code, const char *diagnostic);
/* Maps an internal failure to LDAP_OTHER/LDAP_BUSY with a diagnostic; returns err. */
int backend_fail(struct backend *be, struct backend_op *op, int err);
/*
 * noSuchObject with matchedDN = user form of the closest ancestor in m.
 * Returns LUMEN_ENOTFOUND (or a storage error from naming the ancestor).
 */
int backend_no_such_object(struct backend *be, struct backend_op *op, MDB_txn *txn,
			   const struct dn2id_match *m);
/* The index of type, or NULL when not indexed. */
const struct backend_index *backend_index_of(const struct backend *be,
					     const struct attribute_type *type);
/* True if ndn is one of the backend's suffixes. */
bool backend_is_suffix(const struct backend *be, struct ber_view ndn);
/* Relaxed read of op->abandoned. */
bool backend_op_abandoned(const struct backend_op *op);

/*
 * The entry id decoded from txn, with its current DN from dn2id (caller
 * frees). Errors: LUMEN_ENOTFOUND, LUMEN_EMALFORMED, LUMEN_ENOMEM, LUMEN_EIO.
 */
int backend_load_entry(struct backend *be, MDB_txn *txn, uint64_t id, struct arena *scratch,
		       struct entry **out);
/*
 * The entry id for a reader: from the entry cache, else decoded and
 * cached (for a scanning reader, only into a free position). *entry is
 * valid until backend_entry_put(*handle). Its DN is the current one.
 * Errors: as backend_load_entry.
 */
int backend_entry_get(struct backend *be, struct backend_reader *rd, uint64_t id,
		      struct arena *scratch, struct entry_cache_handle **handle,
		      const struct entry **entry);
/*
 * backend_entry_get for a reader that looks only at the types `only`
 * selects (NULL: every attribute, as backend_entry_get): an entry the
 * cache holds is handed as it is; one it would not keep is decoded with
 * those types alone (entry_decode_selected) and never cached.
 */
int backend_entry_get_selected(struct backend *be, struct backend_reader *rd, uint64_t id,
			       const struct entry_selection *only, struct arena *scratch,
			       struct entry_cache_handle **handle, const struct entry **entry);
void backend_entry_put(struct backend *be, struct entry_cache_handle *handle);

/* ---------------------------------------------------- index_keys.c */

struct index_key_set {
	struct index_key *keys;   /* sorted, unique */
	size_t n;
};

/*
 * The keys entry e produces in index ix (every kind it is configured for),
 * sorted and unique, in arena memory. e may be NULL (no keys).
 * Errors: LUMEN_ENOMEM.
 */
int index_keys_of_entry(const struct backend *be, const struct backend_index *ix,
			const struct entry *e, struct arena *arena, struct index_key_set *out);
/* True if the equality rule's approx form is the phonetic key (filter.h). */
bool index_approx_uses_key(const struct attribute_type *type);

/* ------------------------------------------------------- referral.c */

/*
 * Referral objects (RFC 3296): entries of class referral whose ref
 * values name where their subtree really lives. Without ManageDsaIT an
 * operation whose target is at or below one is answered with a referral
 * (10) to its URLs, and a search that meets one in its scope sends a
 * SearchResultReference instead of it and of what lies below it.
 *
 * The store's referrals table lists their IDs, written with the entry in
 * the same transaction, so the common database without one finds that
 * out from one lookup and pays nothing else.
 */

/* Positive: the operation's LDAP answer is set (a referral); callers
 * stop and report LUMEN_OK. */
#define BACKEND_ANSWERED 1

/* True if e is of class referral. */
bool referral_entry_is(const struct backend *be, const struct entry *e);
/* Keeps the referrals table in step with entry id changing from before
 * to after (NULL: added / deleted). Errors: LUMEN_EFULL, LUMEN_EIO. */
int referral_note_change(struct backend *be, MDB_txn *txn, uint64_t id,
			 const struct entry *before, const struct entry *after);
/* Lists id among the referral objects (is) or takes it off. Errors as
 * referral_note_change. */
int referral_list(struct backend *be, MDB_txn *txn, uint64_t id, bool is);
/* The nearest referral object at or above id (*ref_id 0: none; id 0:
 * none). Errors: LUMEN_EIO. */
int referral_above(struct backend *be, MDB_txn *txn, uint64_t id, uint64_t *ref_id);
/*
 * op's result: referral (10) to the URLs of referral object ref_id with
 * the DN of target_dn (user form; empty: target_ndn) and, scope not
 * LDAP_URL_SCOPE_ABSENT, the scope; matchedDN the object's DN. When no
 * URL is left (none is usable), noSuchObject with that matchedDN, as
 * slapd. Returns BACKEND_ANSWERED, or a storage error.
 */
int referral_answer(struct backend *be, struct backend_op *op, MDB_txn *txn, uint64_t ref_id,
		    struct ber_view target_dn, struct ber_view target_ndn, int scope);
/*
 * The target ndn of a non-search operation, found (id set) or not (m the
 * closest ancestor): when it is at or below a referral object, answer
 * with referral_answer (no scope) and return BACKEND_ANSWERED; else
 * LUMEN_OK. With ManageDsaIT an existing target is itself, while a
 * missing one below a referral object is still referred (as slapd: what
 * is not here lives where the URLs say). Storage errors as they come.
 */
int referral_check_target(struct backend *be, struct backend_op *op, MDB_txn *txn,
			  uint64_t id, const struct dn2id_match *m, struct ber_view ndn);
/*
 * The referral objects in the scope of a subtree or one-level search from
 * base_id into refs (not base_id itself: the base was checked), and the
 * entries below them into below (empty when they have none, the normal
 * case). Errors: LUMEN_ENOMEM, LUMEN_EIO.
 */
int referral_scope(struct backend *be, MDB_txn *txn, uint64_t base_id, enum ldap_scope scope,
		   struct idl *refs, struct idl *below);
/*
 * The continuation reference URLs of referral object e for a search of
 * scope (RFC 4511 §4.5.3: the object's DN when a URL has none; sub, or
 * base for a one-level search, when it names no scope), in arena.
 * *n may be 0 (no usable URL). Errors: LUMEN_ENOMEM.
 */
int referral_continuation(const struct backend *be, const struct entry *e,
			  enum ldap_scope scope, struct arena *arena, char ***urls, size_t *n);

/* ---------------------------------------------------- entry_store.c */

/* Keys of one index table a write touched, for IDL cache invalidation. */
struct index_touch {
	uint32_t table;
	struct index_key *keys;
	size_t n;
};

/*
 * What a write changed, to invalidate after its commit (arena memory,
 * grown as a write hook changes more entries in the same transaction).
 */
struct write_changes {
	struct index_touch *touched;   /* up to two rows per table and entry */
	size_t n_touched, cap_touched;
	uint64_t *ids;                 /* entries whose cached copy is now stale */
	size_t n_ids, cap_ids;
};

/*
 * Stores new entry e below parent_id (0: a suffix entry): a fresh ID,
 * dn2id, id2entry and every index. Errors: LUMEN_EEXIST (DN taken),
 * LUMEN_ENOTFOUND (parent), LUMEN_ENOMEM, LUMEN_EFULL, LUMEN_EIO.
 */
int entry_store_add(struct backend *be, MDB_txn *txn, uint64_t parent_id,
		    const struct entry *e, struct arena *arena, struct write_changes *changes,
		    uint64_t *id_out);
/*
 * Rewrites entry id from before to after: id2entry and the index keys that
 * differ. dn2id is the caller's (modrdn moves it first).
 * Errors: LUMEN_ENOMEM, LUMEN_EFULL, LUMEN_EIO.
 */
int entry_store_replace(struct backend *be, MDB_txn *txn, uint64_t id,
			const struct entry *before, const struct entry *after,
			struct arena *arena, struct write_changes *changes);
/* Removes leaf id holding e. Errors: LUMEN_EBUSY (has children),
 * LUMEN_ENOTFOUND, LUMEN_ENOMEM, LUMEN_EFULL, LUMEN_EIO. */
int entry_store_delete(struct backend *be, MDB_txn *txn, uint64_t id, const struct entry *e,
		       struct arena *arena, struct write_changes *changes);
/* Invalidates the caches for changes made by commit txnid. */
void write_changes_invalidate(struct backend *be, const struct write_changes *changes,
			      uint64_t txnid);

/* ------------------------------------------------------ write_job.c */

struct write_job;
typedef int (*write_job_fn)(struct write_job *job, MDB_txn *txn);

struct write_job {
	struct backend *be;
	struct backend_op *op;
	write_job_fn apply;
	void *arg;                     /* the operation's own state */
	struct write_changes changes;
	bool decided;                  /* apply set op's LDAP result itself */
	char newest_csn[CSN_LENGTH + 1];  /* of the changes so far ("": none) */
	/* Every change so far, for the hook's on_commit (op->arena; kept
	 * only when the hook has on_commit). */
	struct database_change *notes;
	size_t n_notes, cap_notes;
};

/*
 * Runs job->apply in a write transaction (group commit, or bulk in tool
 * mode), waits for durability, invalidates caches and sets op's result:
 * success, the code apply decided, or the mapped failure. Frees op's
 * pre/post-read entries when the write did not commit.
 * Returns LUMEN_OK when an LDAP answer is set (also an LDAP error), else
 * the internal error.
 */
int write_job_run(struct write_job *job);
/* In apply: decide an LDAP error result; returns err (non-OK) so the txn aborts. */
int write_job_refuse(struct write_job *job, int err, int code, const char *diagnostic);
/* In apply: referral_check_target for the target ndn (id 0: missing, m
 * its closest ancestor); when it answered, the referral is decided and
 * LUMEN_EINVAL returned. */
int write_job_referral(struct write_job *job, MDB_txn *txn, uint64_t id,
		       const struct dn2id_match *m, struct ber_view ndn);
/* In apply: LDAP noSuchObject with matchedDN; returns LUMEN_ENOTFOUND. */
int write_job_no_such_object(struct write_job *job, MDB_txn *txn, const struct dn2id_match *m);
/* In apply: evaluate op->assertion on e (under op->filter_access); non-OK
 * (assertionFailed, or adminLimitExceeded when it could not be evaluated,
 * decided) if not TRUE. */
int write_job_check_assertion(struct write_job *job, const struct entry *e);
/*
 * In apply: the entry named ndn (caller frees) and its ID, after the
 * assertion control passed. noSuchObject / assertionFailed are decided.
 * Errors: LUMEN_ENOTFOUND, LUMEN_EINVAL (assertion), as backend_load_entry.
 */
int write_job_load_target(struct write_job *job, MDB_txn *txn, struct ber_view ndn,
			  uint64_t *id, struct entry **out);
/*
 * In apply, once the target is loaded and before anything of the change is
 * stored: the operation's write_check (database.h), if any, with the entry
 * as the transaction holds it (before; for an add, the new entry as after).
 * Errors: the check's (an LDAP refusal is decided).
 */
int write_job_check(struct write_job *job, MDB_txn *txn, enum database_write_kind kind,
		    const struct entry *before, const struct entry *after);
/*
 * In apply, after the change is stored: the operation's write hook
 * (database.h), if any, with the entry before and after. Errors: the
 * hook's (an LDAP refusal is decided).
 */
int write_job_notify(struct write_job *job, MDB_txn *txn, enum database_write_kind kind,
		     const struct entry *before, const struct entry *after);
/* After the commit: the hook's on_commit with the job's notes, if any. */
void write_job_committed(struct write_job *job);
/* In apply: copies e into op->pre_read / op->post_read when asked. LUMEN_ENOMEM. */
int write_job_pre_read(struct write_job *job, const struct entry *e);
int write_job_post_read(struct write_job *job, const struct entry *e);
/*
 * In apply, the end of a change to entry id (modify, modrdn): the entry
 * stored (entry_store_replace), the write hook told (write_job_notify),
 * the Post-Read copy taken. Errors: theirs.
 */
int write_job_replace(struct write_job *job, MDB_txn *txn, uint64_t id,
		      enum database_write_kind kind, const struct entry *before,
		      const struct entry *after);

/* ---------------------------------------------------- operational.c */

/* Adds entryUUID, entryCSN, timestamps, creators/modifiersName and
 * structuralObjectClass to a new entry (keeping supplied ones when
 * from_tool). Errors: LUMEN_ENOMEM, LUMEN_EIO (no randomness). */
int operational_on_add(struct backend *be, const struct backend_op *op, struct entry *e);
/* Replaces modifyTimestamp, modifiersName and entryCSN. Errors: LUMEN_ENOMEM. */
int operational_on_modify(struct backend *be, const struct backend_op *op, struct entry *e);
/*
 * On the committer, right before an add is stored: a fresh entryCSN and
 * timestamps, so that CSNs grow in commit order (replication hands out
 * "everything after CSN x"; an add stamped on its submitter's thread could
 * commit after a newer CSN). Not for the tools' loads. Errors as above.
 */
int operational_restamp_add(struct backend *be, const struct backend_op *op, struct entry *e);
/* A CSN for a change that stores no entry (a delete). */
void operational_new_csn(struct backend *be, char out[CSN_LENGTH + 1]);

/*
 * Evaluate f on e for op: op->filter_access, the computed attributes of
 * virt (may be NULL), normalizations into scratch. LUMEN_ENOMEM when the
 * scratch ran out (filter_test): the caller answers with
 * backend_filter_exhausted, never with a non-match. *match is true only
 * for FILTER_TRUE.
 */
int backend_filter_matches(const struct backend_op *op, const struct filter *f,
			   const struct entry *e, const struct filter_virtual *virt,
			   struct arena *scratch, bool *match);
/* The answer to a filter that could not be evaluated: adminLimitExceeded
 * with a diagnostic; returns LUMEN_ELIMIT. */
int backend_filter_exhausted(struct backend_op *op);

/* -------------------------------------------------- virtual_attrs.c */

/*
 * entryDN, subschemaSubentry, hasSubordinates and numSubordinates for
 * filters and compare (filter.h struct filter_virtual). Set one up per
 * filter (or compared type); then set `id` to the entry's ID before each
 * evaluation, since the counts come from dn2id in rd's snapshot. Values
 * go into the arena given at set-up. Lives on the caller's stack.
 */
#define BACKEND_VIRTUAL_TYPES 4

struct backend_virtual {
	struct filter_virtual provider;
	const struct attribute_type *types[BACKEND_VIRTUAL_TYPES];
	struct backend *be;
	struct backend_reader *rd;
	uint64_t id;                   /* the entry being tested */
};

/* True if type is one of the computed attributes (never stored or indexed). */
bool backend_virtual_type(const struct attribute_type *type);
/*
 * The provider for the computed types f names (f may be NULL), or NULL
 * when it names none: the common filter is evaluated without one.
 */
const struct filter_virtual *backend_virtual_for_filter(struct backend_virtual *bv,
							struct backend *be,
							struct backend_reader *rd,
							const struct filter *f,
							struct arena *arena);
/* The provider for one type (compare), or NULL when it is not computed. */
const struct filter_virtual *backend_virtual_for_type(struct backend_virtual *bv,
						      struct backend *be,
						      struct backend_reader *rd,
						      const struct attribute_type *type,
						      struct arena *arena);

/* ----------------------------------------------------- candidates.c */

struct candidates_note {
	bool unindexed;
	const char *attribute;    /* first unindexed item's type, or NULL */
};

/*
 * The IDs that may match filter f (a superset), into out; [1, max] range
 * means "no information: walk the scope". Scratch IDLs of rd from index
 * `depth` on are used. Errors: LUMEN_ENOMEM, LUMEN_EIO.
 */
int candidates_compute(struct backend *be, struct backend_reader *rd, const struct filter *f,
		       struct arena *arena, struct idl *out, struct candidates_note *note);
/*
 * The entries of object class oc (subclasses included, as the index keys
 * them) from the objectClass equality index, through the IDL cache; "all"
 * when objectClass has no equality index. Errors: LUMEN_ENOMEM, LUMEN_EIO.
 */
int candidates_object_class(struct backend *be, struct backend_reader *rd,
			    const struct object_class *oc, struct idl *out);

/* ---------------------------------------------------- search_alias.c */

/*
 * Alias dereferencing for search (RFC 4511 §4.5.1.3, RFC 4512 §2.6), as
 * OpenLDAP's back-mdb does it, within the bounds of backend.h.
 */

/*
 * What a derefInSearching search covers when its scope holds aliases:
 * subtree (and children) scope: the subtrees of roots[0..n) (roots[0] is
 * the base); one-level: the base's children plus the targets roots[0..n).
 * Alias entries other than the base are never returned themselves.
 */
struct alias_scope {
	bool active;                   /* false: no alias in scope, search as usual */
	enum ldap_scope scope;
	uint64_t base_id;
	uint64_t *roots;               /* op->arena */
	size_t n_roots;
};

/*
 * Finds the search base, dereferencing (derefFindingBaseObj) an alias that
 * is the base or one of its ancestors: *base_id is a non-alias entry.
 * LDAP answers decided in op, returned as LUMEN_ENOTFOUND: noSuchObject
 * with matchedDN; aliasProblem with the alias as matchedDN (a dangling or
 * circular alias); aliasDereferencingProblem (a chain longer than
 * BACKEND_ALIAS_MAX_CHAIN). Errors: as backend_entry_get, LUMEN_ENOMEM.
 */
int alias_find_base(struct backend *be, struct backend_reader *rd, struct backend_op *op,
		    struct ber_view ndn, uint64_t *base_id);
/*
 * Fills as for a one-level or subtree search from base_id that
 * dereferences aliases while searching. Costs one objectClass index
 * lookup when the database has no alias. Dangling and circular aliases in
 * scope are passed over, as in OpenLDAP. LDAP answers decided in op and
 * returned as LUMEN_ELIMIT: adminLimitExceeded (more than
 * BACKEND_ALIAS_MAX_PER_SEARCH aliases), timeLimitExceeded. Errors: LUMEN_ENOMEM,
 * LUMEN_EIO.
 */
int alias_scope_plan(struct backend *be, struct backend_reader *rd, struct backend_op *op,
		     const struct database_clock *clock, struct alias_scope *as);
/* The IDs as covers (may degrade to a range). Errors: LUMEN_EIO. */
int alias_scope_ids(struct backend *be, struct backend_reader *rd,
		    const struct alias_scope *as, struct idl *out);
/* 1 if id is in as's scope, 0 if not, or an error. */
int alias_in_scope(struct backend *be, struct backend_reader *rd,
		   const struct alias_scope *as, uint64_t id);
/* True if e (entry id) is an alias that the search replaces by its target. */
bool alias_entry_passed_over(const struct backend *be, const struct alias_scope *as,
			     uint64_t id, const struct entry *e);

#endif
