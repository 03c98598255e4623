#!/usr/bin/env python3
"""t_txn_wait.py — an End Transaction gives up its worker while its
group waits (op_txn.c passes its wait hook to database_group_begin/end,
database.h), so with `threads 1` another operation that needs a worker
is answered while the End is still waiting for its commits.

Commits are made slow on purpose: the server is lumend-faults (the
fault-injection seam, tests/fault/fault_inject.c) with
LUMEN_FAULT=commit:SLOW_MS, armed by SIGUSR2 once the directory is
loaded, so that every write transaction's commit waits SLOW_MS, holding
LMDB's write lock as a slow disk's sync would. Then:

1. connection B sends a modify (outside any transaction), whose commit
   takes SLOW_MS;
2. connection A ends a transaction holding one add: its group opens
   behind B's commit, runs the add, then commits, another SLOW_MS;
3. while A's group waits to open, connection C sends a subtree search
   with a presence filter, which the I/O thread does not run itself
   (inline_ops.c): it needs a worker. It must be answered before B's
   modify, whose commit is still waiting. An End holding the only worker
   makes it wait until the group has opened and the add has stepped out;
4. once B is answered and A's group is in its commit, C searches again,
   and must be answered before the End. An End holding the worker
   through its commit is answered before that search can even start.

The End, the modify and the add must all succeed, and the add must be
in the directory afterwards.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lumen_harness import Results  # noqa: E402
import slapd_harness as sh  # noqa: E402

import ldap  # noqa: E402
import ldap.extop  # noqa: E402
import ldap.modlist  # noqa: E402
from ldap.controls import RequestControl  # noqa: E402

R = Results("t_txn_wait.py")
ADMIN, PW, BASE = sh.ROOTDN, sh.ROOTPW, sh.SUFFIX
START, SPEC, END = "1.3.6.1.1.21.1", "1.3.6.1.1.21.2", "1.3.6.1.1.21.3"
SLOW_MS = 1500


def connect(uri):
    c = ldap.initialize(uri)
    c.set_option(ldap.OPT_PROTOCOL_VERSION, 3)
    c.simple_bind_s(ADMIN, PW)
    return c


def der_octets(value):
    assert len(value) < 128
    return bytes([0x04, len(value)]) + value


def end_value(txid):
    """txnEndReq: SEQUENCE { identifier } (commit defaults to TRUE)."""
    inner = der_octets(txid)
    return bytes([0x30, len(inner)]) + inner


def load(conn):
    conn.add_s(BASE, ldap.modlist.addModlist({"objectClass": [b"organization", b"dcObject"],
                                              "o": [b"Example"], "dc": [b"example"]}))
    for n in range(20):
        conn.add_s(f"cn=p{n},{BASE}", ldap.modlist.addModlist(
            {"objectClass": [b"person"], "cn": [f"p{n}".encode()], "sn": [b"P"]}))


def search_needing_worker(conn):
    """A subtree presence search: not one an I/O thread runs itself."""
    msgid = conn.search_ext(BASE, ldap.SCOPE_SUBTREE, "(cn=*)", ["cn"])
    try:
        return conn.result(msgid, all=1, timeout=30)[1]
    except ldap.TIMEOUT:
        return []


class Outstanding:
    """A request sent asynchronously; its result code once answered."""

    def __init__(self, conn, msgid):
        self.conn, self.msgid, self.code = conn, msgid, None

    def answered(self, timeout=0):
        """Has the answer arrived (waiting up to timeout seconds)? It is
        read once and kept: python-ldap hands a result out only once."""
        if self.code is None:
            try:
                if self.conn.result(self.msgid, all=1, timeout=timeout) != (None, None):
                    self.code = 0
            except ldap.TIMEOUT:
                pass
            except ldap.LDAPError as e:
                self.code = e.args[0].get("result", -1)
        return self.code is not None

    def outcome(self):
        """The result code, waiting up to 30 s; "none" without an answer."""
        return self.code if self.answered(timeout=30) else "none"


def scenario(server):
    a, b, c = connect(server.uri), connect(server.uri), connect(server.uri)
    load(a)
    _, txid = a.extop_s(ldap.extop.ExtendedRequest(START, None))
    a.add_ext_s(f"cn=in-txn,{BASE}", ldap.modlist.addModlist(
        {"objectClass": [b"person"], "cn": [b"in-txn"], "sn": [b"T"]}),
        serverctrls=[RequestControl(SPEC, True, txid)])

    server.arm()
    began = time.monotonic()
    modify = Outstanding(b, b.modify_ext(f"cn=p0,{BASE}",
                                         [(ldap.MOD_REPLACE, "sn", [b"changed"])]))
    time.sleep(0.3)                      # B is in its commit's sync
    end = Outstanding(a, a.extop(ldap.extop.ExtendedRequest(END, end_value(txid))))
    time.sleep(0.3)                      # A's End waits for its group to open
    found = search_needing_worker(c)
    R.check("a search needing the worker is answered while the End waits for its group "
            "to open (the modify ahead of it is still committing)", not modify.answered(),
            f"answered {time.monotonic() - began:.2f} s in, the modify already done")
    R.check("that search saw the 20 people, not the uncommitted add", len(found) == 20,
            f"{len(found)} entries")
    code = modify.outcome()
    R.check("the modify outside the transaction succeeds", code == 0, f"result {code}")
    time.sleep(0.5)                      # the End's group runs its add, then syncs
    found = search_needing_worker(c)
    R.check("a search needing the worker is answered while the End waits for its "
            "group's commit", not end.answered(),
            f"answered {time.monotonic() - began:.2f} s in, the End already done")
    code = end.outcome()
    R.check("the End commits", code == 0, f"result {code}")
    ended_after = time.monotonic() - began
    R.check("the End waited for two slow commits",
            ended_after >= 2 * SLOW_MS / 1000 * 0.9, f"{ended_after:.2f} s")
    server.arm()
    added = c.search_s(f"cn=in-txn,{BASE}", ldap.SCOPE_BASE, "(objectClass=*)", ["cn"])
    R.check("the transaction's add is in the directory", len(added) == 1, repr(added))
    for conn in (a, b, c):
        conn.unbind_s()


def main():
    server = sh.ArmedFaultsLumend(f"commit:{SLOW_MS}", global_lines=["threads 1"])
    server.start()
    try:
        scenario(server)
    finally:
        server.stop(R)
    R.finish()


if __name__ == "__main__":
    main()
