#!/usr/bin/env bash
# tail.sh — how a threading model alone shapes tail latency: lumen-canned
# with CPU work per answer (--work-us), per-thread event loops against one
# shared ready set (--model), many connections from one lumenbench on the
# same machine. No server code and no data: only the model, the scheduler
# and the client.
#
#   bench/tail.sh [--work "0 20"] [--models "loops shared"] [--threads "1 4"]
#                 [--connections "64 1000"] [--duration S] [--rounds N]
#                 [--placement "shared pinned"] [--out FILE]
#
# --placement: `shared` lets server and client run on any CPU (as
# compare.sh does); `pinned` puts the server on CPU 0 and lumenbench on
# CPU 1 (taskset), so neither preempts the other.
#
# Prints (and appends to FILE) one line per run: work, model, threads,
# placement, connections, ops/s, average, p50, p99 (ms), p99/average.
# Rounds interleave the configurations. BUILD=DIR picks the binaries.
#
# What it showed on the 2-CPU VM (bench/results/2026-11-27-tail-threads/):
# with 20 us of work, four per-thread loops sharing two CPUs serve a loop's
# connections only while its thread is on a CPU: p99 about 2x the average
# at 1,000 connections, lumend's ratio; one loop serves them in turn (p99
# about 1.1x). Four threads on one shared set do no better: the spread
# comes from server and client preempting each other on two CPUs, and it
# goes (1.2x) once they are pinned apart.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$root/$BUILD ;; esac
work_list="0 20" models="loops shared" threads_list="1 4" conns_list="64 1000" duration=8 rounds=1 placements=shared out=/dev/null

while [ $# -gt 0 ]; do
  case $1 in
    --work) work_list=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --threads) threads_list=$2; shift 2 ;;
    --connections) conns_list=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --placement) placements=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: bench/tail.sh [--work LIST] [--models LIST] [--threads LIST]" \
            "[--connections LIST] [--duration S] [--rounds N] [--placement LIST]" \
            "[--out FILE]" >&2; exit 2 ;;
  esac
done

canned_pid=
work_dir=$(mktemp -d)
cleanup() { [ -n "$canned_pid" ] && kill "$canned_pid" 2>/dev/null; rm -rf "$work_dir"; return 0; }
trap cleanup EXIT

# Start lumen-canned on a free port; sets canned_pid and url.
start_canned() {
  $server_cpu "$BUILD/lumen-canned" -p 0 --model "$1" --threads "$2" --work-us "$3" \
    > "$work_dir/port" &
  canned_pid=$!
  for _ in $(seq 100); do [ -s "$work_dir/port" ] && break; sleep 0.05; done
  url=ldap://127.0.0.1:$(awk '{print $2}' "$work_dir/port")
}

printf '%-7s %-6s %-7s %-9s %-11s %10s %9s %9s %9s %9s\n' work_us model threads placement \
  connections ops/s avg_ms p50_ms p99_ms p99/avg | tee -a "$out"
for round in $(seq "$rounds"); do
  for placement in $placements; do
  server_cpu= client_cpu=
  [ "$placement" = pinned ] && server_cpu="taskset -c 0" client_cpu="taskset -c 1"
  for work in $work_list; do
    for model in $models; do
    for threads in $threads_list; do
      start_canned "$model" "$threads" "$work"
      for c in $conns_list; do
        $client_cpu "$BUILD/lumenbench" -H "$url" -m search --fill random -c "$c" -d "$duration" -w 2 \
          --json > "$work_dir/run.json"
        python3 - "$work_dir/run.json" "$work" "$model" "$threads" "$placement" "$c" \
          <<'PY' | tee -a "$out"
import json, sys
r = json.load(open(sys.argv[1])); lat = r["latency_ms"]
ratio = lat["p99"] / lat["avg"] if lat["avg"] > 0 else float("nan")
print("%-7s %-6s %-7s %-9s %-11s %10.0f %9.3f %9.3f %9.3f %9.2f" % (*sys.argv[2:7],
      r["ops_per_s"], lat["avg"], lat["p50"], lat["p99"], ratio))
PY
      done
      kill "$canned_pid"
      wait "$canned_pid" 2>/dev/null || true
      canned_pid=
    done
    done
  done
  done
  [ "$round" -lt "$rounds" ] && echo "# round $((round + 1))" | tee -a "$out"
done
