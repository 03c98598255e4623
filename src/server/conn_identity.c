/*
 * conn_identity.c — who is at the other end of a connection and how safe
 * the channel is: admission (conn_limits), ldapi peer credentials, the TLS
 * session (ldaps, StartTLS) and its SSF, and the identity a Bind set.
 */
#include "conn_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "access_glue.h"
#include "log.h"
#include "lumen_error.h"
#include "ops.h"
#include "tls.h"
#include "tls_memory.h"

/* ldapi: the peer's uid/gid (SASL EXTERNAL) and the local SSF. */
static void read_peer_credentials(struct conn *c)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	c->is_local = true;
	c->ssf = ACCESS_SSF_LOCAL;
	if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && len == sizeof(cred)) {
		c->has_peer_cred = true;
		c->peer_uid = cred.uid;
		c->peer_gid = cred.gid;
	}
}

/*
 * The connection bounds, peer credentials and (ldaps) the TLS session.
 * LUMEN_ELIMIT (refused by conn_max/conn_max_per_ip, logged), LUMEN_ENOMEM,
 * LUMEN_EIO (no TLS session).
 */
int conn_secure_setup(struct conn *c, const struct sockaddr *peer, socklen_t peer_len,
			bool tls)
{
	struct server *s = c->io->server;
	char why[96] = "";
	if (c->is_tcp)
		conn_limits_key_of(peer, peer_len, &c->limits_key);
	int rc = s->conn_limits != NULL
			 ? conn_limits_admit(s->conn_limits, &c->limits_key, why, sizeof(why))
			 : LUMEN_OK;
	if (rc != LUMEN_OK) {
		log_printf(0, "conn=%llu fd=%d connection from %s (%s) refused: %s",
			   (unsigned long long)c->id, c->fd, c->peer, c->local, why);
		return LUMEN_ELIMIT;
	}
	c->counted = s->conn_limits != NULL;
	if (!c->is_tcp)
		read_peer_credentials(c);
	if (!tls)
		return LUMEN_OK;
	if (s->tls == NULL)
		return LUMEN_EIO;
	rc = tls_session_new(s->tls, c->fd, &c->tls);
	if (rc == LUMEN_OK) {
		c->tls_state = CONN_TLS_HANDSHAKE;
		conn_count_tls_locked(c);    /* within the room reserved at admission */
	}
	return rc;
}

bool conn_count_tls_locked(struct conn *c)
{
	size_t now = tls_session_bytes(c->tls);
	bool handshake = c->tls_state == CONN_TLS_HANDSHAKE || c->tls_state == CONN_TLS_STARTING;
	/* The room reserved for a handshake stays taken until it ends. */
	if (handshake && now < TLS_MEMORY_HANDSHAKE_PEAK)
		now = TLS_MEMORY_HANDSHAKE_PEAK;
	if (now == c->mem_held.bytes[CONN_MEM_TLS])
		return true;
	return conn_memory_set_tls(conn_memory_of(c), &c->mem_held, now) || !handshake;
}

/* Handshake finished: record the SSF, switch to the idle timeout. */
static void tls_established(struct conn *c)
{
	c->tls_state = CONN_TLS_ON;
	conn_count_tls_locked(c);        /* the handshake's room goes back */
	c->ssf = tls_session_ssf(c->tls);
	log_printf(LOG_LEVEL_STATS, "conn=%llu fd=%d TLS established tls_ssf=%u ssf=%u "
		   "tls_proto=%s tls_cipher=%s", (unsigned long long)c->id, c->fd, c->ssf, c->ssf,
		   tls_session_protocol(c->tls), tls_session_cipher(c->tls));
	conn_arm_current_deadline(c);
	if (c->reading) {
		event_del(c->read_event);
		c->reading = false;
	}
}

/*
 * The TLS set-up steps the I/O thread owns: start the handshake once a
 * StartTLS answer is out, then drive it. Returns false when the connection
 * was torn down (lock released).
 */
bool conn_drive_tls_locked(struct conn *c)
{
	char why[160] = "";
	if (c->tls_state == CONN_TLS_STARTING && c->n_pending == 0 && conn_unsent(c) == 0 &&
	    !c->closing && !c->aborting) {
		if (tls_session_new(c->io->server->tls, c->fd, &c->tls) != LUMEN_OK) {
			log_printf(0, "conn=%llu fd=%d cannot start TLS: out of memory",
				   (unsigned long long)c->id, c->fd);
			conn_teardown_locked(c);
			return false;
		}
		c->tls_state = CONN_TLS_HANDSHAKE;
		conn_arm_current_deadline(c);
	}
	if (c->tls_state != CONN_TLS_HANDSHAKE || c->closing || c->aborting)
		return true;
	enum tls_io io = tls_session_handshake(c->tls, why, sizeof(why));
	if (!conn_count_tls_locked(c)) {
		conn_memory_count_tls_stop(conn_memory_of(c));
		log_printf(0, "conn=%llu fd=%d closing: TLS handshake stopped: its session "
			   "(%zu bytes) took the connections past conn_total_memory (%llu bytes)",
			   (unsigned long long)c->id, c->fd, tls_session_bytes(c->tls),
			   (unsigned long long)conn_memory_of(c)->max_total);
		conn_teardown_locked(c);
		return false;
	}
	switch (io) {
	case TLS_IO_OK:
		tls_established(c);
		return true;
	case TLS_IO_WANT_READ:
		return true;
	case TLS_IO_WANT_WRITE:
		conn_arm_write_locked(c);
		return true;
	default:
		log_printf(LOG_LEVEL_STATS, "conn=%llu fd=%d closing: TLS handshake failed: %s",
			   (unsigned long long)c->id, c->fd, why[0] ? why : "connection closed");
		conn_teardown_locked(c);
		return false;
	}
}

int conn_start_tls(struct conn *c, const struct op *op, const void *response, size_t len)
{
	int rc = LUMEN_OK;
	pthread_mutex_lock(&c->lock);
	if (c->closed || c->aborting || c->closing)
		rc = LUMEN_EIO;
	else if (c->tls_state != CONN_TLS_NONE)
		rc = LUMEN_EEXIST;
	else if (c->n_pending != 1 || c->ops != op || c->in_len > c->in_start)
		rc = LUMEN_EBUSY;
	else if (!conn_memory_reserve_tls(conn_memory_of(c), &c->mem_held,
					  TLS_MEMORY_HANDSHAKE_PEAK))
		rc = LUMEN_ELIMIT;
	if (rc == LUMEN_OK) {
		/* The answer leaves in the clear; the I/O thread starts the
		 * handshake once it is out and this operation has ended. */
		rc = conn_send_locked(c, response, len);
		if (rc == LUMEN_OK)
			c->tls_state = CONN_TLS_STARTING;
		else    /* the reservation goes back */
			conn_count_tls_locked(c);
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}

void conn_get_security(struct conn *c, struct conn_security *out)
{
	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&c->lock);
	out->ssf = c->ssf;
	out->is_local = c->is_local;
	out->has_peer_cred = c->has_peer_cred;
	out->uid = c->peer_uid;
	out->gid = c->peer_gid;
	out->tls = c->tls_state == CONN_TLS_ON;
	if (out->tls && tls_session_peer_subject(c->tls, out->tls_subject,
						 sizeof(out->tls_subject)) != LUMEN_OK)
		out->tls_subject[0] = '\0';
	pthread_mutex_unlock(&c->lock);
}

unsigned conn_ssf(struct conn *c)
{
	pthread_mutex_lock(&c->lock);
	unsigned ssf = c->ssf;
	pthread_mutex_unlock(&c->lock);
	return ssf;
}

void conn_free_identity(struct conn *c)
{
	free(c->bind_dn);
	free(c->authz_dn);
	tls_session_free(c->tls);
	c->bind_dn = c->authz_dn = NULL;
	c->tls = NULL;
}

/* Copy v into a connection-owned buffer grown as needed. LUMEN_ENOMEM. */
static int keep_copy(char **buf, size_t *cap, size_t *len, struct ber_view v)
{
	if (v.len + 1 > *cap) {
		char *bigger = realloc(*buf, v.len + 1);
		if (bigger == NULL)
			return LUMEN_ENOMEM;
		*buf = bigger;
		*cap = v.len + 1;
	}
	if (v.len > 0)
		memcpy(*buf, v.ptr, v.len);
	*len = v.len;
	return LUMEN_OK;
}

int conn_set_identity(struct conn *c, struct ber_view ndn, struct ber_view dn, bool bound)
{
	pthread_mutex_lock(&c->lock);
	int rc = keep_copy(&c->bind_dn, &c->bind_dn_cap, &c->bind_dn_len, ndn);
	if (rc == LUMEN_OK)
		rc = keep_copy(&c->authz_dn, &c->authz_dn_cap, &c->authz_dn_len, dn);
	if (rc != LUMEN_OK) {
		c->bind_dn_len = c->authz_dn_len = 0;
		bound = false;
	}
	c->bound = bound;
	c->password_change_only = false;
	pthread_mutex_unlock(&c->lock);
	return rc;
}

void conn_set_password_change_only(struct conn *c, bool on)
{
	pthread_mutex_lock(&c->lock);
	c->password_change_only = on;
	pthread_mutex_unlock(&c->lock);
}

bool conn_password_change_only(struct conn *c)
{
	pthread_mutex_lock(&c->lock);
	bool on = c->password_change_only;
	pthread_mutex_unlock(&c->lock);
	return on;
}

/* Copy a connection-owned DN into the arena under the lock. */
static int copy_out(struct conn *c, char *const *buf, const size_t *len, struct arena *arena,
		    struct ber_view *out)
{
	int rc = LUMEN_OK;
	pthread_mutex_lock(&c->lock);
	out->len = *len;
	out->ptr = (const uint8_t *)"";
	if (*len > 0) {
		out->ptr = arena_memdup(arena, *buf, *len);
		if (out->ptr == NULL)
			rc = LUMEN_ENOMEM;
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}

int conn_authz_dn(struct conn *c, struct arena *arena, struct ber_view *dn)
{
	return copy_out(c, &c->authz_dn, &c->authz_dn_len, arena, dn);
}

int conn_identity(struct conn *c, struct arena *arena, struct ber_view *ndn)
{
	return copy_out(c, &c->bind_dn, &c->bind_dn_len, arena, ndn);
}
