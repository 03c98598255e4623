/*
 * overlay.h — the overlay chain of a database (server layer): modules
 * stacked over a database in the order of its `overlay NAME` lines, each
 * able to act before an operation (refuse or rewrite it), after it (add
 * response controls, change the result), and on every change inside the
 * write transaction with the entry before and after (database.h, "Write
 * hooks"), which is where replication, memberOf and referential
 * integrity do their work atomically with the change; and once the change
 * has committed (on_commit, on the committer, in commit order), which is
 * where replication hands it to persistent searches.
 *
 * The chain is itself a struct database: the server calls it through the
 * database interface like any other, and it calls the database below.
 * Order: before hooks run in `overlay` line order, then the database (with
 * the chain's write hook set on the operation, whose on_write calls every
 * overlay in line order), then after hooks in reverse order. An overlay
 * whose before hook answers skips the database and every overlay after
 * it; its own after hook and those of the ones before it still run.
 *
 * Bind: the server checks passwords itself (op_bind.c, with the pace of
 * bind_pace.h), and calls the chain around the check of a simple bind to
 * an entry (never for the rootdn): overlay_chain_bind_before with the
 * entry (a copy, or NULL when the DN names none), then its password
 * checks, then overlay_chain_bind_after with the outcome. A before hook
 * may refuse the account whatever the password (ppolicy's lockout): the
 * checks still run and the failure still waits out the pace, so the
 * refusal is not told apart by its time. After hooks may turn a success
 * into a failure (an expired password), add response controls, and write
 * (database_modify on req->database, from_tool set) — for a failure the
 * answer is already held back by the pace while they run, so a write
 * costs the client no time and tells nothing. The chain calls only the
 * overlays that have a bind hook; a database without one costs a bind
 * one pointer test (overlay_chain_binds).
 *
 * Configuration: each overlay type parses its own directives (the lines
 * after its `overlay` line that config did not know) when the chain is
 * created, at start-up and for `lumend -T`, with the helpers of
 * "Creating an overlay" below; an unknown overlay or directive names the
 * file and line.
 *
 * Ownership: overlay_chain_create makes the chain and every overlay's
 * state, whose configuration lives in memory the chain owns (setup's); overlay_chain_wrap hands it the database below, and from then on
 * closing the chain's database closes both. A chain never wrapped is
 * freed with overlay_chain_free.
 *
 * Thread-safety: the hooks are called from any number of workers at once
 * (on_write from the committer, one write at a time); an overlay guards
 * its own mutable state. Creation and freeing are start-up/shutdown only.
 *
 * Caveats:
 *  - fetch (group checks, the server's own reads) goes straight to the
 *    database below: overlays see operations, not internal reads.
 *  - An overlay's internal writes come back through the chain (so every
 *    overlay sees them, as replication must) with op->from_tool set:
 *    overlays pass those on without acting.
 *  - A paused search calls the before hooks on every call (the request's
 *    resume.active tells a continuation; a sink wrapped at the start must
 *    be wrapped again, with what the overlay kept in resume.overlay_state)
 *    and the after hooks once, when it ends.
 *  - A write may be applied more than once (group commit retries a batch
 *    that failed for another operation's sake): on_write must change
 *    nothing outside the transaction.
 */
#ifndef LUMEN_OVERLAY_H
#define LUMEN_OVERLAY_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "config_overlay.h"
#include "database.h"

enum overlay_operation {
	OVERLAY_SEARCH, OVERLAY_COMPARE, OVERLAY_ADD, OVERLAY_DELETE, OVERLAY_MODIFY,
	OVERLAY_MODRDN, OVERLAY_BIND,
};

/* A simple bind to an entry as it passes the chain (overlay.h, Bind). */
struct overlay_bind {
	struct ber_view dn;                /* the entry's DN, user form */
	const struct entry *entry;         /* borrowed; NULL: no such entry */
	bool password_ok;                  /* after: a stored value matched */
	bool refused;                      /* before: refuse whatever the password */
	bool success;                      /* after: the bind succeeds (an after hook
					      may clear it); op's result is then sent */
	bool password_change_only;         /* after: the bound connection may only
					      change its password (backend_op's) */
};

/*
 * One operation as it passes the chain. A before hook may change the
 * request's members (pointing at op->arena memory) to rewrite it.
 */
struct overlay_request {
	enum overlay_operation operation;
	struct backend_op *op;
	struct ber_view ndn;               /* target; add: the new entry's; search: base */
	union {
		struct backend_search *search;
		struct {
			struct ber_view attribute, value;
		} compare;
		struct {
			struct ber_view dn;
			const struct ldap_attribute *attributes;
			size_t n;
		} add;
		struct {
			const struct ldap_change *changes;
			size_t n;
		} modify;
		struct {
			struct ber_view new_rdn;
			bool delete_old_rdn;
			bool has_new_superior;
			struct ber_view new_superior_ndn;
		} modrdn;
		struct overlay_bind *bind;
	} u;
	/* The chain as a database (set by the chain): reads, internal writes. */
	struct database *database;
	int rc;                            /* after: what the database returned */
};

/* A before hook's verdict. */
enum overlay_verdict {
	OVERLAY_CONTINUE,   /* pass the operation on */
	OVERLAY_ANSWERED,   /* op's result is set: the database is not called */
};

/* What an overlay's create learns about its database. */
struct overlay_setup {
	const struct schema *schema;
	const struct config_database *database;
	const struct config_overlay *overlay;   /* its line and directives */
	const char *password_hash;              /* `password-hash`: the scheme of new values */
	int server_id;                          /* `serverID`; -1: none configured */
	/* Memory for what a state keeps from its directives (normalized DNs,
	 * parsed URIs): the chain's, freed with it; for creation only. */
	struct arena *memory;
};

/* A step of a creation on the state: LUMEN_OK, or an error with err filled in. */
typedef int (*overlay_setup_fn)(void *state, const struct overlay_setup *setup, char *err,
				size_t errlen);
/* One directive line into the state: LUMEN_OK, or an error with err filled in. */
typedef int (*overlay_line_fn)(void *state, const struct overlay_setup *setup,
			       const struct config_overlay_line *line, char *err, size_t errlen);

struct overlay_type {
	const char *name;
	/*
	 * Creation: parse setup->overlay's directives into a new state.
	 * Errors: LUMEN_EMALFORMED with err naming the line, LUMEN_ENOMEM.
	 * Either create does it all, or (create NULL) overlay_config_create
	 * takes the steps.
	 */
	int (*create)(const struct overlay_setup *setup, void **state, char *err, size_t errlen);
	struct overlay_steps {
		size_t state_size;          /* allocated zeroed */
		overlay_setup_fn prepare;   /* defaults, schema lookups; may be NULL */
		overlay_line_fn apply;      /* each directive line in order; may be NULL */
		overlay_setup_fn check;     /* what is required; may be NULL */
		const char *required;       /* a directive that must be given; NULL: none */
	} steps;                            /* up to the first error */
	void (*destroy)(void *state);   /* a state of create's, or one a step failed on */
	/* Each hook may be NULL. before returns enum overlay_verdict, or a
	 * negative lumen_err for an internal failure (op's result is set). */
	int (*before)(void *state, struct overlay_request *req);
	void (*after)(void *state, struct overlay_request *req);
	int (*on_write)(void *state, struct database_txn *txn, const struct database_txn_ops *ops,
			struct backend_op *op, const struct database_write *w);
	/* After the commit, on the committer, in commit order (database.h's
	 * on_commit): must not block. */
	void (*on_commit)(void *state, struct backend_op *op, const struct database_change *changes,
			  size_t n);
	/* Bind (see Bind above); each may be NULL. */
	void (*bind_before)(void *state, struct overlay_request *req);
	void (*bind_after)(void *state, struct overlay_request *req);
};

struct overlay_chain;

/*
 * The chain of config's overlays, parsed and created (NULL *out when the
 * section has none); password_hash is the configured scheme, server_id
 * this server's serverID (-1: none configured). Errors: LUMEN_EMALFORMED
 * (unknown overlay or directive; err names file and line), LUMEN_ENOMEM.
 */
int overlay_chain_create(const struct schema *schema, const struct config_database *config,
			 const char *password_hash, int server_id, struct overlay_chain **out,
			 char *err, size_t errlen);
/*
 * A chain of n overlays whose states are already made (tests; overlays
 * the server stacks itself). The chain destroys the states when freed.
 * Errors: LUMEN_ENOMEM (nothing taken).
 */
int overlay_chain_create_from(const struct overlay_type *const *types, void *const *states,
			      size_t n, struct overlay_chain **out);
/* The chain as a database over below (which it now owns); NULL chain:
 * below itself. Cannot fail. */
struct database *overlay_chain_wrap(struct overlay_chain *chain, struct database *below);
/* Does an overlay of chain act on binds? NULL chain: false. */
bool overlay_chain_binds(const struct overlay_chain *chain);
/*
 * The bind hooks around the server's password check (overlay.h, Bind):
 * req->operation OVERLAY_BIND, req->op (arena, want_password_policy) and
 * req->u.bind filled; the chain sets req->database. Cannot fail: an
 * overlay that cannot do its part logs and, for a failure that matters
 * (ppolicy's state), refuses the bind.
 */
void overlay_chain_bind_before(struct overlay_chain *chain, struct overlay_request *req);
void overlay_chain_bind_after(struct overlay_chain *chain, struct overlay_request *req);
/* Frees a chain that was never wrapped. NULL is fine. */
void overlay_chain_free(struct overlay_chain *chain);

/* ------------------------------------------------ Creating an overlay */

/*
 * What every overlay's creation shares (overlay_config.c), with
 * config_overlay.h for the failures of one directive line. Messages start
 * "ORIGIN: overlay NAME: ", the `overlay` line's origin and type->name.
 */

/* That prefix and the printf-formatted reason into err. LUMEN_EMALFORMED. */
int overlay_config_fail(const struct overlay_type *type, const struct overlay_setup *setup,
			char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/*
 * type's state made through its steps (overlay_type's Creation): what
 * the chain calls for a type without a create of its own. On any error
 * the state is destroyed (type->destroy) and err says why ("out of
 * memory" for LUMEN_ENOMEM); the errors are the steps' and LUMEN_ENOMEM.
 */
int overlay_config_create(const struct overlay_type *type, const struct overlay_setup *setup,
			  void **state, char *err, size_t errlen);
/*
 * A directive whose one argument is a DN ("DIRECTIVE <DN>", usage
 * without the quotes), normalized into setup->memory. Errors: LUMEN_EMALFORMED
 * ("expected \"usage\"" for other counts of words, "expected a DN"),
 * LUMEN_ENOMEM.
 */
int overlay_config_dn(const struct overlay_setup *setup, const struct config_overlay_line *line,
		      const char *usage, struct ber_view *ndn, char *err, size_t errlen);
/* The schema's attribute type name; NULL with "the schema has no NAME" in err. */
const struct attribute_type *overlay_config_attribute(const struct overlay_type *type,
						      const struct overlay_setup *setup,
						      const char *name, char *err, size_t errlen);
/*
 * True when the database's `index` lines give type an equality index (the
 * lookups an overlay makes in the write transaction use it; without one
 * they read every entry).
 */
bool overlay_setup_has_equality_index(const struct overlay_setup *setup,
				      const struct attribute_type *type);

/*
 * Checks config's `moduleload` lines: each must name a module Lumen has
 * built in (its databases, back_mdb and back_monitor, or one of its
 * overlays); each is logged as ignored. Errors: LUMEN_EUNSUPPORTED with
 * err naming the line.
 */
int overlay_check_modules(const struct config *config, char *err, size_t errlen);

/* True when db is an overlay chain holding the overlay named name. */
bool overlay_database_has(const struct database *db, const char *name);

/* The overlay types Lumen ships, by name; NULL when unknown. */
const struct overlay_type *overlay_type_find(const char *name);

/* The types (overlay_refint.c, ...), for overlay_type_find's table. */
extern const struct overlay_type overlay_refint;
extern const struct overlay_type overlay_memberof;
extern const struct overlay_type overlay_unique;

/* ------------------------------------------------------ DN references */

/*
 * The DNs of the entries find_equal hands to overlay_collect (its
 * database_txn_entry_fn), both forms copied into arena; only entries of
 * class `only` when it is not NULL. Errors: LUMEN_ENOMEM.
 */
struct overlay_dn_list {
	struct arena *arena;
	const struct object_class *only;
	struct overlay_dn {
		struct ber_view dn, ndn;
	} *dns;
	size_t n, cap;
};
int overlay_collect(void *ctx, const struct entry *e);

/*
 * In every entry holding old_ndn in type (of class `only` when not NULL):
 * the value goes, new_dn (user form) comes when not empty, and nothing
 * comes when the attribute lost its last value and nothing is not NULL.
 * The entries are stamped with modifier_ndn (empty: the operation's
 * requester). One whose repair would break the schema keeps its value,
 * and the log says so, naming `who`. Errors: the transaction's.
 */
struct overlay_rewrite {
	const char *who;                 /* the overlay, for the log */
	const struct attribute_type *type;
	const struct object_class *only;
	struct ber_view old_ndn;
	struct ber_view new_dn;
	const char *nothing;
	struct ber_view modifier_ndn;
};
int overlay_rewrite_references(struct database_txn *txn, const struct database_txn_ops *ops,
			       struct arena *arena, const struct overlay_rewrite *rw);
extern const struct overlay_type overlay_ppolicy;
extern const struct overlay_type overlay_lastbind;
extern const struct overlay_type overlay_syncprov;
extern const struct overlay_type overlay_sssvlv;    /* sort/VLV are built in: accepts slapd's lines */

/*
 * Adds a control to op's response (arena copy of the control struct; the
 * views must already live in op->arena or be static). LUMEN_ENOMEM.
 */
int overlay_add_response_control(struct backend_op *op, const struct ldap_control *control);

#endif
