/*
 * memdb.c — the in-memory database (memdb.h): every operation runs the
 * source's build and takes the entries as they are emitted, one run per
 * operation; the entries are never kept.
 */
#include "memdb.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dn.h"
#include "filter.h"
#include "ldap_result_codes.h"
#include "little_endian.h"
#include "lumen_error.h"

#define COOKIE_VERSION 1
/* Scratch one entry's filter evaluation may use. */
#define MEMDB_SCRATCH_MAX (16u * 1024u * 1024u)
/* memdb_emit's "stop: the operation has its answer". */
#define MEMDB_STOP 1

struct memdb {
	struct database base;           /* first: the handle the server holds */
	struct memdb_source src;
	const struct schema *schema;
};

struct memdb_run;
/* What an operation does with one entry in scope: LUMEN_OK, MEMDB_STOP, an error. */
typedef int (*memdb_take_fn)(struct memdb_run *r, const struct entry *e);

struct memdb_run {
	struct memdb_walk walk;         /* first: memdb_emit's handle */
	struct memdb *db;
	struct backend_op *op;
	memdb_take_fn take;
	struct arena scratch;           /* filter evaluation, reset per entry */
	/* search */
	struct backend_search *s;
	uint64_t ordinal;               /* of the entry at hand, in scope */
	uint64_t after;                 /* paging and resume: skip up to here */
	uint64_t sent_before, sent, last_sent;
	struct database_clock clock;
	/* fetch */
	backend_entry_fn fn;
	void *fn_ctx;
	/* compare */
	struct ber_view attribute, value;
};

static void result(struct backend_op *op, int code, const char *diagnostic)
{
	op->result_code = code;
	op->diagnostic = diagnostic;
}

static bool abandoned(const struct backend_op *op)
{
	return op->abandoned != NULL && __atomic_load_n(op->abandoned, __ATOMIC_RELAXED);
}

int memdb_emit(struct memdb_walk *walk, const struct entry *e)
{
	struct memdb_run *r = (struct memdb_run *)walk;
	if (!dn_in_scope(e->ndn, walk->base_ndn, walk->scope))
		return LUMEN_OK;
	if (abandoned(r->op)) {
		result(r->op, LDAP_OTHER, "abandoned");
		return MEMDB_STOP;
	}
	arena_reset(&r->scratch);
	return r->take(r, e);
}

/* True if f holds for e (through op->filter_access); *rc the failure. */
static bool holds(struct memdb_run *r, const struct filter *f, const struct entry *e, int *rc)
{
	struct filter_evaluation how = { .access = r->op->filter_access, .scratch = &r->scratch };
	enum filter_result verdict;
	*rc = filter_test(f, e, &how, &verdict);
	if (*rc == LUMEN_ENOMEM)
		result(r->op, LDAP_ADMIN_LIMIT_EXCEEDED,
		       "evaluating the filter on one entry needs more memory than allowed");
	return *rc == LUMEN_OK && verdict == FILTER_TRUE;
}

/* Build with the run's walk. LUMEN_OK or the error. */
static int run_build(struct memdb_run *r)
{
	int rc = r->db->src.build(r->db->src.ctx, &r->walk);
	if (rc == LUMEN_ENOTFOUND) {
		const char *suffix = r->db->src.suffix;
		r->op->matched_dn = (struct ber_view){ (const uint8_t *)suffix, strlen(suffix) };
		result(r->op, LDAP_NO_SUCH_OBJECT, NULL);
		return LUMEN_OK;
	}
	if (rc == MEMDB_STOP)
		return LUMEN_OK;
	if (rc != LUMEN_OK)
		result(r->op, LDAP_OTHER, lumen_strerror(rc));
	return rc;
}

/* A run of db for op over base/scope; take gets each entry in scope. */
static void run_init(struct memdb_run *r, struct database *db, struct backend_op *op,
		     struct ber_view base_ndn, enum ldap_scope scope, memdb_take_fn take)
{
	memset(r, 0, sizeof(*r));
	r->walk = (struct memdb_walk){ base_ndn, scope, op->arena };
	r->db = (struct memdb *)db;
	r->op = op;
	r->take = take;
	arena_init(&r->scratch, MEMDB_SCRATCH_MAX);
	op->matched_dn = (struct ber_view){ NULL, 0 };
	result(op, LDAP_SUCCESS, NULL);
}

/* What the sink learns besides e: the source's flags, no stored ID. */
static void entry_info(const struct memdb_run *r, const struct entry *e,
		       struct backend_entry_info *info)
{
	*info = (struct backend_entry_info){
		.id = r->ordinal, .dn = e->dn, .ndn = e->ndn,
		.has_counts = r->db->src.leaves, .complete = r->db->src.complete_entries,
	};
}

/* ------------------------------------------------------------- search */

static void make_cookie(struct memdb_run *r)
{
	uint8_t *c = r->s->next_cookie;
	c[0] = COOKIE_VERSION;
	little_endian_put64(c + 1, r->last_sent);
	little_endian_put64(c + 9, r->s->fingerprint);
	little_endian_put64(c + 17, r->sent_before + r->sent);
	r->s->next_cookie_len = BACKEND_COOKIE_SIZE;
}

/* The client's cookie, or a paused search's position. false: not ours. */
static bool read_position(struct memdb_run *r)
{
	struct ber_view c = r->s->cookie;
	const struct backend_search_resume *res = &r->s->resume;
	if (r->s->paged && c.len > 0) {
		if (c.len != BACKEND_COOKIE_SIZE || c.ptr[0] != COOKIE_VERSION ||
		    little_endian_get64(c.ptr + 9) != r->s->fingerprint)
			return false;
		r->after = little_endian_get64(c.ptr + 1);
		r->sent_before = little_endian_get64(c.ptr + 17);
	}
	r->last_sent = r->after;
	if (res->active) {
		r->after = res->after_id > r->after ? res->after_id : r->after;
		r->last_sent = res->after_id;
		r->sent = res->sent;
	}
	return true;
}

/* The limits and the page, before a matching entry goes out. */
static bool may_send(struct memdb_run *r)
{
	if (database_clock_expired(&r->clock)) {
		result(r->op, LDAP_TIME_LIMIT_EXCEEDED, NULL);
		return false;
	}
	if (database_size_reached(r->op, r->sent_before + r->sent)) {
		result(r->op, LDAP_SIZE_LIMIT_EXCEEDED, NULL);
		return false;
	}
	if (r->s->paged && r->sent >= r->s->page_size) {
		make_cookie(r);
		return false;
	}
	return true;
}

static int take_search(struct memdb_run *r, const struct entry *e)
{
	int rc = LUMEN_OK;
	if (++r->ordinal <= r->after)
		return LUMEN_OK;
	r->op->candidates_tested++;
	if (r->s->filter != NULL && !holds(r, r->s->filter, e, &rc))
		return rc == LUMEN_OK ? LUMEN_OK : MEMDB_STOP;
	if (!may_send(r))
		return MEMDB_STOP;
	struct backend_entry_info info;
	entry_info(r, e, &info);
	info.filter_tested = r->s->filter != NULL;
	int verdict = r->s->sink(r->s->sink_ctx, e, &info);
	r->last_sent = r->ordinal;      /* a refused entry is not tried again */
	if (verdict == BACKEND_SINK_SKIPPED)
		return LUMEN_OK;
	if (verdict != 0 && verdict != BACKEND_SINK_PAUSE) {
		result(r->op, LDAP_OTHER, "search stopped");
		return MEMDB_STOP;
	}
	r->sent++;
	r->op->entries_sent++;
	if (verdict != BACKEND_SINK_PAUSE)
		return LUMEN_OK;
	r->s->resume = (struct backend_search_resume){
		.active = true, .after_id = r->last_sent, .sent = r->sent,
		.has_deadline = r->clock.has_deadline, .deadline = r->clock.deadline,
	};
	r->s->paused = true;
	return MEMDB_STOP;
}

/* The assertion control on the base entry (search, compare). */
static bool assertion_holds(struct memdb_run *r, const struct entry *e, int *rc)
{
	*rc = LUMEN_OK;
	if (r->op->assertion == NULL || holds(r, r->op->assertion, e, rc))
		return true;
	if (*rc == LUMEN_OK)
		result(r->op, LDAP_ASSERTION_FAILED, NULL);
	return false;
}

static int take_assertion(struct memdb_run *r, const struct entry *e)
{
	int rc;
	assertion_holds(r, e, &rc);     /* either way the run is over */
	return rc == LUMEN_OK ? MEMDB_STOP : rc;
}

/*
 * The assertion control is tested on the base entry before the search, in
 * a run of its own: a source need not emit a base outside the scope.
 * True: go on; false: op holds the answer (assertionFailed, noSuchObject)
 * or *rc the failure.
 */
static bool base_asserted(struct database *db, struct backend_op *op,
			  const struct backend_search *s, int *rc)
{
	struct memdb_run r;
	*rc = LUMEN_OK;
	if (op->assertion == NULL || s->resume.active)
		return true;
	run_init(&r, db, op, s->base_ndn, LDAP_SCOPE_BASE, take_assertion);
	*rc = run_build(&r);
	arena_free(&r.scratch);
	return *rc == LUMEN_OK && op->result_code == LDAP_SUCCESS;
}

static int memdb_search(struct database *db, struct backend_op *op, struct backend_search *s)
{
	struct memdb_run r;
	int rc = LUMEN_OK;
	op->unindexed = false;
	s->next_cookie_len = 0;
	s->paused = false;
	if (s->sink != NULL && !base_asserted(db, op, s, &rc))
		return rc;
	run_init(&r, db, op, s->base_ndn, s->scope, take_search);
	r.s = s;
	if (s->sink == NULL) {
		result(op, LDAP_OTHER, lumen_strerror(LUMEN_EINVAL));
		rc = LUMEN_EINVAL;
	} else if (!read_position(&r)) {
		result(op, LDAP_UNWILLING_TO_PERFORM, "paged results cookie is invalid");
	} else if (!s->paged || s->page_size > 0) {
		database_clock_start(&r.clock, r.op, r.s);
		rc = run_build(&r);
	}
	arena_free(&r.scratch);
	return rc;
}

/* -------------------------------------------------------------- fetch */

static int take_fetch(struct memdb_run *r, const struct entry *e)
{
	struct backend_entry_info info;
	entry_info(r, e, &info);
	int rc = r->fn(r->fn_ctx, e, &info);
	return rc == LUMEN_OK ? MEMDB_STOP : rc;
}

static int memdb_fetch(struct database *db, struct backend_op *op, struct ber_view ndn,
		       backend_entry_fn fn, void *ctx)
{
	struct memdb_run r;
	run_init(&r, db, op, ndn, LDAP_SCOPE_BASE, take_fetch);
	r.fn = fn;
	r.fn_ctx = ctx;
	int rc = run_build(&r);
	arena_free(&r.scratch);
	return rc;
}

/* ------------------------------------------------------------ compare */

/* Remembers whether the requester's compare_access refused a type. */
struct compare_watch {
	struct filter_access hook;
	const struct filter_access *inner;
	bool refused;
};

static bool watch_begin(void *ctx, const struct entry *e)
{
	struct compare_watch *w = ctx;
	if (w->inner->begin == NULL || w->inner->begin(w->inner->ctx, e))
		return true;
	w->refused = true;
	return false;
}

static bool watch_may_test(void *ctx, const struct attribute_type *type)
{
	struct compare_watch *w = ctx;
	if (w->inner->may_test(w->inner->ctx, type))
		return true;
	w->refused = true;
	return false;
}

/* (attribute=value) or (attribute=*) compiled into the operation's arena. */
static int compile_item(struct memdb_run *r, enum ldap_filter_type type, struct filter *out)
{
	struct ldap_filter item = { .type = type };
	if (type == LDAP_FILTER_PRESENT)
		item.u.present = r->attribute;
	else
		item.u.ava.attr = r->attribute, item.u.ava.value = r->value;
	return filter_compile(r->db->schema, &item, NULL, r->op->arena, out);
}

/*
 * As back-mdb (compare.c): a value that matches answers compareTrue; else
 * a type the requester may not compare answers insufficientAccessRights;
 * else compareFalse, or noSuchAttribute without any value of the type.
 */
static int take_compare(struct memdb_run *r, const struct entry *e)
{
	struct compare_watch watch = { { watch_begin, watch_may_test, &watch }, NULL, false };
	struct filter eq, present;
	int rc;
	if (!assertion_holds(r, e, &rc))
		return rc == LUMEN_OK ? MEMDB_STOP : rc;
	rc = compile_item(r, LDAP_FILTER_EQUALITY, &eq);
	if (rc == LUMEN_OK)
		rc = compile_item(r, LDAP_FILTER_PRESENT, &present);
	if (rc != LUMEN_OK)
		return rc;
	if (eq.root->undefined) {
		result(r->op, LDAP_INVALID_ATTRIBUTE_SYNTAX, "value cannot be compared");
		return MEMDB_STOP;
	}
	struct filter_evaluation how = { .scratch = &r->scratch };
	if (r->op->compare_access != NULL) {
		watch.inner = r->op->compare_access;
		how.access = &watch.hook;
	}
	enum filter_result verdict;
	rc = filter_test(&eq, e, &how, &verdict);
	if (rc != LUMEN_OK)
		return rc;
	if (verdict == FILTER_TRUE)
		result(r->op, LDAP_COMPARE_TRUE, NULL);
	else if (watch.refused)
		result(r->op, LDAP_INSUFFICIENT_ACCESS_RIGHTS, NULL);
	else
		result(r->op, filter_evaluate(&present, e) == FILTER_TRUE ? LDAP_COMPARE_FALSE
									    : LDAP_NO_SUCH_ATTRIBUTE,
		       NULL);
	return MEMDB_STOP;
}

static int memdb_compare(struct database *db, struct backend_op *op, struct ber_view ndn,
			 struct ber_view attribute, struct ber_view value)
{
	struct memdb_run r;
	struct attribute_description want;
	const struct memdb *m = (const struct memdb *)db;
	run_init(&r, db, op, ndn, LDAP_SCOPE_BASE, take_compare);
	r.attribute = attribute;
	r.value = value;
	int rc = LUMEN_OK;
	if (attribute_description_parse(m->schema, (const char *)attribute.ptr, attribute.len,
					&want) != LUMEN_OK)
		result(op, LDAP_UNDEFINED_ATTRIBUTE_TYPE, NULL);
	else if (want.type->equality == NULL)
		result(op, LDAP_INAPPROPRIATE_MATCHING, "no equality matching rule");
	else
		rc = run_build(&r);
	arena_free(&r.scratch);
	return rc;
}

/* -------------------------------------------------------------- table */

static void memdb_close(struct database *db)
{
	free(db);
}

static const struct database_ops memdb_ops = {
	.search = memdb_search,
	.fetch = memdb_fetch,
	.compare = memdb_compare,
	.close = memdb_close,     /* read-only, no storage, no indexes */
};

int memdb_open(const struct schema *schema, const struct memdb_source *src,
	       struct database **out)
{
	*out = NULL;
	if (src == NULL || src->build == NULL || src->suffix == NULL)
		return LUMEN_EINVAL;
	struct memdb *m = calloc(1, sizeof(*m));
	if (m == NULL)
		return LUMEN_ENOMEM;
	m->base = (struct database){ &memdb_ops, m };
	m->src = *src;
	m->schema = schema;
	*out = &m->base;
	return LUMEN_OK;
}
