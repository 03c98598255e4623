#!/usr/bin/env python3
"""Access control on the entries the server itself publishes: the root DSE,
cn=Subschema and cn=Monitor, side by side with OpenLDAP's slapd.

  - `access to dn.base="" by * none` (then a rule letting everyone read the
    rest) hides the root DSE from anonymous: the base search succeeds with
    no entry, as slapd answers; a rule denying one attribute leaves that
    attribute out; a filter on an attribute the requester may not search
    does not match (the filter-oracle rule).
  - The same for cn=Subschema (`access to dn.base="cn=Subschema"`).
  - Under cn=Monitor, attribute rules hide monitorConnectionAuthzDN and
    monitorConnectionPeerAddress from a user allowed to read the rest of
    each connection entry (slapd: with back-monitor loaded).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402

import ldap  # noqa: E402

R = h.Results("t_acl_special.py")
B = sh.SUFFIX
USER, USER_PW = "uid=watcher,ou=people," + B, "watchpw"

RULES = [
    'access to dn.base="" by * none',
    'access to dn.base="cn=Subschema" attrs=ldapSyntaxes by * none',
    'access to dn.base="cn=Subschema" attrs=matchingRules by * search',
    'access to dn.subtree="cn=Monitor" '
    'attrs=monitorConnectionAuthzDN,monitorConnectionPeerAddress by * none',
    'access to attrs=userPassword by anonymous auth by * none',
    'access to * by * read',
]
RULES_HIDE_SUBSCHEMA = ['access to dn.base="cn=Subschema" by * none', 'access to * by * read']
RULES_ROOTDSE_ATTR = ['access to dn.base="" attrs=namingContexts by * none',
                      'access to dn.base="" attrs=supportedLDAPVersion by * search',
                      'access to * by * read']

LDIF = f"""dn: {B}
objectClass: dcObject
objectClass: organization
dc: example
o: Example

dn: ou=people,{B}
objectClass: organizationalUnit
ou: people

dn: {USER}
objectClass: inetOrgPerson
uid: watcher
cn: Watcher
sn: Watcher
userPassword: {USER_PW}
"""


def code_and_entries(conn, base, scope=ldap.SCOPE_BASE, filt="(objectClass=*)", attrs=None):
    try:
        return 0, conn.search_s(base, scope, filt, attrs)
    except ldap.LDAPError as e:
        return e.args[0].get("result", -1), []


def start(kind, rules):
    global_lines = list(rules)
    if kind == "slapd":
        # back-monitor, as lumend's built-in cn=Monitor (after the global rules)
        global_lines = [f"moduleload back_monitor"] + global_lines
        srv = sh.Slapd(global_lines=global_lines)
        with open(srv.config, "a") as f:
            f.write("database monitor\n")
    else:
        srv = sh.Lumend(global_lines=global_lines)
        with open(srv.config) as f:
            text = f.read()
        if "monitor.schema" not in text:
            with open(srv.config, "w") as f:
                f.write(f"include {sh.ROOT}/schema/monitor.schema\n" + text)
    return srv.start()


def load(srv):
    path = os.path.join(srv.tmp, "base.ldif")
    with open(path, "w") as f:
        f.write(LDIF)
    rc, out = srv.ldapadd(path)
    R.check(f"{srv.kind}: the base entries load", rc == 0, out)


def main_rules(kind):
    srv = start(kind, RULES)
    try:
        load(srv)
        anon = ldap.initialize(srv.uri)
        code, got = code_and_entries(anon, "", attrs=["+"])
        R.check(f"{kind}: root DSE denied: base search succeeds with no entry",
                code == 0 and got == [], (code, got))
        code, got = code_and_entries(anon, "", filt="(namingContexts=*)", attrs=["+"])
        R.check(f"{kind}: root DSE denied: nothing for a filter either", code == 0 and got == [],
                (code, got))
        code, got = code_and_entries(anon, "cn=Subschema", attrs=["ldapSyntaxes", "objectClasses"])
        attrs = got[0][1] if got else {}
        R.check(f"{kind}: subschema: a denied attribute is left out, the others sent",
                code == 0 and "ldapSyntaxes" not in attrs and "objectClasses" in attrs,
                (code, sorted(attrs)))
        code, got = code_and_entries(anon, "cn=Subschema", filt="(ldapSyntaxes=*)",
                                     attrs=["objectClasses"])
        R.check(f"{kind}: subschema: a filter on an unsearchable attribute does not match",
                code == 0 and got == [], (code, [d for d, _ in got]))
        code, got = code_and_entries(anon, "cn=Subschema", filt="(matchingRules=*)",
                                     attrs=["matchingRules", "objectClasses"])
        attrs = got[0][1] if got else {}
        R.check(f"{kind}: subschema: `search` lets the filter match, not the value be read",
                code == 0 and len(got) == 1 and "matchingRules" not in attrs, (code, sorted(attrs)))
        user = ldap.initialize(srv.uri)
        user.simple_bind_s(USER, USER_PW)
        code, got = code_and_entries(user, "cn=Connections,cn=Monitor", ldap.SCOPE_ONELEVEL,
                                     "(objectClass=monitorConnection)", ["*", "+"])
        seen = set()
        for _, a in got:
            seen.update(k.lower() for k in a)
        R.check(f"{kind}: monitor: the user reads the connection entries", code == 0 and
                len(got) >= 2 and "monitorconnectionnumber" in seen, (code, len(got), sorted(seen)))
        R.check(f"{kind}: monitor: bind DN and peer address hidden",
                "monitorconnectionauthzdn" not in seen and
                "monitorconnectionpeeraddress" not in seen, sorted(seen))
        code, got = code_and_entries(user, "cn=Connections,cn=Monitor", ldap.SCOPE_ONELEVEL,
                                     f"(monitorConnectionAuthzDN={USER})", ["1.1"])
        R.check(f"{kind}: monitor: a filter on the hidden bind DN matches nothing",
                code == 0 and got == [], (code, got))
        root = ldap.initialize(srv.uri)
        root.simple_bind_s(sh.ROOTDN, sh.ROOTPW)
        code, got = code_and_entries(root, "cn=Connections,cn=Monitor", ldap.SCOPE_ONELEVEL,
                                     f"(monitorConnectionAuthzDN={USER})", ["1.1"])
        if kind == "lumend":
            # slapd's rootdn of the mdb database is not root on cn=Monitor
            # either; Lumen's is neither (the global rules decide).
            R.check(f"{kind}: monitor: the rootdn is under the same rules",
                    code == 0 and got == [], (code, got))
    finally:
        srv.stop(R if kind == "lumend" else None)


def hidden_subschema(kind):
    srv = start(kind, RULES_HIDE_SUBSCHEMA)
    try:
        anon = ldap.initialize(srv.uri)
        code, got = code_and_entries(anon, "cn=Subschema", attrs=["objectClasses"])
        R.check(f"{kind}: subschema denied: base search succeeds with no entry",
                code == 0 and got == [], (code, [d for d, _ in got]))
        code, got = code_and_entries(anon, "", attrs=["+"])
        R.check(f"{kind}: the root DSE stays readable", code == 0 and len(got) == 1, code)
    finally:
        srv.stop(R if kind == "lumend" else None)


def rootdse_attribute(kind):
    srv = start(kind, RULES_ROOTDSE_ATTR)
    try:
        anon = ldap.initialize(srv.uri)
        code, got = code_and_entries(anon, "", attrs=["+"])
        attrs = got[0][1] if got else {}
        R.check(f"{kind}: root DSE: a denied attribute is left out, others sent",
                code == 0 and "namingContexts" not in attrs and "subschemaSubentry" in attrs,
                (code, sorted(attrs)))
        code, got = code_and_entries(anon, "", filt="(namingContexts=*)", attrs=["1.1"])
        R.check(f"{kind}: root DSE: a filter on the denied attribute does not match",
                code == 0 and got == [], (code, got))
        code, got = code_and_entries(anon, "", filt="(supportedLDAPVersion=*)",
                                     attrs=["supportedLDAPVersion"])
        attrs = got[0][1] if got else {}
        R.check(f"{kind}: root DSE: `search` on an attribute matches without reading it",
                code == 0 and len(got) == 1 and "supportedLDAPVersion" not in attrs, (code, got))
    finally:
        srv.stop(R if kind == "lumend" else None)


missing = sh.slapd_missing()
kinds = ["lumend"] if missing else ["slapd", "lumend"]
if missing:
    print(f"  note t_acl_special.py: no slapd side ({missing})")
for k in kinds:
    main_rules(k)
    hidden_subschema(k)
    rootdse_attribute(k)
R.finish()
