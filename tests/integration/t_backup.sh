#!/usr/bin/env bash
# lumenbackup: a compacted copy of a database holds exactly its entries and
# nothing but data.mdb; refuses a non-empty target; usage and config
# errors; a copy taken while lumend serves (and, when lumend accepts
# writes, while a client keeps adding entries) opens and exports cleanly.
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
lumen_start
writer_pid=
if ldapadd -x -H "$URI" -D "cn=admin,dc=example,dc=com" -w secret >/dev/null 2>&1 <<'LDIF'
dn: uid=probe,ou=people,dc=example,dc=com
objectClass: inetOrgPerson
uid: probe
cn: Probe
sn: Probe
LDIF
then
  # Write load: one client adding entries until told to stop.
  (
    i=0
    while [ ! -e "$TMP/stop-writer" ]; do
      i=$((i + 1))
      printf 'dn: uid=live%d,ou=people,dc=example,dc=com\nobjectClass: inetOrgPerson\nuid: live%d\ncn: Live\nsn: Live\n\n' "$i" "$i"
    done | ldapadd -x -c -H "$URI" -D "cn=admin,dc=example,dc=com" -w secret >/dev/null 2>&1
  ) &
  writer_pid=$!
  sleep 0.5
else
  echo "  note $TEST_NAME: lumend does not accept adds yet; live backup runs without write load"
fi
for n in 1 2 3; do
  check "live backup $n" "$TOOLS/lumenbackup" -f "$CONF" -o "$TMP/live$n"
done
if [ -n "$writer_pid" ]; then
  touch "$TMP/stop-writer"
  wait "$writer_pid" 2>/dev/null
fi
check "lumend still answers" ldapsearch -x -H "$URI" -b "" -s base -LLL 1.1
lumen_stop
for n in 1 2 3; do
  "$TOOLS/lumencat" -f "$(backup_conf "$TMP/live$n")" > "$TMP/live$n.ldif" 2>"$TMP/live$n.err"
  count=$(grep -c '^dn: ' "$TMP/live$n.ldif")
  if [ "$count" -ge 502 ]; then ok "live backup $n exports ($count entries)"; else
    fail "live backup $n exports ($count entries)" "$(cat "$TMP/live$n.err")"; fi
done
lumen_finish
