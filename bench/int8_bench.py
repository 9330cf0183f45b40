#!/usr/bin/python3
"""int8 benchmark: Tessel int8 vs Tessel fp32 vs ONNX Runtime int8, same models.

    /usr/bin/python3 bench/int8_bench.py [--models bert768,resnet50,mobilenet_v2,resnext50]
        [--runs 20] [--calibration 8] [--docs]

For each model (exported by test/models/export_models.py, cached in
bench/work/NAME/): the float ONNX model is quantized once with
tessel.quantize_onnx (per-channel int8 weights, uint8 activations, minmax
calibration on --calibration random samples shaped like the input) into a
standard QDQ model, bench/work/NAME/NAME.qdq.onnx. Then, one thread each:

  tessel fp32      tessel-compile -O3 of the float model
  tessel int8      tessel-compile -O3 of the QDQ model
  tessel ptq8      tessel-compile -O3 --quantize=int8 of the float model,
                   calibrated by the compiler on the same samples
                   (--calibration-data=@calibration.npy)
  tessel dyn8      tessel-compile -O3 --quantize=int8-dynamic of the float
                   model (transformers: matmuls only)
  ort fp32 / int8  onnxruntime-node 1.30 (CPU EP, all graph optimizations)
                   on the float and the QDQ model

with the agreement of the outputs: cosine similarity of each int8 output
with the float reference, of Tessel's int8 output with ORT's int8 output, and
for classifiers whether the top-1 class is the same. The FMA peak of one
core (bench/fma_peak.c) and the int8 kernels' rates (bench/int8_gemm.c,
bench/int8_depthwise.c, bench/int8_conv.c) are measured in the same run. Results: bench/results/int8.json; with --docs also
docs/performance-int8.md.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)
import bench_models as bm  # noqa: E402  (export, timing and machine helpers)

DEFAULT_MODELS = ["bert768", "resnet50", "mobilenet_v2", "resnext50"]
TRANSFORMERS = {"bert", "bert768", "gpt"}


def log(msg):
    print(f"int8_bench: {msg}", file=sys.stderr, flush=True)


def sh(cmd, timeout=900, env=None):
    rc, so, se = bm.run_cmd(cmd, timeout=timeout, env=env)
    if rc != 0:
        raise bm.Failure(f"{os.path.basename(cmd[0])}: " + bm.first_error_line(se + so))
    return so


def cosine(a, b):
    a = np.asarray(a, np.float64).ravel()
    b = np.asarray(b, np.float64).ravel()
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def quantize(name, mdir, samples):
    out = os.path.join(mdir, name + ".qdq.onnx")
    src = os.path.join(mdir, name + ".onnx")
    stamp = f"{bm.sha256_file(src)} {samples} {bm.sha256_file(os.path.join(ROOT, 'python', 'tessel', 'quantize.py'))}"
    stamp_path = out + ".stamp"
    if os.path.exists(out) and os.path.exists(stamp_path) and open(stamp_path).read().strip() == stamp:
        return out
    x = np.load(os.path.join(mdir, "input.npy"))
    rng = np.random.default_rng(0)
    calib = [rng.standard_normal(x.shape).astype(x.dtype) for _ in range(samples)]
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "build", "python"))
    code = ("import sys, numpy as np, tessel; "
            "calib = list(np.load(sys.argv[2])); "
            "tessel.quantize_onnx(sys.argv[1], calib, sys.argv[3])")
    cpath = os.path.join(mdir, "calibration.npy")
    np.save(cpath, np.stack(calib))
    t0 = time.time()
    sh([bm.PY, "-c", code, src, cpath, out], env=env, timeout=1800)
    log(f"{name}: quantize_onnx {time.time() - t0:.1f} s")
    with open(stamp_path, "w") as f:
        f.write(stamp + "\n")
    return out


def tessel(tools, onnx_path, so, x_path, out_path, runs, extra=()):
    sh([tools["compile"], onnx_path, "-O3", "-o", so] + list(extra))
    sh([tools["run"], so, "--input=@" + x_path, "--threads=1", "--output=@" + out_path])
    r = bm.parse_benchmark_line(sh([tools["run"], so, "--input=@" + x_path,
                                    "--threads=1", f"--benchmark={runs}"]))
    return r["median_ms"]


def ort(onnx_path, x_path, out_path, runs, stat="median_ms", budget=20):
    """ONNX Runtime on one thread: `stat` (median_ms or min_ms) of `runs`
    runs, stopping after `budget` seconds."""
    so = sh(["node", os.path.join(BENCH, "ort_bench.js"), "--model=" + onnx_path,
             "--input=@" + x_path, "--threads=1", f"--runs={runs}", f"--budget={budget}",
             "--save-output=" + out_path])
    return json.loads(so)["results"]["1"][stat]


def fma_peak():
    exe = os.path.join(BENCH, "work", "fma_peak")
    os.makedirs(os.path.dirname(exe), exist_ok=True)  # a fresh clone has none
    sh(["cc", "-O3", "-march=native", "-pthread", os.path.join(BENCH, "fma_peak.c"), "-o", exe])
    for line in sh([exe, "1", "1"]).splitlines():
        if line.startswith("fma_peak: threads=1"):
            return float(line.split("gflops=")[1].split()[0])
    return None


def kernel_library():
    """The kernel archive tessel-compile links for this CPU: x86-64-v4 where
    it has AVX-512, else x86-64-v3 (AVX2: AMD Zen 3, Intel client cores)."""
    with open("/proc/cpuinfo") as f:
        flags = next((l for l in f if l.startswith("flags")), "").split()
    level = "x86-64-v4" if "avx512f" in flags else "x86-64-v3"
    return os.path.join(ROOT, "build", "lib", f"libtessel_kernels_{level}.a")


def kernel_bench(source, int_keys):
    """Builds bench/SOURCE against this CPU's kernel library and parses its
    `name: key=value ...` lines ([] with a log line if it cannot run)."""
    exe = os.path.join(BENCH, "work", os.path.splitext(source)[0])
    lib = kernel_library()
    try:
        sh(["cc", "-O2", "-I", os.path.join(ROOT, "build", "include"),
            os.path.join(BENCH, source), lib, "-lpthread", "-lm", "-o", exe])
        text = sh([exe])
    except bm.Failure as e:
        log(f"{source}: {e}")
        return []
    rows = []
    for line in text.splitlines():
        kv = dict(t.split("=", 1) for t in line.split()[1:])
        rows.append({k: (int(v) if k in int_keys else float(v)) for k, v in kv.items()})
    return rows


def int8_gemm():
    return kernel_bench("int8_gemm.c", ("M", "N", "K"))


def int8_depthwise():
    return kernel_bench("int8_depthwise.c", ("H", "W", "C", "stride"))


def int8_conv():
    return kernel_bench("int8_conv.c", ("H", "W", "C", "F", "K", "stride"))


def run_model(name, tools, args):
    mdir, _ = bm.export_model(name, rebuild=False)
    x = os.path.join(mdir, "input.npy")
    ref = np.load(os.path.join(mdir, "output.npy"))
    qdq = quantize(name, mdir, args.calibration)
    res = {"model": name}
    outs = {}
    jobs = [("tessel_fp32", lambda o: tessel(tools, os.path.join(mdir, name + ".onnx"),
                                             os.path.join(mdir, "fp32.O3.so"), x, o, args.runs)),
            ("tessel_int8", lambda o: tessel(tools, qdq, os.path.join(mdir, "qdq.O3.so"), x, o,
                                             args.runs)),
            ("tessel_ptq8", lambda o: tessel(
                tools, os.path.join(mdir, name + ".onnx"), os.path.join(mdir, "ptq8.O3.so"), x, o,
                args.runs, ["--quantize=int8",
                            "--calibration-data=@" + os.path.join(mdir, "calibration.npy")])),
            ("ort_fp32", lambda o: ort(os.path.join(mdir, name + ".onnx"), x, o, args.runs)),
            ("ort_int8", lambda o: ort(qdq, x, o, args.runs))]
    if name in TRANSFORMERS:
        jobs.insert(2, ("tessel_dyn8", lambda o: tessel(
            tools, os.path.join(mdir, name + ".onnx"), os.path.join(mdir, "dyn8.O3.so"), x, o,
            args.runs, ["--quantize=int8-dynamic"])))
    for key, fn in jobs:
        out = os.path.join(mdir, f"out_{key}.npy")
        try:
            res[key + "_ms"] = fn(out)
            outs[key] = np.load(out)
            log(f"{name}: {key} {res[key + '_ms']:.2f} ms")
        except bm.Failure as e:
            res[key + "_ms"] = None
            res[key + "_error"] = str(e)
            log(f"{name}: {key} failed: {e}")
    for key in ("tessel_int8", "tessel_ptq8", "tessel_dyn8", "ort_int8"):
        if key in outs:
            res[key + "_cos_float"] = cosine(outs[key], ref)
    if "tessel_int8" in outs and "ort_int8" in outs:
        res["cos_tessel_ort_int8"] = cosine(outs["tessel_int8"], outs["ort_int8"])
        if name not in TRANSFORMERS:
            res["top1_tessel_int8_eq_float"] = bool(outs["tessel_int8"].argmax() == ref.argmax())
            res["top1_tessel_eq_ort_int8"] = bool(outs["tessel_int8"].argmax()
                                                 == outs["ort_int8"].argmax())
    if "tessel_ptq8" in outs and name not in TRANSFORMERS:
        res["top1_tessel_ptq8_eq_float"] = bool(outs["tessel_ptq8"].argmax() == ref.argmax())
    return res


def ratio(a, b):
    return f"{a / b:.2f}x" if a and b else "-"


def table(data):
    lines = ["| model | Tessel fp32 | Tessel int8 (QDQ) | Tessel ptq8 | Tessel dyn8 | ORT fp32 "
             "| ORT int8 (QDQ) | QDQ int8 vs own fp32 | ptq8 vs own fp32 | dyn8 vs own fp32 "
             "| Tessel int8 vs ORT int8 | cos(int8, float) | cos(ptq8, float) "
             "| cos(Tessel, ORT int8) | top-1 same |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    ms = lambda v: f"{v:.2f} ms" if v else "-"  # noqa: E731
    for r in data["models"]:
        fp, i8, dy = r.get("tessel_fp32_ms"), r.get("tessel_int8_ms"), r.get("tessel_dyn8_ms")
        pq = r.get("tessel_ptq8_ms")
        of, oi = r.get("ort_fp32_ms"), r.get("ort_int8_ms")
        top = r.get("top1_tessel_eq_ort_int8")
        lines.append(
            f"| {r['model']} | {ms(fp)} | {ms(i8)} | {ms(pq)} | {ms(dy)} | {ms(of)} | {ms(oi)} "
            f"| {ratio(fp, i8)} | {ratio(fp, pq)} | {ratio(fp, dy)} | {ratio(oi, i8)} "
            f"| {r.get('tessel_int8_cos_float', float('nan')):.5f} "
            f"| {r.get('tessel_ptq8_cos_float', float('nan')):.5f} "
            f"| {r.get('cos_tessel_ort_int8', float('nan')):.5f} "
            f"| {'-' if top is None else ('yes' if top else 'no')} |")
    return "\n".join(lines)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=",".join(DEFAULT_MODELS))
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--calibration", type=int, default=8)
    ap.add_argument("--docs", action="store_true")
    args = ap.parse_args(argv)
    tools = {"compile": os.path.join(ROOT, "build", "bin", "tessel-compile"),
             "run": os.path.join(ROOT, "build", "bin", "tessel-run")}
    os.makedirs(os.path.join(BENCH, "work"), exist_ok=True)
    data = {"command": "/usr/bin/python3 bench/int8_bench.py " + " ".join(argv),
            "machine": bm.machine_info(), "git": bm.git_rev(),
            "fma_peak_gflops_1core": fma_peak(), "int8_gemm": int8_gemm(),
            "int8_depthwise": int8_depthwise(), "int8_conv": int8_conv(), "models": []}
    for name in args.models.split(","):
        data["models"].append(run_model(name, tools, args))
    os.makedirs(os.path.join(BENCH, "results"), exist_ok=True)
    with open(os.path.join(BENCH, "results", "int8.json"), "w") as f:
        json.dump(data, f, indent=1)
    text = table(data)
    print(text)
    if args.docs:
        write_docs(data, text)


def write_docs(data, text):
    g = data["int8_gemm"]
    gemm = "\n".join(f"| {r['M']}x{r['N']}x{r['K']} | {r['f32_gmacs']:.0f} | {r['i8_gmacs']:.0f} "
                     f"| {r['speedup']:.2f}x |" for r in g)
    dw = "\n".join(f"| {r['H']}x{r['W']}x{r['C']} | {r['stride']} | {r['f32_gmacs']:.0f} "
                   f"| {r['i8_gmacs']:.0f} | {r['speedup']:.2f}x |"
                   for r in data.get("int8_depthwise", []))
    conv = "\n".join(f"| {r['H']}x{r['W']}x{r['C']} | {r['K']}x{r['K']} | {r['stride']} | {r['F']} "
                     f"| {r['im2col_gmacs']:.0f} | {r['implicit_gmacs']:.0f} | {r['speedup']:.2f}x |"
                     for r in data.get("int8_conv", []))
    doc = f"""# int8 performance

Generated by `{data['command']}` (git {data['git']}) on
{data['machine']['cpu']}, ISA {', '.join(data['machine']['isa'])}; one
thread everywhere. FMA peak of one core measured in the same run:
{data['fma_peak_gflops_1core']:.0f} GFLOP/s fp32.

## Models

Tessel int8 is the QDQ model written by `tessel.quantize_onnx` (per-channel
int8 weights, uint8 activations, minmax calibration); ONNX Runtime 1.30
(onnxruntime-node, CPU EP) runs the same QDQ file. "ptq8" is the
compiler's own static int8, `tessel-compile --quantize=int8
--calibration-data=@calibration.npy` of the float model on the same
samples (only the inputs of convolutions and matmuls are quantized, so it
rounds less than the QDQ file, which also quantizes their outputs). "dyn8" is
`tessel-compile --quantize=int8-dynamic` of the float model (transformers).
Ratios: "... vs own fp32" is Tessel fp32 / that int8 form;
"Tessel int8 vs ORT int8" is ORT's time / Tessel's (above 1: Tessel is
faster). Cosines compare whole outputs. Medians move between runs on this
shared machine (ONNX Runtime's int8 ResNet-50 has measured 16.3 to 20.1 ms
and MobileNetV2 3.6 to 6.0 ms in different runs of this script): compare
the ratios of one run, and repeat a run before trusting a small one.

{text}

## Kernel

`bench/int8_gemm.c`: `tessel_kernel_matmul_u8s8_i32` (AVX-512 VNNI, or AVX2 where the CPU lacks it) against
`tessel_kernel_matmul_f32` on the same shapes, weights packed beforehand, in
G multiply-adds per second.

| M x N x K | fp32 GMAC/s | int8 GMAC/s | int8 speed-up |
|---|---|---|---|
{gemm}

`bench/int8_depthwise.c`: `tessel_kernel_depthwise_conv2d_u8s8` with the
epilogue a QDQ model gives it (per-channel scale, bias, ReLU6, quantized to
uint8) against `tessel_kernel_depthwise_conv2d_nhwc_f32` (bias and ReLU6,
f32 out) on MobileNetV2's 3x3 depthwise layers.

| input H x W x C | stride | fp32 GMAC/s | int8 GMAC/s | int8 speed-up |
|---|---|---|---|---|
{dw}

`bench/int8_conv.c`: `tessel_kernel_conv2d_u8s8_requant`, the implicit
GEMM that reads the im2col rows in place, against an im2col copy followed
by `tessel_kernel_matmul_u8s8_requant` (what the compiler emitted before),
with a QDQ model's epilogue (per-channel scale, bias, ReLU, quantized to
uint8), on ResNet-50's convolutions other than the 1x1 stride-1 ones
(their input already padded).

| padded input H x W x C | filter | stride | F | im2col + matmul GMAC/s | implicit GMAC/s | speed-up |
|---|---|---|---|---|---|---|
{conv}
"""
    path = os.path.join(ROOT, "docs", "performance-int8.md")
    doc += kept_sections(path_text(path), doc)  # read before truncating
    with open(path, "w") as f:
        f.write(doc)


def path_text(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def kept_sections(old, doc):
    """The `## ` sections of the previous page that this run does not write
    (other machines' results, written by hand or by earlier runs there),
    in their order, so a run on one CPU keeps the others'."""
    generated = {l for l in doc.splitlines() if l.startswith("## ")}
    kept, keep = [], False
    for line in old.splitlines(keepends=True):
        if line.startswith("## "):
            keep = line.rstrip("\n") not in generated
        if keep:
            kept.append(line)
    return ("\n" + "".join(kept)) if kept else ""


if __name__ == "__main__":
    main(sys.argv[1:])
