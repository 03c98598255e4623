/*
 * base64.c — RFC 4648 base64 for LDIF values (and anyone else who needs it).
 */
#include "base64.h"

#include "lumen_error.h"

static const char base64_alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Value + 1 for alphabet characters, 65 for '=', 0 for anything else. */
static const uint8_t base64_values[256] = {
	['A'] = 1, ['B'] = 2, ['C'] = 3, ['D'] = 4, ['E'] = 5, ['F'] = 6, ['G'] = 7,
	['H'] = 8, ['I'] = 9, ['J'] = 10, ['K'] = 11, ['L'] = 12, ['M'] = 13,
	['N'] = 14, ['O'] = 15, ['P'] = 16, ['Q'] = 17, ['R'] = 18, ['S'] = 19,
	['T'] = 20, ['U'] = 21, ['V'] = 22, ['W'] = 23, ['X'] = 24, ['Y'] = 25,
	['Z'] = 26, ['a'] = 27, ['b'] = 28, ['c'] = 29, ['d'] = 30, ['e'] = 31,
	['f'] = 32, ['g'] = 33, ['h'] = 34, ['i'] = 35, ['j'] = 36, ['k'] = 37,
	['l'] = 38, ['m'] = 39, ['n'] = 40, ['o'] = 41, ['p'] = 42, ['q'] = 43,
	['r'] = 44, ['s'] = 45, ['t'] = 46, ['u'] = 47, ['v'] = 48, ['w'] = 49,
	['x'] = 50, ['y'] = 51, ['z'] = 52, ['0'] = 53, ['1'] = 54, ['2'] = 55,
	['3'] = 56, ['4'] = 57, ['5'] = 58, ['6'] = 59, ['7'] = 60, ['8'] = 61,
	['9'] = 62, ['+'] = 63, ['/'] = 64, ['='] = 65,
};

#define BASE64_PAD 64
#define BASE64_INVALID 0xff

void base64_encode(const uint8_t *src, size_t n, char *dst)
{
	size_t i = 0;

	for (; i + 3 <= n; i += 3) {
		uint32_t group = (uint32_t)src[i] << 16 | (uint32_t)src[i + 1] << 8 | src[i + 2];
		*dst++ = base64_alphabet[group >> 18];
		*dst++ = base64_alphabet[(group >> 12) & 63];
		*dst++ = base64_alphabet[(group >> 6) & 63];
		*dst++ = base64_alphabet[group & 63];
	}
	if (i < n) {
		uint32_t group = (uint32_t)src[i] << 16;
		if (i + 1 < n)
			group |= (uint32_t)src[i + 1] << 8;
		*dst++ = base64_alphabet[group >> 18];
		*dst++ = base64_alphabet[(group >> 12) & 63];
		*dst++ = i + 1 < n ? base64_alphabet[(group >> 6) & 63] : '=';
		*dst++ = '=';
	}
}

int base64_decode(const char *src, size_t n, uint8_t *dst, size_t *out_len)
{
	size_t out = 0;

	if (n % 4 != 0)
		return LUMEN_EMALFORMED;
	for (size_t i = 0; i < n; i += 4) {
		uint8_t v[4];
		for (int k = 0; k < 4; k++)
			v[k] = (uint8_t)(base64_values[(uint8_t)src[i + k]] - 1);
		if (v[0] >= BASE64_PAD || v[1] >= BASE64_PAD || v[2] == BASE64_INVALID || v[3] == BASE64_INVALID)
			return LUMEN_EMALFORMED;
		int pads = (v[2] == BASE64_PAD) + (v[3] == BASE64_PAD);
		/* Padding belongs to the last group only, and "x=y" is not padding. */
		if (pads > 0 && (i + 4 != n || (v[2] == BASE64_PAD && v[3] != BASE64_PAD)))
			return LUMEN_EMALFORMED;
		uint32_t group = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12;
		if (pads < 2)
			group |= (uint32_t)v[2] << 6;
		if (pads < 1)
			group |= v[3];
		/* Non-zero bits that padding drops mean the encoder was not canonical. */
		if ((pads == 2 && (group & 0xffff) != 0) || (pads == 1 && (group & 0xff) != 0))
			return LUMEN_EMALFORMED;
		dst[out++] = (uint8_t)(group >> 16);
		if (pads < 2)
			dst[out++] = (uint8_t)(group >> 8);
		if (pads < 1)
			dst[out++] = (uint8_t)group;
	}
	*out_len = out;
	return LUMEN_OK;
}
