/*
 * access_write.h — a write's rights decided again inside its transaction
 * (server layer).
 *
 * A write's handler decides the requester's rights on a read snapshot,
 * then hands the change to the database, which applies it later in its
 * write transaction: after any change that committed in between, and
 * after those the same group commit applied first. Where the rules read
 * entries (a filter= on the target or a parent, a group='s members:
 * acl_policy_reads_entries), such a change can turn the verdict, and a
 * change the rules no longer allow would be written. The check prepared
 * here runs in the database's transaction on the operation's own change
 * (backend_op.write_check) and makes the handler's decision again on what
 * the transaction holds before the change is made: the entry, its parents
 * and the members of a group held by the same database, all read through
 * the transaction. Its verdict is the one that counts: a refusal answers
 * insufficientAccessRights ("access changed before the write"), or
 * noSuchObject when the requester may not see the entry (the parent, for
 * an add), and nothing of the operation is written. OpenLDAP's back-mdb decides inside its write transaction alone.
 *
 * Use: an access_write on the worker's stack beside the operation's
 * access_op; access_write_<operation> sets bop->write_check when the
 * decision needs making again (access_write_needed), else leaves it NULL.
 * Both must stay where they are until the database call returns.
 *
 * Ownership: everything is borrowed (the change list, the new entry, the
 * DNs, the access_op); parents are copied for the check and freed in it.
 * Thread-safety: the check runs on the database's committing thread while
 * the worker waits in the database call, so the operation's arena and
 * access_op are the check's for that time.
 * Errors: a parent that cannot be read through the transaction (a storage
 * error) aborts the write as it came (LDAP other); a group that cannot be
 * read counts as one the requester is not a member of, as in every
 * decision (acl.h), so the write is refused.
 *
 * Caveats:
 *  - A group in another database is read as the handler reads it, from
 *    that database's latest snapshot.
 *  - Password Modify: its write right is decided again as a modify of
 *    userPassword, and an old password the handler verified must still be
 *    stored (the stored value it matched, compared byte for byte: no hash
 *    is computed on the committing thread), else unwillingToPerform
 *    ("unwilling to verify old password"), whatever the rules.
 */
#ifndef LUMEN_ACCESS_WRITE_H
#define LUMEN_ACCESS_WRITE_H

#include <stdbool.h>
#include <stddef.h>

#include "access_glue.h"
#include "acl.h"
#include "database.h"
#include "dn.h"
#include "entry.h"
#include "ldap_message.h"

struct server_database;

enum access_write_kind {
	ACCESS_WRITE_ADD, ACCESS_WRITE_DELETE, ACCESS_WRITE_MODIFY, ACCESS_WRITE_RENAME,
	ACCESS_WRITE_PASSWORD,
};

struct access_write {
	struct database_write_hook hook;    /* backend_op.write_check points here */
	enum access_write_kind kind;
	struct access_op *a;
	const struct server_database *db;
	const struct ldap_change *changes;  /* modify, password */
	size_t n_changes;
	const struct attribute_type *password_type;  /* password */
	struct ber_view verified_password;  /* password: stored value; ptr NULL: none */
	const struct entry *new_entry;      /* add: as the handler built it; NULL: none */
	struct ber_view new_parent_ndn;     /* rename */
	const struct dn_rdn *new_rdn;       /* rename; NULL when it did not parse */
	const struct dn_rdn *old_rdn_deleted;  /* rename with deleteOldRDN; else NULL */
	/* While the check runs: a's rules with group= read through the txn. */
	struct acl_policy policy;
	struct acl_group_lookup groups;
	struct database_txn *txn;
	const struct database_txn_ops *txn_ops;
};

/* Must a write decided under a be decided again in its transaction (a
 * checks access, and its rules read entries)? */
bool access_write_needed(const struct access_op *a);

/* The checks of each write (on db, the database the handler decided for). */
void access_write_modify(struct access_write *w, struct access_op *a,
			 const struct server_database *db, const struct ldap_change *changes,
			 size_t n_changes, struct backend_op *bop);
void access_write_delete(struct access_write *w, struct access_op *a,
			 const struct server_database *db, struct backend_op *bop);
void access_write_add(struct access_write *w, struct access_op *a,
		      const struct server_database *db, const struct entry *new_entry,
		      struct backend_op *bop);
/* Password Modify's replace of password_type (change); verified: the
 * stored value the old password matched (ptr NULL: no old password given). */
void access_write_password(struct access_write *w, struct access_op *a,
			   const struct server_database *db, const struct ldap_change *change,
			   const struct attribute_type *password_type, struct ber_view verified,
			   struct backend_op *bop);
void access_write_rename(struct access_write *w, struct access_op *a,
			 const struct server_database *db, struct ber_view new_parent_ndn,
			 const struct dn_rdn *new_rdn, const struct dn_rdn *old_rdn_deleted,
			 struct backend_op *bop);

#endif
