/*
 * fuzz_regex_guard.h — shared by the targets whose input reaches regcomp(3)
 * (dn.regex in `access`, `authz-regexp`).
 *
 * glibc's regcomp expands a repetition by copying the repeated subtree
 * ("x+" becomes "xx*", "x{n}" n copies), so stacked or nested repetitions
 * ("(((a+)+)+)+...", "(a{1000}){1000}") need memory exponential in the
 * pattern's length: a 200-byte dn.regex takes more than 2 GB. Only an
 * operator's own slapd.conf can hold a regex (clients cannot send one), so
 * the targets skip such inputs instead of reporting glibc's blow-up again
 * and again; the README lists it as a known limitation.
 *
 * fuzz_regex_too_costly() over-estimates the expansion of the whole input:
 * the product of every brace count and of 2 for every repetition that
 * follows a group or another repetition.
 */
#ifndef FUZZ_REGEX_GUARD_H
#define FUZZ_REGEX_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FUZZ_REGEX_MAX_EXPANSION (1u << 16)

static inline bool fuzz_regex_too_costly(const uint8_t *data, size_t size)
{
	uint64_t product = 1;
	for (size_t i = 0; i < size; i++) {
		uint8_t c = data[i];
		uint8_t before = i > 0 ? data[i - 1] : 0;
		if (c == '{') {
			uint64_t n = 0, max = 0;
			for (size_t j = i + 1; j < size && data[j] != '}'; j++) {
				if (data[j] >= '0' && data[j] <= '9') {
					n = n * 10 + (data[j] - '0');
					if (n > FUZZ_REGEX_MAX_EXPANSION)
						return true;
					if (n > max)
						max = n;
				} else {
					n = 0;
				}
			}
			product *= max + 1;
		} else if ((c == '+' || c == '*' || c == '?') &&
			   (before == ')' || before == '}' || before == '+' || before == '*' ||
			    before == '?')) {
			product *= 2;
		}
		if (product > FUZZ_REGEX_MAX_EXPANSION)
			return true;
	}
	return false;
}

#endif
