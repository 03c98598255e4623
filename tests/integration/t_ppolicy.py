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
  - The must-change restriction: after a reset, the user's connection may
    only change its password (search, compare, modify of other attributes,
    add and delete refused with insufficientAccessRights and the control's
    changeAfterReset; ldapsearch -e ppolicy's output compared); the change
    lifts it.
  - pwdMaxLength (passwordTooLong), pwdMinDelay/pwdMaxDelay (a failure
    makes the account wait: pwdAccountTmpLockoutEnd), pwdGraceExpiry (no
    grace binds once it has passed), pwdStartTime/pwdEndTime (the account's
    validity window), pwdMaxIdle (with slapd's `lastbind on` and Lumen's
    `overlay lastbind`).
  - A successful bind of an account without failure state writes nothing:
    LMDB's last transaction ID is the same after 100 binds (both servers).
  - A pwdPolicy entry with a value the policy cannot use is refused
    (Lumen only: slapd accepts it and ignores the value), and nothing of
    it is stored; a changed policy applies at the next bind.
  - Configuration errors name file and line.
"""
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

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
MAXLEN_POLICY = "cn=maxlen," + POLICIES
DELAY_POLICY = "cn=delay," + POLICIES
GRACE_EXPIRY_POLICY = "cn=graceexpiry," + POLICIES
IDLE_POLICY = "cn=idle," + POLICIES
PAST, FUTURE = "20000101000000Z", "20991231235959Z"
RESTRICTED = "Operations are restricted to bind/unbind/abandon/StartTLS/modify password"
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
                  pwdFailureCountInterval=2),
           policy(MAXLEN_POLICY, pwdCheckQuality=1, pwdMinLength=3, pwdMaxLength=8),
           policy(DELAY_POLICY, pwdLockout="TRUE", pwdMinDelay=2, pwdMaxDelay=3),
           policy(GRACE_EXPIRY_POLICY, pwdMaxAge=2, pwdGraceAuthNLimit=5, pwdGraceExpiry=2),
           policy(IDLE_POLICY, pwdLockout="TRUE", pwdMaxIdle=2)]
    sub = "pwdPolicySubentry: {}\n".format
    for uid, extra in (("lock", ""), ("interval", sub(INTERVAL_POLICY)),
                       ("short", ""), ("hist", ""), ("reset", ""),
                       ("exp", sub(EXPIRY_POLICY)), ("mc", ""), ("long", sub(MAXLEN_POLICY)),
                       ("delay", sub(DELAY_POLICY)), ("gexp", sub(GRACE_EXPIRY_POLICY)),
                       ("idle", sub(IDLE_POLICY)), ("early", f"pwdStartTime: {FUTURE}\n"),
                       ("late", f"pwdEndTime: {PAST}\n"),
                       ("window", f"pwdStartTime: {PAST}\npwdEndTime: {FUTURE}\n"),
                       ("quiet", "")):
        out.append(f"dn: {user(uid)}\nobjectClass: inetOrgPerson\nuid: {uid}\ncn: {uid}\n"
                   f"sn: {uid}\nuserPassword: secret-{uid}\n{extra}")
    return "\n".join(out) + "\n"


def overlay_lines():
    return ["overlay ppolicy", f'ppolicy_default "{DEFAULT_POLICY}"', "ppolicy_use_lockout",
            "ppolicy_hash_cleartext"]


ACCESS = ["access to attrs=userPassword by self write by anonymous auth by * none",
          "access to * by * read"]


def start(kind, lastbind=False):
    """A loaded server; lastbind: the database keeps the time of the last
    bind (slapd's `lastbind on`, Lumen's `overlay lastbind`)."""
    global_lines = list(ACCESS)
    db_lines = overlay_lines()
    if kind == "slapd":
        global_lines.insert(0, "moduleload ppolicy")
        db_lines = (["lastbind on"] if lastbind else []) + db_lines
    elif lastbind:
        db_lines = db_lines + ["overlay lastbind"]
    server = sh.make_server(kind, db_lines=db_lines, global_lines=global_lines)
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
             "pwdReset", "pwdGraceUseTime", "pwdAccountTmpLockoutEnd"]
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


def outcome(conn, call):
    """(result code, diagnostic, decoded control) of the operation call()
    starts on conn."""
    try:
        msgid = call()
        _, _, _, ctrls = conn.result3(msgid, resp_ctrl_classes=RAW)
        return 0, None, decode(ctrls)
    except ldap.LDAPError as e:
        info = e.args[0] if e.args and isinstance(e.args[0], dict) else {}
        return info.get("result", -1), info.get("info"), decode(info.get("ctrls"))


def restriction(server, seen):
    dn = user("mc")
    modify(server, sh.ROOTDN, sh.ROOTPW, dn, [(ldap.MOD_REPLACE, "userPassword", [b"reset-pw"])])
    conn = ldap.initialize(server.uri)
    ctl = [PasswordPolicyControl()]
    try:
        seen["restrict: bind"] = bind(server, dn, "reset-pw")
        conn.simple_bind_s(dn, "reset-pw")
        ops = {
            "search": lambda: conn.search_ext(dn, ldap.SCOPE_BASE, "(objectClass=*)",
                                              serverctrls=ctl),
            "compare": lambda: conn.compare_ext(dn, "uid", b"mc", serverctrls=ctl),
            "modify other": lambda: conn.modify_ext(
                dn, [(ldap.MOD_REPLACE, "description", [b"x"])], serverctrls=ctl),
            "add": lambda: conn.add_ext("uid=new," + PEOPLE,
                                        [("objectClass", [b"account"]), ("uid", [b"new"])],
                                        serverctrls=ctl),
            "delete": lambda: conn.delete_ext(user("quiet"), serverctrls=ctl),
        }
        # As slapd's, the control is answered on Bind, Add, Modify and
        # Password Modify only: the search, compare and delete refusals
        # carry none.
        for name, call in ops.items():
            seen[f"restrict: {name}"] = outcome(conn, call)
        seen["restrict: ldapsearch -e ppolicy"] = run_tool(
            server, ["ldapsearch", "-x", "-D", dn, "-w", "reset-pw", "-e", "ppolicy", "-b", dn,
                     "-s", "base", "1.1"])
        seen["restrict: own password change"] = outcome(conn, lambda: conn.modify_ext(
            dn, [(ldap.MOD_REPLACE, "userPassword", [b"chosen-pw"])], serverctrls=ctl))
        seen["restrict: lifted"] = outcome(conn, lambda: conn.search_ext(
            dn, ldap.SCOPE_BASE, "(objectClass=*)", ["uid"], serverctrls=ctl))
    finally:
        conn.unbind_s()


def max_length(server, seen):
    dn = user("long")
    change = [(ldap.MOD_DELETE, "userPassword", [b"secret-long"]),
              (ldap.MOD_ADD, "userPassword", [b"far-too-long-pw"])]
    seen["maxlength: too long"] = modify(server, dn, "secret-long", dn, change)
    seen["maxlength: ldappasswd too long"] = run_tool(
        server, ["ldappasswd", "-x", "-D", dn, "-w", "secret-long", "-a", "secret-long",
                 "-s", "far-too-long-pw"])
    seen["maxlength: fits"] = modify(server, dn, "secret-long", dn,
                                     [(ldap.MOD_REPLACE, "userPassword", [b"fits-8ch"])])


def delay(server, seen):
    dn = user("delay")
    seen["delay: wrong bind"] = bind(server, dn, "wrong")
    seen["delay: right password must wait"] = bind(server, dn, "secret-delay")
    seen["delay: state"] = (state(server, "delay")["pwdFailureTime"],
                            state(server, "delay")["pwdAccountTmpLockoutEnd"])
    time.sleep(3.2)
    seen["delay: after the wait"] = bind(server, dn, "secret-delay")
    seen["delay: failures cleared"] = state(server, "delay")["pwdFailureTime"]


def grace_expiry(server, seen):
    dn = user("gexp")
    modify(server, sh.ROOTDN, sh.ROOTPW, dn, [(ldap.MOD_REPLACE, "userPassword", [b"gexp-pw"])])
    time.sleep(3)
    seen["graceexpiry: within"] = bind(server, dn, "gexp-pw")
    time.sleep(2.5)
    seen["graceexpiry: past"] = bind(server, dn, "gexp-pw")


def validity(server, seen):
    seen["validity: before pwdStartTime"] = bind(server, user("early"), "secret-early")
    seen["validity: after pwdEndTime"] = bind(server, user("late"), "secret-late")
    seen["validity: inside the window"] = bind(server, user("window"), "secret-window")
    seen["validity: refusals record nothing"] = state(server, "late")["pwdFailureTime"]


def policy_change(server, seen):
    """A changed policy applies at the very next bind (Lumen caches
    parsed policies: the write must reach the cache)."""
    dn = user("window")
    first = bind(server, dn, "secret-window")[0]
    modify(server, sh.ROOTDN, sh.ROOTPW, DEFAULT_POLICY,
           [(ldap.MOD_REPLACE, "pwdMaxFailure", [b"1"])])
    seen["policy change: applies at once"] = (first, bind(server, dn, "wrong")[0],
                                              bind(server, dn, "secret-window"))


def scenario(kind):
    seen = {}
    server = start(kind)
    try:
        for step in (lockout, interval, quality, history, must_change, expiry, restriction,
                     max_length, delay, grace_expiry, validity, no_write, policy_change):
            if kind == "slapd" and step in LUMEN_ONLY:
                continue
            step(server, seen)
    finally:
        server.stop(R)
    return seen


# slapd 2.5.13 aborts ("stack smashing detected") on the first failed bind
# under a policy with pwdMinDelay: its temporary lockout is Lumen's alone.
LUMEN_ONLY = (delay,)


def idle_scenario(kind):
    seen = {}
    server = start(kind, lastbind=True)
    try:
        dn = user("idle")
        seen["idle: used"] = bind(server, dn, "secret-idle")
        time.sleep(1.5)
        seen["idle: used again within pwdMaxIdle"] = bind(server, dn, "secret-idle")
        time.sleep(3.5)
        seen["idle: idle too long"] = bind(server, dn, "secret-idle")
    finally:
        server.stop(R)
    return seen


def last_txn(server):
    out = subprocess.run(["mdb_stat", "-e", server.dbdir], capture_output=True, text=True,
                         timeout=30).stdout
    m = re.search(r"Last transaction ID: (\d+)", out)
    return int(m.group(1)) if m else out


def no_write(server, seen):
    """100 successful binds of an account with no failure state (its
    policy has lockout on) leave LMDB's last transaction ID as it was."""
    dn = user("quiet")
    before = last_txn(server)
    codes = {bind(server, dn, "secret-quiet") for _ in range(100)}
    after = last_txn(server)
    seen["no write: 100 binds"] = (codes, isinstance(before, int) and before == after)


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
    "restrict: bind": (0, (None, 2)),
    "restrict: search": (50, RESTRICTED, None),
    "restrict: compare": (50, RESTRICTED, None),
    "restrict: modify other": (50, RESTRICTED, (None, 2)),
    "restrict: add": (50, RESTRICTED, (None, 2)),
    "restrict: delete": (50, RESTRICTED, None),
    "restrict: own password change": (0, None, None),
    "restrict: lifted": (0, None, None),
    "maxlength: too long": (19, "Password fails quality checking policy", (None, 9)),
    "maxlength: fits": (0, None, None),
    "delay: wrong bind": (49, (None, None)),
    "delay: right password must wait": (49, (None, 1)),
    "delay: state": (1, 1),
    "delay: after the wait": (0, (None, None)),
    "delay: failures cleared": 0,
    "graceexpiry: within": (0, (("grace", 4), None)),
    "graceexpiry: past": (49, (None, 0)),
    "validity: before pwdStartTime": (49, (None, 1)),
    "validity: after pwdEndTime": (49, (None, 1)),
    "validity: inside the window": (0, (None, None)),
    "validity: refusals record nothing": 0,
    "no write: 100 binds": ({(0, (None, None))}, True),
    "policy change: applies at once": (0, 49, (49, (None, 1))),
    "idle: used": (0, (None, None)),
    "idle: used again within pwdMaxIdle": (0, (None, None)),
    "idle: idle too long": (49, (None, 1)),
}


def scenarios(kinds):
    """Both scenarios on each kind of server, all four at once: most of
    their time is sleeps through policy intervals, which overlap."""
    with ThreadPoolExecutor(max_workers=2 * len(kinds)) as pool:
        runs = {kind: (pool.submit(scenario, kind), pool.submit(idle_scenario, kind))
                for kind in kinds}
        out = {}
        for kind, (main, idle) in runs.items():
            out[kind] = main.result()
            out[kind].update(idle.result())
    return out


def compare_with_slapd():
    missing = sh.slapd_missing()
    seen = scenarios(["lumend"] if missing else ["lumend", "slapd"])
    lumen = seen["lumend"]
    for step, want in EXPECTED.items():
        R.check(f"lumend {step}", lumen.get(step) == want, f"got {lumen.get(step)}, want {want}")
    if missing:
        R.check("slapd available for the side-by-side run", False, missing)
        return
    slapd = seen["slapd"]
    for step in lumen:
        if step.startswith("delay:"):
            continue
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
        bad_changes = [
            ("pwdMaxLength below pwdMinLength", [(ldap.MOD_REPLACE, "pwdMaxLength", [b"4"])],
             "pwdMaxLength: less than pwdMinLength"),
            ("pwdMaxDelay below pwdMinDelay", [(ldap.MOD_REPLACE, "pwdMinDelay", [b"10"]),
                                               (ldap.MOD_REPLACE, "pwdMaxDelay", [b"5"])],
             "pwdMaxDelay: less than pwdMinDelay"),
            ("negative pwdMaxIdle", [(ldap.MOD_REPLACE, "pwdLockout", [b"FALSE"]),
                                     (ldap.MOD_REPLACE, "pwdMaxIdle", [b"-5"])],
             "pwdMaxIdle: -5 is out of range"),
            ("pwdGraceExpiry out of range", [(ldap.MOD_REPLACE, "pwdGraceExpiry",
                                              [b"99999999999"])], "pwdGraceExpiry:"),
        ]
        stored = conn.search_s(DEFAULT_POLICY, ldap.SCOPE_BASE)[0][1]
        for name, changes, text in bad_changes:
            try:
                conn.modify_s(DEFAULT_POLICY, changes)
                got = (0, "")
            except ldap.LDAPError as e:
                got = (e.args[0].get("result"), e.args[0].get("info", ""))
            R.check(f"bad policy: {name}: constraintViolation naming it",
                    got[0] == 19 and got[1].startswith(text), got)
        R.check("bad policy: nothing of the refused changes stored",
                conn.search_s(DEFAULT_POLICY, ldap.SCOPE_BASE)[0][1] == stored)
        # The policy in force is still the stored one: three failures lock.
        dn = user("lock")
        codes = [bind(server, dn, "wrong")[0] for _ in range(3)]
        R.check("bad policy: the stored policy still applies",
                codes == [49, 49, 49] and bind(server, dn, "secret-lock") == (49, (None, 1)),
                codes)
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
