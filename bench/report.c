/*
 * report.c — lumenbench output in three formats (see report.h).
 */
#include "report.h"

#include <inttypes.h>
#include <string.h>

#include "ldap_result_codes.h"
#include "lumen_error.h"

/* A client this busy is probably the bottleneck, not the server. */
#define SATURATED_PERCENT 90.0

struct latency_summary {
	double avg, p50, p90, p99, p999, max;   /* milliseconds */
};

struct totals {
	struct histogram *all;                   /* every op kind merged */
	uint64_t ops, failed, errors;
	double ops_per_second;
	double client_percent;                   /* of one core */
	struct latency_summary latency;
};

static double percentile_ms(const struct histogram *h, double p)
{
	uint64_t v;
	return histogram_percentile(h, p, &v) == LUMEN_OK ? (double)v / 1e6 : 0.0;
}

static struct latency_summary summarize(const struct histogram *h)
{
	return (struct latency_summary){
		.avg = histogram_mean(h) / 1e6,
		.p50 = percentile_ms(h, 50), .p90 = percentile_ms(h, 90),
		.p99 = percentile_ms(h, 99), .p999 = percentile_ms(h, 99.9),
		.max = h->total > 0 ? (double)h->max / 1e6 : 0.0,
	};
}

static void compute_totals(const struct report_context *ctx, struct totals *t,
			   struct histogram *scratch)
{
	const struct bench_stats *s = ctx->result->stats;
	double seconds = ctx->result->measured_seconds;
	histogram_init(scratch);
	t->all = scratch;
	t->ops = t->failed = 0;
	for (unsigned i = 0; i < BENCH_OP_COUNT; i++) {
		histogram_merge(scratch, &s->latency[i]);
		t->ops += s->ops[i];
		t->failed += s->failed[i];
	}
	t->errors = t->failed + s->lost_ops + s->connect_errors + s->protocol_errors +
		    s->encode_errors + s->bind_failures + s->connections_lost;
	t->ops_per_second = seconds > 0 ? (double)t->ops / seconds : 0.0;
	t->client_percent = seconds > 0 ? 100.0 * (ctx->result->client_user_seconds +
				ctx->result->client_system_seconds) / seconds : 0.0;
	t->latency = summarize(scratch);
}

static const char *result_name(unsigned slot)
{
	return slot == BENCH_RESULT_SLOTS - 1 ? "other" : ldap_result_name((int)slot);
}

static void table_latency(FILE *out, const struct latency_summary *l)
{
	fprintf(out, "avg %.3f  p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  max %.3f\n",
		l->avg, l->p50, l->p90, l->p99, l->p999, l->max);
}

static void write_table(FILE *out, const struct report_context *ctx,
			const struct totals *t)
{
	const struct bench_config *cfg = ctx->config;
	const struct bench_result *r = ctx->result;
	const struct bench_stats *s = r->stats;
	fprintf(out, "lumenbench %s%s%s: %u connections, %u thread(s), depth %u",
		ctx->mode, ctx->label ? " " : "", ctx->label ? ctx->label : "",
		cfg->connections, cfg->threads, cfg->depth);
	if (cfg->rate > 0)
		fprintf(out, ", offered %.0f ops/s", cfg->rate);
	if (cfg->reuse_percent < 100)
		fprintf(out, ", connection reuse %u%%", cfg->reuse_percent);
	fprintf(out, "\n  measured        %.2f s after %.2f s warm-up\n",
		r->measured_seconds, cfg->warmup_seconds);
	fprintf(out, "  operations      %" PRIu64 "  (%.1f ops/s)\n", t->ops,
		t->ops_per_second);
	fprintf(out, "  latency (ms)    ");
	table_latency(out, &t->latency);
	for (unsigned i = 0; i < BENCH_OP_COUNT; i++) {
		if (cfg->workload->weights[i] == 0 ||
		    cfg->workload->weights[i] == cfg->workload->weight_total)
			continue;
		struct latency_summary l = summarize(&s->latency[i]);
		fprintf(out, "    %-8s %9" PRIu64 " ops  ", bench_op_name((enum bench_op)i),
			s->ops[i]);
		table_latency(out, &l);
	}
	fprintf(out, "  results        ");
	for (unsigned i = 0; i < BENCH_RESULT_SLOTS; i++)
		if (s->results[i] > 0)
			fprintf(out, " %s %" PRIu64, result_name(i), s->results[i]);
	fprintf(out, "%s\n", t->ops == 0 ? " none" : "");
	fprintf(out, "  errors          failed %" PRIu64 ", lost %" PRIu64
		", connect %" PRIu64 ", dropped %" PRIu64 ", protocol %" PRIu64
		", bind %" PRIu64 ", encode %" PRIu64 ", auth-no-entry %" PRIu64 "\n",
		t->failed, s->lost_ops, s->connect_errors, s->connections_lost,
		s->protocol_errors, s->bind_failures, s->encode_errors, s->auth_no_entry);
	fprintf(out, "  entries         %" PRIu64 "; connections opened %" PRIu64
		"; completed in all phases %" PRIu64 "\n", s->entries,
		s->connections_opened, s->completed_total);
	if (s->conns_counted > 0)
		fprintf(out, "  per connection  ops min %" PRIu64 ", mean %.1f, max %" PRIu64
			"; %" PRIu64 " completed none\n", s->conn_ops_min,
			(double)t->ops / (double)s->conns_counted, s->conn_ops_max,
			s->conns_starved);
	fprintf(out, "  client CPU      user %.2f s, system %.2f s = %.0f%% of one core%s\n",
		r->client_user_seconds, r->client_system_seconds, t->client_percent,
		t->client_percent > SATURATED_PERCENT * cfg->threads
			? "  (client saturated: figures are a lower bound)" : "");
	if (r->server.available)
		fprintf(out, "  server          CPU %.2f s = %.0f%% of one core; VmRSS %"
			PRIu64 " KiB, VmHWM %" PRIu64 " KiB\n", r->server.cpu_seconds,
			100.0 * r->server.cpu_seconds / r->measured_seconds,
			r->server.rss_kib, r->server.hwm_kib);
}

static void json_latency(FILE *out, const struct latency_summary *l)
{
	fprintf(out, "{\"avg\": %.4f, \"p50\": %.4f, \"p90\": %.4f, \"p99\": %.4f, "
		"\"p99_9\": %.4f, \"max\": %.4f}", l->avg, l->p50, l->p90, l->p99,
		l->p999, l->max);
}

/* Labels come from our own command line; escape quotes and backslashes. */
static void json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; s != NULL && *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', out);
		if ((unsigned char)*s >= 0x20)
			fputc(*s, out);
	}
	fputc('"', out);
}

static void json_per_op(FILE *out, const struct report_context *ctx)
{
	const struct bench_stats *s = ctx->result->stats;
	const char *sep = "";
	fprintf(out, "  \"per_op\": {");
	for (unsigned i = 0; i < BENCH_OP_COUNT; i++) {
		if (ctx->config->workload->weights[i] == 0)
			continue;
		struct latency_summary l = summarize(&s->latency[i]);
		fprintf(out, "%s\"%s\": {\"ops\": %" PRIu64 ", \"failed\": %" PRIu64
			", \"latency_ms\": ", sep, bench_op_name((enum bench_op)i),
			s->ops[i], s->failed[i]);
		json_latency(out, &l);
		fputc('}', out);
		sep = ", ";
	}
	fprintf(out, "},\n  \"results\": {");
	sep = "";
	for (unsigned i = 0; i < BENCH_RESULT_SLOTS; i++) {
		if (s->results[i] == 0)
			continue;
		fprintf(out, "%s\"%s\": %" PRIu64, sep, result_name(i), s->results[i]);
		sep = ", ";
	}
	fprintf(out, "},\n");
}

static void write_json(FILE *out, const struct report_context *ctx,
		       const struct totals *t)
{
	const struct bench_config *cfg = ctx->config;
	const struct bench_result *r = ctx->result;
	const struct bench_stats *s = r->stats;
	fprintf(out, "{\n  \"label\": ");
	json_string(out, ctx->label);
	fprintf(out, ",\n  \"mode\": \"%s\",\n  \"connections\": %u,\n  \"threads\": %u,\n"
		"  \"depth\": %u,\n  \"rate\": %.1f,\n  \"reuse\": %u,\n"
		"  \"warmup_s\": %.3f,\n  \"measured_s\": %.3f,\n  \"ops\": %" PRIu64 ",\n"
		"  \"ops_per_s\": %.1f,\n  \"completed_total\": %" PRIu64 ",\n"
		"  \"latency_ms\": ", ctx->mode, cfg->connections, cfg->threads,
		cfg->depth, cfg->rate, cfg->reuse_percent, cfg->warmup_seconds,
		r->measured_seconds, t->ops, t->ops_per_second, s->completed_total);
	json_latency(out, &t->latency);
	fprintf(out, ",\n");
	json_per_op(out, ctx);
	fprintf(out, "  \"errors\": {\"total\": %" PRIu64 ", \"failed\": %" PRIu64
		", \"lost\": %" PRIu64 ", \"connect\": %" PRIu64 ", \"dropped\": %" PRIu64
		", \"protocol\": %" PRIu64 ", \"bind\": %" PRIu64 ", \"encode\": %" PRIu64
		", \"auth_no_entry\": %" PRIu64 "},\n", t->errors, t->failed, s->lost_ops,
		s->connect_errors, s->connections_lost, s->protocol_errors,
		s->bind_failures, s->encode_errors, s->auth_no_entry);
	fprintf(out, "  \"entries\": %" PRIu64 ",\n  \"connections_opened\": %" PRIu64
		",\n  \"client_cpu\": {\"user_s\": %.3f, \"system_s\": %.3f, "
		"\"percent_of_core\": %.1f},\n", s->entries, s->connections_opened,
		r->client_user_seconds, r->client_system_seconds, t->client_percent);
	fprintf(out, "  \"per_connection\": {\"connections\": %" PRIu64 ", \"ops_min\": %"
		PRIu64 ", \"ops_max\": %" PRIu64 ", \"starved\": %" PRIu64 "},\n",
		s->conns_counted, s->conn_ops_min, s->conn_ops_max, s->conns_starved);
	if (r->server.available)
		fprintf(out, "  \"server\": {\"available\": true, \"cpu_s\": %.3f, "
			"\"rss_kib\": %" PRIu64 ", \"hwm_kib\": %" PRIu64 "}\n}\n",
			r->server.cpu_seconds, r->server.rss_kib, r->server.hwm_kib);
	else
		fprintf(out, "  \"server\": {\"available\": false}\n}\n");
}

static void write_csv(FILE *out, const struct report_context *ctx,
		      const struct totals *t, int header)
{
	const struct bench_config *cfg = ctx->config;
	const struct bench_result *r = ctx->result;
	if (header)
		fprintf(out, "label,mode,connections,threads,depth,ops,ops_per_s,"
			"avg_ms,p50_ms,p90_ms,p99_ms,p99_9_ms,max_ms,errors,"
			"client_cpu_pct,server_cpu_s\n");
	/* The label is ours; commas in it would shift columns, so drop them. */
	for (const char *p = ctx->label; p != NULL && *p != '\0'; p++)
		if (*p != ',' && *p != '\n')
			fputc(*p, out);
	fprintf(out, ",%s,%u,%u,%u,%" PRIu64 ",%.1f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%"
		PRIu64 ",%.1f,%.3f\n", ctx->mode, cfg->connections, cfg->threads,
		cfg->depth, t->ops, t->ops_per_second, t->latency.avg, t->latency.p50,
		t->latency.p90, t->latency.p99, t->latency.p999, t->latency.max,
		t->errors, t->client_percent,
		r->server.available ? r->server.cpu_seconds : 0.0);
}

int report_write(FILE *out, enum report_format format,
		 const struct report_context *ctx, int csv_header)
{
	static struct histogram merged;   /* ~38 KiB: keep it off the stack */
	struct totals t;
	compute_totals(ctx, &t, &merged);
	if (format == REPORT_JSON)
		write_json(out, ctx, &t);
	else if (format == REPORT_CSV)
		write_csv(out, ctx, &t, csv_header);
	else
		write_table(out, ctx, &t);
	return fflush(out) == 0 && !ferror(out) ? LUMEN_OK : LUMEN_EIO;
}
