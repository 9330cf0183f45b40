#!/usr/bin/env python3
"""Cost model of an expert-parallel mixture-of-experts layer on N = 2 ... 1024
MPI processes: compute against exchange, calibrated on this machine
(docs/scale-out.md explains the terms).

    /usr/bin/python3 bench/scale_model.py [--calibrate] [--markdown]
        [--rate GFLOPS] [--shm-latency-us US] [--shm-gbps GBPS]
        [--net-latency-us US] [--net-gbps GBPS] [--per-node G]

--calibrate measures the per-process rate (one tessel-run of the layer's
single-process artifact from bench/expert_parallel.py, bench/work/moe_ep)
and the shared-memory exchange (bench/mpi_exchange.c under mpirun -np 2)
instead of taking the defaults, which are this project's measurements on an
AMD Zen 5 (docs/scale-out.md). The network between nodes cannot be measured
on one machine: its latency and bandwidth are assumptions (InfiniBand NDR
class, 200 Gb/s a node), stated as such in the output.

Two scenarios, the layer of issue 23 (d 1024, hidden 4096, top-2), with
--tokens (2048) tokens:
  strong: that many tokens in all, split over N processes (what tessel-run
          runs: the inputs are broadcast and the output gathered on every
          rank);
  weak:   that many tokens per process, which keeps them (a model that is
          token-parallel outside its routes: no broadcast, no all-gather).
Each with a flat all-to-all and with Tutel's two-level one (a node's
processes exchange within the node first, so the network carries one
message per node pair instead of one per process pair).
"""
import argparse
import math
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("TESSEL_BUILD_DIR", os.path.join(ROOT, "build"))

# This machine (AMD EPYC Zen 5, family 26, one core a process), 2026-12-01:
# the single-process artifact of the layer runs at 260 GFLOP/s (68.7 GFLOP in
# 264 ms); bench/mpi_exchange.c on 2 processes: 1 KiB all-to-all-v in about
# 0.3-2 us, 1-16 MiB messages at 4.5-13 GB/s.
DEFAULTS = dict(rate=260.0, shm_latency_us=2.0, shm_gbps=6.0,
                net_latency_us=2.0, net_gbps=25.0, per_node=32)


def calibrate(args):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    single = os.path.join(ROOT, "bench", "work", "moe_ep", "single.so")
    x = os.path.join(ROOT, "bench", "work", "moe_ep", "x.npy")
    if os.path.exists(single) and os.path.exists(x):
        out = subprocess.run(
            [os.path.join(BUILD, "bin", "tessel-run"), single, "--input=@" + x,
             "--threads=1", "--benchmark=3"], capture_output=True, text=True,
            check=True).stdout
        ms = float(re.search(r"median_ms=([0-9.]+)", out).group(1))
        args.rate = layer_flops(2048, 1024, 4096, 2) / (ms * 1e-3) / 1e9
    else:
        print("(no bench/work/moe_ep: run bench/expert_parallel.py first; "
              "keeping the default rate)", file=sys.stderr)
    exe = "/tmp/tessel_mpi_exchange"
    subprocess.run(["mpicc", "-O2", os.path.join(ROOT, "bench",
                                                 "mpi_exchange.c"),
                    "-o", exe], check=True)
    out = subprocess.run(["mpirun", "-np", "2", exe, "10"], capture_output=True,
                         text=True, check=True, env=env).stdout
    rows = [list(map(float, line.split())) for line in out.splitlines()
            if re.match(r"^[0-9]", line)]
    args.shm_latency_us = rows[0][1] * 1e3
    big = [r for r in rows if r[0] >= 1 << 20]
    args.shm_gbps = sorted(r[3] for r in big)[len(big) // 2]


def layer_flops(tokens, d, hidden, k):
    return tokens * k * 4.0 * d * hidden


def exchange_s(bytes_per_rank, n, args, two_level):
    """One all-to-all-v: each process sends `bytes_per_rank` spread evenly
    over the n processes (its own share stays)."""
    if n <= 1:
        return 0.0
    g = min(args.per_node, n)
    nodes = math.ceil(n / g)
    per_peer = bytes_per_rank / n
    shm_bw, net_bw = args.shm_gbps * 1e9, args.net_gbps * 1e9
    shm_lat, net_lat = args.shm_latency_us * 1e-6, args.net_latency_us * 1e-6
    # Within a node: the on-node peers' blocks through shared memory.
    intra = (g - 1) * shm_lat + per_peer * (g - 1) / shm_bw
    if nodes == 1:
        return intra
    # Off the node: the node's processes share its network link.
    off_bytes_node = g * per_peer * (n - g)
    if two_level:
        # Tutel's 2DH: blocks regrouped by destination node within the node
        # (one more shared-memory pass), then one message per node pair.
        regroup = bytes_per_rank * (n - g) / n / shm_bw
        return intra + regroup + (nodes - 1) * net_lat + off_bytes_node / net_bw
    return intra + (n - g) * net_lat + off_bytes_node / net_bw


def model(n, tokens_total, args, d=1024, hidden=4096, k=2, replicated=True,
          two_level=False):
    """Seconds of one call on n processes, and its parts."""
    rows = tokens_total * k / n                     # assignments per process
    # Routing is never perfectly even: the busiest process's share of
    # random routing, about mean + sqrt(2 ln n) standard deviations.
    imbalance = 1 + math.sqrt(2 * math.log(n)) / math.sqrt(rows) if n > 1 else 1
    compute = rows * imbalance * 4.0 * d * hidden / (args.rate * 1e9)
    row_bytes = d * 4
    a2a = 2 * exchange_s(rows * row_bytes, n, args, two_level)
    gather = 0.0
    if replicated and n > 1:
        # Every process receives the other shares of the output, and rank
        # 0's inputs are broadcast first.
        out = tokens_total * row_bytes
        gather = 2 * exchange_s(out, n, args, two_level)
    return compute + a2a + gather, compute, a2a, gather


def table(args, markdown):
    ns = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
    lines = []
    head = ("| N | strong: ms | speed-up | exchange share | weak, flat: ms "
            "| efficiency | weak, two-level: ms | efficiency |")
    lines.append(head)
    lines.append("|---:|---:|---:|---:|---:|---:|---:|---:|")
    tok = args.tokens
    t1 = model(1, tok, args)[0]
    w1 = model(1, tok, args, replicated=False)[0]
    for n in ns:
        t, c, a, g = model(n, tok, args, two_level=True)
        wf = model(n, tok * n, args, replicated=False)[0]
        wt = model(n, tok * n, args, replicated=False, two_level=True)[0]
        lines.append(f"| {n} | {t * 1e3:.2f} | {t1 / t:.1f}x | "
                     f"{(a + g) / t:.0%} | {wf * 1e3:.1f} | {w1 / wf:.0%} | "
                     f"{wt * 1e3:.1f} | {w1 / wt:.0%} |")
    text = "\n".join(lines)
    if not markdown:
        text = text.replace("|", " ").replace("---:", "")
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for key, value in DEFAULTS.items():
        ap.add_argument("--" + key.replace("_", "-"), type=type(value),
                        default=value)
    ap.add_argument("--tokens", type=int, default=2048,
                    help="tokens in all (strong) and a process (weak)")
    ap.add_argument("--calibrate", action="store_true")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    if args.calibrate:
        calibrate(args)
    print(f"per-process rate {args.rate:.0f} GFLOP/s; shared memory "
          f"{args.shm_latency_us:.1f} us, {args.shm_gbps:.1f} GB/s (measured); "
          f"network {args.net_latency_us:.1f} us, {args.net_gbps:.0f} GB/s a "
          f"node (assumed); {args.per_node} processes a node")
    print(table(args, args.markdown))


if __name__ == "__main__":
    main()
