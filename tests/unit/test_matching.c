/* test_matching.c — the built-in matching rules' normalizers and comparators,
 * substring matching and the approximate key. */
#include <check.h>
#include <string.h>

#include "lumen_error.h"
#include "matching.h"
#include "schema.h"
#include "unicode.h"

static struct arena arena;

static void setup(void) { arena_init(&arena, 0); }
static void teardown(void) { arena_free(&arena); }

/* Normalize with a named rule; returns rc, result in *out. */
static int normalize(const char *rule_name, const char *value, struct ber_view *out)
{
	const struct matching_rule *rule = matching_rule_find(rule_name, strlen(rule_name));
	ck_assert_msg(rule != NULL, "rule %s", rule_name);
	return rule->normalize((const uint8_t *)value, strlen(value), &arena, out);
}

static const struct {
	const char *rule;
	const char *in;
	int rc;
	const char *want;       /* normalized form when rc == LUMEN_OK */
} norm_cases[] = {
	/* RFC 4518: case folding, insignificant spaces */
	{ "caseIgnoreMatch", "  Hello   World  ", LUMEN_OK, "hello world" },
	{ "caseIgnoreMatch", "\tTab\r\nNewline", LUMEN_OK, "tab newline" },
	{ "caseIgnoreMatch", "ÄÖÜ", LUMEN_OK, "äöü" },
	{ "caseIgnoreMatch", "ΣΟΦΊΑ", LUMEN_OK, "σοφία" },
	{ "caseIgnoreMatch", "МОСКВА", LUMEN_OK, "москва" },
	{ "caseIgnoreMatch", "soft\xC2\xADhyphen", LUMEN_OK, "softhyphen" },
	{ "caseIgnoreMatch", "no\xE2\x80\x8Bspace", LUMEN_OK, "nospace" },
	{ "caseIgnoreMatch", "nb\xC2\xA0sp", LUMEN_OK, "nb sp" },
	{ "caseIgnoreMatch", "   ", LUMEN_OK, "" },
	{ "caseIgnoreMatch", "bad\xC3", LUMEN_EMALFORMED, NULL },
	{ "caseIgnoreMatch", "\xC0\xAF", LUMEN_EMALFORMED, NULL },
	{ "caseExactMatch", "  Hello   World ", LUMEN_OK, "Hello World" },
	{ "caseExactMatch", "ÄÖÜ", LUMEN_OK, "ÄÖÜ" },
	{ "caseIgnoreIA5Match", " Foo@Example.COM ", LUMEN_OK, "foo@example.com" },
	{ "caseIgnoreIA5Match", "fö", LUMEN_EMALFORMED, NULL },
	{ "caseExactIA5Match", "/Home/X", LUMEN_OK, "/Home/X" },
	{ "numericStringMatch", " 123 456 ", LUMEN_OK, "123456" },
	{ "numericStringMatch", "12a", LUMEN_EMALFORMED, NULL },
	{ "telephoneNumberMatch", "+1 555-0100 ext", LUMEN_OK, "+15550100ext" },
	{ "telephoneNumberMatch", "+1-555 0100", LUMEN_OK, "+15550100" },
	{ "caseIgnoreListMatch", "1 Main St $ Springfield", LUMEN_OK, "1 main st$springfield" },
	/* integers: any length; RFC 4517 §3.3.16 forbids leading zeros and "-0",
	 * so those are rejected (the filter item is Undefined, as in slapd)
	 * instead of being canonicalized into a match */
	{ "integerMatch", "42", LUMEN_OK, "42" },
	{ "integerMatch", "0", LUMEN_OK, "0" },
	{ "integerMatch", "-7", LUMEN_OK, "-7" },
	{ "integerMatch", "007", LUMEN_EMALFORMED, NULL },
	{ "integerMatch", "01013", LUMEN_EMALFORMED, NULL },
	{ "integerMatch", "-007", LUMEN_EMALFORMED, NULL },
	{ "integerMatch", "-0", LUMEN_EMALFORMED, NULL },
	{ "integerMatch", "000", LUMEN_EMALFORMED, NULL },
	{ "integerMatch", "123456789012345678901234567890", LUMEN_OK,
	  "123456789012345678901234567890" },
	{ "integerMatch", "", LUMEN_EMALFORMED, NULL },
	{ "integerMatch", "-", LUMEN_EMALFORMED, NULL },
	{ "integerMatch", "12a", LUMEN_EMALFORMED, NULL },
	{ "integerMatch", "+5", LUMEN_EMALFORMED, NULL },
	{ "integerMatch", " 5", LUMEN_EMALFORMED, NULL },
	/* generalized time: UTC, seconds always, fraction trimmed */
	{ "generalizedTimeMatch", "20230102030405Z", LUMEN_OK, "20230102030405Z" },
	{ "generalizedTimeMatch", "202301020304Z", LUMEN_OK, "20230102030400Z" },
	{ "generalizedTimeMatch", "2023010203Z", LUMEN_OK, "20230102030000Z" },
	{ "generalizedTimeMatch", "20230102030405.500Z", LUMEN_OK, "20230102030405.5Z" },
	{ "generalizedTimeMatch", "20230102030405,000Z", LUMEN_OK, "20230102030405Z" },
	{ "generalizedTimeMatch", "2023010203.5Z", LUMEN_OK, "20230102033000Z" },
	{ "generalizedTimeMatch", "202301020304.25Z", LUMEN_OK, "20230102030415Z" },
	{ "generalizedTimeMatch", "20230102030405+0200", LUMEN_OK, "20230102010405Z" },
	{ "generalizedTimeMatch", "20230101003000+0100", LUMEN_OK, "20221231233000Z" },
	{ "generalizedTimeMatch", "20231231233000-0130", LUMEN_OK, "20240101010000Z" },
	{ "generalizedTimeMatch", "20240229120000Z", LUMEN_OK, "20240229120000Z" },
	{ "generalizedTimeMatch", "20230229120000Z", LUMEN_EMALFORMED, NULL },
	{ "generalizedTimeMatch", "20231301000000Z", LUMEN_EMALFORMED, NULL },
	{ "generalizedTimeMatch", "20230102250000Z", LUMEN_EMALFORMED, NULL },
	{ "generalizedTimeMatch", "20230102030405", LUMEN_EMALFORMED, NULL },
	{ "generalizedTimeMatch", "20230102030405.Z", LUMEN_EMALFORMED, NULL },
	{ "generalizedTimeMatch", "20230102030405+02", LUMEN_OK, "20230102010405Z" },
	{ "generalizedTimeMatch", "20230102030405+2400", LUMEN_EMALFORMED, NULL },
	{ "generalizedTimeMatch", "20230102030405Zjunk", LUMEN_EMALFORMED, NULL },
	{ "generalizedTimeMatch", "2023", LUMEN_EMALFORMED, NULL },
	/* small exact syntaxes */
	{ "booleanMatch", "TRUE", LUMEN_OK, "TRUE" },
	{ "booleanMatch", "FALSE", LUMEN_OK, "FALSE" },
	{ "booleanMatch", "true", LUMEN_EMALFORMED, NULL },
	{ "bitStringMatch", "'0101'B", LUMEN_OK, "'0101'B" },
	{ "bitStringMatch", "'0121'B", LUMEN_EMALFORMED, NULL },
	{ "bitStringMatch", "0101", LUMEN_EMALFORMED, NULL },
	{ "octetStringMatch", "AbC", LUMEN_OK, "AbC" },
	{ "objectIdentifierMatch", "2.5.4.3", LUMEN_OK, "2.5.4.3" },
	{ "objectIdentifierMatch", "commonName", LUMEN_OK, "commonname" },
	{ "objectIdentifierMatch", "2.5..3", LUMEN_EMALFORMED, NULL },
	{ "objectIdentifierMatch", "2.05.4", LUMEN_EMALFORMED, NULL },
	{ "objectIdentifierMatch", "1cn", LUMEN_EMALFORMED, NULL },
	{ "objectIdentifierFirstComponentMatch", "( 2.5.4.3 NAME 'cn' SUP name )", LUMEN_OK,
	  "2.5.4.3" },
	{ "objectIdentifierFirstComponentMatch", "2.5.4.3", LUMEN_OK, "2.5.4.3" },
	{ "integerFirstComponentMatch", "( 7 NAME 'r' )", LUMEN_OK, "7" },
	/* the rule ID is an RFC 4512 number: no leading zeros */
	{ "integerFirstComponentMatch", "( 007 NAME 'r' )", LUMEN_EMALFORMED, NULL },
	{ "uuidMatch", "597AE2F6-16A6-1027-98F4-ABCDEFABCDEF", LUMEN_OK,
	  "597ae2f6-16a6-1027-98f4-abcdefabcdef" },
	{ "uuidMatch", "597ae2f6-16a6-1027-98f4-abcdefabcde", LUMEN_EMALFORMED, NULL },
	{ "uuidMatch", "597ae2f6x16a6-1027-98f4-abcdefabcdef", LUMEN_EMALFORMED, NULL },
	{ "CSNMatch", "20230102030405.123456Z#000000#000#000000", LUMEN_OK,
	  "20230102030405.123456Z#000000#000#000000" },
	{ "CSNMatch", "20230102030405.123456Z", LUMEN_EMALFORMED, NULL },
	/* distinguished names: the light canonical form */
	{ "distinguishedNameMatch", "CN=John  Smith , O=Example", LUMEN_OK,
	  "cn=john smith,o=example" },
	{ "distinguishedNameMatch", "cn=a\\,b+sn=X,dc=COM", LUMEN_OK, "cn=a\\2Cb+sn=x,dc=com" },
	{ "distinguishedNameMatch", "cn=\\41bc", LUMEN_OK, "cn=abc" },
	{ "distinguishedNameMatch", "", LUMEN_OK, "" },
	{ "distinguishedNameMatch", "cn=a,", LUMEN_EMALFORMED, NULL },
	{ "distinguishedNameMatch", "noequals", LUMEN_EMALFORMED, NULL },
	{ "distinguishedNameMatch", "cn=a\\4", LUMEN_EMALFORMED, NULL },
	{ "distinguishedNameMatch", "cn=\xC3", LUMEN_EMALFORMED, NULL },
	{ "uniqueMemberMatch", "CN=Group, O=X#'0101'B", LUMEN_OK, "cn=group,o=x#'0101'B" },
	{ "uniqueMemberMatch", "CN=Group,O=X", LUMEN_OK, "cn=group,o=x" },
	{ "uniqueMemberMatch", "cn=a#'012'B", LUMEN_EMALFORMED, NULL },
};

START_TEST(normalizers)
{
	struct ber_view out;
	int rc = normalize(norm_cases[_i].rule, norm_cases[_i].in, &out);
	ck_assert_msg(rc == norm_cases[_i].rc, "%s(\"%s\") rc %d, want %d", norm_cases[_i].rule,
		      norm_cases[_i].in, rc, norm_cases[_i].rc);
	if (rc == LUMEN_OK)
		ck_assert_msg(out.len == strlen(norm_cases[_i].want) &&
			      memcmp(out.ptr, norm_cases[_i].want, out.len) == 0,
			      "%s(\"%s\") = \"%.*s\", want \"%s\"", norm_cases[_i].rule,
			      norm_cases[_i].in, (int)out.len, (const char *)out.ptr,
			      norm_cases[_i].want);
}
END_TEST

/* compare(normalize(a), normalize(b)) sign under an ordering rule. */
static const struct {
	const char *rule;
	const char *a, *b;
	int sign;
} order_cases[] = {
	{ "integerOrderingMatch", "2", "10", -1 },
	{ "integerOrderingMatch", "-2", "-10", 1 },
	{ "integerOrderingMatch", "-1", "0", -1 },
	{ "integerOrderingMatch", "10", "10", 0 },
	{ "integerOrderingMatch", "-10", "9", -1 },
	{ "integerOrderingMatch", "99999999999999999999", "100000000000000000000", -1 },
	{ "integerOrderingMatch", "-99999999999999999999", "-100000000000000000000", 1 },
	{ "generalizedTimeOrderingMatch", "20230102030405Z", "20230102030405.5Z", -1 },
	{ "generalizedTimeOrderingMatch", "20230102030405.10Z", "20230102030405.1Z", 0 },
	{ "generalizedTimeOrderingMatch", "20230102030405.09Z", "20230102030405.1Z", -1 },
	{ "generalizedTimeOrderingMatch", "20230102030405+0100", "20230102023000Z", -1 },
	{ "generalizedTimeOrderingMatch", "20230102040405+0100", "20230102030404Z", 1 },
	{ "caseIgnoreOrderingMatch", "apple", "BANANA", -1 },
	{ "caseExactOrderingMatch", "B", "a", -1 },
	{ "octetStringOrderingMatch", "ab", "abc", -1 },
	{ "numericStringOrderingMatch", "1 2", "12", 0 },
};

START_TEST(ordering)
{
	const char *name = order_cases[_i].rule;
	const struct matching_rule *rule = matching_rule_find(name, strlen(name));
	struct ber_view a, b;
	ck_assert(rule != NULL && rule->usage == MATCHING_ORDERING);
	ck_assert_int_eq(rule->normalize((const uint8_t *)order_cases[_i].a,
					 strlen(order_cases[_i].a), &arena, &a), LUMEN_OK);
	ck_assert_int_eq(rule->normalize((const uint8_t *)order_cases[_i].b,
					 strlen(order_cases[_i].b), &arena, &b), LUMEN_OK);
	int c = rule->compare(a, b);
	int sign = (c > 0) - (c < 0);
	ck_assert_msg(sign == order_cases[_i].sign, "%s(%s, %s) = %d", name, order_cases[_i].a,
		      order_cases[_i].b, c);
	ck_assert_int_eq((rule->compare(b, a) > 0) - (rule->compare(b, a) < 0), -sign);
}
END_TEST

/* Substring filters: value, initial, any (';'-separated), final; NULL = absent. */
static const struct {
	const char *rule;
	const char *value, *initial, *any, *final;
	bool match;
} substring_cases[] = {
	{ "caseIgnoreSubstringsMatch", "John Smith", "jo", NULL, NULL, true },
	{ "caseIgnoreSubstringsMatch", "John Smith", NULL, NULL, "SMITH", true },
	{ "caseIgnoreSubstringsMatch", "John Smith", NULL, "n s", NULL, true },
	{ "caseIgnoreSubstringsMatch", "John   Smith", NULL, "n  s", NULL, true },
	{ "caseIgnoreSubstringsMatch", "John Smith", "john ", NULL, NULL, true },
	{ "caseIgnoreSubstringsMatch", "John", "john ", NULL, NULL, false },
	{ "caseIgnoreSubstringsMatch", "John Smith", "j", "h;m", "h", true },
	{ "caseIgnoreSubstringsMatch", "John Smith", "j", "m;h", "h", false },
	{ "caseIgnoreSubstringsMatch", "aXa", "a", NULL, "a", true },
	{ "caseIgnoreSubstringsMatch", "a", "a", NULL, "a", false },  /* no overlap */
	{ "caseIgnoreSubstringsMatch", "abab", NULL, "ab;ab", NULL, true },
	{ "caseIgnoreSubstringsMatch", "aba", NULL, "ab;ab", NULL, false },
	{ "caseIgnoreSubstringsMatch", "ÄBC", "ä", NULL, NULL, true },
	{ "caseExactSubstringsMatch", "John", "jo", NULL, NULL, false },
	{ "caseExactSubstringsMatch", "John", "Jo", NULL, NULL, true },
	{ "telephoneNumberSubstringsMatch", "+1 555-0100", NULL, "5550", NULL, true },
	{ "numericStringSubstringsMatch", "123 456", "1234", NULL, NULL, true },
	{ "caseIgnoreIA5SubstringsMatch", "Foo@Example.com", NULL, NULL, "@example.COM", true },
	{ "caseExactIA5SubstringsMatch", "alice", "al", NULL, NULL, true },
};

static void piece(const struct matching_rule *rule, const char *text, struct ber_view *out)
{
	ck_assert_int_eq(rule->normalize_piece((const uint8_t *)text, strlen(text), &arena, out),
			 LUMEN_OK);
}

START_TEST(substrings)
{
	const char *name = substring_cases[_i].rule;
	const struct matching_rule *rule = matching_rule_find(name, strlen(name));
	struct ber_view value, initial, final, any[4];
	size_t n_any = 0;

	ck_assert(rule != NULL && rule->usage == MATCHING_SUBSTRINGS && rule->normalize_piece);
	ck_assert_int_eq(rule->normalize((const uint8_t *)substring_cases[_i].value,
					 strlen(substring_cases[_i].value), &arena, &value),
			 LUMEN_OK);
	if (substring_cases[_i].initial)
		piece(rule, substring_cases[_i].initial, &initial);
	if (substring_cases[_i].final)
		piece(rule, substring_cases[_i].final, &final);
	if (substring_cases[_i].any) {
		char buf[64];
		strcpy(buf, substring_cases[_i].any);
		for (char *save, *tok = strtok_r(buf, ";", &save); tok;
		     tok = strtok_r(NULL, ";", &save))
			piece(rule, tok, &any[n_any++]);
	}
	bool got = matching_substrings(value, substring_cases[_i].initial ? &initial : NULL,
				       any, n_any, substring_cases[_i].final ? &final : NULL);
	ck_assert_msg(got == substring_cases[_i].match, "case %d", _i);
}
END_TEST

START_TEST(piece_keeps_edge_space)
{
	const struct matching_rule *rule = matching_rule_find("caseIgnoreSubstringsMatch", 25);
	struct ber_view out;
	piece(rule, "  Foo   Bar  ", &out);
	ck_assert_uint_eq(out.len, 9);
	ck_assert(memcmp(out.ptr, " foo bar ", 9) == 0);
	piece(rule, "   ", &out);
	ck_assert_uint_eq(out.len, 1);
	ck_assert_int_eq(rule->normalize_piece((const uint8_t *)"\xFF", 1, &arena, &out),
			 LUMEN_EMALFORMED);
}
END_TEST

/*
 * Every ASCII byte between two letters, with and without folding, as a
 * piece and not: ASCII takes a shorter path than the rest of Unicode, and
 * must give what RFC 4518's mapping (unicode_map_class, unicode_fold) says.
 */
START_TEST(ascii_path_matches_mapping)
{
	static const unsigned flag_sets[] = { 0, MATCHING_PREP_FOLD_CASE, MATCHING_PREP_PIECE,
					      MATCHING_PREP_FOLD_CASE | MATCHING_PREP_PIECE };
	for (size_t f = 0; f < sizeof(flag_sets) / sizeof(flag_sets[0]); f++) {
		unsigned flags = flag_sets[f];
		for (unsigned c = 1; c < 0x80; c++) {
			uint8_t in[] = { ' ', 'A', (uint8_t)c, 'b', ' ' };
			char want[8];
			size_t n = 0;
			if (flags & MATCHING_PREP_PIECE)
				want[n++] = ' ';
			want[n++] = (flags & MATCHING_PREP_FOLD_CASE) ? 'a' : 'A';
			switch (unicode_map_class(c)) {
			case UNICODE_MAP_KEEP:
				want[n++] = (char)((flags & MATCHING_PREP_FOLD_CASE) ? unicode_fold(c) : c);
				break;
			case UNICODE_MAP_SPACE:
				want[n++] = ' ';
				break;
			case UNICODE_MAP_NOTHING:
				break;
			}
			want[n++] = 'b';
			if (flags & MATCHING_PREP_PIECE)
				want[n++] = ' ';
			struct ber_view out;
			ck_assert_int_eq(matching_prepare_string(in, sizeof(in), flags, &arena, &out),
					 LUMEN_OK);
			ck_assert_msg(out.len == n && memcmp(out.ptr, want, n) == 0,
				      "byte 0x%02x, flags %u: got \"%.*s\"", c, flags, (int)out.len,
				      (const char *)out.ptr);
		}
	}
}
END_TEST

/* Keys as slapd's Metaphone variant codes them (quirks included). */
static const struct {
	const char *value, *key;
} approx_keys[] = {
	{ "Smith", " SM0" },
	{ "Smyth", " SM0" },
	{ "Smith  Jones", " SM0 JNS" },
	{ "  Jane   DOE ", " JN T" },
	{ "John", " JN" },
	{ "Robert", " RRT" },        /* B is silent unless last */
	{ "Bob", " B" },
	{ "Bobb", " " },              /* a word whose code is empty */
	{ "Schmidt", " SKMT" },
	{ "Knight", " NKT" },         /* KN- */
	{ "Xavier", " SFR" },         /* X- sounds S */
	{ "Box", " KS" },             /* a final X is KS */
	{ "Thomas", " 0MS" },
	{ "Philip", " FLP" },
	{ "Alexander", " ALKS" },     /* cut at four */
	{ "O'Brien", " O" },          /* punctuation ends the coded part */
	{ "M\xc3\xbcller J\xc3\xb6rg", " MLR JRK" },   /* diacritics dropped */
	{ "Stra\xc3\x9f" "e", " STR" },     /* sharp s has no base letter: ends the word */
	{ "", "" },
};

START_TEST(approx_key)
{
	struct ber_view key;
	const char *v = approx_keys[_i].value;
	ck_assert_int_eq(matching_approx_key((const uint8_t *)v, strlen(v), &arena, &key),
			 LUMEN_OK);
	ck_assert_msg(key.len == strlen(approx_keys[_i].key) &&
		      memcmp(key.ptr, approx_keys[_i].key, key.len) == 0,
		      "%s: \"%.*s\", want \"%s\"", v, (int)key.len, (const char *)key.ptr,
		      approx_keys[_i].key);
}
END_TEST

/* OpenLDAP's rule: every assertion word among the value's, in order. */
static const struct {
	const char *value, *assertion;
	bool match;
} approx_cases[] = {
	{ "Smith", "Smyth", true },
	{ "Alice Smith", "Smyth", true },
	{ "Alice Smith", "alise", true },
	{ "Alice Smith", "Alice Smyth", true },
	{ "Alice B Smith", "Alice Smith", true },
	{ "Alice Smith", "Smith Alice", false },     /* order counts */
	{ "Smith", "Alice Smith", false },
	{ "Smith", "smit", false },
	{ "Jon", "John", true },
	{ "Robert", "Rupert", false },
	{ "Bob Smyth", "Bobb", false },
	{ "Smith", "Jones", false },
	{ "Smith", "", false },                      /* no word: no match */
	{ "Smith", "   ", false },
};

START_TEST(approx)
{
	struct ber_view a, b;
	const char *v = approx_cases[_i].value, *x = approx_cases[_i].assertion;
	ck_assert_int_eq(matching_approx_key((const uint8_t *)v, strlen(v), &arena, &a), LUMEN_OK);
	ck_assert_int_eq(matching_approx_key((const uint8_t *)x, strlen(x), &arena, &b), LUMEN_OK);
	ck_assert_msg(matching_approx_matches(a, b) == approx_cases[_i].match, "%s ~= %s", v, x);
}
END_TEST

START_TEST(approx_key_malformed)
{
	struct ber_view key;
	ck_assert_int_eq(matching_approx_key((const uint8_t *)"\xC3", 1, &arena, &key),
			 LUMEN_EMALFORMED);
}
END_TEST

START_TEST(rule_table)
{
	const struct matching_rule *by_name = matching_rule_find("CASEIGNOREMATCH", 15);
	const struct matching_rule *by_oid = matching_rule_find("2.5.13.2", 8);
	ck_assert(by_name != NULL && by_name == by_oid);
	ck_assert(matching_rule_find("caseIgnoreMatc", 14) == NULL);
	ck_assert(matching_rule_find("noSuchMatch", 11) == NULL);
	size_t n = 0;
	for (const struct matching_rule *r; (r = matching_rule_at(n)) != NULL; n++) {
		ck_assert(r->normalize != NULL && r->compare != NULL);
		ck_assert((r->usage == MATCHING_SUBSTRINGS) == (r->normalize_piece != NULL));
		ck_assert_msg(syntax_find(r->syntax_oid, strlen(r->syntax_oid)) != NULL,
			      "%s assertion syntax", r->name);
		ck_assert(matching_rule_find(r->name, strlen(r->name)) == r);
	}
	ck_assert_uint_ge(n, 30);
}
END_TEST

/* fuzz_controls: an extensible-match rule name with a NUL inside ("CSNMatch\0..."
 * from a client's filter) compared equal up to the NUL, then the table's
 * name was read past its end (global-buffer-overflow). */
START_TEST(rule_name_with_nul)
{
	static const char name[] = "CSNMatch\0&16.#";
	ck_assert_ptr_null(matching_rule_find(name, sizeof(name) - 1));
	ck_assert_ptr_null(matching_rule_find("caseIgnoreMatch\0", 16));
	ck_assert_ptr_null(matching_rule_find("2.5.13.2\0", 9));
	ck_assert_ptr_null(syntax_find("1.3.6.1.4.1.4203.666.11.2.1\0xyz", 31));
	ck_assert_ptr_nonnull(matching_rule_find("CSNMatch", 8));
	ck_assert_ptr_nonnull(syntax_find("1.3.6.1.4.1.4203.666.11.2.1", 27));
	ck_assert_ptr_null(matching_rule_find("CSNMatc", 7));
}
END_TEST

START_TEST(arena_exhaustion)
{
	struct arena tiny;
	struct ber_view out;
	arena_init(&tiny, 4);
	const struct matching_rule *rule = matching_rule_find("caseIgnoreMatch", 15);
	ck_assert_int_eq(rule->normalize((const uint8_t *)"a long enough value", 19, &tiny, &out),
			 LUMEN_ENOMEM);
	arena_free(&tiny);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("matching");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, normalizers, 0, sizeof(norm_cases) / sizeof(norm_cases[0]));
	tcase_add_loop_test(tc, ordering, 0, sizeof(order_cases) / sizeof(order_cases[0]));
	tcase_add_loop_test(tc, substrings, 0,
			    sizeof(substring_cases) / sizeof(substring_cases[0]));
	tcase_add_test(tc, piece_keeps_edge_space);
	tcase_add_test(tc, ascii_path_matches_mapping);
	tcase_add_loop_test(tc, approx_key, 0, sizeof(approx_keys) / sizeof(approx_keys[0]));
	tcase_add_loop_test(tc, approx, 0, sizeof(approx_cases) / sizeof(approx_cases[0]));
	tcase_add_test(tc, approx_key_malformed);
	tcase_add_test(tc, rule_table);
	tcase_add_test(tc, arena_exhaustion);
	tcase_add_test(tc, rule_name_with_nul);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
