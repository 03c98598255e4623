/*
 * fuzz_ops.c — libFuzzer target for the operation handlers: a sequence of
 * LDAPMessages goes through the real decode → dispatch → handler →
 * overlay chain → back-mdb path (ops_run_job, as a worker runs it) of a
 * server built from a slapd.conf with access rules and the memberof,
 * refint, unique and syncprov overlays. Only the connection is a fake
 * (tests/unit/fake_conn.c: responses are captured, nothing is closed),
 * and the failed-bind pacing (fake_bind_pace.c: measuring it at each
 * server's creation took 98% of the time; failed binds are not held).
 *
 * fuzz-layers: proto model backmdb config server
 * fuzz-fakes: conn bind_pace
 * fuzz-max-len: 4096
 *
 * Set-up (once per process): the configuration is written to a mkdtemp
 * directory under $TMPDIR and loaded; a template database of 12 entries
 * (people with passwords, groups, a subtree only the rootdn may read) is
 * built by sending Add requests as the rootdn through the handlers. Each
 * input gets a fresh copy of it and a fresh server (server_create,
 * server_open_databases, one worker context); up to 32 LDAPMessages, each a
 * complete BER element read from the input, are run in order on one
 * connection (anonymous until a Bind succeeds). The sequence runs twice.
 * Abandon and Unbind are the I/O thread's (conn_ops.c), done here as it
 * does them: an Unbind ends the sequence, an Abandon marks the parked
 * searches it names, which then end without a word.
 *
 * Invariants, for every request: what was sent decodes as LDAPMessages;
 * each request gets exactly one final response, of its type, with its
 * messageID and a known result code, preceded only by entries, references
 * and intermediate responses with that messageID — unless the server
 * closed the connection, which it does with exactly one Notice of
 * Disconnection (messageID 0, last thing sent) and nothing run after it;
 * a message that is not a request closes it. A search the server parks (a
 * persistent search, at most 4 kept) runs again when a write wakes it, as
 * the I/O thread would requeue it, and sends only messages of its own;
 * an Abandon ends it silently, and so does the end of the sequence. Both
 * runs of the sequence give the same responses (messageID, protocolOp,
 * result code, in order). Everything is freed (LeakSanitizer); the
 * worker's arena and every buffer stay in bounds (AddressSanitizer).
 *
 * FUZZ_OPS_TRACE=1 in the environment prints every response (to review
 * what a seed reaches).
 *
 * Seeds: tests/fuzz/corpus/fuzz_ops/ (tests/fuzz/seeds/gen_fuzz_ops.py).
 */
#include <dirent.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "fake_bind_pace.h"
#include "fake_conn.h"
#include "ldap_message.h"
#include "ldap_result_codes.h"
#include "lumen_error.h"
#include "ops.h"
#include "server.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_OPS 32
#define MAX_RESPONSES 4096
#define SUFFIX "dc=example,dc=com"
#define ROOTDN "cn=admin," SUFFIX

static char template_dir[4096], work_dir[4096], conf_path[4200];
static struct config *cfg;

static const char *const tree[] = {
	SUFFIX, "objectClass: dcObject\nobjectClass: organization\ndc: example\no: Example",
	"ou=People," SUFFIX, "objectClass: organizationalUnit\nou: People",
	"ou=Groups," SUFFIX, "objectClass: organizationalUnit\nou: Groups",
	"ou=Secret," SUFFIX, "objectClass: organizationalUnit\nou: Secret",
	"uid=alice,ou=People," SUFFIX,
		"objectClass: inetOrgPerson\nuid: alice\ncn: Alice Smith\nsn: Smith\n"
		"mail: alice@example.com\nuserPassword: alice-pw",
	"uid=bob,ou=People," SUFFIX,
		"objectClass: inetOrgPerson\nuid: bob\ncn: Bob\nsn: Smyth\nuserPassword: bob-pw",
	"uid=carol,ou=People," SUFFIX,
		"objectClass: inetOrgPerson\nuid: carol\ncn: Carol\nsn: Jones\nmail: carol@example.com",
	"cn=J\xc3\xbcrgen,ou=People," SUFFIX,
		"objectClass: person\ncn: J\xc3\xbcrgen\nsn: M\xc3\xbcller",
	"cn=staff,ou=Groups," SUFFIX,
		"objectClass: groupOfNames\ncn: staff\nmember: uid=alice,ou=People," SUFFIX
		"\nmember: uid=bob,ou=People," SUFFIX,
	"cn=admins,ou=Groups," SUFFIX,
		"objectClass: groupOfNames\ncn: admins\nmember: uid=alice,ou=People," SUFFIX
		"\nmember: cn=staff,ou=Groups," SUFFIX,
	"cn=vault,ou=Secret," SUFFIX,
		"objectClass: person\ncn: vault\nsn: hidden\ndescription: only the rootdn",
	"cn=empty,ou=Groups," SUFFIX, "objectClass: groupOfNames\ncn: empty\nmember: " ROOTDN,
};

/* Access rules in the shape operators write them: passwords only for
 * binding and their owner, a subtree no one but the rootdn reads, member
 * values written only by the admins group, everything else readable. */
static const char config_text[] =
	"include schema/core.schema\n"
	"include schema/cosine.schema\n"
	"include schema/inetorgperson.schema\n"
	"include schema/nis.schema\n"
	"threads 1\n"
	"password-hash {SSHA}\n"
	"sizelimit 50\n"
	"database mdb\n"
	"suffix \"" SUFFIX "\"\n"
	"rootdn \"" ROOTDN "\"\n"
	"rootpw secret\n"
	"directory %s\n"
	"maxsize 67108864\n"
	"dbnosync\n"
	"cachesize 4\n"
	"idlcachesize 16\n"
	"index objectClass,uid,mail,member,memberOf eq\n"
	"index cn eq,sub\n"
	"overlay syncprov\n"
	"syncprov-sessionlog 16\n"
	"overlay memberof\n"
	"overlay refint\n"
	"refint_attributes member\n"
	"overlay unique\n"
	"unique_uri ldap:///?uid,mail?sub\n"
	"access to attrs=userPassword by self write by anonymous auth by * none\n"
	"access to dn.subtree=\"ou=Secret," SUFFIX "\" by * none\n"
	"access to attrs=member by group=\"cn=admins,ou=Groups," SUFFIX "\" write\n"
	"  by users read by * read\n"
	"access to * by self write by users read by anonymous read\n";

/* One response read back from what the connection sent. */
struct response {
	int32_t message_id;
	int op;
	int code;                  /* -1 where the response has none */
	bool notice;               /* a Notice of Disconnection */
};

struct trace {
	struct response r[MAX_RESPONSES];
	size_t n;
};

static struct trace runs[2];
static bool trace_responses;      /* FUZZ_OPS_TRACE set: print every response */

static void fail(const char *what, int detail)
{
	fprintf(stderr, "fuzz_ops: %s (%d)\n", what, detail);
	abort();
}

/* ------------------------------------------------------------ set-up */

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static void cleanup(void)
{
	config_free(cfg);
	nftw(template_dir, remove_one, 8, FTW_DEPTH | FTW_PHYS);
	nftw(work_dir, remove_one, 8, FTW_DEPTH | FTW_PHYS);
	unlink(conf_path);
}

/* Copy every file of from (but LMDB's lock file) into to. */
static void copy_dir(const char *from_dir, const char *to_dir)
{
	static uint8_t buf[1 << 16];
	char from[8192], to[8192];
	DIR *d = opendir(from_dir);
	struct dirent *de;
	if (d == NULL)
		fail("opendir", 0);
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || strcmp(de->d_name, "lock.mdb") == 0)
			continue;
		snprintf(from, sizeof(from), "%s/%s", from_dir, de->d_name);
		snprintf(to, sizeof(to), "%s/%s", to_dir, de->d_name);
		FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
		size_t n;
		if (in == NULL || out == NULL)
			fail("copy: fopen", 0);
		while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
			if (fwrite(buf, 1, n, out) != n)
				fail("copy: fwrite", 0);
		fclose(in);
		if (fclose(out) != 0)
			fail("copy: fclose", 0);
	}
	closedir(d);
}

/* An AddRequest for dn with "attr: value" lines. */
static void encode_add(struct ber_writer *w, int32_t id, const char *dn, const char *lines)
{
	char buf[1024], *save = NULL;
	snprintf(buf, sizeof(buf), "%s", lines);
	ber_begin(w, BER_TAG_SEQUENCE);
	ber_write_integer(w, BER_TAG_INTEGER, id);
	ber_begin(w, BER_TAG(BER_CLASS_APPLICATION, 1, LDAP_OP_ADD_REQUEST));
	ber_write_string(w, BER_TAG_OCTET_STRING, dn);
	ber_begin(w, BER_TAG_SEQUENCE);
	for (char *l = strtok_r(buf, "\n", &save); l != NULL; l = strtok_r(NULL, "\n", &save)) {
		char *colon = strstr(l, ": ");
		*colon = '\0';
		ber_begin(w, BER_TAG_SEQUENCE);
		ber_write_string(w, BER_TAG_OCTET_STRING, l);
		ber_begin(w, BER_TAG_SET);
		ber_write_string(w, BER_TAG_OCTET_STRING, colon + 2);
		ber_end(w);
		ber_end(w);
	}
	ber_end(w);
	ber_end(w);
	ber_end(w);
}

#define MAX_PARKED 4

struct session {
	struct server *server;
	void *worker;
	struct conn *conn;
	struct op *parked[MAX_PARKED];   /* persistent searches waiting for changes */
	size_t n_parked;
};

static void session_open(struct session *s)
{
	char err[512] = "";
	int rc = server_create(cfg, &s->server, err, sizeof(err));
	if (rc == LUMEN_OK)
		rc = server_open_databases(s->server, err, sizeof(err));
	if (rc != LUMEN_OK) {
		fprintf(stderr, "fuzz_ops: %s\n", err);
		fail("server", rc);
	}
	s->worker = ops_worker_start(s->server, 0);
	s->conn = fake_conn_new(1);
	if (s->worker == NULL || s->conn == NULL)
		fail("worker or connection", 0);
}

/* Run op as a worker would; keep it when it parks (persistent search). */
static void run_op(struct session *s, struct op *op)
{
	unsigned parks = s->conn->n_parked;
	op->job.run(&op->job, s->worker);
	if (s->conn->n_parked == parks)
		return;     /* ended: conn_op_done freed it */
	if (s->n_parked == MAX_PARKED) {
		/* the connection ends it (as a close would) */
		op->parked = false;
		op->abandoned = true;
		op->job.run(&op->job, s->worker);
		return;
	}
	s->parked[s->n_parked++] = op;
}

/* Take parked op i off the list to run it again (conn_take_parked). */
static struct op *unpark(struct session *s, size_t i)
{
	struct op *op = s->parked[i];
	s->parked[i] = s->parked[--s->n_parked];
	op->parked = op->waiting = op->woken = false;
	return op;
}

static void session_close(struct session *s)
{
	/* The connection closes: its parked searches end unanswered. */
	while (s->n_parked > 0) {
		struct op *op = unpark(s, 0);
		op->abandoned = true;
		op->job.run(&op->job, s->worker);
	}
	fake_conn_free(s->conn);
	ops_worker_stop(s->server, s->worker);
	server_destroy(s->server);
}

/* Run one framed request PDU as a worker would. False when it does not
 * frame (the I/O thread would close the connection). */
static bool run_pdu(struct session *s, const uint8_t *pdu, size_t len)
{
	struct op *op = fake_conn_op(s->conn, pdu, len);
	if (op == NULL)
		return false;
	run_op(s, op);
	return true;
}

static void build_template(void)
{
	struct session s = { 0 };
	struct ber_writer w;
	copy_dir(template_dir, work_dir);
	session_open(&s);
	s.conn->bound = true;
	snprintf(s.conn->ndn, sizeof(s.conn->ndn), "%s", ROOTDN);
	snprintf(s.conn->dn, sizeof(s.conn->dn), "%s", ROOTDN);
	if (ber_writer_init(&w, 1024, 1 << 20) != LUMEN_OK)
		fail("writer", 0);
	for (size_t i = 0; i < sizeof(tree) / sizeof(tree[0]); i += 2) {
		ber_writer_reset(&w);
		fake_conn_clear(s.conn);
		encode_add(&w, (int32_t)(i + 1), tree[i], tree[i + 1]);
		/* addResponse: 30 len 02 01 id 69 len 0a 01 code */
		if (ber_writer_error(&w) != LUMEN_OK || !run_pdu(&s, w.buf, w.len) ||
		    s.conn->sent_len < 10 || s.conn->sent[9] != LDAP_SUCCESS) {
			fprintf(stderr, "fuzz_ops: template entry %s not added\n", tree[i]);
			abort();
		}
	}
	ber_writer_free(&w);
	session_close(&s);
	copy_dir(work_dir, template_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");
	char err[512] = "";
	(void)argc, (void)argv;
	trace_responses = getenv("FUZZ_OPS_TRACE") != NULL;
	tmp = tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp";
	snprintf(template_dir, sizeof(template_dir), "%s/fuzz_ops-t-XXXXXX", tmp);
	snprintf(work_dir, sizeof(work_dir), "%s/fuzz_ops-w-XXXXXX", tmp);
	if (mkdtemp(template_dir) == NULL || mkdtemp(work_dir) == NULL) {
		perror("fuzz_ops: mkdtemp");
		abort();
	}
	snprintf(conf_path, sizeof(conf_path), "%s/slapd.conf", template_dir);
	FILE *f = fopen(conf_path, "w");
	if (f == NULL || fprintf(f, config_text, work_dir) < 0 || fclose(f) != 0)
		fail("writing the configuration", 0);
	if (config_load(conf_path, &cfg, err, sizeof(err)) != LUMEN_OK) {
		fprintf(stderr, "fuzz_ops: %s (run from the repository root)\n", err);
		abort();
	}
	/* The template directory holds only database files from here on. */
	unlink(conf_path);
	atexit(cleanup);
	build_template();
	return 0;
}

/* ------------------------------------------------------- invariants */

static bool is_notice_of_disconnection(const struct ldap_message *m)
{
	const struct ldap_extended_response *x = &m->u.extended_response;
	return m->op == LDAP_OP_EXTENDED_RESPONSE && x->has_name &&
	       ber_view_eq_str(x->name, LDAP_OID_NOTICE_OF_DISCONNECTION);
}

/* The resultCode of a response; -1 for entries, references and
 * intermediate responses, which have none. */
static int result_code_of(const struct ldap_message *m)
{
	switch (m->op) {
	case LDAP_OP_BIND_RESPONSE:
		return m->u.bind_response.result.code;
	case LDAP_OP_EXTENDED_RESPONSE:
		return m->u.extended_response.result.code;
	case LDAP_OP_SEARCH_ENTRY:
	case LDAP_OP_SEARCH_REFERENCE:
	case LDAP_OP_INTERMEDIATE_RESPONSE:
		return -1;
	default:
		return m->u.result.code;
	}
}

/* Decode what the connection sent from *pos on, appending to t; every
 * response must frame and decode. */
static void read_responses(struct session *s, size_t *pos, struct trace *t)
{
	struct arena arena;
	struct ldap_decode_limits limits;
	arena_init(&arena, 0);
	ldap_decode_limits_default(&limits);
	while (*pos < s->conn->sent_len) {
		size_t len = 0;
		struct ldap_message m;
		const char *why = NULL;
		const uint8_t *at = s->conn->sent + *pos;
		size_t left = s->conn->sent_len - *pos;
		if (ber_frame(at, left, left, &len) != LUMEN_OK || len == 0 || len > left)
			fail("a response does not frame", (int)*pos);
		int rc = ldap_message_decode(at, len, &arena, &limits, &m, &why);
		if (rc != LUMEN_OK) {
			fprintf(stderr, "fuzz_ops: response does not decode: %s\n", why ? why : "");
			fail("response decode", rc);
		}
		if (t->n == MAX_RESPONSES)
			fail("too many responses", (int)t->n);
		struct response *r = &t->r[t->n++];
		*r = (struct response){ .message_id = m.message_id, .op = m.op,
					.code = result_code_of(&m),
					.notice = is_notice_of_disconnection(&m) };
		if (trace_responses)
			fprintf(stderr, "fuzz_ops: id %d %s code %d\n", r->message_id,
				ldap_op_name(r->op), r->code);
		*pos += len;
		arena_reset(&arena);
	}
	arena_free(&arena);
}

static bool known_code(int code)
{
	return strcmp(ldap_result_name(code), "unknown") != 0;
}

/* The responses t->r[first..] to one request: see the header. Returns
 * false when the connection is over (closed, or unbound). */
static bool check_request(struct session *s, const struct trace *t, size_t first,
			  int32_t message_id, int tag, bool parked)
{
	size_t n = t->n - first;
	const struct response *r = &t->r[first];
	int final_tag = ops_response_tag(tag);
	if (s->conn->aborted) {
		if (n == 0 || !r[n - 1].notice || r[n - 1].message_id != 0 || !known_code(r[n - 1].code))
			fail("a closed connection ends with one Notice of Disconnection", (int)n);
		n--;
	}
	if (final_tag < 0) {     /* not a request (Abandon and Unbind never come here) */
		if (!s->conn->aborted)
			fail("a message that is not a request did not close the connection", tag);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		bool last = i + 1 == n;
		if (r[i].message_id != message_id || r[i].notice)
			fail("a response with another messageID", r[i].message_id);
		if (!last && r[i].op != LDAP_OP_SEARCH_ENTRY && r[i].op != LDAP_OP_SEARCH_REFERENCE &&
		    r[i].op != LDAP_OP_INTERMEDIATE_RESPONSE)
			fail("a final response before the last", r[i].op);
	}
	if (s->conn->aborted)
		return false;
	if (parked)             /* persistent: its final response comes later */
		return true;
	if (n == 0 || r[n - 1].op != final_tag)
		fail("no final response of the request's type", tag);
	if (!known_code(r[n - 1].code))
		fail("unknown result code", r[n - 1].code);
	return true;
}

/* The I/O thread answers Abandon itself: mark the parked searches it names,
 * which then end unanswered. False when it does not decode (the I/O thread
 * closes the connection). */
static bool abandon(struct session *s, const uint8_t *pdu, size_t len)
{
	struct arena arena;
	struct ldap_decode_limits limits;
	struct ldap_message m;
	size_t sent = s->conn->sent_len;
	arena_init(&arena, 0);
	ldap_decode_limits_default(&limits);
	int rc = ldap_message_decode(pdu, len, &arena, &limits, &m, NULL);
	arena_free(&arena);
	if (rc != LUMEN_OK)
		return false;
	for (size_t i = 0; i < s->n_parked;) {
		if (s->parked[i]->message_id != m.u.abandon_id) {
			i++;
			continue;
		}
		struct op *op = unpark(s, i);
		op->abandoned = true;
		op->job.run(&op->job, s->worker);
	}
	if (s->conn->sent_len != sent)
		fail("an abandoned search answered", (int)(s->conn->sent_len - sent));
	return true;
}

/* Run the parked searches a write woke, as the I/O thread requeues them:
 * what they send carries their messageID, and only the last response may
 * be final. */
static void run_woken(struct session *s, size_t *pos, struct trace *t)
{
	unsigned runs_left = 64;     /* a search that never waits would loop */
	for (size_t i = 0; i < s->n_parked;) {
		if (runs_left-- == 0)
			fail("a parked search keeps running", (int)s->n_parked);
		if (!s->parked[i]->woken && s->parked[i]->waiting) {
			i++;
			continue;
		}
		struct op *op = unpark(s, i);
		int32_t message_id = op->message_id;
		size_t first = t->n;
		run_op(s, op);
		read_responses(s, pos, t);
		for (size_t k = first; k < t->n; k++) {
			const struct response *r = &t->r[k];
			bool last = k + 1 == t->n;
			if (r->message_id != message_id)
				fail("a woken search answers with another messageID", r->message_id);
			if (r->op != LDAP_OP_SEARCH_ENTRY && r->op != LDAP_OP_SEARCH_REFERENCE &&
			    r->op != LDAP_OP_INTERMEDIATE_RESPONSE &&
			    !(last && r->op == LDAP_OP_SEARCH_DONE && known_code(r->code)))
				fail("a woken search sends a final response before its last", r->op);
		}
		i = 0;     /* the list changed */
	}
}

static void run_sequence(const uint8_t *data, size_t size, struct trace *t)
{
	struct session s = { 0 };
	struct ber_reader reader;
	size_t pos = 0, ops = 0;
	copy_dir(template_dir, work_dir);
	session_open(&s);
	t->n = 0;
	ber_reader_init(&reader, data, size);
	while (!ber_reader_at_end(&reader) && ops++ < MAX_OPS) {
		const uint8_t *start = reader.pos;
		struct ber_element el;
		int32_t message_id;
		int tag;
		if (ber_read_element(&reader, &el) != LUMEN_OK)
			break;
		size_t len = (size_t)(reader.pos - start);
		if (ldap_message_peek(start, len, &message_id, &tag) != LUMEN_OK)
			break;     /* the I/O thread closes the connection */
		if (tag == LDAP_OP_UNBIND_REQUEST)
			break;     /* ... and here too */
		if (tag == LDAP_OP_ABANDON_REQUEST) {
			if (!abandon(&s, start, len))
				break;
			continue;
		}
		unsigned parks = s.conn->n_parked;
		size_t first = t->n;
		if (!run_pdu(&s, start, len))
			break;
		read_responses(&s, &pos, t);
		if (!check_request(&s, t, first, message_id, tag, s.conn->n_parked != parks))
			break;
		run_woken(&s, &pos, t);
		if (s.conn->aborted)
			break;
	}
	session_close(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	run_sequence(data, size, &runs[0]);
	run_sequence(data, size, &runs[1]);
	if (runs[0].n != runs[1].n)
		fail("the second run answered differently", (int)runs[1].n);
	for (size_t i = 0; i < runs[0].n; i++) {
		const struct response *a = &runs[0].r[i], *b = &runs[1].r[i];
		if (a->message_id != b->message_id || a->op != b->op || a->code != b->code)
			fail("the second run answered differently at", (int)i);
	}
	return 0;
}
