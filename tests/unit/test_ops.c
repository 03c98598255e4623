/*
 * test_ops.c — the operation layer (src/server/ops.c and the handlers it
 * dispatches to) against a fake connection (fake_conn.h: responses are
 * captured) and a fake database (fake_database.h: canned answers): each
 * protocolOp reaches its handler and the database, the answer carries the
 * request's message ID and the database's result, an abandoned op is
 * never answered, a search waits (parks) while its client's output is
 * full, and what does not decode or is not a request closes the
 * connection with a Notice of Disconnection. Password Modify: running out
 * of memory copying the matched old password fails the change.
 */
#include <check.h>

#include "config_fixture.h"
#include "entry_fixture.h"
#include "fake_conn.h"
#include "fake_database.h"
#include "ldap_message.h"
#include "lumen_error.h"
#include "ops.h"
#include "pdu_fixture.h"
#include "server.h"

static struct config *cfg;
static struct server server;
static struct server_database sdb;
static struct ber_view suffix = { (const uint8_t *)"dc=example,dc=com", 17 };
static struct fake_database fake;
static struct conn *conn;
static void *worker;

/* The server of one fake database; database_lines: more of its config. */
static void setup_with(const char *database_lines)
{
	char text[1024];
	snprintf(text, sizeof(text), "include schema/core.schema\ndatabase mdb\n"
		 "suffix \"dc=example,dc=com\"\ndirectory %%s\n%s", database_lines);
	cfg = config_fixture_load(text);
	fake_database_init(&fake);
	sdb = (struct server_database){
		.config = &cfg->databases[0], .suffixes = &suffix, .n_suffixes = 1,
		.size_limit = CONFIG_LIMIT_UNLIMITED, .time_limit = CONFIG_LIMIT_UNLIMITED,
		.database = &fake.db,
	};
	server = (struct server){ .config = cfg, .databases = &sdb, .n_databases = 1 };
	ldap_decode_limits_default(&server.limits);
	worker = ops_worker_start(&server, 0);
	ck_assert_ptr_nonnull(worker);
	conn = fake_conn_new(7);
	ck_assert_ptr_nonnull(conn);
}

static void setup(void)
{
	setup_with("");
}

static void teardown(void)
{
	fake_conn_free(conn);
	ops_worker_stop(&server, worker);
	config_fixture_free(cfg);
}

/* Queue the PDU of spec as the I/O thread would; the op is not run yet. */
static struct op *make_op(const char *spec)
{
	struct pdu p;
	build_pdu(spec, &p);
	struct op *op = fake_conn_op(conn, p.bytes, p.len);
	ck_assert_ptr_nonnull(op);
	return op;
}

/* Run the PDU of spec on the worker, as the work queue would. */
static void run(const char *spec)
{
	struct op *op = make_op(spec);
	op->job.run(&op->job, worker);
}

/* One response read from what the connection sent. */
struct response {
	int32_t message_id;
	unsigned op;           /* protocolOp (APPLICATION n) */
	int64_t code;          /* resultCode; -1 for an entry */
	char diagnostic[64];   /* diagnosticMessage; "" for an entry */
};

/* The next response from *pos; false at the end of what was sent. */
static bool next_response(size_t *pos, struct response *out)
{
	struct ber_reader r, msg, body;
	struct ber_element el;
	int64_t id;
	if (*pos >= conn->sent_len)
		return false;
	ber_reader_init(&r, conn->sent + *pos, conn->sent_len - *pos);
	ck_assert_int_eq(ber_enter(&r, BER_TAG_SEQUENCE, &msg), LUMEN_OK);
	*pos = conn->sent_len - (size_t)(r.end - r.pos);
	ck_assert_int_eq(ber_read_integer(&msg, BER_TAG_INTEGER, &id), LUMEN_OK);
	ck_assert_int_eq(ber_read_element(&msg, &el), LUMEN_OK);
	out->message_id = (int32_t)id;
	out->op = (unsigned)(el.tag & 0x1f);
	out->code = -1;
	out->diagnostic[0] = '\0';
	ber_reader_init(&body, el.value.ptr, el.value.len);
	if (out->op != LDAP_OP_SEARCH_ENTRY) {
		struct ber_view matched, diagnostic;
		ck_assert_int_eq(ber_read_integer(&body, BER_TAG_ENUMERATED, &out->code), LUMEN_OK);
		ck_assert_int_eq(ber_read_octets(&body, BER_TAG_OCTET_STRING, &matched), LUMEN_OK);
		ck_assert_int_eq(ber_read_octets(&body, BER_TAG_OCTET_STRING, &diagnostic),
				 LUMEN_OK);
		snprintf(out->diagnostic, sizeof(out->diagnostic), "%.*s", (int)diagnostic.len,
			 (const char *)diagnostic.ptr);
	}
	return true;
}

/* Exactly one response was sent: its protocolOp, code and (unless NULL)
 * diagnosticMessage. */
static void assert_one_answer(int32_t message_id, unsigned op, int64_t code,
			      const char *diagnostic)
{
	size_t pos = 0;
	struct response r;
	ck_assert(next_response(&pos, &r));
	ck_assert_int_eq(r.message_id, message_id);
	ck_assert_uint_eq(r.op, op);
	ck_assert_int_eq(r.code, code);
	if (diagnostic != NULL)
		ck_assert_str_eq(r.diagnostic, diagnostic);
	ck_assert(!next_response(&pos, &r));
}

static void assert_one_response(int32_t message_id, unsigned op, int64_t code)
{
	assert_one_answer(message_id, op, code, NULL);
}

#define COMPARE_CN "30( 020105 6e( 04'cn=a,dc=example,dc=com' 30( 04'cn' 04'a' ) ) )"

START_TEST(compare_reaches_the_database)
{
	fake.result_code = LDAP_COMPARE_TRUE;
	strcpy(conn->ndn, "cn=admin,dc=example,dc=com");
	run(COMPARE_CN);
	ck_assert_int_eq(fake.last_call, FAKE_DB_COMPARE);
	ck_assert_str_eq(fake.last_ndn, "cn=a,dc=example,dc=com");
	ck_assert_str_eq(fake.requester, "cn=admin,dc=example,dc=com");
	assert_one_response(5, LDAP_OP_COMPARE_RESPONSE, LDAP_COMPARE_TRUE);
	ck_assert_uint_eq(conn->n_done, 1);
}
END_TEST

START_TEST(writes_answer_with_the_database_result)
{
	fake.result_code = LDAP_NO_SUCH_OBJECT;
	run("30( 020109 4a'cn=gone,dc=example,dc=com' )");
	ck_assert_int_eq(fake.last_call, FAKE_DB_DELETE);
	assert_one_response(9, LDAP_OP_DELETE_RESPONSE, LDAP_NO_SUCH_OBJECT);
	fake_conn_clear(conn);
	fake.result_code = LDAP_SUCCESS;
	run("30( 02010a 66( 04'cn=a,dc=example,dc=com' "
	    "30( 30( 0a0100 30( 04'sn' 31( 04'b' ) ) ) ) ) )");
	ck_assert_int_eq(fake.last_call, FAKE_DB_MODIFY);
	assert_one_response(10, LDAP_OP_MODIFY_RESPONSE, LDAP_SUCCESS);
}
END_TEST

/* slapd: an update outside every suffix, without a `referral` line, is
 * unwillingToPerform ("no global superior knowledge"); a read noSuchObject. */
START_TEST(outside_every_suffix_is_no_such_object)
{
	run("30( 020102 4a'cn=x,o=elsewhere' )");
	ck_assert_uint_eq(fake.n_calls, 0);
	assert_one_response(2, LDAP_OP_DELETE_RESPONSE, LDAP_UNWILLING_TO_PERFORM);
}
END_TEST

START_TEST(search_streams_entries_then_done)
{
	fixture_schema_setup();
	struct entry *e[2] = {
		fixture_entry("cn=a,dc=example,dc=com", "objectClass: person\ncn: a\nsn: a"),
		fixture_entry("cn=b,dc=example,dc=com", "objectClass: person\ncn: b\nsn: b"),
	};
	fake.entries = (const struct entry *const *)e;
	fake.n_entries = 2;
	run("30( 020103 63( 04'dc=example,dc=com' 0a0102 0a0100 020100 020100 010100 "
	    "87'objectClass' 30( ) ) )");
	ck_assert_int_eq(fake.last_call, FAKE_DB_SEARCH);
	size_t pos = 0;
	struct response r;
	for (int i = 0; i < 2; i++) {
		ck_assert(next_response(&pos, &r));
		ck_assert_uint_eq(r.op, LDAP_OP_SEARCH_ENTRY);
		ck_assert_int_eq(r.message_id, 3);
	}
	ck_assert(next_response(&pos, &r));
	ck_assert_uint_eq(r.op, LDAP_OP_SEARCH_DONE);
	ck_assert_int_eq(r.code, LDAP_SUCCESS);
	ck_assert(!next_response(&pos, &r));
	entry_free(e[0]);
	entry_free(e[1]);
	fixture_schema_teardown();
}
END_TEST

START_TEST(abandoned_op_is_never_answered)
{
	struct op *op = make_op(COMPARE_CN);
	op->abandoned = true;
	op->job.run(&op->job, worker);
	ck_assert_uint_eq(fake.n_calls, 0);
	ck_assert_uint_eq(conn->sent_len, 0);
	ck_assert_uint_eq(conn->n_done, 1);
}
END_TEST

START_TEST(search_parks_while_the_output_is_full)
{
	conn->output_full = true;
	struct op *op = make_op("30( 020104 63( 04'dc=example,dc=com' 0a0100 0a0100 020100 "
				"020100 010100 87'objectClass' 30( ) ) )");
	op->job.run(&op->job, worker);
	ck_assert_uint_eq(conn->n_parked, 1);
	ck_assert(op->parked);
	ck_assert_uint_eq(fake.n_calls, 0);
	ck_assert_uint_eq(conn->sent_len, 0);
	/* a compare does not wait for the client to read */
	run(COMPARE_CN);
	ck_assert_uint_eq(fake.n_calls, 1);
	conn_op_done(conn, op);
}
END_TEST

/* On an I/O thread: a subtree presence search hands itself off before it
 * logs, sends or reads anything; a worker then runs it to the end. */
START_TEST(inline_search_too_long_is_handed_off)
{
	struct op *op = make_op("30( 020105 63( 04'dc=example,dc=com' 0a0102 0a0100 020100 "
				"020100 010100 87'objectClass' 30( ) ) )");
	ops_run_inline(op, worker);
	ck_assert_uint_eq(conn->n_handed_off, 1);
	ck_assert(op->handed_off);
	ck_assert(!op->running);
	ck_assert_uint_eq(fake.n_calls, 0);
	ck_assert_uint_eq(conn->sent_len, 0);
	ck_assert_uint_eq(conn->n_done, 0);
	op->job.run(&op->job, worker);
	ck_assert_int_eq(fake.last_call, FAKE_DB_SEARCH);
	ck_assert_uint_eq(conn->n_done, 1);
	assert_one_response(5, LDAP_OP_SEARCH_DONE, LDAP_SUCCESS);
}
END_TEST

/* A compare and an equality search run to the end on the I/O thread. */
START_TEST(inline_short_reads_run_to_the_end)
{
	struct op *op = make_op(COMPARE_CN);
	ops_run_inline(op, worker);
	ck_assert_uint_eq(conn->n_handed_off, 0);
	ck_assert_uint_eq(conn->n_done, 1);
	ck_assert_uint_eq(fake.n_calls, 1);
	fake_conn_clear(conn);
	op = make_op("30( 020106 63( 04'dc=example,dc=com' 0a0102 0a0100 020100 020100 010100 "
		     "a3( 04'cn' 04'a' ) 30( ) ) )");
	ops_run_inline(op, worker);
	ck_assert_uint_eq(conn->n_handed_off, 0);
	ck_assert_uint_eq(conn->n_done, 2);
	ck_assert_int_eq(fake.last_call, FAKE_DB_SEARCH);
	assert_one_response(6, LDAP_OP_SEARCH_DONE, LDAP_SUCCESS);
}
END_TEST

START_TEST(not_a_request_closes_the_connection)
{
	/* a client sending a response (delResponse) */
	run("30( 020106 6b( 0a0100 04'' 04'' ) )");
	ck_assert(conn->aborted);
	ck_assert_int_eq(conn->abort_code, LDAP_PROTOCOL_ERROR);
	assert_one_response(0, LDAP_OP_EXTENDED_RESPONSE, LDAP_PROTOCOL_ERROR);
}
END_TEST

START_TEST(unknown_critical_control_is_refused)
{
	run("30( 020108 4a'cn=a,dc=example,dc=com' a0( 30( 04'1.2.3.4' 0101ff ) ) )");
	ck_assert_uint_eq(fake.n_calls, 0);
	assert_one_response(8, LDAP_OP_DELETE_RESPONSE, LDAP_UNAVAILABLE_CRITICAL_EXTENSION);
}
END_TEST

START_TEST(weak_connection_is_refused_when_ssf_required)
{
	cfg->security.ssf = 128;
	conn->ssf = 0;
	run(COMPARE_CN);
	ck_assert_uint_eq(fake.n_calls, 0);
	assert_one_response(5, LDAP_OP_COMPARE_RESPONSE, LDAP_CONFIDENTIALITY_REQUIRED);
	fake_conn_clear(conn);
	conn->ssf = 256;
	run(COMPARE_CN);
	ck_assert_uint_eq(fake.n_calls, 1);
}
END_TEST

START_TEST(response_tags)
{
	ck_assert_int_eq(ops_response_tag(LDAP_OP_SEARCH_REQUEST), LDAP_OP_SEARCH_DONE);
	ck_assert_int_eq(ops_response_tag(LDAP_OP_BIND_REQUEST), LDAP_OP_BIND_RESPONSE);
	ck_assert_int_eq(ops_response_tag(LDAP_OP_ABANDON_REQUEST), -1);
	ck_assert_int_eq(ops_response_tag(LDAP_OP_UNBIND_REQUEST), -1);
	ck_assert_int_eq(ops_response_tag(LDAP_OP_DELETE_RESPONSE), -1);
}
END_TEST

/* ------------------------------------------------ Password Modify */

/* Calls of arena_alloc from the libraries (Makefile: UNIT_WRAPS_ops): the
 * one asking for failing_alloc_size bytes gets NULL, once. */
static size_t failing_alloc_size;
void *__real_arena_alloc(struct arena *a, size_t n);
void *__wrap_arena_alloc(struct arena *a, size_t n);
void *__wrap_arena_alloc(struct arena *a, size_t n)
{
	if (failing_alloc_size > 0 && n == failing_alloc_size) {
		failing_alloc_size = 0;
		return NULL;
	}
	return __real_arena_alloc(a, n);
}

#define ALICE "cn=alice,dc=example,dc=com"
/* Stored in cleartext; its copy is an allocation of a size (62 bytes)
 * nothing else of the operation asks for. */
#define OLD_PASSWORD "an old password of sixty-one characters, stored as cleartext."
#define CHANGE_OWN_PASSWORD                                                  \
	"30( 02010c 77( 80'1.3.6.1.4.1.4203.1.11.1' "                         \
	"81( 30( 81'" OLD_PASSWORD "' 82'new secret' ) ) ) )"

static void setup_passwd(void)
{
	setup_with("access to attrs=userPassword by self write by * none\n"
		   "access to * by * read\n");
	failing_alloc_size = 0;
}

/* alice as the database stores her, on the configuration's schema. */
static struct entry *stored_alice(void)
{
	struct entry *e = NULL;
	ck_assert_int_eq(entry_create(cfg->schema, fixture_view(ALICE), (struct ber_view){ NULL, 0 },
				      &e), LUMEN_OK);
	const char *lines[][2] = { { "objectClass", "person" }, { "cn", "alice" },
				   { "sn", "a" }, { "userPassword", OLD_PASSWORD } };
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		ck_assert_int_eq(entry_add_text(e, lines[i][0], lines[i][1]), LUMEN_OK);
	return e;
}

/* The old password matched; copying the stored value it matched (for the
 * check in the write's transaction, access_write.h) fails: the change is
 * refused with LDAP other, never made without that check. */
START_TEST(old_password_copy_out_of_memory_fails_the_change)
{
	struct entry *alice = stored_alice();
	fake.stored = (const struct entry *const *)&alice;
	fake.n_stored = 1;
	strcpy(conn->ndn, ALICE);
	run(CHANGE_OWN_PASSWORD);
	assert_one_answer(12, LDAP_OP_EXTENDED_RESPONSE, LDAP_SUCCESS, "");
	ck_assert_int_eq(fake.last_call, FAKE_DB_MODIFY);

	fake_conn_clear(conn);
	fake.n_calls = 0;
	failing_alloc_size = strlen(OLD_PASSWORD) + 1;
	run(CHANGE_OWN_PASSWORD);
	ck_assert_uint_eq(failing_alloc_size, 0);
	ck_assert_uint_eq(fake.n_calls, 0);
	assert_one_answer(12, LDAP_OP_EXTENDED_RESPONSE, LDAP_OTHER, "out of memory");
	entry_free(alice);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("ops");
	TCase *tc = tcase_create("dispatch");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, compare_reaches_the_database);
	tcase_add_test(tc, writes_answer_with_the_database_result);
	tcase_add_test(tc, outside_every_suffix_is_no_such_object);
	tcase_add_test(tc, search_streams_entries_then_done);
	tcase_add_test(tc, abandoned_op_is_never_answered);
	tcase_add_test(tc, search_parks_while_the_output_is_full);
	tcase_add_test(tc, inline_search_too_long_is_handed_off);
	tcase_add_test(tc, inline_short_reads_run_to_the_end);
	tcase_add_test(tc, not_a_request_closes_the_connection);
	tcase_add_test(tc, unknown_critical_control_is_refused);
	tcase_add_test(tc, weak_connection_is_refused_when_ssf_required);
	tcase_add_test(tc, response_tags);
	suite_add_tcase(s, tc);
	tc = tcase_create("password_modify");
	tcase_add_checked_fixture(tc, setup_passwd, teardown);
	tcase_add_test(tc, old_password_copy_out_of_memory_fails_the_change);
	suite_add_tcase(s, tc);
	return s;
}

#define LUMEN_CHECK_MAIN
#include "check_main.h"
