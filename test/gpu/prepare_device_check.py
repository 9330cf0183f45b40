#!/usr/bin/env python3
"""Prepares the GPU device check: compiles every end-to-end model for
--target=cuda here (no GPU needed), with its inputs and references, into one
folder that run_device_check.sh runs on a machine with an NVIDIA GPU.

    prepare_device_check.py OUTDIR [--cuda-arch sm_90] [--models ...]

What OUTDIR gets:
  bin/, lib/            tessel-run and the runtime library (the device
                        machine has no LLVM: nothing is compiled there)
  cases.txt             one case a line: NAME ARTIFACT FUNCTION RTOL ATOL
                        INPUT... -- EXPECTED...
  expect_fail.txt       NAME ARTIFACT MESSAGE-PATTERN: loads that must fail
                        with a clear error (an architecture newer than the
                        device's)
  bench.txt             NAME ARTIFACT INPUT...: timed with --benchmark
  *.so, *.npy           the artifacts, inputs and references

References: the ONNX models' PyTorch outputs (export_models.py), and for
the per-op e2e files (test/e2e/ops_*.mlir, the example models) the outputs
of the same model compiled for the CPU: the issue's bar is "matches the
CPU". Cases are checked at rtol 1e-3, atol 1e-4 (f32), or at rtol and
atol 1e-2 with --precision=f16|bf16 (16-bit products).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "test", "e2e"))
import e2e_refs  # noqa: E402
import run_e2e  # noqa: E402

ONNX_MODELS = ["resnet18", "bert", "gpt", "moe"]
MLIR_MODELS = ["examples/mlp.mlir", "examples/cnn.mlir"] + sorted(
    os.path.join("test/e2e", f) for f in os.listdir(os.path.join(REPO, "test/e2e"))
    if f.startswith("ops_") and f.endswith(".mlir"))


def tool(build, name):
    return os.path.join(build, "bin", name)


def run(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"prepare_device_check.py: {' '.join(cmd)} failed:\n{r.stdout}")
    return r.stdout


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("outdir")
    p.add_argument("--build", default=os.path.join(REPO, "build"))
    p.add_argument("--cuda-arch", default="sm_90")
    p.add_argument("--models", default=",".join(ONNX_MODELS))
    p.add_argument("--no-ops", action="store_true",
                   help="skip the per-op e2e files")
    p.add_argument("--precision", default="f32", choices=["f32", "bf16", "f16"],
                   help="--precision of the CUDA artifacts; f16/bf16 cases "
                        "are checked at rtol and atol 1e-2")
    args = p.parse_args()
    out = os.path.abspath(args.outdir)
    os.makedirs(out, exist_ok=True)
    compile_ = tool(args.build, "tessel-compile")
    runner = tool(args.build, "tessel-run")
    os.makedirs(os.path.join(out, "bin"), exist_ok=True)
    os.makedirs(os.path.join(out, "lib"), exist_ok=True)
    shutil.copy(runner, os.path.join(out, "bin"))
    for f in os.listdir(os.path.join(args.build, "lib")):
        if f.startswith("libTesselRuntime.so"):
            src = os.path.join(args.build, "lib", f)
            shutil.copy(os.path.realpath(src), os.path.join(out, "lib", f))
    cases, bench = [], []

    def cuda(src, dst, *extra):
        run([compile_, src, "--target=cuda", f"--cuda-arch={args.cuda_arch}",
             f"--precision={args.precision}", "-o", os.path.join(out, dst),
             *extra])

    # The bar: rtol 1e-3 in f32, 1e-2 with 16-bit products.
    tol = "1e-3 1e-4" if args.precision == "f32" else "1e-2 1e-2"

    # ONNX models against PyTorch.
    for name in [m for m in args.models.split(",") if m]:
        work = os.path.join(out, "work_" + name)
        run([sys.executable, os.path.join(REPO, "test/models/export_models.py"),
             name, work])
        cuda(os.path.join(work, name + ".onnx"), name + ".so")
        for f in ("input.npy", "output.npy"):
            shutil.copy(os.path.join(work, f), os.path.join(out, f"{name}.{f}"))
        shutil.rmtree(work)
        cases.append(f"{name} {name}.so main {tol} {name}.input.npy -- "
                     f"{name}.output.npy")
        bench.append(f"{name} {name}.so {name}.input.npy")

    # Per-op files against the CPU.
    for rel in ([] if args.no_ops else MLIR_MODELS):
        src = os.path.join(REPO, rel)
        stem = os.path.splitext(os.path.basename(rel))[0]
        cpu = os.path.join(out, stem + ".cpu.so")
        run([compile_, src, "-o", cpu])
        cuda(src, stem + ".so")
        sigs = run_e2e.parse_signatures(run([runner, cpu, "--print_signature"]))
        for fname, (ins, outs) in sigs.items():
            case = e2e_refs.REFS.get(fname) or e2e_refs.Case(fname, None, {}, 1e-5, 1e-4, False)
            _, paths = run_e2e.make_inputs(case, f"{stem}.{fname}", ins, 0, out)
            refs = [os.path.join(out, f"{stem}.{fname}.cpu{i}.npy")
                    for i in range(len(outs))]
            run([runner, cpu, f"--function={fname}",
                 *[f"--input=@{q}" for q in paths],
                 *[f"--output=@{q}" for q in refs]])
            cases.append(
                f"{stem}.{fname} {stem}.so {fname} {tol} " +
                " ".join(os.path.basename(q) for q in paths) + " -- " +
                " ".join(os.path.basename(q) for q in refs))
        os.remove(cpu)

    # The kernels' binaries: where this machine has the CUDA toolkit the
    # artifacts above carry a cubin for --cuda-arch next to the PTX (a
    # fatbin). One built for sm_80 runs on a newer GPU from that PTX (the
    # driver compiles it); one with the PTX alone is the load-time baseline.
    loads = []
    mlp_case = next((c for c in cases if c.startswith("mlp.main ")), None)
    if mlp_case:
        run([compile_, os.path.join(REPO, "examples/mlp.mlir"), "--target=cuda",
             "--cuda-arch=sm_80", "-o", os.path.join(out, "mlp_sm80.so")])
        f = mlp_case.split()
        cases.append(" ".join(["mlp_sm80.main", "mlp_sm80.so"] + f[2:]))
    for name in [m for m in args.models.split(",") if m in ("bert", "gpt")]:
        work = os.path.join(out, "work_" + name)
        run([sys.executable, os.path.join(REPO, "test/models/export_models.py"),
             name, work])
        cuda(os.path.join(work, name + ".onnx"), name + "_ptx.so",
             "--cuda-binary=ptx")
        shutil.rmtree(work)
        cases.append(f"{name}_ptx {name}_ptx.so main {tol} {name}.input.npy -- "
                     f"{name}.output.npy")
        loads.append(f"{name} {name}.so {name}.input.npy")
        loads.append(f"{name}_ptx {name}_ptx.so {name}.input.npy")

    # An architecture newer than any lent device: the load must say so.
    expect_fail = []
    if os.path.exists(os.path.join(REPO, "examples/mlp.mlir")):
        run([compile_, os.path.join(REPO, "examples/mlp.mlir"), "--target=cuda",
             "--cuda-arch=sm_120", "-o", os.path.join(out, "mlp_sm120.so")])
        expect_fail.append("mlp_sm120 mlp_sm120.so artifact built for sm_120, "
                           "device is sm_")

    # The GEMM of the bar (4096^3), f32 operands as inputs.
    gemm = os.path.join(out, "gemm4096.mlir")
    with open(gemm, "w") as f:
        f.write("func.func @main(%a: tensor<1x4096x4096xf32> {tessel.name = \"a\"},"
                " %b: tensor<1x4096x4096xf32> {tessel.name = \"b\"})"
                " -> (tensor<1x4096x4096xf32> {tessel.name = \"c\"}) {\n"
                "  %za = \"tosa.const\"() <{values = dense<0.0> : tensor<1xf32>}>"
                " : () -> tensor<1xf32>\n"
                "  %c = tosa.matmul %a, %b, %za, %za : (tensor<1x4096x4096xf32>,"
                " tensor<1x4096x4096xf32>, tensor<1xf32>, tensor<1xf32>)"
                " -> tensor<1x4096x4096xf32>\n"
                "  return %c : tensor<1x4096x4096xf32>\n}\n")
    cuda(gemm, "gemm4096.so")
    os.remove(gemm)
    bench.append("gemm4096 gemm4096.so GEN:1x4096x4096 GEN:1x4096x4096")

    for fname, lines in (("cases.txt", cases), ("bench.txt", bench),
                         ("expect_fail.txt", expect_fail),
                         ("loads.txt", loads)):
        with open(os.path.join(out, fname), "w") as f:
            f.write("\n".join(lines) + "\n")
    print(f"prepared {len(cases)} cases, {len(bench)} benchmarks in {out}")


if __name__ == "__main__":
    main()
