#!/usr/bin/env bash
# t_install.sh — make install / make uninstall (install.mk).
#
# A DESTDIR install writes the tree a package needs and nothing outside
# DESTDIR; an install under a scratch PREFIX runs: the installed lumend
# finds its default configuration, and that configuration's relative
# schema includes resolve to the installed schema directory (lumend -T);
# reinstalling keeps an edited slapd.conf, uninstalling keeps it too (and
# says so), and otherwise leaves no file behind.
#
# Builds in its own build directory, starting from a copy of $BUILD when
# there is one, so only what embeds the install paths is rebuilt.
. "$(dirname "$0")/lib.sh"
lumen_setup

P="$TMP/prefix"
STAGE="$TMP/stage"
VERSION=$(sed -n 's/^VERSION *:= *//p' "$ROOT/Makefile")
mkdir -p "$TMP/build"
[ -d "$ROOT/$BUILD/obj" ] && cp -a "$ROOT/$BUILD/." "$TMP/build/"

# run_make TARGET [VAR=VALUE...] — make in the tree with this test's
# build directory and prefix; the output is kept in $TMP/make.log.
run_make() {
  make -C "$ROOT" --no-print-directory -j2 BUILD="$TMP/build" PREFIX="$P" "$@" \
    > "$TMP/make.log" 2>&1
}

# files_under DIR — every file and link below DIR, relative, sorted.
files_under() {
  [ -d "$1" ] || return 0
  (cd "$1" && find . \( -type f -o -type l \) | sed 's|^\./||' | LC_ALL=C sort)
}

expected_files() {
  local rel=${P#/}
  {
    echo "$rel/bin/lumenbench"
    echo "$rel/etc/lumen/slapd.conf"
    echo "$rel/etc/lumen/slapd.conf.example"
    echo "$rel/lib/systemd/system/lumend.service"
    for p in lumenadd lumenbackup lumencat lumenconf lumend lumenindex lumenpasswd; do
      echo "$rel/sbin/$p"
    done
    echo "$rel/share/doc/lumen/README.md"
    for m in "$ROOT"/man/*.[1-8]; do
      echo "$rel/share/man/man${m##*.}/$(basename "$m")"
    done
    for s in "$ROOT"/schema/*.schema; do echo "$rel/share/lumen/schema/$(basename "$s")"; done
  } | LC_ALL=C sort
}

# --- staged install ------------------------------------------------------------
if run_make install DESTDIR="$STAGE"; then ok "make install DESTDIR=… builds and installs"; else
  fail "make install DESTDIR=… builds and installs" "$(tail -30 "$TMP/make.log")"; lumen_finish; fi
expect_eq "staged tree: programs, schema, configuration, unit, README" \
  "$(expected_files)" "$(files_under "$STAGE")"
if [ ! -e "$P" ]; then ok "nothing written outside DESTDIR"; else
  fail "nothing written outside DESTDIR" "$(files_under "$P")"; fi

unit="$STAGE$P/lib/systemd/system/lumend.service"
check "unit starts the installed lumend on the installed configuration" \
  grep -qx "ExecStart=$P/sbin/lumend -f $P/etc/lumen/slapd.conf .*" "$unit"
check "unit checks the configuration first" \
  grep -qx "ExecStartPre=$P/sbin/lumend -T -f $P/etc/lumen/slapd.conf" "$unit"
check "unit names no path of another install" bash -c "! grep -n '/usr/local\|^[^#].*/etc/lumen/' '$unit' | grep -v '$P'"
conf="$STAGE$P/etc/lumen/slapd.conf"
check "configuration: database in /var/lib/lumen" grep -qx 'directory *\/var\/lib\/lumen' "$conf"
check "configuration: pidfile in /run/lumen" grep -qx 'pidfile *\/run\/lumen\/lumend.pid' "$conf"
check "configuration: no password shipped" bash -c "! grep -q '^rootpw' '$conf'"
check "configuration: relative schema includes" grep -qx 'include *schema/core.schema' "$conf"
modes=$(stat -c '%a %n' "$STAGE$P/sbin/lumend" "$conf" "$unit" | sed "s|$STAGE$P/||")
expect_eq "modes" "755 sbin/lumend
644 etc/lumen/slapd.conf
644 lib/systemd/system/lumend.service" "$modes"

if run_make uninstall DESTDIR="$STAGE"; then ok "make uninstall DESTDIR=…"; else
  fail "make uninstall DESTDIR=…" "$(tail -20 "$TMP/make.log")"; fi
expect_eq "staged uninstall leaves no file" "" "$(files_under "$STAGE")"
for d in share/lumen etc/lumen share/doc/lumen; do
  if [ ! -e "$STAGE$P/$d" ]; then ok "staged uninstall removes $d"; else
    fail "staged uninstall removes $d"; fi
done

# --- real install under a scratch prefix -----------------------------------------
if run_make install; then ok "make install PREFIX=…"; else
  fail "make install PREFIX=…" "$(tail -30 "$TMP/make.log")"; lumen_finish; fi
expect_eq "installed tree" "$(expected_files)" "$(files_under "$P" | sed "s|^|${P#/}/|")"

# From / (as under systemd): the includes are not found in the working
# directory nor next to the configuration, only in the installed data dir.
out=$(cd / && "$P/sbin/lumend" -T -f "$P/etc/lumen/slapd.conf" 2>&1)
expect_eq "installed lumend -T on the installed configuration" \
  "config file testing succeeded" "$out"
out=$(cd / && "$P/sbin/lumend" -T 2>&1)
expect_eq "installed lumend's default configuration is the installed one" \
  "config file testing succeeded" "$out"
for p in lumend lumenadd lumencat lumenindex lumenpasswd lumenbackup lumenconf; do
  expect_eq "$p -V" "$p $VERSION" "$("$P/sbin/$p" -V 2>&1)"
done
expect_eq "lumenbench -V" "lumenbench $VERSION" "$("$P/bin/lumenbench" -V 2>&1)"
check "man pages carry the version" grep -q "Lumen $VERSION" "$P/share/man/man8/lumend.8"
check "man pages carry the install's paths" grep -q "$P/etc/lumen/slapd.conf" "$P/share/man/man8/lumend.8"
check "no placeholder left in the man pages" bash -c "! grep -l '@[A-Z]*@' '$P'/share/man/man*/*"
check "installed lumend(8) renders" bash -c "groff -man -ww -z '$P/share/man/man8/lumend.8' 2>&1 | (! grep .)"
# A slapd.d naming OpenLDAP's core schema: the installed lumend -F finds
# Lumen's copy in the installed schema directory (from /, as under systemd).
sd="$TMP/slapd.d"
mkdir -p "$sd/cn=config/cn=schema" "$TMP/sd-db"
printf 'dn: cn=config\ncn: config\n' > "$sd/cn=config.ldif"
printf 'dn: cn={0}core,cn=schema,cn=config\ncn: {0}core\n' > "$sd/cn=config/cn=schema/cn={0}core.ldif"
printf 'dn: olcDatabase={1}mdb,cn=config\nolcDatabase: {1}mdb\nolcSuffix: o=test\nolcDbDirectory: %s\nolcDbIndex: cn eq\n' \
  "$TMP/sd-db" > "$sd/cn=config/olcDatabase={1}mdb.ldif"
out=$(cd / && "$P/sbin/lumend" -F "$sd" -T 2>&1)
expect_eq "installed lumend -F reads a slapd.d with the installed schema" \
  "config file testing succeeded" "$out"
check "installed lumenconf translates it" \
  bash -c "cd / && '$P/sbin/lumenconf' -F '$sd' | grep -qx 'include schema/core.schema'"
check "installed lumenpasswd hashes" bash -c "'$P/sbin/lumenpasswd' -s secret | grep -q '^{SSHA512}'"

# An operator's edits survive a reinstall and an uninstall.
echo "# edited by the operator" >> "$P/etc/lumen/slapd.conf"
run_make install
check "reinstall keeps an edited slapd.conf" grep -q "edited by the operator" "$P/etc/lumen/slapd.conf"
if run_make uninstall; then ok "make uninstall"; else
  fail "make uninstall" "$(tail -20 "$TMP/make.log")"; fi
check "uninstall says it keeps the edited slapd.conf" grep -q "keeping .*slapd.conf" "$TMP/make.log"
expect_eq "uninstall leaves only the edited slapd.conf" "etc/lumen/slapd.conf" "$(files_under "$P")"
rm "$P/etc/lumen/slapd.conf"
run_make uninstall
expect_eq "uninstall leaves no file" "" "$(files_under "$P")"
if [ ! -e "$P/share/lumen" ] && [ ! -e "$P/etc/lumen" ]; then ok "uninstall removes Lumen's directories"; else
  fail "uninstall removes Lumen's directories" "$(find "$P" -type d)"; fi

reports=$(sanitizer_reports)
if [ -z "$reports" ]; then ok "no sanitizer reports"; else fail "no sanitizer reports" "$reports"; fi
lumen_finish
