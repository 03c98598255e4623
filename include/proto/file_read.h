/*
 * file_read.h — a whole file into memory, NUL-terminated (proto layer).
 *
 * For the files lumend reads once at start-up: the configuration and its
 * includes, cn=config (slapd.d) entries, schema files. The file is read to
 * its end, never sized by a seek first, so a pipe or a file whose size the
 * kernel does not report (/proc) is read whole rather than refused or cut
 * short.
 *
 * Ownership: on success *data is malloc'd and the caller frees it; on
 * failure nothing is left allocated.
 * Thread-safety: no shared state.
 * Errors: LUMEN_EIO (cannot open or read: errno says why), LUMEN_ENOMEM,
 * LUMEN_ELIMIT (longer than max_bytes, which must be below SIZE_MAX - 1;
 * errno is EFBIG).
 */
#ifndef LUMEN_FILE_READ_H
#define LUMEN_FILE_READ_H

#include <stddef.h>

/* *data holds *len bytes plus a NUL; the bytes may contain NULs. */
int file_read_all(const char *path, size_t max_bytes, char **data, size_t *len);

#endif
