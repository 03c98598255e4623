/* cpu_count.c — see cpu_count.h. */
#include "cpu_count.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

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

unsigned cpu_count_usable(void)
{
	unsigned in_mask = count_in_mask();
	if (in_mask > 0)
		return in_mask;
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	return online < 1 ? 1 : (unsigned)online;
}
