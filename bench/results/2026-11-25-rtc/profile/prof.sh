#!/bin/bash
# baseline profile: lumend (given binary) on 100k entries, cachesize off, perf record -g during search c32
set -u
BIN=$1; TAG=$2; B=/work/wt-rtc/build; S=/work/wt-rtc/schema; w=/tmp/rtc/prof
[ -f $w/data.ldif ] || $B/lumengen -n 100000 --entry-size 500 -o $w/data.ldif
mkdir -p $w/db-$TAG
{ for x in core cosine inetorgperson nis lumen; do echo "include $S/$x.schema"; done
  echo "pidfile $w/$TAG.pid"; echo "loglevel none"; echo "threads 4"; echo "sizelimit unlimited"
  [ -n "${EXTRA:-}" ] && echo "$EXTRA"
  echo "database mdb"; echo "suffix dc=example,dc=com"; echo "rootdn cn=admin,dc=example,dc=com"
  echo "rootpw secret"; echo "directory $w/db-$TAG"; echo "maxsize 17179869184"; echo "cachesize off"
  printf 'index objectClass eq\nindex uid eq\nindex cn,sn,mail,givenName pres,eq,sub\n'; } > $w/$TAG.conf
[ -f $w/db-$TAG/data.mdb ] || $B/lumenadd -q -f $w/$TAG.conf -l $w/data.ldif >/dev/null 2>&1
url=ldap://127.0.0.1:39690/
$BIN -f $w/$TAG.conf -h $url
for _ in $(seq 100); do ldapsearch -x -H $url -b "" -s base 1.1 >/dev/null 2>&1 && break; sleep 0.1; done
pid=$(cat $w/$TAG.pid)
$B/lumenbench -H $url -m search -c 4 -d 3 -w 0 --fill sequential >/dev/null 2>&1
for m in "search -c 32" "compare -c 16" "bind -c 16"; do
  $B/lumenbench -H $url -m $m -d 6 -w 1 > $w/$TAG-bench-${m// /_}.txt 2>&1 &
  bp=$!
  sleep 1.5
  perf record -g -o $w/$TAG-${m%% *}.data -p $pid -- sleep 4 >/dev/null 2>&1
  wait $bp
done
kill $pid
for f in search compare bind; do perf report -i $w/$TAG-$f.data --no-children --sort symbol --stdio 2>/dev/null | grep -v "^$" | grep "%" | head -40 > $w/$TAG-$f-top.txt; done
