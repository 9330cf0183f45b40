#!/usr/bin/env bash
# Configures and builds Tessel (compiler, runtime, tools, unit tests) into
# ${TESSEL_BUILD_DIR:-build} with clang-22 + ninja, linking the shared
# libMLIR/libLLVM so links take seconds. A fresh build compiles the
# compiler libraries 8 sources to a translation unit (TESSEL_UNITY_BUILD,
# about 3x less CPU); for incremental work, reconfigure with
# -DTESSEL_UNITY_BUILD=0.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TESSEL_BUILD_DIR:-$root/build}"
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DTESSEL_UNITY_BUILD="${TESSEL_UNITY_BUILD:-8}"
fi
ninja -C "$build"
