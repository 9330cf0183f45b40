#!/usr/bin/env python3
"""End-to-end driver: compile a model with tessel-compile, run it with
tessel-run, compare with a numpy reference.

    run_e2e.py MODEL.mlir --work-dir DIR [-O 0,3] [--ref NAME]
               [--weights W.npz] [--function F]... [--seed N]

For every requested -O level the model is compiled once
(`tessel-compile -ON MODEL -o DIR/<model>.ON.so`); the functions and their
signatures come from `tessel-run --print_signature`. Each function is checked
against the reference registered in e2e_refs.py under its name (or under
--ref, for a model with a single function). Inputs are seeded random arrays
written to DIR as .npy (the seed mixes --seed with the function name, so a
case's inputs do not change when other cases are added).

Each run is one tessel-run invocation that writes the outputs to .npy
(--output) *and* checks them itself (--expected_output, same atol/rtol); the
driver then compares the .npy outputs with the float64 reference and demands
that tessel-run's verdict agrees with its own. Tolerance: pass iff
|got - ref| <= atol + rtol * |ref| elementwise (defaults atol 1e-5, rtol 1e-4;
a case may document its own in e2e_refs.py). Integer outputs must be exact.

Prints one PASS/FAIL line per function and -O level, with the max absolute
error and the max error relative to the tolerance, then a summary; exits 1 on
any failure (compile error, run error, mismatch), 2 on bad usage.

Tools are found on PATH (lit puts build/bin there); TESSEL_COMPILE and
TESSEL_RUN override them.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import zlib

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_refs  # noqa: E402

DTYPES = {
    "f32": np.float32, "f64": np.float64, "f16": np.float16,
    "i64": np.int64, "i32": np.int32, "i16": np.int16, "i8": np.int8,
    "u8": np.uint8, "i1": np.bool_,
}


def tool(name, env):
    path = os.environ.get(env) or shutil.which(name)
    if not path:
        sys.exit(f"run_e2e.py: error: {name} not found on PATH (or set {env})")
    return path


def parse_value(text):
    """'x: 2x3xf32' -> (name, shape, dtype name); 'f32' is a scalar."""
    name, ty = [s.strip() for s in text.split(":")]
    parts = ty.split("x")
    return name, tuple(int(d) for d in parts[:-1]), parts[-1]


def parse_signatures(text):
    """tessel-run --print_signature output -> {function: (inputs, outputs)}."""
    sigs = {}
    for line in text.splitlines():
        m = re.fullmatch(r"func (\S+)\((.*)\) -> \((.*)\)", line.strip())
        if not m:
            continue
        ins = [parse_value(v) for v in m.group(2).split(",") if v.strip()]
        outs = [parse_value(v) for v in m.group(3).split(",") if v.strip()]
        sigs[m.group(1)] = (ins, outs)
    return sigs


def run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)


def make_inputs(case, fname, sig_inputs, seed, work):
    rng = np.random.default_rng([seed, zlib.crc32(fname.encode())])
    arrays, paths = [], []
    for i, (_, shape, dt) in enumerate(sig_inputs):
        dtype = DTYPES[dt]
        gen = case.inputs.get(i)
        if gen is not None:
            a = gen(rng, shape, dtype)
        elif np.issubdtype(dtype, np.floating):
            a = rng.standard_normal(shape).astype(dtype)
        elif dtype == np.bool_:
            a = rng.random(shape) < 0.5
        else:
            a = rng.integers(-8, 8, shape).astype(dtype)
        a = np.ascontiguousarray(a)
        assert a.shape == shape and a.dtype == dtype, (fname, i, a.shape, a.dtype)
        path = os.path.join(work, f"{fname}.in{i}.npy")
        np.save(path, a)
        arrays.append(a)
        paths.append(path)
    return arrays, paths


def compare(got, want, atol, rtol):
    """-> (ok, max_abs_err, max_err/tolerance)."""
    if got.shape != want.shape:
        return False, float("inf"), float("inf")
    if not np.issubdtype(got.dtype, np.floating):
        err = np.abs(got.astype(np.int64) - want.astype(np.int64))
        m = float(err.max()) if err.size else 0.0
        return m == 0, m, m
    g = got.astype(np.float64)
    w = np.asarray(want, dtype=np.float64)
    if not np.all(np.isfinite(g) == np.isfinite(w)):
        return False, float("inf"), float("inf")
    err = np.abs(g - w)
    tol = atol + rtol * np.abs(w)
    if err.size == 0:
        return True, 0.0, 0.0
    ratio = err / tol if np.all(tol > 0) else np.where(err > 0, np.inf, 0.0)
    return bool(np.all(err <= tol)), float(err.max()), float(ratio.max())


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model")
    p.add_argument("--work-dir", required=True)
    p.add_argument("-O", "--opt", default="0,3",
                   help="comma-separated -O levels (default 0,3)")
    p.add_argument("--ref", help="reference name for a single-function model")
    p.add_argument("--weights", help=".npz handed to references that need it")
    p.add_argument("--function", action="append", default=[],
                   help="only check these functions (default: all)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    compiler = tool("tessel-compile", "TESSEL_COMPILE")
    runner = tool("tessel-run", "TESSEL_RUN")
    work = args.work_dir
    os.makedirs(work, exist_ok=True)
    stem = os.path.splitext(os.path.basename(args.model))[0]
    levels = [int(x) for x in args.opt.split(",")]
    weights = dict(np.load(args.weights)) if args.weights else None

    failures, total = [], 0

    def report(ok, what, detail):
        nonlocal total
        total += 1
        print(f"{'PASS' if ok else 'FAIL'}: {what} {detail}", flush=True)
        if not ok:
            failures.append(what)

    # Compile every level first.
    libs = {}
    for lvl in levels:
        lib = os.path.join(work, f"{stem}.O{lvl}.so")
        r = run([compiler, f"-O{lvl}", args.model, "-o", lib])
        if r.returncode != 0:
            report(False, f"{stem} -O{lvl}", "compile failed:\n" + r.stdout)
        else:
            libs[lvl] = lib
    if not libs:
        print(f"FAIL: {len(failures)} of {total} checks failed")
        return 1

    # Signatures (identical at every level).
    sigs = None
    for lvl, lib in libs.items():
        r = run([runner, lib, "--print_signature"])
        if r.returncode != 0:
            report(False, f"{stem} -O{lvl}", "--print_signature failed:\n" + r.stdout)
            continue
        s = parse_signatures(r.stdout)
        if sigs is None:
            sigs = s
        elif s != sigs:
            report(False, f"{stem} -O{lvl}", f"signature differs: {s} vs {sigs}")
    if sigs is None:
        print(f"FAIL: {len(failures)} of {total} checks failed")
        return 1
    if args.ref and len(sigs) != 1:
        sys.exit(f"run_e2e.py: error: --ref needs a model with one function, "
                 f"got {sorted(sigs)}")
    fnames = args.function or list(sigs)
    if not fnames:
        report(False, stem, "the artifact has no functions (or the signature "
               "output could not be parsed)")

    for fname in fnames:
        if fname not in sigs:
            report(False, f"{stem}:{fname}", "no such function in the artifact")
            continue
        ref_name = args.ref or fname
        case = e2e_refs.REFS.get(ref_name)
        if case is None:
            report(False, f"{stem}:{fname}",
                   f"no reference '{ref_name}' in e2e_refs.py")
            continue
        sig_in, sig_out = sigs[fname]
        inputs, in_paths = make_inputs(case, fname, sig_in, args.seed, work)
        if case.weights:
            if weights is None:
                sys.exit(f"run_e2e.py: error: reference '{ref_name}' needs --weights")
            want = case.fn(*inputs, weights=weights)
        else:
            want = case.fn(*inputs)
        want = list(want) if isinstance(want, (tuple, list)) else [want]
        if len(want) != len(sig_out):
            report(False, f"{stem}:{fname}",
                   f"reference has {len(want)} outputs, artifact {len(sig_out)}")
            continue
        ref_paths, bad = [], None
        for j, (w, (oname, shape, dt)) in enumerate(zip(want, sig_out)):
            w = np.asarray(w)
            if w.shape != shape:
                bad = f"output {j} ({oname}): reference shape {w.shape}, artifact {shape}"
            path = os.path.join(work, f"{fname}.ref{j}.npy")
            np.save(path, np.ascontiguousarray(w.astype(DTYPES[dt])))
            ref_paths.append(path)
        if bad:
            report(False, f"{stem}:{fname}", bad)
            continue

        for lvl, lib in libs.items():
            what = f"{stem}:{fname} -O{lvl}"
            out_paths = [os.path.join(work, f"{fname}.O{lvl}.out{j}.npy")
                         for j in range(len(sig_out))]
            for path in out_paths:
                if os.path.exists(path):
                    os.remove(path)
            cmd = [runner, lib, f"--function={fname}"]
            cmd += [f"--input=@{x}" for x in in_paths]
            cmd += [f"--output=@{x}" for x in out_paths]
            cmd += [f"--expected_output=@{x}" for x in ref_paths]
            cmd += [f"--atol={case.atol!r}", f"--rtol={case.rtol!r}"]
            r = run(cmd)
            if r.returncode not in (0, 1) or not all(map(os.path.exists, out_paths)):
                report(False, what, f"tessel-run failed (exit {r.returncode}):\n"
                       + r.stdout + "\ncommand: " + " ".join(cmd))
                continue
            oks, worst_abs, worst_ratio = [], 0.0, 0.0
            for j, (path, w) in enumerate(zip(out_paths, want)):
                got = np.load(path)
                ok, abs_err, ratio = compare(got, w, case.atol, case.rtol)
                oks.append(ok)
                worst_abs = max(worst_abs, abs_err)
                worst_ratio = max(worst_ratio, ratio)
            ok = all(oks)
            detail = (f"max_abs_err={worst_abs:.3g} max_err/tol={worst_ratio:.3g} "
                      f"(atol={case.atol:g} rtol={case.rtol:g})")
            if not ok:
                detail += (" outputs " + ",".join(
                    str(j) for j, o in enumerate(oks) if not o) + " mismatch"
                    + "\ntessel-run said:\n" + r.stdout)
            if (r.returncode == 0) != ok:
                ok = False
                detail += (f"; tessel-run --expected_output disagrees "
                           f"(exit {r.returncode}):\n{r.stdout}")
            report(ok, what, detail)

    if failures:
        print(f"FAIL: {len(failures)} of {total} checks failed: " + ", ".join(failures))
        return 1
    print(f"PASS: all {total} checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
