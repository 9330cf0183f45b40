# Source me: puts the build's tools on PATH and the tessel Python package
# on PYTHONPATH (for Debian's /usr/bin/python3). Build first with
# scripts/build.sh (TESSEL_BUILD_DIR overrides build/).
_tessel_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_tessel_build="${TESSEL_BUILD_DIR:-$_tessel_root/build}"
export PATH="$_tessel_build/bin:$PATH"
export PYTHONPATH="$_tessel_build/python${PYTHONPATH:+:$PYTHONPATH}"
unset _tessel_root _tessel_build
