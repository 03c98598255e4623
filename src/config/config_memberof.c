/*
 * config_memberof.c — `overlay memberof` directives into settings
 * (config_memberof.h).
 */
#include "config_memberof.h"
#include "config_overlay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ldap_result_codes.h"
#include "lumen_error.h"

#define DN_SYNTAX_OID "1.3.6.1.4.1.1466.115.121.1.12"
#define NAME_UID_SYNTAX_OID "1.3.6.1.4.1.1466.115.121.1.34"

/* A DN-valued attribute (members may also be Name and Optional UID, as slapd). */
static int dn_attribute(const struct schema *schema, const struct config_overlay_line *line,
			bool name_uid, const struct attribute_type **out, char *err, size_t errlen)
{
	const char *name = line->words[1];
	const struct attribute_type *type = schema_attribute_type(schema, name, strlen(name));
	if (type == NULL)
		return config_overlay_fail(line, err, errlen, "unknown attribute \"%s\"", name);
	const char *oid = type->syntax != NULL ? type->syntax->oid : "";
	if (strcmp(oid, DN_SYNTAX_OID) != 0 && !(name_uid && strcmp(oid, NAME_UID_SYNTAX_OID) == 0))
		return config_overlay_fail(line, err, errlen, "not DN-valued: \"%s\"", name);
	*out = type;
	return LUMEN_OK;
}

static int group_class(const struct schema *schema, const struct config_overlay_line *line,
		       struct config_memberof *m, char *err, size_t errlen)
{
	const char *name = line->words[1];
	m->group_oc = schema_object_class(schema, name, strlen(name));
	return m->group_oc != NULL ? LUMEN_OK
				   : config_overlay_fail(line, err, errlen,
							       "unknown object class \"%s\"", name);
}

static int dangling(const struct config_overlay_line *line, struct config_memberof *m,
		    char *err, size_t errlen)
{
	static const char *const names[] = { "ignore", "drop", "error" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcasecmp(line->words[1], names[i]) == 0) {
			m->dangling = (enum memberof_dangling)i;
			return LUMEN_OK;
		}
	return config_overlay_fail(line, err, errlen, "expected ignore, drop or error, not \"%s\"",
				   line->words[1]);
}

/* A result code by name ("noSuchObject") or number. */
static int dangling_error(const struct config_overlay_line *line, struct config_memberof *m,
			  char *err, size_t errlen)
{
	const char *text = line->words[1];
	char *end = NULL;
	long code = strtol(text, &end, 10);
	if (end != text && *end == '\0' && code > 0 && code < 128 &&
	    strcmp(ldap_result_name((int)code), "unknown") != 0) {
		m->dangling_error = (int)code;
		return LUMEN_OK;
	}
	for (int c = 1; c < 128; c++)
		if (strcasecmp(ldap_result_name(c), text) == 0) {
			m->dangling_error = c;
			return LUMEN_OK;
		}
	return config_overlay_fail(line, err, errlen, "unknown result code \"%s\"", text);
}

static int boolean(const struct config_overlay_line *line, bool *out, char *err, size_t errlen)
{
	if (config_overlay_boolean(line->words[1], out))
		return LUMEN_OK;
	return config_overlay_fail(line, err, errlen, "expected TRUE or FALSE, not \"%s\"",
				   line->words[1]);
}

static int modifier(const struct config_overlay_line *line, struct config_memberof *m)
{
	char *copy = strdup(line->words[1]);
	if (copy == NULL)
		return LUMEN_ENOMEM;
	free(m->modifier_dn);
	m->modifier_dn = copy;
	return LUMEN_OK;
}

static int apply_line(const struct schema *schema, const struct config_overlay_line *line,
		      struct config_memberof *m, char *err, size_t errlen)
{
	const char *name = line->words[0];
	if (strncasecmp(name, "memberof-", 9) != 0)
		return config_overlay_unknown("memberof", line, err, errlen);
	if (line->n_words != 2)
		return config_overlay_fail(line, err, errlen, "expected one value");
	const char *what = name + 9;
	if (strcasecmp(what, "group-oc") == 0)
		return group_class(schema, line, m, err, errlen);
	if (strcasecmp(what, "member-ad") == 0)
		return dn_attribute(schema, line, true, &m->member_ad, err, errlen);
	if (strcasecmp(what, "memberof-ad") == 0)
		return dn_attribute(schema, line, false, &m->memberof_ad, err, errlen);
	if (strcasecmp(what, "dangling") == 0)
		return dangling(line, m, err, errlen);
	if (strcasecmp(what, "dangling-error") == 0)
		return dangling_error(line, m, err, errlen);
	if (strcasecmp(what, "refint") == 0)
		return boolean(line, &m->refint, err, errlen);
	if (strcasecmp(what, "dn") == 0)
		return modifier(line, m);
	return config_overlay_unknown("memberof", line, err, errlen);
}

/* The defaults; a schema without them is an error only if nothing replaces them. */
static int defaults(const struct schema *schema, const struct config_database *db,
		    struct config_memberof *m)
{
	memset(m, 0, sizeof(*m));
	m->group_oc = schema_object_class(schema, "groupOfNames", 12);
	m->member_ad = schema_attribute_type(schema, "member", 6);
	m->memberof_ad = schema_attribute_type(schema, "memberOf", 8);
	m->dangling_error = LDAP_CONSTRAINT_VIOLATION;
	if (db->rootdn != NULL && (m->modifier_dn = strdup(db->rootdn)) == NULL)
		return LUMEN_ENOMEM;
	return LUMEN_OK;
}

static const char *missing(const struct config_memberof *m)
{
	if (m->group_oc == NULL)
		return "the schema has no groupOfNames: name one with memberof-group-oc";
	if (m->member_ad == NULL)
		return "the schema has no member: name one with memberof-member-ad";
	if (m->memberof_ad == NULL)
		return "the schema has no memberOf (lumen.schema): name one with memberof-memberof-ad";
	return NULL;
}

int config_memberof_parse(const struct schema *schema, const struct config_database *db,
			  const struct config_overlay *o, struct config_memberof *out, char *err,
			  size_t errlen)
{
	int rc = defaults(schema, db, out);
	for (size_t i = 0; i < o->n_lines && rc == LUMEN_OK; i++)
		rc = apply_line(schema, &o->lines[i], out, err, errlen);
	if (rc == LUMEN_OK && missing(out) != NULL) {
		snprintf(err, errlen, "%s: overlay memberof: %s", o->origin, missing(out));
		rc = LUMEN_EMALFORMED;
	}
	if (rc == LUMEN_ENOMEM)
		snprintf(err, errlen, "%s: overlay memberof: out of memory", o->origin);
	if (rc != LUMEN_OK)
		config_memberof_free(out);
	return rc;
}

void config_memberof_free(struct config_memberof *m)
{
	free(m->modifier_dn);
	m->modifier_dn = NULL;
}

const struct config_overlay *config_database_overlay(const struct config_database *db,
						     const char *name)
{
	for (size_t i = 0; i < db->n_overlays; i++)
		if (strcasecmp(db->overlays[i].name, name) == 0)
			return &db->overlays[i];
	return NULL;
}
