#!/usr/bin/env python3
"""Without listener-threads, lumend starts one I/O thread per CPU it may
run on: the CPUs of its affinity mask (taskset, cpusets), at most 8, not
every CPU the machine has online. An explicit listener-threads wins.

  - started as it is: as many I/O threads as this process's mask holds
    (at most 8);
  - started on one CPU: 1 I/O thread, and it serves searches;
  - started on two CPUs (where the machine has two): 2;
  - listener-threads 3 on one CPU: 3;
  - each exits 0, clean under ASan and UBSan.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402

import ldap  # noqa: E402

R = h.Results("t_io_threads.py")
MINE = sorted(os.sched_getaffinity(0))


def ready_line(count):
    return f"ready: 2 workers, {count} I/O thread{'' if count == 1 else 's'}"


def on_cpus(cpus):
    """A preexec_fn that gives lumend only these CPUs (as taskset -c)."""
    return lambda: os.sched_setaffinity(0, set(cpus))


def started(label, expected, cpus=None, listener_threads=None):
    d = h.Lumend(listener_threads=listener_threads,
                 preexec_fn=on_cpus(cpus) if cpus is not None else None)
    try:
        R.check(f"{label}: {expected} I/O thread(s)", d.log_has(ready_line(expected)),
                d.log_text()[-600:])
        c = ldap.initialize(f"ldap://127.0.0.1:{d.port}")
        res = c.search_s("", ldap.SCOPE_BASE, "(objectClass=*)", ["namingContexts"])
        R.check(f"{label}: the root DSE answers",
                res and res[0][1].get("namingContexts") == [b"dc=example,dc=com"], str(res))
        c.unbind_s()
    finally:
        d.stop(R)


started("as started", min(len(MINE), 8))
started("one CPU", 1, cpus=MINE[:1])
if len(MINE) >= 2:
    started("two CPUs", 2, cpus=MINE[:2])
started("listener-threads 3 on one CPU", 3, cpus=MINE[:1], listener_threads=3)
R.finish()
