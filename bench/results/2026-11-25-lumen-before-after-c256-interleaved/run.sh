#!/usr/bin/env bash
# One-off: Lumen before (803ec8e) vs after, one loaded database each, servers
# started alternately (before, after, x3), rows search-c32/c64/c256, modify-c16.
set -u
OUT=$1; mkdir -p $OUT; w=$(mktemp -d /tmp/ba.XXXXXX); trap 'rm -rf $w' EXIT
A=/work/wt-bench/build
/work/wt-before/build/lumengen -n 100000 --entry-size 500 -o $w/data.ldif
for v in before after; do
  case $v in before) B=/work/wt-before/build S=/work/wt-before/schema ;; after) B=$A S=/work/wt-bench/schema ;; esac
  mkdir -p $w/$v
  { for x in core cosine inetorgperson nis lumen; do echo "include $S/$x.schema"; done
    echo "pidfile $w/$v.pid"; echo "loglevel none"; echo "threads 4"; echo "sizelimit unlimited"; echo "database mdb"; echo "suffix dc=example,dc=com"
    echo "rootdn cn=admin,dc=example,dc=com"; echo "rootpw secret"; echo "directory $w/$v"; echo "maxsize 17179869184"; echo "cachesize off"
    printf 'index objectClass eq\nindex uid eq\nindex cn,sn,mail,givenName pres,eq,sub\n'; } > $w/$v.conf
  $B/lumenadd -q -f $w/$v.conf -l $w/data.ldif >/dev/null 2>&1 || echo "$v load failed"
done
port=39600
for round in 1 2 3 4; do for v in before after; do
  case $v in before) B=/work/wt-before/build ;; after) B=$A ;; esac
  url=ldap://127.0.0.1:$port/; rm -f $w/$v.pid
  $B/lumend -f $w/$v.conf -h $url >/dev/null 2>&1
  for _ in $(seq 100); do ldapsearch -x -H $url -b "" -s base 1.1 >/dev/null 2>&1 && break; sleep 0.1; done
  pid=$(cat $w/$v.pid)
  for row in "search-c256|-m search -c 256" "search-c1000|-m search -c 1000"; do
    name=${row%%|*}; args=${row#*|}
    $A/lumenbench -H $url $args -d 5 -w 2 --entries 100000 --json --server-pid $pid > $OUT/$round-$v-$name.json 2>/dev/null
    python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print('%s %-6s %-12s %8.0f ops/s  p99 %6.2f ms  server %.1f us/op  errors %d' % (sys.argv[2], sys.argv[3], sys.argv[4], j['ops_per_s'], j['latency_ms']['p99'], 1e6*j['server']['cpu_s']/max(1,j['ops']), j['errors']['failed']))" $OUT/$round-$v-$name.json $round $v $name | tee -a $OUT/summary.txt
  done
  kill $pid; for _ in $(seq 300); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
  port=$((port+1))
done; done
