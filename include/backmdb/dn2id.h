/*
 * dn2id.h — the entry tree: DN ↔ ID, children, subtrees and counts (back-mdb).
 *
 * Three tables (opened by mdb_store):
 *  - dn2id: key = parent ID; sorted duplicates, one per child:
 *      [u16 key length | hashed flag][RDN key bytes][u64 child ID]
 *    where the RDN key is the child's normalized RDN, or — when that is
 *    longer than DN2ID_RDN_INLINE_MAX — its first DN2ID_RDN_PREFIX bytes
 *    plus a 64-bit hash, verified against id2name on lookup. Every key and
 *    duplicate stays far below LMDB 0.9's 511-byte limit.
 *  - id2name: ID → parent ID, normalized RDN, user-form RDN. An entry's DN is
 *    derived by walking up, so moving or renaming a subtree rewrites only
 *    the moved entry's records; descendants keep their parent ID.
 *  - subcount: ID → number of descendants (children, grandchildren, ...),
 *    kept on add, delete and move so search can compare a scope's size with
 *    an index candidate list before walking it.
 * A root (a suffix entry) has parent ID 0 and its "RDN" is its whole
 * normalized DN (e.g. "dc=example,dc=com"), since nothing above it is stored.
 *
 * DN strings are normalized DNs as dn.h produces (RDNs separated by ','
 * with escapes '\', so a bare ',' always separates RDNs).
 *
 * Memory: dn2id_names allocates from the caller's arena; nothing else
 * allocates beyond LMDB cursors.
 * Thread-safety: as the transaction used. Writes need a write transaction.
 *
 * Errors: LUMEN_ENOTFOUND (no such DN, ID or parent), LUMEN_EEXIST (sibling
 * with that RDN, or ID in use), LUMEN_EBUSY (delete of an entry that has
 * children: notAllowedOnNonLeaf), LUMEN_EINVAL (ID 0, empty RDN below a
 * root, move under itself or its own subtree), LUMEN_ELIMIT (deeper than
 * DN_MAX_RDNS levels), LUMEN_ENOMEM, LUMEN_EFULL (raise maxsize), LUMEN_EIO
 * (storage error or an inconsistent record).
 *
 * Caveats:
 *  - the tables must only be changed through this module, or the subtree
 *    counts go wrong.
 *  - dn2id_subtree may answer with a range (see there): then the caller must
 *    check scope per candidate with dn2id_is_within.
 */
#ifndef LUMEN_DN2ID_H
#define LUMEN_DN2ID_H

#include <lmdb.h>
#include <stdbool.h>
#include <stdint.h>

#include "arena.h"
#include "ber.h"
#include "idl.h"
#include "mdb_store.h"

/* Normalized RDNs up to this length are stored whole in dn2id. */
#define DN2ID_RDN_INLINE_MAX 480
/* Longer ones: this many leading bytes plus an 8-byte hash. */
#define DN2ID_RDN_PREFIX 400

struct dn2id_match {
	uint64_t id;       /* closest existing ancestor, 0 if none */
	size_t ndn_len;    /* its normalized DN is the last ndn_len bytes of the DN looked up */
};

/*
 * ID of the entry named ndn. On LUMEN_ENOTFOUND, *matched (if not NULL)
 * names the closest existing ancestor (for matchedDN).
 * Errors: LUMEN_ENOTFOUND, LUMEN_ELIMIT, LUMEN_EIO.
 */
int dn2id_lookup(struct mdb_store *store, MDB_txn *txn, struct ber_view ndn, uint64_t *id,
		 struct dn2id_match *matched);

/*
 * dn2id_lookup in a read-only snapshot (an mdb_reader's transaction, never
 * a write transaction): each thread remembers the last names it found, and
 * their parents, by store, snapshot and name, so a name looked up again in
 * the same snapshot, or a sibling of one, costs at most one step down.
 * keeper: the reader txn belongs to, whose kept cursor a lookup that
 * reaches the table uses (mdb_reader_dn2id_cursor); NULL: the lookup
 * opens and closes its own.
 */
int dn2id_lookup_snapshot(struct mdb_store *store, MDB_txn *txn, struct mdb_reader *keeper,
			  struct ber_view ndn, uint64_t *id, struct dn2id_match *matched);

/*
 * Adds entry id as a child of parent_id (0 for a root) with normalized RDN
 * nrdn and user-form RDN rdn; bumps the ancestors' subtree counts.
 * Errors: LUMEN_EINVAL, LUMEN_ENOTFOUND (parent), LUMEN_EEXIST, LUMEN_EFULL,
 * LUMEN_EIO.
 */
int dn2id_add(struct mdb_store *store, MDB_txn *txn, uint64_t parent_id, struct ber_view nrdn,
	      struct ber_view rdn, uint64_t id);

/* Removes leaf id. Errors: LUMEN_ENOTFOUND, LUMEN_EBUSY, LUMEN_EFULL, LUMEN_EIO. */
int dn2id_delete(struct mdb_store *store, MDB_txn *txn, uint64_t id);

/*
 * Renames id and/or moves it (with its subtree) under new_parent_id.
 * Descendants are not touched. Errors: LUMEN_ENOTFOUND (id or new parent),
 * LUMEN_EEXIST (the new parent has a child with new_nrdn), LUMEN_EINVAL,
 * LUMEN_EFULL, LUMEN_EIO.
 */
int dn2id_move(struct mdb_store *store, MDB_txn *txn, uint64_t id, uint64_t new_parent_id,
	       struct ber_view new_nrdn, struct ber_view new_rdn);

/* Callback per child: return LUMEN_OK to go on, anything else stops the walk. */
typedef int (*dn2id_child_fn)(void *ctx, uint64_t child_id);

/*
 * Calls fn for each child of id (one-level scope), in storage order.
 * Returns fn's first non-OK result, else LUMEN_OK. Errors: LUMEN_ENOMEM, LUMEN_EIO.
 */
int dn2id_children(struct mdb_store *store, MDB_txn *txn, uint64_t id, dn2id_child_fn fn,
		   void *ctx);
/* The children of id as an IDL (degrades to a range beyond its capacity). */
int dn2id_children_idl(struct mdb_store *store, MDB_txn *txn, uint64_t id, struct idl *out);

/*
 * id and all its descendants (subtree scope). If they cannot all fit in out
 * (more than IDL_MAX_IDS or out's capacity), out becomes the range
 * [1, highest ID in use], a superset: check each candidate with
 * dn2id_is_within. Errors: LUMEN_ENOTFOUND, LUMEN_ENOMEM, LUMEN_EIO.
 */
int dn2id_subtree(struct mdb_store *store, MDB_txn *txn, uint64_t id, struct idl *out);

/* True (1) if id is ancestor_id or lies below it, 0 if not; or an error. */
int dn2id_is_within(struct mdb_store *store, MDB_txn *txn, uint64_t id, uint64_t ancestor_id);

/* Parent ID (0 for a root). Errors: LUMEN_ENOTFOUND, LUMEN_EIO. */
int dn2id_parent(struct mdb_store *store, MDB_txn *txn, uint64_t id, uint64_t *parent_id);

/*
 * The normalized DN and the user-spelled DN of id, built by walking up to
 * the root; either output may be NULL. Strings come from arena.
 * Errors: LUMEN_ENOTFOUND, LUMEN_ELIMIT, LUMEN_ENOMEM, LUMEN_EIO.
 */
int dn2id_names(struct mdb_store *store, MDB_txn *txn, uint64_t id, struct arena *arena,
		struct ber_view *ndn, struct ber_view *dn);

/*
 * Number of children (numSubordinates) and of all descendants; either
 * output may be NULL. Errors: LUMEN_ENOTFOUND, LUMEN_EIO.
 */
int dn2id_counts(struct mdb_store *store, MDB_txn *txn, uint64_t id, uint64_t *children,
		 uint64_t *descendants);
/* Number of children of id; 0 names the tree's roots. Errors: LUMEN_EIO. */
int dn2id_child_count(struct mdb_store *store, MDB_txn *txn, uint64_t id, uint64_t *children);

#endif
