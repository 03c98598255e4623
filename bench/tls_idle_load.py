#!/usr/bin/python3
"""tls_idle_load.py — many idle ldaps:// connections against conn_total_memory.

    BUILD=build bench/tls_idle_load.py [--connections N] [--total BYTES]
                                       [--starttls N]

Starts lumend (the harness of tests/integration: $BUILD/lumend on free
loopback ports, a self-signed RSA-2048 certificate) with conn_total_memory
BYTES, opens N ldaps:// connections one after another (and --starttls
plain ones that start TLS), each answered one search and then left idle,
and reports: how many were admitted and refused, cn=Memory* figures from
/metrics (total, base, tls, scratch, peak) against the bound, lumend's
VmRSS growth over the run, and the RSS growth per admitted connection next
to the TLS and base bytes counted per connection. Run as a user whose
RLIMIT_NOFILE covers N (the script raises its soft limit to the hard one).
"""
import argparse
import os
import re
import resource
import ssl
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "integration"))
import t_tls_memory as tm  # noqa: E402
from lumen_harness import Results, read_responses, search  # noqa: E402


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def figures(srv):
    with urllib.request.urlopen(f"http://127.0.0.1:{srv.mport}/metrics", timeout=10) as r:
        text = r.read().decode()
    return {m.group(1): int(m.group(2))
            for m in re.finditer(r"^lumen_connection_memory_(\w+) (\d+)$", text, re.M)}


def open_one(srv, starttls):
    try:
        if starttls:
            s, code = srv.starttls()
            if code != 0:
                s.close()
                return None
            s = tm.client_context().wrap_socket(s)
        else:
            s = srv.ldaps()
        s.sendall(search(2, attrs=("1.1",)))
        r, _ = read_responses(s, 2, timeout=20)
        if len(r) == 2 and r[-1].code == 0:
            return s
        s.close()
    except (OSError, ssl.SSLError):
        pass
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--connections", type=int, default=3000)
    ap.add_argument("--starttls", type=int, default=0)
    ap.add_argument("--total", type=int, default=1 << 30)
    a = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    results = Results("tls_idle_load")
    srv = tm.TlsServer(f"conn_total_memory {a.total}\nconn_max 0")
    try:
        time.sleep(0.5)
        rss0 = rss_kib(srv.proc.pid)
        f0 = figures(srv)
        held, refused = [], 0
        started = time.time()
        for i in range(a.connections + a.starttls):
            s = open_one(srv, i >= a.connections)
            if s is None:
                refused += 1
            else:
                held.append(s)
        took = time.time() - started
        time.sleep(1.0)
        f = figures(srv)
        rss = rss_kib(srv.proc.pid)
        n = len(held)
        grew = (rss - rss0) * 1024
        print(f"build {os.environ.get('BUILD', 'build')}: {n} TLS connections admitted, "
              f"{refused} refused, in {took:.1f} s; conn_total_memory {a.total}")
        print(f"  /metrics: total {f.get('bytes')} (base {f.get('base_bytes')}, "
              f"tls {f.get('tls_bytes', 'n/a')}, queued {f.get('queued_bytes')}, "
              f"output {f.get('output_bytes')}, scratch {f.get('scratch_bytes', 'n/a')}); "
              f"peak {f.get('peak_bytes')}; refused_total {f.get('refused_total')}")
        if n > 0:
            counted = f.get('bytes', 0) - f0.get('bytes', 0)
            print(f"  per connection: counted {counted / n:.0f} bytes "
                  f"(tls {f.get('tls_bytes', 0) / n:.0f}, base {f.get('base_bytes', 0) / n:.0f}); "
                  f"VmRSS grew {grew / n:.0f} bytes ({rss0} KiB -> {rss} KiB)")
        for s in held:
            s.close()
        time.sleep(1.0)
        f = figures(srv)
        print(f"  all closed: total {f.get('bytes')}, tls {f.get('tls_bytes', 'n/a')}")
    finally:
        srv.stop(results)


if __name__ == "__main__":
    main()
