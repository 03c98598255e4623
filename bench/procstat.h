/*
 * procstat.h — another process's CPU time and memory from /proc (bench).
 *
 * lumenbench --server-pid and compare.sh use it for the server-side figures
 * next to the client's own: CPU seconds spent by the server in the measured
 * window, its resident and peak memory.
 *
 * Ownership: nothing allocated. Thread-safety: reentrant.
 * Caveats: Linux only; the process must be readable by us.
 */
#ifndef LUMEN_BENCH_PROCSTAT_H
#define LUMEN_BENCH_PROCSTAT_H

#include <stdint.h>

/* User + system CPU seconds of pid. LUMEN_ENOTFOUND if there is no such
 * process, LUMEN_EMALFORMED if /proc/pid/stat cannot be read as expected. */
int procstat_cpu_seconds(int pid, double *seconds);

/* VmRSS and VmHWM of pid in KiB. LUMEN_ENOTFOUND, LUMEN_EMALFORMED. */
int procstat_memory(int pid, uint64_t *rss_kib, uint64_t *hwm_kib);

#endif
