/*
 * tls_memory.c — OpenSSL's allocations charged to the session that made
 * them (tls_memory.h).
 *
 * An account's figure holds one extra byte while its session lives (the
 * session's reference); every block adds its size plus the header, so the
 * figure reaches 0 exactly when the session is gone and no block is left,
 * and whoever takes it to 0 frees the account.
 */
#include "tls_memory.h"

#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#include <openssl/crypto.h>

#include "lumen_error.h"

struct tls_memory_account {
	atomic_size_t bytes;
};

/* Before every block; 16 bytes keep malloc's alignment. */
struct block_header {
	alignas(16) struct tls_memory_account *owner;
	size_t size;
};

#define SESSION_REFERENCE 1u

static _Thread_local struct tls_memory_account *current;
static atomic_bool installed;

static size_t charge_of(size_t size)
{
	return size + sizeof(struct block_header);
}

/* Take bytes off a's figure; the one that takes it to 0 frees it. */
static void discharge(struct tls_memory_account *a, size_t bytes)
{
	if (atomic_fetch_sub_explicit(&a->bytes, bytes, memory_order_acq_rel) == bytes)
		free(a);
}

static void *hook_malloc(size_t size, const char *file, int line)
{
	(void)file;
	(void)line;
	if (size > SIZE_MAX - sizeof(struct block_header))
		return NULL;
	struct block_header *h = malloc(charge_of(size));
	if (h == NULL)
		return NULL;
	h->owner = current;
	h->size = size;
	if (h->owner != NULL)
		atomic_fetch_add_explicit(&h->owner->bytes, charge_of(size), memory_order_relaxed);
	return h + 1;
}

static void hook_free(void *ptr, const char *file, int line)
{
	(void)file;
	(void)line;
	if (ptr == NULL)
		return;
	struct block_header *h = (struct block_header *)ptr - 1;
	struct tls_memory_account *owner = h->owner;
	size_t charge = charge_of(h->size);
	free(h);
	if (owner != NULL)
		discharge(owner, charge);
}

/* CRYPTO_realloc's rules: NULL is malloc, size 0 is free. The block keeps
 * its owner. */
static void *hook_realloc(void *ptr, size_t size, const char *file, int line)
{
	if (ptr == NULL)
		return hook_malloc(size, file, line);
	if (size == 0) {
		hook_free(ptr, file, line);
		return NULL;
	}
	if (size > SIZE_MAX - sizeof(struct block_header))
		return NULL;
	struct block_header *h = (struct block_header *)ptr - 1;
	size_t old_size = h->size;
	struct block_header *moved = realloc(h, charge_of(size));
	if (moved == NULL)
		return NULL;
	moved->size = size;
	/* The block is still there: the figure cannot reach 0 here. */
	if (moved->owner != NULL && size > old_size)
		atomic_fetch_add_explicit(&moved->owner->bytes, size - old_size,
					  memory_order_relaxed);
	else if (moved->owner != NULL)
		atomic_fetch_sub_explicit(&moved->owner->bytes, old_size - size,
					  memory_order_relaxed);
	return moved + 1;
}

int tls_memory_install(void)
{
	if (atomic_load(&installed))
		return LUMEN_OK;
	if (CRYPTO_set_mem_functions(hook_malloc, hook_realloc, hook_free) != 1)
		return LUMEN_EBUSY;
	atomic_store(&installed, true);
	return LUMEN_OK;
}

bool tls_memory_installed(void)
{
	return atomic_load_explicit(&installed, memory_order_relaxed);
}

struct tls_memory_account *tls_memory_account_new(void)
{
	struct tls_memory_account *a = malloc(sizeof(*a));
	if (a != NULL)
		atomic_init(&a->bytes, SESSION_REFERENCE);
	return a;
}

size_t tls_memory_account_bytes(const struct tls_memory_account *a)
{
	return atomic_load_explicit(&a->bytes, memory_order_relaxed) - SESSION_REFERENCE;
}

size_t tls_memory_account_drop(struct tls_memory_account *a)
{
	if (a == NULL)
		return 0;
	size_t left = tls_memory_account_bytes(a);
	discharge(a, SESSION_REFERENCE);
	return left;
}

struct tls_memory_account *tls_memory_enter(struct tls_memory_account *a)
{
	struct tls_memory_account *previous = current;
	current = a;
	return previous;
}

void tls_memory_leave(struct tls_memory_account *previous)
{
	current = previous;
}
