"""pytest set-up: import the tessel package from the build tree.

The package is assembled in $TESSEL_BUILD_DIR/python (default build/python)
by the CMake build; scripts/test.sh builds it before running pytest.
"""
import os
import sys


def pytest_configure(config):
    """A sanitizer run (scripts/test_sanitizers.sh) starts pytest with the
    ASan runtime preloaded, for the instrumented extension and artifacts;
    the tools the tests run carry their own runtime and get the suite's
    options back. pytest-xdist's controller runs no test and keeps the
    preload for the workers it starts (each of which drops it here)."""
    controller = (getattr(config.option, "numprocesses", None) and
                  "PYTEST_XDIST_WORKER" not in os.environ)
    if controller or "libclang_rt.asan" not in os.environ.get("LD_PRELOAD", ""):
        return
    os.environ.pop("LD_PRELOAD")
    if "TESSEL_OUTER_ASAN_OPTIONS" in os.environ:
        os.environ["ASAN_OPTIONS"] = os.environ.pop("TESSEL_OUTER_ASAN_OPTIONS")


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("TESSEL_BUILD_DIR", os.path.join(ROOT, "build"))
sys.path.insert(0, os.path.join(BUILD, "python"))
BIN = os.path.join(BUILD, "bin")
