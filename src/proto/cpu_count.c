/* cpu_count.c — see cpu_count.h. */
#include "cpu_count.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file_read.h"
#include "lumen_error.h"

/* cpu.max and /proc/self/cgroup are a line each. */
#define CGROUP_FILE_MAX 4096

/* Masks larger than the 1,024 CPUs of a cpu_set_t need a dynamic set; the
 * kernel refuses a set smaller than its own mask with EINVAL. */
static unsigned count_in_mask(void)
{
	for (size_t cpus = 1024; cpus <= 65536; cpus *= 2) {
		cpu_set_t *set = CPU_ALLOC(cpus);
		if (set == NULL)
			return 0;
		size_t size = CPU_ALLOC_SIZE(cpus);
		CPU_ZERO_S(size, set);
		int rc = sched_getaffinity(0, size, set);
		int error = errno;
		int count = rc == 0 ? CPU_COUNT_S(size, set) : 0;
		CPU_FREE(set);
		if (rc == 0)
			return count > 0 ? (unsigned)count : 0;
		if (error != EINVAL)
			return 0;
	}
	return 0;
}

unsigned cpu_count_of_quota(const char *cpu_max)
{
	char *end;
	errno = 0;
	if (!isdigit((unsigned char)cpu_max[0]))
		return 0;   /* "max", or a sign strtoull would take */
	unsigned long long quota = strtoull(cpu_max, &end, 10);
	if (*end != ' ' || errno != 0 || quota == 0 || !isdigit((unsigned char)end[1]))
		return 0;
	const char *rest = end + 1;
	unsigned long long period = strtoull(rest, &end, 10);
	if ((*end != '\n' && *end != '\0') || errno != 0 || period == 0)
		return 0;
	unsigned long long cpus = quota / period + (quota % period != 0);
	return cpus > UINT_MAX ? UINT_MAX : (unsigned)cpus;
}

/* The quota in dir/cpu.max, 0 when there is none. */
static unsigned quota_in(const char *dir)
{
	char path[PATH_MAX];
	char *text;
	size_t len;
	if (snprintf(path, sizeof(path), "%s/cpu.max", dir) >= (int)sizeof(path) ||
	    file_read_all(path, CGROUP_FILE_MAX, &text, &len) != LUMEN_OK)
		return 0;
	unsigned cpus = cpu_count_of_quota(text);
	free(text);
	return cpus;
}

unsigned cpu_count_cgroup_quota(const char *cgroup_root, const char *cgroup_path)
{
	char dir[PATH_MAX];
	unsigned smallest = 0;
	int n = snprintf(dir, sizeof(dir), "%s%s", cgroup_root, cgroup_path);
	if (n < 0 || n >= (int)sizeof(dir))
		return 0;
	size_t root_len = strlen(cgroup_root);
	for (;;) {
		unsigned cpus = quota_in(dir);
		if (cpus > 0 && (smallest == 0 || cpus < smallest))
			smallest = cpus;
		char *slash = strrchr(dir + root_len, '/');
		if (slash == NULL)
			return smallest;
		*slash = '\0';   /* the parent; root_len bytes: the root itself */
	}
}

/* This process's cgroup v2 path ("0::/a/b" in /proc/self/cgroup) into
 * out; false without one. */
static bool own_cgroup(char *out, size_t size)
{
	char *text;
	size_t len;
	if (file_read_all("/proc/self/cgroup", CGROUP_FILE_MAX, &text, &len) != LUMEN_OK)
		return false;
	bool found = false;
	for (char *line = text; line != NULL && *line != '\0';) {
		char *next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		if (strncmp(line, "0::", 3) == 0 && line[3] == '/') {
			found = (size_t)snprintf(out, size, "%s", line + 3) < size;
			break;
		}
		line = next;
	}
	free(text);
	return found;
}

unsigned cpu_count_usable(void)
{
	unsigned cpus = count_in_mask();
	if (cpus == 0) {
		long online = sysconf(_SC_NPROCESSORS_ONLN);
		cpus = online < 1 ? 1 : (unsigned)online;
	}
	char cgroup[PATH_MAX];
	if (own_cgroup(cgroup, sizeof(cgroup))) {
		/* "/" itself has no cpu.max: the root's quota is read as "" */
		unsigned quota = cpu_count_cgroup_quota("/sys/fs/cgroup",
							strcmp(cgroup, "/") == 0 ? "" : cgroup);
		if (quota > 0 && quota < cpus)
			cpus = quota;
	}
	return cpus;
}
