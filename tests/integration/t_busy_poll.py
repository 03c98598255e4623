#!/usr/bin/env python3
"""Busy polling (`busy-poll`, io_thread.c) and the placement it depends on
(io_placement.h): while one I/O thread carries every connection it looks
for input for `busy-poll` microseconds before it sleeps, and
cn=Polled,cn=Threads,cn=Monitor counts the input it found so.

With `listener-threads 2` the first four connections share thread 0 and
the fifth goes to thread 1:

  - two connections (one reading the monitor, one searching): thread 0
    carries both, and 200 searches are found by its poll (the window is
    10 ms here, far above a Python client's gap between requests);
  - three more connections, the last on thread 1: no thread carries them
    all, and 200 searches are not polled for at all;
  - that fifth connection closed: thread 0 carries them all again, is told
    so by thread 1 (its loop is woken to poll), and polls again;
  - `busy-poll 0`: nothing is ever polled for.

Every search returns its entry, and lumend stops cleanly (exit 0, clean
under the sanitizers). OpenLDAP has no busy polling: there is no slapd
half to this scenario.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402

import ldap  # noqa: E402

R = h.Results("t_busy_poll.py")
B = sh.SUFFIX
PEOPLE = "ou=People," + B
USERS = 20
SEARCHES = 200


def ldif():
    out = [f"dn: {B}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: E\n",
           f"dn: {PEOPLE}\nobjectClass: organizationalUnit\nou: People\n"]
    for i in range(USERS):
        out.append(f"dn: uid=u{i},{PEOPLE}\nobjectClass: inetOrgPerson\nuid: u{i}\n"
                   f"cn: User {i}\nsn: S{i}\n")
    return "\n".join(out) + "\n"


def start(busy_poll):
    """lumend loaded, and its first connection: the one reading cn=Monitor."""
    return sh.start_loaded("lumend", None, ["index uid eq", "index objectClass eq"], ldif(),
                           global_lines=["listener-threads 2", f"busy-poll {busy_poll}"])


def bound(uri):
    """A connection, opened and bound as the rootdn before it returns."""
    c = ldap.initialize(uri)
    c.simple_bind_s(sh.ROOTDN, sh.ROOTPW)
    return c


def polled(monitor):
    res = monitor.search_s("cn=Polled,cn=Threads,cn=Monitor", ldap.SCOPE_BASE,
                           "(objectClass=*)", ["monitorCounter"])
    return int(res[0][1]["monitorCounter"][0])


def searches(c):
    """SEARCHES one-entry searches on c; how many returned the wrong thing."""
    wrong = 0
    for i in range(SEARCHES):
        uid = f"u{i % USERS}"
        res = c.search_s(PEOPLE, ldap.SCOPE_SUBTREE, f"(uid={uid})", ["uid"])
        if len(res) != 1 or res[0][1].get("uid") != [uid.encode()]:
            wrong += 1
    return wrong


def check_polled(label, monitor, c, most):
    """SEARCHES searches on c, each answered right; with `most`, at least
    half found by the poll, else none (cn=Polled read through monitor)."""
    before = polled(monitor)
    wrong = searches(c)
    found = polled(monitor) - before
    ok = found >= SEARCHES // 2 if most else found == 0
    R.check(label, ok and wrong == 0, f"polled {found}, wrong {wrong}")


def wait_closed(server_uri, expected, timeout=10.0):
    """Wait until the server counts `expected` open connections (the
    unbound one is closed by the server a moment after unbind_s returns)."""
    deadline = time.monotonic() + timeout
    probe = bound(server_uri)
    try:
        while time.monotonic() < deadline:
            res = probe.search_s("cn=Current,cn=Connections,cn=Monitor", ldap.SCOPE_BASE,
                                 "(objectClass=*)", ["monitorCounter"])
            # The probe itself is one of the current connections.
            if int(res[0][1]["monitorCounter"][0]) == expected + 1:
                return True
            time.sleep(0.05)
        return False
    finally:
        probe.unbind_s()


def scenario_polling():
    server, monitor = start(10000)
    try:
        searcher = bound(server.uri)
        check_polled("one thread carries both connections: most searches found by its poll",
                     monitor, searcher, most=True)

        extra = [bound(server.uri) for _ in range(3)]   # the last one on thread 1
        check_polled("connections on two threads: nothing is polled for",
                     monitor, searcher, most=False)

        extra.pop().unbind_s()
        R.check("the connection on thread 1 is closed", wait_closed(server.uri, 4))
        check_polled("thread 0 carries them all again and polls again",
                     monitor, searcher, most=True)
        for c in extra + [searcher, monitor]:
            c.unbind_s()
    finally:
        server.stop(R)


def scenario_off():
    server, monitor = start(0)
    try:
        searcher = bound(server.uri)
        check_polled("busy-poll 0: nothing is polled for", monitor, searcher, most=False)
        R.check("busy-poll 0: cn=Polled is 0", polled(monitor) == 0)
        searcher.unbind_s()
        monitor.unbind_s()
    finally:
        server.stop(R)


def main():
    scenario_polling()
    scenario_off()
    R.finish()


if __name__ == "__main__":
    main()
