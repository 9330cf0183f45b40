#!/usr/bin/env python3
"""A symbolic batch against a fixed one: Tessel compiles a model exported
with `dynamic_axes` (batch known only at run time) once and runs it at any
batch; this measures what that costs against the same model exported with
batch 1, and against ONNX Runtime on the dynamic file, in the same run.

  /usr/bin/python3 bench/dynamic_batch.py [--models a,b] [--res 224]
      [--runs 10] [--json bench/results/dynamic-batch.json]
      [--doc docs/performance-dynamic-batch.md]

For each model (torchvision's, seeded random weights, opset 17; and
`transformer_encoder`, torch.nn.TransformerEncoder of 4 layers, d 256, 4
heads, 128 tokens, exported with a symbolic batch *and* sequence): Tessel on the
static file at batch 1, Tessel on the dynamic file at batch 1 and 4, ORT
(bench/ort_bench.js, onnxruntime-node from bench/run.sh) on the dynamic file
at batch 1 and 4; one thread, median of --runs after a warm-up. The dynamic
artifact's batch-4 output is checked against PyTorch. The FMA peak of one
core is measured in the same run (bench/fma_peak.c) and the CPU recorded.
"""
import argparse
import datetime
import json
import os
import subprocess
import sys

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)
import bench_models as bm  # noqa: E402  (machine_info, git_rev)
import int8_bench as ib  # noqa: E402  (fma_peak)

MODELS = ["resnet18", "resnet50", "mobilenet_v2", "efficientnet_b0",
          "squeezenet1_0", "densenet121", "regnet_y_400mf", "convnext_tiny",
          "shufflenet_v2_x1_0", "transformer_encoder"]


def run(cmd, timeout=1800):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if r.returncode:
        raise RuntimeError((r.stderr or r.stdout).strip().splitlines()[0][:200])
    return r.stdout


def tessel_ms(so, x, runs):
    out = run([os.path.join(ROOT, "build", "bin", "tessel-run"), so, "--input=@" + x,
               "--threads=1", f"--benchmark={runs}"])
    return float(out.split("median_ms=")[1].split()[0])


def ort_ms(onnx_path, x, runs):
    out = run(["node", os.path.join(BENCH, "ort_bench.js"), "--model=" + onnx_path,
               "--input=@" + x, "--threads=1", f"--runs={runs}", "--budget=30"])
    return json.loads(out.strip().splitlines()[-1])["results"]["1"]["median_ms"]


def measure(name, res, runs, work):
    import numpy as np
    import torch
    import torchvision
    torch.manual_seed(0)
    axes = {0: "batch"}
    if name == "transformer_encoder":
        layer = torch.nn.TransformerEncoderLayer(256, 4, 1024, batch_first=True,
                                                 dropout=0.0)
        model = torch.nn.TransformerEncoder(layer, 4, enable_nested_tensor=False).eval()
        x4 = torch.randn(4, 128, 256)
        axes = {0: "batch", 1: "seq"}
    else:
        model = getattr(torchvision.models, name)(weights=None).eval()
        x4 = torch.randn(4, 3, res, res)
    files = {k: os.path.join(work, f"{name}_{k}.onnx") for k in ("static", "dynamic")}
    torch.onnx.export(model, (x4[:1],), files["static"], opset_version=17,
                      input_names=["x"], output_names=["y"])
    torch.onnx.export(model, (x4,), files["dynamic"], opset_version=17,
                      input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": axes, "y": axes})
    xs = {n: os.path.join(work, f"{name}_x{n}.npy") for n in (1, 4)}
    np.save(xs[1], x4[:1].numpy())
    np.save(xs[4], x4.numpy())
    row = {"model": name}
    compile_ = os.path.join(ROOT, "build", "bin", "tessel-compile")
    for k, path in files.items():
        so = path[:-5] + ".so"
        try:
            run([compile_, path, "-o", so])
            row[f"tessel_{k}_b1_ms"] = tessel_ms(so, xs[1], runs)
            if k == "dynamic":
                row["tessel_dynamic_b4_ms"] = tessel_ms(so, xs[4], max(runs // 2, 3))
                out = os.path.join(work, f"{name}_y4.npy")
                run([os.path.join(ROOT, "build", "bin", "tessel-run"), so,
                     "--input=@" + xs[4], "--output=@" + out])
                with torch.no_grad():
                    ref = model(x4).numpy()
                row["dynamic_b4_max_rel_err"] = float(
                    np.abs(np.load(out) - ref).max() / np.abs(ref).max())
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            row[f"tessel_{k}_error"] = str(e)
    for n in (1, 4):
        try:
            row[f"ort_dynamic_b{n}_ms"] = ort_ms(files["dynamic"], xs[n], runs)
        except (RuntimeError, subprocess.TimeoutExpired, ValueError, KeyError) as e:
            row["ort_error"] = str(e)
    return row


def fmt(v, digits=2):
    return "-" if v is None else f"{v:.{digits}f}"


def table(rows):
    lines = ["| model | Tessel static b1 (ms) | Tessel dynamic b1 (ms) | dynamic / static | "
             "ORT dynamic b1 (ms) | ORT / Tessel b1 | Tessel dynamic b4 (ms) | "
             "ORT dynamic b4 (ms) | ORT / Tessel b4 | max rel. err. b4 |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        s, d = r.get("tessel_static_b1_ms"), r.get("tessel_dynamic_b1_ms")
        o1, d4, o4 = r.get("ort_dynamic_b1_ms"), r.get("tessel_dynamic_b4_ms"), \
            r.get("ort_dynamic_b4_ms")
        ratio = lambda a, b: a / b if a and b else None  # noqa: E731
        dyn = fmt(d) if d else "FAILED: " + r.get("tessel_dynamic_error", "?")
        lines.append(
            f"| {r['model']} | {fmt(s)} | {dyn} | {fmt(ratio(d, s))}x | {fmt(o1)} | "
            f"{fmt(ratio(o1, d))}x | {fmt(d4)} | {fmt(o4)} | {fmt(ratio(o4, d4))}x | "
            f"{r.get('dynamic_b4_max_rel_err', float('nan')):.1e} |")
    return "\n".join(lines)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--res", type=int, default=224)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--json", default=os.path.join(BENCH, "results", "dynamic-batch.json"))
    p.add_argument("--doc", default=None,
                   help="also write the table into this markdown file")
    args = p.parse_args(argv)
    work = os.path.join(BENCH, "work", "dynamic")
    os.makedirs(work, exist_ok=True)
    data = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "git": bm.git_rev(), "machine": bm.machine_info(),
            "fma_peak_gflops_1core": ib.fma_peak(), "resolution": args.res,
            "threads": 1, "rows": []}
    print(f"# {data['machine']['cpu']}, FMA peak {data['fma_peak_gflops_1core']} GFLOP/s "
          f"(1 core), {args.res}x{args.res}, 1 thread", flush=True)
    for name in args.models.split(","):
        row = measure(name, args.res, args.runs, work)
        data["rows"].append(row)
        print(json.dumps(row), flush=True)
    print(table(data["rows"]))
    with open(args.json, "w") as f:
        json.dump(data, f, indent=1)
    if args.doc:
        with open(args.doc) as f:
            text = f.read()
        start, end = "<!-- dynamic-batch table -->", "<!-- end dynamic-batch table -->"
        head, rest = text.split(start, 1)
        tail = rest.split(end, 1)[1]
        header = (f"{data['machine']['cpu']}, FMA peak "
                  f"{data['fma_peak_gflops_1core']:.0f} GFLOP/s on one core (measured in the "
                  f"same run), {args.res}x{args.res}, one thread, {data['date'][:10]}, "
                  f"git {data['git']}.\n\n")
        with open(args.doc, "w") as f:
            f.write(head + start + "\n" + header + table(data["rows"]) + "\n" + end + tail)


if __name__ == "__main__":
    main(sys.argv[1:])
