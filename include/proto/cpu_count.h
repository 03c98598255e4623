/*
 * cpu_count.h — how many CPUs this process may run on (proto layer).
 *
 * Counted from the calling thread's affinity mask, so a daemon started
 * under taskset, numactl or a cpuset cgroup sizes its thread pools to the
 * CPUs it is given rather than to every CPU the machine has online; the
 * online count is the fallback where the mask cannot be read.
 *
 * Ownership: nothing is allocated that outlives the call.
 * Thread-safety: no shared state; the answer is the calling thread's mask
 * (call it before starting threads, which inherit it).
 * Errors: none; the answer is at least 1.
 */
#ifndef LUMEN_CPU_COUNT_H
#define LUMEN_CPU_COUNT_H

/* CPUs in the calling thread's affinity mask, else online; at least 1. */
unsigned cpu_count_usable(void);

#endif
