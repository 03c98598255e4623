/*
 * referral.c — referral objects (RFC 3296) in back-mdb: which entries are
 * one, the table of their IDs, and the URLs an operation that meets one is
 * answered with (RFC 4511 §4.1.10, §4.5.3), written the way slapd's
 * back-mdb writes them (backend_internal.h).
 *
 * Cost: a database that never held a referral object since it was opened
 * pays an atomic load per check (mdb_store.referrals_listed); else every
 * check starts with the referrals table's entry count. With
 * some, a target's ancestors are looked up in the table one by one (a few
 * B-tree probes: DNs are shallow), and a search tests each referral
 * object's place against its scope, not the scope against them.
 */
#include "backend_internal.h"

#include <string.h>

#include "dn.h"
#include "ldap_result_codes.h"
#include "ldap_url.h"

bool referral_entry_is(const struct backend *be, const struct entry *e)
{
	return be->referral_class != NULL && e != NULL &&
	       entry_is_instance_of(e, be->referral_class);
}

static bool table_empty(struct backend *be, MDB_txn *txn)
{
	MDB_stat st;
	if (!be->store->has_referrals || be->referral_class == NULL)
		return true;
	/* The snapshot's own reads (LMDB's plain loads of the meta page)
	 * come before the flag's: a snapshot that holds a referral sees it
	 * set, on weakly ordered CPUs too. */
	atomic_thread_fence(memory_order_acquire);
	if (!atomic_load_explicit(&be->store->referrals_listed, memory_order_relaxed))
		return true;
	return mdb_stat(txn, be->store->referrals, &st) != MDB_SUCCESS || st.ms_entries == 0;
}

static bool listed(struct backend *be, MDB_txn *txn, uint64_t id)
{
	MDB_val key = { sizeof(id), &id }, data;
	return mdb_get(txn, be->store->referrals, &key, &data) == MDB_SUCCESS;
}

int referral_note_change(struct backend *be, MDB_txn *txn, uint64_t id,
			 const struct entry *before, const struct entry *after)
{
	bool was = referral_entry_is(be, before), is = referral_entry_is(be, after);
	return was == is ? LUMEN_OK : referral_list(be, txn, id, is);
}

int referral_list(struct backend *be, MDB_txn *txn, uint64_t id, bool is)
{
	if (!be->store->has_referrals)
		return LUMEN_OK;
	MDB_val key = { sizeof(id), &id }, data = { 1, "" };
	if (is)   /* before the commit that makes it visible to readers */
		atomic_store(&be->store->referrals_listed, true);
	int mrc = is ? mdb_put(txn, be->store->referrals, &key, &data, 0)
		     : mdb_del(txn, be->store->referrals, &key, NULL);
	return mrc == MDB_NOTFOUND ? LUMEN_OK : mdb_store_map_error(mrc);
}

int referral_above(struct backend *be, MDB_txn *txn, uint64_t id, uint64_t *ref_id)
{
	*ref_id = 0;
	if (id == 0 || table_empty(be, txn))
		return LUMEN_OK;
	while (id != 0) {
		if (listed(be, txn, id)) {
			*ref_id = id;
			return LUMEN_OK;
		}
		int rc = dn2id_parent(be->store, txn, id, &id);
		if (rc != LUMEN_OK)
			return rc;
	}
	return LUMEN_OK;
}

/* ------------------------------------------------------------- the URLs */

/*
 * The DN a referral to object r sends the client to for target (user
 * form, parsed and re-spelled; ndn its normalized form): the URL's DN
 * with the RDNs that lead from r down to the target in front, or the
 * target itself when the URL names no DN (slapd's referral_dn_muck).
 */
static int target_dn_for(const struct backend *be, const struct entry *r, struct ber_view url_dn,
			 struct ber_view target, struct ber_view ndn, struct arena *arena,
			 struct ber_view *out)
{
	struct dn parsed;
	struct ber_view lead;
	size_t below = dn_rdn_count(ndn) - dn_rdn_count(r->ndn);
	if (target.len == 0)
		target = ndn;
	int rc = dn_parse(be->schema, (const char *)target.ptr, target.len, arena, &parsed);
	if (rc != LUMEN_OK)
		return rc;
	if (url_dn.len == 0)
		return dn_format(&parsed, arena, out);
	if (below == 0 || below > parsed.n_rdns) {
		*out = url_dn;
		return LUMEN_OK;
	}
	parsed.n_rdns = below;
	rc = dn_format(&parsed, arena, &lead);
	if (rc != LUMEN_OK)
		return rc;
	char *joined = arena_alloc(arena, lead.len + 1 + url_dn.len + 1);
	if (joined == NULL)
		return LUMEN_ENOMEM;
	memcpy(joined, lead.ptr, lead.len);
	joined[lead.len] = ',';
	memcpy(joined + lead.len + 1, url_dn.ptr, url_dn.len);
	joined[lead.len + 1 + url_dn.len] = '\0';
	*out = (struct ber_view){ (const uint8_t *)joined, lead.len + 1 + url_dn.len };
	return LUMEN_OK;
}

/* What a URL of an object is rewritten for. */
struct url_target {
	bool continuation;         /* a search reference: no target entry */
	struct ber_view dn, ndn;   /* the target (not continuation) */
	int scope;                 /* enum ldap_url_scope */
};

/* One ref value rewritten into *out; *out NULL when it is dropped (an
 * LDAP URL slapd could not parse either). Errors: LUMEN_ENOMEM. */
static int rewrite_one(const struct backend *be, const struct entry *r, struct ber_view value,
		       const struct url_target *t, struct arena *arena, char **out)
{
	struct ldap_url url;
	struct ber_view url_dn, dn;
	*out = NULL;
	/* labeledURI: the URI, then optionally a space and a label to drop */
	const uint8_t *space = memchr(value.ptr, ' ', value.len);
	if (space != NULL)
		value.len = (size_t)(space - value.ptr);
	int rc = ldap_url_parse(value, &url);
	if (rc == LUMEN_EUNSUPPORTED) {   /* not LDAP's: handed on as it is */
		*out = arena_strndup(arena, (const char *)value.ptr, value.len);
		return *out != NULL ? LUMEN_OK : LUMEN_ENOMEM;
	}
	if (rc == LUMEN_OK)
		rc = ldap_url_decode_dn(&url, arena, &url_dn);
	if (rc == LUMEN_EMALFORMED)
		return LUMEN_OK;
	if (rc != LUMEN_OK)
		return rc;
	if (t->continuation)
		dn = url_dn.len > 0 ? url_dn : r->dn;
	else
		rc = target_dn_for(be, r, url_dn, t->dn, t->ndn, arena, &dn);
	if (rc == LUMEN_EMALFORMED || rc == LUMEN_ESCHEMA || rc == LUMEN_ENOTFOUND)
		return LUMEN_OK;   /* a target that no longer parses: nothing to say */
	if (rc != LUMEN_OK)
		return rc;
	return ldap_url_write(&url, dn, (enum ldap_url_scope)t->scope, arena, out);
}

/* r's ref values rewritten for t, the dropped ones left out. */
static int rewrite_all(const struct backend *be, const struct entry *r,
		       const struct url_target *t, struct arena *arena, char ***urls, size_t *n)
{
	const struct entry_attribute *ref = be->ref_type != NULL ?
		entry_find_type(r, be->ref_type) : NULL;
	*urls = NULL;
	*n = 0;
	if (ref == NULL)
		return LUMEN_OK;
	char **list = arena_calloc(arena, ref->n_values, sizeof(*list));
	if (list == NULL)
		return LUMEN_ENOMEM;
	for (size_t i = 0; i < ref->n_values; i++) {
		int rc = rewrite_one(be, r, ref->values[i].value, t, arena, &list[*n]);
		if (rc != LUMEN_OK)
			return rc;
		if (list[*n] != NULL)
			(*n)++;
	}
	*urls = list;
	return LUMEN_OK;
}

int referral_continuation(const struct backend *be, const struct entry *e,
			  enum ldap_scope scope, struct arena *arena, char ***urls, size_t *n)
{
	struct url_target t = {
		.continuation = true,
		.scope = scope == LDAP_SCOPE_ONE ? LDAP_URL_SCOPE_BASE : LDAP_URL_SCOPE_SUB,
	};
	return rewrite_all(be, e, &t, arena, urls, n);
}

int referral_answer(struct backend *be, struct backend_op *op, MDB_txn *txn, uint64_t ref_id,
		    struct ber_view target_dn, struct ber_view target_ndn, int scope)
{
	struct url_target t = { .dn = target_dn, .ndn = target_ndn, .scope = scope };
	struct entry *r = NULL;
	char **urls;
	size_t n;
	int rc = backend_load_entry(be, txn, ref_id, op->arena, &r);
	if (rc == LUMEN_OK)
		rc = rewrite_all(be, r, &t, op->arena, &urls, &n);
	if (rc == LUMEN_OK) {
		backend_result(op, n > 0 ? LDAP_REFERRAL : LDAP_NO_SUCH_OBJECT, NULL);
		op->referrals = urls;
		op->n_referrals = n;
		char *matched = arena_strndup(op->arena, (const char *)r->dn.ptr, r->dn.len);
		rc = matched != NULL ? LUMEN_OK : LUMEN_ENOMEM;
		op->matched_dn = (struct ber_view){ (const uint8_t *)matched, r->dn.len };
	}
	entry_free(r);
	return rc == LUMEN_OK ? BACKEND_ANSWERED : rc;
}

int referral_check_target(struct backend *be, struct backend_op *op, MDB_txn *txn,
			  uint64_t id, const struct dn2id_match *m, struct ber_view ndn)
{
	uint64_t ref_id = 0;
	if (op->replica || (id != 0 && op->manage_dsa_it))
		return LUMEN_OK;
	int rc = referral_above(be, txn, id != 0 ? id : (m != NULL ? m->id : 0), &ref_id);
	if (rc != LUMEN_OK || ref_id == 0)
		return rc;
	return referral_answer(be, op, txn, ref_id, op->target_dn, ndn, LDAP_URL_SCOPE_ABSENT);
}

/* ------------------------------------------------------------- searches */

static int in_search_scope(struct backend *be, MDB_txn *txn, uint64_t id, uint64_t base_id,
			   enum ldap_scope scope)
{
	uint64_t parent = 0;
	if (id == base_id)
		return 0;
	if (scope == LDAP_SCOPE_ONE) {
		int rc = dn2id_parent(be->store, txn, id, &parent);
		return rc == LUMEN_OK ? parent == base_id : rc;
	}
	return dn2id_is_within(be->store, txn, id, base_id);
}

/* Adds the entries below referral object id to below. */
static int add_below(struct backend *be, MDB_txn *txn, uint64_t id, struct idl *below)
{
	uint64_t descendants = 0;
	struct idl sub;
	int rc = dn2id_counts(be->store, txn, id, NULL, &descendants);
	if (rc != LUMEN_OK || descendants == 0)
		return rc;
	idl_init(&sub);
	rc = dn2id_subtree(be->store, txn, id, &sub);
	if (rc == LUMEN_OK) {
		idl_delete(&sub, id);
		idl_union(below, &sub);
	}
	idl_release(&sub);
	return rc;
}

int referral_scope(struct backend *be, MDB_txn *txn, uint64_t base_id, enum ldap_scope scope,
		   struct idl *refs, struct idl *below)
{
	MDB_cursor *cursor;
	MDB_val key, data;
	idl_clear(refs);
	idl_clear(below);
	if (scope == LDAP_SCOPE_BASE || table_empty(be, txn))
		return LUMEN_OK;
	int mrc = mdb_cursor_open(txn, be->store->referrals, &cursor);
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	int rc = LUMEN_OK;
	for (mrc = mdb_cursor_get(cursor, &key, &data, MDB_FIRST); mrc == MDB_SUCCESS && rc == LUMEN_OK;
	     mrc = mdb_cursor_get(cursor, &key, &data, MDB_NEXT)) {
		uint64_t id;
		memcpy(&id, key.mv_data, sizeof(id));
		rc = in_search_scope(be, txn, id, base_id, scope);
		if (rc == LUMEN_ENOTFOUND)
			rc = 0;
		if (rc == 1) {
			idl_insert(refs, id);
			rc = add_below(be, txn, id, below);
		}
	}
	mdb_cursor_close(cursor);
	if (rc == LUMEN_OK && mrc != MDB_NOTFOUND)
		rc = mdb_store_map_error(mrc);
	return rc;
}
