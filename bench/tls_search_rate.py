#!/usr/bin/python3
"""tls_search_rate.py — searches per second over ldaps://, to weigh what
counting TLS memory costs on the hot path (tls_memory.h's hooks).

    bench/tls_search_rate.py BUILD_DIR [BUILD_DIR ...] [--rounds N]
                             [--seconds S] [--clients N] [--batch N]

For each round, for each build directory in turn (interleaved, so the
builds share the machine's load): start its lumend (the harness of
tests/integration, with a self-signed certificate), let --clients
processes each open one ldaps:// connection and pipeline --batch base
searches of the root DSE (attributes 1.1) at a time for --seconds, and
print the searches answered per second. Ends with each build's runs and
their spread (min, median, max).
"""
import argparse
import multiprocessing
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))


def client(port, seconds, batch, out):
    import socket
    import ssl
    from lumen_harness import read_responses, search
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10))
    request = b"".join(search(i + 1, attrs=("1.1",)) for i in range(batch))
    done, deadline = 0, time.time() + seconds
    while time.time() < deadline:
        s.sendall(request)
        r, closed = read_responses(s, 2 * batch, timeout=10)
        if closed or len(r) != 2 * batch:
            break
        done += batch
    s.close()
    out.put(done)


def one_run(build, seconds, clients, batch):
    os.environ["BUILD"] = build
    import importlib
    import lumen_harness
    importlib.reload(lumen_harness)
    import t_tls_memory
    importlib.reload(t_tls_memory)
    srv = t_tls_memory.TlsServer()
    try:
        q = multiprocessing.Queue()
        procs = [multiprocessing.Process(target=client,
                                         args=(srv.ldaps_port, seconds, batch, q))
                 for _ in range(clients)]
        for p in procs:
            p.start()
        total = sum(q.get(timeout=seconds + 60) for _ in procs)
        for p in procs:
            p.join()
        return total / seconds
    finally:
        srv.stop(lumen_harness.Results("tls_search_rate"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("builds", nargs="+")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--clients", type=int, default=2)
    ap.add_argument("--batch", type=int, default=32)
    a = ap.parse_args()
    rates = {b: [] for b in a.builds}
    for r in range(a.rounds):
        for b in a.builds:
            rate = one_run(b, a.seconds, a.clients, a.batch)
            rates[b].append(rate)
            print(f"round {r + 1} {b}: {rate:.0f} searches/s", flush=True)
    for b, v in rates.items():
        print(f"{b}: {', '.join(f'{x:.0f}' for x in v)} searches/s; min {min(v):.0f}, "
              f"median {statistics.median(v):.0f}, max {max(v):.0f}")


if __name__ == "__main__":
    main()
