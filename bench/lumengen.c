/*
 * lumengen — MakeLDIF-style test data for lumenbench and compare.sh.
 *
 * Writes the suffix entry dc=example,dc=com, ou=people and ou=groups, N
 * inetOrgPerson entries uid=user.1 .. uid=user.N (names from built-in lists,
 * mail, {SSHA} userPassword of "password", phone numbers, postal address,
 * employeeNumber N, description), then a few groupOfNames. Every entry is a
 * function of (seed, N) only, so the same flags give the same bytes.
 *
 *   lumengen [-n ENTRIES] [--seed S] [--entry-size BYTES] [--cleartext]
 *            [--password PW] [--groups G] [-o FILE]
 *
 * --entry-size pads each user's description so the LDIF record is about
 * that many bytes (default 500; records are never cut below their natural
 * size). SHA-1 is done here (no crypto library needed: the salted hash is
 * for loading test data, not for protecting anything); 1M entries take a
 * few seconds.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "version.h"

static const char *const first_names[] = {
	"Aaron", "Abbie", "Adam", "Adrian", "Agnes", "Alan", "Alice", "Amara",
	"Andre", "Anita", "Arjun", "Astrid", "Beatrix", "Bela", "Boris", "Brenda",
	"Carlos", "Chen", "Clara", "Dalia", "Damien", "Dana", "Dmitri", "Elena",
	"Emeka", "Erin", "Farah", "Felix", "Fiona", "Gareth", "Greta", "Hana",
	"Hector", "Ines", "Ivan", "Jamal", "Jana", "Jonas", "Kai", "Keiko",
	"Lars", "Leila", "Luca", "Maya", "Mateo", "Nadia", "Nils", "Olga",
	"Omar", "Priya", "Quentin", "Rosa", "Sami", "Sofia", "Tariq", "Uma",
	"Victor", "Wen", "Ximena", "Yusuf", "Zara", "Zoltan",
};
static const char *const last_names[] = {
	"Abbott", "Achterberg", "Bakker", "Banerjee", "Bianchi", "Brennan",
	"Castillo", "Chowdhury", "Dahl", "Dubois", "Eriksen", "Esposito",
	"Fischer", "Fujita", "Garcia", "Gruber", "Haddad", "Horvath", "Ibrahim",
	"Ivanova", "Jensen", "Jovanovic", "Kaur", "Kowalski", "Larsen", "Lopez",
	"Moreau", "Muller", "Nakamura", "Novak", "Okafor", "Olsen", "Petrov",
	"Popescu", "Quinn", "Rossi", "Santos", "Schmidt", "Tanaka", "Torres",
	"Ueda", "Varga", "Vasquez", "Weber", "Wright", "Yamamoto", "Zhang", "Zielinski",
};
static const char *const streets[] = {
	"Maple", "Oak", "Cedar", "Pine", "Elm", "Willow", "Birch", "Spruce",
	"Lake", "Hill", "River", "Park", "Church", "Mill", "Station", "Bridge",
};
static const struct { const char *city, *state; } places[] = {
	{ "Austin", "TX" }, { "Boise", "ID" }, { "Columbus", "OH" },
	{ "Denver", "CO" }, { "Eugene", "OR" }, { "Fresno", "CA" },
	{ "Madison", "WI" }, { "Portland", "ME" }, { "Raleigh", "NC" },
	{ "Salem", "MA" }, { "Tucson", "AZ" }, { "Yonkers", "NY" },
};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------ SHA-1 */

struct sha1 {
	uint32_t h[5];
	uint8_t block[64];
	size_t used;
	uint64_t bytes;
};

static uint32_t rotl(uint32_t x, unsigned n)
{
	return (x << n) | (x >> (32 - n));
}

static void sha1_block(struct sha1 *s, const uint8_t *p)
{
	uint32_t w[80];
	for (unsigned i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (unsigned i = 16; i < 80; i++)
		w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
	uint32_t a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3], e = s->h[4];
	for (unsigned i = 0; i < 80; i++) {
		uint32_t f, k;
		if (i < 20)
			f = (b & c) | (~b & d), k = 0x5a827999;
		else if (i < 40)
			f = b ^ c ^ d, k = 0x6ed9eba1;
		else if (i < 60)
			f = (b & c) | (b & d) | (c & d), k = 0x8f1bbcdc;
		else
			f = b ^ c ^ d, k = 0xca62c1d6;
		uint32_t t = rotl(a, 5) + f + e + k + w[i];
		e = d, d = c, c = rotl(b, 30), b = a, a = t;
	}
	s->h[0] += a, s->h[1] += b, s->h[2] += c, s->h[3] += d, s->h[4] += e;
}

static void sha1_init(struct sha1 *s)
{
	static const uint32_t start[5] = { 0x67452301, 0xefcdab89, 0x98badcfe,
					   0x10325476, 0xc3d2e1f0 };
	memcpy(s->h, start, sizeof(start));
	s->used = 0;
	s->bytes = 0;
}

static void sha1_update(struct sha1 *s, const void *data, size_t n)
{
	const uint8_t *p = data;
	s->bytes += n;
	while (n > 0) {
		size_t take = 64 - s->used < n ? 64 - s->used : n;
		memcpy(s->block + s->used, p, take);
		s->used += take, p += take, n -= take;
		if (s->used == 64) {
			sha1_block(s, s->block);
			s->used = 0;
		}
	}
}

static void sha1_final(struct sha1 *s, uint8_t out[20])
{
	uint64_t bits = s->bytes * 8;
	uint8_t pad = 0x80, zero = 0, length[8];
	sha1_update(s, &pad, 1);
	while (s->used != 56)
		sha1_update(s, &zero, 1);
	for (unsigned i = 0; i < 8; i++)
		length[i] = (uint8_t)(bits >> (56 - 8 * i));
	sha1_update(s, length, 8);
	for (unsigned i = 0; i < 20; i++)
		out[i] = (uint8_t)(s->h[i / 4] >> (24 - 8 * (i % 4)));
}

/* ------------------------------------------------------------ output */

static size_t base64(const uint8_t *in, size_t n, char *out)
{
	static const char alphabet[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0) |
			     (i + 2 < n ? in[i + 2] : 0);
		out[o++] = alphabet[v >> 18];
		out[o++] = alphabet[(v >> 12) & 63];
		out[o++] = i + 1 < n ? alphabet[(v >> 6) & 63] : '=';
		out[o++] = i + 2 < n ? alphabet[v & 63] : '=';
	}
	out[o] = '\0';
	return o;
}

/* splitmix64: each entry's numbers depend only on (seed, entry number). */
static uint64_t mix(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

struct generator {
	unsigned long entries, groups;
	uint64_t seed;
	size_t entry_size;
	int cleartext;
	const char *password;
	const char *suffix;
	FILE *out;
	char record[16384];
	size_t len;
};

static void put(struct generator *g, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void put(struct generator *g, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(g->record + g->len, sizeof(g->record) - g->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		g->len += (size_t)n < sizeof(g->record) - g->len ? (size_t)n
				: sizeof(g->record) - g->len - 1;
}

static int flush_record(struct generator *g)
{
	size_t wanted = g->len;
	g->len = 0;
	return fwrite(g->record, 1, wanted, g->out) == wanted ? 0 : -1;
}

static void password_value(struct generator *g, uint64_t *rng, char *out)
{
	if (g->cleartext) {
		snprintf(out, 256, "%s", g->password);
		return;
	}
	uint8_t hash_and_salt[28];
	uint64_t salt = mix(rng);
	memcpy(hash_and_salt + 20, &salt, 8);
	struct sha1 s;
	sha1_init(&s);
	sha1_update(&s, g->password, strlen(g->password));
	sha1_update(&s, hash_and_salt + 20, 8);
	sha1_final(&s, hash_and_salt);
	memcpy(out, "{SSHA}", 6);
	base64(hash_and_salt, sizeof(hash_and_salt), out + 6);
}

/* Pad the description so the record reaches the wanted size. */
static void description(struct generator *g, const char *first, const char *last)
{
	static const char filler[] = " Lorem ipsum dolor sit amet, consectetur "
		"adipiscing elit, sed do eiusmod tempor incididunt ut labore.";
	put(g, "description: This is the description for %s %s.", first, last);
	/* +1 for the newline still to come, +1 for the blank line. */
	while (g->len + 2 < g->entry_size && g->len + sizeof(filler) + 2 < sizeof(g->record)) {
		size_t room = g->entry_size - g->len - 2;
		size_t take = room < sizeof(filler) - 1 ? room : sizeof(filler) - 1;
		put(g, "%.*s", (int)take, filler);
	}
	put(g, "\n\n");
}

static void user_entry(struct generator *g, unsigned long n)
{
	uint64_t rng = g->seed * UINT64_C(0x100000001b3) ^ n;
	const char *first = first_names[mix(&rng) % COUNT(first_names)];
	const char *last = last_names[mix(&rng) % COUNT(last_names)];
	unsigned place = (unsigned)(mix(&rng) % COUNT(places));
	const char *street = streets[mix(&rng) % COUNT(streets)];
	unsigned house = (unsigned)(mix(&rng) % 9900) + 100;
	unsigned zip = (unsigned)(mix(&rng) % 90000) + 10000;
	char password[256];
	password_value(g, &rng, password);
	put(g, "dn: uid=user.%lu,ou=people,%s\n", n, g->suffix);
	put(g, "objectClass: top\nobjectClass: person\nobjectClass: "
	       "organizationalPerson\nobjectClass: inetOrgPerson\n");
	put(g, "uid: user.%lu\ngivenName: %s\nsn: %s\ncn: %s %s\ninitials: %c%c\n",
	    n, first, last, first, last, first[0], last[0]);
	put(g, "employeeNumber: %lu\nmail: user.%lu@example.com\nuserPassword: %s\n",
	    n, n, password);
	put(g, "telephoneNumber: +1 %03u %03u %04u\nmobile: +1 %03u %03u %04u\n",
	    (unsigned)(mix(&rng) % 800) + 200, (unsigned)(mix(&rng) % 1000),
	    (unsigned)(mix(&rng) % 10000), (unsigned)(mix(&rng) % 800) + 200,
	    (unsigned)(mix(&rng) % 1000), (unsigned)(mix(&rng) % 10000));
	put(g, "street: %u %s Street\nl: %s\nst: %s\npostalCode: %05u\n", house,
	    street, places[place].city, places[place].state, zip);
	put(g, "postalAddress: %s %s$%u %s Street$%s, %s  %05u\n", first, last, house,
	    street, places[place].city, places[place].state, zip);
	description(g, first, last);
}

static void fixed_entries(struct generator *g)
{
	const char *dc = g->suffix + 3;   /* "dc=example,..." -> "example,..." */
	size_t dc_len = strcspn(dc, ",");
	put(g, "dn: %s\nobjectClass: top\nobjectClass: domain\ndc: %.*s\n\n",
	    g->suffix, (int)dc_len, dc);
	put(g, "dn: ou=people,%s\nobjectClass: top\nobjectClass: organizationalUnit\n"
	       "ou: people\n\n", g->suffix);
	put(g, "dn: ou=groups,%s\nobjectClass: top\nobjectClass: organizationalUnit\n"
	       "ou: groups\n\n", g->suffix);
}

/* Group G holds up to 100 users, spread over the whole range. */
static int group_entries(struct generator *g)
{
	for (unsigned long grp = 1; grp <= g->groups; grp++) {
		put(g, "dn: cn=group.%lu,ou=groups,%s\nobjectClass: top\n"
		       "objectClass: groupOfNames\ncn: group.%lu\n", grp, g->suffix, grp);
		unsigned long step = g->entries / 100 > 0 ? g->entries / 100 : 1;
		unsigned long members = 0;
		for (unsigned long n = grp % step + 1; n <= g->entries && members < 100;
		     n += step, members++)
			put(g, "member: uid=user.%lu,ou=people,%s\n", n, g->suffix);
		if (members == 0)
			put(g, "member: cn=group.%lu,ou=groups,%s\n", grp, g->suffix);
		put(g, "\n");
		if (flush_record(g) != 0)
			return -1;
	}
	return 0;
}

static int generate(struct generator *g)
{
	fixed_entries(g);
	if (flush_record(g) != 0)
		return -1;
	for (unsigned long n = 1; n <= g->entries; n++) {
		user_entry(g, n);
		if (flush_record(g) != 0)
			return -1;
	}
	if (group_entries(g) != 0 || fflush(g->out) != 0)
		return -1;
	return 0;
}

static void usage(FILE *out)
{
	fputs("usage: lumengen [-n ENTRIES] [--seed S] [--entry-size BYTES] [--cleartext]\n"
	      "                [--password PW] [--groups G] [--suffix DN] [-o FILE]\n"
	      "  writes ENTRIES (default 10000) inetOrgPerson users uid=user.1..N under\n"
	      "  ou=people,SUFFIX as LDIF (default suffix dc=example,dc=com)\n"
	      "  -V, --version  print the version and exit\n", out);
}

static int parse_count(const char *text, unsigned long max, unsigned long *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(text, &end, 10);
	if (errno != 0 || end == text || *end != '\0' || v > max)
		return -1;
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "entries", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 's' },
		{ "entry-size", required_argument, NULL, 'e' },
		{ "cleartext", no_argument, NULL, 'c' },
		{ "password", required_argument, NULL, 'p' },
		{ "groups", required_argument, NULL, 'g' },
		{ "suffix", required_argument, NULL, 'S' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	static struct generator g = { .entries = 10000, .groups = 5, .seed = 1,
		.entry_size = 500, .password = "password", .suffix = "dc=example,dc=com" };
	const char *output = NULL;
	unsigned long v;
	int opt, bad = 0;
	while ((opt = getopt_long(argc, argv, "n:s:e:cp:g:S:o:hV", options, NULL)) != -1) {
		switch (opt) {
		case 'n': bad |= parse_count(optarg, 1000000000ul, &g.entries); break;
		case 's': bad |= parse_count(optarg, ~0ul, &v); g.seed = v; break;
		case 'e': bad |= parse_count(optarg, 12000, &v); g.entry_size = v; break;
		case 'c': g.cleartext = 1; break;
		case 'p': g.password = optarg; bad |= strlen(optarg) > 200; break;
		case 'g': bad |= parse_count(optarg, 100000, &g.groups); break;
		case 'S': g.suffix = optarg;
			  bad |= strncmp(optarg, "dc=", 3) != 0 || strlen(optarg) > 200; break;
		case 'o': output = optarg; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("lumengen %s\n", LUMEN_VERSION); return 0;
		default: bad = 1;
		}
	}
	if (bad || optind != argc) {
		usage(stderr);
		return 2;
	}
	g.out = output != NULL ? fopen(output, "w") : stdout;
	if (g.out == NULL) {
		fprintf(stderr, "lumengen: %s: %s\n", output, strerror(errno));
		return 1;
	}
	/* Large writes: the LDIF for 1M entries is over half a gigabyte. */
	setvbuf(g.out, NULL, _IOFBF, 4 << 20);
	int rc = generate(&g);
	if (output != NULL && fclose(g.out) != 0)
		rc = -1;
	if (rc != 0) {
		fprintf(stderr, "lumengen: write failed: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}
