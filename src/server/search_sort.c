/*
 * search_sort.c — sort keys, the collection of (ID, key values) items,
 * their order, the VLV window and the contexts a VLV search keeps
 * (search_sort.h).
 */
#include "search_sort.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <stdlib.h>
#include <string.h>

#include "ldap_result_codes.h"
#include "lumen_error.h"
#include "matching.h"

static int resolve_key(const struct schema *schema, const struct sort_key_request *r,
		       struct sort_key *k, const char **diagnostic)
{
	struct attribute_description ad;
	if (attribute_description_parse(schema, (const char *)r->attribute.ptr, r->attribute.len,
					 &ad) != LUMEN_OK || ad.type == NULL) {
		*diagnostic = "serverSort control: Unrecognized attribute type in sort key";
		return LDAP_NO_SUCH_ATTRIBUTE;
	}
	k->type = ad.type;
	k->reverse = r->reverse;
	k->rule = r->ordering_rule.len > 0
		? matching_rule_find((const char *)r->ordering_rule.ptr, r->ordering_rule.len)
		: ad.type->ordering;
	if (k->rule == NULL || k->rule->normalize == NULL || k->rule->compare == NULL) {
		*diagnostic = "serverSort control: No ordering rule";
		return LDAP_INAPPROPRIATE_MATCHING;
	}
	return LDAP_SUCCESS;
}

int sort_spec_resolve(const struct schema *schema, const struct request_controls *c,
		      struct sort_spec *spec, const char **diagnostic)
{
	spec->n_keys = 0;
	for (size_t i = 0; i < c->n_sort_keys; i++) {
		int rc = resolve_key(schema, &c->sort_keys[i], &spec->keys[i], diagnostic);
		if (rc != LDAP_SUCCESS)
			return rc;
		spec->n_keys++;
	}
	return LDAP_SUCCESS;
}

void sort_collection_init(struct sort_collection *c, const struct sort_spec *spec, size_t max,
			  bool keep_dn)
{
	memset(c, 0, sizeof(*c));
	c->spec = spec;
	c->max = max;
	c->keep_dn = keep_dn;
	arena_init(&c->memory, 0);
	arena_init(&c->scratch, 0);
}

void sort_collection_free(struct sort_collection *c)
{
	free(c->items);
	free(c->order);
	c->items = NULL;
	c->order = NULL;
	c->n = c->cap = 0;
	arena_free(&c->memory);
	arena_free(&c->scratch);
}

/* One key value, normalized: <0 when a comes first in the key's order. */
static int key_order(const struct sort_key *k, struct ber_view a, struct ber_view b)
{
	int cmp = k->rule->compare(a, b);
	return k->reverse ? -cmp : cmp;
}

/* The least (reverse: greatest) readable value of k in e, normalized into
 * the scratch arena; ptr NULL when there is none. */
static int pick_value(struct sort_collection *c, const struct sort_key *k,
		      const struct entry *e, struct ber_view *out)
{
	*out = (struct ber_view){ NULL, 0 };
	/* The entry keeps each value normalized by the type's equality rule:
	 * when the ordering rule normalizes the same way (caseIgnoreMatch and
	 * caseIgnoreOrderingMatch do), that form is the key as it is. */
	const struct matching_rule *equality = k->type->equality;
	bool stored_is_key = equality != NULL && equality->normalize == k->rule->normalize;
	for (size_t i = 0; i < e->n_attributes; i++) {
		const struct entry_attribute *a = &e->attributes[i];
		if (a->desc.type != k->type)
			continue;
		for (size_t j = 0; j < a->n_values; j++) {
			struct ber_view v = a->values[j].normalized;
			int rc = LUMEN_OK;
			if (!stored_is_key || v.ptr == NULL)
				rc = k->rule->normalize(a->values[j].value.ptr, a->values[j].value.len,
							&c->scratch, &v);
			if (rc == LUMEN_ENOMEM)
				return rc;
			if (rc != LUMEN_OK)
				continue;
			if (v.ptr == NULL)
				v.ptr = (const uint8_t *)"";
			if (out->ptr == NULL || key_order(k, v, *out) < 0)
				*out = v;
		}
	}
	return LUMEN_OK;
}

static int grow(struct sort_collection *c)
{
	if (c->n < c->cap)
		return LUMEN_OK;
	size_t cap = c->cap ? c->cap * 2 : 64;
	if (cap > c->max)
		cap = c->max;
	struct sort_item *items = realloc(c->items, cap * sizeof(*items));
	if (items == NULL)
		return LUMEN_ENOMEM;
	c->items = items;
	c->cap = cap;
	return LUMEN_OK;
}

static int copy_view(struct arena *a, struct ber_view in, struct ber_view *out)
{
	*out = (struct ber_view){ NULL, 0 };
	if (in.ptr == NULL)
		return LUMEN_OK;
	uint8_t *p = arena_alloc(a, in.len + 1);
	if (p == NULL)
		return LUMEN_ENOMEM;
	memcpy(p, in.ptr, in.len);
	p[in.len] = '\0';
	*out = (struct ber_view){ p, in.len };
	return LUMEN_OK;
}

int sort_collection_add(struct sort_collection *c, const struct entry *e, uint64_t id,
			bool (*may_read)(void *arg, const struct attribute_type *type),
			void *may_read_arg)
{
	if (c->n >= c->max)
		return LUMEN_ELIMIT;
	int rc = grow(c);
	if (rc != LUMEN_OK)
		return rc;
	struct sort_item *it = &c->items[c->n];
	size_t n_keys = c->spec->n_keys;
	it->id = id;
	/* The DN, when kept, takes the slot after the keys: items stay small. */
	it->keys = arena_calloc(&c->memory, n_keys + c->keep_dn, sizeof(*it->keys));
	rc = it->keys == NULL ? LUMEN_ENOMEM : LUMEN_OK;
	if (rc == LUMEN_OK && c->keep_dn)
		rc = copy_view(&c->memory, e->ndn, &it->keys[n_keys]);
	for (size_t i = 0; rc == LUMEN_OK && i < c->spec->n_keys; i++) {
		const struct sort_key *k = &c->spec->keys[i];
		struct ber_view v = { NULL, 0 };
		if (may_read == NULL || may_read(may_read_arg, k->type))
			rc = pick_value(c, k, e, &v);
		if (rc == LUMEN_OK)
			rc = copy_view(&c->memory, v, &it->keys[i]);
	}
	arena_reset(&c->scratch);
	if (rc == LUMEN_OK)
		c->n++;
	return rc;
}

int sort_compare_keys(const struct sort_spec *spec, const struct ber_view *a,
		      const struct ber_view *b)
{
	for (size_t i = 0; i < spec->n_keys; i++) {
		const struct sort_key *k = &spec->keys[i];
		bool has_a = a[i].ptr != NULL, has_b = b[i].ptr != NULL;
		int cmp;
		if (has_a && has_b)
			cmp = key_order(k, a[i], b[i]);
		else if (has_a != has_b)    /* absent after every value */
			cmp = (has_a ? -1 : 1) * (k->reverse ? -1 : 1);
		else
			cmp = 0;
		if (cmp != 0)
			return cmp;
	}
	return 0;
}

/*
 * The rank prefix of a first-key value: its first eight bytes, big-endian,
 * zero-padded (so a shorter value ranks no later, as matching_compare_bytes
 * orders it), complemented for a reverse key; absent values rank last
 * (first, reversed). Equal prefixes say nothing: the keys decide.
 */
static uint64_t rank_prefix(const struct sort_key *k, struct ber_view v)
{
	if (k->rule->compare != matching_compare_bytes)
		return 0;
	if (v.ptr == NULL)
		return k->reverse ? 0 : UINT64_MAX;
	uint64_t p = 0;
	for (size_t i = 0; i < 8; i++)
		p = p << 8 | (i < v.len ? v.ptr[i] : 0);
	return k->reverse ? ~p : p;
}

/* Is a strictly before b? Prefixes first; the keys only on a tie. */
static inline bool rank_before(const struct sort_collection *c, const struct sort_rank *a,
			       const struct sort_rank *b)
{
	if (a->prefix != b->prefix)
		return a->prefix < b->prefix;
	return sort_compare_keys(c->spec, c->items[a->item].keys, c->items[b->item].keys) < 0;
}

/* Insertion sort of a short run (stable). */
static void sort_run(const struct sort_collection *c, struct sort_rank *a, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct sort_rank x = a[i];
		size_t j = i;
		for (; j > 0 && rank_before(c, &x, &a[j - 1]); j--)
			a[j] = a[j - 1];
		a[j] = x;
	}
}

/* Merge sorted from[lo, mid) and from[mid, hi) into to[lo, hi) (stable). */
static void merge(const struct sort_collection *c, const struct sort_rank *from,
		  struct sort_rank *to, size_t lo, size_t mid, size_t hi)
{
	size_t i = lo, j = mid, k = lo;
	while (i < mid && j < hi)
		to[k++] = rank_before(c, &from[j], &from[i]) ? from[j++] : from[i++];
	while (i < mid)
		to[k++] = from[i++];
	while (j < hi)
		to[k++] = from[j++];
}

#define SORT_RUN 16

/*
 * A stable bottom-up merge sort of the ranks (arrival order breaks the
 * ties it keeps): the comparison is inlined and most of it is one integer
 * compare, where qsort_r paid a call per comparison and a memcpy per move.
 * Errors: LUMEN_ENOMEM.
 */
static int sort_ranks(const struct sort_collection *c, struct sort_rank *order, size_t n)
{
	for (size_t lo = 0; lo < n; lo += SORT_RUN)
		sort_run(c, order + lo, n - lo < SORT_RUN ? n - lo : SORT_RUN);
	if (n <= SORT_RUN)
		return LUMEN_OK;
	struct sort_rank *tmp = malloc(n * sizeof(*tmp)), *from = order, *to = tmp;
	if (tmp == NULL)
		return LUMEN_ENOMEM;
	for (size_t width = SORT_RUN; width < n; width *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = lo + width < n ? lo + width : n;
			size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
			merge(c, from, to, lo, mid, hi);
		}
		struct sort_rank *swap = from;
		from = to;
		to = swap;
	}
	if (from != order)
		memcpy(order, from, n * sizeof(*order));
	free(tmp);
	return LUMEN_OK;
}

int sort_collection_sort(struct sort_collection *c)
{
	free(c->order);
	c->order = malloc((c->n ? c->n : 1) * sizeof(*c->order));
	if (c->order == NULL)
		return LUMEN_ENOMEM;
	if (c->n < c->cap) {            /* a kept result holds no slack */
		struct sort_item *items = realloc(c->items, c->n * sizeof(*items));
		if (items != NULL || c->n == 0) {
			c->items = items;
			c->cap = c->n;
		}
	}
	const struct sort_key *first = &c->spec->keys[0];
	for (size_t i = 0; i < c->n; i++)
		c->order[i] = (struct sort_rank){ rank_prefix(first, c->items[i].keys[0]), i };
	int rc = sort_ranks(c, c->order, c->n);
	if (rc != LUMEN_OK) {
		free(c->order);
		c->order = NULL;
	}
	return rc;
}

size_t sort_collection_bytes(const struct sort_collection *c)
{
	return c->cap * sizeof(*c->items) + (c->order != NULL ? c->n * sizeof(*c->order) : 0) +
	       c->memory.used;
}

int sort_find_value(struct sort_collection *c, struct ber_view value, size_t *index)
{
	const struct sort_key *k = &c->spec->keys[0];
	struct ber_view v;
	int rc = k->rule->normalize(value.ptr, value.len, &c->scratch, &v);
	if (rc != LUMEN_OK)
		return rc;
	if (v.ptr == NULL)
		v.ptr = (const uint8_t *)"";
	size_t lo = 0, hi = c->n;       /* first item not before v */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		struct ber_view key = sort_collection_at(c, mid)->keys[0];
		bool before = key.ptr != NULL ? key_order(k, key, v) < 0 : k->reverse;
		if (before)
			lo = mid + 1;
		else
			hi = mid;
	}
	arena_reset(&c->scratch);
	*index = lo;
	return LUMEN_OK;
}

/* byOffset: the 1-based target, or 0 with an offsetRangeError. */
static bool offset_target(const struct vlv_request *v, size_t n, size_t *target)
{
	if (v->offset == v->content_count) {
		*target = n;
	} else if (v->offset == 1) {
		*target = 1;
	} else if (v->content_count != 0 && v->content_count != n) {
		if (v->offset > v->content_count)
			return false;
		*target = (size_t)((uint64_t)n * v->offset / v->content_count);
	} else {
		if (v->offset > n)
			return false;
		*target = v->offset;
	}
	return true;
}

void sort_vlv_window(const struct vlv_request *v, size_t n, size_t found,
		     struct sort_window *w)
{
	size_t target, cur, back = v->before;
	memset(w, 0, sizeof(*w));
	if (v->by_value) {
		target = found < n ? found + 1 : n + 1;
		cur = found < n ? found : n - 1;
		if (found >= n && back > 0)
			back--;              /* the missing target counts as one */
	} else {
		if (!offset_target(v, n, &target)) {
			w->vlv_result = SORT_VLV_OFFSET_RANGE;
			return;
		}
		cur = target > 0 ? target - 1 : 0;
	}
	w->target_position = (uint32_t)target;
	if (n == 0)
		return;
	if (back > cur)
		back = cur;
	w->start = cur - back;
	w->count = back + (size_t)v->after + 1;
	if (w->count > n - w->start)
		w->count = n - w->start;
}

/* ------------------------------------------------ kept VLV results */

int sort_context_create(const struct sort_spec *spec, const struct sort_binding *b, size_t max,
			bool keep_dn, struct sort_context **out)
{
	struct sort_context *ctx = calloc(1, sizeof(*ctx));
	*out = NULL;
	if (ctx == NULL)
		return LUMEN_ENOMEM;
	ctx->spec = *spec;
	sort_collection_init(&ctx->coll, &ctx->spec, max, keep_dn);
	ctx->database = b->database;
	int rc = copy_view(&ctx->coll.memory, b->requester, &ctx->requester);
	if (rc == LUMEN_OK)
		rc = copy_view(&ctx->coll.memory, b->request, &ctx->request);
	if (rc == LUMEN_OK && RAND_bytes(ctx->id, sizeof(ctx->id)) != 1)
		rc = LUMEN_EIO;
	if (rc != LUMEN_OK) {
		sort_context_free(ctx);
		return rc;
	}
	*out = ctx;
	return LUMEN_OK;
}

void sort_context_free(struct sort_context *ctx)
{
	if (ctx == NULL)
		return;
	sort_collection_free(&ctx->coll);
	free(ctx);
}

bool sort_context_matches(const struct sort_context *ctx, struct ber_view context_id,
			  const struct sort_binding *b)
{
	return context_id.len == sizeof(ctx->id) &&
	       CRYPTO_memcmp(context_id.ptr, ctx->id, sizeof(ctx->id)) == 0 &&
	       ctx->database == b->database && ber_view_eq(ctx->requester, b->requester) &&
	       ber_view_eq(ctx->request, b->request);
}

size_t sort_context_bytes(const struct sort_context *ctx)
{
	return sizeof(*ctx) + sort_collection_bytes(&ctx->coll);
}
