/*
 * report.h — print a lumenbench run as a table, JSON or CSV (bench).
 *
 * The figures: operations per second over the measured window, latency
 * (avg, p50, p90, p99, p99.9, max, in milliseconds, from the histograms),
 * counts by result code (names from ldap_result_codes.h), error counts, the
 * client's own CPU use so a saturated client is visible, and, when asked
 * for with --server-pid, the server's CPU and memory.
 *
 * Ownership: reads what it is given; writes to the stream.
 * Thread-safety: one caller at a time (a static scratch histogram).
 * Caveats: JSON keys and CSV columns are read by bench/report.py; change
 * them together.
 */
#ifndef LUMEN_BENCH_REPORT_H
#define LUMEN_BENCH_REPORT_H

#include <stdio.h>

#include "client.h"

enum report_format { REPORT_TABLE, REPORT_JSON, REPORT_CSV };

struct report_context {
	const char *label;         /* free text naming the run; may be NULL */
	const char *mode;          /* "search", "mix", ... */
	const struct bench_config *config;
	const struct bench_result *result;
};

/* Write the report. LUMEN_EIO if the stream fails. */
int report_write(FILE *out, enum report_format format,
		 const struct report_context *ctx, int csv_header);

#endif
