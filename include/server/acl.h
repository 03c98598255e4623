/*
 * acl.h — the access-control decision engine (server layer): walks the
 * rules of access_rules.h for one requester, one target entry and one
 * attribute, and the per-operation checks built on it.
 *
 * Policy (slapd.access(5)):
 *  - The rootdn (subject.is_root) may do everything, always.
 *  - With no rule at all (database and global lists both empty) everyone,
 *    anonymous included, may read (so also search, compare, auth and
 *    disclose) and nobody but the rootdn may write.
 *  - Otherwise the database's rules are tried first, then the global ones,
 *    as one ordered list. The first rule whose WHAT matches (DN, filter and
 *    attrs= all matching) is used; within it the first `by` whose WHO
 *    matches grants its level, then its control decides: stop (default)
 *    ends the walk with that level; continue tries the following `by`
 *    clauses of the same rule; break goes on to the following rules. A
 *    rule's `by` list ends with an implicit `by * none stop`, and the whole
 *    list with an implicit `access to * by * none`. Levels are assigned, not
 *    accumulated: the level of the clause where the walk stops is the answer.
 *  - A rule without attrs= matches every attribute and both
 *    pseudo-attributes; a rule with attrs= matches the types listed (and
 *    their subtypes), `entry` (ACL_ATTR_ENTRY) and `children`
 *    (ACL_ATTR_CHILDREN) only when listed.
 *  - `self` is the subject whose DN is the target's DN; `users` any bound
 *    subject (non-empty DN); WHO dn.* patterns compare with the subject's
 *    normalized DN (empty for anonymous, so dn.base="" means anonymous);
 *    group=DN asks the server's membership callback (anonymous is never a
 *    member; a callback error counts as "not a member").
 *  - $N in a WHO DN is replaced by the N-th group the rule's dn.regex
 *    matched in the target's normalized DN, then the result is normalized
 *    (into the subject's arena) and compared as a DN.
 *
 * Per-operation use: acl_target_init once per target entry, then any number
 * of acl_target_allowed calls (one per attribute). Whether each rule's DN
 * and filter part matches the entry is computed at most once per target and
 * kept in an array from the subject's arena; only the attrs= part (a bit
 * test) is redone per attribute. If the arena is exhausted the target works
 * uncached (same answers, more work). Group membership is not cached.
 *
 * Memory: nothing is malloc'd; scratch (the cache, $N expansions, filter
 * evaluation temporaries) comes from subject.arena, which must live while
 * the target does.
 * Thread-safety: the rules are shared read-only by all workers; a target
 * and its arena belong to one worker. A rule's compiled filter is evaluated
 * through a stack copy whose arena is the subject's, so rules never write
 * to shared memory.
 *
 * Caveats:
 *  - val= is not supported: decisions are per attribute, not per value.
 *  - A target with entry == NULL (acl_target_init_dn: a DN that names no
 *    entry, such as the parent of a suffix) never matches a rule with
 *    filter=.
 *  - Fails closed: when a rule's filter= cannot be evaluated (the
 *    subject's arena is exhausted), the target grants nothing at all
 *    (ACCESS_NONE for every attribute), since skipping that rule could
 *    reach a later, more generous one.
 *  - The group callback runs on the worker, inside the operation's read
 *    transaction if the server wants it to; it must not call back into acl.
 */
#ifndef LUMEN_ACL_H
#define LUMEN_ACL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "access_rules.h"
#include "arena.h"
#include "ber.h"
#include "dn.h"
#include "entry.h"
#include "filter.h"
#include "ldap_message.h"
#include "schema.h"

/* The pseudo-attributes, passed where an attribute type is expected. */
extern const struct attribute_type acl_children_pseudo_attribute;
#define ACL_ATTR_ENTRY ((const struct attribute_type *)NULL)
#define ACL_ATTR_CHILDREN (&acl_children_pseudo_attribute)

/* Who asks. */
struct acl_subject {
	struct ber_view ndn;    /* normalized bind DN; empty = anonymous */
	bool is_root;           /* bound as the database's rootdn */
	struct arena *arena;    /* the operation's scratch */
};

/* Group membership, implemented by the server over the backend. */
struct acl_group_lookup {
	/*
	 * Set *is_member if the entry group_ndn exists, belongs to group_class
	 * (or a subclass) and has member_ndn among the values of member_type.
	 * Return LUMEN_OK, or any LUMEN_E* error (treated as not a member).
	 */
	int (*is_member)(void *context, struct ber_view group_ndn,
			 const struct object_class *group_class,
			 const struct attribute_type *member_type,
			 struct ber_view member_ndn, bool *is_member);
	void *context;
};

/* The rules that govern one database; any pointer may be NULL (= none). */
struct acl_policy {
	const struct access_rules *database;   /* tried first */
	const struct access_rules *global;     /* then these */
	const struct acl_group_lookup *groups; /* NULL: group= never matches */
};

/* Decision state for one (subject, target); see "Per-operation use". */
struct acl_target {
	const struct acl_policy *policy;
	const struct acl_subject *subject;
	const struct entry *entry;      /* NULL for acl_target_init_dn */
	struct ber_view ndn;            /* the target's normalized DN */
	uint8_t *rule_matches;          /* per rule: 0 unknown, 1 yes, 2 no; may be NULL */
	size_t n_rules;
	bool failed;                    /* a rule's filter= could not be evaluated */
};

/*
 * Does a decision under this policy read the target's values (a rule with
 * filter=)? If not, it needs only the target's DN, and a reader may hand
 * acl_target_init an entry decoded without its other attributes.
 */
bool acl_policy_tests_values(const struct acl_policy *policy);

/*
 * Does a decision under this policy read what the directory holds beyond
 * the DNs and the requester's identity: a target's values (filter=) or a
 * group's members (group=)? Then a change to entries can turn a verdict.
 */
bool acl_policy_reads_entries(const struct acl_policy *policy);

/* Start deciding about `entry` (never fails; see the arena note above). */
void acl_target_init(struct acl_target *t, const struct acl_policy *policy,
		     const struct acl_subject *subject, const struct entry *entry);
/* Same for a DN that names no entry (ndn must outlive t). */
void acl_target_init_dn(struct acl_target *t, const struct acl_policy *policy,
			const struct acl_subject *subject, struct ber_view ndn);

/* The level granted on attr (ACL_ATTR_ENTRY, ACL_ATTR_CHILDREN or a type). */
enum access_level acl_target_level(struct acl_target *t, const struct attribute_type *attr);
/* acl_target_level(t, attr) >= needed. */
bool acl_target_allowed(struct acl_target *t, const struct attribute_type *attr,
			enum access_level needed);
/* One-shot form: init + allowed. */
bool acl_allowed(const struct acl_policy *policy, const struct acl_subject *subject,
		 const struct entry *target, const struct attribute_type *attr,
		 enum access_level needed);

/* ------------------------------------------------ per-operation checks */

/* May an error reveal that the target exists (disclose on entry)? When
 * not, answer noSuchObject instead of insufficientAccessRights. */
bool acl_may_disclose(struct acl_target *t);
/* Search: may the entry be a match (search on entry)? */
bool acl_search_may_match(struct acl_target *t);
/* Search: may the matched entry be returned (read on entry)? */
bool acl_search_may_return(struct acl_target *t);
/* Search: may this attribute be returned (read on it)? */
bool acl_may_read_attribute(struct acl_target *t, const struct attribute_type *type);
/* acl_may_read_attribute in the shape of attribute_selection.may_read
 * (entry_send.h), with the acl_target as arg; a NULL type is refused. */
bool acl_target_may_read(void *target, const struct attribute_type *type);
/* Compare: compare on the attribute. */
bool acl_may_compare(struct acl_target *t, const struct attribute_type *type);
/* Simple bind: auth on the entry's userPassword (the subject is the
 * connection's identity before the bind, usually anonymous). */
bool acl_may_bind(const struct acl_policy *policy, const struct acl_subject *subject,
		  const struct entry *entry);
/*
 * Write on the parent's children alone: what an add is decided on when its
 * new entry cannot be built (the database then says why). parent NULL:
 * decided on parent_ndn.
 */
bool acl_may_add_below(const struct acl_policy *policy, const struct acl_subject *subject,
		       const struct entry *parent, struct ber_view parent_ndn);
/*
 * Add: write on the parent's children, on the new entry and on each of its
 * attributes. parent NULL: the parent names no entry (adding a suffix); its
 * DN is taken from new_entry's DN.
 */
bool acl_may_add(const struct acl_policy *policy, const struct acl_subject *subject,
		 const struct entry *parent, const struct entry *new_entry);
/* Delete: write on the entry and on the parent's children (parent as add). */
bool acl_may_delete(const struct acl_policy *policy, const struct acl_subject *subject,
		    const struct entry *parent, const struct entry *entry);
/*
 * Modify: write on the type of every change. A description that does not
 * parse (unknown type) is skipped here: the modify itself fails on it.
 */
bool acl_may_modify(const struct acl_policy *policy, const struct acl_subject *subject,
		    const struct entry *entry, const struct ldap_change *changes,
		    size_t n_changes);
/*
 * ModifyDN: write on the entry, on the old parent's children, on the new
 * parent's children (when it differs), on each type of the new RDN and,
 * when deleteOldRDN removes them (old_rdn_deleted non-NULL), on each type
 * of the old RDN (as slapd). Parents as add: NULL = names no entry;
 * new_parent_ndn is the new superior's DN (equal to the old parent's DN
 * when unchanged).
 */
bool acl_may_rename(const struct acl_policy *policy, const struct acl_subject *subject,
		    const struct entry *entry, const struct entry *old_parent,
		    const struct entry *new_parent, struct ber_view new_parent_ndn,
		    const struct dn_rdn *new_rdn, const struct dn_rdn *old_rdn_deleted);

#endif
