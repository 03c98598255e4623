#!/bin/bash
# ab_cache.sh ROUNDS: entry cache default/off(/full on 100k), search/bind/compare c16, CPU µs/op
cpuop=$(cd "$(dirname "$0")/../2026-11-26-listener-threads" && pwd)/cpuop.sh
cd /tmp/lab
mk(){ base=$1 setting=$2 out=$3; if [ "$setting" = default ]; then cp $base $out; else sed "s/^directory /cachesize $setting\ndirectory /" $base > $out; fi; }
mk lumend2.conf default c100k_default.conf; mk lumend2.conf off c100k_off.conf; mk lumend2.conf 101000 c100k_full.conf
mk lumend1m.conf default c1m_default.conf; mk lumend1m.conf off c1m_off.conf
one(){ conf=$1 port=$2 pidf=$3 n=$4 label=$5
  /work/main/build/lumend -f $conf -h ldap://127.0.0.1:$port -d 0 > ab_cache_daemon.log 2>&1 &
  sleep 3
  if [[ $label == *full* ]]; then ldapsearch -x -H ldap://127.0.0.1:$port -b dc=example,dc=com -LLL '(objectClass=*)' dn > /dev/null; fi
  /work/main/build/lumenbench -H ldap://127.0.0.1:$port -m search -c 16 -d 4 -w 0 --entries $n > /dev/null 2>&1
  for m in search bind compare; do echo "$label $($cpuop $port $pidf $m -c 16 --entries $n)"; done
  echo "$label rss $(grep VmRSS /proc/$(cat $pidf)/status)"
  pid=$(cat $pidf); kill $pid; while [ -e /proc/$pid ]; do sleep 0.5; done; sleep 1
}
for r in $(seq ${1:-3}); do
  one c100k_default.conf 4502 lumend2.pid 100000 100k-default
  one c100k_off.conf 4502 lumend2.pid 100000 100k-off
  one c100k_full.conf 4502 lumend2.pid 100000 100k-full
  one c1m_default.conf 4510 lumend1m.pid 1000000 1m-default
  one c1m_off.conf 4510 lumend1m.pid 1000000 1m-off
done
