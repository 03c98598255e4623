/*
 * hex.h — hexadecimal digits, the \XX and %XX escapes of RFC 4514 DNs,
 * RFC 4515 filters, LDIF file:// URLs and LDAP URLs (proto layer, the
 * lowest that needs them, so every layer above shares one spelling).
 *
 * Owns nothing; pure inline functions, safe on any thread.
 *
 * Caveats:
 *  - hex_value takes an unsigned char value (or a plain char, whose
 *    negative values are simply not digits); -1 means "not a hex digit",
 *    so callers must check before combining two digits into a byte.
 */
#ifndef LUMEN_HEX_H
#define LUMEN_HEX_H

#include <stdbool.h>
#include <stdint.h>

/* 0..15 for '0'-'9', 'a'-'f', 'A'-'F'; -1 for anything else. */
static inline int hex_value(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The byte spelled by two hex digits, or -1 if either is not one. */
static inline int hex_pair_value(int high, int low)
{
	int h = hex_value(high), l = hex_value(low);
	return h < 0 || l < 0 ? -1 : h << 4 | l;
}

/* Write byte as two hex digits at out (no NUL); returns out + 2. */
static inline char *hex_write_byte(char *out, uint8_t byte, bool uppercase)
{
	const char *digits = uppercase ? "0123456789ABCDEF" : "0123456789abcdef";
	out[0] = digits[byte >> 4];
	out[1] = digits[byte & 15];
	return out + 2;
}

#endif
