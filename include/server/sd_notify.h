/*
 * sd_notify.h — tell systemd (or any supervisor speaking its notification
 * protocol) that the daemon is ready or stopping (server layer).
 *
 * The protocol: when a service runs with Type=notify, the supervisor puts
 * the address of a datagram socket in $NOTIFY_SOCKET — a file system path
 * ("/run/systemd/notify") or an abstract socket ("@name", the '@' standing
 * for the leading NUL byte). The service sends newline-separated
 * "KEY=VALUE" assignments in one datagram: "READY=1" once it accepts
 * clients, "STOPPING=1" when it begins to shut down, "STATUS=..." free text.
 * Written from the protocol's public description; no libsystemd.
 *
 * Ownership: nothing is kept; each call opens, sends and closes a socket.
 * Thread-safety: safe from any thread (reads the environment only).
 *
 * Caveats:
 *  - Without $NOTIFY_SOCKET the calls succeed and do nothing, so lumend
 *    started by hand or by another init behaves as before.
 *  - The variable is left in the environment: processes lumend might start
 *    would inherit it (it starts none).
 */
#ifndef LUMEN_SD_NOTIFY_H
#define LUMEN_SD_NOTIFY_H

/*
 * Send `state` (e.g. "READY=1" or "STOPPING=1\nSTATUS=shutting down") to
 * $NOTIFY_SOCKET. LUMEN_OK (sent, or no socket configured),
 * LUMEN_EINVAL (the variable is not an absolute path or '@' name, or is
 * too long for sockaddr_un), LUMEN_EIO (socket or sendto failed).
 */
int sd_notify_send(const char *state);

/* Convenience wrappers: "READY=1" and "STOPPING=1". Errors as above. */
int sd_notify_ready(void);
int sd_notify_stopping(void);

#endif
