#!/usr/bin/python3
"""sparse_ratios.py - calibrates tessel-sparsify-weights' cost model on this
CPU: runs bench/sparse_gemm.c (the sparse kernel against the dense one, one
thread) on BERT-base's projection shapes and ResNet-50's pointwise shapes,
and prints, per block size R and for N:M weights, the rate over the dense
kernel that each run implies under the pass's formula

    speed-up = 1 / (density / (ratio x lanes_used) + overhead)

(overhead = moved-element-cost x (1/K + 1/N), lanes_used = M / roundup(M,
lanes); docs/sparsity.md, "The cost model"), and their lower quartile: the
value the pass's table takes for this kind of CPU, so that a layer goes
sparse only where it pays. moved-element-cost itself comes first, from the
runs without nonzeros (only the moves into and out of the kernel's layout):
their time over the dense kernel's, per 1/K + 1/N, the median over the
shapes.

    /usr/bin/python3 bench/sparse_ratios.py [--isa v4|v3] [--build build]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

import bench_models as bm

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (M, N, K): BERT-base's projections (128 tokens), ResNet-50's pointwise
# convolutions (pixels x filters x channels).
SHAPES = [(128, 768, 768), (128, 3072, 768), (128, 768, 3072),
          (3136, 256, 64), (3136, 64, 256), (784, 512, 128),
          (784, 128, 512), (196, 1024, 256), (49, 2048, 512)]


def quartile(xs, q):
    """The q-th quartile (1: lower), interpolated between the runs."""
    return statistics.quantiles(xs, n=4, method="inclusive")[q - 1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--isa", choices=["v4", "v3"], default="v4",
                    help="kernel library build: x86-64-v4 (AVX-512) or v3 (AVX2)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = ap.parse_args()
    lib = os.path.join(args.build, "lib",
                       "libtessel_kernels_x86-64-%s.a" % args.isa)
    if not os.path.exists(lib):
        sys.exit("sparse_ratios: %s not found (build first: bash scripts/build.sh)"
                 % lib)
    lanes = 16 if args.isa == "v4" else 8
    exe = os.path.join(tempfile.mkdtemp(), "sparse_gemm")
    subprocess.run(["cc", "-O2", "-I", os.path.join(args.build, "include"),
                    os.path.join(ROOT, "bench", "sparse_gemm.c"), lib,
                    "-lpthread", "-lm", "-o", exe], check=True)
    print("CPU: %s, kernel build x86-64-%s" % (bm.machine_info()["cpu"], args.isa))
    runs = []
    for m, n, k in SHAPES:
        out = subprocess.run([exe, str(m), str(n), str(k)], check=True,
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            kv = dict(re.findall(r"(\w+)=([\w.:]+)", line))
            # The lane order's runs ("lanes", with the stored fraction)
            # have their own rate and no moves: kept apart.
            if " lanes " in line:
                kv["lanes"] = "1"
            if "speedup" in kv:
                runs.append((m, n, k, kv))
    # The moves alone: sparse time over dense time, per 1 / K + 1 / N.
    costs = [1.0 / float(kv["speedup"]) / (1.0 / k + 1.0 / n)
             for m, n, k, kv in runs
             if float(kv["density"]) == 0.0 and "lanes" not in kv]
    moved = statistics.median(costs)
    print("moved-element-cost: %.1f (%d runs without nonzeros, %.1f-%.1f)"
          % (moved, len(costs), min(costs), max(costs)))
    ratios = {}
    for m, n, k, kv in runs:
        density, speedup = float(kv["density"]), float(kv["speedup"])
        if density == 0.0:
            continue
        key = kv.get("nm") or "R=%s" % kv["R"]
        overhead = moved * (1.0 / k + 1.0 / n)
        lanes_used = m / (-(-m // lanes) * lanes)
        if "lanes" in kv:
            # The lane order (SparsifyWeights.cpp, kUnstructuredLaneRate and
            # laneOrderRateRatio): the stored fraction (unstructured: each
            # quad padded to its columns' most nonzeros) at the rate, rows
            # in tiles of 8, no moves.
            key += " lanes"
            density = float(kv.get("stored", density))
            overhead, lanes_used = 0.0, m / (-(-m // 8) * 8)
        left = 1.0 / speedup - overhead
        ratio = density / (left * lanes_used) if left > 0 else float("inf")
        ratios.setdefault(key, []).append(ratio)
        print("  %4d x %4d x %4d %-11s density %.2f speed-up %.2fx -> ratio %.2f"
              % (m, n, k, key, density, speedup, ratio))
    print("\n| R or N:M | runs | min | lower quartile | median |")
    print("|---|---|---|---|---|")
    for key in sorted(ratios, key=lambda s: (":" in s, s)):
        xs = [x for x in ratios[key] if x != float("inf")]
        print("| %s | %d | %.2f | %.2f | %.2f |" % (
            key, len(xs), min(xs), quartile(xs, 1), quartile(xs, 2)))
    # N:M: the pass has one rate for every n and m.
    nm = [x for key, xs in ratios.items()
          if ":" in key and "lanes" not in key for x in xs
          if x != float("inf")]
    if nm:
        print("| N:M (all) | %d | %.2f | %.2f | %.2f |" % (
            len(nm), min(nm), quartile(nm, 1), quartile(nm, 2)))


if __name__ == "__main__":
    main()
