"""Tessel: compile neural-network models to native code and run them.

Three doors into the same compiler (the one `tessel-compile` uses):

* PyTorch: ``tessel.compile(module, (example,))`` traces the module with
  torch.fx (see :mod:`tessel.torch_importer`), or where the FX importer
  cannot take it, exports it with ``torch.onnx.export`` (with a
  :class:`TorchImportWarning`).
* ONNX: ``tessel.compile("model.onnx")`` or an ``onnx.ModelProto``.
* MLIR: ``tessel.compile(text_or_path)`` or a :class:`tessel.ir.Module`.

``tessel.compile`` returns a :class:`CompiledModule`: call it with numpy
arrays (or torch tensors), read ``.signature``, time it with
``.benchmark(n)``, write the artifact with ``.save(path)`` (the file
``tessel-run`` takes) and load one back with :func:`tessel.load`.
Separately compiled components (``tessel.compile(..., component=NAME)``)
are linked into one model at load time by :func:`tessel.link` or
:func:`tessel.load_composition`, which return a :class:`LinkedModule`.

Compiler developers: :mod:`tessel.ir` (parse/print modules),
:mod:`tessel.passes` (run a pipeline by name, list passes) and
:mod:`tessel.builder` (write model-level graphs by hand).

Quantization: :func:`tessel.quantize_onnx` writes an int8 QDQ model from
an ONNX model and calibration samples (docs/quantization.md). Sparsity:
:mod:`tessel.sparsity` prunes weights and reports their structure
(docs/sparsity.md).
"""
from .errors import (CompileError, Error, InvocationError, TorchImportError,
                     TorchImportWarning)
from .runtime import (CompiledModule, LinkedModule, Signature, TensorSpec,
                      link, load, load_composition)
from .compiler import compile
from .quantize import quantize_onnx
from . import builder, ir, passes, sparsity

__all__ = [
    "compile", "quantize_onnx", "load", "link", "load_composition", "CompiledModule",
    "LinkedModule", "Signature", "TensorSpec",
    "Error", "CompileError", "InvocationError", "TorchImportError", "TorchImportWarning",
    "ir", "passes", "builder", "sparsity",
]
__version__ = "0.1.0"
