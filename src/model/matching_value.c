/*
 * matching_value.c — normalizers of the non-string matching rules: integer,
 * generalized time, octet string, object identifier, boolean, bit string,
 * UUID, CSN, the first-component rules, and distinguished names (the light,
 * schema-free form; see matching.h). Contract: include/schema.h.
 */
#include <stdbool.h>
#include <string.h>

#include "lumen_error.h"
#include "matching.h"
#include "matching_rules.h"

static bool is_digit(uint8_t c) { return c >= '0' && c <= '9'; }
static bool is_alpha(uint8_t c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }
static bool is_hex(uint8_t c) { return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'); }
static uint8_t ascii_lower(uint8_t c) { return (c >= 'A' && c <= 'Z') ? (uint8_t)(c + 32) : c; }

static int copy_out(const uint8_t *v, size_t len, struct arena *a, struct ber_view *out)
{
	uint8_t *buf = arena_alloc(a, len ? len : 1);
	if (buf == NULL)
		return LUMEN_ENOMEM;
	if (len)
		memcpy(buf, v, len);
	out->ptr = buf;
	out->len = len;
	return LUMEN_OK;
}

static int copy_lower(const uint8_t *v, size_t len, struct arena *a, struct ber_view *out)
{
	int rc = copy_out(v, len, a, out);
	if (rc == LUMEN_OK)
		for (size_t i = 0; i < len; i++)
			((uint8_t *)out->ptr)[i] = ascii_lower(v[i]);
	return rc;
}

/* ------------------------------------------------------------- integer */

/*
 * An INTEGER (RFC 4517 §3.3.16) is already canonical: no leading zeros, no
 * "-0", no '+'. Anything else is rejected rather than canonicalized, so an
 * assertion such as (uidNumber=01013) is Undefined as in slapd; stored
 * values pass the Integer syntax check first, so none is lost here.
 */
int norm_integer(const uint8_t *v, size_t len, struct arena *a, struct ber_view *out)
{
	size_t i = len > 0 && v[0] == '-' ? 1 : 0;

	if (i == len || (v[i] == '0' && (len - i > 1 || i == 1)))
		return LUMEN_EMALFORMED;
	for (size_t j = i; j < len; j++)
		if (!is_digit(v[j]))
			return LUMEN_EMALFORMED;
	return copy_out(v, len, a, out);
}

/* Numeric order of canonical integers of any length. */
int compare_integer(struct ber_view a, struct ber_view b)
{
	bool a_negative = a.len > 0 && a.ptr[0] == '-';
	bool b_negative = b.len > 0 && b.ptr[0] == '-';

	if (a_negative != b_negative)
		return a_negative ? -1 : 1;
	/* Without leading zeros, a longer magnitude is a larger one. */
	int magnitude = (a.len > b.len) - (a.len < b.len);
	if (magnitude == 0)
		magnitude = memcmp(a.ptr, b.ptr, a.len);
	if (magnitude > 0)
		magnitude = 1;
	else if (magnitude < 0)
		magnitude = -1;
	return a_negative ? -magnitude : magnitude;
}

/* ----------------------------------------------------- generalized time */

static long long days_from_civil(long long y, unsigned m, unsigned d)
{
	/* Proleptic Gregorian day count with 1970-01-01 as day 0. */
	y -= m <= 2;
	long long era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (long long)doe - 719468;
}

static void civil_from_days(long long z, long long *y, unsigned *m, unsigned *d)
{
	z += 719468;
	long long era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (long long)yoe + era * 400 + (*m <= 2);
}

static bool read_number(const uint8_t *v, size_t len, size_t *pos, size_t digits,
			unsigned *value)
{
	*value = 0;
	if (len - *pos < digits)
		return false;
	for (size_t i = 0; i < digits; i++) {
		uint8_t c = v[*pos + i];
		if (!is_digit(c))
			return false;
		*value = *value * 10 + (unsigned)(c - '0');
	}
	*pos += digits;
	return true;
}

static unsigned days_in_month(unsigned year, unsigned month)
{
	static const unsigned days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
	return month == 2 && leap ? 29 : days[month - 1];
}

/*
 * Multiply the decimal fraction 0.digits by unit in place; returns the
 * integer part carried out (the whole seconds the fraction amounts to).
 */
static unsigned scale_fraction(uint8_t *digits, size_t n, unsigned unit)
{
	unsigned carry = 0;
	for (size_t i = n; i-- > 0;) {
		unsigned product = (unsigned)(digits[i] - '0') * unit + carry;
		digits[i] = (uint8_t)('0' + product % 10);
		carry = product / 10;
	}
	return carry;
}

struct time_parts {
	unsigned year, month, day, hour, minute, second;
	int offset_seconds;            /* local time minus UTC */
	const uint8_t *fraction;       /* digits after '.' or ',' */
	size_t fraction_len;
	unsigned fraction_unit;        /* seconds per unit of the last field */
};

/* RFC 4517 §3.3.13 GeneralizedTime; false if v is not one. */
static bool parse_generalized_time(const uint8_t *v, size_t len, struct time_parts *t)
{
	size_t pos = 0;
	memset(t, 0, sizeof(*t));
	t->fraction_unit = 3600;
	if (!read_number(v, len, &pos, 4, &t->year) || !read_number(v, len, &pos, 2, &t->month) ||
	    !read_number(v, len, &pos, 2, &t->day) || !read_number(v, len, &pos, 2, &t->hour))
		return false;
	if (pos < len && is_digit(v[pos])) {
		if (!read_number(v, len, &pos, 2, &t->minute))
			return false;
		t->fraction_unit = 60;
		if (pos < len && is_digit(v[pos])) {
			if (!read_number(v, len, &pos, 2, &t->second))
				return false;
			t->fraction_unit = 1;
		}
	}
	if (t->month < 1 || t->month > 12 || t->day < 1 ||
	    t->day > days_in_month(t->year, t->month) || t->hour > 23 || t->minute > 59 ||
	    t->second > 60)
		return false;
	if (pos < len && (v[pos] == '.' || v[pos] == ',')) {
		t->fraction = v + ++pos;
		while (pos < len && is_digit(v[pos]))
			pos++;
		t->fraction_len = (size_t)(v + pos - t->fraction);
		if (t->fraction_len == 0)
			return false;
	}
	if (pos == len)
		return false;
	if (v[pos] == 'Z')
		return pos + 1 == len;
	if (v[pos] != '+' && v[pos] != '-')
		return false;
	int sign = v[pos++] == '-' ? -1 : 1;
	unsigned hours, minutes = 0;
	if (!read_number(v, len, &pos, 2, &hours) || hours > 23)
		return false;
	if (pos < len && (!read_number(v, len, &pos, 2, &minutes) || minutes > 59))
		return false;
	t->offset_seconds = sign * (int)(hours * 3600 + minutes * 60);
	return pos == len;
}

bool generalized_time_valid(const uint8_t *v, size_t len)
{
	struct time_parts t;
	return parse_generalized_time(v, len, &t);
}

/*
 * Canonical form: "YYYYMMDDHHMMSS[.fraction]Z" in UTC, the fraction (of a
 * second) without trailing zeros and absent when zero.
 */
int norm_generalized_time(const uint8_t *v, size_t len, struct arena *a, struct ber_view *out)
{
	struct time_parts t;
	if (!parse_generalized_time(v, len, &t))
		return LUMEN_EMALFORMED;

	/* 14 date digits, '.', the fraction (scaling never lengthens it), 'Z'. */
	uint8_t *buf = arena_alloc(a, 16 + t.fraction_len + 1);
	if (buf == NULL)
		return LUMEN_ENOMEM;
	uint8_t *fraction = buf + 15;
	if (t.fraction_len > 0)
		memcpy(fraction, t.fraction, t.fraction_len);
	long long seconds = days_from_civil(t.year, t.month, t.day) * 86400LL +
			    t.hour * 3600LL + t.minute * 60LL + t.second;
	seconds += scale_fraction(fraction, t.fraction_len, t.fraction_unit);
	seconds -= t.offset_seconds;

	long long day = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400;
	long long in_day = seconds - day * 86400;
	long long year;
	unsigned month, mday;
	civil_from_days(day, &year, &month, &mday);
	if (year < 0 || year > 9999)
		return LUMEN_EMALFORMED;

	unsigned fields[6] = { (unsigned)(year / 100), (unsigned)(year % 100), month, mday,
			       (unsigned)(in_day / 3600), (unsigned)(in_day % 3600 / 60) };
	for (size_t i = 0; i < 6; i++) {
		buf[2 * i] = (uint8_t)('0' + fields[i] / 10);
		buf[2 * i + 1] = (uint8_t)('0' + fields[i] % 10);
	}
	buf[12] = (uint8_t)('0' + in_day % 60 / 10);
	buf[13] = (uint8_t)('0' + in_day % 10);

	size_t n = t.fraction_len;
	while (n > 0 && fraction[n - 1] == '0')
		n--;
	if (n > 0) {
		buf[14] = '.';
		n += 15;
	} else {
		n = 14;
	}
	buf[n++] = 'Z';
	out->ptr = buf;
	out->len = n;
	return LUMEN_OK;
}

/* Order of canonical times: the 14 digits, then the fractions digit by digit. */
int compare_generalized_time(struct ber_view a, struct ber_view b)
{
	if (a.len < 15 || b.len < 15)
		return matching_compare_bytes(a, b);
	int c = memcmp(a.ptr, b.ptr, 14);
	if (c != 0)
		return c < 0 ? -1 : 1;
	/* Skip '.' if present; the trailing 'Z' is excluded. */
	size_t ai = a.ptr[14] == '.' ? 15 : 14, bi = b.ptr[14] == '.' ? 15 : 14;
	size_t a_end = a.len - 1, b_end = b.len - 1;
	while (ai < a_end || bi < b_end) {
		uint8_t ad = ai < a_end ? a.ptr[ai++] : '0';
		uint8_t bd = bi < b_end ? b.ptr[bi++] : '0';
		if (ad != bd)
			return ad < bd ? -1 : 1;
	}
	return 0;
}

/* ------------------------------------------------- small exact syntaxes */

int norm_octet_string(const uint8_t *v, size_t len, struct arena *a, struct ber_view *out)
{
	return copy_out(v, len, a, out);
}

bool oid_valid(const uint8_t *v, size_t len)
{
	if (len == 0)
		return false;
	if (is_alpha(v[0])) {
		for (size_t i = 1; i < len; i++)
			if (!is_alpha(v[i]) && !is_digit(v[i]) && v[i] != '-')
				return false;
		return true;
	}
	bool expect_digit = true;
	for (size_t i = 0; i < len; i++) {
		if (is_digit(v[i])) {
			/* No leading zeros in an arc (RFC 4512 number). */
			if (v[i] == '0' && expect_digit && i + 1 < len && is_digit(v[i + 1]))
				return false;
			expect_digit = false;
		} else if (v[i] == '.' && !expect_digit) {
			expect_digit = true;
		} else {
			return false;
		}
	}
	return !expect_digit && memchr(v, '.', len) != NULL;
}

int norm_object_identifier(const uint8_t *v, size_t len, struct arena *a, struct ber_view *out)
{
	/* descrs lower-cased, not resolved */
	if (!oid_valid(v, len))
		return LUMEN_EMALFORMED;
	return copy_lower(v, len, a, out);
}

int norm_boolean(const uint8_t *v, size_t len, struct arena *a, struct ber_view *out)
{
	if (!(len == 4 && memcmp(v, "TRUE", 4) == 0) && !(len == 5 && memcmp(v, "FALSE", 5) == 0))
		return LUMEN_EMALFORMED;
	return copy_out(v, len, a, out);
}

int norm_bit_string(const uint8_t *v, size_t len, struct arena *a, struct ber_view *out)
{
	if (len < 3 || v[0] != '\'' || v[len - 2] != '\'' || v[len - 1] != 'B')
		return LUMEN_EMALFORMED;
	for (size_t i = 1; i + 2 < len; i++)
		if (v[i] != '0' && v[i] != '1')
			return LUMEN_EMALFORMED;
	return copy_out(v, len, a, out);
}

/* RFC 4530 UUID: 8-4-4-4-12 hex digits, lower-cased. */
int norm_uuid(const uint8_t *v, size_t len, struct arena *a, struct ber_view *out)
{
	if (len != 36)
		return LUMEN_EMALFORMED;
	for (size_t i = 0; i < len; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;
		if (dash ? v[i] != '-' : !is_hex(v[i]))
			return LUMEN_EMALFORMED;
	}
	return copy_lower(v, len, a, out);
}

/*
 * Change sequence number (OpenLDAP syntax 1.3.6.1.4.1.4203.666.11.2.1):
 * "YYYYmmddHHMMSS.ffffffZ#counter#sid#mod". Its textual order is its time
 * order, so the form is kept byte for byte; only the shape is checked.
 */
int norm_csn(const uint8_t *v, size_t len, struct arena *a, struct ber_view *out)
{
	size_t hashes = 0;
	if (len < 16 || len > 64)
		return LUMEN_EMALFORMED;
	for (size_t i = 0; i < len; i++) {
		if (v[i] == '#')
			hashes++;
		else if (!is_hex(v[i]) && v[i] != '.' && v[i] != 'Z')
			return LUMEN_EMALFORMED;
	}
	if (hashes != 3)
		return LUMEN_EMALFORMED;
	return copy_out(v, len, a, out);
}

/*
 * First-component rules: an attribute value "( 2.5.4.3 NAME ... )" stands for
 * its first component; an assertion value is the component itself.
 */
static void first_component(const uint8_t **v, size_t *len)
{
	size_t i = 0, n = *len;
	if (n == 0 || (*v)[0] != '(')
		return;
	for (i = 1; i < n && (*v)[i] == ' '; i++)
		;
	size_t start = i;
	while (i < n && (*v)[i] != ' ' && (*v)[i] != ')')
		i++;
	*v += start;
	*len = i - start;
}

int norm_oid_first_component(const uint8_t *v, size_t len, struct arena *a,
			     struct ber_view *out)
{
	first_component(&v, &len);
	return norm_object_identifier(v, len, a, out);
}

int norm_integer_first_component(const uint8_t *v, size_t len, struct arena *a,
				 struct ber_view *out)
{
	first_component(&v, &len);
	return norm_integer(v, len, a, out);
}

/* --------------------------------------------------- distinguished names */

int norm_distinguished_name(const uint8_t *v, size_t len, struct arena *a,
			    struct ber_view *out)
{
	return matching_dn_light(v, len, a, out);
}

/* uniqueMember: "<dn>[#'bits'B]"; the DN part as distinguishedNameMatch does. */
int norm_unique_member(const uint8_t *v, size_t len, struct arena *a, struct ber_view *out)
{
	size_t dn_len = len;
	for (size_t i = len; i-- > 0;) {
		if (v[i] != '#')
			continue;
		if (i + 1 < len && v[i + 1] == '\'' && v[len - 1] == 'B')
			dn_len = i;
		break;
	}
	struct ber_view dn, bits = { 0 };
	int rc = matching_dn_light(v, dn_len, a, &dn);
	if (rc == LUMEN_OK && dn_len < len)
		rc = norm_bit_string(v + dn_len + 1, len - dn_len - 1, a, &bits);
	if (rc != LUMEN_OK)
		return rc;
	uint8_t *buf = arena_alloc(a, dn.len + bits.len + 1);
	if (buf == NULL)
		return LUMEN_ENOMEM;
	memcpy(buf, dn.ptr, dn.len);
	size_t n = dn.len;
	if (dn_len < len) {
		buf[n++] = '#';
		memcpy(buf + n, bits.ptr, bits.len);
		n += bits.len;
	}
	out->ptr = buf;
	out->len = n;
	return LUMEN_OK;
}
