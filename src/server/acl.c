/*
 * acl.c — the access-control decision: which rule applies to a target and
 * attribute, which `by` clause matches the subject, and the level it grants;
 * then the per-operation checks built on that.
 */
#include "acl.h"

#include <regex.h>
#include <string.h>

#include "dn.h"
#include "lumen_error.h"

/* Only its address matters: it stands for the `children` pseudo-attribute. */
const struct attribute_type acl_children_pseudo_attribute = {
	.oid = "children",
	.description = "access-control pseudo-attribute for an entry's children",
};

enum rule_match { RULE_UNKNOWN = 0, RULE_MATCHES = 1, RULE_MISSES = 2 };
enum walk_end { WALK_STOP, WALK_BREAK };

static size_t rules_count(const struct access_rules *rules)
{
	return rules != NULL ? rules->n_rules : 0;
}

/* The i-th rule of the combined list: the database's, then the global ones. */
static const struct access_rule *rule_at(const struct acl_policy *p, size_t i,
					 const struct access_rules **owner)
{
	size_t n_database = rules_count(p->database);
	*owner = i < n_database ? p->database : p->global;
	return i < n_database ? &p->database->rules[i] : &p->global->rules[i - n_database];
}

bool acl_policy_tests_values(const struct acl_policy *policy)
{
	const struct access_rules *owner;
	size_t n = rules_count(policy->database) + rules_count(policy->global);
	for (size_t i = 0; i < n; i++)
		if (rule_at(policy, i, &owner)->has_filter)
			return true;
	return false;
}

bool acl_policy_reads_entries(const struct acl_policy *policy)
{
	const struct access_rules *owner;
	size_t n = rules_count(policy->database) + rules_count(policy->global);
	for (size_t i = 0; i < n; i++) {
		const struct access_rule *rule = rule_at(policy, i, &owner);
		if (rule->has_filter)
			return true;
		for (size_t j = 0; j < rule->n_who; j++)
			if (rule->who[j].kind == ACCESS_WHO_GROUP)
				return true;
	}
	return false;
}

/* Does ndn stand in `style` relation to the pattern DN? (Not for regex/any.) */
static bool dn_style_matches(enum access_dn_style style, struct ber_view pattern,
			     struct ber_view ndn)
{
	static const enum ldap_scope scopes[] = {
		[ACCESS_DN_BASE] = LDAP_SCOPE_BASE, [ACCESS_DN_ONE] = LDAP_SCOPE_ONE,
		[ACCESS_DN_SUBTREE] = LDAP_SCOPE_SUBTREE, [ACCESS_DN_CHILDREN] = LDAP_SCOPE_CHILDREN,
	};
	return style >= ACCESS_DN_BASE && style <= ACCESS_DN_CHILDREN &&
	       dn_in_scope(ndn, pattern, scopes[style]);
}

/*
 * regexec on a view that need not be NUL-terminated (REG_STARTEND);
 * groups[0..n) receive the captures when groups is non-NULL.
 */
static bool regex_matches(const regex_t *re, struct ber_view text, regmatch_t *groups,
			  size_t n)
{
	regmatch_t whole[1];
	if (groups == NULL) {
		groups = whole;
		n = 1;
	}
	groups[0].rm_so = 0;
	groups[0].rm_eo = (regoff_t)text.len;
	const char *start = text.ptr != NULL ? (const char *)text.ptr : "";
	return regexec(re, start, n, groups, REG_STARTEND) == 0;
}

/* The DN and filter part of a rule's WHAT (the attrs part is separate). */
static bool rule_selects(struct acl_target *t, const struct access_rule *r)
{
	const struct access_dn_pattern *what = &r->what;
	bool dn_ok = what->style == ACCESS_DN_ANY ||
		     (what->style == ACCESS_DN_REGEX ? regex_matches(&what->regex, t->ndn, NULL, 0)
						      : dn_style_matches(what->style, what->ndn, t->ndn));
	if (!dn_ok || !r->has_filter)
		return dn_ok;
	if (t->entry == NULL || t->subject->arena == NULL)
		return false;
	/* the shared compiled filter never sees our arena: scratch is ours */
	struct filter_evaluation how = { .scratch = t->subject->arena };
	enum filter_result result;
	if (filter_test(&r->filter, t->entry, &how, &result) != LUMEN_OK) {
		t->failed = true;   /* fail closed: see acl_target_level */
		return false;
	}
	return result == FILTER_TRUE;
}

static bool rule_selects_cached(struct acl_target *t, size_t i, const struct access_rule *r)
{
	if (t->rule_matches == NULL)
		return rule_selects(t, r);
	if (t->rule_matches[i] == RULE_UNKNOWN)
		t->rule_matches[i] = rule_selects(t, r) ? RULE_MATCHES : RULE_MISSES;
	return t->rule_matches[i] == RULE_MATCHES;
}

static bool rule_covers(const struct access_rule *r, const struct attribute_type *attr)
{
	if (!r->has_attrs)
		return true;
	if (attr == ACL_ATTR_ENTRY)
		return r->attrs_entry;
	if (attr == ACL_ATTR_CHILDREN)
		return r->attrs_children;
	size_t word = attr->index / 64;
	return word < r->n_attr_words &&
	       (r->attr_bits[word] & (UINT64_C(1) << (attr->index % 64))) != 0;
}

/* Length of template with $N replaced by the captured groups. */
static size_t expanded_length(const char *template, const regmatch_t *groups, size_t n)
{
	size_t len = 0;
	for (const char *p = template; *p != '\0'; p++) {
		size_t g = p[0] == '$' && p[1] >= '0' && p[1] <= '9' ? (size_t)(p[1] - '0') : n;
		if (g < n && groups[g].rm_so >= 0) {
			len += (size_t)(groups[g].rm_eo - groups[g].rm_so);
			p++;
		} else if (g < n) {
			p++;
		} else {
			len++;
		}
	}
	return len;
}

static void expand_into(char *out, const char *template, const regmatch_t *groups, size_t n,
			struct ber_view source)
{
	for (const char *p = template; *p != '\0'; p++) {
		size_t g = p[0] == '$' && p[1] >= '0' && p[1] <= '9' ? (size_t)(p[1] - '0') : n;
		if (g < n && groups[g].rm_so >= 0) {
			size_t len = (size_t)(groups[g].rm_eo - groups[g].rm_so);
			memcpy(out, source.ptr + groups[g].rm_so, len);
			out += len;
			p++;
		} else if (g < n) {
			p++;
		} else {
			*out++ = *p;
		}
	}
	*out = '\0';
}

/*
 * The WHO pattern's DN for this target: the compiled ndn, or the $N
 * template filled from the WHAT regex's groups and normalized into the
 * subject's arena. False when that cannot be done (the clause then
 * does not match).
 */
static bool who_pattern_dn(const struct acl_target *t, const struct access_rule *r,
			   const struct access_rules *owner, const struct access_dn_pattern *p,
			   struct ber_view *out)
{
	if (!p->expand) {
		*out = p->ndn;
		return true;
	}
	regmatch_t groups[ACCESS_MAX_CAPTURES];
	size_t n = r->what.regex.re_nsub + 1;
	if (n > ACCESS_MAX_CAPTURES)
		n = ACCESS_MAX_CAPTURES;
	if (t->subject->arena == NULL || !regex_matches(&r->what.regex, t->ndn, groups, n))
		return false;
	size_t len = expanded_length(p->text, groups, n);
	char *text = arena_alloc(t->subject->arena, len + 1);
	if (text == NULL)
		return false;
	expand_into(text, p->text, groups, n, t->ndn);
	return dn_normalize(owner->schema, text, len, t->subject->arena, out) == LUMEN_OK;
}

static bool group_has_member(const struct acl_target *t, const struct access_who *w,
			     struct ber_view group_ndn)
{
	const struct acl_group_lookup *groups = t->policy->groups;
	struct ber_view member = t->subject->ndn;
	if (groups == NULL || groups->is_member == NULL || member.len == 0)
		return false;
	bool is_member = false;
	int rc = groups->is_member(groups->context, group_ndn, w->group_class, w->group_member,
				   member, &is_member);
	return rc == LUMEN_OK && is_member;
}

static bool who_matches(const struct acl_target *t, const struct access_rule *r,
			const struct access_rules *owner, const struct access_who *w)
{
	struct ber_view subject = t->subject->ndn;
	struct ber_view pattern;
	switch (w->kind) {
	case ACCESS_WHO_ANYONE:
		return true;
	case ACCESS_WHO_ANONYMOUS:
		return subject.len == 0;
	case ACCESS_WHO_USERS:
		return subject.len > 0;
	case ACCESS_WHO_SELF:
		return subject.len > 0 && ber_view_eq(subject, t->ndn);
	case ACCESS_WHO_DN:
		if (w->dn.style == ACCESS_DN_REGEX)
			return regex_matches(&w->dn.regex, subject, NULL, 0);
		return who_pattern_dn(t, r, owner, &w->dn, &pattern) &&
		       dn_style_matches(w->dn.style, pattern, subject);
	case ACCESS_WHO_GROUP:
		return who_pattern_dn(t, r, owner, &w->dn, &pattern) &&
		       group_has_member(t, w, pattern);
	}
	return false;
}

/* Walk one rule's `by` clauses; *level is what the stopping clause grants. */
static enum walk_end walk_clauses(const struct acl_target *t, const struct access_rule *r,
				  const struct access_rules *owner, enum access_level *level)
{
	for (size_t i = 0; i < r->n_who; i++) {
		const struct access_who *w = &r->who[i];
		if (!who_matches(t, r, owner, w))
			continue;
		if (w->control == ACCESS_CONTINUE)
			continue;
		if (w->control == ACCESS_BREAK)
			return WALK_BREAK;
		*level = w->level;
		return WALK_STOP;
	}
	*level = ACCESS_NONE;   /* the implicit `by * none stop` */
	return WALK_STOP;
}

static void target_setup(struct acl_target *t, const struct acl_policy *policy,
			 const struct acl_subject *subject)
{
	t->policy = policy;
	t->subject = subject;
	t->failed = false;
	t->n_rules = rules_count(policy->database) + rules_count(policy->global);
	t->rule_matches = NULL;
	if (t->n_rules > 0 && subject->arena != NULL && !subject->is_root)
		t->rule_matches = arena_calloc(subject->arena, t->n_rules, 1);
}

void acl_target_init(struct acl_target *t, const struct acl_policy *policy,
		     const struct acl_subject *subject, const struct entry *entry)
{
	t->entry = entry;
	t->ndn = entry->ndn;
	target_setup(t, policy, subject);
}

void acl_target_init_dn(struct acl_target *t, const struct acl_policy *policy,
			const struct acl_subject *subject, struct ber_view ndn)
{
	t->entry = NULL;
	t->ndn = ndn;
	target_setup(t, policy, subject);
}

enum access_level acl_target_level(struct acl_target *t, const struct attribute_type *attr)
{
	if (t->subject->is_root)
		return ACCESS_MANAGE;
	if (t->n_rules == 0)
		return ACCESS_READ;
	enum access_level level = ACCESS_NONE;  /* the implicit final `access to * by * none` */
	for (size_t i = 0; i < t->n_rules; i++) {
		const struct access_rules *owner;
		const struct access_rule *r = rule_at(t->policy, i, &owner);
		if (!rule_covers(r, attr) || !rule_selects_cached(t, i, r))
			continue;
		if (walk_clauses(t, r, owner, &level) == WALK_STOP)
			break;
		level = ACCESS_NONE;
	}
	/* a rule whose filter could not be evaluated may have been skipped:
	 * the walk's answer cannot be trusted, so nothing is granted */
	return t->failed ? ACCESS_NONE : level;
}

bool acl_target_allowed(struct acl_target *t, const struct attribute_type *attr,
			enum access_level needed)
{
	return acl_target_level(t, attr) >= needed;
}

bool acl_allowed(const struct acl_policy *policy, const struct acl_subject *subject,
		 const struct entry *target, const struct attribute_type *attr,
		 enum access_level needed)
{
	struct acl_target t;
	acl_target_init(&t, policy, subject, target);
	return acl_target_allowed(&t, attr, needed);
}

/* ------------------------------------------------ per-operation checks */

bool acl_may_disclose(struct acl_target *t)
{
	return acl_target_allowed(t, ACL_ATTR_ENTRY, ACCESS_DISCLOSE);
}

bool acl_search_may_match(struct acl_target *t)
{
	return acl_target_allowed(t, ACL_ATTR_ENTRY, ACCESS_SEARCH);
}

bool acl_search_may_return(struct acl_target *t)
{
	return acl_target_allowed(t, ACL_ATTR_ENTRY, ACCESS_READ);
}

bool acl_may_read_attribute(struct acl_target *t, const struct attribute_type *type)
{
	return acl_target_allowed(t, type, ACCESS_READ);
}

bool acl_target_may_read(void *target, const struct attribute_type *type)
{
	return type != NULL && acl_may_read_attribute(target, type);
}

bool acl_may_compare(struct acl_target *t, const struct attribute_type *type)
{
	return acl_target_allowed(t, type, ACCESS_COMPARE);
}

bool acl_may_bind(const struct acl_policy *policy, const struct acl_subject *subject,
		  const struct entry *entry)
{
	static const char password[] = "userPassword";
	const struct attribute_type *type =
		schema_attribute_type(entry->schema, password, sizeof(password) - 1);
	if (type == NULL)
		return subject->is_root;
	return acl_allowed(policy, subject, entry, type, ACCESS_AUTH);
}

/* write on `children` of parent, or of parent_ndn when parent is NULL. */
static bool may_write_children(const struct acl_policy *policy,
			       const struct acl_subject *subject, const struct entry *parent,
			       struct ber_view parent_ndn)
{
	struct acl_target t;
	if (parent != NULL)
		acl_target_init(&t, policy, subject, parent);
	else
		acl_target_init_dn(&t, policy, subject, parent_ndn);
	return acl_target_allowed(&t, ACL_ATTR_CHILDREN, ACCESS_WRITE);
}

bool acl_may_add_below(const struct acl_policy *policy, const struct acl_subject *subject,
		       const struct entry *parent, struct ber_view parent_ndn)
{
	return subject->is_root || may_write_children(policy, subject, parent, parent_ndn);
}

static struct ber_view parent_of(struct ber_view ndn)
{
	struct ber_view rdn, parent;
	dn_split_first(ndn, &rdn, &parent);
	return parent;
}

bool acl_may_add(const struct acl_policy *policy, const struct acl_subject *subject,
		 const struct entry *parent, const struct entry *new_entry)
{
	if (subject->is_root)
		return true;
	if (!may_write_children(policy, subject, parent, parent_of(new_entry->ndn)))
		return false;
	struct acl_target t;
	acl_target_init(&t, policy, subject, new_entry);
	if (!acl_target_allowed(&t, ACL_ATTR_ENTRY, ACCESS_WRITE))
		return false;
	for (size_t i = 0; i < new_entry->n_attributes; i++)
		if (!acl_target_allowed(&t, new_entry->attributes[i].desc.type, ACCESS_WRITE))
			return false;
	return true;
}

bool acl_may_delete(const struct acl_policy *policy, const struct acl_subject *subject,
		    const struct entry *parent, const struct entry *entry)
{
	if (subject->is_root)
		return true;
	return acl_allowed(policy, subject, entry, ACL_ATTR_ENTRY, ACCESS_WRITE) &&
	       may_write_children(policy, subject, parent, parent_of(entry->ndn));
}

bool acl_may_modify(const struct acl_policy *policy, const struct acl_subject *subject,
		    const struct entry *entry, const struct ldap_change *changes,
		    size_t n_changes)
{
	if (subject->is_root)
		return true;
	struct acl_target t;
	acl_target_init(&t, policy, subject, entry);
	for (size_t i = 0; i < n_changes; i++) {
		struct ber_view name = changes[i].modification.type;
		struct attribute_description ad;
		if (attribute_description_parse(entry->schema, (const char *)name.ptr, name.len,
						&ad) != LUMEN_OK)
			continue;
		if (!acl_target_allowed(&t, ad.type, ACCESS_WRITE))
			return false;
	}
	return true;
}

bool acl_may_rename(const struct acl_policy *policy, const struct acl_subject *subject,
		    const struct entry *entry, const struct entry *old_parent,
		    const struct entry *new_parent, struct ber_view new_parent_ndn,
		    const struct dn_rdn *new_rdn, const struct dn_rdn *old_rdn_deleted)
{
	if (subject->is_root)
		return true;
	struct acl_target t;
	acl_target_init(&t, policy, subject, entry);
	if (!acl_target_allowed(&t, ACL_ATTR_ENTRY, ACCESS_WRITE))
		return false;
	const struct dn_rdn *rdns[2] = { new_rdn, old_rdn_deleted };
	for (size_t r = 0; r < 2; r++)
		for (size_t i = 0; rdns[r] != NULL && i < rdns[r]->n_avas; i++) {
			const struct attribute_type *type = rdns[r]->avas[i].type;
			if (type != NULL && !acl_target_allowed(&t, type, ACCESS_WRITE))
				return false;
		}
	struct ber_view old_parent_ndn = parent_of(entry->ndn);
	if (!may_write_children(policy, subject, old_parent, old_parent_ndn))
		return false;
	if (ber_view_eq(old_parent_ndn, new_parent_ndn))
		return true;
	return may_write_children(policy, subject, new_parent, new_parent_ndn);
}
