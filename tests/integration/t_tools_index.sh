#!/usr/bin/env bash
# lumenindex after the index lines change: --check names the attribute
# whose table is missing (a new line) or whose keys are missing (a new kind
# on an indexed attribute), `lumenindex ATTR...` rebuilds only those tables
# (all-or-nothing), --check then passes, and lumend uses the new index.
. "$(dirname "$0")/lib.sh"
lumen_setup
TOOLS="$ROOT/$BUILD"
CONF="$TMP/slapd.conf"
cat >> "$CONF" <<CONF
index uid eq
index cn pres,eq,sub
CONF

"$TOOLS/lumengen" -n 500 > "$TMP/gen.ldif"
check "lumenadd loads 500 people" "$TOOLS/lumenadd" -f "$CONF" -l "$TMP/gen.ldif"
check "--check passes after the load" "$TOOLS/lumenindex" -f "$CONF" --check
check "--check passes in many rounds (-m 1)" "$TOOLS/lumenindex" -f "$CONF" -m 1 --check

# a search on an attribute without an index walks the scope, and says so
search_sn() {
  ldapsearch -x -H "$URI" -b dc=example,dc=com -LLL '(sn=Chowdhury)' dn 2>/dev/null |
    grep '^dn:' | sort
}
lumen_start
before=$(search_sn)
lumen_stop
[ -n "$before" ] && ok "sn search finds entries" || fail "sn search finds entries"
grep -q 'SRCH unindexed attr=sn' "$TMP/lumend.log" && ok "unindexed sn search logged" ||
  fail "unindexed sn search logged" "$(tail -5 "$TMP/lumend.log")"

# --- new index lines: a new table, and a new kind on an indexed attribute ---
cat >> "$CONF" <<CONF
index sn eq
index uid sub
CONF
# lumend started before the rebuild must not trust the unbuilt table/kind:
# the searches still find every entry, and the log says what to run.
uid_sub() {
  ldapsearch -x -H "$URI" -b dc=example,dc=com -LLL '(uid=*er.1*)' dn 2>/dev/null |
    grep -c '^dn:'
}
lumen_start
expect_eq "new sn index not built yet: sn search still complete" "$before" "$(search_sn)"
expect_eq "new uid sub kind not built yet: substring search still complete" 111 "$(uid_sub)"
lumen_stop
for a in sn uid; do
  grep -q "index for $a is configured but not (fully) built.*lumenindex -f $CONF $a" \
    "$TMP/lumend.log" && ok "lumend names the unbuilt $a index" ||
    fail "lumend names the unbuilt $a index" "$(grep -i index "$TMP/lumend.log")"
done

rc=0; "$TOOLS/lumenindex" -f "$CONF" --check 2>"$TMP/check.err" || rc=$?
expect_eq "--check with a new index line: exit 1" 1 "$rc"
grep -q "index table for sn missing: run lumenindex -f $CONF sn" "$TMP/check.err" &&
  ok "--check names the missing table" ||
  fail "--check names the missing table" "$(cat "$TMP/check.err")"
grep -q 'index uid, sub .* key .*: entry .* (uid=user\..*) is not listed' "$TMP/check.err" &&
  ok "--check names the missing keys (attribute, kind, entry)" ||
  fail "--check names the missing keys (attribute, kind, entry)" "$(cat "$TMP/check.err")"
grep -q "to rebuild: lumenindex -f $CONF uid\$" "$TMP/check.err" &&
  ok "--check says which tables to rebuild" ||
  fail "--check says which tables to rebuild" "$(cat "$TMP/check.err")"
expect_eq "--check prints at most 20 problems" 20 "$(grep -c 'is not listed' "$TMP/check.err")"

rc=0; "$TOOLS/lumenindex" -f "$CONF" mail 2>"$TMP/mail.err" || rc=$?
expect_eq "rebuilding an attribute without an index line: exit 1" 1 "$rc"
grep -q '"mail" has no index line' "$TMP/mail.err" && ok "the refusal names the attribute" ||
  fail "the refusal names the attribute" "$(cat "$TMP/mail.err")"

# only the named tables are rewritten: the cn table is carried over as it was
cn_before=$("$TOOLS/lumencat" -f "$CONF" -a '(cn=*)' 2>/dev/null | grep -c '^dn:')
check "lumenindex sn uid rebuilds" "$TOOLS/lumenindex" -f "$CONF" sn uid
ls -d "$TMP"/db/.lumenindex-* >/dev/null 2>&1 && fail "staging directory removed" ||
  ok "staging directory removed"
check "--check passes after the rebuild" "$TOOLS/lumenindex" -f "$CONF" --check
expect_eq "entries unchanged by the rebuild" "$(grep -c '^dn:' "$TMP/gen.ldif")" \
  "$("$TOOLS/lumencat" -f "$CONF" 2>/dev/null | grep -c '^dn:')"
expect_eq "cn entries unchanged" "$cn_before" \
  "$("$TOOLS/lumencat" -f "$CONF" -a '(cn=*)' 2>/dev/null | grep -c '^dn:')"
check "a full rebuild (no attribute named)" "$TOOLS/lumenindex" -f "$CONF" -m 1
check "--check passes after the full rebuild" "$TOOLS/lumenindex" -f "$CONF" --check

lumen_start
after=$(search_sn)
expect_eq "sn search finds the same entries through the index" "$before" "$after"
expect_eq "uid substring search uses the new kind" "dn: uid=user.123,ou=people,dc=example,dc=com" \
  "$(ldapsearch -x -H "$URI" -b dc=example,dc=com -LLL '(uid=*ser.123)' dn 2>/dev/null | grep '^dn:')"
lumen_stop
# lumen_start began a fresh log
grep -q 'not (fully) built' "$TMP/lumend.log" && fail "no unbuilt-index warning after the rebuild" ||
  ok "no unbuilt-index warning after the rebuild"
grep -q 'SRCH unindexed attr=sn' "$TMP/lumend.log" && fail "sn search no longer unindexed" ||
  ok "sn search no longer unindexed"
grep -q 'SRCH unindexed attr=uid' "$TMP/lumend.log" && fail "uid substring search indexed" ||
  ok "uid substring search indexed"

# The command line every database tool shares (tool_main): usage errors exit 2
# and name the tool; --help exits 0.
for tool in lumenadd lumencat lumenindex; do
  "$TOOLS/$tool" -f "$CONF" -n 0 >/dev/null 2>&1; rc=$?
  expect_eq "$tool -n 0: exit 2" 2 "$rc"
  "$TOOLS/$tool" -f "$CONF" -n 1x >/dev/null 2>&1; rc=$?
  expect_eq "$tool -n 1x: exit 2" 2 "$rc"
  "$TOOLS/$tool" -f "$CONF" -b dc=example,dc=com -n 1 >/dev/null 2>&1; rc=$?
  expect_eq "$tool -b and -n: exit 2" 2 "$rc"
  "$TOOLS/$tool" -b dc=example,dc=com >/dev/null 2>&1; rc=$?
  expect_eq "$tool without -f: exit 2" 2 "$rc"
  out=$("$TOOLS/$tool" --help 2>/dev/null); rc=$?
  expect_eq "$tool --help: exit 0" 0 "$rc"
  check "$tool --help prints its usage" grep -q "usage: $tool" <<< "$out"
  out=$("$TOOLS/$tool" -f "$TMP/no-such.conf" 2>&1 </dev/null); rc=$?
  expect_eq "$tool with a missing config: exit 1" 1 "$rc"
  check "$tool names itself in the error" grep -q "^$tool: " <<< "$out"
done

lumen_finish
