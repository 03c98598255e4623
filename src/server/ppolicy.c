/*
 * ppolicy.c — pwdPolicy entries and the decisions made from them
 * (ppolicy.h).
 */
#include "ppolicy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lumen_error.h"
#include "overlay_state.h"

struct number_field {
	const char *name;
	size_t offset;
	long max;
};

#define FIELD(n, m, max) { n, offsetof(struct ppolicy, m), max }
static const struct number_field numbers[] = {
	FIELD("pwdMinAge", min_age, PPOLICY_MAX_SECONDS),
	FIELD("pwdMaxAge", max_age, PPOLICY_MAX_SECONDS),
	FIELD("pwdInHistory", in_history, PPOLICY_MAX_COUNT),
	FIELD("pwdCheckQuality", check_quality, 2),
	FIELD("pwdMinLength", min_length, PPOLICY_MAX_COUNT),
	FIELD("pwdExpireWarning", expire_warning, PPOLICY_MAX_SECONDS),
	FIELD("pwdGraceAuthNLimit", grace_authn_limit, PPOLICY_MAX_COUNT),
	FIELD("pwdLockoutDuration", lockout_duration, PPOLICY_MAX_SECONDS),
	FIELD("pwdMaxFailure", max_failure, PPOLICY_MAX_COUNT),
	FIELD("pwdFailureCountInterval", failure_count_interval, PPOLICY_MAX_SECONDS),
	FIELD("pwdMaxRecordedFailure", max_recorded_failure, PPOLICY_MAX_COUNT),
	FIELD("pwdMaxLength", max_length, PPOLICY_MAX_COUNT),
	FIELD("pwdGraceExpiry", grace_expiry, PPOLICY_MAX_SECONDS),
	FIELD("pwdMinDelay", min_delay, PPOLICY_MAX_SECONDS),
	FIELD("pwdMaxDelay", max_delay, PPOLICY_MAX_SECONDS),
	FIELD("pwdMaxIdle", max_idle, PPOLICY_MAX_SECONDS),
};

struct flag_field {
	const char *name;
	size_t offset;
};

static const struct flag_field flags[] = {
	{ "pwdLockout", offsetof(struct ppolicy, lockout) },
	{ "pwdMustChange", offsetof(struct ppolicy, must_change) },
	{ "pwdAllowUserChange", offsetof(struct ppolicy, allow_user_change) },
	{ "pwdSafeModify", offsetof(struct ppolicy, safe_modify) },
};

static const struct entry_attribute *find(const struct entry *e, const char *name)
{
	const struct attribute_type *t = schema_attribute_type(e->schema, name, strlen(name));
	return t != NULL ? entry_find_type(e, t) : NULL;
}

static int bad(char *why, size_t whylen, const char *name, const char *problem)
{
	snprintf(why, whylen, "%s: %s", name, problem);
	return LUMEN_ESCHEMA;
}

static int parse_number(const struct entry *e, const struct number_field *f, struct ppolicy *p,
			char *why, size_t whylen)
{
	const struct entry_attribute *a = find(e, f->name);
	char text[24];
	if (a == NULL)
		return LUMEN_OK;
	struct ber_view v = a->values[0].value;
	if (v.len == 0 || v.len >= sizeof(text))
		return bad(why, whylen, f->name, "not a number");
	memcpy(text, v.ptr, v.len);
	text[v.len] = '\0';
	char *end;
	long n = strtol(text, &end, 10);
	if (*end != '\0')
		return bad(why, whylen, f->name, "not a number");
	if (n < 0 || n > f->max) {
		snprintf(why, whylen, "%s: %ld is out of range (0..%ld)", f->name, n, f->max);
		return LUMEN_ESCHEMA;
	}
	*(long *)((char *)p + f->offset) = n;
	return LUMEN_OK;
}

static int parse_flag(const struct entry *e, const struct flag_field *f, struct ppolicy *p,
		      char *why, size_t whylen)
{
	const struct entry_attribute *a = find(e, f->name);
	if (a == NULL)
		return LUMEN_OK;
	bool *out = (bool *)((char *)p + f->offset);
	if (ber_view_eq_str(a->values[0].value, "TRUE"))
		*out = true;
	else if (ber_view_eq_str(a->values[0].value, "FALSE"))
		*out = false;
	else
		return bad(why, whylen, f->name, "not TRUE or FALSE");
	return LUMEN_OK;
}

/* pwdAttribute: userPassword, by name or OID. */
static int parse_attribute(const struct entry *e, char *why, size_t whylen)
{
	const struct entry_attribute *a = find(e, "pwdAttribute");
	const struct attribute_type *user_password =
		schema_attribute_type(e->schema, "userPassword", 12);
	if (a == NULL)
		return bad(why, whylen, "pwdAttribute", "missing");
	for (size_t i = 0; i < a->n_values; i++) {
		struct ber_view v = a->values[i].value;
		if (schema_attribute_type(e->schema, (const char *)v.ptr, v.len) != user_password)
			return bad(why, whylen, "pwdAttribute", "only userPassword is supported");
	}
	return LUMEN_OK;
}

int ppolicy_parse(const struct entry *e, struct ppolicy *out, char *why, size_t whylen)
{
	const struct object_class *oc = schema_object_class(e->schema, "pwdPolicy", 9);
	memset(out, 0, sizeof(*out));
	out->allow_user_change = true;
	if (oc == NULL || !entry_is_instance_of(e, oc)) {
		snprintf(why, whylen, "not a pwdPolicy entry");
		return LUMEN_ENOTFOUND;
	}
	int rc = parse_attribute(e, why, whylen);
	for (size_t i = 0; rc == LUMEN_OK && i < sizeof(numbers) / sizeof(numbers[0]); i++)
		rc = parse_number(e, &numbers[i], out, why, whylen);
	for (size_t i = 0; rc == LUMEN_OK && i < sizeof(flags) / sizeof(flags[0]); i++)
		rc = parse_flag(e, &flags[i], out, why, whylen);
	if (rc == LUMEN_OK && out->max_length > 0 && out->max_length < out->min_length)
		rc = bad(why, whylen, "pwdMaxLength", "less than pwdMinLength");
	if (rc == LUMEN_OK && out->max_delay > 0 && out->max_delay < out->min_delay)
		rc = bad(why, whylen, "pwdMaxDelay", "less than pwdMinDelay");
	if (out->max_delay == 0)
		out->max_delay = out->min_delay;
	/* OpenLDAP: at least pwdMaxFailure failures are kept, else 5 */
	if (out->max_recorded_failure < out->max_failure)
		out->max_recorded_failure = out->max_failure;
	if (out->max_recorded_failure == 0)
		out->max_recorded_failure = PPOLICY_DEFAULT_MAX_RECORDED;
	return rc;
}

bool ppolicy_locked(const struct ppolicy *p, struct ber_view locked_time, time_t now)
{
	time_t then;
	if (locked_time.len == 0)
		return false;
	if (ber_view_eq_str(locked_time, PPOLICY_LOCKED_FOREVER) || p->lockout_duration == 0)
		return true;
	if (!overlay_parse_time(locked_time, &then))
		return false;
	return now < then + p->lockout_duration;
}

/* A bound of the window: past (start) or not yet come (end). */
static bool closed_by(struct ber_view v, time_t now, bool is_end)
{
	time_t then;
	if (v.len == 0)
		return false;
	if (!overlay_parse_time(v, &then))
		return true;
	return is_end ? then <= now : now < then;
}

bool ppolicy_outside_validity(struct ber_view start, struct ber_view end, time_t now)
{
	return closed_by(start, now, false) || closed_by(end, now, true);
}

long ppolicy_failure_delay(const struct ppolicy *p, size_t counted)
{
	long delay = p->min_delay;
	if (delay == 0)
		return 0;
	for (size_t i = 0; i < counted && delay < p->max_delay; i++)
		delay *= 2;
	return delay < p->max_delay ? delay : p->max_delay;
}

bool ppolicy_idle(const struct ppolicy *p, time_t last, time_t now)
{
	return p->max_idle > 0 && last != (time_t)-1 && now > last + p->max_idle;
}

long ppolicy_grace_left(const struct ppolicy *p, long used, long expired_for)
{
	if (p->grace_expiry > 0 && expired_for > p->grace_expiry)
		return 0;
	return used < p->grace_authn_limit ? p->grace_authn_limit - used : 0;
}

size_t ppolicy_counted_failures(const struct ppolicy *p, const struct ber_view *times,
				size_t n, time_t now)
{
	size_t counted = 0;
	for (size_t i = 0; i < n; i++) {
		time_t then;
		if (p->failure_count_interval == 0)
			counted++;
		else if (overlay_parse_time(times[i], &then) &&
			 now <= then + p->failure_count_interval)
			counted++;
	}
	return counted;
}

enum ppolicy_quality ppolicy_check_quality(const struct ppolicy *p, struct ber_view password,
					   bool hashed)
{
	if (p->check_quality == 0)
		return PPOLICY_QUALITY_OK;
	if (hashed)
		return p->check_quality == 2 ? PPOLICY_QUALITY_UNCHECKABLE : PPOLICY_QUALITY_OK;
	/* OpenLDAP counts characters (UTF-8), not bytes */
	size_t chars = 0;
	for (size_t i = 0; i < password.len; i++)
		chars += (password.ptr[i] & 0xc0) != 0x80;
	if (chars == 0 || (long)chars < p->min_length)
		return PPOLICY_QUALITY_TOO_SHORT;
	if (p->max_length > 0 && (long)chars > p->max_length)
		return PPOLICY_QUALITY_TOO_LONG;
	return PPOLICY_QUALITY_OK;
}
