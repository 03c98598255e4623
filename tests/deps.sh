#!/usr/bin/env bash
# Installs the Debian packages Lumen builds, tests and runs with.
# A no-op when everything is present; runs `apt-get update` once before the
# first install on a fresh machine.
set -euo pipefail

packages=(
  gcc make pkg-config
  liblmdb-dev lmdb-utils         # storage
  libevent-dev                   # event loops, evhttp
  libssl-dev                     # TLS, hashes
  libargon2-dev libcrypt-dev     # password schemes
  check                          # unit tests
  ldap-utils python3-ldap        # real clients for integration tests
  clang libclang-rt-14-dev       # libFuzzer targets
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
install() { DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"; }
# A fresh machine has no package lists: fetch them before the first install.
if ! ls /var/lib/apt/lists/*_Packages* >/dev/null 2>&1; then $sudo apt-get update -qq; fi
# Package lists may be absent or stale on a fresh machine: refresh once and retry.
install || { $sudo apt-get update -qq && install; }
