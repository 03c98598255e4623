#!/bin/bash
# add at 4 and 16 connections against 4 and 16 workers (100k lab): ops/s and commits (fdatasync)
cd /tmp/lab
for conf in "$@"; do
  rm -rf db; cp -r db.pristine db
  /work/main/build/lumend -d 0 -f /tmp/lab/$conf -h ldap://127.0.0.1:4503/ >/dev/null 2>&1 & P=$!
  sleep 1.5
  for c in 4 16; do
    perf stat -e 'syscalls:sys_enter_fdatasync' -p $P -o /tmp/x/pf.txt -- sleep 8 & S=$!
    out=$(/work/main/build/lumenbench -H ldap://127.0.0.1:4503 --entries 100000 -d 8 -w 0 --server-pid $P -m add -c $c --first $((c*1000000)) -D cn=admin,dc=example,dc=com --bind-pw secret 2>&1 | grep -E "operations|latency" | tr '\n' ' ')
    wait $S
    echo "$conf c$c $out fdatasync $(awk '/fdatasync/{print $1}' /tmp/x/pf.txt)"
  done
  kill $P; wait $P
done
