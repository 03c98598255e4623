/*
 * template.c — compile and expand value templates (see template.h).
 */
#include "template.h"

#include <string.h>

#include "lumen_error.h"

/* More digits than this could overflow 64 bits. */
#define MAX_NUMBER_DIGITS 18

static int add_segment(struct bench_template *t, struct template_segment seg,
		       const char **why)
{
	if (t->n_segments == TEMPLATE_MAX_SEGMENTS) {
		*why = "too many pieces in template";
		return LUMEN_ELIMIT;
	}
	t->segments[t->n_segments++] = seg;
	return LUMEN_OK;
}

/* Parse the decimal at *p up to (not including) a terminator. */
static int parse_bound(const char **p, uint64_t *value, unsigned *digits,
		       const char **why)
{
	const char *s = *p;
	uint64_t v = 0;
	unsigned n = 0;
	while (*s >= '0' && *s <= '9') {
		if (++n > MAX_NUMBER_DIGITS) {
			*why = "range bound has too many digits";
			return LUMEN_ELIMIT;
		}
		v = v * 10 + (uint64_t)(*s - '0');
		s++;
	}
	if (n == 0) {
		*why = *s == '\0' ? "unclosed '[' in template"
				   : "range bound is not a decimal number";
		return LUMEN_EMALFORMED;
	}
	*p = s;
	*value = v;
	*digits = n;
	return LUMEN_OK;
}

/* Parse "[A-B]" starting at the '['; *p moves past the ']'. */
static int parse_range(const char **p, struct template_segment *seg,
		       const char **why)
{
	const char *s = *p + 1;
	unsigned low_digits, high_digits;
	int rc = parse_bound(&s, &seg->low, &low_digits, why);
	if (rc != LUMEN_OK)
		return rc;
	if (*s != '-') {
		*why = *s == '\0' ? "unclosed '[' in template"
				  : "range needs the form [low-high]";
		return LUMEN_EMALFORMED;
	}
	s++;
	rc = parse_bound(&s, &seg->high, &high_digits, why);
	if (rc != LUMEN_OK)
		return rc;
	if (*s != ']') {
		*why = *s == '\0' ? "unclosed '[' in template"
				  : "range needs the form [low-high]";
		return LUMEN_EMALFORMED;
	}
	if (seg->low > seg->high) {
		*why = "range low bound is above its high bound";
		return LUMEN_EMALFORMED;
	}
	seg->is_range = true;
	seg->pad_width = ((*p)[1] == '0' && low_digits > 1) ? low_digits : 0;
	*p = s + 1;
	return LUMEN_OK;
}

int bench_template_compile(struct bench_template *t, const char *text,
			   const char **why)
{
	const char *ignored;
	if (why == NULL)
		why = &ignored;
	memset(t, 0, sizeof(*t));
	if (text == NULL) {
		*why = "no template";
		return LUMEN_EINVAL;
	}
	size_t len = strlen(text);
	if (len > TEMPLATE_MAX_TEXT) {
		*why = "template too long";
		return LUMEN_ELIMIT;
	}
	memcpy(t->text, text, len + 1);

	const char *p = t->text;
	int rc = LUMEN_OK;
	while (*p != '\0') {
		struct template_segment seg = { 0 };
		if (*p == ']') {
			*why = "']' without '[' in template";
			rc = LUMEN_EMALFORMED;
			goto fail;
		}
		if (*p == '[') {
			rc = parse_range(&p, &seg, why);
		} else {
			seg.offset = (uint16_t)(p - t->text);
			while (*p != '\0' && *p != '[' && *p != ']')
				p++;
			seg.length = (uint16_t)(p - t->text - seg.offset);
		}
		if (rc == LUMEN_OK)
			rc = add_segment(t, seg, why);
		if (rc != LUMEN_OK)
			goto fail;
	}
	return LUMEN_OK;
fail:
	t->n_segments = 0;
	return rc;
}

/* Decimal of v, left-padded with zeros to width, into out; its length. */
static size_t format_number(uint64_t v, unsigned width, char *out)
{
	char digits[24];
	size_t n = 0;
	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	while (n < width && n < sizeof(digits))
		digits[n++] = '0';
	for (size_t i = 0; i < n; i++)
		out[i] = digits[n - 1 - i];
	return n;
}

int bench_template_expand(const struct bench_template *t, uint64_t draw,
			  char *out, size_t cap, size_t *len)
{
	size_t used = 0;
	char number[24];
	for (unsigned i = 0; i < t->n_segments; i++) {
		const struct template_segment *seg = &t->segments[i];
		const char *piece = t->text + seg->offset;
		size_t n = seg->length;
		if (seg->is_range) {
			uint64_t span = seg->high - seg->low + 1;
			/* span is 0 only for the full 64-bit range: no modulo. */
			uint64_t v = seg->low + (span == 0 ? draw : draw % span);
			n = format_number(v, seg->pad_width, number);
			piece = number;
		}
		if (used + n + 1 > cap)
			goto too_long;
		memcpy(out + used, piece, n);
		used += n;
	}
	if (cap == 0)
		goto too_long;
	out[used] = '\0';
	*len = used;
	return LUMEN_OK;
too_long:
	if (cap > 0)
		out[0] = '\0';
	*len = 0;
	return LUMEN_ELIMIT;
}

bool bench_template_is_constant(const struct bench_template *t)
{
	return bench_template_span(t) == 1;
}

uint64_t bench_template_span(const struct bench_template *t)
{
	uint64_t widest = 1;
	for (unsigned i = 0; i < t->n_segments; i++) {
		const struct template_segment *seg = &t->segments[i];
		if (seg->is_range && seg->high - seg->low + 1 > widest)
			widest = seg->high - seg->low + 1;
	}
	return widest;
}

void bench_draw_init(struct bench_draw *d, enum bench_fill fill, uint64_t seed,
		     _Atomic uint64_t *sequence)
{
	d->fill = fill;
	/* splitmix64 of the seed: distinct, never-zero xorshift states. */
	uint64_t z = seed + UINT64_C(0x9e3779b97f4a7c15);
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	z ^= z >> 31;
	d->state = z != 0 ? z : 1;
	d->sequence = sequence;
}

uint64_t bench_draw_next(struct bench_draw *d)
{
	if (d->fill == BENCH_FILL_SEQUENTIAL)
		return atomic_fetch_add_explicit(d->sequence, 1, memory_order_relaxed);
	/* xorshift64*: fast, and plenty random for picking entries. */
	uint64_t x = d->state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	d->state = x;
	return x * UINT64_C(0x2545f4914f6cdd1d);
}
