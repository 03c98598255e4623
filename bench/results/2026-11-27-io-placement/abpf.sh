#!/bin/bash
# as abp.sh, but lumend runs in a memory cgroup smaller than its map (page faults on reads)
cd /tmp/lab
ROUNDS=$1; LIMIT=$2; IFS=';' read -ra ROWS <<< "$3"
CG=/sys/fs/cgroup/memory/lumenlab
mkdir -p $CG; echo $LIMIT > $CG/memory.limit_in_bytes
declare -A BIN=( [base]=/work/wt-base/build/lumend [new]=/work/main/build/lumend )
for r in $(seq $ROUNDS); do for b in base new; do
  rm -rf db; cp -r db.pristine db; sync; echo 1 > /proc/sys/vm/drop_caches
  sh -c "echo \$\$ > $CG/cgroup.procs; exec ${BIN[$b]} -d 0 -f /tmp/lab/lumend.conf -h ldap://127.0.0.1:4503/" >/dev/null 2>&1 & P=$!
  for i in $(seq 100); do ldapsearch -x -H ldap://127.0.0.1:4503 -b "" -s base 1.1 >/dev/null 2>&1 && break; sleep 0.2; done
  /work/main/build/lumenbench -H ldap://127.0.0.1:4503 -m search -c 16 --entries 100000 -d 5 -w 0 >/dev/null 2>&1
  for row in "${ROWS[@]}"; do
    f0=$(awk '/total_pgmajfault/{print $2}' $CG/memory.stat)
    out=$(/work/main/build/lumenbench -H ldap://127.0.0.1:4503 --entries 100000 -d 8 -w 2 --server-pid $P $row 2>&1)
    f1=$(awk '/total_pgmajfault/{print $2}' $CG/memory.stat)
    ops=$(echo "$out" | grep -m1 operations | sed 's/.*(\([0-9.]*\) ops.*/\1/')
    n=$(echo "$out" | grep -m1 operations | awk '{print $2}')
    lat=$(echo "$out" | grep -m1 latency | awk '{print "avg",$4,"p99",$8}')
    cpu=$(echo "$out" | grep "server " | sed 's/.*CPU \([0-9.]*\) s.*/\1/')
    echo "r$r $b [$row] ops/s $ops $lat cpu_us/op $(python3 -c "print(round($cpu*1e6/$n,1))") majfault/op(incl warmup) $(python3 -c "print(round(($f1-$f0)/$n,3))")"
  done
  kill $P; wait $P 2>/dev/null
done; done
