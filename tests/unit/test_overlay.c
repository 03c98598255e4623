/*
 * test_overlay.c — the overlay chain (src/server/overlay.c) over a fake
 * database: hook order, an answering overlay skipping the database and the
 * overlays after it, the write hook set only while the database runs,
 * paused searches, response controls, figures/close passed through, and
 * configuration errors (unknown overlay, refint's directives).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldap_result_codes.h"
#include "lumen_error.h"
#include "overlay.h"
#include "schema.h"

/* ------------------------------------------------------------ the fakes */

static char trace[256];
static int closed;

static void note(const char *what)
{
	strncat(trace, what, sizeof(trace) - strlen(trace) - 1);
}

static int fake_delete(struct database *db, struct backend_op *op, struct ber_view ndn)
{
	(void)db;
	(void)ndn;
	note(op->write_hook != NULL ? "db(hook) " : "db ");
	if (op->write_hook != NULL)
		op->write_hook->on_write(op->write_hook->ctx, NULL, NULL, op,
					 &(struct database_write){ .kind = DATABASE_WRITE_DELETE });
	op->result_code = LDAP_SUCCESS;
	return LUMEN_OK;
}

static int fake_search(struct database *db, struct backend_op *op, struct backend_search *s)
{
	(void)db;
	note("search ");
	s->paused = s->page_size == 99;   /* the test's way to ask for a pause */
	op->result_code = LDAP_SUCCESS;
	return LUMEN_OK;
}

static void fake_figures(struct database *db, struct database_figures *out)
{
	(void)db;
	out->entries = 42;
}

static void fake_close(struct database *db)
{
	(void)db;
	closed++;
}

static int fake_fetch_ids(struct database *db, struct backend_op *op, const uint64_t *ids,
			  size_t n, bool want_counts, backend_entry_fn fn, void *ctx)
{
	(void)db, (void)op, (void)ids, (void)fn, (void)ctx;
	note(want_counts ? "fetch_ids+counts " : "fetch_ids ");
	return (int)n;
}

static const struct database_ops fake_ops = {
	.search = fake_search, .delete = fake_delete, .figures = fake_figures,
	.close = fake_close,
};
static struct database fake_db = { .ops = &fake_ops };
/* The same database, able to fetch by ID. */
static const struct database_ops fake_ops_ids = {
	.search = fake_search, .delete = fake_delete, .figures = fake_figures,
	.fetch_ids = fake_fetch_ids, .close = fake_close,
};
static struct database fake_db_ids = { .ops = &fake_ops_ids };

/* Test overlays "first" and "second" write their name on each hook. */
struct probe {
	const char *name;
	bool answer;        /* before answers unwillingToPerform */
	bool add_control;
};

static struct probe probes[2] = { { "first", false, false }, { "second", false, false } };

static int probe_before(void *state, struct overlay_request *req)
{
	struct probe *p = state;
	char text[32];
	snprintf(text, sizeof(text), "%s.before ", p->name);
	note(text);
	if (!p->answer)
		return OVERLAY_CONTINUE;
	req->op->result_code = LDAP_UNWILLING_TO_PERFORM;
	return OVERLAY_ANSWERED;
}

static void probe_after(void *state, struct overlay_request *req)
{
	struct probe *p = state;
	char text[32];
	snprintf(text, sizeof(text), "%s.after ", p->name);
	note(text);
	if (p->add_control) {
		struct ldap_control c = { .oid = { (const uint8_t *)"1.2.3", 5 } };
		ck_assert_int_eq(overlay_add_response_control(req->op, &c), LUMEN_OK);
	}
}

static int probe_on_write(void *state, struct database_txn *txn,
			  const struct database_txn_ops *ops, struct backend_op *op,
			  const struct database_write *w)
{
	struct probe *p = state;
	char text[32];
	(void)txn;
	(void)ops;
	(void)op;
	(void)w;
	snprintf(text, sizeof(text), "%s.write ", p->name);
	note(text);
	return LUMEN_OK;
}

/* Bind probes: "first" refuses in bind_before when it answers; "second"
 * turns a success into a failure in bind_after when it answers. */
static void probe_bind_before(void *state, struct overlay_request *req)
{
	struct probe *p = state;
	char text[32];
	snprintf(text, sizeof(text), "%s.bind_before ", p->name);
	note(text);
	ck_assert_ptr_nonnull(req->database);
	if (p->answer && p == &probes[0])
		req->u.bind->refused = true;
}

static void probe_bind_after(void *state, struct overlay_request *req)
{
	struct probe *p = state;
	char text[32];
	snprintf(text, sizeof(text), "%s.bind_after ", p->name);
	note(text);
	if (p->answer && p == &probes[1])
		req->u.bind->success = false;
}

/* ------------------------------------------------------- chain builder */

static struct schema *schema;
static struct arena arena;

static void setup(void)
{
	char err[256];
	trace[0] = '\0';
	closed = 0;
	probes[0] = (struct probe){ "first", false, false };
	probes[1] = (struct probe){ "second", false, false };
	ck_assert_int_eq(schema_create(&schema), LUMEN_OK);
	const char *files[] = { "schema/core.schema", "schema/cosine.schema",
				"schema/inetorgperson.schema", "schema/lumen.schema" };
	for (size_t i = 0; i < 4; i++)
		ck_assert_msg(schema_load_file(schema, files[i], err, sizeof(err)) == LUMEN_OK, "%s",
			      err);
	ck_assert_int_eq(schema_finalize(schema, err, sizeof(err)), LUMEN_OK);
	arena_init(&arena, 0);
}

static void teardown(void)
{
	schema_free(schema);
	arena_free(&arena);
}

/* A chain over the fake database whose overlays are the two probes. */
static struct database *probe_chain(void)
{
	static const struct overlay_type probe_type = {
		.name = "probe", .before = probe_before, .after = probe_after,
		.on_write = probe_on_write,
	};
	struct overlay_chain *chain = NULL;
	const struct overlay_type *types[] = { &probe_type, &probe_type };
	void *states[] = { &probes[0], &probes[1] };
	ck_assert_int_eq(overlay_chain_create_from(types, states, 2, &chain), LUMEN_OK);
	return overlay_chain_wrap(chain, &fake_db);
}

START_TEST(hooks_run_in_order_around_the_database)
{
	struct database *db = probe_chain();
	struct backend_op op = { .arena = &arena };
	ck_assert_int_eq(database_delete(db, &op, (struct ber_view){ NULL, 0 }), LUMEN_OK);
	ck_assert_str_eq(trace, "first.before second.before db(hook) first.write second.write "
				"second.after first.after ");
	ck_assert_ptr_null(op.write_hook);   /* only while the database runs */
	database_close(db);
	ck_assert_int_eq(closed, 1);
}
END_TEST

START_TEST(bind_hooks_around_the_check)
{
	static const struct overlay_type bind_type = {
		.name = "bind", .bind_before = probe_bind_before, .bind_after = probe_bind_after,
	};
	static const struct overlay_type plain_type = { .name = "plain" };
	struct overlay_chain *chain = NULL, *plain = NULL;
	const struct overlay_type *types[] = { &bind_type, &bind_type };
	const struct overlay_type *plain_types[] = { &plain_type };
	void *states[] = { &probes[0], &probes[1] };
	ck_assert_int_eq(overlay_chain_create_from(plain_types, states, 1, &plain), LUMEN_OK);
	ck_assert(!overlay_chain_binds(plain));   /* a bind costs one test */
	ck_assert(!overlay_chain_binds(NULL));
	overlay_chain_free(plain);
	ck_assert_int_eq(overlay_chain_create_from(types, states, 2, &chain), LUMEN_OK);
	ck_assert(overlay_chain_binds(chain));
	struct database *db = overlay_chain_wrap(chain, &fake_db);
	struct backend_op op = { .arena = &arena };
	struct overlay_bind b = { 0 };
	struct overlay_request req = { .operation = OVERLAY_BIND, .op = &op, .u.bind = &b };
	probes[0].answer = probes[1].answer = true;
	overlay_chain_bind_before(chain, &req);
	ck_assert(b.refused);
	b.success = true;
	overlay_chain_bind_after(chain, &req);
	ck_assert(!b.success);
	ck_assert_str_eq(trace, "first.bind_before second.bind_before second.bind_after "
				"first.bind_after ");
	database_close(db);
}
END_TEST

START_TEST(an_answer_skips_the_rest)
{
	struct database *db = probe_chain();
	struct backend_op op = { .arena = &arena };
	probes[0].answer = true;
	ck_assert_int_eq(database_delete(db, &op, (struct ber_view){ NULL, 0 }), LUMEN_OK);
	ck_assert_int_eq(op.result_code, LDAP_UNWILLING_TO_PERFORM);
	ck_assert_str_eq(trace, "first.before first.after ");
	trace[0] = '\0';
	probes[0].answer = false;
	probes[1].answer = true;
	ck_assert_int_eq(database_delete(db, &op, (struct ber_view){ NULL, 0 }), LUMEN_OK);
	ck_assert_str_eq(trace, "first.before second.before second.after first.after ");
	database_close(db);
}
END_TEST

START_TEST(a_paused_search_is_one_operation)
{
	struct database *db = probe_chain();
	struct backend_op op = { .arena = &arena };
	struct backend_search s = { .page_size = 99 };
	ck_assert_int_eq(database_search(db, &op, &s), LUMEN_OK);
	ck_assert_str_eq(trace, "first.before second.before search ");
	trace[0] = '\0';
	s.resume.active = true;
	s.page_size = 0;
	ck_assert_int_eq(database_search(db, &op, &s), LUMEN_OK);
	/* every call may wrap its own sink; the after hooks come once */
	ck_assert_str_eq(trace, "first.before second.before search second.after first.after ");
	database_close(db);
}
END_TEST

START_TEST(response_controls_and_figures)
{
	struct database *db = probe_chain();
	struct backend_op op = { .arena = &arena };
	probes[0].add_control = probes[1].add_control = true;
	ck_assert_int_eq(database_delete(db, &op, (struct ber_view){ NULL, 0 }), LUMEN_OK);
	ck_assert_uint_eq(op.n_response_controls, 2);
	ck_assert_mem_eq(op.response_controls[1].oid.ptr, "1.2.3", 5);
	struct database_figures f = { 0 };
	database_figures(db, &f);
	ck_assert_uint_eq(f.entries, 42);
	database_close(db);
}
END_TEST

/* fetch_ids goes straight to the database below, and a chain over one
 * without it has none either (the server then fetches by DN). */
START_TEST(fetch_ids_passes_through)
{
	static const struct overlay_type probe_type = { .name = "probe", .before = probe_before };
	const struct overlay_type *types[] = { &probe_type };
	void *states[] = { &probes[0] };
	struct overlay_chain *chain = NULL;
	struct backend_op op = { .arena = &arena };
	uint64_t ids[3] = { 1, 2, 3 };
	ck_assert_int_eq(overlay_chain_create_from(types, states, 1, &chain), LUMEN_OK);
	struct database *db = overlay_chain_wrap(chain, &fake_db_ids);
	ck_assert(database_has_fetch_ids(db));
	ck_assert_int_eq(database_fetch_ids(db, &op, ids, 3, true, NULL, NULL), 3);
	ck_assert_str_eq(trace, "fetch_ids+counts ");     /* no overlay hook ran */
	database_close(db);
	ck_assert_int_eq(overlay_chain_create_from(types, states, 1, &chain), LUMEN_OK);
	db = overlay_chain_wrap(chain, &fake_db);
	ck_assert(!database_has_fetch_ids(db));
	ck_assert_int_eq(database_fetch_ids(db, &op, ids, 3, false, NULL, NULL),
			 LUMEN_EUNSUPPORTED);
	ck_assert(overlay_database_has(db, "probe"));
	database_close(db);
}
END_TEST

/* ------------------------------------------------------- configuration */

static int create_from_lines(const char *name, const char *const *lines, char *err,
			     size_t errlen)
{
	struct config_overlay_line parsed[8];
	char *words[8][8];
	size_t n = 0;
	for (; lines[n] != NULL; n++) {
		char *copy = arena_strndup(&arena, lines[n], strlen(lines[n]));
		parsed[n] = (struct config_overlay_line){ .words = words[n], .origin = "t.conf:9" };
		for (char *save = NULL, *w = strtok_r(copy, " ", &save); w != NULL;
		     w = strtok_r(NULL, " ", &save))
			words[n][parsed[n].n_words++] = w;
	}
	struct config_overlay overlay = { .name = (char *)name, .origin = "t.conf:8",
					  .lines = parsed, .n_lines = n };
	struct config_database config = { .origin = "t.conf:1", .overlays = &overlay,
					  .n_overlays = 1 };
	struct overlay_chain *chain = NULL;
	int rc = overlay_chain_create(schema, &config, "{SSHA512}", -1, &chain, err, errlen);
	overlay_chain_free(chain);
	return rc;
}

START_TEST(configuration_errors_name_the_line)
{
	static const struct {
		const char *overlay;
		const char *lines[3];
		const char *message;
	} cases[] = {
		{ "nosuch", { NULL }, "t.conf:8: overlay: unknown overlay \"nosuch\"" },
		{ "refint", { NULL }, "t.conf:8: overlay refint: expected a \"refint_attributes\"" },
		{ "refint", { "refint_attributes member", "refint_x y", NULL },
		  "t.conf:9: overlay refint: unknown directive \"refint_x\"" },
		{ "refint", { "refint_attributes nosuch", NULL },
		  "t.conf:9: refint_attributes: unknown attribute \"nosuch\"" },
		{ "refint", { "refint_attributes", NULL }, "t.conf:9: refint_attributes: expected" },
		{ "refint", { "refint_attributes member", "refint_nothing not-a-dn", NULL },
		  "t.conf:9: refint_nothing: expected a DN" },
		{ "refint", { "refint_attributes member", "refint_modifiersName", NULL },
		  "t.conf:9: refint_modifiersName: expected" },
		{ "syncprov", { "syncprov-checkpoint 100", NULL },
		  "t.conf:9: syncprov-checkpoint: expected <ops> <minutes>" },
		{ "syncprov", { "syncprov-sessionlog many", NULL },
		  "t.conf:9: syncprov-sessionlog: expected <size>" },
		{ "syncprov", { "syncprov-nopresent maybe", NULL },
		  "t.conf:9: syncprov-nopresent: expected TRUE or FALSE" },
		{ "syncprov", { "syncprov-bogus 1", NULL },
		  "t.conf:9: overlay syncprov: unknown directive \"syncprov-bogus\"" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char err[256] = "";
		ck_assert_int_eq(create_from_lines(cases[i].overlay, cases[i].lines, err,
						   sizeof(err)), LUMEN_EMALFORMED);
		ck_assert_msg(strstr(err, cases[i].message) != NULL, "case %zu: %s", i, err);
	}
	char err[256] = "";
	ck_assert_int_eq(create_from_lines("REFINT", (const char *[]){
		"refint_attributes member seeAlso", "refint_nothing cn=nobody",
		"refint_modifiersName cn=fixer", NULL }, err, sizeof(err)), LUMEN_OK);
}
END_TEST

START_TEST(no_overlays_no_chain)
{
	struct config_database config = { .origin = "t.conf:1" };
	struct overlay_chain *chain = (struct overlay_chain *)&config;
	char err[64];
	ck_assert_int_eq(overlay_chain_create(schema, &config, "{SSHA512}", -1, &chain, err, sizeof(err)), LUMEN_OK);
	ck_assert_ptr_null(chain);
	ck_assert_ptr_eq(overlay_chain_wrap(NULL, &fake_db), &fake_db);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("overlay");
	TCase *tc = tcase_create("overlay");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, hooks_run_in_order_around_the_database);
	tcase_add_test(tc, an_answer_skips_the_rest);
	tcase_add_test(tc, fetch_ids_passes_through);
	tcase_add_test(tc, bind_hooks_around_the_check);
	tcase_add_test(tc, a_paused_search_is_one_operation);
	tcase_add_test(tc, response_controls_and_figures);
	tcase_add_test(tc, configuration_errors_name_the_line);
	tcase_add_test(tc, no_overlays_no_chain);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
