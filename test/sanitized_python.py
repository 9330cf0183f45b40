"""Runs a Python script in a sanitizer build's lit run (test/lit.cfg.py).

The interpreter was started with the ASan runtime preloaded (so artifacts
built with instrumented kernels load through ctypes); the tools the script
runs carry their own runtime and get the suite's ASan options back, not the
preload.
"""
import os
import runpy
import sys

os.environ.pop("LD_PRELOAD", None)
os.environ["ASAN_OPTIONS"] = os.environ.pop("TESSEL_OUTER_ASAN_OPTIONS", "")
args = sys.argv[1:]
if args[:1] == ["-c"]:  # python -c CODE ARGS...
    sys.argv = ["-c"] + args[2:]
    sys.path.insert(0, "")
    exec(compile(args[1], "<string>", "exec"), {"__name__": "__main__"})
elif args[:1] == ["-m"]:  # python -m MODULE ARGS...
    sys.argv = [args[1]] + args[2:]
    sys.path.insert(0, "")
    runpy.run_module(args[1], run_name="__main__", alter_sys=True)
else:  # python SCRIPT ARGS...
    sys.argv = args
    sys.path.insert(0, os.path.dirname(os.path.abspath(args[0])))
    runpy.run_path(args[0], run_name="__main__")
