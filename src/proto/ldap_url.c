/*
 * ldap_url.c — RFC 4516 LDAP URLs: split, decode the DN, write back
 * (ldap_url.h).
 */
#include "ldap_url.h"

#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "lumen_error.h"

static const char *const schemes[] = { "ldap://", "ldaps://", "ldapi://" };

static const char *const scope_names[] = {
	[LDAP_URL_SCOPE_BASE] = "base", [LDAP_URL_SCOPE_ONE] = "one",
	[LDAP_URL_SCOPE_SUB] = "sub", [LDAP_URL_SCOPE_CHILDREN] = "subordinate",
};
#define N_SCOPES (sizeof(scope_names) / sizeof(scope_names[0]))

static size_t scheme_length(struct ber_view text)
{
	for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
		size_t n = strlen(schemes[i]);
		if (text.len >= n && strncasecmp((const char *)text.ptr, schemes[i], n) == 0)
			return n;
	}
	return 0;
}

/* The bytes of text from *pos up to stop (or the end); *pos moves past them. */
static struct ber_view take_until(struct ber_view text, size_t *pos, const char *stop)
{
	size_t start = *pos;
	while (*pos < text.len && strchr(stop, text.ptr[*pos]) == NULL)
		(*pos)++;
	return (struct ber_view){ text.ptr + start, *pos - start };
}

static int parse_scope(struct ber_view field, enum ldap_url_scope *out)
{
	*out = LDAP_URL_SCOPE_ABSENT;
	if (field.len == 0)
		return LUMEN_OK;
	for (size_t i = 0; i < N_SCOPES; i++)
		if (field.len == strlen(scope_names[i]) &&
		    strncasecmp((const char *)field.ptr, scope_names[i], field.len) == 0) {
			*out = (enum ldap_url_scope)i;
			return LUMEN_OK;
		}
	return LUMEN_EMALFORMED;
}

static int hex_value(uint8_t c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decodes %XX escapes of in into out (room for in.len bytes): its length,
 * or -1 for a bad escape. */
static long percent_decode(struct ber_view in, char *out)
{
	size_t n = 0;
	for (size_t i = 0; i < in.len; i++) {
		if (in.ptr[i] != '%') {
			out[n++] = (char)in.ptr[i];
			continue;
		}
		int hi = i + 2 < in.len ? hex_value(in.ptr[i + 1]) : -1;
		int lo = hi >= 0 ? hex_value(in.ptr[i + 2]) : -1;
		if (lo < 0)
			return -1;
		out[n++] = (char)(hi << 4 | lo);
		i += 2;
	}
	return (long)n;
}

/* Every '%' of v is followed by two hex digits. */
static bool escapes_valid(struct ber_view v)
{
	for (size_t i = 0; i < v.len; i++)
		if (v.ptr[i] == '%' && (i + 2 >= v.len || hex_value(v.ptr[i + 1]) < 0 ||
					hex_value(v.ptr[i + 2]) < 0))
			return false;
	return true;
}

int ldap_url_parse(struct ber_view text, struct ldap_url *out)
{
	struct ber_view fields[4] = { { NULL, 0 } };
	size_t pos = scheme_length(text);
	memset(out, 0, sizeof(*out));
	if (pos == 0)
		return LUMEN_EUNSUPPORTED;
	take_until(text, &pos, "/?");
	out->scheme_host = (struct ber_view){ text.ptr, pos };
	if (pos < text.len && text.ptr[pos] == '/')
		pos++;
	out->dn = take_until(text, &pos, "?");
	for (size_t i = 0; i < 4 && pos < text.len; i++) {
		pos++;   /* the '?' */
		fields[i] = take_until(text, &pos, "?");
	}
	if (pos < text.len)
		return LUMEN_EMALFORMED;
	if (!escapes_valid(out->dn))
		return LUMEN_EMALFORMED;
	out->attributes = fields[0];
	out->filter = fields[2];
	out->extensions = fields[3];
	return parse_scope(fields[1], &out->scope);
}

int ldap_url_decode_dn(const struct ldap_url *url, struct arena *arena, struct ber_view *dn)
{
	char *buf = arena_alloc(arena, url->dn.len + 1);
	if (buf == NULL)
		return LUMEN_ENOMEM;
	long n = percent_decode(url->dn, buf);
	if (n < 0)
		return LUMEN_EMALFORMED;
	buf[n] = '\0';
	*dn = (struct ber_view){ (const uint8_t *)buf, (size_t)n };
	return LUMEN_OK;
}

/* RFC 3986 unreserved and the sub-delimiters a DN needs (',' '=' '+' ';'),
 * plus ':' '@' '/': written as they are; everything else as %XX. */
static bool plain_in_dn(uint8_t c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return true;
	return c != 0 && strchr("-._~!$&'()*+,;=:@/", c) != NULL;
}

static char *put(char *p, struct ber_view v)
{
	if (v.len > 0)
		memcpy(p, v.ptr, v.len);
	return p + v.len;
}

int ldap_url_write(const struct ldap_url *url, struct ber_view dn, enum ldap_url_scope scope,
		   struct arena *arena, char **out)
{
	static const char hex[] = "0123456789ABCDEF";
	enum ldap_url_scope s = url->scope != LDAP_URL_SCOPE_ABSENT ? url->scope : scope;
	struct ber_view scope_text = { NULL, 0 };
	if (s != LDAP_URL_SCOPE_ABSENT)
		scope_text = (struct ber_view){ (const uint8_t *)scope_names[s],
						strlen(scope_names[s]) };
	/* the last field written: trailing empty ones are left out */
	int last = url->extensions.len ? 4 : url->filter.len ? 3 : scope_text.len ? 2 :
		   url->attributes.len ? 1 : 0;
	size_t cap = url->scheme_host.len + 1 + 3 * dn.len + 4 + url->attributes.len +
		     scope_text.len + url->filter.len + url->extensions.len + 1;
	char *buf = arena_alloc(arena, cap), *p = buf;
	if (buf == NULL)
		return LUMEN_ENOMEM;
	p = put(p, url->scheme_host);
	*p++ = '/';
	for (size_t i = 0; i < dn.len; i++) {
		uint8_t c = dn.ptr[i];
		if (plain_in_dn(c)) {
			*p++ = (char)c;
		} else {
			*p++ = '%';
			*p++ = hex[c >> 4];
			*p++ = hex[c & 15];
		}
	}
	const struct ber_view fields[4] = { url->attributes, scope_text, url->filter,
					    url->extensions };
	for (int i = 0; i < last; i++) {
		*p++ = '?';
		p = put(p, fields[i]);
	}
	*p = '\0';
	*out = buf;
	return LUMEN_OK;
}
