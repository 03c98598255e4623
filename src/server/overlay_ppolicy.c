/*
 * overlay_ppolicy.c — password policy (draft-behera-ldap-password-policy-10
 * as OpenLDAP 2.5's ppolicy overlay implements it, with its directives):
 * lockout after failed binds (and pwdMinDelay's growing waits), password
 * expiry with warnings, grace binds and pwdGraceExpiry, pwdMaxIdle, the
 * pwdStartTime/pwdEndTime window, must-change after an administrator's
 * reset (the connection restricted to the change: op_target_unrestricted
 * refuses the rest before access control, this overlay says when the
 * change is made), quality (pwdMinLength, pwdMaxLength), minimum age and
 * history of new passwords, and the Password Policy control on Bind, Add,
 * Modify and Password Modify.
 *
 * Directives (after `overlay ppolicy`):
 *   ppolicy_default DN        the pwdPolicy entry of users without a
 *                             pwdPolicySubentry (none: they have no policy)
 *   ppolicy_use_lockout       a locked account's control says accountLocked
 *                             (the result is invalidCredentials either way)
 *   ppolicy_hash_cleartext    a cleartext userPassword given in a Modify is
 *                             stored hashed with `password-hash`
 *   ppolicy_forward_updates   accepted; it matters only on a replica
 *
 * Where the work happens:
 *  - Bind (overlay.h, Bind): before the password check, whether the
 *    account may bind (validity window, pwdMinDelay wait, pwdMaxIdle,
 *    lock; else refused, at the pace of every failure, recording
 *    nothing); after it, the state: a failure adds pwdFailureTime and may
 *    lock (pwdAccountLockedTime) or make the account wait
 *    (pwdAccountTmpLockoutEnd), a success clears them, spends a grace bind
 *    or refuses an expired password, and warns. The state is written by an
 *    internal modify through the chain (group commit), not under a lock
 *    of its own; a success with no failure state writes nothing.
 *  - The policy a bind needs comes from a cache of parsed policies
 *    (ppolicy_cache.h), which the write hook and on_commit refresh when a
 *    pwdPolicy entry changes: a bind reads only its own entry.
 *  - Modify of userPassword, and the Password Modify extended operation's
 *    (the cleartexts come in backend_op.password_change): the checks
 *    before, which refuse with constraintViolation (or
 *    insufficientAccessRights / unwillingToPerform) and the control's
 *    error; then, in the write's transaction, pwdChangedTime, pwdHistory,
 *    pwdReset and the clearing of the failure state.
 *  - Adding or changing a pwdPolicy entry with a value the policy cannot
 *    use: constraintViolation naming the attribute.
 *
 * The rootdn is subject to none of the checks on a password change (as
 * OpenLDAP's), but its changes are recorded (history, pwdReset).
 */
#include "overlay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>

#include "controls.h"
#include "dn.h"
#include "ldap_result_codes.h"
#include "log.h"
#include "lumen_error.h"
#include "overlay_state.h"
#include "password.h"
#include "ppolicy.h"
#include "ppolicy_cache.h"

/* The types ppolicy reads and writes. */
enum ppolicy_attr {
	A_PASSWORD, A_SUBENTRY, A_FAILURE_TIME, A_LOCKED_TIME, A_CHANGED_TIME, A_HISTORY,
	A_RESET, A_GRACE_USE_TIME, A_START_TIME, A_END_TIME, A_TMP_LOCKOUT_END, A_LAST_SUCCESS,
	A_COUNT,
};

static const char *const attr_names[A_COUNT] = {
	"userPassword", "pwdPolicySubentry", "pwdFailureTime", "pwdAccountLockedTime",
	"pwdChangedTime", "pwdHistory", "pwdReset", "pwdGraceUseTime", "pwdStartTime",
	"pwdEndTime", "pwdAccountTmpLockoutEnd", "pwdLastSuccess",
};

struct ppolicy_overlay {
	const struct schema *schema;
	const struct attribute_type *types[A_COUNT];
	const struct object_class *policy_class;
	struct ber_view default_ndn;       /* empty: none */
	bool use_lockout, hash_cleartext;
	const char *password_hash;         /* the configured scheme (borrowed) */
	/* The database keeps the time of the last bind (`overlay lastbind`):
	 * its authTimestamp; NULL: pwdMaxIdle is not applied (OpenLDAP's
	 * `lastbind off`). */
	const struct attribute_type *last_bind;
	struct ppolicy_cache cache;        /* the policies binds read */
};

/* ------------------------------------------------------------- configure */

static int apply_line(void *state, const struct overlay_setup *setup,
		      const struct config_overlay_line *line, char *err, size_t errlen)
{
	static const char *const switches[] = {
		"ppolicy_use_lockout", "ppolicy_hash_cleartext", "ppolicy_forward_updates",
	};
	struct ppolicy_overlay *pp = state;
	bool *targets[] = { &pp->use_lockout, &pp->hash_cleartext, NULL };
	const char *name = line->words[0];
	if (strcasecmp(name, "ppolicy_default") == 0)
		return overlay_config_dn(setup, line, "ppolicy_default <DN>", &pp->default_ndn, err,
					 errlen);
	for (size_t i = 0; i < sizeof(switches) / sizeof(switches[0]); i++) {
		if (strcasecmp(name, switches[i]) != 0)
			continue;
		if (line->n_words != 1)
			return config_overlay_fail(line, err, errlen, "takes no argument");
		if (targets[i] != NULL)
			*targets[i] = true;
		return LUMEN_OK;
	}
	return config_overlay_unknown("ppolicy", line, err, errlen);
}

/* The schema's types and class, the defaults. */
static int ppolicy_prepare(void *state, const struct overlay_setup *setup, char *err,
			   size_t errlen)
{
	struct ppolicy_overlay *pp = state;
	if (ppolicy_cache_init(&pp->cache) != LUMEN_OK)
		return overlay_config_fail(&overlay_ppolicy, setup, err, errlen, "out of memory");
	pp->schema = setup->schema;
	pp->password_hash = setup->password_hash != NULL ? setup->password_hash : "{SSHA512}";
	for (size_t i = 0; i < A_COUNT; i++) {
		pp->types[i] = overlay_config_attribute(&overlay_ppolicy, setup, attr_names[i], err,
							errlen);
		if (pp->types[i] == NULL)
			return LUMEN_EMALFORMED;
	}
	for (size_t i = 0; i < setup->database->n_overlays; i++)
		if (strcasecmp(setup->database->overlays[i].name, "lastbind") == 0)
			pp->last_bind = schema_attribute_type(setup->schema, "authTimestamp", 13);
	pp->policy_class = schema_object_class(setup->schema, "pwdPolicy", 9);
	if (pp->policy_class == NULL)
		return overlay_config_fail(&overlay_ppolicy, setup, err, errlen,
					   "the schema has no pwdPolicy");
	return LUMEN_OK;
}

/* ------------------------------------------------------------ the policy */

static const struct entry_attribute *attr(const struct ppolicy_overlay *pp,
					  const struct entry *e, enum ppolicy_attr a)
{
	return entry_find_type(e, pp->types[a]);
}

static struct ber_view first_value(const struct ppolicy_overlay *pp, const struct entry *e,
				   enum ppolicy_attr a)
{
	const struct entry_attribute *at = attr(pp, e, a);
	return at != NULL ? at->values[0].value : (struct ber_view){ NULL, 0 };
}

/* The DN of e's policy: its pwdPolicySubentry, else the default. */
static struct ber_view policy_ndn(const struct ppolicy_overlay *pp, const struct entry *e)
{
	const struct entry_attribute *a = attr(pp, e, A_SUBENTRY);
	if (a != NULL && a->values[0].normalized.len > 0)
		return a->values[0].normalized;
	return pp->default_ndn;
}

struct policy_read {
	struct ppolicy *policy;
	bool found;
};

static int take_policy(struct policy_read *r, const struct entry *e)
{
	char why[160];
	int rc = ppolicy_parse(e, r->policy, why, sizeof(why));
	if (rc == LUMEN_OK)
		r->found = true;
	else
		log_printf(0, "ppolicy: \"%.*s\" is not a usable policy (%s): not applied",
			   (int)e->dn.len, (const char *)e->dn.ptr, why);
	return LUMEN_OK;
}

static int take_fetched(void *ctx, const struct entry *e, const struct backend_entry_info *info)
{
	(void)info;
	return take_policy(ctx, e);
}

static int take_in_txn(void *ctx, const struct entry *e)
{
	return take_policy(ctx, e);
}

/* The policy of e: cached, else read through the chain. False: none applies. */
static bool policy_of(struct ppolicy_overlay *pp, struct overlay_request *req,
		      const struct entry *e, struct ppolicy *out)
{
	struct ber_view ndn = policy_ndn(pp, e);
	struct policy_read r = { out, false };
	struct backend_op bop = { .arena = req->op->arena, .is_root = true };
	uint64_t generation;
	if (ndn.len == 0)
		return false;
	if (ppolicy_cache_get(&pp->cache, ndn, out, &r.found, &generation))
		return r.found;
	int rc = database_fetch(req->database, &bop, ndn, take_fetched, &r);
	/* A failed read is not an answer to keep; a missing entry is. */
	if (rc == LUMEN_OK || bop.result_code == LDAP_NO_SUCH_OBJECT)
		ppolicy_cache_put(&pp->cache, ndn, generation, out, r.found);
	return r.found;
}

/* The Password Policy response control, when the client asked for it. */
static void respond(struct backend_op *op, enum password_policy_warning warning, long value,
		    enum password_policy_error error)
{
	struct password_policy_response r = { warning, (uint32_t)value, error };
	struct ldap_control control;
	if (!op->want_password_policy)
		return;
	if (controls_password_policy_response(&r, op->arena, &control) != LUMEN_OK ||
	    overlay_add_response_control(op, &control) != LUMEN_OK)
		log_printf(0, "ppolicy: out of memory for the response control");
}

static long microseconds(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (long)tv.tv_usec;
}

/* ------------------------------------------------------------------ bind */

static bool is_locked(const struct ppolicy_overlay *pp, const struct ppolicy *p,
		      const struct entry *e, time_t now)
{
	return ppolicy_locked(p, first_value(pp, e, A_LOCKED_TIME), now);
}

/* When the account was last used: its last bind, else its password change. */
static time_t last_use(const struct ppolicy_overlay *pp, const struct entry *e)
{
	const struct entry_attribute *a = attr(pp, e, A_LAST_SUCCESS);
	time_t then;
	if (a == NULL)
		a = entry_find_type(e, pp->last_bind);
	if (a == NULL)
		a = attr(pp, e, A_CHANGED_TIME);
	return a != NULL && overlay_parse_time(a->values[0].value, &then) ? then : (time_t)-1;
}

/*
 * May the account not bind at all at now? OpenLDAP's order: outside its
 * pwdStartTime..pwdEndTime; then, with pwdLockout only, a pwdMinDelay
 * wait, pwdMaxIdle, and pwdAccountLockedTime.
 */
static bool account_unusable(const struct ppolicy_overlay *pp, const struct ppolicy *p,
			     const struct entry *e, time_t now)
{
	time_t until;
	if (ppolicy_outside_validity(first_value(pp, e, A_START_TIME),
				     first_value(pp, e, A_END_TIME), now))
		return true;
	if (!p->lockout)
		return false;
	struct ber_view wait = first_value(pp, e, A_TMP_LOCKOUT_END);
	if (wait.len > 0 && (!overlay_parse_time(wait, &until) || now < until))
		return true;
	if (pp->last_bind != NULL && ppolicy_idle(p, last_use(pp, e), now))
		return true;
	return is_locked(pp, p, e, now);
}

static void ppolicy_bind_before(void *state, struct overlay_request *req)
{
	struct ppolicy_overlay *pp = state;
	struct overlay_bind *b = req->u.bind;
	struct ppolicy p;
	if (b->entry != NULL && policy_of(pp, req, b->entry, &p) &&
	    account_unusable(pp, &p, b->entry, time(NULL)))
		b->refused = true;
}

/* Failure times to drop so that one more stays within max_recorded_failure. */
static size_t oldest_to_drop(const struct ppolicy *p, size_t n)
{
	return n + 1 > (size_t)p->max_recorded_failure ? n + 1 - (size_t)p->max_recorded_failure
						       : 0;
}

static void record_failure(const struct ppolicy_overlay *pp, const struct ppolicy *p,
			   struct overlay_state_write *w, const struct entry *e, time_t now)
{
	const struct entry_attribute *a = attr(pp, e, A_FAILURE_TIME);
	size_t n = a != NULL ? a->n_values : 0, counted = 0;
	struct ber_view *times = arena_calloc(w->req->op->arena, n + 1, sizeof(*times));
	if (times == NULL) {
		w->rc = LUMEN_ENOMEM;
		return;
	}
	for (size_t i = 0; i < n; i++)
		times[i] = a->values[i].value;
	counted = ppolicy_counted_failures(p, times, n, now);
	size_t drop = oldest_to_drop(p, n);
	if (drop > 0)   /* values are kept in the order they were added */
		overlay_state_change(w, LDAP_MOD_DELETE, pp->types[A_FAILURE_TIME], times, drop);
	times[n] = overlay_state_time(w, now, microseconds());
	overlay_state_change(w, LDAP_MOD_ADD, pp->types[A_FAILURE_TIME], &times[n], 1);
	if (p->lockout && p->max_failure > 0 && (long)counted + 1 >= p->max_failure &&
	    !is_locked(pp, p, e, now)) {
		struct ber_view locked = { (const uint8_t *)PPOLICY_LOCKED_FOREVER,
					   strlen(PPOLICY_LOCKED_FOREVER) };
		if (p->lockout_duration > 0)
			locked = overlay_state_time(w, now, -1);
		overlay_state_replace(w, pp->types[A_LOCKED_TIME], &locked, 1);
	} else if (p->min_delay > 0) {
		struct ber_view until =
			overlay_state_time(w, now + ppolicy_failure_delay(p, counted), -1);
		overlay_state_replace(w, pp->types[A_TMP_LOCKOUT_END], &until, 1);
	}
}

/* A password past pwdMaxAge: a grace bind, or the refusal. */
static void expired(const struct ppolicy_overlay *pp, const struct ppolicy *p,
		    struct overlay_state_write *w, struct overlay_request *req, time_t now,
		    long age)
{
	const struct entry_attribute *a = attr(pp, req->u.bind->entry, A_GRACE_USE_TIME);
	long used = a != NULL ? (long)a->n_values : 0;
	if (ppolicy_grace_left(p, used, age - p->max_age) == 0) {
		req->u.bind->success = false;
		respond(req->op, PASSWORD_POLICY_NO_WARNING, 0, PASSWORD_POLICY_EXPIRED);
		return;
	}
	struct ber_view t = overlay_state_time(w, now, microseconds());
	overlay_state_change(w, LDAP_MOD_ADD, pp->types[A_GRACE_USE_TIME], &t, 1);
	respond(req->op, PASSWORD_POLICY_GRACE_REMAINING, p->grace_authn_limit - used - 1,
		PASSWORD_POLICY_NO_ERROR);
}

/* A successful bind: clear the failures, then reset, expiry, warning. */
static void bind_succeeded(const struct ppolicy_overlay *pp, const struct ppolicy *p,
			   struct overlay_state_write *w, struct overlay_request *req, time_t now)
{
	const struct entry *e = req->u.bind->entry;
	time_t changed;
	if (attr(pp, e, A_FAILURE_TIME) != NULL)
		overlay_state_replace(w, pp->types[A_FAILURE_TIME], NULL, 0);
	if (attr(pp, e, A_LOCKED_TIME) != NULL)
		overlay_state_replace(w, pp->types[A_LOCKED_TIME], NULL, 0);
	if (p->must_change && ber_view_eq_str(first_value(pp, e, A_RESET), "TRUE")) {
		req->u.bind->password_change_only = true;
		respond(req->op, PASSWORD_POLICY_NO_WARNING, 0, PASSWORD_POLICY_CHANGE_AFTER_RESET);
		return;
	}
	long age = -1;
	if (p->max_age > 0 && overlay_parse_time(first_value(pp, e, A_CHANGED_TIME), &changed))
		age = (long)(now - changed);
	if (age >= p->max_age && age >= 0)
		expired(pp, p, w, req, now, age);
	else if (age >= 0 && p->expire_warning > 0 && p->max_age - age < p->expire_warning)
		respond(req->op, PASSWORD_POLICY_TIME_BEFORE_EXPIRATION, p->max_age - age,
			PASSWORD_POLICY_NO_ERROR);
	else
		respond(req->op, PASSWORD_POLICY_NO_WARNING, 0, PASSWORD_POLICY_NO_ERROR);
}

static void ppolicy_bind_after(void *state, struct overlay_request *req)
{
	struct ppolicy_overlay *pp = state;
	struct overlay_bind *b = req->u.bind;
	struct ppolicy p;
	struct overlay_state_write w;
	time_t now = time(NULL);
	if (b->entry == NULL || !policy_of(pp, req, b->entry, &p))
		return;
	overlay_state_begin(&w, req);
	if (b->refused) {
		/* As OpenLDAP: an account that may not bind records nothing. */
		respond(req->op, PASSWORD_POLICY_NO_WARNING, 0,
			pp->use_lockout ? PASSWORD_POLICY_ACCOUNT_LOCKED : PASSWORD_POLICY_NO_ERROR);
	} else if (b->success) {
		bind_succeeded(pp, &p, &w, req, now);
	} else {
		bool locked = is_locked(pp, &p, b->entry, now);
		record_failure(pp, &p, &w, b->entry, now);
		respond(req->op, PASSWORD_POLICY_NO_WARNING, 0,
			locked && pp->use_lockout ? PASSWORD_POLICY_ACCOUNT_LOCKED
						  : PASSWORD_POLICY_NO_ERROR);
	}
	if (overlay_state_commit(&w) != LUMEN_OK)
		log_printf(0, "ppolicy: cannot store the bind state of \"%.*s\": %s",
			   (int)b->dn.len, (const char *)b->dn.ptr, w.diagnostic);
}

/* ---------------------------------------------------------------- modify */

/* What a Modify (or Password Modify) does to userPassword. */
struct password_change {
	struct ber_view new_password;
	struct ber_view old_password;
	bool has_new, has_old, several;
	bool cleartext_given;              /* Password Modify: new_password is cleartext */
	long new_change;                   /* index of the change carrying it; -1: none */
};

/* The refusal of a password change (result code, text, control error). */
struct refusal {
	int code;
	const char *text;
	enum password_policy_error error;
};

static bool names_password(const struct ppolicy_overlay *pp, struct ber_view type)
{
	struct attribute_description ad;
	return attribute_description_parse(pp->schema, (const char *)type.ptr, type.len, &ad) ==
		       LUMEN_OK && ad.type == pp->types[A_PASSWORD];
}

/* False when the operation does not touch userPassword. */
static bool find_change(const struct ppolicy_overlay *pp, const struct overlay_request *req,
			struct password_change *pc)
{
	const struct backend_password_change *given = req->op->password_change;
	bool touched = false;
	memset(pc, 0, sizeof(*pc));
	pc->new_change = -1;
	for (size_t i = 0; i < req->u.modify.n; i++) {
		const struct ldap_change *c = &req->u.modify.changes[i];
		const struct ldap_attribute *m = &c->modification;
		if (!names_password(pp, m->type))
			continue;
		touched = true;
		if (c->operation == LDAP_MOD_DELETE && m->n_values > 0) {
			pc->has_old = true;
			pc->old_password = m->values[0];
		} else if (c->operation != LDAP_MOD_DELETE && m->n_values > 0) {
			pc->has_new = true;
			pc->several = pc->several || m->n_values > 1;
			pc->new_password = m->values[0];
			pc->new_change = (long)i;
		}
	}
	if (given != NULL) {
		pc->has_old = given->has_old;
		pc->old_password = given->old_password;
		pc->new_password = given->new_password;
		pc->cleartext_given = pc->has_new = true;
	}
	return touched;
}

static bool is_hashed(struct ber_view v)
{
	char scheme[32];
	const uint8_t *end = v.len > 2 && v.ptr[0] == '{' ? memchr(v.ptr, '}', v.len) : NULL;
	size_t n = end != NULL ? (size_t)(end - v.ptr) - 1 : 0;
	if (n == 0 || n >= sizeof(scheme))
		return false;
	memcpy(scheme, v.ptr + 1, n);
	scheme[n] = '\0';
	return password_scheme_known(scheme);
}

static bool matches(struct ber_view stored, struct ber_view given)
{
	bool match = false;
	return password_check((const char *)stored.ptr, stored.len, given.ptr, given.len,
			      &match) == LUMEN_OK && match;
}

/* pwdHistory value: "time#syntaxOID#length#value"; the stored value. */
static bool history_value(struct ber_view h, struct ber_view *out)
{
	const uint8_t *p = h.ptr, *end = h.ptr + h.len;
	for (int hashes = 0; hashes < 2; hashes++) {
		p = memchr(p, '#', (size_t)(end - p));
		if (p == NULL)
			return false;
		p++;
	}
	char *after;
	unsigned long len = strtoul((const char *)p, &after, 10);
	if ((const uint8_t *)after >= end || *after != '#' ||
	    len != (size_t)(end - (const uint8_t *)after - 1))
		return false;
	*out = (struct ber_view){ (const uint8_t *)after + 1, len };
	return true;
}

static bool in_history(const struct ppolicy_overlay *pp, const struct entry *e,
		       struct ber_view password, const char **text)
{
	const struct entry_attribute *cur = attr(pp, e, A_PASSWORD), *h = attr(pp, e, A_HISTORY);
	for (size_t i = 0; cur != NULL && i < cur->n_values; i++)
		if (matches(cur->values[i].value, password)) {
			*text = "Password is not being changed from existing value";
			return true;
		}
	for (size_t i = 0; h != NULL && i < h->n_values; i++) {
		struct ber_view old;
		if (history_value(h->values[i].value, &old) && matches(old, password)) {
			*text = "Password is in history of old passwords";
			return true;
		}
	}
	return false;
}

static bool refuse(struct refusal *r, int code, const char *text,
		   enum password_policy_error error)
{
	*r = (struct refusal){ code, text, error };
	return false;
}

static enum password_policy_error quality_error(enum ppolicy_quality q)
{
	switch (q) {
	case PPOLICY_QUALITY_TOO_SHORT:
		return PASSWORD_POLICY_TOO_SHORT;
	case PPOLICY_QUALITY_TOO_LONG:
		return PASSWORD_POLICY_TOO_LONG;
	default:
		return PASSWORD_POLICY_INSUFFICIENT_QUALITY;
	}
}

/* A user's own change against the policy (OpenLDAP's order of checks). */
static bool change_allowed(const struct ppolicy_overlay *pp, const struct ppolicy *p,
			   const struct entry *e, const struct password_change *pc,
			   bool self, struct refusal *r)
{
	time_t now = time(NULL), changed;
	const char *text;
	if (self && !p->allow_user_change)
		return refuse(r, LDAP_INSUFFICIENT_ACCESS_RIGHTS,
			      "User alteration of password is not allowed",
			      PASSWORD_POLICY_MOD_NOT_ALLOWED);
	if (p->safe_modify && !pc->has_old)   /* slapd's code, over Modify and the exop */
		return refuse(r, LDAP_INSUFFICIENT_ACCESS_RIGHTS,
			      "Must supply old password to be changed as well as new one",
			      PASSWORD_POLICY_MUST_SUPPLY_OLD);
	if (pc->several)
		return refuse(r, LDAP_CONSTRAINT_VIOLATION,
			      "Password policy only allows one password value",
			      PASSWORD_POLICY_NO_ERROR);
	if (p->min_age > 0 && overlay_parse_time(first_value(pp, e, A_CHANGED_TIME), &changed) &&
	    now < changed + p->min_age)
		return refuse(r, LDAP_CONSTRAINT_VIOLATION, "Password is too young to change",
			      PASSWORD_POLICY_TOO_YOUNG);
	bool hashed = !pc->cleartext_given && is_hashed(pc->new_password);
	enum ppolicy_quality q = ppolicy_check_quality(p, pc->new_password, hashed);
	if (q != PPOLICY_QUALITY_OK)
		return refuse(r, LDAP_CONSTRAINT_VIOLATION, "Password fails quality checking policy",
			      quality_error(q));
	if (p->in_history > 0 && !hashed && in_history(pp, e, pc->new_password, &text))
		return refuse(r, LDAP_CONSTRAINT_VIOLATION, text, PASSWORD_POLICY_IN_HISTORY);
	return true;
}

/* What the check of a password change learns from the target entry. */
struct modify_check {
	struct ppolicy_overlay *pp;
	struct overlay_request *req;
	const struct password_change *pc;
	bool refused;
	struct refusal refusal;
};

static int check_target(void *ctx, const struct entry *e, const struct backend_entry_info *info)
{
	struct modify_check *mc = ctx;
	struct backend_op *op = mc->req->op;
	struct ppolicy p;
	(void)info;
	if (op->is_root || !policy_of(mc->pp, mc->req, e, &p))
		return LUMEN_OK;
	bool self = op->requester_ndn.len == e->ndn.len &&
		    memcmp(op->requester_ndn.ptr, e->ndn.ptr, e->ndn.len) == 0;
	mc->refused = !change_allowed(mc->pp, &p, e, mc->pc, self, &mc->refusal);
	return LUMEN_OK;
}

/* ppolicy_hash_cleartext: the new value of a Modify, hashed. */
static int hash_new_value(const struct ppolicy_overlay *pp, struct overlay_request *req,
			  const struct password_change *pc)
{
	size_t n = req->u.modify.n;
	struct arena *arena = req->op->arena;
	char hashed[PASSWORD_HASH_MAX];
	if (pc->new_change < 0 || pc->cleartext_given || is_hashed(pc->new_password))
		return LUMEN_OK;
	int rc = password_hash(pp->password_hash, pc->new_password.ptr, pc->new_password.len,
			       hashed, sizeof(hashed));
	if (rc != LUMEN_OK)
		return rc;
	struct ldap_change *copy = arena_calloc(arena, n, sizeof(*copy));
	struct ber_view *value = arena_alloc(arena, sizeof(*value));
	size_t len = strlen(hashed);
	uint8_t *bytes = arena_memdup(arena, hashed, len);
	explicit_bzero(hashed, sizeof(hashed));
	if (copy == NULL || value == NULL || bytes == NULL)
		return LUMEN_ENOMEM;
	*value = (struct ber_view){ bytes, len };
	memcpy(copy, req->u.modify.changes, n * sizeof(*copy));
	copy[pc->new_change].modification.values = value;
	copy[pc->new_change].modification.n_values = 1;
	req->u.modify.changes = copy;
	return LUMEN_OK;
}

static int answer(struct overlay_request *req, int code, const char *text,
		  enum password_policy_error error)
{
	req->op->result_code = code;
	req->op->diagnostic = text;
	respond(req->op, PASSWORD_POLICY_NO_WARNING, 0, error);
	return OVERLAY_ANSWERED;
}

static int ppolicy_before(void *state, struct overlay_request *req)
{
	struct ppolicy_overlay *pp = state;
	struct password_change pc;
	if (req->operation != OVERLAY_MODIFY || req->op->from_tool || !find_change(pp, req, &pc))
		return OVERLAY_CONTINUE;
	struct modify_check mc = { pp, req, &pc, false, { 0 } };
	struct backend_op bop = { .arena = req->op->arena, .is_root = true };
	int rc = pc.has_new ? database_fetch(req->database, &bop, req->ndn, check_target, &mc)
			    : LUMEN_OK;
	if (rc != LUMEN_OK && bop.result_code != LDAP_NO_SUCH_OBJECT)
		return answer(req, LDAP_OTHER, "cannot read the entry", PASSWORD_POLICY_NO_ERROR);
	if (mc.refused)
		return answer(req, mc.refusal.code, mc.refusal.text, mc.refusal.error);
	if (pp->hash_cleartext && hash_new_value(pp, req, &pc) != LUMEN_OK)
		return answer(req, LDAP_OTHER, "Password hashing failed", PASSWORD_POLICY_NO_ERROR);
	return OVERLAY_CONTINUE;
}

/* ------------------------------------------------- in the write's transaction */

/* What a stored password change leaves in the entry. */
struct bookkeeping {
	const struct ppolicy_overlay *pp;
	const struct ppolicy *policy;
	const struct entry *before;
	bool reset;                        /* an administrator set it: pwdReset */
	struct arena *arena;
	time_t now;
};

static int set_values(struct entry *e, const struct attribute_type *type,
		      const struct ber_view *values, size_t n)
{
	struct attribute_description ad = { type, { NULL, 0 } };
	return entry_replace_values(e, &ad, values, n, NULL);
}

static struct ber_view arena_text(struct arena *arena, const char *text, size_t len)
{
	uint8_t *copy = arena_memdup(arena, text, len);
	return (struct ber_view){ copy, copy != NULL ? len : 0 };
}

/* pwdHistory: the old values appended, the oldest beyond pwdInHistory gone. */
static int add_history(const struct bookkeeping *bk, struct entry *e, struct ber_view changed)
{
	const struct entry_attribute *old = attr(bk->pp, bk->before, A_PASSWORD);
	const struct entry_attribute *h = attr(bk->pp, e, A_HISTORY);
	size_t n_old = old != NULL ? old->n_values : 0, n_h = h != NULL ? h->n_values : 0;
	struct ber_view *all = arena_calloc(bk->arena, n_h + n_old + 1, sizeof(*all));
	if (all == NULL)
		return LUMEN_ENOMEM;
	for (size_t i = 0; i < n_h; i++)
		all[i] = h->values[i].value;
	for (size_t i = 0; i < n_old; i++) {
		struct ber_view v = old->values[i].value;
		size_t len = changed.len + 64 + v.len;
		char *text = arena_alloc(bk->arena, len);
		if (text == NULL)
			return LUMEN_ENOMEM;
		int head = snprintf(text, len, "%.*s#1.3.6.1.4.1.1466.115.121.1.40#%zu#",
				    (int)changed.len, (const char *)changed.ptr, v.len);
		memcpy(text + head, v.ptr, v.len);
		all[n_h + i] = (struct ber_view){ (const uint8_t *)text, (size_t)head + v.len };
	}
	size_t n = n_h + n_old, keep = (size_t)bk->policy->in_history;
	size_t skip = n > keep ? n - keep : 0;
	return set_values(e, bk->pp->types[A_HISTORY], all + skip, n - skip);
}

static int bookkeep(void *ctx, struct entry *e)
{
	const struct bookkeeping *bk = ctx;
	const struct ppolicy_overlay *pp = bk->pp;
	char text[OVERLAY_TIME_MAX];
	struct ber_view now = arena_text(bk->arena, text, overlay_format_time(bk->now, -1, text));
	struct ber_view yes = { (const uint8_t *)"TRUE", 4 };
	if (now.ptr == NULL)
		return LUMEN_ENOMEM;
	int rc = set_values(e, pp->types[A_CHANGED_TIME], &now, 1);
	if (rc == LUMEN_OK && bk->policy->in_history > 0)
		rc = add_history(bk, e, now);
	if (rc == LUMEN_OK)
		rc = set_values(e, pp->types[A_FAILURE_TIME], NULL, 0);
	if (rc == LUMEN_OK)
		rc = set_values(e, pp->types[A_GRACE_USE_TIME], NULL, 0);
	if (rc == LUMEN_OK)
		rc = set_values(e, pp->types[A_RESET], &yes, bk->reset ? 1 : 0);
	return rc;
}

static bool same_values(const struct entry_attribute *a, const struct entry_attribute *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	if (a->n_values != b->n_values)
		return false;
	for (size_t i = 0; i < a->n_values; i++)
		if (a->values[i].value.len != b->values[i].value.len ||
		    memcmp(a->values[i].value.ptr, b->values[i].value.ptr, a->values[i].value.len))
			return false;
	return true;
}

/* A pwdPolicy entry must hold a policy ppolicy can apply. */
static int check_policy_entry(struct backend_op *op, const struct entry *e)
{
	struct ppolicy p;
	char why[160];
	if (ppolicy_parse(e, &p, why, sizeof(why)) == LUMEN_OK)
		return LUMEN_OK;
	op->result_code = LDAP_CONSTRAINT_VIOLATION;
	op->diagnostic = arena_strndup(op->arena, why, strlen(why));
	return LUMEN_EINVAL;
}

static bool is_policy(const struct ppolicy_overlay *pp, const struct entry *e)
{
	return e != NULL && entry_is_instance_of(e, pp->policy_class);
}

static int ppolicy_on_write(void *state, struct database_txn *txn,
			    const struct database_txn_ops *ops, struct backend_op *op,
			    const struct database_write *w)
{
	struct ppolicy_overlay *pp = state;
	struct ppolicy p;
	struct policy_read r = { &p, false };
	if (is_policy(pp, w->before) || is_policy(pp, w->after))
		ppolicy_cache_changing(&pp->cache);
	if (w->after != NULL && w->kind != DATABASE_WRITE_DELETE && !op->from_tool &&
	    entry_is_instance_of(w->after, pp->policy_class))
		return check_policy_entry(op, w->after);
	if (w->kind != DATABASE_WRITE_MODIFY || w->depth > 0 || op->from_tool ||
	    same_values(attr(pp, w->before, A_PASSWORD), attr(pp, w->after, A_PASSWORD)))
		return LUMEN_OK;
	struct ber_view ndn = policy_ndn(pp, w->after);
	int rc = ndn.len > 0 ? ops->fetch(txn, ndn, take_in_txn, &r) : LUMEN_OK;
	if (rc == LUMEN_ENOTFOUND || !r.found)
		return rc == LUMEN_ENOTFOUND ? LUMEN_OK : rc;
	bool self = op->requester_ndn.len == w->after->ndn.len &&
		    memcmp(op->requester_ndn.ptr, w->after->ndn.ptr, w->after->ndn.len) == 0;
	struct bookkeeping bk = { pp, &p, w->before, p.must_change && !self, op->arena,
				  time(NULL) };
	return ops->edit(txn, w->after->ndn, (struct ber_view){ NULL, 0 }, bookkeep, &bk);
}

/* A restricted connection's password change went through: it is free. */
static void ppolicy_after(void *state, struct overlay_request *req)
{
	struct ppolicy_overlay *pp = state;
	struct password_change pc;
	if (req->operation == OVERLAY_MODIFY && req->op->password_change_only &&
	    req->rc == LUMEN_OK && req->op->result_code == LDAP_SUCCESS &&
	    find_change(pp, req, &pc) && pc.has_new)
		req->op->password_change_done = true;
}

/* A write that changed a pwdPolicy entry has committed: forget the old. */
static void ppolicy_on_commit(void *state, struct backend_op *op,
			      const struct database_change *changes, size_t n)
{
	struct ppolicy_overlay *pp = state;
	(void)op;
	(void)changes;
	(void)n;
	ppolicy_cache_committed(&pp->cache);
}

static void ppolicy_destroy(void *state)
{
	struct ppolicy_overlay *pp = state;
	if (pp != NULL)
		ppolicy_cache_destroy(&pp->cache);
	free(pp);
}

const struct overlay_type overlay_ppolicy = {
	.name = "ppolicy",
	.steps = { .state_size = sizeof(struct ppolicy_overlay), .prepare = ppolicy_prepare,
		    .apply = apply_line },
	.destroy = ppolicy_destroy,
	.before = ppolicy_before,
	.after = ppolicy_after,
	.on_write = ppolicy_on_write,
	.on_commit = ppolicy_on_commit,
	.bind_before = ppolicy_bind_before,
	.bind_after = ppolicy_bind_after,
};
