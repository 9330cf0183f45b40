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
config.substitutions.append(("%python", config.python_executable))
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
