/*
 * authz.c — authzIds and authzTo/authzFrom rules (authz.h).
 */
#include "authz.h"

#include <regex.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "dn.h"
#include "filter.h"
#include "ldap_message.h"
#include "lumen_error.h"

/* Longest user name a u: form may carry (slapd bounds its DNs too). */
#define AUTHZ_MAX_USER 512

/* The rule forms that name DNs by position. */
enum authz_style { STYLE_EXACT, STYLE_SUBTREE, STYLE_CHILDREN, STYLE_ONELEVEL, STYLE_REGEX };

static const struct {
	const char *prefix;
	enum authz_style style;
} dn_forms[] = {
	{ "dn:", STYLE_EXACT },           { "dn.exact:", STYLE_EXACT },
	{ "dn.base:", STYLE_EXACT },      { "dn.subtree:", STYLE_SUBTREE },
	{ "dn.children:", STYLE_CHILDREN }, { "dn.onelevel:", STYLE_ONELEVEL },
	{ "dn.regex:", STYLE_REGEX },
};

/* If v starts with prefix (any case), *rest is what follows. */
static bool strip_prefix(struct ber_view v, const char *prefix, struct ber_view *rest)
{
	size_t n = strlen(prefix);
	if (v.len < n || strncasecmp((const char *)v.ptr, prefix, n) != 0)
		return false;
	*rest = (struct ber_view){ v.ptr + n, v.len - n };
	return true;
}

static int normalize(const struct authz_env *env, struct ber_view dn, struct ber_view *ndn)
{
	if (dn.len == 0) {
		*ndn = (struct ber_view){ (const uint8_t *)"", 0 };
		return LUMEN_OK;
	}
	return dn_normalize(env->schema, (const char *)dn.ptr, dn.len, env->arena, ndn);
}

/* u:user → "uid=user,cn=auth" → authz-regexp → normalized DN. */
static int map_user(const struct authz_env *env, struct ber_view user, struct ber_view *ndn)
{
	char identity[AUTHZ_MAX_USER + sizeof("uid=,cn=auth")];
	if (user.len == 0 || user.len > AUTHZ_MAX_USER || memchr(user.ptr, '\0', user.len) != NULL)
		return LUMEN_EMALFORMED;
	snprintf(identity, sizeof(identity), "uid=%.*s,cn=auth", (int)user.len,
		 (const char *)user.ptr);
	if (env->map_identity != NULL)
		return env->map_identity(env->ctx, identity, env->arena, ndn);
	return dn_normalize(env->schema, identity, strlen(identity), env->arena, ndn);
}

int authz_id_resolve(const struct authz_env *env, struct ber_view authzid,
		     struct ber_view *ndn)
{
	struct ber_view rest;
	int rc = LUMEN_EMALFORMED;
	if (strip_prefix(authzid, "dn:", &rest))
		rc = normalize(env, rest, ndn);
	else if (strip_prefix(authzid, "u:", &rest))
		rc = map_user(env, rest, ndn);
	return rc == LUMEN_ENOMEM ? rc : rc != LUMEN_OK ? LUMEN_EMALFORMED : LUMEN_OK;
}

static bool regex_matches(const struct authz_env *env, struct ber_view pattern,
			  struct ber_view ndn)
{
	char *re_text = arena_strndup(env->arena, (const char *)pattern.ptr, pattern.len);
	char *subject = arena_strndup(env->arena, (const char *)ndn.ptr, ndn.len);
	regex_t re;
	if (re_text == NULL || subject == NULL ||
	    regcomp(&re, re_text, REG_EXTENDED | REG_ICASE | REG_NOSUB) != 0)
		return false;
	bool match = regexec(&re, subject, 0, NULL, 0) == 0;
	regfree(&re);
	return match;
}

static bool dn_rule_matches(const struct authz_env *env, enum authz_style style,
			    struct ber_view dn, struct ber_view assert_ndn)
{
	static const enum ldap_scope scopes[] = {
		[STYLE_EXACT] = LDAP_SCOPE_BASE, [STYLE_SUBTREE] = LDAP_SCOPE_SUBTREE,
		[STYLE_CHILDREN] = LDAP_SCOPE_CHILDREN, [STYLE_ONELEVEL] = LDAP_SCOPE_ONE,
	};
	struct ber_view base;
	if (style == STYLE_REGEX)
		return regex_matches(env, dn, assert_ndn);
	if (dn.len == 1 && dn.ptr[0] == '*')   /* "dn:*" is slapd's spelling of "*" */
		return assert_ndn.len > 0;
	if (normalize(env, dn, &base) != LUMEN_OK)
		return false;
	return dn_in_scope(assert_ndn, base, scopes[style]);
}

/* %XX escapes of a URL's DN, into the arena. */
static bool percent_decode(struct arena *arena, struct ber_view in, struct ber_view *out)
{
	char *buf = arena_alloc(arena, in.len + 1);
	size_t n = 0;
	if (buf == NULL)
		return false;
	for (size_t i = 0; i < in.len; i++) {
		unsigned byte;
		if (in.ptr[i] != '%') {
			buf[n++] = (char)in.ptr[i];
			continue;
		}
		char hex[3] = { 0 };
		if (i + 2 >= in.len)
			return false;
		memcpy(hex, in.ptr + i + 1, 2);
		if (sscanf(hex, "%2x", &byte) != 1 || strspn(hex, "0123456789abcdefABCDEF") != 2)
			return false;
		buf[n++] = (char)byte;
		i += 2;
	}
	*out = (struct ber_view){ (const uint8_t *)buf, n };
	return true;
}

/* The part of *v before its first '?'; *v becomes the rest (*more: a '?' was there). */
static struct ber_view next_part(struct ber_view *v, bool *more)
{
	const uint8_t *q = memchr(v->ptr, '?', v->len);
	struct ber_view part = { v->ptr, q != NULL ? (size_t)(q - v->ptr) : v->len };
	*more = q != NULL;
	*v = q != NULL ? (struct ber_view){ q + 1, v->len - part.len - 1 }
		       : (struct ber_view){ v->ptr + v->len, 0 };
	return part;
}

static bool parse_scope(struct ber_view text, enum ldap_scope *scope)
{
	static const struct { const char *name; enum ldap_scope scope; } names[] = {
		{ "", LDAP_SCOPE_BASE },        { "base", LDAP_SCOPE_BASE },
		{ "one", LDAP_SCOPE_ONE },      { "onelevel", LDAP_SCOPE_ONE },
		{ "sub", LDAP_SCOPE_SUBTREE },  { "subtree", LDAP_SCOPE_SUBTREE },
		{ "children", LDAP_SCOPE_CHILDREN }, { "subord", LDAP_SCOPE_CHILDREN },
		{ "subordinate", LDAP_SCOPE_CHILDREN },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strlen(names[i].name) == text.len &&
		    strncasecmp(names[i].name, (const char *)text.ptr, text.len) == 0) {
			*scope = names[i].scope;
			return true;
		}
	}
	return false;
}

/* assert_ndn's entry exists and matches the filter text. */
static bool entry_matches(const struct authz_env *env, struct ber_view filter_text,
			  struct ber_view assert_ndn)
{
	struct ldap_filter *parsed;
	struct filter compiled;
	struct entry *e = NULL;
	size_t at;
	struct ber_view text;
	if (env->fetch == NULL || !percent_decode(env->arena, filter_text, &text) ||
	    filter_text_parse((const char *)text.ptr, text.len, env->arena, NULL, &parsed,
			      &at) != LUMEN_OK ||
	    filter_compile(env->schema, parsed, NULL, env->arena, &compiled) != LUMEN_OK ||
	    env->fetch(env->ctx, assert_ndn, &e) != LUMEN_OK || e == NULL)
		return false;
	struct filter_evaluation how = { .scratch = env->arena };
	enum filter_result result = FILTER_FALSE;
	bool match = filter_test(&compiled, e, &how, &result) == LUMEN_OK &&
		     result == FILTER_TRUE;
	entry_free(e);
	return match;
}

/* ldap:///base?attrs?scope?filter?extensions, host/attrs/extensions empty. */
static bool url_rule_matches(const struct authz_env *env, struct ber_view rest,
			     struct ber_view assert_ndn)
{
	struct ber_view base_text, base, filter;
	enum ldap_scope scope;
	bool more;
	if (rest.len == 0 || rest.ptr[0] != '/')
		return false;   /* a host: only this server's entries are known */
	rest = (struct ber_view){ rest.ptr + 1, rest.len - 1 };
	base_text = next_part(&rest, &more);
	if (more && next_part(&rest, &more).len > 0)
		return false;   /* attributes */
	struct ber_view scope_text = more ? next_part(&rest, &more) : (struct ber_view){ 0 };
	filter = more ? next_part(&rest, &more) : (struct ber_view){ 0 };
	if ((more && rest.len > 0) || !parse_scope(scope_text, &scope) ||
	    !percent_decode(env->arena, base_text, &base) ||
	    normalize(env, base, &base) != LUMEN_OK || !dn_in_scope(assert_ndn, base, scope))
		return false;
	/* Without a filter slapd's internal search has nothing to run: no match. */
	return filter.len > 0 && entry_matches(env, filter, assert_ndn);
}

/* The name up to the next '/' or ':' of *v; *v moves past it. */
static struct ber_view next_name(struct ber_view *v)
{
	size_t n = 0;
	while (n < v->len && v->ptr[n] != '/' && v->ptr[n] != ':')
		n++;
	struct ber_view name = { v->ptr, n };
	*v = (struct ber_view){ v->ptr + n, v->len - n };
	return name;
}

/*
 * "group[/objectClass[/attributeType]]:DN" (rest: what follows "group"):
 * the entry DN is of that class (default groupOfNames) and its attribute
 * of exactly that type (default member) lists assert_ndn, as slapd's
 * backend_group decides.
 */
static bool group_rule_matches(const struct authz_env *env, struct ber_view rest,
			       struct ber_view assert_ndn)
{
	struct ber_view class_name = { (const uint8_t *)"groupOfNames", 12 };
	struct ber_view type_name = { (const uint8_t *)"member", 6 };
	if (rest.len > 0 && rest.ptr[0] == '/') {
		rest = (struct ber_view){ rest.ptr + 1, rest.len - 1 };
		class_name = next_name(&rest);
		if (rest.len > 0 && rest.ptr[0] == '/') {
			rest = (struct ber_view){ rest.ptr + 1, rest.len - 1 };
			type_name = next_name(&rest);
		}
	}
	if (rest.len == 0 || rest.ptr[0] != ':' || class_name.len == 0 || type_name.len == 0 ||
	    env->fetch == NULL || assert_ndn.len == 0)
		return false;
	const struct object_class *oc = schema_object_class(env->schema,
							    (const char *)class_name.ptr,
							    class_name.len);
	const struct attribute_type *at = schema_attribute_type(env->schema,
								(const char *)type_name.ptr,
								type_name.len);
	struct ber_view group_ndn;
	struct entry *group = NULL;
	if (oc == NULL || at == NULL ||
	    normalize(env, (struct ber_view){ rest.ptr + 1, rest.len - 1 }, &group_ndn) != LUMEN_OK ||
	    group_ndn.len == 0 || env->fetch(env->ctx, group_ndn, &group) != LUMEN_OK ||
	    group == NULL)
		return false;
	const struct entry_attribute *members = entry_find_type(group, at);
	bool match = entry_is_instance_of(group, oc) && members != NULL &&
		     entry_attribute_find_normalized(members, assert_ndn) >= 0;
	entry_free(group);
	return match;
}

bool authz_rule_matches(const struct authz_env *env, struct ber_view rule,
			struct ber_view assert_ndn)
{
	struct ber_view rest, ndn;
	if (rule.len == 1 && rule.ptr[0] == '*')
		return assert_ndn.len > 0;
	for (size_t i = 0; i < sizeof(dn_forms) / sizeof(dn_forms[0]); i++)
		if (strip_prefix(rule, dn_forms[i].prefix, &rest))
			return dn_rule_matches(env, dn_forms[i].style, rest, assert_ndn);
	if (strip_prefix(rule, "u:", &rest))
		return map_user(env, rest, &ndn) == LUMEN_OK && ndn.len == assert_ndn.len &&
		       memcmp(ndn.ptr, assert_ndn.ptr, ndn.len) == 0;
	if (strip_prefix(rule, "ldap://", &rest))
		return url_rule_matches(env, rest, assert_ndn);
	if (strip_prefix(rule, "group", &rest))
		return group_rule_matches(env, rest, assert_ndn);
	return false;
}
