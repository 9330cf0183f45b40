#!/bin/bash
# Alternated rounds: on a machine whose speed drifts within minutes, time
# several artifacts (and ONNX Runtime on ONNX files) in turn, round after
# round, and report each one's fastest run. Compare those, not medians of
# runs made minutes apart.
#
#   bash bench/alternate.sh INPUT.npy ROUNDS A.so [B.so ...] [ort:MODEL.onnx ...]
#
# One thread each (THREADS=N in the environment: N); every round runs each
# entry 10 times (tessel-run --benchmark=10, bench/ort_bench.js --runs=10).
# Prints "entry min_ms".
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: bash bench/alternate.sh INPUT.npy ROUNDS ENTRY..." >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
run=${TESSEL_RUN:-$here/../build/bin/tessel-run}
input=$1 rounds=$2 threads=${THREADS:-1}
shift 2
declare -A best
for _ in $(seq "$rounds"); do
  for e in "$@"; do
    if [[ $e == ort:* ]]; then
      ms=$(node "$here/ort_bench.js" --model="${e#ort:}" --input=@"$input" \
             --threads="$threads" --runs=10 | grep -o '"min_ms":[0-9.]*' | cut -d: -f2)
    else
      ms=$("$run" "$e" --input=@"$input" --threads="$threads" --benchmark=10 2>&1 |
             grep -o 'min_ms=[0-9.]*' | cut -d= -f2)
    fi
    if [ -z "$ms" ]; then
      echo "alternate.sh: no time from $e" >&2
      exit 1
    fi
    best[$e]=$(awk -v a="$ms" -v b="${best[$e]:-1e30}" 'BEGIN {print (a < b) ? a : b}')
  done
done
for e in "$@"; do
  echo "$e ${best[$e]}"
done
