#!/usr/bin/env bash
# The comparison's packages (slapd, gnuplot, GNU time) are part of the
# project's one dependency list; see tests/deps.sh.
exec "$(dirname "$0")/../tests/deps.sh"
