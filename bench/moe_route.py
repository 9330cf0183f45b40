#!/usr/bin/env python3
"""Mixture-of-experts routing benchmark: compose.route's grouped lowering
(each expert on just its tokens) against the dense reference lowering (every
expert on every token) and PyTorch (index_select / index_add_ MoE), one
thread, in one run. A second table times the same-sized MoE written in
PyTorch (dense masked form) and imported from torch and from its ONNX
export: raised to compose.route by the importer (grouped and dense
lowerings) against the exported graph compiled as it is (--raise-moe=false)
and PyTorch eager.

    /usr/bin/python3 bench/moe_route.py [--tokens 64,256,1024] [--runs 20]
                                         [--docs]

The MoE is the issue's: 8 experts, top-2 softmax gating (renormalized),
d 256, FFN hidden 512 with ReLU. Prints median latencies and the ratios
dense/grouped and PyTorch/grouped (> 1: grouped is faster); --docs writes
the table to docs/performance-moe.md.
"""
import argparse
import datetime
import io
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("TESSEL_BUILD_DIR", os.path.join(ROOT, "build"))
sys.path.insert(0, os.path.join(BUILD, "python"))
sys.path.insert(0, os.path.join(ROOT, "test", "python"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import tessel  # noqa: E402
from compose_models import MoE, torch_moe  # noqa: E402
import torch_models  # noqa: E402


def torch_median(module, x, runs, warmup=3):
    times = []
    with torch.no_grad():
        for i in range(warmup + runs):
            t0 = time.perf_counter()
            module(x)
            if i >= warmup:
                times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", default="64,256,1024")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--docs", action="store_true",
                    help="write the table to docs/performance-moe.md")
    args = ap.parse_args()
    torch.set_num_threads(1)
    rows = []
    for tokens in [int(t) for t in args.tokens.split(",")]:
        m = MoE(tokens=tokens, d=256, hidden=512, experts=8, k=2, seed=1)
        x = np.random.default_rng(0).normal(size=(tokens, 256)).astype(np.float32)
        ref = torch_moe(m)
        with torch.no_grad():
            want = ref(torch.from_numpy(x)).numpy()
        times = {}
        for mode in ("grouped", "dense"):
            compiled = tessel.compile(m.mlir(), route_lowering=mode, threads=1)
            err = np.abs(compiled(x) - want).max() / np.abs(want).max()
            if err > 1e-3:
                sys.exit(f"moe_route: {mode} at {tokens} tokens differs from "
                         f"PyTorch (relative error {err:.2e})")
            times[mode] = compiled.benchmark(args.runs, x)["median_ms"]
        times["torch"] = torch_median(ref, torch.from_numpy(x), args.runs)
        rows.append((tokens, times))
        print(f"tokens {tokens:5d}: grouped {times['grouped']:8.3f} ms  "
              f"dense {times['dense']:8.3f} ms  torch {times['torch']:8.3f} ms  "
              f"dense/grouped {times['dense'] / times['grouped']:5.2f}x  "
              f"torch/grouped {times['torch'] / times['grouped']:5.2f}x",
              flush=True)
    imported = [(tokens, bench_imported(tokens, args.runs))
                for tokens in [int(t) for t in args.tokens.split(",")]]
    if args.docs:
        write_docs(rows, imported, args)


def bench_imported(tokens, runs):
    """The issue's MoE as PyTorch code (torch_models.TopKMoE: 8 experts,
    top-2, d 256, hidden 512, GELU), through the torch importer and through
    torch.onnx.export + the ONNX importer."""
    torch.manual_seed(0)
    model = torch_models.TopKMoE(d=256, hidden=512, experts=8, k=2).eval()
    x = torch.randn(1, tokens, 256)
    with torch.no_grad():
        want = model(x)[0].numpy()
    f = io.BytesIO()
    torch.onnx.export(model, (x,), f, opset_version=13, input_names=["x"])
    variants = {
        "torch, raised, grouped": (model, dict(route_lowering="grouped")),
        "torch, raised, dense": (model, dict(route_lowering="dense")),
        "torch, not raised": (model, dict(raise_moe=False)),
        "ONNX, raised, grouped": (f.getvalue(), dict(route_lowering="grouped")),
    }
    times = {}
    for name, (source, opts) in variants.items():
        example = (x,) if source is model else None
        raised = "compose.route" in str(tessel.compiler.to_module(
            source, example, raise_moe=opts.get("raise_moe", True)))
        if raised != ("not raised" not in name):
            sys.exit(f"moe_route: {name}: the importer did not do what the "
                     "variant says")
        compiled = tessel.compile(source, example, threads=1, **opts)
        got = compiled(x.numpy())[0]
        err = np.abs(got - want).max() / np.abs(want).max()
        if err > 1e-3:
            sys.exit(f"moe_route: {name} at {tokens} tokens differs from "
                     f"PyTorch (relative error {err:.2e})")
        times[name] = compiled.benchmark(runs, x.numpy())["median_ms"]
    times["PyTorch eager"] = torch_median(model, x, runs)
    g = times["torch, raised, grouped"]
    print(f"tokens {tokens:5d} (imported): " + "  ".join(
        f"{n} {t:.3f} ms ({t / g:.2f}x)" for n, t in times.items()),
        flush=True)
    return times


def write_docs(rows, imported, args):
    cmd = "/usr/bin/python3 bench/moe_route.py --tokens " + args.tokens + \
        f" --runs {args.runs} --docs"
    lines = [
        "# Mixture-of-experts routing: grouped vs dense",
        "",
        "Generated by `bench/moe_route.py`; the route lowerings are described "
        "in [dialects/compose.md](dialects/compose.md).",
        "",
        f"Command: `{cmd}` ({datetime.datetime.now():%Y-%m-%d %H:%M}, one "
        "thread, median of the runs).",
        "",
        "MoE: 8 experts, top-2 softmax gating (renormalized), d 256, FFN "
        "hidden 512 (ReLU), fp32. *grouped*: Tessel's default lowering "
        "(counting sort by expert, each expert on its own rows); *dense*: "
        "the reference lowering (every expert on every token); *PyTorch*: "
        "the same layer with `index_select`/`index_add_`, "
        "`torch.set_num_threads(1)`. Each output is checked against "
        "PyTorch (relative error ≤ 1e-3) before timing.",
        "",
        "| tokens | grouped (ms) | dense (ms) | PyTorch (ms) | dense / grouped "
        "| PyTorch / grouped |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for tokens, t in rows:
        lines.append(
            f"| {tokens} | {t['grouped']:.3f} | {t['dense']:.3f} | "
            f"{t['torch']:.3f} | {t['dense'] / t['grouped']:.2f}x | "
            f"{t['torch'] / t['grouped']:.2f}x |")
    names = list(imported[0][1])
    lines += [
        "",
        "## Imported from PyTorch and ONNX",
        "",
        "The same-sized MoE written as PyTorch code "
        "(`test/python/torch_models.py` `TopKMoE`: softmax gate, top-2, "
        "renormalized, a dense gate matrix by `scatter`, every expert's "
        "output masked and summed; GELU experts) compiled from the module "
        "(Tessel's torch importer) and from `torch.onnx.export`'s graph. "
        "*raised*: the importer recognized the mixture of experts and "
        "emitted `compose.route` (docs/importers/onnx.md); *not raised*: "
        "`raise_moe=False`, the exported dense graph compiled as it is. "
        "Ratios are time / (torch, raised, grouped): above 1, the grouped "
        "route is faster. Every output is checked against PyTorch "
        "(relative error ≤ 1e-3) before timing.",
        "",
        "| tokens | " + " | ".join(f"{n} (ms)" for n in names) + " |",
        "|---:|" + "---:|" * len(names),
    ]
    for tokens, t in imported:
        g = t["torch, raised, grouped"]
        lines.append(f"| {tokens} | " + " | ".join(
            f"{t[n]:.3f}" + ("" if n == names[0] else f" ({t[n] / g:.2f}x)")
            for n in names) + " |")
    path = os.path.join(ROOT, "docs", "performance-moe.md")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
