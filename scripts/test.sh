#!/usr/bin/env bash
# The whole test suite from a fresh machine: installs dependencies, builds,
# then runs the GoogleTest/CLI suite (ctest), the runtime/kernel, lit and
# pytest suites under ASan+UBSan (scripts/test_sanitizers.sh), the lit suite (FileCheck tests
# of dialects and passes, driver tests, end-to-end tests against numpy, ONNX
# importer tests, real models against PyTorch) and the ONNX conformance run
# over the ONNX backend test data. Ends with one summary line:
# "tessel: N passed, N failed".
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TESSEL_BUILD_DIR:-$root/build}"
"$root/scripts/setup.sh" || exit 1
"$root/scripts/build.sh" || { echo "build failed"; exit 1; }

log="$build/test-logs"
mkdir -p "$log"
jobs="$(nproc)"
# Each phase's start, in seconds since the script began (CI budget: 45 min).
phase() { echo "== $1 [${SECONDS}s]"; }
phase "setup and build done"

phase "ctest (runtime, npy, tessel-run CLI)"
ctest --test-dir "$build" -j "$jobs" --output-on-failure 2>&1 | tee "$log/ctest.txt"
ctest_rc=${PIPESTATUS[0]}

phase "sanitizers (runtime, kernels, compiler, Python extension under ASan+UBSan+LSan)"
TESSEL_SANITIZE_BUILD_DIR="${TESSEL_SANITIZE_BUILD_DIR:-$build-sanitize}" \
  bash "$root/scripts/test_sanitizers.sh" 2>&1 | tee "$log/sanitize.txt"
san_rc=${PIPESTATUS[0]}

phase "lit (dialects, passes, drivers, end-to-end)"
/usr/lib/llvm-22/bin/lit -sv -j "$jobs" "$build/test" 2>&1 | tee "$log/lit.txt"
lit_rc=${PIPESTATUS[0]}

phase "ONNX conformance (ONNX backend test data)"
/usr/bin/python3 "$root/test/onnx/conformance.py" --bin "$build/bin" \
  --work "$build/onnx-conformance" --jobs "$jobs" -q 2>&1 | tee "$log/onnx.txt"
onnx_rc=${PIPESTATUS[0]}

phase "pytest (the tessel Python package)"
# One worker per core (pytest-xdist, from setup.sh): the tests are
# independent processes' work in their own tmp_path folders; 281 s serial,
# 149 s on 2 workers.
xdist=()
/usr/bin/python3 -c "import xdist" 2>/dev/null && xdist=(-n "$(nproc)")
PYTHONPATH="$build/python" TESSEL_BUILD_DIR="$build" /usr/bin/python3 -m pytest \
  -q -p no:cacheprovider "${xdist[@]}" --durations=10 "$root/test/python" 2>&1 | tee "$log/pytest.txt"
py_rc=${PIPESTATUS[0]}

phase "all suites done"
# Counts from the runners' own summaries.
ct_total=$(sed -n 's/.*tests passed, \([0-9]*\) tests failed out of \([0-9]*\).*/\2/p' "$log/ctest.txt" | tail -1)
ct_failed=$(sed -n 's/.*tests passed, \([0-9]*\) tests failed out of \([0-9]*\).*/\1/p' "$log/ctest.txt" | tail -1)
ct_total=${ct_total:-0}; ct_failed=${ct_failed:-0}
san_passed=$(sed -n 's/^sanitizers: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$log/sanitize.txt" | tail -1)
san_failed=$(sed -n 's/^sanitizers: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$log/sanitize.txt" | tail -1)
san_passed=${san_passed:-0}; san_failed=${san_failed:-0}
lit_passed=$(sed -n 's/^ *Passed *: *\([0-9]*\).*/\1/p' "$log/lit.txt" | tail -1)
lit_xfail=$(sed -n 's/^ *Expectedly Failed *: *\([0-9]*\).*/\1/p' "$log/lit.txt" | tail -1)
lit_failed=$(awk -F: '/^ *(Failed|Unresolved|Unexpectedly Passed|Timed Out) *:/ {split($2, a, " "); n += a[1]} END {print n + 0}' "$log/lit.txt")
lit_passed=${lit_passed:-0}; lit_xfail=${lit_xfail:-0}; lit_failed=${lit_failed:-0}

onnx_passed=$(sed -n 's/^onnx conformance: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$log/onnx.txt" | tail -1)
onnx_failed=$(sed -n 's/^onnx conformance: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$log/onnx.txt" | tail -1)
onnx_passed=${onnx_passed:-0}; onnx_failed=${onnx_failed:-0}

# pytest's last line: "N passed, M failed, K xfailed, E errors in T s".
py_summary=$(tail -1 "$log/pytest.txt")
py_count() { echo "$py_summary" | grep -o "[0-9]* $1" | head -1 | grep -o "^[0-9]*" || true; }
py_passed=$(py_count passed); py_xfail=$(py_count xfailed)
py_failed=$(py_count failed); py_errors=$(py_count error)
py_passed=${py_passed:-0}; py_xfail=${py_xfail:-0}
py_failed=$(( ${py_failed:-0} + ${py_errors:-0} ))

passed=$(( ct_total - ct_failed + san_passed + lit_passed + lit_xfail + onnx_passed + py_passed + py_xfail ))
failed=$(( ct_failed + san_failed + lit_failed + onnx_failed + py_failed ))
if [ "$ctest_rc" -ne 0 ] && [ "$ct_failed" -eq 0 ]; then failed=$((failed + 1)); fi
if [ "$san_rc" -ne 0 ] && [ "$san_failed" -eq 0 ]; then failed=$((failed + 1)); fi
if [ "$lit_rc" -ne 0 ] && [ "$lit_failed" -eq 0 ]; then failed=$((failed + 1)); fi
if [ "$onnx_rc" -ne 0 ] && [ "$onnx_failed" -eq 0 ]; then failed=$((failed + 1)); fi
if [ "$py_rc" -ne 0 ] && [ "$py_failed" -eq 0 ]; then failed=$((failed + 1)); fi
echo "ctest: $((ct_total - ct_failed)) passed, $ct_failed failed; sanitizers (ASan+UBSan ctest, lit, pytest): $san_passed passed, $san_failed failed; lit: $lit_passed passed, $lit_xfail expectedly failed, $lit_failed failed; onnx conformance: $onnx_passed passed, $onnx_failed failed; pytest: $py_passed passed, $py_xfail expectedly failed, $py_failed failed"
echo "tessel: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
