#!/bin/bash
# perf record -g and perf sched on lumend under search at 1,000 connections.
# Usage: profile.sh WORKDIR OUTDIR LUMEND [CONFIG]
set -u
work=$1 out=$2 bin=$3 conf=${4:-$1/lumen/lumend.conf}
BUILD=${BUILD:-build}
mkdir -p "$out"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
url=ldap://127.0.0.1:$port/
rm -f "$work/lumen/lumend.pid"
"$bin" -f "$conf" -h "$url" > "$out/lumend.log" 2>&1
for _ in $(seq 100); do ldapsearch -x -H "$url" -b "" -s base 1.1 >/dev/null 2>&1 && break; sleep 0.1; done
pid=$(cat "$work/lumen/lumend.pid")
"$BUILD/lumenbench" -H "$url" -m search -c 16 -d 3 -w 0 --fill sequential >/dev/null 2>&1
"$BUILD/lumenbench" -H "$url" -m search -c 1000 -d 16 -w 2 --server-pid "$pid" > "$out/bench.txt" 2>&1 &
bench=$!
sleep 4
for t in /proc/$pid/task/*; do echo "$(cat $t/comm) $(awk '{sub(/^[^)]*\) /,""); print $12+$13, $37}' $t/stat)"; done > "$out/threads0"
perf record -g -p "$pid" -o "$out/perf.data" -- sleep 5 > /dev/null 2>&1
for t in /proc/$pid/task/*; do echo "$(cat $t/comm) $(awk '{sub(/^[^)]*\) /,""); print $12+$13, $37}' $t/stat)"; done > "$out/threads1"
perf sched record -o "$out/sched.data" -- sleep 3 > /dev/null 2>&1
wait $bench
kill "$pid"
perf report -i "$out/perf.data" --no-children --sort symbol --stdio 2>/dev/null | grep -v '^$' | head -80 > "$out/top-self.txt"
perf report -i "$out/perf.data" --children --sort symbol --stdio -g none 2>/dev/null | grep -v '^$' | head -60 > "$out/top-children.txt"
perf sched latency -i "$out/sched.data" --sort max 2>/dev/null | head -40 > "$out/sched-latency.txt"
paste "$out/threads0" "$out/threads1" | awk '{print $1, $5-$2, "ticks; last cpu", $6}' > "$out/thread-cpu.txt"
