/*
 * monitor_internal.h — the tree walk shared by monitor.c (the walk, the
 * scope and the attribute helpers) and monitor_entries.c (one builder per
 * branch of cn=Monitor). Not a public header.
 *
 * A builder opens a node (the entry for "cn=NAME,PARENT"), adds attributes
 * (the helpers skip the work when the node is out of scope and remember the
 * first error), closes it (handed to the callback if in scope, then freed),
 * and descends into its children only if node.descend says the scope can
 * reach them.
 */
#ifndef LUMEN_MONITOR_INTERNAL_H
#define LUMEN_MONITOR_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "monitor.h"

#define MONITOR_DN_MAX 256

struct monitor_walk {
	const struct monitor_sources *src;
	struct ber_view base;
	enum ldap_scope scope;
	monitor_entry_fn fn;
	void *ctx;
	time_t now;
	bool base_found;
};

struct monitor_node {
	char dn[MONITOR_DN_MAX];     /* user form, the parent of its children */
	struct entry *entry;
	bool emit;                   /* the entry is within the scope */
	bool descend;                /* some child may be within the scope */
	int rc;                      /* first error while filling it */
};

/*
 * Create the entry "cn=CN,PARENT" (PARENT NULL: the entry is "cn=CN") with
 * the structural class and hasSubordinates. LUMEN_ELIMIT (DN too long),
 * LUMEN_ENOMEM, entry_create's errors.
 */
int monitor_node_open(struct monitor_walk *w, struct monitor_node *node, const char *parent,
		      const char *cn, const char *object_class, bool has_children);
void monitor_node_text(struct monitor_node *node, const char *attribute, const char *value);
void monitor_node_number(struct monitor_node *node, const char *attribute, uint64_t value);
void monitor_node_printf(struct monitor_node *node, const char *attribute, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* GeneralizedTime "YYYYMMDDHHMMSSZ". */
void monitor_node_time(struct monitor_node *node, const char *attribute, time_t when);
/* Hand the entry to the callback if in scope, free it. The first error. */
int monitor_node_close(struct monitor_walk *w, struct monitor_node *node);

/* Branch builders (monitor_entries.c): the container and its children. */
int monitor_build_connections(struct monitor_walk *w, const char *parent);
int monitor_build_operations(struct monitor_walk *w, const char *parent);
int monitor_build_statistics(struct monitor_walk *w, const char *parent);
int monitor_build_threads(struct monitor_walk *w, const char *parent);
int monitor_build_time(struct monitor_walk *w, const char *parent);
int monitor_build_waiters(struct monitor_walk *w, const char *parent);
int monitor_build_listeners(struct monitor_walk *w, const char *parent);
int monitor_build_databases(struct monitor_walk *w, const char *parent);

#endif
