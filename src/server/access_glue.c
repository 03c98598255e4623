/*
 * access_glue.c — per-operation ACL policy and subject, group membership
 * over the backend, entry copies for write decisions, `limits` and
 * `authz-regexp` (access_glue.h).
 */
#include "access_glue.h"

#include <ctype.h>
#include <regex.h>
#include <string.h>

#include "database.h"
#include "config.h"
#include "dn.h"
#include "lumen_error.h"
#include "server.h"

/* Longest DN an authz-regexp replacement may produce. */
#define ACCESS_SCRATCH_MAX (16u * 1024u * 1024u)
#define AUTHZ_DN_MAX 1024

/* One member value against the requester, as normalized DNs. */
static bool member_value_matches(const struct server *s, struct arena *arena,
				 const struct entry_value *v, struct ber_view member_ndn)
{
	struct ber_view ndn = v->normalized;
	if (ndn.ptr == NULL &&
	    dn_normalize(s->config->schema, (const char *)v->value.ptr, v->value.len, arena,
			 &ndn) != LUMEN_OK)
		return false;
	return ber_view_eq(ndn, member_ndn);
}

bool access_group_has_member(const struct server *s, struct arena *arena,
			     const struct entry *group, const struct object_class *group_class,
			     const struct attribute_type *member_type, struct ber_view member_ndn)
{
	if (group_class != NULL && !entry_is_instance_of(group, group_class))
		return false;
	for (size_t i = 0; i < group->n_attributes; i++) {
		const struct entry_attribute *a = &group->attributes[i];
		if (a->desc.type != member_type)
			continue;
		for (size_t j = 0; j < a->n_values; j++)
			if (member_value_matches(s, arena, &a->values[j], member_ndn))
				return true;
	}
	return false;
}

struct member_check {
	const struct server *server;
	struct arena *arena;
	const struct object_class *group_class;
	const struct attribute_type *member_type;
	struct ber_view member_ndn;
	bool found;
};

static int check_member(void *arg, const struct entry *e, const struct backend_entry_info *info)
{
	struct member_check *mc = arg;
	(void)info;
	mc->found = access_group_has_member(mc->server, mc->arena, e, mc->group_class,
					    mc->member_type, mc->member_ndn);
	return 0;
}

/* acl_group_lookup.is_member: the group entry from whichever database holds it. */
static int is_member(void *context, struct ber_view group_ndn,
		     const struct object_class *group_class,
		     const struct attribute_type *member_type, struct ber_view member_ndn,
		     bool *is_member_out)
{
	const struct access_op *a = context;
	struct member_check mc = {
		.server = a->server, .arena = a->subject.arena, .group_class = group_class,
		.member_type = member_type, .member_ndn = member_ndn,
	};
	*is_member_out = false;
	const struct server_database *db = server_find_database(a->server, group_ndn);
	if (db == NULL || db->database == NULL || member_type == NULL)
		return LUMEN_ENOTFOUND;
	struct backend_op bop = { .arena = a->subject.arena, .abandoned = a->abandoned };
	int rc = database_fetch(db->database, &bop, group_ndn, check_member, &mc);
	*is_member_out = rc == LUMEN_OK && mc.found;
	return rc;
}

void access_op_init(struct access_op *a, const struct server *s,
		    const struct server_database *db, struct ber_view requester_ndn,
		    bool is_root, struct arena *arena, const bool *abandoned)
{
	const struct config *cfg = s->config;
	memset(a, 0, sizeof(*a));
	a->server = s;
	a->abandoned = abandoned;
	a->groups.is_member = is_member;
	a->groups.context = a;
	a->policy.database = db != NULL ? &db->config->access : NULL;
	a->policy.global = &cfg->access;
	a->policy.groups = &a->groups;
	a->subject.ndn = requester_ndn;
	a->subject.is_root = is_root;
	a->subject.arena = arena;
	a->has_rules = cfg->access.n_rules > 0 ||
		       (db != NULL && db->config->access.n_rules > 0);
	a->checks = a->has_rules && !is_root;
	a->tests_values = a->checks && acl_policy_tests_values(&a->policy);
}

/* filter_access.begin for searches: a fresh scratch and `search` on e. */
static bool search_begin_entry(void *ctx, const struct entry *e)
{
	struct access_search *s = ctx;
	arena_reset(&s->scratch);
	acl_target_init(&s->target, &s->a.policy, &s->a.subject, e);
	s->begun = e;
	s->may_match = acl_search_may_match(&s->target);
	return s->may_match;
}

static bool search_may_test(void *ctx, const struct attribute_type *type)
{
	struct access_search *s = ctx;
	return acl_target_allowed(&s->target, type, ACCESS_SEARCH);
}

void access_search_begin(struct access_search *s, const struct server *srv,
			 const struct server_database *db, struct ber_view requester_ndn,
			 bool is_root, const bool *abandoned)
{
	arena_init(&s->scratch, ACCESS_SCRATCH_MAX);
	access_op_init(&s->a, srv, db, requester_ndn, is_root, &s->scratch, abandoned);
	s->hook = (struct filter_access){ search_begin_entry, search_may_test, s };
	s->begun = NULL;
	s->may_match = false;
}

bool access_search_entry(struct access_search *s, const struct entry *e, bool tested)
{
	/* The backend set the target up while testing e; an entry it did not
	 * test through the hook just now gets the entry-level check here. */
	if (!tested || s->begun != e)
		search_begin_entry(s, e);
	s->begun = NULL;
	return s->may_match && acl_search_may_return(&s->target);
}

bool access_search_test(struct access_search *s, const struct filter *f, const struct entry *e)
{
	struct filter_evaluation how = { .access = &s->hook, .scratch = &s->scratch };
	enum filter_result r;
	if (filter_test(f, e, &how, &r) != LUMEN_OK || r != FILTER_TRUE)
		return false;
	return access_search_entry(s, e, true);
}

bool access_search_may_read(void *search, const struct attribute_type *type)
{
	struct access_search *s = search;
	return type != NULL && acl_may_read_attribute(&s->target, type);
}

void access_search_end(struct access_search *s)
{
	arena_free(&s->scratch);
}

static bool values_begin_entry(void *ctx, const struct entry *e)
{
	struct access_values *v = ctx;
	acl_target_init(&v->target, &v->a->policy, &v->a->subject, e);
	return true;
}

static bool values_may_test(void *ctx, const struct attribute_type *type)
{
	struct access_values *v = ctx;
	if (acl_target_allowed(&v->target, type, v->level))
		return true;
	if (!acl_may_disclose(&v->target))
		v->hidden = true;
	return false;
}

void access_values_init(struct access_values *v, struct access_op *a, enum access_level level)
{
	v->hook = (struct filter_access){ values_begin_entry, values_may_test, v };
	v->a = a;
	v->level = level;
	v->hidden = false;
}

struct decision {
	struct access_op *a;
	bool (*allowed)(struct acl_target *t, void *arg);
	void *arg;
	enum access_verdict verdict;
};

static int decide_entry(void *arg, const struct entry *e, const struct backend_entry_info *info)
{
	struct decision *d = arg;
	struct acl_target t;
	(void)info;
	acl_target_init(&t, &d->a->policy, &d->a->subject, e);
	if (d->allowed(&t, d->arg))
		d->verdict = ACCESS_ALLOWED;
	else
		d->verdict = acl_may_disclose(&t) ? ACCESS_DENIED : ACCESS_HIDDEN;
	return 0;
}

int access_decide(struct access_op *a, const struct server_database *db, struct ber_view ndn,
		  bool (*allowed)(struct acl_target *t, void *arg), void *arg,
		  enum access_verdict *out)
{
	static const struct entry_selection dn_alone = { NULL, 0, false };
	struct decision d = { a, allowed, arg, ACCESS_ABSENT };
	struct backend_op bop = { .arena = a->subject.arena, .abandoned = a->abandoned,
				  .fetch_only = a->tests_values ? NULL : &dn_alone };
	*out = ACCESS_ABSENT;
	if (db == NULL || db->database == NULL)
		return LUMEN_OK;
	int rc = database_fetch(db->database, &bop, ndn, decide_entry, &d);
	if (rc == LUMEN_OK)
		*out = d.verdict;
	return rc;
}

struct copy_target {
	struct entry *copy;
};

static int keep_copy(void *arg, const struct entry *e, const struct backend_entry_info *info)
{
	struct copy_target *ct = arg;
	(void)info;
	return entry_dup(e, &ct->copy);
}

int access_fetch_copy(const struct server_database *db, struct arena *arena,
		      const bool *abandoned, struct ber_view ndn, struct entry **out)
{
	struct copy_target ct = { NULL };
	struct backend_op bop = { .arena = arena, .abandoned = abandoned };
	*out = NULL;
	if (db == NULL || db->database == NULL || ndn.len == 0)
		return LUMEN_OK;
	int rc = database_fetch(db->database, &bop, ndn, keep_copy, &ct);
	if (rc != LUMEN_OK) {
		entry_free(ct.copy);
		return rc;
	}
	*out = ct.copy;
	return LUMEN_OK;
}

static bool limit_applies(const struct config_limit *l, struct ber_view ndn)
{
	switch (l->who) {
	case LIMIT_WHO_ANYONE:
		return true;
	case LIMIT_WHO_ANONYMOUS:
		return ndn.len == 0;
	case LIMIT_WHO_USERS:
		return ndn.len > 0;
	case LIMIT_WHO_DN_EXACT:
		return ndn.len > 0 && ber_view_eq(ndn, (struct ber_view){
				(const uint8_t *)l->ndn, l->ndn_len });
	case LIMIT_WHO_DN_SUBTREE:
		return ndn.len > 0 && dn_is_within(ndn, (struct ber_view){
				(const uint8_t *)l->ndn, l->ndn_len });
	}
	return false;
}

static const struct config_limit *find_limit(const struct config_limit *list, size_t n,
					     struct ber_view ndn)
{
	for (size_t i = 0; i < n; i++)
		if (limit_applies(&list[i], ndn))
			return &list[i];
	return NULL;
}

void access_limits(const struct server *s, const struct server_database *db,
		   struct ber_view requester_ndn, long *size, long *time)
{
	const struct config *cfg = s->config;
	const struct config_limit *l = find_limit(db->config->limits, db->config->n_limits,
						  requester_ndn);
	if (l == NULL)
		l = find_limit(cfg->limits, cfg->n_limits, requester_ndn);
	*size = db->size_limit;
	*time = db->time_limit;
	if (l != NULL && l->size != CONFIG_LIMIT_INHERIT)
		*size = l->size;
	if (l != NULL && l->time != CONFIG_LIMIT_INHERIT)
		*time = l->time;
}

/* The replacement with $N replaced by the groups of the match. */
static int substitute(const struct config_authz_regexp *r, const char *identity,
		      const regmatch_t *groups, char *out, size_t outlen)
{
	size_t o = 0;
	for (const char *p = r->replacement; *p != '\0'; p++) {
		const char *from = p;
		size_t len = 1;
		if (p[0] == '$' && p[1] >= '0' && p[1] <= '9') {
			const regmatch_t *g = &groups[p[1] - '0'];
			from = identity + (g->rm_so >= 0 ? g->rm_so : 0);
			len = g->rm_so >= 0 ? (size_t)(g->rm_eo - g->rm_so) : 0;
			p++;
		}
		if (o + len >= outlen)
			return LUMEN_ELIMIT;
		memcpy(out + o, from, len);
		o += len;
	}
	out[o] = '\0';
	return LUMEN_OK;
}

/* The identity as its own DN: normalized if the schema allows, else lowercased. */
static int identity_as_dn(const struct server *s, const char *identity, struct arena *arena,
			  struct ber_view *dn, struct ber_view *ndn)
{
	size_t len = strlen(identity);
	char *copy = arena_strndup(arena, identity, len);
	if (copy == NULL)
		return LUMEN_ENOMEM;
	*dn = (struct ber_view){ (const uint8_t *)copy, len };
	if (dn_normalize(s->config->schema, identity, len, arena, ndn) == LUMEN_OK)
		return LUMEN_OK;
	char *lower = arena_strndup(arena, identity, len);
	if (lower == NULL)
		return LUMEN_ENOMEM;
	for (size_t i = 0; i < len; i++)
		lower[i] = (char)tolower((unsigned char)lower[i]);
	*ndn = (struct ber_view){ (const uint8_t *)lower, len };
	return LUMEN_OK;
}

int access_authz_map(const struct server *s, const char *identity, struct arena *arena,
		     struct ber_view *dn, struct ber_view *ndn)
{
	const struct config *cfg = s->config;
	char mapped[AUTHZ_DN_MAX];
	for (size_t i = 0; i < cfg->n_authz_regexps; i++) {
		const struct config_authz_regexp *r = &cfg->authz_regexps[i];
		regmatch_t groups[10];
		if (!r->compiled || regexec(&r->regex, identity, 10, groups, 0) != 0)
			continue;
		int rc = substitute(r, identity, groups, mapped, sizeof(mapped));
		if (rc != LUMEN_OK)
			return rc;
		size_t len = strlen(mapped);
		if (dn_normalize(cfg->schema, mapped, len, arena, ndn) != LUMEN_OK)
			return LUMEN_EMALFORMED;
		char *copy = arena_strndup(arena, mapped, len);
		if (copy == NULL)
			return LUMEN_ENOMEM;
		*dn = (struct ber_view){ (const uint8_t *)copy, len };
		return LUMEN_OK;
	}
	return identity_as_dn(s, identity, arena, dn, ndn);
}
