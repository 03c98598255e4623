#!/usr/bin/env python3
"""Don't Use Copy (RFC 6171) side by side with Debian's slapd 2.5.

  - A provider (no `syncrepl`) serves searches and compares with the
    control as without it; the root DSE too.
  - A consumer (a shadow copy) answers a search with a referral to its
    `updateref` and the search's base and scope, or unwillingToPerform
    without one; a compare with unwillingToPerform in both cases.
  - Criticality FALSE is accepted; a value is a protocolError; on a
    modify the critical control is an unavailable critical extension, and
    a write to the consumer is referred to updateref/DN as by slapd.
Same result codes, diagnostics and referrals as slapd; the consumer's
provider is a closed port, so the copy stays empty either way.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402

import ldap  # noqa: E402
from ldap.controls import RequestControl  # noqa: E402

R = h.Results("t_dontusecopy.py")
B = sh.SUFFIX
OID = "1.3.6.1.1.22"
SYNCREPL = (f'syncrepl rid=001 provider=ldap://127.0.0.1:9 type=refreshAndPersist '
            f'retry="60 +" searchbase="{B}" bindmethod=simple binddn="{sh.ROOTDN}" '
            f'credentials={sh.ROOTPW}')
SETUPS = {
    "provider": [],
    "consumer with updateref": [SYNCREPL, "updateref ldap://provider.example:389"],
    "consumer": [SYNCREPL],
}


def outcome(fn):
    try:
        return ("ok", fn())
    except ldap.LDAPError as e:
        info = e.args[0] if e.args and isinstance(e.args[0], dict) else {}
        return (info.get("result"), info.get("info", ""))


def run(server, provider):
    conn = sh.bind(server)
    if provider:
        conn.add_s(B, [("objectClass", [b"dcObject", b"organization"]), ("dc", [b"example"]),
                       ("o", [b"E"])])
    got = {}
    for critical, value in ((True, None), (False, None), (True, b"x")):
        ctl = [RequestControl(OID, critical, value)]
        tag = f"critical={critical} value={value!r}"
        got[f"{tag} subtree search"] = outcome(lambda: conn.search_ext_s(
            B, ldap.SCOPE_SUBTREE, "(dc=example)", ["dc"], serverctrls=ctl))
        got[f"{tag} one-level search"] = outcome(lambda: conn.search_ext_s(
            B, ldap.SCOPE_ONELEVEL, "(objectClass=*)", ["1.1"], serverctrls=ctl))
        got[f"{tag} compare"] = outcome(lambda: conn.compare_ext_s(
            B, "dc", b"example", serverctrls=ctl))
        got[f"{tag} root DSE"] = outcome(lambda: conn.search_ext_s(
            "", ldap.SCOPE_BASE, "(objectClass=*)", ["1.1"], serverctrls=ctl))
        got[f"{tag} modify"] = outcome(lambda: conn.modify_ext_s(
            B, [(ldap.MOD_REPLACE, "description", [b"x"])], serverctrls=ctl))
    conn.unbind_s()
    return got


def main():
    missing = sh.slapd_missing()
    if missing:
        R.check("slapd available", False, missing)
        R.finish()
    for label, lines in SETUPS.items():
        runs = {}
        for kind in ("lumend", "slapd"):
            server = sh.make_server(kind, db_lines=lines)
            server.start()
            try:
                runs[kind] = run(server, label == "provider")
            finally:
                server.stop(R if kind == "lumend" else None)
        for case, got in runs["lumend"].items():
            R.check(f"{label}: {case}: as slapd ({got})", got == runs["slapd"][case],
                    f"lumen {got} slapd {runs['slapd'][case]}")
    R.finish()


if __name__ == "__main__":
    main()
