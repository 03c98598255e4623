/*
 * backend.c — opening and closing a back-mdb database, routing by suffix,
 * the pool of reusable readers, and the helpers every operation uses to
 * load entries and report results (backend.h).
 */
#include "backend_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include "dn.h"
#include "id2entry.h"
#include "ldap_result_codes.h"
#include "stored_forms.h"

/* ------------------------------------------------------------ results */

void backend_result(struct backend_op *op, int code, const char *diagnostic)
{
	op->result_code = code;
	op->diagnostic = diagnostic;
}

int backend_filter_matches(const struct backend_op *op, const struct filter *f,
			   const struct entry *e, const struct filter_virtual *virt,
			   struct arena *scratch, bool *match)
{
	struct filter_evaluation how = {
		.virtual = virt, .access = op->filter_access, .scratch = scratch,
	};
	enum filter_result r;
	int rc = filter_test(f, e, &how, &r);
	*match = rc == LUMEN_OK && r == FILTER_TRUE;
	return rc;
}

int backend_filter_exhausted(struct backend_op *op)
{
	backend_result(op, LDAP_ADMIN_LIMIT_EXCEEDED,
		       "evaluating the filter on one entry needs more memory than allowed");
	return LUMEN_ELIMIT;
}

int backend_fail(struct backend *be, struct backend_op *op, int err)
{
	char buf[256];
	char *text = NULL;

	if (err == LUMEN_EBUSY) {
		backend_result(op, LDAP_BUSY, "the database is stopping");
		return err;
	}
	mdb_store_describe(be->store, err, buf, sizeof(buf));
	if (op->arena != NULL)
		text = arena_strndup(op->arena, buf, strlen(buf));
	/* the map-full case must still name the setting if the arena is gone */
	backend_result(op, LDAP_OTHER, text != NULL ? text :
		       err == LUMEN_EFULL ? "database full: raise maxsize" : lumen_strerror(err));
	op->matched_dn = (struct ber_view){ NULL, 0 };
	return err;
}

int backend_no_such_object(struct backend *be, struct backend_op *op, MDB_txn *txn,
			   const struct dn2id_match *m)
{
	backend_result(op, LDAP_NO_SUCH_OBJECT, NULL);
	op->matched_dn = (struct ber_view){ NULL, 0 };
	if (m != NULL && m->id != 0) {
		int rc = dn2id_names(be->store, txn, m->id, op->arena, NULL, &op->matched_dn);
		if (rc != LUMEN_OK)
			return backend_fail(be, op, rc);
	}
	return LUMEN_ENOTFOUND;
}

bool backend_op_abandoned(const struct backend_op *op)
{
	return op->abandoned != NULL && __atomic_load_n(op->abandoned, __ATOMIC_RELAXED);
}

const struct backend_index *backend_index_of(const struct backend *be,
					     const struct attribute_type *type)
{
	if (type == NULL || type->index >= be->n_types)
		return NULL;
	return be->index_by_type[type->index];
}

bool backend_is_suffix(const struct backend *be, struct ber_view ndn)
{
	for (size_t i = 0; i < be->n_suffixes; i++)
		if (ndn.len == be->suffix_ndn[i].len &&
		    memcmp(ndn.ptr, be->suffix_ndn[i].ptr, ndn.len) == 0)
			return true;
	return false;
}

/* ------------------------------------------------------------ routing */

size_t backend_suffix_count(const struct backend *be)
{
	return be->n_suffixes;
}

struct ber_view backend_suffix_dn(const struct backend *be, size_t i)
{
	return i < be->n_suffixes ? be->suffix_dn[i] : (struct ber_view){ NULL, 0 };
}

struct backend *backend_select(struct backend *const *list, size_t n, struct ber_view ndn)
{
	struct backend *best = NULL;
	size_t best_len = 0;

	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; list[i] != NULL && j < list[i]->n_suffixes; j++) {
			struct ber_view suffix = list[i]->suffix_ndn[j];
			bool longer = best == NULL || suffix.len > best_len;
			if (longer && dn_is_within(ndn, suffix)) {
				best = list[i];
				best_len = suffix.len;
			}
		}
	}
	return best;
}

/* ------------------------------------------------------------ readers */

static void reader_free(struct backend_reader *rd)
{
	for (size_t i = 0; i < BACKEND_SCRATCH_IDLS; i++)
		idl_release(&rd->scratch[i]);
	arena_free(&rd->entry_arena);
	mdb_reader_free(&rd->reader);
	free(rd);
}

int backend_reader_acquire(struct backend *be, struct backend_reader **out)
{
	struct backend_reader *rd;

	pthread_mutex_lock(&be->reader_lock);
	rd = be->free_readers;
	if (rd != NULL)
		be->free_readers = rd->next;
	pthread_mutex_unlock(&be->reader_lock);
	if (rd == NULL) {
		rd = calloc(1, sizeof(*rd));
		if (rd == NULL)
			return LUMEN_ENOMEM;
		mdb_reader_init(&rd->reader, be->store);
		for (size_t i = 0; i < BACKEND_SCRATCH_IDLS; i++)
			idl_init(&rd->scratch[i]);
		arena_init(&rd->entry_arena, 0);
	}
	int rc = mdb_reader_begin(&rd->reader);
	if (rc != LUMEN_OK) {
		reader_free(rd);
		return rc;
	}
	rd->scan = false;
	*out = rd;
	return LUMEN_OK;
}

void backend_reader_release(struct backend *be, struct backend_reader *rd)
{
	if (rd == NULL)
		return;
	pthread_mutex_lock(&be->reader_lock);
	mdb_reader_park(&rd->reader);
	rd->next = be->free_readers;
	be->free_readers = rd;
	pthread_mutex_unlock(&be->reader_lock);
}

void backend_readers_committed(struct backend *be, uint64_t txnid)
{
	if (atomic_load_explicit(&be->readers_ended_txn, memory_order_relaxed) >= txnid)
		return;
	atomic_store_explicit(&be->readers_ended_txn, txnid, memory_order_relaxed);
	pthread_mutex_lock(&be->reader_lock);
	for (struct backend_reader *rd = be->free_readers; rd != NULL; rd = rd->next)
		if (mdb_reader_older_than(&rd->reader, txnid))
			mdb_reader_end(&rd->reader);
	pthread_mutex_unlock(&be->reader_lock);
}

/* ------------------------------------------------------------ entries */

/* Puts the entry's DN right if an ancestor was renamed since it was stored. */
static int correct_dn(struct backend *be, MDB_txn *txn, uint64_t id, struct entry *e,
		      struct arena *scratch)
{
	struct ber_view ndn, dn;
	int rc = dn2id_names(be->store, txn, id, scratch, &ndn, &dn);
	if (rc != LUMEN_OK)
		return rc;
	if (ndn.len == e->ndn.len && memcmp(ndn.ptr, e->ndn.ptr, ndn.len) == 0)
		return LUMEN_OK;
	return entry_set_dn(e, dn, ndn);
}

/* backend_load_entry with the attributes `only` selects (NULL: all). */
static int load_selected(struct backend *be, MDB_txn *txn, uint64_t id,
			 const struct entry_selection *only, struct arena *scratch,
			 struct entry **out)
{
	struct ber_view bytes;
	struct entry *e = NULL;

	int rc = id2entry_get(be->store, txn, id, &bytes);
	if (rc == LUMEN_OK)
		rc = entry_decode_selected(be->schema, bytes.ptr, bytes.len, be->trust_normalized,
					   only, scratch, &e);
	/* read after the snapshot began: see mdb_store_names_moved */
	if (rc == LUMEN_OK && !atomic_load(&be->store->names_current))
		rc = correct_dn(be, txn, id, e, scratch);
	if (rc != LUMEN_OK) {
		entry_free(e);
		return rc;
	}
	*out = e;
	return LUMEN_OK;
}

int backend_load_entry(struct backend *be, MDB_txn *txn, uint64_t id, struct arena *scratch,
		       struct entry **out)
{
	return load_selected(be, txn, id, NULL, scratch, out);
}

/* Replaces a cached copy whose DN went stale (a rename above it). */
static int refresh_cached(struct backend *be, MDB_txn *txn, uint64_t id,
			  struct arena *scratch, struct entry_cache_handle **handle)
{
	const struct entry *cached = entry_cache_object(*handle);
	struct ber_view ndn, dn;
	struct entry *copy = NULL;
	uint64_t moved = atomic_load(&be->dn_moved_txn), snapshot = mdb_txn_id(txn);

	/* No rename since this snapshot and the copy's: the DN is current. */
	if (moved <= snapshot && moved <= entry_cache_version(*handle))
		return LUMEN_OK;
	int rc = dn2id_names(be->store, txn, id, scratch, &ndn, &dn);
	if (rc != LUMEN_OK)
		return rc;
	if (ndn.len == cached->ndn.len && memcmp(ndn.ptr, cached->ndn.ptr, ndn.len) == 0) {
		if (moved <= snapshot)
			entry_cache_confirm(*handle, snapshot);
		return LUMEN_OK;
	}
	rc = entry_dup(cached, &copy);
	if (rc == LUMEN_OK)
		rc = entry_set_dn(copy, dn, ndn);
	if (rc != LUMEN_OK) {
		entry_free(copy);
		return rc;
	}
	uint64_t version = mdb_txn_id(txn);
	entry_cache_release(be->entry_cache, *handle);
	*handle = NULL;
	entry_cache_invalidate(be->entry_cache, id, version);
	return entry_cache_insert(be->entry_cache, id, copy, version, handle);
}

int backend_entry_get(struct backend *be, struct backend_reader *rd, uint64_t id,
		      struct arena *scratch, struct entry_cache_handle **handle,
		      const struct entry **entry)
{
	return backend_entry_get_selected(be, rd, id, NULL, scratch, handle, entry);
}

int backend_entry_get_selected(struct backend *be, struct backend_reader *rd, uint64_t id,
			       const struct entry_selection *only, struct arena *scratch,
			       struct entry_cache_handle **handle, const struct entry **entry)
{
	MDB_txn *txn = rd->reader.txn;
	struct entry *e = NULL;
	int rc;

	*handle = NULL;
	if (entry_cache_get(be->entry_cache, id, handle) == LUMEN_OK) {
		rc = refresh_cached(be, txn, id, scratch, handle);
	} else if (only != NULL && (only->n_types == 0 || rd->scan ||
				    !entry_cache_admits(be->entry_cache, id))) {
		/* A read of the DN alone is no sighting: it would make the
		 * operation's next read of the entry look like a second one.
		 * Nor is a scan's read: a scan never teaches the cache. */
		rc = load_selected(be, txn, id, only, scratch, &e);
		if (rc == LUMEN_OK)
			rc = entry_cache_hold(be->entry_cache, id, e, handle);
	} else {
		rc = backend_load_entry(be, txn, id, scratch, &e);
		if (rc == LUMEN_OK && rd->scan)
			rc = entry_cache_insert_scan(be->entry_cache, id, e, mdb_txn_id(txn), handle);
		else if (rc == LUMEN_OK)
			rc = entry_cache_insert(be->entry_cache, id, e, mdb_txn_id(txn), handle);
	}
	if (rc != LUMEN_OK) {
		if (*handle != NULL)
			entry_cache_release(be->entry_cache, *handle);
		*handle = NULL;
		return rc;
	}
	*entry = entry_cache_object(*handle);
	return LUMEN_OK;
}

void backend_entry_put(struct backend *be, struct entry_cache_handle *handle)
{
	if (handle != NULL)
		entry_cache_release(be->entry_cache, handle);
}

static void destroy_cached_entry(void *object, void *ctx)
{
	(void)ctx;
	entry_free(object);
}

/* ------------------------------------------------------------ open */

static int fail_open(char *errbuf, size_t errlen, const char *name, int rc, const char *fmt,
		     const char *what)
{
	if (errbuf != NULL && errlen > 0) {
		char reason[200];
		snprintf(reason, sizeof(reason), fmt, what);
		snprintf(errbuf, errlen, "%s: %s", name, reason);
	}
	return rc;
}

/* A storage failure while opening: which database, what failed, and why. */
static int fail_storage(const struct backend *be, char *errbuf, size_t errlen, int rc,
			const char *what)
{
	if (errbuf != NULL && errlen > 0)
		snprintf(errbuf, errlen, "%s: database %s: %s: %s", be->name, be->store->directory,
			 what, lumen_strerror(rc));
	return rc;
}

static int normalize_suffixes(struct backend *be, const struct backend_settings *st,
			      char *errbuf, size_t errlen)
{
	struct arena scratch;
	int rc = LUMEN_OK;

	if (st->n_suffixes == 0 || st->n_suffixes > BACKEND_MAX_SUFFIXES)
		return fail_open(errbuf, errlen, be->name, LUMEN_EINVAL,
				 "%s", "a database needs 1 to 8 suffixes");
	arena_init(&scratch, 0);
	for (size_t i = 0; i < st->n_suffixes && rc == LUMEN_OK; i++) {
		const char *text = st->suffixes[i];
		struct ber_view ndn;
		rc = dn_normalize(be->schema, text, strlen(text), &scratch, &ndn);
		if (rc != LUMEN_OK || ndn.len == 0) {
			rc = fail_open(errbuf, errlen, be->name, LUMEN_EINVAL,
				       "suffix \"%s\" is not a valid DN", text);
			break;
		}
		char *n = strndup((const char *)ndn.ptr, ndn.len);
		char *u = strdup(text);
		be->suffix_ndn[i] = (struct ber_view){ (const uint8_t *)n, ndn.len };
		be->suffix_dn[i] = (struct ber_view){ (const uint8_t *)u, u ? strlen(u) : 0 };
		be->n_suffixes = i + 1;
		if (n == NULL || u == NULL)
			rc = LUMEN_ENOMEM;
	}
	arena_free(&scratch);
	return rc;
}

size_t backend_unbuilt_indexes(const struct backend *be, const char **names, size_t max)
{
	size_t n = 0;
	for (; n < be->n_unbuilt && n < max; n++)
		names[n] = attribute_type_name(be->unbuilt[n].type);
	return be->n_unbuilt;
}

static unsigned default_kinds(const struct backend_settings *st)
{
	unsigned kinds = 0;
	for (size_t i = 0; i < st->n_indexes; i++)
		if (strcasecmp(st->indexes[i].attribute, "default") == 0)
			kinds = st->indexes[i].kinds;
	return kinds;
}

/*
 * Which of the configured kinds of type's index are complete. An index line
 * added after entries were loaded has no keys for them: an indexed search
 * would miss entries, so until lumenindex builds it those kinds are left
 * out (searched as unindexed) and no empty table is created. In an empty
 * database every kind is complete from the start and is recorded so.
 */
static int built_kinds(struct backend *be, const struct attribute_type *type,
		       unsigned kinds, unsigned *built)
{
	const char *name = attribute_type_name(type);
	bool empty, exists, found;
	unsigned recorded = 0;

	int rc = mdb_store_is_empty(be->store, &empty);
	if (rc != LUMEN_OK)
		return rc;
	if (empty) {
		*built = kinds;
		return mdb_store_set_index_kinds(be->store, NULL, name, kinds);
	}
	/* the tools build what they write; lumenindex records what it rebuilt */
	if (be->tool_mode) {
		*built = kinds;
		return LUMEN_OK;
	}
	rc = mdb_store_index_exists(be->store, name, &exists);
	if (rc != LUMEN_OK)
		return rc;
	if (!exists) {
		*built = 0;
		return LUMEN_OK;
	}
	rc = mdb_store_index_kinds(be->store, name, &recorded, &found);
	if (rc != LUMEN_OK)
		return rc;
	if (found) {
		*built = recorded;
		return LUMEN_OK;
	}
	/* a table from before built kinds were recorded: trust it */
	*built = kinds;
	return mdb_store_set_index_kinds(be->store, NULL, name, kinds);
}

/* Opens the index of type with all its configured kinds (merged). */
static int add_index(struct backend *be, const struct attribute_type *type, unsigned kinds)
{
	struct backend_index *ix;
	if (!be->read_only) {
		unsigned built;
		int rc = built_kinds(be, type, kinds, &built);
		if (rc != LUMEN_OK)
			return rc;
		if ((kinds & ~built) != 0 && be->n_unbuilt < BACKEND_MAX_UNBUILT)
			be->unbuilt[be->n_unbuilt++] = (struct backend_unbuilt){ type, kinds & ~built };
		kinds &= built;
		if (kinds == 0)
			return LUMEN_OK;
	}
	ix = &be->indexes[be->n_indexes];
	ix->type = type;
	ix->kinds = kinds;
	ix->table = (uint32_t)be->n_indexes;
	int rc = mdb_store_index_open(be->store, attribute_type_name(type), &ix->dbi);
	if (rc != LUMEN_OK)
		return rc;
	be->index_by_type[type->index] = ix;
	be->n_indexes++;
	return LUMEN_OK;
}

/* Validates every index line and ORs its kinds into merged[type index]. */
static int merge_index_lines(struct backend *be, const struct backend_settings *st,
			     unsigned *merged, char *errbuf, size_t errlen)
{
	unsigned fallback = default_kinds(st);

	for (size_t i = 0; i < st->n_indexes; i++) {
		const char *name = st->indexes[i].attribute;
		if (strcasecmp(name, "default") == 0)
			continue;
		const struct attribute_type *type = schema_attribute_type(be->schema, name,
									  strlen(name));
		if (type == NULL)
			return fail_open(errbuf, errlen, be->name, LUMEN_EINVAL,
					 "index: unknown attribute type \"%s\"", name);
		unsigned kinds = st->indexes[i].kinds ? st->indexes[i].kinds : fallback;
		if (kinds == 0)
			return fail_open(errbuf, errlen, be->name, LUMEN_EINVAL,
					 "index %s: no index kinds (and no default)", name);
		if ((kinds & (BACKEND_INDEX_EQUALITY | BACKEND_INDEX_APPROX)) &&
		    type->equality == NULL)
			return fail_open(errbuf, errlen, be->name, LUMEN_EINVAL,
					 "index %s: eq/approx need an equality rule", name);
		if ((kinds & BACKEND_INDEX_SUBSTRING) && type->substr == NULL)
			return fail_open(errbuf, errlen, be->name, LUMEN_EINVAL,
					 "index %s: sub needs a substrings rule", name);
		merged[type->index] |= kinds;
	}
	return LUMEN_OK;
}

static int open_indexes(struct backend *be, const struct backend_settings *st,
			char *errbuf, size_t errlen)
{
	be->n_types = schema_attribute_type_count(be->schema);
	be->index_by_type = calloc(be->n_types ? be->n_types : 1, sizeof(*be->index_by_type));
	be->indexes = calloc(st->n_indexes ? st->n_indexes : 1, sizeof(*be->indexes));
	unsigned *merged = calloc(be->n_types ? be->n_types : 1, sizeof(*merged));
	int rc = be->index_by_type == NULL || be->indexes == NULL || merged == NULL
			 ? LUMEN_ENOMEM : merge_index_lines(be, st, merged, errbuf, errlen);

	/* Repeated lines for one type merge: open each index once, in order. */
	for (size_t i = 0; i < st->n_indexes && rc == LUMEN_OK; i++) {
		const char *name = st->indexes[i].attribute;
		const struct attribute_type *type = strcasecmp(name, "default") == 0 ? NULL
			: schema_attribute_type(be->schema, name, strlen(name));
		if (type == NULL || merged[type->index] == 0)
			continue;
		rc = add_index(be, type, merged[type->index]);
		merged[type->index] = 0;
		if (rc != LUMEN_OK) {
			char what[160];
			snprintf(what, sizeof(what), "index %s: cannot open its table", name);
			rc = fail_storage(be, errbuf, errlen, rc, what);
		}
	}
	free(merged);
	return rc;
}
static int resolve_one(const struct schema *s, const char *name,
		       struct attribute_description *ad)
{
	return attribute_description_parse(s, name, strlen(name), ad);
}

static int resolve_operational(struct backend *be, char *errbuf, size_t errlen)
{
	struct backend_operational *o = &be->ops;
	int rc = LUMEN_OK;

	if (rc == LUMEN_OK) rc = resolve_one(be->schema, "objectClass", &o->object_class);
	if (rc == LUMEN_OK) rc = resolve_one(be->schema, "entryUUID", &o->entry_uuid);
	if (rc == LUMEN_OK) rc = resolve_one(be->schema, "entryCSN", &o->entry_csn);
	if (rc == LUMEN_OK) rc = resolve_one(be->schema, "createTimestamp", &o->create_timestamp);
	if (rc == LUMEN_OK) rc = resolve_one(be->schema, "modifyTimestamp", &o->modify_timestamp);
	if (rc == LUMEN_OK) rc = resolve_one(be->schema, "creatorsName", &o->creators_name);
	if (rc == LUMEN_OK) rc = resolve_one(be->schema, "modifiersName", &o->modifiers_name);
	if (rc == LUMEN_OK)
		rc = resolve_one(be->schema, "structuralObjectClass", &o->structural_object_class);
	if (rc != LUMEN_OK)
		return fail_open(errbuf, errlen, be->name, LUMEN_EINVAL, "%s",
				 "the schema lacks the operational attributes of lumen.schema");
	be->alias_class = schema_object_class(be->schema, "alias", 5);
	be->aliased_object_name = schema_attribute_type(be->schema, "aliasedObjectName", 17);
	if (be->alias_class == NULL || be->aliased_object_name == NULL)
		be->alias_class = NULL;   /* without both, nothing is an alias */
	/* Both or neither: a schema without them has no referral objects. */
	be->referral_class = schema_object_class(be->schema, "referral", strlen("referral"));
	be->ref_type = schema_attribute_type(be->schema, "ref", strlen("ref"));
	if (be->ref_type == NULL)
		be->referral_class = NULL;
	return LUMEN_OK;
}

static int open_store(struct backend *be, const struct backend_settings *st,
		      char *errbuf, size_t errlen)
{
	struct mdb_store_options options = {
		.directory = st->directory,
		.maxsize = st->maxsize,
		.maxreaders = st->maxreaders,
		.maxindexes = 0,
		.dbnosync = st->dbnosync,
		.read_only = st->read_only,
	};
	char why[256] = "";

	if (st->directory == NULL)
		return fail_open(errbuf, errlen, be->name, LUMEN_EINVAL, "%s",
				 "no directory configured");
	int rc = mdb_store_open(&options, &be->store, why, sizeof(why));
	if (rc != LUMEN_OK && why[0] == '\0')
		snprintf(why, sizeof(why), "database %s: %s", st->directory, lumen_strerror(rc));
	if (rc != LUMEN_OK)
		return fail_open(errbuf, errlen, be->name, rc, "%s", why);
	return LUMEN_OK;
}

/* Sets suffix_holds_all: a database opened with entries left from another
 * suffix (the configuration changed) keeps checking every scope. A suffix
 * entry whose DN is not a plain lookup away (an error) does too. */
static int count_roots(struct backend *be)
{
	MDB_txn *txn;
	uint64_t roots = 0;

	be->suffix_holds_all = false;
	if (be->n_suffixes != 1)
		return LUMEN_OK;
	int rc = mdb_store_map_error(mdb_txn_begin(be->store->env, NULL, MDB_RDONLY, &txn));
	if (rc != LUMEN_OK)
		return rc;
	rc = dn2id_child_count(be->store, txn, 0, &roots);
	if (rc == LUMEN_OK && roots == 1) {
		/* the one root must be the suffix entry, not one left by an
		 * earlier suffix (adding this one would make a second root) */
		uint64_t id;
		rc = dn2id_lookup(be->store, txn, be->suffix_ndn[0], &id, NULL);
		if (rc == LUMEN_ENOTFOUND) {
			roots = 2;
			rc = LUMEN_OK;
		}
	}
	be->suffix_holds_all = rc == LUMEN_OK && roots <= 1;
	mdb_txn_abort(txn);
	return rc;
}

static int start_writer_and_caches(struct backend *be, const struct backend_settings *st)
{
	size_t cachesize = st->cachesize ? st->cachesize : BACKEND_DEFAULT_CACHESIZE;
	size_t idlcachesize = st->idlcachesize ? st->idlcachesize : BACKEND_DEFAULT_IDLCACHESIZE;

	/* offline tools read each entry about once: a cache would only cost */
	if (be->tool_mode || st->cachesize == BACKEND_CACHE_OFF)
		cachesize = 0;
	if (be->tool_mode || st->idlcachesize == BACKEND_CACHE_OFF)
		idlcachesize = 0;
	int rc = entry_cache_create(cachesize, destroy_cached_entry, NULL, &be->entry_cache);
	if (rc == LUMEN_OK)
		rc = idl_cache_create(idlcachesize, 0, &be->idl_cache);
	if (rc != LUMEN_OK || be->read_only)
		return rc;
	if (be->tool_mode)
		return write_bulk_begin(&be->bulk, be->store, 0);
	return write_batch_start(be->store, NULL, &be->batch);
}

int backend_open(const struct schema *schema, const struct backend_settings *settings,
		 struct backend **out, char *errbuf, size_t errlen)
{
	struct backend *be = calloc(1, sizeof(*be));
	int rc;

	if (be == NULL)
		return LUMEN_ENOMEM;
	be->schema = schema;
	be->tool_mode = settings->tool_mode;
	be->read_only = settings->read_only;
	be->server_id = settings->server_id & 0xfffu;
	pthread_mutex_init(&be->reader_lock, NULL);
	pthread_mutex_init(&be->csn_lock, NULL);
	be->name = strdup(settings->name ? settings->name :
			  settings->directory ? settings->directory : "database");
	if (be->name == NULL) {
		rc = LUMEN_ENOMEM;
		goto fail;
	}
	rc = normalize_suffixes(be, settings, errbuf, errlen);
	if (rc == LUMEN_OK)
		rc = resolve_operational(be, errbuf, errlen);
	if (rc == LUMEN_OK)
		rc = open_store(be, settings, errbuf, errlen);
	if (rc == LUMEN_OK)
		rc = open_indexes(be, settings, errbuf, errlen);
	if (rc == LUMEN_OK && (rc = count_roots(be)) != LUMEN_OK)
		rc = fail_storage(be, errbuf, errlen, rc, "cannot read the tree's roots");
	if (rc == LUMEN_OK &&
	    (rc = stored_forms_check(be->store, schema, &be->trust_normalized)) != LUMEN_OK)
		rc = fail_storage(be, errbuf, errlen, rc,
				  "cannot read or record the normalization rules");
	if (rc == LUMEN_OK && getrandom(&be->cookie_secret, sizeof(be->cookie_secret), 0) !=
			      (ssize_t)sizeof(be->cookie_secret))
		rc = fail_open(errbuf, errlen, be->name, LUMEN_EIO, "%s", "no randomness");
	if (rc == LUMEN_OK)
		rc = start_writer_and_caches(be, settings);
	if (rc != LUMEN_OK)
		goto fail;
	*out = be;
	return LUMEN_OK;
fail:
	if (errbuf != NULL && errlen > 0 && errbuf[0] == '\0')
		fail_open(errbuf, errlen, be->name ? be->name : "database", rc, "%s",
			  lumen_strerror(rc));
	backend_close(be);
	return rc;
}

int backend_tool_flush(struct backend *be)
{
	if (!be->tool_mode || be->read_only)
		return LUMEN_EINVAL;
	int rc = write_bulk_finish(&be->bulk);
	if (rc != LUMEN_OK)
		return rc;
	/* start the next stretch of bulk writes so the tool may go on */
	return write_bulk_begin(&be->bulk, be->store, 0);
}

void backend_close(struct backend *be)
{
	if (be == NULL)
		return;
	write_batch_stop(be->batch);
	if (be->tool_mode && !be->read_only && be->bulk.store != NULL)
		if (write_bulk_finish(&be->bulk) != LUMEN_OK)
			write_bulk_abort(&be->bulk);
	while (be->free_readers != NULL) {
		struct backend_reader *rd = be->free_readers;
		be->free_readers = rd->next;
		reader_free(rd);
	}
	entry_cache_destroy(be->entry_cache);
	idl_cache_destroy(be->idl_cache);
	mdb_store_close(be->store);
	for (size_t i = 0; i < be->n_suffixes; i++) {
		free((void *)be->suffix_ndn[i].ptr);
		free((void *)be->suffix_dn[i].ptr);
	}
	free(be->indexes);
	free(be->index_by_type);
	free(be->name);
	pthread_mutex_destroy(&be->reader_lock);
	pthread_mutex_destroy(&be->csn_lock);
	free(be);
}

void backend_get_stats(struct backend *be, struct backend_stats *out)
{
	struct cache_stats es;
	struct cache_stats is;
	struct write_batch_stats ws = { 0 };

	entry_cache_get_stats(be->entry_cache, &es);
	idl_cache_get_stats(be->idl_cache, &is);
	if (be->batch != NULL)
		write_batch_get_stats(be->batch, &ws);
	memset(out, 0, sizeof(*out));
	out->entry_cache_hits = es.hits;
	out->entry_cache_misses = es.misses;
	out->entry_cache_size = es.size;
	out->idl_cache_hits = is.hits;
	out->idl_cache_misses = is.misses;
	out->idl_cache_size = is.size;
	out->commits = ws.commits;
	out->writes = __atomic_load_n(&be->writes, __ATOMIC_RELAXED);
	out->entry_cache_evictions = es.evictions;
	out->entry_cache_capacity = es.capacity;
	out->idl_cache_evictions = is.evictions;
	out->idl_cache_capacity = is.capacity;
	out->entry_cache_not_admitted = es.not_admitted;
	out->idl_cache_not_admitted = is.not_admitted;
	out->partial_reads = es.held;
	out->normalizing_on_read = !be->trust_normalized;
}

struct mdb_store *backend_store(struct backend *be)
{
	return be->store;
}
