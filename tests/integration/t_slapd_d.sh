#!/usr/bin/env bash
# t_slapd_d.sh — reading OpenLDAP's cn=config directory: slapd.d trees
# written by Debian's own `slaptest -f slapd.conf -F DIR` from two
# configurations; lumenconf translates each, lumend -F DIR accepts it, and
# lumend -F serves the same suffixes, ACL decisions and limits as lumend -f
# on the equivalent slapd.conf, on the same data. Then bad trees: a file
# edited without its CRC32, broken LDIF, a missing schema entry, a
# database directory that does not exist — each an error naming the file.
. "$(dirname "$0")/lib.sh"
lumen_setup

if ! command -v slaptest >/dev/null; then
  fail "slaptest installed (slapd, make deps)"
  lumen_finish
fi
LUMENCONF="$ROOT/$BUILD/lumenconf"
LUMENADD="$ROOT/$BUILD/lumenadd"
OL_SCHEMA=/etc/ldap/schema
P="ou=people,dc=example,dc=com"
ALICE="uid=alice,$P"
# The translated configuration includes schema/*.schema relative to the
# working directory (or the installed schema directory): run from the tree.
cd "$ROOT" || exit 1

# openldap_conf NAME BODY — $TMP/NAME.slapd.conf for slaptest: OpenLDAP's
# schema and modules, then BODY.
openldap_conf() {
  {
    for s in $3; do echo "include $OL_SCHEMA/$s.schema"; done
    echo "modulepath /usr/lib/ldap"
    echo "moduleload back_mdb"
    echo "moduleload refint"
    printf '%s\n' "$2"
  } > "$TMP/$1.slapd.conf"
}

# lumen_conf NAME BODY SCHEMAS — the same configuration as Lumen reads it.
lumen_conf() {
  {
    for s in $3; do
      if [ -e "$ROOT/schema/$s.schema" ]; then echo "include schema/$s.schema"
      else echo "include $OL_SCHEMA/$s.schema"; fi
    done
    printf '%s\n' "$2"
  } > "$TMP/$1.lumen.conf"
}

# start_lumend ARGS... — lumend on $URI with ARGS; waits for an answer.
start_lumend() {
  "$LUMEND" "$@" -h "$URI/" -d stats 2> "$TMP/lumend.log" &
  LUMEN_PID=$!
  for _ in $(seq 1 100); do
    ldapsearch -x -H "$URI" -b "" -s base -LLL 1.1 >/dev/null 2>&1 && return 0
    kill -0 "$LUMEN_PID" 2>/dev/null || break
    sleep 0.1
  done
  fail "lumend $* starts" "$(cat "$TMP/lumend.log")"
  return 1
}

stop_lumend() {
  kill -TERM "$LUMEN_PID"
  wait "$LUMEN_PID" || fail "lumend exits 0 on SIGTERM" "$(tail "$TMP/lumend.log")"
  LUMEN_PID=
}

# observe — what a client sees: suffixes, and searches that access rules
# and limits decide (result codes included), as sorted LDIF.
observe() {
  local q
  for q in "-b '' -s base namingContexts" \
           "-b dc=example,dc=com" \
           "-D $ALICE -w alice-secret -b dc=example,dc=com" \
           "-D $ALICE -w alice-secret -b $P userPassword" \
           "-D cn=admin,dc=example,dc=com -w secret -b dc=example,dc=com -s one" \
           "-b o=other -s base"; do
    echo "# ldapsearch $q"
    eval "ldapsearch -x -H '$URI' -LLL -o ldif-wrap=no $q" 2>&1 | sorted_ldif 2>/dev/null
    echo "# rc ${PIPESTATUS[0]}"
  done
}

# index_kinds < CONF — "attribute kinds" for each indexed attribute, sorted
# (slapd.d keeps one olcDbIndex per attribute where slapd.conf may list several).
index_kinds() {
  awk '$1 == "index" { n = split($2, a, ","); for (i = 1; i <= n; i++) print a[i], ($3 ? $3 : "eq") }' |
    LC_ALL=C sort
}

# check_config NAME BODY SCHEMAS — slaptest builds NAME.d from the OpenLDAP
# form; lumenconf and lumend -F read it; lumend -F and lumend -f serve alike.
check_config() {
  local name=$1 body=$2 schemas=$3
  openldap_conf "$name" "$body" "$schemas"
  lumen_conf "$name" "$body" "$schemas"
  mkdir -p "$TMP/$name.d"
  # slaptest opens each database: slapadd creates them first (empty), and
  # OpenLDAP's files go once the slapd.d is written (Lumen has its own).
  local suffix dirs
  dirs=$(sed -n 's/^directory *//p' "$TMP/$name.slapd.conf")
  for suffix in $(sed -n 's/^suffix *"\(.*\)"/\1/p' "$TMP/$name.slapd.conf"); do
    slapadd -f "$TMP/$name.slapd.conf" -b "$suffix" -l /dev/null >/dev/null 2>&1
  done
  if out=$(slaptest -f "$TMP/$name.slapd.conf" -F "$TMP/$name.d" 2>&1); then
    ok "$name: slaptest writes the slapd.d"
  else
    fail "$name: slaptest writes the slapd.d" "$out"; return
  fi
  for d in $dirs; do rm -f "$d/data.mdb" "$d/lock.mdb"; done
  if out=$("$LUMENCONF" -F "$TMP/$name.d" -o "$TMP/$name.translated.conf" 2>&1); then
    ok "$name: lumenconf translates it"
  else
    fail "$name: lumenconf translates it" "$out"; return
  fi
  # The verdict is the last line (lines before it may log what a directive means).
  expect_eq "$name: lumend -F -T" "config file testing succeeded" \
    "$("$LUMEND" -F "$TMP/$name.d" -T 2>&1 | tail -1)"
  expect_eq "$name: the translation is a configuration lumend -f accepts" \
    "config file testing succeeded" "$("$LUMEND" -f "$TMP/$name.translated.conf" -T 2>&1 | tail -1)"
  expect_eq "$name: same indexes as the slapd.conf" \
    "$(index_kinds < "$TMP/$name.lumen.conf")" "$(index_kinds < "$TMP/$name.translated.conf")"
  expect_eq "$name: same suffixes" \
    "$(sed -n 's/^suffix *//p' "$TMP/$name.lumen.conf" | tr -d '"')" \
    "$(sed -n 's/^suffix *//p' "$TMP/$name.translated.conf" | tr -d '"')"
  check "$name: lumenadd loads the data" \
    "$LUMENADD" -f "$TMP/$name.lumen.conf" -b dc=example,dc=com -l "$DATA/tree.ldif" -q
  start_lumend -f "$TMP/$name.lumen.conf" || return
  observe > "$TMP/$name.from-conf"
  stop_lumend
  start_lumend -F "$TMP/$name.d" || return
  observe > "$TMP/$name.from-slapd-d"
  stop_lumend
  expect_eq "$name: lumend -F serves what lumend -f does (suffixes, ACLs, limits)" \
    "$(cat "$TMP/$name.from-conf")" "$(cat "$TMP/$name.from-slapd-d")"
}

# --- A: global access rules, one database, indexes, limits, refint -----------
mkdir -p "$TMP/a-db"
check_config a "pidfile $TMP/a.pid
argsfile $TMP/a.args
loglevel stats
threads 4
access to attrs=userPassword by self write by anonymous auth by * none
access to * by users read by * none
database mdb
suffix \"dc=example,dc=com\"
rootdn \"cn=admin,dc=example,dc=com\"
rootpw secret
directory $TMP/a-db
maxsize 1073741824
index objectClass eq
index uid eq
index cn,sn pres,eq,sub
index member eq
limits dn.exact=\"cn=admin,dc=example,dc=com\" size=unlimited time=unlimited
overlay refint
refint_attributes member
refint_nothing \"cn=nobody\"" "core cosine inetorgperson nis"
translated=$(grep -v '^#' "$TMP/a.translated.conf" | grep -v '^$')
check "a: OpenLDAP's written-out defaults left out" \
  bash -c "! grep -qE '^(conn_max_pending|sockbuf_max_incoming|writetimeout|TLSProtocolMin)' <<<'$translated'"
check "a: the refint overlay and its attribute" grep -qx 'refint_attributes member' <<<"$translated"
check "a: the shipped schemas included, not copied" grep -qx 'include schema/inetorgperson.schema' <<<"$translated"

# The database tools take -F as lumend does: the same database, the same data.
LUMENCAT="$ROOT/$BUILD/lumencat"
expect_eq "a: lumencat -F exports what lumencat -f does" \
  "$("$LUMENCAT" -f "$TMP/a.lumen.conf" -b dc=example,dc=com 2>/dev/null)" \
  "$("$LUMENCAT" -F "$TMP/a.d" -b dc=example,dc=com 2>/dev/null)"
check "a: lumenindex -F --check" "$ROOT/$BUILD/lumenindex" -F "$TMP/a.d" --check
check "a: lumenbackup -F" "$ROOT/$BUILD/lumenbackup" -F "$TMP/a.d" -o "$TMP/a-backup"
rm -rf "$TMP/a-db2" && mkdir "$TMP/a-db2" && cp -a "$TMP/a.d" "$TMP/a2.d"
sed -i "s|^olcDbDirectory: .*|olcDbDirectory: $TMP/a-db2|" "$TMP/a2.d/cn=config/olcDatabase={1}mdb.ldif"
sed -i '1,2d' "$TMP/a2.d/cn=config/olcDatabase={1}mdb.ldif"   # hand-edited: no CRC header
check "a: lumenadd -F loads" "$LUMENADD" -F "$TMP/a2.d" -l "$DATA/tree.ldif" -q
expect_eq "a: and lumencat -F reads back the same entries" \
  "$("$LUMENCAT" -f "$TMP/a.lumen.conf" -b dc=example,dc=com 2>/dev/null | sorted_ldif | grep -vE '^(entryUUID|entryCSN|createTimestamp|modifyTimestamp):')" \
  "$("$LUMENCAT" -F "$TMP/a2.d" -b dc=example,dc=com 2>/dev/null | sorted_ldif | grep -vE '^(entryUUID|entryCSN|createTimestamp|modifyTimestamp):')"
check "a: -f and -F together are a usage error" \
  bash -c "'$LUMENCAT' -f '$TMP/a.lumen.conf' -F '$TMP/a.d' 2>/dev/null; [ \$? -eq 2 ]"

# --- B: per-database access and size limit, two databases, a schema of
# OpenLDAP's that Lumen does not ship (translated definition by definition)
mkdir -p "$TMP/b-db" "$TMP/b-other"
check_config b "pidfile $TMP/b.pid
threads 2
idletimeout 30
password-hash {SSHA}
database mdb
suffix \"dc=example,dc=com\"
rootdn \"cn=admin,dc=example,dc=com\"
rootpw secret
directory $TMP/b-db
sizelimit 3
index objectClass eq
index mail,mailLocalAddress eq
access to attrs=userPassword by self write by anonymous auth by * none
access to dn.subtree=\"$P\" by users read by anonymous read
access to * by users read by * none
database mdb
suffix \"o=other\"
rootdn \"cn=admin,o=other\"
directory $TMP/b-other
access to * by * read" "core cosine inetorgperson nis misc"
check "b: misc.schema translated definition by definition" \
  grep -q "^attributetype ( 2.16.840.1.113730.3.1.13 NAME 'mailLocalAddress'" "$TMP/b.translated.conf"
check "b: the database's own sizelimit" grep -qx 'sizelimit 3' "$TMP/b.translated.conf"

# --- C: the other overlays Lumen has built in, authz-policy, a global referral
mkdir -p "$TMP/c-db"
check_config c "moduleload memberof
moduleload unique
moduleload ppolicy
moduleload lastbind
moduleload sssvlv
authz-policy to
referral ldap://elsewhere.example.com/
database mdb
suffix \"dc=example,dc=com\"
rootdn \"cn=admin,dc=example,dc=com\"
rootpw secret
directory $TMP/c-db
index objectClass eq
index uid,mail eq
index member eq
overlay memberof
memberof-refint TRUE
memberof-dangling drop
overlay unique
unique_uri ldap:///?uid,mail?sub
overlay ppolicy
ppolicy_default \"cn=default,ou=policies,dc=example,dc=com\"
ppolicy_use_lockout
overlay lastbind
lastbind-precision 60
overlay sssvlv
sssvlv-max 32
sssvlv-maxkeys 4" "core cosine inetorgperson nis"
for line in "authz-policy to" "referral ldap://elsewhere.example.com/" "memberof-refint TRUE" \
    "memberof-dangling drop" "unique_uri ldap:///?uid,mail?sub" "ppolicy_use_lockout" \
    "lastbind-precision 60" "sssvlv-max 32" "sssvlv-maxkeys 4"; do
  check "c: $line read from the slapd.d" grep -qx "$line" "$TMP/c.translated.conf"
done
check "c: ppolicy_default read from the slapd.d" \
  grep -qix 'ppolicy_default "cn=default,ou=policies,dc=example,dc=com"' "$TMP/c.translated.conf"

# --- bad trees: each an error naming the file -----------------------------------
# bad_tree NAME EXPECTED-IN-ERROR — copies a.d to bad.d, runs $edit in it,
# then lumend -F -T must fail with EXPECTED in its message.
bad_tree() {
  rm -rf "$TMP/bad.d"
  cp -a "$TMP/a.d" "$TMP/bad.d"
  (cd "$TMP/bad.d" && eval "$edit")
  local out
  out=$("$LUMEND" -F "$TMP/bad.d" -T 2>&1)
  if [ $? -ne 0 ] && grep -qF -- "$2" <<<"$out" && grep -q "config file testing failed" <<<"$out"; then
    ok "bad slapd.d: $1"
  else
    fail "bad slapd.d: $1" "expected \"$2\" in: $out"
  fi
}
# rewrite the CRC32 header of a file after an edit, as slapd would
fix_crc='python3 -c "import sys, zlib
for f in sys.argv[1:]:
    head, crc, rest = open(f, \"rb\").read().split(b\"\\n\", 2)
    open(f, \"wb\").write(head + b\"\\n# CRC32 %08x\\n\" % zlib.crc32(rest) + rest)"'
mdb='cn=config/olcDatabase={1}mdb.ldif'
edit="sed -i 's/^olcDbIndex: uid eq/olcDbIndex: uid pres/' '$mdb'"
bad_tree "edited without its CRC32" "$TMP/bad.d/$mdb: corrupt: its CRC32 header says"
edit="echo 'not ldif' >> '$mdb' && $fix_crc '$mdb'"
bad_tree "broken LDIF" "$TMP/bad.d/$mdb:"
# (the schema engine names the file whose definition lacks what cosine had)
edit="rm 'cn=config/cn=schema/cn={1}cosine.ldif'"
bad_tree "missing schema entry" "inetorgperson.schema:58:1: object class inetOrgPerson: unknown MAY attribute 'audio'"
edit="sed -i 's|^olcDbDirectory: .*|olcDbDirectory: $TMP/nowhere|' '$mdb' && $fix_crc '$mdb'"
bad_tree "database directory that does not exist" \
  "$TMP/bad.d/$mdb:"
check "bad slapd.d: the directory's error names the attribute" \
  bash -c "'$LUMEND' -F '$TMP/bad.d' -T 2>&1 | grep -q 'olcDbDirectory: $TMP/nowhere: No such file or directory'"
edit="sed -i 's/^olcThreads: 4/olcThreads: 4\nolcPluginLogFile: plugin.log/' cn=config.ldif && $fix_crc cn=config.ldif"
bad_tree "an attribute Lumen does not read" "cn=config.ldif:"
check "bad slapd.d: names the DN and the attribute" \
  bash -c "'$LUMEND' -F '$TMP/bad.d' -T 2>&1 | grep -q '\"cn=config\", attribute olcPluginLogFile: not supported by Lumen'"

reports=$(sanitizer_reports)
if [ -z "$reports" ]; then ok "no sanitizer reports"; else fail "no sanitizer reports" "$reports"; fi
check "lumend never wrote to the slapd.d" \
  bash -c "[ -z \"\$(find '$TMP/a.d' '$TMP/b.d' -newer '$TMP/b.translated.conf' -type f)\" ]"
lumen_finish
