/*
 * sync_cookie.h — change sequence numbers and the content-synchronization
 * cookie in OpenLDAP's forms (model layer), for syncprov and syncrepl
 * (RFC 4533 leaves the cookie's content to the server; OpenLDAP's peers
 * expect theirs).
 *
 * A CSN is 40 characters, "YYYYmmddHHMMSS.uuuuuuZ#cccccc#sss#mmmmmm":
 * UTC time to the microsecond, a change count within that microsecond,
 * the serverID of the server that made the change and a modification
 * number, the last three in hexadecimal. Two CSNs order as their texts
 * do (memcmp), which is how OpenLDAP compares them; parsing lower-cases
 * the hex digits so that stays true for input written in upper case.
 *
 * A cookie is "rid=NNN[,sid=SSS][,csn=CSN[;CSN...]][,delcsn=CSN]": rid
 * is the consumer's replica ID (decimal, 0-999), sid the serverID of the
 * server that sent it (hex, 0-fff), csn one CSN per serverID (the
 * provider's contextCSN), delcsn the CSN of a delete (OpenLDAP 2.5's
 * multi-provider deletes). Parts may come in any order; each at most
 * once; every CSN of the list names a different serverID.
 *
 * Memory: plain values; nothing is allocated. Thread-safety: reentrant.
 * Errors: parsing returns LUMEN_EMALFORMED with *why a static text naming
 * what was wrong (for the client's protocolError diagnostic), LUMEN_ELIMIT
 * past SYNC_COOKIE_MAX_CSNS; formatting returns LUMEN_ELIMIT when out is
 * too small.
 */
#ifndef LUMEN_SYNC_COOKIE_H
#define LUMEN_SYNC_COOKIE_H

#include <stdbool.h>
#include <stddef.h>

#include "ber.h"

#define CSN_LENGTH 40
/* serverIDs go up to 0xfff; a cookie names far fewer providers. */
#define SYNC_COOKIE_MAX_CSNS 64
/* Bytes of the longest cookie format writes (64 CSNs and the rest). */
#define SYNC_COOKIE_TEXT_MAX (32 + (SYNC_COOKIE_MAX_CSNS + 1) * (CSN_LENGTH + 8))

struct csn {
	char text[CSN_LENGTH + 1];     /* NUL-terminated, hex digits lower-case */
	unsigned sid;                  /* the serverID field */
};

struct sync_cookie {
	int rid;                       /* -1: absent */
	int sid;                       /* -1: absent */
	struct csn csns[SYNC_COOKIE_MAX_CSNS];   /* sorted by sid */
	size_t n_csns;
	bool has_delcsn;
	struct csn delcsn;
};

/* Parses one CSN (exactly CSN_LENGTH bytes). */
int csn_parse(const char *text, size_t len, struct csn *out, const char **why);
/* <0, 0, >0 as a orders before, with, after b. */
int csn_compare(const struct csn *a, const struct csn *b);

/* Parses a cookie (an empty one is valid: nothing is set). */
int sync_cookie_parse(struct ber_view text, struct sync_cookie *out, const char **why);
/* Writes c into out (NUL-terminated); *len without the NUL. */
int sync_cookie_format(const struct sync_cookie *c, char *out, size_t size, size_t *len);

/* The cookie's CSN for serverID sid, or NULL. */
const struct csn *sync_cookie_csn_for(const struct sync_cookie *c, unsigned sid);
/*
 * Puts csn into c's list: replaces the one of the same serverID when csn
 * is newer, adds it otherwise (kept sorted by sid). LUMEN_ELIMIT when the
 * list is full.
 */
int sync_cookie_merge_csn(struct sync_cookie *c, const struct csn *csn);

#endif
