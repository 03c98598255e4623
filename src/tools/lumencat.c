/*
 * lumencat — export a database as LDIF that lumenadd loads back.
 *
 *   lumencat -f slapd.conf [-b SUFFIX | -n N] [-l FILE] [-a FILTER]
 *
 * Parents come before their children: the tree is walked depth-first from
 * each suffix entry through dn2id (entry IDs alone would not do: a subtree
 * moved under a newer parent has children older than it). Every entry is
 * written with its current DN (the tree's, see backend.h), all its
 * attributes, operational ones included, so lumenadd keeps entryUUID,
 * entryCSN and the timestamps.
 *
 * Safe while lumend serves the database: one read-only LMDB snapshot, no
 * lock (db_lock.h is for writers), nothing written.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arena.h"
#include "entry.h"
#include "filter.h"
#include "ldif.h"
#include "lumen_error.h"
#include "mdb_store.h"
#include "tools.h"

struct cat_args {
	struct tool_target target;     /* first: tool_main reads it */
	const char *filter_text;
};

struct exporter {
	const struct schema *schema;
	struct mdb_store *store;
	MDB_txn *txn;
	FILE *out;
	struct filter filter;           /* root NULL: every entry */
	struct ldif_attribute_value *lines;
	size_t cap_lines;
	uint64_t written;
	char *err;
	size_t errlen;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: lumencat -f slapd.conf | -F slapd.d [-b SUFFIX | -n N] [-l FILE] [-a FILTER]\n"
		"       lumencat -V | --help\n"
		"  -f FILE     the server's configuration\n"
		"  -F DIR      or OpenLDAP's cn=config directory (lumend -F)\n"
		"  -b SUFFIX   export the database holding SUFFIX, from SUFFIX down\n"
		"  -n N        export the N-th database section\n"
		"  -l FILE     write to FILE (default: standard output)\n"
		"  -a FILTER   only entries matching the RFC 4515 FILTER\n"
		"Safe to run while lumend serves the database.\n");
}

static int parse_args(int argc, char **argv, void *args)
{
	struct cat_args *a = args;
	int opt;
	memset(a, 0, sizeof(*a));
	while ((opt = tool_getopt(argc, argv, "f:F:b:n:l:a:", &a->target)) != -1) {
		if (opt != 'a')
			return LUMEN_EINVAL;
		a->filter_text = optarg;
	}
	return optind == argc ? LUMEN_OK : LUMEN_EINVAL;
}

/* Flattens e's attributes into LDIF lines (the exporter's reusable array). */
static int entry_to_record(struct exporter *x, const struct entry *e, struct ldif_record *rec)
{
	size_t n = 0;
	for (size_t i = 0; i < e->n_attributes; i++)
		n += e->attributes[i].n_values;
	if (n > x->cap_lines) {
		struct ldif_attribute_value *bigger = realloc(x->lines, n * sizeof(*bigger));
		if (bigger == NULL)
			return LUMEN_ENOMEM;
		x->lines = bigger;
		x->cap_lines = n;
	}
	n = 0;
	for (size_t i = 0; i < e->n_attributes; i++) {
		const struct entry_attribute *a = &e->attributes[i];
		for (size_t v = 0; v < a->n_values; v++) {
			x->lines[n].description = a->name;
			x->lines[n].value = a->values[v].value;
			n++;
		}
	}
	memset(rec, 0, sizeof(*rec));
	rec->kind = LDIF_CONTENT;
	rec->dn = e->dn;
	rec->attributes = x->lines;
	rec->n_attributes = n;
	return LUMEN_OK;
}

/* Filters and writes one entry (tool_walk callback). */
static int export_entry(void *ctx, uint64_t id, const struct entry *e)
{
	struct exporter *x = ctx;
	struct ldif_record rec;

	if (x->filter.root != NULL && filter_evaluate(&x->filter, e) != FILTER_TRUE)
		return LUMEN_OK;
	int rc = entry_to_record(x, e, &rec);
	if (rc == LUMEN_OK)
		rc = ldif_write_record(x->out, &rec);
	if (rc == LUMEN_OK)
		x->written++;
	else
		tool_error(x->err, x->errlen, "writing entry %llu: %s", (unsigned long long)id,
			   rc == LUMEN_EIO ? strerror(errno) : lumen_strerror(rc));
	return rc;
}

static int compile_filter(struct exporter *x, const char *text, struct arena *arena)
{
	struct ldap_filter *parsed = NULL;
	size_t offset = 0;
	int rc = filter_text_parse(text, strlen(text), arena, NULL, &parsed, &offset);
	if (rc == LUMEN_OK)
		rc = filter_compile(x->schema, parsed, NULL, arena, &x->filter);
	if (rc != LUMEN_OK)
		tool_error(x->err, x->errlen, "-a \"%s\": bad filter near byte %zu (%s)", text, offset,
			 lumen_strerror(rc));
	return rc;
}

static int run(void *args, struct tool_database *t, FILE *out, char *err, size_t errlen)
{
	const struct cat_args *a = args;
	struct exporter x = { .schema = t->config->schema, .out = out, .err = err,
			      .errlen = errlen };
	struct mdb_store_options o = {
		.directory = t->db->directory, .maxsize = (size_t)t->db->maxsize,
		.maxreaders = t->db->maxreaders, .read_only = true,
	};
	struct arena filter_arena;
	double start = tool_now();

	arena_init(&filter_arena, 0);
	int rc = a->filter_text != NULL ? compile_filter(&x, a->filter_text, &filter_arena)
					: LUMEN_OK;
	if (rc == LUMEN_OK)
		rc = mdb_store_open(&o, &x.store, err, errlen);
	if (rc == LUMEN_OK) {
		rc = mdb_store_map_error(mdb_txn_begin(x.store->env, NULL, MDB_RDONLY, &x.txn));
		if (rc != LUMEN_OK)
			tool_error(err, errlen, "%s: cannot read: %s", t->db->directory,
				 lumen_strerror(rc));
	}
	if (rc == LUMEN_OK) {
		struct tool_walk walk = {
			.schema = x.schema, .store = x.store, .txn = x.txn, .fn = export_entry,
			.ctx = &x, .err = err, .errlen = errlen,
		};
		rc = tool_walk_tree(&walk, a->target.suffix);
	}
	if (rc == LUMEN_OK && fflush(out) != 0) {
		tool_error(err, errlen, "writing the output: %s", strerror(errno));
		rc = LUMEN_EIO;
	}
	if (x.txn != NULL)
		mdb_txn_abort(x.txn);
	mdb_store_close(x.store);
	if (rc == LUMEN_OK)
		tool_print_summary(stderr, "exported", x.written, tool_now() - start, NULL);
	free(x.lines);
	arena_free(&filter_arena);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct tool_program program = {
		"lumencat", usage, parse_args, "w", run,
	};
	struct cat_args a;
	return tool_main(&program, &a, argc, argv);
}
