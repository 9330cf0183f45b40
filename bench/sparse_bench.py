#!/usr/bin/python3
"""Sparse benchmark: Tessel on pruned models, sparse against its own dense
code, side by side with ONNX Runtime on the same pruned files.

    /usr/bin/python3 bench/sparse_bench.py [--models bert768] [--runs 10]
        [--density 0.1]
    /usr/bin/python3 bench/sparse_bench.py --sweep [--docs]   (bench/run.sh --sparse)

For each model (exported by test/models/export_models.py, cached in
bench/work/NAME/), every 2-D constant right operand of a MatMul or Gemm
(the projection weights, taken as `[in, out]`) is pruned at test time, no
fine-tuning:

  block4x1      90% of the 4 x 1 blocks (4 consecutive outputs at one
                input; the "4 x 1" blocks of the `[out, in]` weight) with
                the smallest L1 norm set to zero
  unstructured  90% of the weights with the smallest magnitude
  2:4, 1:4      in every 4 consecutive inputs of each output, the 2 (3)
                of least magnitude (N:M, docs/sparsity.md)

(`--density` sets the kept fraction of the first two); with `--kinds
int8` the matmuls pruned in quads of 4 inputs (`quad1x4`, what the int8
kernels skip) at `--density` and unstructured at half of it, both sides
compiled with `--quantize=int8`; with `--kinds qdq` the quad-pruned file
quantized by `tessel.quantize_onnx` (a QDQ model, which ONNX Runtime runs
on its own int8 kernels); or, with
`--kinds convs`, for CNNs: every convolution's weights but the stem's and
the classifier's pruned by magnitude to `--conv-density` with
`tessel.sparsity.prune`. Then, one thread
each: `tessel-compile -O3 --sparsity=off` (dense) and the default
`--sparsity=auto` (with `--sparsity-report`, which says what each matmul
got), timed by `tessel-run --benchmark` alternately (five rounds, the
fastest run of each), and onnxruntime-node on the same pruned file (its
fastest of as many runs). The
sparse outputs are checked against the dense ones. The FMA peak of one
core is measured in the same run. Results: bench/results/sparse.json
(sparse-convs.json with `--kinds convs`).

`--sweep` is bench/run.sh's sparse section: bench/sparse_gemm.c on BERT's
768 x 768 projection (R = 1, 4, 16 at 50-95% zeros; N:M 2:4, 1:4, 1:8),
the BERT-style encoder pruned unstructured and in 4 x 1 blocks at each of
`--densities` (and 2:4, 1:4), ResNet-50's convolutions at those of them from 10% up,
and int8 (`--quantize=int8` both ways) the encoder in quads at 80% and 90%
and unstructured at 95%, ResNet-50's convolutions in quads at 80%;
bench/results/sparse-sweep.json, and with `--docs`
docs/performance-sparse.md and its chart (bench/sparse_docs.py).
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)
import bench_models as bm  # noqa: E402  (export, timing and machine helpers)
import int8_bench as ib  # noqa: E402  (sh, ort, fma_peak)


def log(msg):
    print(f"sparse_bench: {msg}", file=sys.stderr, flush=True)


def matmul_weights(model):
    """{initializer name: transposed?} for the 2-D right operands of MatMul
    and Gemm (Gemm's with transB hold [out, in])."""
    inits = {t.name: t for t in model.graph.initializer}
    names = {}
    for node in model.graph.node:
        if node.op_type in ("MatMul", "Gemm") and node.input[1] in inits:
            if len(inits[node.input[1]].dims) == 2:
                trans = node.op_type == "Gemm" and any(
                    a.name == "transB" and a.i for a in node.attribute)
                names[node.input[1]] = trans
    return names


def prune(w, kind, density):
    """`w` ([in, out]) pruned the `kind` way, keeping about `density`."""
    if kind == "unstructured":
        t = np.quantile(np.abs(w), 1.0 - density)
        return np.where(np.abs(w) > t, w, 0).astype(w.dtype)
    if kind == "block4x1":
        k, n = w.shape
        norms = np.abs(w[:, : n - n % 4].reshape(k, n // 4, 4)).sum(-1)
        t = np.quantile(norms, 1.0 - density)
        keep = np.repeat(norms > t, 4, axis=1)
        out = w.copy()
        out[:, : n - n % 4] *= keep
        return out
    if kind == "quad1x4":  # 4 consecutive inputs of an output (int8 quads)
        k, n = w.shape
        kq = k - k % 4
        norms = np.abs(w[:kq].reshape(kq // 4, 4, n)).sum(1)
        t = np.quantile(norms, 1.0 - density)
        out = w.copy()
        out[:kq] *= np.repeat(norms > t, 4, axis=0)
        return out
    if ":" in kind:  # n:m, e.g. 2:4: the n of largest magnitude kept
        keep_n, m = (int(x) for x in kind.split(":"))
        k, n = w.shape
        blocks = np.abs(w[: k - k % m].reshape(k // m, m, n))
        order = np.argsort(blocks, axis=1)
        keep = np.ones_like(blocks, bool)
        np.put_along_axis(keep, order[:, : m - keep_n, :], False, axis=1)
        out = w.copy()
        out[: k - k % m] *= keep.reshape(k - k % m, n)
        return out
    raise ValueError(kind)


def pruned_convs(src, dst, density):
    """Every Conv weight but the first (the stem) pruned by magnitude with
    tessel.sparsity.prune; the classifier (Gemm/MatMul) kept."""
    sys.path.insert(0, os.path.join(ROOT, "build", "python"))
    import tessel.sparsity
    model = onnx.load(src)
    convs = [n.input[1] for n in model.graph.node if n.op_type == "Conv"]
    keep = set(convs[:1]) | {n.input[1] for n in model.graph.node
                             if n.op_type in ("Gemm", "MatMul")}
    saved = {t.name: onnx.TensorProto() for t in model.graph.initializer if t.name in keep}
    for t in model.graph.initializer:
        if t.name in saved:
            saved[t.name].CopyFrom(t)
    out = tessel.sparsity.prune(model, "magnitude", 1.0 - density)
    zeros = total = 0
    for t in out.graph.initializer:
        if t.name in saved:
            t.CopyFrom(saved[t.name])
        elif t.name in convs:
            w = numpy_helper.to_array(t)
            zeros += int((w == 0).sum())
            total += w.size
    onnx.save(out, dst)
    return len(set(convs)) - 1, zeros / max(total, 1)


def quad_pruned_convs(src, dst, density):
    """Every Conv weight but the first (the stem) pruned in quads of 4
    input channels at one tap (the int8 kernels' blocks; what
    tessel.sparsity.prune(block=(1, 4)) keeps), keeping `density` of them by
    L1 norm; weights whose channels 4 does not divide are kept."""
    model = onnx.load(src)
    convs = [n.input[1] for n in model.graph.node if n.op_type == "Conv"]
    zeros = total = 0
    for t in model.graph.initializer:
        if t.name not in convs[1:]:
            continue
        w = numpy_helper.to_array(t)
        f, c = w.shape[0], w.shape[1]
        if c % 4:
            continue
        q = w.reshape(f, c // 4, 4, -1)
        norms = np.abs(q).sum(2)
        keep = norms > np.quantile(norms, 1.0 - density)
        w = (q * keep[:, :, None, :]).reshape(w.shape).astype(w.dtype)
        zeros += int((w == 0).sum())
        total += w.size
        t.CopyFrom(numpy_helper.from_array(w, t.name))
    onnx.save(model, dst)
    return len(set(convs)) - 1, zeros / max(total, 1)


def pruned_model(src, dst, kind, density):
    model = onnx.load(src)
    names = matmul_weights(model)
    zeros = total = 0
    for t in model.graph.initializer:
        if t.name in names:
            w = numpy_helper.to_array(t)
            # Pruned as [in, out], whichever way it is stored.
            w = prune(w.T, kind, density).T if names[t.name] else prune(w, kind, density)
            zeros += int((w == 0).sum())
            total += w.size
            t.CopyFrom(numpy_helper.from_array(w, t.name))
    onnx.save(model, dst)
    return len(names), zeros / max(total, 1)


# Alternating rounds of timed_pair (and ORT's runs: as many as a side's).
ROUNDS = 5


def timed_pair(tools, path, x_path, runs, *builds):
    """Compiles each (artifact, output, flags) of `builds`, saves its
    output, then times them alternately, five rounds of `runs`: the
    fastest run of each. On this shared machine the medians of one
    artifact moved 5-13% between rounds (the other core's load); the
    fastest runs agree within 1-2%, but a slow spell can last a minute:
    with three rounds ResNet-50's dense side once ran no faster than 33
    ms against 29.5 in the runs around it."""
    for so, out, flags in builds:
        ib.sh([tools["compile"], path, "-O3", "-o", so] + flags)
        ib.sh([tools["run"], so, "--input=@" + x_path, "--threads=1", "--output=@" + out])
    best = [float("inf")] * len(builds)
    for _ in range(ROUNDS):
        for i, (so, _, _) in enumerate(builds):
            r = bm.parse_benchmark_line(ib.sh([tools["run"], so, "--input=@" + x_path,
                                               "--threads=1", f"--benchmark={runs}"]))
            best[i] = min(best[i], r["min_ms"])
    return best


def int8_flags(mdir):
    """tessel-compile's static int8 flags, calibrated on the samples
    bench/int8_bench.py keeps in mdir (8 random ones like the input, made
    here if missing)."""
    cpath = os.path.join(mdir, "calibration.npy")
    if not os.path.exists(cpath):
        x = np.load(os.path.join(mdir, "input.npy"))
        rng = np.random.default_rng(0)
        np.save(cpath, np.stack([rng.standard_normal(x.shape).astype(x.dtype)
                                 for _ in range(8)]))
    return ["--quantize=int8", "--calibration-data=@" + cpath]


def qdq_file(path, mdir):
    """`path` quantized by tessel.quantize_onnx (static int8 QDQ, calibrated
    on int8_flags' samples), written beside it; ORT runs it with its own
    int8 kernels, Tessel as any QDQ model."""
    sys.path.insert(0, os.path.join(ROOT, "build", "python"))
    import tessel
    cal = np.load(int8_flags(mdir)[1].split("@", 1)[1])
    out = path[:-len(".onnx")] + ".qdq.onnx"
    tessel.quantize_onnx(path, list(cal), out)
    return out


def measure(tools, name, mdir, kind, density, runs, int8=False, qdq=False):
    """One pruned variant of `name`: Tessel dense and sparse (with the
    report), the sparse output against the dense one, and ORT (on the
    float file; with int8 Tessel quantizes it, static, calibrated; with
    qdq both run the file tessel.quantize_onnx makes of it)."""
    src = os.path.join(mdir, name + ".onnx")
    x_path = os.path.join(mdir, "input.npy")
    tag = kind.replace(":", "of") + ("" if density is None else f"-{density:g}")
    path = os.path.join(mdir, f"{name}.{tag}.onnx")
    if kind == "dense":
        path, layers, zeros = src, len(matmul_weights(onnx.load(src))), 0.0
    elif kind == "convs-unstructured":
        layers, zeros = pruned_convs(src, path, density)
    elif kind == "convs-quad1x4":
        layers, zeros = quad_pruned_convs(src, path, density)
    else:
        layers, zeros = pruned_model(src, path, kind, density)
    row = {"model": name, "pruning": kind, "density": density,
           "matmul_weights": layers, "zero_fraction": round(zeros, 4)}
    if int8:
        row["precision"] = "int8"
        tag += ".int8"
    if qdq:
        row["precision"] = "int8-qdq"
        tag += ".qdq"
        path = qdq_file(path, mdir)
    extra = int8_flags(mdir) if int8 else []
    try:
        off = os.path.join(mdir, f"{tag}.dense.so")
        auto = os.path.join(mdir, f"{tag}.auto.so")
        out_off = os.path.join(mdir, f"out_{tag}_dense.npy")
        out_auto = os.path.join(mdir, f"out_{tag}_auto.npy")
        report = os.path.join(mdir, f"{tag}.sparsity.txt")
        row["tessel_dense_ms"], row["tessel_sparse_ms"] = timed_pair(
            tools, path, x_path, runs, (off, out_off, ["--sparsity=off"] + extra),
            (auto, out_auto, [f"--sparsity-report={report}"] + extra))
        lines = open(report).read().splitlines()
        row["matmuls"] = len(lines)
        row["sparse_matmuls"] = sum(l.endswith("-> sparse") for l in lines)
        row["speedup"] = round(row["tessel_dense_ms"] / row["tessel_sparse_ms"], 2)
        a, b = np.load(out_auto), np.load(out_off)
        row["max_rel_diff_vs_dense"] = float(np.abs(a - b).max() /
                                             max(np.abs(b).max(), 1e-30))
        # ORT's fastest of as many runs as timed_pair's rounds.
        row["ort_ms"] = ib.ort(path, x_path, os.path.join(mdir, f"out_{tag}_ort.npy"),
                               ROUNDS * runs, stat="min_ms", budget=60)
        row["sparse_vs_ort"] = round(row["ort_ms"] / row["tessel_sparse_ms"], 2)
    except bm.Failure as e:
        row["error"] = str(e)
    log(json.dumps(row))
    return row


def table(rows):
    out = ["| model | pruning | zeros | sparse layers | Tessel dense | Tessel sparse "
           "| speed-up | ORT | Tessel sparse vs ORT |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            out.append(f"| {r['model']} | {r['pruning']} | - | - | error: {r['error']} |")
            continue
        out.append(f"| {r['model']} | {r['pruning']} | {r['zero_fraction']:.2f} | "
                   f"{r['sparse_matmuls']} of {r['matmuls']} | {r['tessel_dense_ms']:.2f} ms | "
                   f"{r['tessel_sparse_ms']:.2f} ms | {r['speedup']:.2f}x | {r['ort_ms']:.2f} ms | "
                   f"{r['sparse_vs_ort']:.2f}x |")
    return "\n".join(out)


def floats(text):
    return [float(x) for x in text.split(",") if x]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=None,
                    help="default: bert768 (matmuls), resnet50 (convs)")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--density", type=float, default=0.1)
    ap.add_argument("--kinds", default="matmuls",
                    choices=["matmuls", "convs", "int8", "int8-convs", "qdq"],
                    help="int8: the matmuls pruned in quads of 4 inputs "
                    "(quad1x4, the int8 kernels' blocks) and unstructured at "
                    "--density / 2, compiled with --quantize=int8 both ways; "
                    "int8-convs: the convolutions but the stem in quads of 4 "
                    "channels, keeping --conv-density, int8 both ways; "
                    "qdq: the matmuls in quads as int8, then the file "
                    "tessel.quantize_onnx makes of it, run as it is by both")
    ap.add_argument("--conv-density", type=float, default=0.2)
    ap.add_argument("--sweep", action="store_true",
                    help="the sparse section of bench/run.sh: BERT's matmuls "
                    "and ResNet-50's convolutions across --densities, and the "
                    "sparse GEMM kernel; writes bench/results/sparse-sweep.json")
    ap.add_argument("--densities", default="0.5,0.3,0.2,0.1,0.05",
                    help="kept fractions for --sweep")
    ap.add_argument("--docs", action="store_true",
                    help="with --sweep: also docs/performance-sparse.{md,png}")
    args = ap.parse_args(argv)
    tools = {"compile": os.path.join(ROOT, "build", "bin", "tessel-compile"),
             "run": os.path.join(ROOT, "build", "bin", "tessel-run")}
    data = {"command": "/usr/bin/python3 bench/sparse_bench.py " + " ".join(argv),
            "machine": bm.machine_info(), "git": bm.git_rev(),
            "fma_peak_gflops_1core": ib.fma_peak(), "rows": []}
    if args.sweep:
        return sweep(tools, args, data)
    kinds = {"matmuls": (("dense", None), ("block4x1", args.density),
                         ("unstructured", args.density), ("2:4", 0.5), ("1:4", 0.25)),
             "convs": (("dense", None), ("convs-unstructured", args.conv_density)),
             "int8": (("dense", None), ("quad1x4", args.density),
                      ("unstructured", args.density / 2)),
             "int8-convs": (("dense", None), ("convs-quad1x4", args.conv_density)),
             "qdq": (("dense", None), ("quad1x4", args.density))
             }[args.kinds]
    models = args.models or ("resnet50" if "convs" in args.kinds else "bert768")
    for name in models.split(","):
        mdir, _ = bm.export_model(name, rebuild=False)
        for kind, density in kinds:
            data["rows"].append(measure(tools, name, mdir, kind, density, args.runs,
                                        int8=args.kinds.startswith("int8"),
                                        qdq=args.kinds == "qdq"))
    os.makedirs(os.path.join(BENCH, "results"), exist_ok=True)
    out_name = {"matmuls": "sparse.json", "convs": "sparse-convs.json",
                "int8": "sparse-int8.json",
                "int8-convs": "sparse-int8-convs.json",
                "qdq": "sparse-qdq.json"}[args.kinds]
    with open(os.path.join(BENCH, "results", out_name), "w") as f:
        json.dump(data, f, indent=1)
    print(table(data["rows"]))
    return 0


def gemm_kernel():
    """bench/sparse_gemm.c on BERT's 768 x 768 projection (128 tokens)."""
    exe = os.path.join(BENCH, "work", "sparse_gemm")
    ib.sh(["cc", "-O2", "-I", os.path.join(ROOT, "build", "include"),
           os.path.join(BENCH, "sparse_gemm.c"), ib.kernel_library(), "-lpthread", "-lm",
           "-o", exe])
    rows = []
    text = ib.sh([exe, "128", "768", "768"], env=dict(os.environ, TESSEL_NUM_THREADS="1"))
    for line in text.splitlines():
        if line.startswith("sparse_gemm:"):
            # key=value pairs; a bare "lanes" marks the lane-order packing
            # (TESSEL_KERNEL_LANES), else the row-block order.
            kv = {"layout": "blocks"}
            for t in line.split()[1:]:
                k, eq, v = t.partition("=")
                if eq:
                    kv[k] = v
                else:
                    kv["layout"] = k
            if float(kv["density"]) == 0.0:
                continue  # no nonzeros: the moves alone (sparse_ratios.py)
            rows.append({k: (int(v) if k in ("M", "N", "K", "R") else
                             v if k in ("nm", "layout") else float(v))
                         for k, v in kv.items()})
    return rows


def sweep(tools, args, data):
    dens = floats(args.densities)
    data["gemm_kernel"] = gemm_kernel()
    mdir, _ = bm.export_model("bert768", rebuild=False)
    data["rows"].append(measure(tools, "bert768", mdir, "dense", None, args.runs))
    for kind in ("unstructured", "block4x1"):
        for d in dens:
            data["rows"].append(measure(tools, "bert768", mdir, kind, d, args.runs))
    for kind, d in (("2:4", 0.5), ("1:4", 0.25)):
        data["rows"].append(measure(tools, "bert768", mdir, kind, d, args.runs))
    mdir, _ = bm.export_model("resnet50", rebuild=False)
    for d in [d for d in dens if d >= 0.1]:
        data["rows"].append(measure(tools, "resnet50", mdir, "convs-unstructured", d,
                                    args.runs))
    # int8 (--quantize=int8 both ways): the quad-pruned encoder and
    # ResNet-50, and the encoder unstructured at 95%.
    mdir, _ = bm.export_model("bert768", rebuild=False)
    for kind, d in (("dense", None), ("quad1x4", 0.2), ("quad1x4", 0.1),
                    ("unstructured", 0.05)):
        data["rows"].append(measure(tools, "bert768", mdir, kind, d, args.runs, int8=True))
    mdir, _ = bm.export_model("resnet50", rebuild=False)
    data["rows"].append(measure(tools, "resnet50", mdir, "convs-quad1x4", 0.2, args.runs,
                                int8=True))
    os.makedirs(os.path.join(BENCH, "results"), exist_ok=True)
    with open(os.path.join(BENCH, "results", "sparse-sweep.json"), "w") as f:
        json.dump(data, f, indent=1)
    print(table(data["rows"]))
    if args.docs:
        import sparse_docs
        sparse_docs.write(data, os.path.join(ROOT, "docs"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
