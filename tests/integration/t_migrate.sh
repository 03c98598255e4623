#!/usr/bin/env bash
# t_migrate.sh — the offline move from OpenLDAP the README describes, with
# Debian's slapd tools: slapadd fills an OpenLDAP database, slaptest turns
# its slapd.conf into a slapd.d, slapcat exports; slapd's files go aside,
# lumenadd -F loads the export into the same directory, and
# scripts/verify-migration.py finds every entry again with its operational
# attributes (entryUUID, entryCSN, timestamps, creators) unchanged. The
# script also says which entry differs when one does.
. "$(dirname "$0")/lib.sh"
lumen_setup

for tool in slapadd slapcat slaptest; do
  if ! command -v $tool >/dev/null; then fail "$tool installed (slapd, make deps)"; lumen_finish; fi
done
VERIFY="$ROOT/scripts/verify-migration.py"
cd "$ROOT" || exit 1

mkdir -p "$TMP/var-lib-ldap" "$TMP/slapd.d"
cat > "$TMP/slapd.conf" <<CONF
include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
include /etc/ldap/schema/nis.schema
modulepath /usr/lib/ldap
moduleload back_mdb
database mdb
suffix "dc=example,dc=com"
rootdn "cn=admin,dc=example,dc=com"
directory $TMP/var-lib-ldap
index objectClass eq
index uid eq
CONF
check "slapadd fills OpenLDAP's database" slapadd -f "$TMP/slapd.conf" -l "$DATA/tree.ldif"
check "slaptest writes its slapd.d" slaptest -f "$TMP/slapd.conf" -F "$TMP/slapd.d"
check "slapcat exports it" slapcat -F "$TMP/slapd.d" -l "$TMP/data.ldif"
check "the export carries OpenLDAP's operational attributes" \
  grep -q '^entryCSN: .*#000000#000#000000$' "$TMP/data.ldif"

mkdir "$TMP/slapd-files"
mv "$TMP/var-lib-ldap"/*.mdb "$TMP/slapd-files/"
check "lumenadd -F loads the export into the same directory" \
  "$ROOT/$BUILD/lumenadd" -F "$TMP/slapd.d" -l "$TMP/data.ldif"
"$ROOT/$BUILD/lumencat" -F "$TMP/slapd.d" -l "$TMP/after.ldif" 2>/dev/null
expect_eq "verify-migration.py: every entry and attribute as slapcat wrote it" \
  "same 14 entries" "$("$PYTHON" "$VERIFY" "$TMP/data.ldif" "$TMP/after.ldif" 2>&1)"

# The script notices what a broken move would lose.
sed '/^dn: uid=bob,/,/^$/d' "$TMP/after.ldif" > "$TMP/missing.ldif"
out=$("$PYTHON" "$VERIFY" "$TMP/data.ldif" "$TMP/missing.ldif" 2>&1)
rc=$?
if [ $rc -eq 1 ] && grep -qx "only in $TMP/data.ldif: uid=bob,ou=people,dc=example,dc=com" <<<"$out"; then
  ok "verify-migration.py names a missing entry"
else
  fail "verify-migration.py names a missing entry (exit $rc)" "$out"
fi
sed 's/^entryCSN: \(.*\)/entryCSN: 19700101000000.000000Z#000000#000#000000/' "$TMP/after.ldif" > "$TMP/csn.ldif"
out=$("$PYTHON" "$VERIFY" "$TMP/data.ldif" "$TMP/csn.ldif" 2>&1)
if [ $? -eq 1 ] && grep -q "^dc=example,dc=com: entrycsn: " <<<"$out"; then
  ok "verify-migration.py names a changed operational attribute"
else
  fail "verify-migration.py names a changed operational attribute" "$out"
fi

# And the migrated directory serves.
"$ROOT/$BUILD/lumenconf" -F "$TMP/slapd.d" -o "$TMP/lumen.conf"
check "lumenconf's slapd.conf passes lumend -T" "$LUMEND" -T -f "$TMP/lumen.conf"
cp "$TMP/lumen.conf" "$TMP/slapd.conf"
lumen_start
expect_eq "lumend serves the migrated entries with their entryUUID" \
  "$(sed -n 's/^entryUUID: //p' "$TMP/data.ldif" | sort)" \
  "$(ldapsearch -x -H "$URI" -LLL -b dc=example,dc=com entryUUID | sed -n 's/^entryUUID: //p' | sort)"
lumen_stop
lumen_finish
