#!/usr/bin/env bash
# From a fresh machine: installs dependencies, builds Tessel, compiles the
# bundled example model (a small CNN, examples/cnn.mlir) and runs it on a
# random input, printing the output and the latency.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${TESSEL_BUILD_DIR:-$root/build}"
model="${1:-$root/examples/cnn.mlir}"
"$root/scripts/setup.sh"
"$root/scripts/build.sh" >/dev/null
bin="$build/bin"
out="$build/example"
mkdir -p "$out"
name="$(basename "$model" .mlir)"

echo "== compile $model"
"$bin/tessel-compile" "$model" -O3 -o "$out/$name.so"
"$bin/tessel-run" "$out/$name.so" --print_signature

# One random .npy per input, shaped from the artifact's own signature.
inputs=()
while read -r spec; do
  inputs+=("--input=@$spec")
done < <("$bin/tessel-run" "$out/$name.so" --print_signature |
  /usr/bin/python3 "$root/scripts/random_inputs.py" "$out")

echo "== run"
"$bin/tessel-run" "$out/$name.so" "${inputs[@]}" --output=-
echo "== latency"
"$bin/tessel-run" "$out/$name.so" "${inputs[@]}" --benchmark=200
