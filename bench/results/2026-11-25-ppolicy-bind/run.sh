#!/usr/bin/env bash
# Bind cost with `overlay ppolicy` (lockout on, no failures): Lumen before
# (BEFORE=path of the old lumend) and after (this tree's build), and
# OpenLDAP 2.5 with the same overlay, on the same 100k entries (entry cache
# off), bind-c16 and auth-c16 with one lumenbench, interleaved ROUNDS times.
# Usage: run.sh OUTDIR   (env: BEFORE, B=build dir, D, W, ROUNDS, PERF=1
# records `perf record -g` of each Lumen server into OUTDIR/perf-*.data,
# PLAIN=1 adds OpenLDAP and Lumen (after) without the overlay, on the same
# database: the lead the overlay should keep)
set -u
R=$(cd "$(dirname "$0")/../../.." && pwd) B=${B:-$R/build} OUT=$1 D=${D:-5} W=${W:-2}
BEFORE=${BEFORE:-} ROUNDS=${ROUNDS:-2}
mkdir -p "$OUT"; w=$(mktemp -d /tmp/ppb.XXXXXX); trap 'rm -rf $w' EXIT
$B/lumengen -n 100000 --entry-size 500 -o $w/data.ldif
P=cn=default,ou=policies,dc=example,dc=com
printf '%s\n' "" "dn: ou=policies,dc=example,dc=com" "objectClass: top" "objectClass: organizationalUnit" "ou: policies" "" "dn: $P" "objectClass: top" "objectClass: organizationalRole" "objectClass: pwdPolicy" "cn: default" "pwdAttribute: userPassword" "pwdLockout: TRUE" "pwdMaxFailure: 5" "pwdLockoutDuration: 300" "pwdFailureCountInterval: 300" "" >> $w/data.ldif
conf() { # server [plain]
  local s=$1 plain=${2:-}
  if [ $s = openldap ]; then
    for x in core cosine inetorgperson nis; do echo "include /etc/ldap/schema/$x.schema"; done
    echo "modulepath /usr/lib/ldap"; echo "moduleload back_mdb"; echo "moduleload ppolicy"; echo "loglevel 0"
    echo "pidfile $w/$s.pid"; echo "argsfile $w/$s.args"
  else
    for x in core cosine inetorgperson nis lumen; do echo "include $R/schema/$x.schema"; done
    echo "pidfile $w/$s.pid"; echo "loglevel none"
  fi
  echo "threads 4"; echo "sizelimit unlimited"; echo "database mdb"; echo "suffix dc=example,dc=com"
  echo "rootdn cn=admin,dc=example,dc=com"; echo "rootpw secret"; echo "directory $w/$s-db"; echo "maxsize 17179869184"
  [ $s = lumen ] && echo "cachesize off"
  printf 'index objectClass eq\nindex uid eq\nindex cn,sn,mail,givenName pres,eq,sub\n'
  [ -z "$plain" ] && printf 'overlay ppolicy\nppolicy_default %s\nppolicy_use_lockout\n' $P
  return 0
}
for s in openldap lumen; do mkdir -p $w/$s-db; conf $s > $w/$s.conf; conf $s plain > $w/$s-plain.conf; done
slapadd -q -f $w/openldap.conf -l $w/data.ldif >/dev/null 2>&1 || echo slapadd failed
$B/lumenadd -q -f $w/lumen.conf -l $w/data.ldif >/dev/null 2>&1 || echo lumenadd failed
servers="openldap lumen-after"; [ -n "$BEFORE" ] && servers="openldap lumen-before lumen-after"
[ "${PLAIN:-0}" = 1 ] && servers="$servers openldap-plain lumen-plain"
for round in $(seq $ROUNDS); do for v in $servers; do
  # a port free now (other benchmarks share the machine)
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  url=ldap://127.0.0.1:$port/; s=${v%%-*}; rm -f $w/$s.pid
  case $v in
    openldap) slapd -h $url -f $w/openldap.conf ;;
    openldap-plain) slapd -h $url -f $w/openldap-plain.conf ;;
    lumen-plain) $B/lumend -f $w/lumen-plain.conf -h $url >$OUT/start-$round-$v.log 2>&1 ;;
    lumen-before) $BEFORE -f $w/lumen.conf -h $url >$OUT/start-$round-$v.log 2>&1 ;;
    lumen-after) $B/lumend -f $w/lumen.conf -h $url >$OUT/start-$round-$v.log 2>&1 ;;
  esac
  for _ in $(seq 300); do ldapsearch -x -H $url -b "" -s base 1.1 >/dev/null 2>&1 && break; sleep 0.1; done
  for _ in $(seq 300); do [ -s $w/$s.pid ] && break; sleep 0.1; done
  pid=$(cat $w/$s.pid) || { echo "$round $v did not start"; continue; }
  perf_pid=
  if [ "${PERF:-0}" = 1 ] && [ $s = lumen ]; then
    perf record -g -o $OUT/perf-$round-$v.data -p $pid >/dev/null 2>&1 & perf_pid=$!
  fi
  for m in bind auth; do
    $B/lumenbench -H $url -m $m -c 16 -d $D -w $W --entries 100000 --json --server-pid $pid > $OUT/$round-$v-$m.json 2>/dev/null
    python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print('%s %-12s %-4s %8.0f ops/s  server %.1f us/op  errors %s' % (sys.argv[2], sys.argv[3], sys.argv[4], j['ops_per_s'], 1e6*j['server']['cpu_s']/max(1,j['ops']), j['errors']['failed']))" $OUT/$round-$v-$m.json $round $v $m | tee -a $OUT/summary.txt
  done
  [ -n "$perf_pid" ] && { kill -INT $perf_pid; wait $perf_pid; }
  kill $pid; for _ in $(seq 1200); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
done; done
