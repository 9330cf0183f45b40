"""pytest set-up: import the tessel package from the build tree.

The package is assembled in $TESSEL_BUILD_DIR/python (default build/python)
by the CMake build; scripts/test.sh builds it before running pytest.
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("TESSEL_BUILD_DIR", os.path.join(ROOT, "build"))
sys.path.insert(0, os.path.join(BUILD, "python"))
BIN = os.path.join(BUILD, "bin")
