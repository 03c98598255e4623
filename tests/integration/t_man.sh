#!/usr/bin/env bash
# t_man.sh — the man pages against the programs and the config code:
# tests/build/check-man.sh (a page per program, lumen.conf(5) lists exactly
# the directives of src/config/'s tables, groff -man -ww renders every page
# without a warning); every program answers --help and -V (the Makefile's
# VERSION); every option its --help names is in its man page.
. "$(dirname "$0")/lib.sh"
lumen_setup

VERSION=$(sed -n 's/^VERSION *:= *//p' "$ROOT/Makefile")
programs="lumend lumenadd lumencat lumenindex lumenpasswd lumenbackup lumenconf lumenbench"

if out=$("$ROOT/tests/build/check-man.sh" $programs 2>&1); then
  ok "man pages: one per program, lumen.conf(5) = the directive tables, no groff warning"
else
  fail "man pages: one per program, lumen.conf(5) = the directive tables, no groff warning" "$out"
fi

for p in $programs lumengen lumen-canned; do
  bin="$ROOT/$BUILD/$p"
  expect_eq "$p -V" "$p $VERSION" "$("$bin" -V 2>&1)"
  help=$("$bin" --help 2>&1)
  rc=$?
  if [ $rc -eq 0 ] && grep -q "^usage: $p" <<<"$help"; then ok "$p --help"; else
    fail "$p --help (exit $rc)" "$help"; fi
  page=$(ls "$ROOT/man/$p".[18] 2>/dev/null)
  [ -n "$page" ] || continue
  # Options as --help writes them (-x, --long-name) and as troff does (\-x, \-\-long\-name).
  missing=
  for opt in $(grep -oE '(^|[][ |,(])--?[A-Za-z][A-Za-z-]*' <<<"$help" | sed 's/^[][ |,(]//' | sort -u); do
    troff=$(sed 's/-/\\-/g' <<<"$opt")
    grep -qF -- "$troff" "$page" || missing="$missing $opt"
  done
  expect_eq "every option of $p --help is in $(basename "$page")" "" "${missing# }"
done

lumen_finish
