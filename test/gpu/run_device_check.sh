#!/usr/bin/env bash
# Runs what prepare_device_check.py prepared, on a machine with an NVIDIA
# GPU: every case through tessel-run against its reference, the loads that
# must fail, then the benchmarks, with PyTorch's (cuBLAS) GEMM in the same
# run for the ratio. Prints one PASS/FAIL line per case and a summary; exit 1
# on any failure.
#
#   run_device_check.sh DIR [RESULTS.txt]
set -u
here=$(cd "$(dirname "$0")" && pwd)
dir=$(cd "$1" && pwd)
results=${2:-/dev/null}
export LD_LIBRARY_PATH="$dir/lib:${LD_LIBRARY_PATH:-}"
run="$dir/bin/tessel-run"
cd "$dir"
pass=0; fail=0
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader | tee -a "$results"
while read -r name so fn rtol atol rest; do
  [ -z "$name" ] && continue
  ins=${rest%% -- *}; exps=${rest#* -- }
  args=()
  for i in $ins; do args+=("--input=@$i"); done
  for e in $exps; do args+=("--expected_output=@$e"); done
  if outp=$(timeout "${CASE_TIMEOUT:-120}" "$run" "$so" --function="$fn" --rtol="$rtol" --atol="$atol" "${args[@]}" 2>&1) \
     && grep -q "SUCCESS" <<<"$outp"; then
    echo "PASS: $name" | tee -a "$results"; pass=$((pass+1))
  else
    echo "FAIL: $name: $(tail -c 600 <<<"$outp")" | tee -a "$results"; fail=$((fail+1))
  fi
done < cases.txt
while read -r name so pattern; do
  [ -z "$name" ] && continue
  outp=$(timeout "${CASE_TIMEOUT:-120}" "$run" "$so" --input="0*[8,64]" 2>&1); rc=$?
  if [ $rc -ne 0 ] && grep -q "$pattern" <<<"$outp"; then
    echo "PASS: $name fails clearly: $outp" | tee -a "$results"; pass=$((pass+1))
  else
    echo "FAIL: $name (rc $rc): $outp" | tee -a "$results"; fail=$((fail+1))
  fi
done < expect_fail.txt
if [ -f mlp.so ]; then
  outp=$(TESSEL_CUDA_DEVICE=99 timeout "${CASE_TIMEOUT:-120}" "$run" mlp.so --input="0*[8,64]" 2>&1); rc=$?
  if [ $rc -ne 0 ] && grep -q "TESSEL_CUDA_DEVICE=99" <<<"$outp"; then
    echo "PASS: bad device ordinal fails clearly: $outp" | tee -a "$results"; pass=$((pass+1))
  else
    echo "FAIL: bad device ordinal (rc $rc): $outp" | tee -a "$results"; fail=$((fail+1))
  fi
fi
echo "device check: $pass passed, $fail failed" | tee -a "$results"
# Load time: one tessel-run call (load, the kernels' modules, one call),
# best of 3 wall-clock times; a fatbin's cubin against the PTX alone.
[ -f loads.txt ] && python3 - "$run" <<'PY' | tee -a "$results"
import os, subprocess, sys, time
def best_of(cmd, env, n=3):
    best = None
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       env=env)
        t = time.perf_counter() - t0
        best = t if best is None else min(best, t)
    return best
# Warm: the driver's compute cache holds what it compiled from PTX at an
# earlier load; cold: the cache off (CUDA_CACHE_DISABLE=1), as at a first
# load on a machine.
cold_env = dict(os.environ, CUDA_CACHE_DISABLE="1")
for line in open("loads.txt"):
    f = line.split()
    if len(f) != 3:
        continue
    cmd = [sys.argv[1], f[1], "--input=@" + f[2]]
    print(f"load+first call {f[0]}: {best_of(cmd, os.environ):.3f} s warm, "
          f"{best_of(cmd, cold_env):.3f} s with the driver's cache off")
PY
# Benchmarks: median of N runs after a warm-up; times include the copies.
python3 - "$dir" <<'PY' | tee -a "$results"
import numpy as np, sys, os
d = sys.argv[1]
rng = np.random.default_rng(0)
for line in open(os.path.join(d, "bench.txt")):
    for tok in line.split()[2:]:
        if tok.startswith("GEN:"):
            # GEN:SHAPE[:DTYPE], e.g. GEN:1x4096x4096:f16 (default f32)
            spec, _, dtype = tok[4:].partition(":")
            shape = [int(x) for x in spec.split("x")]
            v = rng.standard_normal(shape, dtype=np.float32)
            np.save(os.path.join(d, "gen_" + tok[4:].replace(":", "_") + ".npy"),
                    v.astype(np.float16) if dtype == "f16" else v)
PY
while read -r name so rest; do
  [ -z "$name" ] && continue
  args=()
  for i in $rest; do
    case $i in GEN:*) g=${i#GEN:}; args+=("--input=@gen_${g//:/_}.npy");; *) args+=("--input=@$i");; esac
  done
  n=20; case $name in gemm4096*) n=10;; esac
  echo "bench $name: $(timeout "${BENCH_TIMEOUT:-300}" "$run" "$so" "${args[@]}" --benchmark=$n 2>&1 | tr '\n' ' ')" | tee -a "$results"
done < bench.txt
# PyTorch on the same GPU, for the ratios.
models=$(awk '$1 !~ /^gemm4096/ {print $1}' bench.txt)
[ -n "$models" ] && python3 "$here/torch_times.py" $models 2>&1 | grep -v Warning | tee -a "$results"
python3 - <<'PY' 2>&1 | tee -a "$results"
import torch, time
a = torch.randn(4096, 4096, device="cuda"); b = torch.randn(4096, 4096, device="cuda")
def t(f, n=10):
    f(); torch.cuda.synchronize()
    s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(n): f()
    e.record(); torch.cuda.synchronize()
    return s.elapsed_time(e) / n
torch.backends.cuda.matmul.allow_tf32 = False
f32 = t(lambda: a @ b)
torch.backends.cuda.matmul.allow_tf32 = True
tf32 = t(lambda: a @ b)
ah, bh = a.half(), b.half()
f16 = t(lambda: ah @ bh)
fl = 2 * 4096**3
print(f"cublas 4096^3 (torch {torch.__version__}): f32 {f32:.3f} ms ({fl/f32/1e9:.1f} TFLOP/s), "
      f"tf32 {tf32:.3f} ms ({fl/tf32/1e9:.1f}), f16 {f16:.3f} ms ({fl/f16/1e9:.1f})")
PY
[ $fail -eq 0 ]
