#!/usr/bin/env python3
"""Expert parallelism benchmark: a top-k mixture-of-experts layer compiled
once for one process and once with --expert-parallel=N, the second run under
`mpirun -np N`, each process on one thread, timed alternately in one run.

    /usr/bin/python3 bench/expert_parallel.py [--tokens 2048] [--d 1024]
        [--hidden 4096] [--experts 8] [--k 2] [--ranks 2] [--runs 5]
        [--rounds 3] [--skew] [--docs]

The layer is PyTorch code (softmax gate, top-k, renormalized weights, every
expert's ReLU FFN masked to its tokens), exported with torch.onnx.export and
compiled by tessel-compile, which raises it to compose.route. Prints each
artifact's median latency (the expert-parallel one: the slowest process's
time of each call) and the speed-up; checks that both outputs agree with
each other (rtol 1e-5) and with PyTorch. --skew biases the gate so that
every token picks the first process's experts (the worst case: that
process does all the expert work). --docs writes the table
into docs/scale-out.md between its bench markers.
"""
import argparse
import datetime
import os
import re
import shutil
import statistics
import subprocess
import sys

import numpy as np
import torch
from torch import nn

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("TESSEL_BUILD_DIR", os.path.join(ROOT, "build"))
BIN = os.path.join(BUILD, "bin")
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1"}


class MoELayer(nn.Module):
    def __init__(self, d, hidden, experts, k, gate_bias=False):
        super().__init__()
        self.k = k
        self.gate = nn.Linear(d, experts, bias=gate_bias)
        self.w1 = nn.ModuleList(nn.Linear(d, hidden) for _ in range(experts))
        self.w2 = nn.ModuleList(nn.Linear(hidden, d) for _ in range(experts))

    def forward(self, x):
        probs = torch.softmax(self.gate(x), dim=-1)
        weights, index = torch.topk(probs, self.k, dim=-1)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        gates = torch.zeros_like(probs).scatter(1, index, weights)
        out = torch.zeros_like(x)
        for e in range(len(self.w1)):
            routed = (index == e).any(dim=-1, keepdim=True)
            y = gates[:, e].unsqueeze(-1) * self.w2[e](torch.relu(self.w1[e](x)))
            out = out + torch.where(routed, y, torch.zeros_like(y))
        return out


def cpu_family():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("cpu family"):
                    return int(line.split(":")[1])
    except OSError:
        pass
    return None


def median_ms(output):
    m = re.search(r"median_ms=([0-9.]+)", output)
    if not m:
        raise RuntimeError("no benchmark line in:\n" + output)
    return float(m.group(1))


def run(cmd, env=None, timeout=1800):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                       env=dict(os.environ, **(env or {})))
    if p.returncode != 0:
        raise RuntimeError(" ".join(cmd) + " failed:\n" + p.stdout + p.stderr)
    return p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", type=int, default=2048)
    ap.add_argument("--d", type=int, default=1024)
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--experts", type=int, default=8)
    ap.add_argument("--k", type=int, default=2)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--skew", action="store_true")
    ap.add_argument("--docs", action="store_true")
    ap.add_argument("--work", default=os.path.join(ROOT, "bench", "work",
                                                   "moe_ep"))
    args = ap.parse_args()
    if not shutil.which("mpirun"):
        sys.exit("expert_parallel.py: mpirun not found (bash scripts/setup.sh)")
    os.makedirs(args.work, exist_ok=True)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    layer = MoELayer(args.d, args.hidden, args.experts, args.k,
                     gate_bias=args.skew).eval()
    if args.skew:
        # Every token's top k among the first process's experts.
        with torch.no_grad():
            layer.gate.bias.zero_()
            layer.gate.bias[: args.experts // args.ranks] = 20.0
    x = torch.from_numpy(np.random.default_rng(1).normal(
        size=(args.tokens, args.d)).astype(np.float32))
    onnx_path = os.path.join(args.work, "moe.onnx")
    torch.onnx.export(layer, (x,), onnx_path, input_names=["x"],
                      output_names=["y"], opset_version=17)
    xin = os.path.join(args.work, "x.npy")
    np.save(xin, x.numpy())
    with torch.no_grad():
        ref = layer(x).numpy()

    single = os.path.join(args.work, "single.so")
    ep = os.path.join(args.work, f"ep{args.ranks}.so")
    compile_ = os.path.join(BIN, "tessel-compile")
    run([compile_, "-O3", onnx_path, "-o", single])
    run([compile_, "-O3", onnx_path, "-o", ep,
         f"--expert-parallel={args.ranks}"])

    with open(ep, "rb") as f:
        if f"\nranks {args.ranks}\n".encode() not in f.read():
            sys.exit("expert_parallel.py: the mixture of experts was not "
                     "raised to compose.route: the artifact is not "
                     "expert-parallel")
    tessel_run = os.path.join(BIN, "tessel-run")
    y1, y2 = (os.path.join(args.work, n) for n in ("y_single.npy", "y_ep.npy"))
    run([tessel_run, single, "--input=@" + xin, "--output=@" + y1,
         "--threads=1"])
    mpirun = ["mpirun", "-np", str(args.ranks), "--bind-to", "core"]
    run(mpirun + [tessel_run, ep, "--input=@" + xin, "--output=@" + y2,
                  "--threads=1"], env=MPI_ENV)
    a, b = np.load(y1), np.load(y2)
    np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(a, ref, rtol=1e-3, atol=1e-4)

    times = {"single": [], "ep": []}
    for _ in range(args.rounds):
        times["single"].append(median_ms(run(
            [tessel_run, single, "--input=@" + xin, "--threads=1",
             f"--benchmark={args.runs}"])))
        times["ep"].append(median_ms(run(
            mpirun + [tessel_run, ep, "--input=@" + xin, "--threads=1",
                      f"--benchmark={args.runs}"], env=MPI_ENV)))
    s, e = min(times["single"]), min(times["ep"])
    fam = cpu_family()
    print(f"MoE: {args.tokens} tokens, d {args.d}, hidden {args.hidden}, "
          f"{args.experts} experts, top-{args.k}"
          f"{', skewed gate' if args.skew else ''}; CPU family {fam}")
    print(f"single process, 1 thread: {s:.2f} ms "
          f"(rounds: {', '.join(f'{t:.2f}' for t in times['single'])})")
    print(f"--expert-parallel={args.ranks}, mpirun -np {args.ranks}, 1 thread "
          f"each: {e:.2f} ms (rounds: "
          f"{', '.join(f'{t:.2f}' for t in times['ep'])})")
    print(f"speed-up: {s / e:.2f}x")
    if args.docs:
        write_docs(args, s, e, times, fam)


def write_docs(args, single, ep, times, fam):
    """Puts this configuration's row into docs/scale-out.md's table (a row
    per configuration: the same configuration's earlier row is replaced)."""
    path = os.path.join(ROOT, "docs", "scale-out.md")
    with open(path) as f:
        text = f.read()
    begin, end = "<!-- bench:begin -->", "<!-- bench:end -->"
    header = ("| tokens | d | hidden | experts | k | gate | ranks | one process "
              "(ms) | expert-parallel (ms) | speed-up | run |")
    rule = "|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---|"
    key = (f"| {args.tokens} | {args.d} | {args.hidden} | {args.experts} | "
           f"{args.k} | {'skewed to rank 0' if args.skew else 'random init'} "
           f"| {args.ranks} |")
    row = (f"{key} {single:.1f} | {ep:.1f} | **{single / ep:.2f}x** | "
           f"{datetime.datetime.now():%Y-%m-%d %H:%M}, CPU family {fam} |")
    rows = []
    if begin in text:
        old = text[text.index(begin):text.index(end)]
        rows = [line for line in old.splitlines()
                if line.startswith("| ") and not line.startswith("| tokens")
                and not line.startswith(key)]
    rows.append(row)
    block = "\n".join([
        begin,
        "Command: `/usr/bin/python3 bench/expert_parallel.py [--skew] --runs 5 "
        "--rounds 3 --docs` (each process one thread, `mpirun -np 2 "
        "--bind-to core`; fastest of the alternated rounds of 5 runs; "
        f"{os.cpu_count()} cores).",
        "",
        header, rule] + rows + [end])
    if begin in text:
        text = text[:text.index(begin)] + block + text[text.index(end) +
                                                       len(end):]
    else:
        text += "\n" + block + "\n"
    with open(path, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
