#!/usr/bin/env bash
# compare.sh — Lumen against OpenLDAP (slapd, back-mdb) on the same machine,
# data and client; optionally against lumen-canned (the client's ceiling).
#
#   bench/compare.sh [--quick] [--entries N] [--entry-size B] [--duration S]
#                    [--warmup S] [--threads N] [--entry-cache default|off|full|N]
#                    [--reuse P] [--rate R] [--nagle] [--nosync] [--ceiling]
#                    [--sequential] [--rounds N]
#                    [--overlays memberof+refint|ppolicy|sortvlv]
#                    [--access dn|filter|group]
#                    [--servers "openldap lumen"] [--label L] [--out DIR]
#
# Writes bench/results/<date>-<host>/report.md (+ PNG charts, raw JSON);
# --label L names it <date>-L instead. BUILD=DIR (default build) picks the
# binaries; Lumen then uses the schema/ next to DIR (the same tree's).
#
# Both servers (and lumen-canned with --ceiling) are loaded and running
# together, and each row is run against one after the other, which goes
# first alternating from row to row: a ratio compares two runs minutes
# apart at most, not two halves of the run. --sequential runs one
# server's whole matrix before starting the next (for a machine without
# the memory for both directories at once); --overlays and --access
# always do, as the overlays' background work must not fall in the other
# server's row.
#
# --rounds N runs the rows that only read N times (all of them, then all
# again), the writes once after them; report.md gives each server's median
# round and lists every round (raw/SERVER-ROW@K.json). One 10-second row
# on this kind of shared VM moves by a fifth or more from run to run.
#
# --overlays configures the same overlays on both servers (OpenLDAP loads
# its modules) and replaces the matrix with the rows they act on:
#   memberof+refint  1,000 groups of 100, every user in one (index member
#                    eq; refint_attributes member); group-modify-c16 adds a
#                    member value to a group and, on the next pass over the
#                    2,000 (group, user) pairs, deletes it (no errors);
#                    delete-c4 deletes users, each a member (refint drops
#                    the values, memberof follows).
#   ppolicy          ppolicy_default cn=default,ou=policies (pwdLockout
#                    TRUE, pwdMaxFailure 5), ppolicy_use_lockout; auth-c16
#                    and bind-c16 with the right password.
#   sortvlv          OpenLDAP's sssvlv overlay (sssvlv-max 64: no sort is
#                    refused as busy); Lumen, whose sort and VLV are built
#                    in, gets the same lines. sort-c16 sorts every person
#                    (one-level, by cn) and returns them with cn only;
#                    vlv-c16 sorts them and returns a 20-entry VLV window at
#                    a random offset, each on a new connection (slapd keeps
#                    a VLV's sorted list on its connection for the next
#                    request with its contextID, and answers busy to a new
#                    one meanwhile; a closed connection frees it);
#                    vlv-scroll-c16 does what VLV clients do: 16 persistent
#                    connections, each request at a random offset sending
#                    back the contextID of the connection's previous one
#                    (lumenbench --vlv-context), so both servers answer
#                    from the sorted list they kept. Meant for
#                    --entries 10000.
# --access gives both servers the same access rules and replaces the matrix
# with a user's rows: search-user-c16 and modify-user-c16, bound as
# uid=user.2 (a member of cn=group.1), modifying random people's
# description. The rule granting that write differs:
#   dn      dn.subtree="ou=people,..." attrs=description by users write
#   filter  filter=(objectClass=inetOrgPerson) attrs=description by users write
#   group   dn.subtree="ou=people,..." attrs=description
#           by group="cn=group.1,ou=groups,..." write
# Lumen decides a write again inside its write transaction when a rule
# reads entries (filter, group: access_write.h), so dn against filter and
# group shows that check's cost; OpenLDAP decides once, in its transaction.
# Nothing system-wide is started or changed: both servers run as this user
# on loopback ports with their databases in a temporary directory. Debian's
# slapd and gnuplot are installed when missing, with the package's own
# service start blocked (bench/install-deps.sh).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$root/$BUILD ;; esac

quick=0 entries= entry_size=500 duration= warmup= server_threads=4
entry_cache=default reuse=0 rate=0 nagle=0 nosync=0 ceiling=0 interleave=1 rounds=1
servers="openldap lumen" out= label= overlays= access=
usage() { sed -n '2,/^set /{/^set /d;p}' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }
while [ $# -gt 0 ]; do
  case $1 in
    --quick) quick=1 ;;
    --entries) entries=$2; shift ;;
    --entry-size) entry_size=$2; shift ;;
    --duration) duration=$2; shift ;;
    --warmup) warmup=$2; shift ;;
    --threads) server_threads=$2; shift ;;
    --entry-cache) entry_cache=$2; shift ;;
    --reuse) reuse=$2; shift ;;
    --rate) rate=$2; shift ;;
    --nagle) nagle=1 ;;
    --nosync) nosync=1 ;;
    --ceiling) ceiling=1 ;;
    --sequential) interleave=0 ;;
    --rounds) rounds=$2; shift ;;
    --servers) servers=$2; shift ;;
    --out) out=$2; shift ;;
    --label) label=$2; shift ;;
    --overlays) overlays=$2; shift ;;
    --access) access=$2; shift ;;
    -h|--help) usage 0 ;;
    *) echo "compare.sh: unknown option $1" >&2; usage 2 ;;
  esac
  shift
done
# Lumen's entry cache: default (no cachesize line: what an operator gets,
# 10,000 entries), off, full (every entry fits), or a number of entries.
case $entry_cache in
  default|off|full) ;;
  ''|*[!0-9]*|0*) echo "compare.sh: --entry-cache default|off|full|N" >&2; exit 2 ;;
esac
case $rounds in ''|*[!0-9]*|0*) echo "compare.sh: --rounds N (1 or more)" >&2; exit 2 ;; esac
case $overlays in ''|memberof+refint|ppolicy|sortvlv) ;;
  *) echo "compare.sh: --overlays memberof+refint|ppolicy|sortvlv" >&2; exit 2 ;; esac
case $access in ''|dn|filter|group) ;;
  *) echo "compare.sh: --access dn|filter|group" >&2; exit 2 ;; esac
# The schema and commit of the tree BUILD was built from (build/..).
src=$root
[ -d "$BUILD/../schema" ] && src=$(cd "$BUILD/.." && pwd)
if [ $quick -eq 1 ]; then
  : "${entries:=10000}" "${duration:=3}" "${warmup:=1}"
else
  : "${entries:=100000}" "${duration:=10}" "${warmup:=3}"
fi

for tool in lumenbench lumengen lumen-canned; do
  [ -x "$BUILD/$tool" ] || { echo "compare.sh: $BUILD/$tool missing: run make bench-build" >&2; exit 1; }
done
"$here/install-deps.sh"

stamp=$(date +%Y-%m-%d-%H%M)
out=${out:-$root/bench/results/$stamp-${label:-$(hostname -s)}}
mkdir -p "$out/raw"
work=$(mktemp -d "${TMPDIR:-/tmp}/lumen-bench.XXXXXX")
# The servers started and not yet stopped: name -> pid, name -> URL.
declare -A pid_of url_of
cleanup() {
  local s f
  for s in "${!pid_of[@]}"; do stop_server "$s"; done
  # A daemon whose pid file came too late for started() was never recorded.
  # (only a process still running from this work directory: a pid is reused)
  for f in "$work"/*/slapd.pid "$work"/*/lumend.pid; do
    [ -s "$f" ] || continue
    s=$(cat "$f")
    tr '\0' ' ' < "/proc/$s/cmdline" 2>/dev/null | grep -qF "$work" && { kill -9 "$s" 2>/dev/null || true; }
  done
  rm -rf "$work" || true
  return 0
}
trap cleanup EXIT
log() { printf '[%s] %s\n' "$(date +%T)" "$*" | tee -a "$out/run.log" >&2; }
meta() { printf '%s=%s\n' "$1" "$2" >> "$out/meta.txt"; }

: > "$out/meta.txt"
meta date "$(date -Is)"; meta host "$(hostname)"; meta cpus "$(nproc)"
meta kernel "$(uname -r)"; meta entries "$entries"; meta entry_size "$entry_size"
meta duration "$duration"; meta warmup "$warmup"; meta server_threads "$server_threads"
meta entry_cache "$entry_cache"; meta reuse "$reuse"; meta rate "$rate"
case $entry_cache in   # the entries Lumen's cache holds at most (lumen.conf(5) cachesize)
  default) meta entry_cache_entries 10000 ;;
  off) meta entry_cache_entries 0 ;;
  full) meta entry_cache_entries $(( entries + 1000 )) ;;
  *) meta entry_cache_entries "$entry_cache" ;;
esac
meta nagle "$nagle"; meta nosync "$nosync"; meta quick "$quick"; meta overlays "${overlays:-none}"
meta openldap_version "$(dpkg-query -W -f='${Version}' slapd 2>/dev/null || echo unknown)"
meta lumen_commit "$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)"
meta lumen_build "$BUILD"

ldif=$work/data.ldif
groups=5
[ "$overlays" = memberof+refint ] && groups=1000
log "generating $entries entries of ~$entry_size bytes, $groups groups"
"$BUILD/lumengen" -n "$entries" --entry-size "$entry_size" --groups "$groups" -o "$ldif"
policy=cn=default,ou=policies,dc=example,dc=com
if [ "$overlays" = ppolicy ]; then
  # The default policy: lockout after 5 failures (the runs make none).
  printf '%s\n' "" "dn: ou=policies,dc=example,dc=com" "objectClass: top" \
    "objectClass: organizationalUnit" "ou: policies" "" "dn: $policy" \
    "objectClass: top" "objectClass: organizationalRole" "objectClass: pwdPolicy" \
    "cn: default" "pwdAttribute: userPassword" "pwdLockout: TRUE" \
    "pwdMaxFailure: 5" "pwdLockoutDuration: 300" "pwdFailureCountInterval: 300" "" >> "$ldif"
fi
meta ldif_bytes "$(stat -c %s "$ldif")"

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# Poll until the server answers a root DSE search (30 s at most).
wait_ready() {
  local url=$1 pid=$2
  for _ in $(seq 300); do
    kill -0 "$pid" 2>/dev/null || return 1
    ldapsearch -x -H "$url" -b "" -s base -LLL '(objectClass=*)' 1.1 >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  return 1
}

# "elapsed_seconds max_rss_kib" of a command, from GNU time.
timed() { /usr/bin/time -f '%e %M' -o "$work/time.out" "$@"; }

lumenbench_flags=( --entries "$entries" -d "$duration" -w "$warmup" --json )
[ $nagle -eq 1 ] && lumenbench_flags+=( --nagle )

# The matrix: name and lumenbench arguments. Writes come last (they change
# the data), adds after modifies.
matrix=(
  "search-c1|-m search -c 1"
  "search-c4|-m search -c 4"
  "search-c16|-m search -c 16"
  "search-c32|-m search -c 32"
  "search-c64|-m search -c 64"
  "search-c256|-m search -c 256"
  "search-c1000|-m search -c 1000"
  "auth-c16|-m auth -c 16"
  "bind-c16|-m bind -c 16"
  "compare-c16|-m compare -c 16"
  "connperop-c16|-m search -c 16 --reuse $reuse"
)
[ "$rate" != 0 ] && matrix+=( "search-rate-c32|-m search -c 32 --rate $rate" )
# Writes bind as the rootdn on each connection first.
writer=( "--bind-dn" "cn=admin,dc=example,dc=com" "--bind-pw" "secret" )
# Adds at 4 connections (group commit has at most 4 to share a sync) and
# at 16, the issue tracker's row; the second adds from another number on.
matrix+=( "modify-c16|-m modify -c 16 ${writer[*]}" "add-c4|-m add -c 4 ${writer[*]}"
          "add-c16|-m add -c 16 --first 100000000 ${writer[*]}" )
people=ou=people,dc=example,dc=com
case $overlays in
  memberof+refint)
    pairs=$(( entries < 2000 ? entries : 2000 ))
    matrix=(
      "group-modify-c16|-m modify -c 16 --fill sequential --modify-op toggle --dn cn=group.[1-$groups],ou=groups,dc=example,dc=com --modify-attr member --modify-value uid=user.[1-$pairs],$people ${writer[*]}"
      "delete-c4|-m delete -c 4 --delete-dn uid=user.[1-$entries],$people ${writer[*]}" ) ;;
  ppolicy)
    matrix=( "auth-c16|-m auth -c 16" "bind-c16|-m bind -c 16" ) ;;
  sortvlv)
    sorted="-m search -s one -f (objectClass=inetOrgPerson) -a cn --sort cn/caseIgnoreOrderingMatch"
    matrix=( "sort-c16|$sorted -c 16"
             "vlv-c16|$sorted -c 16 --reuse 0 --vlv 0/19/[1-$(( entries > 20 ? entries - 20 : 1 ))]/0"
             "vlv-scroll-c16|$sorted -c 16 --vlv 0/19/[1-$(( entries > 20 ? entries - 20 : 1 ))]/0 --vlv-context" ) ;;
esac
user=( "--bind-dn" "uid=user.2,$people" "--bind-pw" "password" )
[ -n "$access" ] && matrix=( "search-user-c16|-m search -c 16 ${user[*]}"
                            "modify-user-c16|-m modify -c 16 ${user[*]}" )

# --access: the rules, after the database's other lines.
access_config() {
  local grant="by users write"
  local target="dn.subtree=\"$people\""
  [ -n "$access" ] || return 0
  [ "$access" = filter ] && target="filter=(objectClass=inetOrgPerson)"
  [ "$access" = group ] && grant="by group=\"cn=group.1,ou=groups,dc=example,dc=com\" write"
  echo "access to attrs=userPassword by self write by anonymous auth by * none"
  echo "access to $target attrs=description $grant by * read"
  echo "access to * by * read"
}

# The overlays' lines, after the database's (OpenLDAP: modules first).
overlay_modules() {
  case $overlays in
    memberof+refint) printf 'moduleload memberof\nmoduleload refint\n' ;;
    ppolicy) echo "moduleload ppolicy" ;;
    sortvlv) echo "moduleload sssvlv" ;;
  esac
}
overlay_config() {
  case $overlays in
    memberof+refint)
      printf 'index member eq\noverlay memberof\noverlay refint\nrefint_attributes member\n' ;;
    ppolicy)
      printf 'overlay ppolicy\nppolicy_default %s\nppolicy_use_lockout\n' "$policy" ;;
    sortvlv)
      printf 'overlay sssvlv\nsssvlv-max 64\n' ;;
  esac
}

# After the matrix: evidence that the overlays acted, in raw/SERVER-overlays.txt
# and one line of run.log. refint: user.1 (deleted first) is gone from
# group.1000, and how long after the delete row until no group names the
# last user it deleted (OpenLDAP's refint works through a queue after
# answering; given up after 600 polls, about a minute);
# memberof: a member added to group.1 shows in the user's memberOf. ppolicy:
# the right password works, and after 6 wrong ones fails (the account is locked).
check_overlays() {
  local server=$1 url=$2 f=$out/raw/$1-overlays.txt ok=1 admin=( -D cn=admin,dc=example,dc=com -w secret )
  local u="uid=user.$entries,$people" g last t0 lag=0
  case $overlays in
    memberof+refint)
      last=$(python3 -c 'import json,sys; print(max(1, json.load(open(sys.argv[1]))["completed_total"] - 4))' \
        "$out/raw/$server-delete-c4.json" 2>/dev/null || echo 1)
      t0=$(date +%s.%N)
      while [ $lag -lt 600 ] && ldapsearch -x -H "$url" "${admin[@]}" -LLL -b ou=groups,dc=example,dc=com \
          "(member=uid=user.$last,$people)" 1.1 2>/dev/null | grep -q '^dn:'; do
        sleep 0.1; lag=$(( lag + 1 ))
      done
      t0=$(python3 -c "import sys; print('%.1f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$t0" "$(date +%s.%N)")
      if [ $lag -lt 600 ]; then
        echo "refint: no group names uid=user.$last (deleted) $t0 s after the deletes" > "$f"
      else
        echo "refint: uid=user.$last (deleted) still named $t0 s after the deletes (queue not drained)" > "$f"
      fi
      g=cn=group.1,ou=groups,dc=example,dc=com
      printf 'dn: %s\nchangetype: modify\nadd: member\nmember: %s\n' "$g" "$u" |
        ldapmodify -x -H "$url" "${admin[@]}" >> "$f" 2>&1 || ok=0
      sleep 1
      ldapsearch -x -H "$url" "${admin[@]}" -LLL -b "$u" -s base memberOf >> "$f" 2>&1
      grep -qi "^memberOf: $g" "$f" || ok=0
      ldapsearch -x -H "$url" "${admin[@]}" -LLL -b cn=group.1000,ou=groups,dc=example,dc=com \
        -s base member > "$work/g1000" 2>&1; cat "$work/g1000" >> "$f"
      grep -qi "^member: uid=user.1,$people" "$work/g1000" && ok=0
      echo "group.1000 has $(grep -ci '^member:' "$work/g1000") members, user.1 (deleted first) not among them: $ok" >> "$f" ;;
    ppolicy)
      ldapwhoami -x -H "$url" -D "$u" -w password > "$f" 2>&1 || ok=0
      for _ in 1 2 3 4 5 6; do
        ldapwhoami -x -H "$url" -D "$u" -w wrong >> "$f" 2>&1 && ok=0
      done
      ldapwhoami -x -H "$url" -D "$u" -w password >> "$f" 2>&1 && ok=0 ;;
    *) return 0 ;;
  esac
  log "$server: overlays $overlays $( [ $ok = 1 ] && echo acted || echo 'DID NOT act') ($(head -1 "$f"); raw/$server-overlays.txt)"
}

# After the matrix (--access): the rule granted uid=user.2's writes, and
# with group= refuses a user outside cn=group.1 (insufficientAccessRights).
check_access() {
  local server=$1 url=$2 f=$out/raw/$1-access.txt ok=1 rc
  [ -n "$access" ] || return 0
  modify_as() {
    printf 'dn: uid=user.5,%s\nchangetype: modify\nreplace: description\ndescription: %s\n' \
      "$people" "$2" | ldapmodify -x -H "$url" -D "uid=$1,$people" -w password >> "$f" 2>&1
  }
  modify_as user.2 "by user.2" || ok=0
  if [ "$access" = group ]; then
    rc=0; modify_as user.3 "by user.3" || rc=$?
    [ "$rc" = 50 ] || ok=0
    echo "user.3 (not in group.1): ldapmodify exit $rc" >> "$f"
  fi
  log "$server: access $access $( [ $ok = 1 ] && echo acted || echo 'DID NOT act') (raw/$server-access.txt)"
}

warm() {
  local server=$1
  log "$server: warming (sequential pass over the entries)"
  "$BUILD/lumenbench" -H "${url_of[$server]}" -m search --fill sequential -c 16 \
    --entries "$entries" -d "$(( quick ? 2 : 10 ))" -w 0 >/dev/null || true
}

# One step (round|name|lumenbench arguments) against one server.
run_row() {
  local server=$1 round=${2%%|*} rest=${2#*|}
  local name=${rest%%|*} args=${rest#*|} file label
  file=$server-$name label=$name
  if [ "$rounds" -gt 1 ] && [ -n "$(read_only "$name")" ]; then
    file=$file@$round label="$name (round $round)"
  fi
  log "$server: $label"
  # shellcheck disable=SC2086
  if ! "$BUILD/lumenbench" -H "${url_of[$server]}" $args "${lumenbench_flags[@]}" \
      --label "$server $name" --server-pid "${pid_of[$server]}" > "$out/raw/$file.json" \
      2> "$out/raw/$file.err"; then
    log "$server: $name failed (see raw/$file.err)"
  fi
}

# Prints the row's name when it only reads (it may run more than once).
read_only() {
  case $1 in search-*|auth-*|bind-*|compare-*|connperop-*|sort-*|vlv-*) echo "$1" ;; esac
}

record_memory() {
  local server=$1 pid=$2
  meta "${server}_vmrss_kib" "$(awk '/^VmRSS/ {print $2}' /proc/"$pid"/status)"
  meta "${server}_vmhwm_kib" "$(awk '/^VmHWM/ {print $2}' /proc/"$pid"/status)"
}

# SIGTERM, 10 s to exit, then SIGKILL: no server outlives the run.
stop_server() {
  local pid=${pid_of[$1]:-}
  unset "pid_of[$1]" "url_of[$1]"
  [ -n "$pid" ] || return 0
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  log "$1: still running 10 s after SIGTERM, killed"
  kill -9 "$pid" 2>/dev/null || true
}

# After the matrix: the overlays' and rules' evidence, memory, stop.
finish_server() {
  local server=$1
  if [ "$server" != canned ]; then
    check_overlays "$server" "${url_of[$server]}"
    check_access "$server" "${url_of[$server]}"
    record_memory "$server" "${pid_of[$server]}"
  fi
  stop_server "$server"
}

# Record a started server, or stop it and say why it is left out.
started() {
  local server=$1 url=$2 pid=$3
  pid_of[$server]=$pid; url_of[$server]=$url
  wait_ready "$url" "$pid" && return 0
  log "$server: not answering"; stop_server "$server"; return 1
}

indexes() {
  printf 'index objectClass eq\nindex uid eq\nindex cn,sn,mail,givenName pres,eq,sub\n'
}

# ------------------------------------------------------------- OpenLDAP
start_openldap() {
  local dir=$work/openldap port url s
  mkdir -p "$dir/db"
  port=$(free_port); url=ldap://127.0.0.1:$port/
  {
    for s in core cosine inetorgperson nis; do echo "include /etc/ldap/schema/$s.schema"; done
    echo "modulepath /usr/lib/ldap"
    echo "moduleload back_mdb"
    overlay_modules
    echo "pidfile $dir/slapd.pid"
    echo "argsfile $dir/slapd.args"
    echo "threads $server_threads"
    echo "loglevel 0"
    echo "sizelimit unlimited"
    echo "database mdb"
    echo "suffix dc=example,dc=com"
    echo "rootdn cn=admin,dc=example,dc=com"
    echo "rootpw secret"
    echo "directory $dir/db"
    echo "maxsize 17179869184"
    [ $nosync -eq 1 ] && echo "dbnosync"
    indexes
    overlay_config
    access_config
  } > "$dir/slapd.conf"
  log "openldap: slapadd -q"
  if ! timed slapadd -q -f "$dir/slapd.conf" -l "$ldif" > "$out/raw/openldap-load.log" 2>&1; then
    log "openldap: slapadd failed (raw/openldap-load.log)"; return 1
  fi
  read -r secs rss < "$work/time.out"
  meta openldap_load_s "$secs"; meta openldap_load_peak_rss_kib "$rss"
  meta openldap_db_kib "$(du -sk "$dir/db" | cut -f1)"
  slapd -h "$url" -f "$dir/slapd.conf" || { log "openldap: slapd did not start"; return 1; }
  for _ in $(seq 50); do [ -s "$dir/slapd.pid" ] && break; sleep 0.1; done
  started openldap "$url" "$(cat "$dir/slapd.pid")"
}

# ---------------------------------------------------------------- Lumen
start_lumen() {
  local dir=$work/lumen port url pid s
  [ -x "$BUILD/lumend" ] || { log "lumen: $BUILD/lumend missing, skipped"; return 1; }
  mkdir -p "$dir/db"
  port=$(free_port); url=ldap://127.0.0.1:$port/
  {
    for s in core cosine inetorgperson nis lumen; do
      [ -f "$src/schema/$s.schema" ] && echo "include $src/schema/$s.schema"
    done
    echo "pidfile $dir/lumend.pid"
    echo "threads $server_threads"
    echo "loglevel none"
    echo "sizelimit unlimited"
    echo "database mdb"
    echo "suffix dc=example,dc=com"
    echo "rootdn cn=admin,dc=example,dc=com"
    echo "rootpw secret"
    echo "directory $dir/db"
    echo "maxsize 17179869184"
    [ $nosync -eq 1 ] && echo "dbnosync"
    case $entry_cache in
      default) ;;
      off) echo "cachesize off" ;;
      full) echo "cachesize $(( entries + 1000 ))" ;;
      *) echo "cachesize $entry_cache" ;;
    esac
    indexes
    overlay_config
    access_config
  } > "$dir/lumend.conf"
  if [ $nagle -eq 1 ]; then
    # Lumen's debug switch for the Nagle experiment, if this build has it.
    echo "debug-nagle on" >> "$dir/lumend.conf"
    "$BUILD/lumend" -T -f "$dir/lumend.conf" >/dev/null 2>&1 ||
      { log "lumen: no debug-nagle directive in this build; client-side Nagle only"
        sed -i '/^debug-nagle/d' "$dir/lumend.conf"; }
  fi
  if ! "$BUILD/lumend" -T -f "$dir/lumend.conf" > "$out/raw/lumen-config.log" 2>&1; then
    log "lumen: configuration rejected (raw/lumen-config.log), skipped"; return 1
  fi
  if [ -x "$BUILD/lumenadd" ]; then
    log "lumen: lumenadd"
    if timed "$BUILD/lumenadd" -q -f "$dir/lumend.conf" -l "$ldif" > "$out/raw/lumen-load.log" 2>&1; then
      read -r secs rss < "$work/time.out"
      meta lumen_load_s "$secs"; meta lumen_load_peak_rss_kib "$rss"
    else
      log "lumen: lumenadd failed (raw/lumen-load.log)"; meta lumen_load_s failed
    fi
  fi
  "$BUILD/lumend" -f "$dir/lumend.conf" -h "$url" > "$out/raw/lumen-daemon.log" 2>&1 ||
    { log "lumen: lumend did not start"; return 1; }
  for _ in $(seq 50); do [ -s "$dir/lumend.pid" ] && break; sleep 0.1; done
  pid=$(cat "$dir/lumend.pid" 2>/dev/null || true)
  [ -n "$pid" ] || { log "lumen: no pid file"; return 1; }
  started lumen "$url" "$pid" || return 1
  if [ ! -x "$BUILD/lumenadd" ]; then
    log "lumen: no lumenadd yet, loading over LDAP with ldapadd"
    local start end
    start=$(date +%s.%N)
    ldapadd -x -c -H "$url" -D cn=admin,dc=example,dc=com -w secret -f "$ldif" \
      > "$out/raw/lumen-load.log" 2>&1 || log "lumen: ldapadd reported errors (raw/lumen-load.log)"
    end=$(date +%s.%N)
    meta lumen_load_s "$(echo "$end - $start" | bc 2>/dev/null || python3 -c "print($end-$start)")"
    meta lumen_load_method ldapadd
  fi
  meta lumen_db_kib "$(du -sk "$dir/db" | cut -f1)"
}

# --------------------------------------------------------------- ceiling
start_canned() {
  local port
  "$BUILD/lumen-canned" -p 0 > "$work/canned.port" 2>&1 &
  pid_of[canned]=$!
  for _ in $(seq 50); do [ -s "$work/canned.port" ] && break; sleep 0.1; done
  port=$(awk '{print $2}' "$work/canned.port")
  started canned "ldap://127.0.0.1:$port/" "${pid_of[canned]}"
}

# The start_* functions run with errexit off (they are called in ||/&&
# lists): each step of theirs returns 1 itself when it fails.
order=()
for name in $servers; do
  case " ${order[*]} " in *" $name "*) continue ;; esac   # named twice
  case $name in
    openldap|lumen) order+=( "$name" ) ;;
    canned) ceiling=1 ;;
    *) log "unknown server $name" ;;
  esac
done
[ $ceiling -eq 1 ] && order+=( canned )
# Overlays and rules leave work behind a row (OpenLDAP's refint drains its
# queue after answering) and check_overlays times it: one at a time.
[ -n "$overlays$access" ] && interleave=0
meta rounds "$rounds"

# The steps, "round|name|arguments": the reads round after round, then the
# writes (the matrix lists them last; with one round the order is its own).
steps=()
for (( k=1; k<=rounds; k++ )); do
  for row in "${matrix[@]}"; do
    [ -n "$(read_only "${row%%|*}")" ] && steps+=( "$k|$row" )
  done
done
for row in "${matrix[@]}"; do
  [ -z "$(read_only "${row%%|*}")" ] && steps+=( "1|$row" )
done

if [ $interleave -eq 0 ]; then
  meta interleave 0
  for server in "${order[@]}"; do
    "start_$server" || continue
    warm "$server"
    for step in "${steps[@]}"; do run_row "$server" "$step"; done
    finish_server "$server"
  done
else
  # Every server loaded and running, each row taken by one server after the
  # other, the first of a row alternating: a slow minute on the machine
  # then falls on both sides of a ratio, not on one server's whole matrix.
  up=()
  for server in "${order[@]}"; do "start_$server" && up+=( "$server" ); done
  meta interleave "$(( ${#up[@]} > 1 ? 1 : 0 ))"   # what the report may say
  for server in "${up[@]}"; do warm "$server"; done
  i=0
  for step in "${steps[@]}"; do
    turn=( "${up[@]}" )
    if [ $(( i % 2 )) -eq 1 ]; then
      turn=(); for (( j=${#up[@]}-1; j>=0; j-- )); do turn+=( "${up[$j]}" ); done
    fi
    for server in "${turn[@]}"; do run_row "$server" "$step"; done
    i=$(( i + 1 ))
  done
  for server in "${up[@]}"; do finish_server "$server"; done
fi

python3 "$here/report.py" "$out"
log "report: $out/report.md"
