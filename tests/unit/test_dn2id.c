/*
 * test_dn2id.c — the entry tree: lookup, matched ancestors, children,
 * subtrees, counts, move/rename, delete, long RDNs.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "backmdb_test_env.h"
#include "dn.h"
#include "dn2id.h"

static struct test_store t;
static MDB_txn *txn;

/*
 * 1 dc=example,dc=com
 *   2 ou=people      4 uid=a, 5 uid=b
 *   3 ou=groups      6 cn=g1
 */
struct node {
	uint64_t id, parent;
	const char *nrdn, *rdn;
};

static const struct node tree[] = {
	{ 1, 0, "dc=example,dc=com", "DC=Example,DC=Com" },
	{ 2, 1, "ou=people", "ou=People" },
	{ 3, 1, "ou=groups", "ou=Groups" },
	{ 4, 2, "uid=a", "UID=A" },
	{ 5, 2, "uid=b", "uid=b" },
	{ 6, 3, "cn=g1", "cn=G1" },
};

static void setup(void)
{
	test_store_open(&t);
	txn = test_write_txn(&t);
	for (size_t i = 0; i < sizeof(tree) / sizeof(tree[0]); i++)
		ck_assert_int_eq(dn2id_add(t.store, txn, tree[i].parent, TEST_VIEW(tree[i].nrdn),
					   TEST_VIEW(tree[i].rdn), tree[i].id), LUMEN_OK);
}

static void teardown(void)
{
	if (txn != NULL)
		mdb_txn_abort(txn);
	txn = NULL;
	test_store_close(&t);
}

static int lookup(const char *ndn, uint64_t *id, struct dn2id_match *m)
{
	return dn2id_lookup(t.store, txn, TEST_VIEW(ndn), id, m);
}

static void assert_counts(uint64_t id, uint64_t children, uint64_t descendants)
{
	uint64_t c = 99, d = 99;
	ck_assert_int_eq(dn2id_counts(t.store, txn, id, &c, &d), LUMEN_OK);
	ck_assert_uint_eq(c, children);
	ck_assert_uint_eq(d, descendants);
}

static void assert_ids(const struct idl *l, const uint64_t *want, size_t n)
{
	ck_assert(!l->is_range);
	ck_assert_uint_eq(l->count, n);
	for (size_t i = 0; i < n; i++)
		ck_assert_uint_eq(l->ids[i], want[i]);
}

struct lookup_case {
	const char *ndn;
	int rc;
	uint64_t id;            /* when found */
	uint64_t matched_id;    /* when not found */
	const char *matched;    /* expected matched DN */
};

static const struct lookup_case lookup_cases[] = {
	{ "dc=example,dc=com", LUMEN_OK, 1, 0, "" },
	{ "ou=people,dc=example,dc=com", LUMEN_OK, 2, 0, "" },
	{ "uid=b,ou=people,dc=example,dc=com", LUMEN_OK, 5, 0, "" },
	{ "cn=g1,ou=groups,dc=example,dc=com", LUMEN_OK, 6, 0, "" },
	{ "uid=c,ou=people,dc=example,dc=com", LUMEN_ENOTFOUND, 0, 2, "ou=people,dc=example,dc=com" },
	{ "x=1,uid=c,ou=people,dc=example,dc=com", LUMEN_ENOTFOUND, 0, 2,
	  "ou=people,dc=example,dc=com" },
	{ "ou=other,dc=example,dc=com", LUMEN_ENOTFOUND, 0, 1, "dc=example,dc=com" },
	{ "uid=a,ou=groups,dc=example,dc=com", LUMEN_ENOTFOUND, 0, 3, "ou=groups,dc=example,dc=com" },
	{ "dc=com", LUMEN_ENOTFOUND, 0, 0, "" },
	{ "dc=example,dc=org", LUMEN_ENOTFOUND, 0, 0, "" },
	{ "xdc=example,dc=com", LUMEN_ENOTFOUND, 0, 0, "" }, /* not at an RDN boundary */
	{ "", LUMEN_ENOTFOUND, 0, 0, "" },
};

START_TEST(lookup_table)
{
	const struct lookup_case *c = &lookup_cases[_i];
	uint64_t id = 0;
	struct dn2id_match m = { 77, 77 };

	ck_assert_int_eq(lookup(c->ndn, &id, &m), c->rc);
	if (c->rc == LUMEN_OK) {
		ck_assert_uint_eq(id, c->id);
		return;
	}
	ck_assert_uint_eq(m.id, c->matched_id);
	ck_assert_uint_eq(m.ndn_len, strlen(c->matched));
	ck_assert(memcmp(c->ndn + strlen(c->ndn) - m.ndn_len, c->matched, m.ndn_len) == 0);
}
END_TEST

START_TEST(counts_children_subtree)
{
	struct idl l;

	assert_counts(1, 2, 5);
	assert_counts(2, 2, 2);
	assert_counts(3, 1, 1);
	assert_counts(4, 0, 0);
	ck_assert_int_eq(dn2id_counts(t.store, txn, 99, NULL, NULL), LUMEN_ENOTFOUND);

	idl_init(&l);
	ck_assert_int_eq(dn2id_children_idl(t.store, txn, 2, &l), LUMEN_OK);
	assert_ids(&l, (const uint64_t[]){ 4, 5 }, 2);
	ck_assert_int_eq(dn2id_children_idl(t.store, txn, 4, &l), LUMEN_OK);
	ck_assert(idl_is_empty(&l));
	ck_assert_int_eq(dn2id_subtree(t.store, txn, 1, &l), LUMEN_OK);
	assert_ids(&l, (const uint64_t[]){ 1, 2, 3, 4, 5, 6 }, 6);
	ck_assert_int_eq(dn2id_subtree(t.store, txn, 3, &l), LUMEN_OK);
	assert_ids(&l, (const uint64_t[]){ 3, 6 }, 2);
	ck_assert_int_eq(dn2id_subtree(t.store, txn, 42, &l), LUMEN_ENOTFOUND);
	idl_release(&l);

	/* a subtree bigger than the caller's buffer degrades to [1, highest] */
	uint64_t buf[2];
	idl_init_buffer(&l, buf, 2);
	ck_assert_int_eq(dn2id_subtree(t.store, txn, 1, &l), LUMEN_OK);
	ck_assert(l.is_range && l.lo == 1 && l.hi == 6);
	ck_assert_int_eq(dn2id_is_within(t.store, txn, 6, 3), 1);
	ck_assert_int_eq(dn2id_is_within(t.store, txn, 6, 2), 0);
	ck_assert_int_eq(dn2id_is_within(t.store, txn, 6, 6), 1);
	ck_assert_int_eq(dn2id_is_within(t.store, txn, 99, 1), LUMEN_ENOTFOUND);
}
END_TEST

static int count_child(void *ctx, uint64_t id)
{
	(void)id;
	return ++*(int *)ctx == 1 ? LUMEN_OK : LUMEN_ELIMIT;
}

START_TEST(children_callback_stops)
{
	int seen = 0;
	ck_assert_int_eq(dn2id_children(t.store, txn, 1, count_child, &seen), LUMEN_ELIMIT);
	ck_assert_int_eq(seen, 2);
}
END_TEST

START_TEST(names_walk_up)
{
	struct arena a;
	struct ber_view ndn, dn;

	arena_init(&a, 0);
	ck_assert_int_eq(dn2id_names(t.store, txn, 4, &a, &ndn, &dn), LUMEN_OK);
	ck_assert_uint_eq(ndn.len, strlen("uid=a,ou=people,dc=example,dc=com"));
	ck_assert(memcmp(ndn.ptr, "uid=a,ou=people,dc=example,dc=com", ndn.len) == 0);
	ck_assert(memcmp(dn.ptr, "UID=A,ou=People,DC=Example,DC=Com", dn.len) == 0);
	ck_assert_int_eq(dn2id_names(t.store, txn, 1, &a, NULL, &dn), LUMEN_OK);
	ck_assert(dn.len == 17 && memcmp(dn.ptr, "DC=Example,DC=Com", 17) == 0);
	ck_assert_int_eq(dn2id_names(t.store, txn, 99, &a, &ndn, &dn), LUMEN_ENOTFOUND);
	ck_assert_int_eq(dn2id_names(t.store, txn, 0, &a, &ndn, &dn), LUMEN_ENOTFOUND);
	arena_free(&a);
}
END_TEST

struct bad_add {
	const char *name;
	uint64_t parent;
	const char *nrdn;
	uint64_t id;
	int rc;
};

static const struct bad_add bad_adds[] = {
	{ "sibling exists", 2, "uid=a", 7, LUMEN_EEXIST },
	{ "root exists", 0, "dc=example,dc=com", 7, LUMEN_EEXIST },
	{ "ID in use", 2, "uid=new", 4, LUMEN_EEXIST },
	{ "no parent", 99, "uid=x", 7, LUMEN_ENOTFOUND },
	{ "ID 0", 2, "uid=x", 0, LUMEN_EINVAL },
	{ "empty RDN below a root", 2, "", 7, LUMEN_EINVAL },
};

START_TEST(add_refused)
{
	const struct bad_add *c = &bad_adds[_i];
	ck_assert_msg(dn2id_add(t.store, txn, c->parent, TEST_VIEW(c->nrdn), TEST_VIEW(c->nrdn),
				c->id) == c->rc, "%s", c->name);
	assert_counts(1, 2, 5); /* nothing changed */
}
END_TEST

START_TEST(delete_leaf_only)
{
	uint64_t id;

	ck_assert_int_eq(dn2id_delete(t.store, txn, 2), LUMEN_EBUSY);
	ck_assert_int_eq(dn2id_delete(t.store, txn, 99), LUMEN_ENOTFOUND);
	ck_assert_int_eq(dn2id_delete(t.store, txn, 5), LUMEN_OK);
	ck_assert_int_eq(lookup("uid=b,ou=people,dc=example,dc=com", &id, NULL), LUMEN_ENOTFOUND);
	assert_counts(2, 1, 1);
	assert_counts(1, 2, 4);
	ck_assert_int_eq(dn2id_delete(t.store, txn, 4), LUMEN_OK);
	ck_assert_int_eq(dn2id_delete(t.store, txn, 2), LUMEN_OK);
	assert_counts(1, 1, 2);
	/* the RDN is free again */
	ck_assert_int_eq(dn2id_add(t.store, txn, 1, TEST_VIEW("ou=people"), TEST_VIEW("ou=people"), 9),
			 LUMEN_OK);
	ck_assert_int_eq(lookup("ou=people,dc=example,dc=com", &id, NULL), LUMEN_OK);
	ck_assert_uint_eq(id, 9);
}
END_TEST

START_TEST(move_subtree)
{
	uint64_t id;
	struct arena a;
	struct ber_view ndn;

	/* ou=people → ou=staff,ou=groups: one record moves, children follow */
	ck_assert_int_eq(dn2id_move(t.store, txn, 2, 3, TEST_VIEW("ou=staff"), TEST_VIEW("ou=Staff")),
			 LUMEN_OK);
	ck_assert_int_eq(lookup("uid=a,ou=staff,ou=groups,dc=example,dc=com", &id, NULL), LUMEN_OK);
	ck_assert_uint_eq(id, 4);
	ck_assert_int_eq(lookup("uid=a,ou=people,dc=example,dc=com", &id, NULL), LUMEN_ENOTFOUND);
	assert_counts(3, 2, 4);
	assert_counts(1, 1, 5);
	arena_init(&a, 0);
	ck_assert_int_eq(dn2id_names(t.store, txn, 5, &a, &ndn, NULL), LUMEN_OK);
	ck_assert(memcmp(ndn.ptr, "uid=b,ou=staff,ou=groups,dc=example,dc=com", ndn.len) == 0);
	arena_free(&a);

	/* rename in place, same normalized RDN, new spelling */
	ck_assert_int_eq(dn2id_move(t.store, txn, 6, 3, TEST_VIEW("cn=g1"), TEST_VIEW("CN=g1")),
			 LUMEN_OK);
	assert_counts(3, 2, 4);
	/* move back up */
	ck_assert_int_eq(dn2id_move(t.store, txn, 2, 1, TEST_VIEW("ou=people"), TEST_VIEW("ou=people")),
			 LUMEN_OK);
	assert_counts(3, 1, 1);
	assert_counts(1, 2, 5);
}
END_TEST

struct bad_move {
	const char *name;
	uint64_t id, parent;
	const char *nrdn;
	int rc;
};

static const struct bad_move bad_moves[] = {
	{ "under itself", 2, 2, "ou=x", LUMEN_EINVAL },
	{ "under own descendant", 1, 4, "dc=x", LUMEN_EINVAL },
	{ "sibling name taken", 4, 2, "uid=b", LUMEN_EEXIST },
	{ "target taken elsewhere", 4, 3, "cn=g1", LUMEN_EEXIST },
	{ "no such parent", 4, 99, "uid=a", LUMEN_ENOTFOUND },
	{ "no such entry", 99, 1, "uid=a", LUMEN_ENOTFOUND },
	{ "empty RDN", 4, 3, "", LUMEN_EINVAL },
};

START_TEST(move_refused)
{
	const struct bad_move *c = &bad_moves[_i];
	uint64_t id;

	ck_assert_msg(dn2id_move(t.store, txn, c->id, c->parent, TEST_VIEW(c->nrdn),
				 TEST_VIEW(c->nrdn)) == c->rc, "%s", c->name);
	assert_counts(1, 2, 5);
	ck_assert_int_eq(lookup("uid=a,ou=people,dc=example,dc=com", &id, NULL), LUMEN_OK);
	ck_assert_uint_eq(id, 4);
}
END_TEST

START_TEST(escaped_comma_is_not_a_separator)
{
	uint64_t id;
	struct dn2id_match m;

	ck_assert_int_eq(dn2id_add(t.store, txn, 1, TEST_VIEW("cn=a\\2cb"), TEST_VIEW("cn=a\\,b"), 10),
			 LUMEN_OK);
	ck_assert_int_eq(dn2id_add(t.store, txn, 1, TEST_VIEW("cn=c\\,d"), TEST_VIEW("cn=c\\,d"), 11),
			 LUMEN_OK);
	ck_assert_int_eq(lookup("cn=a\\2cb,dc=example,dc=com", &id, NULL), LUMEN_OK);
	ck_assert_uint_eq(id, 10);
	ck_assert_int_eq(lookup("cn=c\\,d,dc=example,dc=com", &id, NULL), LUMEN_OK);
	ck_assert_uint_eq(id, 11);
	ck_assert_int_eq(lookup("x=y,cn=c\\,d,dc=example,dc=com", &id, &m), LUMEN_ENOTFOUND);
	ck_assert_uint_eq(m.id, 11);
	ck_assert_uint_eq(m.ndn_len, strlen("cn=c\\,d,dc=example,dc=com"));
}
END_TEST

/* RDNs around and far beyond the inline limit; shared long prefixes. */
START_TEST(long_rdns)
{
	static const size_t lengths[] = { DN2ID_RDN_INLINE_MAX, DN2ID_RDN_INLINE_MAX + 1, 1000, 5000 };
	enum { N = sizeof(lengths) / sizeof(lengths[0]) };
	char *rdn[2][N];
	char *ndn = malloc(6000 + 32);
	uint64_t id;

	for (int v = 0; v < 2; v++) {
		for (size_t i = 0; i < N; i++) {
			rdn[v][i] = malloc(lengths[i] + 1);
			memset(rdn[v][i], 'x', lengths[i]);
			memcpy(rdn[v][i], "cn=", 3);
			/* same first 600+ bytes; differ only at the very end */
			rdn[v][i][lengths[i] - 1] = v ? 'b' : 'a';
			rdn[v][i][lengths[i]] = '\0';
			uint64_t new_id = 100 + v * 10 + i;
			ck_assert_int_eq(dn2id_add(t.store, txn, 2, TEST_VIEW(rdn[v][i]),
						   TEST_VIEW(rdn[v][i]), new_id), LUMEN_OK);
		}
	}
	for (int v = 0; v < 2; v++) {
		for (size_t i = 0; i < N; i++) {
			snprintf(ndn, 6032, "%s,ou=people,dc=example,dc=com", rdn[v][i]);
			ck_assert_int_eq(lookup(ndn, &id, NULL), LUMEN_OK);
			ck_assert_uint_eq(id, 100 + v * 10 + i);
			ck_assert_int_eq(dn2id_add(t.store, txn, 2, TEST_VIEW(rdn[v][i]),
						   TEST_VIEW(rdn[v][i]), 999), LUMEN_EEXIST);
		}
	}
	/* a name that shares the stored prefix but differs after it */
	snprintf(ndn, 6032, "%s", rdn[0][3]);
	ndn[4500] = 'q';
	strcat(ndn, ",ou=people,dc=example,dc=com");
	ck_assert_int_eq(lookup(ndn, &id, NULL), LUMEN_ENOTFOUND);
	assert_counts(2, 2 + 2 * N, 2 + 2 * N);
	/* move and delete long-named entries */
	ck_assert_int_eq(dn2id_move(t.store, txn, 103, 3, TEST_VIEW(rdn[0][3]), TEST_VIEW(rdn[0][3])),
			 LUMEN_OK);
	ck_assert_int_eq(dn2id_delete(t.store, txn, 113), LUMEN_OK);
	snprintf(ndn, 6032, "%s,ou=groups,dc=example,dc=com", rdn[0][3]);
	ck_assert_int_eq(lookup(ndn, &id, NULL), LUMEN_OK);
	ck_assert_uint_eq(id, 103);
	assert_counts(2, 2 + 2 * N - 2, 2 + 2 * N - 2);
	for (int v = 0; v < 2; v++)
		for (size_t i = 0; i < N; i++)
			free(rdn[v][i]);
	free(ndn);
}
END_TEST

START_TEST(second_root_and_commit)
{
	uint64_t id;

	ck_assert_int_eq(dn2id_add(t.store, txn, 0, TEST_VIEW("o=other"), TEST_VIEW("o=Other"), 20),
			 LUMEN_OK);
	ck_assert_int_eq(dn2id_add(t.store, txn, 20, TEST_VIEW("cn=x"), TEST_VIEW("cn=x"), 21),
			 LUMEN_OK);
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	txn = test_read_txn(&t);
	ck_assert_int_eq(lookup("cn=x,o=other", &id, NULL), LUMEN_OK);
	ck_assert_uint_eq(id, 21);
	ck_assert_int_eq(lookup("uid=a,ou=people,dc=example,dc=com", &id, NULL), LUMEN_OK);
	ck_assert_uint_eq(id, 4);
	assert_counts(20, 1, 1);
}
END_TEST

static int lookup_snapshot(MDB_txn *in, const char *ndn, uint64_t *id, struct dn2id_match *m)
{
	return dn2id_lookup_snapshot(t.store, in, NULL, TEST_VIEW(ndn), id, m);
}

/*
 * The snapshot lookup answers as dn2id_lookup does, every time: names
 * found, names missing (with the same matched ancestor), siblings of a
 * remembered parent, and twice in a row.
 */
START_TEST(snapshot_lookup_matches_walk)
{
	static const char *const names[] = {
		"dc=example,dc=com", "ou=people,dc=example,dc=com",
		"uid=a,ou=people,dc=example,dc=com", "uid=b,ou=people,dc=example,dc=com",
		"uid=zz,ou=people,dc=example,dc=com", "cn=g1,ou=groups,dc=example,dc=com",
		"cn=x,uid=a,ou=people,dc=example,dc=com", "ou=nothing,dc=example,dc=com",
		"cn=y,ou=nothing,dc=example,dc=com", "dc=other,dc=com", "uid=a\2cou=people,dc=example,dc=com",
	};
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	txn = test_read_txn(&t);
	for (int round = 0; round < 3; round++) {
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			uint64_t walk_id = 0, memo_id = 0;
			struct dn2id_match walk_m = { 7, 7 }, memo_m = { 9, 9 };
			int walk_rc = lookup(names[i], &walk_id, &walk_m);
			int memo_rc = lookup_snapshot(txn, names[i], &memo_id, &memo_m);
			ck_assert_msg(walk_rc == memo_rc, "%s: %d against %d", names[i], memo_rc, walk_rc);
			if (walk_rc == LUMEN_OK)
				ck_assert_uint_eq(memo_id, walk_id);
			ck_assert_uint_eq(memo_m.id, walk_m.id);
			ck_assert_uint_eq(memo_m.ndn_len, walk_m.ndn_len);
		}
	}
}
END_TEST

/*
 * A name remembered in one snapshot is not believed in the next: deleted,
 * moved or re-added under another ID, the new snapshot sees what is
 * stored, while a snapshot still open keeps its own answer.
 */
START_TEST(snapshot_lookup_follows_writes)
{
	uint64_t id;
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	MDB_txn *before = test_read_txn(&t);
	ck_assert_int_eq(lookup_snapshot(before, "uid=b,ou=people,dc=example,dc=com", &id, NULL),
			 LUMEN_OK);
	ck_assert_uint_eq(id, 5);
	ck_assert_int_eq(lookup_snapshot(before, "uid=a,ou=people,dc=example,dc=com", &id, NULL),
			 LUMEN_OK);
	ck_assert_uint_eq(id, 4);

	txn = test_write_txn(&t);
	ck_assert_int_eq(dn2id_delete(t.store, txn, 5), LUMEN_OK);
	ck_assert_int_eq(dn2id_delete(t.store, txn, 4), LUMEN_OK);
	ck_assert_int_eq(dn2id_add(t.store, txn, 2, TEST_VIEW("uid=a"), TEST_VIEW("uid=a"), 40),
			 LUMEN_OK);
	ck_assert_int_eq(dn2id_move(t.store, txn, 3, 2, TEST_VIEW("ou=groups"), TEST_VIEW("ou=groups")),
			 LUMEN_OK);
	ck_assert_int_eq(mdb_txn_commit(txn), 0);

	txn = test_read_txn(&t);
	ck_assert_int_eq(lookup_snapshot(txn, "uid=b,ou=people,dc=example,dc=com", &id, NULL),
			 LUMEN_ENOTFOUND);
	ck_assert_int_eq(lookup_snapshot(txn, "uid=a,ou=people,dc=example,dc=com", &id, NULL),
			 LUMEN_OK);
	ck_assert_uint_eq(id, 40);
	ck_assert_int_eq(lookup_snapshot(txn, "cn=g1,ou=groups,dc=example,dc=com", &id, NULL),
			 LUMEN_ENOTFOUND);
	ck_assert_int_eq(lookup_snapshot(txn, "cn=g1,ou=groups,ou=people,dc=example,dc=com", &id,
					 NULL), LUMEN_OK);
	ck_assert_uint_eq(id, 6);
	/* The older snapshot still sees its own tree. */
	ck_assert_int_eq(lookup_snapshot(before, "uid=b,ou=people,dc=example,dc=com", &id, NULL),
			 LUMEN_OK);
	ck_assert_uint_eq(id, 5);
	ck_assert_int_eq(lookup_snapshot(before, "uid=a,ou=people,dc=example,dc=com", &id, NULL),
			 LUMEN_OK);
	ck_assert_uint_eq(id, 4);
	mdb_txn_abort(before);
}
END_TEST

/* A second store holding dc=example,dc=com (11), ou=people below it (12)
 * and, with_a, uid=a below that (13), written in one transaction. */
static void open_second_store(struct test_store *other, bool with_a)
{
	test_store_open(other);
	MDB_txn *w = test_write_txn(other);
	ck_assert_int_eq(dn2id_add(other->store, w, 0, TEST_VIEW("dc=example,dc=com"),
				   TEST_VIEW("dc=example,dc=com"), 11), LUMEN_OK);
	ck_assert_int_eq(dn2id_add(other->store, w, 11, TEST_VIEW("ou=people"),
				   TEST_VIEW("ou=people"), 12), LUMEN_OK);
	if (with_a)
		ck_assert_int_eq(dn2id_add(other->store, w, 12, TEST_VIEW("uid=a"),
					   TEST_VIEW("uid=a"), 13), LUMEN_OK);
	ck_assert_int_eq(mdb_txn_commit(w), 0);
}

/* Two stores at the same transaction ID hold the same name under other
 * IDs: a memo keyed by the snapshot alone would mix them up. */
START_TEST(snapshot_lookup_per_store)
{
	struct test_store other;
	uint64_t id;
	open_second_store(&other, true);
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	txn = test_read_txn(&t);
	MDB_txn *r = test_read_txn(&other);
	ck_assert_uint_eq(mdb_txn_id(r), mdb_txn_id(txn));
	for (int round = 0; round < 2; round++) {
		ck_assert_int_eq(lookup_snapshot(txn, "uid=a,ou=people,dc=example,dc=com", &id, NULL),
				 LUMEN_OK);
		ck_assert_uint_eq(id, 4);
		ck_assert_int_eq(dn2id_lookup_snapshot(other.store, r, NULL,
						       TEST_VIEW("uid=a,ou=people,dc=example,dc=com"),
						       &id, NULL), LUMEN_OK);
		ck_assert_uint_eq(id, 13);
		ck_assert_int_eq(dn2id_lookup_snapshot(other.store, r, NULL,
						       TEST_VIEW("uid=b,ou=people,dc=example,dc=com"),
						       &id, NULL), LUMEN_ENOTFOUND);
	}
	mdb_txn_abort(r);
	test_store_close(&other);
}
END_TEST

/*
 * A reader's kept cursor follows the reader from snapshot to snapshot: a
 * name added after the first snapshot is found once the reader moves on,
 * and a name missing in both is missing with the same matched ancestor.
 */
START_TEST(kept_cursor_follows_snapshots)
{
	struct test_store other;
	struct mdb_reader reader;
	uint64_t id;
	struct dn2id_match m;
	MDB_txn *w;
	open_second_store(&other, false);
	mdb_reader_init(&reader, other.store);
	ck_assert_int_eq(mdb_reader_begin(&reader), LUMEN_OK);
	ck_assert_int_eq(dn2id_lookup_snapshot(other.store, reader.txn, &reader,
					       TEST_VIEW("uid=a,ou=people,dc=example,dc=com"),
					       &id, &m), LUMEN_ENOTFOUND);
	ck_assert_uint_eq(m.id, 12);
	ck_assert_ptr_nonnull(reader.kept[0].cursor);
	ck_assert_uint_eq(reader.kept[0].table, other.store->dn2id);
	for (uint64_t added = 13; added < 16; added++) {
		char rdn[16];
		snprintf(rdn, sizeof(rdn), "uid=%c", (char)('a' + added - 13));
		w = test_write_txn(&other);
		ck_assert_int_eq(dn2id_add(other.store, w, 12, TEST_VIEW(rdn), TEST_VIEW(rdn), added),
				 LUMEN_OK);
		ck_assert_int_eq(mdb_txn_commit(w), 0);
		ck_assert_int_eq(mdb_reader_refresh(&reader), LUMEN_OK);
		char name[64];
		snprintf(name, sizeof(name), "%s,ou=people,dc=example,dc=com", rdn);
		ck_assert_int_eq(dn2id_lookup_snapshot(other.store, reader.txn, &reader,
						       TEST_VIEW(name), &id, NULL), LUMEN_OK);
		ck_assert_uint_eq(id, added);
		ck_assert_int_eq(dn2id_lookup_snapshot(other.store, reader.txn, &reader,
						       TEST_VIEW("uid=z,ou=people,dc=example,dc=com"),
						       &id, &m), LUMEN_ENOTFOUND);
		ck_assert_uint_eq(m.id, 12);
	}
	mdb_reader_end(&reader);
	ck_assert_ptr_null(mdb_reader_dn2id_cursor(&reader));
	mdb_reader_free(&reader);
	ck_assert_ptr_null(reader.kept[0].cursor);
	test_store_close(&other);
}
END_TEST

/* A database whose suffix is the empty DN holds top-level entries. */
START_TEST(empty_root)
{
	struct test_store e;
	uint64_t id;
	struct dn2id_match m;

	test_store_open(&e);
	MDB_txn *w = test_write_txn(&e);
	ck_assert_int_eq(dn2id_add(e.store, w, 0, TEST_VIEW(""), TEST_VIEW(""), 1), LUMEN_OK);
	ck_assert_int_eq(dn2id_add(e.store, w, 1, TEST_VIEW("dc=com"), TEST_VIEW("DC=com"), 2),
			 LUMEN_OK);
	ck_assert_int_eq(dn2id_lookup(e.store, w, TEST_VIEW("dc=com"), &id, NULL), LUMEN_OK);
	ck_assert_uint_eq(id, 2);
	ck_assert_int_eq(dn2id_lookup(e.store, w, TEST_VIEW(""), &id, NULL), LUMEN_OK);
	ck_assert_uint_eq(id, 1);
	ck_assert_int_eq(dn2id_lookup(e.store, w, TEST_VIEW("dc=x,dc=org"), &id, &m), LUMEN_ENOTFOUND);
	ck_assert_uint_eq(m.id, 1);
	ck_assert_uint_eq(m.ndn_len, 0);
	struct arena a;
	struct ber_view dn;
	arena_init(&a, 0);
	ck_assert_int_eq(dn2id_names(e.store, w, 2, &a, NULL, &dn), LUMEN_OK);
	ck_assert(dn.len == 6 && memcmp(dn.ptr, "DC=com", 6) == 0);
	arena_free(&a);
	mdb_txn_abort(w);
	test_store_close(&e);
}
END_TEST

START_TEST(too_many_rdns)
{
	char ndn[2 * (DN_MAX_RDNS + 2) + 1];
	uint64_t id;

	for (size_t i = 0; i < DN_MAX_RDNS + 1; i++)
		memcpy(ndn + 2 * i, "a,", 2);
	ndn[2 * (DN_MAX_RDNS + 1) - 1] = '\0';
	ck_assert_int_eq(lookup(ndn, &id, NULL), LUMEN_ELIMIT);
}
END_TEST

/* A suffix longer than the inline limit: the root's key is hashed too. */
START_TEST(long_root)
{
	char root[700], ndn[720];
	uint64_t id;
	struct dn2id_match m;

	memset(root, 'r', sizeof(root) - 1);
	memcpy(root, "o=", 2);
	root[sizeof(root) - 1] = '\0';
	ck_assert_int_eq(dn2id_add(t.store, txn, 0, TEST_VIEW(root), TEST_VIEW(root), 30), LUMEN_OK);
	ck_assert_int_eq(dn2id_add(t.store, txn, 30, TEST_VIEW("cn=k"), TEST_VIEW("cn=k"), 31),
			 LUMEN_OK);
	snprintf(ndn, sizeof(ndn), "cn=k,%s", root);
	ck_assert_int_eq(lookup(ndn, &id, NULL), LUMEN_OK);
	ck_assert_uint_eq(id, 31);
	snprintf(ndn, sizeof(ndn), "cn=z,%s", root);
	ck_assert_int_eq(lookup(ndn, &id, &m), LUMEN_ENOTFOUND);
	ck_assert_uint_eq(m.id, 30);
	ck_assert_uint_eq(m.ndn_len, strlen(root));
	ck_assert_int_eq(lookup("dc=example,dc=com", &id, NULL), LUMEN_OK);
	ck_assert_uint_eq(id, 1);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("dn2id");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, lookup_table, 0, (int)(sizeof(lookup_cases) / sizeof(lookup_cases[0])));
	tcase_add_test(tc, counts_children_subtree);
	tcase_add_test(tc, children_callback_stops);
	tcase_add_test(tc, names_walk_up);
	tcase_add_loop_test(tc, add_refused, 0, (int)(sizeof(bad_adds) / sizeof(bad_adds[0])));
	tcase_add_test(tc, delete_leaf_only);
	tcase_add_test(tc, move_subtree);
	tcase_add_loop_test(tc, move_refused, 0, (int)(sizeof(bad_moves) / sizeof(bad_moves[0])));
	tcase_add_test(tc, escaped_comma_is_not_a_separator);
	tcase_add_test(tc, long_rdns);
	tcase_add_test(tc, second_root_and_commit);
	tcase_add_test(tc, snapshot_lookup_matches_walk);
	tcase_add_test(tc, snapshot_lookup_follows_writes);
	tcase_add_test(tc, snapshot_lookup_per_store);
	tcase_add_test(tc, long_root);
	tcase_add_test(tc, empty_root);
	tcase_add_test(tc, kept_cursor_follows_snapshots);
	tcase_add_test(tc, too_many_rdns);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
