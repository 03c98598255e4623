/*
 * syncrepl_apply.h — what a syncrepl consumer does to its own database
 * (server layer): each entry the provider sends applied on its own, found
 * by entryUUID (a renamed or moved entry is renamed here too), with the
 * provider's entryUUID, entryCSN and timestamps kept; deletes by
 * entryUUID; the present phase's deletes (the entries in the consumer's
 * scope the provider did not name); and the cookie kept as contextCSN
 * values of the database's suffix entry, as OpenLDAP's consumer does, so
 * a restarted consumer resumes where it stopped.
 *
 * Every write goes through the database interface (the overlay chain) as
 * the database's rootdn with backend_op.from_tool and .replica set: one
 * LDAP write per change, each atomic in LMDB. A renamed entry is a modrdn
 * then a modify (two commits): a crash between them leaves the new DN
 * with the old attributes, which the next refresh repairs because the
 * cookie is saved only after a whole refresh (and, in persist mode, after
 * each change the provider's new cookie covers).
 *
 * What is kept of a provider's entry: every user attribute and every
 * operational attribute the schema stores, except those the server
 * computes or keeps itself (entryDN, hasSubordinates, numSubordinates,
 * subschemaSubentry, contextCSN). entryUUID is the Sync State control's.
 * A local user attribute the provider's entry lacks is deleted; so is a
 * local operational attribute when the consumer asks for all of them
 * (settings.all_operational: "+" in attrs, the default), as OpenLDAP's
 * consumer does: memberOf removed on the provider goes here too. Without
 * it a local operational attribute is only ever replaced. An entry of another
 * entryUUID at the DN is taken over (replaced, entryUUID included), as
 * OpenLDAP's consumer does; the present phase leaves an entry that still
 * has children in place.
 *
 * Multi-provider (settings.multiprovider): the newest entryCSN wins for
 * the whole entry, as OpenLDAP's plain syncrepl resolves it: an entry
 * whose local entryCSN is as new or newer than the provider's is left
 * alone (our own changes coming back included), so is an entry that is
 * gone here when its CSN names our serverID (we deleted it since); the
 * present phase keeps entries the provider has not seen yet
 * (syncrepl_apply_provider_state). Concurrent changes to different
 * attributes of one entry are not merged: that needs delta-syncrepl.
 *
 * Ownership: syncrepl_apply_create allocates; syncrepl_apply_free
 * releases everything (the database is borrowed). Thread-safety: one
 * consumer thread per struct.
 *
 * Errors: LUMEN_ENOTFOUND from syncrepl_apply_entry when the entry's
 * parent is missing (apply it again after the others: a moved subtree may
 * come before its new parent); LUMEN_EINVAL when the database refused a
 * change or the provider sent something unusable (why says what);
 * LUMEN_ENOMEM; the database's internal errors.
 */
#ifndef LUMEN_SYNCREPL_APPLY_H
#define LUMEN_SYNCREPL_APPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "database.h"
#include "ldap_message.h"
#include "ldap_sync.h"
#include "schema.h"
#include "sync_cookie.h"

struct syncrepl_apply;

struct syncrepl_apply_settings {
	const struct schema *schema;
	struct database *database;
	struct ber_view context_ndn;   /* the database's suffix: holds the cookie */
	struct ber_view rootdn_ndn;    /* the writes' requester; may be empty */
	const char *searchbase;        /* user form */
	enum ldap_scope scope;
	const char *filter;            /* RFC 4515 text; the present phase's scope */
	bool multiprovider;            /* the database also takes client writes */
	unsigned server_id;            /* this server's serverID (multiprovider) */
	bool all_operational;          /* attrs has "+": the provider sends them all */
};

/* LUMEN_EINVAL (why: a searchbase or filter that does not parse, a
 * searchbase outside the suffix), LUMEN_ENOMEM. */
int syncrepl_apply_create(const struct syncrepl_apply_settings *settings,
			  struct syncrepl_apply **out, char *why, size_t whylen);
void syncrepl_apply_free(struct syncrepl_apply *a);

/* A refresh begins: forget the entries named so far. */
void syncrepl_apply_begin_refresh(struct syncrepl_apply *a);

/*
 * One SearchResultEntry with its Sync State: add/modify stores dn and
 * attributes under uuid (an entry of that entryUUID elsewhere is moved);
 * present only notes uuid; delete removes the entry of that entryUUID
 * (none: nothing to do). *changed says whether the database changed.
 */
int syncrepl_apply_entry(struct syncrepl_apply *a, enum ldap_sync_state state,
			 const uint8_t uuid[LDAP_SYNC_UUID_SIZE], struct ber_view dn,
			 const struct ldap_attribute *attributes, size_t n, bool *changed,
			 char *why, size_t whylen);
/* A syncIdSet member: deleted (refreshDeletes) or present. */
int syncrepl_apply_id(struct syncrepl_apply *a, const uint8_t uuid[LDAP_SYNC_UUID_SIZE],
		      bool deleted, char *why, size_t whylen);
/*
 * The present phase ended: delete every entry in scope that no message
 * named since syncrepl_apply_begin_refresh (deepest first). *deleted
 * counts them.
 */
int syncrepl_apply_delete_nonpresent(struct syncrepl_apply *a, size_t *deleted, char *why,
				     size_t whylen);

/*
 * multiprovider: the provider's state (its cookie's CSNs) for the next
 * syncrepl_apply_delete_nonpresent, which then keeps the entries changed
 * after what the provider has seen of their serverID (not replicated
 * there yet). NULL forgets it. Cannot fail.
 */
void syncrepl_apply_provider_state(struct syncrepl_apply *a, const struct sync_cookie *c);

/*
 * The stored cookie's CSNs (the suffix entry's contextCSN values) into
 * out (rid and sid left absent); none stored (or no suffix entry yet):
 * out is empty. Values that are not CSNs are skipped.
 */
int syncrepl_apply_load_cookie(struct syncrepl_apply *a, struct sync_cookie *out);
/* Stores c's CSNs as the suffix entry's contextCSN (nothing when the
 * suffix entry does not exist yet: LUMEN_ENOTFOUND). */
int syncrepl_apply_save_cookie(struct syncrepl_apply *a, const struct sync_cookie *c,
			       char *why, size_t whylen);


#endif
