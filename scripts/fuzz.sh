#!/usr/bin/env bash
# Runs the libFuzzer targets (test/fuzz): each parser of user input in the
# runtime: .npy files, artifact manifests, inline tensors, composition
# files, and whole artifact files through the loader.
#
#   bash scripts/fuzz.sh [RUNS] [TARGET...]     (default 1000000, all five)
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
ninja -C "$build" fuzz_npy fuzz_manifest fuzz_tensortext fuzz_composition \
  fuzz_artifact tessel-seal
for t in "${targets[@]}"; do
  corpus="$build/fuzz-corpus/$t"
  mkdir -p "$corpus"
  cp -n "$root/test/fuzz/corpus/$t"/* "$corpus/" 2>/dev/null || true
  case "$t" in
    npy) /usr/bin/python3 -c "import numpy as np; np.save('$corpus/seed.npy', np.arange(6, dtype='<f4').reshape(2, 3)); np.save('$corpus/seed_i1.npy', np.array([True, False]))" ;;
    # Without coverage instrumentation: libFuzzer keeps pointers to an
    # instrumented library's counters after the loader unloads it.
    artifact) clang-22 -shared -fPIC -DFAKE_SINGLE -I"$root/include" \
                "$root/test/unit/fake_artifact.c" -o "$corpus/seed.so" &&
              "$build/bin/tessel-seal" "$corpus/seed.so" ;;
  esac
  exe="$build/bin/fuzz_${t//_/}"
  echo "== fuzz $t: $runs runs"
  logf="$build/fuzz-$t.log"
  rc=0
  (cd "$build" && ASAN_OPTIONS="detect_leaks=1" "$exe" -runs="$runs" \
     -max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
     "$corpus" >"$logf" 2>&1) || rc=$?
  grep -E "^(Done|stat::number_of_executed_units|stat::peak_rss_mb)" "$logf" || true
  if [ "$rc" -ne 0 ]; then
    grep -E "==[0-9]+==ERROR|SUMMARY|Test unit written" "$logf" || tail -20 "$logf"
    echo "fuzz $t: FAILED (exit $rc), log: $logf"
    exit 1
  fi
done
