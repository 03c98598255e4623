#!/bin/bash
# interleaved rounds: base vs new lumend (100k lab, default config): ops/s, p99, server CPU us/op
cd /tmp/lab
ROUNDS=$1; IFS=';' read -ra ROWS <<< "$2"
declare -A BIN=( [base]=/work/wt-bench/build/lumend [new]=/work/main/build/lumend )
for r in $(seq $ROUNDS); do order="base new"; [ $((r % 2)) -eq 0 ] && order="new base"; for b in $order; do
  rm -rf db; cp -r db.pristine db
  ${BIN[$b]} -d 0 -f /tmp/lab/lumend.conf -h ldap://127.0.0.1:4503/ >/dev/null 2>&1 & P=$!
  for i in $(seq 100); do ldapsearch -x -H ldap://127.0.0.1:4503 -b "" -s base 1.1 >/dev/null 2>&1 && break; sleep 0.2; done
  /work/main/build/lumenbench -H ldap://127.0.0.1:4503 -m search --fill sequential -c 16 --entries 100000 -d 8 -w 0 >/dev/null 2>&1
  for row in "${ROWS[@]}"; do
    cs0=$(awk '/ctxt/{print $2}' /proc/stat)
    out=$(/work/main/build/lumenbench -H ldap://127.0.0.1:4503 --entries 100000 -d 8 -w 2 --server-pid $P $row 2>&1)
    cs1=$(awk '/ctxt/{print $2}' /proc/stat)
    ops=$(echo "$out" | grep -m1 operations | sed 's/.*(\([0-9.]*\) ops.*/\1/')
    n=$(echo "$out" | grep -m1 operations | awk '{print $2}')
    lat=$(echo "$out" | grep -m1 latency | awk '{print "avg",$4,"p90",$8,"p99",$10,"p99.9",$12}')
    cpu=$(echo "$out" | grep "server " | sed 's/.*CPU \([0-9.]*\) s.*/\1/')
    echo "r$r $b [$row] ops/s $ops $lat cpu_us/op $(python3 -c "print(round($cpu*1e6/$n,1))") cs/op(sys,incl warmup) $(python3 -c "print(round(($cs1-$cs0)/$n,2))")"
  done
  kill $P; wait $P 2>/dev/null
done; done
