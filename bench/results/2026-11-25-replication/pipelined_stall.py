#!/usr/bin/python3
"""A connection that pipelines thousands of modifies stops being served.

Found while writing the replication lag benchmark, reproduced at efe8597
(before this branch) with and without overlay syncprov: lumend stops
reading the connection (its receive queue keeps the unread requests, every
worker and the committer are idle, `ss -tn` shows Recv-Q > 0 on the server
side) and never answers the rest. OpenLDAP answers them all.

  ./pipelined_stall.py PORT [ROUNDS]
against a lumend whose rootdn is cn=admin,dc=example,dc=com / secret and
which holds uid=x,dc=example,dc=com (objectClass account). Each round
sends 5,000 modifies of that entry without reading, then reads the
answers for 10 s. Seen here: rounds 0-2 answered, round 3 none (with
syncprov); without syncprov, 3,092 of round 0.
"""
import sys
import time

import ldap

port = sys.argv[1]
c = ldap.initialize(f"ldap://127.0.0.1:{port}")
c.simple_bind_s("cn=admin,dc=example,dc=com", "secret")
for rnd in range(int(sys.argv[2]) if len(sys.argv) > 2 else 6):
    ids = set()
    for i in range(5000):
        ids.add(c.modify_ext("uid=x,dc=example,dc=com",
                             [(ldap.MOD_REPLACE, "description", [str(rnd * 5000 + i).encode()])]))
    got, deadline = 0, time.time() + 10
    while ids and time.time() < deadline:
        try:
            r = c.result3(ldap.RES_ANY, all=1, timeout=1)
        except ldap.TIMEOUT:
            continue
        if r[0] is not None:
            ids.discard(r[2])
            got += 1
    print(rnd, "answered", got, "missing", len(ids), flush=True)
    if ids:
        sys.exit(1)
