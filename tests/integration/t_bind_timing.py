#!/usr/bin/env python3
"""A failed simple bind costs the same whatever it names: over N rounds of
alternating binds, the median time of each class (unknown DN, wrong
password on a {SSHA512} user, on a {PBKDF2-SHA512} user and on an {ARGON2}
user, an entry without userPassword, a DN outside every suffix) stays
within a ratio tolerance of the others (0.5-2x). A ratio, not a duration:
the machine's speed does not matter. Before the bind pace the existing
{ARGON2}/{PBKDF2} users cost ~70-100x an unknown DN.

Nor its load: the rounds run again with two busy processes on every CPU, where
a real check is descheduled and ends later than its CPU time; a held
answer waits as much longer (the pace's contention, bind_pace.h), so the
medians stay within 1.5x (without it: 2-2.3x).

Nor the path around the check: on a disk whose commit takes SLOW_COMMIT_MS
(lumend-faults, LUMEN_FAULT=commit), a failed bind on an entry waits for
ppolicy's pwdFailureTime write, an unknown DN has nothing to write; a held
answer waits for that too (the pace's path), so the medians stay within
1.5x (without it a wrong {SSHA} password answered 13 ms after an unknown
DN, a wrong {ARGON2} one 3.2x as late).

The pace holds the answer back on the connection, not a worker: 40 failed
binds on 40 connections at once (the server has 2 workers) finish in a few
single binds' time, not in 20 of them as when each slept on a worker; and
the connection's next request is answered after the held one, in order."""
import contextlib
import threading
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402

import ldap  # noqa: E402

R = h.Results("t_bind_timing.py")
B = sh.SUFFIX
P = "ou=people," + B
POLICY = "cn=policy," + B
ROUNDS = int(os.environ.get("BIND_TIMING_ROUNDS", "30"))
RATIO = 2.0
# Under load: a real check is descheduled and ends later than its CPU time,
# and a held answer must wait as long (the pace's contention); without it
# the work-factor classes answered 2-2.3x later than an unknown DN.
LOADED_RATIO = 1.5
WARM_ROUNDS = 5
SLOW_COMMIT_MS = 20


def hashed(scheme, secret):
    out = subprocess.run([os.path.join(sh.ROOT, sh.BUILD, "lumenpasswd"), "-h", scheme,
                          "-s", secret], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def ldif():
    users = [("ssha", hashed("{SSHA512}", "right-ssha")),
             ("pbkdf2", hashed("{PBKDF2-SHA512}", "right-pbkdf2")),
             ("argon2", hashed("{ARGON2}", "right-argon2")),
             ("locked", hashed("{SSHA512}", "right-locked")),
             ("nopw", None)]
    out = [f"dn: {B}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Ex\n",
           f"dn: {P}\nobjectClass: organizationalUnit\nou: people\n",
           f"dn: {POLICY}\nobjectClass: person\nobjectClass: pwdPolicy\ncn: policy\nsn: p\n"
           "pwdAttribute: userPassword\npwdLockout: TRUE\n"]
    for uid, pw in users:
        out.append(f"dn: uid={uid},{P}\nobjectClass: inetOrgPerson\nuid: {uid}\ncn: {uid}\n"
                   f"sn: {uid}\n" + (f"userPassword: {pw}\n" if pw else "") +
                   ("pwdAccountLockedTime: 000001010000Z\n" if uid == "locked" else ""))
    return "\n".join(out)


CLASSES = {
    "unknown DN": f"uid=nobody,{P}",
    "wrong {SSHA512}": f"uid=ssha,{P}",
    "wrong {PBKDF2-SHA512}": f"uid=pbkdf2,{P}",
    "wrong {ARGON2}": f"uid=argon2,{P}",
    "no userPassword": f"uid=nopw,{P}",
    "outside every suffix": "uid=x,dc=elsewhere",
    "locked account": f"uid=locked,{P}",
    "locked, right password": (f"uid=locked,{P}", "right-locked"),
}


def one_bind(conn, dn):
    dn, password = dn if isinstance(dn, tuple) else (dn, "wrong password")
    t0 = time.perf_counter()
    try:
        conn.simple_bind_s(dn, password)
        code = 0
    except ldap.LDAPError as e:
        code = e.args[0].get("result", -1)
    return time.perf_counter() - t0, code


def at_once(conns, dn, password):
    """Bind every connection at once: (seconds until all answered, codes)."""
    codes, start = [], threading.Event()

    def bind(c):
        start.wait()
        codes.append(one_bind(c, (dn, password))[1])

    threads = [threading.Thread(target=bind, args=(c,)) for c in conns]
    for t in threads:
        t.start()
    t0 = time.perf_counter()
    start.set()
    for t in threads:
        t.join()
    return time.perf_counter() - t0, codes


def concurrent_binds(srv, single):
    """40 failed binds at once: held answers, not 40 sleeping workers.

    Their time is compared with that of 40 successful binds at once on the
    same connections (never paced): what 40 clients and their binds cost
    on the machine as it is, which the failed ones pay too. On a loaded
    machine it was most of the failed binds' time (40 failed binds took up
    to 7.6 single binds' time, against a bound of 8)."""
    conns = [ldap.initialize(srv.uri) for _ in range(40)]
    for c in conns:
        c.search_s("", ldap.SCOPE_BASE, "(objectClass=*)", ["1.1"])   # connected
    failed, succeeded, codes = [], [], set()
    for _ in range(3):          # alternating; the quickest of each counts
        # the rootdn: a cleartext rootpw, checked on the I/O thread as
        # cheaply as the failures' decoy
        spent, ok = at_once(conns, sh.ROOTDN, sh.ROOTPW)
        succeeded.append(spent)
        codes.add(tuple(ok))
        # an unknown DN: under ppolicy a failure on an entry also waits for
        # its pwdFailureTime write's commit on the worker (a cost of its own)
        spent, refused = at_once(conns, f"uid=nobody,{P}", "wrong password")
        failed.append(spent)
        codes.add(tuple(refused))
    R.check("40 concurrent binds: all success, then all invalidCredentials",
            codes == {(0,) * 40, (49,) * 40}, codes)
    spent, baseline = min(failed), min(succeeded)
    # serialized on 2 sleeping workers this is 20 singles; held on the
    # connections it is about one, plus what 40 binds cost anyway
    R.check("40 concurrent failed binds take under 8 single binds' time more than "
            "40 successful ones", spent < baseline + 8 * single,
            f"{spent * 1000:.1f} ms vs {baseline * 1000:.1f} ms successful, "
            f"single {single * 1000:.1f} ms")
    print(f"       40 concurrent failed binds: {spent * 1000:.1f} ms, successful "
          f"{baseline * 1000:.1f} ms (single {single * 1000:.1f} ms)")


def pipelined_after_failure(srv):
    """A request sent in the same write as a failed bind is answered after
    it: the held answer keeps its place in the connection's output."""
    port = int(srv.uri.rsplit(":", 1)[1])
    sock = h.socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        sock.sendall(h.bind_simple(1, f"uid=ssha,{P}", "wrong password") +
                     h.search(2, attrs=("1.1",)))
        responses, _ = h.read_responses(sock, count=3, timeout=10)
    finally:
        sock.close()
    seen = [(x.msgid, x.op, x.code) for x in responses]
    R.check("bind answer first, then the search's entry and result",
            seen[:1] == [(1, 0x61, 49)] and [m for m, _, _ in seen[1:]] == [2, 2], seen)


def ms(medians):
    return {k: round(v * 1000, 2) for k, v in medians.items()}


def timed_rounds(conns, label, rounds=ROUNDS):
    """Every class once a round, the order rotating; the medians (printed
    unless label is None). Every answer must be invalidCredentials."""
    times = {k: [] for k in CLASSES}
    codes = set()
    names = list(CLASSES)
    for k in names:                      # warm-up: connections, caches
        one_bind(conns[k], CLASSES[k])
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for k in order:
            spent, code = one_bind(conns[k], CLASSES[k])
            times[k].append(spent)
            codes.add(code)
    medians = {k: statistics.median(v) for k, v in times.items()}
    if label is not None:
        R.check(f"{label}every failed bind: invalidCredentials (49)", codes == {49}, codes)
        for k in names:
            print(f"       {label}median {k:24s} {medians[k] * 1000:8.2f} ms")
    return medians


@contextlib.contextmanager
def busy_cpus():
    """Two processes spinning per CPU this test may use, for the block (one
    per CPU left the checks' share of a CPU too close to an idle one's for
    the difference to show)."""
    hogs = [subprocess.Popen(["sh", "-c", "while :; do :; done"])
            for _ in range(2 * len(os.sched_getaffinity(0)))]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


SETTINGS = {"global_lines": ["password-hash {SSHA512}",
                              "access to attrs=userPassword by anonymous auth by * none",
                              "access to * by * read"],
            "db_lines": ["overlay ppolicy", f"ppolicy_default {POLICY}"]}


def load_users(srv, label=""):
    path = os.path.join(srv.tmp, "users.ldif")
    with open(path, "w") as f:
        f.write(ldif())
    rc, out = srv.ldapadd(path)
    R.check(f"{label}the users load", rc == 0, out)


def slow_disk():
    """Every commit takes SLOW_COMMIT_MS: the writes of a failed bind on an
    entry (ppolicy) are part of its time, and a held answer waits as long."""
    srv = sh.ArmedFaultsLumend(f"commit:{SLOW_COMMIT_MS}", **SETTINGS).start()
    try:
        load_users(srv, "slow disk: ")
        srv.arm()
        conns = {k: ldap.initialize(srv.uri) for k in CLASSES}
        timed_rounds(conns, None, rounds=WARM_ROUNDS)        # the path follows
        label = f"commits of {SLOW_COMMIT_MS} ms: "
        slow = timed_rounds(conns, label)
        lo, hi = min(slow.values()), max(slow.values())
        R.check(f"{label}medians within {LOADED_RATIO}x", hi <= LOADED_RATIO * lo, ms(slow))
    finally:
        srv.stop(R)


def main():
    srv = sh.Lumend(**SETTINGS).start()
    try:
        load_users(srv)
        conns = {k: ldap.initialize(srv.uri) for k in CLASSES}
        good = ldap.initialize(srv.uri)
        R.check("the right password still binds",
                good.simple_bind_s(f"uid=argon2,{P}", "right-argon2")[0] == 97)
        medians = timed_rounds(conns, "")
        lo, hi = min(medians.values()), max(medians.values())
        R.check(f"medians within {RATIO}x of each other", hi <= RATIO * lo, ms(medians))
        # before the load: the hold it leaves falls only as real binds fail
        concurrent_binds(srv, medians["unknown DN"])
        pipelined_after_failure(srv)
        with busy_cpus():
            timed_rounds(conns, None, rounds=WARM_ROUNDS)   # the contention follows
            loaded = timed_rounds(conns, "with two busy processes on every CPU: ")
        lo, hi = min(loaded.values()), max(loaded.values())
        R.check(f"with two busy processes on every CPU: medians within {LOADED_RATIO}x",
                hi <= LOADED_RATIO * lo, ms(loaded))
    finally:
        srv.stop(R)
    slow_disk()


main()
R.finish()
