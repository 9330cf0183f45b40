#!/usr/bin/env python3
"""Prepares the Hopper GEMM device check: 16-bit matmuls compiled with
--target=cuda --cuda-arch=sm_90a (TMA + wgmma kernels, see
docs/pipeline/cuda.md) here, with inputs and numpy references, into a folder
that run_device_check.sh runs on an H100/H200.

    prepare_wgmma_check.py OUTDIR [--build BUILD]

Cases cover both output tiles (256 and 128 columns), edges that TMA
zero-fills (M, N, K not multiples of the tile), several batches, and f32
and f16 outputs; each PTX is checked to hold wgmma (the kernel was chosen)
and, where ptxas is installed, to assemble without spills. The benchmarks
are the 4096^3 GEMM of issue 19's bar, with f16 and with f32 outputs
(inputs generated on the device).
"""
import argparse
import os
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

# (name, batches, M, N, K, output type)
CASES = [
    ("wgmma_512x512x256", 1, 512, 512, 256, "f32"),
    ("wgmma_edges_200x136x72", 1, 200, 136, 72, "f32"),
    ("wgmma_edges_130x264x520", 1, 130, 264, 520, "f32"),
    ("wgmma_batch3_128x256x128", 3, 128, 256, 128, "f32"),
    ("wgmma_f16out_256x512x384", 1, 256, 512, 384, "f16"),
    ("wgmma_1024x768x1024", 1, 1024, 768, 1024, "f16"),
]


def gemm_mlir(batches, m, n, k, out):
    a = f"tensor<{batches}x{m}x{k}xf16>"
    b = f"tensor<{batches}x{k}x{n}xf16>"
    c = f"tensor<{batches}x{m}x{n}x{out}>"
    return (f"func.func @main(%a: {a} {{tessel.name = \"a\"}}, %b: {b} "
            f"{{tessel.name = \"b\"}}) -> ({c} {{tessel.name = \"c\"}}) {{\n"
            "  %z = \"tosa.const\"() <{values = dense<0.0> : tensor<1xf16>}> "
            ": () -> tensor<1xf16>\n"
            f"  %c = tosa.matmul %a, %b, %z, %z : ({a}, {b}, tensor<1xf16>, "
            f"tensor<1xf16>) -> {c}\n"
            f"  return %c : {c}\n}}\n")


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if r.returncode != 0:
        sys.exit(f"prepare_wgmma_check.py: {' '.join(cmd)} failed:\n{r.stdout}")
    return r.stdout


def compile_gemm(build, out, name, batches, m, n, k, dtype):
    src = os.path.join(out, name + ".mlir")
    with open(src, "w") as f:
        f.write(gemm_mlir(batches, m, n, k, dtype))
    compile_ = os.path.join(build, "bin", "tessel-compile")
    flags = ["--target=cuda", "--cuda-arch=sm_90a"]
    ptx = os.path.join(out, name + ".ptx")
    run([compile_, src, *flags, "--emit=ptx", "-o", ptx])
    if "wgmma.mma_async" not in open(ptx).read():
        sys.exit(f"prepare_wgmma_check.py: {name}: no wgmma in the PTX")
    if shutil.which("ptxas") or os.path.exists("/usr/local/cuda/bin/ptxas"):
        print(run([sys.executable, os.path.join(HERE, "check_ptx.py"), ptx,
                   "sm_90a"]).strip())
    run([compile_, src, *flags, "-o", os.path.join(out, name + ".so")])
    os.remove(src)
    os.remove(ptx)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("outdir")
    p.add_argument("--build", default=os.path.join(REPO, "build"))
    args = p.parse_args()
    out = os.path.abspath(args.outdir)
    os.makedirs(os.path.join(out, "bin"), exist_ok=True)
    os.makedirs(os.path.join(out, "lib"), exist_ok=True)
    shutil.copy(os.path.join(args.build, "bin", "tessel-run"),
                os.path.join(out, "bin"))
    for f in os.listdir(os.path.join(args.build, "lib")):
        if f.startswith("libTesselRuntime.so"):
            shutil.copy(os.path.realpath(os.path.join(args.build, "lib", f)),
                        os.path.join(out, "lib", f))
    rng = np.random.default_rng(0)
    cases = []
    for name, batches, m, n, k, dtype in CASES:
        compile_gemm(args.build, out, name, batches, m, n, k, dtype)
        a = rng.standard_normal((batches, m, k)).astype(np.float16)
        b = rng.standard_normal((batches, k, n)).astype(np.float16)
        ref = np.matmul(a.astype(np.float64), b.astype(np.float64))
        ref = ref.astype(np.float16 if dtype == "f16" else np.float32)
        for suffix, v in (("a", a), ("b", b), ("ref", ref)):
            np.save(os.path.join(out, f"{name}.{suffix}.npy"), v)
        # f32 sums of K products in another order; f16 outputs rounded once.
        tol = "2e-3 2e-2" if dtype == "f16" else "1e-4 1e-3"
        cases.append(f"{name} {name}.so main {tol} {name}.a.npy {name}.b.npy"
                     f" -- {name}.ref.npy")
    bench = []
    for dtype in ("f16", "f32"):
        name = f"gemm4096_{dtype}out"
        compile_gemm(args.build, out, name, 1, 4096, 4096, 4096, dtype)
        bench.append(f"{name} {name}.so GEN:1x4096x4096:f16 GEN:1x4096x4096:f16")
    for fname, lines in (("cases.txt", cases), ("bench.txt", bench),
                         ("expect_fail.txt", [])):
        with open(os.path.join(out, fname), "w") as f:
            f.write("\n".join(lines) + ("\n" if lines else ""))
    print(f"prepared {len(cases)} cases, {len(bench)} benchmarks in {out}")


if __name__ == "__main__":
    main()
