#!/usr/bin/env python3
"""Checks the PTX that `tessel-compile --target=cuda --emit=ptx` wrote with
NVIDIA's ptxas: every kernel module must assemble for ARCH, and none may
spill registers.

    check_ptx.py FILE.ptx ARCH [--ptxas PATH]

Prints one summary line; exit 1 on a ptxas failure or a spill.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("ptx")
    p.add_argument("arch")
    p.add_argument("--ptxas", default=os.path.join(
        os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "ptxas"))
    args = p.parse_args()
    text = open(args.ptx).read()
    parts = re.split(r"^// ---- kernel module (\S+)\n", text, flags=re.M)
    modules = list(zip(parts[1::2], parts[2::2]))
    if not modules:
        sys.exit(f"check_ptx.py: {args.ptx} holds no kernel module")
    failures, spills = [], []
    with tempfile.TemporaryDirectory() as d:
        src, obj = os.path.join(d, "k.ptx"), os.path.join(d, "k.cubin")
        for name, ptx in modules:
            with open(src, "w") as f:
                f.write(ptx)
            r = subprocess.run([args.ptxas, f"-arch={args.arch}", "-v", src,
                                "-o", obj], capture_output=True, text=True)
            if r.returncode != 0:
                failures.append(f"{name}: {r.stderr.strip()[:400]}")
            for m in re.finditer(r"(\d+) bytes spill stores, (\d+) bytes "
                                 r"spill loads", r.stderr):
                if int(m.group(1)) or int(m.group(2)):
                    spills.append(f"{name}: {m.group(0)}")
    for line in failures + spills:
        print(line)
    print(f"{len(modules)} kernel modules for {args.arch}: "
          f"{len(failures)} ptxas failures, {len(spills)} with spills")
    return 1 if failures or spills else 0


if __name__ == "__main__":
    sys.exit(main())
