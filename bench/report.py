#!/usr/bin/env python3
"""report.py OUT_DIR — turn compare.sh's raw results into report.md and charts.

Reads OUT_DIR/meta.txt (key=value) and OUT_DIR/raw/<server>-<row>.json
(lumenbench --json; with compare.sh --rounds, <server>-<row>@<k>.json for
round k, of which each server's median round stands for the row), writes
OUT_DIR/report.md, and with gnuplot
throughput.png and p99.png (both servers and the ceiling on each chart).
"""
import json
import os
import subprocess
import sys

SERVERS = [("openldap", "OpenLDAP"), ("lumen", "Lumen"), ("canned", "canned ceiling")]
ROWS = ["search-c1", "search-c4", "search-c16", "search-c32", "search-c64",
        "search-c256", "search-c1000", "auth-c16", "bind-c16", "compare-c16",
        "connperop-c16", "search-rate-c32", "modify-c16", "add-c4", "add-c16",
        "group-modify-c16",
        "delete-c4", "sort-c16", "vlv-c16"]
SUCCESS = {"success", "compareTrue", "compareFalse"}
# Rows whose name starts so only read (compare.sh: read_only).
READ_KINDS = {"search", "auth", "bind", "compare", "connperop", "sort", "vlv"}


def load(out):
    meta = {}
    with open(os.path.join(out, "meta.txt")) as f:
        for line in f:
            if "=" in line:
                k, v = line.rstrip("\n").split("=", 1)
                meta[k] = v
    runs, rounds = {}, {}
    raw = os.path.join(out, "raw")
    for name in os.listdir(raw):
        if not name.endswith(".json"):
            continue
        server, rest = name[:-5].split("-", 1)
        row, _, k = rest.partition("@")
        try:
            with open(os.path.join(raw, name)) as f:
                run = json.load(f)
        except (ValueError, OSError):
            run = None
        if k:
            rounds.setdefault((server, row), []).append((int(k), run))
        else:
            runs[(server, row)] = run
    for key, taken in rounds.items():
        taken.sort(key=lambda kr: kr[0])
        runs[key] = median_run([run for _, run in taken])
    return meta, runs, rounds


def median_run(runs):
    """The round whose successful ops/s is the median (the lower of two middles)."""
    done = sorted((r for r in runs if r is not None), key=good_rate)
    return done[(len(done) - 1) // 2] if done else None


def errors_text(run):
    """Non-success result codes and client-side errors, e.g. 'unwillingToPerform 512'."""
    if run is None:
        return "run failed"
    parts = ["%s %d" % (k, v) for k, v in run["results"].items() if k not in SUCCESS]
    for k, v in run["errors"].items():
        if k not in ("total", "failed") and v:
            parts.append("%s %d" % (k, v))
    return ", ".join(parts)


def failed_mostly(run):
    return run is not None and run["ops"] > 0 and run["errors"]["failed"] * 2 > run["ops"]


def good_rate(run):
    """Operations per second that succeeded: what a ratio may compare."""
    if run is None or run["ops"] == 0:
        return 0.0
    return run["ops_per_s"] * (run["ops"] - run["errors"]["failed"]) / run["ops"]


def fmt_rate(run):
    if run is None:
        return "—"
    # Errors are answered fast: flag a rate that is mostly error replies.
    return "{:,.0f}{}".format(run["ops_per_s"], " (errors)" if failed_mostly(run) else "")


def fmt_ms(run):
    return "—" if run is None or run["ops"] == 0 else "%.2f" % run["latency_ms"]["p99"]


def ratio(a, b):
    """Successful operations only: an error reply is not work done."""
    if a is None or b is None or good_rate(b) == 0:
        return "—"
    if good_rate(a) == 0:
        return "n/a (errors)"
    return "%.2f×" % (good_rate(a) / good_rate(b))


def table(meta, runs):
    have = [s for s, _ in SERVERS if any(k[0] == s for k in runs)]
    names = dict(SERVERS)
    head = ["workload"]
    for s in have:
        head += ["%s ops/s" % names[s], "%s p99 ms" % names[s]]
    if "lumen" in have and "openldap" in have:
        head.append("Lumen/OpenLDAP")
    head.append("errors")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    # Rows a newer compare.sh ran that this list does not know yet come last.
    extra = sorted({row for (_, row) in runs} - set(ROWS))
    for row in ROWS + extra:
        if not any((s, row) in runs for s in have):
            continue
        cells = [row]
        errs = []
        for s in have:
            run = runs.get((s, row))
            cells += [fmt_rate(run), fmt_ms(run)]
            e = errors_text(run) if (s, row) in runs else ""
            if e:
                errs.append("%s: %s" % (names[s], e))
        if "lumen" in have and "openldap" in have:
            cells.append(ratio(runs.get(("lumen", row)), runs.get(("openldap", row))))
        cells.append("; ".join(errs))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def cpu_per_op(run):
    """The server's CPU (user + system, from /proc over the measured window)
    per successful operation, in microseconds; None when not measured."""
    if run is None:
        return None
    server = run.get("server") or {}
    done = run["ops"] - run["errors"]["failed"]
    if not server.get("available") or server.get("cpu_s") is None or done <= 0:
        return None
    return server["cpu_s"] * 1e6 / done


def cpu_table(runs):
    """Server CPU per operation: unlike ops/s it does not move with whatever
    else the machine runs, so it is the steadier comparison."""
    if not any(cpu_per_op(r) is not None for r in runs.values()):
        return ""
    lines = ["| workload | OpenLDAP µs/op | Lumen µs/op | OpenLDAP/Lumen |",
             "|---|---|---|---|"]
    extra = sorted({row for (_, row) in runs} - set(ROWS))
    for row in ROWS + extra:
        a, b = cpu_per_op(runs.get(("openldap", row))), cpu_per_op(runs.get(("lumen", row)))
        if a is None and b is None:
            continue
        cells = [row] + ["—" if v is None else "%.1f" % v for v in (a, b)]
        cells.append("%.2f×" % (a / b) if a is not None and b else "—")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def fairness(runs):
    """Rows of 64 connections or more: p99 against the average, and the
    operations each connection completed (fewest / mean / most; lumenbench
    with per-connection counts). A fair server keeps the spread narrow."""
    names = dict(SERVERS)
    lines = ["| workload | server | p99 / avg | per connection fewest / mean / most |",
             "|---|---|---|---|"]
    for (s, row), run in sorted(runs.items(), key=lambda kv: (ROWS.index(kv[0][1])
                                if kv[0][1] in ROWS else len(ROWS), kv[0][0])):
        per = run.get("per_connection") if run is not None else None
        if not per or run["connections"] < 64 or run["ops"] == 0 or not per["connections"]:
            continue
        lat = run["latency_ms"]
        lines.append("| %s | %s | %.2f | %d / %.0f / %d |" % (
            row, names.get(s, s), lat["p99"] / lat["avg"] if lat["avg"] > 0 else 0.0,
            per["ops_min"], run["ops"] / per["connections"], per["ops_max"]))
    return "\n".join(lines) if len(lines) > 2 else ""


def rss_after_reads(runs, rounds, server):
    """The server's largest VmRSS at the end of a row that only reads (any
    round): its memory serving the same data as the other server, before
    the writes add as many entries as each can in the time."""
    taken = [run for (s, row), run in runs.items()
             if s == server and row.split("-")[0] in READ_KINDS]
    taken += [run for (s, row), rs in rounds.items() if s == server for _, run in rs]
    rss = [run["server"]["rss_kib"] for run in taken
           if run is not None and run.get("server", {}).get("rss_kib")]
    return str(max(rss)) if rss else "—"


def resources(meta, runs, rounds):
    rows = [("load time (s)", "load_s"), ("load peak RSS (KiB)", "load_peak_rss_kib"),
            ("database size (KiB)", "db_kib"), ("VmRSS after the read rows (KiB)", None),
            ("VmRSS after the runs, writes included (KiB)", "vmrss_kib"),
            ("VmHWM (KiB)", "vmhwm_kib")]
    lines = ["| | OpenLDAP | Lumen | Lumen/OpenLDAP |", "|---|---|---|---|"]
    for label, key in rows:
        if key is None:
            a, b = (rss_after_reads(runs, rounds, s) for s in ("openldap", "lumen"))
        else:
            a, b = meta.get("openldap_" + key, "—"), meta.get("lumen_" + key, "—")
        try:
            r = "%.2f×" % (float(b) / float(a))
        except (ValueError, ZeroDivisionError):
            r = "—"
        lines.append("| %s | %s | %s | %s |" % (label, a, b, r))
    lines.append("\nThe read rows serve the same data on both sides. The write rows add as "
                 "many entries as each server can in their time, and the map pages those "
                 "touch count in VmRSS, so the figure after the runs grows with a "
                 "server's write rate.")
    if meta.get("lumen_load_method"):
        lines.append("\nLumen was loaded with %s (no lumenadd in this build)."
                     % meta["lumen_load_method"])
    return "\n".join(lines)


def charts(out, runs):
    conns = [1, 4, 16, 32, 64, 256, 1000]
    present = [(s, label) for s, label in SERVERS
               if any((s, "search-c%d" % c) in runs for c in conns)]
    if not present:
        return []
    dat = os.path.join(out, "search.dat")
    with open(dat, "w") as f:
        f.write("# connections " + " ".join("%s_ops %s_p99" % (s, s) for s, _ in present) + "\n")
        for c in conns:
            vals = []
            for s, _ in present:
                run = runs.get((s, "search-c%d" % c))
                ok = run is not None and run["ops"] > 0
                vals += ["%.1f" % run["ops_per_s"] if ok else "NaN",
                         "%.4f" % run["latency_ms"]["p99"] if ok else "NaN"]
            f.write("%d %s\n" % (c, " ".join(vals)))

    def plot(png, title, ylabel, column, logy):
        series = ", ".join("'%s' using 1:%d with linespoints title '%s'"
                           % (dat, 2 + 2 * i + column, label)
                           for i, (_, label) in enumerate(present))
        return ("set terminal pngcairo size 900,560 noenhanced\n" if has_cairo else
                "set terminal png size 900,560 noenhanced\n") + \
            "set output '%s'\nset title '%s'\nset xlabel 'connections'\n" \
            "set ylabel '%s'\nset logscale x\n%sset grid\nset key below\nplot %s\n" \
            % (os.path.join(out, png), title, ylabel, "set logscale y\n" if logy else "", series)

    try:
        terms = subprocess.run(["gnuplot", "-e", "set terminal"], capture_output=True,
                               text=True).stderr + ""
    except OSError:
        return []
    has_cairo = "pngcairo" in terms
    made = []
    for png, title, ylabel, column, logy in [
            ("throughput.png", "search (uid=...) throughput", "operations/s", 0, False),
            ("p99.png", "search (uid=...) p99 latency", "p99 latency (ms)", 1, True)]:
        r = subprocess.run(["gnuplot"], input=plot(png, title, ylabel, column, logy),
                           text=True, capture_output=True)
        if r.returncode == 0:
            made.append(png)
        else:
            sys.stderr.write("gnuplot: " + r.stderr)
    return made


def order_text(meta):
    """How the servers took turns (compare.sh's meta interleave)."""
    if meta.get("interleave") == "1":
        return ("The servers ran at once, each row against one after the other, "
                "the first alternating from row to row.")
    return "Each server ran its whole matrix alone, one after the other."


def rounds_table(rounds):
    """Every round's ops/s for each row and server: the spread behind a median."""
    if not rounds:
        return ""
    n = max(len(t) for t in rounds.values())
    lines = ["| workload | server | " + " | ".join("round %d" % (k + 1) for k in range(n)) + " |",
             "|---|---|" + "---|" * n]
    for row in ROWS + sorted({r for _, r in rounds} - set(ROWS)):
        for server, label in SERVERS:
            taken = rounds.get((server, row))
            if taken:
                lines.append("| %s | %s | %s |" % (row, label, " | ".join(
                    fmt_rate(run) for _, run in taken)))
    return "\n".join(lines)


def main():
    out = sys.argv[1]
    meta, runs, rounds = load(out)
    made = charts(out, runs)
    settings = ("%s entries of ~%s bytes; %s s measured after %s s warm-up per row; "
                "server threads %s; Lumen entry cache %s (%s entries); durability %s; connection "
                "reuse in connperop %s%%%s%s%s" % (
                    meta.get("entries"), meta.get("entry_size"), meta.get("duration"),
                    meta.get("warmup"), meta.get("server_threads"), meta.get("entry_cache"),
                    meta.get("entry_cache_entries", "?"),
                    "dbnosync" if meta.get("nosync") == "1" else "synced",
                    meta.get("reuse"),
                    "; offered rate %s/s" % meta["rate"] if meta.get("rate", "0") != "0" else "",
                    "; Nagle on (TCP_NODELAY off)" if meta.get("nagle") == "1" else "",
                    "; overlays %s on both servers" % meta["overlays"]
                    if meta.get("overlays", "none") != "none" else ""))
    text = ["# Lumen vs OpenLDAP — %s" % meta.get("date", ""), "",
            "Host %s (%s CPUs, kernel %s); OpenLDAP %s; Lumen %s." % (
                meta.get("host"), meta.get("cpus"), meta.get("kernel"),
                meta.get("openldap_version"), meta.get("lumen_commit")),
            "", settings + ".", "",
            "One lumenbench process (one thread, nose-to-tail) shares the machine with "
            "the server. %s Only ratios measured in the same run mean anything. Errors are "
            "shown, not hidden: a row where a server answered with errors did not do "
            "the work; ratios count successful operations only." % order_text(meta), "", "## Operations", "", table(meta, runs), "",
            "## Server CPU per operation", "",
            "User + system CPU of the server process over each row's measured window "
            "(/proc/PID/stat), divided by its successful operations: the work each "
            "server does per request, steadier than ops/s on a shared machine. "
            "OpenLDAP/Lumen above 1 means Lumen does less work.", "",
            cpu_table(runs), "",
            "## Load, memory, size", "", resources(meta, runs, rounds), ""]
    if rounds:
        text += ["## Rounds", "",
                 "The rows that only read ran %s times, round after round; the tables "
                 "above give each server's median round. Ops/s of every round:"
                 % meta.get("rounds", "?"), "", rounds_table(rounds), ""]
    fair = fairness(runs)
    if fair:
        text += ["## Fairness at many connections", "", fair, ""]
    if made:
        text += ["## Charts", ""] + ["![%s](%s)" % (m, m) for m in made] + [""]
    text += ["Raw lumenbench output: raw/*.json; the run's log: run.log.", ""]
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(text))


if __name__ == "__main__":
    main()
