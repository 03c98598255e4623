/*
 * monitor.c — walking the cn=Monitor tree: scope, entry helpers, the root.
 */
#include "monitor.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "dn.h"
#include "entry.h"
#include "lumen_error.h"
#include "monitor_internal.h"
#include "schema.h"

/* ---------------------------------------------------------------- scope */

/* May a child of ndn be within the scope (or lead to the base)? */
static bool children_reachable(const struct monitor_walk *w, struct ber_view ndn)
{
	if (ber_view_eq(ndn, w->base))
		return w->scope != LDAP_SCOPE_BASE;
	if (dn_is_within(w->base, ndn))
		return true;            /* the base lies further down this branch */
	if (dn_is_within(ndn, w->base))
		return w->scope == LDAP_SCOPE_SUBTREE || w->scope == LDAP_SCOPE_CHILDREN;
	return false;
}

/* ---------------------------------------------------------------- nodes */

int monitor_node_open(struct monitor_walk *w, struct monitor_node *node, const char *parent,
		      const char *cn, const char *object_class, bool has_children)
{
	int n;
	memset(node, 0, sizeof(*node));
	if (parent != NULL)
		n = snprintf(node->dn, sizeof(node->dn), "cn=%s,%s", cn, parent);
	else
		n = snprintf(node->dn, sizeof(node->dn), "cn=%s", cn);
	if (n < 0 || (size_t)n >= sizeof(node->dn))
		return LUMEN_ELIMIT;
	struct ber_view dn = { (const uint8_t *)node->dn, (size_t)n };
	int rc = entry_create(w->src->schema, dn, (struct ber_view){ NULL, 0 }, &node->entry);
	if (rc != LUMEN_OK)
		return rc;
	if (ber_view_eq(node->entry->ndn, w->base))
		w->base_found = true;
	node->emit = dn_in_scope(node->entry->ndn, w->base, w->scope);
	node->descend = has_children && children_reachable(w, node->entry->ndn);
	monitor_node_text(node, "objectClass", object_class);
	monitor_node_text(node, "cn", cn);
	monitor_node_text(node, "hasSubordinates", has_children ? "TRUE" : "FALSE");
	return node->rc;
}

void monitor_node_text(struct monitor_node *node, const char *attribute, const char *value)
{
	if (!node->emit || node->rc != LUMEN_OK || value == NULL)
		return;
	node->rc = entry_add_text(node->entry, attribute, value);
}

void monitor_node_number(struct monitor_node *node, const char *attribute, uint64_t value)
{
	monitor_node_printf(node, attribute, "%llu", (unsigned long long)value);
}

void monitor_node_printf(struct monitor_node *node, const char *attribute, const char *fmt, ...)
{
	char text[512];
	va_list ap;
	if (!node->emit || node->rc != LUMEN_OK)
		return;
	va_start(ap, fmt);
	int n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(text)) {
		node->rc = LUMEN_ELIMIT;
		return;
	}
	monitor_node_text(node, attribute, text);
}

void monitor_node_time(struct monitor_node *node, const char *attribute, time_t when)
{
	struct tm tm;
	char text[32];
	if (!node->emit || node->rc != LUMEN_OK)
		return;
	if (gmtime_r(&when, &tm) == NULL ||
	    strftime(text, sizeof(text), "%Y%m%d%H%M%SZ", &tm) == 0) {
		node->rc = LUMEN_EINVAL;
		return;
	}
	monitor_node_text(node, attribute, text);
}

int monitor_node_close(struct monitor_walk *w, struct monitor_node *node)
{
	int rc = node->rc;
	if (rc == LUMEN_OK && node->emit)
		rc = w->fn(w->ctx, node->entry);
	entry_free(node->entry);
	node->entry = NULL;
	return rc;
}

/* ----------------------------------------------------------------- root */

typedef int (*branch_builder)(struct monitor_walk *w, const char *parent);

static const branch_builder branches[] = {
	monitor_build_connections, monitor_build_operations, monitor_build_statistics,
	monitor_build_threads,     monitor_build_time,       monitor_build_waiters,
	monitor_build_listeners,   monitor_build_databases,
};

static int check_sources(const struct monitor_sources *src, enum ldap_scope scope,
			 monitor_entry_fn fn)
{
	if (src == NULL || src->schema == NULL || src->stats == NULL || fn == NULL)
		return LUMEN_EINVAL;
	if (scope != LDAP_SCOPE_BASE && scope != LDAP_SCOPE_ONE && scope != LDAP_SCOPE_SUBTREE &&
	    scope != LDAP_SCOPE_CHILDREN)
		return LUMEN_EINVAL;
	/* Without monitor.schema every entry would fail on its first attribute. */
	static const char probe[] = "monitorServer";
	if (schema_object_class(src->schema, probe, sizeof(probe) - 1) == NULL)
		return LUMEN_EUNSUPPORTED;
	return LUMEN_OK;
}

int monitor_build(const struct monitor_sources *src, struct ber_view base_ndn,
		  enum ldap_scope scope, monitor_entry_fn fn, void *ctx)
{
	struct monitor_node root;
	int rc = check_sources(src, scope, fn);
	if (rc != LUMEN_OK)
		return rc;
	struct monitor_walk w = {
		.src = src, .base = base_ndn, .scope = scope, .fn = fn, .ctx = ctx,
		.now = src->now != 0 ? src->now : time(NULL),
	};
	rc = monitor_node_open(&w, &root, NULL, "Monitor", "monitorServer", true);
	if (rc == LUMEN_OK && !w.base_found && !dn_is_within(base_ndn, root.entry->ndn)) {
		rc = LUMEN_ENOTFOUND;   /* not our tree at all: nothing to walk */
		root.emit = false;
	}
	monitor_node_text(&root, "description",
			  "Figures of this server; counters are operational attributes.");
	monitor_node_text(&root, "monitoredInfo", src->version);
	bool descend = root.descend;
	int close_rc = monitor_node_close(&w, &root);
	if (rc == LUMEN_OK)
		rc = close_rc;
	for (size_t i = 0; rc == LUMEN_OK && descend && i < sizeof(branches) / sizeof(branches[0]);
	     i++)
		rc = branches[i](&w, MONITOR_DN);
	if (rc == LUMEN_OK && !w.base_found)
		rc = LUMEN_ENOTFOUND;
	return rc;
}
