/*
 * bench_stats.c — per-thread counters and their merge (see bench_stats.h).
 */
#include "bench_stats.h"

#include <string.h>

#include "ldap_result_codes.h"

void bench_stats_init(struct bench_stats *s)
{
	memset(s, 0, sizeof(*s));
	for (unsigned i = 0; i < BENCH_OP_COUNT; i++)
		histogram_init(&s->latency[i]);
}

void bench_stats_merge(struct bench_stats *into, const struct bench_stats *from)
{
	for (unsigned i = 0; i < BENCH_OP_COUNT; i++) {
		histogram_merge(&into->latency[i], &from->latency[i]);
		into->ops[i] += from->ops[i];
		into->failed[i] += from->failed[i];
	}
	for (unsigned i = 0; i < BENCH_RESULT_SLOTS; i++)
		into->results[i] += from->results[i];
	into->completed_total += from->completed_total;
	into->entries += from->entries;
	into->connections_opened += from->connections_opened;
	into->connect_errors += from->connect_errors;
	into->connections_lost += from->connections_lost;
	into->protocol_errors += from->protocol_errors;
	into->lost_ops += from->lost_ops;
	into->encode_errors += from->encode_errors;
	into->auth_no_entry += from->auth_no_entry;
	into->bind_failures += from->bind_failures;
	if (from->conns_counted > 0) {
		if (into->conns_counted == 0 || from->conn_ops_min < into->conn_ops_min)
			into->conn_ops_min = from->conn_ops_min;
		if (from->conn_ops_max > into->conn_ops_max)
			into->conn_ops_max = from->conn_ops_max;
	}
	into->conns_counted += from->conns_counted;
	into->conns_starved += from->conns_starved;
}

void bench_stats_count_conn(struct bench_stats *s, uint64_t measured_ops)
{
	if (s->conns_counted == 0 || measured_ops < s->conn_ops_min)
		s->conn_ops_min = measured_ops;
	if (measured_ops > s->conn_ops_max)
		s->conn_ops_max = measured_ops;
	s->conns_counted++;
	s->conns_starved += measured_ops == 0;
}

unsigned bench_result_slot(int code)
{
	return (code >= 0 && code < BENCH_RESULT_SLOTS - 1) ? (unsigned)code
							    : BENCH_RESULT_SLOTS - 1;
}

int bench_result_is_success(int code)
{
	return code == LDAP_SUCCESS || code == LDAP_COMPARE_TRUE ||
	       code == LDAP_COMPARE_FALSE;
}
