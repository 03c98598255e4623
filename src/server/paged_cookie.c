/*
 * paged_cookie.c — authenticated paged-results cookies (paged_cookie.h).
 */
#include "paged_cookie.h"

#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "little_endian.h"
#include "lumen_error.h"

#define COOKIE_VERSION 1
#define COOKIE_HEADER 9          /* version + count */
#define COOKIE_MAC 32            /* HMAC-SHA256 */

static uint8_t cookie_key[32];
static bool cookie_key_ok;
static pthread_once_t cookie_key_once = PTHREAD_ONCE_INIT;

static void draw_key(void)
{
	cookie_key_ok = RAND_bytes(cookie_key, sizeof(cookie_key)) == 1;
}

/* Length-prefixed, so that no two different requests serialize alike. */
static uint8_t *put_view(uint8_t *p, struct ber_view v)
{
	little_endian_put64(p, v.len);
	if (v.len > 0)
		memcpy(p + 8, v.ptr, v.len);
	return p + 8 + v.len;
}

/* The MAC of the cookie's body (header + position) and of the binding. */
static int compute_mac(const struct paged_binding *b, const uint8_t *body, size_t body_len,
		       struct arena *arena, uint8_t mac[COOKIE_MAC])
{
	const struct ldap_search_request *req = b->req;
	size_t len = body_len + 8 + 2 + 8 * 3 + b->base_ndn.len + req->raw_filter.len;
	for (size_t i = 0; i < req->n_attributes; i++)
		len += 8 + req->attributes[i].len;
	pthread_once(&cookie_key_once, draw_key);
	if (!cookie_key_ok)
		return LUMEN_EIO;
	uint8_t *msg = arena_alloc(arena, len), *p = msg;
	if (msg == NULL)
		return LUMEN_ENOMEM;
	memcpy(p, body, body_len);
	p += body_len;
	little_endian_put64(p, b->conn_id);
	p += 8;
	*p++ = (uint8_t)req->scope;
	*p++ = (uint8_t)req->types_only;
	p = put_view(p, b->base_ndn);
	p = put_view(p, req->raw_filter);
	little_endian_put64(p, req->n_attributes);
	p += 8;
	for (size_t i = 0; i < req->n_attributes; i++)
		p = put_view(p, req->attributes[i]);
	unsigned int mac_len = 0;
	if (HMAC(EVP_sha256(), cookie_key, sizeof(cookie_key), msg, (size_t)(p - msg), mac,
		 &mac_len) == NULL || mac_len != COOKIE_MAC)
		return LUMEN_EIO;
	return LUMEN_OK;
}

int paged_cookie_seal(const struct paged_binding *b, uint64_t returned, struct ber_view pos,
		      struct arena *arena, struct ber_view *out)
{
	size_t body_len = COOKIE_HEADER + pos.len;
	uint8_t *c = arena_alloc(arena, body_len + COOKIE_MAC);
	*out = (struct ber_view){ NULL, 0 };
	if (c == NULL)
		return LUMEN_ENOMEM;
	c[0] = COOKIE_VERSION;
	little_endian_put64(c + 1, returned);
	memcpy(c + COOKIE_HEADER, pos.ptr, pos.len);
	int rc = compute_mac(b, c, body_len, arena, c + body_len);
	if (rc != LUMEN_OK)
		return rc;
	*out = (struct ber_view){ c, body_len + COOKIE_MAC };
	return LUMEN_OK;
}

int paged_cookie_open(const struct paged_binding *b, struct ber_view cookie,
		      struct arena *arena, struct ber_view *pos, uint64_t *returned)
{
	uint8_t mac[COOKIE_MAC];
	if (cookie.len < COOKIE_HEADER + COOKIE_MAC || cookie.ptr[0] != COOKIE_VERSION)
		return LUMEN_EMALFORMED;
	size_t body_len = cookie.len - COOKIE_MAC;
	int rc = compute_mac(b, cookie.ptr, body_len, arena, mac);
	if (rc != LUMEN_OK)
		return rc;
	if (CRYPTO_memcmp(mac, cookie.ptr + body_len, COOKIE_MAC) != 0)
		return LUMEN_EMALFORMED;
	*returned = little_endian_get64(cookie.ptr + 1);
	*pos = (struct ber_view){ cookie.ptr + COOKIE_HEADER, body_len - COOKIE_HEADER };
	return LUMEN_OK;
}
