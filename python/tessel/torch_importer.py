"""The PyTorch importer: a ``torch.nn.Module`` to an ONNX model for Tessel.

    model = export_onnx(module.eval(), (x,))       # an onnx.ModelProto, opset 17

Design
------
PyTorch models reach Tessel's model-level IR through ONNX: this module
translates a module into an in-memory ONNX model, and Tessel's C++ ONNX
importer (``lib/Importers/ONNX``) turns that into the IR. Op semantics
(layouts, broadcasting, attributes, shape folding) are therefore
implemented once, in the ONNX importer; this side only maps torch
operations onto ONNX operators Tessel supports (docs/onnx-support.md).

1. **Trace.** ``torch.fx`` symbolic tracing (a :class:`Tracer` that
   records stack traces) gives a graph of ``call_function`` /
   ``call_method`` / ``call_module`` nodes. ``torch.nn`` modules are leaves
   (translated from their parameters and attributes), including
   ``nn.MultiheadAttention``, ``nn.TransformerEncoderLayer`` and
   ``nn.TransformerEncoder``, whose forward FX cannot trace.
   Non-tensor arguments of ``forward`` (``None``, numbers) are specialized
   to the example's values.
2. **Record.** The traced module runs once on the example inputs through
   an ``fx.Interpreter`` that records every node's value. Shapes are static
   in Tessel, so non-tensor values (``x.size()``, ``getitem`` on sizes, int
   arithmetic) fold to Python constants, and so does any tensor computed
   only from constants (``torch.arange(n)``, a mask built from a buffer).
   Tensor values that depend on an input keep their shape and dtype.
3. **Translate.** Each remaining node goes through a dispatch table keyed
   by its target (:mod:`tessel._torch_ops`) and becomes ONNX nodes.
   Parameters and buffers become initializers; model inputs keep the
   example's dtype and shape; the outputs are the tensors of the FX output
   (tuples, lists and dicts flattened).

ONNX node names are the FX node names, so Tessel's diagnostics (which use
node names as locations) point back to the FX node; when one FX node
becomes several ONNX nodes, the one producing its result carries the bare
name and the others a suffix (``conv1/pad``, ``conv1``).

Errors
------
Anything that cannot be translated raises
:class:`tessel.errors.TorchImportError` naming the FX node, its target
(function, method, or module path and type) and the user source line that
created it (``file:line``, from the FX stack trace). In particular:

* a module (or submodule) in training mode is rejected: call
  ``module.eval()`` first (Tessel compiles inference, and translating a
  training-mode module as if in eval would silently change its meaning);
* ops with data-dependent shapes or Python values (``nonzero``, boolean
  masks, ``.item()``), random ops, in-place updates of parameters or of
  tensors whose views are read afterwards, and unsupported attribute
  values (``Conv2d(padding_mode='circular')``, ...) are rejected.

In-place ops (``relu_``, ``x.add_(y)``, ``nn.ReLU(inplace=True)``) are
translated as their out-of-place forms; later reads of the mutated tensor
see the new value.

The second door
---------------
:func:`import_module` (what ``tessel.compile`` calls) falls back to
``torch.onnx.export`` (:func:`export_with_torch_onnx`) when this
translator cannot trace a module or take one of its nodes (recurrent
modules, ``nn.Transformer``), and says so in a note that names the node.
It does not for what the module itself does that an artifact cannot (a
training-mode module, random ops, writes to parameters), nor for Python
values made from tensors in the caller's code, which the trace would bake
in (docs/importers/torch.md).
"""

import contextlib
import functools
import dis
import inspect
import io
import os
import re
import sys
import warnings

import numpy as np
import onnx
import torch
import torch.fx
from onnx import helper, numpy_helper

from . import _torch_ops as ops
from ._torch_ops import TensorMeta, Unsupported, Value
from .errors import TorchImportError

__all__ = ["export_onnx", "export_with_torch_onnx", "import_module", "Tracer", "OPSET",
           "EXPORTERS"]

OPSET = 17
_CALLS = ("call_function", "call_method", "call_module")
_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def export_onnx(module, example_inputs, *, input_names=None, output_names=None):
    """Translates ``module`` (in eval mode) into an ONNX ``ModelProto``
    (opset 17) specialized to the shapes and dtypes of ``example_inputs``.

    ``example_inputs`` is a tuple of the positional arguments of
    ``forward`` (a single tensor is accepted too); tensors (or numpy
    arrays) become the model's inputs, other values (``None``, numbers) are
    baked in.
    ``input_names`` / ``output_names`` name the model's tensor inputs and
    outputs (defaults: the ``forward`` argument names; ``output`` or
    ``output0``, ``output1``, ...). Raises :class:`TorchImportError`.
    """
    example_inputs = _checked_arguments("export_onnx", module, example_inputs)
    args, concrete = _bind_forward(module, example_inputs)
    try:
        gm = _trace(_wrap_leaf_root(module), concrete)
        recorder = _Recorder(gm)
        try:
            with torch.no_grad():
                recorder.run(*args)
        except _RecordFailure as failure:
            raise failure.error from failure.__cause__
        return _Translator(type(module).__name__, gm, recorder, input_names,
                           output_names).translate()
    except TorchImportError as e:
        # The module itself is fine (eval mode, inputs bound): the FX
        # translator could not take one of its nodes, which torch.onnx.export
        # may still do (import_module's fallback), unless what it cannot
        # take is the model's meaning (state changes, random draws).
        e.untranslated = not getattr(e, "final", False)
        raise


def _checked_arguments(what, module, example_inputs):
    """The example inputs as a tuple of tensors and other values, after
    checking ``module`` (a torch.nn.Module in eval mode)."""
    if not isinstance(module, torch.nn.Module):
        raise TorchImportError(f"{what} expects a torch.nn.Module, got "
                               f"{type(module).__name__}")
    if isinstance(example_inputs, (torch.Tensor, np.ndarray)):
        example_inputs = (example_inputs,)
    if not isinstance(example_inputs, (tuple, list)):
        raise TorchImportError("example_inputs must be a tuple of the forward "
                               f"arguments, got {type(example_inputs).__name__}")
    _check_eval(module)
    return tuple(torch.from_numpy(x) if isinstance(x, np.ndarray) else x
                 for x in example_inputs)


def _default_output_names(count):
    return ["output"] if count == 1 else [f"output{i}" for i in range(count)]


def _final(error):
    """Marks an error no other exporter may work around: the model does
    something a compiled artifact cannot (a stateful or random forward)."""
    error.final = True
    return error


EXPORTERS = ("auto", "fx", "torch.onnx")


def import_module(module, example_inputs, exporter="auto"):
    """The ONNX model of ``module`` for Tessel's ONNX importer, and a note
    when it did not come from the FX translator.

    exporter "fx" is :func:`export_onnx`; "torch.onnx" is
    :func:`export_with_torch_onnx`; "auto" (the default) is "fx", and where
    the FX translator cannot take a node or trace the module (recurrent
    modules, ``nn.Transformer``, functions FX cannot trace through), falls
    back to ``torch.onnx.export`` and says so in the note. Errors about the
    module itself (training mode, example inputs) do not fall back.
    """
    if exporter not in EXPORTERS:
        raise ValueError(f"torch_exporter must be one of {', '.join(map(repr, EXPORTERS))}, "
                         f"got {exporter!r}")
    if exporter == "torch.onnx":
        return export_with_torch_onnx(module, example_inputs), None
    try:
        return export_onnx(module, example_inputs), None
    except TorchImportError as e:
        if exporter == "fx" or not getattr(e, "untranslated", False):
            raise
        fx_error = e
    try:
        proto = export_with_torch_onnx(module, example_inputs)
    except TorchImportError as e:
        raise TorchImportError(f"{fx_error}; torch.onnx.export, tried instead, failed "
                               f"too: {e}", node=fx_error.node, target=fx_error.target,
                               where=fx_error.where) from e
    return proto, f"{fx_error}; imported through torch.onnx.export instead"


def export_with_torch_onnx(module, example_inputs):
    """``torch.onnx.export``'s model of ``module`` (opset 17, eval mode,
    the example's shapes), its inputs named after ``forward``'s tensor
    arguments and its outputs ``output`` or ``output0``, ``output1``, ...
    as :func:`export_onnx` names them.

    torch.onnx.export traces one run: a tensor computed from the inputs
    that becomes a Python value (``if x.sum() > 0``, ``int(x.max())``)
    is baked in with the example's value, so the exported model would be
    wrong for other inputs. The tracer warns of each such conversion; one
    made in the caller's code (not torch's or torchvision's own, whose
    conversions check shapes, which are static here) is an error.
    """
    example_inputs = _checked_arguments("export_with_torch_onnx", module, example_inputs)
    args, _ = _bind_forward(module, example_inputs)
    try:
        params = list(inspect.signature(module.forward).parameters)
    except (TypeError, ValueError):
        params = []
    input_names = [params[i] if i < len(params) else f"input{i}"
                   for i, a in enumerate(args) if isinstance(a, torch.Tensor)]
    buffer = io.BytesIO()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            torch.onnx.export(module, tuple(args), buffer, opset_version=OPSET,
                              input_names=input_names, do_constant_folding=True,
                              training=torch.onnx.TrainingMode.EVAL)
        except Exception as e:  # the exporter raises many types
            message = str(e).strip().splitlines()
            raise TorchImportError(f"torch.onnx.export failed: {type(e).__name__}: "
                                   f"{message[0] if message else ''}") from e
    for w in caught:
        if issubclass(w.category, torch.jit.TracerWarning) and \
                not _is_library_file(w.filename):
            where = f"{w.filename}:{w.lineno}"
            first = str(w.message).split(". ")[0]
            raise TorchImportError(
                f"at {where}, torch.onnx.export's trace turned a tensor into a Python "
                f"value ({first}): if it depends on the inputs, the compiled model "
                "would keep the example's value; compute it with tensor ops, or from "
                "shapes", where=where)
    model = onnx.load_from_string(buffer.getvalue())
    graph = model.graph
    taken = {i.name for i in graph.input} | {n for p in graph.node for n in p.output}
    for value, name in zip(graph.output, _default_output_names(len(graph.output))):
        if value.name != name and name not in taken:
            _rename_value(graph.node, value.name, name)
            for v in list(graph.output) + list(graph.value_info):
                if v.name == value.name:
                    v.name = name
    return model


def _is_library_file(filename):
    dirs = [_TORCH_DIR, _PACKAGE_DIR]
    torchvision = sys.modules.get("torchvision")
    if torchvision is not None and getattr(torchvision, "__file__", None):
        dirs.append(os.path.dirname(torchvision.__file__) + os.sep)
    path = os.path.abspath(filename)
    return any(path.startswith(d) for d in dirs)


def _rename_value(nodes, old, new):
    """Renames the value ``old`` wherever ``nodes`` read or write it."""
    for p in nodes:
        for field in (p.input, p.output):
            for i, n in enumerate(field):
                if n == old:
                    field[i] = new


# --------------------------------------------------------------------------
# Checks, tracing, recording


def _check_eval(module):
    for name, m in module.named_modules():
        if m.training:
            what = f"submodule '{name}' ({type(m).__name__})" if name else \
                f"module {type(module).__name__}"
            raise TorchImportError(
                f"{what} is in training mode; call module.eval() before exporting "
                "(Tessel compiles inference: dropout is the identity and batch norm "
                "uses its running statistics)", target=name or type(module).__name__)


def _bind_forward(module, example_inputs):
    """Positional values for every forward parameter, and the non-tensor
    ones (given or defaulted) to specialize the trace to."""
    try:
        sig = inspect.signature(module.forward)
    except (TypeError, ValueError):
        return example_inputs, {}
    params = list(sig.parameters.values())
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        return example_inputs, {}
    if len(example_inputs) > len(params):
        raise TorchImportError(f"{len(example_inputs)} example inputs given, but forward "
                               f"takes {len(params)} arguments")
    args, concrete = [], {}
    for i, p in enumerate(params):
        if i < len(example_inputs):
            value = example_inputs[i]
        elif p.default is not p.empty:
            value = p.default
        else:
            raise TorchImportError(f"no example input for forward argument '{p.name}'")
        if not isinstance(value, torch.Tensor):
            concrete[p.name] = value
        args.append(value)
    # A tensor input is cloned: an in-place op in forward must not change the
    # caller's example tensor.
    args = [a.detach().clone() if isinstance(a, torch.Tensor) else a for a in args]
    return args, concrete


class Tracer(torch.fx.Tracer):
    """``torch.fx.Tracer`` with stack traces on, parameters' shapes
    constant, torch factories called with traced sizes recorded, and every
    ``torch.nn`` module a leaf except the few the importer traces through
    (``_torch_ops.TRACE_THROUGH``)."""

    record_stack_traces = True

    # Factories called with traced sizes (torch.arange(x.size(1))) do not
    # reach __torch_function__; like math.*, they are recorded as calls.
    FACTORIES = (torch.arange, torch.zeros, torch.ones, torch.full, torch.empty,
                 torch.eye, torch.linspace, torch.logspace, torch.tensor, torch.as_tensor,
                 torch.rand, torch.randn, torch.randint, torch.randperm)

    def __init__(self):
        # Parameters' shapes are concrete (ParameterProxy), so Python control
        # flow on them traces: `for e in range(self.w1.shape[0])` over an
        # expert-weight parameter. Shapes are static in Tessel anyway.
        super().__init__(param_shapes_constant=True)
        if hasattr(self, "_autowrap_search") and hasattr(self, "_autowrap_function_ids"):
            self._autowrap_search.append(torch)
            self._autowrap_function_ids.update(id(f) for f in self.FACTORIES)

    def is_leaf_module(self, m, module_qualified_name):
        if type(m) in ops.TRACE_THROUGH:
            return False
        return super().is_leaf_module(m, module_qualified_name)


def _proxy_iter(self):
    """Proxy.__iter__ for Python 3.11: ``a, b = proxy`` unpacks into
    getitem nodes (torch 1.13 looks the UNPACK_SEQUENCE up by a pre-3.11
    instruction index and fails)."""
    frame = sys._getframe(1)
    for inst in dis.get_instructions(frame.f_code):
        if inst.offset == frame.f_lasti:
            if inst.opname == "UNPACK_SEQUENCE":
                return (self[i] for i in range(inst.argval))
            break
    return self.tracer.iter(self)


@contextlib.contextmanager
def _fixed_proxy_iter():
    if sys.version_info < (3, 11):
        yield
        return
    saved = torch.fx.Proxy.__iter__
    torch.fx.Proxy.__iter__ = _proxy_iter
    try:
        yield
    finally:
        torch.fx.Proxy.__iter__ = saved


def _wrap_leaf_root(module):
    """FX traces the root's forward even when the root is a leaf type (a
    bare nn.TransformerEncoderLayer); wrapping it in a module whose forward
    has the same parameters makes it one call_module node, named after its
    type (``transformer_encoder_layer``)."""
    if not Tracer().is_leaf_module(module, ""):
        return module
    try:
        params = list(inspect.signature(module.forward).parameters.values())
    except (TypeError, ValueError):
        return module
    if any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params):
        return module
    defaults = {f"_default{i}": p.default for i, p in enumerate(params)
                if p.default is not p.empty}
    signature = ", ".join(p.name + (f"=_default{i}" if p.default is not p.empty else "")
                          for i, p in enumerate(params))
    names = ", ".join(p.name for p in params)
    attr = re.sub(r"(?<!^)(?=[A-Z])", "_", type(module).__name__).lower()
    namespace = dict(defaults)
    source = f"def forward(self, {signature}):\n    return self.{attr}({names})\n"
    # Compiled under this file's name: error locations skip it for the caller's.
    exec(compile(source, __file__, "exec"), namespace)
    wrapper_type = type(type(module).__name__, (torch.nn.Module,),
                        {"forward": namespace["forward"]})
    wrapper = wrapper_type()
    setattr(wrapper, attr, module)
    return wrapper.train(module.training)


@contextlib.contextmanager
def _traced_draws(tracer):
    """torch's random functions recorded as calls even with constant
    arguments (torch.randn(4, 8), torch.randperm(3)): FX would run them
    once and keep that draw as a constant, which the artifact would replay.
    Those that convert then draw on every call; the others are errors."""
    randoms = {id(f) for f in ops.RANDOM_FUNCTIONS}
    originals = {name: getattr(torch, name) for name in dir(torch)
                 if id(getattr(torch, name, None)) in randoms}

    def traced(fn):
        @functools.wraps(fn)
        def call(*args, **kwargs):
            return tracer.create_proxy("call_function", fn, args, kwargs)
        return call

    try:
        for name, fn in originals.items():
            setattr(torch, name, traced(fn))
        yield
    finally:
        for name, fn in originals.items():
            setattr(torch, name, fn)


def _trace(module, concrete):
    tracer = Tracer()
    try:
        with _fixed_proxy_iter(), _traced_draws(tracer):
            graph = tracer.trace(module, concrete_args=concrete or None)
    except TorchImportError:
        raise
    except Exception as e:
        where = _where_from_traceback(e.__traceback__)
        raise TorchImportError(
            f"torch.fx could not trace {type(module).__name__}"
            f"{' at ' + where if where else ''}: {type(e).__name__}: {e}",
            where=where) from e
    for node in graph.nodes:
        # The generated code would call torch.fx.wrap("torch.arange"), which
        # registers a name no later trace can find.
        if node.meta.get("is_wrapped") and node.target in Tracer.FACTORIES:
            del node.meta["is_wrapped"]
    return torch.fx.GraphModule(tracer.root, graph)


def _flatten(x):
    if isinstance(x, (tuple, list)):
        for item in x:
            yield from _flatten(item)
    elif isinstance(x, dict):
        for item in x.values():
            yield from _flatten(item)
    else:
        yield x


def _pairs(result, recorded):
    """(Value, TensorMeta) pairs at the same positions of a converter's
    result and the recorded result."""
    if isinstance(result, Value):
        if isinstance(recorded, (TensorMeta, torch.Tensor)):
            yield result, recorded
    elif isinstance(result, (tuple, list)) and isinstance(recorded, (tuple, list)) \
            and len(result) == len(recorded):
        for r, m in zip(result, recorded):
            yield from _pairs(r, m)


def _has_tensor(x):
    return any(isinstance(t, torch.Tensor) for t in _flatten(x))


def _mutated_input(node, gm):
    """The node an in-place op writes to (its first argument), else None."""
    first = node.args[0] if node.args else None
    if not isinstance(first, torch.fx.Node):
        return None
    if node.op == "call_method":
        name = node.target
        return first if name.endswith("_") and not name.endswith("__") else None
    if node.op == "call_function":
        name = getattr(node.target, "__name__", "")
        inplace = node.kwargs.get("inplace") is True or (
            name.endswith("_") and not name.endswith("__"))
        return first if inplace else None
    if node.op == "call_module":
        return first if getattr(gm.get_submodule(node.target), "inplace", False) is True \
            else None
    return None


class _RecordFailure(Exception):
    """Carries a TorchImportError out of Interpreter.run, which rewrites the
    message of any exception passing through it."""

    def __init__(self, error):
        super().__init__(str(error))
        self.error = error


def _is_random(node):
    if node.op == "call_function":
        return node.target in ops.RANDOM_FUNCTIONS
    return node.op == "call_method" and node.target in ops.RANDOM_METHODS


def _draws(node):
    """A random op that converts to the IR's random ops (it draws anew on
    every call of the artifact), and a dropout in training mode."""
    if node.op == "call_function":
        if node.target in ops.DRAWING_FUNCTIONS:
            return True
        if node.target in ops.DROPOUT_FUNCTIONS:
            return ops.dropout_trains(*node.args, **node.kwargs)
        return False
    return node.op == "call_method" and node.target in ops.DRAWING_METHODS


class _Recorder(torch.fx.Interpreter):
    """Runs the traced module once and records, per node, the value a later
    translation needs: tensors that depend on an input (``dynamic``) as
    their :class:`TensorMeta`, everything else (constants, Python values)
    as the value itself. Also tracks which nodes share storage (views), to
    check in-place ops."""

    def __init__(self, gm):
        super().__init__(gm)
        self.records = {}
        self.dynamic = set()
        self.alias_root = {}  # node -> first node whose storage its result shares
        self.same = {}        # node -> first node whose result is the same tensor

    def run_node(self, n):
        mutated = _mutated_input(n, self.module)
        if mutated is not None and self.alias_root.get(mutated, mutated).op == "get_attr":
            raise _RecordFailure(_final(_node_error(
                n, self.module, "an in-place op on a parameter or buffer changes the "
                "module's state; not supported")))
        inputs = {i: self.env[i] for i in n.all_input_nodes if i in self.env}
        try:
            result = super().run_node(n)
        except _RecordFailure:
            raise
        except Exception as e:
            raise _RecordFailure(_node_error(
                n, self.module, "running the module on the example inputs failed here: "
                f"{type(e).__name__}: {e}")) from e
        if n.op == "output":
            return result
        # A random op's result is new on every call: never a constant.
        dyn = _has_tensor(result) and (
            n.op == "placeholder" or _draws(n) or
            (n.op in _CALLS and any(i in self.dynamic for i in n.all_input_nodes)))
        if dyn:
            self.dynamic.add(n)
            self.records[n] = _metas(result)
        else:
            self.records[n] = _snapshot(result) if n.op in _CALLS else result
        if mutated is not None and dyn:
            self.dynamic.add(mutated)
        self.alias_root[n] = self._root(n, result, inputs)
        self.same[n] = next((self.same.get(i, i) for i, v in inputs.items()
                             if isinstance(result, torch.Tensor) and v is result), n)
        return result

    def _root(self, n, result, inputs):
        ptrs = {_storage(t) for t in _flatten(result) if isinstance(t, torch.Tensor)}
        ptrs.discard(None)
        for i, value in inputs.items():
            if any(_storage(t) in ptrs for t in _flatten(value) if isinstance(t, torch.Tensor)):
                return self.alias_root.get(i, i)
        return n


def _storage(t):
    try:
        ptr = t.storage().data_ptr()
    except Exception:
        return None
    return ptr or None


def _metas(x):
    """A dynamic result's structure with TensorMeta for its tensors."""
    if isinstance(x, torch.Tensor):
        return TensorMeta(tuple(x.shape), x.dtype)
    if isinstance(x, (tuple, list)):
        return tuple(_metas(v) for v in x)
    return x


def _snapshot(x):
    """Constant results are copied: a later in-place op must not change them."""
    if isinstance(x, torch.Tensor):
        return x.detach().clone()
    if isinstance(x, (tuple, list)) and not hasattr(x, "_fields"):
        return type(x)(_snapshot(v) for v in x)
    if isinstance(x, tuple):
        return type(x)(*(_snapshot(v) for v in x))
    return x


# --------------------------------------------------------------------------
# Error reporting

_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


def _is_user_file(path):
    path = os.path.abspath(path)
    return not (path.startswith(_TORCH_DIR) or path.startswith(_PACKAGE_DIR))


def _where(node):
    """The innermost user frame ("file:line") of an FX node's stack trace."""
    trace = getattr(node, "stack_trace", None) or ""
    for path, line in _FRAME.findall(trace):
        if _is_user_file(path):
            return f"{path}:{line}"
    return None


def _where_from_traceback(tb):
    where = None
    while tb is not None:
        path = tb.tb_frame.f_code.co_filename
        if _is_user_file(path):
            where = f"{path}:{tb.tb_lineno}"
        tb = tb.tb_next
    return where


_NAMESPACES = None


def _public_name(fn):
    """A function's public dotted name (torch.fft.fft, not torch._C._fft.fft_fft)."""
    global _NAMESPACES
    if _NAMESPACES is None:
        import math
        import operator
        import torch.nn.functional as F
        _NAMESPACES = [("torch", torch), ("torch.nn.functional", F),
                       ("torch.fft", torch.fft), ("torch.linalg", torch.linalg),
                       ("torch.special", torch.special), ("operator", operator),
                       ("math", math)]
    for prefix, ns in _NAMESPACES:
        for key, value in vars(ns).items():
            if value is fn and not key.startswith("_"):
                return f"{prefix}.{key}"
    module = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    return f"{module}.{name}" if module else name


def _type_name(cls):
    if getattr(torch.nn, cls.__name__, None) is cls:
        return f"torch.nn.{cls.__name__}"
    return f"{cls.__module__}.{cls.__qualname__}"


def _describe_target(node, gm):
    if node.op == "call_function":
        return _public_name(node.target)
    if node.op == "call_method":
        return f"Tensor.{node.target}"
    if node.op == "call_module":
        try:
            mtype = _type_name(type(gm.get_submodule(node.target)))
        except AttributeError:
            mtype = "?"
        return f"module '{node.target}' ({mtype})"
    if node.op == "placeholder":
        return f"input '{node.target}'"
    return f"{node.op} {node.target}"


def _node_error(node, gm, reason):
    target = _describe_target(node, gm)
    where = _where(node)
    at = f" at {where}" if where else ""
    return TorchImportError(f"node '{node.name}' ({target}){at}: {reason}",
                            node=node.name, target=target, where=where)


# --------------------------------------------------------------------------
# Translation


class _Graph:
    """The ONNX graph being built: nodes, initializers, unique names."""

    def __init__(self):
        self.nodes = []
        self.initializers = []
        self.value_names = set()
        self.node_names = set()

    def fresh_value(self, base):
        return self._fresh(base, self.value_names)

    def fresh_node(self, base):
        return self._fresh(base, self.node_names)

    @staticmethod
    def _fresh(base, used):
        name, i = base, 1
        while name in used:
            name, i = f"{base}_{i}", i + 1
        used.add(name)
        return name

    def add_initializer(self, name, tensor):
        array = tensor.detach().cpu().contiguous().numpy()
        self.initializers.append(numpy_helper.from_array(array, name))


class NodeContext:
    """What a converter sees of the FX node it translates (``cx``): the
    recorded result (``out``), and ``op``/``const``/``param`` to emit ONNX."""

    def __init__(self, translator, node):
        self._t = translator
        self._g = translator.graph
        self.node = node
        self.out = translator.recorder.records.get(node)
        self.module_path = node.target if node.op == "call_module" else ""
        self.emitted = []   # NodeProtos made for this FX node
        self.created = []   # their output Values
        self._scopes = []

    @property
    def out_shape(self):
        return tuple(self._out_meta().shape)

    @property
    def out_dtype(self):
        return self._out_meta().dtype

    def _out_meta(self):
        if not isinstance(self.out, (TensorMeta, torch.Tensor)):
            raise Unsupported("expected a tensor result, got "
                              f"{type(self.out).__name__}")
        return self.out

    @contextlib.contextmanager
    def scope(self, name):
        """Prefixes the suffixes of the nodes emitted inside (leaf modules)."""
        self._scopes.append(name)
        try:
            yield
        finally:
            self._scopes.pop()

    def op(self, op_type, inputs, *, outputs=1, tag=None, dtype=None, shape=None,
           onnx_attrs=None, **attrs):
        """Emits one ONNX node; returns its output Value (a list when
        ``outputs`` > 1). ``None`` inputs are omitted optional inputs.
        ``onnx_attrs``: attributes whose names the keywords take (``shape``)."""
        suffix = "/".join(self._scopes + [tag or op_type.lower()])
        name = self._g.fresh_node(f"{self.node.name}/{suffix}")
        in_names = ["" if v is None else self._t.use(v) for v in inputs]
        if dtype is None:
            dtype = next(v.dtype for v in inputs if v is not None)
        if outputs == 1:
            out_names = [self._g.fresh_value(name)]
        else:
            out_names = [self._g.fresh_value(f"{name}:{i}") for i in range(outputs)]
        attrs = {k: v for k, v in {**attrs, **(onnx_attrs or {})}.items() if v is not None}
        proto = helper.make_node(op_type, in_names, out_names, name=name, **attrs)
        self._g.nodes.append(proto)
        self.emitted.append(proto)
        values = [Value(n, shape, dtype) for n in out_names]
        self.created.extend(values)
        return values[0] if outputs == 1 else values

    def const(self, data, dtype=None, hint=None):
        """A constant (an initializer once a node uses it)."""
        t = data if isinstance(data, torch.Tensor) else torch.tensor(data, dtype=dtype)
        if dtype is not None:
            t = t.to(dtype)
        t = t.detach().cpu()
        return Value(None, tuple(t.shape), t.dtype, const=t,
                     hint=hint or f"{self.node.name}/const")

    def param(self, tensor, hint):
        """A parameter or buffer, one initializer however often it is used."""
        return self._t.param(tensor, hint)

    def derived_const(self, value, key, make):
        """``make(value.const)`` as a constant, made once per constant and key
        (a weight transposed at export time, shared by every use)."""
        return self._t.derived(value, key, make)

    def param_slice(self, tensor, start, stop, hint):
        """Rows start:stop of a parameter (a packed q/k/v projection)."""
        key = (id(tensor), start, stop)
        if key not in self._t.params:
            self._t.keep.append(tensor)
            self._t.params[key] = Value(None, (stop - start,) + tuple(tensor.shape[1:]),
                                        tensor.dtype, const=tensor.detach()[start:stop],
                                        hint=hint)
        return self._t.params[key]


class _Translator:
    """Walks the FX graph in order, turning each node into Values."""

    def __init__(self, name, gm, recorder, input_names, output_names):
        self.name = name
        self.gm = gm
        self.recorder = recorder
        self.graph = _Graph()
        self.env = {}
        self.params = {}
        self.keep = []  # keeps tensors alive while their ids key self.params
        self.inputs = []
        self.input_names = list(input_names) if input_names is not None else None
        self.output_names = list(output_names) if output_names is not None else None
        self.order = {n: i for i, n in enumerate(gm.graph.nodes)}

    # ---- values -----------------------------------------------------------

    def use(self, value):
        """The ONNX name of a Value, making a constant an initializer first."""
        if value.name is None:
            value.name = self.graph.fresh_value(value.hint or "const")
            self.graph.add_initializer(value.name, value.const)
        return value.name

    def param(self, tensor, hint):
        key = id(tensor)
        if key not in self.params:
            self.keep.append(tensor)
            self.params[key] = Value(None, tuple(tensor.shape), tensor.dtype,
                                     const=tensor.detach(), hint=hint)
        return self.params[key]

    def derived(self, value, key, make):
        cache_key = (id(value), key)
        if cache_key not in self.params:
            self.keep.append(value)
            const = make(value.const)
            base = value.hint or value.name or "const"
            self.params[cache_key] = Value(None, tuple(const.shape), const.dtype, const=const,
                                           hint=f"{base}.{key}")
        return self.params[cache_key]

    def _fold(self, x, hint):
        """A recorded constant as Values (tensors) and Python values."""
        if isinstance(x, torch.Tensor):
            ops.onnx_type(x.dtype)
            return Value(None, tuple(x.shape), x.dtype, const=x, hint=hint)
        if isinstance(x, tuple) and hasattr(x, "_fields"):
            return type(x)(*(self._fold(v, f"{hint}:{i}") for i, v in enumerate(x)))
        if isinstance(x, (tuple, list)):
            return type(x)(self._fold(v, f"{hint}:{i}") for i, v in enumerate(x))
        return x

    # ---- the walk ---------------------------------------------------------

    def translate(self):
        placeholders = [n for n in self.gm.graph.nodes if n.op == "placeholder"
                        and n in self.recorder.dynamic]
        self._reserve_input_names(placeholders)
        output = None
        for node in self.gm.graph.nodes:
            if node.op == "placeholder":
                self.env[node] = self._placeholder(node)
            elif node.op == "get_attr":
                value = self.recorder.records[node]
                self.env[node] = (self.param(value, node.target)
                                  if isinstance(value, torch.Tensor) else value)
            elif node.op == "output":
                output = node
            else:
                self._call(node)
        return self._model(output)

    def _reserve_input_names(self, placeholders):
        if self.input_names is None:
            self.input_names = [n.target for n in placeholders]
        elif len(self.input_names) != len(placeholders):
            raise TorchImportError(f"{len(self.input_names)} input names given for "
                                   f"{len(placeholders)} tensor inputs")
        for name in self.input_names:
            if name in self.graph.value_names:
                raise TorchImportError(f"input name '{name}' is used twice")
            self.graph.value_names.add(name)
        if self.output_names is not None:
            for name in self.output_names:
                if name in self.graph.value_names:
                    raise TorchImportError(f"output name '{name}' is used twice or "
                                           "also names an input")
                self.graph.value_names.add(name)

    def _placeholder(self, node):
        value = self.recorder.records.get(node)
        if node not in self.recorder.dynamic:
            return self._fold(value, node.name)
        if not isinstance(value, TensorMeta):
            raise _node_error(node, self.gm, "tensor inputs inside tuples, lists or dicts "
                              "are not supported; pass tensors as separate arguments")
        try:
            ops.onnx_type(value.dtype)
        except Unsupported as e:
            raise _node_error(node, self.gm, f"model input: {e}") from None
        name = self.input_names[len(self.inputs)]
        v = Value(name, value.shape, value.dtype)
        self.inputs.append(v)
        return v

    def _call(self, node):
        try:
            result = self._convert(node)
        except TorchImportError:
            raise
        except Unsupported as e:
            raise _node_error(node, self.gm, str(e)) from None
        except Exception as e:  # a translation bug: still name the node
            raise _node_error(node, self.gm, "internal error in the PyTorch importer: "
                              f"{type(e).__name__}: {e}") from e
        self.env[node] = result
        mutated = _mutated_input(node, self.gm)
        if mutated is not None:
            # Every name of the mutated tensor (x, and y of y = x.add_(1))
            # reads the new value from here on.
            same = self.recorder.same
            names = [n for n, s in same.items() if s is same.get(mutated, mutated)]
            self._check_inplace(node, mutated, names)
            for n in names:
                self.env[n] = result

    def _convert(self, node):
        rec = self.recorder.records.get(node)
        if _is_random(node) and not _draws(node):
            raise _final(_node_error(node, self.gm, "this random op is not supported (the "
                                     "artifact would replay one draw); rand, randn, "
                                     "rand_like, randn_like, bernoulli, multinomial with "
                                     "replacement and dropout are"))
        if node not in self.recorder.dynamic:
            reads_input = any(i in self.recorder.dynamic for i in node.all_input_nodes)
            if reads_input and rec is not None and not self._is_shape_query(node):
                raise Unsupported(
                    f"this makes a Python value ({type(rec).__name__}) from tensor data; "
                    "a Tessel graph cannot depend on tensor values (static shapes, no "
                    "data-dependent control flow)")
            return self._fold(rec, node.name)
        fn, args, kwargs = self._converter(node)
        cx = NodeContext(self, node)
        result = ops.call_converter(fn, cx, *args, **kwargs)
        return self._finish(cx, result)

    def _converter(self, node):
        args = torch.fx.node.map_arg(node.args, lambda n: self.env[n])
        kwargs = torch.fx.node.map_arg(node.kwargs, lambda n: self.env[n])
        if node.op == "call_function":
            fn = ops.FUNCTIONS.get(node.target)
            name = getattr(node.target, "__name__", "")
            if fn is None and name.endswith("_") and not name.endswith("__"):
                # torch.sigmoid_ and the like: the out-of-place converter
                base = [getattr(ns, name[:-1], None) for ns in (torch, torch.nn.functional)]
                fn = next((ops.FUNCTIONS[b] for b in base if b in ops.FUNCTIONS), None)
        elif node.op == "call_method":
            name = node.target
            fn = ops.METHODS.get(name)
            if fn is None and name.endswith("_") and not name.endswith("__"):
                fn = ops.METHODS.get(name[:-1])
        else:
            module = self.gm.get_submodule(node.target)
            fn = ops.MODULES.get(type(module))
            if fn is not None:
                args = (module,) + tuple(args)
            else:
                raise Unsupported(f"module type {_type_name(type(module))} is not "
                                  "supported")
        if fn is None:
            what = _describe_target(node, self.gm)
            raise Unsupported(f"{what} is not supported")
        return fn, args, kwargs

    def _is_shape_query(self, node):
        if node.op == "call_method":
            return node.target in ops.SHAPE_METHODS
        if node.op == "call_function":
            if node.target is getattr:
                return len(node.args) > 1 and node.args[1] in ops.SHAPE_ATTRIBUTES
            return node.target in ops.SHAPE_FUNCTIONS or getattr(
                node.target, "__name__", "") == "_assert_is_none"
        return False

    def _check_inplace(self, node, mutated, names):
        """An in-place op is rebound as a new value; that is only right when
        no other view of the same storage is read afterwards."""
        alias = self.recorder.alias_root
        root = alias.get(mutated, mutated)
        here = self.order[node]
        for other, r in alias.items():
            if r is not root or other is node or other in names:
                continue
            if any(self.order[u] > here for u in other.users):
                raise _node_error(node, self.gm, f"in-place op on '{mutated.name}', which "
                                  f"shares memory with '{other.name}' read later; not "
                                  "supported (use the out-of-place op)")

    def _finish(self, cx, result):
        """Gives the FX node's name to the ONNX node producing its result,
        and the recorded shapes/dtypes to the result Values."""
        for value, meta in _pairs(result, cx.out):
            self._set_meta(cx, value, meta)
        values = [v for v in _flatten(result) if isinstance(v, Value)]
        fresh = [v for v in values if any(v is c for c in cx.created)]
        producers = {id(p): p for p in cx.emitted for v in fresh if v.name in p.output}
        if len(producers) == 1:
            proto = next(iter(producers.values()))
            self._rename_node(cx, proto, cx.node.name)
        return result

    def _set_meta(self, cx, value, meta):
        if value.dtype != meta.dtype:
            raise Unsupported(f"internal: translated dtype {value.dtype} differs from "
                              f"torch's {meta.dtype}")
        if any(value is v for v in cx.created):
            value.shape = tuple(meta.shape)

    def _rename_node(self, cx, proto, name):
        proto.name = name if name not in self.graph.node_names else \
            self.graph.fresh_node(name)
        self.graph.node_names.add(proto.name)
        outs = list(proto.output)
        for i, old in enumerate(outs):
            new = self.graph.fresh_value(name if len(outs) == 1 else f"{name}:{i}")
            self._rename_value(cx, old, new)

    def _rename_value(self, cx, old, new):
        for p in cx.emitted:
            for field in (p.input, p.output):
                for i, n in enumerate(field):
                    if n == old:
                        field[i] = new
        for v in cx.created:
            if v.name == old:
                v.name = new
        self.graph.value_names.discard(old)

    # ---- the model --------------------------------------------------------

    def _model(self, output_node):
        outputs = []
        for item in _flatten(torch.fx.node.map_arg(output_node.args[0],
                                                   lambda n: self.env[n])):
            if isinstance(item, Value):
                outputs.append(item)
        if not outputs:
            raise TorchImportError("the module returns no tensor")
        names = self.output_names
        if names is None:
            names = [self.graph.fresh_value(b) for b in _default_output_names(len(outputs))]
        elif len(names) != len(outputs):
            raise TorchImportError(f"{len(names)} output names given for "
                                   f"{len(outputs)} tensor outputs")
        produced = {o: p for p in self.graph.nodes for o in p.output}
        input_names = {v.name for v in self.inputs}
        taken = set()
        graph_outputs = []
        for value, name in zip(outputs, names):
            src = self.use(value)
            if src in produced and src not in taken and src not in input_names:
                _rename_value(self.graph.nodes, src, name)
                value.name = name
            else:
                self.graph.nodes.append(helper.make_node(
                    "Identity", [src], [name], name=self.graph.fresh_node(f"{name}/identity")))
            taken.add(name)
            graph_outputs.append(helper.make_tensor_value_info(
                name, ops.onnx_type(value.dtype), list(value.shape)))
        self._prune([o.name for o in graph_outputs])
        graph_inputs = [helper.make_tensor_value_info(v.name, ops.onnx_type(v.dtype),
                                                      list(v.shape)) for v in self.inputs]
        graph = helper.make_graph(self.graph.nodes, self.name, graph_inputs, graph_outputs,
                                  initializer=self.graph.initializers)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="tessel.torch_importer",
                                  producer_version=torch.__version__)
        model.ir_version = 8
        try:
            onnx.checker.check_model(model)
        except onnx.checker.ValidationError as e:
            raise TorchImportError(f"internal error: the PyTorch importer produced an "
                                   f"invalid ONNX model: {e}") from e
        return model

    def _prune(self, outputs):
        """Drops nodes and initializers no output depends on (translations of
        FX nodes whose result is never used)."""
        needed = set(outputs)
        kept = []
        for node in reversed(self.graph.nodes):
            if any(o in needed for o in node.output):
                kept.append(node)
                needed.update(i for i in node.input if i)
        self.graph.nodes = kept[::-1]
        self.graph.initializers = [t for t in self.graph.initializers if t.name in needed]


