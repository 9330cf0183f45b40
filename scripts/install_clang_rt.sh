#!/usr/bin/env bash
# Installs clang-22's sanitizer and libFuzzer runtimes (libclang-rt-22-dev)
# from Debian's archive if missing; used by test_sanitizers.sh and fuzz.sh.
set -euo pipefail
if ! dpkg-query -W -f='${Status}' libclang-rt-22-dev 2>/dev/null | grep -q "install ok installed"; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends libclang-rt-22-dev >/dev/null
fi
