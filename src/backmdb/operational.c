/*
 * operational.c — the operational attributes the backend keeps on every
 * entry: entryUUID (RFC 4122 version 4, random), entryCSN (OpenLDAP's
 * "YYYYmmddHHMMSS.uuuuuuZ#count#sid#mod" form, so replication tools and
 * operators see familiar values), create/modifyTimestamp, creators/
 * modifiersName and structuralObjectClass.
 *
 * CSNs must grow strictly within a database even when two writes land in
 * the same microsecond (or the clock steps back): the count field breaks
 * ties, kept under csn_lock. The sid field is the configured serverID
 * (backend_settings.server_id; 000 without one).
 */
#include "backend_internal.h"

#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#define CSN_TEXT_MAX 64
#define TIMESTAMP_TEXT_MAX 24
#define UUID_TEXT_MAX 40

struct change_stamp {
	char csn[CSN_TEXT_MAX];
	char timestamp[TIMESTAMP_TEXT_MAX];
};

/* A timestamp and a CSN for one write, strictly after the previous CSN. */
static void make_stamp(struct backend *be, struct change_stamp *out)
{
	struct timespec now;
	struct tm tm;
	unsigned count;

	clock_gettime(CLOCK_REALTIME, &now);
	uint64_t usec = (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
	pthread_mutex_lock(&be->csn_lock);
	if (usec <= be->last_csn_usec) {
		usec = be->last_csn_usec;
		count = ++be->csn_count;
	} else {
		be->last_csn_usec = usec;
		count = be->csn_count = 0;
	}
	pthread_mutex_unlock(&be->csn_lock);
	time_t seconds = (time_t)(usec / 1000000u);
	gmtime_r(&seconds, &tm);
	strftime(out->timestamp, sizeof(out->timestamp), "%Y%m%d%H%M%SZ", &tm);
	char date[TIMESTAMP_TEXT_MAX];
	strftime(date, sizeof(date), "%Y%m%d%H%M%S", &tm);
	snprintf(out->csn, sizeof(out->csn), "%s.%06uZ#%06x#%03x#000000", date,
		 (unsigned)(usec % 1000000u), count & 0xffffffu, be->server_id);
}

static int make_uuid(char *out, size_t len)
{
	uint8_t b[16];

	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
		return LUMEN_EIO;
	b[6] = (uint8_t)((b[6] & 0x0f) | 0x40);   /* version 4 */
	b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);   /* RFC 4122 variant */
	snprintf(out, len,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
		 b[12], b[13], b[14], b[15]);
	return LUMEN_OK;
}

/* Sets one value; keep = true leaves an existing attribute alone (tools). */
static int set_value(struct entry *e, const struct attribute_description *ad,
		     struct ber_view value, bool keep)
{
	if (keep && entry_find(e, ad) != NULL)
		return LUMEN_OK;
	int rc = entry_replace_values(e, ad, &value, 1, NULL);
	/* a value the syntax refuses (e.g. an odd requester DN) is an internal error */
	return rc == LUMEN_OK || rc == LUMEN_ENOMEM ? rc : LUMEN_EINVAL;
}

/*
 * creatorsName / modifiersName: the requester's DN. The anonymous
 * requester's empty DN is stored as the empty value when the syntax takes
 * it, else the attribute is simply left out.
 */
static int set_name(struct entry *e, const struct attribute_description *ad,
		    struct ber_view ndn, bool keep)
{
	int rc = set_value(e, ad, ndn, keep);
	if (rc == LUMEN_EINVAL && ndn.len == 0)
		return LUMEN_OK;
	return rc;
}

static struct ber_view text_view(const char *s)
{
	return (struct ber_view){ (const uint8_t *)s, strlen(s) };
}

int operational_on_add(struct backend *be, const struct backend_op *op, struct entry *e)
{
	const struct backend_operational *o = &be->ops;
	struct change_stamp stamp;
	char uuid[UUID_TEXT_MAX];
	bool keep = op->from_tool;

	make_stamp(be, &stamp);
	int rc = make_uuid(uuid, sizeof(uuid));
	if (rc == LUMEN_OK)
		rc = set_value(e, &o->entry_uuid, text_view(uuid), keep);
	if (rc == LUMEN_OK)
		rc = set_value(e, &o->entry_csn, text_view(stamp.csn), keep);
	if (rc == LUMEN_OK)
		rc = set_value(e, &o->create_timestamp, text_view(stamp.timestamp), keep);
	if (rc == LUMEN_OK)
		rc = set_value(e, &o->modify_timestamp, text_view(stamp.timestamp), keep);
	if (rc == LUMEN_OK)
		rc = set_name(e, &o->creators_name, op->requester_ndn, keep);
	if (rc == LUMEN_OK)
		rc = set_name(e, &o->modifiers_name, op->requester_ndn, keep);
	if (rc == LUMEN_OK && e->structural != NULL)
		rc = set_value(e, &o->structural_object_class,
			       text_view(object_class_name(e->structural)), keep);
	return rc;
}

int operational_restamp_add(struct backend *be, const struct backend_op *op, struct entry *e)
{
	const struct backend_operational *o = &be->ops;
	struct change_stamp stamp;

	if (op->from_tool)
		return LUMEN_OK;   /* a loaded entry keeps what it came with */
	make_stamp(be, &stamp);
	int rc = set_value(e, &o->entry_csn, text_view(stamp.csn), false);
	if (rc == LUMEN_OK)
		rc = set_value(e, &o->create_timestamp, text_view(stamp.timestamp), false);
	if (rc == LUMEN_OK)
		rc = set_value(e, &o->modify_timestamp, text_view(stamp.timestamp), false);
	return rc;
}

void operational_new_csn(struct backend *be, char out[CSN_LENGTH + 1])
{
	struct change_stamp stamp;
	make_stamp(be, &stamp);
	memcpy(out, stamp.csn, CSN_LENGTH);
	out[CSN_LENGTH] = '\0';
}

int operational_on_modify(struct backend *be, const struct backend_op *op, struct entry *e)
{
	const struct backend_operational *o = &be->ops;
	struct change_stamp stamp;

	if (op->replica)
		return LUMEN_OK;   /* the provider's stamps, as sent */
	make_stamp(be, &stamp);
	int rc = set_value(e, &o->entry_csn, text_view(stamp.csn), false);
	if (rc == LUMEN_OK)
		rc = set_value(e, &o->modify_timestamp, text_view(stamp.timestamp), false);
	if (rc == LUMEN_OK)
		rc = set_name(e, &o->modifiers_name, op->requester_ndn, false);
	return rc;
}
