#!/usr/bin/env bash
# Runs the libFuzzer targets (test/fuzz): each parser of user input in the
# runtime: .npy files, artifact manifests, inline tensors, composition
# files, and whole artifact files through the loader.
#
#   bash scripts/fuzz.sh [RUNS] [TARGET...]     (default 1000000, all five
#                                               runtime targets)
#
# Targets: npy manifest tensor_text composition artifact (the runtime),
# calibration (the ranges quantization makes of the calibration samples'
# values, FuzzCalibration.cpp), and
# onnx mlir_text (the compiler's front doors: ONNX bytes through the
# importer, MLIR text through tessel-compile's nesting bound, parser and
# verifier; built in ${TESSEL_FUZZ_COMPILER_BUILD_DIR:-build-fuzz-compiler}
# with the compiler instrumented too, libMLIR itself not). Seeds for them:
# the ONNX test data's node models (libonnx-testdata) and the repository's
# own .mlir tests.
#
# Builds into ${TESSEL_FUZZ_BUILD_DIR:-build-fuzz} with clang-22 and
# -fsanitize=address,undefined,fuzzer-no-link on every target. Seeds come
# from test/fuzz/corpus (text) plus, made here, a .npy written by numpy and
# a sealed hand-written artifact (test/unit/fake_artifact.c); the growing corpus lives in the build
# folder. A crash stops the run with the input saved as crash-*; turn it
# into a test (docs/testing.md).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TESSEL_FUZZ_BUILD_DIR:-$root/build-fuzz}"
runs="${1:-1000000}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(npy manifest tensor_text composition artifact)
bash "$root/scripts/install_clang_rt.sh"
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DTESSEL_BUILD_COMPILER=OFF -DTESSEL_BUILD_FUZZERS=ON \
    -DTESSEL_SANITIZE=address,undefined,fuzzer-no-link >/dev/null
fi
compiler_build="${TESSEL_FUZZ_COMPILER_BUILD_DIR:-$root/build-fuzz-compiler}"
runtime_targets=() compiler_targets=()
for t in "${targets[@]}"; do
  case "$t" in
    onnx) compiler_targets+=(fuzz_onnx) ;;
    mlir_text) compiler_targets+=(fuzz_mlirtext) ;;
    calibration) compiler_targets+=(fuzz_calibration) ;;
    *) runtime_targets+=("fuzz_${t//_/}") ;;
  esac
done
if [ ${#runtime_targets[@]} -gt 0 ]; then
  ninja -C "$build" "${runtime_targets[@]}" tessel-seal
fi
if [ ${#compiler_targets[@]} -gt 0 ]; then
  if [ ! -f "$compiler_build/build.ninja" ]; then
    cmake -G Ninja -S "$root" -B "$compiler_build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
      -DTESSEL_BUILD_TESTS=OFF -DTESSEL_BUILD_FUZZERS=ON \
      -DTESSEL_SANITIZE=address,undefined,fuzzer-no-link >/dev/null
  fi
  ninja -C "$compiler_build" "${compiler_targets[@]}"
fi
for t in "${targets[@]}"; do
  corpus="$build/fuzz-corpus/$t"
  mkdir -p "$corpus"
  cp -n "$root/test/fuzz/corpus/$t"/* "$corpus/" 2>/dev/null || true
  case "$t" in
    npy) /usr/bin/python3 -c "import numpy as np; np.save('$corpus/seed.npy', np.arange(6, dtype='<f4').reshape(2, 3)); np.save('$corpus/seed_i1.npy', np.array([True, False]))" ;;
    onnx) for m in /usr/share/libonnx-testdata/data/node/*/model.onnx; do
            cp -n "$m" "$corpus/$(basename "$(dirname "$m")").onnx"
          done ;;
    mlir_text) find "$root/test" -name '*.mlir' -size -64k | while read -r f; do
                 cp -n "$f" "$corpus/$(echo "$f" | md5sum | cut -c1-12).mlir"
               done ;;
    # Without coverage instrumentation: libFuzzer keeps pointers to an
    # instrumented library's counters after the loader unloads it.
    artifact) clang-22 -shared -fPIC -DFAKE_SINGLE -I"$root/include" \
                "$root/test/unit/fake_artifact.c" -o "$corpus/seed.so" &&
              "$build/bin/tessel-seal" "$corpus/seed.so" ;;
  esac
  exe="$build/bin/fuzz_${t//_/}"
  asan="detect_leaks=1"
  # The compiler targets share LLVM's BumpPtrAllocators with libMLIR, which
  # is not instrumented: a slab started by instrumented (inlined header)
  # code is poisoned by LLVM's annotations and never unpoisoned by the
  # library's allocations from it, a false use-after-poison. ASan's own
  # checks stay on; only LLVM's manual poisoning is ignored.
  leaks=1
  case "$t" in
    onnx) exe="$compiler_build/bin/fuzz_onnx"
          asan="$asan:allow_user_poisoning=0" ;;
    # A crash of upstream's parser caught by the guard (GuardedParse.h)
    # abandons the parser's stack objects: leaks by construction, so leak
    # checking is off for this target (the ONNX target keeps it).
    mlir_text) exe="$compiler_build/bin/fuzz_mlirtext"
               asan="detect_leaks=0:allow_user_poisoning=0" leaks=0 ;;
    calibration) exe="$compiler_build/bin/fuzz_calibration" ;;
  esac
  echo "== fuzz $t: $runs runs"
  logf="$build/fuzz-$t.log"
  rc=0
  (cd "$build" && ASAN_OPTIONS="$asan" "$exe" -runs="$runs" -detect_leaks=$leaks \
     -max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
     "$corpus" >"$logf" 2>&1) || rc=$?
  grep -E "^(Done|stat::number_of_executed_units|stat::peak_rss_mb)" "$logf" || true
  if [ "$rc" -ne 0 ]; then
    grep -E "==[0-9]+==ERROR|SUMMARY|Test unit written" "$logf" || tail -20 "$logf"
    echo "fuzz $t: FAILED (exit $rc), log: $logf"
    exit 1
  fi
done
