#!/usr/bin/env python3
"""GEMM/conv microbenchmark: Tessel's GFLOP/s against the measured FMA peak.

  bench/gemm_bench/gemm_bench.py [--threads 1,2] [--ops sgemm,conv]
                                 [--opt-level 3] [--json OUT.json]

Kernels (model-level IR, compiled by tessel-compile, timed by
tessel-run --benchmark):
  sgemm  sgemm_1024.mlir      tosa.matmul 1x1024x1024 @ 1x1024x1024, fp32
  conv   conv3x3_256_14.mlir  tosa.conv2d: ResNet-50's 3x3 256->256 layer at
                              14x14, stride 1, pad 1 (NHWC / OHWI)
The peak comes from bench/fma_peak.c (independent AVX-512 FMAs, built with
cc -O3 -march=native), measured at each thread count. numpy (its BLAS,
thread count set through the *_NUM_THREADS variables) and torch
(set_num_threads) on the same shapes are printed for reference. Tessel's
output is checked against numpy (rtol 1e-3) on the first call.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
ROOT = os.path.dirname(BENCH)
WORK = os.path.join(BENCH, "work", "gemm")
PY = sys.executable

KERNELS = {
    "sgemm": {"title": "sgemm 1024x1024x1024", "mlir": "sgemm_1024.mlir",
              "flops": 2 * 1024 ** 3},
    "conv": {"title": "conv 3x3 256->256 @14x14", "mlir": "conv3x3_256_14.mlir",
             "flops": 2 * 14 * 14 * 256 * 256 * 9},
}


def first_error_line(text):
    lines = [l.strip() for l in (text or "").splitlines() if l.strip()]
    for l in lines:
        if "error" in l.lower():
            return l
    return lines[0] if lines else "no output"


def make_inputs():
    import numpy as np
    os.makedirs(WORK, exist_ok=True)
    rng = np.random.default_rng(20250)
    arrays = {
        "sgemm": [("a", (1, 1024, 1024)), ("b", (1, 1024, 1024))],
        "conv": [("x", (1, 14, 14, 256)), ("w", (256, 3, 3, 256)), ("bias", (256,))],
    }
    paths = {}
    for k, specs in arrays.items():
        paths[k] = []
        for n, shape in specs:
            p = os.path.join(WORK, f"{k}_{n}.npy")
            np.save(p, rng.standard_normal(shape, dtype=np.float32))
            paths[k].append(p)
    return paths


def reference(kernel, inputs):
    import numpy as np
    arrs = [np.load(p) for p in inputs]
    if kernel == "sgemm":
        return np.matmul(arrs[0], arrs[1])
    x, w, b = arrs
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    # im2col: [14*14, 3*3*256] x [3*3*256, 256]
    cols = np.stack([xp[0, i:i + 14, j:j + 14, :] for i in range(3) for j in range(3)],
                    axis=2).reshape(14 * 14, 9 * 256)
    wm = w.reshape(256, 9 * 256).T
    return (cols @ wm + b).reshape(1, 14, 14, 256)


def fma_peak(max_threads):
    exe = os.path.join(BENCH, "work", "fma_peak")
    os.makedirs(os.path.dirname(exe), exist_ok=True)
    src = os.path.join(BENCH, "fma_peak.c")
    p = subprocess.run(["cc", "-O3", "-march=native", "-pthread", src, "-o", exe],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return {"error": "cc: " + first_error_line(p.stderr)}
    p = subprocess.run([exe, str(max_threads), "0.25"], capture_output=True, text=True)
    if p.returncode != 0:
        return {"error": first_error_line(p.stderr)}
    peak = {}
    for line in p.stdout.splitlines():
        kv = dict(t.split("=") for t in line.split()[1:])
        peak[kv["threads"]] = float(kv["gflops"])
    return peak


def tessel_kernel(kernel, inputs, threads, args, tools):
    k = KERNELS[kernel]
    so = os.path.join(WORK, f"{kernel}.O{args.opt_level}.so")
    p = subprocess.run([tools["compile"], os.path.join(HERE, k["mlir"]), "-o", so,
                        f"-O{args.opt_level}"], capture_output=True, text=True)
    if p.returncode != 0:
        return {"error": "compile: " + first_error_line(p.stderr + p.stdout)}
    out = os.path.join(WORK, f"{kernel}.out.npy")
    base = [tools["run"], so] + ["--input=@" + i for i in inputs] + [f"--threads={threads}"]

    def call(n, extra=()):
        try:
            p = subprocess.run(base + [f"--benchmark={n}"] + list(extra),
                               capture_output=True, text=True, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            return {"error": f"timed out after {args.timeout} s"}
        if p.returncode != 0:
            return {"error": first_error_line(p.stderr + p.stdout)}
        for line in p.stdout.splitlines():
            if line.startswith("benchmark:"):
                kv = dict(t.split("=", 1) for t in line.split()[1:])
                return {"median_ms": float(kv["median_ms"]), "min_ms": float(kv["min_ms"]),
                        "max_ms": float(kv["max_ms"]), "runs": int(kv["iterations"])}
        return {"error": "no benchmark line: " + first_error_line(p.stdout + p.stderr)}

    r = call(args.min_runs, ["--output=@" + out])
    if "error" in r:
        return r
    import numpy as np
    got, ref = np.load(out), reference(kernel, inputs)
    err = float(np.max(np.abs(got - ref)) / max(float(np.max(np.abs(ref))), 1e-30))
    n = min(args.runs, int(args.budget * 1000.0 / max(r["median_ms"], 1e-3)))
    if n > args.min_runs:
        r2 = call(n)
        if "error" not in r2:
            r = r2
    r["max_rel_err"] = err
    r["check"] = "ok" if err < 1e-3 else "MISMATCH"
    return r


PEER_SRC = r"""
import json, sys, time, statistics
import numpy as np
import torch
threads, budget = int(sys.argv[1]), float(sys.argv[2])
torch.set_num_threads(threads)
rng = np.random.default_rng(1)
def timeit(fn, min_runs=5, max_runs=50):
    fn(); fn()
    ts, start = [], time.perf_counter()
    while len(ts) < max_runs:
        t0 = time.perf_counter(); fn(); t1 = time.perf_counter()
        ts.append((t1 - t0) * 1e3)
        if len(ts) >= min_runs and t1 - start > budget:
            break
    return statistics.median(ts)
a = rng.standard_normal((1024, 1024), dtype=np.float32)
b = rng.standard_normal((1024, 1024), dtype=np.float32)
ta, tb = torch.from_numpy(a), torch.from_numpy(b)
x = torch.randn(1, 256, 14, 14); w = torch.randn(256, 256, 3, 3); bias = torch.randn(256)
res = {"numpy": {"sgemm": timeit(lambda: a @ b)},
       "torch": {"sgemm": None, "conv": None}}
with torch.inference_mode():
    res["torch"]["sgemm"] = timeit(lambda: torch.mm(ta, tb))
    res["torch"]["conv"] = timeit(lambda: torch.nn.functional.conv2d(x, w, bias, padding=1))
print(json.dumps(res))
"""


def peers(threads, budget):
    env = dict(os.environ)
    for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
              "BLIS_NUM_THREADS"):
        env[v] = str(threads)
    p = subprocess.run([PY, "-c", PEER_SRC, str(threads), str(budget)],
                       capture_output=True, text=True, env=env, timeout=600)
    if p.returncode != 0:
        return {"error": first_error_line(p.stderr.splitlines()[-1] if p.stderr else "")}
    return json.loads(p.stdout.strip().splitlines()[-1])


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--ops", default="sgemm,conv")
    ap.add_argument("--opt-level", type=int, default=3)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--min-runs", type=int, default=3)
    ap.add_argument("--budget", type=float, default=3.0)
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--json")
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    args = ap.parse_args(argv)
    threads = [int(t) for t in args.threads.split(",") if t.strip()]
    ops = [o.strip() for o in args.ops.split(",") if o.strip()]
    for o in ops:
        if o not in KERNELS:
            ap.error(f"unknown op '{o}' (sgemm, conv)")
    tools = {"compile": os.path.join(args.build_dir, "bin", "tessel-compile"),
             "run": os.path.join(args.build_dir, "bin", "tessel-run")}

    t0 = time.time()
    peak = fma_peak(max(threads))
    inputs = make_inputs()
    res = {"fma_peak_gflops": peak, "kernels": {}}
    for t in threads:
        ref = peers(t, 1.0)
        for o in ops:
            r = {"tessel": tessel_kernel(o, inputs[o], t, args, tools)}
            for lib in ("numpy", "torch"):
                ms = None if "error" in ref else ref.get(lib, {}).get(o)
                r[lib] = None if ms is None else {"median_ms": ms}
            if "error" in ref:
                r["peer_error"] = ref["error"]
            res["kernels"].setdefault(o, {})[str(t)] = r
    res["wall_s"] = round(time.time() - t0, 1)

    # report
    def gflops(o, cell):
        return KERNELS[o]["flops"] / (cell["median_ms"] * 1e-3) / 1e9

    print("GEMM/conv microbenchmark (GFLOP/s; % of the measured FMA peak at the "
          "same thread count)")
    if "error" in peak:
        print(f"  FMA peak: FAILED: {peak['error']}")
    else:
        print("  FMA peak (bench/fma_peak.c, AVX-512 FMA, fp32): " + ", ".join(
            f"{t} thread{'s' if int(t) > 1 else ''} {g:.1f} GFLOP/s" for t, g in peak.items()))
    header = ["kernel", "thr", "Tessel ms", "Tessel GFLOP/s", "% peak", "check",
              "numpy GFLOP/s", "% peak", "torch GFLOP/s", "% peak"]
    rows = []
    for o in ops:
        for t in threads:
            r = res["kernels"][o][str(t)]
            pk = None if "error" in peak else peak.get(str(t))
            row = [f"{KERNELS[o]['title']} ({KERNELS[o]['flops'] / 1e9:.3f} GFLOP)", str(t)]
            cell = r["tessel"]
            if "error" in cell:
                row += ["FAILED: " + cell["error"][:60], "", "", ""]
            else:
                g = gflops(o, cell)
                cell["gflops"] = g
                cell["pct_peak"] = None if not pk else 100 * g / pk
                row += [f"{cell['median_ms']:.2f}", f"{g:.2f}",
                        "-" if not pk else f"{100 * g / pk:.1f}%",
                        f"{cell['check']} ({cell['max_rel_err']:.1e})"]
            for lib in ("numpy", "torch"):
                c = r[lib]
                if c is None:
                    row += ["-", "-"]
                else:
                    g = gflops(o, c)
                    c["gflops"] = g
                    c["pct_peak"] = None if not pk else 100 * g / pk
                    row += [f"{g:.1f}", "-" if not pk else f"{100 * g / pk:.1f}%"]
            rows.append(row)
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    fmt = lambda r: "  ".join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i])
                              for i, c in enumerate(r)).rstrip()
    print("  " + fmt(header))
    for r in rows:
        print("  " + fmt(r))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
