/*
 * op_target.c — what every operation on a database entry does before and
 * after its backend call: controls, target DN, database, requester, limits,
 * and the answer with its response controls (ops.h).
 */
#include <stdio.h>
#include <string.h>

#include "access_glue.h"
#include "config.h"
#include "conn.h"
#include "controls.h"
#include "entry.h"
#include "ldap_url.h"
#include "log.h"
#include "lumen_error.h"
#include "ops.h"
#include "overlay.h"
#include "proxy_authz.h"
#include "server.h"

long op_combine_limit(long requested, long configured)
{
	if (configured <= 0)   /* unlimited (or 0, which slapd also reads as none) */
		return requested > 0 ? requested : 0;
	return requested > 0 && requested < configured ? requested : configured;
}

/* RFC 4370: decide whether the connection's identity may act as the
 * control's authzId for this one operation. */
static bool apply_proxy_authz(struct op_context *ctx, struct op_target *t)
{
	struct ber_view authc;
	const char *why = NULL;
	int rc = conn_identity(ctx->conn, ctx->arena, &authc);
	if (rc == LUMEN_OK)
		rc = proxy_authz_decide(ctx->server, ctx->arena, &ctx->op->abandoned, authc,
					t->controls.authzid, &t->proxied_ndn, &why);
	if (rc == LUMEN_ENOMEM) {
		op_send_result(ctx, LDAP_OTHER, NULL, "out of memory");
		return false;
	}
	if (rc != LUMEN_OK) {
		log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u PROXYAUTHZ denied authcDN=\"%s\" "
			   "authzid=\"%s\": %s", (unsigned long long)conn_number(ctx->conn),
			   ctx->op->number, op_log_string(ctx, authc),
			   op_log_string(ctx, t->controls.authzid), why);
		op_send_result(ctx, LDAP_PROXIED_AUTHORIZATION_DENIED, NULL, why);
		return false;
	}
	t->proxied = true;
	log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u PROXYAUTHZ dn=\"%s\" authcDN=\"%s\"",
		   (unsigned long long)conn_number(ctx->conn), ctx->op->number,
		   op_log_string(ctx, t->proxied_ndn), op_log_string(ctx, authc));
	return true;
}

int op_requester(struct op_context *ctx, const struct op_target *t, struct ber_view *ndn)
{
	if (!t->proxied)
		return conn_identity(ctx->conn, ctx->arena, ndn);
	*ndn = t->proxied_ndn;
	return LUMEN_OK;
}

bool op_parse_controls(struct op_context *ctx, struct op_target *t)
{
	const char *why = "cannot parse the controls";
	memset(t, 0, sizeof(*t));
	int rc = controls_parse(ctx->msg, ctx->server->config->schema, &ctx->server->limits,
				ctx->arena, &t->controls, &why);
	if (rc == LUMEN_OK)
		return !t->controls.proxy_authz || apply_proxy_authz(ctx, t);
	if (rc == LUMEN_EUNSUPPORTED)
		op_send_result(ctx, LDAP_UNAVAILABLE_CRITICAL_EXTENSION, NULL, why);
	else if (rc == LUMEN_ENOMEM)
		op_send_result(ctx, LDAP_OTHER, NULL, "out of memory");
	else
		op_send_result(ctx, LDAP_PROTOCOL_ERROR, NULL, why);
	return false;
}

static bool same_dn(struct ber_view a, struct ber_view b)
{
	return a.ptr != NULL && b.ptr != NULL && a.len == b.len && memcmp(a.ptr, b.ptr, a.len) == 0;
}

/* The backend_op common to every operation on t->db. */
static int fill_backend_op(struct op_context *ctx, struct op_target *t)
{
	struct backend_op *bop = &t->bop;
	int rc = op_requester(ctx, t, &bop->requester_ndn);
	if (rc != LUMEN_OK)
		return rc;
	bop->arena = ctx->arena;
	bop->is_root = bop->requester_ndn.len > 0 && same_dn(bop->requester_ndn, t->db->rootdn);
	bop->abandoned = &ctx->op->abandoned;
	bop->assertion = t->controls.has_assertion ? &t->controls.assertion : NULL;
	bop->want_pre_read = t->controls.pre_read;
	bop->want_post_read = t->controls.post_read;
	bop->manage_dsa_it = t->controls.manage_dsa_it;
	bop->want_password_policy = t->controls.password_policy;
	bop->password_change_only = conn_password_change_only(ctx->conn);
	bop->sync = t->controls.has_sync ? &t->controls.sync : NULL;
	return LUMEN_OK;
}

bool op_target_unrestricted(struct op_context *ctx, const struct op_target *t,
			    bool password_change)
{
	static const char text[] =
		"Operations are restricted to bind/unbind/abandon/StartTLS/modify password";
	struct password_policy_response r = { PASSWORD_POLICY_NO_WARNING, 0,
					      PASSWORD_POLICY_CHANGE_AFTER_RESET };
	struct ldap_control control;
	bool with_control = t->bop.want_password_policy;
	if (!t->bop.password_change_only || password_change ||
	    !overlay_database_has(t->db->database, "ppolicy"))
		return true;
	if (with_control && controls_password_policy_response(&r, ctx->arena, &control) != LUMEN_OK) {
		op_send_result(ctx, LDAP_OTHER, NULL, "out of memory");
		return false;
	}
	op_send_result_controls(ctx, LDAP_INSUFFICIENT_ACCESS_RIGHTS, NULL, text, &control,
				with_control ? 1 : 0);
	return false;
}

bool op_require_ssf(struct op_context *ctx, unsigned needed, const char *what)
{
	char diagnostic[96];
	if (needed == 0 || conn_ssf(ctx->conn) >= needed)
		return true;
	snprintf(diagnostic, sizeof(diagnostic), "%s requires a protected connection (ssf %u)",
		 what, needed);
	op_send_result(ctx, LDAP_CONFIDENTIALITY_REQUIRED, NULL, diagnostic);
	return false;
}

void op_target_access(struct op_context *ctx, struct op_target *t, struct access_op *a)
{
	access_op_init(a, ctx->server, t->db, t->bop.requester_ndn, t->bop.is_root, ctx->arena,
		       &ctx->op->abandoned);
	t->hide_matched = a->checks;
	if (a->checks && t->bop.assertion != NULL) {
		access_values_init(&t->assertion_access, a, ACCESS_SEARCH);
		t->bop.filter_access = &t->assertion_access.hook;
	}
}

void op_target_refuse(struct op_context *ctx, struct access_op *a, const struct entry *e)
{
	struct acl_target at;
	if (e != NULL) {
		acl_target_init(&at, &a->policy, &a->subject, e);
		if (acl_may_disclose(&at)) {
			op_send_result(ctx, LDAP_INSUFFICIENT_ACCESS_RIGHTS, NULL, NULL);
			return;
		}
	}
	op_send_result(ctx, LDAP_NO_SUCH_OBJECT, NULL, NULL);
}

static void access_failed(struct op_context *ctx, struct ber_view ndn, int rc)
{
	log_printf(0, "conn=%llu op=%u %s: cannot read %s for access control: %s",
		   (unsigned long long)conn_number(ctx->conn), ctx->op->number, ctx->log_name,
		   op_log_string(ctx, ndn), lumen_strerror(rc));
	op_send_result(ctx, rc == LUMEN_EBUSY ? LDAP_BUSY : LDAP_OTHER, NULL,
		       "cannot check access");
}

bool op_target_refuse_unseen(struct op_context *ctx, const struct op_target *t)
{
	if (t->bop.group == NULL)
		return false;
	op_send_result(ctx, LDAP_INSUFFICIENT_ACCESS_RIGHTS, NULL,
		       "access control cannot see an entry an earlier update of this "
		       "transaction added or moved");
	return true;
}

bool op_target_decide(struct op_context *ctx, struct op_target *t, struct access_op *a,
		      bool (*allowed)(struct acl_target *at, void *arg), void *arg)
{
	enum access_verdict v;
	int rc = access_decide(a, t->db, t->ndn, allowed, arg, &v);
	if (rc != LUMEN_OK) {
		access_failed(ctx, t->ndn, rc);
		return false;
	}
	if (v == ACCESS_DENIED)
		op_send_result(ctx, LDAP_INSUFFICIENT_ACCESS_RIGHTS, NULL, NULL);
	else if (v == ACCESS_HIDDEN)
		op_send_result(ctx, LDAP_NO_SUCH_OBJECT, NULL, NULL);
	else if (v == ACCESS_ABSENT && op_target_refuse_unseen(ctx, t))
		return false;
	return v == ACCESS_ALLOWED || v == ACCESS_ABSENT;
}

bool op_target_fetch(struct op_context *ctx, const struct op_target *t, struct ber_view ndn,
		     struct entry **out)
{
	int rc = access_fetch_copy(t->db, ctx->arena, &ctx->op->abandoned, ndn, out);
	if (rc == LUMEN_OK)
		return true;
	access_failed(ctx, ndn, rc);
	return false;
}

static bool is_update(int tag)
{
	return tag == LDAP_OP_ADD_REQUEST || tag == LDAP_OP_DELETE_REQUEST ||
	       tag == LDAP_OP_MODIFY_REQUEST || tag == LDAP_OP_MODDN_REQUEST;
}

/*
 * A name outside every suffix: the `referral` URLs with the name as their
 * DN (and a search's scope), as slapd; without them noSuchObject, or for
 * an update unwillingToPerform (slapd's "no global superior knowledge").
 */
static void answer_outside(struct op_context *ctx, struct ber_view dn)
{
	const struct config *cfg = ctx->server->config;
	struct ldap_url url;
	int scope = LDAP_URL_SCOPE_ABSENT;
	if (cfg->n_referrals == 0) {
		if (is_update(ctx->op->tag))
			op_send_result(ctx, LDAP_UNWILLING_TO_PERFORM, NULL,
				       "no global superior knowledge");
		else
			op_send_result(ctx, LDAP_NO_SUCH_OBJECT, "", NULL);
		return;
	}
	if (ctx->op->tag == LDAP_OP_SEARCH_REQUEST)
		scope = (int)ctx->msg->u.search.scope;
	char **urls = arena_calloc(ctx->arena, cfg->n_referrals, sizeof(*urls));
	int rc = urls != NULL ? LUMEN_OK : LUMEN_ENOMEM;
	for (size_t i = 0; i < cfg->n_referrals && rc == LUMEN_OK; i++) {
		struct ber_view text = { (const uint8_t *)cfg->referrals[i],
					 strlen(cfg->referrals[i]) };
		rc = ldap_url_parse(text, &url);   /* checked when the file was read */
		if (rc == LUMEN_OK)
			rc = ldap_url_write(&url, dn, (enum ldap_url_scope)scope, ctx->arena,
					    &urls[i]);
	}
	if (rc != LUMEN_OK)
		op_send_result(ctx, LDAP_OTHER, NULL, "cannot write the referral");
	else
		op_send_referral(ctx, urls, cfg->n_referrals);
}

/* A search below the root DSE (base "", scope not base) with `referral`
 * lines: slapd refers it (without them the root DSE answers noSuchObject). */
static bool beyond_root_dse(struct op_context *ctx, struct ber_view ndn)
{
	return ndn.len == 0 && ctx->op->tag == LDAP_OP_SEARCH_REQUEST &&
	       ctx->msg->u.search.scope != LDAP_SCOPE_BASE &&
	       ctx->server->config->n_referrals > 0;
}

bool op_target_resolve(struct op_context *ctx, struct ber_view dn, struct op_target *t)
{
	bool normalized = server_normalize_dn(ctx->server, dn, ctx->arena, &t->ndn) == LUMEN_OK;
	t->db = normalized ? server_find_database(ctx->server, t->ndn) : NULL;
	/* The root DSE and cn=Subschema tell a client how to protect itself. */
	bool exempt = t->db != NULL && t->db->frontend;
	if (!exempt && !op_require_ssf(ctx, ctx->server->config->security.ssf, "this operation"))
		return false;
	if (!normalized) {
		op_send_result(ctx, LDAP_INVALID_DN_SYNTAX, NULL, "invalid DN");
		return false;
	}
	if (t->db == NULL || t->db->database == NULL || beyond_root_dse(ctx, t->ndn)) {
		answer_outside(ctx, dn);
		return false;
	}
	if (fill_backend_op(ctx, t) != LUMEN_OK) {
		op_send_result(ctx, LDAP_OTHER, NULL, "out of memory");
		return false;
	}
	t->bop.target_dn = dn;
	return true;
}

bool op_target_prepare(struct op_context *ctx, struct ber_view dn, struct op_target *t)
{
	return op_parse_controls(ctx, t) && op_target_resolve(ctx, dn, t);
}

/* url/dn (a write), url/dn??scope (a search; scope >= 0), as slapd
 * rewrites an updateref; url itself when dn is empty. */
static char *referral_for(struct op_context *ctx, const char *url, struct ber_view dn,
			  int scope)
{
	static const char *const scopes[] = { "base", "one", "sub", "subordinate" };
	const char *scope_name = scope >= 0 ? scopes[scope] : NULL;
	size_t len = strlen(url);
	if (dn.len == 0)
		return arena_strndup(ctx->arena, url, len);
	while (len > 0 && url[len - 1] == '/')
		len--;
	size_t size = len + 1 + dn.len + 2 + (scope_name ? strlen(scope_name) : 0) + 1;
	char *out = arena_alloc(ctx->arena, size);
	if (out != NULL)
		snprintf(out, size, "%.*s/%.*s%s%s", (int)len, url, (int)dn.len,
			 (const char *)dn.ptr, scope_name ? "??" : "", scope_name ? scope_name : "");
	return out;
}

/* A referral to the database's updateref URLs rewritten for dn and scope. */
static void send_update_referral(struct op_context *ctx, const struct config_database *cfg,
				 struct ber_view dn, int scope)
{
	char **urls = arena_calloc(ctx->arena, cfg->n_updaterefs, sizeof(*urls));
	for (size_t i = 0; urls != NULL && i < cfg->n_updaterefs; i++)
		if ((urls[i] = referral_for(ctx, cfg->updaterefs[i], dn, scope)) == NULL)
			urls = NULL;
	if (urls == NULL)
		op_send_result(ctx, LDAP_OTHER, NULL, "out of memory");
	else
		op_send_referral(ctx, urls, cfg->n_updaterefs);
}

bool op_refuse_replica_write(struct op_context *ctx, const struct server_database *db,
			     struct ber_view dn)
{
	const struct config_database *cfg = db->config;
	if (cfg == NULL || cfg->n_syncrepl == 0 || cfg->multiprovider)
		return false;
	if (cfg->n_updaterefs > 0)
		send_update_referral(ctx, cfg, dn, -1);
	else
		op_send_result(ctx, LDAP_UNWILLING_TO_PERFORM, NULL,
			       "shadow context; no update referral");
	return true;
}

bool op_refuse_copy(struct op_context *ctx, const struct op_target *t, struct ber_view dn,
		    int scope)
{
	const struct config_database *cfg = t->db->config;
	if (!t->controls.dont_use_copy || cfg == NULL || cfg->n_syncrepl == 0 ||
	    cfg->multiprovider)
		return false;
	if (scope < LDAP_SCOPE_BASE || scope > LDAP_SCOPE_CHILDREN) {
		op_send_result(ctx, LDAP_UNWILLING_TO_PERFORM, NULL, "copy not used");
		return true;
	}
	if (cfg->n_updaterefs == 0) {
		op_send_result(ctx, LDAP_UNWILLING_TO_PERFORM, NULL,
			       "copy not used; no referral information available");
		return true;
	}
	send_update_referral(ctx, cfg, dn, scope);
	return true;
}

bool op_target_prepare_write(struct op_context *ctx, struct ber_view dn, struct op_target *t)
{
	if (!op_target_prepare(ctx, dn, t) || op_refuse_replica_write(ctx, t->db, dn))
		return false;
	if (t->db->read_only) {
		op_send_result(ctx, LDAP_UNWILLING_TO_PERFORM, NULL,
			       "the server's own entries cannot be changed");
		return false;
	}
	op_wait_off_worker(ctx, &t->bop);
	if (!t->controls.has_txn)
		return true;
	/* RFC 5805: queued and answered now, applied when its End commits. */
	if (ctx->txn_group == NULL) {
		op_txn_enqueue(ctx, t);
		return false;
	}
	t->bop.group = ctx->txn_group;
	return true;
}

/*
 * Add the Pre-/Post-Read control for e to controls[*n] when asked and
 * possible. RFC 4527 §3.1: the copy holds only what the requester may
 * read, decided as for a search result: without `read` on the entry there
 * is no control at all, else each attribute needs `read`.
 */
static void add_read_control(struct op_context *ctx, const struct op_target *t,
			     const char *oid, bool wanted,
			     const struct attribute_selection *sel, const struct entry *e,
			     struct ldap_control *controls, size_t *n)
{
	if (!wanted || e == NULL)
		return;
	struct access_op a;
	struct acl_target at;
	struct attribute_selection readable = *sel;
	access_op_init(&a, ctx->server, t->db, t->bop.requester_ndn, t->bop.is_root, ctx->arena,
		       &ctx->op->abandoned);
	if (a.checks) {
		acl_target_init(&at, &a.policy, &a.subject, e);
		if (!acl_search_may_return(&at))
			return;
		readable.may_read = acl_target_may_read;
		readable.may_read_arg = &at;
	}
	int rc = controls_read_entry_response(oid, &readable, e, ctx->scratch, ctx->arena,
					      &controls[*n]);
	if (rc == LUMEN_OK)
		(*n)++;
	else
		log_printf(0, "conn=%llu op=%u cannot encode the %s control: %s",
			   (unsigned long long)conn_number(ctx->conn), ctx->op->number, oid,
			   lumen_strerror(rc));
}

static void free_reads(struct backend_op *bop)
{
	entry_free(bop->pre_read);
	entry_free(bop->post_read);
	bop->pre_read = bop->post_read = NULL;
}

static bool may_disclose(struct acl_target *at, void *arg)
{
	(void)arg;
	return acl_may_disclose(at);
}

/*
 * Under access control a referral names its object (matchedDN, URLs) only
 * to a requester who may know the object exists: `disclose` on it, as
 * slapd; the others get noSuchObject.
 */
static bool referral_disclosed(struct op_context *ctx, const struct op_target *t)
{
	struct access_op a;
	struct ber_view ndn;
	enum access_verdict v;
	if (!t->hide_matched)
		return true;
	if (server_normalize_dn(ctx->server, t->bop.matched_dn, ctx->arena, &ndn) != LUMEN_OK)
		return false;
	access_op_init(&a, ctx->server, t->db, t->bop.requester_ndn, t->bop.is_root, ctx->arena,
		       &ctx->op->abandoned);
	return access_decide(&a, t->db, ndn, may_disclose, NULL, &v) == LUMEN_OK &&
	       v == ACCESS_ALLOWED;
}

void op_target_answer(struct op_context *ctx, struct op_target *t, int rc)
{
	struct backend_op *bop = &t->bop;
	/* pre-read, post-read, paged, then the overlays' */
	struct ldap_control fixed[3], *controls = fixed;
	size_t n = 0;
	if (bop->n_response_controls > 0) {
		controls = arena_alloc(ctx->arena, (3 + bop->n_response_controls) *
					       sizeof(*controls));
		if (controls == NULL) {
			op_send_result(ctx, LDAP_OTHER, NULL, "out of memory");
			free_reads(bop);
			return;
		}
	}
	if (rc != LUMEN_OK)
		log_printf(0, "conn=%llu op=%u %s failed: %s (%s)",
			   (unsigned long long)conn_number(ctx->conn), ctx->op->number,
			   ctx->log_name, lumen_strerror(rc),
			   bop->diagnostic != NULL ? bop->diagnostic : "");
	if (bop->result_code == LDAP_SUCCESS) {
		add_read_control(ctx, t, CONTROL_PRE_READ, t->controls.pre_read,
				 &t->controls.pre_read_selection, bop->pre_read, controls, &n);
		add_read_control(ctx, t, CONTROL_POST_READ, t->controls.post_read,
				 &t->controls.post_read_selection, bop->post_read, controls, &n);
	}
	if (t->controls.paged &&
	    controls_paged_response(t->next_cookie.ptr, t->next_cookie.len, ctx->scratch,
				    ctx->arena, &controls[n]) == LUMEN_OK)
		n++;
	for (size_t i = 0; i < bop->n_response_controls; i++)
		controls[n++] = bop->response_controls[i];
	const char *matched = NULL;
	bool referral = bop->result_code == LDAP_REFERRAL && bop->n_referrals > 0;
	if (referral && !referral_disclosed(ctx, t)) {
		referral = false;
		bop->result_code = LDAP_NO_SUCH_OBJECT;
		bop->diagnostic = NULL;
	}
	/* A referral names its object: its URLs tell as much. */
	if (bop->matched_dn.len > 0 && (!t->hide_matched || referral))
		matched = arena_strndup(ctx->arena, (const char *)bop->matched_dn.ptr,
					bop->matched_dn.len);
	if (referral)
		op_send_referral_controls(ctx, matched, bop->referrals, bop->n_referrals,
					  controls, n);
	else
		op_send_result_controls(ctx, bop->result_code, matched, bop->diagnostic,
					controls, n);
	free_reads(bop);
}
