#!/usr/bin/env bash
# t_deb.sh — the Debian package (debian/, make deb): builds it in a scratch
# build directory (about a minute: a full compile) and inspects it without
# installing it on this machine: its files (dpkg-deb -c), its control
# data (dpkg-deb -I: version = the Makefile's VERSION, conffiles), the
# extracted lumend checking the packaged configuration against the
# packaged schema, and the maintainer scripts run against stub commands
# (adduser, dpkg-statoverride, deb-systemd-*: nothing real is changed):
# postinst creates the lumen user once and starts nothing without systemd,
# postrm purge undoes the statoverride.
#
# Runs in the plain build only: under the sanitizer run (BUILD=build-san)
# the package would be the same.
. "$(dirname "$0")/lib.sh"
lumen_setup

if [ "$BUILD" = build-san ]; then
  echo "$TEST_NAME: skipped under the sanitizer build"
  lumen_finish
fi
for tool in dpkg-buildpackage dh; do
  if ! command -v $tool >/dev/null; then fail "$tool installed (make deps)"; lumen_finish; fi
done

VERSION=$(sed -n 's/^VERSION *:= *//p' "$ROOT/Makefile")
# A clean environment for the package's own make (not the caller's flags).
if env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$ROOT" --no-print-directory \
     BUILD="$TMP/build" deb > "$TMP/deb.log" 2>&1; then
  ok "make deb builds the package"
else
  fail "make deb builds the package" "$(tail -40 "$TMP/deb.log")"
  lumen_finish
fi
deb=$(ls "$TMP"/build/deb/lumen_*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || { fail "a lumen_*.deb was written" "$(ls -R "$TMP/build/deb" | head)"; lumen_finish; }

# --- contents -------------------------------------------------------------------
contents=$(dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' | grep -v '/$' | LC_ALL=C sort)
expected=$({
  printf '%s\n' /etc/lumen/slapd.conf /etc/lumen/slapd.conf.example \
    /lib/systemd/system/lumend.service /usr/bin/lumenbench \
    /usr/share/doc/lumen/README.md /usr/share/doc/lumen/changelog.Debian.gz \
    /usr/share/doc/lumen/copyright
  for p in lumenadd lumenbackup lumencat lumenconf lumend lumenindex lumenpasswd; do echo "/usr/sbin/$p"; done
  for s in "$ROOT"/schema/*.schema; do echo "/usr/share/lumen/schema/$(basename "$s")"; done
  for m in "$ROOT"/man/*.[1-8]; do echo "/usr/share/man/man${m##*.}/$(basename "$m").gz"; done
} | LC_ALL=C sort)
expect_eq "package files: programs, man pages, schema, configuration, unit, docs" "$expected" "$contents"

info=$(dpkg-deb -I "$deb")
expect_eq "package version is the Makefile's VERSION" "$VERSION-1" "$(dpkg-deb -f "$deb" Version)"
check "depends on adduser (postinst creates the user)" grep -q "Depends:.*adduser" <<<"$info"
check "shared library dependencies computed" grep -q "Depends:.*liblmdb" <<<"$info"
mkdir -p "$TMP/control" "$TMP/root"
dpkg-deb -e "$deb" "$TMP/control"
dpkg-deb -x "$deb" "$TMP/root"
expect_eq "conffiles" "/etc/lumen/slapd.conf
/etc/lumen/slapd.conf.example" "$(cat "$TMP/control/conffiles")"

X="$TMP/root"
expect_eq "packaged lumend -V" "lumend $VERSION" "$("$X/usr/sbin/lumend" -V 2>&1)"
check "packaged lumend reads /etc/lumen/slapd.conf by default" \
  bash -c "'$X/usr/sbin/lumend' --help | grep -q '(default /etc/lumen/slapd.conf)'"
# The relative includes resolve from the working directory first: run in
# the packaged data directory, as /usr/share/lumen is on an installed system.
out=$(cd "$X/usr/share/lumen" && "$X/usr/sbin/lumend" -T -f "$X/etc/lumen/slapd.conf" 2>&1)
expect_eq "packaged configuration passes lumend -T with the packaged schema" \
  "config file testing succeeded" "$out"
unit="$X/lib/systemd/system/lumend.service"
check "unit runs /usr/sbin/lumend on /etc/lumen/slapd.conf" \
  grep -qx 'ExecStart=/usr/sbin/lumend -f /etc/lumen/slapd.conf .*' "$unit"
check "unit runs as lumen" grep -qx 'User=lumen' "$unit"

# --- maintainer scripts, against stubs ------------------------------------------
# Every command a script may run that changes the system records its call
# in $TMP/calls instead. getent answers "no such user" unless LUMEN_USER=1;
# dpkg-statoverride --list answers "none" unless OVERRIDE=1.
mkdir -p "$TMP/stubs"
cat > "$TMP/stubs/stub" <<'STUB'
#!/bin/sh
name=$(basename "$0")
echo "$name $*" >> "$CALLS"
case "$name $1" in
  "getent passwd") [ "${LUMEN_USER:-0}" = 1 ] || exit 2 ;;
  "dpkg-statoverride --list") [ "${OVERRIDE:-0}" = 1 ] || exit 1 ;;
esac
exit 0
STUB
chmod +x "$TMP/stubs/stub"
for c in adduser addgroup useradd deluser getent install chown chmod mkdir rm rmdir \
         dpkg-statoverride deb-systemd-helper deb-systemd-invoke systemctl invoke-rc.d; do
  ln -s stub "$TMP/stubs/$c"
done
export CALLS="$TMP/calls"
run_script() { : > "$CALLS"; PATH="$TMP/stubs:/usr/bin:/bin" "$@" sh -e "$TMP/control/$SCRIPT" $ARGS; }

SCRIPT=postinst ARGS=configure
if run_script env; then ok "postinst configure exits 0"; else fail "postinst configure exits 0" "$(cat "$CALLS")"; fi
check "postinst creates the lumen system user and group" \
  grep -qE '^adduser .*--system .*--group .*lumen$' "$CALLS"
check "postinst makes slapd.conf root:lumen 0640" \
  grep -qx 'dpkg-statoverride --update --add root lumen 0640 /etc/lumen/slapd.conf' "$CALLS"
check "postinst enables lumend.service" grep -qx 'deb-systemd-helper enable lumend.service' "$CALLS"
if [ ! -d /run/systemd/system ]; then
  check "postinst starts nothing without systemd" \
    bash -c "! grep -E '^(deb-systemd-invoke|systemctl|invoke-rc.d) ' '$CALLS'"
fi
run_script env LUMEN_USER=1 OVERRIDE=1
check "postinst again (upgrade): no second user, no second override" \
  bash -c "! grep -E '^adduser|--add ' '$CALLS'"

SCRIPT=prerm ARGS=remove
if run_script env; then ok "prerm remove exits 0"; else fail "prerm remove exits 0" "$(cat "$CALLS")"; fi
if [ ! -d /run/systemd/system ]; then
  check "prerm stops nothing without systemd" \
    bash -c "! grep -E '^(deb-systemd-invoke|systemctl) ' '$CALLS'"
fi
SCRIPT=postrm ARGS=remove
if run_script env; then ok "postrm remove exits 0"; else fail "postrm remove exits 0" "$(cat "$CALLS")"; fi
SCRIPT=postrm ARGS=purge
if run_script env OVERRIDE=1; then ok "postrm purge exits 0"; else fail "postrm purge exits 0" "$(cat "$CALLS")"; fi
check "postrm purge removes the statoverride" \
  grep -qx 'dpkg-statoverride --remove /etc/lumen/slapd.conf' "$CALLS"
check "postrm purge forgets the unit's enablement" grep -q '^deb-systemd-helper purge lumend.service' "$CALLS"
check "postrm purge removes only empty directories" \
  bash -c "! grep -E '^rm .*-r' '$CALLS'"

lumen_finish
