/*
 * file_read.c — read a file to its end (file_read.h).
 */
#include "file_read.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "lumen_error.h"

/*
 * Make room for one more byte and the NUL. The buffer holds at most one
 * byte beyond max_bytes: enough to tell a longer file from one of exactly
 * max_bytes without reading more of it.
 */
static int grow(char **buf, size_t *cap, size_t used, size_t max_bytes)
{
	if (used + 1 < *cap)
		return LUMEN_OK;
	size_t want = *cap * 2;
	if (want > max_bytes + 2)
		want = max_bytes + 2;
	char *bigger = realloc(*buf, want);
	if (bigger == NULL)
		return LUMEN_ENOMEM;
	*buf = bigger;
	*cap = want;
	return LUMEN_OK;
}

int file_read_all(const char *path, size_t max_bytes, char **data, size_t *len)
{
	size_t cap = max_bytes + 2 < 4096 ? max_bytes + 2 : 4096, used = 0;
	int rc = LUMEN_OK;
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return LUMEN_EIO;
	char *buf = malloc(cap);
	if (buf == NULL)
		rc = LUMEN_ENOMEM;
	while (rc == LUMEN_OK) {
		if (used > max_bytes) {
			errno = EFBIG;
			rc = LUMEN_ELIMIT;
			break;
		}
		rc = grow(&buf, &cap, used, max_bytes);
		size_t n = rc == LUMEN_OK ? fread(buf + used, 1, cap - 1 - used, f) : 0;
		used += n;
		if (n == 0)
			break;
	}
	if (rc == LUMEN_OK && ferror(f))
		rc = LUMEN_EIO;
	int saved = errno;
	fclose(f);
	errno = saved;
	if (rc != LUMEN_OK) {
		free(buf);
		return rc;
	}
	buf[used] = '\0';
	*data = buf;
	*len = used;
	return LUMEN_OK;
}
