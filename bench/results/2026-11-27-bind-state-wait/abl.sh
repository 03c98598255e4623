#!/bin/bash
# interleaved: base vs new lumend, binds with lastbind (precision 0: every bind writes), 100k lab
cd /tmp/lab
ROUNDS=$1; ROW=$2
declare -A BIN=( [base]=/work/wt-base/build/lumend [new]=/work/main/build/lumend )
for r in $(seq $ROUNDS); do for b in base new; do
  rm -rf db; cp -r db.pristine db
  ${BIN[$b]} -d 0 -f /tmp/lab/lastbind.conf -h ldap://127.0.0.1:4503/ >/dev/null 2>&1 & P=$!
  for i in $(seq 100); do ldapsearch -x -H ldap://127.0.0.1:4503 -b "" -s base 1.1 >/dev/null 2>&1 && break; sleep 0.2; done
  mon0=$(ldapsearch -x -H ldap://127.0.0.1:4503 -D cn=admin,dc=example,dc=com -w secret -b "cn=Database 1,cn=Databases,cn=Monitor" -s base monitoredInfo | grep -E "writes=|commits=" | tr '\n' ' ')
  out=$(/work/main/build/lumenbench -H ldap://127.0.0.1:4503 --entries 100000 -d 8 -w 1 --server-pid $P $ROW 2>&1)
  mon1=$(ldapsearch -x -H ldap://127.0.0.1:4503 -D cn=admin,dc=example,dc=com -w secret -b "cn=Database 1,cn=Databases,cn=Monitor" -s base monitoredInfo | grep -E "writes=|commits=" | tr '\n' ' ')
  ops=$(echo "$out" | grep -m1 operations | sed 's/.*(\([0-9.]*\) ops.*/\1/')
  n=$(echo "$out" | grep -m1 operations | awk '{print $2}')
  lat=$(echo "$out" | grep -m1 latency | awk '{print "avg",$4,"p99",$8}')
  err=$(echo "$out" | grep -m1 results)
  cpu=$(echo "$out" | grep "server " | sed 's/.*CPU \([0-9.]*\) s.*/\1/')
  echo "r$r $b [$ROW] ops/s $ops $lat cpu_us/op $(python3 -c "print(round($cpu*1e6/$n,1))") | $err | $mon1"
  kill $P; sleep 1
done; done
