/*
 * stable_hash.h — the 64-bit hash stored on disk (back-mdb private).
 *
 * Index keys and long dn2id RDN keys contain this hash, so its output is
 * part of the database format: it must give the same value on every
 * platform and release. Changing it means bumping MDB_STORE_FORMAT_VERSION.
 * Bytes are read explicitly little-endian so the CPU's byte order does not
 * matter. It is not keyed: an attacker can craft collisions, which cost
 * only extra candidates (every candidate is re-tested) or a verified
 * lookup in dn2id, never a wrong answer.
 */
#ifndef LUMEN_BACKMDB_STABLE_HASH_H
#define LUMEN_BACKMDB_STABLE_HASH_H

#include <stddef.h>
#include <stdint.h>

/* The splitmix64 finalizer: every input bit affects every output bit. */
static inline uint64_t stable_hash_mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

static inline uint64_t stable_hash64(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ ((uint64_t)len * 0xff51afd7ed558ccdull);

	while (len >= 8) {
		uint64_t word = 0;
		for (int i = 7; i >= 0; i--)
			word = (word << 8) | p[i];
		h = stable_hash_mix(h ^ word) + 0x632be59bd9b4e019ull;
		p += 8;
		len -= 8;
	}
	uint64_t tail = 0;
	for (size_t i = len; i > 0; i--)
		tail = (tail << 8) | p[i - 1];
	return stable_hash_mix(h ^ tail ^ ((uint64_t)len << 56));
}

#endif
