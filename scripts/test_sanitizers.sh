#!/usr/bin/env bash
# The runtime, the kernel library, tessel-run and their tests (ctest: unit
# tests, the C API, numpy interop, the tessel-run command line, the kernel
# suites) built with clang-22's AddressSanitizer + UndefinedBehaviorSanitizer
# (LeakSanitizer included: leaks fail a test) and run. Installs the sanitizer
# runtime (libclang-rt-22-dev) if missing. Build folder:
# ${TESSEL_SANITIZE_BUILD_DIR:-build-sanitize}; sanitizers:
# ${TESSEL_SANITIZE:-address,undefined} (thread for ThreadSanitizer).
# The compiler is not in this build: see docs/testing.md.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TESSEL_SANITIZE_BUILD_DIR:-$root/build-sanitize}"
sanitize="${TESSEL_SANITIZE:-address,undefined}"
bash "$root/scripts/install_clang_rt.sh"
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DTESSEL_BUILD_COMPILER=OFF -DTESSEL_SANITIZE="$sanitize" >/dev/null
fi
ninja -C "$build"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
export TSAN_OPTIONS="halt_on_error=1:suppressions=$root/test/unit/tsan.supp:${TSAN_OPTIONS:-}"
ctest --test-dir "$build" -j "$(nproc)" --output-on-failure
