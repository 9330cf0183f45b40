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
grouped by their library. With --main-thread, only the calling thread's
samples: it takes part in every job and waits for the others, so its
time per function is that function's share of the wall time, and the
time it waits for the workers shows as the pool's `dispatch`. With
--runs N (the --benchmark count) and --freq F (perf's -F), each line also
gives milliseconds per run: compare a one-thread and a two-thread profile
function by function to see which kernels scale.
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
    p.add_argument("--main-thread", action="store_true",
                   help="only the samples of the process's first thread")
    p.add_argument("--workers", action="store_true",
                   help="only the samples of the other threads (the pool's)")
    p.add_argument("--runs", type=int, help="runs recorded (for ms per run)")
    p.add_argument("--freq", type=float, help="perf record's -F")
    args = p.parse_args()
    syms = symbols(args.so)
    if not syms:
        sys.exit(f"perf_symbols.py: {args.so} has no function symbols")
    addrs = [a for a, _ in syms]
    script = subprocess.run(
        ["perf", "script", "-i", args.data, "-F", "pid,tid,ip,dso",
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
        if len(fields) < 3:
            continue
        pid, tid = fields[0].split("/")
        if (args.main_thread and pid != tid) or (args.workers and pid == tid):
            continue
        fields = fields[1:]
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
    per_run = args.runs and args.freq
    for name, n in counts.most_common(args.top):
        ms = f"  {1e3 * n / args.freq / args.runs:8.3f} ms" if per_run else ""
        print(f"{100 * n / total:6.2f}%{ms}  {name}")


if __name__ == "__main__":
    main()
