#!/usr/bin/env python3
"""Tessel vs ONNX Runtime vs PyTorch: median inference latency per model.

Run through bench/run.sh (which installs onnxruntime-node and matplotlib);
needs Debian's /usr/bin/python3 (numpy, torch, torchvision, onnx).

  bench/bench_models.py [--models a,b] [--threads 1,2] [--runs N] [--quick]
                        [--budget S] [--opt-level 3] [--rebuild] [--no-gemm]
                        [--json bench/results/latest.json]

For every model of the fixed list (test/models/export_models.py: seeded
random weights, exported to ONNX opset 17) and every thread count:

  Tessel   tessel-compile MODEL.onnx -O<opt> ; tessel-run --benchmark=N
           --threads=T (one untimed warm-up inside tessel-run, median of N)
  ORT      bench/ort_bench.js: onnxruntime-node, intraOpNumThreads=T,
           interOpNumThreads=1, graphOptimizationLevel 'all'; warm-up, median
  PyTorch  the same nn.Module with the same weights and input,
           torch.set_num_threads(T), torch.inference_mode(); warm-up, median

Every engine gets at least --min-runs timed runs and at most --runs, and
stops early once --budget seconds of timed runs have passed (Tessel's
codegen can take seconds per inference). The ratio printed for a peer is
peer_ms / tessel_ms: above 1 means Tessel is faster. A model that fails in
one engine prints FAILED and the first error line in that cell; the run goes
on. Results go to --json (default bench/results/latest.json); the GEMM/conv
microbenchmark (bench/gemm_bench/gemm_bench.py) runs at the end unless
--no-gemm, and its results are stored in the same file.
"""
import argparse
import datetime
import hashlib
import json
import math
import glob
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
EXPORT = os.path.join(ROOT, "test", "models", "export_models.py")
WORK = os.path.join(BENCH, "work")
MODELS = ["resnet18", "resnet50", "mobilenet_v2", "squeezenet1_1",
          "shufflenet_v2", "efficientnet_b0", "bert", "gpt", "moe"]
QUICK_MODELS = ["squeezenet1_1", "gpt", "moe"]
HISTORY = os.path.join(BENCH, "results", "history.jsonl")


def broad_models():
    """The broad set (issue 20): export_models.BROAD, read from the file
    without importing torch."""
    import ast
    tree = ast.parse(open(EXPORT).read())
    names = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name):
            names[node.targets[0].id] = node.value
    dicts = [list(ast.literal_eval(names[n]).keys()) for n in ("TORCHVISION", "SEGMENTATION")]
    rest = ast.literal_eval(names["BROAD"].right)
    return dicts[0] + dicts[1] + rest
ENGINES = ["tessel", "ort", "torch"]
ENGINE_TITLE = {"tessel": "Tessel", "ort": "ORT", "torch": "PyTorch"}
PY = sys.executable


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def first_error_line(text):
    """The first line that looks like an error, else the first non-empty one."""
    lines = [l.strip() for l in (text or "").splitlines() if l.strip()]
    for l in lines:
        if "error" in l.lower() or "failed" in l.lower():
            return l
    return lines[0] if lines else "no output"


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def run_cmd(cmd, timeout, env=None):
    """Runs cmd; returns (rc, stdout, stderr). A timeout is rc 124."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           env=env)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        return 124, out, f"timed out after {timeout} s"


class Failure(Exception):
    pass


# ---------------------------------------------------------------- export


def export_model(name, rebuild):
    """Exports NAME to bench/work/NAME/ (cached on export_models.py's hash)."""
    out = os.path.join(WORK, name)
    stamp_path = os.path.join(out, "export.stamp")
    stamp = sha256_file(EXPORT)
    onnx_path = os.path.join(out, name + ".onnx")
    files = [onnx_path, os.path.join(out, "input.npy"), os.path.join(out, "output.npy")]
    if not rebuild and all(map(os.path.exists, files + [stamp_path])):
        if open(stamp_path).read().strip() == stamp:
            return out, None
    os.makedirs(out, exist_ok=True)
    t0 = time.time()
    rc, so, se = run_cmd([PY, EXPORT, name, out], timeout=600)
    if rc != 0:
        raise Failure("export: " + first_error_line(se + so))
    with open(stamp_path, "w") as f:
        f.write(stamp + "\n")
    return out, time.time() - t0


# ---------------------------------------------------------------- Tessel


def tessel_compile(name, mdir, opt_level, rebuild, tools):
    """Compiles NAME.onnx to model.O<opt>.so; cached on the .onnx hash, the
    tessel-compile binary and the kernel-library archives linked into
    artifacts (size, mtime). Returns (so_path, compile_s|None)."""
    onnx_path = os.path.join(mdir, name + ".onnx")
    so = os.path.join(mdir, f"model.O{opt_level}.so")
    stamp_path = so + ".stamp"
    st = os.stat(tools["compile"])
    stamp = f"{sha256_file(onnx_path)} {st.st_size} {st.st_mtime_ns} -O{opt_level}"
    libdir = os.path.join(os.path.dirname(os.path.dirname(tools["compile"])), "lib")
    for lib in sorted(glob.glob(os.path.join(libdir, "libtessel_kernels_*.a"))):
        ls = os.stat(lib)
        stamp += f" {os.path.basename(lib)}:{ls.st_size}:{ls.st_mtime_ns}"
    if (not rebuild and os.path.exists(so) and os.path.exists(stamp_path)
            and open(stamp_path).read().strip() == stamp):
        return so, None
    for p in (so, stamp_path):
        if os.path.exists(p):
            os.remove(p)
    t0 = time.time()
    rc, so_out, se = run_cmd([tools["compile"], onnx_path, "-o", so,
                              f"-O{opt_level}"], timeout=900)
    dt = time.time() - t0
    if rc != 0:
        raise Failure("compile: " + first_error_line(se + so_out))
    with open(stamp_path, "w") as f:
        f.write(stamp + "\n")
    return so, dt


def parse_benchmark_line(text):
    for line in text.splitlines():
        if line.startswith("benchmark:"):
            kv = dict(tok.split("=", 1) for tok in line.split()[1:] if "=" in tok)
            return {"median_ms": float(kv["median_ms"]), "min_ms": float(kv["min_ms"]),
                    "max_ms": float(kv["max_ms"]), "mean_ms": float(kv["mean_ms"]),
                    "runs": int(kv["iterations"])}
    return None


def tessel_bench(so, mdir, threads, args, tools):
    """tessel-run --benchmark: first min_runs runs; if the model is fast
    enough, a second call with more runs (the first then served as warm-up)."""
    base = [tools["run"], so, "--input=@" + os.path.join(mdir, "input.npy"),
            f"--threads={threads}"]

    def call(n, timeout, extra=()):
        rc, so_out, se = run_cmd(base + [f"--benchmark={n}"] + list(extra), timeout=timeout)
        if rc != 0:
            raise Failure(first_error_line(se + so_out))
        r = parse_benchmark_line(so_out)
        if r is None:
            raise Failure("no benchmark line in tessel-run output: "
                          + first_error_line(so_out + se))
        return r

    out = os.path.join(mdir, f"tessel_output.t{threads}.npy")
    r = call(args.min_runs, args.timeout, ["--output=@" + out])
    check = check_output(out, os.path.join(mdir, "output.npy"))
    n = min(args.runs, int(args.budget * 1000.0 / max(r["median_ms"], 1e-3)))
    if n > args.min_runs:
        r = call(n, timeout=args.timeout)
    r["check"] = check
    return r


def check_output(got_path, ref_path, rtol=1e-3, atol=1e-4, range_tol=1e-5):
    """Tessel's output against PyTorch's (the tolerance of test/models/):
    'ok', or 'MISMATCH: ...'. The absolute tolerance grows with the
    output's range (range_tol x max |ref|): deep nets with random weights
    reach outputs of 10^3, and summation order alone then moves small
    elements by 10^-3 (FCN-ResNet50 and Wide ResNet-50-2: ONNX Runtime
    deviates from PyTorch as much, 1.5e-3 and 7e-4, 1-3e-6 of the range;
    a wrong answer is orders above that)."""
    import numpy as np
    try:
        got, ref = np.load(got_path), np.load(ref_path)
    except (OSError, ValueError) as e:
        return f"MISMATCH: cannot read output: {e}"
    if got.shape != ref.shape:
        return f"MISMATCH: shape {list(got.shape)} vs {list(ref.shape)}"
    finite = np.isfinite(ref)
    scale = float(np.abs(ref[finite]).max()) if finite.any() else 0.0
    bad = ~np.isclose(got, ref, rtol=rtol, atol=max(atol, range_tol * scale),
                      equal_nan=True)
    if bad.any():
        worst = float(np.nanmax(np.abs(got.astype(np.float64) - ref)))
        return (f"MISMATCH: {int(bad.sum())} of {bad.size} elements differ "
                f"(largest difference {worst:.3g}, output range {scale:.3g})")
    return "ok"


# ---------------------------------------------------------------- ORT


def ort_bench(name, mdir, threads, args):
    cmd = ["node", os.path.join(BENCH, "ort_bench.js"),
           "--model=" + os.path.join(mdir, name + ".onnx"),
           "--input=@" + os.path.join(mdir, "input.npy"),
           "--threads=" + ",".join(map(str, threads)),
           f"--runs={args.runs}", f"--min-runs={args.min_runs}",
           f"--warmup={args.warmup}", f"--budget={args.budget}"]
    rc, so, se = run_cmd(cmd, timeout=args.timeout)
    try:
        res = json.loads(so.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise Failure(first_error_line(se + so))
    if rc != 0 or "error" in res:
        raise Failure(res.get("error") or first_error_line(se + so))
    return res["results"], res.get("ort_version")


# ---------------------------------------------------------------- PyTorch


def torch_module(name, mdir):
    """The PyTorch module export_models.py builds, with the same seed and
    BatchNorm statistics, in eval mode, and the input in MDIR."""
    import numpy as np
    import torch
    sys.path.insert(0, os.path.dirname(EXPORT))
    import export_models as em
    torch.manual_seed(em.SEED)
    model, _ = em.build(name)
    model.eval()
    em.randomize_batchnorm(model)
    return model, torch.from_numpy(np.load(os.path.join(mdir, "input.npy")))


def time_calls(fn, runs, min_runs, warmup, budget):
    """Times fn() after `warmup` calls: `runs` calls, or fewer (at least
    `min_runs`) once `budget` seconds have passed. Statistics in ms."""
    for _ in range(warmup):
        fn()
    times = []
    start = time.perf_counter()
    while len(times) < runs:
        t0 = time.perf_counter()
        fn()
        t1 = time.perf_counter()
        times.append((t1 - t0) * 1e3)
        if len(times) >= min_runs and t1 - start > budget:
            break
    return {"median_ms": statistics.median(times), "min_ms": min(times),
            "max_ms": max(times), "mean_ms": statistics.fmean(times), "runs": len(times)}


def torch_worker(name, mdir, threads, runs, min_runs, warmup, budget):
    """In a subprocess: times the PyTorch module export_models.py builds, with
    the same seed, BatchNorm statistics and input. Prints one JSON line."""
    import torch
    model, x = torch_module(name, mdir)
    results = {}
    for t in threads:
        torch.set_num_threads(t)
        with torch.inference_mode():
            results[str(t)] = time_calls(lambda: model(x), runs, min_runs, warmup, budget)
    print(json.dumps({"torch_version": torch.__version__, "results": results}))


def torch_bench(name, mdir, threads, args):
    cmd = [PY, os.path.abspath(__file__), "--torch-worker", name, mdir,
           ",".join(map(str, threads)), str(args.runs), str(args.min_runs),
           str(args.warmup), str(args.budget)]
    rc, so, se = run_cmd(cmd, timeout=args.timeout)
    if rc != 0:
        raise Failure(first_error_line(se.splitlines()[-1] if se.strip() else so))
    try:
        res = json.loads(so.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise Failure(first_error_line(se + so))
    return res["results"], res.get("torch_version")


# ---------------------------------------------------------------- report


def fmt_ms(cell):
    if cell is None:
        return "-"
    if "error" in cell:
        return "FAILED: " + cell["error"][:70]
    v = cell["median_ms"]
    txt = f"{v:.1f}" if v >= 100 else f"{v:.2f}" if v >= 1 else f"{v:.3f}"
    if cell.get("check", "ok") != "ok":
        txt += " (WRONG OUTPUT)"
    return txt


def fmt_ratio(r):
    return "-" if r is None else (f"{r:.3g}x")


def ratio(results, model, peer, t):
    a = results[model]["engines"].get(peer, {}).get(str(t))
    b = results[model]["engines"].get("tessel", {}).get(str(t))
    if not a or not b or "error" in a or "error" in b:
        return None
    return a["median_ms"] / b["median_ms"]


def geomean(values):
    vals = [v for v in values if v is not None and v > 0]
    if not vals:
        return None
    return math.exp(sum(math.log(v) for v in vals) / len(vals)), len(vals)


def table_text(data):
    """The result table: one block per thread count."""
    models, threads, results = data["models_run"], data["threads"], data["results"]
    out = []
    for t in threads:
        out.append(f"threads={t}   median latency in ms; ratio = peer ms / Tessel ms "
                   f"(>1: Tessel faster)")
        header = ["model", "Tessel", "ORT", "PyTorch", "ORT/Tessel", "PyTorch/Tessel"]
        rows = []
        for m in models:
            eng = results[m]["engines"]
            rows.append([m] + [fmt_ms(eng.get(e, {}).get(str(t))) for e in ENGINES]
                        + [fmt_ratio(ratio(results, m, p, t)) for p in ("ort", "torch")])
        gm = []
        for p in ("ort", "torch"):
            g = data["geomean"][str(t)][p]
            gm.append("-" if g is None else f"{g['value']:.3g}x (n={g['n']})")
        rows.append(["geomean", "", "", ""] + gm)
        widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
        line = lambda r: "  ".join(c.ljust(widths[0]) if i == 0 else c.rjust(widths[i])
                                   for i, c in enumerate(r)).rstrip()
        out.append(line(header))
        out.append("  ".join("-" * w for w in widths))
        for r in rows[:-1]:
            out.append(line(r))
        out.append("  ".join("-" * w for w in widths))
        out.append(line(rows[-1]))
        out.append("")
    # Tessel's own thread scaling (the "2 threads vs 1" criterion).
    if len(threads) > 1:
        t0 = str(threads[0])
        parts = []
        for m in models:
            cells = results[m]["engines"].get("tessel", {})
            base = cells.get(t0, {})
            for t in threads[1:]:
                c = cells.get(str(t), {})
                if "median_ms" in base and "median_ms" in c and c["median_ms"] > 0:
                    parts.append(f"{m} {base['median_ms'] / c['median_ms']:.2f}x")
        if parts:
            out.append(f"Tessel speedup, threads={','.join(map(str, threads[1:]))} "
                       f"vs {t0}: " + ", ".join(parts))
            out.append("")
    return "\n".join(out)


def machine_info():
    cpu = platform.processor() or "unknown"
    info = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if ":" in line:
                    k, v = (x.strip() for x in line.split(":", 1))
                    info.setdefault(k, v)
                if not line.strip() and info:
                    break
    except OSError:
        pass
    cpu = info.get("model name", cpu)
    if "cpu family" in info and "model" in info:
        cpu += f" (family {info['cpu family']} model {info['model']})"
    flags = [f for f in ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile")
             if f in info.get("flags", "").split()]
    mem_gib = None
    try:
        with open("/proc/meminfo") as f:
            mem_gib = round(int(f.readline().split()[1]) / 2**20, 1)
    except (OSError, ValueError, IndexError):
        pass
    return {"cpu": cpu, "isa": flags, "logical_cpus": os.cpu_count(), "mem_gib": mem_gib,
            "os": platform.platform()}


def machine_probe():
    """What the two cores give right now: the FMA peak on one thread and on
    two (bench/fma_peak.c) and a cache line's round trip between two threads
    (bench/core_latency.c). On the 2-vCPU VMs this runs on, the hypervisor
    moves the vCPUs within minutes: 0.2-0.3 us apart on one CCD, 0.5-1 us
    across, and at times both on one core (two threads then reach one
    core's FMA peak, and no engine gains from a second thread). Recorded at
    the start and end of a run; None where a tool does not build or run."""
    os.makedirs(WORK, exist_ok=True)
    out = {"fma_gflops_1t": None, "fma_gflops_2t": None, "core_round_trip_ns": None}
    fma = os.path.join(WORK, "fma_peak")
    rc, _, _ = run_cmd(["cc", "-O3", "-march=native", "-pthread",
                        os.path.join(BENCH, "fma_peak.c"), "-o", fma], 60)
    if rc == 0:
        rc, so, _ = run_cmd([fma, "2"], 60)
        for line in so.splitlines() if rc == 0 else []:
            m = re.match(r"fma_peak: threads=([12]) gflops=([0-9.]+)", line)
            if m:
                out[f"fma_gflops_{m.group(1)}t"] = float(m.group(2))
    lat = os.path.join(WORK, "core_latency")
    rc, _, _ = run_cmd(["cc", "-O2", "-pthread", os.path.join(BENCH, "core_latency.c"),
                        "-o", lat], 60)
    if rc == 0:
        rc, so, _ = run_cmd([lat], 60)
        for line in so.splitlines() if rc == 0 else []:
            if line.startswith("core_latency: round_trip_ns="):
                out["core_round_trip_ns"] = int(line.split("=", 1)[1])
    return out


def probe_text(probes):
    """'FMA peak 1t/2t ... GFLOP/s, core round trip ... ns' at start -> end."""
    def one(p):
        return (f"FMA peak {p['fma_gflops_1t']}/{p['fma_gflops_2t']} GFLOP/s (1/2 threads), "
                f"core round trip {p['core_round_trip_ns']} ns")
    text = f"at the start {one(probes[0])}; at the end {one(probes[1])}"
    if any(p["fma_gflops_1t"] and p["fma_gflops_2t"] and
           p["fma_gflops_2t"] < 1.5 * p["fma_gflops_1t"] for p in probes):
        text += (" (two threads got less than 1.5 cores' FMA throughput: the "
                 "two-thread figures measure the hypervisor as much as the engines)")
    return text


def git_rev():
    rc, so, _ = run_cmd(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], 10)
    rev = so.strip() if rc == 0 else "unknown"
    rc, so, _ = run_cmd(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"], 10)
    if rc == 0 and so.strip():
        rev += "+dirty"
    return rev


# ---------------------------------------------------------------- main


def append_history(path, data):
    """One JSON line per run: when, what, where, and per model Tessel's
    median and its ratios to the peers, so that a regression on any model
    shows against the runs before (bench/report.py's history table)."""
    line = {"date": data["date"], "git": data["versions"].get("tessel"),
            "cpu": data["machine"]["cpu"], "command": data["command"],
            "threads": data["threads"], "geomean": data["geomean"],
            "machine_probe": data.get("machine_probe"), "models": {}}
    for m in data["models_run"]:
        cells = data["results"][m]["engines"]["tessel"]
        line["models"][m] = {t: {"tessel_ms": c.get("median_ms"),
                                 "ort": data["ratios"][t][m]["ort"],
                                 "torch": data["ratios"][t][m]["torch"]}
                             for t, c in cells.items()}
    with open(path, "a") as f:
        f.write(json.dumps(line) + "\n")


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", help="comma-separated models (default: the --set)")
    ap.add_argument("--set", default="core", choices=["core", "broad", "all"],
                    help="core: bench's nine (" + ",".join(MODELS) + "); broad: "
                    "the broad set of issue 20 (test/models/export_models.py BROAD: "
                    "torchvision families, segmentation, recurrent, transformers, "
                    "MLP-Mixer, U-Net); all: both")
    ap.add_argument("--history", default=HISTORY,
                    help="JSON-lines file each run appends its summary to "
                         "(default bench/results/history.jsonl; '' for none)")
    ap.add_argument("--threads", help="comma-separated thread counts (default 1,2)")
    ap.add_argument("--runs", type=int, help="max timed runs per measurement (default 20)")
    ap.add_argument("--min-runs", type=int, default=3, help="min timed runs (default 3)")
    ap.add_argument("--warmup", type=int, default=2,
                    help="untimed warm-up runs for ORT and PyTorch (default 2; "
                         "tessel-run always does 1)")
    ap.add_argument("--budget", type=float,
                    help="seconds of timed runs after which a measurement stops "
                         "early (default 4)")
    ap.add_argument("--quick", action="store_true",
                    help=f"smoke run: models {','.join(QUICK_MODELS)}, threads 1, "
                         "3 runs, conv microbenchmark only")
    ap.add_argument("--opt-level", type=int, default=3, choices=[0, 1, 2, 3],
                    help="tessel-compile -O level (default 3)")
    ap.add_argument("--timeout", type=int, default=600,
                    help="seconds before one engine call counts as FAILED (default 600)")
    ap.add_argument("--rebuild", action="store_true",
                    help="re-export and re-compile even when bench/work/ is up to date")
    ap.add_argument("--no-gemm", action="store_true", help="skip the GEMM/conv microbenchmark")
    ap.add_argument("--json", default=os.path.join(BENCH, "results", "latest.json"))
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    args = ap.parse_args(argv)
    broad = broad_models()
    known = MODELS + [m for m in broad if m not in MODELS]
    if args.models:
        args.models = [m.strip() for m in args.models.split(",") if m.strip()]
        bad = [m for m in args.models if m not in known]
        if bad:
            ap.error(f"unknown model(s) {','.join(bad)}; choose from {','.join(known)}")
    elif args.quick:
        args.models = QUICK_MODELS
    else:
        args.models = {"core": MODELS, "broad": broad, "all": known}[args.set]
    if args.threads:
        try:
            args.threads = [int(t) for t in args.threads.split(",") if t.strip()]
        except ValueError:
            ap.error("--threads takes a comma-separated list of integers")
        if not args.threads or min(args.threads) < 1:
            ap.error("--threads: thread counts must be >= 1")
    else:
        args.threads = [1] if args.quick else [1, 2]
    if args.runs is None:
        args.runs = 3 if args.quick else 20
    if args.budget is None:
        args.budget = 1.0 if args.quick else 4.0
    args.min_runs = max(1, min(args.min_runs, args.runs))
    return args


def main(argv):
    if argv and argv[0] == "--torch-worker":
        name, mdir, threads, runs, min_runs, warmup, budget = argv[1:8]
        torch_worker(name, mdir, [int(t) for t in threads.split(",")], int(runs),
                     int(min_runs), int(warmup), float(budget))
        return 0
    args = parse_args(argv)
    tools = {"compile": os.path.join(args.build_dir, "bin", "tessel-compile"),
             "run": os.path.join(args.build_dir, "bin", "tessel-run")}
    for t in tools.values():
        if not os.access(t, os.X_OK):
            log(f"bench_models.py: error: {t} not found; build Tessel first")
            return 2
    t_start = time.time()
    started = datetime.datetime.now().astimezone()
    load_start = os.getloadavg()
    probe_start = machine_probe()
    log(f"bench: models={','.join(args.models)} threads={','.join(map(str, args.threads))} "
        f"runs<= {args.runs} (>= {args.min_runs}) budget={args.budget}s "
        f"opt=-O{args.opt_level}; load average at start {load_start[0]:.2f}")

    versions = {"tessel": git_rev(), "python": platform.python_version()}
    results = {}
    for m in args.models:
        entry = {"engines": {e: {} for e in ENGINES}, "export_s": None, "compile_s": None}
        results[m] = entry

        def fail_all(engines, msg):
            for e in engines:
                for t in args.threads:
                    entry["engines"][e][str(t)] = {"error": msg}

        log(f"[{m}] export")
        try:
            mdir, entry["export_s"] = export_model(m, args.rebuild)
        except Failure as f:
            fail_all(ENGINES, str(f))
            log(f"[{m}] FAILED {f}")
            continue
        # Tessel
        log(f"[{m}] tessel-compile -O{args.opt_level}")
        try:
            so, entry["compile_s"] = tessel_compile(m, mdir, args.opt_level, args.rebuild, tools)
            if entry["compile_s"] is not None:
                log(f"[{m}]   compiled in {entry['compile_s']:.1f} s")
            for t in args.threads:
                try:
                    r = tessel_bench(so, mdir, t, args, tools)
                    entry["engines"]["tessel"][str(t)] = r
                    log(f"[{m}]   tessel  threads={t}: {r['median_ms']:.3f} ms ({r['runs']} runs), "
                        f"output vs PyTorch: {r['check']}")
                except Failure as f:
                    entry["engines"]["tessel"][str(t)] = {"error": str(f)}
                    log(f"[{m}]   tessel  threads={t}: FAILED {f}")
        except Failure as f:
            fail_all(["tessel"], str(f))
            log(f"[{m}]   tessel FAILED {f}")
        # ORT, PyTorch
        for e, fn in (("ort", ort_bench), ("torch", torch_bench)):
            try:
                res, ver = fn(m, mdir, args.threads, args)
                versions[e] = ver
                for t in args.threads:
                    entry["engines"][e][str(t)] = res[str(t)]
                    log(f"[{m}]   {e:6s}  threads={t}: {res[str(t)]['median_ms']:.3f} ms "
                        f"({res[str(t)]['runs']} runs)")
            except Failure as f:
                fail_all([e], str(f))
                log(f"[{m}]   {e} FAILED {f}")

    data = {
        "date": started.isoformat(timespec="seconds"),
        "command": " ".join(["bench/run.sh"] + [shlex.quote(a) for a in argv]),
        "machine": machine_info(),
        "load_average_start": [round(v, 2) for v in load_start],
        "versions": versions,
        "config": {"runs": args.runs, "min_runs": args.min_runs, "warmup": args.warmup,
                   "budget_s": args.budget, "opt_level": args.opt_level,
                   "ort_session": {"intraOpNumThreads": "T", "interOpNumThreads": 1,
                                   "graphOptimizationLevel": "all",
                                   "executionMode": "sequential"}},
        "models_run": args.models,
        "threads": args.threads,
        "results": results,
    }
    data["ratios"] = {str(t): {m: {p: ratio(results, m, p, t) for p in ("ort", "torch")}
                               for m in args.models} for t in args.threads}
    data["geomean"] = {}
    for t in args.threads:
        data["geomean"][str(t)] = {}
        for p in ("ort", "torch"):
            g = geomean(data["ratios"][str(t)][m][p] for m in args.models)
            data["geomean"][str(t)][p] = None if g is None else {"value": g[0], "n": g[1]}

    if not args.no_gemm:
        log("[gemm] microbenchmark")
        gjson = os.path.join(WORK, "gemm.json")
        cmd = [PY, os.path.join(BENCH, "gemm_bench", "gemm_bench.py"),
               "--threads=" + ",".join(map(str, args.threads)),
               f"--opt-level={args.opt_level}", "--json=" + gjson,
               "--build-dir=" + args.build_dir]
        if args.quick:
            cmd.append("--ops=conv")
        if os.path.exists(gjson):
            os.remove(gjson)
        p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
        data["gemm_text"] = p.stdout
        if p.returncode == 0 and os.path.exists(gjson):
            with open(gjson) as f:
                data["gemm"] = json.load(f)
        else:
            data["gemm"] = {"error": f"gemm_bench.py exited {p.returncode}"}

    data["load_average_end"] = [round(v, 2) for v in os.getloadavg()]
    data["machine_probe"] = [probe_start, machine_probe()]
    data["wall_s"] = round(time.time() - t_start, 1)
    data["table"] = table_text(data)

    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    if args.history:
        append_history(args.history, data)

    print()
    print(f"Tessel benchmark  {data['date']}  {data['machine']['cpu']}, "
          f"{data['machine']['logical_cpus']} CPUs  (tessel {versions['tessel']}, "
          f"ORT {versions.get('ort', '?')}, torch {versions.get('torch', '?')}, "
          f"-O{args.opt_level})")
    print()
    print(data["table"])
    if data.get("gemm_text"):
        print(data["gemm_text"].rstrip())
        print()
    failures = [(m, e, t, c["error"]) for m in args.models for e in ENGINES
                for t, c in results[m]["engines"][e].items() if "error" in c]
    wrong = [(m, t, c["check"]) for m in args.models
             for t, c in results[m]["engines"]["tessel"].items()
             if c.get("check", "ok") != "ok"]
    if wrong:
        print("Tessel outputs that do not match PyTorch's (rtol 1e-3, atol 1e-4):")
        for m, t, chk in wrong:
            print(f"  {m} threads={t}: {chk}")
        print()
    elif any("check" in c for m in args.models
             for c in results[m]["engines"]["tessel"].values()):
        print("Tessel outputs: all match PyTorch's (rtol 1e-3, atol 1e-4).")
    if failures:
        print("failures:")
        for m, e, t, err in failures:
            print(f"  {m} {ENGINE_TITLE[e]} threads={t}: {err}")
        print()
    busy = max(data["load_average_start"][0], data["load_average_end"][0])
    if busy > 0.5:
        print(f"warning: load average {busy:.2f} on {os.cpu_count()} CPUs: other processes "
              f"were running; multi-thread cells are the least reliable")
    print(f"load average: start {data['load_average_start'][0]:.2f}, "
          f"end {data['load_average_end'][0]:.2f}; {probe_text(data['machine_probe'])}; "
          f"wall time {data['wall_s']:.0f} s; results: {os.path.relpath(args.json, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
