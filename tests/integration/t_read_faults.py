#!/usr/bin/env python3
# run.sh: sanitizer pass only (a sweep of failures; see tests/integration/run.sh)
"""Fault injection on the read paths: binds, compares and searches (indexed,
unindexed, sorted one-level, the root DSE) failed at every allocation and
LMDB call site they reach, with access rules in force
(tests/fault/fault_inject.c, the lumend-faults build).

For each operation, a traced run lists the calls it makes; then, for the
first and the last call of every distinct site (a search reads its base
entry, then its candidates, through the same calls), lumend-faults is told
to fail exactly that call (counted only inside the window the test opens
with SIGUSR2 around the operation, on a connection already made). One bind
finds its entry below a parent an earlier bind looked up in the same
snapshot, so the remembered-parent path is failed too. Each run must show:
  - the clean run's answer, or an LDAP error result, or (where the failure
    hit the connection itself) a closed connection; never another answer:
    no compareFalse for a true assertion, no search that succeeds with
    fewer or other entries, no success for a failed bind;
  - no hang; the daemon still serves a new connection and exits 0 on
    SIGTERM; no sanitizer report.
With `overlay syncprov`, a search of the suffix entry for all attributes
and contextCSN, read in part (a person took the entry cache's one place
first), is failed the same way: the suffix is decoded whole to be given
its contextCSN, and a failure there is an error, never the suffix without
it.
LMDB faults alternate between EIO, MDB_MAP_FULL and ENOSPC. The entry cache
holds one entry: the first entry read takes its free position, later ones
meet the doorkeeper, so binds and compares take their partial decodes
(first sightings), a sorted search's second read of an entry is admitted
and evicts, and the other reads are refused.
"""
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import lumen_harness as h  # noqa: E402

import ldap  # noqa: E402
from ldap.controls.sss import SSSRequestControl  # noqa: E402

r = h.Results("t_read_faults.py")
ROOT = h.ROOT
SUFFIX = "dc=example,dc=com"
PEOPLE = f"ou=people,{SUFFIX}"
LMDB_ERRORS = ("io", "full", "nospc")
TMP = tempfile.mkdtemp(prefix="lumen-it-read-faults-")


def config_text(dbdir):
    schema = "".join(f"include {ROOT}/schema/{n}.schema\n"
                     for n in ("core", "cosine", "inetorgperson"))
    return (schema + "threads 2\nlistener-threads 1\n"
            f'database mdb\nsuffix "{SUFFIX}"\nrootdn "cn=admin,{SUFFIX}"\nrootpw secret\n'
            f"directory {dbdir}\ncachesize 1\nindex uid,cn eq,sub\nindex objectClass eq\n"
            "access to attrs=userPassword by self write by anonymous auth by * none\n"
            "access to * by * read\n")


def entry_ldif(uid):
    return (f"dn: uid={uid},{PEOPLE}\nobjectClass: inetOrgPerson\nuid: {uid}\n"
            f"cn: {uid} person\nsn: {uid}\nuserPassword: pw-{uid}\n\n")


BASE = (f"dn: {SUFFIX}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\n"
        f"o: Example\n\ndn: {PEOPLE}\nobjectClass: organizationalUnit\nou: people\n\n"
        + "".join(entry_ldif(f"u{i}") for i in range(4)))


def config_syncprov(dbdir):
    return config_text(dbdir) + "overlay syncprov\n"


def make_database(name="template", config=config_text):
    return h.fault_database(TMP, name, config, BASE)


def copy_database(template, name, config=config_text):
    return h.fault_database(TMP, name, config, None, template)


def sorted_entries(found):
    return sorted((dn.lower(), sorted((k.lower(), sorted(v)) for k, v in attrs.items()))
                  for dn, attrs in found)


def bind_as(uid):
    return lambda c: c.simple_bind_s(f"uid={uid},{PEOPLE}", f"pw-{uid}") and "bound"


# The operations: (label, what runs before the window, the operation), each
# a function of a connection returning a comparable answer.
OPERATIONS = [
    ("bind", None, bind_as("u1")),
    # below the parent the first bind looked up, in the same snapshot
    ("bind below a remembered parent", bind_as("u1"), bind_as("u2")),
    ("compare true", None, lambda c: c.compare_s(f"uid=u3,{PEOPLE}", "cn", b"u3 person")),
    ("search uid", None,
     lambda c: sorted_entries(c.search_s(SUFFIX, ldap.SCOPE_SUBTREE, "(uid=u0)"))),
    ("search unindexed", None, lambda c: sorted_entries(
        c.search_s(SUFFIX, ldap.SCOPE_SUBTREE, "(sn=u3)"))),
    # one-level and sorted: the entries are fetched again by ID, with their counts
    ("sorted search", None, lambda c: c.search_ext_s(
        PEOPLE, ldap.SCOPE_ONELEVEL, "(objectClass=person)", ["cn", "hasSubordinates"],
        serverctrls=[SSSRequestControl(criticality=True, ordering_rules=["-cn:caseIgnoreOrderingMatch"])])),
    ("root DSE", None, lambda c: sorted_entries(
        c.search_s("", ldap.SCOPE_BASE, "(objectClass=*)", ["namingContexts"]))),
]


def search_uid(c):
    return sorted_entries(c.search_s(SUFFIX, ldap.SCOPE_SUBTREE, "(uid=u0)"))


# With syncprov: the suffix read in part (a person took the cache's one
# place first), decoded whole and given its contextCSN.
SYNCPROV_OPERATIONS = [
    ("suffix with contextCSN, read in part", search_uid, lambda c: sorted_entries(
        c.search_s(SUFFIX, ldap.SCOPE_BASE, "(objectClass=*)", ["*", "contextCSN"]))),
]


def with_context_csn(found):
    ok = (isinstance(found, list) and len(found) == 1 and
          any(k == "contextcsn" for k, _ in found[0][1]) and
          any(k == "o" for k, _ in found[0][1]))
    return found if ok else None


def entries(n):
    """The clean answer of a search: n entries (what else it is, every
    failed run must reproduce exactly)."""
    return lambda found: found if isinstance(found, list) and len(found) == n else None


EXPECTED = {
    "bind": lambda _: "bound", "bind below a remembered parent": lambda _: "bound",
    "compare true": lambda _: True,
    "search uid": entries(1), "search unindexed": entries(1),
    "sorted search": entries(4), "root DSE": entries(1),
    "suffix with contextCSN, read in part": with_context_csn,
}


def result_code(e):
    if e.args and isinstance(e.args[0], dict):
        return e.args[0].get("result", -1)
    return -1


def answer_of(op, c):
    """The operation's answer, ("error", code), ("closed",) or ("timeout",)."""
    try:
        return op(c)
    except ldap.SERVER_DOWN:
        return ("closed",)
    except ldap.TIMEOUT:
        return ("timeout",)
    except ldap.LDAPError as e:
        return ("error", result_code(e))


def run(d, spec, before, op):
    """One run of one operation: (answer, server stderr, problems)."""
    problems = []
    srv = h.FaultyLumend(d, spec)
    answer = None
    try:
        c = srv.connect()
        c.simple_bind_s("", "")   # connected before the window: its calls are not the op's
        if before is not None:
            before(c)
        srv.window()
        answer = answer_of(op, c)
        srv.window()
        try:
            probe = srv.connect(f"uid=u1,{PEOPLE}", "pw-u1")
            probe.search_s(SUFFIX, ldap.SCOPE_BASE, "(objectClass=*)", ["1.1"])
            probe.unbind_s()
        except ldap.LDAPError as e:
            problems.append(f"daemon no longer serves: {e}")
    finally:
        problems += srv.stop_problems()
    return answer, srv.stderr(), problems


def wrong_answer(answer, clean):
    """Why answer is neither the clean one nor an error, or None."""
    if isinstance(answer, tuple) and answer[0] == "closed":
        return None
    if isinstance(answer, tuple) and answer[0] == "error":
        return f"result code {answer[1]} raised as an error" if answer[1] in (0, 5, 6) else None
    if answer != clean:
        return f"{answer!r} instead of {clean!r}"
    return None


def failure_point(point):
    """One failure point on its own copy of the template: (how it ended,
    the sites that fired, what went wrong or None)."""
    template, config, before, op, clean, kind, n, i, number = point
    spec = f"{kind}:{n}" + (f":{LMDB_ERRORS[i % 3]}" if kind == "lmdb" else "")
    d = copy_database(template, f"{number}-{kind}-{n}", config)
    answer, err, problems = run(d, spec, before, op)
    fired = h.fault_sites(err, "fired")
    key = answer[0] if isinstance(answer, tuple) else "clean answer"
    wrong = wrong_answer(answer, clean)
    if wrong:
        problems.append(wrong)
    if not fired:
        problems.append("the fault did not fire")
    if problems:
        return key, fired, f"{spec} (fired {fired}): {problems}"
    shutil.rmtree(d, ignore_errors=True)
    return key, fired, None


templates = {"plain": (make_database(), config_text),
             "syncprov": (make_database("template-syncprov", config_syncprov), config_syncprov)}
covered, tally, runs = set(), {}, 0
for label, before, op, flavour in ([o + ("plain",) for o in OPERATIONS] +
                                   [o + ("syncprov",) for o in SYNCPROV_OPERATIONS]):
    template, config = templates[flavour]
    d = copy_database(template, f"clean-{label.replace(' ', '-').replace(',', '')}", config)
    clean, err, problems = run(d, "trace", before, op)
    r.check(f"{label}: clean run answers as it should", clean == EXPECTED[label](clean)
            and not problems, f"{clean} {problems}")
    plan = h.first_and_last_of_each_site(h.fault_sites(err, "call"))
    r.check(f"{label}: the trace lists calls", len(plan) > 0, err[-500:])
    points = [(template, config, before, op, clean, kind, n, i, runs + i)
              for i, (kind, n) in enumerate(plan)]
    runs += len(points)
    failures = []
    for key, fired, failure in h.map_in_parallel(failure_point, points):
        covered.update((k, site) for k, _, site in fired)
        tally[key] = tally.get(key, 0) + 1
        if failure:
            failures.append(failure)
    r.check(f"{label}: {len(plan)} failure points, each answered right or with an error, "
            "the daemon serving", not failures, "\n".join(failures[:6]))

print(f"# {len(covered)} distinct failure points fired in {runs} runs; answers: {tally}")
if not os.environ.get("KEEP_TMP"):
    shutil.rmtree(TMP, ignore_errors=True)
r.finish()
