/*
 * base64.h — RFC 4648 base64 (standard alphabet, '=' padding), model layer.
 *
 * Owns nothing: every function works on caller buffers and allocates
 * nothing. Thread-safety: pure functions, safe anywhere.
 *
 * Caveats:
 *  - Decoding is strict: length a multiple of 4, padding only at the end,
 *    no whitespace, unused bits of the last group must be zero. LDIF unfolds
 *    lines before decoding, so no whitespace ever reaches the decoder.
 *  - base64_decode may decode in place (dst == src): it never writes ahead
 *    of what it has read.
 */
#ifndef LUMEN_BASE64_H
#define LUMEN_BASE64_H

#include <stddef.h>
#include <stdint.h>

/* Characters base64_encode writes for n input bytes (no NUL). */
static inline size_t base64_encoded_length(size_t n)
{
	return (n + 2) / 3 * 4;
}

/* Upper bound of the bytes base64_decode writes for n input characters. */
static inline size_t base64_decoded_max(size_t n)
{
	return n / 4 * 3;
}

/* Encode n bytes into dst (base64_encoded_length(n) bytes, no NUL written). */
void base64_encode(const uint8_t *src, size_t n, char *dst);

/*
 * Decode n characters into dst (room for base64_decoded_max(n) bytes) and
 * set *out_len. LUMEN_EMALFORMED for a character outside the alphabet, a
 * length that is not a multiple of 4, misplaced padding or non-zero unused
 * bits. dst may equal src.
 */
int base64_decode(const char *src, size_t n, uint8_t *dst, size_t *out_len);

#endif
