/*
 * listener.h — listener URLs (-h "ldap://host:port/ ldapi://%2Fpath/") and
 * the listening sockets opened for them (server layer).
 *
 * listener_url_parse understands ldap://[host][:port][/] (IPv4 literal,
 * [IPv6] literal or host name; empty host = every local address; default
 * port 389), ldaps:// likewise (default port 636; TLS from the first byte,
 * tls.h) and ldapi://[percent-encoded path][/] (default
 * LISTENER_DEFAULT_LDAPI_PATH). listeners_open opens a non-blocking
 * socket for each address of each URL (a host name or the empty host may
 * yield several) and binds it; listeners_start makes the TCP ones listen,
 * once the server can answer: until then a client or a load balancer's
 * health check is refused, not left waiting on a connection the kernel
 * accepted (as OpenLDAP's slapd, which listens after opening its
 * databases). Unix sockets listen from listeners_open, so that a second
 * server's stale-socket check never takes a starting server's socket for a
 * dead one. Accepting is the server's business.
 *
 * Ownership: a listener_set owns its sockets and array; listeners_close
 * closes them and removes the Unix sockets it created.
 * Thread-safety: none (start-up and shutdown, main thread).
 *
 * Caveats:
 *  - ldaps:// only parses here; the server refuses it without TLS files.
 *  - An existing Unix socket is removed only if nobody answers on it (a
 *    stale socket); a live one is LUMEN_EBUSY, anything else LUMEN_EEXIST.
 */
#ifndef LUMEN_LISTENER_H
#define LUMEN_LISTENER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/un.h>

#define LISTENER_DEFAULT_LDAPI_PATH "/run/lumen/ldapi"
#define LISTENER_DEFAULT_PORT "389"
#define LISTENER_DEFAULT_TLS_PORT "636"
#define LISTENER_NAME_MAX (sizeof(((struct sockaddr_un *)0)->sun_path) + 16)

enum listener_kind { LISTENER_TCP, LISTENER_UNIX };

struct listener_url {
	enum listener_kind kind;
	bool tls;            /* ldaps:// */
	char host[256];      /* TCP: empty = every address; no brackets */
	char port[8];        /* TCP: decimal */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];   /* UNIX */
};

struct listener {
	int fd;
	enum listener_kind kind;
	bool tls;            /* ldaps://: every connection starts with a TLS handshake */
	bool listening;      /* listen(2) done (Unix: at open; TCP: listeners_start) */
	/* How the access log names it: "IP=0.0.0.0:389", "IP=[::1]:389",
	 * "PATH=/run/lumen/ldapi". */
	char name[LISTENER_NAME_MAX];
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];   /* UNIX: to unlink */
};

struct listener_set {
	struct listener *items;
	size_t n;
};

/*
 * Parse one URL. LUMEN_EMALFORMED (bad syntax, port, or percent escape) or
 * LUMEN_EUNSUPPORTED (scheme other than ldap/ldaps/ldapi), with err explaining.
 */
int listener_url_parse(const char *url, struct listener_url *out, char *err, size_t errlen);

/*
 * Open sockets for every space-separated URL in `urls`. On failure nothing
 * stays open and err names the URL and the reason. Returns LUMEN_OK,
 * LUMEN_EMALFORMED / LUMEN_EUNSUPPORTED (bad URL), LUMEN_ENOTFOUND (host name
 * does not resolve), LUMEN_EBUSY (a live server on the ldapi socket),
 * LUMEN_EEXIST (the ldapi path exists and is not a socket), LUMEN_EIO
 * (socket, bind, or a Unix socket's listen failed), LUMEN_ENOMEM.
 */
int listeners_open(const char *urls, struct listener_set *set, char *err, size_t errlen);

/*
 * listen(2) on every socket not yet listening. LUMEN_EIO with err naming
 * the address (another process bound the same port meanwhile and listened
 * first: EADDRINUSE); the sockets stay open for listeners_close.
 */
int listeners_start(struct listener_set *set, char *err, size_t errlen);

/* Close every socket and unlink the Unix sockets; the set becomes empty. */
void listeners_close(struct listener_set *set);

/* "IP=a.b.c.d:p", "IP=[v6]:p" or "PATH=..." for an address (the log's form). */
void listener_format_address(const void *sockaddr, size_t len, char *out, size_t outlen);

#endif
