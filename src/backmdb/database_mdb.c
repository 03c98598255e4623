/*
 * database_mdb.c — back-mdb behind the database interface (database.h):
 * the table of operations over a struct backend, its figures for
 * cn=Monitor and /metrics (LMDB's own numbers stay in this layer), and
 * reads of its change history (journal.h).
 */
#include "backend_internal.h"

#include "journal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct backend *backend_of(struct database *db)
{
	return db->impl;
}

static int mdb_db_search(struct database *db, struct backend_op *op, struct backend_search *s)
{
	return backend_search(backend_of(db), op, s);
}

static int mdb_db_fetch(struct database *db, struct backend_op *op, struct ber_view ndn,
		     backend_entry_fn fn, void *ctx)
{
	return backend_fetch(backend_of(db), op, ndn, fn, ctx);
}

static int mdb_db_fetch_ids(struct database *db, struct backend_op *op, const uint64_t *ids,
			    size_t n, bool want_counts, backend_entry_fn fn, void *ctx)
{
	return backend_fetch_ids(backend_of(db), op, ids, n, want_counts, fn, ctx);
}

static int mdb_db_compare(struct database *db, struct backend_op *op, struct ber_view ndn,
		       struct ber_view attribute, struct ber_view value)
{
	return backend_compare(backend_of(db), op, ndn, attribute, value);
}

static int mdb_db_add(struct database *db, struct backend_op *op, struct ber_view dn,
		   struct ber_view ndn, const struct ldap_attribute *attributes, size_t n)
{
	return backend_add(backend_of(db), op, dn, ndn, attributes, n);
}

static int mdb_db_delete(struct database *db, struct backend_op *op, struct ber_view ndn)
{
	return backend_delete(backend_of(db), op, ndn);
}

static int mdb_db_modify(struct database *db, struct backend_op *op, struct ber_view ndn,
		      const struct ldap_change *changes, size_t n)
{
	return backend_modify(backend_of(db), op, ndn, changes, n);
}

static int mdb_db_modrdn(struct database *db, struct backend_op *op, struct ber_view ndn,
		      struct ber_view new_rdn, bool delete_old_rdn, bool has_new_superior,
		      struct ber_view new_superior_ndn)
{
	return backend_modrdn(backend_of(db), op, ndn, new_rdn, delete_old_rdn,
			      has_new_superior, new_superior_ndn);
}

/*
 * mdb_reader_list prints a header and one line per reader slot; a slot
 * whose line ends in "-" holds a reset transaction (MDB_NOTLS workers keep
 * theirs), so only the others pin a snapshot.
 */
static int count_active_reader(const char *line, void *ctx)
{
	size_t len = strlen(line);
	while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == ' '))
		len--;
	bool header = strstr(line, "pid") != NULL || line[0] == '(';
	if (!header && len > 0 && line[len - 1] != '-')
		(*(uint64_t *)ctx)++;
	return 0;
}

/* The LMDB part of out; LUMEN_ELIMIT (no reader slot), LUMEN_EIO. */
static int store_figures(struct mdb_store *store, struct database_figures *out)
{
	MDB_envinfo info;
	MDB_stat env_stat, table_stat;
	MDB_txn *txn = NULL;
	int rc = mdb_env_info(store->env, &info);
	if (rc == 0)
		rc = mdb_env_stat(store->env, &env_stat);
	if (rc == 0)
		rc = mdb_txn_begin(store->env, NULL, MDB_RDONLY, &txn);
	if (rc == 0)
		rc = mdb_stat(txn, store->id2entry, &table_stat);
	if (txn != NULL)
		mdb_txn_abort(txn);
	if (rc != 0)
		return mdb_store_map_error(rc);
	out->map_size = info.me_mapsize;
	out->page_size = env_stat.ms_psize;
	out->pages_used = (uint64_t)info.me_last_pgno + 1;
	/* Our own short transaction has ended: it is not counted. */
	out->readers_used = 0;
	if (mdb_reader_list(store->env, count_active_reader, &out->readers_used) < 0)
		out->readers_used = info.me_numreaders;
	out->readers_max = info.me_maxreaders;
	out->entries = table_stat.ms_entries;
	out->have_store = true;
	return LUMEN_OK;
}


static void mdb_db_figures(struct database *db, struct database_figures *out)
{
	struct backend *be = backend_of(db);
	struct backend_stats bs;
	/* a store that cannot be read now just leaves its part out */
	if (store_figures(be->store, out) != LUMEN_OK)
		out->have_store = false;
	backend_get_stats(be, &bs);
	out->entry_cache = (struct cache_figures){
		.size = bs.entry_cache_size, .capacity = bs.entry_cache_capacity,
		.hits = bs.entry_cache_hits, .misses = bs.entry_cache_misses,
		.evictions = bs.entry_cache_evictions, .not_admitted = bs.entry_cache_not_admitted,
	};
	out->idl_cache = (struct cache_figures){
		.size = bs.idl_cache_size, .capacity = bs.idl_cache_capacity,
		.hits = bs.idl_cache_hits, .misses = bs.idl_cache_misses,
		.evictions = bs.idl_cache_evictions, .not_admitted = bs.idl_cache_not_admitted,
	};
	out->partial_reads = bs.partial_reads;
	out->writes = bs.writes;
	out->commits = bs.commits;
	out->normalizing_on_read = bs.normalizing_on_read;
}

static size_t mdb_db_unbuilt_indexes(struct database *db, const char **names, size_t max)
{
	return backend_unbuilt_indexes(backend_of(db), names, max);
}

static int mdb_db_journal_read(struct database *db, struct ber_view after_csn,
			       database_journal_fn fn, void *ctx)
{
	struct backend *be = backend_of(db);
	struct backend_reader *rd = NULL;
	int rc = backend_reader_acquire(be, &rd);
	if (rc != LUMEN_OK)
		return rc;
	rc = journal_walk(be->store, rd->reader.txn, after_csn, fn, ctx);
	backend_reader_release(be, rd);
	return rc;
}

/* A database_group is back-mdb's write_group. */
static int mdb_db_group_begin(struct database *db, const struct backend_op *op,
			      struct database_group **out)
{
	struct backend *be = backend_of(db);
	*out = NULL;
	if (be->tool_mode || be->read_only || be->batch == NULL)
		return LUMEN_EUNSUPPORTED;
	struct write_group *g = NULL;
	backend_op_waiting(op, true);
	int rc = write_batch_group_begin(be->batch, &g);
	backend_op_waiting(op, false);
	*out = (struct database_group *)g;
	return rc;
}

static int mdb_db_group_end(struct database *db, const struct backend_op *op,
			    struct database_group *group, bool commit)
{
	(void)db;
	backend_op_waiting(op, true);
	int rc = write_group_end((struct write_group *)group, commit);
	backend_op_waiting(op, false);
	return rc;
}

static void mdb_db_close(struct database *db)
{
	backend_close(backend_of(db));
	free(db);
}

static const struct database_ops mdb_db_ops = {
	.search = mdb_db_search,
	.fetch = mdb_db_fetch,
	.fetch_ids = mdb_db_fetch_ids,
	.compare = mdb_db_compare,
	.add = mdb_db_add,
	.delete = mdb_db_delete,
	.modify = mdb_db_modify,
	.modrdn = mdb_db_modrdn,
	.figures = mdb_db_figures,
	.unbuilt_indexes = mdb_db_unbuilt_indexes,
	.journal_read = mdb_db_journal_read,
	.group_begin = mdb_db_group_begin,
	.group_end = mdb_db_group_end,
	.close = mdb_db_close,
};

int mdb_database_open(const struct schema *schema, const struct backend_settings *settings,
		      struct database **out, char *errbuf, size_t errlen)
{
	struct database *db = calloc(1, sizeof(*db));
	struct backend *be = NULL;
	*out = NULL;
	if (db == NULL) {
		if (errbuf != NULL && errlen > 0)
			snprintf(errbuf, errlen, "out of memory");
		return LUMEN_ENOMEM;
	}
	int rc = backend_open(schema, settings, &be, errbuf, errlen);
	if (rc != LUMEN_OK) {
		free(db);
		return rc;
	}
	db->ops = &mdb_db_ops;
	db->impl = be;
	*out = db;
	return LUMEN_OK;
}
