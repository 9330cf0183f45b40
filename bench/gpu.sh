#!/usr/bin/env bash
# The CUDA target against PyTorch on the same GPU (docs/performance-gpu.md).
# Two steps, because the machine with the GPU needs no LLVM: artifacts,
# inputs, references, tessel-run and the runtime library are prepared here
# and travel.
#
#   bash bench/gpu.sh prepare OUT [--precision f16|bf16]   # here (no GPU needed)
#   bash bench/gpu.sh prepare-gemm OUT                # Hopper GEMMs (sm_90a)
#   bash bench/gpu.sh run OUT RESULTS.txt             # where the GPU is
#
# `run` checks every case first (PASS/FAIL lines), then prints per model
# tessel-run's median per call and kernel_median_ms, PyTorch's per call on
# the same GPU, and the 4096^3 GEMM against cuBLAS. Raw results of earlier
# runs: bench/results/gpu-*.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
case "${1:-}" in
  prepare) shift; exec /usr/bin/python3 "$here/test/gpu/prepare_device_check.py" "$@" ;;
  prepare-gemm) shift; exec /usr/bin/python3 "$here/test/gpu/prepare_wgmma_check.py" "$@" ;;
  run) shift; exec bash "$here/test/gpu/run_device_check.sh" "$@" ;;
  *) echo "usage: bench/gpu.sh prepare OUT [--precision f16|bf16] | prepare-gemm OUT | run OUT RESULTS.txt" >&2; exit 2 ;;
esac
