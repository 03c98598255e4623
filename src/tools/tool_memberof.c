/*
 * tool_memberof.c — memberOf computed from the groups, for lumenadd and
 * `lumenindex --memberof` (tools.h).
 *
 * Two walks of the tree in one read snapshot: the first notes a
 * (member, group) pair for every member value of every group, sorted by
 * member; the second compares each entry's memberOf with its pairs and
 * keeps the entries that differ. Then one replace per such entry through
 * backend_modify (tool mode: the bulk's large transactions), the read
 * snapshot closed first (LMDB: one transaction per thread).
 */
#include "tools.h"

#include <lmdb.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "config_memberof.h"
#include "dn.h"
#include "entry.h"
#include "ldap_result_codes.h"
#include "lumen_error.h"
#include "mdb_store.h"

struct pair {
	struct ber_view member_ndn;
	struct ber_view group_dn;
	struct ber_view group_ndn;
};

struct update {
	struct ber_view ndn;
	size_t first, n;             /* its pairs */
};

struct rebuild {
	const struct config_memberof *settings;
	struct arena memory;
	struct pair *pairs;
	size_t n_pairs, cap_pairs;
	struct update *updates;
	size_t n_updates, cap_updates;
};

static int grow(void **array, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return LUMEN_OK;
	size_t bigger = *cap ? 2 * *cap : 256;
	void *grown = realloc(*array, bigger * size);
	if (grown == NULL)
		return LUMEN_ENOMEM;
	*array = grown;
	*cap = bigger;
	return LUMEN_OK;
}

static int copy(struct arena *arena, struct ber_view in, struct ber_view *out)
{
	uint8_t *bytes = arena_memdup(arena, in.ptr, in.len);
	*out = (struct ber_view){ bytes, in.len };
	return bytes != NULL ? LUMEN_OK : LUMEN_ENOMEM;
}

static int note_pair(struct rebuild *r, const struct entry *g, struct ber_view member_ndn)
{
	int rc = grow((void **)&r->pairs, &r->cap_pairs, r->n_pairs, sizeof(*r->pairs));
	struct pair *p = rc == LUMEN_OK ? &r->pairs[r->n_pairs] : NULL;
	if (rc == LUMEN_OK)
		rc = copy(&r->memory, member_ndn, &p->member_ndn);
	if (rc == LUMEN_OK)
		rc = copy(&r->memory, g->dn, &p->group_dn);
	if (rc == LUMEN_OK)
		rc = copy(&r->memory, g->ndn, &p->group_ndn);
	if (rc == LUMEN_OK)
		r->n_pairs++;
	return rc;
}

static int collect_groups(void *ctx, uint64_t id, const struct entry *e)
{
	struct rebuild *r = ctx;
	(void)id;
	if (!entry_is_instance_of(e, r->settings->group_oc))
		return LUMEN_OK;
	int rc = LUMEN_OK;
	for (size_t i = 0; i < e->n_attributes && rc == LUMEN_OK; i++) {
		const struct entry_attribute *a = &e->attributes[i];
		for (size_t k = 0; a->desc.type == r->settings->member_ad && k < a->n_values &&
				   rc == LUMEN_OK; k++)
			if (a->values[k].normalized.len > 0)
				rc = note_pair(r, e, a->values[k].normalized);
	}
	return rc;
}

static int compare_views(struct ber_view a, struct ber_view b)
{
	size_t n = a.len < b.len ? a.len : b.len;
	int c = n > 0 ? memcmp(a.ptr, b.ptr, n) : 0;
	return c != 0 ? c : (a.len > b.len) - (a.len < b.len);
}

static int by_member(const void *a, const void *b)
{
	return compare_views(((const struct pair *)a)->member_ndn,
			     ((const struct pair *)b)->member_ndn);
}

/* The first pair of member ndn (n_pairs when none). */
static size_t first_pair(const struct rebuild *r, struct ber_view ndn)
{
	size_t lo = 0, hi = r->n_pairs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (compare_views(r->pairs[mid].member_ndn, ndn) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* True if e's memberOf holds exactly the groups of pairs [first, first+n). */
static bool agrees(const struct rebuild *r, const struct entry *e, size_t first, size_t n)
{
	struct attribute_description ad = { .type = r->settings->memberof_ad };
	const struct entry_attribute *a = entry_find(e, &ad);
	size_t have = a != NULL ? a->n_values : 0, distinct = 0;
	for (size_t i = first; i < first + n; i++) {
		if (a == NULL || entry_attribute_find_normalized(a, r->pairs[i].group_ndn) < 0)
			return false;
		distinct += i == first ||
			    compare_views(r->pairs[i].group_ndn, r->pairs[i - 1].group_ndn) != 0;
	}
	return have == distinct;
}

static int compare_entry(void *ctx, uint64_t id, const struct entry *e)
{
	struct rebuild *r = ctx;
	(void)id;
	size_t first = first_pair(r, e->ndn), n = 0;
	while (first + n < r->n_pairs && compare_views(r->pairs[first + n].member_ndn, e->ndn) == 0)
		n++;
	if (agrees(r, e, first, n))
		return LUMEN_OK;
	int rc = grow((void **)&r->updates, &r->cap_updates, r->n_updates, sizeof(*r->updates));
	struct update *u = rc == LUMEN_OK ? &r->updates[r->n_updates] : NULL;
	if (rc == LUMEN_OK)
		rc = copy(&r->memory, e->ndn, &u->ndn);
	if (rc == LUMEN_OK) {
		u->first = first;
		u->n = n;
		r->n_updates++;
	}
	return rc;
}

static int walk(struct backend *be, const struct tool_database *t, tool_entry_fn fn,
		struct rebuild *r, char *err, size_t errlen)
{
	MDB_txn *txn = NULL;
	int rc = mdb_store_map_error(mdb_txn_begin(backend_store(be)->env, NULL, MDB_RDONLY, &txn));
	if (rc != LUMEN_OK) {
		tool_error(err, errlen, "memberOf: cannot read the database: %s", lumen_strerror(rc));
		return rc;
	}
	struct tool_walk w = { .schema = t->config->schema, .store = backend_store(be),
			       .txn = txn, .fn = fn, .ctx = r, .err = err, .errlen = errlen };
	rc = tool_walk_tree(&w, NULL);
	mdb_txn_abort(txn);
	return rc;
}

/* Sorts each entry's groups too, so equal groups sit together. */
static int by_member_then_group(const void *a, const void *b)
{
	int c = by_member(a, b);
	return c != 0 ? c : compare_views(((const struct pair *)a)->group_ndn,
					  ((const struct pair *)b)->group_ndn);
}

static int apply_update(struct backend *be, const struct rebuild *r, const struct update *u,
			struct ber_view modifier_ndn, struct arena *arena, char *err, size_t errlen)
{
	struct ber_view *values = arena_calloc(arena, u->n ? u->n : 1, sizeof(*values));
	size_t n = 0;
	if (values == NULL)
		return LUMEN_ENOMEM;
	for (size_t i = u->first; i < u->first + u->n; i++)
		if (i == u->first || compare_views(r->pairs[i].group_ndn, r->pairs[i - 1].group_ndn))
			values[n++] = r->pairs[i].group_dn;
	const char *name = attribute_type_name(r->settings->memberof_ad);
	struct ldap_change change = {
		.operation = LDAP_MOD_REPLACE,
		.modification = { { (const uint8_t *)name, strlen(name) }, values, n },
	};
	struct backend_op op = { .arena = arena, .from_tool = true, .is_root = true,
				 .requester_ndn = modifier_ndn };
	int rc = backend_modify(be, &op, u->ndn, &change, 1);
	if (rc == LUMEN_OK && op.result_code != LDAP_SUCCESS)
		rc = LUMEN_EMALFORMED;
	if (rc != LUMEN_OK)
		tool_error(err, errlen, "memberOf of \"%.*s\": %s", (int)u->ndn.len,
			   (const char *)u->ndn.ptr, op.diagnostic != NULL ? op.diagnostic
								 : lumen_strerror(rc));
	entry_free(op.pre_read);
	entry_free(op.post_read);
	return rc;
}

static int apply_all(struct backend *be, const struct tool_database *t, struct rebuild *r,
		     char *err, size_t errlen)
{
	struct arena arena;
	struct ber_view modifier = { NULL, 0 };
	const char *dn = r->settings->modifier_dn;
	int rc = LUMEN_OK;

	arena_init(&arena, 0);
	if (dn != NULL && dn_normalize(t->config->schema, dn, strlen(dn), &r->memory,
				       &modifier) != LUMEN_OK)
		modifier = (struct ber_view){ NULL, 0 };
	for (size_t i = 0; i < r->n_updates && rc == LUMEN_OK; i++) {
		arena_reset(&arena);
		rc = apply_update(be, r, &r->updates[i], modifier, &arena, err, errlen);
	}
	arena_free(&arena);
	return rc;
}

static int rebuild(struct backend *be, const struct tool_database *t,
		   const struct config_memberof *settings, uint64_t *changed, char *err,
		   size_t errlen)
{
	struct rebuild r = { .settings = settings };
	arena_init(&r.memory, 0);
	int rc = walk(be, t, collect_groups, &r, err, errlen);
	if (rc == LUMEN_OK) {
		if (r.n_pairs > 0)
			qsort(r.pairs, r.n_pairs, sizeof(*r.pairs), by_member_then_group);
		rc = walk(be, t, compare_entry, &r, err, errlen);
	}
	if (rc == LUMEN_OK)
		rc = apply_all(be, t, &r, err, errlen);
	if (rc == LUMEN_ENOMEM)
		tool_error(err, errlen, "memberOf: out of memory");
	*changed = rc == LUMEN_OK ? r.n_updates : 0;
	free(r.pairs);
	free(r.updates);
	arena_free(&r.memory);
	return rc;
}

int tool_memberof_rebuild(struct backend *be, const struct tool_database *t, uint64_t *changed,
			  char *err, size_t errlen)
{
	const struct config_overlay *o = config_database_overlay(t->db, "memberof");
	struct config_memberof settings;

	*changed = 0;
	if (o == NULL)
		return LUMEN_OK;
	int rc = config_memberof_parse(t->config->schema, t->db, o, &settings, err, errlen);
	if (rc != LUMEN_OK)
		return rc;
	rc = rebuild(be, t, &settings, changed, err, errlen);
	config_memberof_free(&settings);
	return rc;
}
