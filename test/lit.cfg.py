# -*- Python -*-
# lit configuration for Tessel: FileCheck tests of dialects, verifiers and
# passes (tessel-opt), driver tests (tessel-compile / tessel-run), and
# end-to-end tests that compile models and compare with numpy.
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "Tessel"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test", ".td"]
config.excludes = ["Inputs", "lit.cfg.py", "CMakeLists.txt", "unit", "gen_models.py", "run_e2e.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tessel_obj_root, "test")

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.tessel_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
_python = config.python_executable
# A sanitizer build (scripts/test_sanitizers.sh --compiler): its tools and the
# artifacts they link are instrumented. Python scripts that load artifacts
# (ctypes) get the ASan runtime preloaded, without leak checking (CPython
# keeps its objects at exit), and hand neither to the tools they run, which
# carry their own runtime; the conformance runner's address-space limit does
# not fit ASan's shadow memory (TESSEL_SANITIZED).
if getattr(config, "tessel_sanitize", ""):
    config.environment["TESSEL_SANITIZED"] = config.tessel_sanitize
    if "address" in config.tessel_sanitize:
        import subprocess
        _rt = subprocess.run([config.c_compiler, "-print-file-name=libclang_rt.asan-x86_64.so"],
                             capture_output=True, text=True).stdout.strip()
        _outer = os.environ.get("ASAN_OPTIONS", "")
        _python = (f"env LD_PRELOAD={_rt} ASAN_OPTIONS=detect_leaks=0 "
                   f"TESSEL_OUTER_ASAN_OPTIONS={_outer} {_python} "
                   f"{os.path.join(config.tessel_src_root, 'test', 'sanitized_python.py')}")
# (lit's defaults define %python too, and the first definition wins.)
config.substitutions = [s for s in config.substitutions if s[0] != "%python"]
config.substitutions.append(("%python", _python))
config.substitutions.append(("%tessel_src", config.tessel_src_root))
# Generated headers (the kernel library's tessel_kernels.h) and a C compiler
# to compile against them.
config.substitutions.append(
    ("%tessel_gen_include", os.path.join(config.tessel_obj_root, "include")))
config.substitutions.append(("%cc", config.c_compiler))
config.substitutions.append(
    ("%e2e", os.path.join(config.tessel_src_root, "test", "e2e", "run_e2e.py")))
llvm_config.add_tool_substitutions(
    ["tessel-opt", "tessel-compile", "tessel-run", "tessel-seal", "tessel-tblgen"],
    config.tessel_tools_dir)

# Built with MPI (lib/RuntimeMPI): --expert-parallel artifacts link.
if os.path.exists(os.path.join(config.tessel_obj_root, "lib",
                               "libtessel_runtime_mpi.a")):
    config.available_features.add("mpi")

# NVIDIA's PTX assembler (CUDA toolkit): checks the PTX of --target=cuda.
# Where it is absent, the tests that need it report UNSUPPORTED.
_cuda_home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
_ptxas = os.path.join(_cuda_home, "bin", "ptxas")
if os.path.exists(_ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", _ptxas))
# A CUDA driver on this machine: the tests of the no-driver errors do not
# apply (the device check, test/gpu/, runs where there is a GPU).
if any(os.path.exists(os.path.join(d, "libcuda.so.1"))
       for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/local/nvidia/lib64")):
    config.available_features.add("cuda-driver")
