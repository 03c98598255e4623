/*
 * template.h — value templates and the numbers that fill them (bench).
 *
 * A template is text with ranges in brackets: "(uid=user.[1-100000])",
 * "uid=user.[1-100000],ou=people,dc=example,dc=com". A range [A-B] (decimal,
 * A <= B) is replaced by a number in A..B; a low bound written with leading
 * zeros ("[0001-9999]") pads every value to that width. Text outside ranges
 * is copied as is, so a filter's RFC 4515 escapes ("\5b" for '[') pass
 * through untouched; that is how a literal bracket is written.
 *
 * Every range of every template used by one operation is filled from the
 * same draw (a 64-bit number): value = A + draw mod (B - A + 1). So
 * "uid=user.[1-1000]" as a DN and "user.[1-1000]" as an assertion value name
 * the same entry in one operation. A draw is random (per-thread generator)
 * or sequential (a counter shared by all threads, so sequential adds are
 * unique across threads).
 *
 * Ownership: struct bench_template is a fixed-size value holding its own
 * copy of the text; nothing is allocated, before or during expansion.
 * Thread-safety: a compiled template is read-only and may be shared;
 * struct bench_draw is per thread (its shared counter is atomic).
 *
 * Caveats:
 *  - at most TEMPLATE_MAX_TEXT bytes and TEMPLATE_MAX_SEGMENTS pieces.
 *  - no nesting, no lists; '[' always opens a range.
 */
#ifndef LUMEN_BENCH_TEMPLATE_H
#define LUMEN_BENCH_TEMPLATE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TEMPLATE_MAX_TEXT 1024
#define TEMPLATE_MAX_SEGMENTS 32

struct template_segment {
	bool is_range;
	uint16_t offset, length;   /* literal: slice of text */
	uint64_t low, high;        /* range bounds, inclusive */
	unsigned pad_width;        /* 0 = no zero padding */
};

struct bench_template {
	char text[TEMPLATE_MAX_TEXT + 1];
	unsigned n_segments;
	struct template_segment segments[TEMPLATE_MAX_SEGMENTS];
};

/*
 * Compile text into t. LUMEN_EMALFORMED for a bad range (unclosed '[', a
 * stray ']', missing '-', non-digits, low > high, empty bound);
 * LUMEN_ELIMIT if the text or a number is too long or there are too many
 * pieces; LUMEN_EINVAL for a NULL text. *why (if non-NULL) gets a static
 * English reason on failure.
 */
int bench_template_compile(struct bench_template *t, const char *text,
			   const char **why);

/*
 * Write the expansion for draw into out (NUL-terminated), its length into
 * *len. LUMEN_ELIMIT if it does not fit in cap bytes (out is then empty).
 */
int bench_template_expand(const struct bench_template *t, uint64_t draw,
			  char *out, size_t cap, size_t *len);

/* True if the template has no range (every expansion is the same). */
bool bench_template_is_constant(const struct bench_template *t);

/* Number of distinct values of the widest range (1 for constants). */
uint64_t bench_template_span(const struct bench_template *t);

enum bench_fill { BENCH_FILL_RANDOM, BENCH_FILL_SEQUENTIAL };

struct bench_draw {
	enum bench_fill fill;
	uint64_t state;                 /* random generator state */
	_Atomic uint64_t *sequence;     /* shared counter (sequential fill) */
};

/*
 * Set up a draw source. seed picks the random stream (give each thread its
 * own); sequence must be non-NULL for BENCH_FILL_SEQUENTIAL. Cannot fail.
 */
void bench_draw_init(struct bench_draw *d, enum bench_fill fill, uint64_t seed,
		     _Atomic uint64_t *sequence);

/* The next draw. Cannot fail. */
uint64_t bench_draw_next(struct bench_draw *d);

#endif
