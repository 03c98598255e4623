/*
 * histogram.c — log-linear latency histogram (see histogram.h).
 */
#include "histogram.h"

#include <math.h>
#include <string.h>

#include "lumen_error.h"

void histogram_init(struct histogram *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

unsigned histogram_bucket_of(uint64_t value)
{
	if (value >= HISTOGRAM_MAX_VALUE)
		return HISTOGRAM_BUCKETS - 1;
	if (value < HISTOGRAM_SUB_COUNT)
		return (unsigned)value;
	unsigned exponent = 63u - (unsigned)__builtin_clzll(value);
	unsigned shift = exponent - HISTOGRAM_SUB_BITS;
	/* The top SUB_BITS+1 bits, minus the leading one, pick the sub-bucket. */
	unsigned sub = (unsigned)(value >> shift) - HISTOGRAM_SUB_COUNT;
	return HISTOGRAM_SUB_COUNT * (shift + 1) + sub;
}

uint64_t histogram_bucket_high(unsigned bucket)
{
	if (bucket < HISTOGRAM_SUB_COUNT)
		return bucket;
	unsigned shift = bucket / HISTOGRAM_SUB_COUNT - 1;
	uint64_t sub = bucket % HISTOGRAM_SUB_COUNT;
	uint64_t low = (HISTOGRAM_SUB_COUNT + sub) << shift;
	return low + ((UINT64_C(1) << shift) - 1);
}

void histogram_record(struct histogram *h, uint64_t value)
{
	h->counts[histogram_bucket_of(value)]++;
	h->total++;
	if (value >= HISTOGRAM_MAX_VALUE)
		h->clamped++;
	if (value < h->min)
		h->min = value;
	if (value > h->max)
		h->max = value;
	h->sum = (h->sum + value < h->sum) ? UINT64_MAX : h->sum + value;
}

void histogram_merge(struct histogram *into, const struct histogram *from)
{
	for (unsigned i = 0; i < HISTOGRAM_BUCKETS; i++)
		into->counts[i] += from->counts[i];
	into->total += from->total;
	into->clamped += from->clamped;
	if (from->min < into->min)
		into->min = from->min;
	if (from->max > into->max)
		into->max = from->max;
	into->sum = (into->sum + from->sum < into->sum) ? UINT64_MAX
							: into->sum + from->sum;
}

int histogram_percentile(const struct histogram *h, double p, uint64_t *out)
{
	*out = 0;
	if (isnan(p) || p < 0.0 || p > 100.0)
		return LUMEN_EINVAL;
	if (h->total == 0)
		return LUMEN_ENOTFOUND;
	/* Rank of the wanted value, 1-based; p0 asks for the smallest. */
	uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)h->total);
	if (rank == 0)
		rank = 1;
	if (rank > h->total)
		rank = h->total;
	/* The extremes are known exactly; buckets only bound the rest. */
	if (rank == 1) {
		*out = h->min;
		return LUMEN_OK;
	}
	if (rank == h->total) {
		*out = h->max;
		return LUMEN_OK;
	}
	uint64_t seen = 0;
	unsigned bucket = 0;
	for (; bucket < HISTOGRAM_BUCKETS; bucket++) {
		seen += h->counts[bucket];
		if (seen >= rank)
			break;
	}
	uint64_t value = histogram_bucket_high(bucket);
	if (value > h->max)
		value = h->max;
	if (value < h->min)
		value = h->min;
	*out = value;
	return LUMEN_OK;
}

double histogram_mean(const struct histogram *h)
{
	if (h->total == 0)
		return 0.0;
	return (double)h->sum / (double)h->total;
}
