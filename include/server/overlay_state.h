/*
 * overlay_state.h — what overlays share to keep state in an entry (server
 * layer): GeneralizedTime text as OpenLDAP writes it, duration values of
 * directives, and an internal write (a Modify through the chain, with
 * backend_op.from_tool set, batched by group commit like any other).
 *
 * Memory: texts and changes live in the request's op->arena.
 * Thread-safety: plain functions; a write belongs to one thread.
 * Caveats:
 *  - An internal write acts as the server: no access control, and
 *    NO-USER-MODIFICATION attributes are allowed.
 *  - At most OVERLAY_STATE_MAX_CHANGES changes per write; more is an
 *    error at commit (LUMEN_ELIMIT), as is running out of arena.
 */
#ifndef LUMEN_OVERLAY_STATE_H
#define LUMEN_OVERLAY_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "overlay.h"

#define OVERLAY_STATE_MAX_CHANGES 8
/* "YYYYMMDDHHMMSS.uuuuuuZ" and its NUL. */
#define OVERLAY_TIME_MAX 24

/* Parse a GeneralizedTime ("YYYYMMDDHHMMSS[.fraction]Z", UTC only). */
bool overlay_parse_time(struct ber_view v, time_t *out);
/* t as "YYYYMMDDHHMMSSZ", or with usec >= 0 "YYYYMMDDHHMMSS.uuuuuuZ"
 * (OpenLDAP's pwdFailureTime). Returns the length. */
size_t overlay_format_time(time_t t, long usec, char out[OVERLAY_TIME_MAX]);
/* A directive's non-negative number of seconds (at most a decade). */
bool overlay_parse_seconds(const char *text, long *out);

struct overlay_state_write {
	struct overlay_request *req;       /* its ndn is the entry written */
	struct ldap_change changes[OVERLAY_STATE_MAX_CHANGES];
	size_t n;
	int rc;                            /* the first error of the builders */
	const char *diagnostic;            /* commit: why it failed */
};

void overlay_state_begin(struct overlay_state_write *w, struct overlay_request *req);
/* Replace type's values with values[0..n) (n 0: remove the attribute). */
void overlay_state_replace(struct overlay_state_write *w, const struct attribute_type *type,
			   const struct ber_view *values, size_t n);
/* Replace type's value with the time t (usec as overlay_format_time). */
void overlay_state_replace_time(struct overlay_state_write *w,
				const struct attribute_type *type, time_t t);
/* Add (or delete) values[0..n) of type. */
void overlay_state_change(struct overlay_state_write *w, enum ldap_modify_operation operation,
			  const struct attribute_type *type, const struct ber_view *values,
			  size_t n);
/* A time text in the arena ({NULL,0} when it is exhausted). */
struct ber_view overlay_state_time(struct overlay_state_write *w, time_t t, long usec);
/*
 * Write the changes (none: nothing to do). LUMEN_OK when stored; else the
 * builders' error or the database's (LUMEN_EINVAL with an LDAP refusal),
 * with w->diagnostic saying why.
 */
int overlay_state_commit(struct overlay_state_write *w);

#endif
