#!/usr/bin/env python3
"""A client that pipelines many requests before reading any answer must get
every answer once it reads, round after round (OpenLDAP answers them all):

1. Rounds of thousands of modifies of one entry, sent without reading,
   then read. The I/O thread stops reading the connection while its output
   is full and resumes when it drains; a kick racing that resumption once
   left the socket unwatched for good (libevent does not insert an event
   that is active when event_add is called, and reports success), so the
   rest of the requests were never read. The race needs load to show:
   before the fix, 1 run in 4 of 10 rounds of 5,000 stalled; this test
   runs fewer, so it finds the bug less often than it passes.
2. An anonymous connection over its conn_max_memory with unsent output,
   every operation done: draining the output is the only thing that can
   make room, and it must resume reading (it waited for an operation to
   end before, and none would). This one is deterministic.
"""
import os
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lumen_harness import Lumend, Results, integer, message, octets, read_responses, tlv  # noqa: E402

import ldap  # noqa: E402

R = Results("t_pipelined.py")
ENTRY = "uid=x,dc=example,dc=com"
ROUNDS = int(os.environ.get("LUMEN_IT_PIPELINE_ROUNDS", "6"))
PER_ROUND = 3000


def preload(tmp, description_bytes):
    path = os.path.join(tmp, "pipelined.ldif")
    with open(path, "w") as f:
        f.write("dn: dc=example,dc=com\nobjectClass: domain\ndc: example\n\n"
                f"dn: {ENTRY}\nobjectClass: account\nuid: x\n"
                f"description: {'d' * description_bytes}\n")
    return path


def modify_rounds(srv):
    c = ldap.initialize(f"ldap://127.0.0.1:{srv.port}")
    c.simple_bind_s("cn=admin,dc=example,dc=com", "secret")
    for rnd in range(ROUNDS):
        ids = set()
        for i in range(PER_ROUND):
            value = str(rnd * PER_ROUND + i).encode()
            ids.add(c.modify_ext(ENTRY, [(ldap.MOD_REPLACE, "description", [value])]))
        deadline = time.time() + 60
        while ids and time.time() < deadline:
            try:
                r = c.result3(ldap.RES_ANY, all=1, timeout=1)
            except ldap.TIMEOUT:
                continue
            if r[0] is not None:
                ids.discard(r[2])
        if not R.check(f"round {rnd}: all {PER_ROUND} pipelined modifies answered",
                       not ids, f"{len(ids)} unanswered"):
            break
    c.unbind_s()


def base_search(msgid):
    body = (octets(ENTRY) + integer(0, 0x0A) + integer(0, 0x0A) + integer(0) + integer(0)
            + tlv(0x01, b"\x00") + octets("objectClass", 0x87) + tlv(0x30, b""))
    return message(msgid, tlv(0x63, body))


def memory_bound_drain(srv):
    """300 searches of a 20 KB entry (6 MB of answers) against a 64 KiB
    per-connection bound, sent before reading; then 20 more."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)   # before the handshake
    s.connect(("127.0.0.1", srv.port))
    s.sendall(b"".join(base_search(i) for i in range(1, 301)))
    time.sleep(1.0)                  # let the output fill and the reading stop
    got, _ = read_responses(s, count=600, timeout=30)
    done = [r for r in got if r.op == 0x65]
    R.check("300 pipelined searches over conn_max_memory: every one answered",
            len(done) == 300, f"{len(done)} SearchResultDone")
    s.sendall(b"".join(base_search(i) for i in range(301, 321)))
    got, _ = read_responses(s, count=40, timeout=15)
    done = [r for r in got if r.op == 0x65]
    R.check("and the connection takes requests again after draining",
            len(done) == 20, f"{len(done)} SearchResultDone")
    s.close()


tmp = tempfile.mkdtemp(prefix="t_pipelined.")
srv = Lumend(db_config="dbnosync", preload=preload(tmp, 10))
try:
    modify_rounds(srv)
finally:
    srv.stop(R)
srv = Lumend(extra_config="conn_max_memory 64K", preload=preload(tmp, 20000))
try:
    memory_bound_drain(srv)
finally:
    srv.stop(R)
R.finish()
