#!/bin/bash
# One 100k-entry database for each server, as compare.sh builds them
# (threads 4, loglevel none, same indexes, Lumen's default cache).
# Usage: setup.sh WORKDIR [BUILD]   (BUILD defaults to build)
set -eu
work=$1; BUILD=${2:-build}
src=$(cd "$(dirname "$0")/../../.." && pwd)
mkdir -p "$work/openldap/db" "$work/lumen/db"
[ -s "$work/data.ldif" ] ||
  "$BUILD/lumengen" -n 100000 --entry-size 500 --groups 5 -o "$work/data.ldif"
indexes() { printf 'index objectClass eq\nindex uid eq\nindex cn,sn,mail,givenName pres,eq,sub\n'; }
{
  for s in core cosine inetorgperson nis; do echo "include /etc/ldap/schema/$s.schema"; done
  echo "modulepath /usr/lib/ldap"; echo "moduleload back_mdb"
  echo "pidfile $work/openldap/slapd.pid"; echo "argsfile $work/openldap/slapd.args"
  echo "threads 4"; echo "loglevel 0"; echo "sizelimit unlimited"
  echo "database mdb"; echo "suffix dc=example,dc=com"
  echo "rootdn cn=admin,dc=example,dc=com"; echo "rootpw secret"
  echo "directory $work/openldap/db"; echo "maxsize 17179869184"; indexes
} > "$work/openldap/slapd.conf"
{
  for s in core cosine inetorgperson nis lumen; do echo "include $src/schema/$s.schema"; done
  echo "pidfile $work/lumen/lumend.pid"
  echo "threads 4"; echo "loglevel none"; echo "sizelimit unlimited"
  echo "database mdb"; echo "suffix dc=example,dc=com"
  echo "rootdn cn=admin,dc=example,dc=com"; echo "rootpw secret"
  echo "directory $work/lumen/db"; echo "maxsize 17179869184"; indexes
} > "$work/lumen/lumend.conf"
[ -s "$work/openldap/db/data.mdb" ] || slapadd -q -f "$work/openldap/slapd.conf" -l "$work/data.ldif"
[ -s "$work/lumen/db/data.mdb" ] || "$BUILD/lumenadd" -q -f "$work/lumen/lumend.conf" -l "$work/data.ldif"
