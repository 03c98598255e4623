/*
 * database.h — the database interface: one table of operations that the
 * server calls without knowing which database answers (back-mdb, the
 * in-memory databases of memdb.h; the overlay chain next), and the types the
 * operations take (the interface layer, between model and back-mdb).
 *
 * A struct database is an implementation's handle with its table of
 * operations; database_* below dispatch through it. back-mdb's
 * mdb_database_open (backend.h) makes one per `database mdb`. An overlay
 * is a database whose operations act and then call the database it wraps.
 *
 * Results: every operation fills op->result_code (an LDAP result code),
 * op->diagnostic and op->matched_dn, whatever it returns, so the server
 * always just sends them. The return value is LUMEN_OK when the operation
 * ran to an LDAP answer (success or an LDAP error such as noSuchObject),
 * or a negative lumen_err for an internal failure (then result_code is
 * LDAP_OTHER, or LDAP_BUSY while stopping, and the diagnostic says why).
 * Each operation's result codes are listed at backend.h's back-mdb
 * functions, which every implementation follows.
 *
 * Memory: outputs (diagnostic, matched_dn, info->dn, cookies) live in
 * op->arena or are static; entries passed to a sink are borrowed for the
 * call; pre/post-read entries are the caller's (entry_free). close frees
 * the database and everything it owns.
 *
 * Thread-safety: every operation may be called from any number of threads
 * at once; close only when no operation runs.
 *
 * Caveats:
 *  - A search whose sink answers BACKEND_SINK_PAUSE returns with
 *    search->paused set and no result: call it again with search->resume.
 *  - figures never blocks on writers and may be called from any thread
 *    (cn=Monitor, /metrics).
 */
#ifndef LUMEN_DATABASE_H
#define LUMEN_DATABASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "arena.h"
#include "ber.h"
#include "entry.h"
#include "filter.h"
#include "ldap_message.h"
#include "ldap_sync.h"
#include "lumen_error.h"
#include "sync_cookie.h"

/* Bytes an overlay may keep in a paused search (backend_search_resume). */
#define DATABASE_OVERLAY_STATE_SIZE 168

/* Bytes of a paged-results position a database issues (search->next_cookie). */
#define BACKEND_COOKIE_SIZE 25

/* Kinds of search work, for backend_op.mark. */
enum backend_stage {
	BACKEND_STAGE_CANDIDATES,      /* base lookup, dn2id and index lookups */
	BACKEND_STAGE_ENTRIES,         /* reading entries (cache or LMDB), scope checks */
	BACKEND_STAGE_FILTER,          /* filter evaluation */
};

/*
 * Per-operation context: filled by the server before the call, outputs
 * filled by the backend. Zero-initialize it and set what applies.
 */
struct database_write_hook;

/* The cleartexts of a Password Modify (backend_op.password_change). */
struct backend_password_change {
	bool has_old;
	struct ber_view old_password;
	struct ber_view new_password;
};

struct backend_op {
	/* --- inputs --- */
	struct arena *arena;           /* per-operation scratch; outputs live here */
	struct ber_view requester_ndn; /* normalized bind DN; empty = anonymous */
	bool is_root;                  /* the database's rootdn: no configured limits */
	/*
	 * Limits already combined by the server (the request's and the
	 * configuration's, the lower wins): entries and seconds; 0 (or
	 * negative) = unlimited. For is_root the backend ignores them and
	 * applies request_size_limit / request_time_limit instead.
	 */
	long size_limit;
	long time_limit;
	/*
	 * The limits the client put in the SearchRequest alone (0 = none).
	 * They bind the rootdn too (RFC 4511 §4.5.1.5: the rootdn escapes only
	 * the configured limits), so the server sets them for every search.
	 */
	long request_size_limit;
	long request_time_limit;
	/* fetch: fill num/hasSubordinates in the entry's info (a read of the
	 * tree per entry, so only when the attributes asked for need them) */
	bool fetch_counts;
	/*
	 * fetch and compare: the attribute types (with their subtypes) the
	 * caller will look at; NULL: all of them. An entry the entry cache
	 * neither holds nor would keep is then decoded with those alone
	 * (entry_decode_selected), sparing a bind or a compare the decoding
	 * of the rest. Set it only when nothing else reads the entry (no
	 * access rule with filter=, no copy kept); the assertion control makes
	 * a Compare read the whole entry anyway. A Compare uses it only when
	 * it names the asserted type alone.
	 */
	const struct entry_selection *fetch_only;
	/* The requester's access rules test attribute values (filter=): a
	 * decision on an entry short of them (a DN alone) would be wrong. */
	bool access_tests_values;
	/* Set (by another thread) when the operation is abandoned or the
	 * connection closes; read with a relaxed atomic load. May be NULL. */
	const bool *abandoned;
	/* Controls. assertion: RFC 4528, compiled by the server; tested on the
	 * target entry before any change (search: the base entry). */
	const struct filter *assertion;
	/*
	 * Access control on the values the backend tests for the requester
	 * (NULL: none, e.g. the rootdn): filter_access for the search filter
	 * and the assertion control (filter.h: begin once per entry, then
	 * may_test per attribute actually tested; a search calls begin on an
	 * entry right before handing it to the sink), compare_access for the
	 * values a Compare tests (a type it denies makes the Compare answer
	 * insufficientAccessRights unless an allowed value matched).
	 */
	const struct filter_access *filter_access;
	const struct filter_access *compare_access;
	/* RFC 4533: the search's Sync Request (NULL: none); syncprov answers it. */
	const struct ldap_sync_request *sync;
	bool want_pre_read;            /* RFC 4527: fill pre_read */
	bool want_post_read;           /* RFC 4527: fill post_read */
	/* RFC 3296 ManageDsaIT: referral objects are ordinary entries. Without
	 * it an operation whose target is at or below one gets a referral
	 * (result_code LDAP_REFERRAL, referrals, matched_dn: the object), and
	 * a search sends a reference for each one in its scope (reference
	 * below). Consumer writes (replica) act as if it were set. */
	bool manage_dsa_it;
	/* The target DN as the client spelled it (a search's base), for the
	 * URLs of a referral; empty: the normalized DN is used. */
	struct ber_view target_dn;
	/* Tools path (bulk load), and an overlay's internal writes (ppolicy's
	 * lockout state, lastbind's authTimestamp): NO-USER-MODIFICATION
	 * attributes supplied by the caller are kept instead of refused;
	 * missing ones are generated. Overlays pass such writes through. */
	bool from_tool;
	/* A replication consumer's write (syncrepl; set with from_tool): the
	 * entry is to hold what the provider sent, so a modify or modrdn
	 * stamps nothing (entryCSN, modifyTimestamp and modifiersName stay
	 * as the change leaves them). */
	bool replica;
	/* The Password Policy request control (draft-behera) was sent. */
	bool want_password_policy;
	/*
	 * The requester bound with a password it must change (ppolicy's
	 * pwdMustChange after a reset): a password policy refuses it anything
	 * else. Output: password_change_done, set when this operation changed
	 * the password, so that the server lifts the restriction.
	 */
	bool password_change_only;
	bool password_change_done;
	/*
	 * Set by the Password Modify extended operation on the modify that
	 * stores the new (already hashed) value: the cleartexts it was given,
	 * for a password policy's checks. NULL on every other operation.
	 */
	const struct backend_password_change *password_change;
	/*
	 * Write hook (the overlay chain's): called inside the write's
	 * transaction after every change the database makes for this
	 * operation, including the changes a hook itself makes through the
	 * transaction handle (see "Write hooks" below). NULL: none.
	 */
	const struct database_write_hook *write_hook;
	/*
	 * The requester's rights on the write, decided again on what the
	 * write's transaction holds (NULL: none): its on_write is called once,
	 * inside the transaction, when the target is loaded and before
	 * anything of the change is made, with depth 0, before (the entry as
	 * the transaction holds it; NULL for an add) and, for an add alone,
	 * after (the new entry); the transaction handle reads what the change
	 * has not touched yet. It refuses as on_write does (op->result_code,
	 * LUMEN_EINVAL). The server decides on a read snapshot before the
	 * call; a change that commits in between (a value a filter= rule
	 * tests, a group's members) may turn that verdict, and this one is the
	 * one that counts. on_commit is not called.
	 */
	const struct database_write_hook *write_check;
	/*
	 * A write that is part of a group (RFC 5805 transaction, see
	 * database_group_begin): applied inside the group's transaction and
	 * durable only when the group commits. NULL: a write of its own.
	 */
	struct database_group *group;

	/* --- outputs --- */
	int result_code;               /* enum ldap_result_code */
	const char *diagnostic;        /* static or arena text; NULL = none */
	struct ber_view matched_dn;    /* user form, arena; empty = none */
	/* result_code LDAP_REFERRAL: the URLs (NUL-terminated, arena). */
	char **referrals;
	size_t n_referrals;
	struct entry *pre_read;        /* caller frees (entry_free); NULL = none */
	struct entry *post_read;       /* caller frees (entry_free); NULL = none */
	/* Search: an item could not use an index and the scope was walked. */
	bool unindexed;
	const char *unindexed_attribute; /* schema-owned name, or NULL */
	uint64_t entries_sent;         /* search: sink calls that returned 0 */
	uint64_t candidates_tested;    /* search: entries read and tested */
	/* A write: the newest CSN it stamped, its own change's and those of
	 * the changes its write hook made ("" when it changed nothing). */
	char change_csn[CSN_LENGTH + 1];
	/* Controls for the response, added by overlays (arena memory). */
	struct ldap_control *response_controls;
	size_t n_response_controls;

	/*
	 * Search timing (optional input): when mark is set the backend calls
	 * it as it moves from one kind of work to the next, and the server
	 * charges the time since its previous mark to that stage, so the
	 * stages always add up to the operation's time. The sink's own work
	 * falls between two marks and is the server's to mark.
	 */
	void (*mark)(void *mark_ctx, enum backend_stage stage);
	void *mark_ctx;

	/*
	 * Waiting (optional input): a write (and a group's owner, see
	 * database_group_begin) calls wait(wait_ctx, true) right
	 * before it waits for its change to be applied and durable (group
	 * commit: the committer thread applies it with others' and syncs them
	 * once), and wait(wait_ctx, false) when it goes on, so the caller's
	 * thread pool can run something else meanwhile. One function for both
	 * ends, so that a copy cannot carry one without the other. Called on
	 * the operation's thread with no lock held; an overlay's own write
	 * made for an operation (its state on a bind) passes the operation's
	 * on. NULL: none.
	 */
	void (*wait)(void *wait_ctx, bool waiting);
	void *wait_ctx;
};

/* What the sink learns about each entry beyond its attributes. */
struct backend_entry_info {
	uint64_t id;
	struct ber_view dn;            /* current user-form DN (== e->dn) */
	struct ber_view ndn;           /* current normalized DN (== e->ndn) */
	bool has_counts;               /* the search asked for want_counts */
	uint64_t num_subordinates;     /* children */
	bool has_subordinates;
	/* The entry holds every attribute it has: the server computes none
	 * for it (entry_send.h; the root DSE of memdb.h). */
	bool complete;
	/* Set by an overlay that wraps the sink (syncprov): controls for this
	 * entry's SearchResultEntry (arena or static memory), and dn_only to
	 * send the DN with no attribute (RFC 4533's present state). */
	const struct ldap_control *controls;
	size_t n_controls;
	bool dn_only;
	/* The search's filter was just tested on this very entry, through
	 * backend_op.filter_access: what its begin hook set up for the entry
	 * still holds. False for every other way an entry reaches a sink
	 * (fetches, references, changes pushed, entries a filter never saw). */
	bool filter_tested;
};

/*
 * Receives each entry (borrowed: valid during the call). Return 0 to go
 * on; BACKEND_SINK_SKIPPED to go on when the entry was not returned (the
 * server's access control refused it): it then does not count toward the
 * page size or the size limit; BACKEND_SINK_PAUSE: the entry was taken,
 * but the client must catch up before more are produced (the search
 * pauses, see Caveats); anything else stops the search (client gone,
 * abandoned): the search then ends with LDAP_OTHER "search stopped" unless
 * the server overrides it.
 */
#define BACKEND_SINK_SKIPPED 2
#define BACKEND_SINK_PAUSE 3
typedef int (*backend_entry_fn)(void *ctx, const struct entry *e,
				const struct backend_entry_info *info);
/*
 * Receives a referral object met in a search's scope without ManageDsaIT
 * (entry borrowed for the call) with its continuation URLs (RFC 4511
 * §4.5.3, arena memory); neither it nor anything below it goes to the
 * entry sink, whatever the filter. Returns as a sink does; references
 * count toward no limit.
 */
typedef int (*backend_reference_fn)(void *ctx, const struct entry *e, char *const *urls,
				    size_t n);

/*
 * Where a paused search stands (opaque to the caller, who keeps it
 * between the calls; zero-initialized = a new search).
 */
struct backend_search_resume {
	bool active;                   /* continue a paused search */
	uint64_t after_id;             /* the last entry ID handed to the sink */
	uint64_t sent;                 /* entries sent by the earlier calls */
	bool has_deadline;             /* the time limit's deadline (monotonic) */
	struct timespec deadline;
	/* Kept for the overlays between the calls of one search (syncprov:
	 * the CSN its cookie will carry). Zero on the first call. */
	uint8_t overlay_state[DATABASE_OVERLAY_STATE_SIZE];
};

/*
 * A search that stays outstanding after its results (RFC 4533's
 * refreshAndPersist, answered by syncprov). The database (an overlay)
 * makes the handle on the search's first call and sets search->persist;
 * from then on the server keeps it with the operation, gives it back on
 * every later call, and calls release exactly once when the operation
 * ends, however it ends (its result sent, Abandon, Unbind, the connection
 * closed), with no lock of the server held. After release the database
 * never calls the search's wake again.
 */
struct backend_persist {
	void (*release)(struct backend_persist *p);
};

struct backend_search {
	/* inputs */
	struct ber_view base_ndn;
	enum ldap_scope scope;
	enum ldap_deref deref;         /* derefAliases (RFC 4511 §4.5.1.3) */
	const struct filter *filter;   /* compiled; NULL = (objectClass=*) */
	bool want_counts;              /* fill num/hasSubordinates in info */
	/*
	 * The attribute types (with their subtypes) the filter and the sink
	 * look at; NULL: all of them. A candidate the entry cache neither
	 * holds nor would keep is then decoded with those alone, as for
	 * backend_op.fetch_only. It must hold objectClass (aliases are told
	 * by it); referral objects are read whole. Overlays that wrap the
	 * sink to read more must clear it.
	 */
	const struct entry_selection *fetch_only;
	backend_entry_fn sink;
	void *sink_ctx;
	/* Referral objects in the scope; NULL: passed over in silence, with
	 * what lies below them. Overlays that wrap the sink leave it alone. */
	backend_reference_fn reference;
	void *reference_ctx;
	/*
	 * Simple Paged Results (RFC 2696). paged: the control was sent;
	 * page_size 0 abandons the paged search (returns at once, success);
	 * cookie: empty on the first page, else the cookie returned last
	 * time; fingerprint: a hash the server computes over what must not
	 * change between pages (filter bytes, attribute list, controls),
	 * bound into the cookie with base and scope. The size limit counts
	 * entries over all pages.
	 */
	bool paged;
	uint64_t page_size;
	struct ber_view cookie;
	uint64_t fingerprint;
	/* output: the next cookie; next_cookie_len 0 = this was the last page */
	uint8_t next_cookie[BACKEND_COOKIE_SIZE];
	size_t next_cookie_len;
	/*
	 * Pause and resume (Caveats). resume: in, the state of the paused
	 * search to continue (zero = start); out, updated when paused.
	 * paused (output): the sink asked to pause; no result is set, the
	 * search is to be called again (or dropped: nothing else to free).
	 */
	struct backend_search_resume resume;
	bool paused;
	/*
	 * examine_budget: 0 = none; else the most candidates this call may
	 * examine. A search whose candidates (or scope) would exceed it
	 * pauses before its first entry, and one that reaches it pauses
	 * there, as for BACKEND_SINK_PAUSE: called again with resume (and
	 * another budget, or none), it goes on with nothing lost or repeated.
	 * A database that cannot tell may ignore it.
	 */
	uint64_t examine_budget;
	/*
	 * Persistent searches (struct backend_persist). intermediate: sends an
	 * IntermediateResponse among the results (Sync Info), returning as a
	 * sink does; wake: has the search called again soon (any thread, may
	 * be called under the database's own locks: it only marks and kicks)
	 * with wake_ctx until the handle is released; both set by the server.
	 * persist: in, the
	 * handle the search holds (NULL at first); out, the one the database
	 * made. wait (output, with paused): the search waits for wake, not
	 * for the client to read.
	 */
	int (*intermediate)(void *ctx, const char *oid, struct ber_view value);
	void (*wake)(void *ctx);
	void *intermediate_ctx, *wake_ctx;
	struct backend_persist *persist;
	bool wait;
};

/* ---------------------------------------------------------- write hooks */

/*
 * A change as a write hook sees it, inside the write's transaction:
 * before is NULL for an add, after is NULL for a delete; a modrdn's after
 * carries the new DN. Both are borrowed for the call. depth is 0 for the
 * operation's own change and n+1 for a change a hook made at depth n.
 */
enum database_write_kind {
	DATABASE_WRITE_ADD, DATABASE_WRITE_DELETE, DATABASE_WRITE_MODIFY,
	DATABASE_WRITE_MODRDN,
};

struct database_write {
	enum database_write_kind kind;
	const struct entry *before;
	const struct entry *after;
	unsigned depth;
	/* The change's CSN: after's entryCSN, or for a delete one drawn for
	 * it (replication orders deletes by it too). */
	struct ber_view csn;
};

/* Changes a hook may make inside the transaction nest at most this deep. */
#define DATABASE_WRITE_MAX_DEPTH 4

/* ------------------------------------------------------ change history */

/*
 * The change history (syncprov-sessionlog, RFC 4533's delete phase): the
 * last changes of the database, one record each, kept in the database's
 * storage and written by a write hook in the change's own transaction
 * (database_txn_ops.journal_append), so it commits or aborts with the
 * change and survives restarts. Records are ordered by CSN (a CSN names
 * one change), and a record whose CSN is already there replaces it.
 *
 * journal_append: stores record, then drops the oldest records until at
 * most keep remain (keep 0: none is dropped). Errors: LUMEN_EINVAL (csn
 * not CSN_LENGTH bytes, uuid longer than 255), LUMEN_EFULL, LUMEN_EIO.
 * database_journal_read (below): the records whose CSN is above
 * after_csn, oldest first, to fn; after_csn empty: the newest record
 * alone. Errors: LUMEN_ENOTFOUND when the history does not reach back to
 * after_csn (it is empty, or its oldest record is newer than after_csn:
 * changes between them may have been dropped), LUMEN_EUNSUPPORTED (the
 * database keeps no history), fn's (non-zero stops the walk), the
 * storage's.
 */
struct database_journal_record {
	enum database_write_kind kind;
	struct ber_view csn;           /* CSN_LENGTH bytes */
	struct ber_view uuid;          /* the entryUUID's text */
	struct ber_view ndn;           /* delete: the old DN; modrdn: the new one;
					  add, modify: empty (normalized) */
};
/* Receives a record (views valid for the call). 0 goes on. */
typedef int (*database_journal_fn)(void *ctx, const struct database_journal_record *record);

/* The write transaction a hook runs in (the database's own type). */
struct database_txn;

/* Receives an entry (borrowed for the call). 0 goes on; else it stops
 * the walk and is returned. It must not write (collect, then edit). */
typedef int (*database_txn_entry_fn)(void *ctx, const struct entry *e);
/* Changes e (a private copy of the stored entry) with entry.h's
 * functions; LUMEN_OK to store it, DATABASE_TXN_UNCHANGED to leave the
 * entry as it is (edit then returns LUMEN_OK), else the error is
 * returned. */
typedef int (*database_txn_edit_fn)(void *ctx, struct entry *e);
#define DATABASE_TXN_UNCHANGED 1

/*
 * What a hook may do in the transaction. Everything it reads sees the
 * transaction's own changes; everything it writes commits or aborts with
 * the operation. No access control applies: a hook acts as the server.
 *
 * fetch: the entry ndn as the transaction sees it, to fn. Errors:
 * LUMEN_ENOTFOUND, fn's, the storage's.
 * find_equal: every entry holding a value of type (or a subtype) whose
 * normalized form is value, in ID order; through the type's equality
 * index when it has one, else by reading every entry. Errors: fn's, the
 * storage's.
 * walk_below: every entry strictly below ndn, with its current DN (after
 * a rename: the new one), in ID order. Errors: LUMEN_ENOTFOUND (no ndn),
 * fn's, the storage's.
 * edit: loads ndn, lets fn change a copy, checks it against the schema,
 * stamps modifiersName (as modifier_ndn; empty: the operation's
 * requester) and modifyTimestamp, stores it and calls the write hook on
 * it (depth + 1); nothing when fn answers DATABASE_TXN_UNCHANGED.
 * Errors: LUMEN_ENOTFOUND, LUMEN_ESCHEMA (the copy breaks the schema:
 * nothing stored), LUMEN_ELIMIT (too deep), fn's.
 */
struct database_txn_ops {
	int (*fetch)(struct database_txn *txn, struct ber_view ndn, database_txn_entry_fn fn,
		     void *ctx);
	int (*find_equal)(struct database_txn *txn, const struct attribute_type *type,
			  struct ber_view value, database_txn_entry_fn fn, void *ctx);
	int (*walk_below)(struct database_txn *txn, struct ber_view ndn, database_txn_entry_fn fn,
			  void *ctx);
	int (*edit)(struct database_txn *txn, struct ber_view ndn, struct ber_view modifier_ndn,
		    database_txn_edit_fn fn, void *ctx);
	/* journal_append: see "Change history" below. */
	int (*journal_append)(struct database_txn *txn,
			      const struct database_journal_record *record, size_t keep);
};

/*
 * A committed change as on_commit sees it: csn, the entryUUID's text,
 * the DN before (empty for an add) and after (empty for a delete), both
 * normalized. Views into the writer's arena, valid for the call.
 */
struct database_change {
	enum database_write_kind kind;
	struct ber_view csn;
	struct ber_view uuid;
	struct ber_view old_ndn, ndn;
};

/*
 * on_write runs after each change, before the transaction commits.
 * Returning non-OK aborts the whole operation: set op->result_code and
 * op->diagnostic (an LDAP refusal, e.g. constraintViolation) and return
 * LUMEN_EINVAL, or return a storage error as it came.
 */
struct database_write_hook {
	int (*on_write)(void *ctx, struct database_txn *txn, const struct database_txn_ops *ops,
			struct backend_op *op, const struct database_write *w);
	void *ctx;
	/*
	 * on_commit (may be NULL) runs once the write's transaction has
	 * committed, on the thread that commits, in commit order, with every
	 * change of the operation (its own and its hooks', in the order they
	 * were made), before the writer hears back. It must not block: no
	 * I/O, no waiting on a client (replication queues and returns).
	 */
	void (*on_commit)(void *ctx, struct backend_op *op, const struct database_change *changes,
			  size_t n);
};

/* ------------------------------------------------------------- figures */

struct cache_figures {
	uint64_t size, capacity, hits, misses, evictions;
	uint64_t not_admitted;   /* misses not kept: too few sightings while full */
};

/*
 * What monitor and metrics publish about one database: its storage (for
 * back-mdb the LMDB environment), its entry count and its caches. The
 * database fills what it has (database_ops.figures); suffix and directory
 * are the server's.
 */
struct database_figures {
	const char *suffix;             /* as configured; borrowed */
	const char *directory;          /* borrowed */
	bool have_store;                /* the LMDB figures below are valid */
	uint64_t map_size;              /* bytes */
	uint64_t page_size;             /* bytes */
	uint64_t pages_used;            /* last page number + 1 */
	uint64_t readers_used, readers_max;
	uint64_t entries;               /* records in id2entry */
	struct cache_figures entry_cache, idl_cache;
	/* entries decoded in part, never cached: the DN alone for an access
	 * decision, or the types a bind, compare or search reads when the
	 * entry cache would not keep the entry */
	uint64_t partial_reads;
	/* writes committed, and the group commits (syncs) that carried them:
	 * how many writes share a commit */
	uint64_t writes, commits;
	/* the stored normalized forms follow other rules than the schema's:
	 * reads normalize every value again (reloading the data ends it) */
	bool normalizing_on_read;
};

/* ------------------------------------------------------------ the table */

struct database;

struct database_ops {
	int (*search)(struct database *db, struct backend_op *op, struct backend_search *search);
	/* The entry ndn to fn (bind, group checks, the server's own reads);
	 * info carries subordinate counts only with op->fetch_counts. */
	int (*fetch)(struct database *db, struct backend_op *op, struct ber_view ndn,
		     backend_entry_fn fn, void *ctx);
	/*
	 * The entries whose IDs a search handed its sink (info->id), in the
	 * order given, from one snapshot, to fn (with want_counts, info's
	 * subordinate counts filled, as a search's); an ID no longer stored
	 * is passed over (IDs are never reused). fn returns as a search sink
	 * does: 0, BACKEND_SINK_SKIPPED and BACKEND_SINK_PAUSE go on, anything
	 * else stops and is returned. NULL: the database's IDs are not stable
	 * (fetch by DN instead; database_fetch_ids answers LUMEN_EUNSUPPORTED).
	 */
	int (*fetch_ids)(struct database *db, struct backend_op *op, const uint64_t *ids,
			 size_t n, bool want_counts, backend_entry_fn fn, void *ctx);
	int (*compare)(struct database *db, struct backend_op *op, struct ber_view ndn,
		       struct ber_view attribute, struct ber_view value);
	/* The writes: NULL in a read-only database (database_refuse_change). */
	int (*add)(struct database *db, struct backend_op *op, struct ber_view dn,
		   struct ber_view ndn, const struct ldap_attribute *attributes, size_t n);
	int (*delete)(struct database *db, struct backend_op *op, struct ber_view ndn);
	int (*modify)(struct database *db, struct backend_op *op, struct ber_view ndn,
		      const struct ldap_change *changes, size_t n);
	int (*modrdn)(struct database *db, struct backend_op *op, struct ber_view ndn,
		      struct ber_view new_rdn, bool delete_old_rdn, bool has_new_superior,
		      struct ber_view new_superior_ndn);
	/* Storage, entry count and cache figures (leaves the rest untouched);
	 * NULL: none (no storage, no caches). */
	void (*figures)(struct database *db, struct database_figures *out);
	/* Configured indexes the database cannot use yet: up to max names;
	 * NULL: none (no indexes). */
	size_t (*unbuilt_indexes)(struct database *db, const char **names, size_t max);
	/* The change history (see "Change history"); NULL: none kept. */
	int (*journal_read)(struct database *db, struct ber_view after_csn,
			    database_journal_fn fn, void *ctx);
	/*
	 * Groups of writes applied atomically (RFC 5805): begin one, run
	 * writes with op->group set to it, end it committing all of them or
	 * none. NULL: the database has no groups (database_group_begin
	 * answers LUMEN_EUNSUPPORTED).
	 */
	int (*group_begin)(struct database *db, const struct backend_op *op,
			   struct database_group **out);
	int (*group_end)(struct database *db, const struct backend_op *op,
			 struct database_group *group, bool commit);
	/* Finish queued writes and free everything (db included). */
	void (*close)(struct database *db);
};

/* --------------------------------------------------------- search limits */

/*
 * The limits every database's search applies alike (database.c). The
 * rootdn escapes the configured limits but not those its own request sets
 * (RFC 4511 §4.5.1.5), so it gets the request's alone.
 */

/* A search's time limit as it runs. */
struct database_clock {
	bool has_deadline;
	struct timespec deadline;          /* monotonic */
};

/*
 * Starts c for search s: a resumed search keeps its first call's deadline
 * (s->resume), a new one gets now plus op's time limit, or none when
 * unlimited.
 */
void database_clock_start(struct database_clock *c, const struct backend_op *op,
			  const struct backend_search *s);
/* True once c's deadline has passed (never without one). */
bool database_clock_expired(const struct database_clock *c);
/* True when sent entries (over every page) have reached op's size limit. */
bool database_size_reached(const struct backend_op *op, uint64_t sent);

/*
 * The answer of a read-only database to a write (its add, delete, modify
 * and modrdn left NULL): unwillingToPerform. Returns LUMEN_OK.
 */
int database_refuse_change(struct backend_op *op);

struct database {
	const struct database_ops *ops;
	void *impl;                     /* the implementation's own state */
};

static inline int database_search(struct database *db, struct backend_op *op,
				  struct backend_search *search)
{
	return db->ops->search(db, op, search);
}

static inline int database_fetch(struct database *db, struct backend_op *op,
				 struct ber_view ndn, backend_entry_fn fn, void *ctx)
{
	return db->ops->fetch(db, op, ndn, fn, ctx);
}

static inline bool database_has_fetch_ids(const struct database *db)
{
	return db->ops->fetch_ids != NULL;
}

static inline int database_fetch_ids(struct database *db, struct backend_op *op,
				     const uint64_t *ids, size_t n, bool want_counts,
				     backend_entry_fn fn, void *ctx)
{
	if (db->ops->fetch_ids == NULL)
		return LUMEN_EUNSUPPORTED;
	return db->ops->fetch_ids(db, op, ids, n, want_counts, fn, ctx);
}

static inline int database_compare(struct database *db, struct backend_op *op,
				   struct ber_view ndn, struct ber_view attribute,
				   struct ber_view value)
{
	return db->ops->compare(db, op, ndn, attribute, value);
}

static inline int database_add(struct database *db, struct backend_op *op, struct ber_view dn,
			       struct ber_view ndn, const struct ldap_attribute *attributes,
			       size_t n)
{
	return db->ops->add != NULL ? db->ops->add(db, op, dn, ndn, attributes, n) : database_refuse_change(op);
}

static inline int database_delete(struct database *db, struct backend_op *op,
				  struct ber_view ndn)
{
	return db->ops->delete != NULL ? db->ops->delete(db, op, ndn) : database_refuse_change(op);
}

static inline int database_modify(struct database *db, struct backend_op *op,
				  struct ber_view ndn, const struct ldap_change *changes, size_t n)
{
	return db->ops->modify != NULL ? db->ops->modify(db, op, ndn, changes, n) : database_refuse_change(op);
}

/*
 * Groups (RFC 5805 transactions). database_group_begin: a group whose
 * writes (op->group) are applied in one transaction, in the order made;
 * each write answers at once as if alone, but nothing is durable or
 * visible to readers before database_group_end commits, and ending with
 * commit false (or a failed commit) leaves nothing of any of them. While
 * a group is open other writers of the database wait: the caller keeps it
 * short and ends it on every path. The thread that began it must end it,
 * and may not run writes of its own on the database outside the group
 * meanwhile (they fail busy). op gives only the wait hook (backend_op.wait),
 * told around the two waits of a group's owner: for the group to open
 * behind writes already queued, and for its commit; the members' writes
 * tell their own ops'.
 * Errors: LUMEN_EUNSUPPORTED (no groups: read-only or in-memory database,
 * tool mode), LUMEN_EBUSY (stopping), LUMEN_ENOMEM, LUMEN_EIO; the end:
 * LUMEN_OK or the commit's error (LUMEN_EFULL, LUMEN_EIO).
 */
static inline bool database_has_groups(const struct database *db)
{
	return db->ops->group_begin != NULL;
}

static inline int database_group_begin(struct database *db, const struct backend_op *op,
				       struct database_group **out)
{
	*out = NULL;
	if (db->ops->group_begin == NULL)
		return LUMEN_EUNSUPPORTED;
	return db->ops->group_begin(db, op, out);
}

static inline int database_group_end(struct database *db, const struct backend_op *op,
				     struct database_group *group, bool commit)
{
	return db->ops->group_end(db, op, group, commit);
}

/* Tell op's wait hook, if it has one, that a wait begins or ends (op not NULL). */
static inline void backend_op_waiting(const struct backend_op *op, bool waiting)
{
	if (op->wait != NULL)
		op->wait(op->wait_ctx, waiting);
}

static inline int database_modrdn(struct database *db, struct backend_op *op,
				  struct ber_view ndn, struct ber_view new_rdn,
				  bool delete_old_rdn, bool has_new_superior,
				  struct ber_view new_superior_ndn)
{
	if (db->ops->modrdn == NULL)
		return database_refuse_change(op);
	return db->ops->modrdn(db, op, ndn, new_rdn, delete_old_rdn, has_new_superior,
			       new_superior_ndn);
}

static inline void database_figures(struct database *db, struct database_figures *out)
{
	if (db->ops->figures != NULL)
		db->ops->figures(db, out);
}

static inline size_t database_unbuilt_indexes(struct database *db, const char **names,
					      size_t max)
{
	return db->ops->unbuilt_indexes != NULL ? db->ops->unbuilt_indexes(db, names, max) : 0;
}

static inline int database_journal_read(struct database *db, struct ber_view after_csn,
					database_journal_fn fn, void *ctx)
{
	if (db->ops->journal_read == NULL)
		return LUMEN_EUNSUPPORTED;
	return db->ops->journal_read(db, after_csn, fn, ctx);
}

static inline void database_close(struct database *db)
{
	if (db != NULL)
		db->ops->close(db);
}

#endif
