/*
 * dn2id.c — the entry tree over dn2id, id2name and subcount (dn2id.h).
 *
 * Lookups walk down from a root one RDN at a time (each step one B-tree
 * search with MDB_GET_BOTH_RANGE on the parent's duplicates); names are
 * built by walking up id2name. Nothing is keyed by a whole DN, so neither
 * depth nor renames of big subtrees cost more than one record.
 */
#include "dn2id.h"

#include <string.h>

#include "dn.h"
#include "stable_hash.h"

/* High bit of the length field: the key is a prefix + hash, not the RDN. */
#define HASHED_FLAG 0x8000u
#define HASH_SIZE 8
#define ID_SIZE 8
#define LENGTH_SIZE 2
/* id2name record: [parent u64][nrdn length u32][nrdn][rdn] */
#define NAME_HEADER (8 + 4)

_Static_assert(LENGTH_SIZE + DN2ID_RDN_INLINE_MAX + ID_SIZE <= 511,
	       "dn2id duplicates must fit LMDB's 511-byte limit");
_Static_assert(DN2ID_RDN_PREFIX + HASH_SIZE <= DN2ID_RDN_INLINE_MAX, "hashed key too long");

/* A child's duplicate in dn2id: key bytes, then room for the ID. */
struct child_item {
	uint8_t bytes[LENGTH_SIZE + DN2ID_RDN_INLINE_MAX + ID_SIZE];
	size_t key_len;   /* bytes before the ID */
	bool hashed;
};

struct name_record {
	uint64_t parent;
	struct ber_view nrdn, rdn;
};

static void make_child_key(struct ber_view nrdn, struct child_item *item)
{
	size_t len = nrdn.len;

	item->hashed = len > DN2ID_RDN_INLINE_MAX;
	if (item->hashed) {
		uint64_t h = stable_hash64(nrdn.ptr, nrdn.len);
		memcpy(item->bytes + LENGTH_SIZE, nrdn.ptr, DN2ID_RDN_PREFIX);
		for (int i = 0; i < HASH_SIZE; i++)
			item->bytes[LENGTH_SIZE + DN2ID_RDN_PREFIX + i] = (uint8_t)(h >> (56 - 8 * i));
		len = DN2ID_RDN_PREFIX + HASH_SIZE;
	} else if (len > 0) {
		memcpy(item->bytes + LENGTH_SIZE, nrdn.ptr, len);
	}
	unsigned field = (unsigned)len | (item->hashed ? HASHED_FLAG : 0);
	item->bytes[0] = (uint8_t)(field >> 8);
	item->bytes[1] = (uint8_t)field;
	item->key_len = LENGTH_SIZE + len;
}

static MDB_val child_item_val(struct child_item *item, uint64_t id)
{
	memcpy(item->bytes + item->key_len, &id, ID_SIZE);
	return (MDB_val){ item->key_len + ID_SIZE, item->bytes };
}

/* Lists id under parent_id by its nrdn (a sorted duplicate of the parent). */
static int link_child(MDB_cursor *cursor, uint64_t parent_id, struct ber_view nrdn, uint64_t id)
{
	struct child_item item;

	make_child_key(nrdn, &item);
	MDB_val key = { sizeof(parent_id), &parent_id };
	MDB_val data = child_item_val(&item, id);
	return mdb_store_map_error(mdb_cursor_put(cursor, &key, &data, MDB_NODUPDATA));
}

static uint64_t item_child_id(const MDB_val *data)
{
	uint64_t id = 0;

	if (data->mv_size >= LENGTH_SIZE + ID_SIZE)
		memcpy(&id, (const uint8_t *)data->mv_data + data->mv_size - ID_SIZE, ID_SIZE);
	return id;
}

static int read_name(struct mdb_store *store, MDB_txn *txn, uint64_t id, struct name_record *out)
{
	MDB_val key = { sizeof(id), &id };
	MDB_val data;
	uint32_t nrdn_len;

	int mrc = mdb_get(txn, store->id2name, &key, &data);
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	const uint8_t *p = data.mv_data;
	if (data.mv_size < NAME_HEADER)
		return LUMEN_EIO;
	memcpy(&out->parent, p, 8);
	memcpy(&nrdn_len, p + 8, 4);
	if (nrdn_len > data.mv_size - NAME_HEADER)
		return LUMEN_EIO;
	out->nrdn = (struct ber_view){ p + NAME_HEADER, nrdn_len };
	out->rdn = (struct ber_view){ p + NAME_HEADER + nrdn_len, data.mv_size - NAME_HEADER - nrdn_len };
	return LUMEN_OK;
}

static int write_name(struct mdb_store *store, MDB_txn *txn, uint64_t id, uint64_t parent,
		      struct ber_view nrdn, struct ber_view rdn, unsigned flags)
{
	MDB_val key = { sizeof(id), &id };
	MDB_val data = { NAME_HEADER + nrdn.len + rdn.len, NULL };
	uint32_t nrdn_len = (uint32_t)nrdn.len;

	if (nrdn.len > UINT32_MAX)
		return LUMEN_EINVAL;
	int mrc = mdb_put(txn, store->id2name, &key, &data, flags | MDB_RESERVE);
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	uint8_t *p = data.mv_data;
	memcpy(p, &parent, 8);
	memcpy(p + 8, &nrdn_len, 4);
	if (nrdn.len)
		memcpy(p + NAME_HEADER, nrdn.ptr, nrdn.len);
	if (rdn.len)
		memcpy(p + NAME_HEADER + nrdn.len, rdn.ptr, rdn.len);
	return LUMEN_OK;
}

/*
 * The child of parent named nrdn. Hashed keys can collide, so for them
 * every duplicate with the same key is checked against id2name.
 */
static int find_child(struct mdb_store *store, MDB_txn *txn, MDB_cursor *cursor, uint64_t parent,
		      struct ber_view nrdn, uint64_t *child)
{
	struct child_item item;
	MDB_val key = { sizeof(parent), &parent };

	make_child_key(nrdn, &item);
	MDB_val data = { item.key_len, item.bytes };
	int mrc = mdb_cursor_get(cursor, &key, &data, MDB_GET_BOTH_RANGE);
	while (mrc == MDB_SUCCESS) {
		if (data.mv_size != item.key_len + ID_SIZE ||
		    memcmp(data.mv_data, item.bytes, item.key_len) != 0)
			return LUMEN_ENOTFOUND;
		uint64_t id = item_child_id(&data);
		if (!item.hashed) {
			*child = id;
			return LUMEN_OK;
		}
		struct name_record name;
		int rc = read_name(store, txn, id, &name);
		if (rc != LUMEN_OK)
			return rc == LUMEN_ENOTFOUND ? LUMEN_EIO : rc;
		if (ber_view_eq(name.nrdn, nrdn)) {
			*child = id;
			return LUMEN_OK;
		}
		mrc = mdb_cursor_get(cursor, &key, &data, MDB_NEXT_DUP);
	}
	return mdb_store_map_error(mrc);
}

/*
 * Offsets where each RDN of ndn starts, left to right. A ',' after '\' is
 * escaped; dn.h's normalized form escapes as \XX, but skipping the byte
 * after any backslash is right for both escape forms.
 */
static int split_rdns(struct ber_view ndn, size_t *starts, size_t *count)
{
	size_t n = 0;

	*count = 0;
	if (ndn.len == 0)
		return LUMEN_OK;
	starts[n++] = 0;
	for (size_t i = 0; i < ndn.len; i++) {
		if (ndn.ptr[i] == '\\') {
			i++;
		} else if (ndn.ptr[i] == ',') {
			if (n == DN_MAX_RDNS)
				return LUMEN_ELIMIT;
			starts[n++] = i + 1;
		}
	}
	*count = n;
	return LUMEN_OK;
}

/* A child's normalized RDN: inline in its item, or from id2name if hashed. */
static int item_nrdn(struct mdb_store *store, MDB_txn *txn, const MDB_val *data,
		     struct ber_view *nrdn)
{
	const uint8_t *p = data->mv_data;
	struct name_record name;

	if (data->mv_size < LENGTH_SIZE + ID_SIZE)
		return LUMEN_EIO;
	unsigned field = ((unsigned)p[0] << 8) | p[1];
	size_t len = field & ~HASHED_FLAG;
	if (LENGTH_SIZE + len + ID_SIZE != data->mv_size)
		return LUMEN_EIO;
	if (!(field & HASHED_FLAG)) {
		*nrdn = (struct ber_view){ p + LENGTH_SIZE, len };
		return LUMEN_OK;
	}
	int rc = read_name(store, txn, item_child_id(data), &name);
	if (rc != LUMEN_OK)
		return rc == LUMEN_ENOTFOUND ? LUMEN_EIO : rc;
	*nrdn = name.nrdn;
	return LUMEN_OK;
}

/* The root whose DN ends ndn (at an RDN boundary), as the index of its first RDN. */
static int find_root(struct mdb_store *store, MDB_txn *txn, MDB_cursor *cursor, struct ber_view ndn,
		     const size_t *starts, size_t n, uint64_t *root, size_t *root_first)
{
	uint64_t zero = 0;
	MDB_val key = { sizeof(zero), &zero };
	MDB_val data;
	bool found = false;

	int mrc = mdb_cursor_get(cursor, &key, &data, MDB_SET);
	for (; mrc == MDB_SUCCESS; mrc = mdb_cursor_get(cursor, &key, &data, MDB_NEXT_DUP)) {
		struct name_record name = { 0 };
		uint64_t id = item_child_id(&data);
		int rc = item_nrdn(store, txn, &data, &name.nrdn);
		if (rc != LUMEN_OK)
			return rc;
		/* Candidate boundaries: each RDN start, or the end for an empty root. */
		for (size_t k = 0; k <= n; k++) {
			size_t at = k < n ? starts[k] : ndn.len;
			if (ndn.len - at != name.nrdn.len ||
			    memcmp(ndn.ptr + at, name.nrdn.ptr, name.nrdn.len) != 0)
				continue;
			/* Prefer the longest root (the fewest RDNs left to walk). */
			if (!found || k < *root_first) {
				*root = id;
				*root_first = k;
				found = true;
			}
			break;
		}
	}
	if (mrc != MDB_NOTFOUND)
		return mdb_store_map_error(mrc);
	return found ? LUMEN_OK : LUMEN_ENOTFOUND;
}

/* The reader's kept cursor, asked for only when a lookup reaches the table. */
static MDB_cursor *kept_cursor(struct mdb_reader *keeper)
{
	return keeper != NULL ? mdb_reader_dn2id_cursor(keeper) : NULL;
}

/* The caller's cursor on dn2id in txn, else a new one (*opened: close it). */
static int use_cursor(struct mdb_store *store, MDB_txn *txn, MDB_cursor *kept,
		      MDB_cursor **cursor, bool *opened)
{
	*opened = kept == NULL;
	*cursor = kept;
	if (kept != NULL)
		return LUMEN_OK;
	int rc = mdb_store_map_error(mdb_cursor_open(txn, store->dn2id, cursor));
	if (rc != LUMEN_OK)
		*cursor = NULL;
	return rc;
}

/* The walk down from the root, on kept (or a cursor of its own when NULL);
 * *parent_id (if not NULL) is the ID of the entry's parent, 0 for a root. */
static int lookup_walk(struct mdb_store *store, MDB_txn *txn, MDB_cursor *kept,
		       struct ber_view ndn, uint64_t *id, struct dn2id_match *matched,
		       uint64_t *parent_id)
{
	size_t starts[DN_MAX_RDNS];
	size_t n, first = 0;
	uint64_t current = 0, parent = 0;
	MDB_cursor *cursor = NULL;
	bool opened = false;
	struct dn2id_match best = { 0, 0 };
	int rc;

	rc = split_rdns(ndn, starts, &n);
	if (rc != LUMEN_OK)
		goto done;
	rc = use_cursor(store, txn, kept, &cursor, &opened);
	if (rc != LUMEN_OK)
		goto done;
	rc = find_root(store, txn, cursor, ndn, starts, n, &current, &first);
	if (rc != LUMEN_OK)
		goto done;
	best.id = current;
	best.ndn_len = first < n ? ndn.len - starts[first] : 0;
	while (first > 0) {
		size_t k = first - 1;
		size_t end = first < n ? starts[first] - 1 : ndn.len;
		struct ber_view rdn = { ndn.ptr + starts[k], end - starts[k] };
		parent = current;
		rc = find_child(store, txn, cursor, current, rdn, &current);
		if (rc != LUMEN_OK)
			goto done;
		best.id = current;
		best.ndn_len = ndn.len - starts[k];
		first = k;
	}
	*id = current;
	if (parent_id != NULL)
		*parent_id = parent;
done:
	if (opened && cursor != NULL)
		mdb_cursor_close(cursor);
	if (matched != NULL)
		*matched = rc == LUMEN_ENOTFOUND ? best : (struct dn2id_match){ 0, 0 };
	return rc;
}

int dn2id_lookup(struct mdb_store *store, MDB_txn *txn, struct ber_view ndn, uint64_t *id,
		 struct dn2id_match *matched)
{
	return lookup_walk(store, txn, NULL, ndn, id, matched, NULL);
}

/* ------------------------------------------------------ snapshot memo */

/*
 * A thread's memo of the names it found last in read snapshots: an entry's
 * ID is a function of the snapshot and the name, and a read-only snapshot
 * is named by its store and transaction ID, so a hit needs no
 * invalidation. Searches name the same base and binds the same parent
 * every time; a hit saves the walk from the root. Write transactions never
 * come here: their ID is reused when one aborts.
 */
#define LOOKUP_MEMO_SLOTS 8
#define LOOKUP_MEMO_NDN 128

struct lookup_memo {
	uint64_t store_serial, txn_id, id;
	size_t len;
	uint8_t ndn[LOOKUP_MEMO_NDN];
};

static _Thread_local struct lookup_memo lookup_memos[LOOKUP_MEMO_SLOTS];
static _Thread_local unsigned lookup_memo_next;

static bool memo_get(uint64_t serial, uint64_t txn_id, struct ber_view ndn, uint64_t *id)
{
	if (ndn.len == 0 || ndn.len > LOOKUP_MEMO_NDN)
		return false;
	for (size_t i = 0; i < LOOKUP_MEMO_SLOTS; i++) {
		const struct lookup_memo *m = &lookup_memos[i];
		if (m->txn_id == txn_id && m->store_serial == serial && m->len == ndn.len &&
		    memcmp(m->ndn, ndn.ptr, ndn.len) == 0) {
			*id = m->id;
			return true;
		}
	}
	return false;
}

static void memo_put(uint64_t serial, uint64_t txn_id, struct ber_view ndn, uint64_t id)
{
	if (ndn.len == 0 || ndn.len > LOOKUP_MEMO_NDN || id == 0)
		return;
	struct lookup_memo *m = &lookup_memos[lookup_memo_next++ % LOOKUP_MEMO_SLOTS];
	m->store_serial = serial;
	m->txn_id = txn_id;
	m->id = id;
	m->len = ndn.len;
	memcpy(m->ndn, ndn.ptr, ndn.len);
}

/* ndn without its first RDN; false for a single RDN. */
static bool parent_of(struct ber_view ndn, struct ber_view *parent)
{
	for (size_t i = 0; i < ndn.len; i++) {
		if (ndn.ptr[i] == '\\') {
			i++;
		} else if (ndn.ptr[i] == ',') {
			*parent = (struct ber_view){ ndn.ptr + i + 1, ndn.len - i - 1 };
			return true;
		}
	}
	return false;
}

/* The child named by ndn's first RDN of parent_id (a memo hit). */
static int lookup_below(struct mdb_store *store, MDB_txn *txn, MDB_cursor *kept,
			struct ber_view ndn, struct ber_view parent, uint64_t parent_id,
			uint64_t *id, struct dn2id_match *matched)
{
	MDB_cursor *cursor = NULL;
	bool opened = false;
	struct ber_view rdn = { ndn.ptr, ndn.len - parent.len - 1 };
	int rc = use_cursor(store, txn, kept, &cursor, &opened);
	if (rc == LUMEN_OK)
		rc = find_child(store, txn, cursor, parent_id, rdn, id);
	if (opened && cursor != NULL)
		mdb_cursor_close(cursor);
	if (matched != NULL)
		*matched = rc == LUMEN_ENOTFOUND ? (struct dn2id_match){ parent_id, parent.len }
						 : (struct dn2id_match){ 0, 0 };
	return rc;
}

int dn2id_lookup_snapshot(struct mdb_store *store, MDB_txn *txn, struct mdb_reader *keeper,
			  struct ber_view ndn, uint64_t *id, struct dn2id_match *matched)
{
	uint64_t txn_id = mdb_txn_id(txn), parent_id = 0;
	struct ber_view parent;
	if (memo_get(store->serial, txn_id, ndn, id)) {
		if (matched != NULL)
			*matched = (struct dn2id_match){ 0, 0 };
		return LUMEN_OK;
	}
	bool has_parent = parent_of(ndn, &parent);
	int rc;
	if (has_parent && memo_get(store->serial, txn_id, parent, &parent_id))
		rc = lookup_below(store, txn, kept_cursor(keeper), ndn, parent, parent_id, id,
				  matched);
	else
		rc = lookup_walk(store, txn, kept_cursor(keeper), ndn, id, matched, &parent_id);
	if (rc != LUMEN_OK)
		return rc;
	memo_put(store->serial, txn_id, ndn, *id);
	if (has_parent)
		memo_put(store->serial, txn_id, parent, parent_id);
	return LUMEN_OK;
}

static int read_count(struct mdb_store *store, MDB_txn *txn, uint64_t id, uint64_t *count)
{
	MDB_val key = { sizeof(id), &id };
	MDB_val data;

	int mrc = mdb_get(txn, store->subcount, &key, &data);
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	if (data.mv_size != sizeof(*count))
		return LUMEN_EIO;
	memcpy(count, data.mv_data, sizeof(*count));
	return LUMEN_OK;
}

static int write_count(struct mdb_store *store, MDB_txn *txn, uint64_t id, uint64_t count)
{
	MDB_val key = { sizeof(id), &id };
	MDB_val data = { sizeof(count), &count };

	return mdb_store_map_error(mdb_put(txn, store->subcount, &key, &data, 0));
}

/* Adds delta (a whole moved or new subtree) to every ancestor from id up. */
static int adjust_counts(struct mdb_store *store, MDB_txn *txn, uint64_t id, int64_t delta)
{
	for (size_t depth = 0; id != 0; depth++) {
		struct name_record name = { 0 };
		uint64_t count = 0;
		if (depth > DN_MAX_RDNS)
			return LUMEN_EIO; /* a cycle or a broken chain */
		int rc = read_count(store, txn, id, &count);
		if (rc == LUMEN_OK)
			rc = write_count(store, txn, id, count + (uint64_t)delta);
		if (rc == LUMEN_OK)
			rc = read_name(store, txn, id, &name);
		if (rc != LUMEN_OK)
			return rc == LUMEN_ENOTFOUND ? LUMEN_EIO : rc;
		id = name.parent;
	}
	return LUMEN_OK;
}

static int check_parent(struct mdb_store *store, MDB_txn *txn, uint64_t parent_id,
			struct ber_view nrdn)
{
	struct name_record name;

	if (parent_id == 0)
		return LUMEN_OK;
	if (nrdn.len == 0)
		return LUMEN_EINVAL;
	return read_name(store, txn, parent_id, &name);
}

int dn2id_add(struct mdb_store *store, MDB_txn *txn, uint64_t parent_id, struct ber_view nrdn,
	      struct ber_view rdn, uint64_t id)
{
	MDB_cursor *cursor = NULL;
	uint64_t existing;
	int rc;

	if (id == 0)
		return LUMEN_EINVAL;
	rc = check_parent(store, txn, parent_id, nrdn);
	if (rc != LUMEN_OK)
		goto done;
	rc = mdb_store_map_error(mdb_cursor_open(txn, store->dn2id, &cursor));
	if (rc != LUMEN_OK)
		goto done;
	rc = find_child(store, txn, cursor, parent_id, nrdn, &existing);
	if (rc != LUMEN_ENOTFOUND) {
		rc = rc == LUMEN_OK ? LUMEN_EEXIST : rc;
		goto done;
	}
	rc = write_name(store, txn, id, parent_id, nrdn, rdn, MDB_NOOVERWRITE);
	if (rc != LUMEN_OK)
		goto done;
	rc = link_child(cursor, parent_id, nrdn, id);
	if (rc == LUMEN_OK)
		rc = write_count(store, txn, id, 0);
	if (rc == LUMEN_OK)
		rc = adjust_counts(store, txn, parent_id, 1);
done:
	if (cursor != NULL)
		mdb_cursor_close(cursor);
	return rc;
}

static int has_children(struct mdb_store *store, MDB_txn *txn, uint64_t id)
{
	MDB_val key = { sizeof(id), &id };
	MDB_val data;

	int mrc = mdb_get(txn, store->dn2id, &key, &data);
	if (mrc == MDB_NOTFOUND)
		return 0;
	return mrc == MDB_SUCCESS ? 1 : mdb_store_map_error(mrc);
}

/* Removes id's duplicate under its parent (before its name record goes). */
static int unlink_child(struct mdb_store *store, MDB_txn *txn, uint64_t id,
			const struct name_record *name)
{
	struct child_item item;
	uint64_t parent = name->parent;
	MDB_val key = { sizeof(parent), &parent };

	make_child_key(name->nrdn, &item);
	MDB_val data = child_item_val(&item, id);
	int rc = mdb_store_map_error(mdb_del(txn, store->dn2id, &key, &data));
	return rc == LUMEN_ENOTFOUND ? LUMEN_EIO : rc;
}

int dn2id_delete(struct mdb_store *store, MDB_txn *txn, uint64_t id)
{
	struct name_record name = { 0 };
	MDB_val key = { sizeof(id), &id };

	int rc = read_name(store, txn, id, &name);
	if (rc != LUMEN_OK)
		return rc;
	rc = has_children(store, txn, id);
	if (rc != 0)
		return rc > 0 ? LUMEN_EBUSY : rc;
	uint64_t parent = name.parent;
	rc = unlink_child(store, txn, id, &name);
	if (rc == LUMEN_OK)
		rc = mdb_store_map_error(mdb_del(txn, store->id2name, &key, NULL));
	if (rc == LUMEN_OK)
		rc = mdb_store_map_error(mdb_del(txn, store->subcount, &key, NULL));
	if (rc == LUMEN_OK)
		rc = adjust_counts(store, txn, parent, -1);
	return rc == LUMEN_ENOTFOUND ? LUMEN_EIO : rc;
}

int dn2id_is_within(struct mdb_store *store, MDB_txn *txn, uint64_t id, uint64_t ancestor_id)
{
	for (size_t depth = 0; depth <= DN_MAX_RDNS + 1; depth++) {
		struct name_record name = { 0 };
		if (id == ancestor_id)
			return 1;
		if (id == 0)
			return 0;
		int rc = read_name(store, txn, id, &name);
		if (rc != LUMEN_OK)
			return rc;
		id = name.parent;
	}
	return LUMEN_EIO;
}

/* Refuses a move that would leave the tree inconsistent. */
static int check_move(struct mdb_store *store, MDB_txn *txn, MDB_cursor *cursor, uint64_t id,
		      uint64_t new_parent_id, struct ber_view new_nrdn)
{
	uint64_t existing;

	int rc = check_parent(store, txn, new_parent_id, new_nrdn);
	if (rc != LUMEN_OK)
		return rc;
	if (new_parent_id != 0) {
		rc = dn2id_is_within(store, txn, new_parent_id, id);
		if (rc != 0)
			return rc > 0 ? LUMEN_EINVAL : rc;
	}
	rc = find_child(store, txn, cursor, new_parent_id, new_nrdn, &existing);
	if (rc == LUMEN_OK)
		return existing == id ? LUMEN_OK : LUMEN_EEXIST;
	return rc == LUMEN_ENOTFOUND ? LUMEN_OK : rc;
}

int dn2id_move(struct mdb_store *store, MDB_txn *txn, uint64_t id, uint64_t new_parent_id,
	       struct ber_view new_nrdn, struct ber_view new_rdn)
{
	struct name_record name = { 0 };
	MDB_cursor *cursor = NULL;
	uint64_t descendants = 0;
	int rc;

	rc = read_name(store, txn, id, &name);
	if (rc != LUMEN_OK)
		goto done;
	uint64_t old_parent = name.parent;
	rc = mdb_store_map_error(mdb_cursor_open(txn, store->dn2id, &cursor));
	if (rc == LUMEN_OK)
		rc = check_move(store, txn, cursor, id, new_parent_id, new_nrdn);
	if (rc == LUMEN_OK)
		rc = read_count(store, txn, id, &descendants);
	if (rc == LUMEN_OK)
		rc = unlink_child(store, txn, id, &name);
	if (rc == LUMEN_OK)
		rc = write_name(store, txn, id, new_parent_id, new_nrdn, new_rdn, 0);
	if (rc != LUMEN_OK)
		goto done;
	rc = link_child(cursor, new_parent_id, new_nrdn, id);
	if (rc == LUMEN_OK && old_parent != new_parent_id) {
		int64_t moved = (int64_t)descendants + 1;
		rc = adjust_counts(store, txn, old_parent, -moved);
		if (rc == LUMEN_OK)
			rc = adjust_counts(store, txn, new_parent_id, moved);
	}
done:
	if (cursor != NULL)
		mdb_cursor_close(cursor);
	return rc;
}

int dn2id_children(struct mdb_store *store, MDB_txn *txn, uint64_t id, dn2id_child_fn fn,
		   void *ctx)
{
	MDB_cursor *cursor;
	MDB_val key = { sizeof(id), &id };
	MDB_val data;
	int rc = LUMEN_OK;

	int mrc = mdb_cursor_open(txn, store->dn2id, &cursor);
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	mrc = mdb_cursor_get(cursor, &key, &data, MDB_SET);
	while (mrc == MDB_SUCCESS && rc == LUMEN_OK) {
		rc = fn(ctx, item_child_id(&data));
		if (rc == LUMEN_OK)
			mrc = mdb_cursor_get(cursor, &key, &data, MDB_NEXT_DUP);
	}
	mdb_cursor_close(cursor);
	if (rc != LUMEN_OK)
		return rc;
	return mrc == MDB_NOTFOUND ? LUMEN_OK : mdb_store_map_error(mrc);
}

/* Highest ID with a name: the top of the "everything" range. */
static int highest_id(struct mdb_store *store, MDB_txn *txn, uint64_t *id)
{
	return mdb_store_last_key(txn, store->id2name, id);
}

static int degrade_to_all(struct mdb_store *store, MDB_txn *txn, struct idl *out)
{
	uint64_t top;

	int rc = highest_id(store, txn, &top);
	if (rc == LUMEN_OK)
		idl_set_range(out, 1, top);
	return rc;
}

/* Appends children to an IDL whose room was reserved beforehand. */
static int append_child(void *ctx, uint64_t child_id)
{
	struct idl *out = ctx;

	if (out->count == out->capacity)
		return LUMEN_EIO; /* more children than the counts say */
	out->ids[out->count++] = child_id;
	return LUMEN_OK;
}

int dn2id_children_idl(struct mdb_store *store, MDB_txn *txn, uint64_t id, struct idl *out)
{
	uint64_t children;

	idl_clear(out);
	int rc = dn2id_counts(store, txn, id, &children, NULL);
	if (rc != LUMEN_OK)
		return rc;
	if (children == 0)
		return LUMEN_OK;
	if (!idl_reserve(out, (size_t)children))
		return degrade_to_all(store, txn, out);
	rc = dn2id_children(store, txn, id, append_child, out);
	idl_sort_unique(out);
	return rc;
}

int dn2id_subtree(struct mdb_store *store, MDB_txn *txn, uint64_t id, struct idl *out)
{
	uint64_t descendants = 0;

	idl_clear(out);
	int rc = read_count(store, txn, id, &descendants);
	if (rc != LUMEN_OK)
		return rc;
	if (descendants >= IDL_MAX_IDS || !idl_reserve(out, (size_t)descendants + 1))
		return degrade_to_all(store, txn, out);
	/* Breadth first, using the output itself as the queue. */
	out->ids[out->count++] = id;
	for (size_t next = 0; next < out->count && rc == LUMEN_OK; next++)
		rc = dn2id_children(store, txn, out->ids[next], append_child, out);
	idl_sort_unique(out);
	return rc;
}

int dn2id_parent(struct mdb_store *store, MDB_txn *txn, uint64_t id, uint64_t *parent_id)
{
	struct name_record name = { 0 };

	int rc = read_name(store, txn, id, &name);
	if (rc == LUMEN_OK)
		*parent_id = name.parent;
	return rc;
}

/* Joins the non-empty parts with ',' into arena memory. */
static int join_rdns(const struct ber_view *parts, size_t n, struct arena *arena,
		     struct ber_view *out)
{
	size_t total = 0;

	for (size_t i = 0; i < n; i++)
		total += parts[i].len + 1;
	uint8_t *buf = arena_alloc(arena, total ? total : 1);
	if (buf == NULL)
		return LUMEN_ENOMEM;
	size_t len = 0;
	for (size_t i = 0; i < n; i++) {
		if (parts[i].len == 0)
			continue;
		if (len > 0)
			buf[len++] = ',';
		memcpy(buf + len, parts[i].ptr, parts[i].len);
		len += parts[i].len;
	}
	*out = (struct ber_view){ buf, len };
	return LUMEN_OK;
}

int dn2id_names(struct mdb_store *store, MDB_txn *txn, uint64_t id, struct arena *arena,
		struct ber_view *ndn, struct ber_view *dn)
{
	struct ber_view nrdns[DN_MAX_RDNS], rdns[DN_MAX_RDNS];
	size_t n = 0;
	int rc = LUMEN_OK;

	if (id == 0)
		return LUMEN_ENOTFOUND;
	while (id != 0) {
		struct name_record name = { 0 };
		if (n == DN_MAX_RDNS)
			return LUMEN_ELIMIT;
		rc = read_name(store, txn, id, &name);
		if (rc != LUMEN_OK)
			return n > 0 && rc == LUMEN_ENOTFOUND ? LUMEN_EIO : rc;
		nrdns[n] = name.nrdn;
		rdns[n] = name.rdn;
		n++;
		id = name.parent;
	}
	if (ndn != NULL)
		rc = join_rdns(nrdns, n, arena, ndn);
	if (rc == LUMEN_OK && dn != NULL)
		rc = join_rdns(rdns, n, arena, dn);
	return rc;
}

int dn2id_counts(struct mdb_store *store, MDB_txn *txn, uint64_t id, uint64_t *children,
		 uint64_t *descendants)
{
	uint64_t below = 0;

	int rc = read_count(store, txn, id, &below);
	if (rc != LUMEN_OK)
		return rc;
	if (descendants != NULL)
		*descendants = below;
	if (children == NULL)
		return LUMEN_OK;
	return dn2id_child_count(store, txn, id, children);
}

int dn2id_child_count(struct mdb_store *store, MDB_txn *txn, uint64_t id, uint64_t *children)
{
	MDB_cursor *cursor;
	MDB_val key = { sizeof(id), &id };
	MDB_val data;
	size_t n = 0;

	int mrc = mdb_cursor_open(txn, store->dn2id, &cursor);
	if (mrc != MDB_SUCCESS)
		return mdb_store_map_error(mrc);
	mrc = mdb_cursor_get(cursor, &key, &data, MDB_SET);
	if (mrc == MDB_SUCCESS)
		mrc = mdb_cursor_count(cursor, &n);
	mdb_cursor_close(cursor);
	if (mrc != MDB_SUCCESS && mrc != MDB_NOTFOUND)
		return mdb_store_map_error(mrc);
	*children = n;
	return LUMEN_OK;
}
