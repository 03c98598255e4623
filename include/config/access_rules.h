/*
 * access_rules.h — `access to WHAT by WHO ACCESS [control]` directives
 * (slapd.access(5) syntax) parsed into plain, precompiled rule structs
 * (config layer). The decision engine that walks them is acl.h (server).
 *
 * Two phases, because slapd.conf finalizes the schema only after the whole
 * file is read:
 *   1. access_rule_parse, once per `access` line, checks the grammar
 *      (keywords, styles, access levels, controls, quoting), compiles the
 *      regular expressions and parses filter text. It needs no schema.
 *   2. access_rules_compile, once per rule list after schema_finalize,
 *      resolves attribute names and @objectClass sets into bit sets,
 *      normalizes DNs, compiles filters and resolves group classes.
 * Every error of either phase is "FILE:LINE: access: reason".
 *
 * Grammar accepted (keywords and styles case-insensitive):
 *   access to WHAT... (by WHO [ACCESS] [CONTROL])+
 *   WHAT: `*` | dn[.STYLE]=DN | attrs=LIST (alias attr=) | filter=FILTER,
 *         dn/attrs/filter combinable in any order, each at most once.
 *         STYLE: base (default; alias exact, baseObject, default), one
 *         (onelevel), subtree (sub), children, regex.
 *         LIST: comma-separated attribute types (a type also covers its
 *         subtypes: attrs=name covers cn and sn), the pseudo-attributes
 *         `entry` and `children`, and @class (every MUST and MAY type of
 *         the object class and of its superclasses).
 *   WHO:  `*` | anonymous | users | self | dn[.STYLE]=DN |
 *         group[/CLASS[/ATTRIBUTE]]=DN (default groupOfNames/member).
 *         A non-regex WHO DN may hold $0..$9, replaced at decision time by
 *         the groups the rule's dn.regex WHAT captured.
 *   ACCESS: none < disclose < auth < compare < search < read < write <
 *         manage (a level grants every lower one); omitted = none.
 *   CONTROL: stop (default) | continue | break.
 * Not supported (rejected with a clear error): val=, privilege forms
 * (=rwx, +r), dnattr=, peername=, ssf= and other WHO qualifiers, several
 * WHO qualifiers in one `by`, WHAT dn patterns other than DNs and regexes.
 *
 * Matching conventions: WHAT and WHO DNs are compared as normalized DNs
 * (dn.h) byte for byte; regexes are POSIX extended, case-insensitive, and
 * run on the normalized DN (so write them against lowercase
 * "uid=x,ou=people,dc=example,dc=com" forms without spaces after commas).
 *
 * Ownership: a struct access_rules is a plain value; all-zero is a valid
 * empty list. It owns every rule, string, regex and compiled filter in it;
 * access_rules_free releases them (not the struct itself). The schema passed
 * to access_rules_compile must outlive the rules.
 * Thread-safety: build on one thread; once compiled, the rules are
 * immutable and may be read by any number of threads (regexec is
 * reentrant; compiled filters are evaluated through a per-call copy, see
 * acl.h).
 *
 * Caveats:
 *  - Order is kept: the first matching `to` wins. The engine evaluates a
 *    database's own rules before the global ones (slapd.access(5)).
 *  - access_rule_parse on compiled rules, or compiling twice, is
 *    LUMEN_EINVAL. A list with a failed compile must only be freed.
 *  - A filter= on a rule means the rule never matches a DN that names no
 *    entry (e.g. the parent of a suffix being added).
 */
#ifndef LUMEN_ACCESS_RULES_H
#define LUMEN_ACCESS_RULES_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "ber.h"
#include "filter.h"
#include "schema.h"

/* Ordered: a level grants every level below it. */
enum access_level {
	ACCESS_NONE = 0,
	ACCESS_DISCLOSE,
	ACCESS_AUTH,
	ACCESS_COMPARE,
	ACCESS_SEARCH,
	ACCESS_READ,
	ACCESS_WRITE,
	ACCESS_MANAGE,
};

enum access_control {
	ACCESS_STOP = 0,    /* this `by` decides */
	ACCESS_CONTINUE,    /* try the following `by` clauses of the same rule */
	ACCESS_BREAK,       /* go on to the following rules */
};

enum access_dn_style {
	ACCESS_DN_ANY = 0,  /* no dn= given (or `to *`) */
	ACCESS_DN_BASE,
	ACCESS_DN_ONE,
	ACCESS_DN_SUBTREE,
	ACCESS_DN_CHILDREN,
	ACCESS_DN_REGEX,
};

enum access_who_kind {
	ACCESS_WHO_ANYONE = 0,
	ACCESS_WHO_ANONYMOUS,
	ACCESS_WHO_USERS,
	ACCESS_WHO_SELF,
	ACCESS_WHO_DN,
	ACCESS_WHO_GROUP,
};

/* Highest $N a WHO pattern may name (POSIX gives us up to 9 groups + $0). */
#define ACCESS_MAX_CAPTURES 10

struct access_dn_pattern {
	enum access_dn_style style;
	char *text;                 /* as written; the $N template when `expand` */
	struct ber_view ndn;        /* normalized (not for regex/expand), rules' arena */
	regex_t regex;              /* ACCESS_DN_REGEX only */
	bool regex_compiled;
	bool expand;                /* holds $N: substituted and normalized per decision */
};

struct access_who {
	enum access_who_kind kind;
	struct access_dn_pattern dn;            /* DN and GROUP (group: base style) */
	char *group_class_name;                 /* GROUP: as written, NULL = default */
	char *group_attribute_name;
	const struct object_class *group_class; /* resolved by compile */
	const struct attribute_type *group_member;
	enum access_level level;
	enum access_control control;
};

struct access_rule {
	char *file;                     /* where the directive was, for errors and logs */
	unsigned line;
	struct access_dn_pattern what;  /* style ACCESS_DN_ANY when no dn= */
	bool has_attrs;
	char *attrs_text;               /* the LIST as written */
	uint64_t *attr_bits;            /* by attribute_type.index; rules' arena */
	size_t n_attr_words;
	bool attrs_entry;               /* `entry` listed */
	bool attrs_children;            /* `children` listed */
	bool has_filter;
	struct ldap_filter *filter_parsed;  /* rules' arena */
	struct filter filter;           /* compiled; see acl.h for how it is evaluated */
	struct access_who *who;
	size_t n_who;
};

struct access_rules {
	struct access_rule *rules;
	size_t n_rules;
	size_t cap_rules;
	bool compiled;
	const struct schema *schema;    /* set by access_rules_compile */
	struct arena arena;             /* normalized DNs, bit sets, filters */
	bool arena_ready;
};

/*
 * Parse one `access` directive; argv[0] is "access", argv[1] must be "to".
 * Arguments are as config_split leaves them (quotes already removed); a
 * value still wrapped in double quotes ("dn.base=\"x\"" given directly) is
 * unwrapped too (argv's strings may be modified in place). The rule copies
 * everything it keeps into memory `rules` owns, so argv may be reused or
 * freed as soon as this returns. The rule is appended to `rules`. On
 * error nothing is appended and err holds "FILE:LINE: access: reason".
 * Returns LUMEN_OK,
 * LUMEN_EMALFORMED (grammar: missing `to` or `by`, unknown WHAT or WHO
 * keyword or style, bad access level or control, bad regex, filter text
 * that does not parse, duplicate dn=/attrs=/filter=, $N in a WHO regex),
 * LUMEN_EINVAL (rules already compiled), LUMEN_ENOMEM.
 */
int access_rule_parse(struct access_rules *rules, size_t argc, char **argv,
		      const char *file, unsigned line, char *err, size_t errlen);

/*
 * Resolve every rule against the finalized schema. Errors name the rule's
 * FILE:LINE: LUMEN_ENOTFOUND (unknown attribute type in attrs=, unknown
 * object class in @class or group/CLASS, unknown group member attribute),
 * LUMEN_EMALFORMED (a DN that does not parse or normalize, a filter that
 * does not compile, $N in a WHO whose rule has no dn.regex WHAT or naming
 * a group the regex does not have), LUMEN_EINVAL (compiled twice),
 * LUMEN_ENOMEM. An empty list compiles fine.
 */
int access_rules_compile(struct access_rules *rules, const struct schema *s,
			 char *err, size_t errlen);

/* Release everything the list owns and reset it to empty; NULL allowed. */
void access_rules_free(struct access_rules *rules);

/* "none" ... "manage"; "unknown" for anything else. */
const char *access_level_name(enum access_level level);

#endif
