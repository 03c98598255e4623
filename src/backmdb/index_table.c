/*
 * index_table.c — index keys, and ID lists stored per key (index_table.h).
 */
#include "index_table.h"

#include <stdlib.h>
#include <string.h>

#include "mdb_store.h"
#include "stable_hash.h"

/* The first duplicate of a key that has degraded to a range. */
#define RANGE_MARKER 0

void index_key_make(enum index_kind kind, const uint8_t *value, size_t len, struct index_key *out)
{
	uint64_t h = kind == INDEX_PRESENCE ? 0 : stable_hash64(value, len);

	out->bytes[0] = (uint8_t)kind;
	for (int i = 0; i < 8; i++)
		out->bytes[1 + i] = (uint8_t)(h >> (56 - 8 * i));
}

size_t index_substring_key_count(size_t len)
{
	size_t anchors = len < INDEX_GRAM ? len : INDEX_GRAM;

	return 2 * anchors + (len >= INDEX_GRAM ? len - INDEX_GRAM + 1 : 0);
}

size_t index_substring_keys(const uint8_t *value, size_t len, struct index_key *out, size_t cap)
{
	size_t anchors = len < INDEX_GRAM ? len : INDEX_GRAM;
	size_t n = 0;

	for (size_t l = 1; l <= anchors; l++) {
		if (n < cap)
			index_key_make(INDEX_SUB_INITIAL, value, l, &out[n]);
		n++;
		if (n < cap)
			index_key_make(INDEX_SUB_FINAL, value + len - l, l, &out[n]);
		n++;
	}
	for (size_t i = 0; i + INDEX_GRAM <= len; i++) {
		if (n < cap)
			index_key_make(INDEX_SUB_ANY, value + i, INDEX_GRAM, &out[n]);
		n++;
	}
	return n;
}

static int compare_keys(const void *a, const void *b)
{
	return memcmp(a, b, INDEX_KEY_SIZE);
}

size_t index_keys_sort_unique(struct index_key *keys, size_t n)
{
	size_t out = 0;

	qsort(keys, n, sizeof(*keys), compare_keys);
	for (size_t i = 0; i < n; i++) {
		if (out > 0 && compare_keys(&keys[out - 1], &keys[i]) == 0)
			continue;
		keys[out++] = keys[i];
	}
	return out;
}

size_t index_keys_subtract(struct index_key *a, size_t na, const struct index_key *b, size_t nb)
{
	size_t out = 0, j = 0;

	for (size_t i = 0; i < na; i++) {
		while (j < nb && compare_keys(&b[j], &a[i]) < 0)
			j++;
		if (j < nb && compare_keys(&b[j], &a[i]) == 0)
			continue;
		a[out++] = a[i];
	}
	return out;
}

static uint64_t val_id(const MDB_val *v)
{
	uint64_t id = 0;

	if (v->mv_size == sizeof(id))
		memcpy(&id, v->mv_data, sizeof(id));
	return id;
}

/* Reads the lo, hi pair after a range marker (cursor on the marker). */
static int read_range(MDB_cursor *cursor, uint64_t *lo, uint64_t *hi)
{
	MDB_val key, data;

	int mrc = mdb_cursor_get(cursor, &key, &data, MDB_NEXT_DUP);
	if (mrc == MDB_SUCCESS)
		*lo = val_id(&data);
	if (mrc == MDB_SUCCESS)
		mrc = mdb_cursor_get(cursor, &key, &data, MDB_NEXT_DUP);
	if (mrc == MDB_SUCCESS)
		*hi = val_id(&data);
	if (mrc == MDB_NOTFOUND)
		return LUMEN_EIO; /* a marker without its bounds */
	return mdb_store_map_error(mrc);
}

static int put_id(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, uint64_t id)
{
	MDB_val data = { sizeof(id), &id };
	int mrc = mdb_put(txn, dbi, key, &data, MDB_NODUPDATA);

	return mrc == MDB_KEYEXIST ? LUMEN_OK : mdb_store_map_error(mrc);
}

static int del_id(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, uint64_t id)
{
	MDB_val data = { sizeof(id), &id };
	int mrc = mdb_del(txn, dbi, key, &data);

	return mrc == MDB_NOTFOUND ? LUMEN_OK : mdb_store_map_error(mrc);
}

/* Widens a stored range (cursor on its marker) to cover [lo, hi]. */
static int widen_range(MDB_txn *txn, MDB_dbi dbi, MDB_cursor *cursor, MDB_val *key, uint64_t lo,
		       uint64_t hi)
{
	uint64_t old_lo = 0, old_hi = 0;
	int rc = read_range(cursor, &old_lo, &old_hi);

	if (rc == LUMEN_OK && lo < old_lo) {
		rc = del_id(txn, dbi, key, old_lo);
		if (rc == LUMEN_OK)
			rc = put_id(txn, dbi, key, lo);
	}
	if (rc == LUMEN_OK && hi > old_hi) {
		rc = del_id(txn, dbi, key, old_hi);
		if (rc == LUMEN_OK)
			rc = put_id(txn, dbi, key, hi);
	}
	return rc;
}

/* Replaces every ID under key by the range marker and [lo, hi]. */
static int replace_with_range(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, uint64_t lo, uint64_t hi)
{
	int rc = mdb_store_map_error(mdb_del(txn, dbi, key, NULL));
	if (rc == LUMEN_OK)
		rc = put_id(txn, dbi, key, RANGE_MARKER);
	if (rc == LUMEN_OK)
		rc = put_id(txn, dbi, key, lo);
	if (rc == LUMEN_OK)
		rc = put_id(txn, dbi, key, hi);
	return rc;
}

/* Replaces a full list (cursor on its first ID) by the range covering it and id. */
static int degrade_list(MDB_txn *txn, MDB_dbi dbi, MDB_cursor *cursor, MDB_val *key,
			uint64_t first, uint64_t id)
{
	MDB_val k, data;
	int mrc = mdb_cursor_get(cursor, &k, &data, MDB_LAST_DUP);

	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	uint64_t last = val_id(&data);
	return replace_with_range(txn, dbi, key, id < first ? id : first, id > last ? id : last);
}

static int add_to_existing(MDB_txn *txn, MDB_dbi dbi, MDB_cursor *cursor, MDB_val *key,
			   uint64_t first, uint64_t id)
{
	MDB_val data = { sizeof(id), &id };
	size_t count = 0;

	if (first == RANGE_MARKER)
		return widen_range(txn, dbi, cursor, key, id, id);
	int mrc = mdb_cursor_count(cursor, &count);
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	if (count < IDL_MAX_IDS)
		return put_id(txn, dbi, key, id);
	MDB_val probe = *key;
	mrc = mdb_cursor_get(cursor, &probe, &data, MDB_GET_BOTH);
	if (mrc == MDB_SUCCESS)
		return LUMEN_OK;
	if (mrc != MDB_NOTFOUND)
		return mdb_store_map_error(mrc);
	return degrade_list(txn, dbi, cursor, key, first, id);
}

int index_add(MDB_txn *txn, MDB_dbi dbi, const struct index_key *ikey, uint64_t id)
{
	MDB_cursor *cursor;
	MDB_val key = { INDEX_KEY_SIZE, (void *)ikey->bytes };
	MDB_val data;
	int rc;

	if (id == 0)
		return LUMEN_EINVAL;
	int mrc = mdb_cursor_open(txn, dbi, &cursor);
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	/* Position with a copy: LMDB points a found key into the map, and the
	 * writes below must not read their key from a page they modify. */
	MDB_val found = key;
	mrc = mdb_cursor_get(cursor, &found, &data, MDB_SET_KEY);
	if (mrc == MDB_NOTFOUND)
		rc = put_id(txn, dbi, &key, id);
	else if (mrc != MDB_SUCCESS)
		rc = mdb_store_map_error(mrc);
	else
		rc = add_to_existing(txn, dbi, cursor, &key, val_id(&data), id);
	mdb_cursor_close(cursor);
	return rc;
}

/* ------------------------------------------------- sorted runs of IDs */

/* What one key receives: sorted IDs, or (as_range) the bounds of a range. */
struct id_run {
	const uint64_t *ids;
	size_t n;
	bool as_range;
};

static uint64_t run_lo(const struct id_run *r)
{
	return r->ids[0];
}

static uint64_t run_hi(const struct id_run *r)
{
	return r->ids[r->n - 1];
}

static bool run_is_range(const struct id_run *r)
{
	return r->as_range || r->n > IDL_MAX_IDS;
}

static bool run_valid(const struct id_run *r)
{
	if (r->n == 0 || r->ids[0] == 0)
		return false;
	for (size_t i = 1; i < r->n; i++)
		if (r->ids[i] <= r->ids[i - 1])
			return false;
	return true;
}

/*
 * Puts ids as duplicates of key with multi-item puts. LMDB ends a
 * multi-item put early, with success, at an item that is already stored;
 * that item is skipped and the rest put again.
 */
static int put_multiple(MDB_cursor *cursor, const MDB_val *key, const uint64_t *ids, size_t n,
			unsigned flags)
{
	while (n > 0) {
		MDB_val k = *key;
		MDB_val data[2] = { { sizeof(*ids), (void *)ids }, { n, NULL } };
		int mrc = mdb_cursor_put(cursor, &k, data, MDB_MULTIPLE | flags);
		if (mrc != MDB_SUCCESS)
			return mdb_store_map_error(mrc);
		size_t done = data[1].mv_size < n ? data[1].mv_size + 1 : n;
		ids += done;
		n -= done;
	}
	return LUMEN_OK;
}

/* Stores run under a key that has no IDs yet. */
static int put_new_key(MDB_cursor *cursor, const MDB_val *key, const struct id_run *r,
		       unsigned flags)
{
	if (!run_is_range(r))
		return put_multiple(cursor, key, r->ids, r->n, flags);
	uint64_t triple[3] = { RANGE_MARKER, run_lo(r), run_hi(r) };
	return put_multiple(cursor, key, triple, 3, flags);
}

/* Adds run to a stored key (cursor on its first duplicate, first). */
static int add_run_to_existing(MDB_txn *txn, MDB_dbi dbi, MDB_cursor *cursor, MDB_val *key,
			       uint64_t first, const struct id_run *r)
{
	MDB_val k, data;
	size_t count = 0;

	if (first == RANGE_MARKER)
		return widen_range(txn, dbi, cursor, key, run_lo(r), run_hi(r));
	int mrc = mdb_cursor_count(cursor, &count);
	if (mrc == MDB_SUCCESS)
		mrc = mdb_cursor_get(cursor, &k, &data, MDB_LAST_DUP);
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	uint64_t last = val_id(&data);
	if (run_is_range(r) || count + r->n > IDL_MAX_IDS) {
		uint64_t lo = run_lo(r) < first ? run_lo(r) : first;
		uint64_t hi = run_hi(r) > last ? run_hi(r) : last;
		return replace_with_range(txn, dbi, key, lo, hi);
	}
	/* IDs after every stored one go on the end without a search */
	return put_multiple(cursor, key, r->ids, r->n, run_lo(r) > last ? MDB_APPENDDUP : 0);
}

static int add_run(MDB_txn *txn, MDB_dbi dbi, MDB_cursor *cursor, const struct index_key *ikey,
		   const struct id_run *r)
{
	MDB_val key = { INDEX_KEY_SIZE, (void *)ikey->bytes };
	MDB_val found = key, data;

	int mrc = mdb_cursor_get(cursor, &found, &data, MDB_SET_KEY);
	if (mrc == MDB_NOTFOUND)
		return put_new_key(cursor, &key, r, 0);
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	return add_run_to_existing(txn, dbi, cursor, &key, val_id(&data), r);
}

int index_add_ids(MDB_txn *txn, MDB_dbi dbi, const struct index_key *key, const uint64_t *ids,
		  size_t n)
{
	struct id_run r = { ids, n, false };
	MDB_cursor *cursor;

	if (!run_valid(&r))
		return LUMEN_EINVAL;
	int mrc = mdb_cursor_open(txn, dbi, &cursor);
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	int rc = add_run(txn, dbi, cursor, key, &r);
	mdb_cursor_close(cursor);
	return rc;
}

int index_run_writer_open(struct index_run_writer *w, MDB_txn *txn, MDB_dbi dbi)
{
	MDB_val key, data;

	memset(w, 0, sizeof(*w));
	w->txn = txn;
	w->dbi = dbi;
	int mrc = mdb_cursor_open(txn, dbi, &w->cursor);
	if (mrc == MDB_SUCCESS)
		mrc = mdb_cursor_get(w->cursor, &key, &data, MDB_LAST);
	if (mrc == MDB_NOTFOUND) {
		w->table_empty = true;
		return LUMEN_OK;
	}
	if (mrc == MDB_SUCCESS && key.mv_size == INDEX_KEY_SIZE) {
		memcpy(w->table_last.bytes, key.mv_data, INDEX_KEY_SIZE);
		return LUMEN_OK;
	}
	index_run_writer_close(w);
	return mrc == MDB_SUCCESS ? LUMEN_EIO : mdb_store_map_error(mrc);
}

static int run_writer_add(struct index_run_writer *w, const struct index_key *key,
			  const struct id_run *r)
{
	if (w->cursor == NULL)
		return LUMEN_EINVAL;
	if (w->table_empty || memcmp(key->bytes, w->table_last.bytes, INDEX_KEY_SIZE) > 0) {
		MDB_val k = { INDEX_KEY_SIZE, (void *)key->bytes };
		int rc = put_new_key(w->cursor, &k, r, MDB_APPEND);
		/* not after the last key written: the caller's keys are out of order */
		if (rc != LUMEN_EEXIST)
			return rc;
	}
	w->merged++;
	return add_run(w->txn, w->dbi, w->cursor, key, r);
}

int index_run_add(struct index_run_writer *w, const struct index_key *key, const uint64_t *ids,
		  size_t n)
{
	struct id_run r = { ids, n, false };

	if (!run_valid(&r))
		return LUMEN_EINVAL;
	return run_writer_add(w, key, &r);
}

int index_run_add_range(struct index_run_writer *w, const struct index_key *key, uint64_t lo,
			uint64_t hi)
{
	uint64_t bounds[2] = { lo, hi };
	struct id_run r = { bounds, lo == hi ? 1 : 2, true };

	if (!run_valid(&r))
		return LUMEN_EINVAL;
	return run_writer_add(w, key, &r);
}

void index_run_writer_close(struct index_run_writer *w)
{
	if (w->cursor != NULL)
		mdb_cursor_close(w->cursor);
	w->cursor = NULL;
}

int index_remove(MDB_txn *txn, MDB_dbi dbi, const struct index_key *ikey, uint64_t id)
{
	MDB_val key = { INDEX_KEY_SIZE, (void *)ikey->bytes };
	MDB_val data;
	MDB_cursor *cursor;

	int mrc = mdb_cursor_open(txn, dbi, &cursor);
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	MDB_val found = key;
	mrc = mdb_cursor_get(cursor, &found, &data, MDB_SET_KEY);
	mdb_cursor_close(cursor);
	if (mrc == MDB_NOTFOUND)
		return LUMEN_OK;
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	if (val_id(&data) == RANGE_MARKER)
		return LUMEN_OK;
	return del_id(txn, dbi, &key, id);
}

/*
 * Copies the list under the cursor's key into out, a page of IDs at a time.
 * A key with a single ID has no duplicate page, and LMDB's GET_MULTIPLE
 * then reports success without touching data: that case is the caller's.
 */
static int read_list(MDB_cursor *cursor, size_t count, struct idl *out)
{
	MDB_val key, data = { 0, NULL };

	int mrc = mdb_cursor_get(cursor, &key, &data, MDB_GET_MULTIPLE);
	while (mrc == MDB_SUCCESS) {
		size_t n = data.mv_size / sizeof(uint64_t);
		if (n == 0 || out->count + n > count)
			return LUMEN_EIO;
		memcpy(out->ids + out->count, data.mv_data, n * sizeof(uint64_t));
		out->count += n;
		mrc = mdb_cursor_get(cursor, &key, &data, MDB_NEXT_MULTIPLE);
	}
	return mrc == MDB_NOTFOUND ? LUMEN_OK : mdb_store_map_error(mrc);
}

static int read_cursor_key(MDB_cursor *cursor, MDB_val *key, struct idl *out)
{
	MDB_val data;
	size_t count = 0;
	uint64_t lo = 0, hi = 0;

	int mrc = mdb_cursor_get(cursor, key, &data, MDB_SET_KEY);
	if (mrc == MDB_NOTFOUND)
		return LUMEN_OK;
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	uint64_t first = val_id(&data);
	if (first == RANGE_MARKER) {
		int rc = read_range(cursor, &lo, &hi);
		if (rc == LUMEN_OK)
			idl_set_range(out, lo, hi);
		return rc;
	}
	mrc = mdb_cursor_count(cursor, &count);
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	if (!idl_reserve(out, count)) {
		/* The caller's IDL is too small: hand back the covering range. */
		mrc = mdb_cursor_get(cursor, key, &data, MDB_LAST_DUP);
		if (mrc != MDB_SUCCESS)
			return mdb_store_map_error(mrc);
		idl_set_range(out, first, val_id(&data));
		return LUMEN_OK;
	}
	if (count == 1) {
		out->ids[0] = first;
		out->count = 1;
		return LUMEN_OK;
	}
	return read_list(cursor, count, out);
}

int index_read_cursor(MDB_cursor *cursor, const struct index_key *ikey, struct idl *out)
{
	MDB_val key = { INDEX_KEY_SIZE, (void *)ikey->bytes };

	idl_clear(out);
	int rc = read_cursor_key(cursor, &key, out);
	if (rc != LUMEN_OK)
		idl_clear(out);
	return rc;
}

int index_read(MDB_txn *txn, MDB_dbi dbi, const struct index_key *ikey, struct idl *out)
{
	MDB_cursor *cursor;

	idl_clear(out);
	int mrc = mdb_cursor_open(txn, dbi, &cursor);
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	int rc = index_read_cursor(cursor, ikey, out);
	mdb_cursor_close(cursor);
	return rc;
}

/* State of one substring lookup: the running intersection. */
struct substring_lookup {
	MDB_cursor *cursor;
	struct idl *out, *scratch;
	bool have;   /* out holds at least one key's list */
};

static int intersect_key(struct substring_lookup *s, enum index_kind kind, const uint8_t *bytes,
			 size_t len)
{
	struct index_key key;

	if (s->have && idl_is_empty(s->out))
		return LUMEN_OK; /* nothing can match any more */
	index_key_make(kind, bytes, len, &key);
	if (!s->have) {
		s->have = true;
		return index_read_cursor(s->cursor, &key, s->out);
	}
	int rc = index_read_cursor(s->cursor, &key, s->scratch);
	if (rc == LUMEN_OK)
		idl_intersect(s->out, s->scratch);
	return rc;
}

/*
 * The any-grams of a piece: non-overlapping windows plus the last one cover
 * every byte, which is as selective as all windows at a third of the reads.
 */
static int intersect_grams(struct substring_lookup *s, struct ber_view piece)
{
	int rc = LUMEN_OK;

	if (piece.len < INDEX_GRAM)
		return LUMEN_OK;
	for (size_t i = 0; rc == LUMEN_OK && i + INDEX_GRAM <= piece.len; i += INDEX_GRAM)
		rc = intersect_key(s, INDEX_SUB_ANY, piece.ptr + i, INDEX_GRAM);
	if (rc == LUMEN_OK && piece.len % INDEX_GRAM != 0)
		rc = intersect_key(s, INDEX_SUB_ANY, piece.ptr + piece.len - INDEX_GRAM, INDEX_GRAM);
	return rc;
}

/* An anchored piece: its anchor key, then its grams if it is longer. */
static int intersect_anchored(struct substring_lookup *s, enum index_kind kind,
			      struct ber_view piece)
{
	if (piece.len == 0)
		return LUMEN_OK;
	size_t anchor = piece.len < INDEX_GRAM ? piece.len : INDEX_GRAM;
	const uint8_t *start = kind == INDEX_SUB_INITIAL ? piece.ptr : piece.ptr + piece.len - anchor;
	int rc = intersect_key(s, kind, start, anchor);
	if (rc == LUMEN_OK && piece.len > INDEX_GRAM)
		rc = intersect_grams(s, piece);
	return rc;
}

int index_read_substring_cursor(MDB_cursor *cursor, const struct index_substring *assertion,
				struct idl *out, struct idl *scratch)
{
	struct substring_lookup s = { cursor, out, scratch, false };

	idl_clear(out);
	int rc = intersect_anchored(&s, INDEX_SUB_INITIAL, assertion->initial);
	for (size_t i = 0; rc == LUMEN_OK && i < assertion->n_any; i++)
		rc = intersect_grams(&s, assertion->any[i]);
	if (rc == LUMEN_OK)
		rc = intersect_anchored(&s, INDEX_SUB_FINAL, assertion->final);
	if (rc == LUMEN_OK && !s.have)
		rc = LUMEN_EUNSUPPORTED;
	if (rc != LUMEN_OK)
		idl_clear(out);
	return rc;
}

int index_read_substring(MDB_txn *txn, MDB_dbi dbi, const struct index_substring *assertion,
			 struct idl *out, struct idl *scratch)
{
	MDB_cursor *cursor;

	idl_clear(out);
	int mrc = mdb_cursor_open(txn, dbi, &cursor);
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	int rc = index_read_substring_cursor(cursor, assertion, out, scratch);
	mdb_cursor_close(cursor);
	return rc;
}
