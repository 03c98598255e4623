/* test_unicode.c — strict UTF-8, simple case folding, RFC 4518 map classes. */
#include <check.h>
#include <string.h>

#include "lumen_error.h"
#include "unicode.h"

static const struct {
	const char *name;
	const char *bytes;
	size_t len;
	int want;               /* LUMEN_OK or LUMEN_EMALFORMED */
} utf8_cases[] = {
	{ "ascii", "hello", 5, LUMEN_OK },
	{ "empty", "", 0, LUMEN_OK },
	{ "two-byte", "\xC3\xA4", 2, LUMEN_OK },
	{ "three-byte", "\xE2\x82\xAC", 3, LUMEN_OK },
	{ "four-byte", "\xF0\x9F\x98\x80", 4, LUMEN_OK },
	{ "max code point", "\xF4\x8F\xBF\xBF", 4, LUMEN_OK },
	{ "stray continuation", "\x80", 1, LUMEN_EMALFORMED },
	{ "overlong slash C0", "\xC0\xAF", 2, LUMEN_EMALFORMED },
	{ "overlong 3-byte", "\xE0\x80\xAF", 3, LUMEN_EMALFORMED },
	{ "overlong 4-byte", "\xF0\x80\x80\xAF", 4, LUMEN_EMALFORMED },
	{ "surrogate", "\xED\xA0\x80", 3, LUMEN_EMALFORMED },
	{ "above U+10FFFF", "\xF4\x90\x80\x80", 4, LUMEN_EMALFORMED },
	{ "F5 lead", "\xF5\x80\x80\x80", 4, LUMEN_EMALFORMED },
	{ "truncated", "\xE2\x82", 2, LUMEN_EMALFORMED },
	{ "bad continuation", "\xC3\x28", 2, LUMEN_EMALFORMED },
	{ "FF byte", "a\xFF", 2, LUMEN_EMALFORMED },
};

START_TEST(utf8_validation)
{
	ck_assert_msg(utf8_validate((const uint8_t *)utf8_cases[_i].bytes, utf8_cases[_i].len) ==
		      utf8_cases[_i].want, "case %s", utf8_cases[_i].name);
}
END_TEST

START_TEST(decode_encode_round_trip)
{
	static const uint32_t points[] = { 0x41, 0x7F, 0x80, 0x7FF, 0x800, 0xFFFF, 0x10000,
					   0x10FFFF, 0xE4, 0x3A3 };
	for (size_t i = 0; i < sizeof(points) / sizeof(points[0]); i++) {
		uint8_t buf[4];
		uint32_t back = 0;
		size_t n = utf8_encode(points[i], buf);
		ck_assert_int_eq(utf8_decode(buf, n, &back), (int)n);
		ck_assert_uint_eq(back, points[i]);
	}
}
END_TEST

static const struct {
	uint32_t from, to;
} fold_cases[] = {
	{ 'A', 'a' }, { 'z', 'z' }, { '1', '1' },
	{ 0xC4, 0xE4 },       /* Ä -> ä */
	{ 0xD6, 0xF6 },       /* Ö -> ö */
	{ 0xDC, 0xFC },       /* Ü -> ü */
	{ 0xDF, 0xDF },       /* ß has no one-code-point folding: unchanged */
	{ 0x100, 0x101 },     /* Latin Extended-A Ā -> ā */
	{ 0x141, 0x142 },     /* Ł -> ł */
	{ 0x3A3, 0x3C3 },     /* Σ -> σ */
	{ 0x3C2, 0x3C3 },     /* final ς folds to σ */
	{ 0x391, 0x3B1 },     /* Α -> α */
	{ 0x416, 0x436 },     /* Ж -> ж */
	{ 0x401, 0x451 },     /* Ё -> ё */
	{ 0x212A, 'k' },      /* Kelvin sign -> k */
	{ 0x4E2D, 0x4E2D },   /* CJK unchanged */
};

START_TEST(simple_fold)
{
	ck_assert_uint_eq(unicode_fold(fold_cases[_i].from), fold_cases[_i].to);
}
END_TEST

START_TEST(fold_string)
{
	struct arena arena;
	struct ber_view out;
	arena_init(&arena, 0);
	const char *in = "ÄÖÜ Straße ΣΊΣΥΦΟΣ ЖУК KELVIN\xE2\x84\xAA";
	const char *want = "äöü straße σίσυφοσ жук kelvink";
	ck_assert_int_eq(unicode_fold_utf8((const uint8_t *)in, strlen(in), &arena, &out),
			 LUMEN_OK);
	ck_assert_uint_eq(out.len, strlen(want));
	ck_assert(memcmp(out.ptr, want, out.len) == 0);
	ck_assert_int_eq(unicode_fold_utf8((const uint8_t *)"a\xC3", 2, &arena, &out),
			 LUMEN_EMALFORMED);
	arena_free(&arena);
}
END_TEST

START_TEST(fold_growth_fits)
{
	/* U+023A (2 bytes) folds to U+2C65 (3 bytes): the worst growth. */
	struct arena arena;
	struct ber_view out;
	char in[64];
	arena_init(&arena, 0);
	for (size_t i = 0; i < 32; i += 2) {
		in[i] = (char)0xC8;
		in[i + 1] = (char)0xBA;
	}
	ck_assert_int_eq(unicode_fold_utf8((const uint8_t *)in, 32, &arena, &out), LUMEN_OK);
	ck_assert_uint_eq(out.len, 48);
	ck_assert(memcmp(out.ptr, "\xE2\xB1\xA5", 3) == 0);
	arena_free(&arena);
}
END_TEST

START_TEST(map_classes)
{
	ck_assert_int_eq(unicode_map_class('a'), UNICODE_MAP_KEEP);
	ck_assert_int_eq(unicode_map_class('\t'), UNICODE_MAP_SPACE);
	ck_assert_int_eq(unicode_map_class(0x85), UNICODE_MAP_SPACE);
	ck_assert_int_eq(unicode_map_class(0xA0), UNICODE_MAP_SPACE);
	ck_assert_int_eq(unicode_map_class(0x3000), UNICODE_MAP_SPACE);
	ck_assert_int_eq(unicode_map_class(0x00), UNICODE_MAP_NOTHING);
	ck_assert_int_eq(unicode_map_class(0xAD), UNICODE_MAP_NOTHING);
	ck_assert_int_eq(unicode_map_class(0x200B), UNICODE_MAP_NOTHING);
	ck_assert_int_eq(unicode_map_class(0xFEFF), UNICODE_MAP_NOTHING);
	ck_assert_int_eq(unicode_map_class(0xFE0F), UNICODE_MAP_NOTHING);
	ck_assert_int_eq(unicode_map_class(0xE4), UNICODE_MAP_KEEP);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("unicode");
	TCase *tc = tcase_create("core");
	tcase_add_loop_test(tc, utf8_validation, 0, sizeof(utf8_cases) / sizeof(utf8_cases[0]));
	tcase_add_test(tc, decode_encode_round_trip);
	tcase_add_loop_test(tc, simple_fold, 0, sizeof(fold_cases) / sizeof(fold_cases[0]));
	tcase_add_test(tc, fold_string);
	tcase_add_test(tc, fold_growth_fits);
	tcase_add_test(tc, map_classes);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
