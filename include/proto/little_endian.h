/*
 * little_endian.h — 64-bit integers as 8 little-endian bytes, for byte
 * strings that leave the process or outlive it (paged-results positions and
 * cookies), whatever the host's byte order (proto layer; header only).
 */
#ifndef LUMEN_LITTLE_ENDIAN_H
#define LUMEN_LITTLE_ENDIAN_H

#include <stdint.h>

static inline void little_endian_put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint64_t little_endian_get64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

#endif
