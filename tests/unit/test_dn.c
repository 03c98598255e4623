/*
 * test_dn.c — DN parsing, normalization and printing (src/model/dn*.c)
 * against the shipped schema: RFC 4514 §4 examples, escapes, '#' BER
 * values, OID/alias equivalence, multi-valued RDNs, every malformed input
 * with its error, and the ndn helpers the backend relies on.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dn.h"
#include "lumen_error.h"

static struct schema *schema;
static struct arena arena;

/* Test-only types: exact octet matching, an integer, and RFC 4514's example OID. */
static const char test_schema[] =
	"attributetype ( 1.3.6.1.4.1.99999.1.1 NAME 'testOctets'\n"
	"	EQUALITY octetStringMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.40 )\n"
	"attributetype ( 1.3.6.1.4.1.99999.1.2 NAME 'testInteger'\n"
	"	EQUALITY integerMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 )\n"
	"attributetype ( 1.3.6.1.4.1.1466.0 NAME 'rfc4514Example'\n"
	"	EQUALITY octetStringMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.40 )\n";

static void schema_setup(void)
{
	static const char *const files[] = { "schema/core.schema", "schema/cosine.schema",
					     "schema/inetorgperson.schema" };
	char err[256] = "";

	ck_assert_int_eq(schema_create(&schema), LUMEN_OK);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		ck_assert_msg(schema_load_file(schema, files[i], err, sizeof(err)) == LUMEN_OK,
			      "%s", err);
	ck_assert_msg(schema_load_text(schema, "test_dn", test_schema, err, sizeof(err)) ==
		      LUMEN_OK, "%s", err);
	ck_assert_msg(schema_finalize(schema, err, sizeof(err)) == LUMEN_OK, "%s", err);
}

static void schema_teardown(void)
{
	schema_free(schema);
}

static void setup(void)
{
	arena_init(&arena, 0);
}

static void teardown(void)
{
	arena_free(&arena);
}

static struct ber_view view(const char *s)
{
	return (struct ber_view){ (const uint8_t *)s, strlen(s) };
}

static bool view_eq(struct ber_view v, const char *s)
{
	return v.len == strlen(s) && (v.len == 0 || memcmp(v.ptr, s, v.len) == 0);
}

#define ck_assert_view(v, s) \
	ck_assert_msg(view_eq((v), (s)), "expected '%s', got '%.*s'", (s), (int)(v).len, \
		      (const char *)(v).ptr)

static int normalize(const char *text, struct ber_view *ndn)
{
	return dn_normalize(schema, text, strlen(text), &arena, ndn);
}

/* ---------------------------------------------------------- normalization */

static const struct {
	const char *dn;
	const char *ndn;
} normalized[] = {
	{ "", "" },
	{ "   ", "" },
	{ "dc=com", "dc=com" },
	{ "CN=Foo Bar,DC=Example", "cn=foo bar,dc=example" },
	{ "cn=foo  bar,dc=example", "cn=foo bar,dc=example" },
	{ "2.5.4.3=foo", "cn=foo" },
	{ "commonName=Foo", "cn=foo" },
	{ "domainComponent=COM", "dc=com" },
	{ "0.9.2342.19200300.100.1.25=com", "dc=com" },
	{ " cn = foo , dc = com ", "cn=foo,dc=com" },
	{ "cn=foo;dc=com", "cn=foo,dc=com" },
	{ "cn=a+sn=b", "cn=a+sn=b" },
	{ "sn=b+cn=a", "cn=a+sn=b" },
	{ "sn=b + cn=a , dc=x", "cn=a+sn=b,dc=x" },
	{ "cn=b+cn=a", "cn=a+cn=b" },
	/* Escapes: every special character comes out as \XX. */
	{ "cn=a\\,b", "cn=a\\2Cb" },
	{ "cn=a\\2cb", "cn=a\\2Cb" },
	{ "cn=a\\+b", "cn=a\\2Bb" },
	{ "cn=\\\"q\\\"", "cn=\\22q\\22" },
	{ "cn=a\\\\b", "cn=a\\5Cb" },
	{ "cn=\\<x\\>", "cn=\\3Cx\\3E" },
	{ "cn=a\\;b", "cn=a\\3Bb" },
	{ "cn=\\#x", "cn=\\23x" },
	{ "cn=x#y", "cn=x#y" },
	{ "cn=a\\=b", "cn=a=b" },
	{ "cn=a=b", "cn=a=b" },
	{ "testOctets=\\ a\\ ", "testoctets=\\20a\\20" },
	{ "testOctets= a b ", "testoctets=a b" },
	{ "testOctets=Mixed Case", "testoctets=Mixed Case" },
	{ "testOctets=\\00", "testoctets=\\00" },
	{ "cn=caf\\C3\\A9", "cn=caf\xc3\xa9" },
	{ "cn=CAF\\C3\\89", "cn=caf\xc3\xa9" },
	{ "cn=\xc3\x89t\xc3\xa9", "cn=\xc3\xa9t\xc3\xa9" },
	/* '#' BER values. */
	{ "cn=#04024869", "cn=hi" },
	{ "cn=#0C024869", "cn=hi" },
	{ "cn=#13024869 , dc=x", "cn=hi,dc=x" },
	{ "testOctets=#04022C2B", "testoctets=\\2C\\2B" },
	/* RFC 2253 quoted values. */
	{ "cn=\"a, b+c\",dc=x", "cn=a\\2C b\\2Bc,dc=x" },
	/* Integers in canonical form (RFC 4517 §3.3.16). */
	{ "testInteger=42", "testinteger=42" },
	/* RFC 4514 §4 examples. */
	{ "UID=jsmith,DC=example,DC=net", "uid=jsmith,dc=example,dc=net" },
	{ "OU=Sales+CN=J.  Smith,DC=example,DC=net", "cn=j. smith+ou=sales,dc=example,dc=net" },
	{ "CN=James \\\"Jim\\\" Smith\\, III,DC=example,DC=net",
	  "cn=james \\22jim\\22 smith\\2C iii,dc=example,dc=net" },
	{ "1.3.6.1.4.1.1466.0=#04024869", "rfc4514example=Hi" },
	{ "CN=Lu\\C4\\8Di\\C4\\87", "cn=lu\xc4\x8di\xc4\x87" },
};

START_TEST(normalizes)
{
	struct ber_view ndn, again;
	const char *dn = normalized[_i].dn;

	int rc = normalize(dn, &ndn);
	ck_assert_msg(rc == LUMEN_OK, "'%s': %d", dn, rc);
	ck_assert_msg(view_eq(ndn, normalized[_i].ndn), "'%s' -> '%.*s', expected '%s'", dn,
		      (int)ndn.len, (const char *)ndn.ptr, normalized[_i].ndn);
	/* An ndn is its own normal form. */
	ck_assert_int_eq(dn_normalize(schema, (const char *)ndn.ptr, ndn.len, &arena, &again),
			 LUMEN_OK);
	ck_assert_view(again, normalized[_i].ndn);
}
END_TEST

START_TEST(equivalent_spellings)
{
	static const char *const groups[][4] = {
		{ "CN=Foo Bar,DC=Example", "cn=foo  bar,dc=example", "commonName=FOO BAR;dc=EXAMPLE",
		  "2.5.4.3=foo bar , 0.9.2342.19200300.100.1.25=example" },
		{ "cn=a+sn=b,dc=x", "sn=b+cn=a,dc=x", "SN=B+CN=A,DC=X", "surname=b+2.5.4.3=a,dc=x" },
		{ "CN=Before\\0dAfter,DC=example,DC=net", "cn=before\\0DAfter,dc=example,dc=net",
		  "cn=BEFORE\\0DAFTER,dc=EXAMPLE,dc=NET", "cn=#0C0C4265666F72650D4166746572,dc=example,dc=net" },
		{ "cn=Hi", "cn=#04024869", "cn=#0C026849", "cn=\\48\\49" },
	};
	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
		struct ber_view first;
		ck_assert_int_eq(normalize(groups[g][0], &first), LUMEN_OK);
		for (size_t i = 1; i < 4; i++) {
			struct ber_view other;
			ck_assert_msg(normalize(groups[g][i], &other) == LUMEN_OK, "%s", groups[g][i]);
			ck_assert_msg(other.len == first.len &&
				      memcmp(other.ptr, first.ptr, first.len) == 0,
				      "'%s' and '%s' differ", groups[g][0], groups[g][i]);
		}
	}
	/* Different values stay different. */
	struct ber_view a, b;
	ck_assert_int_eq(normalize("cn=a,dc=x", &a), LUMEN_OK);
	ck_assert_int_eq(normalize("cn=a,dc=y", &b), LUMEN_OK);
	ck_assert(!(a.len == b.len && memcmp(a.ptr, b.ptr, a.len) == 0));
	ck_assert_int_eq(normalize("testOctets=A", &a), LUMEN_OK);
	ck_assert_int_eq(normalize("testOctets=a", &b), LUMEN_OK);
	ck_assert(!(a.len == b.len && memcmp(a.ptr, b.ptr, a.len) == 0));
}
END_TEST

/* ---------------------------------------------------------------- errors */

static const struct {
	const char *dn;
	int rc;
} malformed[] = {
	{ "cn=a\\", LUMEN_EMALFORMED },            /* unterminated escape */
	{ "cn=a\\4", LUMEN_EMALFORMED },           /* lone hex digit */
	{ "cn=a\\4g", LUMEN_EMALFORMED },          /* bad hex */
	{ "cn=a\\zz", LUMEN_EMALFORMED },          /* not escapable */
	{ "cn=\\C3", LUMEN_EMALFORMED },           /* truncated UTF-8 */
	{ "cn=\\FF", LUMEN_EMALFORMED },           /* invalid UTF-8 */
	{ "cn=\\C0\\80", LUMEN_EMALFORMED },       /* overlong UTF-8 */
	{ "cn=\xff", LUMEN_EMALFORMED },           /* raw invalid UTF-8 */
	{ "cn=\\ED\\A0\\80", LUMEN_EMALFORMED },   /* surrogate */
	{ "cn", LUMEN_EMALFORMED },                /* missing '=' */
	{ "cn a", LUMEN_EMALFORMED },
	{ "cn=a,dc", LUMEN_EMALFORMED },
	{ "=foo", LUMEN_EMALFORMED },              /* empty attribute type */
	{ " = foo", LUMEN_EMALFORMED },
	{ "cn=a,", LUMEN_EMALFORMED },             /* trailing comma */
	{ "cn=a, ", LUMEN_EMALFORMED },
	{ "cn=a+", LUMEN_EMALFORMED },
	{ ",cn=a", LUMEN_EMALFORMED },
	{ "cn=a,,dc=b", LUMEN_EMALFORMED },
	{ "c_n=x", LUMEN_EMALFORMED },
	{ "-cn=x", LUMEN_EMALFORMED },
	{ "1..2=x", LUMEN_EMALFORMED },
	{ "2.=x", LUMEN_EMALFORMED },
	{ "cn=a\"b", LUMEN_EMALFORMED },           /* raw quote */
	{ "cn=a<b", LUMEN_EMALFORMED },
	{ "cn=a>b", LUMEN_EMALFORMED },
	{ "cn=\"open", LUMEN_EMALFORMED },         /* unterminated quoted value */
	{ "cn=\"a\" b", LUMEN_EMALFORMED },
	{ "cn=#", LUMEN_EMALFORMED },              /* empty hex */
	{ "cn=#0", LUMEN_EMALFORMED },             /* odd hex */
	{ "cn=#04024", LUMEN_EMALFORMED },
	{ "cn=#0402", LUMEN_EMALFORMED },          /* BER shorter than its length */
	{ "cn=#0401414141", LUMEN_EMALFORMED },    /* bytes after the element */
	{ "cn=#020101", LUMEN_EMALFORMED },        /* INTEGER is not a string */
	{ "cn=#3000", LUMEN_EMALFORMED },          /* constructed */
	{ "cn=#0C02FFFE", LUMEN_EMALFORMED },      /* UTF8String not UTF-8 */
	{ "cn=#04024869x", LUMEN_EMALFORMED },     /* junk after hex */
	{ "cn=#04024869 x", LUMEN_EMALFORMED },
	{ "cn=#0x02", LUMEN_EMALFORMED },
	{ "fooBarBaz=x", LUMEN_ENOTFOUND },        /* unknown type */
	{ "1.2.3.4.5.6.7=x", LUMEN_ENOTFOUND },
	{ "cn=a,bogus=b", LUMEN_ENOTFOUND },
	{ "testInteger=abc", LUMEN_ESCHEMA },      /* rule cannot normalize */
	{ "testInteger=0042", LUMEN_ESCHEMA },     /* leading zeros are not an INTEGER */
	{ "cn=a+cn=A", LUMEN_EMALFORMED },         /* repeated AVA */
	{ "cn=x+sn=y+CN=X", LUMEN_EMALFORMED },
};

START_TEST(rejects)
{
	struct ber_view ndn;
	int rc = normalize(malformed[_i].dn, &ndn);

	ck_assert_msg(rc == malformed[_i].rc, "'%s': %d, expected %d", malformed[_i].dn, rc,
		      malformed[_i].rc);
	ck_assert_ptr_null(ndn.ptr);
}
END_TEST

START_TEST(rejects_embedded_nul)
{
	struct ber_view ndn;
	ck_assert_int_eq(dn_normalize(schema, "cn=a\0b", 6, &arena, &ndn), LUMEN_EMALFORMED);
	/* The length is the caller's: text after it is not read. */
	ck_assert_int_eq(dn_normalize(schema, "cn=a,dc=b", 4, &arena, &ndn), LUMEN_OK);
	ck_assert_view(ndn, "cn=a");
}
END_TEST

START_TEST(limits)
{
	size_t size = (DN_MAX_AVAS + 2) * 8;
	char *text = malloc(size);
	struct ber_view ndn;
	ck_assert_ptr_nonnull(text);

	/* DN_MAX_RDNS RDNs are fine, one more is LUMEN_ELIMIT. */
	size_t n = 0;
	for (int i = 0; i < DN_MAX_RDNS; i++)
		n += (size_t)snprintf(text + n, size - n, "%sdc=a", i > 0 ? "," : "");
	ck_assert_int_eq(normalize(text, &ndn), LUMEN_OK);
	ck_assert_uint_eq(dn_rdn_count(ndn), DN_MAX_RDNS);
	snprintf(text + n, size - n, ",dc=a");
	ck_assert_int_eq(normalize(text, &ndn), LUMEN_ELIMIT);

	/* Escaped commas do not count as RDNs. */
	n = (size_t)snprintf(text, size, "cn=");
	for (int i = 0; i < DN_MAX_RDNS + 10; i++)
		n += (size_t)snprintf(text + n, size - n, "\\,");
	ck_assert_int_eq(normalize(text, &ndn), LUMEN_OK);
	ck_assert_uint_eq(dn_rdn_count(ndn), 1);

	/* AVAs: DN_MAX_AVAS distinct ones in one RDN, then one more. */
	n = 0;
	for (int i = 0; i < DN_MAX_AVAS; i++)
		n += (size_t)snprintf(text + n, size - n, "%scn=%d", i > 0 ? "+" : "", i);
	ck_assert_int_eq(normalize(text, &ndn), LUMEN_OK);
	snprintf(text + n, size - n, "+cn=x");
	ck_assert_int_eq(normalize(text, &ndn), LUMEN_ELIMIT);
	free(text);
}
END_TEST

/* ------------------------------------------------------- parsed form */

START_TEST(parsed_form_keeps_spelling)
{
	struct dn dn;
	const char *text = "OU=Sales + CN=J.  Smith , DC=example,2.5.4.3=x\\2Cy";

	ck_assert_int_eq(dn_parse(schema, text, strlen(text), &arena, &dn), LUMEN_OK);
	ck_assert_uint_eq(dn.n_rdns, 3);
	ck_assert_uint_eq(dn.rdns[0].n_avas, 2);
	ck_assert_view(dn.rdns[0].avas[0].attr, "OU");
	ck_assert_view(dn.rdns[0].avas[0].value, "Sales");
	ck_assert_view(dn.rdns[0].avas[0].normalized, "sales");
	ck_assert_ptr_eq(dn.rdns[0].avas[0].type, schema_attribute_type(schema, "ou", 2));
	ck_assert_view(dn.rdns[0].avas[1].attr, "CN");
	ck_assert_view(dn.rdns[0].avas[1].value, "J.  Smith");
	ck_assert_view(dn.rdns[0].avas[1].normalized, "j. smith");
	ck_assert_uint_eq(dn.rdns[1].n_avas, 1);
	ck_assert_view(dn.rdns[1].avas[0].value, "example");
	ck_assert_view(dn.rdns[2].avas[0].attr, "2.5.4.3");
	ck_assert_view(dn.rdns[2].avas[0].value, "x,y");
	ck_assert_ptr_eq(dn.rdns[2].avas[0].type, schema_attribute_type(schema, "cn", 2));

	struct ber_view out;
	ck_assert_int_eq(dn_format(&dn, &arena, &out), LUMEN_OK);
	ck_assert_view(out, "OU=Sales+CN=J.  Smith,DC=example,2.5.4.3=x\\,y");

	ck_assert_int_eq(dn_parse(schema, "", 0, &arena, &dn), LUMEN_OK);
	ck_assert_uint_eq(dn.n_rdns, 0);
	ck_assert_int_eq(dn_format(&dn, &arena, &out), LUMEN_OK);
	ck_assert_uint_eq(out.len, 0);
}
END_TEST

static const struct {
	const char *dn;
	const char *formatted;
} formatted[] = {
	{ "CN=James \\\"Jim\\\" Smith\\, III,DC=example,DC=net",
	  "CN=James \\\"Jim\\\" Smith\\, III,DC=example,DC=net" },
	{ "cn=\\ lead and trail\\ ", "cn=\\ lead and trail\\ " },
	{ "cn=\\#hash", "cn=\\#hash" },
	{ "cn=a\\2Bb\\3Bc\\3Cd\\3Ee\\5Cf", "cn=a\\+b\\;c\\<d\\>e\\\\f" },
	{ "testOctets=\\00x", "testOctets=\\00x" },
	{ "testOctets=#0402FFFE", "testOctets=#0402FFFE" },
	{ "cn=#04024869", "cn=Hi" },
	{ "cn=\"a, b\"", "cn=a\\, b" },
	{ "cn=caf\\C3\\A9", "cn=caf\xc3\xa9" },
	{ "cn = a ; dc = b", "cn=a,dc=b" },
};

/* dn_format writes the user's spelling; it parses back to the same ndn. */
START_TEST(formats)
{
	struct dn dn, again;
	struct ber_view out, ndn1, ndn2;
	const char *text = formatted[_i].dn;

	ck_assert_int_eq(dn_parse(schema, text, strlen(text), &arena, &dn), LUMEN_OK);
	ck_assert_int_eq(dn_format(&dn, &arena, &out), LUMEN_OK);
	ck_assert_view(out, formatted[_i].formatted);
	ck_assert_int_eq(dn_parse(schema, (const char *)out.ptr, out.len, &arena, &again),
			 LUMEN_OK);
	ck_assert_int_eq(dn_normalize_parsed(&dn, &arena, &ndn1), LUMEN_OK);
	ck_assert_int_eq(dn_normalize_parsed(&again, &arena, &ndn2), LUMEN_OK);
	ck_assert_uint_eq(ndn1.len, ndn2.len);
	ck_assert_mem_eq(ndn1.ptr, ndn2.ptr, ndn1.len);
}
END_TEST

START_TEST(long_value_hex_format)
{
	/* A 300-byte binary value needs a two-octet BER length when printed. */
	uint8_t value[300];
	for (size_t i = 0; i < sizeof(value); i++)
		value[i] = (uint8_t)(0x80 + i % 64);
	char text[16 + 2 * 304];
	size_t n = (size_t)snprintf(text, sizeof(text), "testOctets=#0482012C");
	for (size_t i = 0; i < sizeof(value); i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%02X", value[i]);

	struct dn dn;
	struct ber_view out;
	ck_assert_int_eq(dn_parse(schema, text, n, &arena, &dn), LUMEN_OK);
	ck_assert_uint_eq(dn.rdns[0].avas[0].value.len, sizeof(value));
	ck_assert_mem_eq(dn.rdns[0].avas[0].value.ptr, value, sizeof(value));
	ck_assert_int_eq(dn_format(&dn, &arena, &out), LUMEN_OK);
	ck_assert_uint_eq(out.len, n);
	ck_assert_mem_eq(out.ptr, text, n);
}
END_TEST

/* --------------------------------------------------------- ndn helpers */

START_TEST(split_first)
{
	static const struct { const char *ndn, *rdn, *parent; } cases[] = {
		{ "cn=a,dc=b,dc=c", "cn=a", "dc=b,dc=c" },
		{ "dc=c", "dc=c", "" },
		{ "", "", "" },
		{ "cn=a\\2Cb,dc=c", "cn=a\\2Cb", "dc=c" },
		{ "cn=a\\,b,dc=c", "cn=a\\,b", "dc=c" },
		{ "cn=a\\\\,dc=c", "cn=a\\\\", "dc=c" },
		{ "cn=a+sn=b,dc=c", "cn=a+sn=b", "dc=c" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ber_view rdn, parent;
		dn_split_first(view(cases[i].ndn), &rdn, &parent);
		ck_assert_view(rdn, cases[i].rdn);
		ck_assert_view(parent, cases[i].parent);
	}
}
END_TEST

START_TEST(is_within)
{
	static const struct { const char *ndn, *suffix; bool within; } cases[] = {
		{ "cn=x,dc=com", "dc=com", true },
		{ "dc=com", "dc=com", true },
		{ "cn=y,cn=x,dc=com", "cn=x,dc=com", true },
		{ "cn=x,dc=com", "", true },
		{ "", "", true },
		{ "cn=xdc=com", "dc=com", false },
		{ "cn=x,adc=com", "dc=com", false },
		{ "cn=x\\,dc=com", "dc=com", false },
		{ "cn=x\\\\,dc=com", "dc=com", true },
		{ "cn=x\\\\\\,dc=com", "dc=com", false },
		{ "cn=x\\2Cdc=com", "dc=com", false },
		{ ",dc=com", "dc=com", false },
		{ "", "dc=com", false },
		{ "dc=com", "cn=x,dc=com", false },
		{ "dc=org", "dc=com", false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(dn_is_within(view(cases[i].ndn), view(cases[i].suffix)) ==
			      cases[i].within, "'%s' within '%s'", cases[i].ndn, cases[i].suffix);

	/* Through normalization: an escaped comma in the user's DN stays a value. */
	struct ber_view ndn, suffix;
	ck_assert_int_eq(normalize("cn=x\\,dc=com", &ndn), LUMEN_OK);
	ck_assert_int_eq(normalize("DC=COM", &suffix), LUMEN_OK);
	ck_assert(!dn_is_within(ndn, suffix));
	ck_assert_int_eq(normalize("cn=x , DC=Com", &ndn), LUMEN_OK);
	ck_assert(dn_is_within(ndn, suffix));
}
END_TEST

START_TEST(rdn_count)
{
	static const struct { const char *ndn; size_t count; } cases[] = {
		{ "", 0 }, { "dc=com", 1 }, { "cn=a,dc=com", 2 }, { "cn=a\\2Cb,dc=c", 2 },
		{ "cn=a\\,b,dc=c", 2 }, { "cn=a+sn=b,dc=c", 2 }, { "cn=a\\\\,dc=c", 2 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_uint_eq(dn_rdn_count(view(cases[i].ndn)), cases[i].count);
}
END_TEST

/* A bounded arena makes each allocation fail in turn: clean ENOMEM, no leak. */
START_TEST(out_of_memory)
{
	/* A DN no other test normalizes: a memo hit would skip the parse. */
	const char *text = "OU=Sales+CN=J.  Smith,DC=example,DC=oom";
	int rc = LUMEN_ENOMEM;

	for (size_t max = 1; rc == LUMEN_ENOMEM && max < 1u << 16; max *= 2) {
		struct arena small;
		struct ber_view ndn;
		arena_init(&small, max);
		rc = dn_normalize(schema, text, strlen(text), &small, &ndn);
		ck_assert(rc == LUMEN_OK || rc == LUMEN_ENOMEM);
		arena_free(&small);
	}
	ck_assert_int_eq(rc, LUMEN_OK);

	/* Below a remembered parent: the first RDN's parse and the joined ndn
	 * each run out in turn (every size, byte by byte); each DN is new, so
	 * the whole-DN memo misses. */
	struct ber_view ndn;
	const char *primer = "cn=primer,OU=Oom-Parent,DC=example";
	ck_assert_int_eq(dn_normalize(schema, primer, strlen(primer), &arena, &ndn), LUMEN_OK);
	rc = LUMEN_ENOMEM;
	size_t max = 1;
	for (; rc == LUMEN_ENOMEM && max < 1u << 16; max++) {
		struct arena small;
		char dn[64];
		snprintf(dn, sizeof(dn), "CN=Oom%zu,OU=Oom-Parent,DC=example", max);
		arena_init(&small, max);
		rc = dn_normalize(schema, dn, strlen(dn), &small, &ndn);
		ck_assert(rc == LUMEN_OK || rc == LUMEN_ENOMEM);
		if (rc == LUMEN_OK) {
			char want[64];
			snprintf(want, sizeof(want), "cn=oom%zu,ou=oom-parent,dc=example", max);
			ck_assert(ber_view_eq_str(ndn, want));
		}
		arena_free(&small);
	}
	ck_assert_int_eq(rc, LUMEN_OK);
	ck_assert_uint_gt(max, 2);      /* some sizes ran out */
}
END_TEST

/* A schema where x-memo matches as `rule`. */
static struct schema *schema_with_rule(const char *rule)
{
	struct schema *s;
	char err[256] = "", text[256];
	snprintf(text, sizeof(text),
		 "attributetype ( 1.3.6.1.4.1.99999.1.9 NAME 'x-memo' EQUALITY %s\n"
		 "	SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 )\n", rule);
	ck_assert_int_eq(schema_create(&s), LUMEN_OK);
	ck_assert_msg(schema_load_file(s, "schema/core.schema", err, sizeof(err)) == LUMEN_OK,
		      "%s", err);
	ck_assert_msg(schema_load_text(s, "memo", text, err, sizeof(err)) == LUMEN_OK, "%s", err);
	ck_assert_msg(schema_finalize(s, err, sizeof(err)) == LUMEN_OK, "%s", err);
	return s;
}

/*
 * dn_normalize keeps the last DNs each thread normalized: a DN normalized
 * again gives the same ndn, in the caller's arena (a caller may write to
 * its copy), under the schema it is normalized against, and failures are
 * never kept.
 */
START_TEST(normalize_memo)
{
	struct ber_view ndn;
	const char *base = "OU=People, DC=Example,DC=com";
	for (int round = 0; round < 3; round++) {
		ck_assert_int_eq(normalize(base, &ndn), LUMEN_OK);
		ck_assert_view(ndn, "ou=people,dc=example,dc=com");
		((uint8_t *)ndn.ptr)[0] = 'X';
	}
	struct schema *ignore = schema_with_rule("caseIgnoreMatch");
	struct schema *exact = schema_with_rule("caseExactMatch");
	const char *text = "x-memo=MiXeD,cn=A";
	for (int round = 0; round < 3; round++) {
		ck_assert_int_eq(dn_normalize(ignore, text, strlen(text), &arena, &ndn), LUMEN_OK);
		ck_assert_view(ndn, "x-memo=mixed,cn=a");
		ck_assert_int_eq(dn_normalize(exact, text, strlen(text), &arena, &ndn), LUMEN_OK);
		ck_assert_view(ndn, "x-memo=MiXeD,cn=a");
	}
	schema_free(ignore);
	schema_free(exact);
	/* More DNs than the memo holds, each normalized twice in turn. */
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 20; i++) {
			char dn[64], want[64];
			snprintf(dn, sizeof(dn), "CN=User%d,DC=Example", i);
			snprintf(want, sizeof(want), "cn=user%d,dc=example", i);
			ck_assert_int_eq(normalize(dn, &ndn), LUMEN_OK);
			ck_assert_view(ndn, want);
		}
	}
	for (int round = 0; round < 2; round++) {
		ck_assert_int_eq(normalize("cn=a,=b", &ndn), LUMEN_EMALFORMED);
		ck_assert_int_eq(normalize("nosuchtype=a", &ndn), LUMEN_ENOTFOUND);
		ck_assert_int_eq(normalize("", &ndn), LUMEN_OK);
		ck_assert_uint_eq(ndn.len, 0);
	}
	char long_dn[400];
	snprintf(long_dn, sizeof(long_dn), "CN=%0200d,DC=Example", 7);
	for (int round = 0; round < 2; round++) {
		ck_assert_int_eq(normalize(long_dn, &ndn), LUMEN_OK);
		ck_assert_uint_eq(ndn.len, strlen(long_dn));
	}
}
END_TEST

/* dn_normalize without any memo: the whole parse. */
static int normalize_whole(const struct schema *s, const char *text, struct ber_view *ndn)
{
	struct dn dn;
	int rc = dn_parse(s, text, strlen(text), &arena, &dn);
	return rc == LUMEN_OK ? dn_normalize_parsed(&dn, &arena, ndn) : rc;
}

static void expect_as_whole(const struct schema *s, const char *text)
{
	struct ber_view got = { NULL, 0 }, want = { NULL, 0 };
	int got_rc = dn_normalize(s, text, strlen(text), &arena, &got);
	int want_rc = normalize_whole(s, text, &want);
	ck_assert_msg(got_rc == want_rc, "%.80s: %d, whole %d", text, got_rc, want_rc);
	ck_assert_msg(got_rc != LUMEN_OK || ber_view_eq(got, want), "%.80s: %.80s, whole %.80s",
		      text, (const char *)got.ptr, (const char *)want.ptr);
}

/*
 * A DN below a parent normalized lately is parsed from its first RDN only
 * and takes the parent's form from the parent memo: the answer (ndn or
 * error) is the whole parse's, for every first RDN under every parent,
 * including first RDNs the shortcut must leave to the whole parse.
 */
START_TEST(normalize_below_known_parent)
{
	static const char *const firsts[] = {
		"CN=Foo", "uid=User7", "cn=a b", "cn= lead", "cn=#04024869", "2.5.4.3=X",
		"cn=\303\234ber", "cn=", "=x", "nosuchtype=x", "cn=x ", "cn=a\\,b", "cn=\"q,r\"",
		"cn=a+sn=b", "sn=B+cn=A", "cn=a;ou=b", "cn", "cn=a\\", "cn=x=y", "cn=a\\2Cb",
		" ", "   ", " cn=lead",
	};
	static const char *const parents[] = {
		"ou=People,DC=Example,DC=com", "dc=com", "ou=a\\,b,dc=x", "ou=x, dc=y",
		"OU=People ,dc=x", "nosuchtype=q,dc=x", "ou=p+cn=Q,dc=x", "cn=\"a,b\",dc=x",
	};
	char text[256];
	/* each twice: the first may fill the parent memo, the second uses it */
	for (int round = 0; round < 2; round++)
		for (size_t p = 0; p < sizeof(parents) / sizeof(parents[0]); p++)
			for (size_t f = 0; f < sizeof(firsts) / sizeof(firsts[0]); f++) {
				snprintf(text, sizeof(text), "%s,%s", firsts[f], parents[p]);
				expect_as_whole(schema, text);
				snprintf(text, sizeof(text), "%s ,%s", firsts[f], parents[p]);
				expect_as_whole(schema, text);
				snprintf(text, sizeof(text), "%s, %s", firsts[f], parents[p]);
				expect_as_whole(schema, text);
			}
	/* The limits count the whole DN: a first RDN of many RDNs (';') or
	 * AVAs ('+') over a remembered parent of 20 RDNs must go to the whole
	 * parse (the shortcut would count the first RDN's alone). */
	static char many[8192];
	static const char *const joins[] = { ";", "+" };
	static const int counts[] = { 230, 240, 1000, 1010 };
	for (size_t j = 0; j < 2; j++)
		for (size_t c = 0; c < 4; c++) {
			size_t n = 0;
			for (int i = 0; i < counts[c]; i++)
				n += (size_t)snprintf(many + n, sizeof(many) - n, "%scn=%d",
						      i ? joins[j] : "", i);
			for (int i = 0; i < 20; i++)
				n += (size_t)snprintf(many + n, sizeof(many) - n, ",dc=a");
			expect_as_whole(schema, "cn=primer,dc=a,dc=a,dc=a,dc=a,dc=a,dc=a,dc=a,dc=a,"
					"dc=a,dc=a,dc=a,dc=a,dc=a,dc=a,dc=a,dc=a,dc=a,dc=a,dc=a,dc=a");
			expect_as_whole(schema, many);
		}
	/* the parent memo is the schema's: x-memo's rule differs */
	struct schema *ignore = schema_with_rule("caseIgnoreMatch");
	struct schema *exact = schema_with_rule("caseExactMatch");
	for (int round = 0; round < 2; round++) {
		snprintf(text, sizeof(text), "cn=N%d,x-memo=MiXeD,cn=A", round);
		expect_as_whole(ignore, text);
		expect_as_whole(exact, text);
	}
	schema_free(ignore);
	schema_free(exact);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("dn");
	TCase *tc = tcase_create("dn");
	tcase_add_unchecked_fixture(tc, schema_setup, schema_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, normalizes, 0, (int)(sizeof(normalized) / sizeof(normalized[0])));
	tcase_add_test(tc, equivalent_spellings);
	tcase_add_loop_test(tc, rejects, 0, (int)(sizeof(malformed) / sizeof(malformed[0])));
	tcase_add_test(tc, rejects_embedded_nul);
	tcase_add_test(tc, limits);
	tcase_add_test(tc, parsed_form_keeps_spelling);
	tcase_add_loop_test(tc, formats, 0, (int)(sizeof(formatted) / sizeof(formatted[0])));
	tcase_add_test(tc, long_value_hex_format);
	tcase_add_test(tc, split_first);
	tcase_add_test(tc, is_within);
	tcase_add_test(tc, rdn_count);
	tcase_add_test(tc, out_of_memory);
	tcase_add_test(tc, normalize_memo);
	tcase_add_test(tc, normalize_below_known_parent);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
