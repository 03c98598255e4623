/*
 * sd_notify.c — the supervisor's readiness datagram ($NOTIFY_SOCKET).
 */
#include "sd_notify.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "lumen_error.h"

/* Fill *addr from the variable's value; *len is the address length to pass. */
static int notify_address(const char *value, struct sockaddr_un *addr, socklen_t *len)
{
	size_t n = strlen(value);
	memset(addr, 0, sizeof(*addr));
	addr->sun_family = AF_UNIX;
	if ((value[0] != '/' && value[0] != '@') || n < 2 || n >= sizeof(addr->sun_path))
		return LUMEN_EINVAL;
	memcpy(addr->sun_path, value, n);
	/* Abstract names start with a NUL byte and are not NUL-terminated. */
	if (value[0] == '@')
		addr->sun_path[0] = '\0';
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (value[0] == '/'));
	return LUMEN_OK;
}

int sd_notify_send(const char *state)
{
	struct sockaddr_un addr;
	socklen_t addr_len = 0;
	const char *value = getenv("NOTIFY_SOCKET");
	int fd = -1;
	int rc;
	if (value == NULL || value[0] == '\0')
		return LUMEN_OK;
	rc = notify_address(value, &addr, &addr_len);
	if (rc != LUMEN_OK)
		goto done;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		rc = LUMEN_EIO;
		goto done;
	}
	size_t len = strlen(state);
	ssize_t sent = sendto(fd, state, len, MSG_NOSIGNAL, (struct sockaddr *)&addr, addr_len);
	rc = sent == (ssize_t)len ? LUMEN_OK : LUMEN_EIO;
done:
	if (fd >= 0)
		close(fd);
	return rc;
}

int sd_notify_ready(void)
{
	return sd_notify_send("READY=1");
}

int sd_notify_stopping(void)
{
	return sd_notify_send("STOPPING=1");
}
