#!/usr/bin/env bash
# lumenadd / lumencat / lumenindex: round trip, operational attributes kept
# on reload, bad records with and without -c (database unchanged), refusal
# while the database is locked, index checks and rebuilds.
. "$(dirname "$0")/lib.sh"
lumen_setup
TOOLS="$ROOT/$BUILD"
CONF="$TMP/slapd.conf"
grep -q lumen.schema "$CONF" || sed -i "s|^include $ROOT/schema/nis.schema|&\ninclude $ROOT/schema/lumen.schema|" "$CONF"
cat >> "$CONF" <<CONF
index uid eq
index cn,sn,mail,givenName pres,eq,sub
CONF

cat > "$TMP/in.ldif" <<'LDIF'
dn: dc=example,dc=com
objectClass: dcObject
objectClass: organization
dc: example
o: Example

dn: ou=people,dc=example,dc=com
objectClass: organizationalUnit
ou: people
description:: IGxlYWRpbmcgc3BhY2UgYW5kIMOcbmljw7ZkZQ==

dn: uid=alice,ou=people,dc=example,dc=com
objectClass: inetOrgPerson
uid: alice
cn: Alice Anders
cn: Ally
cn;lang-de: Alicia
sn: Anders
mail: alice@example.com
jpegPhoto:: /9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8UHR
 oAAP/Z

dn: uid=bob,ou=people,dc=example,dc=com
objectClass: inetOrgPerson
uid: bob
cn: Bob
sn: Builder
LDIF

# Python's LDIF parser (python-ldap) reads both sides; operational
# attributes lumenadd generated are the only thing ignored.
compare_ldif() {
  "$PYTHON" - "$1" "$2" <<'PY'
import sys, ldif
OPERATIONAL = {"entryuuid", "entrycsn", "createtimestamp", "modifytimestamp",
               "creatorsname", "modifiersname", "structuralobjectclass"}
def load(path):
    out = {}
    with open(path, "rb") as f:
        for dn, attrs in ldif.LDIFRecordList(f).parse() or []:
            pass
    with open(path, "rb") as f:
        p = ldif.LDIFRecordList(f); p.parse()
        for dn, attrs in p.all_records:
            out[dn.lower()] = {k.lower(): sorted(v) for k, v in attrs.items()
                               if k.lower() not in OPERATIONAL}
    return out
a, b = load(sys.argv[1]), load(sys.argv[2])
if a != b:
    for dn in sorted(set(a) | set(b)):
        if a.get(dn) != b.get(dn):
            print("differs:", dn, a.get(dn), b.get(dn))
    sys.exit(1)
PY
}

# --- round trip ----------------------------------------------------------
check "lumenadd loads" "$TOOLS/lumenadd" -f "$CONF" -l "$TMP/in.ldif"
"$TOOLS/lumencat" -f "$CONF" > "$TMP/out.ldif" 2>"$TMP/cat.err"
check "lumencat output equals the input (values, options, binary)" compare_ldif "$TMP/in.ldif" "$TMP/out.ldif"
expect_eq "lumencat writes parents first" \
  "dc=example,dc=com ou=people,dc=example,dc=com" \
  "$(grep '^dn:' "$TMP/out.ldif" | head -2 | sed 's/^dn: //' | tr '\n' ' ' | sed 's/ $//')"
expect_eq "operational attributes generated" 4 "$(grep -c '^entryUUID:' "$TMP/out.ldif")"
expect_eq "creatorsName is the rootdn" 4 "$(grep -c '^creatorsName: cn=admin,dc=example,dc=com' "$TMP/out.ldif")"
expect_eq "lumencat -a filter" "dn: uid=bob,ou=people,dc=example,dc=com" \
  "$("$TOOLS/lumencat" -f "$CONF" -a '(sn=build*)' 2>/dev/null | grep '^dn:')"
expect_eq "lumencat -b subtree" 3 "$("$TOOLS/lumencat" -f "$CONF" -b ou=people,dc=example,dc=com 2>/dev/null | grep -c '^dn:')"

# --- reload of an export keeps the operational attributes ---------------
mkdir -p "$TMP/db2"
sed "s|^directory .*|directory $TMP/db2|" "$CONF" > "$TMP/slapd2.conf"
check "lumenadd loads lumencat output" "$TOOLS/lumenadd" -f "$TMP/slapd2.conf" -l "$TMP/out.ldif"
"$TOOLS/lumencat" -f "$TMP/slapd2.conf" > "$TMP/out2.ldif" 2>/dev/null
check "reloaded export is identical, operational attributes included" cmp "$TMP/out.ldif" "$TMP/out2.ldif"

# --- files that cannot be opened -------------------------------------------
rc=0; "$TOOLS/lumenadd" -f "$CONF" -l "$TMP/no-such.ldif" 2>"$TMP/open.err" || rc=$?
expect_eq "lumenadd with a missing input file: exit 1" 1 "$rc"
expect_eq "the message names the file and reason" \
  "lumenadd: $TMP/no-such.ldif: No such file or directory" "$(cat "$TMP/open.err")"
rc=0; "$TOOLS/lumencat" -f "$CONF" -l "$TMP/no-such-dir/out.ldif" 2>"$TMP/open.err" || rc=$?
expect_eq "lumencat into an unwritable path: exit 1" 1 "$rc"
expect_eq "its message names the file and reason" \
  "lumencat: $TMP/no-such-dir/out.ldif: No such file or directory" "$(cat "$TMP/open.err")"

# --- bad records ---------------------------------------------------------
cat > "$TMP/bad.ldif" <<'LDIF'
dn: uid=carol,ou=people,dc=example,dc=com
objectClass: inetOrgPerson
uid: carol
cn: Carol
sn: C

dn: uid=dave,ou=people,dc=example,dc=com
objectClass: inetOrgPerson
uid: dave
cn: Dave

dn: uid=erin,ou=nowhere,dc=example,dc=com
objectClass: inetOrgPerson
uid: erin
cn: Erin
sn: E

dn: uid=frank,ou=people,dc=example,dc=com
objectClass: inetOrgPerson
uid: frank
cn: Frank
sn: F
LDIF
before=$("$TOOLS/lumencat" -f "$CONF" 2>/dev/null)
rc=0; "$TOOLS/lumenadd" -f "$CONF" -l "$TMP/bad.ldif" 2>"$TMP/bad.err" || rc=$?
expect_eq "bad record stops the load: exit 1" 1 "$rc"
grep -q 'line 7: uid=dave,ou=people,dc=example,dc=com: .*sn' "$TMP/bad.err" &&
  ok "bad record named by line, DN and reason" || fail "bad record named by line, DN and reason" "$(cat "$TMP/bad.err")"
expect_eq "database unchanged after a failed load" "$before" "$("$TOOLS/lumencat" -f "$CONF" 2>/dev/null)"
ls -d "$TMP"/db/.lumenadd-* >/dev/null 2>&1 && fail "staging directory removed" || ok "staging directory removed"

rc=0; "$TOOLS/lumenadd" -f "$CONF" -c -l "$TMP/bad.ldif" 2>"$TMP/bad-c.err" || rc=$?
expect_eq "-c: exit 0" 0 "$rc"
grep -q 'line 12: uid=erin,ou=nowhere,dc=example,dc=com: parent entry missing' "$TMP/bad-c.err" &&
  ok "-c: missing parent named by line" || fail "-c: missing parent named by line" "$(cat "$TMP/bad-c.err")"
grep -q '2 bad record(s) skipped' "$TMP/bad-c.err" && ok "-c: bad records counted" ||
  fail "-c: bad records counted" "$(cat "$TMP/bad-c.err")"
expect_eq "-c: good records loaded" "uid=carol uid=frank" \
  "$("$TOOLS/lumencat" -f "$CONF" -a '(|(uid=carol)(uid=dave)(uid=erin)(uid=frank))' 2>/dev/null |
     grep '^dn:' | sed 's/^dn: \([^,]*\),.*/\1/' | tr '\n' ' ' | sed 's/ $//')"

printf 'dn: cn=x,dc=example,dc=com\ncn x\n\n' > "$TMP/garbage.ldif"
rc=0; "$TOOLS/lumenadd" -f "$CONF" -l "$TMP/garbage.ldif" 2>"$TMP/garbage.err" || rc=$?
expect_eq "malformed LDIF: exit 1" 1 "$rc"
grep -q 'line 2' "$TMP/garbage.err" && ok "malformed LDIF names the line" ||
  fail "malformed LDIF names the line" "$(cat "$TMP/garbage.err")"
rc=0; "$TOOLS/lumenadd" -f "$CONF" -u -l "$TMP/in.ldif" 2>/dev/null || rc=$?
expect_eq "-u dry run of good input: exit 0" 0 "$rc"
rc=0; "$TOOLS/lumenadd" -f "$CONF" -u -l "$TMP/bad.ldif" 2>/dev/null || rc=$?
expect_eq "-u dry run finds the schema violation" 1 "$rc"
expect_eq "stdin input" 0 "$(printf 'dn: cn=stdin,dc=example,dc=com\nobjectClass: device\ncn: stdin\n\n' |
  "$TOOLS/lumenadd" -f "$CONF" 2>/dev/null; echo $?)"

# --- bulk path: many entries, index postings flushed in several rounds ----
# -m 1 makes lumenadd write its sorted index runs and commit many times;
# the result must equal a load done in one round, and a later failure must
# still leave the database as it was.
mkdir -p "$TMP/db3" "$TMP/db4"
sed "s|^directory .*|directory $TMP/db3|" "$CONF" > "$TMP/slapd3.conf"
sed "s|^directory .*|directory $TMP/db4|" "$CONF" > "$TMP/slapd4.conf"
"$ROOT/$BUILD/lumengen" -n 3000 > "$TMP/gen.ldif"
check "lumenadd -m 1 loads 3000 entries" "$TOOLS/lumenadd" -f "$TMP/slapd3.conf" -m 1 -l "$TMP/gen.ldif"
check "lumenadd -j 1 loads them in one round" "$TOOLS/lumenadd" -f "$TMP/slapd4.conf" -j 1 -l "$TMP/gen.ldif"
check "lumenindex --check after a many-round load" "$TOOLS/lumenindex" -f "$TMP/slapd3.conf" --check
"$TOOLS/lumencat" -f "$TMP/slapd3.conf" > "$TMP/gen3.ldif" 2>/dev/null
"$TOOLS/lumencat" -f "$TMP/slapd4.conf" > "$TMP/gen4.ldif" 2>/dev/null
expect_eq "every generated entry loaded" 3008 "$(grep -c '^dn:' "$TMP/gen3.ldif")"
check "many-round and one-round loads hold the same entries" compare_ldif "$TMP/gen3.ldif" "$TMP/gen4.ldif"
check "many-round load equals its input" compare_ldif "$TMP/gen.ldif" "$TMP/gen3.ldif"
# -q trusts the values (no second syntax pass) but still checks structure.
mkdir -p "$TMP/db5"
sed "s|^directory .*|directory $TMP/db5|" "$CONF" > "$TMP/slapd5.conf"
check "lumenadd -q loads the same input" "$TOOLS/lumenadd" -f "$TMP/slapd5.conf" -q -l "$TMP/gen.ldif"
"$TOOLS/lumencat" -f "$TMP/slapd5.conf" > "$TMP/gen5.ldif" 2>/dev/null
check "-q load holds the same entries" compare_ldif "$TMP/gen4.ldif" "$TMP/gen5.ldif"
rc=0; printf 'dn: uid=nosn,ou=people,dc=example,dc=com\nobjectClass: inetOrgPerson\nuid: nosn\ncn: x\n\n' |
  "$TOOLS/lumenadd" -f "$TMP/slapd5.conf" -q 2>/dev/null || rc=$?
expect_eq "-q still refuses a structural violation (missing sn)" 1 "$rc"
sed 's/^dn: uid=user\.\([0-9]*\),/dn: uid=more.\1,/; s/^uid: user\./uid: more./' "$TMP/gen.ldif" |
  awk 'BEGIN { RS = ""; ORS = "\n\n" } /^dn: uid=more/' > "$TMP/more.ldif"
printf 'dn: uid=broken,ou=people,dc=example,dc=com\nobjectClass: inetOrgPerson\nuid: broken\ncn: Broken\n\n' >> "$TMP/more.ldif"
rc=0; "$TOOLS/lumenadd" -f "$TMP/slapd3.conf" -m 1 -l "$TMP/more.ldif" 2>"$TMP/more.err" || rc=$?
expect_eq "a bad last record after many flushes: exit 1" 1 "$rc"
check "database unchanged after a failed many-round load" cmp "$TMP/gen3.ldif" \
  <("$TOOLS/lumencat" -f "$TMP/slapd3.conf" 2>/dev/null)
check "lumenindex --check after the failed load" "$TOOLS/lumenindex" -f "$TMP/slapd3.conf" --check
rc=0; "$TOOLS/lumenadd" -f "$TMP/slapd3.conf" -m 1 -c -l "$TMP/more.ldif" 2>/dev/null || rc=$?
expect_eq "-c: the good records of a second batch load on top" 0 "$rc"
expect_eq "second batch added" 6008 "$("$TOOLS/lumencat" -f "$TMP/slapd3.conf" 2>/dev/null | grep -c '^dn:')"
check "lumenindex --check after loading on top" "$TOOLS/lumenindex" -f "$TMP/slapd3.conf" --check

# --- refusal while the database is in use ---------------------------------
# one process holding the lock, as lumend would (flock(1) would leave a child holding it)
"$PYTHON" -c 'import fcntl, sys, time
f = open(sys.argv[1], "w"); fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
f.write("4242 testholder\n"); f.flush(); print("held", flush=True); time.sleep(60)' \
  "$TMP/db/lumen.lock" > "$TMP/holder.out" &
holder=$!
for _ in $(seq 1 50); do grep -q held "$TMP/holder.out" 2>/dev/null && break; sleep 0.1; done
rc=0; "$TOOLS/lumenadd" -f "$CONF" -l "$TMP/in.ldif" 2>"$TMP/locked.err" || rc=$?
expect_eq "locked database: lumenadd refuses" 1 "$rc"
grep -q 'in use by another process (4242 testholder)' "$TMP/locked.err" && ok "refusal names the holder" ||
  fail "refusal says why" "$(cat "$TMP/locked.err")"
rc=0; "$TOOLS/lumenindex" -f "$CONF" 2>/dev/null || rc=$?
expect_eq "locked database: lumenindex refuses" 1 "$rc"
check "lumencat works on a locked database" "$TOOLS/lumencat" -f "$CONF" -l /dev/null
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null

lumen_start
rc=0; "$TOOLS/lumenadd" -f "$CONF" -l "$TMP/in.ldif" 2>"$TMP/running.err" || rc=$?
if grep -q 'in use by another process (.* lumend)' "$TMP/running.err"; then
  ok "lumenadd refuses while lumend serves the database"
else
  echo "  pending $TEST_NAME: lumend does not take db_lock yet (exit $rc: $(head -1 "$TMP/running.err"))"
fi
check "lumencat while lumend serves" "$TOOLS/lumencat" -f "$CONF" -l "$TMP/live.ldif"
lumen_stop

# --- index check and rebuild -----------------------------------------------
check "lumenindex --check after load" "$TOOLS/lumenindex" -f "$CONF" --check
echo "index telephoneNumber,o eq" >> "$CONF"
rc=0; "$TOOLS/lumenindex" -f "$CONF" --check 2>"$TMP/check.err" || rc=$?
expect_eq "--check notices an index line added since the load" 1 "$rc"
grep -qi 'telephoneNumber' "$TMP/check.err" && ok "--check names the index" ||
  fail "--check names the index" "$(cat "$TMP/check.err")"
check "lumenindex rebuilds" "$TOOLS/lumenindex" -f "$CONF" o
check "lumenindex --check after rebuild" "$TOOLS/lumenindex" -f "$CONF" --check
"$TOOLS/lumencat" -f "$CONF" > "$TMP/after-index.ldif" 2>/dev/null
check "rebuild keeps every entry and attribute" compare_ldif "$TMP/live.ldif" "$TMP/after-index.ldif"
rc=0; "$TOOLS/lumenindex" -f "$CONF" notIndexed 2>/dev/null || rc=$?
expect_eq "lumenindex of an attribute without index line: exit 1" 1 "$rc"
rc=0; "$TOOLS/lumenadd" -f "$CONF" -j 0 -l "$TMP/in.ldif" 2>/dev/null || rc=$?
expect_eq "bad option: exit 2" 2 "$rc"
reports=$(sanitizer_reports)
if [ -z "$reports" ]; then ok "tools: no sanitizer reports"; else fail "tools: no sanitizer reports" "$reports"; fi
lumen_finish
