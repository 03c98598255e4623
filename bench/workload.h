/*
 * workload.h — what lumenbench asks for, and its LDAP encoding (bench).
 *
 * A workload is the set of operation kinds lumenbench may issue (one, or a
 * weighted mix), the templates each fills in, and the parts of the requests
 * that never change, encoded once up front (the attribute selection, the
 * scope, constant filters). Encoding an operation then costs one template
 * expansion (a search also parses its filter, ldap_filter_text.h, into the
 * caller's scratch arena) and a few ber_write calls into the connection's
 * recycled writer: nothing is allocated per operation once the writer and
 * the scratch arena have grown to their working size.
 *
 * Ownership: a workload is built once (bench_workload_init) and freed with
 * bench_workload_free; it owns its pre-encoded pieces.
 * Thread-safety: read-only after init; shared by all client threads.
 *
 * Caveats:
 *  - templates for the DN and the value of one operation share one draw
 *    (template.h), so "uid=user.[1-N]" and "user.[1-N]" agree.
 *  - add builds its entry from the DN's first RDN: objectClass
 *    inetOrgPerson, cn, sn, and the RDN attribute itself.
 *  - --sort and --vlv put critical controls on searches (not on auth's
 *    search); the sort control is encoded once, the VLV control per
 *    search (its offset is a template, its contextID, with --vlv-context,
 *    the one the server returned on the connection's previous search).
 */
#ifndef LUMEN_BENCH_WORKLOAD_H
#define LUMEN_BENCH_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "ber.h"
#include "template.h"

/* The kinds of operation; also the keys of --mix. */
enum bench_op {
	BENCH_OP_SEARCH,
	BENCH_OP_AUTH,      /* search for the entry, then bind as its DN */
	BENCH_OP_BIND,      /* simple bind as the DN template */
	BENCH_OP_COMPARE,
	BENCH_OP_MODIFY,
	BENCH_OP_ADD,
	BENCH_OP_DELETE,
	BENCH_OP_COUNT
};

/* "search" etc. */
const char *bench_op_name(enum bench_op op);
/* LUMEN_ENOTFOUND for an unknown name. */
int bench_op_from_name(const char *name, enum bench_op *op);

/* The text settings a workload is built from (see lumenbench --help). */
struct workload_settings {
	unsigned weights[BENCH_OP_COUNT];  /* relative; 0 = never */
	const char *base;                  /* search base template */
	int scope;                         /* 0 base, 1 one, 2 subtree */
	int deref;                         /* the search's derefAliases, 0-3 */
	const char *filter;                /* search filter template */
	const char *attributes;            /* comma-separated; NULL = all */
	const char *auth_filter;           /* filter used by auth */
	const char *auth_base;
	const char *dn;                    /* bind/compare/modify target */
	const char *password;              /* bind and auth password */
	const char *compare_attribute;
	const char *compare_value;         /* template */
	const char *modify_attribute;
	const char *modify_value;          /* template */
	int modify_op;                     /* enum bench_modify_op (0: replace) */
	const char *add_dn;                /* template; drawn sequentially */
	const char *delete_dn;             /* template; drawn sequentially */
	/* Controls on search (not auth's): NULL = none. */
	const char *sort;                  /* "[-]attr[/orderingRule]" (RFC 2891) */
	const char *vlv;                   /* "before/after/offset/count"; offset a template */
	bool vlv_context;                  /* send back the connection's last contextID */
};

/*
 * What a modify does with its value: LDAP's add, delete or replace, or
 * toggle: add on even passes through the templates' widest range, delete
 * on odd ones, so with sequential fill every delete removes a value an
 * earlier add put there (no attributeOrValueExists / noSuchAttribute).
 */
enum bench_modify_op {
	BENCH_MODIFY_REPLACE = 0, BENCH_MODIFY_ADD, BENCH_MODIFY_DELETE,
	BENCH_MODIFY_TOGGLE,
};

struct bench_workload {
	unsigned weights[BENCH_OP_COUNT];
	unsigned weight_total;
	int scope, deref;
	struct bench_template base, filter, auth_base, auth_filter, dn, compare_value,
		modify_value, add_dn, delete_dn;
	const char *password;
	const char *compare_attribute;
	const char *modify_attribute;
	int modify_op;
	uint64_t toggle_period;            /* widest span of --dn and the value */
	struct ber_writer attributes;      /* encoded AttributeSelection */
	struct ber_writer sort_control;    /* encoded Control, empty without --sort */
	bool vlv;                          /* a VLV control on each search */
	bool vlv_context;                  /* with the contextID the connection got last */
	int64_t vlv_before, vlv_after, vlv_count;
	struct bench_template vlv_offset;
	struct ber_writer no_attributes;   /* "1.1": the auth search wants only DNs */
	_Atomic uint64_t search_sequence;  /* sequential fill of the other ops */
	_Atomic uint64_t add_sequence;
	_Atomic uint64_t delete_sequence;
};

/*
 * Compile the settings. LUMEN_EMALFORMED with *why naming the bad template,
 * filter or attribute list; LUMEN_EINVAL if no operation has a weight;
 * LUMEN_ENOMEM. On failure the workload holds nothing to free.
 */
int bench_workload_init(struct bench_workload *wl, const struct workload_settings *s,
			uint64_t first_sequence, const char **why);
void bench_workload_free(struct bench_workload *wl);

/* The operation kind for a uniform random number (weighted). */
enum bench_op bench_workload_pick(const struct bench_workload *wl, uint64_t random);

/*
 * Append one whole request LDAPMessage for op (the first request of auth,
 * its search) with message ID msgid and the given draw (ignored for add and
 * delete, which take the next sequential number); vlv_context: the
 * contextID for a VLV control when the workload sends it back (ptr NULL:
 * none yet). scratch holds a search's
 * parsed filter until the call returns (reset by each call; one per client
 * thread). LUMEN_ELIMIT if an expansion is too long or the expanded filter
 * too deep, LUMEN_EMALFORMED if the expanded filter is bad, LUMEN_ENOMEM,
 * or the writer's error. *why gets a reason.
 */
int bench_encode_op(struct ber_writer *w, struct bench_workload *wl,
		    struct arena *scratch, enum bench_op op, int32_t msgid,
		    uint64_t draw, struct ber_view vlv_context, const char **why);

/* Append a simple BindRequest (dn may be empty: anonymous). Writer errors. */
int bench_encode_bind(struct ber_writer *w, int32_t msgid, const char *dn,
		      size_t dn_len, const char *password);

/* Append an UnbindRequest. Writer errors. */
int bench_encode_unbind(struct ber_writer *w, int32_t msgid);

#endif
