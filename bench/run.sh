#!/usr/bin/env bash
# bench/run.sh: the one benchmark command.
#
#   bench/run.sh                       full run: all models, 1 and 2 threads,
#                                      GEMM/conv microbenchmark, chart + docs
#   bench/run.sh --quick               smoke run (3 small models, 1 thread)
#   bench/run.sh --models resnet18,bert --threads 1 --runs 5
#   bench/run.sh --int8                int8 rows only (bench/int8_bench.py):
#                                      Tessel int8 vs fp32 vs ORT int8 on the
#                                      same QDQ models, with output agreement
#   bench/run.sh --broad               the broad set (issue 20: 29 more models --
#                                      torchvision families, segmentation,
#                                      recurrent, transformers, MLP-Mixer,
#                                      U-Net) at 1 and 2 threads against ORT and
#                                      PyTorch; writes bench/results/broad.json
#                                      and docs/performance-broad.{md,png}
#                                      (other options as for a full run)
#   bench/run.sh --compile-time        compile time and peak memory per model
#                                      and over depth (bench/compile_time.py,
#                                      issue 22); appends to
#                                      bench/results/compile_history.jsonl and
#                                      writes docs/performance-compile.md
#   bench/run.sh --sparse              sparse section only (bench/sparse_bench.py
#                                      --sweep): the sparse GEMM kernel, BERT
#                                      pruned 50-95% (unstructured, 4x1, 2:4)
#                                      and ResNet-50's convolutions 50-90%,
#                                      each against Tessel dense and ORT on the
#                                      same pruned file; writes
#                                      docs/performance-sparse.{md,png}
#   bench/run.sh --scale-out           expert parallelism only (issue 23):
#                                      bench/expert_parallel.py with an even
#                                      and a skewed gate (one process against
#                                      mpirun -np 2), then the cost model
#                                      (bench/scale_model.py --calibrate);
#                                      writes docs/scale-out.md's table
#
# A full run also runs the int8 rows and the sparse section and writes
# docs/performance-int8.md and docs/performance-sparse.{md,png}
# (--no-int8, --no-sparse leave them out).
#
# All options go to bench/bench_models.py (see --help there); --no-docs
# keeps docs/performance.png and docs/performance.md untouched, --docs
# updates them even for a partial run (by default only a full run, i.e. all
# models at threads 1 and 2 without --quick, updates them).
#
# It installs what it needs: onnxruntime-node into bench/node_modules
# (npm install --ignore-scripts: the package's install script only tries to
# download GPU libraries; the CPU library ships inside the package) and
# Debian's python3-matplotlib (apt-get) for the chart. Tessel must be built
# (build/bin/tessel-compile, build/bin/tessel-run).
set -euo pipefail

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$BENCH")"
PY=/usr/bin/python3    # Debian's python: numpy, torch, torchvision, onnx

docs=auto
int8=auto
sparse=auto
broad=no
args=()
for a in "$@"; do
  case "$a" in
    --int8) int8=only ;;
    --no-int8) int8=no ;;
    --sparse) sparse=only ;;
    --compile-time) exec "$PY" "$BENCH/compile_time.py" ;;
    --scale-out) "$PY" "$BENCH/expert_parallel.py" --docs
                 "$PY" "$BENCH/expert_parallel.py" --skew --docs
                 exec "$PY" "$BENCH/scale_model.py" --calibrate --markdown ;;
    --broad) broad=yes ;;
    --no-sparse) sparse=no ;;
    --docs) docs=yes ;;
    --no-docs) docs=no ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"
               exec "$PY" "$BENCH/bench_models.py" --help ;;
    *) args+=("$a") ;;
  esac
done

say() { echo "run.sh: $*" >&2; }

# --- prerequisites ---------------------------------------------------------
[ -x "$PY" ] || { say "error: $PY not found"; exit 2; }
"$PY" -c 'import numpy, torch, torchvision, onnx' 2>/dev/null ||
  { say "error: $PY lacks numpy/torch/torchvision/onnx"; exit 2; }
for t in tessel-compile tessel-run; do
  [ -x "$ROOT/build/bin/$t" ] || { say "error: $ROOT/build/bin/$t missing: build Tessel first"; exit 2; }
done
command -v node >/dev/null && command -v npm >/dev/null ||
  { say "error: node and npm are needed for onnxruntime-node"; exit 2; }
command -v cc >/dev/null || { say "error: cc is needed for bench/fma_peak.c"; exit 2; }

# onnxruntime-node (version pinned in bench/package.json)
if ! (cd "$BENCH" && node ort_bench.js --version >/dev/null 2>&1); then
  say "installing onnxruntime-node into bench/node_modules (npm install --ignore-scripts)"
  (cd "$BENCH" && npm install --ignore-scripts --no-audit --no-fund >&2)
fi
ort_version="$(cd "$BENCH" && node ort_bench.js --version)" ||
  { say "error: onnxruntime-node does not load: $ort_version"; exit 2; }
say "onnxruntime-node loads: $ort_version"

# matplotlib for the chart
if ! "$PY" -c 'import matplotlib' 2>/dev/null; then
  say "installing python3-matplotlib (apt-get)"
  if ! apt-get install -y python3-matplotlib >&2; then
    apt-get update >&2 && apt-get install -y python3-matplotlib >&2 ||
      say "warning: python3-matplotlib could not be installed; no chart"
  fi
fi

# --- the benchmark ---------------------------------------------------------
cd "$ROOT"
if [ "$int8" = only ]; then
  "$PY" "$BENCH/int8_bench.py" --docs
  exit 0
fi
if [ "$broad" = yes ]; then
  "$PY" "$BENCH/bench_models.py" --set broad --no-gemm \
    --json "$BENCH/results/broad.json" "${args[@]+"${args[@]}"}"
  if "$PY" -c 'import matplotlib' 2>/dev/null; then
    "$PY" "$BENCH/plot.py" "$BENCH/results/broad.json" "$ROOT/docs/performance-broad.png"
  fi
  "$PY" "$BENCH/report.py" "$BENCH/results/broad.json" "$ROOT/docs/performance-broad.md"
  exit 0
fi
if [ "$sparse" = only ]; then
  "$PY" "$BENCH/sparse_bench.py" --sweep --docs
  exit 0
fi
"$PY" "$BENCH/bench_models.py" "${args[@]+"${args[@]}"}"

# --- chart and docs --------------------------------------------------------
if [ "$docs" = auto ]; then
  full=$("$PY" - "$BENCH/results/latest.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
full = (len(d["models_run"]) == 9 and d["threads"] == [1, 2]
        and "--quick" not in d["command"].split())
print("yes" if full else "no")
EOF
)
  docs=$full
  [ "$docs" = no ] && say "partial run: docs/performance.{md,png} left as they are (--docs forces)"
fi
if [ "$docs" = yes ]; then
  if "$PY" -c 'import matplotlib' 2>/dev/null; then
    "$PY" "$BENCH/plot.py" "$BENCH/results/latest.json" "$ROOT/docs/performance.png"
  else
    say "warning: no matplotlib: docs/performance.png not written"
  fi
  "$PY" "$BENCH/report.py" "$BENCH/results/latest.json" "$ROOT/docs/performance.md"
  [ "$int8" = no ] || "$PY" "$BENCH/int8_bench.py" --docs
  [ "$sparse" = no ] || "$PY" "$BENCH/sparse_bench.py" --sweep --docs
fi
