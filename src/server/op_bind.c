/*
 * op_bind.c — the Bind operation: anonymous, unauthenticated and simple
 * binds, against a database's rootdn/rootpw or an entry's userPassword
 * (any scheme of password.h); SASL EXTERNAL (sasl_external.c), other SASL
 * mechanisms refused. A simple bind with a password needs the SSF of
 * `security simple_bind=` (and `ssf=`), `auth` access on the entry's
 * userPassword (acl.h), and a cleartext stored value is only accepted
 * with `password-allow-cleartext on` (the default, as OpenLDAP).
 *
 * A failed simple bind costs the same whatever it names (bind_pace.h): an
 * unknown DN or an entry without a usable password checks the decoy, and
 * every failure waits out the pace's floor before invalidCredentials.
 *
 * A bind to an entry passes its database's overlay chain when one of its
 * overlays acts on binds (overlay.h, Bind: ppolicy, lastbind): the entry
 * is copied for the hooks, which may refuse the account (the checks and
 * the pace still run), turn a success into a failure, add response
 * controls and write state. Without such an overlay nothing is copied.
 */
#include <stdio.h>
#include <string.h>

#include "access_glue.h"
#include "database.h"
#include "bind_pace.h"
#include "config.h"
#include "conn.h"
#include "entry.h"
#include "inline_ops.h"
#include "log.h"
#include "lumen_error.h"
#include "ops.h"
#include "overlay.h"
#include "password.h"
#include "server.h"
#include "stats.h"

static const struct server_database *find_rootdn(const struct server *s, struct ber_view ndn)
{
	for (size_t i = 0; i < s->n_databases; i++) {
		const struct server_database *db = &s->databases[i];
		if (db->rootdn.ptr != NULL && db->rootdn.len == ndn.len &&
		    memcmp(db->rootdn.ptr, ndn.ptr, ndn.len) == 0)
			return db;
	}
	return NULL;
}

/* What a bind learns about the entry it authenticates as. */
struct bind_credentials {
	struct arena *arena;
	struct access_op *access;           /* decides `auth` on userPassword */
	const struct attribute_type *password_type;
	struct ber_view dn;                 /* the entry's current DN */
	struct ber_view *passwords;         /* userPassword values, arena copies */
	size_t n_passwords;
	bool want_entry;                    /* copy the entry for the overlays */
	struct entry *entry;                /* that copy (entry_free); NULL: none */
	bool checked;                       /* a stored value was checked (not the decoy) */
	uint64_t timed_wall_ns;             /* the work-factor checks' wall time */
};

static int collect_passwords(void *arg, const struct entry *e,
			     const struct backend_entry_info *info)
{
	struct bind_credentials *cred = arg;
	const struct entry_attribute *a = entry_find_type(e, cred->password_type);
	cred->dn.ptr = arena_memdup(cred->arena, info->dn.ptr, info->dn.len);
	cred->dn.len = info->dn.len;
	if (cred->want_entry && cred->dn.ptr != NULL && entry_dup(e, &cred->entry) != LUMEN_OK)
		return LUMEN_ENOMEM;
	if (cred->dn.ptr == NULL || a == NULL)
		return cred->dn.ptr == NULL ? LUMEN_ENOMEM : LUMEN_OK;
	/* Without `auth` the entry has, for binding, no password at all. */
	if (!acl_may_bind(&cred->access->policy, &cred->access->subject, e))
		return LUMEN_OK;
	cred->passwords = arena_calloc(cred->arena, a->n_values, sizeof(*cred->passwords));
	if (cred->passwords == NULL)
		return LUMEN_ENOMEM;
	for (size_t i = 0; i < a->n_values; i++) {
		struct ber_view v = a->values[i].value;
		cred->passwords[i].ptr = arena_memdup(cred->arena, v.ptr, v.len ? v.len : 1);
		cred->passwords[i].len = v.len;
		if (cred->passwords[i].ptr == NULL)
			return LUMEN_ENOMEM;
	}
	cred->n_passwords = a->n_values;
	return LUMEN_OK;
}

/* The stored credentials of an entry; none when it does not exist. */
static void fetch_credentials(struct op_context *ctx, const struct server_database *db,
			      struct ber_view ndn, struct bind_credentials *cred)
{
	const struct schema *schema = ctx->server->config->schema;
	struct backend_op bop = { .arena = ctx->arena, .abandoned = &ctx->op->abandoned };
	struct access_op access;
	cred->arena = ctx->arena;
	cred->password_type = schema_attribute_type(schema, "userPassword", 12);
	if (db == NULL || db->database == NULL || cred->password_type == NULL)
		return;
	struct ber_view anonymous = { (const uint8_t *)"", 0 };
	access_op_init(&access, ctx->server, db, anonymous, false, ctx->arena,
		       &ctx->op->abandoned);
	cred->access = &access;
	/* A copy for the password policy, or a rule's filter, reads more. */
	const struct attribute_type *password_type[1] = { cred->password_type };
	struct entry_selection only = { password_type, 1, false };
	if (!cred->want_entry && !access.tests_values)
		bop.fetch_only = &only;
	int rc = database_fetch(db->database, &bop, ndn, collect_passwords, cred);
	if (rc != LUMEN_OK && bop.result_code != LDAP_NO_SUCH_OBJECT)
		log_printf(0, "conn=%llu op=%u bind entry lookup failed: %s",
			   (unsigned long long)conn_number(ctx->conn), ctx->op->number,
			   lumen_strerror(rc));
	if (rc != LUMEN_OK) {
		cred->n_passwords = 0;
		entry_free(cred->entry);
		cred->entry = NULL;
	}
}

/* A password check's CPU and wall time, for the pace (bind_pace.h). */
struct check_clock {
	bool timed;              /* a work-factor scheme: worth the clock reads */
	uint64_t cpu, wall;
};

static struct check_clock check_clock_start(bool timed)
{
	struct check_clock c = { timed, 0, 0 };
	if (timed) {
		c.cpu = bind_pace_cpu_now();
		c.wall = bind_pace_wall_now();
	}
	return c;
}

/* now - then, or 0 where a clock read failed (it reads 0) and now is behind. */
static uint64_t elapsed_ns(uint64_t then, uint64_t now)
{
	return now > then ? now - then : 0;
}

/* The check's wall time once reported to the pace (0: not timed). */
static uint64_t check_clock_observe(struct op_context *ctx, const struct check_clock *c)
{
	if (!c->timed)
		return 0;
	uint64_t wall = elapsed_ns(c->wall, bind_pace_wall_now());
	bind_pace_observe(ctx->server->bind_pace, elapsed_ns(c->cpu, bind_pace_cpu_now()), wall);
	return wall;
}

/*
 * True if one stored value accepts the password. Every value is checked
 * (no early exit), and the decoy when none was: the work does not tell
 * which values exist. Each real check's CPU time may raise the pace.
 */
static bool any_password_matches(struct op_context *ctx, struct bind_credentials *cred,
				 struct ber_view given)
{
	bool matched = false, checked = false;
	bool cleartext_ok = ctx->server->config->password_allow_cleartext;
	for (size_t i = 0; i < cred->n_passwords; i++) {
		bool match = false;
		if (!cleartext_ok && (cred->passwords[i].len == 0 || cred->passwords[i].ptr[0] != '{'))
			continue;   /* password-allow-cleartext off */
		const char *stored = (const char *)cred->passwords[i].ptr;
		size_t len = cred->passwords[i].len;
		struct check_clock clock = check_clock_start(bind_pace_worth_timing(stored, len));
		if (password_check(stored, len, given.ptr, given.len, &match) == LUMEN_OK && match)
			matched = true;
		cred->timed_wall_ns += check_clock_observe(ctx, &clock);
		checked = true;
	}
	cred->checked = checked;
	if (!checked) {
		bool ignored;
		const char *decoy = bind_pace_decoy(ctx->server->bind_pace);
		password_check(decoy, strlen(decoy), given.ptr, given.len, &ignored);
	}
	return matched;
}

/* The rootdn with its rootpw: checked against the configuration only. */
static bool check_rootpw(struct op_context *ctx, const struct server_database *db,
			 struct ber_view given)
{
	bool match = false;
	const char *stored = db->config->rootpw;
	struct check_clock clock = check_clock_start(bind_pace_worth_timing(stored, strlen(stored)));
	int rc = password_check(stored, strlen(stored), given.ptr, given.len, &match);
	check_clock_observe(ctx, &clock);
	if (rc != LUMEN_OK)
		log_printf(0, "conn=%llu op=%u rootpw of %s cannot be checked: %s",
			   (unsigned long long)conn_number(ctx->conn), ctx->op->number, db->config->origin,
			   lumen_strerror(rc));
	return rc == LUMEN_OK && match;
}

/* The overlay chain's part in a bind to an entry (overlay.h, Bind). */
struct bind_hooks {
	struct overlay_chain *chain;        /* NULL: no overlay acts on binds */
	struct backend_op bop;              /* arena, control; response controls */
	struct overlay_bind bind;
	struct overlay_request req;
};

static void hooks_init(struct bind_hooks *h, struct op_context *ctx,
		       const struct server_database *db, bool want_policy)
{
	memset(h, 0, sizeof(*h));
	if (db == NULL || !overlay_chain_binds(db->bind_chain))
		return;
	h->chain = db->bind_chain;
	h->bop = (struct backend_op){ .arena = ctx->arena, .abandoned = &ctx->op->abandoned,
				      .want_password_policy = want_policy };
	op_wait_off_worker(ctx, &h->bop);   /* for the overlays' state writes */
	h->req = (struct overlay_request){ .operation = OVERLAY_BIND, .op = &h->bop,
					   .u.bind = &h->bind };
}

/* Before the check: may the account bind at all? */
static bool hooks_before(struct bind_hooks *h, const struct bind_credentials *cred,
			 struct ber_view ndn)
{
	if (h->chain == NULL)
		return true;
	h->req.ndn = ndn;
	h->bind.dn = cred->dn;
	h->bind.entry = cred->entry;
	overlay_chain_bind_before(h->chain, &h->req);
	return !h->bind.refused;
}

/* After the check: the outcome, as the overlays leave it. */
static bool hooks_after(struct bind_hooks *h, bool password_ok, bool success)
{
	if (h->chain == NULL)
		return success;
	h->bind.password_ok = password_ok;
	h->bind.success = success;
	overlay_chain_bind_after(h->chain, &h->req);
	return h->bind.success;
}

/*
 * On an I/O thread (inline_ops.h), a check that is costly — a KDF hash
 * with a work factor, the decoy's included — goes to a worker.
 */
static bool costly_check(struct op_context *ctx, const struct bind_credentials *cred)
{
	bool checked = false;
	for (size_t i = 0; i < cred->n_passwords; i++) {
		if (!inline_password_cheap((const char *)cred->passwords[i].ptr,
					   cred->passwords[i].len))
			return true;
		checked = true;
	}
	const char *decoy = bind_pace_decoy(ctx->server->bind_pace);
	return !checked && !inline_password_cheap(decoy, strlen(decoy));
}

/* Checks the password of the entry ndn (or the rootdn's rootpw). On an
 * I/O thread it may hand the op off instead (ctx->hand_off, false). */
static bool check_bind(struct op_context *ctx, struct ber_view ndn, struct ber_view password,
		       bool want_policy, struct bind_credentials *cred,
		       struct bind_hooks *hooks, bool *password_ok)
{
	const struct server_database *db = find_rootdn(ctx->server, ndn);
	*password_ok = false;
	if (db != NULL && db->config->rootpw != NULL) {
		const char *rootpw = db->config->rootpw;
		if (ctx->on_io_thread && !inline_password_cheap(rootpw, strlen(rootpw)) &&
		    op_hand_off(ctx))
			return false;
		cred->dn = (struct ber_view){ (const uint8_t *)db->config->rootdn,
					      strlen(db->config->rootdn) };
		*password_ok = check_rootpw(ctx, db, password);
		return *password_ok;
	}
	db = server_find_database(ctx->server, ndn);
	hooks_init(hooks, ctx, db, want_policy);
	/* Overlays that act on binds may write (lastbind, ppolicy): never
	 * wait for a commit on an I/O thread. */
	if (hooks->chain != NULL && op_hand_off(ctx))
		return false;
	cred->want_entry = hooks->chain != NULL;
	fetch_credentials(ctx, db, ndn, cred);
	if (ctx->on_io_thread && costly_check(ctx, cred) && op_hand_off(ctx))
		return false;
	bool allowed = hooks_before(hooks, cred, ndn);
	*password_ok = any_password_matches(ctx, cred, password);
	return *password_ok && allowed;
}

static void answer_bind(struct op_context *ctx, int code, const struct backend_op *bop)
{
	op_send_result_controls(ctx, code, NULL, bop->diagnostic, bop->response_controls,
				bop->n_response_controls);
}

/* A failed bind that checked an entry's stored values, its verdict in and
 * the overlays' writes made: its time since the request arrived, for the
 * pace's path (the rootdn's is left out: no entry, no writes). */
static void observe_failure_path(struct op_context *ctx, const struct bind_credentials *cred)
{
	if (!cred->checked)
		return;
	uint64_t now = bind_pace_wall_now();
	if (now == 0)
		return;   /* no clock: nothing measured, the path stays */
	uint64_t total = elapsed_ns(stats_timespec_ns(&ctx->op->queued_at), now);
	bind_pace_observe_path(ctx->server->bind_pace, total, cred->timed_wall_ns);
}

/*
 * Simple bind with a DN and a password: the rootdn/rootpw of its database,
 * else the userPassword of the entry. Unknown DN, wrong password, an
 * entry without password and an account an overlay refuses get the same
 * answer after the same time (bind_pace.h), counted from the request's
 * arrival; the verdict is taken only after the wait.
 */
static void simple_bind(struct op_context *ctx, const struct ldap_bind_request *req,
			bool want_policy)
{
	struct ber_view ndn;
	struct bind_credentials cred = { 0 };
	struct bind_hooks hooks;
	bool password_ok, held = false;
	if (server_normalize_dn(ctx->server, req->name, ctx->arena, &ndn) != LUMEN_OK) {
		op_send_result(ctx, LDAP_INVALID_DN_SYNTAX, NULL, "invalid DN");
		return;
	}
	memset(&hooks, 0, sizeof(hooks));
	bool match = check_bind(ctx, ndn, req->password, want_policy, &cred, &hooks,
				&password_ok);
	if (ctx->hand_off) {
		entry_free(cred.entry);
		return;                    /* a worker binds */
	}
	bool checked_ok = match;
	if (!match) {
		struct timeval delay = bind_pace_remaining(ctx->server->bind_pace,
							   ctx->op->queued_at);
		/* A connection that cannot hold its output is closing: nothing
		 * would reach the client anyway (the overlays still record). */
		held = conn_hold_output(ctx->conn, &delay) == LUMEN_OK;
	}
	match = hooks_after(&hooks, password_ok, match);
	entry_free(cred.entry);
	if (!match) {
		observe_failure_path(ctx, &cred);
		if (held || checked_ok)   /* refused after a good password: no pace */
			answer_bind(ctx, LDAP_INVALID_CREDENTIALS, &hooks.bop);
		return;
	}
	if (conn_set_identity(ctx->conn, ndn, cred.dn, true) != LUMEN_OK) {
		op_send_result(ctx, LDAP_OTHER, NULL, "out of memory");
		return;
	}
	if (hooks.bind.password_change_only)
		conn_set_password_change_only(ctx->conn, true);
	log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u BIND dn=\"%s\" mech=SIMPLE ssf=0",
		   (unsigned long long)conn_number(ctx->conn), ctx->op->number,
		   op_log_string(ctx, ndn));
	answer_bind(ctx, LDAP_SUCCESS, &hooks.bop);
}

/* `security simple_bind=`/`ssf=`: else confidentialityRequired was sent. */
static bool simple_bind_protected(struct op_context *ctx)
{
	const struct config_security *sec = &ctx->server->config->security;
	unsigned needed = sec->simple_bind > sec->ssf ? sec->simple_bind : sec->ssf;
	return op_require_ssf(ctx, needed, "a simple bind with a password");
}

void op_bind(struct op_context *ctx)
{
	const struct ldap_bind_request *req = &ctx->msg->u.bind;
	bool sasl = req->auth == LDAP_AUTH_SASL;
	struct op_target t;
	if (!ctx->op->handed_off)   /* logged where it started */
		log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u BIND dn=\"%s\" method=%d",
			   (unsigned long long)conn_number(ctx->conn), ctx->op->number,
			   op_log_string(ctx, req->name), sasl ? 163 : 128);
	/* Whatever the outcome, the connection is anonymous until it succeeds. */
	struct ber_view anonymous = { (const uint8_t *)"", 0 };
	conn_set_identity(ctx->conn, anonymous, anonymous, false);

	if (!op_parse_controls(ctx, &t)) {
		return;
	} else if (req->version != 3) {
		op_send_result(ctx, LDAP_PROTOCOL_ERROR, NULL,
			       "requested protocol version not supported");
	} else if (sasl && ber_view_eq_str_nocase(req->mechanism, "EXTERNAL")) {
		sasl_external_bind(ctx, req);
	} else if (sasl) {
		op_send_result(ctx, LDAP_AUTH_METHOD_NOT_SUPPORTED, NULL,
			       "SASL mechanism not supported");
	} else if (req->name.len == 0 && req->password.len == 0) {
		op_send_result(ctx, LDAP_SUCCESS, NULL, NULL);
	} else if (req->name.len == 0) {
		op_send_result(ctx, LDAP_INAPPROPRIATE_AUTHENTICATION, NULL,
			       "anonymous bind with a password disallowed");
	} else if (req->password.len == 0) {
		if (ctx->server->config->allow_bind_anon_dn)
			op_send_result(ctx, LDAP_SUCCESS, NULL, NULL);
		else
			op_send_result(ctx, LDAP_UNWILLING_TO_PERFORM, NULL,
				       "unauthenticated bind (DN with no password) disallowed");
	} else if (simple_bind_protected(ctx)) {
		simple_bind(ctx, req, t.controls.password_policy);
	}
}
