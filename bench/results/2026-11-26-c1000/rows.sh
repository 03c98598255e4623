#!/bin/bash
# rows.sh OUT ROUNDS DUR name=bin,conf ...  : search c1, c32, c1000 and compare c16 per server
set -u
out=$1 rounds=$2 dur=$3; shift 3; mkdir -p $out; W=${WORK:-/tmp/c1000/w}; B=$(cd "${BUILD:-build}" && pwd)   # WORK: setup.sh's directory
for round in $(seq $rounds); do for srv in "$@"; do
  name=${srv%%=*}; spec=${srv#*=}; bin=${spec%%,*}; conf=${spec#*,}
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'); url=ldap://127.0.0.1:$port/
  rm -f $W/lumen/lumend.pid; $bin -f $conf -h $url >/dev/null 2>&1
  for _ in $(seq 100); do ldapsearch -x -H $url -b "" -s base 1.1 >/dev/null 2>&1 && break; sleep 0.1; done
  pid=$(cat $W/lumen/lumend.pid)
  $B/lumenbench -H $url -m search -c 16 -d 2 -w 0 --fill sequential >/dev/null 2>&1
  line="$round $name"
  for row in "search -c 1" "search -c 32" "compare -c 16" "search -c 1000"; do
    $B/lumenbench -H $url -m $row -d $dur -w 1 --json --server-pid $pid > $out/$round-$name-${row// /}.json 2>/dev/null
    line="$line | $(python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print('%s %6.0f p99/avg %.1f' % (sys.argv[2], j['ops_per_s'], j['latency_ms']['p99']/max(j['latency_ms']['avg'],1e-9)))" $out/$round-$name-${row// /}.json "${row// /}")"
  done
  echo "$line load $(cut -d' ' -f1 /proc/loadavg)"
  kill $pid; for _ in $(seq 300); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
done; done | tee -a $out/summary.txt
