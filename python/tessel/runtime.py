"""Compiled modules: call, inspect, benchmark, save and load artifacts.

A :class:`CompiledModule` wraps one function of an artifact (the shared
library ``tessel-compile`` writes and ``tessel-run`` runs), loaded through
Tessel's runtime C API. Inputs that are C-contiguous arrays of the right
dtype are passed without a copy; outputs are numpy arrays that own the
runtime's buffers (no copy either).
"""
import os
import shutil
from collections import namedtuple

import numpy as np

from . import _tessel
from .errors import InvocationError

_DTYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16,
           "i64": np.int64, "i32": np.int32, "i16": np.int16, "i8": np.int8,
           "u8": np.uint8, "i1": np.bool_}


class TensorSpec(namedtuple("TensorSpec", "name dtype shape")):
    """One input or output: its name, numpy dtype and static shape."""

    def __str__(self):
        dims = "x".join(str(d) for d in self.shape)
        return f"{self.name}: {dims + 'x' if dims else ''}{_short(self.dtype)}"


class Signature(namedtuple("Signature", "name inputs outputs")):
    """A function's name and its input/output :class:`TensorSpec` lists."""

    def __str__(self):
        ins = ", ".join(str(s) for s in self.inputs)
        outs = ", ".join(str(s) for s in self.outputs)
        return f"{self.name}({ins}) -> ({outs})"


def _short(dtype):
    for k, v in _DTYPES.items():
        if np.dtype(v) == np.dtype(dtype):
            return k
    return str(dtype)


def _spec(entry):
    name, dtype, shape = entry
    return TensorSpec(name, np.dtype(_DTYPES[dtype]) if dtype in _DTYPES
                      else dtype, tuple(shape))


def _as_array(value, index):
    """numpy view of an input: torch tensors and contiguous arrays are
    shared, anything else is converted (non-contiguous arrays are copied
    to C order; the dtype is never changed)."""
    if hasattr(value, "detach") and hasattr(value, "numpy"):  # torch.Tensor
        value = value.detach()
        if value.device.type != "cpu":
            value = value.cpu()
        value = value.numpy()
    if not isinstance(value, np.ndarray):
        try:
            value = np.asarray(value)
        except Exception as e:  # e.g. ragged lists
            raise InvocationError(
                f"input {index}: cannot convert {type(value).__name__} to an "
                f"array: {e}") from None
    if not value.flags.c_contiguous:
        value = np.ascontiguousarray(value)
    return value


class CompiledModule:
    """A callable compiled model (one function of an artifact)."""

    def __init__(self, path, function=None, threads=None, _keep=None):
        self._path = os.fspath(path)
        self._keep = _keep  # a TemporaryDirectory owning the file, if any
        self._artifact = _tessel.Artifact(self._path)
        names = self._artifact.function_names()
        if function is None:
            if "main" in names or len(names) != 1:
                function = "main"
            else:
                function = names[0]
        self._function = _tessel.Function(self._artifact, function)
        self.threads = 1 if threads is None else int(threads)
        if self.threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        self._signature = Signature(
            self._function.name,
            [_spec(e) for e in self._function.inputs],
            [_spec(e) for e in self._function.outputs])

    @property
    def signature(self):
        """The function's :class:`Signature` (``str()`` prints it like
        ``tessel-run --print_signature``)."""
        return self._signature

    @property
    def path(self):
        """The artifact file this module was loaded from."""
        return self._path

    @property
    def functions(self):
        """Every function the artifact exports."""
        return list(self._artifact.function_names())

    def __call__(self, *inputs, threads=None):
        """Runs the function. Returns one numpy array, or a tuple when the
        function has several outputs. Wrong input count, dtype or shape
        raises :class:`tessel.InvocationError` with the runtime's message."""
        arrays = [_as_array(v, i) for i, v in enumerate(inputs)]
        outs = self._function.invoke(arrays, self._threads(threads))
        return outs[0] if len(outs) == 1 else tuple(outs)

    def benchmark(self, n=100, *inputs, warmup=1, threads=None):
        """Times ``n`` calls (after ``warmup``) in C++, outputs preallocated
        as ``tessel-run --benchmark`` does. Without ``inputs``, random ones
        matching the signature are used. Returns a dict with median_ms,
        min_ms, max_ms, mean_ms, iterations and threads."""
        if not inputs:
            inputs = self.random_inputs()
        arrays = [_as_array(v, i) for i, v in enumerate(inputs)]
        return self._function.benchmark(arrays, int(n), int(warmup),
                                        self._threads(threads))

    def random_inputs(self, seed=0):
        """Inputs matching the signature: standard normal floats, zeros for
        integers and booleans."""
        rng = np.random.default_rng(seed)
        result = []
        for spec in self._signature.inputs:
            if np.issubdtype(spec.dtype, np.floating):
                result.append(rng.standard_normal(spec.shape).astype(spec.dtype))
            else:
                result.append(np.zeros(spec.shape, dtype=spec.dtype))
        return result

    def save(self, path):
        """Writes the artifact to ``path`` (run it with ``tessel-run path``
        or load it with :func:`tessel.load`)."""
        path = os.fspath(path)
        if os.path.abspath(path) != os.path.abspath(self._path):
            shutil.copyfile(self._path, path)
        return path

    def _threads(self, threads):
        t = self.threads if threads is None else int(threads)
        if t < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        return t

    def __repr__(self):
        return f"<tessel.CompiledModule {self._signature}>"


def load(path, function=None, threads=None):
    """Loads an artifact written by :meth:`CompiledModule.save` or
    ``tessel-compile``. Raises :class:`tessel.InvocationError` if the file
    is not a Tessel artifact, FileNotFoundError if it does not exist."""
    if not os.path.exists(os.fspath(path)):
        raise FileNotFoundError(f"no such artifact: '{os.fspath(path)}'")
    return CompiledModule(path, function=function, threads=threads)
