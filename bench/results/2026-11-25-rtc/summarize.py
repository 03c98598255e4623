#!/usr/bin/env python3
"""Median over rounds of run.sh's JSON files: ops/s, avg and p99 latency,
server CPU per operation; ratios Lumen (on, off) / OpenLDAP and on / off."""
import glob
import json
import os
import statistics
import sys

raw = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "raw")
rows = ["search-c1", "search-c4", "search-c32", "search-c1000", "auth-c16", "bind-c16",
        "compare-c16"]
data = {}
for path in glob.glob(os.path.join(raw, "*.json")):
    rnd, server, name = os.path.basename(path)[:-5].split("-", 2)
    try:
        j = json.load(open(path))
    except ValueError:
        continue
    cpu = 1e6 * j["server"]["cpu_s"] / max(1, j["ops"]) if j["server"].get("available") else 0
    data.setdefault((server, name), []).append(
        (j["ops_per_s"], j["latency_ms"]["avg"], j["latency_ms"]["p99"], cpu, j["errors"]["failed"]))


def med(server, name, i):
    v = [x[i] for x in data.get((server, name), [])]
    return statistics.median(v) if v else float("nan")


print("| row | OpenLDAP ops/s | off ops/s | on ops/s | on/OpenLDAP | on/off | "
      "p99 OL / off / on (ms) | avg on (ms) | CPU µs/op OL / off / on | rounds |")
print("|---|---|---|---|---|---|---|---|---|---|")
for name in rows:
    ol, off, on = (med(s, name, 0) for s in ("openldap", "off", "on"))
    p = [med(s, name, 2) for s in ("openldap", "off", "on")]
    c = [med(s, name, 3) for s in ("openldap", "off", "on")]
    n = min(len(data.get((s, name), [])) for s in ("openldap", "off", "on"))
    print(f"| {name} | {ol:.0f} | {off:.0f} | {on:.0f} | {on / ol:.2f} | {on / off:.2f} | "
          f"{p[0]:.1f} / {p[1]:.1f} / {p[2]:.1f} | {med('on', name, 1):.2f} | "
          f"{c[0]:.1f} / {c[1]:.1f} / {c[2]:.1f} | {n} |")
errors = sum(x[4] for v in data.values() for x in v)
print(f"\nfailed operations over all runs: {errors}")
