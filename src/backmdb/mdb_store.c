/*
 * mdb_store.c — environment, named tables, entry IDs and reusable read
 * transactions (mdb_store.h).
 */
#include "mdb_store.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* MDB_INTEGERKEY keys are size_t; our IDs are uint64_t: they must agree. */
_Static_assert(sizeof(size_t) == sizeof(uint64_t), "entry IDs need a 64-bit size_t");

/* The fixed tables; index tables come on top of these. */
#define FIXED_TABLES 7
#define INDEX_TABLE_PREFIX "index:"

static const char meta_version_key[] = "version";
static const char meta_next_id_key[] = "next_id";
static const char meta_names_current_key[] = "names_current";

int mdb_store_last_key(MDB_txn *txn, MDB_dbi dbi, uint64_t *id)
{
	MDB_cursor *cursor;
	MDB_val key, data;

	*id = 0;
	int mrc = mdb_cursor_open(txn, dbi, &cursor);
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	mrc = mdb_cursor_get(cursor, &key, &data, MDB_LAST);
	if (mrc == MDB_SUCCESS && key.mv_size == sizeof(*id))
		memcpy(id, key.mv_data, sizeof(*id));
	mdb_cursor_close(cursor);
	return mrc == MDB_NOTFOUND ? LUMEN_OK : mdb_store_map_error(mrc);
}

int mdb_store_map_error(int mdb_rc)
{
	switch (mdb_rc) {
	case MDB_SUCCESS:
		return LUMEN_OK;
	case MDB_MAP_FULL:
		return LUMEN_EFULL;
	case MDB_NOTFOUND:
		return LUMEN_ENOTFOUND;
	case MDB_KEYEXIST:
		return LUMEN_EEXIST;
	case ENOMEM:
		return LUMEN_ENOMEM;
	case MDB_READERS_FULL:
	case MDB_DBS_FULL:
		return LUMEN_ELIMIT;
	case EAGAIN:
	case EBUSY:
		return LUMEN_EBUSY;
	case ENOENT:
		return LUMEN_ENOTFOUND;
	default:
		return LUMEN_EIO;
	}
}

static void set_error(char *errbuf, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_error(char *errbuf, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errbuf == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(errbuf, errlen, fmt, ap);
	va_end(ap);
}

const char *mdb_store_describe(const struct mdb_store *store, int err, char *buf, size_t len)
{
	const char *dir = store ? store->directory : "?";

	switch (err) {
	case LUMEN_EFULL:
		snprintf(buf, len,
			 "database %s is full (maxsize %zu bytes): raise maxsize for this database in slapd.conf",
			 dir, store ? store->maxsize : (size_t)0);
		break;
	case LUMEN_ELIMIT:
		snprintf(buf, len, "database %s: too many concurrent readers or tables (raise maxreaders)",
			 dir);
		break;
	default:
		snprintf(buf, len, "database %s: %s", dir, lumen_strerror(err));
		break;
	}
	return buf;
}

/* A new database: no entry, so every stored DN is current. */
static int mark_new_names_current(struct mdb_store *store, MDB_txn *txn)
{
	MDB_val key = { sizeof(meta_names_current_key) - 1, (void *)meta_names_current_key };
	MDB_val data = { 0, NULL };
	MDB_stat stat;

	int mrc = mdb_stat(txn, store->id2entry, &stat);
	if (mrc != MDB_SUCCESS || stat.ms_entries != 0)
		return mrc;
	return mdb_put(txn, store->meta, &key, &data, 0);
}

static int read_names_current(struct mdb_store *store, MDB_txn *txn)
{
	MDB_val key = { sizeof(meta_names_current_key) - 1, (void *)meta_names_current_key };
	MDB_val data;

	int mrc = mdb_get(txn, store->meta, &key, &data);
	atomic_store(&store->names_current, mrc == MDB_SUCCESS);
	return mrc == MDB_NOTFOUND ? MDB_SUCCESS : mrc;
}

int mdb_store_names_moved(struct mdb_store *store, MDB_txn *txn)
{
	MDB_val key = { sizeof(meta_names_current_key) - 1, (void *)meta_names_current_key };

	atomic_store(&store->names_current, false);
	int mrc = mdb_del(txn, store->meta, &key, NULL);
	return mdb_store_map_error(mrc == MDB_NOTFOUND ? MDB_SUCCESS : mrc);
}

static int check_format_version(struct mdb_store *store, MDB_txn *txn, bool read_only,
				char *errbuf, size_t errlen)
{
	MDB_val key = { sizeof(meta_version_key) - 1, (void *)meta_version_key };
	MDB_val data;
	uint32_t version = MDB_STORE_FORMAT_VERSION;

	int mrc = mdb_get(txn, store->meta, &key, &data);
	if (mrc == MDB_NOTFOUND) {
		if (read_only)
			return LUMEN_OK;
		data.mv_size = sizeof(version);
		data.mv_data = &version;
		mrc = mdb_put(txn, store->meta, &key, &data, 0);
		return mdb_store_map_error(mrc == MDB_SUCCESS ? mark_new_names_current(store, txn)
							      : mrc);
	}
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	if (data.mv_size == sizeof(version))
		memcpy(&version, data.mv_data, sizeof(version));
	if (data.mv_size != sizeof(version) || version < MDB_STORE_FORMAT_OLDEST ||
	    version > MDB_STORE_FORMAT_VERSION) {
		set_error(errbuf, errlen,
			  "database %s has format version %u, this lumend reads %u to %u",
			  store->directory, (unsigned)version, (unsigned)MDB_STORE_FORMAT_OLDEST,
			  (unsigned)MDB_STORE_FORMAT_VERSION);
		return LUMEN_EUNSUPPORTED;
	}
	if (version == MDB_STORE_FORMAT_VERSION || read_only)
		return LUMEN_OK;
	/* it will hold records an older lumend cannot read: say so on disk */
	version = MDB_STORE_FORMAT_VERSION;
	data.mv_size = sizeof(version);
	data.mv_data = &version;
	return mdb_store_map_error(mdb_put(txn, store->meta, &key, &data, 0));
}

/* The journal (journal.h); a read-only open of an older database has none. */
static int open_journal(struct mdb_store *store, MDB_txn *txn, unsigned create)
{
	int mrc = mdb_dbi_open(txn, "journal", create, &store->journal);
	store->has_journal = mrc == MDB_SUCCESS;
	return mrc == MDB_NOTFOUND && create == 0 ? MDB_SUCCESS : mrc;
}

/* The referral objects' IDs; a read-only open of an older database has
 * none (and so no referral object: the schema had no such class). */
static int open_referrals(struct mdb_store *store, MDB_txn *txn, unsigned create)
{
	int mrc = mdb_dbi_open(txn, "referrals", create | MDB_INTEGERKEY, &store->referrals);
	store->has_referrals = mrc == MDB_SUCCESS;
	MDB_stat st;
	if (mrc == MDB_SUCCESS)
		mrc = mdb_stat(txn, store->referrals, &st);
	atomic_store(&store->referrals_listed, mrc == MDB_SUCCESS && st.ms_entries > 0);
	return mrc == MDB_NOTFOUND && create == 0 ? MDB_SUCCESS : mrc;
}

static int open_fixed_tables(struct mdb_store *store, bool read_only, char *errbuf, size_t errlen)
{
	MDB_txn *txn = NULL;
	unsigned create = read_only ? 0 : MDB_CREATE;
	int rc;

	int mrc = mdb_txn_begin(store->env, NULL, read_only ? MDB_RDONLY : 0, &txn);
	if (mrc == MDB_SUCCESS)
		mrc = mdb_dbi_open(txn, "id2entry", create | MDB_INTEGERKEY, &store->id2entry);
	if (mrc == MDB_SUCCESS)
		mrc = mdb_dbi_open(txn, "dn2id", create | MDB_INTEGERKEY | MDB_DUPSORT, &store->dn2id);
	if (mrc == MDB_SUCCESS)
		mrc = mdb_dbi_open(txn, "id2name", create | MDB_INTEGERKEY, &store->id2name);
	if (mrc == MDB_SUCCESS)
		mrc = mdb_dbi_open(txn, "subcount", create | MDB_INTEGERKEY, &store->subcount);
	if (mrc == MDB_SUCCESS)
		mrc = mdb_dbi_open(txn, "meta", create, &store->meta);
	if (mrc == MDB_SUCCESS)
		mrc = open_journal(store, txn, create);
	if (mrc == MDB_SUCCESS)
		mrc = open_referrals(store, txn, create);
	if (mrc != MDB_SUCCESS) {
		rc = mdb_store_map_error(mrc);
		set_error(errbuf, errlen, "database %s: cannot open tables: %s", store->directory,
			  mdb_strerror(mrc));
		goto fail;
	}
	rc = check_format_version(store, txn, read_only, errbuf, errlen);
	if (rc == LUMEN_OK)
		rc = mdb_store_map_error(read_names_current(store, txn));
	if (rc != LUMEN_OK) {
		if (errbuf != NULL && errlen > 0 && errbuf[0] == '\0')
			set_error(errbuf, errlen, "database %s: cannot read its format version: %s",
				  store->directory, lumen_strerror(rc));
		goto fail;
	}
	mrc = mdb_txn_commit(txn);
	txn = NULL;
	if (mrc != MDB_SUCCESS) {
		rc = mdb_store_map_error(mrc);
		set_error(errbuf, errlen, "database %s: cannot create tables: %s", store->directory,
			  mdb_strerror(mrc));
		goto fail;
	}
	return LUMEN_OK;
fail:
	if (txn != NULL)
		mdb_txn_abort(txn);
	return rc;
}

static int configure_env(struct mdb_store *store, const struct mdb_store_options *options)
{
	unsigned maxreaders = options->maxreaders ? options->maxreaders : MDB_STORE_DEFAULT_MAXREADERS;
	int mrc = mdb_env_create(&store->env);

	if (mrc == MDB_SUCCESS)
		mrc = mdb_env_set_mapsize(store->env, store->maxsize);
	if (mrc == MDB_SUCCESS)
		mrc = mdb_env_set_maxreaders(store->env, maxreaders);
	if (mrc == MDB_SUCCESS)
		mrc = mdb_env_set_maxdbs(store->env, (MDB_dbi)(FIXED_TABLES + store->max_indexes));
	return mrc;
}

/* Stores are told apart by serial, never by address (dn2id's lookup memo). */
static atomic_uint_fast64_t next_store_serial;

int mdb_store_open(const struct mdb_store_options *options, struct mdb_store **out,
		   char *errbuf, size_t errlen)
{
	struct mdb_store *store = NULL;
	struct stat st;
	int rc;

	*out = NULL;
	if (options == NULL || options->directory == NULL || options->directory[0] == '\0') {
		set_error(errbuf, errlen, "database has no directory");
		return LUMEN_EINVAL;
	}
	if (stat(options->directory, &st) != 0 || !S_ISDIR(st.st_mode)) {
		set_error(errbuf, errlen, "database directory %s does not exist", options->directory);
		return LUMEN_ENOTFOUND;
	}
	store = calloc(1, sizeof(*store));
	if (store == NULL)
		return LUMEN_ENOMEM;
	pthread_mutex_init(&store->index_lock, NULL);
	store->serial = atomic_fetch_add(&next_store_serial, 1) + 1;
	store->maxsize = options->maxsize ? options->maxsize : MDB_STORE_DEFAULT_MAXSIZE;
	store->dbnosync = options->dbnosync;
	store->max_indexes = options->maxindexes ? options->maxindexes : MDB_STORE_DEFAULT_MAXINDEXES;
	store->directory = strdup(options->directory);
	store->indexes = calloc(store->max_indexes, sizeof(*store->indexes));
	if (store->directory == NULL || store->indexes == NULL) {
		rc = LUMEN_ENOMEM;
		goto fail;
	}
	int mrc = configure_env(store, options);
	if (mrc == MDB_SUCCESS) {
		unsigned flags = MDB_NOTLS | (options->dbnosync ? MDB_NOSYNC : 0) |
				 (options->read_only ? MDB_RDONLY : 0);
		mrc = mdb_env_open(store->env, options->directory, flags, 0600);
	}
	if (mrc != MDB_SUCCESS) {
		rc = mdb_store_map_error(mrc);
		set_error(errbuf, errlen, "database %s: cannot open environment: %s",
			  options->directory, mdb_strerror(mrc));
		goto fail;
	}
	rc = open_fixed_tables(store, options->read_only, errbuf, errlen);
	if (rc != LUMEN_OK)
		goto fail;
	*out = store;
	return LUMEN_OK;
fail:
	mdb_store_close(store);
	return rc;
}

void mdb_store_close(struct mdb_store *store)
{
	if (store == NULL)
		return;
	if (store->env != NULL)
		mdb_env_close(store->env);
	pthread_mutex_destroy(&store->index_lock);
	free(store->indexes);
	free(store->directory);
	free(store);
}

static int open_index_table(struct mdb_store *store, const char *name, MDB_dbi *out)
{
	char table[sizeof(INDEX_TABLE_PREFIX) + MDB_STORE_INDEX_NAME_MAX];
	unsigned env_flags = 0;
	MDB_txn *txn = NULL;

	mdb_env_get_flags(store->env, &env_flags);
	bool read_only = (env_flags & MDB_RDONLY) != 0;
	snprintf(table, sizeof(table), INDEX_TABLE_PREFIX "%s", name);
	int mrc = mdb_txn_begin(store->env, NULL, read_only ? MDB_RDONLY : 0, &txn);
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	mrc = mdb_dbi_open(txn, table,
			   (read_only ? 0 : MDB_CREATE) | MDB_DUPSORT | MDB_DUPFIXED | MDB_INTEGERDUP,
			   out);
	if (mrc != MDB_SUCCESS) {
		mdb_txn_abort(txn);
		return mdb_store_map_error(mrc);
	}
	return mdb_store_map_error(mdb_txn_commit(txn));
}

int mdb_store_index_open(struct mdb_store *store, const char *name, MDB_dbi *out)
{
	size_t len = name ? strlen(name) : 0;
	int rc = LUMEN_OK;

	if (len == 0 || len > MDB_STORE_INDEX_NAME_MAX)
		return LUMEN_EINVAL;
	pthread_mutex_lock(&store->index_lock);
	for (size_t i = 0; i < store->n_indexes; i++) {
		if (strcmp(store->indexes[i].name, name) == 0) {
			*out = store->indexes[i].dbi;
			goto done;
		}
	}
	if (store->n_indexes == store->max_indexes) {
		rc = LUMEN_ELIMIT;
		goto done;
	}
	struct mdb_store_index *slot = &store->indexes[store->n_indexes];
	rc = open_index_table(store, name, &slot->dbi);
	if (rc != LUMEN_OK)
		goto done;
	atomic_fetch_add(&store->tables_opened, 1);
	memcpy(slot->name, name, len + 1);
	store->n_indexes++;
	*out = slot->dbi;
done:
	pthread_mutex_unlock(&store->index_lock);
	return rc;
}

int mdb_store_index_exists(struct mdb_store *store, const char *name, bool *exists)
{
	char table[sizeof(INDEX_TABLE_PREFIX) + MDB_STORE_INDEX_NAME_MAX];
	size_t len = name ? strlen(name) : 0;
	MDB_txn *txn = NULL;
	MDB_dbi dbi;

	if (len == 0 || len > MDB_STORE_INDEX_NAME_MAX)
		return LUMEN_EINVAL;
	snprintf(table, sizeof(table), INDEX_TABLE_PREFIX "%s", name);
	int mrc = mdb_txn_begin(store->env, NULL, MDB_RDONLY, &txn);
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	mrc = mdb_dbi_open(txn, table, 0, &dbi);
	mdb_txn_abort(txn);
	if (mrc != MDB_SUCCESS && mrc != MDB_NOTFOUND)
		return mdb_store_map_error(mrc);
	*exists = mrc == MDB_SUCCESS;
	return LUMEN_OK;
}

/* meta key of an index table's built kinds: "index-kinds:" + name */
static int index_kinds_key(const char *name, char *buf, size_t len, MDB_val *key)
{
	size_t n = name ? strlen(name) : 0;
	if (n == 0 || n > MDB_STORE_INDEX_NAME_MAX)
		return LUMEN_EINVAL;
	int w = snprintf(buf, len, "index-kinds:%s", name);
	key->mv_size = (size_t)w;
	key->mv_data = buf;
	return LUMEN_OK;
}

int mdb_store_index_kinds(struct mdb_store *store, const char *name, unsigned *kinds,
			  bool *found)
{
	char buf[16 + MDB_STORE_INDEX_NAME_MAX];
	MDB_val key, data;
	MDB_txn *txn = NULL;
	uint32_t value;

	int rc = index_kinds_key(name, buf, sizeof(buf), &key);
	if (rc != LUMEN_OK)
		return rc;
	int mrc = mdb_txn_begin(store->env, NULL, MDB_RDONLY, &txn);
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	mrc = mdb_get(txn, store->meta, &key, &data);
	*found = mrc == MDB_SUCCESS && data.mv_size == sizeof(value);
	if (*found) {
		memcpy(&value, data.mv_data, sizeof(value));
		*kinds = value;
	}
	mdb_txn_abort(txn);
	return mrc == MDB_SUCCESS || mrc == MDB_NOTFOUND ? LUMEN_OK : mdb_store_map_error(mrc);
}

int mdb_store_set_index_kinds(struct mdb_store *store, MDB_txn *txn, const char *name,
			      unsigned kinds)
{
	char buf[16 + MDB_STORE_INDEX_NAME_MAX];
	MDB_val key, data;
	MDB_txn *own = NULL;
	uint32_t value = kinds;

	int rc = index_kinds_key(name, buf, sizeof(buf), &key);
	if (rc != LUMEN_OK)
		return rc;
	if (txn == NULL) {
		int mrc = mdb_txn_begin(store->env, NULL, 0, &own);
		if (mrc != MDB_SUCCESS)
			return mdb_store_map_error(mrc);
	}
	data.mv_size = sizeof(value);
	data.mv_data = &value;
	int mrc = mdb_put(txn ? txn : own, store->meta, &key, &data, 0);
	if (own != NULL) {
		if (mrc == MDB_SUCCESS)
			mrc = mdb_txn_commit(own);
		else
			mdb_txn_abort(own);
	}
	return mdb_store_map_error(mrc);
}

int mdb_store_is_empty(struct mdb_store *store, bool *empty)
{
	MDB_txn *txn = NULL;
	MDB_stat st;

	int mrc = mdb_txn_begin(store->env, NULL, MDB_RDONLY, &txn);
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	mrc = mdb_stat(txn, store->id2entry, &st);
	mdb_txn_abort(txn);
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	*empty = st.ms_entries == 0;
	return LUMEN_OK;
}

int mdb_store_next_id(struct mdb_store *store, MDB_txn *txn, uint64_t *id)
{
	MDB_val key = { sizeof(meta_next_id_key) - 1, (void *)meta_next_id_key };
	MDB_val data;
	uint64_t next = 1;

	int mrc = mdb_get(txn, store->meta, &key, &data);
	if (mrc == MDB_SUCCESS && data.mv_size == sizeof(next))
		memcpy(&next, data.mv_data, sizeof(next));
	else if (mrc != MDB_NOTFOUND && mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	uint64_t following = next + 1;
	data.mv_size = sizeof(following);
	data.mv_data = &following;
	mrc = mdb_put(txn, store->meta, &key, &data, 0);
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	*id = next;
	return LUMEN_OK;
}

int mdb_store_sync(struct mdb_store *store)
{
	return mdb_store_map_error(mdb_env_sync(store->env, 1));
}

void mdb_reader_init(struct mdb_reader *reader, struct mdb_store *store)
{
	memset(reader, 0, sizeof(*reader));
	reader->store = store;
}

/* The parked snapshot is the newest commit and knows every table opened:
 * nothing to renew. */
static bool parked_is_newest(const struct mdb_reader *reader)
{
	MDB_envinfo info;
	return atomic_load(&reader->store->tables_opened) == reader->tables_known &&
	       mdb_env_info(reader->store->env, &info) == MDB_SUCCESS &&
	       (uint64_t)info.me_last_txnid == (uint64_t)mdb_txn_id(reader->txn);
}

int mdb_reader_begin(struct mdb_reader *reader)
{
	int mrc;

	if (reader->parked) {
		reader->parked = false;
		if (parked_is_newest(reader))
			return LUMEN_OK;
		mdb_reader_end(reader);
	}
	if (reader->active)
		return LUMEN_OK;
	/* Read before the snapshot begins: a table opened after this load
	 * makes the parked snapshot renew, one opened before is in it. */
	reader->tables_known = atomic_load(&reader->store->tables_opened);
	if (reader->txn == NULL)
		mrc = mdb_txn_begin(reader->store->env, NULL, MDB_RDONLY, &reader->txn);
	else
		mrc = mdb_txn_renew(reader->txn);
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	reader->active = true;
	reader->snapshot++;
	return LUMEN_OK;
}

void mdb_reader_end(struct mdb_reader *reader)
{
	reader->parked = false;
	if (!reader->active)
		return;
	mdb_txn_reset(reader->txn);
	reader->active = false;
}

void mdb_reader_park(struct mdb_reader *reader)
{
	if (reader->active && parked_is_newest(reader))
		reader->parked = true;
	else
		mdb_reader_end(reader);
}

bool mdb_reader_older_than(const struct mdb_reader *reader, uint64_t txnid)
{
	return reader->parked && (uint64_t)mdb_txn_id(reader->txn) < txnid;
}

int mdb_reader_refresh(struct mdb_reader *reader)
{
	mdb_reader_end(reader);
	return mdb_reader_begin(reader);
}

void mdb_reader_free(struct mdb_reader *reader)
{
	for (size_t i = 0; i < MDB_READER_KEPT_CURSORS && reader->kept[i].cursor != NULL; i++) {
		mdb_cursor_close(reader->kept[i].cursor);
		reader->kept[i].cursor = NULL;
	}
	if (reader->txn != NULL)
		mdb_txn_abort(reader->txn);
	reader->txn = NULL;
	reader->active = false;
	reader->parked = false;
}

/* Opened in the current snapshot, or renewed into it. */
static MDB_cursor *current_cursor(struct mdb_reader *reader, struct mdb_kept_cursor *k)
{
	if (k->snapshot != reader->snapshot) {
		if (mdb_cursor_renew(reader->txn, k->cursor) != MDB_SUCCESS)
			return NULL;
		k->snapshot = reader->snapshot;
	}
	return k->cursor;
}

MDB_cursor *mdb_reader_cursor(struct mdb_reader *reader, MDB_dbi table)
{
	if (!reader->active)
		return NULL;
	for (size_t i = 0; i < MDB_READER_KEPT_CURSORS; i++) {
		struct mdb_kept_cursor *k = &reader->kept[i];
		if (k->cursor != NULL && k->table == table)
			return current_cursor(reader, k);
		if (k->cursor == NULL) {
			if (mdb_cursor_open(reader->txn, table, &k->cursor) != MDB_SUCCESS) {
				k->cursor = NULL;
				return NULL;
			}
			k->table = table;
			k->snapshot = reader->snapshot;
			return k->cursor;
		}
	}
	return NULL;
}

MDB_cursor *mdb_reader_dn2id_cursor(struct mdb_reader *reader)
{
	return mdb_reader_cursor(reader, reader->store->dn2id);
}
