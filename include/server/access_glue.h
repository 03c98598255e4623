/*
 * access_glue.h — what the operation handlers need around the ACL engine
 * (acl.h): the policy and subject of one operation, group membership over
 * the backend, copies of the entries a write is decided on, the `limits`
 * that apply to a requester, and the SSF rules of `security` (server layer).
 *
 * Per operation: access_op_init on the worker's stack, then the acl_*
 * calls with &a->policy and &a->subject. Everything lives on the stack or
 * in the operation's arena; nothing is malloc'd except the entry copies of
 * access_fetch_copy (caller entry_free's them), which only writes use.
 *
 * Policy (slapd.access(5), acl.h): a database's rules, then the global
 * ones; the rootdn of the target's database may do everything; without any
 * rule everyone reads and only the rootdn writes. Group membership (group=
 * clauses) fetches the group entry from the database holding it and
 * compares each member value, as a normalized DN, with the requester.
 *
 * Thread-safety: an access_op belongs to one worker; the configuration
 * and the backends are shared read-only / thread-safe.
 *
 * Caveats:
 *  - An access_op must not move after access_op_init (policy.groups
 *    points into it).
 *  - access_op.checks is false for the rootdn and whenever no rule exists
 *    and the operation only reads: callers skip per-entry work then.
 */
#ifndef LUMEN_ACCESS_GLUE_H
#define LUMEN_ACCESS_GLUE_H

#include <stdbool.h>
#include <stddef.h>

#include "acl.h"
#include "arena.h"
#include "ber.h"
#include "entry.h"

struct server;
struct server_database;

/* OpenLDAP's SSF of a local (ldapi) connection. */
#define ACCESS_SSF_LOCAL 71u

struct access_op {
	struct acl_policy policy;
	struct acl_subject subject;
	struct acl_group_lookup groups;
	const struct server *server;
	const bool *abandoned;
	bool has_rules;             /* the database or the global list has rules */
	bool checks;                /* reads must be checked (not root, rules exist) */
	bool tests_values;          /* checks, and a rule's filter= reads the target */
};

/*
 * Set up a's policy for database db (NULL: only the global rules) and its
 * subject (requester_ndn empty = anonymous; is_root: the rootdn of db).
 * Never fails.
 */
void access_op_init(struct access_op *a, const struct server *s,
		    const struct server_database *db, struct ber_view requester_ndn,
		    bool is_root, struct arena *arena, const bool *abandoned);

/*
 * Is member_ndn, as a normalized DN, among group's values of member_type,
 * and is group an instance of group_class (NULL: of any class)? What a
 * group= clause asks of the group entry; scratch comes from arena. A
 * value that does not normalize matches nothing.
 */
bool access_group_has_member(const struct server *s, struct arena *arena,
			     const struct entry *group, const struct object_class *group_class,
			     const struct attribute_type *member_type, struct ber_view member_ndn);

/*
 * A search under access control (acl.h's search rules), in two halves:
 * `hook` goes to the backend (backend_op.filter_access), which evaluates
 * the filter through it: per entry, `search` on the entry, then `search`
 * on every attribute actually tested (filter.h: a denied one is Undefined,
 * so a filter is never an oracle, also not through a supertype). The sink
 * then asks access_search_entry (`read` on the entry) and reads attributes
 * through access_search_may_read while encoding. The per-entry scratch
 * (rule cache, $N expansions, group lookups) lives in its own arena, reset
 * per entry, so a long search does not grow the operation's arena.
 */
struct access_search {
	struct access_op a;          /* subject.arena = &scratch; must not move */
	struct arena scratch;
	struct filter_access hook;
	struct acl_target target;    /* the entry being decided/encoded */
	const struct entry *begun;   /* the entry the hook set target up for */
	bool may_match;              /* `search` on it */
};

/* Start (never fails). */
void access_search_begin(struct access_search *s, const struct server *srv,
			 const struct server_database *db, struct ber_view requester_ndn,
			 bool is_root, const bool *abandoned);
/*
 * May e be returned? (sets up s->target for access_search_may_read).
 * tested: the backend's filter test of e through s->hook came right
 * before (backend_entry_info.filter_tested), so the target it set up is
 * reused. Otherwise the entry is decided afresh: an entry's address says
 * nothing, as the one last tested may have been freed and its memory
 * handed to this one.
 */
bool access_search_entry(struct access_search *s, const struct entry *e, bool tested);
/*
 * For entries no backend tests (the root DSE, cn=Subschema, cn=Monitor):
 * f evaluated on e through s->hook, then access_search_entry. False also
 * when the evaluation fails (the scratch ran out): nothing is shown that
 * was not decided.
 */
bool access_search_test(struct access_search *s, const struct filter *f, const struct entry *e);
/* attribute_selection.may_read for the entry of the last access_search_entry. */
bool access_search_may_read(void *search, const struct attribute_type *type);
/* Free the scratch arena. */
void access_search_end(struct access_search *s);

/*
 * The values one operation tests on one entry other than a search filter:
 * the Assertion control (`search` on each attribute tested) and Compare
 * (`compare` on each subtype compared). `hook` goes to the backend
 * (backend_op.filter_access / compare_access); it works in a->subject's
 * arena and sets `hidden` when it denied an attribute of an entry the
 * requester may not know exists (answer noSuchObject then, not
 * insufficientAccessRights). a must outlive the hook's use.
 */
struct access_values {
	struct filter_access hook;
	struct access_op *a;
	enum access_level level;
	struct acl_target target;
	bool hidden;
};
void access_values_init(struct access_values *v, struct access_op *a, enum access_level level);

/* What access_decide found. */
enum access_verdict {
	ACCESS_ALLOWED,      /* go on */
	ACCESS_DENIED,       /* insufficientAccessRights */
	ACCESS_HIDDEN,       /* denied, and the entry may not be disclosed: noSuchObject */
	ACCESS_ABSENT,       /* no such entry: let the operation say so */
};

/*
 * Decide about the entry ndn of db without copying it: allowed(t, arg) on
 * an acl_target of the entry (borrowed for the call), and acl_may_disclose
 * when it says no. LUMEN_OK (*out set), or the backend's error.
 */
int access_decide(struct access_op *a, const struct server_database *db, struct ber_view ndn,
		  bool (*allowed)(struct acl_target *t, void *arg), void *arg,
		  enum access_verdict *out);

/*
 * A private copy of the entry ndn of db (*out NULL when there is none), for
 * the decisions of a write. Returns LUMEN_OK, LUMEN_ENOMEM, or the
 * backend's error (LUMEN_EIO, LUMEN_EBUSY, ...).
 */
int access_fetch_copy(const struct server_database *db, struct arena *arena,
		      const bool *abandoned, struct ber_view ndn, struct entry **out);

/*
 * The size and time limits that apply to the requester on db: the first
 * matching `limits` line of the database, else of the global list,
 * overrides the database's sizelimit/timelimit for the values it sets.
 * Values: > 0 a bound, CONFIG_LIMIT_UNLIMITED none.
 */
void access_limits(const struct server *s, const struct server_database *db,
		   struct ber_view requester_ndn, long *size, long *time);

/*
 * Map an authentication identity (SASL EXTERNAL's "gidNumber=..,cn=auth")
 * through the `authz-regexp` lines: the first pattern that matches gives
 * the DN (its replacement with $N substituted: *dn) and its normalized
 * form (*ndn), both in the arena. Without a matching pattern the identity
 * itself is the DN. LUMEN_OK, LUMEN_EMALFORMED (the result is not a DN
 * under the schema), LUMEN_ELIMIT (the result is too long), LUMEN_ENOMEM.
 */
int access_authz_map(const struct server *s, const char *identity, struct arena *arena,
		     struct ber_view *dn, struct ber_view *ndn);

#endif
