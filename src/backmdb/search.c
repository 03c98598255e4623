/*
 * search.c — the Search operation: plan (candidates vs. scope walk), then
 * test each ID in ascending order against scope and filter and hand the
 * matches to the server's sink.
 *
 * Plan: with an indexed filter whose candidate list is smaller than the
 * scope (dn2id's subtree count), iterate the candidates and check each
 * one's scope; otherwise walk the scope's IDs, narrowed by the candidates.
 * Ranges (an IDL that did not fit) always mean "check scope per ID".
 *
 * Paged results: the cookie is [version][last ID sent][fingerprint][entries
 * sent so far], the fingerprint hashing a per-open secret, base, scope and
 * the server's request fingerprint. Because IDs only grow and entries come
 * in ID order, "continue after the last ID" is a stable position even when
 * entries are added or deleted between pages. The fingerprint is not a
 * MAC: the server never hands this cookie to a client as is but seals it
 * (paged_cookie.h) with the connection, the search and the count it
 * returned. An entry the sink refuses (BACKEND_SINK_SKIPPED) is passed
 * over: it fills no page and counts toward no limit.
 *
 * A search planning more than BACKEND_SCAN_IDS IDs is a scan: its cache
 * misses take only free positions of the entry cache, so one scan larger
 * than the cache does not evict, miss after miss, what the next will read.
 *
 * Snapshot renewal (every BACKEND_SEARCH_BATCH entries): IDs planned from
 * the scope stay in it unless a ModifyDN ran since the plan, which only
 * then makes every later ID's scope checked again.
 *
 * Pause: the same position lets a search stop when its client stops
 * reading (the sink says BACKEND_SINK_PAUSE), release its reader so no
 * snapshot stays pinned, and continue later from search->resume.
 *
 * Referrals (referral.c), kept to base_referral and plan_referrals: a
 * base at or below a referral object is answered with a referral; the
 * referral objects in the scope join the IDs to iterate and are sent as
 * references, and what lies below them is passed over.
 *
 * An examine budget (a search an I/O thread started) pauses as a stalled
 * client does: before the first entry when the plan would iterate more
 * IDs than the budget (decided before the scope walk, which can itself be
 * long), or after the budget's last candidate.
 */
#include "backend_internal.h"

#include <string.h>
#include <time.h>

#include "dn.h"
#include "little_endian.h"
#include "ldap_result_codes.h"
#include "stable_hash.h"

#define COOKIE_VERSION 1
/* Candidates tested between two looks at the clock. */
#define TIME_CHECK_EVERY 64

struct search_run {
	struct backend *be;
	struct backend_op *op;
	struct backend_search *s;
	struct backend_reader *rd;
	uint64_t base_id;
	/* the base is the database's only suffix: every entry is below it */
	bool base_holds_database;
	/* the base was found by its name (no alias dereferenced) */
	bool base_by_name;
	const struct idl *ids;
	bool check_scope;
	/* check_scope by the loaded entry's DN instead of walking dn2id */
	bool scope_by_name;
	uint64_t after_id;        /* paging: resume after this ID */
	uint64_t sent_before;     /* paging: entries sent on earlier pages */
	uint64_t sent;            /* this call */
	uint64_t last_sent_id;
	uint64_t last_tested_id;  /* the latest ID test_candidate saw */
	uint64_t plan_txn;        /* the snapshot the IDs were planned in */
	struct database_clock clock;
	bool paused;              /* the sink asked to pause, or the budget ran out */
	bool over_budget;         /* the plan exceeds search->examine_budget */
	struct alias_scope aliases;   /* derefInSearching with aliases in scope */
	/* computed attributes the filter names; NULL for most filters */
	struct backend_virtual virt;
	const struct filter_virtual *provider;
	/* referral objects in the scope and what lies below them (no
	 * ManageDsaIT); has_referrals false: none, nothing to look up */
	bool has_referrals;
	struct idl *referrals, *below_referrals;
};

/* -------------------------------------------------------------- cookies */

static uint64_t cookie_fingerprint(const struct search_run *r)
{
	uint64_t h = stable_hash64(r->s->base_ndn.ptr, r->s->base_ndn.len);
	h = stable_hash_mix(h ^ r->be->cookie_secret);
	h = stable_hash_mix(h ^ (uint64_t)r->s->scope);
	return stable_hash_mix(h ^ r->s->fingerprint);
}

static void make_cookie(struct search_run *r)
{
	uint8_t *c = r->s->next_cookie;
	c[0] = COOKIE_VERSION;
	little_endian_put64(c + 1, r->last_sent_id);
	little_endian_put64(c + 9, cookie_fingerprint(r));
	little_endian_put64(c + 17, r->sent_before + r->sent);
	r->s->next_cookie_len = BACKEND_COOKIE_SIZE;
}

/* Reads the client's cookie. false: not one of ours for this search. */
static bool read_cookie(struct search_run *r)
{
	struct ber_view c = r->s->cookie;
	if (c.len == 0)
		return true;
	if (c.len != BACKEND_COOKIE_SIZE || c.ptr[0] != COOKIE_VERSION ||
	    little_endian_get64(c.ptr + 9) != cookie_fingerprint(r))
		return false;
	r->after_id = little_endian_get64(c.ptr + 1);
	r->sent_before = little_endian_get64(c.ptr + 17);
	return true;
}

/* ------------------------------------------------------------------ plan */

/* 1 if id is in the search's scope, 0 if not, or an error. */
static int in_scope(struct search_run *r, uint64_t id)
{
	struct mdb_store *store = r->be->store;
	MDB_txn *txn = r->rd->reader.txn;
	uint64_t parent;

	if (r->aliases.active)
		return alias_in_scope(r->be, r->rd, &r->aliases, id);
	/* Every entry lies below a suffix: no walk up the tree needed. */
	if (r->base_holds_database && r->s->scope != LDAP_SCOPE_ONE &&
	    r->s->scope != LDAP_SCOPE_BASE)
		return r->s->scope != LDAP_SCOPE_CHILDREN || id != r->base_id;
	switch (r->s->scope) {
	case LDAP_SCOPE_BASE:
		return id == r->base_id;
	case LDAP_SCOPE_ONE: {
		int rc = dn2id_parent(store, txn, id, &parent);
		if (rc == LUMEN_ENOTFOUND)
			return 0;
		return rc == LUMEN_OK ? parent == r->base_id : rc;
	}
	case LDAP_SCOPE_CHILDREN:
		if (id == r->base_id)
			return 0;
		/* fall through */
	default: {
		int rc = dn2id_is_within(store, txn, id, r->base_id);
		return rc == LUMEN_ENOTFOUND ? 0 : rc;
	}
	}
}

static int scope_ids(struct search_run *r, struct idl *out)
{
	struct mdb_store *store = r->be->store;
	MDB_txn *txn = r->rd->reader.txn;

	switch (r->s->scope) {
	case LDAP_SCOPE_BASE:
		idl_clear(out);
		idl_insert(out, r->base_id);
		return LUMEN_OK;
	case LDAP_SCOPE_ONE:
		return dn2id_children_idl(store, txn, r->base_id, out);
	case LDAP_SCOPE_CHILDREN: {
		int rc = dn2id_subtree(store, txn, r->base_id, out);
		if (rc == LUMEN_OK)
			idl_delete(out, r->base_id);
		return rc;
	}
	default:
		return dn2id_subtree(store, txn, r->base_id, out);
	}
}

static int scope_size(struct search_run *r, uint64_t *size)
{
	uint64_t children = 0, descendants = 0;
	int rc = dn2id_counts(r->be->store, r->rd->reader.txn, r->base_id, &children,
			      &descendants);
	if (rc != LUMEN_OK)
		return rc;
	switch (r->s->scope) {
	case LDAP_SCOPE_BASE: *size = 1; break;
	case LDAP_SCOPE_ONE: *size = children; break;
	case LDAP_SCOPE_CHILDREN: *size = descendants; break;
	default: *size = descendants + 1; break;
	}
	return LUMEN_OK;
}

static bool is_all(const struct idl *idl)
{
	return idl->is_range && idl->lo <= 1 && idl->hi >= IDL_ID_MAX;
}

/* At most this many candidates are iterated without looking at the scope. */
#define PLAN_FEW_CANDIDATES 8

/*
 * plan() for a search whose scope holds aliases to dereference: the
 * candidates checked one by one, or the scope widened by the aliases'
 * targets. 1 when the aliases made the plan, 0 when there are none.
 */
static int plan_with_aliases(struct search_run *r, struct idl *cand)
{
	struct idl *scope = &r->rd->scratch[BACKEND_SCRATCH_SCOPE];

	if (!(r->s->deref & LDAP_DEREF_SEARCHING))
		return 0;
	r->aliases.scope = r->s->scope;
	r->aliases.base_id = r->base_id;
	int rc = alias_scope_plan(r->be, r->rd, r->op, &r->clock, &r->aliases);
	if (rc != LUMEN_OK || !r->aliases.active)
		return rc;
	if (!cand->is_range && idl_size(cand) <= PLAN_FEW_CANDIDATES) {
		r->ids = cand;
		r->check_scope = true;
		return 1;
	}
	rc = alias_scope_ids(r->be, r->rd, &r->aliases, scope);
	if (rc != LUMEN_OK)
		return rc;
	r->check_scope = scope->is_range;
	if (!is_all(cand))
		idl_intersect(scope, cand);
	r->ids = scope;
	return 1;
}

/*
 * More to iterate than the budget allows, whatever the plan: then nothing
 * is iterated (nor the scope walked) by this call.
 */
static bool exceeds_budget(struct search_run *r, const struct idl *cand, uint64_t scope_size)
{
	uint64_t budget = r->s->examine_budget;
	if (budget == 0 || scope_size <= budget ||
	    (!cand->is_range && idl_size(cand) <= budget))
		return false;
	r->over_budget = true;
	return true;
}

/* Chooses what to iterate: the filter's candidates or the scope. */
static int plan(struct search_run *r)
{
	struct idl *cand = &r->rd->scratch[BACKEND_SCRATCH_CANDIDATES];
	struct idl *scope = &r->rd->scratch[BACKEND_SCRATCH_SCOPE];
	struct candidates_note note;
	uint64_t size;

	if (r->s->scope == LDAP_SCOPE_BASE)
		return scope_ids(r, (struct idl *)(r->ids = scope));
	int rc = candidates_compute(r->be, r->rd, r->s->filter, r->op->arena, cand, &note);
	/* Dereferencing aliases in the scope has no bound a budget can see:
	 * a search an I/O thread started leaves it to a worker. */
	if (rc == LUMEN_OK && r->s->examine_budget != 0 && (r->s->deref & LDAP_DEREF_SEARCHING) &&
	    r->be->alias_class != NULL) {
		r->over_budget = true;
		return LUMEN_OK;
	}
	if (rc == LUMEN_OK)
		rc = plan_with_aliases(r, cand);
	if (rc != LUMEN_OK)
		return rc == 1 ? LUMEN_OK : rc;
	/* A handful of candidates (an equality lookup): checking each against
	 * the scope is cheaper than reading the scope's size first, and
	 * comparing the DN of an entry read anyway cheaper than walking up
	 * the tree from it. */
	if (!cand->is_range && idl_size(cand) <= PLAN_FEW_CANDIDATES) {
		r->ids = cand;
		r->check_scope = true;
		r->scope_by_name = r->base_by_name && !r->base_holds_database;
		return LUMEN_OK;
	}
	rc = scope_size(r, &size);
	if (rc != LUMEN_OK)
		return rc;
	if (exceeds_budget(r, cand, size))
		return LUMEN_OK;
	if (is_all(cand)) {
		r->op->unindexed = note.unindexed;
		r->op->unindexed_attribute = note.attribute;
	}
	if (!cand->is_range && idl_size(cand) < size) {
		r->ids = cand;
		r->check_scope = true;
		return LUMEN_OK;
	}
	rc = scope_ids(r, scope);
	if (rc != LUMEN_OK)
		return rc;
	r->check_scope = scope->is_range;
	if (!is_all(cand))
		idl_intersect(scope, cand);
	r->ids = scope;
	return LUMEN_OK;
}

/*
 * Without ManageDsaIT, the referral objects in the scope are iterated
 * too (whatever the filter's candidates: a reference is sent for each),
 * and the entries below them are passed over.
 */
static int plan_referrals(struct search_run *r)
{
	r->referrals = &r->rd->scratch[BACKEND_SCRATCH_REFERRALS];
	r->below_referrals = &r->rd->scratch[BACKEND_SCRATCH_BELOW_REFERRALS];
	if (r->op->manage_dsa_it)
		return LUMEN_OK;
	int rc = referral_scope(r->be, r->rd->reader.txn, r->base_id, r->s->scope, r->referrals,
				r->below_referrals);
	if (rc != LUMEN_OK || idl_is_empty(r->referrals))
		return rc;
	r->has_referrals = true;
	idl_union((struct idl *)r->ids, r->referrals);
	return LUMEN_OK;
}

/* ------------------------------------------------------------------ run */

/* Tell the server's timing what the time since its last mark went to. */
static inline void mark(struct backend_op *op, enum backend_stage stage)
{
	if (op->mark != NULL)
		op->mark(op->mark_ctx, stage);
}

/* Sends one matching entry. 1 = stop (result set), 0 = go on, <0 error. */
static int send_entry(struct search_run *r, uint64_t id, const struct entry *e)
{
	struct backend_entry_info info = { .id = id, .dn = e->dn, .ndn = e->ndn,
					   .filter_tested = r->s->filter != NULL };
	uint64_t children = 0;

	if (database_size_reached(r->op, r->sent_before + r->sent)) {
		backend_result(r->op, LDAP_SIZE_LIMIT_EXCEEDED, NULL);
		return 1;
	}
	if (r->s->paged && r->sent >= r->s->page_size) {
		make_cookie(r);
		return 1;
	}
	if (r->s->want_counts) {
		int rc = dn2id_counts(r->be->store, r->rd->reader.txn, id, &children, NULL);
		if (rc != LUMEN_OK)
			return rc;
		info.has_counts = true;
		info.num_subordinates = children;
		info.has_subordinates = children > 0;
	}
	int verdict = r->s->sink(r->s->sink_ctx, e, &info);
	r->last_sent_id = id;     /* a refused entry is not tried again */
	if (verdict == BACKEND_SINK_SKIPPED)
		return 0;
	if (verdict != 0 && verdict != BACKEND_SINK_PAUSE) {
		backend_result(r->op, LDAP_OTHER, "search stopped");
		return 1;
	}
	r->sent++;
	r->op->entries_sent++;
	if (verdict == BACKEND_SINK_PAUSE) {
		r->paused = true;
		return 1;
	}
	return 0;
}

/*
 * A referral object in the scope: its continuation reference instead of
 * the entry, whatever the filter. 1 = stop, 0 = go on, <0 error.
 */
static int send_reference(struct search_run *r, uint64_t id)
{
	struct entry_cache_handle *handle = NULL;
	const struct entry *e;
	char **urls;
	size_t n = 0;

	r->last_sent_id = id;
	if (r->s->reference == NULL)
		return 0;
	int rc = backend_entry_get(r->be, r->rd, id, &r->rd->entry_arena, &handle, &e);
	if (rc == LUMEN_ENOTFOUND)
		return 0;
	if (rc == LUMEN_OK)
		rc = referral_continuation(r->be, e, r->s->scope, &r->rd->entry_arena, &urls, &n);
	if (rc == LUMEN_OK && n > 0 && r->s->reference(r->s->reference_ctx, e, urls, n) != 0) {
		backend_result(r->op, LDAP_OTHER, "search stopped");
		rc = 1;
	}
	backend_entry_put(r->be, handle);
	return rc;
}

/* 1 if id lies below a referral object of the scope, 0 if not, or an
 * error. The list of those entries is exact unless it grew into a range
 * (a huge subtree): then each referral object is asked. */
static int below_referral(struct search_run *r, uint64_t id)
{
	struct idl_iter it;
	uint64_t ref;
	if (!r->below_referrals->is_range || !idl_contains(r->below_referrals, id))
		return idl_contains(r->below_referrals, id);
	idl_iter_init(r->referrals, &it);
	while ((ref = idl_iter_next(r->referrals, &it)) != 0) {
		int rc = ref == id ? 0 : dn2id_is_within(r->be->store, r->rd->reader.txn, id, ref);
		if (rc != 0)
			return rc == LUMEN_ENOTFOUND ? 0 : rc;
	}
	return 0;
}

/* Tests one candidate. 1 = stop, 0 = go on, <0 error. */
static int test_candidate(struct search_run *r, uint64_t id)
{
	struct entry_cache_handle *handle = NULL;
	const struct entry *e;

	arena_reset(&r->rd->entry_arena);
	if (r->check_scope && !r->scope_by_name) {
		int in = in_scope(r, id);
		if (in <= 0)
			return in;
	}
	if (r->has_referrals) {
		int below = below_referral(r, id);
		if (below != 0)
			return below == 1 ? 0 : below;
		if (idl_contains(r->referrals, id))
			return send_reference(r, id);
	}
	int rc = backend_entry_get_selected(r->be, r->rd, id, r->s->fetch_only,
					    &r->rd->entry_arena, &handle, &e);
	mark(r->op, BACKEND_STAGE_ENTRIES);
	if (rc == LUMEN_ENOTFOUND)
		return 0;   /* deleted since the candidates were read */
	if (rc != LUMEN_OK)
		return rc;
	if (r->check_scope && r->scope_by_name &&
	    !dn_in_scope(e->ndn, r->s->base_ndn, r->s->scope)) {
		backend_entry_put(r->be, handle);
		return 0;
	}
	if (alias_entry_passed_over(r->be, &r->aliases, id, e)) {
		backend_entry_put(r->be, handle);
		return 0;   /* replaced by its target */
	}
	r->op->candidates_tested++;
	r->virt.id = id;
	/* the scratch is reset per candidate, so a long search never fills it */
	bool match = true;
	if (r->s->filter != NULL)
		rc = backend_filter_matches(r->op, r->s->filter, e, r->provider,
					    &r->rd->entry_arena, &match);
	mark(r->op, BACKEND_STAGE_FILTER);
	if (rc == LUMEN_ENOMEM) {
		backend_filter_exhausted(r->op);
		rc = 1;
	} else if (rc == LUMEN_OK && match) {
		rc = send_entry(r, id, e);
	}
	backend_entry_put(r->be, handle);
	return rc;
}

/*
 * Moves to a fresh snapshot. An ID planned from the scope can only have
 * left it through a ModifyDN (IDs are never reused; a deleted one is not
 * found), so scope is checked per ID from then on only once a ModifyDN
 * has written since the plan's snapshot (dn_moved_txn is stored before
 * its commit, and read here after the new snapshot began).
 */
static int maybe_refresh(struct search_run *r, uint64_t *sent_at_refresh)
{
	if (r->sent - *sent_at_refresh < BACKEND_SEARCH_BATCH)
		return LUMEN_OK;
	*sent_at_refresh = r->sent;
	int rc = mdb_reader_refresh(&r->rd->reader);
	if (rc != LUMEN_OK || atomic_load(&r->be->dn_moved_txn) > r->plan_txn)
		r->check_scope = true;
	return rc;
}

static int iterate(struct search_run *r)
{
	struct idl_iter it;
	uint64_t tested = 0, sent_at_refresh = 0, id;

	backend_result(r->op, LDAP_SUCCESS, NULL);
	r->plan_txn = mdb_txn_id(r->rd->reader.txn);
	r->rd->scan = idl_size(r->ids) > BACKEND_SCAN_IDS;
	idl_iter_init(r->ids, &it);
	while ((id = idl_iter_next(r->ids, &it)) != 0) {
		if (id <= r->after_id)
			continue;
		if (backend_op_abandoned(r->op)) {
			backend_result(r->op, LDAP_OTHER, "abandoned");
			return LUMEN_OK;
		}
		if (r->s->examine_budget > 0 && tested == r->s->examine_budget) {
			/* Everything up to here was tested: go on after it. */
			r->last_sent_id = r->last_tested_id;
			r->paused = true;
			return LUMEN_OK;
		}
		if (++tested % TIME_CHECK_EVERY == 0 && database_clock_expired(&r->clock)) {
			backend_result(r->op, LDAP_TIME_LIMIT_EXCEEDED, NULL);
			return LUMEN_OK;
		}
		int rc = test_candidate(r, id);
		r->last_tested_id = id;
		if (rc == 1)
			return LUMEN_OK;
		if (rc == LUMEN_OK)
			rc = maybe_refresh(r, &sent_at_refresh);
		if (rc != LUMEN_OK)
			return rc;
	}
	if (database_clock_expired(&r->clock))
		backend_result(r->op, LDAP_TIME_LIMIT_EXCEEDED, NULL);
	return LUMEN_OK;
}

/*
 * A base at or below a referral object is answered with a referral for
 * the search's scope (BACKEND_ANSWERED): without ManageDsaIT, or with it
 * when the base is missing (found false; id its closest ancestor), as
 * slapd (referral_check_target).
 */
static int base_referral(struct search_run *r, uint64_t id, bool found)
{
	uint64_t ref_id = 0;
	if ((found && r->op->manage_dsa_it) || r->op->replica || r->s->resume.active)
		return LUMEN_OK;
	int rc = referral_above(r->be, r->rd->reader.txn, id, &ref_id);
	if (rc != LUMEN_OK || ref_id == 0)
		return rc;
	return referral_answer(r->be, r->op, r->rd->reader.txn, ref_id, r->op->target_dn,
			       r->s->base_ndn, (int)r->s->scope);
}

/*
 * A base that is missing (found through aliases or not) below a referral
 * object is referred, as slapd refers it; otherwise the noSuchObject
 * already set stands (rc).
 */
static int missing_base_referral(struct search_run *r, int rc)
{
	struct dn2id_match match = { 0 };
	uint64_t id;
	if (dn2id_lookup_snapshot(r->be->store, r->rd->reader.txn, &r->rd->reader,
				  r->s->base_ndn, &id, &match) !=
	    LUMEN_ENOTFOUND || match.id == 0)
		return rc;
	int referred = base_referral(r, match.id, false);
	return referred == LUMEN_OK ? rc : referred;
}

/* The base's ID (through aliases when derefFindingBaseObj asks), or
 * noSuchObject; a base at or below a referral object is answered with a
 * referral (BACKEND_ANSWERED). */
static int find_base(struct search_run *r)
{
	struct dn2id_match match = { 0 };

	if ((r->s->deref & LDAP_DEREF_FINDING) && r->be->alias_class != NULL) {
		int rc = alias_find_base(r->be, r->rd, r->op, r->s->base_ndn, &r->base_id);
		if (rc == LUMEN_OK)
			return base_referral(r, r->base_id, true);
		if (rc == LUMEN_ENOTFOUND && r->op->result_code == LDAP_NO_SUCH_OBJECT)
			return missing_base_referral(r, rc);
		return rc;
	}
	int rc = dn2id_lookup_snapshot(r->be->store, r->rd->reader.txn, &r->rd->reader,
				       r->s->base_ndn, &r->base_id, &match);
	r->base_by_name = rc == LUMEN_OK;
	r->base_holds_database = rc == LUMEN_OK && r->be->suffix_holds_all &&
				 backend_is_suffix(r->be, r->s->base_ndn);
	if (rc == LUMEN_OK || rc == LUMEN_ENOTFOUND) {
		int found = rc;
		rc = base_referral(r, found == LUMEN_OK ? r->base_id : match.id, found == LUMEN_OK);
		if (rc == LUMEN_OK)
			rc = found;
	}
	if (rc == LUMEN_ENOTFOUND)
		return backend_no_such_object(r->be, r->op, r->rd->reader.txn, &match);
	return rc;
}

/* Looks up the base and applies the assertion control to it. */
static int check_base(struct search_run *r)
{
	struct entry_cache_handle *handle = NULL;
	struct backend_virtual virt;
	const struct entry *e;

	int rc = find_base(r);
	/* A resumed search tested its assertion when it started. */
	if (rc != LUMEN_OK || r->op->assertion == NULL || r->s->resume.active)
		return rc;
	rc = backend_entry_get(r->be, r->rd, r->base_id, r->op->arena, &handle, &e);
	if (rc != LUMEN_OK)
		return rc;
	const struct filter_virtual *provider =
		backend_virtual_for_filter(&virt, r->be, r->rd, r->op->assertion, r->op->arena);
	virt.id = r->base_id;
	bool ok = false;
	rc = backend_filter_matches(r->op, r->op->assertion, e, provider, r->op->arena, &ok);
	backend_entry_put(r->be, handle);
	if (rc == LUMEN_ENOMEM)
		return backend_filter_exhausted(r->op);
	if (!ok) {
		backend_result(r->op, LDAP_ASSERTION_FAILED, NULL);
		return LUMEN_EINVAL;
	}
	return LUMEN_OK;
}

/* Continue after the resume point, with the earlier calls' count. */
static void resume_position(struct search_run *r)
{
	const struct backend_search_resume *res = &r->s->resume;
	if (!res->active)
		return;
	if (res->after_id > r->after_id)
		r->after_id = res->after_id;
	r->last_sent_id = res->after_id;
	r->sent = res->sent;
}

/* Remember where a paused search stands, for the next call. */
static void save_position(struct search_run *r)
{
	struct backend_search_resume *res = &r->s->resume;
	res->active = true;
	res->after_id = r->last_sent_id;
	res->sent = r->sent;
	res->has_deadline = r->clock.has_deadline;
	res->deadline = r->clock.deadline;
	r->s->paused = true;
	backend_result(r->op, LDAP_SUCCESS, NULL);
}

int backend_search(struct backend *be, struct backend_op *op, struct backend_search *search)
{
	struct search_run r = { .be = be, .op = op, .s = search };

	op->matched_dn = (struct ber_view){ NULL, 0 };
	op->unindexed = false;
	op->unindexed_attribute = NULL;
	search->next_cookie_len = 0;
	search->paused = false;
	backend_result(op, LDAP_SUCCESS, NULL);
	if (search->sink == NULL)
		return backend_fail(be, op, LUMEN_EINVAL);
	if (search->paged && !read_cookie(&r)) {
		backend_result(op, LDAP_UNWILLING_TO_PERFORM, "paged results cookie is invalid");
		return LUMEN_OK;
	}
	if (search->paged && search->page_size == 0)
		return LUMEN_OK;   /* the client abandons the paged search */
	resume_position(&r);
	database_clock_start(&r.clock, r.op, r.s);
	int rc = backend_reader_acquire(be, &r.rd);
	if (rc != LUMEN_OK)
		return backend_fail(be, op, rc);
	r.provider = backend_virtual_for_filter(&r.virt, be, r.rd, search->filter,
						&r.rd->entry_arena);
	rc = check_base(&r);
	if (rc == LUMEN_OK)
		rc = plan(&r);
	/* Over the budget nothing was planned: the worker that continues plans all. */
	if (rc == LUMEN_OK && !r.over_budget)
		rc = plan_referrals(&r);
	mark(op, BACKEND_STAGE_CANDIDATES);
	if (rc == LUMEN_OK && r.over_budget)
		r.paused = true;          /* before the first entry: nothing sent */
	else if (rc == LUMEN_OK)
		rc = iterate(&r);
	/* Paused or not, the reader goes back to the pool: a stalled client
	 * pins nothing (a parked snapshot is the newest, and a commit ends it). */
	backend_reader_release(be, r.rd);
	if (rc == LUMEN_OK && r.paused)
		save_position(&r);
	/* noSuchObject, alias problems, a referral and assertionFailed are
	 * answers, not failures */
	if (rc == BACKEND_ANSWERED)
		return LUMEN_OK;
	if (rc == LUMEN_ENOTFOUND && (op->result_code == LDAP_NO_SUCH_OBJECT ||
				      op->result_code == LDAP_ALIAS_PROBLEM ||
				      op->result_code == LDAP_ALIAS_DEREFERENCING_PROBLEM))
		return LUMEN_OK;
	if (rc == LUMEN_EINVAL && op->result_code == LDAP_ASSERTION_FAILED)
		return LUMEN_OK;
	if (rc == LUMEN_ELIMIT && (op->result_code == LDAP_ADMIN_LIMIT_EXCEEDED ||
				   op->result_code == LDAP_TIME_LIMIT_EXCEEDED))
		return LUMEN_OK;
	if (rc != LUMEN_OK)
		return backend_fail(be, op, rc);
	return LUMEN_OK;
}
