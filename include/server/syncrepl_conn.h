/*
 * syncrepl_conn.h — a syncrepl consumer's connection to its provider
 * (server layer): a blocking TCP socket owned by the consumer's thread,
 * TLS by OpenSSL (ldaps://, or StartTLS before anything else), whole
 * LDAPMessages written and read.
 *
 * Bounds: connecting and the TLS handshake take at most network_timeout
 * seconds; every read waits at most the caller's timeout (0: as long as
 * it takes) and notices *stop within half a second; a PDU larger than
 * SYNCREPL_MAX_PDU is refused before it is read (the provider's bytes are
 * as hostile as a client's). The TLS peer is verified per tls_reqcert:
 * demand checks the chain (tls_cacert, else the system's CAs) and that
 * the certificate names the provider's host.
 *
 * Ownership: syncrepl_conn_open allocates; syncrepl_conn_close sends
 * nothing, closes the socket and frees everything. The PDU a read returns
 * lives until the next read or close. Thread-safety: one thread.
 *
 * Errors (why says what, with the provider's URL left to the caller):
 * LUMEN_EIO (connect, TLS, a socket error, the provider closed),
 * LUMEN_EBUSY (*stop was set), LUMEN_ELIMIT (a read timed out, or a PDU
 * too large), LUMEN_EMALFORMED (not BER), LUMEN_EUNSUPPORTED (StartTLS
 * refused, with starttls=critical), LUMEN_ENOMEM.
 */
#ifndef LUMEN_SYNCREPL_CONN_H
#define LUMEN_SYNCREPL_CONN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ber.h"

struct config_syncrepl;
struct syncrepl_conn;

#define SYNCREPL_MAX_PDU (64u * 1024u * 1024u)

int syncrepl_conn_open(const struct config_syncrepl *cfg, const atomic_bool *stop,
		       struct syncrepl_conn **out, char *why, size_t whylen);
/* Writes w's bytes. */
int syncrepl_conn_send(struct syncrepl_conn *c, const struct ber_writer *w, char *why,
		       size_t whylen);
/* The next whole LDAPMessage (timeout in seconds, 0 = none). */
int syncrepl_conn_read(struct syncrepl_conn *c, unsigned timeout, const uint8_t **pdu,
		       size_t *len, char *why, size_t whylen);
/* True when the session is under TLS. */
bool syncrepl_conn_tls(const struct syncrepl_conn *c);
void syncrepl_conn_close(struct syncrepl_conn *c);

#endif
