"""Compiled modules: call, inspect, benchmark, save and load artifacts.

A :class:`CompiledModule` wraps one function of an artifact (the shared
library ``tessel-compile`` writes and ``tessel-run`` runs), loaded through
Tessel's runtime C API; a :class:`LinkedModule` one function of several
artifacts the runtime linked into one model (separately compiled
components, :func:`link` and :func:`load_composition`). Inputs that are
C-contiguous arrays of the right dtype are passed without a copy; outputs
are numpy arrays that own the runtime's buffers (no copy either).
"""
import os
import shutil
import weakref
from collections import namedtuple

import numpy as np

from . import _tessel
from .errors import InvocationError

_DTYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16,
           "i64": np.int64, "i32": np.int32, "i16": np.int16, "i8": np.int8,
           "u8": np.uint8, "i1": np.bool_, "u16": np.uint16, "u32": np.uint32,
           "u64": np.uint64}


class TensorSpec(namedtuple("TensorSpec", "name dtype shape")):
    """One input or output: its name, numpy dtype and shape. A dynamic
    dimension appears by its name (``("T", 256)``, as an ONNX dim_param):
    its size is bound from the inputs at each call, and every dimension of
    that name has it. ``vocab`` is the symbol vocabulary of an int32 tensor of symbol ids
    (a ``!sym.symbol<V>`` interface), else None."""

    vocab = None
    #: "ROLE:OWNER" when the tensor is a part of a sequence or optional
    #: input or output (artifact ABI v7), else None.
    part = None

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
    name, dtype, shape, vocab = entry[:4]
    spec = TensorSpec(name, np.dtype(_DTYPES[dtype]) if dtype in _DTYPES
                      else dtype, tuple(shape))
    if vocab:
        spec.vocab = vocab
    if len(entry) > 4 and entry[4]:
        spec.part = entry[4]
    return spec


class _Slot:
    """One value of the model as its user sees it: a tensor, a sequence
    (its parts ``sizes`` [count, rank], padded in front with -1 where the
    elements differ in rank, and ``data``) or an optional (its
    ``present`` flag, then its value's parts): indices into the specs."""

    def __init__(self, name):
        self.name = name
        self.tensor = self.sizes = self.data = self.present = None

    @property
    def sequence(self):
        return self.sizes is not None


def _slots(specs):
    """The model's values from the parts of the function's specs."""
    slots = []
    for i, spec in enumerate(specs):
        if spec.part is None:
            slot = _Slot(spec.name)
            slot.tensor = i
            slots.append(slot)
            continue
        role, owner = spec.part.split(":", 1)
        if not slots or slots[-1].name != owner or (
                slots[-1].tensor is None and slots[-1].sizes is None
                and slots[-1].present is None):
            slots.append(_Slot(owner))
        field = "tensor" if role == "value" else role
        if field not in ("tensor", "sizes", "data", "present") or \
                getattr(slots[-1], field) is not None:
            raise InvocationError(f"malformed parts of '{owner}' in the "
                                  "artifact's manifest")
        setattr(slots[-1], field, i)
    for slot in slots:
        if (slot.sizes is None) != (slot.data is None) or \
                (slot.sizes is None) == (slot.tensor is None):
            raise InvocationError(f"malformed parts of '{slot.name}' in the "
                                  "artifact's manifest")
    return slots


def _pack(slots, specs, values):
    """The function's input arrays for the model's values: a sequence is a
    list of arrays, an empty optional None."""
    if len(values) != len(slots):
        raise InvocationError(f"the function takes {len(slots)} input(s), "
                              f"{len(values)} given")
    arrays = [None] * len(specs)
    for k, (slot, value) in enumerate(zip(slots, values)):
        what = f"input {k} ('{slot.name}')"
        if slot.present is not None:
            arrays[slot.present] = np.array(value is not None)
        elif value is None:
            raise InvocationError(f"{what} is not an optional; None cannot "
                                  "be given")
        if not slot.sequence:
            if value is None:
                spec = specs[slot.tensor]
                value = np.zeros([0 if isinstance(d, str) else d
                                  for d in spec.shape], dtype=spec.dtype)
            arrays[slot.tensor] = _as_array(value, k)
            continue
        sizes_spec, data_spec = specs[slot.sizes], specs[slot.data]
        elements = [] if value is None else value
        if not isinstance(elements, (list, tuple)):
            raise InvocationError(f"{what} is a sequence: give a list of "
                                  "arrays")
        elements = [_as_array(e, k) for e in elements]
        rank = sizes_spec.shape[1]
        declared = not isinstance(rank, str)
        if not declared:
            # Elements may differ in rank: rows as wide as the highest,
            # padded in front with -1.
            rank = max((e.ndim for e in elements), default=0)
        for j, e in enumerate(elements):
            if e.dtype != data_spec.dtype or (declared and e.ndim != rank):
                raise InvocationError(
                    f"{what} element {j} is {e.dtype}{list(e.shape)}; the "
                    f"sequence holds {data_spec.dtype} tensors" +
                    (f" of rank {rank}" if declared else ""))
        arrays[slot.sizes] = np.array(
            [[-1] * (rank - e.ndim) + list(e.shape) for e in elements],
            dtype=np.int64).reshape(len(elements), rank)
        arrays[slot.data] = (np.concatenate([e.ravel() for e in elements])
                             if elements else
                             np.zeros(0, dtype=data_spec.dtype))
    return arrays


def _unpack(slots, outs):
    """The model's values from the function's output arrays."""
    values = []
    for slot in slots:
        if slot.present is not None and not bool(outs[slot.present]):
            values.append(None)
        elif not slot.sequence:
            values.append(outs[slot.tensor])
        else:
            sizes, data = outs[slot.sizes], outs[slot.data]
            elements, at = [], 0
            for row in sizes.tolist():
                while row and row[0] == -1:  # a lower-rank element's padding
                    row = row[1:]
                n = 1
                for d in row:  # Python ints: no wrapping
                    n *= d
                if min(row, default=0) < 0 or at + n > data.size:
                    raise InvocationError(
                        f"output '{slot.name}': its sizes {sizes.tolist()} do "
                        f"not fit its {data.size} elements")
                elements.append(data[at:at + n].reshape(tuple(row)))
                at += n
            values.append(elements)
    return values


def _as_array(value, index):
    """numpy view of an input: torch tensors and contiguous arrays are
    shared, anything else is converted (non-contiguous arrays are copied
    to C order, arrays of non-native byte order are converted to native
    order; the element type is never changed)."""
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
    if not value.dtype.isnative:
        # Big-endian data (e.g. x.astype('>f4')): same values, native bytes.
        value = value.astype(value.dtype.newbyteorder("="))
    if not value.flags.c_contiguous:
        value = np.ascontiguousarray(value)
    return value


class CompiledModule:
    """A callable compiled model (one function of an artifact)."""

    def __init__(self, path, function=None, threads=None, _keep=None,
                 device=None):
        self._path = os.fspath(path)
        if _keep is not None:  # a temporary folder holding the file: removed
            # with the module (the loaded library stays mapped until then)
            weakref.finalize(self, shutil.rmtree, _keep, True)
        self._artifact = _tessel.Artifact(self._path, device or "")
        names = self._artifact.function_names()
        if function is None:
            if "main" in names or len(names) != 1:
                function = "main"
            else:
                function = names[0]
        self._bind(_tessel.Function(self._artifact, function), threads)

    def _bind(self, function, threads):
        self._function = function
        self.threads = 1 if threads is None else int(threads)
        if self.threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        self._signature = Signature(
            self._function.name,
            [_spec(e) for e in self._function.inputs],
            [_spec(e) for e in self._function.outputs])
        # Sequences and optionals cross the ABI as several tensors.
        self._in_slots = _slots(self._signature.inputs)
        self._out_slots = _slots(self._signature.outputs)
        self._parts = any(s.part for s in
                          self._signature.inputs + self._signature.outputs)

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
    def device(self):
        """Where the kernels run: ``"cpu"``, or for a ``target="cuda"``
        artifact ``"cuda <GPU name> sm_NN"``."""
        return self._artifact.device

    @property
    def ranks(self):
        """The MPI processes an expert-parallel artifact runs on
        (``expert_parallel=N``; run the script under ``mpirun -np N``); 1
        for every other artifact."""
        return self._artifact.ranks

    @property
    def rank(self):
        """This process's rank among :attr:`ranks` (0 for a one-process
        artifact): rank 0 is the one to print or save results."""
        return self._artifact.rank

    def abort_ranks(self, code=1):
        """Ends every process of an expert-parallel artifact's MPI job
        (``MPI_Abort``): a process that fails must not leave the others
        waiting in a collective. No effect on other artifacts."""
        self._artifact.abort_ranks(int(code))

    @property
    def functions(self):
        """Every function the artifact exports."""
        return list(self._artifact.function_names())

    def __call__(self, *inputs, threads=None):
        """Runs the function. Returns one numpy array, or a tuple when the
        function has several outputs. Wrong input count, dtype or shape
        raises :class:`tessel.InvocationError` with the runtime's message.
        A sequence input or output (an ONNX sequence) is a list of arrays;
        an empty optional is None."""
        if self._parts:
            arrays = _pack(self._in_slots, self._signature.inputs, inputs)
            outs = _unpack(self._out_slots,
                           self._function.invoke(arrays, self._threads(threads)))
        else:
            arrays = [_as_array(v, i) for i, v in enumerate(inputs)]
            outs = self._function.invoke(arrays, self._threads(threads))
        return outs[0] if len(outs) == 1 else tuple(outs)

    def benchmark(self, n=100, *inputs, warmup=1, threads=None):
        """Times ``n`` calls (after ``warmup``) in C++, outputs preallocated
        as ``tessel-run --benchmark`` does. Without ``inputs``, random ones
        matching the signature are used. Returns a dict with median_ms,
        min_ms, max_ms, mean_ms, iterations and threads; for a GPU artifact
        also device and kernel_median_ms (the kernels alone, without
        copying inputs and outputs)."""
        if not inputs:
            inputs = self.random_inputs()
        if self._parts:
            arrays = _pack(self._in_slots, self._signature.inputs, inputs)
        else:
            arrays = [_as_array(v, i) for i, v in enumerate(inputs)]
        return self._function.benchmark(arrays, int(n), int(warmup),
                                        self._threads(threads))

    def random_inputs(self, seed=0, dims=None):
        """Inputs matching the signature: standard normal floats, zeros for
        integers and booleans. ``dims`` gives the size of each named
        (dynamic) dimension, e.g. ``{"T": 64}``."""
        rng = np.random.default_rng(seed)
        dims = dict(dims or {})
        result = []
        specs = self._signature.inputs
        if self._parts:
            # The model's values: a sequence empty, an optional's value
            # present (its named sizes from dims, else 1).
            for slot in self._in_slots:
                if slot.sequence:
                    result.append([])
                    continue
                spec = specs[slot.tensor]
                shape = [dims.get(d, 1) if isinstance(d, str) else d
                         for d in spec.shape]
                result.append(rng.standard_normal(shape).astype(spec.dtype)
                              if np.issubdtype(spec.dtype, np.floating)
                              else np.zeros(shape, dtype=spec.dtype))
            return result
        for spec in self._signature.inputs:
            shape = []
            for d in spec.shape:
                if isinstance(d, str):
                    if d not in dims:
                        raise ValueError(
                            f"input '{spec.name}' of '{self._signature.name}' has the "
                            f"dynamic dimension '{d}'; pass its size as "
                            f"dims={{'{d}': n}}")
                    d = dims[d]
                shape.append(d)
            if np.issubdtype(spec.dtype, np.floating):
                result.append(rng.standard_normal(shape).astype(spec.dtype))
            else:
                result.append(np.zeros(shape, dtype=spec.dtype))
        return result

    def save(self, path):
        """Writes the artifact to ``path`` (run it with ``tessel-run path``
        or load it with :func:`tessel.load`). An existing file is replaced
        by renaming a new one over it, never rewritten in place, so a
        process that has the old artifact loaded (a composition being
        swapped to a retrained component) keeps running it."""
        path = os.fspath(path)
        if os.path.abspath(path) != os.path.abspath(self._path):
            tmp = f"{path}.{os.getpid()}.tmp"
            try:
                shutil.copyfile(self._path, tmp)
                os.replace(tmp, path)
            finally:
                if os.path.exists(tmp):
                    os.remove(tmp)
        return path

    def _threads(self, threads):
        t = self.threads if threads is None else int(threads)
        if t < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        return t

    def __repr__(self):
        return f"<tessel.CompiledModule {self._signature}>"


class LinkedModule(CompiledModule):
    """A callable model made of several artifacts linked by the runtime:
    each artifact's imports (calls of components compiled into another
    artifact) are resolved by component name and their interfaces checked.
    Calling, ``signature``, ``benchmark`` and ``random_inputs`` work as for
    :class:`CompiledModule`; there is no single file to ``save``."""

    def __init__(self, composition, function=None, threads=None):
        self._composition = composition
        self._path = composition.path or None
        if function is None:
            function = composition.default_function()
        self._bind(_tessel.Function(composition, function), threads)

    @property
    def artifacts(self):
        """The linked artifact files, in composition order."""
        return list(self._composition.artifact_paths())

    @property
    def functions(self):
        """Every function the linked artifacts export."""
        return list(self._composition.function_names())

    @property
    def path(self):
        """The composition file, or None when linked from a list."""
        return self._path

    def save(self, path):
        raise TypeError("a linked model is several artifacts; save or copy "
                        "each of them (LinkedModule.artifacts) and a "
                        "composition file listing them")

    def __repr__(self):
        return f"<tessel.LinkedModule {self._signature}>"


def _existing(path, what):
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such {what}: '{path}'")
    return path


def load(path, function=None, threads=None, device=None):
    """Loads an artifact written by :meth:`CompiledModule.save` or
    ``tessel-compile`` (a composition file is handed to
    :func:`load_composition`). ``device`` ("cpu", "cuda" or "cuda:N", as
    ``tessel-run --device``) says where it must run: an artifact compiled
    for another device raises :class:`tessel.InvocationError` saying what it
    was compiled for; None runs it where it was compiled for. Raises
    :class:`tessel.InvocationError` if the file is not a Tessel artifact,
    FileNotFoundError if it does not exist."""
    path = _existing(path, "artifact")
    if _tessel.is_composition_file(path):
        if device:
            raise ValueError("device= applies to a single artifact; a "
                             "composition runs where its artifacts were "
                             "compiled for")
        return load_composition(path, function=function, threads=threads)
    return CompiledModule(path, function=function, threads=threads,
                          device=device)


def link(paths, function=None, threads=None):
    """Loads the artifacts at ``paths`` and links them into one model
    (:class:`LinkedModule`). ``function`` defaults to the only function no
    artifact imports, else ``main``. Link errors (an import no artifact
    exports, a name two export, an interface mismatch, a cycle) raise
    :class:`tessel.InvocationError` naming the import and the artifacts."""
    paths = [_existing(p, "artifact") for p in paths]
    return LinkedModule(_tessel.Composition.link(paths), function=function,
                        threads=threads)


def load_composition(path, function=None, threads=None):
    """Loads a composition file (``tessel-composition 1``, then one
    ``artifact PATH`` line per artifact, relative to the file's folder, and
    optionally ``entry NAME``) and links its artifacts
    (:class:`LinkedModule`). ``function`` defaults to the file's entry."""
    path = _existing(path, "composition")
    return LinkedModule(_tessel.Composition.load(path), function=function,
                        threads=threads)
