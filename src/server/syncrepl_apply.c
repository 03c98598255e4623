/*
 * syncrepl_apply.c — a consumer's changes to its own database: entries
 * found by entryUUID, added, renamed and replaced with the provider's
 * operational attributes, deleted; the present phase's deletes; the
 * cookie in the suffix entry's contextCSN (syncrepl_apply.h).
 */
#include "syncrepl_apply.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dn.h"
#include "entry.h"
#include "filter.h"
#include "ldap_filter_text.h"
#include "array.h"
#include "ldap_result_codes.h"
#include "lumen_error.h"

#define UUID_TEXT_SIZE (LDAP_SYNC_UUID_TEXT + 1)

/* The set of entryUUIDs the provider named during one refresh. */
struct uuid_set {
	uint8_t (*items)[LDAP_SYNC_UUID_SIZE];
	size_t n, cap;
	bool sorted;
};

struct syncrepl_apply {
	const struct schema *schema;
	struct database *database;
	struct ber_view context_ndn;    /* owned copy */
	struct ber_view rootdn_ndn;     /* owned copy */
	struct ber_view base_ndn;       /* owned copy */
	enum ldap_scope scope;
	char *filter_text;
	struct arena arena;             /* per change; reset by each call */
	struct uuid_set present;
	const struct attribute_type *entry_uuid, *entry_csn, *context_csn;
	bool multiprovider;
	unsigned server_id;
	bool all_operational;           /* absent operational attributes go too */
	struct sync_cookie provider;    /* multiprovider: what the provider has seen */
};

/* Types the server computes or keeps itself: never taken from a provider. */
static const char *const not_replicated[] = {
	"entryDN", "hasSubordinates", "numSubordinates", "subschemaSubentry", "contextCSN",
	"entryUUID",
};

/* ------------------------------------------------------------ helpers */

static struct ber_view view_of(const char *s)
{
	return (struct ber_view){ (const uint8_t *)s, strlen(s) };
}

static bool same_view(struct ber_view a, struct ber_view b)
{
	return a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

static int copy_view(struct ber_view in, struct ber_view *out)
{
	uint8_t *p = malloc(in.len + 1);
	if (p == NULL)
		return LUMEN_ENOMEM;
	if (in.len > 0)
		memcpy(p, in.ptr, in.len);
	p[in.len] = '\0';
	*out = (struct ber_view){ p, in.len };
	return LUMEN_OK;
}

/* A database outcome as an apply error: why names the LDAP answer. */
static int outcome(const struct backend_op *op, int rc, const char *what, char *why,
		   size_t whylen)
{
	if (rc == LUMEN_OK && op->result_code == LDAP_SUCCESS)
		return LUMEN_OK;
	snprintf(why, whylen, "%s: %s (%s)", what,
		 rc != LUMEN_OK ? lumen_strerror(rc) : ldap_result_name(op->result_code),
		 op->diagnostic != NULL ? op->diagnostic : "");
	if (rc != LUMEN_OK)
		return rc;
	return op->result_code == LDAP_NO_SUCH_OBJECT ? LUMEN_ENOTFOUND : LUMEN_EINVAL;
}

/* A fresh operation of the consumer: rootdn, no limits, provider's stamps. */
static void write_op(struct syncrepl_apply *a, struct backend_op *op)
{
	memset(op, 0, sizeof(*op));
	op->arena = &a->arena;
	op->requester_ndn = a->rootdn_ndn;
	op->is_root = true;
	op->from_tool = true;
	op->replica = true;
	op->manage_dsa_it = true;   /* referral objects are entries to copy */
}

/* --------------------------------------------------------- uuid sets */

static int uuid_set_add(struct uuid_set *s, const uint8_t uuid[LDAP_SYNC_UUID_SIZE])
{
	void *grown = array_reserve(s->items, &s->cap, s->n + 1, sizeof(*s->items), 1024);
	if (grown == NULL)
		return LUMEN_ENOMEM;
	s->items = grown;
	memcpy(s->items[s->n++], uuid, LDAP_SYNC_UUID_SIZE);
	s->sorted = false;
	return LUMEN_OK;
}

static int compare_uuid(const void *a, const void *b)
{
	return memcmp(a, b, LDAP_SYNC_UUID_SIZE);
}

static bool uuid_set_has(struct uuid_set *s, const uint8_t uuid[LDAP_SYNC_UUID_SIZE])
{
	if (s->n == 0)
		return false;
	if (!s->sorted) {
		qsort(s->items, s->n, sizeof(*s->items), compare_uuid);
		s->sorted = true;
	}
	return bsearch(uuid, s->items, s->n, sizeof(*s->items), compare_uuid) != NULL;
}

/* ------------------------------------------------------------ lookups */

/* The one entry of an entryUUID (a copy), for find_by_uuid's sink. */
struct found {
	struct entry *entry;
	int error;
};

static int keep_first(void *ctx, const struct entry *e, const struct backend_entry_info *info)
{
	struct found *f = ctx;
	(void)info;
	if (f->entry != NULL)
		return 0;
	f->error = entry_dup(e, &f->entry);
	return f->error == LUMEN_OK ? 0 : 1;
}

/* A compiled (attr=value) filter in the arena. */
static int equality_filter(struct syncrepl_apply *a, const char *attr, struct ber_view value,
			   struct filter *out)
{
	struct ldap_filter *f = arena_calloc(&a->arena, 1, sizeof(*f));
	if (f == NULL)
		return LUMEN_ENOMEM;
	f->type = LDAP_FILTER_EQUALITY;
	f->u.ava.attr = view_of(attr);
	f->u.ava.value = value;
	return filter_compile(a->schema, f, NULL, &a->arena, out);
}

/*
 * The local entry holding entryUUID uuid (a copy the caller frees), or
 * NULL. Searched from the suffix (an `index entryUUID eq` makes it cheap).
 */
static int find_by_uuid(struct syncrepl_apply *a, const uint8_t uuid[LDAP_SYNC_UUID_SIZE],
			struct entry **out)
{
	char text[UUID_TEXT_SIZE];
	struct filter filter;
	struct found found = { NULL, LUMEN_OK };
	struct backend_op op;
	ldap_sync_uuid_format(uuid, text);
	*out = NULL;
	int rc = equality_filter(a, "entryUUID", view_of(text), &filter);
	if (rc != LUMEN_OK)
		return rc;
	write_op(a, &op);
	struct backend_search search = { .base_ndn = a->context_ndn, .scope = LDAP_SCOPE_SUBTREE,
					 .filter = &filter, .sink = keep_first,
					 .sink_ctx = &found };
	rc = database_search(a->database, &op, &search);
	if (rc == LUMEN_OK && op.result_code == LDAP_NO_SUCH_OBJECT)
		rc = LUMEN_OK;   /* no suffix entry yet: nothing can match */
	else if (rc == LUMEN_OK && op.result_code != LDAP_SUCCESS)
		rc = found.error != LUMEN_OK ? found.error : LUMEN_EIO;
	if (rc != LUMEN_OK) {
		entry_free(found.entry);
		return rc;
	}
	*out = found.entry;
	return LUMEN_OK;
}

/* --------------------------------------------------- the entry's content */

static bool is_not_replicated(const struct attribute_type *type)
{
	for (size_t i = 0; i < sizeof(not_replicated) / sizeof(not_replicated[0]); i++)
		if (strcasecmp(attribute_type_name(type), not_replicated[i]) == 0)
			return true;
	return false;
}

/* What the provider's entry brings in, entryUUID set from the control. */
struct incoming {
	struct ldap_attribute *attributes;
	struct attribute_description *descs;
	size_t n;
	struct ber_view csn;            /* its entryCSN; empty when none */
};

static int take_attribute(struct syncrepl_apply *a, const struct ldap_attribute *in,
			  struct incoming *out, char *why, size_t whylen)
{
	struct attribute_description ad;
	int rc = attribute_description_parse(a->schema, (const char *)in->type.ptr, in->type.len,
					     &ad);
	if (rc != LUMEN_OK) {
		snprintf(why, whylen, "the provider sent attribute \"%.*s\", which the schema "
			 "does not know", (int)(in->type.len > 64 ? 64 : in->type.len),
			 (const char *)in->type.ptr);
		return LUMEN_EINVAL;
	}
	if (is_not_replicated(ad.type) || in->n_values == 0)
		return LUMEN_OK;
	if (ad.type == a->entry_csn)
		out->csn = in->values[0];
	out->descs[out->n] = ad;
	out->attributes[out->n++] = *in;
	return LUMEN_OK;
}

static int build_incoming(struct syncrepl_apply *a, const uint8_t uuid[LDAP_SYNC_UUID_SIZE],
			  const struct ldap_attribute *attrs, size_t n, struct incoming *out,
			  char *why, size_t whylen)
{
	memset(out, 0, sizeof(*out));
	out->attributes = arena_calloc(&a->arena, n + 1, sizeof(*out->attributes));
	out->descs = arena_calloc(&a->arena, n + 1, sizeof(*out->descs));
	char *text = arena_alloc(&a->arena, UUID_TEXT_SIZE);
	struct ber_view *value = arena_alloc(&a->arena, sizeof(*value));
	if (out->attributes == NULL || out->descs == NULL || text == NULL || value == NULL)
		return LUMEN_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int rc = take_attribute(a, &attrs[i], out, why, whylen);
		if (rc != LUMEN_OK)
			return rc;
	}
	ldap_sync_uuid_format(uuid, text);
	*value = view_of(text);
	out->descs[out->n] = (struct attribute_description){ a->entry_uuid, { NULL, 0 } };
	out->attributes[out->n++] = (struct ldap_attribute){ view_of("entryUUID"), value, 1 };
	return LUMEN_OK;
}

static bool same_description(const struct attribute_description *x,
			     const struct attribute_description *y)
{
	return x->type == y->type && x->options.len == y->options.len &&
	       (x->options.len == 0 ||
		strncasecmp((const char *)x->options.ptr, (const char *)y->options.ptr,
			    x->options.len) == 0);
}

/*
 * The modify that turns local into the provider's entry: each incoming
 * attribute replaced (entryUUID aside: it is the same), each local user
 * attribute the provider lacks removed, and each local operational one
 * too when the provider sends them all (those the server keeps itself
 * aside).
 */
static int build_changes(struct syncrepl_apply *a, const struct entry *local,
			 const struct incoming *in, bool with_uuid, struct ldap_change **out,
			 size_t *n)
{
	struct ldap_change *changes =
		arena_calloc(&a->arena, in->n + local->n_attributes + 1, sizeof(*changes));
	if (changes == NULL)
		return LUMEN_ENOMEM;
	*n = 0;
	for (size_t i = 0; i < in->n; i++)
		if (with_uuid || in->descs[i].type != a->entry_uuid)
			changes[(*n)++] = (struct ldap_change){ LDAP_MOD_REPLACE, in->attributes[i] };
	for (size_t j = 0; j < local->n_attributes; j++) {
		const struct entry_attribute *la = &local->attributes[j];
		bool kept = false;
		if (attribute_type_is_operational(la->desc.type) &&
		    (!a->all_operational || is_not_replicated(la->desc.type)))
			continue;
		for (size_t i = 0; i < in->n && !kept; i++)
			kept = same_description(&in->descs[i], &la->desc);
		if (!kept)
			changes[(*n)++] = (struct ldap_change){
				LDAP_MOD_REPLACE, { la->name, NULL, 0 } };
	}
	*out = changes;
	return LUMEN_OK;
}

/* ---------------------------------------------------------- the writes */

static int delete_ndn(struct syncrepl_apply *a, struct ber_view ndn, char *why, size_t whylen)
{
	struct backend_op op;
	write_op(a, &op);
	int rc = database_delete(a->database, &op, ndn);
	if (rc == LUMEN_OK && op.result_code == LDAP_NO_SUCH_OBJECT)
		return LUMEN_OK;   /* gone already */
	return outcome(&op, rc, "delete", why, whylen);
}

/* The entry at ndn (a copy the caller frees), for take_over. */
static int fetch_copy(struct syncrepl_apply *a, struct ber_view ndn, struct entry **out)
{
	struct found found = { NULL, LUMEN_OK };
	struct backend_op op;
	write_op(a, &op);
	int rc = database_fetch(a->database, &op, ndn, keep_first, &found);
	if (rc == LUMEN_OK && found.error != LUMEN_OK)
		rc = found.error;
	else if (rc == LUMEN_OK && found.entry == NULL)
		rc = LUMEN_ENOTFOUND;
	if (rc != LUMEN_OK)
		entry_free(found.entry);
	*out = rc == LUMEN_OK ? found.entry : NULL;
	return rc;
}

static int replace_entry(struct syncrepl_apply *a, const struct entry *local,
			 struct ber_view ndn, const struct incoming *in, bool with_uuid,
			 char *why, size_t whylen);

/*
 * Another entryUUID holds the DN (the same data loaded on both sides, or
 * deleted and re-added on the provider while we were away): the
 * provider's entry replaces it, entryUUID included, as OpenLDAP does.
 */
static int take_over(struct syncrepl_apply *a, struct ber_view ndn, const struct incoming *in,
		     char *why, size_t whylen)
{
	struct entry *local = NULL;
	int rc = fetch_copy(a, ndn, &local);
	if (rc != LUMEN_OK) {
		snprintf(why, whylen, "add: the DN exists but cannot be read: %s",
			 lumen_strerror(rc));
		return rc == LUMEN_ENOMEM ? rc : LUMEN_EIO;
	}
	rc = replace_entry(a, local, ndn, in, true, why, whylen);
	entry_free(local);
	return rc;
}

static int add_entry(struct syncrepl_apply *a, struct ber_view dn, struct ber_view ndn,
		     const struct incoming *in, char *why, size_t whylen)
{
	struct backend_op op;
	write_op(a, &op);
	int rc = database_add(a->database, &op, dn, ndn, in->attributes, in->n);
	if (rc == LUMEN_OK && op.result_code == LDAP_ENTRY_ALREADY_EXISTS)
		return take_over(a, ndn, in, why, whylen);
	return outcome(&op, rc, "add", why, whylen);
}

/* Moves local (at old_ndn) to dn/ndn; the old RDN values stay for the
 * modify that follows to settle. */
static int rename_entry(struct syncrepl_apply *a, struct ber_view old_ndn, struct ber_view dn,
			struct ber_view ndn, char *why, size_t whylen)
{
	struct dn parsed;
	struct ber_view new_rdn, rdn_ndn, parent, old_parent;
	int rc = dn_parse(a->schema, (const char *)dn.ptr, dn.len, &a->arena, &parsed);
	if (rc == LUMEN_OK && parsed.n_rdns == 0)
		rc = LUMEN_EMALFORMED;
	if (rc == LUMEN_OK) {
		struct dn first = { parsed.rdns, 1 };
		rc = dn_format(&first, &a->arena, &new_rdn);
	}
	if (rc != LUMEN_OK) {
		snprintf(why, whylen, "rename: the new DN does not parse (%s)", lumen_strerror(rc));
		return rc == LUMEN_ENOMEM ? rc : LUMEN_EINVAL;
	}
	dn_split_first(ndn, &rdn_ndn, &parent);
	dn_split_first(old_ndn, &rdn_ndn, &old_parent);
	bool move = !same_view(parent, old_parent);
	struct backend_op op;
	write_op(a, &op);
	rc = database_modrdn(a->database, &op, old_ndn, new_rdn, false, move, parent);
	return outcome(&op, rc, "rename", why, whylen);
}

static int replace_entry(struct syncrepl_apply *a, const struct entry *local,
			 struct ber_view ndn, const struct incoming *in, bool with_uuid,
			 char *why, size_t whylen)
{
	struct ldap_change *changes;
	size_t n;
	struct backend_op op;
	int rc = build_changes(a, local, in, with_uuid, &changes, &n);
	if (rc != LUMEN_OK)
		return rc;
	write_op(a, &op);
	rc = database_modify(a->database, &op, ndn, changes, n);
	return outcome(&op, rc, "modify", why, whylen);
}

/* The local entry's entryCSN equals the incoming one. */
static bool same_csn(const struct syncrepl_apply *a, const struct entry *local,
		     struct ber_view csn)
{
	const struct entry_attribute *at = entry_find_type(local, a->entry_csn);
	return csn.len > 0 && at != NULL && at->n_values == 1 && same_view(at->values[0].value, csn);
}

/* The entryCSN of e, or an empty view. */
static struct ber_view csn_of(const struct syncrepl_apply *a, const struct entry *e)
{
	const struct entry_attribute *at = entry_find_type(e, a->entry_csn);
	return at != NULL && at->n_values == 1 ? at->values[0].value : (struct ber_view){ NULL, 0 };
}

/*
 * multiprovider: is the provider's version of an entry to be ignored?
 * Yes when the local one is as new or newer (newest entryCSN wins; our
 * own changes coming back have the same CSN), and when there is no local
 * one but the change was made here (deleted here since).
 */
static bool stale_incoming(const struct syncrepl_apply *a, const struct entry *local,
			   struct ber_view csn)
{
	struct csn parsed;
	const char *bad;
	if (!a->multiprovider || csn.len != CSN_LENGTH)
		return false;
	if (local == NULL)
		return csn_parse((const char *)csn.ptr, csn.len, &parsed, &bad) == LUMEN_OK &&
		       parsed.sid == a->server_id;
	struct ber_view have = csn_of(a, local);
	return have.len == CSN_LENGTH && memcmp(have.ptr, csn.ptr, CSN_LENGTH) >= 0;
}

static int upsert(struct syncrepl_apply *a, const uint8_t uuid[LDAP_SYNC_UUID_SIZE],
		  struct ber_view dn, const struct ldap_attribute *attrs, size_t n,
		  bool *changed, char *why, size_t whylen)
{
	struct ber_view ndn;
	struct incoming in;
	struct entry *local = NULL;
	int rc = dn_normalize(a->schema, (const char *)dn.ptr, dn.len, &a->arena, &ndn);
	if (rc != LUMEN_OK || !dn_is_within(ndn, a->base_ndn)) {
		snprintf(why, whylen, "the provider sent a DN %s", rc != LUMEN_OK
			 ? "that does not parse" : "outside the searchbase");
		return rc == LUMEN_ENOMEM ? rc : LUMEN_EINVAL;
	}
	rc = build_incoming(a, uuid, attrs, n, &in, why, whylen);
	if (rc == LUMEN_OK)
		rc = find_by_uuid(a, uuid, &local);
	if (rc != LUMEN_OK)
		return rc;
	if (stale_incoming(a, local, in.csn)) {
		entry_free(local);
		return LUMEN_OK;
	}
	if (local == NULL) {
		*changed = true;
		return add_entry(a, dn, ndn, &in, why, whylen);
	}
	bool moved = !same_view(local->ndn, ndn);
	if (moved)
		rc = rename_entry(a, local->ndn, dn, ndn, why, whylen);
	if (rc == LUMEN_OK && (moved || !same_csn(a, local, in.csn)))
		rc = replace_entry(a, local, ndn, &in, false, why, whylen);
	*changed = moved || !same_csn(a, local, in.csn);
	entry_free(local);
	return rc;
}

static int delete_uuid(struct syncrepl_apply *a, const uint8_t uuid[LDAP_SYNC_UUID_SIZE],
		       bool *changed, char *why, size_t whylen)
{
	struct entry *local = NULL;
	int rc = find_by_uuid(a, uuid, &local);
	*changed = false;
	if (rc != LUMEN_OK || local == NULL)
		return rc;
	*changed = true;
	rc = delete_ndn(a, local->ndn, why, whylen);
	entry_free(local);
	return rc;
}

int syncrepl_apply_entry(struct syncrepl_apply *a, enum ldap_sync_state state,
			 const uint8_t uuid[LDAP_SYNC_UUID_SIZE], struct ber_view dn,
			 const struct ldap_attribute *attributes, size_t n, bool *changed,
			 char *why, size_t whylen)
{
	int rc = LUMEN_OK;
	*changed = false;
	arena_reset(&a->arena);
	if (state == LDAP_SYNC_DELETE)
		return delete_uuid(a, uuid, changed, why, whylen);
	rc = uuid_set_add(&a->present, uuid);
	if (rc == LUMEN_OK && state != LDAP_SYNC_PRESENT)
		rc = upsert(a, uuid, dn, attributes, n, changed, why, whylen);
	return rc;
}

int syncrepl_apply_id(struct syncrepl_apply *a, const uint8_t uuid[LDAP_SYNC_UUID_SIZE],
		      bool deleted, char *why, size_t whylen)
{
	bool changed;
	arena_reset(&a->arena);
	return deleted ? delete_uuid(a, uuid, &changed, why, whylen)
		       : uuid_set_add(&a->present, uuid);
}

void syncrepl_apply_begin_refresh(struct syncrepl_apply *a)
{
	a->present.n = 0;
	a->present.sorted = true;
}

/* ------------------------------------------------------- present phase */

/* The entries in scope not named: their ndns, malloc'd. */
struct nonpresent {
	struct syncrepl_apply *a;
	struct ber_view *ndns;
	size_t n, cap;
	int error;
};

/*
 * multiprovider: an entry changed after the provider's state for its
 * serverID (or by a server the provider has not heard of) is missing
 * there because the provider has not received it yet, not because it was
 * deleted: it stays.
 */
static bool unseen_by_provider(const struct syncrepl_apply *a, const struct entry *e)
{
	struct ber_view text = csn_of(a, e);
	struct csn csn;
	const char *bad;
	if (!a->multiprovider || csn_parse((const char *)text.ptr, text.len, &csn, &bad) != LUMEN_OK)
		return false;
	const struct csn *seen = sync_cookie_csn_for(&a->provider, csn.sid);
	return seen == NULL || csn_compare(&csn, seen) > 0;
}

void syncrepl_apply_provider_state(struct syncrepl_apply *a, const struct sync_cookie *c)
{
	if (c != NULL)
		a->provider = *c;
	else
		a->provider.n_csns = 0;
}

static int collect_nonpresent(void *ctx, const struct entry *e,
			      const struct backend_entry_info *info)
{
	struct nonpresent *np = ctx;
	uint8_t uuid[LDAP_SYNC_UUID_SIZE];
	(void)info;
	const struct entry_attribute *at = entry_find_type(e, np->a->entry_uuid);
	if (at != NULL && at->n_values == 1 && ldap_sync_uuid_parse(at->values[0].value, uuid) &&
	    uuid_set_has(&np->a->present, uuid))
		return 0;
	if (unseen_by_provider(np->a, e))
		return 0;
	void *grown = array_reserve(np->ndns, &np->cap, np->n + 1, sizeof(*np->ndns), 64);
	if (grown == NULL)
		return np->error = LUMEN_ENOMEM, 1;
	np->ndns = grown;
	if (copy_view(e->ndn, &np->ndns[np->n]) != LUMEN_OK)
		return np->error = LUMEN_ENOMEM, 1;
	np->n++;
	return 0;
}

/* A non-present entry that still has children (kept by the provider
 * below it) stays: *leaf false. */
static int delete_nonpresent(struct syncrepl_apply *a, struct ber_view ndn, bool *leaf,
			     char *why, size_t whylen)
{
	struct backend_op op;
	write_op(a, &op);
	int rc = database_delete(a->database, &op, ndn);
	*leaf = !(rc == LUMEN_OK && op.result_code == LDAP_NOT_ALLOWED_ON_NON_LEAF);
	if (!*leaf || (rc == LUMEN_OK && op.result_code == LDAP_NO_SUCH_OBJECT))
		return LUMEN_OK;
	return outcome(&op, rc, "delete", why, whylen);
}

/* Deepest first, so children go before their parents. */
static int deeper_first(const void *x, const void *y)
{
	size_t dx = dn_rdn_count(*(const struct ber_view *)x);
	size_t dy = dn_rdn_count(*(const struct ber_view *)y);
	return dx < dy ? 1 : dx > dy ? -1 : 0;
}

static int scan_nonpresent(struct syncrepl_apply *a, struct nonpresent *np)
{
	struct ldap_filter *parsed;
	struct filter filter;
	struct backend_op op;
	int rc = ldap_filter_text_parse(a->filter_text, strlen(a->filter_text), &a->arena, NULL,
					&parsed, NULL);
	if (rc == LUMEN_OK)
		rc = filter_compile(a->schema, parsed, NULL, &a->arena, &filter);
	if (rc != LUMEN_OK)
		return rc;
	write_op(a, &op);
	struct backend_search search = { .base_ndn = a->base_ndn, .scope = a->scope,
					 .filter = &filter, .sink = collect_nonpresent,
					 .sink_ctx = np };
	rc = database_search(a->database, &op, &search);
	if (np->error != LUMEN_OK)
		return np->error;
	if (rc == LUMEN_OK && op.result_code != LDAP_SUCCESS &&
	    op.result_code != LDAP_NO_SUCH_OBJECT)
		rc = LUMEN_EIO;
	return rc;
}

int syncrepl_apply_delete_nonpresent(struct syncrepl_apply *a, size_t *deleted, char *why,
				     size_t whylen)
{
	struct nonpresent np = { .a = a };
	*deleted = 0;
	arena_reset(&a->arena);
	int rc = scan_nonpresent(a, &np);
	if (rc != LUMEN_OK)
		snprintf(why, whylen, "cannot list the entries in scope: %s", lumen_strerror(rc));
	if (np.n > 1)
		qsort(np.ndns, np.n, sizeof(*np.ndns), deeper_first);
	for (size_t i = 0; i < np.n && rc == LUMEN_OK; i++) {
		arena_reset(&a->arena);
		bool leaf = true;
		rc = delete_nonpresent(a, np.ndns[i], &leaf, why, whylen);
		*deleted += rc == LUMEN_OK && leaf;
	}
	for (size_t i = 0; i < np.n; i++)
		free((void *)np.ndns[i].ptr);
	free(np.ndns);
	return rc;
}

/* ------------------------------------------------------------- cookie */

static int read_context_csns(void *ctx, const struct entry *e,
			     const struct backend_entry_info *info)
{
	struct sync_cookie *c = ((void **)ctx)[0];
	const struct attribute_type *type = ((void **)ctx)[1];
	const char *why;
	(void)info;
	const struct entry_attribute *at = entry_find_type(e, type);
	for (size_t i = 0; at != NULL && i < at->n_values; i++) {
		struct csn csn;
		struct ber_view v = at->values[i].value;
		if (csn_parse((const char *)v.ptr, v.len, &csn, &why) == LUMEN_OK &&
		    sync_cookie_merge_csn(c, &csn) != LUMEN_OK)
			return 1;
	}
	return 0;
}

int syncrepl_apply_load_cookie(struct syncrepl_apply *a, struct sync_cookie *out)
{
	struct backend_op op;
	void *ctx[2] = { out, (void *)a->context_csn };
	memset(out, 0, sizeof(*out));
	out->rid = out->sid = -1;
	arena_reset(&a->arena);
	write_op(a, &op);
	int rc = database_fetch(a->database, &op, a->context_ndn, read_context_csns, ctx);
	if (rc == LUMEN_OK && op.result_code != LDAP_SUCCESS &&
	    op.result_code != LDAP_NO_SUCH_OBJECT)
		rc = LUMEN_EIO;
	return rc;
}

int syncrepl_apply_save_cookie(struct syncrepl_apply *a, const struct sync_cookie *c,
			       char *why, size_t whylen)
{
	struct backend_op op;
	arena_reset(&a->arena);
	struct ber_view *values = arena_calloc(&a->arena, c->n_csns + 1, sizeof(*values));
	if (values == NULL)
		return LUMEN_ENOMEM;
	for (size_t i = 0; i < c->n_csns; i++)
		values[i] = view_of(c->csns[i].text);
	struct ldap_change change = { LDAP_MOD_REPLACE,
				      { view_of("contextCSN"), values, c->n_csns } };
	write_op(a, &op);
	int rc = database_modify(a->database, &op, a->context_ndn, &change, 1);
	return outcome(&op, rc, "storing the cookie (contextCSN)", why, whylen);
}

/* ------------------------------------------------------ create and free */

static int resolve(struct syncrepl_apply *a, const struct syncrepl_apply_settings *s,
		   char *why, size_t whylen)
{
	struct ber_view base;
	struct ldap_filter *parsed;
	a->entry_uuid = schema_attribute_type(s->schema, "entryUUID", 9);
	a->entry_csn = schema_attribute_type(s->schema, "entryCSN", 8);
	a->context_csn = schema_attribute_type(s->schema, "contextCSN", 10);
	if (a->entry_uuid == NULL || a->entry_csn == NULL || a->context_csn == NULL) {
		snprintf(why, whylen, "the schema lacks entryUUID, entryCSN or contextCSN "
			 "(lumen.schema)");
		return LUMEN_EINVAL;
	}
	int rc = dn_normalize(s->schema, s->searchbase, strlen(s->searchbase), &a->arena, &base);
	if (rc != LUMEN_OK || !dn_is_within(base, s->context_ndn)) {
		snprintf(why, whylen, "searchbase \"%s\" %s", s->searchbase,
			 rc != LUMEN_OK ? "is not a valid DN" : "is not within the suffix");
		return rc == LUMEN_ENOMEM ? rc : LUMEN_EINVAL;
	}
	rc = ldap_filter_text_parse(s->filter, strlen(s->filter), &a->arena, NULL, &parsed, NULL);
	if (rc != LUMEN_OK) {
		snprintf(why, whylen, "filter \"%s\" does not parse", s->filter);
		return rc == LUMEN_ENOMEM ? rc : LUMEN_EINVAL;
	}
	rc = copy_view(base, &a->base_ndn);
	if (rc == LUMEN_OK)
		rc = copy_view(s->context_ndn, &a->context_ndn);
	if (rc == LUMEN_OK)
		rc = copy_view(s->rootdn_ndn, &a->rootdn_ndn);
	a->filter_text = strdup(s->filter);
	return rc == LUMEN_OK && a->filter_text == NULL ? LUMEN_ENOMEM : rc;
}

int syncrepl_apply_create(const struct syncrepl_apply_settings *s, struct syncrepl_apply **out,
			  char *why, size_t whylen)
{
	struct syncrepl_apply *a = calloc(1, sizeof(*a));
	*out = NULL;
	if (a == NULL)
		return LUMEN_ENOMEM;
	a->schema = s->schema;
	a->database = s->database;
	a->scope = s->scope;
	a->multiprovider = s->multiprovider;
	a->server_id = s->server_id;
	a->all_operational = s->all_operational;
	arena_init(&a->arena, 0);
	int rc = resolve(a, s, why, whylen);
	if (rc != LUMEN_OK) {
		if (rc == LUMEN_ENOMEM)
			snprintf(why, whylen, "out of memory");
		syncrepl_apply_free(a);
		return rc;
	}
	*out = a;
	return LUMEN_OK;
}

void syncrepl_apply_free(struct syncrepl_apply *a)
{
	if (a == NULL)
		return;
	free((void *)a->context_ndn.ptr);
	free((void *)a->rootdn_ndn.ptr);
	free((void *)a->base_ndn.ptr);
	free(a->filter_text);
	free(a->present.items);
	arena_free(&a->arena);
	free(a);
}
