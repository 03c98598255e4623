/*
 * matching.c — the table of built-in matching rules (RFC 4517, RFC 4530 and
 * OpenLDAP's CSN and caseExactIA5Substrings rules that replication tools and
 * RFC 2307 schema expect) and its lookups. Contract: include/schema.h.
 *
 * Adding a rule is adding a row: OID, name, assertion syntax, usage, the
 * normalizer, the comparator, and for substring rules the piece normalizer.
 */
#include <string.h>
#include <strings.h>

#include "lumen_error.h"
#include "matching.h"
#include "matching_rules.h"
#include "schema.h"

#define SYNTAX(n) "1.3.6.1.4.1.1466.115.121.1." #n

#define EQUALITY(oid, name, syntax, norm) \
	{ oid, name, syntax, MATCHING_EQUALITY, norm, matching_compare_bytes, NULL }
#define ORDERING(oid, name, syntax, norm, cmp) \
	{ oid, name, syntax, MATCHING_ORDERING, norm, cmp, NULL }
#define SUBSTRINGS(oid, name, norm, piece) \
	{ oid, name, SYNTAX(58), MATCHING_SUBSTRINGS, norm, matching_compare_bytes, piece }

static const struct matching_rule rules[] = {
	EQUALITY("2.5.13.0", "objectIdentifierMatch", SYNTAX(38), norm_object_identifier),
	EQUALITY("2.5.13.1", "distinguishedNameMatch", SYNTAX(12), norm_distinguished_name),
	EQUALITY("2.5.13.2", "caseIgnoreMatch", SYNTAX(15), norm_case_ignore),
	ORDERING("2.5.13.3", "caseIgnoreOrderingMatch", SYNTAX(15), norm_case_ignore,
		 matching_compare_bytes),
	SUBSTRINGS("2.5.13.4", "caseIgnoreSubstringsMatch", norm_case_ignore,
		   norm_case_ignore_piece),
	EQUALITY("2.5.13.5", "caseExactMatch", SYNTAX(15), norm_case_exact),
	ORDERING("2.5.13.6", "caseExactOrderingMatch", SYNTAX(15), norm_case_exact,
		 matching_compare_bytes),
	SUBSTRINGS("2.5.13.7", "caseExactSubstringsMatch", norm_case_exact,
		   norm_case_exact_piece),
	EQUALITY("2.5.13.8", "numericStringMatch", SYNTAX(36), norm_numeric_string),
	ORDERING("2.5.13.9", "numericStringOrderingMatch", SYNTAX(36), norm_numeric_string,
		 matching_compare_bytes),
	SUBSTRINGS("2.5.13.10", "numericStringSubstringsMatch", norm_numeric_string,
		   norm_numeric_string),
	EQUALITY("2.5.13.11", "caseIgnoreListMatch", SYNTAX(41), norm_case_ignore_list),
	SUBSTRINGS("2.5.13.12", "caseIgnoreListSubstringsMatch", norm_case_ignore_list,
		   norm_case_ignore_piece),
	EQUALITY("2.5.13.13", "booleanMatch", SYNTAX(7), norm_boolean),
	EQUALITY("2.5.13.14", "integerMatch", SYNTAX(27), norm_integer),
	ORDERING("2.5.13.15", "integerOrderingMatch", SYNTAX(27), norm_integer, compare_integer),
	EQUALITY("2.5.13.16", "bitStringMatch", SYNTAX(6), norm_bit_string),
	EQUALITY("2.5.13.17", "octetStringMatch", SYNTAX(40), norm_octet_string),
	ORDERING("2.5.13.18", "octetStringOrderingMatch", SYNTAX(40), norm_octet_string,
		 matching_compare_bytes),
	EQUALITY("2.5.13.20", "telephoneNumberMatch", SYNTAX(50), norm_telephone),
	SUBSTRINGS("2.5.13.21", "telephoneNumberSubstringsMatch", norm_telephone,
		   norm_telephone),
	EQUALITY("2.5.13.23", "uniqueMemberMatch", SYNTAX(34), norm_unique_member),
	EQUALITY("2.5.13.27", "generalizedTimeMatch", SYNTAX(24), norm_generalized_time),
	ORDERING("2.5.13.28", "generalizedTimeOrderingMatch", SYNTAX(24), norm_generalized_time,
		 compare_generalized_time),
	EQUALITY("2.5.13.29", "integerFirstComponentMatch", SYNTAX(27),
		 norm_integer_first_component),
	EQUALITY("2.5.13.30", "objectIdentifierFirstComponentMatch", SYNTAX(38),
		 norm_oid_first_component),
	EQUALITY("1.3.6.1.4.1.1466.109.114.1", "caseExactIA5Match", SYNTAX(26), norm_ia5_exact),
	EQUALITY("1.3.6.1.4.1.1466.109.114.2", "caseIgnoreIA5Match", SYNTAX(26), norm_ia5_ignore),
	SUBSTRINGS("1.3.6.1.4.1.1466.109.114.3", "caseIgnoreIA5SubstringsMatch",
		   norm_ia5_ignore, norm_ia5_ignore_piece),
	SUBSTRINGS("1.3.6.1.4.1.4203.1.2.1", "caseExactIA5SubstringsMatch", norm_ia5_exact,
		   norm_ia5_exact_piece),
	EQUALITY("1.3.6.1.1.16.2", "uuidMatch", "1.3.6.1.1.16.1", norm_uuid),
	ORDERING("1.3.6.1.1.16.3", "uuidOrderingMatch", "1.3.6.1.1.16.1", norm_uuid,
		 matching_compare_bytes),
	EQUALITY("1.3.6.1.4.1.4203.666.4.1", "authzMatch", "1.3.6.1.4.1.4203.666.2.7",
		 norm_octet_string),
	EQUALITY("1.3.6.1.4.1.4203.666.11.2.2", "CSNMatch", "1.3.6.1.4.1.4203.666.11.2.1",
		 norm_csn),
	ORDERING("1.3.6.1.4.1.4203.666.11.2.3", "CSNOrderingMatch", "1.3.6.1.4.1.4203.666.11.2.1",
		 norm_csn, matching_compare_bytes),
};

#define N_RULES (sizeof(rules) / sizeof(rules[0]))

static bool equals_nocase(const char *known, const char *s, size_t len)
{
	/* Length first: s may hold a NUL, which would end strncasecmp early. */
	return strlen(known) == len && strncasecmp(known, s, len) == 0;
}

const struct matching_rule *matching_rule_find(const char *name_or_oid, size_t len)
{
	for (size_t i = 0; i < N_RULES; i++)
		if (equals_nocase(rules[i].oid, name_or_oid, len) ||
		    equals_nocase(rules[i].name, name_or_oid, len))
			return &rules[i];
	return NULL;
}

const struct matching_rule *matching_rule_at(size_t i)
{
	return i < N_RULES ? &rules[i] : NULL;
}
