#!/usr/bin/env python3
"""Runs ONNX backend test cases (a folder with model.onnx and
test_data_set_*/{input,output}_*.pb) through tessel-compile and tessel-run.

  onnx_case.py CASE_DIR [CASE_DIR...] [--bin build/bin] [--work /tmp/x] [-v]

Prints one line per case: PASS / FAIL(compile|run|mismatch) with the reason,
and exits non-zero if any case failed. Tolerance: rtol 1e-3, atol 1e-5 (the
ONNX backend test defaults) unless overridden.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def run_case(case, bindir, work, rtol, atol, verbose):
    name = os.path.basename(case.rstrip("/"))
    os.makedirs(work, exist_ok=True)
    lib = os.path.join(work, name + ".so")
    cp = subprocess.run([os.path.join(bindir, "tessel-compile"),
                         os.path.join(case, "model.onnx"), "-o", lib],
                        capture_output=True, text=True)
    if cp.returncode != 0:
        msg = (cp.stderr.strip().splitlines() or ["?"])[0]
        return "FAIL(compile)", msg
    sets = sorted(d for d in os.listdir(case) if d.startswith("test_data_set"))
    for s in sets:
        d = os.path.join(case, s)
        args = [os.path.join(bindir, "tessel-run"), lib]
        n_in = len([f for f in os.listdir(d) if f.startswith("input_")])
        n_out = len([f for f in os.listdir(d) if f.startswith("output_")])
        for i in range(n_in):
            a = load_pb(os.path.join(d, f"input_{i}.pb"))
            p = os.path.join(work, f"{name}_{s}_in{i}.npy")
            np.save(p, a)
            args.append(f"--input=@{p}")
        for i in range(n_out):
            a = load_pb(os.path.join(d, f"output_{i}.pb"))
            p = os.path.join(work, f"{name}_{s}_out{i}.npy")
            np.save(p, a)
            args.append(f"--expected_output=@{p}")
        args += [f"--rtol={rtol}", f"--atol={atol}"]
        rp = subprocess.run(args, capture_output=True, text=True)
        if rp.returncode != 0:
            out = (rp.stdout + rp.stderr).strip().splitlines()
            kind = "mismatch" if any("FAILED" in l for l in out) else "run"
            return f"FAIL({kind})", " | ".join(out[:2])
    return "PASS", ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cases", nargs="+")
    ap.add_argument("--bin", default=os.path.join(
        os.path.dirname(__file__), "..", "..", "build", "bin"))
    ap.add_argument("--work", default=None)
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="onnx_case_")
    failed = 0
    for c in a.cases:
        status, msg = run_case(c, a.bin, work, a.rtol, a.atol, a.v)
        failed += status != "PASS"
        print(f"{status:15} {os.path.basename(c.rstrip('/'))} {msg}")
    print(f"{len(a.cases) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
