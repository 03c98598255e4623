/*
 * config_memberof.h — the directives of `overlay memberof` (OpenLDAP's
 * names) parsed into plain settings (config layer), for the overlay in
 * lumend (src/server/overlay_memberof.c) and for the tools that compute
 * memberOf from the groups (lumenadd, lumenindex --memberof).
 *
 *   memberof-group-oc CLASS        groups (default groupOfNames)
 *   memberof-member-ad ATTR        DN-valued members (default member)
 *   memberof-memberof-ad ATTR      DN-valued, kept by the overlay (default memberOf)
 *   memberof-dn DN                 modifiersName of the entries it changes
 *                                  (default the database's rootdn)
 *   memberof-dangling ignore|drop|error
 *   memberof-dangling-error CODE   result code of "error" (a name such as
 *                                  noSuchObject, or a number; default
 *                                  constraintViolation)
 *   memberof-refint TRUE|FALSE     deleting or renaming a member updates
 *                                  its groups
 *
 * Ownership: the settings point into the schema (types, class) and hold
 * modifier_dn as a copy freed by config_memberof_free. Thread-safety:
 * plain functions on caller memory.
 *
 * Caveats:
 *  - Nothing checks here that the attributes are the ones the groups and
 *    the overlay use elsewhere (refint_attributes, index lines).
 */
#ifndef LUMEN_CONFIG_MEMBEROF_H
#define LUMEN_CONFIG_MEMBEROF_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "schema.h"

enum memberof_dangling {
	MEMBEROF_DANGLING_IGNORE,   /* keep members that name no entry */
	MEMBEROF_DANGLING_DROP,     /* remove them from the group */
	MEMBEROF_DANGLING_ERROR,    /* refuse the write (dangling_error) */
};

struct config_memberof {
	const struct object_class *group_oc;
	const struct attribute_type *member_ad;
	const struct attribute_type *memberof_ad;
	enum memberof_dangling dangling;
	int dangling_error;             /* enum ldap_result_code */
	bool refint;
	char *modifier_dn;              /* user form; NULL: none (no rootdn) */
};

/*
 * The settings of overlay o (an `overlay memberof` of db), defaults
 * first. Errors: LUMEN_EMALFORMED (an unknown directive, class or
 * attribute, a bad value, an attribute that is not DN-valued; err names
 * the file and line), LUMEN_ENOMEM. Nothing to free on failure.
 */
int config_memberof_parse(const struct schema *schema, const struct config_database *db,
			  const struct config_overlay *o, struct config_memberof *out, char *err,
			  size_t errlen);
void config_memberof_free(struct config_memberof *m);

/* The database's first `overlay NAME` (case-insensitive), or NULL. */
const struct config_overlay *config_database_overlay(const struct config_database *db,
						     const char *name);

#endif
