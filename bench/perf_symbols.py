#!/usr/bin/env python3
"""Where a Tessel artifact spends its time, by function, from `perf record`.

The runtime loads an artifact from a private memfd copy (docs/runtime.md),
so `perf report` shows one unnamed "memfd:tessel:..." object. This maps
each sample's address through the memfd's mmap events back to the .so
file's own symbols (`nm -n`, local ones included: the kernel library's
static micro-kernels are where the time goes).

    perf record -F 5000 -o perf.data -- build/bin/tessel-run model.so \\
        --input=@x.npy --threads=1 --benchmark=500
    /usr/bin/python3 bench/perf_symbols.py perf.data model.so [--top 30]

Prints the share of samples per function, samples outside the artifact
grouped by their library.
"""
import argparse
import bisect
import collections
import re
import subprocess
import sys


def symbols(so):
    out = subprocess.run(["nm", "-n", "--defined-only", so], check=True,
                         capture_output=True, text=True).stdout
    syms = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tTwW":
            syms.append((int(parts[0], 16), parts[2]))
    return syms


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("data")
    p.add_argument("so")
    p.add_argument("--top", type=int, default=25)
    args = p.parse_args()
    syms = symbols(args.so)
    if not syms:
        sys.exit(f"perf_symbols.py: {args.so} has no function symbols")
    addrs = [a for a, _ in syms]
    script = subprocess.run(
        ["perf", "script", "-i", args.data, "-F", "ip,dso",
         "--show-mmap-events"], check=True, capture_output=True,
        text=True).stdout
    maps = []  # (start, end, file offset) of the artifact's mappings
    counts = collections.Counter()
    total = 0
    for line in script.splitlines():
        if "PERF_RECORD_MMAP" in line:
            m = re.search(r"\[(0x[0-9a-f]+)\((0x[0-9a-f]+)\) @ (0x[0-9a-f]+|0)",
                          line)
            if m and "memfd:tessel" in line:
                start, size = int(m.group(1), 16), int(m.group(2), 16)
                maps.append((start, start + size, int(m.group(3), 16)))
            continue
        fields = line.split()
        if len(fields) < 2:
            continue
        total += 1
        if "memfd:tessel" not in line:
            counts["(outside) " + fields[1]] += 1
            continue
        ip = int(fields[0], 16)
        for start, end, offset in maps:
            if start <= ip < end:
                i = bisect.bisect_right(addrs, ip - start + offset) - 1
                counts[syms[i][1] if i >= 0 else "(before the first symbol)"] += 1
                break
        else:
            counts["(artifact, unmapped)"] += 1
    if total == 0:
        sys.exit(f"perf_symbols.py: no samples in {args.data}")
    for name, n in counts.most_common(args.top):
        print(f"{100 * n / total:6.2f}%  {name}")


if __name__ == "__main__":
    main()
