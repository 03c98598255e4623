#!/usr/bin/env bash
# Run-to-completion reads: OpenLDAP, Lumen with `inline-reads off` and Lumen
# with `inline-reads on` (the default), started one after the other, rounds
# interleaved, on one 100k-entry database each (entry cache off: `cachesize
# off`; OpenLDAP back-mdb has none). threads 4 for both, as compare.sh.
# usage: run.sh OUTDIR [ROUNDS] [DURATION]   (BUILD=path/to/build, default build)
set -u
OUT=$1; ROUNDS=${2:-2}; DUR=${3:-5}
B=$(cd "${BUILD:-build}" && pwd); S=$(cd "$B/../schema" && pwd)
mkdir -p "$OUT"; w=$(mktemp -d /tmp/rtc-bench.XXXXXX); trap 'rm -rf $w' EXIT
N=100000
"$B/lumengen" -n $N --entry-size 500 -o $w/data.ldif
idx() { printf 'index objectClass eq\nindex uid eq\nindex cn,sn,mail,givenName pres,eq,sub\n'; }
for v in off on; do
  mkdir -p $w/$v
  { for x in core cosine inetorgperson nis lumen; do echo "include $S/$x.schema"; done
    echo "pidfile $w/$v.pid"; echo "loglevel none"; echo "threads 4"; echo "sizelimit unlimited"
    echo "inline-reads $v"
    echo "database mdb"; echo "suffix dc=example,dc=com"; echo "rootdn cn=admin,dc=example,dc=com"
    echo "rootpw secret"; echo "directory $w/$v"; echo "maxsize 17179869184"; echo "cachesize off"; idx; } > $w/$v.conf
  "$B/lumenadd" -q -f $w/$v.conf -l $w/data.ldif >/dev/null 2>&1 || echo "$v load failed"
done
mkdir -p $w/openldap
{ for x in core cosine inetorgperson nis; do echo "include /etc/ldap/schema/$x.schema"; done
  echo "modulepath /usr/lib/ldap"; echo "moduleload back_mdb"; echo "pidfile $w/openldap.pid"
  echo "argsfile $w/openldap.args"; echo "threads 4"; echo "loglevel 0"; echo "sizelimit unlimited"
  echo "database mdb"; echo "suffix dc=example,dc=com"; echo "rootdn cn=admin,dc=example,dc=com"
  echo "rootpw secret"; echo "directory $w/openldap"; echo "maxsize 17179869184"; idx; } > $w/openldap.conf
slapadd -q -f $w/openldap.conf -l $w/data.ldif >/dev/null 2>&1 || echo "openldap load failed"
ulimit -n 65536 2>/dev/null || ulimit -n 4096
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
rows=("search-c1|-m search -c 1" "search-c4|-m search -c 4" "search-c32|-m search -c 32"
      "search-c1000|-m search -c 1000" "auth-c16|-m auth -c 16" "bind-c16|-m bind -c 16"
      "compare-c16|-m compare -c 16")
for round in $(seq $ROUNDS); do for v in openldap off on; do
  port=$(free_port); url=ldap://127.0.0.1:$port/; rm -f $w/$v.pid
  if [ $v = openldap ]; then slapd -h $url -f $w/openldap.conf; else "$B/lumend" -f $w/$v.conf -h $url >>$OUT/lumend-$v.log 2>&1; fi
  for _ in $(seq 100); do ldapsearch -x -H $url -b "" -s base 1.1 >/dev/null 2>&1 && break; sleep 0.1; done
  [ -s $w/$v.pid ] || { echo "$round $v did not start (port $port)" | tee -a $OUT/summary.txt; continue; }
  pid=$(cat $w/$v.pid)
  "$B/lumenbench" -H $url -m search -c 4 -d 3 -w 0 --fill sequential --entries $N >/dev/null 2>&1
  for row in "${rows[@]}"; do
    name=${row%%|*}; args=${row#*|}
    "$B/lumenbench" -H $url $args -d $DUR -w 2 --entries $N --json --server-pid $pid > $OUT/$round-$v-$name.json 2>/dev/null
    python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print('%s %-8s %-13s %8.0f ops/s  avg %6.2f ms  p99 %6.2f ms  server %.1f us/op  errors %d' % (sys.argv[2], sys.argv[3], sys.argv[4], j['ops_per_s'], j['latency_ms']['avg'], j['latency_ms']['p99'], 1e6*j['server']['cpu_s']/max(1,j['ops']), j['errors']['failed']))" $OUT/$round-$v-$name.json $round $v $name | tee -a $OUT/summary.txt
  done
  kill $pid; for _ in $(seq 300); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
done; done
