/*
 * tool_walk.c — parents-first walk of a database's entries (tools.h).
 *
 * Entry IDs alone would not give parents first: a subtree moved under a
 * newer parent has children older than it. dn2id is the tree, so walk it.
 */
#include "tools.h"

#include <string.h>

#include "arena.h"
#include "dn.h"
#include "dn2id.h"
#include "entry.h"
#include "id2entry.h"
#include "lumen_error.h"
#include "mdb_store.h"

/* Decodes id and gives it its current DN from the tree. */
static int load_entry(struct tool_walk *w, struct arena *scratch, uint64_t id,
		      struct entry **out)
{
	struct ber_view bytes, ndn, dn;
	MDB_txn *txn = w->txn;

	*out = NULL;
	int rc = id2entry_get(w->store, txn, id, &bytes);
	if (rc == LUMEN_OK)
		rc = entry_decode(w->schema, bytes.ptr, bytes.len, scratch, out);
	if (rc == LUMEN_OK)
		rc = dn2id_names(w->store, txn, id, scratch, &ndn, &dn);
	/* renamed above it since it was written: the stored DN is stale */
	if (rc == LUMEN_OK &&
	    (ndn.len != (*out)->ndn.len || memcmp(ndn.ptr, (*out)->ndn.ptr, ndn.len) != 0))
		rc = entry_set_dn(*out, dn, ndn);
	if (rc != LUMEN_OK) {
		tool_error(w->err, w->errlen, "entry %llu: cannot read it: %s",
			   (unsigned long long)id, lumen_strerror(rc));
		entry_free(*out);
		*out = NULL;
	}
	return rc;
}

/* The entry, then each child's subtree. */
static int walk_subtree(void *ctx, uint64_t id)
{
	struct tool_walk *w = ctx;
	struct arena *scratch = w->scratch;
	struct entry *e = NULL;

	arena_reset(scratch);
	int rc = load_entry(w, scratch, id, &e);
	if (rc == LUMEN_OK)
		rc = w->fn(w->ctx, id, e);
	entry_free(e);
	if (rc == LUMEN_OK)
		rc = dn2id_children(w->store, w->txn, id, walk_subtree, w);
	return rc;
}

int tool_walk_tree(struct tool_walk *w, const char *base)
{
	struct arena scratch, base_arena;
	struct ber_view ndn;
	uint64_t id = 0;
	int rc;

	arena_init(&scratch, 0);
	arena_init(&base_arena, 0);
	w->scratch = &scratch;
	if (base == NULL) {   /* every suffix entry: the children of "no parent" */
		rc = dn2id_children(w->store, w->txn, 0, walk_subtree, w);
		goto done;
	}
	rc = dn_normalize(w->schema, base, strlen(base), &base_arena, &ndn);
	if (rc == LUMEN_OK)
		rc = dn2id_lookup(w->store, w->txn, ndn, &id, NULL);
	if (rc == LUMEN_OK)
		rc = walk_subtree(w, id);
	else if (rc == LUMEN_ENOTFOUND)
		rc = LUMEN_OK;   /* nothing there yet */
	else
		tool_error(w->err, w->errlen, "\"%s\": %s", base, lumen_strerror(rc));
done:
	w->scratch = NULL;
	arena_free(&scratch);
	arena_free(&base_arena);
	return rc;
}
