#!/usr/bin/env bash
# Installs everything Tessel needs to build and test, from Debian's archive
# only (the one package source this project may use). Idempotent: packages
# already present are not reinstalled and apt's index is refreshed only when
# something is missing.
set -euo pipefail

PACKAGES=(
  cmake ninja-build clang-22
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  libgtest-dev
  libonnx-dev libprotobuf-dev libonnx-testdata python3-onnx
  python3-numpy python3-pytest python3-pytest-xdist python3-torch
  python3-torchvision pybind11-dev
  python3-sklearn
  openmpi-bin libopenmpi-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi
echo "setup: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
