"""t_metrics.py — GET /metrics (metrics-listen) against the operations this
test performs: counters grow by exactly what was done, histograms have
monotone cumulative buckets whose +Inf bucket and _count equal the
completed operations, database gauges match the directory, and the
endpoint answers 404/405 for other paths and methods.

An operation is counted complete before its response leaves, but its
timing is filed just after: the checks poll (bounded) until histogram
counts settle; they never compare speeds.
"""
import os
import re
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lumen_harness import Lumend, Results, free_port  # noqa: E402

import ldap  # noqa: E402
import ldap.modlist  # noqa: E402

R = Results("t_metrics.py")
ADMIN, PW, BASE = "cn=admin,dc=example,dc=com", "secret", "dc=example,dc=com"
LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"')


def parse(text):
    """{(name, frozenset(labels)): float}, plus the TYPE of each family."""
    samples, types = {}, {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ", 3)
            types[name] = kind
            continue
        if not line or line.startswith("#"):
            continue
        m = LINE.match(line)
        if not m:
            raise ValueError("bad exposition line: " + line)
        labels = frozenset(LABEL.findall(m.group(3) or ""))
        samples[(m.group(1), labels)] = float(m.group(4))
    return samples, types


def value(samples, name, **labels):
    return samples.get((name, frozenset(labels.items())), 0.0)


def total(samples, name, **labels):
    """Sum of every series of `name` whose labels include `labels`."""
    want = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and want <= set(ls))


def scrape(port, path="/metrics"):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as resp:
        return resp.status, resp.headers.get("Content-Type", ""), resp.read().decode()


def settle(port, predicate, timeout=5.0):
    """Scrape until predicate(samples) holds (or time is up); the last scrape."""
    deadline = time.time() + timeout
    while True:
        samples, _ = parse(scrape(port)[2])
        if predicate(samples) or time.time() > deadline:
            return samples
        time.sleep(0.05)


def histogram_ok(samples, name, key, val):
    buckets = sorted(((float("inf") if dict(ls)["le"] == "+Inf" else float(dict(ls)["le"])), v)
                     for (n, ls), v in samples.items()
                     if n == name + "_bucket" and dict(ls).get(key) == val)
    counts = [v for _, v in buckets]
    monotone = all(a <= b for a, b in zip(counts, counts[1:]))
    count = value(samples, name + "_count", **{key: val})
    return buckets, monotone, counts[-1] == count if counts else False, count


def http_status(port, path, method="GET"):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method,
                                 data=b"" if method == "POST" else None)
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, resp.headers
    except urllib.error.HTTPError as e:
        return e.code, e.headers


def main():
    mport = free_port()
    srv = Lumend(f"metrics-listen 127.0.0.1:{mport}")
    try:
        status, ctype, text = scrape(mport)
        R.check("GET /metrics answers 200", status == 200, str(status))
        R.check("content type is the text exposition format", ctype.startswith("text/plain"), ctype)
        try:
            samples, types = parse(text)
            bad = ""
        except ValueError as e:
            samples, types, bad = {}, {}, str(e)
        R.check("every line parses", bad == "" and len(samples) > 0, bad)
        R.check("histogram families are typed",
                types.get("lumen_operation_duration_seconds") == "histogram" and
                types.get("lumen_stage_duration_seconds") == "histogram", str(types)[:300])
        R.check("build info", total(samples, "lumen_build_info") == 1)

        conn = ldap.initialize(f"ldap://127.0.0.1:{srv.port}")
        conn.simple_bind_s(ADMIN, PW)
        conn.add_s(BASE, ldap.modlist.addModlist({
            "objectClass": [b"dcObject", b"organization"], "dc": [b"example"], "o": [b"Ex"]}))
        people = 20
        for i in range(people):
            conn.add_s(f"uid=u{i},{BASE}", ldap.modlist.addModlist({
                "objectClass": [b"inetOrgPerson"], "uid": [f"u{i}".encode()],
                "cn": [b"U"], "sn": [b"U"]}))

        before = settle(mport, lambda s: total(s, "lumen_operations_total", type="add") >= people + 1)
        R.check("adds counted", total(before, "lumen_operations_total", type="add") == people + 1,
                str(total(before, "lumen_operations_total", type="add")))
        R.check("adds counted as success",
                value(before, "lumen_operations_total", type="add", result="success", code="0")
                == people + 1)
        searches, compares = 37, 5
        entries = 0
        for i in range(searches):
            entries += len(conn.search_s(BASE, ldap.SCOPE_SUBTREE, f"(uid=u{i % people})", ["cn"]))
        for i in range(compares):
            conn.compare_s(f"uid=u{i},{BASE}", "cn", b"U")
        s0 = total(before, "lumen_operations_total", type="search")
        def settled(s):
            return all(value(s, "lumen_operation_duration_seconds_count", type=k) ==
                       total(s, "lumen_operations_total", type=k)
                       for k in ("search", "add", "compare", "bind"))
        after = settle(mport, lambda s: total(s, "lumen_operations_total", type="search")
                       >= s0 + searches and total(s, "lumen_operations_total", type="compare")
                       >= compares and settled(s))
        R.check(f"{searches} searches counted completed",
                total(after, "lumen_operations_total", type="search") - s0 == searches,
                str(total(after, "lumen_operations_total", type="search") - s0))
        R.check(f"{searches} searches counted initiated",
                value(after, "lumen_operations_initiated_total", type="search")
                - value(before, "lumen_operations_initiated_total", type="search") == searches)
        R.check("compares counted as compareTrue",
                value(after, "lumen_operations_total", type="compare", result="compareTrue",
                      code="6") == compares)
        R.check("entries sent counted",
                value(after, "lumen_entries_sent_total") - value(before, "lumen_entries_sent_total")
                == entries, f"{entries}")
        R.check("bytes and PDUs flow both ways",
                value(after, "lumen_bytes_sent_total") > value(before, "lumen_bytes_sent_total") and
                value(after, "lumen_bytes_received_total") > value(before, "lumen_bytes_received_total") and
                value(after, "lumen_pdus_received_total") - value(before, "lumen_pdus_received_total")
                >= searches + compares)
        R.check("one connection open", value(after, "lumen_connections_current") == 1,
                str(value(after, "lumen_connections_current")))

        for kind in ("search", "add", "compare", "bind"):
            buckets, monotone, inf_ok, count = histogram_ok(
                after, "lumen_operation_duration_seconds", "type", kind)
            R.check(f"{kind} histogram buckets are monotone", monotone and len(buckets) > 10)
            R.check(f"{kind} histogram +Inf bucket equals _count", inf_ok)
            R.check(f"{kind} histogram _count equals completed {kind}s",
                    count == total(after, "lumen_operations_total", type=kind),
                    f"{count} vs {total(after, 'lumen_operations_total', type=kind)}")
        for stage in ("queue", "decode", "candidates", "entries", "filter", "encode", "send"):
            buckets, monotone, inf_ok, count = histogram_ok(
                after, "lumen_stage_duration_seconds", "stage", stage)
            R.check(f"stage {stage}: monotone buckets, +Inf equals _count, observed",
                    monotone and inf_ok and count > 0, f"count={count}")

        R.check("database entries gauge", value(after, "lumen_database_entries",
                                                 database=BASE) == people + 1)
        R.check("LMDB figures", value(after, "lumen_lmdb_page_size_bytes", database=BASE) > 0 and
                value(after, "lumen_lmdb_map_size_bytes", database=BASE) > 0)
        R.check("entry cache figures", value(after, "lumen_entry_cache_capacity", database=BASE) > 0)
        R.check("cache admission figures",
                all((f"lumen_{c}_not_admitted_total", frozenset({"database": BASE}.items()))
                    in after for c in ("entry_cache", "idl_cache")))
        R.check("partial reads figure", ("lumen_entry_partial_reads_total",
                                         frozenset({"database": BASE}.items())) in after)
        # One client adding in turn: each add is its own commit.
        R.check("writes and commits figures", value(after, "lumen_database_writes_total",
                                                     database=BASE) == people + 1 and
                value(after, "lumen_database_commits_total", database=BASE) == people + 1,
                str((value(after, "lumen_database_writes_total", database=BASE),
                     value(after, "lumen_database_commits_total", database=BASE))))
        conn.unbind_s()
        closed = settle(mport, lambda s: value(s, "lumen_connections_current") == 0)
        R.check("connection closed is counted", value(closed, "lumen_connections_current") == 0 and
                value(closed, "lumen_connections_total") >= 1)
        R.check("unbind counted", total(closed, "lumen_operations_total", type="unbind") == 1)

        R.check("other path: 404", http_status(mport, "/other")[0] == 404)
        code, headers = http_status(mport, "/metrics", "POST")
        R.check("POST /metrics: 405 with Allow: GET", code == 405 and "GET" in (headers.get("Allow") or ""),
                f"{code}")
    finally:
        srv.stop(R)

    # metrics-listen none: no listener.
    srv = Lumend(f"metrics-listen none")
    try:
        try:
            scrape(mport)
            refused = ""
        except OSError as e:
            refused = str(e)
        R.check("metrics-listen none opens nothing", refused != "", "the port answered")
    finally:
        srv.stop(R)
    R.finish()


main()
