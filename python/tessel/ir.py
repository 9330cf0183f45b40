"""MLIR modules for compiler developers: parse, print, verify, clone.

A :class:`Module` owns its own MLIR context with every dialect Tessel uses
(TOSA, linalg, tensor, arith, math, ..., and ``tessel``)::

    m = tessel.ir.Module.parse(text)
    tessel.passes.run(m, "canonicalize,cse")
    print(m)
"""
import os

from . import _tessel


class Module:
    """One MLIR module (model-level IR or any later phase)."""

    def __init__(self, native):
        self._native = native

    @classmethod
    def parse(cls, text, name="<string>"):
        """Parses MLIR text; raises :class:`tessel.CompileError` with the
        parser's diagnostics (line, column, caret) when it is invalid."""
        if isinstance(text, bytes):
            text = text.decode()
        return cls(_tessel.IRModule.parse(text, name))

    @classmethod
    def load(cls, path):
        """Parses an ``.mlir`` file."""
        path = os.fspath(path)
        with open(path, "r", encoding="utf-8") as f:
            return cls.parse(f.read(), path)

    @classmethod
    def from_onnx(cls, model, shapes=None, name=None, raise_moe=True):
        """Imports an ONNX model (a path, serialized bytes or an
        ``onnx.ModelProto``) into model-level IR. ``shapes`` maps input
        names to static shapes (pins symbolic dimensions, which otherwise
        stay dynamic where the model's ops allow). ``raise_moe``
        turns top-k gated mixtures of experts into ``compose.route``
        (``tessel-compile --raise-moe``)."""
        if isinstance(model, (str, os.PathLike)):
            path = os.fspath(model)
            if not os.path.exists(path):
                raise FileNotFoundError(f"no such ONNX file: '{path}'")
            with open(path, "rb") as f:
                data = f.read()
            name = name or path
        elif isinstance(model, (bytes, bytearray)):
            data = bytes(model)
        elif hasattr(model, "SerializeToString"):
            data = model.SerializeToString()
        else:
            raise TypeError(
                f"from_onnx takes a path, bytes or onnx.ModelProto, not "
                f"{type(model).__name__}")
        pins = [(k, [int(d) for d in v]) for k, v in (shapes or {}).items()]
        return cls(_tessel.IRModule.import_onnx(data, name or "<onnx>", pins,
                                                raise_moe))

    def clone(self):
        """An independent copy (its own context)."""
        return Module(self._native.clone())

    def verify(self):
        """Raises :class:`tessel.CompileError` if the module is invalid."""
        self._native.verify()

    def to_string(self, debug_info=False, generic=False):
        """The module's text; ``debug_info`` prints locations."""
        return self._native.to_string(debug_info, generic)

    @property
    def functions(self):
        """Names of the public functions."""
        return list(self._native.function_names())

    def __str__(self):
        return self.to_string()

    def __repr__(self):
        return f"<tessel.ir.Module functions={self.functions}>"
