#!/bin/bash
# interleaved: listener-threads 1/2/4 at c16, c64, c1000, compare c16
cd /tmp/lab
for round in 1 2; do
  for lt in 4 2 1; do
    /work/main/build/lumend -f lumend-lt$lt.conf -h ldap://127.0.0.1:4389/ && sleep 1.5
    /work/main/build/lumenbench -H ldap://127.0.0.1:4389 -m search --fill sequential -c 16 -d 3 -w 0 --entries 100000 >/dev/null 2>&1
    for spec in "search -c 16" "search -c 64" "search -c 1000" "compare -c 16" "bind -c 16"; do
      echo "lt=$lt r=$round $(./cpuop.sh 4389 lumend-lt$lt.pid $spec | sed 's/latency (ms) //')"
    done
    kill $(cat lumend-lt$lt.pid); sleep 1.5
  done
done
