#!/bin/bash
# Search at 1,000 connections, servers started one after the other in each
# round (rounds interleaved), on the databases setup.sh made.
# Usage: run.sh WORKDIR OUTDIR ROUNDS DURATION SERVER...
#   SERVER: openldap, or name=/path/to/lumend[,config] (e.g. before=/tmp/lumend-base;
#   the config defaults to WORKDIR/lumen/lumend.conf)
# Prints one line per run; per-thread CPU of the server in OUTDIR/*.threads.
set -u
work=$1 out=$2 rounds=$3 dur=$4; shift 4
BUILD=${BUILD:-build}
mkdir -p "$out"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
thread_cpu() {  # tid comm ticks
  for t in /proc/$1/task/*; do
    awk -v t="${t##*/}" '{ sub(/^[^)]*\) /, ""); print t, $12 + $13 }' "$t/stat" 2>/dev/null |
      sed "s/^/$(cat "$t/comm" 2>/dev/null | tr ' ' _) /"
  done
}
for round in $(seq "$rounds"); do
  for srv in "$@"; do
    name=${srv%%=*}; port=$(free_port); url=ldap://127.0.0.1:$port/
    if [ "$name" = openldap ]; then
      rm -f "$work/openldap/slapd.pid"
      slapd -h "$url" -f "$work/openldap/slapd.conf"; pidfile=$work/openldap/slapd.pid
    else
      rm -f "$work/lumen/lumend.pid"
      spec=${srv#*=}; bin=${spec%%,*}; conf=$work/lumen/lumend.conf
      [ "$bin" != "$spec" ] && conf=${spec#*,}
      "$bin" -f "$conf" -h "$url" >> "$out/lumend-$name.log" 2>&1
      pidfile=$work/lumen/lumend.pid
    fi
    for _ in $(seq 100); do ldapsearch -x -H "$url" -b "" -s base 1.1 >/dev/null 2>&1 && break; sleep 0.1; done
    pid=$(cat "$pidfile")
    "$BUILD/lumenbench" -H "$url" -m search -c 16 -d 3 -w 0 --fill sequential >/dev/null 2>&1
    thread_cpu "$pid" > "$out/$round-$name.threads0"
    "$BUILD/lumenbench" -H "$url" -m search -c 1000 -d "$dur" -w 2 --json --server-pid "$pid" \
      > "$out/$round-$name.json" 2>/dev/null
    thread_cpu "$pid" > "$out/$round-$name.threads1"
    python3 - "$out/$round-$name.json" "$round" "$name" "$(cat /proc/loadavg | cut -d' ' -f1)" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); l = j['latency_ms']; pc = j['per_connection']
print('%s %-9s %8.0f ops/s avg %6.1f p50 %6.1f p90 %6.1f p99 %6.1f ms p99/avg %.2f '
      'conn ops min/mean/max %d/%.0f/%d srv %.1f us/op load %s' % (
      sys.argv[2], sys.argv[3], j['ops_per_s'], l['avg'], l['p50'], l['p90'], l['p99'],
      l['p99'] / max(l['avg'], 1e-9), pc['ops_min'], j['ops'] / max(pc['connections'], 1),
      pc['ops_max'], 1e6 * j['server']['cpu_s'] / max(1, j['ops']), sys.argv[4]))
PY
    kill "$pid"; for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  done
done | tee -a "$out/summary.txt"
