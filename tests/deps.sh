#!/usr/bin/env bash
# Installs the Debian packages Lumen builds, tests, runs and benchmarks with.
# A no-op when everything is present; on a fresh machine the package lists
# are fetched once before the first install.
#
# OpenLDAP's slapd is installed for the differential test and the benchmark
# comparison only, HAProxy for the read-replica test (t_haproxy.py, which
# runs its own haproxy in the foreground). Debian's postinsts would start a
# system slapd and a system haproxy through invoke-rc.d/deb-systemd-invoke,
# which both ask /usr/sbin/policy-rc.d first: one answering 101 ("action
# forbidden") for every service is put in place for the install (an existing
# one that would allow the start is set aside and put back afterwards; ours
# is removed afterwards), and slapd is preseeded to create no database of its
# own. On a systemd host the freshly installed haproxy unit is also disabled
# so that it does not come up at the next boot.
set -euo pipefail

packages=(
  gcc make pkg-config
  liblmdb-dev lmdb-utils         # storage
  libevent-dev                   # event loops, evhttp
  libssl-dev openssl             # TLS, hashes; test certificates
  libargon2-dev libcrypt-dev     # password schemes
  check                          # unit tests
  ldap-utils python3-ldap        # real clients for integration tests
  clang libclang-rt-14-dev       # libFuzzer targets
  slapd                          # differential test and benchmark reference
  haproxy                        # read replicas behind a load balancer (t_haproxy.py)
  gnuplot-nox time               # benchmark charts, peak RSS of loaders
  groff-base                     # man pages render without warnings (make check-man)
  debhelper dpkg-dev             # make deb (debian/)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"

policy=/usr/sbin/policy-rc.d
created_policy=0
saved_policy=""
# An existing policy that already forbids starting both services is kept.
denies() { [ -x "$policy" ] && { "$policy" slapd start; [ $? -eq 101 ]; } &&
           { "$policy" haproxy start; [ $? -eq 101 ]; }; }
if [ -e "$policy" ] && ! denies >/dev/null 2>&1; then
  saved_policy="$policy.lumen-deps.$$"
  $sudo mv "$policy" "$saved_policy"
fi
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
  $sudo chmod 755 "$policy"
  created_policy=1
fi
remove_policy() {
  if [ $created_policy -eq 1 ]; then $sudo rm -f "$policy"; fi
  if [ -n "$saved_policy" ]; then $sudo mv "$saved_policy" "$policy"; fi
}
trap remove_policy EXIT

# A fresh machine has no package lists: fetch them before the first install.
if ! ls /var/lib/apt/lists/*_Packages* >/dev/null 2>&1; then $sudo apt-get update -qq; fi
if command -v debconf-set-selections >/dev/null; then
  printf 'slapd slapd/no_configuration boolean true\n' | $sudo debconf-set-selections
fi
install() { DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"; }
# Package lists may be stale on a machine that has been around: refresh once and retry.
install || { $sudo apt-get update -qq && install; }

# A systemd host would still enable the new haproxy unit for the next boot.
if [[ " ${missing[*]} " == *" haproxy "* ]] && [ -d /run/systemd/system ]; then
  $sudo systemctl disable haproxy.service >/dev/null 2>&1 || true
fi
