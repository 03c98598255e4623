#!/usr/bin/env python3
"""Crash test with overlays and a replica: kill -9 the provider under a
synced write load, cycle after cycle, with memberof, refint, unique and
syncprov on it and a lumend consumer (refreshAndPersist) attached.

Two writers (python-ldap, one thread each) own their users (uid=wN-M under
ou=people) and groups (cn=gN-K under ou=groups) and send a random mix:
add a user, add or remove a group member, delete a user (refint removes
it from its groups), rename a user (refint renames the member values),
and add a duplicate uid (unique must refuse it with constraintViolation).
Each writer keeps a model of what the server acknowledged; the one
operation in flight at the kill may or may not have happened. At a random
moment 1-2 s into each cycle the provider gets SIGKILL; every other cycle
the consumer gets one too. Then, with the daemons stopped, `lumenindex
--check` must pass on both; after the restart:
  - each writer's users and group members are exactly its acknowledged
    model, or that model plus its operation in flight;
  - memberOf: every user's memberOf names exactly the groups that list it
    as a member; refint: every member value names an existing entry;
    unique: no uid is held twice;
  - the consumer converges to the provider (every DN, user attribute,
    entryUUID and entryCSN, and the memberOf values).

CRASH_CYCLES (default 5) sets the number of cycles; CRASH_SEED=... repeats
the kill moments and the operation mix. LUMEN_IT_SERVER=slapd runs the same
cycles with Debian's slapd as provider and consumer (the same overlays as
modules; there is no index checker then). slapd 2.5 fails them, which shows
the checks bite where Lumen does better: after a kill an entry kept no
memberOf while a group listed it (memberof's own modifies are transactions
of their own), and the consumer never converged (group member lists that
differ under the same entryCSN, 30 s after every restart).
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

R = h.Results("t_crash_overlays.py")
KIND = os.environ.get("LUMEN_IT_SERVER", "lumend")
if KIND == "slapd" and sh.slapd_missing():
    print(f"  skip t_crash_overlays.py: {sh.slapd_missing()}")
    R.finish()
CYCLES = int(os.environ.get("CRASH_CYCLES", "5"))
SEED = int(os.environ.get("CRASH_SEED", str(int(time.time()) % 100000)))
WRITERS, GROUPS_PER_WRITER = 2, 3
WATCHDOG_S = 60 + 40 * CYCLES
PEOPLE, GROUPS = "ou=people," + sh.SUFFIX, "ou=groups," + sh.SUFFIX
KILLING = threading.Event()   # set from just before the SIGKILL to the restart

PROVIDER_LINES = ["index objectClass,uid,member,memberOf,entryUUID,entryCSN eq",
                  "overlay syncprov", "overlay memberof",
                  "overlay refint", "refint_attributes member",
                  "overlay unique", "unique_uri ldap:///?uid?sub"]


# slapd loads the overlays (and, on the consumer, memberOf's definition).
SLAPD_MODULES = ["moduleload syncprov", "moduleload memberof", "moduleload refint",
                 "moduleload unique"]


def make(db_lines):
    return sh.make_server(KIND, db_lines=db_lines,
                          global_lines=SLAPD_MODULES if KIND == "slapd" else [])


def consumer_lines(provider_uri):
    return ["index objectClass,entryUUID,entryCSN eq", "dbnosync",
            f'syncrepl rid=042 provider={provider_uri} bindmethod=simple '
            f'binddn="{sh.ROOTDN}" credentials={sh.ROOTPW} searchbase="{sh.SUFFIX}" '
            'type=refreshAndPersist retry="1 +" timeout=5 network-timeout=5 '
            'attrs="*,+" schemachecking=off']


def connect(server):
    c = ldap.initialize(server.uri)
    c.set_option(ldap.OPT_PROTOCOL_VERSION, 3)
    c.set_option(ldap.OPT_NETWORK_TIMEOUT, 10)
    c.set_option(ldap.OPT_TIMEOUT, 30)
    c.simple_bind_s(sh.ROOTDN, sh.ROOTPW)
    return c


# ---------------------------------------------------------------- the model
# A writer's state: {"users": {dn}, "groups": {group dn: {member dn}}}, DNs
# in lower case. An operation is a tuple; apply() returns the state after it.

def apply(state, op):
    users = set(state["users"])
    groups = {g: set(m) for g, m in state["groups"].items()}
    kind = op[0]
    if kind == "add":
        users.add(op[1])
    elif kind == "addmember":
        groups[op[1]].add(op[2])
    elif kind == "delmember":
        groups[op[1]].discard(op[2])
    elif kind == "delete":
        users.discard(op[1])
        for members in groups.values():
            members.discard(op[1])
    elif kind == "rename":
        users.discard(op[1])
        users.add(op[2])
        for members in groups.values():
            if op[1] in members:
                members.discard(op[1])
                members.add(op[2])
    return {"users": users, "groups": groups}


def person(uid):
    return [("objectClass", [b"inetOrgPerson"]), ("uid", [uid.encode()]),
            ("cn", [f"user {uid}".encode()]), ("sn", [b"Crash"])]


class Writer(threading.Thread):
    def __init__(self, server, wid, seed, state):
        super().__init__(daemon=True)
        self.server, self.wid, self.rnd = server, wid, random.Random(seed)
        self.state = state            # the acknowledged model, kept across cycles
        self.inflight = None          # the operation sent and not yet answered
        self.acked = 0
        self.refused_dupes = 0
        self.unexpected = []
        self.stop_flag = False

    def next_op(self):
        users = sorted(self.state["users"])
        groups = sorted(self.state["groups"])
        n = self.state.setdefault("counter", 0) + 1
        self.state["counter"] = n
        roll = self.rnd.random()
        if len(users) < 3 or roll < 0.3:
            return ("add", f"uid=w{self.wid}-{n},{PEOPLE}")
        user, group = self.rnd.choice(users), self.rnd.choice(groups)
        if roll < 0.55:
            return ("addmember" if user not in self.state["groups"][group] else "delmember",
                    group, user)
        if roll < 0.7:
            return ("delete", user)
        if roll < 0.85:
            return ("rename", user, f"uid=w{self.wid}-{n},{PEOPLE}")
        return ("dupe", f"cn=dupe-{self.wid}-{n},{PEOPLE}", user.split(",")[0][4:])

    def send(self, conn, op):
        kind = op[0]
        if kind == "add":
            conn.add_s(op[1], person(op[1].split(",")[0][4:]))
        elif kind in ("addmember", "delmember"):
            mod = ldap.MOD_ADD if kind == "addmember" else ldap.MOD_DELETE
            conn.modify_s(op[1], [(mod, "member", [op[2].encode()])])
        elif kind == "delete":
            conn.delete_s(op[1])
        elif kind == "rename":
            conn.rename_s(op[1], op[2].split(",")[0], delold=1)
        elif kind == "dupe":
            try:
                conn.add_s(op[1], [("objectClass", [b"inetOrgPerson"]), ("uid", [op[2].encode()]),
                                   ("cn", [b"dupe"]), ("sn", [b"Dupe"])])
            except ldap.CONSTRAINT_VIOLATION:
                self.refused_dupes += 1
                return
            self.unexpected.append(f"unique let a second uid={op[2]} in: {op[1]}")

    def run(self):
        try:
            conn = connect(self.server)
        except ldap.LDAPError as e:
            self.unexpected.append(f"connect: {e!r}")
            return
        while not self.stop_flag:
            op = self.next_op()
            self.inflight = op
            try:
                self.send(conn, op)
            except ldap.SERVER_DOWN:
                return
            except ldap.LDAPError as e:
                if KILLING.is_set() or not self.server.alive():
                    return
                self.unexpected.append(f"{op}: {e!r}")
                self.inflight = None
                continue
            self.state.update(apply(self.state, op))
            self.inflight = None
            self.acked += 1


# ------------------------------------------------------------- verification

def lower_values(attrs, name):
    return {v.decode().lower() for v in attrs.get(name, [])}


def server_state(conn, wid):
    users = {dn.lower() for dn, _ in conn.search_s(PEOPLE, ldap.SCOPE_ONELEVEL,
                                                   f"(uid=w{wid}-*)", ["1.1"])}
    groups = {dn.lower(): lower_values(a, "member") - {sh.ROOTDN.lower()}
              for dn, a in conn.search_s(GROUPS, ldap.SCOPE_ONELEVEL, f"(cn=g{wid}-*)",
                                         ["member"])}
    return {"users": users, "groups": groups}


def model_view(state):
    return {"users": set(state["users"]), "groups": state["groups"]}


def verify(provider, writers, label):
    conn = connect(provider)
    for w in writers:
        got = server_state(conn, w.wid)
        acked = model_view(w.state)
        maybe = model_view(apply(w.state, w.inflight)) if w.inflight else acked
        ok = got == acked or got == maybe
        detail = ""
        if not ok:
            differ = [(g, got["groups"].get(g), m) for g, m in acked["groups"].items()
                      if got["groups"].get(g) != m]
            detail = (f"users missing {sorted(acked['users'] - got['users'])[:3]} "
                      f"extra {sorted(got['users'] - acked['users'])[:3]}; groups differ "
                      f"{differ[:2]}; in flight {w.inflight}")
        R.check(f"{label}: writer {w.wid}'s acknowledged users and members are all there "
                f"({len(acked['users'])} users)", ok, detail)
        # What is there is the truth from here on (the write in flight settled).
        w.state["users"], w.state["groups"] = got["users"], got["groups"]
        w.inflight = None
    entries = conn.search_s(sh.SUFFIX, ldap.SCOPE_SUBTREE, "(objectClass=*)",
                            ["member", "memberOf", "uid"])
    conn.unbind_s()
    names = {dn.lower() for dn, _ in entries}
    members_of = {}
    dangling, uids = [], {}
    for dn, attrs in entries:
        for m in lower_values(attrs, "member"):
            members_of.setdefault(m, set()).add(dn.lower())
            if m not in names and m != sh.ROOTDN.lower():
                dangling.append((dn, m))
        for uid in lower_values(attrs, "uid"):
            uids.setdefault(uid, []).append(dn)
    wrong_memberof = [(dn, sorted(lower_values(a, "memberOf")),
                       sorted(members_of.get(dn.lower(), ())))
                      for dn, a in entries
                      if lower_values(a, "memberOf") != members_of.get(dn.lower(), set())]
    R.check(f"{label}: memberOf names exactly the groups listing each entry",
            not wrong_memberof, f"{len(wrong_memberof)} differ, e.g. {wrong_memberof[:3]}")
    R.check(f"{label}: refint: every member value names an entry", not dangling, dangling[:3])
    dupes = {u: d for u, d in uids.items() if len(d) > 1}
    R.check(f"{label}: unique: no uid is held twice", not dupes, list(dupes.items())[:3])


def memberof_view(conn):
    return {dn.lower(): sorted(lower_values(a, "memberOf"))
            for dn, a in conn.search_s(PEOPLE, ldap.SCOPE_ONELEVEL, "(objectClass=*)",
                                       ["memberOf"])}


def index_check(server, label):
    if server.kind != "lumend":
        return
    rc, out = server.index_check()
    R.check(f"{label}: lumenindex --check passes on the {server.role}", rc == 0, out[-3000:])


def restart(server, label):
    try:
        server.start()
        return True
    except RuntimeError as e:
        R.check(f"{label}: the {server.role} restarts after SIGKILL", False, str(e)[-3000:])
        return False


def load(provider):
    c = connect(provider)
    c.add_s(sh.SUFFIX, [("objectClass", [b"dcObject", b"organization"]), ("dc", [b"example"]),
                        ("o", [b"Example"])])
    c.add_s(PEOPLE, [("objectClass", [b"organizationalUnit"]), ("ou", [b"people"])])
    c.add_s(GROUPS, [("objectClass", [b"organizationalUnit"]), ("ou", [b"groups"])])
    states = []
    for w in range(WRITERS):
        groups = {}
        for k in range(GROUPS_PER_WRITER):
            dn = f"cn=g{w}-{k},{GROUPS}"
            # groupOfNames needs a member: the rootdn's name, not an entry
            # (refint and memberof leave names outside the tree alone).
            c.add_s(dn, [("objectClass", [b"groupOfNames"]), ("cn", [f"g{w}-{k}".encode()]),
                         ("member", [sh.ROOTDN.encode()])])
            groups[dn.lower()] = set()
        states.append({"users": set(), "groups": groups})
    c.unbind_s()
    return states


def cycle(no, rnd, provider, consumer, states, totals):
    label = f"cycle {no}"
    writers = [Writer(provider, w, rnd.randrange(1 << 30), states[w]) for w in range(WRITERS)]
    for w in writers:
        w.start()
    delay = rnd.uniform(1.0, 2.0)
    time.sleep(delay)
    KILLING.set()
    provider.kill9()
    kill_consumer = no % 2 == 0
    if kill_consumer:
        consumer.kill9()
    for w in writers:
        w.stop_flag = True
        w.join(60)
    acked = sum(w.acked for w in writers)
    totals["acked"] += acked
    totals["dupes"] += sum(w.refused_dupes for w in writers)
    print(f"  info {label}: SIGKILL after {delay:.2f} s"
          f"{' (and the consumer)' if kill_consumer else ''}, {acked} writes acknowledged")
    R.check(f"{label}: writers stopped after the kill", not any(w.is_alive() for w in writers))
    unexpected = [u for w in writers for u in w.unexpected]
    R.check(f"{label}: no write failed while the provider was up", not unexpected,
            "\n       ".join(unexpected[:5]))
    index_check(provider, label)
    if kill_consumer:
        index_check(consumer, label)
    t = time.monotonic()
    if not restart(provider, label) or (kill_consumer and not restart(consumer, label)):
        return False
    KILLING.clear()
    verify(provider, writers, label)
    p, c = connect(provider), connect(consumer)
    sh.converge(R, p, c, label, seconds=30)
    totals["converge_s"].append(time.monotonic() - t)
    want, got = memberof_view(p), memberof_view(c)
    R.check(f"{label}: the consumer's memberOf values are the provider's", got == want,
            [(dn, want[dn], got.get(dn)) for dn in want if got.get(dn) != want[dn]][:3])
    p.unbind_s()
    c.unbind_s()
    return True


def main():
    print(f"  info t_crash_overlays.py: {KIND}, CRASH_SEED={SEED} CRASH_CYCLES={CYCLES}")
    rnd = random.Random(SEED)
    provider = make(PROVIDER_LINES)
    consumer = make(consumer_lines(provider.uri))
    provider.role, consumer.role = "provider", "consumer"

    def watchdog(signum, frame):
        raise TimeoutError(f"over {WATCHDOG_S} s")
    signal.signal(signal.SIGALRM, watchdog)
    signal.alarm(WATCHDOG_S)
    started = time.monotonic()
    totals = {"acked": 0, "dupes": 0, "converge_s": []}
    try:
        provider.start()
        states = load(provider)
        consumer.start()
        for no in range(1, CYCLES + 1):
            if not cycle(no, rnd, provider, consumer, states, totals):
                break
        R.check("duplicate uids were tried and refused", totals["dupes"] > 0, totals["dupes"])
        provider.terminate()
        consumer.terminate()
        index_check(provider, "after a clean stop")
        index_check(consumer, "after a clean stop")
        conv = totals["converge_s"]
        print(f"  info t_crash_overlays.py: {len(conv)} cycles in "
              f"{time.monotonic() - started:.1f} s, {totals['acked']} writes acknowledged, "
              f"{totals['dupes']} duplicate uids refused; restart to converged "
              f"max {max(conv, default=0):.1f} s, mean {sum(conv) / max(len(conv), 1):.1f} s")
        provider.start()
        consumer.start()
        provider.stop(R)
        consumer.stop(R)
    except TimeoutError as e:
        R.check("finishes within the watchdog", False, str(e))
        provider.cleanup()
        consumer.cleanup()
    except Exception as e:  # noqa: BLE001 - report, clean up, fail
        R.check("runs to the end", False,
                f"{type(e).__name__}: {e}\n{provider.log_text()[-2000:]}")
        provider.cleanup()
        consumer.cleanup()
    finally:
        signal.alarm(0)


if __name__ == "__main__":
    main()
    R.finish()
