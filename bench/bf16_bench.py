#!/usr/bin/python3
"""bf16 benchmark: Tessel --precision=bf16 vs Tessel fp32 vs PyTorch bf16.

    /usr/bin/python3 bench/bf16_bench.py [--models resnet50,mobilenet_v2,bert768]
        [--runs 20] [--docs]

For each model (exported by test/models/export_models.py, cached in
bench/work/NAME/), one thread each:

  tessel fp32    tessel-compile -O3 of the float ONNX model
  tessel bf16    tessel-compile -O3 --precision=bf16 of the same model:
                 convolutions and matmuls multiply bf16-rounded operands
                 (vdpbf16ps) and sum in f32
  torch fp32     the PyTorch module export_models.py builds
  torch bf16     the same module and input converted to bfloat16 (PyTorch's
                 CPU bf16 path, oneDNN where the CPU has AVX512_BF16; its
                 activations are bf16 too, not only the products)

with the agreement of the outputs with the fp32 reference (cosine
similarity; for classifiers whether the top-1 class is the same). The FMA
peak of one core and the bf16 kernel's rate per layer shape
(bench/bf16_conv.c) are measured in the same run. Results:
bench/results/bf16.json; with --docs also docs/performance-bf16.md.
"""
import argparse
import json
import os
import sys

import numpy as np

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)
import bench_models as bm  # noqa: E402
import int8_bench as ib  # noqa: E402  (tessel(), cosine(), fma_peak(), kernel_bench())

DEFAULT_MODELS = ["resnet50", "mobilenet_v2", "bert768"]


def log(msg):
    print(f"bf16_bench: {msg}", file=sys.stderr, flush=True)


def torch_worker(name, mdir, runs, out_prefix):
    """In a subprocess: PyTorch fp32 and bf16 timings (one thread) and
    outputs. Prints one JSON line."""
    import torch
    model, x = bm.torch_module(name, mdir)
    torch.set_num_threads(1)
    res = {"torch_version": torch.__version__}
    for key, dtype in (("torch_fp32", torch.float32), ("torch_bf16", torch.bfloat16)):
        m = model.to(dtype)
        xi = x.to(dtype) if x.is_floating_point() else x
        with torch.inference_mode():
            res[key + "_ms"] = bm.time_calls(lambda: m(xi), runs, min_runs=5, warmup=3,
                                             budget=20)["median_ms"]
            y = m(xi)
        np.save(f"{out_prefix}_{key}.npy", y.float().numpy())
    print(json.dumps(res))


def run_model(name, tools, args):
    mdir, _ = bm.export_model(name, rebuild=False)
    onnx = os.path.join(mdir, name + ".onnx")
    x = os.path.join(mdir, "input.npy")
    ref = np.load(os.path.join(mdir, "output.npy"))
    res, outs = {"model": name}, {}
    for key, extra in (("tessel_fp32", []), ("tessel_bf16", ["--precision=bf16"])):
        out = os.path.join(mdir, f"out_{key}.npy")
        try:
            res[key + "_ms"] = ib.tessel(tools, onnx, os.path.join(mdir, key + ".O3.so"), x,
                                         out, args.runs, extra)
            outs[key] = np.load(out)
            log(f"{name}: {key} {res[key + '_ms']:.2f} ms")
        except bm.Failure as e:
            res[key + "_ms"], res[key + "_error"] = None, str(e)
            log(f"{name}: {key} failed: {e}")
    prefix = os.path.join(mdir, "out")
    try:
        so = ib.sh([bm.PY, os.path.abspath(__file__), "--torch-worker", name, mdir,
                    str(args.runs), prefix], timeout=1800)
        t = json.loads(so.strip().splitlines()[-1])
        res["torch_version"] = t["torch_version"]
        for key in ("torch_fp32", "torch_bf16"):
            res[key + "_ms"] = t[key + "_ms"]
            outs[key] = np.load(f"{prefix}_{key}.npy")
            log(f"{name}: {key} {res[key + '_ms']:.2f} ms")
    except bm.Failure as e:
        res["torch_error"] = str(e)
        log(f"{name}: torch failed: {e}")
    for key in ("tessel_fp32", "tessel_bf16", "torch_bf16"):
        if key in outs:
            res[key + "_cos_float"] = ib.cosine(outs[key], ref)
            if name not in ib.TRANSFORMERS:
                res[key + "_top1_eq_float"] = bool(outs[key].argmax() == ref.argmax())
    return res


def table(data):
    lines = ["| model | Tessel fp32 | Tessel bf16 | PyTorch fp32 | PyTorch bf16 "
             "| bf16 vs own fp32 | Tessel bf16 vs PyTorch bf16 | cos(Tessel bf16, fp32) "
             "| cos(PyTorch bf16, fp32) | top-1 same (Tessel, PyTorch) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    ms = lambda v: f"{v:.2f} ms" if v else "-"  # noqa: E731
    yn = lambda v: "-" if v is None else ("yes" if v else "no")  # noqa: E731
    for r in data["models"]:
        f, b = r.get("tessel_fp32_ms"), r.get("tessel_bf16_ms")
        tf, tb = r.get("torch_fp32_ms"), r.get("torch_bf16_ms")
        lines.append(
            f"| {r['model']} | {ms(f)} | {ms(b)} | {ms(tf)} | {ms(tb)} | {ib.ratio(f, b)} "
            f"| {ib.ratio(tb, b)} | {r.get('tessel_bf16_cos_float', float('nan')):.5f} "
            f"| {r.get('torch_bf16_cos_float', float('nan')):.5f} "
            f"| {yn(r.get('tessel_bf16_top1_eq_float'))}, "
            f"{yn(r.get('torch_bf16_top1_eq_float'))} |")
    return "\n".join(lines)


def write_docs(data, text):
    conv = "\n".join(f"| {r['H']}x{r['W']}x{r['C']} | {r['K']}x{r['K']} | {r['F']} "
                     f"| {r['f32_gflops']:.0f} | {r['bf16_gflops']:.0f} | {r['speedup']:.2f}x |"
                     for r in data["bf16_conv"])
    doc = f"""# bf16 performance

Generated by `{data['command']}` (git {data['git']}) on
{data['machine']['cpu']}, ISA {', '.join(data['machine']['isa'])}; one
thread everywhere. FMA peak of one core measured in the same run:
{data['fma_peak_gflops_1core']:.0f} GFLOP/s fp32 (bf16 `vdpbf16ps` does two
multiply-adds per lane: twice that).

## Models

`tessel-compile -O3 --precision=bf16` of the float ONNX model against the
same without the flag, and against PyTorch {data['models'][0].get('torch_version', '?')}
running the module in bfloat16 (`model.to(torch.bfloat16)`; its activations
are bf16 as well, Tessel's stay f32). ONNX Runtime's CPU provider has no
bf16 convolution or matmul, so it has no column here. Cosine similarity and
top-1 are against the fp32 reference output.

{text}

## The kernel

`tessel_kernel_conv2d_nhwc_bf16` against `tessel_kernel_conv2d_nhwc_f32`
(the direct convolution, not Winograd) on single layers
(`bench/bf16_conv.c`), GFLOP/s:

| input HxWxC | filter | F | fp32 | bf16 | speed-up |
|---|---|---|---|---|---|
{conv}

Where the fp32 model runs 3x3 convolutions as Winograd F(2x2, 3x3) (2.25x
fewer multiplications), bf16 runs them directly: ResNet-50 gains less than
the kernel's speed-up. See [quantization.md](quantization.md#bf16---precisionbf16).
"""
    with open(os.path.join(ROOT, "docs", "performance-bf16.md"), "w") as f:
        f.write(doc)


def main(argv):
    if argv and argv[0] == "--torch-worker":
        torch_worker(argv[1], argv[2], int(argv[3]), argv[4])
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=",".join(DEFAULT_MODELS))
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--docs", action="store_true")
    args = ap.parse_args(argv)
    tools = {"compile": os.path.join(ROOT, "build", "bin", "tessel-compile"),
             "run": os.path.join(ROOT, "build", "bin", "tessel-run")}
    os.makedirs(os.path.join(BENCH, "work"), exist_ok=True)
    data = {"command": "/usr/bin/python3 bench/bf16_bench.py " + " ".join(argv),
            "machine": bm.machine_info(), "git": bm.git_rev(),
            "fma_peak_gflops_1core": ib.fma_peak(),
            "bf16_conv": ib.kernel_bench("bf16_conv.c", ("H", "W", "C", "F", "K")),
            "models": []}
    for name in args.models.split(","):
        data["models"].append(run_model(name, tools, args))
    os.makedirs(os.path.join(BENCH, "results"), exist_ok=True)
    with open(os.path.join(BENCH, "results", "bf16.json"), "w") as f:
        json.dump(data, f, indent=1)
    text = table(data)
    print(text)
    if args.docs:
        write_docs(data, text)


if __name__ == "__main__":
    main(sys.argv[1:])
