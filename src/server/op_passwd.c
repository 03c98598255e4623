/*
 * op_passwd.c — the Password Modify extended operation (RFC 3062,
 * 1.3.6.1.4.1.4203.1.11.1), as OpenLDAP's ldappasswd uses it.
 *
 * Who may change what: the rootdn of the target's database any password;
 * anyone else needs `write` on the target's userPassword (acl.h; e.g.
 * `access to attrs=userPassword by self write`). The old password is
 * optional, as in slapd, unless the policy has pwdSafeModify (the ppolicy
 * overlay refuses the change without it); when given it must match
 * (unwillingToPerform otherwise). The identity is userIdentity (a DN)
 * or the bound user. The new value is stored hashed with `password-hash`;
 * without newPasswd one is generated and returned (genPasswd). Over a
 * connection weaker than `security simple_bind=`/`ssf=`:
 * confidentialityRequired. The modify that stores it carries the
 * cleartexts (backend_op.password_change) and the Password Policy request
 * control through the overlay chain, whose ppolicy may refuse the change
 * (constraintViolation with the control's error) or warn.
 */
#include <stdio.h>
#include <string.h>

#include <openssl/rand.h>

#include "access_glue.h"
#include "access_write.h"
#include "database.h"
#include "config.h"
#include "conn.h"
#include "log.h"
#include "lumen_error.h"
#include "ops.h"
#include "password.h"
#include "server.h"
#include "workq.h"

/* Characters and length of a generated password (~71 bits). */
#define GENERATED_LENGTH 12
static const char generated_alphabet[] =
	"ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";

struct passwd_request {
	bool has_identity, has_old, has_new;
	struct ber_view identity, old_password, new_password;
};

/* RFC 3062 PasswdModifyRequestValue; absent value = all fields absent. */
static int parse_request(const struct ldap_extended_request *req, struct passwd_request *out)
{
	struct ber_reader r, seq;
	memset(out, 0, sizeof(*out));
	if (!req->has_value)
		return LUMEN_OK;
	ber_reader_init(&r, req->value.ptr, req->value.len);
	if (ber_enter(&r, BER_TAG_SEQUENCE, &seq) != LUMEN_OK || !ber_reader_at_end(&r))
		return LUMEN_EMALFORMED;
	struct { ber_tag_t tag; bool *has; struct ber_view *v; } fields[] = {
		{ BER_TAG_CONTEXT(0), &out->has_identity, &out->identity },
		{ BER_TAG_CONTEXT(1), &out->has_old, &out->old_password },
		{ BER_TAG_CONTEXT(2), &out->has_new, &out->new_password },
	};
	for (size_t i = 0; i < 3 && !ber_reader_at_end(&seq); i++) {
		ber_tag_t tag;
		if (ber_peek_tag(&seq, &tag) != LUMEN_OK)
			return LUMEN_EMALFORMED;
		if (tag != fields[i].tag)
			continue;
		if (ber_read_octets(&seq, tag, fields[i].v) != LUMEN_OK)
			return LUMEN_EMALFORMED;
		*fields[i].has = true;
	}
	return ber_reader_at_end(&seq) ? LUMEN_OK : LUMEN_EMALFORMED;
}

/* A random password from the alphabet (rejection sampling: no bias). */
static int generate_password(char *out)
{
	size_t n = 0, alphabet = sizeof(generated_alphabet) - 1;
	while (n < GENERATED_LENGTH) {
		unsigned char bytes[32];
		if (RAND_bytes(bytes, sizeof(bytes)) != 1)
			return LUMEN_EIO;
		for (size_t i = 0; i < sizeof(bytes) && n < GENERATED_LENGTH; i++)
			if (bytes[i] < 256 - 256 % alphabet)
				out[n++] = generated_alphabet[bytes[i] % alphabet];
	}
	out[n] = '\0';
	return LUMEN_OK;
}

/* Everything the change is decided on. */
struct passwd_change {
	struct passwd_request req;
	struct ber_view requester_ndn;
	struct ber_view target_ndn;
	const struct server_database *db;
	bool is_root;
	const struct attribute_type *password_type;
	bool want_password_policy;
	struct ber_view verified;    /* the stored value the old password matched;
					ptr NULL: no old password given */
};

/* The target's identity: userIdentity, or the requester (the bound user,
 * or whom it proxies as). False: answered. */
static bool resolve_target(struct op_context *ctx, const struct op_target *t,
			   struct passwd_change *pc)
{
	if (op_requester(ctx, t, &pc->requester_ndn) != LUMEN_OK) {
		op_send_extended(ctx, LDAP_OTHER, "out of memory", NULL, NULL);
		return false;
	}
	if (!pc->req.has_identity && pc->requester_ndn.len == 0) {
		op_send_extended(ctx, LDAP_UNWILLING_TO_PERFORM,
				 "only authenticated users may change passwords", NULL, NULL);
		return false;
	}
	pc->target_ndn = pc->requester_ndn;
	if (pc->req.has_identity &&
	    server_normalize_dn(ctx->server, pc->req.identity, ctx->arena, &pc->target_ndn) !=
		    LUMEN_OK) {
		op_send_extended(ctx, LDAP_INVALID_DN_SYNTAX, "userIdentity is not a DN", NULL,
				 NULL);
		return false;
	}
	pc->db = server_find_database(ctx->server, pc->target_ndn);
	if (pc->db == NULL || pc->db->database == NULL) {
		op_send_extended(ctx, LDAP_NO_SUCH_OBJECT, NULL, NULL, NULL);
		return false;
	}
	if (op_refuse_replica_write(ctx, pc->db, (struct ber_view){ 0 }))
		return false;
	struct ber_view rootdn = pc->db->rootdn;
	pc->is_root = rootdn.ptr != NULL && pc->requester_ndn.len == rootdn.len &&
		      memcmp(pc->requester_ndn.ptr, rootdn.ptr, rootdn.len) == 0;
	if (rootdn.ptr != NULL && pc->target_ndn.len == rootdn.len &&
	    memcmp(pc->target_ndn.ptr, rootdn.ptr, rootdn.len) == 0) {
		op_send_extended(ctx, LDAP_UNWILLING_TO_PERFORM,
				 "the rootdn's password is set in the configuration (rootpw)",
				 NULL, NULL);
		return false;
	}
	return true;
}

/*
 * The old password against the stored values: LUMEN_OK with a copy of the
 * value it matched in pc->verified (the write checks it is still stored),
 * LUMEN_ENOTFOUND when none matches (or none is stored), LUMEN_ENOMEM.
 * Every value is tried, matched or not.
 */
static int old_password_matches(struct op_context *ctx, const struct entry *e,
				struct passwd_change *pc)
{
	const struct entry_attribute *a = entry_find_type(e, pc->password_type);
	const struct ber_view *matched = NULL;
	for (size_t i = 0; a != NULL && i < a->n_values; i++) {
		bool match = false;
		const struct ber_view *v = &a->values[i].value;
		if (password_check((const char *)v->ptr, v->len, pc->req.old_password.ptr,
				   pc->req.old_password.len, &match) == LUMEN_OK && match &&
		    matched == NULL)
			matched = v;
	}
	if (matched == NULL)
		return LUMEN_ENOTFOUND;
	/* one byte more: an empty value still has a copy to compare with */
	uint8_t *copy = arena_alloc(ctx->arena, matched->len + 1);
	if (copy == NULL)
		return LUMEN_ENOMEM;
	if (matched->len > 0)
		memcpy(copy, matched->ptr, matched->len);
	pc->verified = (struct ber_view){ copy, matched->len };
	return LUMEN_OK;
}

/* Non-root rules: write on userPassword; any old password given must match. */
static bool change_allowed(struct op_context *ctx, struct passwd_change *pc)
{
	struct entry *e = NULL;
	struct access_op a;
	bool allowed = false;
	int rc = access_fetch_copy(pc->db, ctx->arena, &ctx->op->abandoned, pc->target_ndn, &e);
	if (rc != LUMEN_OK) {
		op_send_extended(ctx, LDAP_OTHER, "cannot read the entry", NULL, NULL);
		return false;
	}
	access_op_init(&a, ctx->server, pc->db, pc->requester_ndn, pc->is_root, ctx->arena,
		       &ctx->op->abandoned);
	struct acl_target at;
	if (e != NULL)
		acl_target_init(&at, &a.policy, &a.subject, e);
	if (e == NULL || (!pc->is_root && !acl_target_allowed(&at, pc->password_type,
							       ACCESS_WRITE))) {
		bool disclose = e != NULL && acl_may_disclose(&at);
		op_send_extended(ctx, disclose ? LDAP_INSUFFICIENT_ACCESS_RIGHTS
					       : LDAP_NO_SUCH_OBJECT, NULL, NULL, NULL);
	} else if (pc->req.has_old && (rc = old_password_matches(ctx, e, pc)) != LUMEN_OK) {
		/* slapd's code and text: clients compare them */
		if (rc == LUMEN_ENOMEM)
			op_send_extended(ctx, LDAP_OTHER, "out of memory", NULL, NULL);
		else
			op_send_extended(ctx, LDAP_UNWILLING_TO_PERFORM,
					 "unwilling to verify old password", NULL, NULL);
	} else {
		allowed = true;
	}
	entry_free(e);
	return allowed;
}

/* Store the hashed value (replace). The backend's result code is kept. */
static int store_password(struct op_context *ctx, struct passwd_change *pc,
			  const char *hashed, struct ber_view cleartext, struct backend_op *bop)
{
	struct backend_password_change *given = arena_alloc(ctx->arena, sizeof(*given));
	if (given == NULL)
		return LUMEN_ENOMEM;
	*given = (struct backend_password_change){ pc->req.has_old, pc->req.old_password,
						   cleartext };
	struct ber_view value = { (const uint8_t *)hashed, strlen(hashed) };
	struct ldap_change change = {
		.operation = LDAP_MOD_REPLACE,
		.modification = { { (const uint8_t *)"userPassword", 12 }, &value, 1 },
	};
	bop->arena = ctx->arena;
	bop->requester_ndn = pc->requester_ndn;
	bop->is_root = pc->is_root;
	bop->abandoned = &ctx->op->abandoned;
	bop->want_password_policy = pc->want_password_policy;
	bop->password_change_only = conn_password_change_only(ctx->conn);
	bop->password_change = given;
	op_wait_off_worker(ctx, bop);
	struct access_op a;
	struct access_write again;
	access_op_init(&a, ctx->server, pc->db, pc->requester_ndn, pc->is_root, ctx->arena,
		       &ctx->op->abandoned);
	access_write_password(&again, &a, pc->db, &change, pc->password_type, pc->verified, bop);
	return database_modify(pc->db->database, bop, pc->target_ndn, &change, 1);
}

/* The response value: SEQUENCE { genPasswd [0] } when one was generated. */
static void answer(struct op_context *ctx, const char *generated, const struct backend_op *bop)
{
	if (generated == NULL) {
		op_send_extended_controls(ctx, LDAP_SUCCESS, NULL, NULL, NULL,
					  bop->response_controls, bop->n_response_controls);
		return;
	}
	struct ber_writer *w = ctx->scratch;
	ber_writer_reset(w);
	ber_begin(w, BER_TAG_SEQUENCE);
	ber_write_octets(w, BER_TAG_CONTEXT(0), generated, strlen(generated));
	ber_end(w);
	struct ber_view value = { NULL, 0 };
	if (ber_writer_error(w) == LUMEN_OK)
		value.ptr = arena_memdup(ctx->arena, w->buf, w->len);
	value.len = value.ptr != NULL ? w->len : 0;
	if (value.ptr == NULL)
		op_send_extended(ctx, LDAP_OTHER, "out of memory", NULL, NULL);
	else
		op_send_extended_controls(ctx, LDAP_SUCCESS, NULL, NULL, &value,
					  bop->response_controls, bop->n_response_controls);
}

void op_passwd(struct op_context *ctx, const struct ldap_extended_request *req)
{
	const struct config *cfg = ctx->server->config;
	struct passwd_change pc = { 0 };
	struct op_target t;
	char generated[GENERATED_LENGTH + 1], hashed[PASSWORD_HASH_MAX];
	unsigned needed = cfg->security.simple_bind > cfg->security.ssf ? cfg->security.simple_bind
									  : cfg->security.ssf;
	if (!op_require_ssf(ctx, needed, "a password change") || !op_parse_controls(ctx, &t))
		return;
	pc.want_password_policy = t.controls.password_policy;
	if (parse_request(req, &pc.req) != LUMEN_OK) {
		op_send_extended(ctx, LDAP_PROTOCOL_ERROR, "malformed Password Modify request",
				 NULL, NULL);
		return;
	}
	pc.password_type = schema_attribute_type(cfg->schema, "userPassword", 12);
	if (pc.password_type == NULL || !resolve_target(ctx, &t, &pc) || !change_allowed(ctx, &pc))
		return;
	struct ber_view pw = pc.req.new_password;
	bool generate = !pc.req.has_new || pw.len == 0;
	if (generate) {
		if (generate_password(generated) != LUMEN_OK) {
			op_send_extended(ctx, LDAP_OTHER, "no random bytes", NULL, NULL);
			return;
		}
		pw = (struct ber_view){ (const uint8_t *)generated, strlen(generated) };
	}
	int rc = password_hash(cfg->password_hash, pw.ptr, pw.len, hashed, sizeof(hashed));
	if (rc != LUMEN_OK) {
		op_send_extended(ctx, LDAP_UNWILLING_TO_PERFORM, "the password cannot be hashed",
				 NULL, NULL);
		return;
	}
	if (!op_commit(ctx)) {
		explicit_bzero(hashed, sizeof(hashed));
		explicit_bzero(generated, sizeof(generated));
		return;
	}
	struct backend_op bop = { 0 };
	rc = store_password(ctx, &pc, hashed, pw, &bop);
	explicit_bzero(hashed, sizeof(hashed));
	if (rc == LUMEN_ENOMEM && bop.result_code == LDAP_SUCCESS)
		bop = (struct backend_op){ .result_code = LDAP_OTHER, .diagnostic = "out of memory" };
	if (rc != LUMEN_OK || bop.result_code != LDAP_SUCCESS) {
		op_send_extended_controls(ctx, bop.result_code, bop.diagnostic, NULL, NULL,
					  bop.response_controls, bop.n_response_controls);
		return;
	}
	if (bop.password_change_done)
		conn_set_password_change_only(ctx->conn, false);
	log_printf(LOG_LEVEL_STATS, "conn=%llu op=%u PASSMOD id=\"%s\"%s",
		   (unsigned long long)conn_number(ctx->conn), ctx->op->number,
		   op_log_string(ctx, pc.target_ndn), generate ? " new" : "");
	answer(ctx, generate ? generated : NULL, &bop);
	explicit_bzero(generated, sizeof(generated));
}
