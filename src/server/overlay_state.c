/*
 * overlay_state.c — time texts and internal writes for overlays
 * (overlay_state.h).
 */
#include "overlay_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldap_result_codes.h"
#include "lumen_error.h"

#define MAX_SECONDS (10L * 366 * 24 * 3600)

static bool digits(const uint8_t *p, size_t n, int *out)
{
	int v = 0;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
		v = v * 10 + (p[i] - '0');
	}
	*out = v;
	return true;
}

bool overlay_parse_time(struct ber_view v, time_t *out)
{
	int f[6];
	static const size_t width[6] = { 4, 2, 2, 2, 2, 2 };
	size_t at = 0;
	if (v.len < 15 || v.ptr[v.len - 1] != 'Z')
		return false;
	for (size_t i = 0; i < 6; i++, at += width[i - 1])
		if (!digits(v.ptr + at, width[i], &f[i]))
			return false;
	if (at != v.len - 1 && v.ptr[at] != '.' && v.ptr[at] != ',')
		return false;
	struct tm tm = { .tm_year = f[0] - 1900, .tm_mon = f[1] - 1, .tm_mday = f[2],
			 .tm_hour = f[3], .tm_min = f[4], .tm_sec = f[5] };
	if (f[1] < 1 || f[1] > 12 || f[2] < 1 || f[2] > 31 || f[3] > 23 || f[4] > 59 || f[5] > 60)
		return false;
	*out = timegm(&tm);
	return true;
}

size_t overlay_format_time(time_t t, long usec, char out[OVERLAY_TIME_MAX])
{
	struct tm tm;
	gmtime_r(&t, &tm);
	size_t n = strftime(out, OVERLAY_TIME_MAX, "%Y%m%d%H%M%S", &tm);
	int more = usec >= 0 ? snprintf(out + n, OVERLAY_TIME_MAX - n, ".%06ldZ", usec % 1000000)
			     : snprintf(out + n, OVERLAY_TIME_MAX - n, "Z");
	return n + (size_t)(more > 0 ? more : 0);
}

bool overlay_parse_seconds(const char *text, long *out)
{
	char *end;
	if (text[0] < '0' || text[0] > '9')
		return false;
	long v = strtol(text, &end, 10);
	if (*end != '\0' || v < 0 || v > MAX_SECONDS)
		return false;
	*out = v;
	return true;
}

void overlay_state_begin(struct overlay_state_write *w, struct overlay_request *req)
{
	memset(w, 0, sizeof(*w));
	w->req = req;
}

void overlay_state_change(struct overlay_state_write *w, enum ldap_modify_operation operation,
			  const struct attribute_type *type, const struct ber_view *values,
			  size_t n)
{
	if (w->rc != LUMEN_OK)
		return;
	if (w->n == OVERLAY_STATE_MAX_CHANGES) {
		w->rc = LUMEN_ELIMIT;
		return;
	}
	struct ber_view *copy = arena_calloc(w->req->op->arena, n ? n : 1, sizeof(*copy));
	if (copy == NULL) {
		w->rc = LUMEN_ENOMEM;
		return;
	}
	for (size_t i = 0; i < n; i++)
		copy[i] = values[i];
	const char *name = attribute_type_name(type);
	w->changes[w->n++] = (struct ldap_change){
		.operation = operation,
		.modification = { { (const uint8_t *)name, strlen(name) }, copy, n },
	};
}

void overlay_state_replace(struct overlay_state_write *w, const struct attribute_type *type,
			   const struct ber_view *values, size_t n)
{
	overlay_state_change(w, LDAP_MOD_REPLACE, type, values, n);
}

struct ber_view overlay_state_time(struct overlay_state_write *w, time_t t, long usec)
{
	char text[OVERLAY_TIME_MAX];
	size_t len = overlay_format_time(t, usec, text);
	uint8_t *copy = arena_memdup(w->req->op->arena, text, len);
	if (copy == NULL && w->rc == LUMEN_OK)
		w->rc = LUMEN_ENOMEM;
	return (struct ber_view){ copy, copy != NULL ? len : 0 };
}

void overlay_state_replace_time(struct overlay_state_write *w,
				const struct attribute_type *type, time_t t)
{
	struct ber_view v = overlay_state_time(w, t, -1);
	if (v.ptr != NULL)
		overlay_state_replace(w, type, &v, 1);
}

int overlay_state_commit(struct overlay_state_write *w)
{
	const struct backend_op *outer = w->req->op;
	struct backend_op bop = { .arena = outer->arena, .is_root = true, .from_tool = true,
				  .abandoned = NULL, .wait = outer->wait,
				  .wait_ctx = outer->wait_ctx };
	if (w->rc != LUMEN_OK) {
		w->diagnostic = lumen_strerror(w->rc);
		return w->rc;
	}
	if (w->n == 0)
		return LUMEN_OK;
	int rc = database_modify(w->req->database, &bop, w->req->ndn, w->changes, w->n);
	if (rc == LUMEN_OK && bop.result_code != LDAP_SUCCESS)
		rc = LUMEN_EINVAL;
	w->diagnostic = bop.diagnostic != NULL ? bop.diagnostic
		      : rc != LUMEN_OK ? lumen_strerror(rc) : NULL;
	entry_free(bop.pre_read);
	entry_free(bop.post_read);
	return rc;
}
