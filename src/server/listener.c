/*
 * listener.c — listener URL parsing and listening sockets.
 */
#include "listener.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hex.h"
#include "lumen_error.h"

#define LISTEN_BACKLOG 1024

/* Percent-decode [s, s+len) into out (size outlen). */
static int percent_decode(const char *s, size_t len, char *out, size_t outlen)
{
	size_t o = 0;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (c == '%') {
			if (i + 2 >= len)
				return LUMEN_EMALFORMED;
			int byte = hex_pair_value(s[i + 1], s[i + 2]);
			if (byte < 0)
				return LUMEN_EMALFORMED;
			c = (char)byte;
			i += 2;
		}
		if (c == '\0' || o + 1 >= outlen)
			return LUMEN_EMALFORMED;
		out[o++] = c;
	}
	out[o] = '\0';
	return LUMEN_OK;
}

static int parse_port(const char *s, size_t len, char *out)
{
	unsigned long v = 0;
	if (len == 0 || len > 5)
		return LUMEN_EMALFORMED;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return LUMEN_EMALFORMED;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v == 0 || v > 65535)
		return LUMEN_EMALFORMED;
	snprintf(out, 8, "%lu", v);
	return LUMEN_OK;
}

static int parse_tcp_hostport(const char *url, const char *s, size_t len,
			      struct listener_url *out, char *err, size_t errlen)
{
	const char *port = NULL;
	size_t host_len = len;
	const char *host = s;
	if (len > 0 && s[0] == '[') {
		const char *close = memchr(s, ']', len);
		if (close == NULL)
			goto bad_host;
		host = s + 1;
		host_len = (size_t)(close - host);
		const char *after = close + 1;
		if (after < s + len) {
			if (*after != ':')
				goto bad_host;
			port = after + 1;
		}
	} else {
		const char *colon = memchr(s, ':', len);
		if (colon != NULL) {
			host_len = (size_t)(colon - s);
			port = colon + 1;
		}
	}
	if (host_len >= sizeof(out->host))
		goto bad_host;
	memcpy(out->host, host, host_len);
	out->host[host_len] = '\0';
	strcpy(out->port, out->tls ? LISTENER_DEFAULT_TLS_PORT : LISTENER_DEFAULT_PORT);
	if (port != NULL && parse_port(port, (size_t)(s + len - port), out->port) != LUMEN_OK) {
		snprintf(err, errlen, "%s: expected a port number from 1 to 65535", url);
		return LUMEN_EMALFORMED;
	}
	return LUMEN_OK;
bad_host:
	snprintf(err, errlen, "%s: expected ldap://host[:port]/ or ldap://[IPv6][:port]/", url);
	return LUMEN_EMALFORMED;
}

int listener_url_parse(const char *url, struct listener_url *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	const char *rest;
	if (strncasecmp(url, "ldap://", 7) == 0) {
		out->kind = LISTENER_TCP;
		rest = url + 7;
	} else if (strncasecmp(url, "ldaps://", 8) == 0) {
		out->kind = LISTENER_TCP;
		out->tls = true;
		rest = url + 8;
	} else if (strncasecmp(url, "ldapi://", 8) == 0) {
		out->kind = LISTENER_UNIX;
		rest = url + 8;
	} else {
		snprintf(err, errlen, "%s: unsupported URL scheme (expected ldap://, ldaps:// or "
			 "ldapi://)", url);
		return LUMEN_EUNSUPPORTED;
	}
	size_t len = strcspn(rest, "/?#");
	/* Anything after the host part must be an empty path. */
	if (rest[len] != '\0' && strcmp(rest + len, "/") != 0) {
		snprintf(err, errlen, "%s: expected nothing after the host part but \"/\"", url);
		return LUMEN_EMALFORMED;
	}
	if (out->kind == LISTENER_TCP)
		return parse_tcp_hostport(url, rest, len, out, err, errlen);
	if (len == 0) {
		strcpy(out->path, LISTENER_DEFAULT_LDAPI_PATH);
		return LUMEN_OK;
	}
	if (percent_decode(rest, len, out->path, sizeof(out->path)) != LUMEN_OK) {
		snprintf(err, errlen, "%s: expected a percent-encoded socket path (%%2F for '/') "
			 "shorter than %zu bytes", url, sizeof(out->path));
		return LUMEN_EMALFORMED;
	}
	return LUMEN_OK;
}

void listener_format_address(const void *sockaddr, size_t len, char *out, size_t outlen)
{
	const struct sockaddr *sa = sockaddr;
	char host[INET6_ADDRSTRLEN] = "?";
	if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
		const struct sockaddr_in *in = sockaddr;
		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		snprintf(out, outlen, "IP=%s:%u", host, ntohs(in->sin_port));
	} else if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
		const struct sockaddr_in6 *in6 = sockaddr;
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		snprintf(out, outlen, "IP=[%s]:%u", host, ntohs(in6->sin6_port));
	} else if (sa->sa_family == AF_UNIX) {
		const struct sockaddr_un *un = sockaddr;
		size_t path_len = len > offsetof(struct sockaddr_un, sun_path)
					  ? len - offsetof(struct sockaddr_un, sun_path) : 0;
		path_len = strnlen(un->sun_path, path_len);
		snprintf(out, outlen, "PATH=%.*s", (int)path_len, un->sun_path);
	} else {
		snprintf(out, outlen, "IP=?");
	}
}

static int push_listener(struct listener_set *set, int fd, enum listener_kind kind,
			 const char *path)
{
	struct listener *bigger = realloc(set->items, (set->n + 1) * sizeof(*bigger));
	if (bigger == NULL)
		return LUMEN_ENOMEM;
	set->items = bigger;
	struct listener *l = &bigger[set->n++];
	memset(l, 0, sizeof(*l));
	l->fd = fd;
	l->kind = kind;
	if (kind == LISTENER_UNIX) {
		snprintf(l->path, sizeof(l->path), "%s", path);
		snprintf(l->name, sizeof(l->name), "PATH=%s", path);
	} else {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		getsockname(fd, (struct sockaddr *)&ss, &sl);
		listener_format_address(&ss, sl, l->name, sizeof(l->name));
	}
	return LUMEN_OK;
}

static int open_tcp(const char *url, const struct listener_url *u, struct listener_set *set,
		    char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *list = NULL;
	int gai = getaddrinfo(u->host[0] ? u->host : NULL, u->port, &hints, &list);
	if (gai != 0) {
		snprintf(err, errlen, "%s: cannot resolve \"%s\": %s", url, u->host, gai_strerror(gai));
		return LUMEN_ENOTFOUND;
	}
	int rc = LUMEN_OK;
	for (struct addrinfo *ai = list; ai != NULL && rc == LUMEN_OK; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		int one = 1;
		if (fd < 0)
			goto sys_error;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		/* With the empty host both :: and 0.0.0.0 are bound separately. */
		if (ai->ai_family == AF_INET6)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		/* Bound now (a port in use fails start-up at once, and a
		 * privileged port is bound before privileges are dropped);
		 * listening waits for listeners_start. */
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
			close(fd);
			goto sys_error;
		}
		rc = push_listener(set, fd, LISTENER_TCP, NULL);
		if (rc != LUMEN_OK) {
			snprintf(err, errlen, "%s: out of memory", url);
			close(fd);
		} else {
			set->items[set->n - 1].tls = u->tls;
		}
		continue;
sys_error:
		snprintf(err, errlen, "%s: cannot bind: %s", url, strerror(errno));
		rc = LUMEN_EIO;
	}
	freeaddrinfo(list);
	return rc;
}

/* Remove a stale socket left by a previous run; refuse to touch a live one. */
static int clear_stale_socket(const char *url, const char *path, char *err, size_t errlen)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return LUMEN_OK;
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "%s: %s exists and is not a socket", url, path);
		return LUMEN_EEXIST;
	}
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0) {
		close(fd);
		snprintf(err, errlen, "%s: another server is listening on %s", url, path);
		return LUMEN_EBUSY;
	}
	if (fd >= 0)
		close(fd);
	unlink(path);
	return LUMEN_OK;
}

static int open_unix(const char *url, const struct listener_url *u, struct listener_set *set,
		     char *err, size_t errlen)
{
	int rc = clear_stale_socket(url, u->path, err, errlen);
	if (rc != LUMEN_OK)
		return rc;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", u->path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0) {
		snprintf(err, errlen, "%s: cannot bind %s: %s", url, u->path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return LUMEN_EIO;
	}
	/* Access is decided per operation, not by the socket's mode. */
	chmod(u->path, 0666);
	if (listen(fd, LISTEN_BACKLOG) != 0) {
		snprintf(err, errlen, "%s: cannot listen: %s", url, strerror(errno));
		close(fd);
		unlink(u->path);
		return LUMEN_EIO;
	}
	rc = push_listener(set, fd, LISTENER_UNIX, u->path);
	if (rc != LUMEN_OK) {
		snprintf(err, errlen, "%s: out of memory", url);
		close(fd);
		unlink(u->path);
	} else {
		set->items[set->n - 1].listening = true;
	}
	return rc;
}

int listeners_open(const char *urls, struct listener_set *set, char *err, size_t errlen)
{
	int rc = LUMEN_OK;
	char *copy = strdup(urls);
	set->items = NULL;
	set->n = 0;
	if (copy == NULL) {
		snprintf(err, errlen, "out of memory");
		return LUMEN_ENOMEM;
	}
	for (char *save = NULL, *url = strtok_r(copy, " \t\n", &save); url != NULL;
	     url = strtok_r(NULL, " \t\n", &save)) {
		struct listener_url u;
		rc = listener_url_parse(url, &u, err, errlen);
		if (rc == LUMEN_OK)
			rc = u.kind == LISTENER_TCP ? open_tcp(url, &u, set, err, errlen)
						    : open_unix(url, &u, set, err, errlen);
		if (rc != LUMEN_OK)
			break;
	}
	if (rc == LUMEN_OK && set->n == 0) {
		snprintf(err, errlen, "no listener URL given");
		rc = LUMEN_EMALFORMED;
	}
	free(copy);
	if (rc != LUMEN_OK)
		listeners_close(set);
	return rc;
}

int listeners_start(struct listener_set *set, char *err, size_t errlen)
{
	for (size_t i = 0; i < set->n; i++) {
		struct listener *l = &set->items[i];
		if (l->listening)
			continue;
		if (listen(l->fd, LISTEN_BACKLOG) != 0) {
			snprintf(err, errlen, "%s: cannot listen: %s", l->name, strerror(errno));
			return LUMEN_EIO;
		}
		l->listening = true;
	}
	return LUMEN_OK;
}

void listeners_close(struct listener_set *set)
{
	for (size_t i = 0; i < set->n; i++) {
		struct listener *l = &set->items[i];
		if (l->fd >= 0)
			close(l->fd);
		if (l->kind == LISTENER_UNIX && l->path[0] != '\0')
			unlink(l->path);
	}
	free(set->items);
	set->items = NULL;
	set->n = 0;
}
