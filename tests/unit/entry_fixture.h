/*
 * entry_fixture.h — the schema the entry and filter suites share.
 *
 * Loads the shipped schema (schema/core, cosine, inetorgperson, nis; tests
 * run from the repository root). While those files are not there yet it
 * falls back to a small inline schema with the same names, so the suites do
 * not depend on the order in which modules land. Include once per suite.
 */
#ifndef LUMEN_ENTRY_FIXTURE_H
#define LUMEN_ENTRY_FIXTURE_H

#include <check.h>
#include <string.h>
#include <unistd.h>

#include "entry.h"
#include "schema.h"

static const char fixture_inline_schema[] =
	"attributetype ( 2.5.4.0 NAME 'objectClass' EQUALITY objectIdentifierMatch"
	" SYNTAX 1.3.6.1.4.1.1466.115.121.1.38 )\n"
	"attributetype ( 2.5.4.41 NAME 'name' EQUALITY caseIgnoreMatch"
	" SUBSTR caseIgnoreSubstringsMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.15{32768} )\n"
	"attributetype ( 2.5.4.3 NAME ( 'cn' 'commonName' ) SUP name )\n"
	"attributetype ( 2.5.4.4 NAME ( 'sn' 'surname' ) SUP name )\n"
	"attributetype ( 2.5.4.10 NAME ( 'o' 'organizationName' ) SUP name )\n"
	"attributetype ( 2.5.4.11 NAME ( 'ou' 'organizationalUnitName' ) SUP name )\n"
	"attributetype ( 2.5.4.35 NAME 'userPassword' EQUALITY octetStringMatch"
	" SYNTAX 1.3.6.1.4.1.1466.115.121.1.40{128} )\n"
	"attributetype ( 2.5.4.13 NAME 'description' EQUALITY caseIgnoreMatch"
	" SUBSTR caseIgnoreSubstringsMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.15{1024} )\n"
	"attributetype ( 2.5.4.20 NAME 'telephoneNumber' EQUALITY telephoneNumberMatch"
	" SUBSTR telephoneNumberSubstringsMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.50{32} )\n"
	"attributetype ( 2.5.4.49 NAME 'distinguishedName' EQUALITY distinguishedNameMatch"
	" SYNTAX 1.3.6.1.4.1.1466.115.121.1.12 )\n"
	"attributetype ( 2.5.4.34 NAME 'seeAlso' SUP distinguishedName )\n"
	"attributetype ( 0.9.2342.19200300.100.1.1 NAME ( 'uid' 'userid' ) EQUALITY caseIgnoreMatch"
	" SUBSTR caseIgnoreSubstringsMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.15{256} )\n"
	"attributetype ( 0.9.2342.19200300.100.1.3 NAME ( 'mail' 'rfc822Mailbox' )"
	" EQUALITY caseIgnoreIA5Match SUBSTR caseIgnoreIA5SubstringsMatch"
	" SYNTAX 1.3.6.1.4.1.1466.115.121.1.26{256} )\n"
	"attributetype ( 0.9.2342.19200300.100.1.25 NAME ( 'dc' 'domainComponent' )"
	" EQUALITY caseIgnoreIA5Match SUBSTR caseIgnoreIA5SubstringsMatch"
	" SYNTAX 1.3.6.1.4.1.1466.115.121.1.26 SINGLE-VALUE )\n"
	"attributetype ( 2.16.840.1.113730.3.1.241 NAME 'displayName' EQUALITY caseIgnoreMatch"
	" SUBSTR caseIgnoreSubstringsMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 SINGLE-VALUE )\n"
	"attributetype ( 1.3.6.1.1.1.1.0 NAME 'uidNumber' EQUALITY integerMatch"
	" ORDERING integerOrderingMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )\n"
	"attributetype ( 1.3.6.1.1.1.1.1 NAME 'gidNumber' EQUALITY integerMatch"
	" ORDERING integerOrderingMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )\n"
	"attributetype ( 1.3.6.1.1.1.1.3 NAME 'homeDirectory' EQUALITY caseExactIA5Match"
	" SYNTAX 1.3.6.1.4.1.1466.115.121.1.26 SINGLE-VALUE )\n"
	"attributetype ( 2.5.18.1 NAME 'createTimestamp' EQUALITY generalizedTimeMatch"
	" ORDERING generalizedTimeOrderingMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.24"
	" SINGLE-VALUE NO-USER-MODIFICATION USAGE directoryOperation )\n"
	"objectclass ( 2.5.6.0 NAME 'top' ABSTRACT MUST objectClass )\n"
	"objectclass ( 2.5.6.6 NAME 'person' SUP top STRUCTURAL MUST ( sn $ cn )"
	" MAY ( userPassword $ telephoneNumber $ seeAlso $ description ) )\n"
	"objectclass ( 2.5.6.7 NAME 'organizationalPerson' SUP person STRUCTURAL MAY ( ou ) )\n"
	"objectclass ( 2.16.840.1.113730.3.2.2 NAME 'inetOrgPerson' SUP organizationalPerson"
	" STRUCTURAL MAY ( uid $ mail $ displayName ) )\n"
	"objectclass ( 2.5.6.4 NAME 'organization' SUP top STRUCTURAL MUST o MAY description )\n"
	"objectclass ( 2.5.6.14 NAME 'device' SUP top STRUCTURAL MUST cn MAY description )\n"
	"objectclass ( 1.3.6.1.1.1.2.0 NAME 'posixAccount' SUP top AUXILIARY"
	" MUST ( cn $ uid $ uidNumber $ gidNumber $ homeDirectory ) )\n"
	"objectclass ( 1.3.6.1.4.1.1466.101.120.111 NAME 'extensibleObject' SUP top AUXILIARY )\n"
	"objectclass ( 1.3.6.1.4.1.1466.344 NAME 'dcObject' SUP top AUXILIARY MUST dc )\n";

/* Operational types the suites use, in case the shipped files lack them. */
static const char fixture_operational_schema[] =
	"attributetype ( 2.5.18.1 NAME 'createTimestamp' EQUALITY generalizedTimeMatch"
	" ORDERING generalizedTimeOrderingMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.24"
	" SINGLE-VALUE NO-USER-MODIFICATION USAGE directoryOperation )\n";

static const char *const fixture_schema_files[] = {
	"schema/core.schema", "schema/cosine.schema", "schema/inetorgperson.schema",
	"schema/nis.schema",
};

static struct schema *fixture_schema;

static void fixture_schema_setup(void)
{
	char err[512] = "";
	bool shipped = true;
	for (size_t i = 0; i < sizeof(fixture_schema_files) / sizeof(fixture_schema_files[0]); i++)
		shipped = shipped && access(fixture_schema_files[i], R_OK) == 0;
	ck_assert_int_eq(schema_create(&fixture_schema), LUMEN_OK);
	if (shipped) {
		for (size_t i = 0; i < sizeof(fixture_schema_files) / sizeof(fixture_schema_files[0]); i++)
			ck_assert_msg(schema_load_file(fixture_schema, fixture_schema_files[i], err,
						       sizeof(err)) == LUMEN_OK, "%s", err);
		int rc = schema_load_text(fixture_schema, "operational", fixture_operational_schema,
					  err, sizeof(err));
		ck_assert_msg(rc == LUMEN_OK || rc == LUMEN_EEXIST, "%s", err);
	} else {
		ck_assert_msg(schema_load_text(fixture_schema, "inline", fixture_inline_schema, err,
					       sizeof(err)) == LUMEN_OK, "%s", err);
	}
	ck_assert_msg(schema_finalize(fixture_schema, err, sizeof(err)) == LUMEN_OK, "%s", err);
}

static void fixture_schema_teardown(void)
{
	schema_free(fixture_schema);
	fixture_schema = NULL;
}

static struct ber_view fixture_view(const char *s)
{
	return (struct ber_view){ (const uint8_t *)s, strlen(s) };
}

/*
 * An entry from "attr: value" lines separated by '\n' (no LDIF escapes).
 * Fails the test on any error.
 */
static inline struct entry *fixture_entry(const char *dn, const char *lines)
{
	struct entry *e = NULL;
	ck_assert_int_eq(entry_create(fixture_schema, fixture_view(dn), (struct ber_view){ NULL, 0 },
				      &e), LUMEN_OK);
	char buf[4096];
	ck_assert_uint_lt(strlen(lines), sizeof(buf));
	strcpy(buf, lines);
	char *save = NULL;
	for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strstr(line, ": ");
		ck_assert_ptr_nonnull(colon);
		*colon = '\0';
		int rc = entry_add_text(e, line, colon + 2);
		ck_assert_msg(rc == LUMEN_OK, "%s: %s", line, lumen_strerror(rc));
	}
	return e;
}

#endif
