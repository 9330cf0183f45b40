"""A small builder for model-level graphs, with shape inference.

For compiler developers who want a test graph without an ONNX file or a
torch module. Each method infers its result's shape and dtype (numpy
broadcasting for elementwise ops), emits the model-level op (TOSA or
``tessel``) and returns a :class:`Value`; :meth:`Graph.module` parses and
verifies the result::

    g = tessel.builder.Graph()
    x = g.input("x", (2, 8))
    w = g.constant(np.ones((8, 4), np.float32))
    y = g.relu(g.add(g.matmul(x, w), g.constant(np.zeros(4, np.float32))))
    g.output(y, name="y")
    m = g.module()            # tessel.ir.Module
    f = tessel.compile(m)     # or tessel.compile(g.text())
"""
import numpy as np

from . import ir

_MLIR_TYPES = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64",
               np.dtype(np.float16): "f16", np.dtype(np.int64): "i64",
               np.dtype(np.int32): "i32", np.dtype(np.int16): "i16",
               np.dtype(np.int8): "i8", np.dtype(np.bool_): "i1"}
_FLOATS = ("f16", "f32", "f64")


class Value:
    """An SSA value of the graph: its MLIR name, shape and element type."""

    def __init__(self, ref, shape, dtype):
        self.ref, self.shape, self.dtype = ref, tuple(int(d) for d in shape), dtype

    @property
    def type(self):
        return _tensor_type(self.shape, self.dtype)

    def __repr__(self):
        return f"<Value {self.ref}: {self.type}>"


def _tensor_type(shape, dtype):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


def _element_type(dtype):
    if isinstance(dtype, str):
        if dtype not in _MLIR_TYPES.values():
            raise ValueError(f"unsupported element type '{dtype}'")
        return dtype
    dt = np.dtype(dtype)
    if dt not in _MLIR_TYPES:
        raise ValueError(f"unsupported numpy dtype '{dt}'")
    return _MLIR_TYPES[dt]


class Graph:
    """One function (``@name``) under construction."""

    def __init__(self, name="main"):
        self.name = name
        self._inputs = []   # (Value, name)
        self._outputs = []  # (Value, name)
        self._lines = []
        self._count = 0

    # ---- graph interface ----------------------------------------------------
    def input(self, name, shape, dtype="f32"):
        """A function argument named ``name`` (its name in the artifact)."""
        v = Value(f"%arg{len(self._inputs)}", shape, _element_type(dtype))
        self._inputs.append((v, name))
        return v

    def output(self, value, name=None):
        """Marks ``value`` as a result (named ``name`` in the artifact)."""
        self._check(value)
        self._outputs.append((value, name or f"output{len(self._outputs)}"))

    def constant(self, array, dtype=None):
        """A weight or constant tensor (stored exactly, as raw bytes)."""
        a = np.asarray(array)
        if dtype is not None:
            a = a.astype(dtype)
        et = _element_type(a.dtype)
        a = np.ascontiguousarray(a)
        if a.dtype == np.bool_:
            body = self._bool_literal(a)
        else:
            body = 'dense<"0x' + a.astype(a.dtype.newbyteorder("<")).tobytes().hex().upper() + '">'
        ty = _tensor_type(a.shape, et)
        return self._emit(f'"tosa.const"() <{{values = {body} : {ty}}}> : () -> {ty}',
                          a.shape, et)

    # ---- elementwise ------------------------------------------------------------
    def add(self, a, b):
        return self._binary("tosa.add", a, b)

    def sub(self, a, b):
        return self._binary("tosa.sub", a, b)

    def mul(self, a, b):
        a, b, shape = self._broadcast(a, b)
        shift = self._emit('"tosa.const"() <{values = dense<0> : tensor<1xi8>}> '
                           ': () -> tensor<1xi8>', (1,), "i8")
        return self._emit(f"tosa.mul {a.ref}, {b.ref}, {shift.ref} : ({a.type}, "
                          f"{b.type}, tensor<1xi8>) -> {_tensor_type(shape, a.dtype)}",
                          shape, a.dtype)

    def div(self, a, b):
        """a / b for floats (TOSA has no float division: a * reciprocal(b))."""
        self._require_float(a, "div")
        return self.mul(a, self._unary("tosa.reciprocal", b))

    def maximum(self, a, b):
        return self._binary("tosa.maximum", a, b)

    def minimum(self, a, b):
        return self._binary("tosa.minimum", a, b)

    def pow(self, a, b):
        return self._binary("tosa.pow", a, b)

    def relu(self, x):
        self._require_float(x, "relu")
        return self._emit(f"tosa.clamp {x.ref} {{max_val = 3.40282347E+38 : {x.dtype}, "
                          f"min_val = 0.000000e+00 : {x.dtype}}} : ({x.type}) -> {x.type}",
                          x.shape, x.dtype)

    def sigmoid(self, x):
        return self._unary("tosa.sigmoid", x)

    def tanh(self, x):
        return self._unary("tosa.tanh", x)

    def exp(self, x):
        return self._unary("tosa.exp", x)

    def log(self, x):
        return self._unary("tosa.log", x)

    def rsqrt(self, x):
        return self._unary("tosa.rsqrt", x)

    def reciprocal(self, x):
        return self._unary("tosa.reciprocal", x)

    def gelu(self, x, approximate="none"):
        if approximate not in ("none", "tanh"):
            raise ValueError("gelu: approximate must be 'none' or 'tanh'")
        self._require_float(x, "gelu")
        attr = ("" if approximate == "none" else
                " {approximate = #tessel.gelu_approximation<tanh>}")
        return self._emit(f"tessel.gelu {x.ref}{attr} : {x.type}", x.shape, x.dtype)

    def softmax(self, x, axis=-1):
        self._require_float(x, "softmax")
        axis = self._axis(x, axis)
        return self._emit(f"tessel.softmax {x.ref} {{axis = {axis} : i64}} : {x.type}",
                          x.shape, x.dtype)

    def cast(self, x, dtype):
        et = _element_type(dtype)
        return self._emit(f"tosa.cast {x.ref} : ({x.type}) -> "
                          f"{_tensor_type(x.shape, et)}", x.shape, et)

    # ---- contractions, reductions, shapes ---------------------------------------
    def matmul(self, a, b):
        """[M,K]x[K,N] or batched [B,M,K]x[B,K,N] (float)."""
        self._check(a), self._check(b)
        self._require_float(a, "matmul")
        if a.dtype != b.dtype:
            raise ValueError(f"matmul: element types differ ({a.dtype} vs {b.dtype})")
        if a.shape[-1] != b.shape[-2] if min(len(a.shape), len(b.shape)) >= 2 else True:
            raise ValueError(f"matmul: shapes {a.shape} and {b.shape} do not "
                             "contract")
        if len(a.shape) == 2 and len(b.shape) == 2:
            r = self.matmul(self.reshape(a, (1,) + a.shape),
                            self.reshape(b, (1,) + b.shape))
            return self.reshape(r, (a.shape[0], b.shape[1]))
        if len(a.shape) != 3 or len(b.shape) != 3 or a.shape[0] != b.shape[0]:
            raise ValueError(f"matmul: need two 2-D or two 3-D operands with "
                             f"equal batch, got {a.shape} and {b.shape}")
        shape = (a.shape[0], a.shape[1], b.shape[2])
        zp = f'"tosa.const"() <{{values = dense<0.0> : tensor<1x{a.dtype}>}}> : () -> tensor<1x{a.dtype}>'
        za = self._emit(zp, (1,), a.dtype)
        zb = self._emit(zp, (1,), a.dtype)
        zt = f"tensor<1x{a.dtype}>"
        return self._emit(f"tosa.matmul {a.ref}, {b.ref}, {za.ref}, {zb.ref} : "
                          f"({a.type}, {b.type}, {zt}, {zt}) -> "
                          f"{_tensor_type(shape, a.dtype)}", shape, a.dtype)

    def reduce_sum(self, x, axis):
        return self._reduce("tosa.reduce_sum", x, axis, "i32")

    def reduce_max(self, x, axis):
        return self._reduce("tosa.reduce_max", x, axis, "i32")

    def reduce_mean(self, x, axis):
        self._require_float(x, "reduce_mean")
        return self._reduce("tessel.reduce_mean", x, axis, "i64")

    def reshape(self, x, shape):
        """Numpy-style reshape; one dimension may be -1."""
        self._check(x)
        shape = list(int(d) for d in shape)
        total = int(np.prod(x.shape, dtype=np.int64))
        if shape.count(-1) > 1:
            raise ValueError("reshape: at most one -1")
        if -1 in shape:
            known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
            if known == 0 or total % known:
                raise ValueError(f"reshape: cannot reshape {x.shape} to {tuple(shape)}")
            shape[shape.index(-1)] = total // known
        if int(np.prod(shape, dtype=np.int64)) != total or any(d < 0 for d in shape):
            raise ValueError(f"reshape: cannot reshape {x.shape} to {tuple(shape)}")
        n = len(shape)
        dims = ", ".join(str(d) for d in shape)
        s = self._emit(f"tosa.const_shape {{values = dense<[{dims}]> : tensor<{n}xindex>}} "
                       f": () -> !tosa.shape<{n}>", None, None)
        return self._emit(f"tosa.reshape {x.ref}, {s.ref} : ({x.type}, !tosa.shape<{n}>) "
                          f"-> {_tensor_type(shape, x.dtype)}", shape, x.dtype)

    def transpose(self, x, perm):
        self._check(x)
        perm = [int(p) for p in perm]
        if sorted(perm) != list(range(len(x.shape))):
            raise ValueError(f"transpose: {perm} is not a permutation of "
                             f"{len(x.shape)} dimensions")
        shape = tuple(x.shape[p] for p in perm)
        ps = ", ".join(str(p) for p in perm)
        return self._emit(f"tosa.transpose {x.ref} {{perms = array<i32: {ps}>}} : "
                          f"({x.type}) -> {_tensor_type(shape, x.dtype)}", shape, x.dtype)

    def concat(self, values, axis):
        for v in values:
            self._check(v)
        first = values[0]
        axis = self._axis(first, axis)
        for v in values[1:]:
            if (v.dtype != first.dtype or len(v.shape) != len(first.shape) or
                    any(a != b for i, (a, b) in enumerate(zip(v.shape, first.shape))
                        if i != axis)):
                raise ValueError(f"concat: {v.type} does not match {first.type} "
                                 f"outside axis {axis}")
        shape = list(first.shape)
        shape[axis] = sum(v.shape[axis] for v in values)
        refs = ", ".join(v.ref for v in values)
        types = ", ".join(v.type for v in values)
        return self._emit(f"tosa.concat {refs} {{axis = {axis} : i32}} : ({types}) -> "
                          f"{_tensor_type(shape, first.dtype)}", shape, first.dtype)

    # ---- output -----------------------------------------------------------------
    def text(self):
        """The MLIR text of the function."""
        if not self._outputs:
            raise ValueError("the graph has no output (call Graph.output)")
        args = ", ".join(f'{v.ref}: {v.type} {{tessel.name = "{n}"}}'
                         for v, n in self._inputs)
        results = ", ".join(f'{v.type} {{tessel.name = "{n}"}}'
                            for v, n in self._outputs)
        body = "\n".join("    " + l for l in self._lines)
        rets = ", ".join(v.ref for v, _ in self._outputs)
        rtypes = ", ".join(v.type for v, _ in self._outputs)
        return (f"func.func @{self.name}({args}) -> ({results}) {{\n{body}\n"
                f"    return {rets} : {rtypes}\n}}\n")

    def module(self):
        """The graph as a verified :class:`tessel.ir.Module`."""
        return ir.Module.parse(self.text(), f"<builder:{self.name}>")

    # ---- helpers ----------------------------------------------------------------
    def _emit(self, op, shape, dtype):
        ref = f"%{self._count}"
        self._count += 1
        self._lines.append(f"{ref} = {op}")
        return Value(ref, shape if shape is not None else (), dtype or "none")

    def _check(self, v):
        if not isinstance(v, Value):
            raise TypeError(f"expected a builder Value, got {type(v).__name__} "
                            "(wrap arrays with Graph.constant)")

    def _require_float(self, v, what):
        self._check(v)
        if v.dtype not in _FLOATS:
            raise ValueError(f"{what}: needs a float tensor, got {v.type}")

    def _axis(self, x, axis):
        r = len(x.shape)
        if not -r <= axis < r:
            raise ValueError(f"axis {axis} out of range for {x.type}")
        return axis % r

    def _broadcast(self, a, b):
        self._check(a), self._check(b)
        if a.dtype != b.dtype:
            raise ValueError(f"element types differ: {a.type} vs {b.type}")
        try:
            shape = np.broadcast_shapes(a.shape, b.shape)
        except ValueError:
            raise ValueError(f"shapes {a.shape} and {b.shape} do not broadcast") from None
        r = len(shape)
        if len(a.shape) < r:
            a = self.reshape(a, (1,) * (r - len(a.shape)) + a.shape)
        if len(b.shape) < r:
            b = self.reshape(b, (1,) * (r - len(b.shape)) + b.shape)
        return a, b, tuple(shape)

    def _binary(self, op, a, b):
        a, b, shape = self._broadcast(a, b)
        return self._emit(f"{op} {a.ref}, {b.ref} : ({a.type}, {b.type}) -> "
                          f"{_tensor_type(shape, a.dtype)}", shape, a.dtype)

    def _unary(self, op, x):
        self._require_float(x, op)
        return self._emit(f"{op} {x.ref} : ({x.type}) -> {x.type}", x.shape, x.dtype)

    def _reduce(self, op, x, axis, attr_type):
        self._check(x)
        axis = self._axis(x, axis)
        shape = list(x.shape)
        shape[axis] = 1
        return self._emit(f"{op} {x.ref} {{axis = {axis} : {attr_type}}} : ({x.type}) "
                          f"-> {_tensor_type(shape, x.dtype)}", shape, x.dtype)

    @staticmethod
    def _bool_literal(a):
        def rec(x):
            if x.ndim == 0:
                return "true" if x else "false"
            return "[" + ", ".join(rec(y) for y in x) + "]"
        return "dense<" + rec(a) + ">"
