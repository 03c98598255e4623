/*
 * histogram.h — log-linear latency histogram for lumenbench (bench).
 *
 * HDR-style: values below 2^HISTOGRAM_SUB_BITS are counted exactly; above,
 * each power of two is split into 2^HISTOGRAM_SUB_BITS equal buckets, so a
 * reported percentile is within 1/128 (< 0.8 %) of the true value whatever
 * its magnitude. Every recorded value is counted (it is not a sample), and
 * recording is an index computation and an increment: no allocation, no
 * branch on the distribution. Values are unitless; lumenbench records
 * nanoseconds.
 *
 * Ownership: a histogram is a plain fixed-size value (~38 KiB); embed it or
 * allocate it once per thread. Nothing inside points elsewhere.
 * Thread-safety: none; one histogram per thread, merged at the end.
 *
 * Caveats:
 *  - values at or above HISTOGRAM_MAX_VALUE land in the top bucket (counted
 *    in `clamped`); min, max and mean stay exact.
 *  - percentiles report the highest value of the bucket holding the rank,
 *    clamped to [min, max], so p0 is min and p100 is max exactly.
 */
#ifndef LUMEN_BENCH_HISTOGRAM_H
#define LUMEN_BENCH_HISTOGRAM_H

#include <stdint.h>

#define HISTOGRAM_SUB_BITS 7
#define HISTOGRAM_SUB_COUNT (1u << HISTOGRAM_SUB_BITS)
/* Highest exponent tracked: 2^42 ns is about 73 minutes. */
#define HISTOGRAM_MAX_EXPONENT 41
#define HISTOGRAM_MAX_VALUE (UINT64_C(1) << (HISTOGRAM_MAX_EXPONENT + 1))
#define HISTOGRAM_BUCKETS \
	(HISTOGRAM_SUB_COUNT * (HISTOGRAM_MAX_EXPONENT - HISTOGRAM_SUB_BITS + 2))

struct histogram {
	uint64_t total;
	uint64_t clamped;      /* values >= HISTOGRAM_MAX_VALUE */
	uint64_t min;          /* UINT64_MAX while empty */
	uint64_t max;
	uint64_t sum;          /* saturates instead of wrapping */
	uint64_t counts[HISTOGRAM_BUCKETS];
};

/* Make h empty. Cannot fail. */
void histogram_init(struct histogram *h);

/* Count one value. Cannot fail: out-of-range values are clamped (above). */
void histogram_record(struct histogram *h, uint64_t value);

/* Add every count of from into into. Cannot fail. */
void histogram_merge(struct histogram *into, const struct histogram *from);

/*
 * The value at percentile p (0 <= p <= 100) into *out.
 * LUMEN_EINVAL if p is out of range or NaN; LUMEN_ENOTFOUND if h is empty
 * (*out is then 0).
 */
int histogram_percentile(const struct histogram *h, double p, uint64_t *out);

/* Arithmetic mean of the recorded values; 0 when empty. */
double histogram_mean(const struct histogram *h);

/* Bucket index for a value and the highest value sharing that bucket
 * (exposed for tests). */
unsigned histogram_bucket_of(uint64_t value);
uint64_t histogram_bucket_high(unsigned bucket);

#endif
