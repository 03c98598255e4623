#!/bin/bash
# cpuop.sh PORT PIDFILE MODE [extra lumenbench args]: ops/s and server CPU µs per op
port=$1 pid=$(cat $2) mode=$3; shift 3
t0=$(awk '{print $14+$15}' /proc/$pid/stat)
out=$(/work/main/build/lumenbench -H ldap://127.0.0.1:$port -m $mode -d 5 -w 0 --entries 100000 "$@" 2>&1)
t1=$(awk '{print $14+$15}' /proc/$pid/stat)
ops=$(echo "$out" | awk '/operations/ {print $2; exit}')
rate=$(echo "$out" | sed -n 's/.*(\([0-9.]*\) ops\/s).*/\1/p' | head -1)
p99=$(echo "$out" | grep -i "p99" | head -1 | tr -s ' ')
echo "$mode $*: $rate ops/s, cpu $(( (t1-t0)*10000000/ops )) µs/op ($p99)"
