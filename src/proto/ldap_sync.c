/*
 * ldap_sync.c — RFC 4533's control and message values (ldap_sync.h).
 */
#include "ldap_sync.h"

#include <string.h>

#include "hex.h"
#include "lumen_error.h"

#define TAG_NEW_COOKIE BER_TAG_CONTEXT(0)

/* An optional cookie at the reader's position. */
static int read_cookie(struct ber_reader *r, bool *has, struct ber_view *cookie)
{
	ber_tag_t tag;
	*has = false;
	if (ber_reader_at_end(r) || ber_peek_tag(r, &tag) != LUMEN_OK ||
	    tag != BER_TAG_OCTET_STRING)
		return LUMEN_OK;
	*has = true;
	return ber_read_octets(r, BER_TAG_OCTET_STRING, cookie);
}

/* An optional BOOLEAN with its default. */
static int read_flag(struct ber_reader *r, bool fallback, bool *out)
{
	ber_tag_t tag;
	*out = fallback;
	if (ber_reader_at_end(r) || ber_peek_tag(r, &tag) != LUMEN_OK || tag != BER_TAG_BOOLEAN)
		return LUMEN_OK;
	return ber_read_boolean(r, BER_TAG_BOOLEAN, out);
}

/* The optional cookie and the optional flag that follows it in every
 * value but the Sync State (each with its own default). */
static int read_cookie_flag(struct ber_reader *r, bool *has_cookie, struct ber_view *cookie,
			    bool fallback, bool *flag)
{
	int rc = read_cookie(r, has_cookie, cookie);
	return rc == LUMEN_OK ? read_flag(r, fallback, flag) : rc;
}

/* Everything read: nothing may follow. */
static int finish(int rc, const struct ber_reader *r)
{
	if (rc != LUMEN_OK)
		return LUMEN_EMALFORMED;
	return ber_reader_at_end(r) ? LUMEN_OK : LUMEN_EMALFORMED;
}

/* The value is exactly one SEQUENCE: *inner reads its contents. */
static int enter_value(struct ber_view value, struct ber_reader *inner)
{
	struct ber_reader outer;
	ber_reader_init(&outer, value.ptr, value.len);
	int rc = ber_enter(&outer, BER_TAG_SEQUENCE, inner);
	return rc == LUMEN_OK && ber_reader_at_end(&outer) ? LUMEN_OK : LUMEN_EMALFORMED;
}

static void write_cookie(struct ber_writer *w, bool has, struct ber_view cookie)
{
	if (has)
		ber_write_octets(w, BER_TAG_OCTET_STRING, cookie.ptr, cookie.len);
}

/* ----------------------------------------------------------------- UUIDs */

static bool uuid_dash_at(size_t i)
{
	return i == 8 || i == 13 || i == 18 || i == 23;
}

bool ldap_sync_uuid_parse(struct ber_view text, uint8_t uuid[LDAP_SYNC_UUID_SIZE])
{
	size_t n = 0;
	if (text.len != LDAP_SYNC_UUID_TEXT)
		return false;
	for (size_t i = 0; i < text.len; i++) {
		if (uuid_dash_at(i)) {
			if (text.ptr[i] != '-')
				return false;
			continue;
		}
		int byte = hex_pair_value(text.ptr[i], text.ptr[i + 1]);
		if (byte < 0 || uuid_dash_at(i + 1))
			return false;
		uuid[n++] = (uint8_t)byte;
		i++;
	}
	return n == LDAP_SYNC_UUID_SIZE;
}

void ldap_sync_uuid_format(const uint8_t uuid[LDAP_SYNC_UUID_SIZE],
			   char out[LDAP_SYNC_UUID_TEXT + 1])
{
	char *p = out;
	for (size_t i = 0; i < LDAP_SYNC_UUID_SIZE; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			*p++ = '-';
		p = hex_write_byte(p, uuid[i], false);
	}
	*p = '\0';
}

/* ---------------------------------------------------------- Sync Request */

int ldap_sync_request_decode(struct ber_view value, struct ldap_sync_request *out)
{
	struct ber_reader r;
	int64_t mode = 0;
	memset(out, 0, sizeof(*out));
	int rc = enter_value(value, &r);
	if (rc == LUMEN_OK)
		rc = ber_read_int_range(&r, BER_TAG_ENUMERATED, 1, 3, &mode);
	if (rc == LUMEN_OK && mode == 2)
		rc = LUMEN_EMALFORMED;   /* 2 is reserved */
	out->mode = (enum ldap_sync_mode)mode;
	if (rc == LUMEN_OK)
		rc = read_cookie_flag(&r, &out->has_cookie, &out->cookie, false, &out->reload_hint);
	return finish(rc, &r);
}

void ldap_sync_request_encode(const struct ldap_sync_request *in, struct ber_writer *w)
{
	ber_begin(w, BER_TAG_SEQUENCE);
	ber_write_integer(w, BER_TAG_ENUMERATED, in->mode);
	write_cookie(w, in->has_cookie, in->cookie);
	if (in->reload_hint)
		ber_write_boolean(w, BER_TAG_BOOLEAN, true);
	ber_end(w);
}

/* ------------------------------------------------------------ Sync State */

static int read_uuid(struct ber_reader *r, ber_tag_t tag, uint8_t uuid[LDAP_SYNC_UUID_SIZE])
{
	struct ber_view v;
	int rc = ber_read_octets(r, tag, &v);
	if (rc != LUMEN_OK || v.len != LDAP_SYNC_UUID_SIZE)
		return LUMEN_EMALFORMED;
	memcpy(uuid, v.ptr, LDAP_SYNC_UUID_SIZE);
	return LUMEN_OK;
}

int ldap_sync_state_decode(struct ber_view value, struct ldap_sync_state_value *out)
{
	struct ber_reader r;
	int64_t state = 0;
	memset(out, 0, sizeof(*out));
	int rc = enter_value(value, &r);
	if (rc == LUMEN_OK)
		rc = ber_read_int_range(&r, BER_TAG_ENUMERATED, 0, 3, &state);
	out->state = (enum ldap_sync_state)state;
	if (rc == LUMEN_OK)
		rc = read_uuid(&r, BER_TAG_OCTET_STRING, out->uuid);
	if (rc == LUMEN_OK)
		rc = read_cookie(&r, &out->has_cookie, &out->cookie);
	return finish(rc, &r);
}

void ldap_sync_state_encode(const struct ldap_sync_state_value *in, struct ber_writer *w)
{
	ber_begin(w, BER_TAG_SEQUENCE);
	ber_write_integer(w, BER_TAG_ENUMERATED, in->state);
	ber_write_octets(w, BER_TAG_OCTET_STRING, in->uuid, LDAP_SYNC_UUID_SIZE);
	write_cookie(w, in->has_cookie, in->cookie);
	ber_end(w);
}

void ldap_sync_state_write(enum ldap_sync_state state, const uint8_t uuid[LDAP_SYNC_UUID_SIZE],
			   uint8_t out[LDAP_SYNC_STATE_VALUE_SIZE])
{
	/* SEQUENCE { ENUMERATED state, OCTET STRING uuid (16) } */
	static const uint8_t head[] = { 0x30, LDAP_SYNC_STATE_VALUE_SIZE - 2, 0x0a, 0x01 };
	memcpy(out, head, sizeof(head));
	out[4] = (uint8_t)state;
	out[5] = 0x04;
	out[6] = LDAP_SYNC_UUID_SIZE;
	memcpy(out + 7, uuid, LDAP_SYNC_UUID_SIZE);
}

/* ------------------------------------------------------------- Sync Done */

int ldap_sync_done_decode(struct ber_view value, struct ldap_sync_done *out)
{
	struct ber_reader r;
	memset(out, 0, sizeof(*out));
	int rc = enter_value(value, &r);
	if (rc == LUMEN_OK)
		rc = read_cookie_flag(&r, &out->has_cookie, &out->cookie, false,
				      &out->refresh_deletes);
	return finish(rc, &r);
}

void ldap_sync_done_encode(const struct ldap_sync_done *in, struct ber_writer *w)
{
	ber_begin(w, BER_TAG_SEQUENCE);
	write_cookie(w, in->has_cookie, in->cookie);
	if (in->refresh_deletes)
		ber_write_boolean(w, BER_TAG_BOOLEAN, true);
	ber_end(w);
}

/* ------------------------------------------------------------- Sync Info */

static int decode_refresh(struct ber_reader *r, ber_tag_t tag, struct ldap_sync_info *out)
{
	struct ber_reader inner;
	int rc = ber_enter(r, tag, &inner);
	if (rc == LUMEN_OK)
		rc = read_cookie_flag(&inner, &out->has_cookie, &out->cookie, true,
				      &out->refresh_done);
	return finish(rc, &inner);
}

static int decode_id_set(struct ber_reader *r, struct ldap_sync_info *out,
			 struct ber_reader *uuid_set)
{
	struct ber_reader inner;
	int rc = ber_enter(r, BER_TAG_CONTEXT_CONS(LDAP_SYNC_INFO_ID_SET), &inner);
	if (rc == LUMEN_OK)
		rc = read_cookie_flag(&inner, &out->has_cookie, &out->cookie, false,
				      &out->refresh_deletes);
	if (rc == LUMEN_OK)
		rc = ber_enter(&inner, BER_TAG_SET, uuid_set);
	/* count the members now, so a bad one is refused with the message */
	struct ber_reader walk = *uuid_set;
	uint8_t uuid[LDAP_SYNC_UUID_SIZE];
	while (rc == LUMEN_OK && !ber_reader_at_end(&walk)) {
		rc = ldap_sync_info_next_uuid(&walk, uuid);
		out->n_uuids++;
	}
	return finish(rc, &inner);
}

int ldap_sync_info_decode(struct ber_view value, struct ldap_sync_info *out,
			  struct ber_reader *uuid_set)
{
	struct ber_reader r;
	ber_tag_t tag;
	memset(out, 0, sizeof(*out));
	ber_reader_init(&r, value.ptr, value.len);
	ber_reader_init(uuid_set, NULL, 0);
	if (ber_peek_tag(&r, &tag) != LUMEN_OK)
		return LUMEN_EMALFORMED;
	int rc = LUMEN_EMALFORMED;
	if (tag == TAG_NEW_COOKIE) {
		out->kind = LDAP_SYNC_INFO_NEW_COOKIE;
		out->has_cookie = true;
		rc = ber_read_octets(&r, TAG_NEW_COOKIE, &out->cookie);
	} else if (tag == BER_TAG_CONTEXT_CONS(LDAP_SYNC_INFO_REFRESH_DELETE) ||
		   tag == BER_TAG_CONTEXT_CONS(LDAP_SYNC_INFO_REFRESH_PRESENT)) {
		out->kind = BER_TAG_NUMBER(tag);
		rc = decode_refresh(&r, tag, out);
	} else if (tag == BER_TAG_CONTEXT_CONS(LDAP_SYNC_INFO_ID_SET)) {
		out->kind = LDAP_SYNC_INFO_ID_SET;
		rc = decode_id_set(&r, out, uuid_set);
	}
	return finish(rc, &r);
}

int ldap_sync_info_next_uuid(struct ber_reader *uuid_set, uint8_t uuid[LDAP_SYNC_UUID_SIZE])
{
	return read_uuid(uuid_set, BER_TAG_OCTET_STRING, uuid);
}

void ldap_sync_info_encode(const struct ldap_sync_info *in, struct ber_writer *w)
{
	if (in->kind == LDAP_SYNC_INFO_NEW_COOKIE) {
		ber_write_octets(w, TAG_NEW_COOKIE, in->cookie.ptr, in->cookie.len);
		return;
	}
	ber_begin(w, BER_TAG_CONTEXT_CONS(in->kind));
	write_cookie(w, in->has_cookie, in->cookie);
	if (in->kind != LDAP_SYNC_INFO_ID_SET) {
		if (!in->refresh_done)
			ber_write_boolean(w, BER_TAG_BOOLEAN, false);
		ber_end(w);
		return;
	}
	if (in->refresh_deletes)
		ber_write_boolean(w, BER_TAG_BOOLEAN, true);
	ber_begin(w, BER_TAG_SET);
	for (size_t i = 0; i < in->n_uuids; i++)
		ber_write_octets(w, BER_TAG_OCTET_STRING, in->uuids + i * LDAP_SYNC_UUID_SIZE,
				 LDAP_SYNC_UUID_SIZE);
	ber_end(w);
	ber_end(w);
}
