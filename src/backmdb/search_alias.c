/*
 * search_alias.c — alias dereferencing for search (RFC 4511 §4.5.1.3,
 * RFC 4512 §2.6), the way OpenLDAP's back-mdb does it.
 *
 * Finding (derefFindingBaseObj, derefAlways): an alias at the base is
 * replaced by the entry it names, following chains; an alias above a base
 * that does not exist is replaced too and the rest of the DN looked up
 * below its target. A dangling or circular alias is aliasProblem with the
 * alias as matchedDN (OpenLDAP's texts); a chain longer than
 * BACKEND_ALIAS_MAX_CHAIN is aliasDereferencingProblem.
 *
 * Searching (derefInSearching, derefAlways), one-level and subtree: each
 * alias met in scope is replaced by its target; in a subtree search the
 * target's subtree is searched too, and aliases found there in turn, each
 * entry returned once. Dangling and circular aliases met in scope are
 * passed over silently, as in OpenLDAP. An alias at the base that was not
 * dereferenced while finding is searched as an ordinary entry.
 *
 * Cost: the aliases are found through the objectClass equality index (one
 * IDL-cache lookup; nothing more when the database holds no alias); up to
 * ALIAS_PLACE_EACH of them are placed in or out of scope by a dn2id walk
 * each, more by intersecting with the scope's IDs. Only a database without
 * that index pays a walk of the scope to find them.
 */
#include "backend_internal.h"

#include <string.h>

#include "ldap_result_codes.h"

/* How following one chain ended. */
enum alias_outcome {
	ALIAS_RESOLVED,      /* *target is a non-alias entry */
	ALIAS_DANGLING,      /* an alias names no entry of this database */
	ALIAS_CIRCULAR,      /* the chain comes back to an alias met before */
	ALIAS_TOO_LONG,      /* more than BACKEND_ALIAS_MAX_CHAIN hops */
};

struct alias_chain {
	enum alias_outcome outcome;
	uint64_t target;          /* ALIAS_RESOLVED */
	uint64_t last_alias;      /* the alias looked at last (matchedDN) */
};

bool alias_entry_passed_over(const struct backend *be, const struct alias_scope *as,
			     uint64_t id, const struct entry *e)
{
	return as->active && id != as->base_id && entry_is_instance_of(e, be->alias_class);
}

/* Whether entry id is an alias. */
static int is_alias_entry(struct backend *be, struct backend_reader *rd, uint64_t id,
			  bool *is_alias)
{
	struct entry_cache_handle *handle = NULL;
	const struct entry *e;

	int rc = backend_entry_get(be, rd, id, &rd->entry_arena, &handle, &e);
	if (rc != LUMEN_OK)
		return rc;
	*is_alias = entry_is_instance_of(e, be->alias_class);
	backend_entry_put(be, handle);
	arena_reset(&rd->entry_arena);
	return LUMEN_OK;
}

/* The ID of the entry alias id names; LUMEN_ENOTFOUND when there is none
 * in this database (or the alias names nothing usable). */
static int alias_target(struct backend *be, struct backend_reader *rd, uint64_t id,
			uint64_t *target)
{
	struct entry_cache_handle *handle = NULL;
	struct dn2id_match match = { 0 };
	const struct entry *e;

	int rc = backend_entry_get(be, rd, id, &rd->entry_arena, &handle, &e);
	if (rc != LUMEN_OK)
		return rc;
	/* the value is read while the entry is held: nothing is copied */
	const struct entry_attribute *a = entry_find_type(e, be->aliased_object_name);
	if (a == NULL || a->values[0].normalized.ptr == NULL)
		rc = LUMEN_ENOTFOUND;
	else
		rc = dn2id_lookup(be->store, rd->reader.txn, a->values[0].normalized, target,
				  &match);
	backend_entry_put(be, handle);
	arena_reset(&rd->entry_arena);
	return rc;
}

static bool seen_in(const uint64_t *ids, size_t n, uint64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/* Follows the alias entry id (known to be one) to the entry its chain ends at. */
static int follow_chain(struct backend *be, struct backend_reader *rd, uint64_t id,
			struct alias_chain *out)
{
	uint64_t visited[BACKEND_ALIAS_MAX_CHAIN];
	size_t n = 0;

	for (;;) {
		out->last_alias = id;
		if (n == BACKEND_ALIAS_MAX_CHAIN) {
			out->outcome = ALIAS_TOO_LONG;
			return LUMEN_OK;
		}
		if (seen_in(visited, n, id)) {
			out->outcome = ALIAS_CIRCULAR;
			return LUMEN_OK;
		}
		visited[n++] = id;
		bool is_alias;
		uint64_t next = 0;
		int rc = alias_target(be, rd, id, &next);
		if (rc == LUMEN_ENOTFOUND) {
			out->outcome = ALIAS_DANGLING;
			return LUMEN_OK;
		}
		if (rc == LUMEN_OK)
			rc = is_alias_entry(be, rd, next, &is_alias);
		if (rc != LUMEN_OK)
			return rc;
		if (!is_alias) {
			out->outcome = ALIAS_RESOLVED;
			out->target = next;
			return LUMEN_OK;
		}
		id = next;
	}
}

/* ------------------------------------------------------------ finding */

/* The answer for a chain that did not resolve; returns LUMEN_ENOTFOUND. */
static int chain_problem(struct backend *be, struct backend_reader *rd, struct backend_op *op,
			 const struct alias_chain *chain)
{
	static const char *const text[] = {
		[ALIAS_DANGLING] = "aliasedObject not found",
		[ALIAS_CIRCULAR] = "circular alias",
		[ALIAS_TOO_LONG] = "maximum deref depth exceeded",
	};
	backend_result(op, chain->outcome == ALIAS_TOO_LONG ? LDAP_ALIAS_DEREFERENCING_PROBLEM
			   : LDAP_ALIAS_PROBLEM, text[chain->outcome]);
	int rc = dn2id_names(be->store, rd->reader.txn, chain->last_alias, op->arena, NULL,
			     &op->matched_dn);
	return rc == LUMEN_OK ? LUMEN_ENOTFOUND : backend_fail(be, op, rc);
}

/* ndn with its last matched_len bytes (an alias's DN) replaced by target's. */
static int rebase_dn(struct backend *be, struct backend_reader *rd, struct arena *arena,
		     struct ber_view ndn, size_t matched_len, uint64_t target,
		     struct ber_view *out)
{
	struct ber_view target_ndn;
	int rc = dn2id_names(be->store, rd->reader.txn, target, arena, &target_ndn, NULL);
	if (rc != LUMEN_OK)
		return rc;
	size_t kept_len = ndn.len - matched_len;      /* the leading "rdn,...," that stays */
	uint8_t *p = arena_alloc(arena, kept_len + target_ndn.len + 1);
	if (p == NULL)
		return LUMEN_ENOMEM;
	memcpy(p, ndn.ptr, kept_len);
	memcpy(p + kept_len, target_ndn.ptr, target_ndn.len);
	p[kept_len + target_ndn.len] = '\0';
	*out = (struct ber_view){ p, kept_len + target_ndn.len };
	return LUMEN_OK;
}

int alias_find_base(struct backend *be, struct backend_reader *rd, struct backend_op *op,
		    struct ber_view ndn, uint64_t *base_id)
{
	/* Every lookup may replace one alias: bounded like one chain. */
	for (unsigned hops = 0; hops <= BACKEND_ALIAS_MAX_CHAIN; hops++) {
		struct dn2id_match match = { 0 };
		struct alias_chain chain;
		bool is_alias;
		int rc = dn2id_lookup(be->store, rd->reader.txn, ndn, base_id, &match);
		if (rc == LUMEN_ENOTFOUND && match.id == 0)
			return backend_no_such_object(be, op, rd->reader.txn, &match);
		if (rc != LUMEN_OK && rc != LUMEN_ENOTFOUND)
			return rc;
		uint64_t id = rc == LUMEN_OK ? *base_id : match.id;
		bool found = rc == LUMEN_OK;
		rc = is_alias_entry(be, rd, id, &is_alias);
		if (rc != LUMEN_OK)
			return rc;
		if (!is_alias)
			return found ? LUMEN_OK
			       : backend_no_such_object(be, op, rd->reader.txn, &match);
		rc = follow_chain(be, rd, id, &chain);
		if (rc != LUMEN_OK)
			return rc;
		if (chain.outcome != ALIAS_RESOLVED)
			return chain_problem(be, rd, op, &chain);
		if (found) {
			*base_id = chain.target;
			return LUMEN_OK;
		}
		rc = rebase_dn(be, rd, op->arena, ndn, match.ndn_len, chain.target, &ndn);
		if (rc != LUMEN_OK)
			return rc;
	}
	backend_result(op, LDAP_ALIAS_DEREFERENCING_PROBLEM, "maximum deref depth exceeded");
	return LUMEN_ENOTFOUND;
}

/* ---------------------------------------------------------- searching */

#define ALIAS_PARENTS_SEEN 8

struct alias_parent_seen {
	uint64_t parent;
	bool within;
};

struct alias_plan {
	struct backend *be;
	struct backend_reader *rd;
	struct backend_op *op;
	const struct database_clock *clock;
	struct alias_scope *as;
	const struct idl *aliases;    /* alias entries (a list, or "all") */
	struct idl *done;             /* aliases dereferenced (at most the bound) */
	size_t cap_roots;
	unsigned followed;
	/* Aliases mostly share a few parents (ou=aliases): whether each parent
	 * lies in the current root's subtree is worked out once. */
	struct alias_parent_seen seen[ALIAS_PARENTS_SEEN];
	size_t n_seen;
	uint64_t seen_root;
};

static int add_root(struct alias_plan *p, uint64_t id)
{
	struct alias_scope *as = p->as;
	uint64_t *roots = arena_reserve(p->op->arena, as->roots, as->n_roots, &p->cap_roots,
					as->n_roots + 1, sizeof *roots, 8);
	if (roots == NULL)
		return LUMEN_ENOMEM;
	as->roots = roots;
	as->roots[as->n_roots++] = id;
	return LUMEN_OK;
}

/* 1 if id lies in a subtree already searched (or is a listed target). */
static int covered(struct alias_plan *p, uint64_t id)
{
	struct alias_scope *as = p->as;
	if (as->scope == LDAP_SCOPE_ONE)
		return seen_in(as->roots, as->n_roots, id);
	for (size_t i = 0; i < as->n_roots; i++) {
		int rc = dn2id_is_within(p->be->store, p->rd->reader.txn, id, as->roots[i]);
		if (rc != 0)
			return rc == LUMEN_ENOTFOUND ? 0 : rc;
	}
	return 0;
}

/* Dereferences one alias met in scope; its target joins the scope. */
static int deref_in_scope(struct alias_plan *p, uint64_t alias_id)
{
	struct alias_chain chain;
	bool is_alias;

	/* the base itself is searched as it is; an alias under two roots once */
	if (alias_id == p->as->base_id || idl_contains(p->done, alias_id))
		return LUMEN_OK;
	int rc = is_alias_entry(p->be, p->rd, alias_id, &is_alias);
	if (rc != LUMEN_OK || !is_alias)
		return rc == LUMEN_ENOTFOUND ? LUMEN_OK : rc;
	p->as->active = true;     /* an alias in scope: it is never returned itself */
	idl_insert(p->done, alias_id);
	if (++p->followed > BACKEND_ALIAS_MAX_PER_SEARCH) {
		backend_result(p->op, LDAP_ADMIN_LIMIT_EXCEEDED,
			       "more aliases to dereference than one search may follow");
		return LUMEN_ELIMIT;
	}
	if (database_clock_expired(p->clock)) {
		backend_result(p->op, LDAP_TIME_LIMIT_EXCEEDED, NULL);
		return LUMEN_ELIMIT;
	}
	rc = follow_chain(p->be, p->rd, alias_id, &chain);
	if (rc != LUMEN_OK || chain.outcome != ALIAS_RESOLVED)
		return rc;
	int in = covered(p, chain.target);
	if (in < 0)
		return in;
	return in ? LUMEN_OK : add_root(p, chain.target);
}

/* Up to this many aliases in the database are placed one by one (a dn2id
 * walk each) rather than by reading the whole scope of a root. */
#define ALIAS_PLACE_EACH 256

/* 1 if parent (of an alias) lies in root's subtree, remembered per root. */
static int parent_within(struct alias_plan *p, uint64_t root, uint64_t parent)
{
	if (p->seen_root != root) {
		p->seen_root = root;
		p->n_seen = 0;
	}
	for (size_t i = 0; i < p->n_seen; i++)
		if (p->seen[i].parent == parent)
			return p->seen[i].within;
	int rc = dn2id_is_within(p->be->store, p->rd->reader.txn, parent, root);
	if (rc == LUMEN_ENOTFOUND)
		rc = 0;
	if (rc >= 0 && p->n_seen < ALIAS_PARENTS_SEEN)
		p->seen[p->n_seen++] = (struct alias_parent_seen){ parent, rc == 1 };
	return rc;
}

/* 1 if alias id lies in root's scope (subtree, or the base's children). */
static int under_root(struct alias_plan *p, uint64_t root, uint64_t id)
{
	uint64_t parent;
	int rc = dn2id_parent(p->be->store, p->rd->reader.txn, id, &parent);
	if (rc != LUMEN_OK)
		return rc == LUMEN_ENOTFOUND ? 0 : rc;
	if (p->as->scope == LDAP_SCOPE_ONE || parent == root)
		return parent == root;
	if (id == root)
		return 1;
	return parent == 0 ? 0 : parent_within(p, root, parent);
}

/* The alias entries of one root's scope (subtree, or the base's children). */
static int aliases_under(struct alias_plan *p, uint64_t root, struct idl *out)
{
	struct mdb_store *store = p->be->store;
	MDB_txn *txn = p->rd->reader.txn;
	const struct idl *all = p->aliases;

	if (!all->is_range && idl_size(all) <= ALIAS_PLACE_EACH) {
		idl_clear(out);
		for (size_t i = 0; i < all->count; i++) {
			int in = under_root(p, root, all->ids[i]);
			if (in < 0)
				return in;
			if (in)
				idl_insert(out, all->ids[i]);
		}
		return LUMEN_OK;
	}
	int rc = p->as->scope == LDAP_SCOPE_ONE ? dn2id_children_idl(store, txn, root, out)
		 : dn2id_subtree(store, txn, root, out);
	if (rc == LUMEN_OK && !all->is_range)
		idl_intersect(out, all);
	return rc;
}

/* Every alias under root, dereferenced (deref_in_scope skips non-aliases). */
static int expand_root(struct alias_plan *p, uint64_t root)
{
	struct idl *found = &p->rd->scratch[BACKEND_SCRATCH_ALIAS_SCOPE];
	struct idl_iter it;
	uint64_t id;

	int rc = aliases_under(p, root, found);
	idl_iter_init(found, &it);
	while (rc == LUMEN_OK && (id = idl_iter_next(found, &it)) != 0)
		rc = deref_in_scope(p, id);
	return rc;
}

int alias_scope_plan(struct backend *be, struct backend_reader *rd, struct backend_op *op,
		     const struct database_clock *clock, struct alias_scope *as)
{
	struct idl *aliases = &rd->scratch[BACKEND_SCRATCH_ALIASES];
	struct alias_plan p = { .be = be, .rd = rd, .op = op, .clock = clock, .as = as,
				.aliases = aliases,
				.done = &rd->scratch[BACKEND_SCRATCH_ALIASES_DONE] };

	as->active = false;
	as->roots = NULL;
	as->n_roots = 0;
	if (be->alias_class == NULL || as->scope == LDAP_SCOPE_BASE)
		return LUMEN_OK;
	int rc = candidates_object_class(be, rd, be->alias_class, aliases);
	if (rc != LUMEN_OK || idl_is_empty(aliases))
		return rc;
	idl_clear(p.done);
	if (as->scope == LDAP_SCOPE_ONE)
		return expand_root(&p, as->base_id);
	rc = add_root(&p, as->base_id);
	/* roots grows while it is walked: targets' subtrees are searched too */
	for (size_t i = 0; rc == LUMEN_OK && i < as->n_roots; i++)
		rc = expand_root(&p, as->roots[i]);
	return rc;
}

int alias_scope_ids(struct backend *be, struct backend_reader *rd,
		    const struct alias_scope *as, struct idl *out)
{
	struct idl *one = &rd->scratch[BACKEND_SCRATCH_ALIAS_SCOPE];
	struct mdb_store *store = be->store;
	MDB_txn *txn = rd->reader.txn;

	if (as->scope == LDAP_SCOPE_ONE) {
		int rc = dn2id_children_idl(store, txn, as->base_id, out);
		for (size_t i = 0; rc == LUMEN_OK && i < as->n_roots; i++)
			idl_insert(out, as->roots[i]);
		return rc;
	}
	idl_clear(out);
	for (size_t i = 0; i < as->n_roots; i++) {
		int rc = dn2id_subtree(store, txn, as->roots[i], one);
		if (rc != LUMEN_OK)
			return rc;
		idl_union(out, one);
	}
	if (as->scope == LDAP_SCOPE_CHILDREN)
		idl_delete(out, as->base_id);
	return LUMEN_OK;
}

int alias_in_scope(struct backend *be, struct backend_reader *rd,
		   const struct alias_scope *as, uint64_t id)
{
	struct mdb_store *store = be->store;
	MDB_txn *txn = rd->reader.txn;

	if (as->scope == LDAP_SCOPE_ONE) {
		uint64_t parent;
		if (seen_in(as->roots, as->n_roots, id))
			return 1;
		int rc = dn2id_parent(store, txn, id, &parent);
		if (rc == LUMEN_ENOTFOUND)
			return 0;
		return rc == LUMEN_OK ? parent == as->base_id : rc;
	}
	if (as->scope == LDAP_SCOPE_CHILDREN && id == as->base_id)
		return 0;
	for (size_t i = 0; i < as->n_roots; i++) {
		int rc = dn2id_is_within(store, txn, id, as->roots[i]);
		if (rc != 0)
			return rc == LUMEN_ENOTFOUND ? 0 : rc;
	}
	return 0;
}
