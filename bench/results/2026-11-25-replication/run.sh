#!/bin/sh
# The run behind report.md: 100k entries, both servers, defaults of
# bench/replication.sh (dbnosync, nice 10), from the root of the tree.
exec bench/replication.sh --entries 100000 --out bench/results/2026-11-25-replication "$@"
