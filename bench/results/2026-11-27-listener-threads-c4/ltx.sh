#!/bin/bash
# interleaved rounds: listener-threads 4/2/1; search c16/c64/c1000 (100k lab, default cache)
cd /tmp/lab
for r in 1 2; do for lt in 4 2 1; do
  rm -rf db; cp -r db.pristine db
  /work/main/build/lumend -d 0 -f /tmp/lab/lt$lt.conf -h ldap://127.0.0.1:4503/ >/dev/null 2>&1 & P=$!
  for i in $(seq 100); do ldapsearch -x -H ldap://127.0.0.1:4503 -b "" -s base 1.1 >/dev/null 2>&1 && break; sleep 0.2; done
  /work/main/build/lumenbench -H ldap://127.0.0.1:4503 -m search --fill sequential -c 16 --entries 100000 -d 8 -w 0 >/dev/null 2>&1
  for c in 16 64 1000; do
    out=$(/work/main/build/lumenbench -H ldap://127.0.0.1:4503 --entries 100000 -d 8 -w 2 --server-pid $P -m search -c $c 2>&1)
    ops=$(echo "$out" | grep -m1 operations | sed 's/.*(\([0-9.]*\) ops.*/\1/')
    lat=$(echo "$out" | grep -m1 latency | awk '{print "avg",$4,"p99",$8}')
    echo "r$r lt$lt c$c ops/s $ops $lat"
  done
  kill $P; wait $P 2>/dev/null
done; done
