/*
 * tls_memory.h — the bytes OpenSSL allocates for each TLS session, known
 * exactly (server layer).
 *
 * tls_memory_install hands OpenSSL allocation functions
 * (CRYPTO_set_mem_functions) that put a 16-byte header before every block:
 * its size and the account it is charged to. A block is charged to the
 * account that is current on the allocating thread (tls_memory_enter,
 * around each SSL call of tls.c), or to none; its free and realloc adjust
 * that same account whatever thread or account is current then, so a
 * block made under one connection and freed under another (an error
 * string, a cache entry) is never counted twice nor lost. Every other
 * OpenSSL user in the process (password hashing, the syncrepl client)
 * allocates through the same functions and is charged to nothing.
 *
 * Why exact and not a fixed estimate per state: what a session holds
 * depends on the client and the moment (its hello and certificate chain,
 * its key share group, a record half read, output pending): 9 KiB new,
 * 14 KiB idle, 31 KiB busy, 44 KiB at a handshake's peak, and ~190 KiB
 * for a hostile ClientHello announced at 120 KB. An estimate at the peak
 * overcounts idle sessions 3x; one per state misses busy and hostile
 * ones, which are what a bound is for. The cost is one thread-local read
 * and one atomic add per OpenSSL allocation (about 0.5% of lumend's CPU
 * under a TLS search load) and a 16-byte header, which is charged too.
 * The measured figures below remain for what cannot be known before it
 * happens (the room a new session needs at admission) and for when the
 * hooks could not be installed.
 *
 * Ownership: an account is made by tls_memory_account_new for one session
 * and given up by tls_memory_account_drop when the session is freed; it
 * then lives on, unseen, while blocks charged to it remain (a cache
 * entry OpenSSL keeps), and is freed with the last of them.
 * Thread-safety: everything may be called from any thread; the current
 * account is per thread; an account's figure is an atomic.
 *
 * Caveats:
 *  - tls_memory_install must run before any other OpenSSL call in the
 *    process (OpenSSL refuses new functions once it has allocated); lumend
 *    calls it first thing. Without it accounts stay at 0 and callers use
 *    the estimates (tls_memory_installed tells).
 *  - The allocator's own overhead per block is not counted.
 *  - In the fault-injection builds the hooks' malloc is the wrapped one,
 *    so OpenSSL's allocations can be failed like Lumen's (t_tls_faults.py).
 */
#ifndef LUMEN_TLS_MEMORY_H
#define LUMEN_TLS_MEMORY_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Measured on Debian's OpenSSL 3 (x86-64, RSA-2048 certificate, TLS 1.3
 * with X25519, SSL_MODE_RELEASE_BUFFERS), bytes including headers
 * (tests/unit/test_tls_memory.c): a new session 8,768, the handshake's
 * peak 44,514, idle after it 14,418, a record half read 31,146, output
 * blocked 31,018. The room reserved for a handshake leaves a margin for
 * larger ClientHellos and certificate chains; a handshake that needs more
 * is counted as it grows (conn_memory_set_tls).
 */
#define TLS_MEMORY_HANDSHAKE_PEAK 53248u
#define TLS_MEMORY_IDLE 16384u

struct tls_memory_account;

/*
 * Install the allocation functions. LUMEN_OK (also when installed
 * already), LUMEN_EBUSY (OpenSSL allocated before: nothing is counted).
 */
int tls_memory_install(void);
bool tls_memory_installed(void);

/* A new account for one session; NULL when out of memory. */
struct tls_memory_account *tls_memory_account_new(void);

/* The bytes charged to a live account now. */
size_t tls_memory_account_bytes(const struct tls_memory_account *a);

/*
 * The session is gone: the account is freed now if nothing is charged to
 * it, else with the last block charged to it. Returns the bytes still
 * charged (kept by OpenSSL beyond the session). NULL is ignored.
 */
size_t tls_memory_account_drop(struct tls_memory_account *a);

/*
 * Charge this thread's OpenSSL allocations to a (NULL: to none) until
 * tls_memory_leave(previous); returns the previous account. Nests.
 */
struct tls_memory_account *tls_memory_enter(struct tls_memory_account *a);
void tls_memory_leave(struct tls_memory_account *previous);

#endif
