#!/usr/bin/env bash
# lumenbackup: a compacted copy of a database holds exactly its entries and
# nothing but data.mdb; refuses a non-empty target; usage and config
# errors; copies taken while lumend serves and a client keeps adding
# entries restore into a new directory that passes lumenindex --check, is
# served by lumend, and holds exactly a prefix of the acknowledged adds.
. "$(dirname "$0")/lib.sh"
lumen_setup
TOOLS="$ROOT/$BUILD"
CONF="$TMP/slapd.conf"
grep -q lumen.schema "$CONF" || sed -i "s|^include $ROOT/schema/nis.schema|&\ninclude $ROOT/schema/lumen.schema|" "$CONF"

# A small tree: the suffix, one branch, 500 people.
{
  printf 'dn: dc=example,dc=com\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Example\n\n'
  printf 'dn: ou=people,dc=example,dc=com\nobjectClass: organizationalUnit\nou: people\n\n'
  for i in $(seq 1 500); do
    printf 'dn: uid=user%d,ou=people,dc=example,dc=com\nobjectClass: inetOrgPerson\nuid: user%d\ncn: User %d\nsn: Number %d\n\n' "$i" "$i" "$i" "$i"
  done
} > "$TMP/in.ldif"
check "lumenadd loads the tree" "$TOOLS/lumenadd" -q -f "$CONF" -l "$TMP/in.ldif"

# A config identical but for the directory, to read a backup with lumencat.
backup_conf() {
  sed "s|^directory .*|directory $1|" "$CONF" > "$TMP/backup.conf"
  echo "$TMP/backup.conf"
}

# ---------------------------------------------------------------- offline copy
out=$("$TOOLS/lumenbackup" -f "$CONF" -o "$TMP/b1" 2>&1); rc=$?
expect_eq "backup exits 0" "0" "$rc"
case "$out" in *" MiB ("*" bytes) in "*" s"*) ok "backup prints size and time";; *) fail "backup prints size and time" "$out";; esac
expect_eq "backup holds only data.mdb" "data.mdb" "$(ls -A "$TMP/b1")"
"$TOOLS/lumencat" -f "$CONF" > "$TMP/live.ldif" 2>/dev/null
"$TOOLS/lumencat" -f "$(backup_conf "$TMP/b1")" > "$TMP/b1.ldif" 2>"$TMP/b1.err"
if [ -s "$TMP/b1.ldif" ] && cmp -s "$TMP/live.ldif" "$TMP/b1.ldif"; then
  ok "backup exports the same LDIF as the live database"
else
  fail "backup exports the same LDIF as the live database" "$(cat "$TMP/b1.err"; diff "$TMP/live.ldif" "$TMP/b1.ldif" | head)"
fi
expect_eq "backup has every entry" "502" "$(grep -c '^dn: ' "$TMP/b1.ldif")"
live_size=$(stat -c %s "$TMP/db/data.mdb")
copy_size=$(stat -c %s "$TMP/b1/data.mdb")
if [ "$copy_size" -le "$live_size" ]; then ok "compacted copy is no larger"; else
  fail "compacted copy is no larger" "live $live_size, copy $copy_size"; fi

# An existing empty directory is fine.
mkdir "$TMP/b2"
check "backup into an empty directory" "$TOOLS/lumenbackup" -f "$CONF" -n 1 -o "$TMP/b2"
check "backup by suffix" "$TOOLS/lumenbackup" -f "$CONF" -b "ou=people,dc=example,dc=com" -o "$TMP/b3"

# ---------------------------------------------------------------- refusals
# expect_fail NAME EXIT-CODE MESSAGE-PART COMMAND...
expect_fail() {
  local name=$1 want_rc=$2 want_text=$3; shift 3
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" = "$want_rc" ] && [[ "$out" == *"$want_text"* ]]; then ok "$name"; else
    fail "$name" "exit $rc (want $want_rc): $out"; fi
}
before=$(stat -c %Y:%s "$TMP/b1/data.mdb")
expect_fail "refuses a non-empty directory" 1 "not empty" "$TOOLS/lumenbackup" -f "$CONF" -o "$TMP/b1"
expect_eq "the earlier backup is untouched" "$before" "$(stat -c %Y:%s "$TMP/b1/data.mdb")"
touch "$TMP/plainfile"
expect_fail "refuses a file as target" 1 "plainfile" "$TOOLS/lumenbackup" -f "$CONF" -o "$TMP/plainfile"
expect_fail "needs -o" 2 "usage" "$TOOLS/lumenbackup" -f "$CONF"
expect_fail "needs -f" 2 "usage" "$TOOLS/lumenbackup" -o "$TMP/b4"
expect_fail "-b and -n exclude each other" 2 "usage" "$TOOLS/lumenbackup" -f "$CONF" -b "dc=example,dc=com" -n 1 -o "$TMP/b4"
expect_fail "unknown suffix" 1 "" "$TOOLS/lumenbackup" -f "$CONF" -b "dc=other" -o "$TMP/b4"
expect_fail "missing config" 1 "nothere.conf" "$TOOLS/lumenbackup" -f "$TMP/nothere.conf" -o "$TMP/b4"
if [ ! -e "$TMP/b4/data.mdb" ]; then ok "failed runs write no data file"; else fail "failed runs write no data file"; fi

# ------------------------------------------------------- while lumend serves
# A writer adds live1, live2, ... one at a time and appends each index to
# $TMP/acked once lumend acknowledged it. LMDB copies one snapshot, and
# group commit acknowledges a write only after its commit, so each backup
# must hold exactly live1..liveK for some K with
#   (acked before the backup started) <= K <= (acked after it ended) + 1
# (+1: the add in flight may be committed before its answer arrives).
lumen_start
cat > "$TMP/writer.py" <<'PY'
import sys, os, ldap, ldap.modlist
uri, stop, acked = sys.argv[1], sys.argv[2], sys.argv[3]
c = ldap.initialize(uri)
c.simple_bind_s("cn=admin,dc=example,dc=com", "secret")
i = 0
with open(acked, "a") as out:
    while not os.path.exists(stop):
        i += 1
        c.add_s(f"uid=live{i},ou=people,dc=example,dc=com", ldap.modlist.addModlist({
            "objectClass": [b"inetOrgPerson"], "uid": [f"live{i}".encode()],
            "cn": [b"Live"], "sn": [b"Live"]}))
        out.write(f"{i}\n")
        out.flush()
c.unbind_s()
PY
"$PYTHON" "$TMP/writer.py" "$URI" "$TMP/stop-writer" "$TMP/acked" 2>"$TMP/writer.err" &
writer_pid=$!
acked() { tail -1 "$TMP/acked" 2>/dev/null || echo 0; }
for _ in $(seq 1 100); do [ "$(acked)" -ge 20 ] && break; sleep 0.05; done
for n in 1 2 3; do
  echo "$(acked)" > "$TMP/live$n.before"
  check "live backup $n under write load" "$TOOLS/lumenbackup" -f "$CONF" -o "$TMP/live$n"
  echo "$(acked)" > "$TMP/live$n.after"
  sleep 0.2
done
touch "$TMP/stop-writer"
wait "$writer_pid"; wrc=$?
expect_eq "the writer ran without errors" "0" "$wrc"
[ -s "$TMP/writer.err" ] && fail "writer stderr is empty" "$(cat "$TMP/writer.err")"
check "lumend still answers" ldapsearch -x -H "$URI" -b "" -s base -LLL 1.1
total_acked=$(acked)
if [ "$total_acked" -ge 20 ]; then ok "the writer wrote ($total_acked adds)"; else fail "the writer wrote ($total_acked adds)"; fi
lumen_stop

# live_prefix FILE — K if FILE's live entries are exactly live1..liveK, else "gap".
live_prefix() {
  "$PYTHON" - "$1" <<'PY'
import re, sys
ids = sorted(int(m) for m in re.findall(r"^dn: uid=live(\d+),", open(sys.argv[1]).read(), re.M))
print(len(ids) if ids == list(range(1, len(ids) + 1)) else "gap:" + ",".join(map(str, ids[:10])))
PY
}

for n in 1 2 3; do
  # Restore: a fresh directory holding the backup's data.mdb, served by lumend.
  mkdir -p "$TMP/restore$n"
  cp "$TMP/live$n/data.mdb" "$TMP/restore$n/"
  rconf=$(backup_conf "$TMP/restore$n")
  cp "$rconf" "$TMP/restore$n.conf"
  sed -i "s|^pidfile .*|pidfile $TMP/restore$n.pid|" "$TMP/restore$n.conf"
  check "lumenindex --check passes on restored copy $n" \
    "$TOOLS/lumenindex" -f "$TMP/restore$n.conf" --check
  "$TOOLS/lumencat" -f "$TMP/restore$n.conf" > "$TMP/restore$n.cat" 2>"$TMP/restore$n.err"
  rport=$(free_port)
  "$LUMEND" -f "$TMP/restore$n.conf" -h "ldap://127.0.0.1:$rport/" -d 0 2>"$TMP/restore$n.log" &
  rpid=$!
  for _ in $(seq 1 100); do
    ldapsearch -x -H "ldap://127.0.0.1:$rport" -b "" -s base -LLL 1.1 >/dev/null 2>&1 && break
    sleep 0.1
  done
  ldapsearch -x -H "ldap://127.0.0.1:$rport" -D "$ADMIN_DN" -w "$ADMIN_PW" -LLL -o ldif-wrap=no \
    -b "dc=example,dc=com" -z 0 '(objectClass=*)' '*' '+' > "$TMP/restore$n.served" 2>&1
  kill -TERM "$rpid"; wait "$rpid"; rrc=$?
  expect_eq "lumend serving restored copy $n exits 0" "0" "$rrc"
  k=$(live_prefix "$TMP/restore$n.served")
  before=$(cat "$TMP/live$n.before"); after=$(cat "$TMP/live$n.after")
  if [[ "$k" =~ ^[0-9]+$ ]] && [ "$k" -ge "$before" ] && [ "$k" -le $((after + 1)) ]; then
    ok "restored copy $n holds live1..live$k (acked: $before before, $after after)"
  else
    fail "restored copy $n is a prefix of the acknowledged adds" "got $k, acked $before..$after"
  fi
  expect_eq "restored copy $n serves the loaded tree and live1..live$k" \
    "$((502 + k))" "$(grep -c '^dn: ' "$TMP/restore$n.served")"
  expect_eq "served and exported (lumencat) copy $n hold the same entries" \
    "$(sed -n 's/^dn: //p' "$TMP/restore$n.cat" | LC_ALL=C sort)" \
    "$(sed -n 's/^dn: //p' "$TMP/restore$n.served" | LC_ALL=C sort)"
done
lumen_finish
