"""Translations of torch operations into ONNX operators, for the PyTorch
importer (:mod:`tessel.torch_importer`).

Three dispatch tables map an FX node to the function that translates it:

* ``FUNCTIONS``: ``call_function`` targets (``torch.add``, ``operator.add``,
  ``torch.nn.functional.relu``, ...), keyed by the callable;
* ``METHODS``: ``call_method`` targets (``Tensor.view``, ...), keyed by the
  method name (an in-place ``add_`` is looked up as ``add``);
* ``MODULES``: ``call_module`` targets (leaf ``torch.nn`` modules), keyed by
  the module's type.

A converter is called like the torch function it translates, with the
context ``cx`` first (and, for modules, the module second)::

    @converts(torch.softmax, F.softmax, "softmax")
    def softmax(cx, input, dim=None, _stacklevel=3, dtype=None): ...

Tensor arguments arrive as :class:`Value` (an ONNX value with its static
shape and torch dtype; a constant also carries its contents), everything
else as the Python value the model computed (sizes, dims, dtypes are
already folded). A converter returns a :class:`Value`, a tuple of them, or
a Python value; it emits ONNX nodes with ``cx.op(...)`` and makes
constants with ``cx.const(...)``. ``cx.out`` is the value torch computed
for the node on the example inputs (a :class:`TensorMeta` for a tensor),
so a converter reads result shapes and dtypes from it instead of
re-deriving torch's rules (view's ``-1``, type promotion, adaptive
pooling). The helpers that emit ONNX (``linear``, ``reshape``,
``layer_norm``, ...) never read ``cx.out``, so the module translations
(MultiheadAttention, TransformerEncoderLayer) are built from them.

A converter that meets an argument it cannot express raises
:class:`Unsupported`; the importer adds the node, its target and the user
source line.
"""

import collections
import inspect
import math
import operator

import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import TensorProto

# --------------------------------------------------------------------------
# Values, errors, dispatch tables


class Unsupported(Exception):
    """Raised by a converter for an op, argument or attribute value it does
    not translate; the message says which and why."""


TensorMeta = collections.namedtuple("TensorMeta", "shape dtype")
TensorMeta.__doc__ = "Shape (a tuple) and dtype of a tensor torch computed."

# What topk/sort/max(dim) return; FX code reads it by index or by name.
ValuesIndices = collections.namedtuple("ValuesIndices", "values indices")


class Value:
    """A tensor of the ONNX graph being built.

    ``name`` is its ONNX name (``None`` for a constant no node uses yet),
    ``shape`` its static shape (``None`` when a helper did not track it),
    ``dtype`` a torch dtype; ``const`` holds a constant's contents (a CPU
    tensor) and ``hint`` the name a constant gets when materialized.
    """

    __slots__ = ("name", "shape", "dtype", "const", "hint")

    def __init__(self, name, shape, dtype, const=None, hint=None):
        self.name = name
        self.shape = None if shape is None else tuple(int(d) for d in shape)
        self.dtype = dtype
        self.const = const
        self.hint = hint

    @property
    def rank(self):
        return len(self.shape)

    def __repr__(self):
        kind = "const" if self.const is not None else "value"
        return f"<{kind} {self.name or self.hint} {self.shape} {self.dtype}>"


FUNCTIONS = {}
METHODS = {}
MODULES = {}


def converts(*targets):
    """Registers a converter for torch callables and Tensor method names."""

    def register(fn):
        for target in targets:
            if isinstance(target, str):
                METHODS[target] = fn
            else:
                FUNCTIONS[target] = fn
        return fn

    return register


def converts_module(*types):
    """Registers a converter ``fn(cx, module, *forward_args)`` for module types."""

    def register(fn):
        for t in types:
            MODULES[t] = fn
        return fn

    return register


def call_converter(fn, cx, *args, **kwargs):
    """Calls a converter, turning an argument list it does not take (a torch
    overload or keyword this importer does not know) into Unsupported."""
    try:
        bound = inspect.signature(fn).bind(cx, *args, **kwargs)
    except TypeError as e:
        raise Unsupported(f"unsupported arguments ({e})") from None
    return fn(*bound.args, **bound.kwargs)


# --------------------------------------------------------------------------
# dtypes and small utilities

_ONNX_TYPES = {
    torch.float32: TensorProto.FLOAT,
    torch.float16: TensorProto.FLOAT16,
    torch.float64: TensorProto.DOUBLE,
    torch.int64: TensorProto.INT64,
    torch.int32: TensorProto.INT32,
    torch.int16: TensorProto.INT16,
    torch.int8: TensorProto.INT8,
    torch.uint8: TensorProto.UINT8,
    torch.bool: TensorProto.BOOL,
}


def onnx_type(dtype):
    """The ONNX element type of a torch dtype Tessel supports."""
    try:
        return _ONNX_TYPES[dtype]
    except KeyError:
        raise Unsupported(f"dtype {dtype} is not supported (Tessel supports "
                          "float32/16/64, int64/32/16/8, uint8 and bool)") from None


def is_tensor(x):
    return isinstance(x, Value)


def static_int(x, what):
    """A Python int from an argument that must be known at export time."""
    if isinstance(x, Value):
        if x.const is None or x.const.numel() != 1:
            raise Unsupported(f"{what} depends on tensor data; Tessel needs it "
                              "known at export time")
        x = x.const.item()
    if isinstance(x, bool) or not isinstance(x, int):
        try:
            return operator.index(x)
        except TypeError:
            raise Unsupported(f"{what} must be an int, got {x!r}") from None
    return x


def norm_dim(dim, rank, what="dim"):
    dim = static_int(dim, what)
    if not -max(rank, 1) <= dim < max(rank, 1):
        raise Unsupported(f"{what} {dim} is out of range for a rank-{rank} tensor")
    return dim + rank if dim < 0 else dim


def norm_dims(dim, rank):
    """Sorted, non-negative dims; None or () means all."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return list(range(rank))
    if isinstance(dim, (tuple, list, torch.Size)):
        return sorted(norm_dim(d, rank) for d in dim)
    return [norm_dim(dim, rank)]


def ntuple(x, n, what):
    """Expands an int (or a 1-element sequence) to n ints, as torch's _pair does."""
    if isinstance(x, (tuple, list, torch.Size)):
        x = [static_int(v, what) for v in x]
        if len(x) == 1:
            x = x * n
        if len(x) != n:
            raise Unsupported(f"{what} {tuple(x)} does not have {n} entries")
        return x
    return [static_int(x, what)] * n


def varargs(args, what):
    """``view(2, 3)`` and ``view((2, 3))`` both give [2, 3]."""
    if len(args) == 1 and isinstance(args[0], (tuple, list, torch.Size)):
        args = args[0]
    return [static_int(a, what) for a in args]


def meta_shape(fn, *shapes):
    """Result shape of fn on tensors of the given shapes (torch's own rules,
    on the meta device), or None when a shape is unknown."""
    if any(s is None for s in shapes):
        return None
    return tuple(fn(*(torch.empty(s, device="meta") for s in shapes)).shape)


def broadcast(*shapes):
    if any(s is None for s in shapes):
        return None
    return tuple(torch.broadcast_shapes(*shapes))


def _proto(x):
    """Stand-in for torch's type promotion: a meta tensor or the scalar."""
    if isinstance(x, Value):
        return torch.empty(x.shape, dtype=x.dtype, device="meta")
    return x


def result_type(a, b):
    return torch.result_type(_proto(a), _proto(b))


# --------------------------------------------------------------------------
# Helpers that emit ONNX (they never read cx.out)


def ints(cx, values):
    """A 1-D int64 constant (shapes, axes, pads)."""
    return cx.const(torch.tensor([int(v) for v in values], dtype=torch.int64))


def scalar(cx, x, dtype):
    return cx.const(torch.tensor(x, dtype=dtype))


def cast(cx, x, dtype, tag=None):
    if x.dtype == dtype:
        return x
    if x.const is not None:
        return cx.const(x.const.to(dtype))
    return cx.op("Cast", [x], to=onnx_type(dtype), dtype=dtype, shape=x.shape, tag=tag)


def as_value(cx, x, dtype):
    """A tensor operand of the given dtype from a Value or a Python number."""
    if isinstance(x, Value):
        return cast(cx, x, dtype)
    if isinstance(x, (bool, int, float)):
        return scalar(cx, x, dtype)
    raise Unsupported(f"unsupported operand {x!r} (expected a tensor or a number)")


def binary(cx, op_type, a, b, dtype, out_dtype=None, tag=None):
    """An elementwise ONNX op on two operands cast to ``dtype``."""
    a, b = as_value(cx, a, dtype), as_value(cx, b, dtype)
    return cx.op(op_type, [a, b], dtype=out_dtype or dtype,
                 shape=broadcast(a.shape, b.shape), tag=tag)


def unary(cx, op_type, x, tag=None, **attrs):
    return cx.op(op_type, [x], shape=x.shape, tag=tag, **attrs)


def reshape(cx, x, shape, tag=None):
    shape = tuple(int(d) for d in shape)
    if x.shape == shape:
        return x
    if x.const is not None:
        return cx.const(x.const.reshape(shape))
    return cx.op("Reshape", [x, ints(cx, shape)], shape=shape, tag=tag)


def transpose(cx, x, perm, tag=None):
    perm = [int(p) for p in perm]
    if perm == list(range(len(perm))):
        return x
    if x.const is not None:
        return cx.const(x.const.permute(perm).contiguous())
    shape = None if x.shape is None else tuple(x.shape[p] for p in perm)
    return cx.op("Transpose", [x], perm=perm, shape=shape, tag=tag)


def unsqueeze(cx, x, axis, tag=None):
    shape = list(x.shape)
    shape.insert(axis, 1)
    return reshape(cx, x, shape, tag=tag)


def matmul(cx, a, b, tag=None):
    return cx.op("MatMul", [a, b], shape=meta_shape(torch.matmul, a.shape, b.shape), tag=tag)


def linear(cx, x, weight, bias=None, tag=None):
    """x @ weight.T + bias: Gemm for a matrix input, else MatMul (+ Add)
    with the weight transposed at export time when it is a constant."""
    out_features = weight.shape[0]
    shape = x.shape[:-1] + (out_features,)
    if x.rank == 2 and weight.rank == 2:
        inputs = [x, weight] + ([bias] if bias is not None else [])
        return cx.op("Gemm", inputs, transB=1, shape=shape, tag=tag)
    if weight.const is not None:
        wt = cx.derived_const(weight, "T", lambda w: w.t().contiguous())
    else:
        wt = transpose(cx, weight, [1, 0], tag=f"{tag}/weight_t" if tag else None)
    y = cx.op("MatMul", [x, wt], shape=shape, tag=f"{tag}/matmul" if tag else None)
    if bias is not None:
        y = cx.op("Add", [y, bias], shape=shape, tag=tag)
    return y


def layer_norm(cx, x, normalized_shape, weight=None, bias=None, eps=1e-5, tag=None):
    k = len(normalized_shape)
    if weight is None:
        weight = cx.const(torch.ones(tuple(normalized_shape), dtype=x.dtype))
    inputs = [x, weight] + ([bias] if bias is not None else [])
    return cx.op("LayerNormalization", inputs, axis=-k, epsilon=float(eps),
                 shape=x.shape, tag=tag)


def softmax_last(cx, x, tag=None):
    return unary(cx, "Softmax", x, axis=-1, tag=tag)


def gelu_of(cx, x, approximate="none", tag=None):
    """GELU, decomposed as torch.onnx does at opset 17 (ONNX has no Gelu
    before opset 20)."""
    t = tag or "gelu"
    dt = x.dtype
    if approximate == "none":
        # x * 0.5 * (1 + erf(x / sqrt(2)))
        e = unary(cx, "Erf", binary(cx, "Div", x, math.sqrt(2.0), dt, tag=f"{t}/div"),
                  tag=f"{t}/erf")
        y = binary(cx, "Mul", x, binary(cx, "Add", e, 1.0, dt, tag=f"{t}/add"), dt,
                   tag=f"{t}/mul")
        return binary(cx, "Mul", y, 0.5, dt, tag=tag)
    if approximate == "tanh":
        # 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
        x3 = binary(cx, "Mul", binary(cx, "Mul", x, x, dt, tag=f"{t}/sq"), x, dt,
                    tag=f"{t}/cube")
        inner = binary(cx, "Add", x, binary(cx, "Mul", x3, 0.044715, dt, tag=f"{t}/c"), dt,
                       tag=f"{t}/inner")
        th = unary(cx, "Tanh", binary(cx, "Mul", inner, math.sqrt(2.0 / math.pi), dt,
                                      tag=f"{t}/scale"), tag=f"{t}/tanh")
        y = binary(cx, "Mul", x, binary(cx, "Add", th, 1.0, dt, tag=f"{t}/add"), dt,
                   tag=f"{t}/mul")
        return binary(cx, "Mul", y, 0.5, dt, tag=tag)
    raise Unsupported(f"gelu approximate={approximate!r} is not supported "
                      "(only 'none' and 'tanh')")


def relu_of(cx, x, tag=None):
    return unary(cx, "Relu", x, tag=tag)


def reduce(cx, op_type, x, axes, keepdim, tag=None):
    """A Reduce* op over sorted non-negative axes (all when axes is None)."""
    axes = list(range(x.rank)) if axes is None else list(axes)
    keep = 1 if keepdim else 0
    shape = None
    if x.shape is not None:
        shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape)
                      if keepdim or i not in axes)
    if not axes:
        return x
    if op_type == "ReduceSum":  # axes is an input from opset 13
        return cx.op(op_type, [x, ints(cx, axes)], keepdims=keep, shape=shape, tag=tag)
    return cx.op(op_type, [x], axes=axes, keepdims=keep, shape=shape, tag=tag)


def slice_(cx, x, starts, ends, axes, steps=None, tag=None):
    inputs = [x, ints(cx, starts), ints(cx, ends), ints(cx, axes)]
    if steps is not None and any(s != 1 for s in steps):
        inputs.append(ints(cx, steps))
    shape = None
    if x.shape is not None:
        shape = list(x.shape)
        for i, (a, s, e) in enumerate(zip(axes, starts, ends)):
            step = steps[i] if steps else 1
            shape[a] = len(range(s, e, step))
    return cx.op("Slice", inputs, shape=shape, tag=tag)


def additive_mask(cx, mask, dtype, tag):
    """An attention mask as an additive float mask: a bool mask becomes
    -inf where True (position not allowed), 0 elsewhere."""
    if mask.dtype != torch.bool:
        return cast(cx, mask, dtype)
    if mask.const is not None:
        zeros = torch.zeros(mask.const.shape, dtype=dtype)
        return cx.const(zeros.masked_fill(mask.const, float("-inf")))
    return cx.op("Where", [mask, scalar(cx, float("-inf"), dtype), scalar(cx, 0.0, dtype)],
                 dtype=dtype, shape=mask.shape, tag=tag)


# --------------------------------------------------------------------------
# Elementwise arithmetic and comparisons


def _arith(op_type):
    def convert(cx, input, other, *, out=None):
        if out is not None:
            raise Unsupported("out= is not supported")
        dt = cx.out_dtype
        return binary(cx, op_type, input, other, dt)
    convert.__name__ = op_type.lower()
    return convert


converts(torch.mul, torch.multiply, operator.mul, "mul", "multiply",
                "__mul__", "__rmul__")(_arith("Mul"))
converts(torch.maximum, torch.fmax, "maximum", "fmax")(_arith("Max"))
converts(torch.minimum, torch.fmin, "minimum", "fmin")(_arith("Min"))


def _scaled(cx, other, alpha):
    if alpha == 1:
        return other
    if is_tensor(other):
        return binary(cx, "Mul", other, alpha, cx.out_dtype, tag="alpha")
    return other * alpha


@converts(torch.add, operator.add, "add", "__add__", "__radd__")
def add(cx, input, other, *, alpha=1, out=None):
    if out is not None:
        raise Unsupported("out= is not supported")
    return binary(cx, "Add", input, _scaled(cx, other, alpha), cx.out_dtype)


@converts(torch.sub, torch.subtract, operator.sub, "sub", "subtract", "__sub__")
def sub(cx, input, other, *, alpha=1, out=None):
    if out is not None:
        raise Unsupported("out= is not supported")
    return binary(cx, "Sub", input, _scaled(cx, other, alpha), cx.out_dtype)


@converts(torch.rsub, "__rsub__")
def rsub(cx, input, other, *, alpha=1):
    return binary(cx, "Sub", other, _scaled(cx, input, alpha), cx.out_dtype)


def _floor_div(cx, a, b, dt, rounding):
    """Division rounded toward -inf ('floor') or 0 ('trunc'); integer
    operands divide in float64 (exact below 2**53)."""
    work = dt if dt.is_floating_point else torch.float64
    q = binary(cx, "Div", a, b, work, tag="div")
    if rounding == "floor":
        q = unary(cx, "Floor", q, tag="floor")
    else:  # trunc(x) = sign(x) * floor(|x|)
        q = binary(cx, "Mul", unary(cx, "Sign", q, tag="sign"),
                   unary(cx, "Floor", unary(cx, "Abs", q, tag="abs"), tag="floor"),
                   work, tag="trunc")
    return cast(cx, q, dt)


@converts(torch.div, torch.divide, torch.true_divide, operator.truediv, "div",
          "divide", "true_divide", "__truediv__", "__div__")
def div(cx, input, other, *, rounding_mode=None, out=None):
    if out is not None:
        raise Unsupported("out= is not supported")
    dt = cx.out_dtype
    if rounding_mode is None:
        return binary(cx, "Div", input, other, dt)
    if rounding_mode not in ("floor", "trunc"):
        raise Unsupported(f"rounding_mode={rounding_mode!r} is not supported")
    return _floor_div(cx, input, other, dt, rounding_mode)


@converts(torch.floor_divide, operator.floordiv, "floor_divide", "__floordiv__")
def floor_divide(cx, input, other):
    return _floor_div(cx, input, other, cx.out_dtype, "floor")


@converts(torch.remainder, operator.mod, "remainder", "__mod__")
def remainder(cx, input, other):
    """Python's modulo: the result has the divisor's sign."""
    dt = cx.out_dtype
    if not dt.is_floating_point:
        return binary(cx, "Mod", input, other, dt)
    q = unary(cx, "Floor", binary(cx, "Div", input, other, dt, tag="div"), tag="floor")
    return binary(cx, "Sub", input, binary(cx, "Mul", q, other, dt, tag="mul"), dt)


@converts(torch.fmod, "fmod")
def fmod(cx, input, other):
    dt = cx.out_dtype
    a, b = as_value(cx, input, dt), as_value(cx, other, dt)
    return cx.op("Mod", [a, b], fmod=1, shape=broadcast(a.shape, b.shape))


@converts(torch.pow, operator.pow, "pow", "__pow__", "__rpow__", torch.float_power,
          "float_power")
def pow_(cx, input, exponent):
    dt = cx.out_dtype
    if not is_tensor(exponent) and is_tensor(input):
        x = cast(cx, input, dt)
        if exponent == 1:
            return x
        if exponent == 2:
            return binary(cx, "Mul", x, x, dt)
        if exponent == 0.5 and dt.is_floating_point:
            return unary(cx, "Sqrt", x)
    return binary(cx, "Pow", input, exponent, dt)


def _compare(op_type, negate=False):
    def convert(cx, input, other, *, out=None):
        if out is not None:
            raise Unsupported("out= is not supported")
        dt = result_type(input, other)
        y = binary(cx, op_type, input, other, dt, out_dtype=torch.bool,
                   tag=op_type.lower() if negate else None)
        return unary(cx, "Not", y) if negate else y
    convert.__name__ = op_type.lower()
    return convert


converts(torch.eq, operator.eq, "eq", "__eq__")(_compare("Equal"))
converts(torch.ne, torch.not_equal, operator.ne, "ne", "not_equal", "__ne__")(
    _compare("Equal", negate=True))
converts(torch.gt, torch.greater, operator.gt, "gt", "greater", "__gt__")(_compare("Greater"))
converts(torch.ge, torch.greater_equal, operator.ge, "ge", "greater_equal", "__ge__")(
    _compare("GreaterOrEqual"))
converts(torch.lt, torch.less, operator.lt, "lt", "less", "__lt__")(_compare("Less"))
converts(torch.le, torch.less_equal, operator.le, "le", "less_equal", "__le__")(
    _compare("LessOrEqual"))


def _logical(op_type):
    def convert(cx, input, other, *, out=None):
        if out is not None:
            raise Unsupported("out= is not supported")
        return binary(cx, op_type, input, other, torch.bool)
    return convert


converts(torch.logical_and, "logical_and")(_logical("And"))
converts(torch.logical_or, "logical_or")(_logical("Or"))
converts(torch.logical_xor, "logical_xor")(_logical("Xor"))


def _bitwise(op_type):
    def convert(cx, input, other):
        if cx.out_dtype != torch.bool:
            raise Unsupported(f"bitwise {op_type} on {cx.out_dtype} tensors is not "
                              "supported (only on bool tensors)")
        return binary(cx, op_type, input, other, torch.bool)
    return convert


converts(operator.and_, torch.bitwise_and, "bitwise_and", "__and__")(_bitwise("And"))
converts(operator.or_, torch.bitwise_or, "bitwise_or", "__or__")(_bitwise("Or"))
converts(operator.xor, torch.bitwise_xor, "bitwise_xor", "__xor__")(_bitwise("Xor"))


@converts(torch.logical_not, "logical_not")
def logical_not(cx, input):
    return unary(cx, "Not", cast(cx, input, torch.bool))


@converts(operator.invert, torch.bitwise_not, "bitwise_not", "__invert__")
def bitwise_not(cx, input):
    if input.dtype != torch.bool:
        raise Unsupported(f"bitwise not on {input.dtype} tensors is not supported "
                          "(only on bool tensors)")
    return unary(cx, "Not", input)


@converts(torch.where, "where")
def where(cx, condition, input=None, other=None):
    if input is None or other is None:
        raise Unsupported("torch.where(condition) (nonzero) has a data-dependent "
                          "shape; pass input and other")
    dt = cx.out_dtype
    a, b = as_value(cx, input, dt), as_value(cx, other, dt)
    c = cast(cx, condition, torch.bool)
    return cx.op("Where", [c, a, b], dtype=dt, shape=cx.out_shape)


@converts("masked_fill", torch.masked_fill)
def masked_fill(cx, input, mask, value):
    dt = input.dtype
    v = as_value(cx, value, dt)
    return cx.op("Where", [cast(cx, mask, torch.bool), v, input], dtype=dt, shape=input.shape)


@converts(torch.clamp, torch.clip, "clamp", "clip")
def clamp(cx, input, min=None, max=None):
    dt = cx.out_dtype
    x = cast(cx, input, dt)
    if is_tensor(min) or is_tensor(max):
        if min is not None:
            x = binary(cx, "Max", x, min, dt, tag="min")
        if max is not None:
            x = binary(cx, "Min", x, max, dt)
        return x
    inputs = [x, None if min is None else scalar(cx, min, dt),
              None if max is None else scalar(cx, max, dt)]
    while inputs[-1] is None:
        inputs.pop()
    return cx.op("Clip", inputs, shape=x.shape)


@converts(torch.clamp_min, "clamp_min")
def clamp_min(cx, input, min):
    return clamp(cx, input, min=min)


@converts(torch.clamp_max, "clamp_max")
def clamp_max(cx, input, max):
    return clamp(cx, input, max=max)


# --------------------------------------------------------------------------
# Elementwise unary ops and activations

_UNARY = {
    "Relu": (torch.relu, F.relu, torch.relu_, F.relu_, "relu"),
    "Sigmoid": (torch.sigmoid, F.sigmoid, torch.special.expit, "sigmoid"),
    "Tanh": (torch.tanh, F.tanh, "tanh"),
    "Exp": (torch.exp, "exp"),
    "Log": (torch.log, "log"),
    "Sqrt": (torch.sqrt, "sqrt"),
    "Abs": (torch.abs, torch.absolute, operator.abs, "abs", "absolute", "__abs__"),
    "Neg": (torch.neg, torch.negative, operator.neg, "neg", "negative", "__neg__"),
    "Reciprocal": (torch.reciprocal, "reciprocal"),
    "Sin": (torch.sin, "sin"),
    "Cos": (torch.cos, "cos"),
    "Tan": (torch.tan, "tan"),
    "Asin": (torch.asin, "asin"),
    "Acos": (torch.acos, "acos"),
    "Atan": (torch.atan, "atan"),
    "Sinh": (torch.sinh, "sinh"),
    "Cosh": (torch.cosh, "cosh"),
    "Erf": (torch.erf, torch.special.erf, "erf"),
    "Floor": (torch.floor, "floor"),
    "Ceil": (torch.ceil, "ceil"),
    "Sign": (torch.sign, "sign"),
    "Softsign": (F.softsign,),
    "HardSwish": (F.hardswish,),
}


def _unary(op_type):
    def convert(cx, input, inplace=False):
        return unary(cx, op_type, cast(cx, input, cx.out_dtype))
    convert.__name__ = op_type.lower()
    return convert


for _op_type, _targets in _UNARY.items():
    converts(*_targets)(_unary(_op_type))


@converts(operator.pos, "__pos__", "positive", torch.positive)
def positive(cx, input):
    return input


def _is_special(op_type):
    def convert(cx, input):
        x = input if input.dtype.is_floating_point else cast(cx, input, torch.float32)
        return cx.op(op_type, [x], dtype=torch.bool, shape=x.shape)
    return convert


converts(torch.isnan, "isnan")(_is_special("IsNaN"))
converts(torch.isinf, "isinf")(_is_special("IsInf"))


@converts(torch.round, "round")
def round_(cx, input, *, decimals=0):
    if decimals != 0:
        raise Unsupported(f"round with decimals={decimals} is not supported")
    return unary(cx, "Round", input)  # both round half to even


@converts(torch.rsqrt, "rsqrt")
def rsqrt(cx, input):
    x = cast(cx, input, cx.out_dtype)
    return unary(cx, "Reciprocal", unary(cx, "Sqrt", x, tag="sqrt"))


@converts(torch.log1p, "log1p")
def log1p(cx, input):
    x = cast(cx, input, cx.out_dtype)
    return unary(cx, "Log", binary(cx, "Add", x, 1.0, x.dtype, tag="add"))


@converts(torch.expm1, "expm1")
def expm1(cx, input):
    x = cast(cx, input, cx.out_dtype)
    return binary(cx, "Sub", unary(cx, "Exp", x, tag="exp"), 1.0, x.dtype)


@converts(torch.square, "square")
def square(cx, input):
    x = cast(cx, input, cx.out_dtype)
    return binary(cx, "Mul", x, x, x.dtype)


@converts(F.gelu, "gelu")
def gelu(cx, input, approximate="none"):
    return gelu_of(cx, input, approximate)


@converts(F.silu)
def silu(cx, input, inplace=False):
    return binary(cx, "Mul", input, unary(cx, "Sigmoid", input, tag="sigmoid"), input.dtype)


@converts(F.mish)
def mish(cx, input, inplace=False):
    sp = unary(cx, "Softplus", input, tag="softplus")
    return binary(cx, "Mul", input, unary(cx, "Tanh", sp, tag="tanh"), input.dtype)


@converts(F.hardsigmoid)
def hardsigmoid(cx, input, inplace=False):
    return unary(cx, "HardSigmoid", input, alpha=1.0 / 6.0, beta=0.5)


@converts(F.relu6)
def relu6(cx, input, inplace=False):
    return hardtanh(cx, input, 0.0, 6.0)


@converts(F.hardtanh, F.hardtanh_)
def hardtanh(cx, input, min_val=-1.0, max_val=1.0, inplace=False):
    dt = input.dtype
    return cx.op("Clip", [input, scalar(cx, min_val, dt), scalar(cx, max_val, dt)],
                 shape=input.shape)


@converts(F.leaky_relu, F.leaky_relu_)
def leaky_relu(cx, input, negative_slope=0.01, inplace=False):
    return unary(cx, "LeakyRelu", input, alpha=float(negative_slope))


@converts(F.elu, F.elu_)
def elu(cx, input, alpha=1.0, inplace=False):
    return unary(cx, "Elu", input, alpha=float(alpha))


@converts(F.selu, torch.selu)
def selu(cx, input, inplace=False):
    return unary(cx, "Selu", input)


@converts(F.celu)
def celu(cx, input, alpha=1.0, inplace=False):
    return unary(cx, "Celu", input, alpha=float(alpha))


@converts(F.softplus)
def softplus(cx, input, beta=1, threshold=20):
    """log(1 + exp(beta x)) / beta; torch's switch to the identity above
    ``threshold`` changes the result by less than float32's resolution for
    the default threshold."""
    if beta == 1:
        return unary(cx, "Softplus", input)
    dt = input.dtype
    sp = unary(cx, "Softplus", binary(cx, "Mul", input, beta, dt, tag="beta"), tag="softplus")
    return binary(cx, "Div", sp, beta, dt)


@converts(F.logsigmoid)
def logsigmoid(cx, input):
    neg = unary(cx, "Neg", input, tag="neg")
    return unary(cx, "Neg", unary(cx, "Softplus", neg, tag="softplus"))


@converts(F.prelu, torch.prelu)
def prelu(cx, input, weight):
    # ONNX broadcasts the slope unidirectionally from the right: (C,) -> (C,1,..).
    if weight.shape != (1,) and input.rank >= 2:
        weight = reshape(cx, weight, (weight.shape[0],) + (1,) * (input.rank - 2))
    return cx.op("PRelu", [input, weight], shape=input.shape)


def _softmax_dim(dim, rank):
    if dim is None:  # torch's legacy implicit choice (with a warning)
        dim = 0 if rank in (0, 1, 3) else 1
    return norm_dim(dim, rank)


@converts(torch.softmax, F.softmax, "softmax", torch.special.softmax)
def softmax(cx, input, dim=None, _stacklevel=3, dtype=None):
    x = cast(cx, input, cx.out_dtype)
    return unary(cx, "Softmax", x, axis=_softmax_dim(dim, x.rank))


@converts(torch.log_softmax, F.log_softmax, "log_softmax", torch.special.log_softmax)
def log_softmax(cx, input, dim=None, _stacklevel=3, dtype=None):
    x = cast(cx, input, cx.out_dtype)
    return unary(cx, "LogSoftmax", x, axis=_softmax_dim(dim, x.rank))


@converts(F.softmin)
def softmin(cx, input, dim=None, _stacklevel=3, dtype=None):
    x = cast(cx, input, cx.out_dtype)
    return unary(cx, "Softmax", unary(cx, "Neg", x, tag="neg"),
                 axis=_softmax_dim(dim, x.rank))


def _dropout(cx, input, p=0.5, training=False, inplace=False):
    if not dropout_trains(input, p, training):
        return input
    # Training mode: ONNX Dropout keeps each element with probability
    # 1 - p and scales it by 1 / (1 - p), as PyTorch does (other draws).
    if not 0 <= p < 1:
        raise Unsupported(f"dropout probability {p} is outside [0, 1)")
    return cx.op("Dropout", [input, scalar(cx, float(p), torch.float32),
                             cx.const(torch.tensor(True))],
                 shape=input.shape, dtype=input.dtype)


def dropout_trains(input=None, p=0.5, training=False, inplace=False, **kwargs):
    """Whether a dropout call (F.dropout's or torch.dropout's arguments,
    the latter's flag named ``train``) draws a mask: in training mode with
    a nonzero probability."""
    training = kwargs.get("train", training)
    return bool(training) and p != 0


converts(F.dropout)(_dropout)


@converts(torch.dropout)
def _torch_dropout(cx, input, p, train):
    return _dropout(cx, input, p, train)


def _alpha_dropout(cx, input, p=0.5, training=False, inplace=False):
    if training and p != 0:
        raise Unsupported("alpha and feature (channel) dropout in training mode draw "
                          "masks ONNX Dropout does not make; only F.dropout trains")
    return input


converts(F.dropout1d, F.dropout2d, F.dropout3d, F.alpha_dropout,
         F.feature_alpha_dropout)(_alpha_dropout)


@converts(torch.alpha_dropout, torch.feature_dropout, torch.feature_alpha_dropout)
def _torch_alpha_dropout(cx, input, p, train):
    return _alpha_dropout(cx, input, p, train)


# --------------------------------------------------------------------------
# Type conversions and no-ops


@converts("to", "type", "type_as", "float", "double", "half", "int", "long", "short",
          "char", "byte", "bool", "cpu", "cuda", "bfloat16")
def to(cx, input, *args, **kwargs):
    """Every conversion: the dtype torch produced (device arguments, copy,
    non_blocking and memory_format do not matter here)."""
    return cast(cx, input, cx.out_dtype)


@converts("contiguous", "clone", "detach", "requires_grad_", torch.clone, torch.detach)
def identity(cx, input, *args, **kwargs):
    return input


# --------------------------------------------------------------------------
# Shapes: view/reshape family, transposes, expand, repeat


@converts("view", "reshape", "view_as", "reshape_as", "flatten", "unflatten", "squeeze",
          "unsqueeze", torch.reshape, torch.flatten, torch.unflatten, torch.squeeze,
          torch.unsqueeze, torch.ravel, "ravel")
def reshape_like(cx, input, *args, **kwargs):
    """Every op that only reshapes: a Reshape to the shape torch produced."""
    if args and isinstance(args[0], torch.dtype) or isinstance(kwargs.get("dtype"),
                                                               torch.dtype):
        raise Unsupported("view(dtype) reinterprets the bytes; not supported")
    return reshape(cx, input, cx.out_shape)


@converts(torch.transpose, torch.swapaxes, torch.swapdims, "transpose", "swapaxes",
          "swapdims")
def transpose_(cx, input, dim0, dim1):
    r = input.rank
    perm = list(range(r))
    a, b = norm_dim(dim0, r), norm_dim(dim1, r)
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(cx, input, perm)


@converts(torch.t, "t")
def t(cx, input):
    return transpose(cx, input, list(range(input.rank))[::-1])


@converts(torch.permute, "permute")
def permute(cx, input, *dims, **kwargs):
    if "dims" in kwargs:
        dims = (kwargs.pop("dims"),)
    if kwargs:
        raise Unsupported(f"unsupported arguments {sorted(kwargs)}")
    return transpose(cx, input, [norm_dim(d, input.rank) for d in varargs(dims, "dims")])


@converts(torch.movedim, torch.moveaxis, "movedim", "moveaxis")
def movedim(cx, input, source, destination):
    r = input.rank
    src = [norm_dim(s, r) for s in (source if isinstance(source, (list, tuple)) else [source])]
    dst = [norm_dim(d, r) for d in (destination if isinstance(destination, (list, tuple))
                                    else [destination])]
    perm = [None] * r
    for s, d in zip(src, dst):
        perm[d] = s
    rest = iter(i for i in range(r) if i not in src)
    perm = [p if p is not None else next(rest) for p in perm]
    return transpose(cx, input, perm)


def getattr_(cx, obj, name):
    """getattr on a traced value: x.T, x.mT, x.data; topk(...).values."""
    if not is_tensor(obj):
        try:
            return getattr(obj, name)
        except AttributeError:
            raise Unsupported(f"attribute {name!r} is not supported on {type(obj).__name__}")
    if name == "T":
        return t(cx, obj)
    if name in ("mT", "mH"):
        return transpose_(cx, obj, -2, -1)
    if name in ("data", "real"):
        return obj
    raise Unsupported(f"tensor attribute {name!r} is not supported")


FUNCTIONS[getattr] = getattr_


@converts("expand", "expand_as", "broadcast_to", torch.broadcast_to)
def expand(cx, input, *args, **kwargs):
    shape = cx.out_shape
    if input.shape == shape:
        return input
    return cx.op("Expand", [input, ints(cx, shape)], shape=shape)


def _tile(cx, input, reps):
    x = input
    if len(reps) > x.rank:
        x = reshape(cx, x, (1,) * (len(reps) - x.rank) + x.shape, tag="reshape")
    reps = [1] * (x.rank - len(reps)) + reps
    if all(r == 1 for r in reps):
        return x
    return cx.op("Tile", [x, ints(cx, reps)], shape=cx.out_shape)


@converts("repeat")
def repeat(cx, input, *sizes):
    return _tile(cx, input, varargs(sizes, "repeat sizes"))


@converts(torch.tile, "tile")
def tile(cx, input, dims):
    return _tile(cx, input, varargs((dims,), "tile dims"))


@converts(torch.flip, "flip")
def flip(cx, input, *dims):
    x = input
    for d in norm_dims(varargs(dims, "dims"), input.rank):
        n = x.shape[d]
        idx = cx.const(torch.arange(n - 1, -1, -1, dtype=torch.int64))
        x = cx.op("Gather", [x, idx], axis=d, shape=x.shape, tag=f"flip{d}")
    return x


# --------------------------------------------------------------------------
# Joining and splitting


@converts(torch.cat, torch.concat, torch.concatenate)
def cat(cx, tensors, dim=0, *, axis=None, out=None):
    if axis is not None:
        dim = axis
    dt = cx.out_dtype
    vals = [cast(cx, t, dt) for t in tensors if not (t.shape == (0,))]
    if len(vals) == 1:
        return vals[0]
    return cx.op("Concat", vals, axis=norm_dim(dim, len(cx.out_shape)), dtype=dt,
                 shape=cx.out_shape)


@converts(torch.stack)
def stack(cx, tensors, dim=0, *, out=None):
    dt = cx.out_dtype
    d = norm_dim(dim, len(cx.out_shape))
    vals = [unsqueeze(cx, cast(cx, t, dt), d, tag=f"unsqueeze{i}")
            for i, t in enumerate(tensors)]
    if len(vals) == 1:
        return vals[0]
    return cx.op("Concat", vals, axis=d, dtype=dt, shape=cx.out_shape)


def split_into(cx, input, d, sizes):
    """Split along dim d into pieces of the given sizes."""
    if len(sizes) == 1:
        return [input]
    outs = cx.op("Split", [input, ints(cx, sizes)], axis=d, outputs=len(sizes))
    for o, n in zip(outs, sizes):
        o.shape = input.shape[:d] + (n,) + input.shape[d + 1:]
    return list(outs)


def _split_as_recorded(cx, input, dim):
    """The pieces torch produced (cx.out is their tuple)."""
    d = norm_dim(dim, input.rank)
    return tuple(split_into(cx, input, d, [m.shape[d] for m in cx.out]))


@converts(torch.split, "split", "split_with_sizes", torch.split_with_sizes)
def split(cx, tensor, split_size_or_sections=None, dim=0, *, split_size=None):
    return _split_as_recorded(cx, tensor, dim)


@converts(torch.chunk, "chunk", torch.tensor_split, "tensor_split")
def chunk(cx, input, chunks, dim=0):
    if is_tensor(chunks):
        raise Unsupported("tensor_split with tensor indices is not supported")
    return _split_as_recorded(cx, input, dim)


@converts(torch.unbind, "unbind")
def unbind(cx, input, dim=0):
    d = norm_dim(dim, input.rank)
    pieces = split_into(cx, input, d, [1] * input.shape[d])
    out = []
    for i, p in enumerate(pieces):
        shape = p.shape[:d] + p.shape[d + 1:]
        out.append(reshape(cx, p, shape, tag=f"squeeze{i}"))
    return tuple(out)


# --------------------------------------------------------------------------
# Indexing


def _index_items(index):
    return index if isinstance(index, tuple) else (index,)


def getitem_tensor(cx, x, index):
    """x[index] with ints, slices, None, Ellipsis and at most one integer
    tensor (or list) index: one Slice for the ints and slices, one Gather
    for the tensor index, one Reshape to drop int dims and add None dims."""
    items = list(_index_items(index))
    if sum(1 for it in items if it is Ellipsis) > 1:
        raise Unsupported("an index with several Ellipsis")
    consumed = sum(1 for it in items if it is not None and it is not Ellipsis)
    if consumed > x.rank:
        raise Unsupported(f"too many indices for a rank-{x.rank} tensor")
    fill = [slice(None)] * (x.rank - consumed)
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items[at:at + 1] = fill
    else:
        items += fill
    sliced = []  # (axis, start, stop, step)
    gather = None
    out_shape = []
    d = 0
    for it in items:
        if it is None:
            out_shape.append(1)
            continue
        size = x.shape[d]
        if isinstance(it, slice):
            bounds = (None if p is None else static_int(p, "a slice bound")
                      for p in (it.start, it.stop, it.step))
            start, stop, step = slice(*bounds).indices(size)
            n = len(range(start, stop, step))
            if n == 0:
                raise Unsupported("an empty slice (Tessel does not support empty tensors)")
            if (start, stop, step) != (0, size, 1):
                sliced.append((d, start, stop, step))
            out_shape.append(n)
        elif isinstance(it, bool) or (is_tensor(it) and it.dtype == torch.bool):
            raise Unsupported("boolean mask indexing has a data-dependent shape")
        elif isinstance(it, int) or (is_tensor(it) and it.const is not None
                                     and it.const.dim() == 0):
            i = static_int(it, "an index")
            if not -size <= i < size:
                raise Unsupported(f"index {i} is out of range for size {size}")
            i = i + size if i < 0 else i
            sliced.append((d, i, i + 1, 1))
        elif is_tensor(it) or isinstance(it, (list, tuple)):
            if gather is not None:
                raise Unsupported("indexing with several tensor indices is not supported")
            idx = it if is_tensor(it) else cx.const(torch.tensor(it, dtype=torch.int64))
            if idx.dtype not in (torch.int64, torch.int32):
                raise Unsupported(f"index tensors of dtype {idx.dtype} are not supported")
            gather = (d, idx)
            out_shape.extend(idx.shape)
        else:
            raise Unsupported(f"unsupported index {it!r}")
        d += 1
    if tuple(out_shape) != tuple(cx.out_shape):
        raise Unsupported(f"indexing {index!r} gives a different shape than torch "
                          f"({tuple(out_shape)} vs {tuple(cx.out_shape)}); not supported")
    y = x
    if sliced:
        axes, starts, stops, steps = (list(c) for c in zip(*sliced))
        y = slice_(cx, y, starts, stops, axes, steps, tag="slice")
    if gather is not None:
        axis, idx = gather
        shape = y.shape[:axis] + idx.shape + y.shape[axis + 1:]
        y = cx.op("Gather", [y, idx], axis=axis, shape=shape, tag="gather")
    return reshape(cx, y, cx.out_shape)


@converts(operator.getitem)
def getitem(cx, obj, index):
    if is_tensor(obj):
        return getitem_tensor(cx, obj, index)
    try:
        return obj[index]
    except (TypeError, IndexError, KeyError) as e:
        raise Unsupported(f"cannot index {type(obj).__name__} with {index!r}: {e}")


@converts(torch.narrow, "narrow")
def narrow(cx, input, dim, start, length):
    d = norm_dim(dim, input.rank)
    s = static_int(start, "start")
    s = s + input.shape[d] if s < 0 else s
    n = static_int(length, "length")
    return slice_(cx, input, [s], [s + n], [d])


@converts(torch.select, "select")
def select(cx, input, dim, index):
    d = norm_dim(dim, input.rank)
    items = [slice(None)] * d + [index]
    return getitem_tensor(cx, input, tuple(items))


@converts(torch.index_select, "index_select")
def index_select(cx, input, dim, index):
    d = norm_dim(dim, input.rank)
    return cx.op("Gather", [input, index], axis=d, shape=cx.out_shape)


@converts(torch.gather, "gather")
def gather(cx, input, dim, index, *, sparse_grad=False):
    return cx.op("GatherElements", [input, index], axis=norm_dim(dim, input.rank),
                 shape=cx.out_shape)


@converts(torch.take_along_dim, "take_along_dim")
def take_along_dim(cx, input, indices, dim=None):
    if dim is None:
        raise Unsupported("take_along_dim without dim is not supported")
    d = norm_dim(dim, input.rank)
    shape = list(broadcast(input.shape[:d] + (1,) + input.shape[d + 1:],
                           indices.shape[:d] + (1,) + indices.shape[d + 1:]))
    x_shape, i_shape = list(shape), list(shape)
    x_shape[d], i_shape[d] = input.shape[d], indices.shape[d]
    x = expand_to(cx, input, x_shape, "expand_input")
    idx = expand_to(cx, indices, i_shape, "expand_indices")
    return cx.op("GatherElements", [x, idx], axis=d, shape=cx.out_shape)


def expand_to(cx, x, shape, tag):
    shape = tuple(shape)
    if x.shape == shape:
        return x
    return cx.op("Expand", [x, ints(cx, shape)], shape=shape, tag=tag)


def _src_as_index_shape(cx, src, index):
    """torch reads only the index-shaped corner of a larger ``src``."""
    if src.shape == index.shape:
        return src
    axes = [i for i, (s, n) in enumerate(zip(src.shape, index.shape)) if s != n]
    return slice_(cx, src, [0] * len(axes), [index.shape[a] for a in axes], axes,
                  tag="src_slice")


@converts(torch.scatter, "scatter")
def scatter(cx, input, dim, index, src=None, value=None, *, reduce=None):
    d = norm_dim(dim, input.rank)
    if src is not None and not is_tensor(src):
        src, value = None, src
    if reduce == "add":
        upd = (_src_as_index_shape(cx, src, index) if src is not None else
               cx.const(torch.full(index.shape, value, dtype=input.dtype)))
        return _scatter_add(cx, input, d, index, upd)
    if reduce is not None:
        raise Unsupported(f"scatter reduce={reduce!r} is not supported (only 'add')")
    if src is not None:
        upd = cast(cx, _src_as_index_shape(cx, src, index), input.dtype)
    else:
        upd = cx.const(torch.full(index.shape, value, dtype=input.dtype))
    return cx.op("ScatterElements", [input, index, upd], axis=d, shape=input.shape)


@converts(torch.scatter_add, "scatter_add")
def scatter_add(cx, input, dim, index, src):
    d = norm_dim(dim, input.rank)
    return _scatter_add(cx, input, d, index, _src_as_index_shape(cx, src, index))


def _scatter_add(cx, input, d, index, src):
    """input + sum over i of src[.., i, ..] * onehot(index[.., i, ..]) along d,
    as a one-hot product and a ReduceSum (ONNX ScatterElements' 'add'
    reduction is not supported by Tessel)."""
    for k, (n, m) in enumerate(zip(index.shape, input.shape)):
        if k != d and n != m:
            raise Unsupported("scatter_add with an index smaller than the input "
                              f"outside dim {d} is not supported")
    n = input.shape[d]
    dt = input.dtype
    idx = unsqueeze(cx, index, index.rank, tag="index_unsqueeze")
    positions = cx.const(torch.arange(n, dtype=index.dtype))
    hot = cx.op("Equal", [idx, positions], dtype=torch.bool,
                shape=index.shape + (n,), tag="onehot")
    contrib = binary(cx, "Mul", cast(cx, hot, dt, tag="onehot_cast"),
                     unsqueeze(cx, cast(cx, src, dt), index.rank, tag="src_unsqueeze"), dt,
                     tag="contrib")
    summed = reduce(cx, "ReduceSum", contrib, [d], keepdim=False, tag="sum")
    r = input.rank
    perm = list(range(d)) + [r - 1] + list(range(d, r - 1))
    moved = transpose(cx, summed, perm, tag="move_axis")
    return binary(cx, "Add", input, moved, dt)


@converts(F.one_hot)
def one_hot(cx, tensor, num_classes=-1):
    n = cx.out_shape[-1]
    if num_classes == -1:
        raise Unsupported("one_hot without num_classes takes the class count from "
                          "the data; pass num_classes")
    depth = cx.const(torch.tensor(n, dtype=torch.int64))
    values = cx.const(torch.tensor([0, 1], dtype=torch.int64))
    return cx.op("OneHot", [tensor, depth, values], axis=-1, dtype=torch.int64,
                 shape=cx.out_shape)


@converts(F.embedding)
def embedding(cx, input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    if max_norm is not None:
        raise Unsupported("embedding max_norm renormalizes the weights in place; "
                          "not supported")
    return cx.op("Gather", [weight, input], axis=0, shape=cx.out_shape)


# --------------------------------------------------------------------------
# Factories of tensors whose contents do not depend on the input's data


def _full(cx, fill):
    return cx.const(torch.full(cx.out_shape, fill, dtype=cx.out_dtype))


@converts(torch.zeros_like, "new_zeros", torch.empty_like, "new_empty")
def zeros_like(cx, input, *args, **kwargs):
    """empty_like is given zeros (its contents are unspecified)."""
    return _full(cx, 0)


@converts(torch.ones_like, "new_ones")
def ones_like(cx, input, *args, **kwargs):
    return _full(cx, 1)


@converts(torch.full_like)
def full_like(cx, input, fill_value, **kwargs):
    return _full(cx, static_scalar(fill_value))


@converts("new_full")
def new_full(cx, input, size, fill_value, **kwargs):
    return _full(cx, static_scalar(fill_value))


@converts("new_tensor")
def new_tensor(cx, input, data, **kwargs):
    return cx.const(torch.tensor(data, dtype=cx.out_dtype))


def static_scalar(x):
    if is_tensor(x):
        if x.const is None:
            raise Unsupported("a fill value that depends on tensor data")
        return x.const.item()
    return x


# --------------------------------------------------------------------------
# Reductions


def _reduce_converter(op_type):
    def convert(cx, input, dim=None, keepdim=False, *, dtype=None, out=None):
        if out is not None:
            raise Unsupported("out= is not supported")
        x = cast(cx, input, cx.out_dtype)
        return reduce(cx, op_type, x, norm_dims(dim, x.rank), keepdim)
    convert.__name__ = op_type.lower()
    return convert


converts(torch.sum, "sum")(_reduce_converter("ReduceSum"))
converts(torch.mean, "mean")(_reduce_converter("ReduceMean"))
converts(torch.amax, "amax")(_reduce_converter("ReduceMax"))
converts(torch.amin, "amin")(_reduce_converter("ReduceMin"))
converts(torch.logsumexp, "logsumexp")(_reduce_converter("ReduceLogSumExp"))


@converts(torch.prod, "prod")
def prod(cx, input, dim=None, keepdim=False, *, dtype=None):
    x = cast(cx, input, cx.out_dtype)
    return reduce(cx, "ReduceProd", x, norm_dims(dim, x.rank), keepdim)


def _any_all(op_type):
    """any = max != 0, all = min != 0, reduced as int32."""
    def convert(cx, input, dim=None, keepdim=False):
        x = cast(cx, input, torch.int32)
        y = reduce(cx, op_type, x, norm_dims(dim, x.rank), keepdim, tag="reduce")
        eq0 = binary(cx, "Equal", y, 0, torch.int32, out_dtype=torch.bool, tag="eq")
        return unary(cx, "Not", eq0)
    return convert


converts(torch.any, "any")(_any_all("ReduceMax"))
converts(torch.all, "all")(_any_all("ReduceMin"))


def _max_min(op_type, arg_op, elementwise):
    def convert(cx, input, dim=None, keepdim=False, *, out=None):
        if is_tensor(dim):  # max(a, b)
            return binary(cx, elementwise, input, dim, cx.out_dtype)
        if dim is None:
            return reduce(cx, op_type, input, None, False)
        d = norm_dim(dim, input.rank)
        values = reduce(cx, op_type, input, [d], keepdim, tag="values")
        indices = cx.op(arg_op, [input], axis=d, keepdims=1 if keepdim else 0,
                        dtype=torch.int64, shape=values.shape, tag="indices")
        return ValuesIndices(values, indices)
    return convert


converts(torch.max, "max")(_max_min("ReduceMax", "ArgMax", "Max"))
converts(torch.min, "min")(_max_min("ReduceMin", "ArgMin", "Min"))


def _arg(op_type):
    def convert(cx, input, dim=None, keepdim=False):
        x = input
        if dim is None:  # over the flattened tensor
            if keepdim:
                raise Unsupported(f"{op_type} with dim=None and keepdim=True")
            x, d, keep = reshape(cx, x, (math.prod(x.shape),), tag="flatten"), 0, 0
        else:
            d, keep = norm_dim(dim, x.rank), 1 if keepdim else 0
        return cx.op(op_type, [x], axis=d, keepdims=keep, dtype=torch.int64,
                     shape=cx.out_shape)
    return convert


converts(torch.argmax, "argmax")(_arg("ArgMax"))
converts(torch.argmin, "argmin")(_arg("ArgMin"))


def _var(cx, input, dim, unbiased, keepdim, correction):
    x = cast(cx, input, cx.out_dtype if cx.out_dtype.is_floating_point else torch.float32)
    axes = norm_dims(dim, x.rank)
    if correction is None:
        correction = 1 if unbiased in (None, True) else 0
    n = math.prod(x.shape[a] for a in axes)
    dt = x.dtype
    mean = reduce(cx, "ReduceMean", x, axes, True, tag="mean")
    d = binary(cx, "Sub", x, mean, dt, tag="centered")
    ss = reduce(cx, "ReduceSum", binary(cx, "Mul", d, d, dt, tag="square"), axes, keepdim,
                tag="sum")
    return binary(cx, "Div", ss, float(max(n - correction, 0)), dt, tag="var")


@converts(torch.var, "var")
def var(cx, input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    return _var(cx, input, dim, unbiased, keepdim, correction)


@converts(torch.std, "std")
def std(cx, input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    return unary(cx, "Sqrt", _var(cx, input, dim, unbiased, keepdim, correction))


def _norm(cx, x, p, dim, keepdim):
    ops = {2: "ReduceL2", "fro": "ReduceL2", 1: "ReduceL1"}
    if p not in ops:
        raise Unsupported(f"norm of order {p!r} is not supported (only 1, 2, 'fro')")
    x = cast(cx, x, cx.out_dtype)
    return reduce(cx, ops[p], x, norm_dims(dim, x.rank), keepdim)


@converts(torch.norm, "norm")
def norm(cx, input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    if out is not None:
        raise Unsupported("out= is not supported")
    return _norm(cx, input, p, dim, keepdim)


@converts(torch.linalg.vector_norm)
def vector_norm(cx, x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    if out is not None:
        raise Unsupported("out= is not supported")
    return _norm(cx, x, ord, dim, keepdim)


@converts(F.normalize)
def normalize(cx, input, p=2.0, dim=1, eps=1e-12, out=None):
    if p not in (1, 2, 1.0, 2.0):
        raise Unsupported(f"normalize with p={p!r} is not supported (only 1 and 2)")
    d = norm_dim(dim, input.rank)
    n = reduce(cx, "ReduceL2" if p == 2 else "ReduceL1", input, [d], True, tag="norm")
    n = binary(cx, "Max", n, float(eps), input.dtype, tag="clamp")
    return binary(cx, "Div", input, n, input.dtype)


@converts(torch.cumsum, "cumsum")
def cumsum(cx, input, dim, *, dtype=None):
    x = cast(cx, input, cx.out_dtype)
    axis = cx.const(torch.tensor(norm_dim(dim, x.rank), dtype=torch.int64))
    return cx.op("CumSum", [x, axis], shape=x.shape)


@converts(torch.topk, "topk")
def topk(cx, input, k, dim=-1, largest=True, sorted=True):
    d = norm_dim(dim, input.rank)
    k = static_int(k, "k")
    values, indices = cx.op("TopK", [input, ints(cx, [k])], axis=d,
                            largest=int(bool(largest)), sorted=int(bool(sorted)),
                            outputs=2)
    indices.dtype = torch.int64
    return ValuesIndices(values, indices)


@converts(torch.sort, "sort")
def sort(cx, input, dim=-1, descending=False, *, stable=False):
    d = norm_dim(dim, input.rank)
    values, indices = cx.op("TopK", [input, ints(cx, [input.shape[d]])], axis=d,
                            largest=int(bool(descending)), sorted=1, outputs=2)
    indices.dtype = torch.int64
    return ValuesIndices(values, indices)


@converts(torch.argsort, "argsort")
def argsort(cx, input, dim=-1, descending=False, *, stable=False):
    return sort(cx, input, dim, descending).indices


@converts(torch.tril, "tril")
def tril(cx, input, diagonal=0):
    k = cx.const(torch.tensor(static_int(diagonal, "diagonal"), dtype=torch.int64))
    return cx.op("Trilu", [input, k], upper=0, shape=input.shape)


@converts(torch.triu, "triu")
def triu(cx, input, diagonal=0):
    k = cx.const(torch.tensor(static_int(diagonal, "diagonal"), dtype=torch.int64))
    return cx.op("Trilu", [input, k], upper=1, shape=input.shape)


# --------------------------------------------------------------------------
# Linear algebra


@converts(torch.matmul, operator.matmul, torch.mm, torch.bmm, "matmul", "mm", "bmm",
          "__matmul__")
def matmul_(cx, input, other, *, out=None):
    if out is not None:
        raise Unsupported("out= is not supported")
    dt = cx.out_dtype
    return matmul(cx, cast(cx, input, dt), cast(cx, other, dt))


@converts(F.linear)
def linear_(cx, input, weight, bias=None):
    if weight.rank == 1:
        y = matmul(cx, input, weight)
        return y if bias is None else binary(cx, "Add", y, bias, y.dtype)
    return linear(cx, input, weight, bias)


@converts(torch.addmm, "addmm")
def addmm(cx, input, mat1, mat2, *, beta=1, alpha=1):
    return cx.op("Gemm", [mat1, mat2, input], alpha=float(alpha), beta=float(beta),
                 shape=cx.out_shape)


@converts(torch.baddbmm, "baddbmm")
def baddbmm(cx, input, batch1, batch2, *, beta=1, alpha=1):
    dt = cx.out_dtype
    y = matmul(cx, batch1, batch2, tag="matmul")
    if alpha != 1:
        y = binary(cx, "Mul", y, alpha, dt, tag="alpha")
    b = input if beta == 1 else binary(cx, "Mul", input, beta, dt, tag="beta")
    return binary(cx, "Add", b, y, dt)


@converts(torch.einsum)
def einsum(cx, equation, *operands):
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = operands[0]
    if not isinstance(equation, str):
        raise Unsupported("einsum in the sublist format is not supported")
    dt = cx.out_dtype
    return cx.op("Einsum", [cast(cx, o, dt) for o in operands],
                 equation=equation.replace(" ", ""), dtype=dt, shape=cx.out_shape)


# --------------------------------------------------------------------------
# Convolution, pooling, padding, resizing


def _conv_pads(padding, n, kernel, dilation):
    """ONNX pads [begin..., end...] for torch's padding (ints, 'same', 'valid')."""
    if padding == "valid":
        return [0] * (2 * n)
    if padding == "same":
        total = [d * (k - 1) for d, k in zip(dilation, kernel)]
        return [t // 2 for t in total] + [t - t // 2 for t in total]
    if isinstance(padding, str):
        raise Unsupported(f"padding={padding!r} is not supported")
    p = ntuple(padding, n, "padding")
    return p + p


def conv(cx, n, input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1,
         tag=None):
    kernel = list(weight.shape[2:])
    dilation = ntuple(dilation, n, "dilation")
    inputs = [input, weight] + ([bias] if bias is not None else [])
    return cx.op("Conv", inputs, kernel_shape=kernel,
                 strides=ntuple(stride, n, "stride"), dilations=dilation,
                 pads=_conv_pads(padding, n, kernel, dilation), group=int(groups),
                 shape=cx.out_shape, tag=tag)


@converts(F.conv1d, torch.conv1d)
def conv1d(cx, input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return conv(cx, 1, input, weight, bias, stride, padding, dilation, groups)


@converts(F.conv2d, torch.conv2d)
def conv2d(cx, input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return conv(cx, 2, input, weight, bias, stride, padding, dilation, groups)


@converts(F.conv3d, torch.conv3d)
def conv3d(cx, input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return conv(cx, 3, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose(cx, n, input, weight, bias=None, stride=1, padding=0,
                   output_padding=0, groups=1, dilation=1):
    p = ntuple(padding, n, "padding")
    inputs = [input, weight] + ([bias] if bias is not None else [])
    return cx.op("ConvTranspose", inputs, kernel_shape=list(weight.shape[2:]),
                 strides=ntuple(stride, n, "stride"), dilations=ntuple(dilation, n, "dilation"),
                 pads=p + p, output_padding=ntuple(output_padding, n, "output_padding"),
                 group=int(groups), shape=cx.out_shape)


@converts(F.conv_transpose1d, torch.conv_transpose1d)
def conv_transpose1d(cx, input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    return conv_transpose(cx, 1, input, weight, bias, stride, padding, output_padding,
                          groups, dilation)


@converts(F.conv_transpose2d, torch.conv_transpose2d)
def conv_transpose2d(cx, input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    return conv_transpose(cx, 2, input, weight, bias, stride, padding, output_padding,
                          groups, dilation)


def pool(cx, kind, n, input, kernel_size, stride=None, padding=0, dilation=1,
         ceil_mode=False, count_include_pad=True, divisor_override=None):
    """MaxPool/AveragePool. A ceil_mode window that torch lets run past the
    input becomes explicit end padding (ignored by max pooling; excluded
    from an average's divisor, as torch does when the padding is zero or
    count_include_pad is False)."""
    if divisor_override is not None:
        raise Unsupported(f"divisor_override={divisor_override} is not supported")
    k = ntuple(kernel_size, n, "kernel_size")
    s = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) else \
        ntuple(stride, n, "stride")
    p = ntuple(padding, n, "padding")
    dil = ntuple(dilation, n, "dilation")
    spatial_in = input.shape[2:]
    spatial_out = cx.out_shape[2:]
    begin, end = list(p), list(p)
    overhang = False
    for i in range(n):
        need = (spatial_out[i] - 1) * s[i] + dil[i] * (k[i] - 1) + 1
        extra = need - (spatial_in[i] + 2 * p[i])
        if extra > 0:
            end[i] += extra
            overhang = True
    attrs = dict(kernel_shape=k, strides=s, pads=begin + end)
    if kind == "MaxPool":
        attrs["dilations"] = dil
    else:
        if any(d != 1 for d in dil):
            raise Unsupported("average pooling with dilation is not supported")
        include = bool(count_include_pad)
        if overhang and include and any(p):
            raise Unsupported("ceil_mode=True with count_include_pad=True and non-zero "
                              "padding is not supported")
        attrs["count_include_pad"] = int(include and not overhang)
    return cx.op(kind, [input], shape=cx.out_shape, **attrs)


def _max_pool(n):
    def convert(cx, input, kernel_size, stride=None, padding=0, dilation=1,
                ceil_mode=False, return_indices=False):
        if return_indices:
            raise Unsupported("max pooling with return_indices=True is not supported")
        return pool(cx, "MaxPool", n, input, kernel_size, stride, padding, dilation,
                    ceil_mode)
    return convert


converts(F.max_pool1d, torch.max_pool1d)(_max_pool(1))
converts(F.max_pool2d, torch.max_pool2d)(_max_pool(2))
converts(F.max_pool3d, torch.max_pool3d)(_max_pool(3))


def _avg_pool(n):
    def convert(cx, input, kernel_size, stride=None, padding=0, ceil_mode=False,
                count_include_pad=True, divisor_override=None):
        return pool(cx, "AveragePool", n, input, kernel_size, stride, padding, 1,
                    ceil_mode, count_include_pad, divisor_override)
    return convert


converts(F.avg_pool1d, torch.avg_pool1d)(_avg_pool(1))
converts(F.avg_pool2d)(_avg_pool(2))
converts(F.avg_pool3d)(_avg_pool(3))


def adaptive_bins(size_in, size_out):
    """torch's adaptive pooling windows along one axis: output i pools
    [floor(i * in / out), ceil((i + 1) * in / out)) (they overlap, or
    repeat an input, when out does not divide in)."""
    return [(i * size_in // size_out, -(-(i + 1) * size_in // size_out))
            for i in range(size_out)]


def adaptive_pool(cx, kind, input, out_spatial, tag=None):
    """Adaptive pooling: a global pool, a pool with kernel = stride =
    input/output where the output divides the input, else axis by axis
    (a window's mean or max over a box is the mean or max along one axis
    of those along the others): the mean as a matmul by the constant
    averaging matrix, the max as one ReduceMax per window, concatenated."""
    spatial_in = input.shape[2:]
    out_spatial = tuple(int(o) for o in out_spatial)
    if all(o == 1 for o in out_spatial):
        return cx.op("Global" + kind, [input], shape=input.shape[:2] + (1,) * len(spatial_in),
                     tag=tag)
    if all(i % o == 0 for i, o in zip(spatial_in, out_spatial)):
        k = [i // o for i, o in zip(spatial_in, out_spatial)]
        return cx.op(kind, [input], kernel_shape=k, strides=k, pads=[0] * (2 * len(k)),
                     shape=input.shape[:2] + out_spatial, tag=tag)
    x = input
    for j, (size_in, size_out) in enumerate(zip(spatial_in, out_spatial)):
        if size_in == size_out:
            continue
        axis = 2 + j
        last = tag if all(i == o for i, o in zip(spatial_in[j + 1:], out_spatial[j + 1:])) \
            else None
        step = f"{tag}/axis{axis}" if tag else None
        bins = adaptive_bins(size_in, size_out)
        if kind == "AveragePool":
            # [rows, size_in, cols] -> averaging[size_out, size_in] @ it
            rows = math.prod(x.shape[:axis])
            cols = math.prod(x.shape[axis + 1:])
            weights = torch.zeros(size_out, size_in, dtype=x.dtype)
            for i, (a, b) in enumerate(bins):
                weights[i, a:b] = 1.0 / (b - a)
            x3 = reshape(cx, x, (rows, size_in, cols),
                         tag=f"{step}/flatten" if step else None)
            y3 = matmul(cx, cx.const(weights), x3, tag=f"{step}/mean" if step else None)
            x = reshape(cx, y3, x.shape[:axis] + (size_out,) + x.shape[axis + 1:],
                        tag=last if last else step)
        else:
            parts = [reduce(cx, "ReduceMax",
                            slice_(cx, x, [a], [b], [axis],
                                   tag=f"{step}/window{i}/slice" if step else None),
                            [axis], True, tag=f"{step}/window{i}" if step else None)
                     for i, (a, b) in enumerate(bins)]
            shape = x.shape[:axis] + (size_out,) + x.shape[axis + 1:]
            x = cx.op("Concat", parts, axis=axis, shape=shape, tag=last if last else step)
    return x


@converts(F.adaptive_avg_pool1d, F.adaptive_avg_pool2d, F.adaptive_avg_pool3d,
          torch.adaptive_avg_pool1d)
def adaptive_avg_pool(cx, input, output_size):
    return adaptive_pool(cx, "AveragePool", input, cx.out_shape[2:])


@converts(F.adaptive_max_pool1d, F.adaptive_max_pool2d, F.adaptive_max_pool3d)
def adaptive_max_pool(cx, input, output_size, return_indices=False):
    if return_indices:
        raise Unsupported("adaptive max pooling with return_indices=True is not supported")
    return adaptive_pool(cx, "MaxPool", input, cx.out_shape[2:])


_PAD_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge"}


def pad_tensor(cx, input, pad, mode="constant", value=None, tag=None):
    """torch's pad list (last dim first, begin/end pairs) as an ONNX Pad."""
    pad = [static_int(v, "pad") for v in pad]
    if len(pad) % 2 or len(pad) // 2 > input.rank:
        raise Unsupported(f"pad {pad} does not fit a rank-{input.rank} tensor")
    if any(v < 0 for v in pad):
        raise Unsupported(f"negative padding {pad} is not supported")
    if mode not in _PAD_MODES:
        raise Unsupported(f"padding mode {mode!r} is not supported "
                          f"(only {', '.join(map(repr, _PAD_MODES))})")
    r = input.rank
    begins, ends = [0] * r, [0] * r
    for i in range(len(pad) // 2):
        begins[r - 1 - i], ends[r - 1 - i] = pad[2 * i], pad[2 * i + 1]
    shape = tuple(d + b + e for d, b, e in zip(input.shape, begins, ends))
    if not any(pad):
        return input
    inputs = [input, ints(cx, begins + ends)]
    if mode == "constant" and value not in (None, 0, 0.0):
        inputs.append(scalar(cx, value, input.dtype))
    return cx.op("Pad", inputs, mode=_PAD_MODES[mode], shape=shape, tag=tag)


@converts(F.pad)
def pad(cx, input, pad, mode="constant", value=None):
    return pad_tensor(cx, input, pad, mode, value)


@converts(F.interpolate, F.upsample)
def interpolate(cx, input, size=None, scale_factor=None, mode="nearest",
                align_corners=None, recompute_scale_factor=None, antialias=False):
    if antialias:
        raise Unsupported("interpolate with antialias=True is not supported")
    n = input.rank - 2
    attrs = {}
    if mode == "nearest":
        attrs = dict(mode="nearest", coordinate_transformation_mode="asymmetric",
                     nearest_mode="floor")
    elif mode == "nearest-exact":
        attrs = dict(mode="nearest", coordinate_transformation_mode="half_pixel",
                     nearest_mode="round_prefer_ceil")
    elif mode in ("linear", "bilinear", "trilinear", "bicubic"):
        attrs = dict(mode="cubic" if mode == "bicubic" else "linear",
                     coordinate_transformation_mode=("align_corners" if align_corners
                                                     else "pytorch_half_pixel"))
        if mode == "bicubic":
            attrs["cubic_coeff_a"] = -0.75
    else:
        raise Unsupported(f"interpolate mode {mode!r} is not supported")
    empty = cx.const(torch.zeros(0, dtype=torch.float32))
    if scale_factor is not None and not recompute_scale_factor:
        scales = [1.0, 1.0] + [float(v) for v in (scale_factor if isinstance(
            scale_factor, (list, tuple)) else [scale_factor] * n)]
        inputs = [input, empty, cx.const(torch.tensor(scales, dtype=torch.float32))]
    else:
        inputs = [input, empty, empty, ints(cx, cx.out_shape)]
    return cx.op("Resize", inputs, shape=cx.out_shape, **attrs)


@converts(F.pixel_shuffle, torch.pixel_shuffle)
def pixel_shuffle(cx, input, upscale_factor):
    if input.rank != 4:
        raise Unsupported("pixel_shuffle is supported on 4-D inputs only")
    return cx.op("DepthToSpace", [input], blocksize=int(upscale_factor), mode="CRD",
                 shape=cx.out_shape)


# --------------------------------------------------------------------------
# Normalization


@converts(F.layer_norm, torch.layer_norm)
def layer_norm_(cx, input, normalized_shape, weight=None, bias=None, eps=1e-5,
                cudnn_enable=True):
    return layer_norm(cx, input, list(normalized_shape), weight, bias, eps)


@converts(F.batch_norm)
def batch_norm(cx, input, running_mean, running_var, weight=None, bias=None,
               training=False, momentum=0.1, eps=1e-5):
    if training:
        raise Unsupported("batch_norm with training=True normalizes with batch "
                          "statistics; Tessel compiles inference (call module.eval())")
    if running_mean is None or running_var is None:
        raise Unsupported("batch_norm without running statistics "
                          "(track_running_stats=False) is not supported")
    c = input.shape[1]
    if weight is None:
        weight = cx.const(torch.ones(c, dtype=input.dtype))
    if bias is None:
        bias = cx.const(torch.zeros(c, dtype=input.dtype))
    return cx.op("BatchNormalization", [input, weight, bias, running_mean, running_var],
                 epsilon=float(eps), shape=input.shape)


@converts(F.group_norm)
def group_norm(cx, input, num_groups, weight=None, bias=None, eps=1e-5):
    """InstanceNormalization over (N, groups, rest), then the per-channel
    affine transform."""
    n, c = input.shape[:2]
    g = static_int(num_groups, "num_groups")
    dt = input.dtype
    x = reshape(cx, input, (n, g, math.prod(input.shape) // (n * g)), tag="group")
    x = cx.op("InstanceNormalization", [x, cx.const(torch.ones(g, dtype=dt)),
                                        cx.const(torch.zeros(g, dtype=dt))],
              epsilon=float(eps), shape=x.shape, tag="norm")
    y = reshape(cx, x, input.shape, tag="ungroup")
    per_channel = (c,) + (1,) * (input.rank - 2)
    if weight is not None:
        y = binary(cx, "Mul", y, reshape(cx, weight, per_channel), dt, tag="scale")
    if bias is not None:
        y = binary(cx, "Add", y, reshape(cx, bias, per_channel), dt, tag="bias")
    return y


@converts(F.instance_norm)
def instance_norm(cx, input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    if not use_input_stats:
        return batch_norm(cx, input, running_mean, running_var, weight, bias, False,
                          momentum, eps)
    c = input.shape[1]
    dt = input.dtype
    w = weight if weight is not None else cx.const(torch.ones(c, dtype=dt))
    b = bias if bias is not None else cx.const(torch.zeros(c, dtype=dt))
    return cx.op("InstanceNormalization", [input, w, b], epsilon=float(eps),
                 shape=input.shape)


# --------------------------------------------------------------------------
# Leaf modules (torch.nn modules FX does not trace into)


def param(cx, module, name, path=None):
    """A module's parameter or buffer as a constant (None when absent)."""
    t = getattr(module, name, None)
    if t is None:
        return None
    prefix = path if path is not None else cx.module_path
    return cx.param(t, f"{prefix}.{name}" if prefix else name)


def _identity_module(cx, m, input, *args, **kwargs):
    return input


converts_module(nn.Identity, nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d,
                nn.AlphaDropout, nn.FeatureAlphaDropout)(_identity_module)


@converts_module(nn.Linear)
def linear_module(cx, m, input):
    return linear(cx, input, param(cx, m, "weight"), param(cx, m, "bias"))


@converts_module(nn.Conv1d, nn.Conv2d, nn.Conv3d)
def conv_module(cx, m, input):
    n = len(m.kernel_size)
    x = input
    padding = m.padding
    if m.padding_mode != "zeros":
        if m.padding_mode == "circular" or m.padding_mode not in _PAD_MODES:
            raise Unsupported(f"attribute padding_mode={m.padding_mode!r} is not supported "
                              "(only 'zeros', 'reflect' and 'replicate')")
        x = pad_tensor(cx, x, list(m._reversed_padding_repeated_twice), m.padding_mode, tag="pad")
        padding = 0
    return conv(cx, n, x, param(cx, m, "weight"), param(cx, m, "bias"), m.stride, padding,
                m.dilation, m.groups)


@converts_module(nn.ConvTranspose1d, nn.ConvTranspose2d)
def conv_transpose_module(cx, m, input, output_size=None):
    """The output padding is what makes the recorded output size (it is
    m.output_padding unless forward was given output_size)."""
    if m.padding_mode != "zeros":
        raise Unsupported(f"attribute padding_mode={m.padding_mode!r} is not supported")
    n = len(m.kernel_size)
    unpadded = [(i - 1) * s - 2 * p + d * (k - 1) + 1 for i, s, p, d, k in zip(
        input.shape[2:], m.stride, m.padding, m.dilation, m.kernel_size)]
    out_pad = [o - u for o, u in zip(cx.out_shape[2:], unpadded)]
    return conv_transpose(cx, n, input, param(cx, m, "weight"), param(cx, m, "bias"),
                          m.stride, m.padding, out_pad, m.groups, m.dilation)


@converts_module(nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)
def batch_norm_module(cx, m, input):
    if m.running_mean is None:
        raise Unsupported("attribute track_running_stats=False is not supported (the "
                          "module normalizes with batch statistics)")
    return batch_norm(cx, input, param(cx, m, "running_mean"), param(cx, m, "running_var"),
                      param(cx, m, "weight"), param(cx, m, "bias"), False, m.momentum, m.eps)


@converts_module(nn.LayerNorm)
def layer_norm_module(cx, m, input):
    return layer_norm(cx, input, list(m.normalized_shape), param(cx, m, "weight"),
                      param(cx, m, "bias"), m.eps)


@converts_module(nn.GroupNorm)
def group_norm_module(cx, m, input):
    return group_norm(cx, input, m.num_groups, param(cx, m, "weight"), param(cx, m, "bias"),
                      m.eps)


@converts_module(nn.InstanceNorm1d, nn.InstanceNorm2d, nn.InstanceNorm3d)
def instance_norm_module(cx, m, input):
    use_stats = not m.track_running_stats
    return instance_norm(cx, input, param(cx, m, "running_mean"), param(cx, m, "running_var"),
                         param(cx, m, "weight"), param(cx, m, "bias"), use_stats,
                         m.momentum, m.eps)


def _module_unary(op_type):
    def convert(cx, m, input):
        return unary(cx, op_type, input)
    return convert


converts_module(nn.ReLU)(_module_unary("Relu"))
converts_module(nn.Sigmoid)(_module_unary("Sigmoid"))
converts_module(nn.Tanh)(_module_unary("Tanh"))
converts_module(nn.Hardswish)(_module_unary("HardSwish"))
converts_module(nn.Softsign)(_module_unary("Softsign"))
converts_module(nn.SELU)(_module_unary("Selu"))
converts_module(nn.SiLU)(lambda cx, m, input: silu(cx, input))
converts_module(nn.Mish)(lambda cx, m, input: mish(cx, input))
converts_module(nn.Hardsigmoid)(lambda cx, m, input: hardsigmoid(cx, input))
converts_module(nn.ReLU6)(lambda cx, m, input: relu6(cx, input))
converts_module(nn.Hardtanh)(lambda cx, m, input: hardtanh(cx, input, m.min_val, m.max_val))
converts_module(nn.LeakyReLU)(lambda cx, m, input: leaky_relu(cx, input, m.negative_slope))
converts_module(nn.ELU)(lambda cx, m, input: elu(cx, input, m.alpha))
converts_module(nn.CELU)(lambda cx, m, input: celu(cx, input, m.alpha))
converts_module(nn.GELU)(lambda cx, m, input: gelu_of(cx, input, m.approximate))
converts_module(nn.Softplus)(lambda cx, m, input: softplus(cx, input, m.beta, m.threshold))
converts_module(nn.LogSigmoid)(lambda cx, m, input: logsigmoid(cx, input))
converts_module(nn.PReLU)(lambda cx, m, input: prelu(cx, input, param(cx, m, "weight")))
converts_module(nn.Softmax)(lambda cx, m, input: softmax(cx, input, m.dim))
converts_module(nn.Softmax2d)(lambda cx, m, input: softmax(cx, input, -3))
converts_module(nn.LogSoftmax)(lambda cx, m, input: log_softmax(cx, input, m.dim))
converts_module(nn.Softmin)(lambda cx, m, input: softmin(cx, input, m.dim))
converts_module(nn.Flatten, nn.Unflatten)(lambda cx, m, input: reshape(cx, input,
                                                                       cx.out_shape))
converts_module(nn.Embedding)(lambda cx, m, input: embedding(
    cx, input, param(cx, m, "weight"), m.padding_idx, m.max_norm))
converts_module(nn.PixelShuffle)(lambda cx, m, input: pixel_shuffle(cx, input,
                                                                    m.upscale_factor))


@converts_module(nn.MaxPool1d, nn.MaxPool2d, nn.MaxPool3d)
def max_pool_module(cx, m, input):
    if m.return_indices:
        raise Unsupported("attribute return_indices=True is not supported")
    n = input.rank - 2
    return pool(cx, "MaxPool", n, input, m.kernel_size, m.stride, m.padding, m.dilation,
                m.ceil_mode)


@converts_module(nn.AvgPool1d, nn.AvgPool2d, nn.AvgPool3d)
def avg_pool_module(cx, m, input):
    n = input.rank - 2
    return pool(cx, "AveragePool", n, input, m.kernel_size, m.stride, m.padding, 1,
                m.ceil_mode, m.count_include_pad, getattr(m, "divisor_override", None))


@converts_module(nn.AdaptiveAvgPool1d, nn.AdaptiveAvgPool2d, nn.AdaptiveAvgPool3d)
def adaptive_avg_pool_module(cx, m, input):
    return adaptive_pool(cx, "AveragePool", input, cx.out_shape[2:])


@converts_module(nn.AdaptiveMaxPool1d, nn.AdaptiveMaxPool2d, nn.AdaptiveMaxPool3d)
def adaptive_max_pool_module(cx, m, input):
    if m.return_indices:
        raise Unsupported("attribute return_indices=True is not supported")
    return adaptive_pool(cx, "MaxPool", input, cx.out_shape[2:])


@converts_module(nn.ZeroPad2d, nn.ConstantPad1d, nn.ConstantPad2d, nn.ConstantPad3d)
def constant_pad_module(cx, m, input):
    return pad_tensor(cx, input, list(m.padding), "constant", m.value)


@converts_module(nn.ReflectionPad1d, nn.ReflectionPad2d, nn.ReflectionPad3d)
def reflection_pad_module(cx, m, input):
    return pad_tensor(cx, input, list(m.padding), "reflect")


@converts_module(nn.ReplicationPad1d, nn.ReplicationPad2d, nn.ReplicationPad3d)
def replication_pad_module(cx, m, input):
    return pad_tensor(cx, input, list(m.padding), "replicate")


@converts_module(nn.Upsample)
def upsample_module(cx, m, input):
    return interpolate(cx, input, m.size, m.scale_factor, m.mode, m.align_corners,
                       getattr(m, "recompute_scale_factor", None))


@converts_module(nn.ChannelShuffle)
def channel_shuffle_module(cx, m, input):
    n, c = input.shape[:2]
    g = m.groups
    rest = input.shape[2:]
    x = reshape(cx, input, (n, g, c // g) + rest, tag="split_groups")
    x = transpose(cx, x, [0, 2, 1] + list(range(3, x.rank)), tag="transpose")
    return reshape(cx, x, input.shape)


# ---- attention and transformer layers -------------------------------------


def attention(cx, m, path, query, key, value, key_padding_mask=None, attn_mask=None,
              need_weights=False, average_attn_weights=True):
    """nn.MultiheadAttention in eval mode on batch-first 3-D inputs:
    separate q/k/v projections, heads split into the batch (B*H, L, D) as
    torch's own slow path does, MatMul -> scale -> +mask -> Softmax ->
    MatMul (the chain Tessel's tessel-fuse-attention raises to one fused
    kernel), heads merged, output projection. Returns (output, weights or
    None)."""
    if m.bias_k is not None or m.bias_v is not None:
        raise Unsupported("MultiheadAttention with add_bias_kv=True is not supported")
    if m.add_zero_attn:
        raise Unsupported("MultiheadAttention with add_zero_attn=True is not supported")
    b, lq, e = query.shape
    s = key.shape[1]
    h = m.num_heads
    d = e // h
    dt = query.dtype
    if m._qkv_same_embed_dim:
        ws = [cx.param_slice(m.in_proj_weight, i * e, (i + 1) * e,
                             f"{path}.in_proj_weight[{n}]") for i, n in enumerate("qkv")]
    else:
        ws = [param(cx, m, f"{n}_proj_weight", path) for n in "qkv"]
    if m.in_proj_bias is not None:
        bs = [cx.param_slice(m.in_proj_bias, i * e, (i + 1) * e, f"{path}.in_proj_bias[{n}]")
              for i, n in enumerate("qkv")]
    else:
        bs = [None] * 3

    def heads(x, n, w, bias, name, perm):
        y = linear(cx, x, w, bias, tag=f"{name}_proj")
        y = transpose(cx, reshape(cx, y, (b, n, h, d), tag=f"{name}_heads"), perm,
                      tag=f"{name}_transpose")
        return reshape(cx, y, (b * h,) + y.shape[2:], tag=f"{name}_batch")

    q = heads(query, lq, ws[0], bs[0], "q", [0, 2, 1, 3])       # (B*H, L, D)
    kt = heads(key, s, ws[1], bs[1], "k", [0, 2, 3, 1])         # (B*H, D, S)
    v = heads(value, s, ws[2], bs[2], "v", [0, 2, 1, 3])        # (B*H, S, D)
    scores = matmul(cx, q, kt, tag="scores")
    scores = binary(cx, "Mul", scores, 1.0 / math.sqrt(d), dt, tag="scale")
    mask = None
    if attn_mask is not None:  # (L, S) or (B*H, L, S)
        mask = additive_mask(cx, attn_mask, dt, tag="attn_mask")
        if mask.rank == 2:
            mask = reshape(cx, mask, (1,) + mask.shape, tag="attn_mask_batch")
    if key_padding_mask is not None:  # (B, S) -> (B*H, 1, S)
        kpm = additive_mask(cx, key_padding_mask, dt, tag="key_padding_mask")
        kpm = expand_to(cx, reshape(cx, kpm, (b, 1, 1, s), tag="key_padding_mask_reshape"),
                        (b, h, 1, s), tag="key_padding_mask_heads")
        kpm = reshape(cx, kpm, (b * h, 1, s), tag="key_padding_mask_batch")
        mask = kpm if mask is None else binary(cx, "Add", mask, kpm, dt, tag="mask")
    if mask is not None:
        scores = binary(cx, "Add", scores, mask, dt, tag="masked")
    probs = softmax_last(cx, scores, tag="softmax")
    o = matmul(cx, probs, v, tag="context")                     # (B*H, L, D)
    o = transpose(cx, reshape(cx, o, (b, h, lq, d), tag="context_heads"), [0, 2, 1, 3],
                  tag="merge_transpose")
    o = reshape(cx, o, (b, lq, e), tag="merge_heads")
    out = linear(cx, o, param(cx, m.out_proj, "weight", path + ".out_proj"),
                 param(cx, m.out_proj, "bias", path + ".out_proj"), tag="out_proj")
    weights = None
    if need_weights:
        weights = reshape(cx, probs, (b, h, lq, s), tag="weights_heads")
        if average_attn_weights:
            weights = reduce(cx, "ReduceMean", weights, [1], False, tag="weights")
    return out, weights


def _batch_first(cx, x, batch_first, tag):
    """(L, B, E) -> (B, L, E) unless already batch first; (L, E) -> (1, L, E)."""
    if x is None:
        return None
    if x.rank == 2:
        return reshape(cx, x, (1,) + x.shape, tag=tag)
    if not batch_first:
        return transpose(cx, x, [1, 0, 2], tag=tag)
    return x


def _from_batch_first(cx, x, batch_first, batched, tag):
    if not batched:
        return reshape(cx, x, x.shape[1:], tag=tag)
    if not batch_first:
        return transpose(cx, x, [1, 0, 2], tag=tag)
    return x


@converts_module(nn.MultiheadAttention)
def multihead_attention_module(cx, m, query, key, value, key_padding_mask=None,
                               need_weights=True, attn_mask=None, average_attn_weights=True):
    """The attention weights are computed only when the model reads them."""
    weights_read = need_weights and any(
        not (u.op == "call_function" and u.target is operator.getitem and u.args[1] == 0)
        for u in cx.node.users)
    batched = query.rank == 3
    same_kv = key is value
    qb = _batch_first(cx, query, m.batch_first, "query_batch_first")
    kb = qb if key is query else _batch_first(cx, key, m.batch_first, "key_batch_first")
    vb = kb if same_kv else (qb if value is query else
                             _batch_first(cx, value, m.batch_first, "value_batch_first"))
    if key_padding_mask is not None and key_padding_mask.rank == 1:
        key_padding_mask = reshape(cx, key_padding_mask, (1,) + key_padding_mask.shape,
                                   tag="key_padding_mask_batch")
    out, weights = attention(cx, m, cx.module_path, qb, kb, vb, key_padding_mask, attn_mask,
                             weights_read, average_attn_weights)
    out = _from_batch_first(cx, out, m.batch_first, batched, "output")
    if weights is not None and not batched:
        weights = reshape(cx, weights, weights.shape[1:] if weights.shape else None,
                          tag="weights_unbatched")
    return (out, weights)


def _activation(cx, act, x, tag):
    if act is F.relu or isinstance(act, nn.ReLU):
        return relu_of(cx, x, tag=tag)
    if act is F.gelu:
        return gelu_of(cx, x, "none", tag=tag)
    if isinstance(act, nn.GELU):
        return gelu_of(cx, x, act.approximate, tag=tag)
    raise Unsupported(f"transformer activation {act!r} is not supported (only relu and gelu)")


def encoder_layer(cx, m, path, x, src_mask=None, src_key_padding_mask=None):
    """nn.TransformerEncoderLayer in eval mode on batch-first 3-D x (the slow
    path's math; dropout is the identity in eval)."""
    if not isinstance(m, nn.TransformerEncoderLayer) or type(m).forward is not \
            nn.TransformerEncoderLayer.forward:
        raise Unsupported(f"encoder layer of type {type(m).__name__} is not supported")
    dt = x.dtype

    def sub(name):
        return f"{path}.{name}" if path else name

    def ln(module, name, y):
        with cx.scope(name):
            return layer_norm(cx, y, list(module.normalized_shape),
                              param(cx, module, "weight", sub(name)),
                              param(cx, module, "bias", sub(name)), module.eps, tag=name)

    def sa(y):
        with cx.scope("self_attn"):
            return attention(cx, m.self_attn, sub("self_attn"), y, y, y,
                             src_key_padding_mask, src_mask)[0]

    def ff(y):
        y = linear(cx, y, param(cx, m.linear1, "weight", sub("linear1")),
                   param(cx, m.linear1, "bias", sub("linear1")), tag="linear1")
        y = _activation(cx, m.activation, y, "activation")
        return linear(cx, y, param(cx, m.linear2, "weight", sub("linear2")),
                      param(cx, m.linear2, "bias", sub("linear2")), tag="linear2")

    if m.norm_first:
        x = binary(cx, "Add", x, sa(ln(m.norm1, "norm1", x)), dt, tag="residual1")
        x = binary(cx, "Add", x, ff(ln(m.norm2, "norm2", x)), dt, tag="residual2")
    else:
        x = ln(m.norm1, "norm1", binary(cx, "Add", x, sa(x), dt, tag="residual1"))
        x = ln(m.norm2, "norm2", binary(cx, "Add", x, ff(x), dt, tag="residual2"))
    return x


def _check_kpm(mask):
    if mask is not None and mask.dtype != torch.bool and not mask.dtype.is_floating_point:
        raise Unsupported(f"key padding mask of dtype {mask.dtype} (only bool and float)")


@converts_module(nn.TransformerEncoderLayer)
def transformer_encoder_layer_module(cx, m, src, src_mask=None, src_key_padding_mask=None):
    _check_kpm(src_key_padding_mask)
    batched = src.rank == 3
    batch_first = m.self_attn.batch_first
    x = _batch_first(cx, src, batch_first, "input_batch_first")
    kpm = src_key_padding_mask
    if kpm is not None and kpm.rank == 1:
        kpm = reshape(cx, kpm, (1,) + kpm.shape, tag="key_padding_mask_batch")
    x = encoder_layer(cx, m, cx.module_path, x, src_mask, kpm)
    return _from_batch_first(cx, x, batch_first, batched, "output")


@converts_module(nn.TransformerEncoder)
def transformer_encoder_module(cx, m, src, mask=None, src_key_padding_mask=None):
    """The layers in turn, then the optional norm. (torch's nested-tensor
    fast path, taken under no_grad with a key padding mask, returns zeros at
    padded positions; this is the regular path's output there.)"""
    _check_kpm(src_key_padding_mask)
    if len(m.layers) == 0:
        return src
    batched = src.rank == 3
    batch_first = m.layers[0].self_attn.batch_first
    if any(layer.self_attn.batch_first != batch_first for layer in m.layers):
        raise Unsupported("TransformerEncoder layers disagree on batch_first")
    x = _batch_first(cx, src, batch_first, "input_batch_first")
    kpm = src_key_padding_mask
    if kpm is not None and kpm.rank == 1:
        kpm = reshape(cx, kpm, (1,) + kpm.shape, tag="key_padding_mask_batch")
    for i, layer in enumerate(m.layers):
        path = f"{cx.module_path}.layers.{i}"
        with cx.scope(f"layers.{i}"):
            x = encoder_layer(cx, layer, path, x, mask, kpm)
    if m.norm is not None:
        with cx.scope("norm"):
            x = layer_norm(cx, x, list(m.norm.normalized_shape),
                           param(cx, m.norm, "weight", f"{cx.module_path}.norm"),
                           param(cx, m.norm, "bias", f"{cx.module_path}.norm"), m.norm.eps,
                           tag="norm")
    return _from_batch_first(cx, x, batch_first, batched, "output")


# ---- torchvision functions torch.fx leaves untraced (torch.fx.wrap) ---------


def _register_torchvision():
    try:
        from torchvision.ops import stochastic_depth as tv_stochastic_depth
    except ImportError:  # torchvision is optional
        return

    @converts(tv_stochastic_depth)
    def stochastic_depth(cx, input, p, mode, training=True):
        if training and p > 0:
            raise Unsupported("stochastic_depth with training=True drops random rows; "
                              "Tessel compiles inference (call module.eval())")
        return input


_register_torchvision()


# Leaf torch.nn modules that FX cannot trace but whose submodules it can:
# the importer's tracer traces through these instead of treating them as leaves.
TRACE_THROUGH = (nn.TransformerDecoderLayer, nn.TransformerDecoder)

# ---- ops whose results are random ------------------------------------------

RANDOM_FUNCTIONS = {
    torch.rand, torch.randn, torch.randint, torch.randperm, torch.rand_like,
    torch.randn_like, torch.randint_like, torch.bernoulli, torch.multinomial,
    torch.normal, torch.poisson,
}
RANDOM_METHODS = {"uniform_", "normal_", "bernoulli_", "bernoulli", "exponential_",
                  "geometric_", "log_normal_", "cauchy_", "random_", "multinomial"}

# The random ops that convert (ONNX RandomUniform/Normal(Like), Bernoulli,
# Multinomial; Tessel's own generator, docs/dialects/tessel.md): a new draw
# on every call, never PyTorch's values.
DRAWING_FUNCTIONS = {torch.rand, torch.randn, torch.rand_like, torch.randn_like,
                     torch.bernoulli, torch.multinomial}
DRAWING_METHODS = {"bernoulli", "multinomial"}
DROPOUT_FUNCTIONS = {F.dropout, torch.dropout}

_DRAW_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def _draw_dtype(cx):
    if cx.out_dtype not in _DRAW_DTYPES:
        raise Unsupported(f"random draws of {cx.out_dtype} are not supported (float types)")
    return cx.out_dtype


@converts(torch.rand, torch.randn)
def _rand(cx, *size, **kwargs):
    dtype = _draw_dtype(cx)
    op = "RandomUniform" if cx.node.target is torch.rand else "RandomNormal"
    return cx.op(op, [], dtype=dtype, shape=cx.out_shape, tag=op.lower(),
                 onnx_attrs={"shape": list(cx.out_shape), "dtype": onnx_type(dtype)})


@converts(torch.rand_like, torch.randn_like)
def _rand_like(cx, input, **kwargs):
    dtype = _draw_dtype(cx)
    op = "RandomUniformLike" if cx.node.target is torch.rand_like else "RandomNormalLike"
    return cx.op(op, [input], dtype=dtype, shape=cx.out_shape, tag=op.lower(),
                 onnx_attrs={"dtype": onnx_type(dtype)})


@converts(torch.bernoulli, "bernoulli")
def _bernoulli(cx, input, p=None, generator=None, **kwargs):
    if isinstance(p, (int, float)):
        # bernoulli(input, p): probability p everywhere, input's shape.
        u = cx.op("RandomUniformLike", [input], dtype=torch.float32, shape=input.shape,
                  tag="uniform", onnx_attrs={"dtype": onnx_type(torch.float32)})
        ones = binary(cx, "Less", u, float(p), torch.float32, out_dtype=torch.bool)
        return cast(cx, ones, cx.out_dtype)
    if p is not None:
        raise Unsupported("bernoulli with a tensor p is not supported")
    return cx.op("Bernoulli", [input], dtype=cx.out_dtype, shape=cx.out_shape,
                 onnx_attrs={"dtype": onnx_type(cx.out_dtype)})


@converts(torch.multinomial, "multinomial")
def _multinomial(cx, input, num_samples, replacement=False, generator=None, **kwargs):
    if not replacement and num_samples > 1:
        raise Unsupported("multinomial without replacement is not supported "
                          "(ONNX Multinomial draws with replacement)")
    if input.rank not in (1, 2):
        raise Unsupported(f"multinomial of a rank-{input.rank} input (1 or 2)")
    # ONNX takes log-probabilities of a batch; torch weights (>= 0).
    x = cast(cx, input, torch.float32 if input.dtype != torch.float64 else input.dtype)
    logits = unary(cx, "Log", x)
    if input.rank == 1:
        logits = unsqueeze(cx, logits, 0)
    out = cx.op("Multinomial", [logits], dtype=torch.int64,
                shape=(logits.shape[0], num_samples),
                sample_size=int(num_samples),
                onnx_attrs={"dtype": onnx_type(torch.int64)})
    return reshape(cx, out, cx.out_shape)

# Queries that give a Python value from a tensor without reading its data.
SHAPE_METHODS = {"size", "dim", "ndimension", "numel", "nelement", "element_size",
                 "is_contiguous", "is_floating_point", "is_complex", "get_device",
                 "type"}
SHAPE_ATTRIBUTES = {"shape", "dtype", "ndim", "device", "is_cuda", "requires_grad",
                    "layout", "is_sparse", "is_quantized", "is_meta"}
SHAPE_FUNCTIONS = {torch.numel, torch.is_floating_point, torch.is_tensor, torch.is_complex,
                   torch._assert}
