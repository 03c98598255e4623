/*
 * proxy_authz.c — who may act as whom (proxy_authz.h).
 */
#include "proxy_authz.h"

#include <string.h>

#include "access_glue.h"
#include "authz.h"
#include "config.h"
#include "lumen_error.h"
#include "server.h"

struct decision {
	const struct server *server;
	struct arena *arena;
	const bool *abandoned;
	struct ber_view authc;
};

static bool same_dn(struct ber_view a, struct ber_view b)
{
	return a.ptr != NULL && b.ptr != NULL && a.len == b.len && memcmp(a.ptr, b.ptr, a.len) == 0;
}

static int map_identity(void *ctx, const char *identity, struct arena *arena,
			struct ber_view *ndn)
{
	const struct decision *d = ctx;
	struct ber_view dn;
	return access_authz_map(d->server, identity, arena, &dn, ndn);
}

static int fetch(void *ctx, struct ber_view ndn, struct entry **out)
{
	const struct decision *d = ctx;
	const struct server_database *db = server_find_database(d->server, ndn);
	*out = NULL;
	if (db == NULL || db->database == NULL)
		return LUMEN_OK;
	return access_fetch_copy(db, d->arena, d->abandoned, ndn, out);
}

static bool is_rootdn_of(const struct server_database *db, struct ber_view ndn)
{
	return db != NULL && same_dn(db->rootdn, ndn);
}

/* Does a value of `attribute` in the entry holder_ndn let assert_ndn in?
 * The client needs `auth` access to the attribute. */
static bool rules_allow(const struct decision *d, struct ber_view holder_ndn,
			const char *attribute, struct ber_view assert_ndn)
{
	const struct schema *schema = d->server->config->schema;
	const struct attribute_type *type = schema_attribute_type(schema, attribute,
								  strlen(attribute));
	const struct server_database *db = server_find_database(d->server, holder_ndn);
	struct entry *e = NULL;
	if (type == NULL || fetch((void *)d, holder_ndn, &e) != LUMEN_OK || e == NULL)
		return false;
	struct access_op a;
	access_op_init(&a, d->server, db, d->authc, is_rootdn_of(db, d->authc), d->arena,
		       d->abandoned);
	const struct entry_attribute *rules = entry_find_type(e, type);
	bool allowed = false;
	if (rules != NULL &&
	    (!a.checks || acl_allowed(&a.policy, &a.subject, e, type, ACCESS_AUTH))) {
		struct authz_env env = { schema, d->arena, map_identity, fetch, (void *)d };
		for (size_t i = 0; i < rules->n_values && !allowed; i++)
			allowed = authz_rule_matches(&env, rules->values[i].value, assert_ndn);
	}
	entry_free(e);
	return allowed;
}

static bool may_assume(const struct decision *d, struct ber_view authz)
{
	enum config_authz_policy policy = d->server->config->authz_policy;
	if (same_dn(d->authc, authz) ||
	    is_rootdn_of(server_find_database(d->server, authz), d->authc))
		return true;
	if (policy & CONFIG_AUTHZ_TO) {
		bool to = rules_allow(d, d->authc, "authzTo", authz);
		bool both = (policy & CONFIG_AUTHZ_ALL) == CONFIG_AUTHZ_ALL;
		if (to != both)   /* `to` settled it: allowed alone, refused for `all` */
			return to;
	}
	return (policy & CONFIG_AUTHZ_FROM) && rules_allow(d, authz, "authzFrom", d->authc);
}

int proxy_authz_decide(const struct server *s, struct arena *arena, const bool *abandoned,
		       struct ber_view authc_ndn, struct ber_view authzid,
		       struct ber_view *authz_ndn, const char **diagnostic)
{
	struct decision d = { s, arena, abandoned, authc_ndn };
	if (authc_ndn.len == 0) {
		*diagnostic = "anonymous proxied authorization not allowed";
		return LUMEN_ENOTFOUND;
	}
	struct authz_env env = { s->config->schema, arena, map_identity, fetch, &d };
	int rc = authzid.len == 0 ? LUMEN_OK : authz_id_resolve(&env, authzid, authz_ndn);
	if (authzid.len == 0)
		*authz_ndn = (struct ber_view){ (const uint8_t *)"", 0 };
	if (rc == LUMEN_ENOMEM)
		return rc;
	if (rc != LUMEN_OK) {
		*diagnostic = "authzId mapping failed";
		return LUMEN_ENOTFOUND;
	}
	if (authz_ndn->len == 0 || may_assume(&d, *authz_ndn))
		return LUMEN_OK;
	*diagnostic = "not authorized to assume identity";
	return LUMEN_ENOTFOUND;
}
