#!/usr/bin/env python3
"""Crash test: kill -9 lumend under a synced write load, several times.

lumend runs with sync on (no dbnosync) and indexes on uid and description.
Two client connections (python-ldap, one thread each) send a steady stream
of adds and modifies; every operation acknowledged with success is recorded,
as is the one operation each client has in flight. At a random moment 1-3 s
into the load the daemon gets SIGKILL. Then, with the daemon stopped,
`lumenindex --check` must pass; the daemon restarts on the same database and:
  - every acknowledged add is there, and nothing that was never sent;
  - each entry's description is the last acknowledged modify value (or the
    value of the modify in flight at the kill), and title - replaced in the
    same modify - carries the same value (no half-applied modify);
  - indexed equality searches (uid=..., description=...) find the entries.
Four rounds; each round's writes build on the previous ones. The random seed
is printed (CRASH_SEED=... reproduces the kill moments).

LUMEN_IT_SERVER=slapd runs the same test against OpenLDAP's slapd (checks the
test itself; there is no index checker then).
"""
import os
import random
import signal
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402

import ldap  # noqa: E402

r = h.Results("t_crash.py")
KIND = os.environ.get("LUMEN_IT_SERVER", "lumend")
if KIND == "slapd" and sh.slapd_missing():
    print(f"  skip t_crash.py: {sh.slapd_missing()}")
    r.finish()
ROUNDS = int(os.environ.get("CRASH_ROUNDS", "4"))
WRITERS = 2
SEED = int(os.environ.get("CRASH_SEED", str(int(time.time()) % 100000)))
WATCHDOG_S = 300
BASE = f"ou=crash,{sh.SUFFIX}"
KILLING = threading.Event()   # set from just before the SIGKILL to the restart


def connect(server):
    c = ldap.initialize(server.uri)
    c.set_option(ldap.OPT_PROTOCOL_VERSION, 3)
    c.set_option(ldap.OPT_NETWORK_TIMEOUT, 10)
    c.set_option(ldap.OPT_TIMEOUT, 30)
    c.simple_bind_s(sh.ROOTDN, sh.ROOTPW)
    return c


class Writer(threading.Thread):
    """Adds entries and modifies its own entries until the server goes away.
    state (shared across rounds): acked adds, last acked value per DN."""

    def __init__(self, server, wid, rnd_seed, state):
        super().__init__(daemon=True)
        self.server, self.wid, self.rnd = server, wid, random.Random(rnd_seed)
        self.state = state          # {"entries": {dn: value}, "counter": int}
        self.inflight = None        # (op, dn, value) sent, not yet answered
        self.acked = 0
        self.unexpected = []
        self.stop_flag = False

    def run(self):
        try:
            conn = connect(self.server)
        except ldap.LDAPError as e:
            self.unexpected.append(f"connect: {e!r}")
            return
        entries = self.state["entries"]
        while not self.stop_flag:
            self.state["counter"] += 1
            n = self.state["counter"]
            value = f"w{self.wid}-v{n}"
            if not entries or self.rnd.random() < 0.5:
                dn = f"uid=w{self.wid}-{n},{BASE}"
                self.inflight = ("add", dn, value)
                try:
                    conn.add_s(dn, [("objectClass", [b"top", b"person", b"organizationalPerson",
                                                     b"inetOrgPerson"]),
                                    ("uid", [f"w{self.wid}-{n}".encode()]),
                                    ("cn", [f"writer {self.wid} entry {n}".encode()]),
                                    ("sn", [b"Crash"]), ("description", [value.encode()]),
                                    ("title", [value.encode()])])
                except ldap.SERVER_DOWN:
                    return
                except ldap.LDAPError as e:
                    if KILLING.is_set() or not self.server.alive():
                        return
                    self.unexpected.append(f"add {dn}: {e!r}")
                    self.inflight = None
                    continue
                entries[dn] = value
            else:
                dn = self.rnd.choice(list(entries))
                self.inflight = ("modify", dn, value)
                try:
                    conn.modify_s(dn, [(ldap.MOD_REPLACE, "description", [value.encode()]),
                                       (ldap.MOD_REPLACE, "title", [value.encode()])])
                except ldap.SERVER_DOWN:
                    return
                except ldap.LDAPError as e:
                    if KILLING.is_set() or not self.server.alive():
                        return
                    self.unexpected.append(f"modify {dn}: {e!r}")
                    self.inflight = None
                    continue
                entries[dn] = value
            self.inflight = None
            self.acked += 1


def verify(server, states, inflight, label):
    """Compare the server's ou=crash subtree with what the writers were told."""
    conn = connect(server)
    got = {}
    for dn, attrs in conn.search_s(BASE, ldap.SCOPE_ONELEVEL, "(objectClass=*)",
                                   ["description", "title", "uid"]):
        got[dn.lower()] = attrs
    expected = {}
    for st in states:
        expected.update({dn.lower(): v for dn, v in st["entries"].items()})
    inflight_by_dn = {}
    for op in inflight:
        if op:
            inflight_by_dn[op[1].lower()] = op
    lost = [dn for dn in expected if dn not in got]
    r.check(f"{label}: all {len(expected)} acknowledged adds are present", not lost,
            f"missing {len(lost)}: {lost[:5]}")
    ghosts = [dn for dn in got if dn not in expected
              and not (dn in inflight_by_dn and inflight_by_dn[dn][0] == "add")]
    r.check(f"{label}: no entry that was never acknowledged or in flight", not ghosts,
            f"{ghosts[:5]}")
    stale, torn = [], []
    for dn, attrs in got.items():
        desc = attrs.get("description", [b"?"])
        title = attrs.get("title", [b"?"])
        if desc != title or len(desc) != 1:
            torn.append((dn, desc, title))
        if dn in expected:
            ok_values = {expected[dn]}
            if dn in inflight_by_dn and inflight_by_dn[dn][0] == "modify":
                ok_values.add(inflight_by_dn[dn][2])
            if desc[0].decode() not in ok_values:
                stale.append((dn, desc[0].decode(), sorted(ok_values)))
    r.check(f"{label}: every entry holds its last acknowledged modify", not stale,
            f"{len(stale)} differ, e.g. {stale[:5]}")
    r.check(f"{label}: description and title (one modify) always agree", not torn, f"{torn[:5]}")

    # Indexed equality searches find the entries by uid and by description.
    rnd = random.Random(len(got))
    sample = rnd.sample(sorted(expected), min(80, len(expected)))
    bad_uid, bad_desc = [], []
    for dn in sample:
        uid = dn.split(",", 1)[0].split("=", 1)[1]
        res = conn.search_s(BASE, ldap.SCOPE_SUBTREE, f"(uid={uid})", ["1.1"])
        if [d.lower() for d, _ in res] != [dn]:
            bad_uid.append((uid, [d for d, _ in res]))
        value = got[dn]["description"][0].decode() if dn in got else expected[dn]
        res = conn.search_s(sh.SUFFIX, ldap.SCOPE_SUBTREE, f"(description={value})", ["1.1"])
        if [d.lower() for d, _ in res] != [dn]:
            bad_desc.append((value, dn, [d for d, _ in res]))
    r.check(f"{label}: indexed (uid=...) finds each of {len(sample)} sampled entries",
            not bad_uid, f"{bad_uid[:5]}")
    r.check(f"{label}: indexed (description=...) finds their current value", not bad_desc,
            f"{bad_desc[:5]}")
    n = len(conn.search_s(BASE, ldap.SCOPE_SUBTREE, "(objectClass=inetOrgPerson)", ["1.1"]))
    r.check(f"{label}: (objectClass=inetOrgPerson) counts {len(got)} entries", n == len(got),
            f"{n} != {len(got)}")
    conn.unbind_s()


def index_check(server, label):
    if server.kind != "lumend":
        return
    rc, out = server.index_check()
    r.check(f"{label}: lumenindex --check passes with the daemon stopped", rc == 0, out[-3000:])


def main():
    print(f"  info t_crash.py: CRASH_SEED={SEED}")
    rnd = random.Random(SEED)
    server = sh.make_server(KIND, db_lines=["index objectClass eq", "index uid eq",
                                            "index description eq"])

    def watchdog(signum, frame):
        raise TimeoutError(f"over {WATCHDOG_S} s")
    signal.signal(signal.SIGALRM, watchdog)
    signal.alarm(WATCHDOG_S)
    try:
        server.start()
        c = connect(server)
        c.add_s(sh.SUFFIX, [("objectClass", [b"top", b"dcObject", b"organization"]),
                            ("dc", [b"example"]), ("o", [b"Example"])])
        c.add_s(BASE, [("objectClass", [b"top", b"organizationalUnit"]), ("ou", [b"crash"])])
        c.unbind_s()
        states = [{"entries": {}, "counter": 0} for _ in range(WRITERS)]
        for rnd_no in range(1, ROUNDS + 1):
            label = f"round {rnd_no}"
            writers = [Writer(server, w, rnd.randrange(1 << 30), states[w]) for w in range(WRITERS)]
            for w in writers:
                w.start()
            delay = rnd.uniform(1.0, 3.0)
            time.sleep(delay)
            KILLING.set()
            server.kill9()
            for w in writers:
                w.stop_flag = True
                w.join(60)
            hung = [w.wid for w in writers if w.is_alive()]
            acked = sum(w.acked for w in writers)
            print(f"  info t_crash.py: {label}: SIGKILL after {delay:.2f} s, {acked} writes acknowledged")
            r.check(f"{label}: writers stopped after the kill", not hung, f"writers {hung}")
            r.check(f"{label}: writes were acknowledged before the kill", acked > 0)
            unexpected = [u for w in writers for u in w.unexpected]
            r.check(f"{label}: no write failed while the server was up", not unexpected,
                    "\n       ".join(unexpected[:5]))
            index_check(server, label)
            try:
                server.start()
            except RuntimeError as e:
                r.check(f"{label}: the daemon restarts after SIGKILL", False, str(e)[-3000:])
                return
            r.check(f"{label}: the daemon restarts after SIGKILL", True)
            KILLING.clear()
            verify(server, states, [w.inflight for w in writers], label)
            # The in-flight operations are settled now: what is there is the truth.
            conn = connect(server)
            for w in writers:
                if w.inflight:
                    op, dn, value = w.inflight
                    res = conn.search_s(BASE, ldap.SCOPE_ONELEVEL, "(objectClass=*)", ["description"])
                    cur = {d.lower(): a["description"][0].decode() for d, a in res}
                    if dn.lower() in cur:
                        states[w.wid]["entries"][dn] = cur[dn.lower()]
                    w.inflight = None
            conn.unbind_s()
        server.terminate()
        index_check(server, "after the last round, clean stop")
        server.start()
        verify(server, states, [], "final")
        server.stop(r)
    except TimeoutError as e:
        r.check("finishes within the watchdog", False, str(e))
        server.cleanup()
    except Exception as e:  # noqa: BLE001 - report, clean up, fail
        r.check("runs to the end", False, f"{type(e).__name__}: {e}\n{server.log_text()[-2000:]}")
        server.cleanup()
    finally:
        signal.alarm(0)


if __name__ == "__main__":
    main()
    r.finish()
