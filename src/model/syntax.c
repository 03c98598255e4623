/*
 * syntax.c — the table of built-in LDAP syntaxes (RFC 4517, RFC 4523 for
 * certificates, RFC 4530 UUID, RFC 2307 NIS, OpenLDAP's CSN and authz) and their value
 * validators. Contract: include/schema.h.
 *
 * Validators are strict where the RFC grammar is short and clients get it
 * right (Integer, Boolean, Generalized Time, OID, Printable/IA5/Numeric
 * String), and shape checks where a full parser lives elsewhere or buys
 * nothing (DN: dn.c parses; certificates: one DER SEQUENCE spanning the
 * value; schema descriptions: "( ... )").
 */
#include <string.h>
#include <strings.h>

#include "arena.h"
#include "ldap_filter_text.h"
#include "lumen_error.h"
#include "matching_rules.h"
#include "schema.h"
#include "unicode.h"

#define VALID(cond) ((cond) ? LUMEN_OK : LUMEN_EMALFORMED)

static bool is_digit(uint8_t c) { return c >= '0' && c <= '9'; }
static bool is_alpha(uint8_t c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }

static bool is_printable_char(uint8_t c)
{
	return is_alpha(c) || is_digit(c) || (c != 0 && strchr("'()+,-./:?= ", c) != NULL);
}

static int validate_any(const uint8_t *v, size_t len)
{
	(void)v;
	(void)len;
	return LUMEN_OK;
}

static int validate_utf8_nonempty(const uint8_t *v, size_t len)
{
	return len == 0 ? LUMEN_EMALFORMED : utf8_validate(v, len);
}

static int validate_ia5(const uint8_t *v, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (v[i] >= 0x80)
			return LUMEN_EMALFORMED;
	return LUMEN_OK;
}

static int validate_printable(const uint8_t *v, size_t len)
{
	if (len == 0)
		return LUMEN_EMALFORMED;
	for (size_t i = 0; i < len; i++)
		if (!is_printable_char(v[i]))
			return LUMEN_EMALFORMED;
	return LUMEN_OK;
}

static int validate_country(const uint8_t *v, size_t len)
{
	return VALID(len == 2 && is_printable_char(v[0]) && is_printable_char(v[1]));
}

static int validate_numeric_string(const uint8_t *v, size_t len)
{
	if (len == 0)
		return LUMEN_EMALFORMED;
	for (size_t i = 0; i < len; i++)
		if (!is_digit(v[i]) && v[i] != ' ')
			return LUMEN_EMALFORMED;
	return LUMEN_OK;
}

/* Postal Address: lines separated by '$'; '\' only in the escapes \24 and \5C. */
static int validate_postal_address(const uint8_t *v, size_t len)
{
	if (len == 0 || utf8_validate(v, len) != LUMEN_OK)
		return LUMEN_EMALFORMED;
	for (size_t i = 0; i < len; i++) {
		if (v[i] != '\\')
			continue;
		if (i + 2 >= len)
			return LUMEN_EMALFORMED;
		bool dollar = v[i + 1] == '2' && v[i + 2] == '4';
		bool backslash = v[i + 1] == '5' && (v[i + 2] | 0x20) == 'c';
		if (!dollar && !backslash)
			return LUMEN_EMALFORMED;
		i += 2;
	}
	return LUMEN_OK;
}

/*
 * DN shape: valid UTF-8; every RDN component has a type before '='; every
 * escape is "\" + special char or two hex digits. The empty DN is valid.
 */
static int validate_dn(const uint8_t *v, size_t len)
{
	bool seen_equals = false;
	size_t component_start = 0;

	if (utf8_validate(v, len) != LUMEN_OK)
		return LUMEN_EMALFORMED;
	for (size_t i = 0; i < len; i++) {
		if (v[i] == '\\') {
			if (i + 1 >= len)
				return LUMEN_EMALFORMED;
			i++;
			continue;
		}
		if (v[i] == '=' && !seen_equals) {
			if (i == component_start)
				return LUMEN_EMALFORMED;
			seen_equals = true;
		} else if (v[i] == ',' || v[i] == '+' || v[i] == ';') {
			if (!seen_equals)
				return LUMEN_EMALFORMED;
			seen_equals = false;
			component_start = i + 1;
		}
	}
	return VALID(len == 0 || seen_equals);
}

static int validate_bit_string(const uint8_t *v, size_t len)
{
	if (len < 3 || v[0] != '\'' || v[len - 2] != '\'' || v[len - 1] != 'B')
		return LUMEN_EMALFORMED;
	for (size_t i = 1; i + 2 < len; i++)
		if (v[i] != '0' && v[i] != '1')
			return LUMEN_EMALFORMED;
	return LUMEN_OK;
}

/* Name and Optional UID: a DN, optionally "#" and a bit string. */
static int validate_name_and_uid(const uint8_t *v, size_t len)
{
	for (size_t i = len; i-- > 0;) {
		if (v[i] != '#')
			continue;
		if (i + 1 < len && v[i + 1] == '\'')
			return validate_dn(v, i) == LUMEN_OK ? validate_bit_string(v + i + 1, len - i - 1)
							     : LUMEN_EMALFORMED;
		break;
	}
	return validate_dn(v, len);
}

/* If v starts with prefix (any case), *rest and rest_len are what follows. */
static bool authz_prefix(const uint8_t *v, size_t len, const char *prefix,
			 const uint8_t **rest, size_t *rest_len)
{
	size_t n = strlen(prefix);
	if (len < n || strncasecmp((const char *)v, prefix, n) != 0)
		return false;
	*rest = v + n;
	*rest_len = len - n;
	return true;
}

/* The part of an authz URL before its next '?' (*more: one was there). */
static size_t url_part(const uint8_t **v, size_t *len, bool *more)
{
	const uint8_t *q = memchr(*v, '?', *len);
	size_t n = q != NULL ? (size_t)(q - *v) : *len;
	*more = q != NULL;
	*v += q != NULL ? n + 1 : n;
	*len -= q != NULL ? n + 1 : n;
	return n;
}

/* An ldap: URL after "ldap://" as slapd stores it: no host, no
 * attributes, no extensions, a known scope, a filter that parses. */
static int validate_authz_url(const uint8_t *v, size_t len)
{
	static const char *const scopes[] = { "", "base", "one", "onelevel", "sub", "subtree",
					      "children", "subord", "subordinate" };
	bool more;
	if (len == 0 || v[0] != '/')
		return LUMEN_EMALFORMED;
	v++, len--;
	url_part(&v, &len, &more);
	if (more && url_part(&v, &len, &more) > 0)
		return LUMEN_EMALFORMED;
	const uint8_t *scope = v;
	size_t scope_len = more ? url_part(&v, &len, &more) : 0;
	bool known = false;
	for (size_t i = 0; i < sizeof(scopes) / sizeof(scopes[0]); i++)
		known |= strlen(scopes[i]) == scope_len &&
			 strncasecmp(scopes[i], (const char *)scope, scope_len) == 0;
	const uint8_t *filter = v;
	size_t filter_len = more ? url_part(&v, &len, &more) : 0;
	if (!known || (more && len > 0))
		return LUMEN_EMALFORMED;
	if (filter_len == 0)
		return LUMEN_OK;
	struct arena arena;
	struct ldap_decode_limits limits;
	struct ldap_filter *parsed;
	size_t at;
	arena_init(&arena, 64u * 1024u);
	ldap_decode_limits_default(&limits);
	int rc = ldap_filter_text_parse((const char *)filter, filter_len, &arena, &limits,
					&parsed, &at);
	arena_free(&arena);
	return rc == LUMEN_OK ? LUMEN_OK : LUMEN_EMALFORMED;
}

/*
 * OpenLDAP's authz syntax (authzTo/authzFrom): the forms slapd accepts in
 * a value — dn[.exact|.subtree|.children|.onelevel]:DN, dn.regex:RE,
 * u[.mech[/realm]]:user, group[/class[/attr]]:DN, *, ldap:/// URLs.
 */
static int validate_authz(const uint8_t *v, size_t len)
{
	static const char *const dn_forms[] = { "dn:", "dn.exact:", "dn.subtree:",
						"dn.children:", "dn.onelevel:" };
	const uint8_t *rest;
	size_t n;
	if (utf8_validate(v, len) != LUMEN_OK)
		return LUMEN_EMALFORMED;
	if (len == 0 || (len == 1 && v[0] == '*'))   /* slapd takes an empty value */
		return LUMEN_OK;
	for (size_t i = 0; i < sizeof(dn_forms) / sizeof(dn_forms[0]); i++)
		if (authz_prefix(v, len, dn_forms[i], &rest, &n))
			return n == 1 && rest[0] == '*' ? LUMEN_OK : validate_dn(rest, n);
	if (authz_prefix(v, len, "dn.regex:", &rest, &n))
		return LUMEN_OK;
	if (authz_prefix(v, len, "ldap://", &rest, &n))
		return validate_authz_url(rest, n);
	if (authz_prefix(v, len, "group", &rest, &n) && n > 0 && (rest[0] == ':' || rest[0] == '/')) {
		const uint8_t *colon = memchr(rest, ':', n);
		return colon != NULL ? validate_dn(colon + 1, n - (size_t)(colon + 1 - rest))
				     : LUMEN_EMALFORMED;
	}
	return VALID(len >= 2 && (v[0] | 0x20) == 'u' && (v[1] == ':' || v[1] == '.') &&
		     memchr(v, ':', len) != NULL);
}

/* numericoid or descr (RFC 4512 §1.4 oid). */
static int validate_oid(const uint8_t *v, size_t len)
{
	return VALID(oid_valid(v, len));
}

/* RFC 4517 §3.3.16: no leading zeros, no "-0". */
static int validate_integer(const uint8_t *v, size_t len)
{
	size_t i = len > 0 && v[0] == '-' ? 1 : 0;
	if (i == len || (v[i] == '0' && (len - i > 1 || i == 1)))
		return LUMEN_EMALFORMED;
	for (; i < len; i++)
		if (!is_digit(v[i]))
			return LUMEN_EMALFORMED;
	return LUMEN_OK;
}

static int validate_boolean(const uint8_t *v, size_t len)
{
	return VALID((len == 4 && memcmp(v, "TRUE", 4) == 0) ||
		     (len == 5 && memcmp(v, "FALSE", 5) == 0));
}

static int validate_generalized_time(const uint8_t *v, size_t len)
{
	return VALID(generalized_time_valid(v, len));
}

static bool two_digits_at_most(const uint8_t *v, unsigned max)
{
	return is_digit(v[0]) && is_digit(v[1]) &&
	       (unsigned)((v[0] - '0') * 10 + (v[1] - '0')) <= max;
}

/* RFC 4517 §3.3.34 UTCTime: YYMMDDHHMM[SS](Z|(+|-)HHMM). */
static int validate_utc_time(const uint8_t *v, size_t len)
{
	static const unsigned max[6] = { 99, 12, 31, 23, 59, 59 };
	size_t fields;

	if (len == 11 || len == 15)
		fields = 5;
	else if (len == 13 || len == 17)
		fields = 6;
	else
		return LUMEN_EMALFORMED;
	for (size_t i = 0; i < fields; i++)
		if (!two_digits_at_most(v + 2 * i, max[i]))
			return LUMEN_EMALFORMED;
	if (v[2] == '0' && v[3] == '0')     /* month 00 */
		return LUMEN_EMALFORMED;
	if (v[4] == '0' && v[5] == '0')     /* day 00 */
		return LUMEN_EMALFORMED;
	const uint8_t *zone = v + 2 * fields;
	if (zone[0] == 'Z')
		return VALID(zone + 1 == v + len);
	return VALID((zone[0] == '+' || zone[0] == '-') && zone + 5 == v + len &&
		     two_digits_at_most(zone + 1, 23) && two_digits_at_most(zone + 3, 59));
}

/* DER shape: a single SEQUENCE whose definite length spans the whole value. */
static int validate_der_sequence(const uint8_t *v, size_t len)
{
	if (len < 2 || v[0] != 0x30)
		return LUMEN_EMALFORMED;
	size_t header = 2, content;
	if (v[1] < 0x80) {
		content = v[1];
	} else {
		size_t octets = v[1] & 0x7Fu;
		if (octets == 0 || octets > 4 || len < 2 + octets || v[2] == 0)
			return LUMEN_EMALFORMED;
		content = 0;
		for (size_t i = 0; i < octets; i++)
			content = content << 8 | v[2 + i];
		if (content < 0x80)
			return LUMEN_EMALFORMED;    /* DER wants the short form */
		header += octets;
	}
	return VALID(content == len - header);
}

/* The RFC 4512 descriptions (attributeTypes and the like): "( ... )". */
static int validate_description(const uint8_t *v, size_t len)
{
	size_t start = 0, end = len;
	if (utf8_validate(v, len) != LUMEN_OK)
		return LUMEN_EMALFORMED;
	while (start < end && v[start] == ' ')
		start++;
	while (end > start && v[end - 1] == ' ')
		end--;
	return VALID(end - start >= 2 && v[start] == '(' && v[end - 1] == ')');
}

/* Substring assertion text: non-empty UTF-8 (the '*' split is filter's job). */
static int validate_substring_assertion(const uint8_t *v, size_t len)
{
	return validate_utf8_nonempty(v, len);
}

static int validate_uuid(const uint8_t *v, size_t len)
{
	if (len != 36)
		return LUMEN_EMALFORMED;
	for (size_t i = 0; i < len; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;
		bool hex = is_digit(v[i]) || ((v[i] | 0x20) >= 'a' && (v[i] | 0x20) <= 'f');
		if (dash ? v[i] != '-' : !hex)
			return LUMEN_EMALFORMED;
	}
	return LUMEN_OK;
}

static int validate_csn(const uint8_t *v, size_t len)
{
	size_t hashes = 0;
	if (len < 16 || len > 64 || !generalized_time_valid(v, 22 < len ? 22 : len))
		return LUMEN_EMALFORMED;
	for (size_t i = 0; i < len; i++)
		hashes += v[i] == '#';
	return VALID(hashes == 3);
}

#define RFC4517(n) "1.3.6.1.4.1.1466.115.121.1." #n

static const struct syntax syntaxes[] = {
	{ RFC4517(3), "Attribute Type Description", false, validate_description },
	{ RFC4517(4), "Audio", true, validate_any },
	{ RFC4517(5), "Binary", true, validate_any },
	{ RFC4517(6), "Bit String", false, validate_bit_string },
	{ RFC4517(7), "Boolean", false, validate_boolean },
	{ RFC4517(8), "Certificate", true, validate_der_sequence },
	{ RFC4517(9), "Certificate List", true, validate_der_sequence },
	{ RFC4517(10), "Certificate Pair", true, validate_der_sequence },
	{ RFC4517(11), "Country String", false, validate_country },
	{ RFC4517(12), "DN", false, validate_dn },
	{ RFC4517(14), "Delivery Method", false, validate_printable },
	{ RFC4517(15), "Directory String", false, validate_utf8_nonempty },
	{ RFC4517(16), "DIT Content Rule Description", false, validate_description },
	{ RFC4517(17), "DIT Structure Rule Description", false, validate_description },
	{ RFC4517(21), "Enhanced Guide", false, validate_utf8_nonempty },
	{ RFC4517(22), "Facsimile Telephone Number", false, validate_utf8_nonempty },
	{ RFC4517(23), "Fax", true, validate_any },
	{ RFC4517(24), "Generalized Time", false, validate_generalized_time },
	{ RFC4517(25), "Guide", false, validate_utf8_nonempty },
	{ RFC4517(26), "IA5 String", false, validate_ia5 },
	{ RFC4517(27), "INTEGER", false, validate_integer },
	/* Any bytes, as OpenLDAP stores them: directories carry PNGs here. */
	{ RFC4517(28), "JPEG", true, validate_any },
	{ RFC4517(30), "Matching Rule Description", false, validate_description },
	{ RFC4517(31), "Matching Rule Use Description", false, validate_description },
	{ RFC4517(34), "Name And Optional UID", false, validate_name_and_uid },
	{ RFC4517(35), "Name Form Description", false, validate_description },
	{ RFC4517(36), "Numeric String", false, validate_numeric_string },
	{ RFC4517(37), "Object Class Description", false, validate_description },
	{ RFC4517(38), "OID", false, validate_oid },
	{ RFC4517(39), "Other Mailbox", false, validate_utf8_nonempty },
	{ RFC4517(40), "Octet String", true, validate_any },
	{ RFC4517(41), "Postal Address", false, validate_postal_address },
	{ RFC4517(45), "Subtree Specification", false, validate_utf8_nonempty },
	{ RFC4517(44), "Printable String", false, validate_printable },
	{ RFC4517(49), "Supported Algorithm", true, validate_any },
	{ RFC4517(50), "Telephone Number", false, validate_printable },
	{ RFC4517(51), "Teletex Terminal Identifier", false, validate_utf8_nonempty },
	{ RFC4517(52), "Telex Number", false, validate_utf8_nonempty },
	{ RFC4517(53), "UTC Time", false, validate_utc_time },
	{ RFC4517(54), "LDAP Syntax Description", false, validate_description },
	{ RFC4517(58), "Substring Assertion", false, validate_substring_assertion },
	{ "1.3.6.1.1.16.1", "UUID", false, validate_uuid },
	{ "1.3.6.1.1.1.0.0", "RFC2307 NIS Netgroup Triple", false, validate_ia5 },
	{ "1.3.6.1.1.1.0.1", "RFC2307 Boot Parameter", false, validate_ia5 },
	{ "1.3.6.1.4.1.4203.666.11.2.1", "CSN", false, validate_csn },
	/* authzTo/authzFrom rules; the server reads them (an unknown form
	 * never matches, as in slapd). */
	{ "1.3.6.1.4.1.4203.666.2.7", "OpenLDAP authz", false, validate_authz },
};

#define N_SYNTAXES (sizeof(syntaxes) / sizeof(syntaxes[0]))

const struct syntax *syntax_find(const char *oid, size_t len)
{
	for (size_t i = 0; i < N_SYNTAXES; i++)
		if (strlen(syntaxes[i].oid) == len && strncasecmp(syntaxes[i].oid, oid, len) == 0)
			return &syntaxes[i];
	return NULL;
}

const struct syntax *syntax_at(size_t i)
{
	return i < N_SYNTAXES ? &syntaxes[i] : NULL;
}
