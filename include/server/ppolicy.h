/*
 * ppolicy.h — a password policy as a pwdPolicy entry states it
 * (draft-behera-ldap-password-policy-10 §5.2, as OpenLDAP 2.5 reads it),
 * and the decisions made from it that need no server (server layer; the
 * overlay is overlay_ppolicy.c).
 *
 * Memory: a parsed policy is a plain value; nothing is allocated.
 * Thread-safety: pure functions.
 * Caveats:
 *  - Only userPassword can be the pwdAttribute (as in OpenLDAP 2.5).
 *  - Durations are seconds and capped at PPOLICY_MAX_SECONDS; counts at
 *    PPOLICY_MAX_COUNT.
 *  - A policy whose values contradict each other (pwdMaxLength below
 *    pwdMinLength, pwdMaxDelay below pwdMinDelay) is refused, where
 *    OpenLDAP accepts it and its checks then refuse every password or
 *    ignore the minimum.
 */
#ifndef LUMEN_PPOLICY_H
#define LUMEN_PPOLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "entry.h"

#define PPOLICY_MAX_SECONDS (100L * 366 * 24 * 3600)
#define PPOLICY_MAX_COUNT 1000000L
/* OpenLDAP's pwdMaxRecordedFailure when neither it nor pwdMaxFailure is set. */
#define PPOLICY_DEFAULT_MAX_RECORDED 5
/* pwdAccountLockedTime of a lock that only an administrator lifts. */
#define PPOLICY_LOCKED_FOREVER "000001010000Z"

struct ppolicy {
	long min_age, max_age, in_history, check_quality, min_length, expire_warning;
	long grace_authn_limit, lockout_duration, max_failure, failure_count_interval;
	long max_recorded_failure;
	long max_length, grace_expiry, min_delay, max_delay, max_idle;
	bool lockout, must_change, allow_user_change, safe_modify;
};

/*
 * The policy of entry e (a pwdPolicy entry). Absent attributes take the
 * draft's defaults (pwdAllowUserChange TRUE, the rest 0/FALSE). Errors:
 * LUMEN_ESCHEMA with why naming the attribute and the problem (a value
 * that is not a number, out of range, pwdCheckQuality not 0..2, a
 * pwdAttribute other than userPassword, pwdMaxLength below pwdMinLength,
 * pwdMaxDelay below pwdMinDelay), LUMEN_ENOTFOUND (not a pwdPolicy
 * entry). As OpenLDAP's: pwdMinDelay without pwdMaxDelay caps at itself.
 */
int ppolicy_parse(const struct entry *e, struct ppolicy *out, char *why, size_t whylen);

/*
 * Is the account locked at now? locked_time: its pwdAccountLockedTime
 * (empty: none). A lock without pwdLockoutDuration, or the
 * PPOLICY_LOCKED_FOREVER value, lasts until removed.
 */
bool ppolicy_locked(const struct ppolicy *p, struct ber_view locked_time, time_t now);

/*
 * Is the account outside its validity window at now? start, end: its
 * pwdStartTime and pwdEndTime (empty: none). A value that is not a time
 * closes the window (as OpenLDAP's).
 */
bool ppolicy_outside_validity(struct ber_view start, struct ber_view end, time_t now);

/*
 * pwdMinDelay: the seconds a failure makes the account wait when counted
 * failures already count (pwdMinDelay doubled each time, up to
 * pwdMaxDelay); 0 without pwdMinDelay.
 */
long ppolicy_failure_delay(const struct ppolicy *p, size_t counted);

/*
 * pwdMaxIdle: has the account gone unused too long at now? last: the time
 * of its last successful bind (or, without one, of its password change);
 * -1: unknown, never idle.
 */
bool ppolicy_idle(const struct ppolicy *p, time_t last, time_t now);

/*
 * The grace binds left to a password expired for `expired_for` seconds
 * after `used` grace binds: none once pwdGraceExpiry has passed.
 */
long ppolicy_grace_left(const struct ppolicy *p, long used, long expired_for);

/* How many of the failure times count at now (pwdFailureCountInterval). */
size_t ppolicy_counted_failures(const struct ppolicy *p, const struct ber_view *times,
				size_t n, time_t now);

/* Quality verdicts of a new password (pwdCheckQuality, pwdMinLength). */
enum ppolicy_quality {
	PPOLICY_QUALITY_OK,
	PPOLICY_QUALITY_TOO_SHORT,
	PPOLICY_QUALITY_TOO_LONG,         /* pwdMaxLength */
	PPOLICY_QUALITY_UNCHECKABLE,      /* hashed, and pwdCheckQuality is 2 */
};
enum ppolicy_quality ppolicy_check_quality(const struct ppolicy *p, struct ber_view password,
					   bool hashed);

#endif
