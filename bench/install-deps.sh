#!/usr/bin/env bash
# Installs what the comparison needs (OpenLDAP's slapd, gnuplot, GNU time)
# without ever starting a system slapd: Debian's postinst would start one
# through invoke-rc.d, so a policy-rc.d answering 101 ("action forbidden")
# is put in place for the install and removed afterwards if we created it.
set -euo pipefail

packages=(slapd gnuplot-nox time)
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
policy=/usr/sbin/policy-rc.d
created_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
  $sudo chmod 755 "$policy"
  created_policy=1
fi
remove_policy() { [ $created_policy -eq 1 ] && $sudo rm -f "$policy"; return 0; }
trap remove_policy EXIT

# Preseed so the install asks nothing; the package's own database is not used.
printf 'slapd slapd/no_configuration boolean true\n' | $sudo debconf-set-selections

echo "bench: installing ${missing[*]}"
install() {
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
    --no-install-recommends "${missing[@]}"
}
install || { $sudo apt-get update -qq && install; }
