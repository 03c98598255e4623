/*
 * subschema.c — builds the cn=Subschema entry from the loaded schema.
 * Contract: subschema.h.
 */
#include "subschema.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <stdbool.h>

#include "lumen_error.h"

/* Large enough for any built-in syntax or rule description. */
#define DESCRIPTION_MAX 512

static int add_text_value(struct entry *e, const char *description, const char *text)
{
	int rc = entry_add_text(e, description, text);
	/* Two schema elements with the same canonical text cannot exist, but a
	 * rule listed twice in the built-in table would be harmless: skip it. */
	return rc == LUMEN_EEXIST ? LUMEN_OK : rc;
}

/* The loaded definitions, attribute types then object classes, as written. */
static int add_definitions(const struct schema *s, struct entry *e)
{
	size_t n_types = schema_attribute_type_count(s);
	size_t n_classes = schema_object_class_count(s);
	int rc = LUMEN_OK;
	for (size_t i = 0; rc == LUMEN_OK && i < n_types; i++)
		rc = add_text_value(e, "attributeTypes", schema_attribute_type_at(s, i)->definition);
	for (size_t i = 0; rc == LUMEN_OK && i < n_classes; i++)
		rc = add_text_value(e, "objectClasses", schema_object_class_at(s, i)->definition);
	return rc;
}

/* add_text_value of a description formatted for a built-in syntax or rule;
 * LUMEN_ELIMIT if it does not fit DESCRIPTION_MAX. */
static int add_formatted(struct entry *e, const char *description, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int add_formatted(struct entry *e, const char *description, const char *fmt, ...)
{
	char text[DESCRIPTION_MAX];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof text)
		return LUMEN_ELIMIT;
	return add_text_value(e, description, text);
}

static int add_syntaxes(struct entry *e)
{
	const struct syntax *syn;
	int rc = LUMEN_OK;
	for (size_t i = 0; rc == LUMEN_OK && (syn = syntax_at(i)) != NULL; i++)
		rc = add_formatted(e, "ldapSyntaxes", "( %s DESC '%s'%s )", syn->oid,
				   syn->description,
				   syn->binary ? " X-BINARY-TRANSFER-REQUIRED 'TRUE'" : "");
	return rc;
}

static int add_matching_rules(struct entry *e)
{
	const struct matching_rule *mr;
	int rc = LUMEN_OK;
	for (size_t i = 0; rc == LUMEN_OK && (mr = matching_rule_at(i)) != NULL; i++)
		rc = add_formatted(e, "matchingRules", "( %s NAME '%s' SYNTAX %s )", mr->oid,
				   mr->name, mr->syntax_oid);
	return rc;
}

static bool rule_used_by(const struct matching_rule *mr, const struct attribute_type *at)
{
	return at->equality == mr || at->ordering == mr || at->substr == mr;
}

/* "( OID NAME 'rule' APPLIES ( a $ b ) )" for one rule; "" if no type uses it. */
static int format_rule_use(const struct schema *s, const struct matching_rule *mr,
			   char **buf, size_t *cap)
{
	size_t n_types = schema_attribute_type_count(s), len = 0, uses = 0;
	for (int pass = 0; pass < 2; pass++) {
		len = (size_t)snprintf(*buf, *cap, "( %s NAME '%s' APPLIES (", mr->oid, mr->name);
		uses = 0;
		for (size_t i = 0; i < n_types; i++) {
			const struct attribute_type *at = schema_attribute_type_at(s, i);
			if (!rule_used_by(mr, at))
				continue;
			len += (size_t)snprintf(len < *cap ? *buf + len : NULL,
						len < *cap ? *cap - len : 0, "%s %s",
						uses++ ? " $" : "", attribute_type_name(at));
		}
		len += (size_t)snprintf(len < *cap ? *buf + len : NULL,
					len < *cap ? *cap - len : 0, " ) )");
		if (len < *cap)
			break;
		char *bigger = realloc(*buf, len + 1);
		if (bigger == NULL)
			return LUMEN_ENOMEM;
		*buf = bigger;
		*cap = len + 1;
	}
	if (uses == 0)
		(*buf)[0] = '\0';
	return LUMEN_OK;
}

/* matchingRuleUse: which attribute types each rule applies to (RFC 4512 §4.1.4). */
static int add_matching_rule_uses(const struct schema *s, struct entry *e)
{
	size_t cap = 1024;
	char *buf = malloc(cap);
	const struct matching_rule *mr;
	int rc = buf == NULL ? LUMEN_ENOMEM : LUMEN_OK;

	for (size_t i = 0; rc == LUMEN_OK && (mr = matching_rule_at(i)) != NULL; i++) {
		rc = format_rule_use(s, mr, &buf, &cap);
		if (rc == LUMEN_OK && buf[0] != '\0')
			rc = add_text_value(e, "matchingRuleUse", buf);
	}
	free(buf);
	return rc;
}

int subschema_build(const struct schema *s, struct entry **out)
{
	static const char *const fixed[][2] = {
		{ "objectClass", "top" },
		{ "objectClass", "subentry" },
		{ "objectClass", "subschema" },
		{ "objectClass", "extensibleObject" },
		{ "cn", "Subschema" },
		{ "structuralObjectClass", "subentry" },
	};
	struct ber_view dn = { (const uint8_t *)SUBSCHEMA_DN, strlen(SUBSCHEMA_DN) };
	struct ber_view no_ndn = { NULL, 0 };
	struct entry *e = NULL;
	int rc;

	*out = NULL;
	if (schema_attribute_type(s, "attributeTypes", 14) == NULL)
		return LUMEN_ENOTFOUND;
	rc = entry_create(s, dn, no_ndn, &e);
	if (rc != LUMEN_OK)
		return rc;
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
		/* subentry is not in every schema: objectClass values it does not
		 * know are still published as written. */
		rc = add_text_value(e, fixed[i][0], fixed[i][1]);
		if (rc != LUMEN_OK)
			goto fail;
	}
	/* The schema is loaded at start-up and never changes afterwards. */
	char stamp[32];
	struct tm tm;
	time_t now = time(NULL);
	strftime(stamp, sizeof stamp, "%Y%m%d%H%M%SZ", gmtime_r(&now, &tm));
	if ((rc = add_text_value(e, "createTimestamp", stamp)) != LUMEN_OK ||
	    (rc = add_text_value(e, "modifyTimestamp", stamp)) != LUMEN_OK)
		goto fail;
	if ((rc = add_definitions(s, e)) != LUMEN_OK ||
	    (rc = add_syntaxes(e)) != LUMEN_OK ||
	    (rc = add_matching_rules(e)) != LUMEN_OK ||
	    (rc = add_matching_rule_uses(s, e)) != LUMEN_OK)
		goto fail;
	*out = e;
	return LUMEN_OK;
fail:
	entry_free(e);
	return rc;
}
