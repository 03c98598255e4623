#!/usr/bin/env python3
"""Password policy (`overlay ppolicy`), side by side with OpenLDAP's slapd and
its ppolicy module: the same scenario on both, the same result codes, the same
Password Policy response controls and the same state attributes.

  - Lockout: pwdMaxFailure wrong binds lock the account (pwdFailureTime
    values, pwdAccountLockedTime); the right password is then refused with
    invalidCredentials and, with ppolicy_use_lockout, the control's
    accountLocked; after pwdLockoutDuration the right password binds again
    and the failure state is cleared.
  - pwdFailureCountInterval: failures older than the interval do not count.
  - Quality (pwdMinLength) and history (pwdInHistory): constraintViolation
    with passwordTooShort / passwordInHistory, over Modify and over Password
    Modify (ldappasswd's messages compared with slapd's).
  - pwdMustChange: an administrator's reset sets pwdReset; the user's bind
    says changeAfterReset (ldapwhoami -e ppolicy's messages compared); the
    user's own change clears it.
  - pwdMaxAge / pwdExpireWarning / pwdGraceAuthNLimit: the warning before
    expiry, the grace binds after, then passwordExpired.
  - A pwdPolicy entry with a value the policy cannot use is refused
    (Lumen only: slapd accepts it and ignores the value).
  - Configuration errors name file and line.
"""
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lumen_harness as h  # noqa: E402
import slapd_harness as sh  # noqa: E402

import ldap  # noqa: E402
from ldap.controls import ResponseControl  # noqa: E402
from ldap.controls.ppolicy import PasswordPolicyControl  # noqa: E402

R = h.Results("t_ppolicy.py")
B = sh.SUFFIX
PEOPLE, POLICIES = "ou=people," + B, "ou=policies," + B
DEFAULT_POLICY = "cn=default," + POLICIES
EXPIRY_POLICY = "cn=expiry," + POLICIES
INTERVAL_POLICY = "cn=interval," + POLICIES
LOCKOUT_SECONDS = 3


def user(uid):
    return f"uid={uid},{PEOPLE}"


def policy(dn, **values):
    cn = dn.split(",")[0].split("=")[1]
    text = (f"dn: {dn}\nobjectClass: person\nobjectClass: pwdPolicy\ncn: {cn}\nsn: {cn}\n"
            "pwdAttribute: userPassword\n")
    return text + "".join(f"{k}: {v}\n" for k, v in values.items())


def ldif():
    out = [f"dn: {B}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Ex\n",
           f"dn: {PEOPLE}\nobjectClass: organizationalUnit\nou: people\n",
           f"dn: {POLICIES}\nobjectClass: organizationalUnit\nou: policies\n",
           policy(DEFAULT_POLICY, pwdMaxFailure=3, pwdLockout="TRUE",
                  pwdLockoutDuration=LOCKOUT_SECONDS, pwdMinLength=6, pwdCheckQuality=1,
                  pwdInHistory=2, pwdMustChange="TRUE", pwdAllowUserChange="TRUE"),
           policy(EXPIRY_POLICY, pwdMaxAge=6, pwdExpireWarning=4, pwdGraceAuthNLimit=2),
           policy(INTERVAL_POLICY, pwdMaxFailure=2, pwdLockout="TRUE",
                  pwdFailureCountInterval=2)]
    for uid, extra in (("lock", ""), ("interval", f"pwdPolicySubentry: {INTERVAL_POLICY}\n"),
                       ("short", ""), ("hist", ""), ("reset", ""),
                       ("exp", f"pwdPolicySubentry: {EXPIRY_POLICY}\n")):
        out.append(f"dn: {user(uid)}\nobjectClass: inetOrgPerson\nuid: {uid}\ncn: {uid}\n"
                   f"sn: {uid}\nuserPassword: secret-{uid}\n{extra}")
    return "\n".join(out) + "\n"


def overlay_lines():
    return ["overlay ppolicy", f'ppolicy_default "{DEFAULT_POLICY}"', "ppolicy_use_lockout",
            "ppolicy_hash_cleartext"]


ACCESS = ["access to attrs=userPassword by self write by anonymous auth by * none",
          "access to * by * read"]


def start(kind):
    global_lines = list(ACCESS)
    if kind == "slapd":
        global_lines.insert(0, "moduleload ppolicy")
    server = sh.make_server(kind, db_lines=overlay_lines(), global_lines=global_lines)
    server.start()
    path = os.path.join(server.tmp, "data.ldif")
    with open(path, "w") as f:
        f.write(ldif())
    rc, out = server.ldapadd(path)
    if rc != 0:
        raise RuntimeError(f"{kind}: loading failed: {out}")
    return server


def parse_value(value):
    """PasswordPolicyResponseValue (draft-behera-10 §6.2) as (warning, error):
    warning ("expires", "~") (seconds vary) or ("grace", n) or None."""
    if len(value) < 2 or value[0] != 0x30:
        return "malformed", value.hex()
    body, at, warning, error = value[2:2 + value[1]], 0, None, None
    while at + 2 <= len(body):
        tag, n = body[at], body[at + 1]
        content = body[at + 2:at + 2 + n]
        if tag == 0xA0 and len(content) >= 2:
            number = int.from_bytes(content[2:2 + content[1]], "big")
            warning = ("expires", "~") if content[0] == 0x80 else ("grace", number)
        elif tag == 0x81:
            error = int.from_bytes(content, "big")
        at += 2 + n
    return warning, error


def decode(ctrls):
    """The Password Policy response as (warning, error), or None."""
    for c in ctrls or []:
        if isinstance(c, tuple) and c[0] == PasswordPolicyControl.controlType:
            return parse_value(c[2])
        if isinstance(c, RawResponse) and c.controlType == PasswordPolicyControl.controlType:
            return parse_value(c.raw)
    return None


class RawResponse(ResponseControl):
    """Keeps a response control's value as sent (python-ldap's own ppolicy
    decoder mislabels the warning with some pyasn1 versions)."""

    def decodeControlValue(self, encodedControlValue):
        self.raw = encodedControlValue


RAW = {PasswordPolicyControl.controlType: RawResponse}


def bind(server, dn, pw):
    """(result code, decoded control) of a bind with the control."""
    conn = ldap.initialize(server.uri)
    try:
        msgid = conn.simple_bind(dn, pw, serverctrls=[PasswordPolicyControl()])
        _, _, _, ctrls = conn.result3(msgid, resp_ctrl_classes=RAW)
        return 0, decode(ctrls)
    except ldap.LDAPError as e:
        info = e.args[0] if e.args and isinstance(e.args[0], dict) else {}
        return info.get("result", -1), decode(info.get("ctrls"))
    finally:
        conn.unbind_s()


def modify(server, who, pw, dn, changes):
    conn = ldap.initialize(server.uri)
    try:
        conn.simple_bind_s(who, pw)
        msgid = conn.modify_ext(dn, changes, serverctrls=[PasswordPolicyControl()])
        _, _, _, ctrls = conn.result3(msgid, resp_ctrl_classes=RAW)
        return 0, None, decode(ctrls)
    except ldap.LDAPError as e:
        info = e.args[0] if e.args and isinstance(e.args[0], dict) else {}
        return info.get("result", -1), info.get("info"), decode(info.get("ctrls"))
    finally:
        conn.unbind_s()


def state(server, uid):
    """The policy state of a user: attribute -> number of values (pwdReset: its value)."""
    conn = ldap.initialize(server.uri)
    conn.simple_bind_s(sh.ROOTDN, sh.ROOTPW)
    attrs = ["pwdFailureTime", "pwdAccountLockedTime", "pwdChangedTime", "pwdHistory",
             "pwdReset", "pwdGraceUseTime"]
    res = conn.search_s(user(uid), ldap.SCOPE_BASE, "(objectClass=*)", attrs)
    conn.unbind_s()
    got = {k.lower(): v for k, v in res[0][1].items()}
    out = {}
    for a in attrs:
        values = got.get(a.lower(), [])
        out[a] = values[0].decode() if a == "pwdReset" and values else len(values)
    return out


def run_tool(server, args):
    p = subprocess.run(args + ["-H", server.uri], capture_output=True, text=True, timeout=30)
    return p.returncode, (p.stdout + p.stderr).strip()


WRONG = ldap.MOD_REPLACE


def lockout(server, seen):
    dn = user("lock")
    seen["lockout: wrong binds"] = [bind(server, dn, "wrong")[0] for _ in range(3)]
    st = state(server, "lock")
    seen["lockout: state"] = (st["pwdFailureTime"], st["pwdAccountLockedTime"])
    seen["lockout: right password refused"] = bind(server, dn, "secret-lock")
    time.sleep(LOCKOUT_SECONDS + 1.2)
    seen["lockout: after the duration"] = bind(server, dn, "secret-lock")
    st = state(server, "lock")
    seen["lockout: cleared"] = (st["pwdFailureTime"], st["pwdAccountLockedTime"])


def interval(server, seen):
    dn = user("interval")
    first = bind(server, dn, "wrong")[0]
    time.sleep(3.5)   # > pwdFailureCountInterval, at whole-second precision
    second = bind(server, dn, "wrong")[0]
    seen["interval: old failure does not count"] = (first, second,
                                                    bind(server, dn, "secret-interval")[0])


def quality(server, seen):
    dn = user("short")
    seen["quality: modify too short"] = modify(
        server, dn, "secret-short", dn,
        [(ldap.MOD_DELETE, "userPassword", [b"secret-short"]),
         (ldap.MOD_ADD, "userPassword", [b"abc"])])
    seen["quality: ldappasswd too short"] = run_tool(
        server, ["ldappasswd", "-x", "-D", dn, "-w", "secret-short", "-a", "secret-short",
                 "-s", "abc"])
    seen["quality: long enough"] = modify(
        server, dn, "secret-short", dn, [(ldap.MOD_REPLACE, "userPassword", [b"longer-one"])])
    seen["quality: stored hashed"] = bind(server, dn, "longer-one")[0]


def history(server, seen):
    dn = user("hist")
    seen["history: first change"] = run_tool(
        server, ["ldappasswd", "-x", "-D", dn, "-w", "secret-hist", "-a", "secret-hist",
                 "-s", "second-pw"])
    seen["history: same as current"] = run_tool(
        server, ["ldappasswd", "-x", "-D", dn, "-w", "second-pw", "-a", "second-pw",
                 "-s", "second-pw"])
    seen["history: back to the old one"] = modify(
        server, dn, "second-pw", dn, [(ldap.MOD_REPLACE, "userPassword", [b"secret-hist"])])
    st = state(server, "hist")
    seen["history: state"] = (st["pwdHistory"], st["pwdChangedTime"])


def must_change(server, seen):
    dn = user("reset")
    seen["reset: by the administrator"] = modify(
        server, sh.ROOTDN, sh.ROOTPW, dn, [(ldap.MOD_REPLACE, "userPassword", [b"temp-pass"])])
    seen["reset: pwdReset"] = state(server, "reset")["pwdReset"]
    seen["reset: bind"] = bind(server, dn, "temp-pass")
    seen["reset: ldapwhoami -e ppolicy"] = run_tool(
        server, ["ldapwhoami", "-x", "-D", dn, "-w", "temp-pass", "-e", "ppolicy"])
    seen["reset: own change"] = run_tool(
        server, ["ldappasswd", "-x", "-D", dn, "-w", "temp-pass", "-a", "temp-pass",
                 "-s", "mine-now"])
    seen["reset: cleared"] = state(server, "reset")["pwdReset"]


def expiry(server, seen):
    dn = user("exp")
    modify(server, sh.ROOTDN, sh.ROOTPW, dn, [(ldap.MOD_REPLACE, "userPassword", [b"exp-pass"])])
    seen["expiry: fresh"] = bind(server, dn, "exp-pass")
    time.sleep(3)
    seen["expiry: warning"] = bind(server, dn, "exp-pass")
    seen["expiry: ldapwhoami warning"] = re.sub(r"\d+ seconds", "N seconds", run_tool(
        server, ["ldapwhoami", "-x", "-D", dn, "-w", "exp-pass", "-e", "ppolicy"])[1])
    time.sleep(4)
    seen["expiry: grace binds"] = [bind(server, dn, "exp-pass") for _ in range(3)]
    seen["expiry: grace state"] = state(server, "exp")["pwdGraceUseTime"]


def scenario(kind):
    seen = {}
    server = start(kind)
    try:
        for step in (lockout, interval, quality, history, must_change, expiry):
            step(server, seen)
    finally:
        server.stop(R)
    return seen


EXPECTED = {
    "lockout: wrong binds": [49, 49, 49],
    "lockout: state": (3, 1),
    "lockout: right password refused": (49, (None, 1)),
    "lockout: after the duration": (0, (None, None)),
    "lockout: cleared": (0, 0),
    "interval: old failure does not count": (49, 49, 0),
    "quality: modify too short": (19, "Password fails quality checking policy", (None, 6)),
    "history: back to the old one": (19, "Password is in history of old passwords",
                                     (None, 8)),
    "reset: pwdReset": "TRUE",
    "reset: bind": (0, (None, 2)),
    "reset: cleared": 0,
    "expiry: warning": (0, (("expires", "~"), None)),
    "expiry: grace binds": [(0, (("grace", 1), None)), (0, (("grace", 0), None)),
                            (49, (None, 0))],
    "expiry: grace state": 2,
}


def compare_with_slapd():
    lumen = scenario("lumend")
    for step, want in EXPECTED.items():
        R.check(f"lumend {step}", lumen.get(step) == want, f"got {lumen.get(step)}, want {want}")
    if sh.slapd_missing():
        R.check("slapd available for the side-by-side run", False, sh.slapd_missing())
        return
    slapd = scenario("slapd")
    for step in lumen:
        R.check(f"slapd agrees on {step}", slapd.get(step) == lumen[step],
                f"slapd {slapd.get(step)}, lumend {lumen[step]}")


def invalid_policy():
    server = start("lumend")
    try:
        conn = ldap.initialize(server.uri)
        conn.simple_bind_s(sh.ROOTDN, sh.ROOTPW)
        bad = policy("cn=bad," + POLICIES, pwdCheckQuality=7)
        attrs = []
        for line in bad.splitlines()[1:]:
            k, v = line.split(": ", 1)
            attrs.append((k, [v.encode()]))
        try:
            conn.add_s("cn=bad," + POLICIES, attrs)
            got = (0, "")
        except ldap.LDAPError as e:
            got = (e.args[0].get("result"), e.args[0].get("info", ""))
        R.check("a pwdPolicy entry with pwdCheckQuality 7 is refused: constraintViolation",
                got[0] == 19 and "pwdCheckQuality" in got[1], got)
        try:
            conn.modify_s(DEFAULT_POLICY, [(ldap.MOD_REPLACE, "pwdAttribute", [b"cn"])])
            got = (0, "")
        except ldap.LDAPError as e:
            got = (e.args[0].get("result"), e.args[0].get("info", ""))
        R.check("pwdAttribute other than userPassword is refused", got[0] == 19 and
                "pwdAttribute" in got[1], got)
        conn.unbind_s()
    finally:
        server.stop(R)


def config_errors():
    tmp = tempfile.mkdtemp(prefix="lumen-it-ppolicy-")
    head = h.config_head(tmp, B)
    cases = [
        ("unknown directive", ["overlay ppolicy", "ppolicy_bogus"], 8,
         'unknown directive "ppolicy_bogus"'),
        ("bad default DN", ["overlay ppolicy", "ppolicy_default notadn"], 8, "expected a DN"),
        ("argument to a switch", ["overlay ppolicy", "ppolicy_use_lockout yes"], 8,
         "takes no argument"),
    ]
    h.check_config_errors(R, tmp, head, cases)
    good = os.path.join(tmp, "good.conf")
    with open(good, "w") as f:
        f.write("\n".join(head + overlay_lines() + ["ppolicy_forward_updates"]) + "\n")
    rc, out = h.lumend_check(good)
    R.check("config: a good ppolicy section passes -T", rc == 0, out)


compare_with_slapd()
invalid_policy()
config_errors()
R.finish()
