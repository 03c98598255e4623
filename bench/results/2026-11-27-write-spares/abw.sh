#!/bin/bash
# interleaved: base vs new lumend, writes (100k lab, threads 4): ops/s, latency, commits (fdatasync)
cd /tmp/lab
ROUNDS=$1; IFS=';' read -ra ROWS <<< "$2"
declare -A BIN=( [base]=/work/wt-base/build/lumend [new]=/work/main/build/lumend )
first=1000000
for r in $(seq $ROUNDS); do for b in base new; do
  rm -rf db; cp -r db.pristine db
  ${BIN[$b]} -d 0 -f /tmp/lab/lumend.conf -h ldap://127.0.0.1:4503/ >/dev/null 2>&1 & P=$!
  for i in $(seq 100); do ldapsearch -x -H ldap://127.0.0.1:4503 -b "" -s base 1.1 >/dev/null 2>&1 && break; sleep 0.2; done
  for row in "${ROWS[@]}"; do
    first=$((first + 1000000))
    perf stat -e 'syscalls:sys_enter_fdatasync' -p $P -o /tmp/x/pf.txt -- sleep 8 & S=$!
    out=$(/work/main/build/lumenbench -H ldap://127.0.0.1:4503 --entries 100000 -d 8 -w 0 --server-pid $P --first $first -D cn=admin,dc=example,dc=com --bind-pw secret $row 2>&1)
    wait $S
    ops=$(echo "$out" | grep -m1 operations | sed 's/.*(\([0-9.]*\) ops.*/\1/')
    n=$(echo "$out" | grep -m1 operations | awk '{print $2}')
    lat=$(echo "$out" | grep -m1 latency | awk '{print "avg",$4,"p99",$8}')
    cpu=$(echo "$out" | grep "server " | sed 's/.*CPU \([0-9.]*\) s.*/\1/')
    echo "r$r $b [$row] ops/s $ops $lat cpu_us/op $(python3 -c "print(round($cpu*1e6/$n,1))") commits $(awk '/fdatasync/{print $1}' /tmp/x/pf.txt)"
  done
  kill $P; wait $P 2>/dev/null
done; done
