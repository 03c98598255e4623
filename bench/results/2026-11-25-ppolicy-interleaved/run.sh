#!/usr/bin/env bash
# One-off: bind-c16 and auth-c16 on the same 100k data, with and without
# overlay ppolicy, OpenLDAP and Lumen, interleaved twice (entry cache off).
set -u
B=/work/wt-bench/build R=/work/wt-bench OUT=$1 D=${D:-5} W=${W:-2}
mkdir -p "$OUT"; w=$(mktemp -d /tmp/ppi.XXXXXX); trap 'rm -rf $w' EXIT
$B/lumengen -n 100000 --entry-size 500 -o $w/data.ldif
P=cn=default,ou=policies,dc=example,dc=com
printf '%s\n' "" "dn: ou=policies,dc=example,dc=com" "objectClass: top" "objectClass: organizationalUnit" "ou: policies" "" "dn: $P" "objectClass: top" "objectClass: organizationalRole" "objectClass: pwdPolicy" "cn: default" "pwdAttribute: userPassword" "pwdLockout: TRUE" "pwdMaxFailure: 5" "pwdLockoutDuration: 300" "pwdFailureCountInterval: 300" "" >> $w/data.ldif
conf() { # server variant
  local s=$1 v=$2
  if [ $s = openldap ]; then
    for x in core cosine inetorgperson nis; do echo "include /etc/ldap/schema/$x.schema"; done
    echo "modulepath /usr/lib/ldap"; echo "moduleload back_mdb"; echo "moduleload ppolicy"; echo "loglevel 0"
    echo "pidfile $w/$s-$v.pid"; echo "argsfile $w/$s-$v.args"
  else
    for x in core cosine inetorgperson nis lumen; do echo "include $R/schema/$x.schema"; done
    echo "pidfile $w/$s-$v.pid"; echo "loglevel none"
  fi
  echo "threads 4"; echo "sizelimit unlimited"; echo "database mdb"; echo "suffix dc=example,dc=com"
  echo "rootdn cn=admin,dc=example,dc=com"; echo "rootpw secret"; echo "directory $w/$s-db"; echo "maxsize 17179869184"
  [ $s = lumen ] && echo "cachesize off"
  printf 'index objectClass eq\nindex uid eq\nindex cn,sn,mail,givenName pres,eq,sub\n'
  [ $v = ppolicy ] && printf 'overlay ppolicy\nppolicy_default %s\nppolicy_use_lockout\n' $P
  return 0
}
for s in openldap lumen; do mkdir -p $w/$s-db; conf $s ppolicy > $w/$s-ppolicy.conf; conf $s plain > $w/$s-plain.conf; done
slapadd -q -f $w/openldap-ppolicy.conf -l $w/data.ldif >/dev/null 2>&1 || echo slapadd failed
$B/lumenadd -q -f $w/lumen-ppolicy.conf -l $w/data.ldif >/dev/null 2>&1 || echo lumenadd failed
port=39411
for round in 1 2; do for s in openldap lumen; do for v in plain ppolicy; do
  url=ldap://127.0.0.1:$port/; rm -f $w/$s-$v.pid
  if [ $s = openldap ]; then slapd -h $url -f $w/$s-$v.conf; else $B/lumend -f $w/$s-$v.conf -h $url >/dev/null 2>&1; fi
  for _ in $(seq 100); do ldapsearch -x -H $url -b "" -s base 1.1 >/dev/null 2>&1 && break; sleep 0.1; done
  for _ in $(seq 50); do [ -s $w/$s-$v.pid ] && break; sleep 0.1; done
  pid=$(cat $w/$s-$v.pid) || { echo "$round $s $v did not start"; continue; }
  for m in bind auth; do
    $B/lumenbench -H $url -m $m -c 16 -d $D -w $W --entries 100000 --json --server-pid $pid > $OUT/$round-$s-$v-$m.json 2>/dev/null
    python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print('%s %-8s %-7s %-4s %8.0f ops/s  server %.1f us/op  errors %s' % (sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], j['ops_per_s'], 1e6*j['server']['cpu_s']/max(1,j['ops']), j['errors']['failed']))" $OUT/$round-$s-$v-$m.json $round $s $v $m | tee -a $OUT/summary.txt
  done
  kill $pid; for _ in $(seq 300); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
  port=$((port+1))
done; done; done
