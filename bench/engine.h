/*
 * engine.h — the insides of lumenbench's load engine, shared by client.c
 * (threads, scheduling, phases) and connection.c (one connection's state
 * machine and I/O). Not an interface for anything else: use client.h.
 *
 * Ownership: a bench_thread owns its connections, their buffers and events;
 * everything is allocated before the run and freed after it.
 * Thread-safety: everything here belongs to one client thread, except
 * shared->phase (atomic) and the workload's sequences (atomic).
 * Caveats:
 *  - a connection's slots[] has config->depth entries; a slot is in use
 *    while its operation (both steps of auth) is outstanding.
 */
#ifndef LUMEN_BENCH_ENGINE_H
#define LUMEN_BENCH_ENGINE_H

#include <event2/event.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "arena.h"
#include "ber.h"
#include "client.h"
#include "bench_stats.h"
#include "template.h"

enum bench_phase { PHASE_WARMUP, PHASE_MEASURE, PHASE_STOP };

/* Longest DN an auth search may return; longer ones count as errors. */
#define AUTH_DN_MAX 512

struct bench_shared {
	const struct bench_config *config;
	_Atomic int phase;
};

struct bench_slot {
	bool used;
	uint8_t op;           /* enum bench_op */
	uint8_t step;         /* auth: 0 searching, 1 binding */
	int32_t message_id;
	uint64_t start_ns;
	uint16_t dn_len;      /* auth: DN found by the search */
	char *dn;             /* AUTH_DN_MAX bytes, or NULL when auth is off */
};

enum conn_state { CONN_CLOSED, CONN_WAITING, CONN_CONNECTING, CONN_BINDING,
		  CONN_READY };

struct bench_thread;

/* Longest contextID kept (longer ones are not sent back). */
#define BENCH_VLV_CONTEXT_MAX 64

struct bench_conn {
	struct bench_thread *thread;
	int fd;
	unsigned generation;    /* bumped on every close: detects a replaced socket */
	enum conn_state state;
	struct event *read_event, *write_event, *retry_event;
	uint8_t *in;
	size_t in_len, in_cap;
	struct ber_writer out;
	size_t out_sent;
	int32_t next_message_id;
	int32_t bind_message_id;
	unsigned outstanding;
	bool fresh_op_pending;  /* open for one op: issue it once bound */
	uint64_t fresh_op_start_ns;
	bool idle_listed;
	uint64_t measured_ops;  /* completed inside the measured window */
	struct bench_slot *slots;
	/* The contextID of the last VLV response on this socket (--vlv-context). */
	uint8_t vlv_context[BENCH_VLV_CONTEXT_MAX];
	size_t vlv_context_len;
	bool has_vlv_context;
};

struct bench_thread {
	unsigned index;
	struct bench_shared *shared;
	struct event_base *base;
	struct event *tick_event;
	struct bench_conn *conns;
	unsigned n_conns;
	struct bench_draw draw;       /* fills templates */
	struct bench_draw chooser;    /* picks op kinds and churn; always random */
	struct bench_stats *stats;
	struct arena scratch;         /* a search's parsed filter, per request */
	bool stopping;
	uint64_t drain_deadline_ns;
	/* fixed rate: */
	uint64_t interval_ns;
	uint64_t next_due_ns;
	struct bench_conn **idle;
	unsigned n_idle;
	int rc;                       /* first fatal error of the thread */
};

uint64_t bench_now_ns(void);

/* connection.c */
int conn_setup(struct bench_conn *c, struct bench_thread *t);
void conn_teardown(struct bench_conn *c);
void conn_open(struct bench_conn *c);
/* Start one operation now (start_ns is its latency origin). */
void conn_issue(struct bench_conn *c, uint64_t start_ns);
/* Write what conn_issue queued (no-op while not connected). */
void conn_send(struct bench_conn *c);
/* Say goodbye politely (unbind) and close. */
void conn_finish(struct bench_conn *c);
/* Churn: unbind, close, connect again; with_op issues one op (started at
 * start_ns) as soon as the new connection is bound. */
void conn_reopen(struct bench_conn *c, bool with_op, uint64_t start_ns);

/* client.c: what connection.c calls back into */
void thread_conn_ready(struct bench_thread *t, struct bench_conn *c);
void thread_op_done(struct bench_thread *t, struct bench_conn *c);
bool thread_measuring(const struct bench_thread *t);

#endif
