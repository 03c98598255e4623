#!/usr/bin/env bash
# One-off: does Lumen's bind rate depend on what ran before it (warm pass, auth)?
set -u
B=/work/wt-bench/build R=/work/wt-bench OUT=$1 V=$2
mkdir -p "$OUT"; w=$(mktemp -d /tmp/ord.XXXXXX); trap 'rm -rf $w' EXIT
$B/lumengen -n 100000 --entry-size 500 -o $w/data.ldif
P=cn=default,ou=policies,dc=example,dc=com
printf '%s\n' "" "dn: ou=policies,dc=example,dc=com" "objectClass: top" "objectClass: organizationalUnit" "ou: policies" "" "dn: $P" "objectClass: top" "objectClass: organizationalRole" "objectClass: pwdPolicy" "cn: default" "pwdAttribute: userPassword" "pwdLockout: TRUE" "pwdMaxFailure: 5" "" >> $w/data.ldif
{ for x in core cosine inetorgperson nis lumen; do echo "include $R/schema/$x.schema"; done
  echo "pidfile $w/l.pid"; echo "loglevel none"; echo "threads 4"; echo "sizelimit unlimited"; echo "database mdb"; echo "suffix dc=example,dc=com"
  echo "rootdn cn=admin,dc=example,dc=com"; echo "rootpw secret"; echo "directory $w"; echo "maxsize 17179869184"; echo "cachesize off"
  printf 'index objectClass eq\nindex uid eq\nindex cn,sn,mail,givenName pres,eq,sub\n'
  [ $V = ppolicy ] && printf 'overlay ppolicy\nppolicy_default %s\nppolicy_use_lockout\n' $P; } > $w/l.conf
$B/lumenadd -q -f $w/l.conf -l $w/data.ldif >/dev/null 2>&1
url=ldap://127.0.0.1:39499/
$B/lumend -f $w/l.conf -h $url; for _ in $(seq 100); do ldapsearch -x -H $url -b "" -s base 1.1 >/dev/null 2>&1 && break; sleep 0.1; done
pid=$(cat $w/l.pid)
run() { $B/lumenbench -H $url "$@" -d 5 -w 2 --entries 100000 --json --server-pid $pid > $w/r.json 2>/dev/null
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print('%-8s %-28s %8.0f ops/s  server %.1f us/op  rss %s KiB' % (sys.argv[2], sys.argv[3], j['ops_per_s'], 1e6*j['server']['cpu_s']/max(1,j['ops']), j['server']['rss_kib']))" $w/r.json $V "$*" | tee -a $OUT/summary.txt; }
run -m bind -c 16
run -m bind -c 16
$B/lumenbench -H $url -m search --fill sequential -c 16 --entries 100000 -d 10 -w 0 >/dev/null; echo "$V (sequential search pass 10 s)" | tee -a $OUT/summary.txt
run -m bind -c 16
run -m auth -c 16
run -m bind -c 16
kill $pid; for _ in $(seq 300); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
