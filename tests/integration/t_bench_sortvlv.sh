#!/usr/bin/env bash
# lumenbench's --sort and --vlv against a real lumend holding 300 people:
# every sorted search succeeds and returns them all; every VLV search
# (window 0 before, 4 after, random offset) succeeds with exactly 5
# entries, also when each sends back the connection's last contextID
# (--vlv-context: the server answers from the list it kept); a bad key or
# window, or --vlv-context without --vlv, is refused before anything is
# sent.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$root/$BUILD ;; esac
work=$(mktemp -d)
pid=
cleanup() { if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi; rm -rf "$work"; return 0; }
trap cleanup EXIT
fail() { echo "t_bench_sortvlv: FAIL: $*" >&2; exit 1; }

mkdir "$work/db"
{
  for s in core cosine inetorgperson nis; do echo "include $root/schema/$s.schema"; done
  echo "database mdb"
  echo "suffix dc=example,dc=com"
  echo "directory $work/db"
} > "$work/lumend.conf"
"$BUILD/lumengen" -n 300 -o "$work/data.ldif" >/dev/null
"$BUILD/lumenadd" -f "$work/lumend.conf" -l "$work/data.ldif" >/dev/null 2>&1 || fail "lumenadd"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# -d keeps lumend in the foreground (without it, it detaches and $pid is gone).
"$BUILD/lumend" -f "$work/lumend.conf" -h "ldap://127.0.0.1:$port/" -d stats 2> "$work/log" &
pid=$!
for _ in $(seq 100); do
  ldapsearch -x -H "ldap://127.0.0.1:$port" -b "" -s base -LLL 1.1 >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || fail "lumend exited: $(tail -3 "$work/log")"
  sleep 0.1
done

sorted=( -H "ldap://127.0.0.1:$port" -m search -s one -f "(objectClass=inetOrgPerson)" -a cn
         -c 2 -d 1 -w 0 --json )
# ops, entries, and whether every result was a success.
summary() {
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))
print(r["ops"], r["entries"], int(r["errors"]["total"] == 0 and set(r["results"]) == {"success"}))' "$1"
}
"$BUILD/lumenbench" "${sorted[@]}" --sort -cn/caseIgnoreOrderingMatch > "$work/sort.json" ||
  fail "lumenbench --sort exited $?"
read -r ops entries clean < <(summary "$work/sort.json")
[ "$ops" -gt 0 ] && [ "$clean" = 1 ] || fail "sorted searches: $(cat "$work/sort.json")"
[ "$entries" -ge $(( ops * 300 )) ] || fail "sorted searches returned $entries entries in $ops searches"

"$BUILD/lumenbench" "${sorted[@]}" --sort cn/caseIgnoreOrderingMatch --vlv '0/4/[1-296]/0' \
  > "$work/vlv.json" || fail "lumenbench --vlv exited $?"
read -r ops entries clean < <(summary "$work/vlv.json")
[ "$ops" -gt 0 ] && [ "$clean" = 1 ] || fail "VLV searches: $(cat "$work/vlv.json")"
# Operations finishing after the window still count their entries: at least 5 each.
[ "$entries" -ge $(( ops * 5 )) ] || fail "VLV searches returned $entries entries in $ops searches"

"$BUILD/lumenbench" "${sorted[@]}" --sort cn/caseIgnoreOrderingMatch --vlv '0/4/[1-296]/0' \
  --vlv-context > "$work/scroll.json" || fail "lumenbench --vlv-context exited $?"
read -r ops entries clean < <(summary "$work/scroll.json")
[ "$ops" -gt 2 ] && [ "$clean" = 1 ] || fail "VLV scrolling: $(cat "$work/scroll.json")"
[ "$entries" -ge $(( ops * 5 )) ] || fail "VLV scrolling returned $entries entries in $ops searches"

for bad in "--sort /caseIgnoreOrderingMatch" "--sort cn/" "--vlv 1/2/3" "--vlv 0/4/x/0" "--vlv -1/4/1/0" \
           "--vlv-context"; do
  # shellcheck disable=SC2086
  if out=$("$BUILD/lumenbench" -H "ldap://127.0.0.1:$port" -d 1 -w 0 $bad 2>&1); then
    fail "lumenbench $bad was accepted"
  fi
  grep -q -- "${bad%% *}" <<<"$out" || fail "lumenbench $bad: no reason given: $out"
done
kill -0 "$pid" 2>/dev/null || fail "lumend exited during the runs: $(tail -5 "$work/log")"
echo "t_bench_sortvlv: ok"
