#!/usr/bin/env python3
"""Instructions per request of the api's hot routes, by where they are spent.

Runs the http bench binary under `valgrind --tool=callgrind`: twice with the hello-world baseline
only (10 s and 20 s: the difference is the cost of hello-world requests, the rest the cost of
starting and seeding), and once per route (the baseline, then that route). What is left of a
route's run after the start and its hello-world requests is split by crate of the function that
executed each instruction (self cost, so nothing is counted twice) and divided by the route's
requests:

    cargo bench -p narrative-api --bench http --no-run
    python3 scripts/profile_http.py [BENCH_CACHE_MB]

Instruction counts are repeatable for the same binary and inputs, whatever else the machine is
doing; the wall-clock figures of the same run are not meaningful (valgrind is ~50x slower).
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

TARGET = os.environ.get("CARGO_TARGET_DIR", "target")
ROUTES = [
    ("shield listing", "shield/protocols"),
    ("feed", "GET /v1/narratives` (20"),
    ("shield prepare", "POST /v1/shield/back"),
]
# Crate (or library) of a symbol -> the part of a request it belongs to.
GROUPS = [
    ("database driver (sqlx: protocol, pool, I/O)", r"^sqlx|^<sqlx"),
    ("ORM (sea-orm, sea-query: building SQL, mapping rows)", r"sea_orm|sea_query"),
    ("JSON (serde_json)", r"serde_json"),
    ("this project's code", r"narrative_|^shield_vault|^<narrative"),
    ("HTTP server and middleware (poem, hyper, http)", r"poem|hyper|^http::|^<http::|headers"),
    ("async runtime (tokio)", r"tokio"),
    ("tracing", r"tracing"),
    ("hashing, PDAs, signatures (sha2, curve25519, solana)", r"sha2|curve25519|solana|ed25519|five8|bs58|bincode"),
    ("memcpy, malloc and the C library", r"libc|memcpy|memmove|malloc|free|_int_|ld-linux|\?\?\?"),
]


def bench_binary():
    candidates = [
        p for p in glob.glob(f"{TARGET}/release/deps/http-*")
        if os.access(p, os.X_OK) and not p.endswith(".d")
    ]
    if not candidates:
        sys.exit("build it first: cargo bench -p narrative-api --bench http --no-run")
    return max(candidates, key=os.path.getmtime)


def profile(binary, only, seconds, cache_mb, out):
    """(hello-world requests, the route's requests) of one run under callgrind."""
    env = dict(os.environ, BENCH_ONLY=only, BENCH_SECONDS=str(seconds),
               BENCH_NARRATIVES="200", BENCH_CONNECTIONS="8", BENCH_CACHE_MB=cache_mb)
    run = subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", binary, "--bench"],
        env=env, capture_output=True, text=True, check=True)
    hello, route = 0.0, 0.0
    for line in run.stdout.splitlines():
        m = re.search(r": ([\d.]+) requests/s", line)
        if m and "hello-world" in line:
            hello += float(m.group(1)) * seconds
        elif m:
            route += float(m.group(1)) * seconds
    return hello, route


def self_costs(out):
    text = subprocess.run(["callgrind_annotate", "--threshold=100", "--inclusive=no", out],
                          capture_output=True, text=True, check=True).stdout
    costs = {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\([^)]*\)\s+(.*)$", line)
        if not m:
            continue
        ir = int(m.group(1).replace(",", ""))
        symbol = m.group(2).split(":", 1)[-1] if ":" in m.group(2) else m.group(2)
        if "PROGRAM TOTALS" in line:
            continue
        group = next((name for name, pattern in GROUPS if re.search(pattern, symbol)), "other")
        costs[group] = costs.get(group, 0) + ir
    return costs


def main():
    cache_mb = sys.argv[1] if len(sys.argv) > 1 else "64"
    binary = bench_binary()
    seconds = 20
    with tempfile.TemporaryDirectory() as tmp:
        short, long_ = os.path.join(tmp, "short.out"), os.path.join(tmp, "long.out")
        h_short, _ = profile(binary, "no route has this name", seconds // 2, cache_mb, short)
        h_long, _ = profile(binary, "no route has this name", seconds, cache_mb, long_)
        c_short, c_long = self_costs(short), self_costs(long_)
        groups = set(c_short) | set(c_long)
        # Per hello-world request, and the start (seeding) with no requests.
        per_hello = {g: (c_long.get(g, 0) - c_short.get(g, 0)) / (h_long - h_short)
                     for g in groups}
        start = {g: c_long.get(g, 0) - per_hello[g] * h_long for g in groups}
        print(f"response cache: {cache_mb} MiB; instructions per request (thousands), by part")
        print(f"hello-world: {sum(per_hello.values()) / 1000:.1f}k instructions each")
        for name, only in ROUTES:
            out = os.path.join(tmp, f"{name}.out")
            hello, requests = profile(binary, only, seconds, cache_mb, out)
            costs = self_costs(out)
            parts = {}
            for g in set(costs) | groups:
                rest = costs.get(g, 0) - start.get(g, 0) - per_hello.get(g, 0) * hello
                parts[g] = max(rest, 0) / requests
            total = sum(parts.values())
            print(f"\n{name}: {requests:.0f} requests, {total / 1000:.1f}k instructions each")
            for group, ir in sorted(parts.items(), key=lambda kv: -kv[1]):
                if ir >= 0.005 * total:
                    print(f"  {ir / 1000:7.1f}k  {100 * ir / total:4.0f} %  {group}")


if __name__ == "__main__":
    main()
