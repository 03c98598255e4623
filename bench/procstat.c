/*
 * procstat.c — read /proc/<pid>/stat and status (see procstat.h).
 */
#include "procstat.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lumen_error.h"

int procstat_cpu_seconds(int pid, double *seconds)
{
	char path[64], line[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return LUMEN_ENOTFOUND;
	int rc = LUMEN_EMALFORMED;
	if (fgets(line, sizeof(line), f) == NULL)
		goto done;
	/* The command name may hold spaces and parentheses: skip past the last ')'. */
	char *p = strrchr(line, ')');
	unsigned long user, system;
	if (p == NULL ||
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
		   &user, &system) != 2)
		goto done;
	*seconds = (double)(user + system) / (double)sysconf(_SC_CLK_TCK);
	rc = LUMEN_OK;
done:
	fclose(f);
	return rc;
}

int procstat_memory(int pid, uint64_t *rss_kib, uint64_t *hwm_kib)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return LUMEN_ENOTFOUND;
	unsigned found = 0;
	unsigned long long value;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "VmRSS: %llu", &value) == 1) {
			*rss_kib = value;
			found |= 1;
		} else if (sscanf(line, "VmHWM: %llu", &value) == 1) {
			*hwm_kib = value;
			found |= 2;
		}
	}
	fclose(f);
	return found == 3 ? LUMEN_OK : LUMEN_EMALFORMED;
}
