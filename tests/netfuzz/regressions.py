"""regressions.py — the hangs the network fuzzer found, replayed as fixed
cases on every run (first in a campaign, and in make test's smoke).

What it does: each case rebuilds, deterministically, the state that froze
a connection once, and waits for the answers that did not come:
- cancel_carrying_starttls_oid: a Cancel with a control whose OID is
  StartTLS's. lumend found the OID's bytes, took the request for a
  StartTLS and stopped reading until it ended, which a Cancel never does.
- bind_behind_full_output: a Bind pipelined behind a Modify whose
  post-read answer (a ~7.6 MB entry) leaves more than CONN_MAX_UNSENT (1 MiB)
  unsent. The Bind waited for output room; once the client had read it
  all it sent nothing more, so nothing woke the connection. (The campaign
  found it with pipelined large searches, 2-4 times in 60; an answer
  queued whole at an operation's end hits it every time.)

Needs: a running lumend from netfuzz.py (its rootdn may add and delete
under ou=People; maximum PDU size for a bound client 4 MiB), pdus.py.

A finding: an answer not received within run.wait(20) seconds (a hang).
"""
import lumen_harness as h
import pdus as p

BIG_DN = "uid=netfuzz-big," + p.PEOPLE
# Two values this size (each within a bound client's 4 MiB PDU): an answer
# of ~7.6 MB, of which loopback's socket buffers take 3-4 MB when the
# client does not read, leaving well over 1 MiB unsent.
BIG_VALUE_BYTES = 3800 * 1000


def cancel_carrying_starttls_oid(run):
    cancel = p.extended(1, p.OID_CANCEL, p.seq(h.integer(99)),
                        controls=(h.control(p.OID_STARTTLS),))
    s = run.connect()
    try:
        s.sendall(cancel)
        _, _, timed_out = run.expect("regressions", s, [1], cancel, 20, "the Cancel")
        if not timed_out:
            s.sendall(p.search(2))
            run.expect("regressions", s, [2], cancel, 20,
                       "a search after a Cancel carrying StartTLS's OID")
    finally:
        run.close(s, rst=False)
    run.case("regressions", "cancel-starttls-oid")


def bind_behind_full_output(run):
    s = run.connect()
    try:
        s.sendall(p.bind(1, p.ROOTDN, p.ROOTPW)
                  + p.add(2, BIG_DN, [("objectClass", ["inetOrgPerson"]), ("uid", ["netfuzz-big"]),
                                      ("cn", ["Big"]), ("sn", ["Big"]),
                                      ("description", ["y" * BIG_VALUE_BYTES])]))
        out, _, _ = run.expect("regressions", s, [1, 2], None, 60, "adding the large entry")
        # One connection's writes may run at once: the second value waits.
        s.sendall(p.modify(3, BIG_DN, [(0, "description", ["z" * BIG_VALUE_BYTES])]))
        out += run.expect("regressions", s, [3], None, 60, "growing the large entry")[0]
        if sorted((r.msgid, r.code) for r in out) != [(1, 0), (2, 0), (3, 0)]:
            run.finding("setup", "regressions", f"cannot add {BIG_DN}: "
                        f"{[(r.msgid, r.code, r.diagnostic) for r in out]}", None)
            return
        post_read = h.control(p.C_POST_READ, p.seq(h.octets("*")))
        pipeline = (p.modify(4, BIG_DN, [(2, "cn", ["Bigger"])], controls=(post_read,))
                    + p.bind(5, p.ROOTDN, p.ROOTPW) + p.search(6))
        s.sendall(pipeline)
        # Not reading while the Modify ends: its answer stays unsent, and
        # the Bind behind it is buffered, waiting for output room.
        run.sleep(1)
        run.expect("regressions", s, [4, 5, 6], pipeline, 20,
                   "a Bind behind a Modify whose answer filled the output")
        s.sendall(p.delete(7, BIG_DN))
        run.expect("regressions", s, [7], None, 20, "deleting the large entry")
    finally:
        run.close(s, rst=False)
    run.case("regressions", "bind-behind-full-output")


CASES = [cancel_carrying_starttls_oid, bind_behind_full_output]
