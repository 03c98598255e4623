"""categories.py — the network fuzzer's categories of cases: what a client
can do to one lumend connection's I/O path.

What it does: each category is a function cat_NAME(run, n) that runs n
cases (or, for the fixed ones, its whole list) against run.server through
the campaign object `run` (netfuzz.py's Campaign: rng, sockets, counts,
findings). A case counts itself with run.case(category, detail). CATEGORIES
at the end lists them with their sizes in a campaign round and in the
smoke of make test.

Needs: a running lumend from netfuzz.py (ldap:// on run.server.port,
ldaps:// on run.server.ldaps_port, the people of pdus.people_ldif, syncprov,
TLS), pdus.py, mutate.py, lumen_harness.

A finding, reported through run.finding / run.expect: a request that must
be answered (a valid one, or the probe search sent after a framed mutant)
gets neither its answer nor a Notice of Disconnection nor a close within
the time given (a hang). Crashes, sanitizer reports and a server that no
longer answers a root DSE search are found by the runner after each batch.
A client-side exception (a socket error the case did not expect) is
counted, not a finding.
"""
import os
import socket
import ssl
import threading
import time

import lumen_harness as h
import pdus as p
from mutate import mutate


def _probe_after(run, cat, sock, data, detail, timeout=20):
    """Send a framed mutant and a probe search behind it: lumend must answer
    the probe or say goodbye. A mutant carrying StartTLS's OID may really
    be a StartTLS, after which lumend rightly reads nothing more until a
    handshake that never comes; such a mutant is left unjudged."""
    out, _, timed_out = p.read_until(sock, p.probe_answered, run.wait(timeout))
    if timed_out and p.OID_STARTTLS.encode() not in data:
        run.finding("hang", cat, f"{detail}: neither the probe's answer nor a close in "
                    f"{run.wait(timeout)} s; last {summary(out)}", data)


def summary(out):
    return [(r.msgid, hex(r.op) if r.op is not None else None, r.code) for r in out[-5:]]


def cat_valid(run, n):
    """Every valid request alone on a fresh connection, then a probe."""
    for name, pdu in run.valid.items():
        s = run.connect()
        try:
            if name == "starttls":
                s.sendall(pdu)
                run.expect("valid", s, [10], pdu)
            elif name == "unbind":
                s.sendall(pdu)
                p.read_until(s, lambda out: False, 1)
            else:
                probe = p.search(777)
                s.sendall(pdu + probe)
                mids = [777] if name == "abandon" else [777, p.message_id(pdu)]
                run.expect("valid", s, mids, pdu + probe)
        finally:
            run.close(s)
        run.case("valid", name)


def cat_protos(run, n):
    """The PROTOS c06-ldapv3-enc vectors (every n-th one in a short run):
    a framed one must be answered or refused; one cut short is followed by
    the client's end of stream so lumend has nothing left to wait for."""
    vectors = run.protos if not n else run.protos[::max(1, len(run.protos) // n)][:n]
    for name, data in vectors:
        s = run.connect()
        framed = h.parse_tlv(data) is not None
        try:
            s.sendall(data)
            if not framed:
                s.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        _, _, timed_out = p.read_until(
            s, lambda out: any(p.is_notice(r) or r.op in (0x61, 0x65) for r in out), run.wait(8))
        if timed_out and framed and len(data) < 256 * 1024:
            run.finding("hang", "protos", f"{name}: a framed PDU of {len(data)} bytes got "
                        "no answer, notice or close", data)
        run.close(s)
        run.case("protos")


def cat_mutate(run, n):
    """Mutants of valid requests and of the fuzz corpus; a framed mutant is
    followed by a probe search on the same connection."""
    for _ in range(n):
        data, kind = mutate(run.rng, run.rng.choice(run.seeds))
        if run.rng.random() < 0.3:
            data, second = mutate(run.rng, data)
            kind += "," + second
        s = run.connect()
        try:
            if p.is_framed(data) and len(data) < 200000:
                s.sendall(data + p.search(p.PROBE_ID))
                _probe_after(run, "mutate", s, data, f"{kind}: framed mutant + probe")
            else:
                s.sendall(data)
                p.read_until(s, lambda out: any(p.is_notice(r) for r in out), 0.3)
        except OSError:
            pass
        finally:
            run.close(s)
        run.case("mutate", kind.split(",")[0].split("+")[0])


def _drip(run, s, data, sizes):
    """Write data in pieces of the sizes rng picks from sizes."""
    pos = 0
    while pos < len(data):
        k = run.rng.choice(sizes)
        s.sendall(data[pos:pos + k])
        pos += k


def cat_split(run, n):
    """A valid pair of requests split at chosen or every byte boundary, one
    byte a write, and in random small pieces: framing across reads."""
    names = ["eq_uid", "bind_root", "compare", "paged", "whoami", "base_entry", "sorted"]
    for _ in range(n):
        first = run.valid[run.rng.choice(names)]
        data = first + p.search(900, p.SUFFIX, 2, p.f_eq("uid", "u5"), ("cn",))
        mids = [p.message_id(first), 900]
        points = (range(1, len(data)) if run.rng.random() < 0.25
                  else [run.rng.randrange(1, len(data)) for _ in range(8)])
        for point in points:
            s = run.connect()
            try:
                s.sendall(data[:point])
                if run.rng.random() < 0.3:
                    time.sleep(0.01)
                s.sendall(data[point:])
                run.expect("split", s, mids, data)
            finally:
                run.close(s, rst=False)
            run.case("split", "two-writes")
        for detail, sizes in (("byte-drip", [1]), ("random-chunks", range(1, 8))):
            s = run.connect()
            try:
                _drip(run, s, data, sizes)
                run.expect("split", s, mids, data)
            finally:
                run.close(s, rst=False)
            run.case("split", detail)


def cat_split_long(run, n):
    """A search of 60-250 KB (long-form length, larger than one read) in
    writes of 1,000 bytes to 128 KiB."""
    for size in (60000, 70000, 130000, 200000, 250000)[:n or None]:
        pdu = p.search(5, p.SUFFIX, 2, p.f_or(*[p.f_eq("uid", f"u{k}") for k in range(size // 14)]))
        for chunk in (1000, 4096, 65536, 65537, 131071):
            s = run.connect()
            try:
                for pos in range(0, len(pdu), chunk):
                    s.sendall(pdu[pos:pos + chunk])
                run.expect("split-long", s, [5], None, 60,
                           f"{len(pdu)}-byte search in {chunk}-byte writes")
            finally:
                run.close(s, rst=False)
            run.case("split-long")


PIPELINE_SKIP = ("starttls", "unbind", "abandon", "cancel", "bind_sasl_ext", "txn_start",
                 "txn_end", "sync_refresh")


def _sendall_quietly(s, data):
    try:
        s.sendall(data)
    except OSError:
        pass


def cat_pipeline(run, n, sizes=(10, 100, 500, 2000)):
    """Tens to thousands of requests in one write (a few abandoned), every
    one not abandoned answered; the client writes from a second thread half
    the time, so lumend answers while it still reads."""
    names = [k for k in run.valid if k not in PIPELINE_SKIP]
    for _ in range(n):
        count = run.rng.choice(sizes)
        parts, mids, abandoned = [], [], set()
        for k in range(count):
            mid = 1000 + k
            parts.append(p.with_message_id(run.valid[run.rng.choice(names)], mid))
            mids.append(mid)
            if run.rng.random() < 0.05:
                target = mid - run.rng.randint(0, 3)
                parts.append(h.abandon(50000 + k, target))
                abandoned.add(target)
        data = b"".join(parts)
        s = run.connect()
        try:
            if run.rng.random() < 0.5:
                s.sendall(data)
            else:
                threading.Thread(target=_sendall_quietly, args=(s, data), daemon=True).start()
            out, closed, _ = p.read_until(s, p.final_for(set(mids) - abandoned), run.wait(120))
            answered = {r.msgid for r in out if r.op not in p.NOT_FINAL}
            missing = set(mids) - answered - abandoned
            if missing:
                run.finding("closed" if closed else "hang", "pipeline",
                            f"{count} pipelined: {len(missing)} unanswered, e.g. "
                            f"{sorted(missing)[:5]}; last {summary(out)}", data)
        finally:
            run.close(s)
        run.case("pipeline", f"{count}-pdus")


def cat_backpressure(run, n, depths=(1, 3, 10, 40)):
    """Large searches whose results the client leaves unread for a while,
    then reads, abandons, closes, or answers with more requests that lumend
    must stop reading rather than buffer without bound."""
    big = p.search(3, p.SUFFIX, 2, attrs=("*", "+"))
    for _ in range(n):
        k = run.rng.choice(depths)
        mids = [100 + j for j in range(k)]
        requests = b"".join(p.with_message_id(big, m) for m in mids)
        mode = run.rng.choice(["wait-read", "close", "close-rst", "abandon", "more-input"])
        s = run.connect()
        try:
            s.sendall(requests)
            time.sleep(run.rng.choice([0.2, 1, 3]))
            if mode == "wait-read":
                run.expect("backpressure", s, mids, requests, 180)
            elif mode == "abandon":
                s.sendall(b"".join(h.abandon(9000 + j, m) for j, m in enumerate(mids))
                          + p.extended(8888, p.OID_WHOAMI))
                run.expect("backpressure", s, [8888], requests, 180)
            elif mode == "more-input":
                more = b"".join(p.search(20000 + j, attrs=("*",)) for j in range(3000))
                s.setblocking(False)
                sent, started = 0, time.time()
                while sent < len(more) and time.time() - started < 3:
                    try:
                        sent += s.send(more[sent:])
                    except BlockingIOError:
                        time.sleep(0.05)
                s.setblocking(True)
                run.close(s, rst=True)
                s = None
            else:
                run.close(s, rst=mode == "close-rst")
                s = None
        except OSError:
            pass
        finally:
            if s:
                run.close(s)
        run.case("backpressure", mode)


def cat_abrupt(run, n):
    """A request and a search cut at a random byte, the connection then
    half-read, half-closed, closed or reset."""
    for _ in range(n):
        data = run.valid[run.rng.choice(list(run.valid))] + p.search(2, p.SUFFIX, 2, attrs=("*",))
        s = run.connect()
        try:
            s.sendall(data[:run.rng.randrange(1, len(data) + 1)])
            if run.rng.random() < 0.5:
                time.sleep(run.rng.choice([0, 0.001, 0.01, 0.05]))
            if run.rng.random() < 0.3:
                s.settimeout(0.05)
                try:
                    s.recv(run.rng.choice([1, 100, 5000]))
                except OSError:
                    pass
            if run.rng.random() < 0.3:
                s.shutdown(socket.SHUT_WR)
                time.sleep(0.01)
        except OSError:
            pass
        run.close(s)
        run.case("abrupt")


ABANDON_KINDS = ["abandon", "cancel", "abandon-self", "cancel-self", "cancel-unknown",
                 "abandon-bind", "cancel-paged", "cancel-write"]


def cat_abandon(run, n):
    """Abandon and Cancel racing the operation they name (run on the I/O
    thread or queued, a Bind, a write), themselves, or nothing; a WhoAmI
    behind them must be answered, and a Cancel itself."""
    targets = [p.search(5, p.SUFFIX, 2, attrs=("*",)),
               p.search(5, p.SUFFIX, 2, p.f_eq("uid", "u4")),
               p.search(5, attrs=("+",)),
               p.compare(5, p.user(1), "uid", "u1"),
               p.search(5, p.PEOPLE, 1, controls=(p.paged(10),)),
               p.search(5, p.PEOPLE, 1, controls=(p.sort_request("cn"),))]
    after = {"abandon": h.abandon(6, 5), "cancel": p.cancel(6, 5),
             "abandon-self": h.abandon(6, 6), "cancel-self": p.cancel(6, 6),
             "cancel-unknown": p.cancel(6, 12345), "abandon-bind": h.abandon(6, 5),
             "cancel-paged": p.cancel(6, 5), "cancel-write": p.cancel(6, 5)}
    for _ in range(n):
        kind = run.rng.choice(ABANDON_KINDS)
        target = run.rng.choice(targets)
        s = run.connect()
        try:
            if kind == "abandon-bind":
                target = p.bind(5, p.ROOTDN, p.ROOTPW)
            elif kind == "cancel-write":
                target = p.modify(5, p.user(3), [(2, "description", [f"c{run.rng.randrange(9)}"])])
                s.sendall(p.bind(1, p.ROOTDN, p.ROOTPW))
                p.read_until(s, p.final_for([1]), 10)
            probe = p.extended(7, p.OID_WHOAMI)
            gap = run.rng.choice([None, 0, 0.001, 0.02])
            if gap is None:
                s.sendall(target + after[kind] + probe)
            else:
                s.sendall(target)
                time.sleep(gap)
                s.sendall(after[kind] + probe)
            mids = [7, 6] if kind.startswith("cancel") and kind != "cancel-self" else [7]
            run.expect("abandon", s, mids, target + after[kind] + probe, 60, kind)
        except OSError:
            pass
        finally:
            run.close(s)
        run.case("abandon", kind)


def cat_persist(run, n):
    """Persistent searches (syncprov refreshAndPersist) while another
    connection writes, ended by Abandon, Cancel, Unbind or a close."""
    writer = run.connect()
    writer.sendall(p.bind(1, p.ROOTDN, p.ROOTPW))
    p.read_until(writer, p.final_for([1]), 10)
    last = [100]

    def write_some(k):
        for _ in range(k):
            last[0] += 1
            writer.sendall(p.modify(last[0], p.user(run.rng.randrange(50)),
                                    [(2, "description", [f"p{last[0]}"])]))
        run.expect("persist", writer, range(last[0] - k + 1, last[0] + 1), None, 60,
                   f"{k} modifies beside persistent searches")

    for _ in range(n):
        searches = []
        for _ in range(run.rng.choice([1, 3, 8])):
            s = run.connect()
            base = run.rng.choice([p.SUFFIX, p.PEOPLE, p.user(1)])
            s.sendall(p.search(3, base, 2, attrs=("description",), controls=(p.sync_request(3),)))
            searches.append(s)
        write_some(run.rng.choice([1, 5, 30]))
        end = run.rng.choice(["abandon", "cancel", "close", "close-rst", "unbind", "read-then-close"])
        for s in searches:
            try:
                if end == "abandon":
                    s.sendall(h.abandon(4, 3) + p.extended(5, p.OID_WHOAMI))
                    run.expect("persist", s, [5], None, 120, "WhoAmI after Abandon")
                elif end == "cancel":
                    s.sendall(p.cancel(4, 3))
                    run.expect("persist", s, [4, 3], None, 120, "Cancel")
                elif end == "unbind":
                    s.sendall(h.unbind(9))
                elif end == "read-then-close":
                    p.read_until(s, lambda out: False, 0.5)
            except OSError:
                pass
            run.close(s, rst=end == "close-rst")
        write_some(3)
        run.case("persist", end)
    run.close(writer, rst=False)


def _paged_cookie(out, msgid):
    """The cookie of msgid's SearchResultDone paged control (b"" if none)."""
    done = [r for r in out if r.msgid == msgid and r.op == p.SEARCH_DONE]
    raw = done[-1].raw if done else b""
    k = raw.find(p.C_PAGED.encode())
    if k < 0:
        return b""
    value = raw[k + len(p.C_PAGED):]
    try:
        _, s, e = h.parse_tlv(value)            # controlValue OCTET STRING
        inner = value[s:e]
        _, s, _ = h.parse_tlv(inner)            # SEQUENCE { size, cookie }
        _, _, size_end = h.parse_tlv(inner, s)
        _, s, e = h.parse_tlv(inner, size_end)
        return inner[s:e]
    except TypeError:
        return b""


def cat_paged(run, n):
    """Paged results: a few pages, then an abandoning size 0, a fresh size
    0, a damaged cookie, the same cookie twice, the cookie on another
    connection, or the next page."""
    for _ in range(n):
        s = run.connect()
        try:
            size, cookie, mid = run.rng.choice([1, 7, 50, 1000]), b"", 10
            for _ in range(run.rng.randint(1, 6)):
                mid += 1
                s.sendall(p.search(mid, p.PEOPLE, 1, attrs=("uid",), controls=(p.paged(size, cookie),)))
                out, closed, timed_out = run.expect("paged", s, [mid], None, 60)
                cookie = b"" if closed or timed_out else _paged_cookie(out, mid)
                if not cookie:
                    break
            act = run.rng.choice(["abandon-cookie", "size0", "garbage", "replay", "other-conn", "none"])
            mid += 1
            if act == "abandon-cookie":
                control = p.paged(0, cookie)
            elif act == "size0":
                control = p.paged(0, b"")
            elif act == "garbage":
                damaged = bytearray(cookie or b"\x01" * 8)
                damaged[run.rng.randrange(len(damaged))] ^= 0xff
                control = p.paged(5, bytes(damaged) + b"\x00" * run.rng.choice([0, 1, 1000]))
            else:
                control = p.paged(size, cookie)
            if act == "other-conn":
                other = run.connect()
                other.sendall(p.search(mid, p.PEOPLE, 1, controls=(control,)))
                run.expect("paged", other, [mid], None, 60, "cookie on another connection")
                run.close(other)
            s.sendall(p.search(mid, p.PEOPLE, 1, controls=(control,)))
            run.expect("paged", s, [mid], None, 60, act)
            run.case("paged", act)
        except OSError:
            pass
        finally:
            run.close(s)


STARTTLS_KINDS = ["ok", "pipelined-after", "garbage-after", "close-mid-handshake", "twice",
                  "ldaps-garbage", "ldaps-ok", "tls-then-abrupt", "pending-op",
                  "ldaps-pipeline", "tls-bigresult-close"]


def _starttls(run, s, cat):
    """StartTLS on s: the TLS socket, or None when it was refused."""
    s.sendall(p.extended(1, p.OID_STARTTLS))
    out, _, _ = run.expect(cat, s, [1], None, 30, "StartTLS")
    if not out or out[0].code != 0:
        return None
    return h.tls_client_context().wrap_socket(s, server_hostname="127.0.0.1")


def _searches(first, count):
    return b"".join(p.search(first + j, p.SUFFIX, 2, p.f_eq("uid", f"u{j}"), ("*",))
                    for j in range(count))


def cat_starttls(run, n):
    """StartTLS and LDAPS: handshakes cut or garbled, requests pipelined
    behind a StartTLS or in front of it, StartTLS twice, a close while a
    large result is sent through TLS."""
    for _ in range(n):
        kind = run.rng.choice(STARTTLS_KINDS)
        s = run.connect()
        try:
            if kind == "pipelined-after":
                s.sendall(p.extended(1, p.OID_STARTTLS) + p.search(2) + p.search(3, attrs=("+",)))
                p.read_until(s, lambda out: len(out) >= 1, 10)
                p.read_until(s, lambda out: False, 2)
            elif kind in ("garbage-after", "close-mid-handshake"):
                s.sendall(p.extended(1, p.OID_STARTTLS))
                p.read_until(s, p.final_for([1]), 10)
                if kind == "garbage-after":
                    s.sendall(bytes(run.rng.randrange(256)
                                    for _ in range(run.rng.choice([1, 5, 300, 20000]))))
                    p.read_until(s, lambda out: False, 2)
                else:
                    s.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"
                              + os.urandom(run.rng.randrange(0, 400)))
            elif kind == "pending-op":
                s.sendall(p.search(5, p.SUFFIX, 2, attrs=("*",)) + p.extended(1, p.OID_STARTTLS))
                run.expect("starttls", s, [1], None, 60, "StartTLS behind a search")
            elif kind.startswith("ldaps"):
                run.close(s, rst=False)
                s = run.connect(run.server.ldaps_port)
                if kind == "ldaps-garbage":
                    s.sendall(os.urandom(run.rng.choice([1, 5, 100, 5000])))
                    p.read_until(s, lambda out: False, 1)
                else:
                    s = h.tls_client_context().wrap_socket(s, server_hostname="127.0.0.1")
                    count = 1 if kind == "ldaps-ok" else 200
                    s.sendall(_searches(10, count))
                    run.expect("starttls", s, range(10, 10 + count), None, 60, kind)
            else:
                t = _starttls(run, s, "starttls")
                if t is not None:
                    s = t
                    if kind == "twice":
                        t.sendall(p.extended(2, p.OID_STARTTLS))
                        run.expect("starttls", t, [2], None, 30, "StartTLS inside TLS")
                    elif kind == "tls-then-abrupt":
                        t.sendall(p.search(2, p.SUFFIX, 2, attrs=("*",))[:run.rng.randrange(1, 30)])
                    elif kind == "tls-bigresult-close":
                        t.sendall(p.search(2, p.SUFFIX, 2, attrs=("*",)))
                        t.recv(100)
                    else:
                        t.sendall(_searches(10, 50))
                        run.expect("starttls", t, range(10, 60), None, 60, "searches over TLS")
        except (OSError, ssl.SSLError):
            pass
        finally:
            run.close(s)
        run.case("starttls", kind)


def cat_tls_mutate(run, n):
    """Mutants inside TLS (LDAPS or after StartTLS), written in TLS records
    of 1 byte to 16 KiB: framing of decrypted input."""
    for _ in range(n):
        via = run.rng.choice(["ldaps", "starttls"])
        t = None
        try:
            if via == "ldaps":
                t = h.tls_client_context().wrap_socket(run.connect(run.server.ldaps_port),
                                             server_hostname="127.0.0.1")
            else:
                s = run.connect()
                t = _starttls(run, s, "tls-mutate")
                if t is None:
                    run.close(s)
                    continue
            data, kind = mutate(run.rng, run.rng.choice(run.seeds))
            framed = p.is_framed(data) and len(data) < 200000
            _drip(run, t, data + p.search(p.PROBE_ID) if framed else data, [1, 3, 17, 100, 16384])
            if framed:
                _probe_after(run, "tls-mutate", t, data, f"{via} {kind}: framed mutant + probe")
            else:
                p.read_until(t, lambda out: any(p.is_notice(r) for r in out), 0.3)
        except (OSError, ssl.SSLError):
            pass
        finally:
            if t is not None:
                run.close(t)
        run.case("tls-mutate", via)


def cat_many(run, n, sizes=(100, 300, 800)):
    """Hundreds of connections open at once, each with a search, half a
    request, garbage or nothing; a root DSE search must still be answered."""
    for _ in range(n):
        socks = []
        for j in range(run.rng.choice(sizes)):
            try:
                s = run.server.connect(timeout=10)
            except OSError:
                run.case("many", "connect-refused")
                break
            socks.append(s)
            r = run.rng.random()
            try:
                if r < 0.3:
                    s.sendall(p.search(1, p.SUFFIX, 2, p.f_eq("uid", f"u{j}")))
                elif r < 0.5:
                    s.sendall(p.search(1)[:run.rng.randrange(1, 10)])
                elif r < 0.6:
                    s.sendall(os.urandom(8))
            except OSError:
                pass
        if not run.server.answers(run.wait(15)):
            run.finding("unresponsive", "many",
                        f"root DSE unanswered with {len(socks)} connections open", None)
        for s in socks:
            run.close(s)
        run.case("many", f"{len(socks)}-connections")


def cat_busypoll(run, n, requests=200):
    """One connection sending one request at a time with gaps around the
    I/O thread's polling window, a second connection coming and going."""
    for _ in range(n):
        s = run.connect()
        try:
            for j in range(requests):
                mid, r = j + 1, run.rng.random()
                if r < 0.6:
                    pdu = p.search(mid, p.SUFFIX, 2, p.f_eq("uid", f"u{run.rng.randrange(p.ENTRIES)}"),
                                   ("cn",))
                elif r < 0.8:
                    pdu = p.compare(mid, p.user(1), "uid", "u1")
                elif r < 0.9:
                    pdu = p.bind(mid, p.user(j % p.ENTRIES), f"pw{j % p.ENTRIES}")
                else:
                    pdu = p.search(mid, p.PEOPLE, 1, attrs=("uid",), size=20)
                s.sendall(pdu)
                _, _, timed_out = run.expect("busypoll", s, [mid], pdu, 20, f"request {j}")
                if timed_out:
                    break
                gap = run.rng.choice([0, 0, 0, 0.00002, 0.00005, 0.0001, 0.001, 0.05])
                if gap:
                    time.sleep(gap)
            other = run.connect()
            other.sendall(p.search(1))
            p.read_until(other, p.final_for([1]), 10)
            run.close(other)
            s.sendall(p.search(999))
            run.expect("busypoll", s, [999], None, 20, "search after another connection left")
        except OSError:
            pass
        finally:
            run.close(s, rst=False)
        run.case("busypoll", f"{requests}-requests")


def cat_bindmix(run, n):
    """Binds pipelined between searches and writes: a Bind runs alone, so
    lumend holds it until the operations before it end."""
    for _ in range(n):
        parts = []
        for j in range(run.rng.choice([5, 20, 100])):
            mid, r = j + 1, run.rng.random()
            if r < 0.3:
                parts.append(p.bind(mid, run.rng.choice([p.ROOTDN, p.user(1)]),
                                    run.rng.choice([p.ROOTPW, "pw1", "bad"])))
            elif r < 0.5:
                parts.append(p.search(mid, p.SUFFIX, 2, attrs=("cn",), size=50))
            elif r < 0.6:
                parts.append(p.modify(mid, p.user(9), [(2, "description", [f"b{j}"])]))
            else:
                parts.append(p.search(mid, p.SUFFIX, 2, p.f_eq("uid", f"u{j}")))
        data = b"".join(parts)
        s = run.connect()
        try:
            for chunk in [data] if run.rng.random() < 0.5 else parts:   # one write, or one each
                s.sendall(chunk)
            run.expect("bindmix", s, range(1, len(parts) + 1), data, 120)
        except OSError:
            pass
        finally:
            run.close(s)
        run.case("bindmix")


def cat_sequences(run, n):
    """Sequences of 2-12 requests on one connection, some mutated, written
    whole or in pieces: state across operations (transactions, Cancel,
    Bind, StartTLS) meeting bad input. Only the runner's checks judge."""
    pool = list(run.valid.values())
    for _ in range(n):
        pdus = [run.rng.choice(pool) for _ in range(run.rng.randint(2, 12))]
        data = b"".join(mutate(run.rng, x)[0] if run.rng.random() < 0.3 else x for x in pdus)
        s = run.connect()
        try:
            if run.rng.random() < 0.5:
                s.sendall(data)
            else:
                _drip(run, s, data, range(1, 201))
            p.read_until(s, lambda out: any(p.is_notice(r) for r in out),
                         run.rng.choice([0.05, 0.3, 1]))
        except OSError:
            pass
        finally:
            run.close(s)
        run.case("sequences")


# (name, function, cases in a campaign round, cases in the smoke, the
# smoke's own bounds). A round runs every category once; "valid", "protos"
# and "split-long" are fixed lists (0: all of it) and run every third round
# only. The smoke's sizes and bounds keep its part of make test near a
# minute on two CPUs under the sanitizers while touching every category.
CATEGORIES = [
    ("valid", cat_valid, 0, 0, {}),
    ("protos", cat_protos, 0, 25, {}),
    ("mutate", cat_mutate, 1000, 400, {}),
    ("split", cat_split, 3, 2, {}),
    ("pipeline", cat_pipeline, 3, 2, {"sizes": (100, 500)}),
    ("backpressure", cat_backpressure, 6, 4, {"depths": (1, 3, 10)}),
    ("abrupt", cat_abrupt, 300, 100, {}),
    ("abandon", cat_abandon, 200, 60, {}),
    ("persist", cat_persist, 4, 2, {}),
    ("paged", cat_paged, 20, 8, {}),
    ("starttls", cat_starttls, 60, 30, {}),
    ("many", cat_many, 2, 1, {"sizes": (300,)}),
    ("busypoll", cat_busypoll, 3, 1, {}),
    ("bindmix", cat_bindmix, 30, 10, {}),
    ("sequences", cat_sequences, 300, 120, {}),
    ("split-long", cat_split_long, 0, 2, {}),
    ("tls-mutate", cat_tls_mutate, 150, 40, {}),
]
FIXED_LISTS = ("valid", "protos", "split-long")
