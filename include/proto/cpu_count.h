/*
 * cpu_count.h — how many CPUs this process may use (proto layer).
 *
 * Counted from the calling thread's affinity mask, so a daemon started
 * under taskset, numactl or a cpuset cgroup sizes its thread pools to the
 * CPUs it is given rather than to every CPU the machine has online; the
 * online count is the fallback where the mask cannot be read. A cgroup v2
 * CPU quota (cpu.max: Docker's --cpus, a Kubernetes CPU limit) on the
 * process's cgroup or an ancestor lowers it to the quota rounded up.
 *
 * Ownership: nothing is allocated that outlives a call.
 * Thread-safety: no shared state; the mask is the calling thread's (call it
 * before starting threads, which inherit it).
 * Errors: none; a file that cannot be read or parsed sets no limit, and the
 * answer is at least 1.
 */
#ifndef LUMEN_CPU_COUNT_H
#define LUMEN_CPU_COUNT_H

/* CPUs in the calling thread's mask (else online), capped by the quota of
 * this process's cgroup; at least 1. */
unsigned cpu_count_usable(void);

/* The CPUs a cpu.max text ("QUOTA PERIOD", microseconds) allows, rounded
 * up; 0 for "max" (no quota) or text that is not a quota. */
unsigned cpu_count_of_quota(const char *cpu_max);

/*
 * The smallest quota on cgroup_path (as /proc/self/cgroup gives it, "/a/b")
 * and its ancestors, read from cgroup_root ("/sys/fs/cgroup"): the
 * cpu.max of root/a/b, root/a and root. 0 when none sets one.
 */
unsigned cpu_count_cgroup_quota(const char *cgroup_root, const char *cgroup_path);

#endif
