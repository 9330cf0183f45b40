"""ONNX ops given an operand whose sizes are known only at run time (here
the rows of a Slice by a graph input): each against numpy at several row
counts from one artifact, along the run-time axis and the static one; and
an op that does not take such operands yet, rejected by name."""
import numpy as np
import pytest
from onnx import TensorProto as TP, helper

import tessel

vi = helper.make_tensor_value_info
COLS = 4


def model(nodes, extra_inputs=(), out_rank=2, out_type=TP.FLOAT):
    """s = x[:k] (x: [6, COLS], k a graph input), then `nodes` -> y."""
    consts = [helper.make_node("Constant", [], [n], value=helper.make_tensor(n, TP.INT64, [1], [0]))
              for n in ("zero", "axis0")]
    slicing = [helper.make_node("Unsqueeze", ["k", "axis0"], ["k1"]),
               helper.make_node("Slice", ["x", "zero", "k1", "axis0"], ["s"])]
    g = helper.make_graph(consts + slicing + list(nodes), "m",
                          [vi("x", TP.FLOAT, [6, COLS]), vi("k", TP.INT64, [])] + list(extra_inputs),
                          [vi("y", out_type, [None] * out_rank)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def check(m, ref, feeds=(), rtol=1e-5):
    f = tessel.compile(m.SerializeToString())
    x = (np.arange(6 * COLS, dtype=np.float32).reshape(6, COLS) - 9.5) / 3
    for k in (1, 3, 6):
        got = f(x, np.array(k, np.int64), *feeds)
        want = ref(x[:k], *feeds)
        assert got.shape == np.shape(want), (k, got.shape, np.shape(want))
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-6)


def node(op, inputs=("s",), **attrs):
    return helper.make_node(op, list(inputs), ["y"], **attrs)


def softmax(s, axis):
    e = np.exp(s - s.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


UNARY = {
    "Neg": (lambda s: -s, {}),
    "Atan": (np.arctan, {}),
    "LeakyRelu": (lambda s: np.where(s > 0, s, 0.1 * s), {"alpha": 0.1}),
    "Elu": (lambda s: np.where(s > 0, s, 0.5 * (np.exp(s) - 1)), {"alpha": 0.5}),
    "Selu": (lambda s: 1.0507 * np.where(s > 0, s, 1.6733 * (np.exp(s) - 1)),
             {"alpha": 1.6733, "gamma": 1.0507}),
    "Softplus": (lambda s: np.log1p(np.exp(s)), {}),
    "HardSigmoid": (lambda s: np.clip(0.3 * s + 0.4, 0, 1), {"alpha": 0.3, "beta": 0.4}),
    "Softmax/0": (lambda s: softmax(s, 0), {"axis": 0}),
    "Softmax/1": (lambda s: softmax(s, 1), {"axis": 1}),
    "LogSoftmax/0": (lambda s: np.log(softmax(s, 0)), {"axis": 0}),
    "LogSoftmax/1": (lambda s: np.log(softmax(s, 1)), {"axis": -1}),
    "Transpose": (lambda s: s.T, {"perm": [1, 0]}),
    "Flatten/0": (lambda s: s.reshape(1, -1), {"axis": 0}),
    "Flatten/1": (lambda s: s.reshape(len(s), -1), {"axis": 1}),
    "Flatten/2": (lambda s: s.reshape(-1, 1), {"axis": 2}),
    "ReduceSum/all": (lambda s: s.sum(keepdims=True).reshape(1, 1), {}),
    "ReduceMax/0": (lambda s: s.max(0, keepdims=True), {"axes": [0]}),
    "ReduceMax/1": (lambda s: s.max(1, keepdims=True), {"axes": [1]}),
    "ReduceMin/0": (lambda s: s.min(0, keepdims=True), {"axes": [0]}),
    "ReduceProd/1": (lambda s: s.prod(1, keepdims=True), {"axes": [1]}),
    "ReduceL2/0": (lambda s: np.sqrt((s * s).sum(0, keepdims=True)), {"axes": [0]}),
    "ReduceMean/0": (lambda s: s.mean(0, keepdims=True), {"axes": [0]}),
    "ReduceMean/1": (lambda s: s.mean(1, keepdims=True), {"axes": [1]}),
    "Clip": (lambda s: np.clip(s, -1.0, 2.0), None),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name):
    ref, attrs = UNARY[name]
    op = name.split("/")[0]
    if op == "Clip":
        lo = helper.make_node("Constant", [], ["lo"], value=helper.make_tensor("lo", TP.FLOAT, [], [-1]))
        hi = helper.make_node("Constant", [], ["hi"], value=helper.make_tensor("hi", TP.FLOAT, [], [2]))
        check(model([lo, hi, node("Clip", ("s", "lo", "hi"))]), ref)
        return
    if op == "ReduceSum":
        check(model([node(op, keepdims=1)]), ref)
        return
    check(model([node(op, **attrs)]), ref)


def test_binary_and_variadic():
    check(model([node("Div", ("s", "s2")), helper.make_node("Add", ["s", "s"], ["s2"])][::-1]),
          lambda s: s / (s + s))
    for op, fn in [("Max", np.maximum), ("Min", np.minimum)]:
        check(model([helper.make_node("Neg", ["s"], ["n"]), node(op, ("s", "n"))]),
              lambda s, fn=fn: fn(s, -s))
    check(model([helper.make_node("Neg", ["s"], ["n"]), node("Sum", ("s", "n", "s"))]), lambda s: s)
    check(model([helper.make_node("Abs", ["s"], ["a"]), node("Mean", ("s", "a"))]),
          lambda s: (s + np.abs(s)) / 2)
    check(model([helper.make_node("Greater", ["s", "zero_f"], ["c"]),
                 helper.make_node("Constant", [], ["zero_f"], value=helper.make_tensor(
                     "zero_f", TP.FLOAT, [], [0])),
                 helper.make_node("Neg", ["s"], ["n"]), node("Where", ("c", "s", "n"))][1:2] +
                [helper.make_node("Greater", ["s", "zero_f"], ["c"]),
                 helper.make_node("Neg", ["s"], ["n"]), node("Where", ("c", "s", "n"))]),
          np.abs)


@pytest.mark.parametrize("axis", [0, 1])
def test_concat_argmax_argmin(axis):
    check(model([node("Concat", ("s", "s"), axis=axis)]),
          lambda s: np.concatenate([s, s], axis))
    for op, fn in [("ArgMax", np.argmax), ("ArgMin", np.argmin)]:
        m = model([helper.make_node(op, ["s"], ["y"], axis=axis, keepdims=1)],
                  out_type=TP.INT64)
        check(m, lambda s, fn=fn: np.expand_dims(fn(s, axis), axis))


def test_matmul_and_gemm():
    w = np.linspace(-1, 1, COLS * 3, dtype=np.float32).reshape(COLS, 3)
    check(model([node("MatMul", ("s", "w"))], [vi("w", TP.FLOAT, [COLS, 3])]),
          lambda s, w: s @ w, (w,))
    c = np.array([0.5, -1.0, 2.0], np.float32)
    check(model([node("Gemm", ("s", "wt", "c"), transB=1, alpha=0.5, beta=2.0)],
                [vi("wt", TP.FLOAT, [3, COLS]), vi("c", TP.FLOAT, [3])]),
          lambda s, wt, c: 0.5 * s @ wt.T + 2.0 * c, (np.ascontiguousarray(w.T), c))


def test_op_not_taking_run_time_sizes_is_rejected():
    m = model([node("CumSum", ("s", "ax")),
               helper.make_node("Constant", [], ["ax"], value=helper.make_tensor(
                   "ax", TP.INT64, [], [0]))][::-1])
    m.graph.node[-1].name = "cumsum0"
    with pytest.raises(tessel.CompileError) as e:
        tessel.compile(m.SerializeToString())
    assert "node 'cumsum0' (CumSum" in str(e.value)
    assert "known only at run time" in str(e.value)


def test_shape_and_size_read_at_run_time():
    m = model([helper.make_node("Shape", ["s"], ["y"], start=0, end=1)], out_rank=1,
              out_type=TP.INT64)
    check(m, lambda s: np.array(s.shape[:1], np.int64))
    m = model([helper.make_node("Shape", ["s"], ["y"], start=-1)], out_rank=1,
              out_type=TP.INT64)
    check(m, lambda s: np.array([COLS], np.int64))
    check(model([node("Size")], out_rank=0, out_type=TP.INT64),
          lambda s: np.array(s.size, np.int64))


def test_exported_reshape_pattern():
    # What exporters write for x.view(x.shape[0] * 2, -1): Shape -> Gather
    # -> Mul -> Unsqueeze -> Concat -> Reshape, the shape known at run time.
    c = lambda n, v: helper.make_node("Constant", [], [n], value=helper.make_tensor(
        n, TP.INT64, [len(v)] if isinstance(v, list) else [], v if isinstance(v, list) else [v]))
    nodes = [c("i0", 0), c("two", 2), c("minus1", [-1]),
             helper.make_node("Shape", ["s"], ["sh"]),
             helper.make_node("Gather", ["sh", "i0"], ["rows"], axis=0),
             helper.make_node("Mul", ["rows", "two"], ["rows2"]),
             helper.make_node("Unsqueeze", ["rows2", "axis0"], ["rows2_1"]),
             helper.make_node("Concat", ["rows2_1", "minus1"], ["target"], axis=0),
             helper.make_node("Reshape", ["s", "target"], ["y"])]
    check(model(nodes), lambda s: s.reshape(len(s) * 2, -1))


@pytest.mark.parametrize("shape,ref", [
    ([-1], lambda s: s.reshape(-1)),
    ([0, 2, 2], lambda s: s.reshape(len(s), 2, 2)),
    ([5, -1], None),  # 5 rows of 4 elements hold it; 6 or 3 rows do not
])
def test_reshape_of_run_time_sized_input(shape, ref):
    c = helper.make_node("Constant", [], ["target"], value=helper.make_tensor(
        "target", TP.INT64, [len(shape)], shape))
    m = model([c, node("Reshape", ("s", "target"))], out_rank=len(shape))
    if ref is not None:
        check(m, ref)
        return
    f = tessel.compile(m.SerializeToString())
    x = np.arange(6 * COLS, dtype=np.float32).reshape(6, COLS)
    np.testing.assert_array_equal(f(x, np.array(5, np.int64)), x[:5].reshape(5, -1))
    for rows in (6, 3):
        with pytest.raises(tessel.InvocationError, match="shape"):
            f(x, np.array(rows, np.int64))


@pytest.mark.parametrize("axis,idx", [(0, [0, -1, 0]), (1, [[3, 0], [-4, 1]]), (1, 2)])
def test_gather(axis, idx):
    idx = np.array(idx, np.int64)
    m = model([node("Gather", ("s", "i"), axis=axis)], [vi("i", TP.INT64, list(idx.shape))],
              out_rank=1 + idx.ndim)
    check(m, lambda s, i: np.take(s, i, axis=axis), (idx,))
    f = tessel.compile(m.SerializeToString())
    x = np.zeros((6, COLS), np.float32)
    bad = np.full_like(idx, 7 if axis == 0 else COLS)
    with pytest.raises(tessel.InvocationError, match="out of range"):
        f(x, np.array(6, np.int64), bad)


def const_ints(name, values):
    return helper.make_node("Constant", [], [name], value=helper.make_tensor(
        name, TP.INT64, [len(values)], values))


@pytest.mark.parametrize("axes,ref", [([0], lambda s: s[None]),
                                      ([1], lambda s: s[:, None]),
                                      ([2, -4], lambda s: s[None, :, None])])
def test_unsqueeze_then_squeeze(axes, ref):
    """Constant axes around the run-time rows: the static dims stay static
    (the squeeze back and a Gemm after it need them)."""
    m = model([const_ints("ax", axes), node("Unsqueeze", ("s", "ax"))],
              out_rank=2 + len(axes))
    check(m, ref)
    w = np.arange(COLS * 3, dtype=np.float32).reshape(COLS, 3) / 7
    nodes = [const_ints("ax", axes),
             helper.make_node("Unsqueeze", ["s", "ax"], ["u"]),
             helper.make_node("Squeeze", ["u", "ax"], ["q"]),
             helper.make_node("Constant", [], ["w"], value=helper.make_tensor(
                 "w", TP.FLOAT, [COLS, 3], w.ravel())),
             helper.make_node("Gemm", ["q", "w"], ["y"])]
    check(model(nodes), lambda s: s @ w)


def test_squeeze_of_a_run_time_dim_is_rejected():
    m = model([const_ints("ax", [0]), node("Squeeze", ("s", "ax"))], out_rank=1)
    with pytest.raises(tessel.CompileError, match="squeezing a dim whose size is "
                                                  "known only at run time"):
        tessel.compile(m.SerializeToString())


def test_split_along_the_static_axis():
    nodes = [const_ints("sizes", [1, 3]),
             helper.make_node("Split", ["s", "sizes"], ["a", "b"], axis=1),
             helper.make_node("Concat", ["b", "a"], ["y"], axis=1)]
    check(model(nodes), lambda s: np.concatenate([s[:, 1:], s[:, :1]], 1))
    nodes = [helper.make_node("Split", ["s"], ["a", "b"], axis=-1),
             helper.make_node("Sub", ["a", "b"], ["y"])]
    check(model(nodes), lambda s: s[:, :2] - s[:, 2:])
    m = model([const_ints("sizes", [1, 5]),
               helper.make_node("Split", ["s", "sizes"], ["y", "b"], axis=0)])
    with pytest.raises(tessel.CompileError, match="Split along a dim whose size "
                                                  "is known only at run time"):
        tessel.compile(m.SerializeToString())


def test_expand_of_run_time_rows():
    # A constant shape: a broadcast 1 stays static; the run-time rows stay.
    nodes = [const_ints("ax", [1]), const_ints("shape", [1, 3, 1]),
             helper.make_node("Unsqueeze", ["s", "ax"], ["u"]),
             helper.make_node("Expand", ["u", "shape"], ["y"])]
    check(model(nodes, out_rank=3),
          lambda s: np.broadcast_to(s[:, None], (len(s), 3, COLS)))
    # The shape read at run time (the exporters' Shape -> Expand).
    nodes = [const_ints("ax", [1]), const_ints("sl0", [0]), const_ints("sl1", [1]),
             helper.make_node("ReduceMax", ["s"], ["m"], axes=[1], keepdims=1),
             helper.make_node("Shape", ["s"], ["target"]),
             helper.make_node("Expand", ["m", "target"], ["y"])]
    check(model(nodes), lambda s: np.broadcast_to(s.max(1, keepdims=True), s.shape))


@pytest.mark.parametrize("reduction", ["none", "add", "max"])
def test_scatter_elements_of_run_time_rows(reduction):
    """index_add_/scatter_ as exporters write them: the updates and indices
    have the run-time rows, the data does not."""
    idx = np.array([[5, 0, -1, 2], [1, 1, 0, 3], [5, 4, 3, 2],
                    [0, 0, 0, 0], [2, -6, 4, 1], [3, 3, 3, 3]], np.int64)
    nodes = [helper.make_node("Slice", ["i", "zero", "k1", "axis0"], ["si"]),
             helper.make_node("Constant", [], ["data"], value=helper.make_tensor(
                 "data", TP.FLOAT, [6, COLS], np.linspace(-1, 1, 6 * COLS))),
             helper.make_node("ScatterElements", ["data", "si", "s"], ["y"], axis=0,
                              **({} if reduction == "none" else {"reduction": reduction}))]
    m = model(nodes, [vi("i", TP.INT64, [6, COLS])])
    m.opset_import[0].version = 18

    def ref(s, i):
        out = np.linspace(-1, 1, 6 * COLS).astype(np.float32).reshape(6, COLS)
        for r in range(len(s)):
            for c in range(COLS):
                k = i[r, c] % 6
                out[k, c] = {"none": s[r, c], "add": out[k, c] + s[r, c],
                             "max": max(out[k, c], s[r, c])}[reduction]
        return out
    check(m, lambda s, i: ref(s, i), (idx,))
    f = tessel.compile(m.SerializeToString())
    bad = idx.copy()
    bad[1, 2] = 6
    x = np.zeros((6, COLS), np.float32)
    f(x, np.array(1, np.int64), bad)  # the bad row is not read
    with pytest.raises(tessel.InvocationError, match="out of range"):
        f(x, np.array(2, np.int64), bad)


W34 = (np.arange(COLS * 3, dtype=np.float32).reshape(COLS, 3) - 5) / 4


@pytest.mark.parametrize("case", ["shared B", "equal batch", "run-time inner dim"])
def test_batched_matmul_of_run_time_rows(case):
    """Rank-3 MatMuls with the run-time rows in the batch, the rows or the
    inner dimension: a linear layer, per-row products, a Gram matrix."""
    w = helper.make_node("Constant", [], ["w"], value=helper.make_tensor(
        "w", TP.FLOAT, [COLS, 3], W34.ravel()))
    if case == "shared B":
        nodes = [const_ints("ax", [0]), w,
                 helper.make_node("Unsqueeze", ["s", "ax"], ["a"]),
                 helper.make_node("MatMul", ["a", "w"], ["y"])]
        check(model(nodes, out_rank=3), lambda s: s[None] @ W34)
    elif case == "equal batch":
        nodes = [const_ints("ax", [1]),
                 helper.make_node("Unsqueeze", ["s", "ax"], ["a"]),
                 helper.make_node("Transpose", ["a"], ["b"], perm=[0, 2, 1]),
                 helper.make_node("MatMul", ["a", "b"], ["y"])]
        check(model(nodes, out_rank=3), lambda s: (s * s).sum(1)[:, None, None])
    else:
        nodes = [const_ints("ax", [0]),
                 helper.make_node("Unsqueeze", ["s", "ax"], ["b"]),
                 helper.make_node("Transpose", ["b"], ["a"], perm=[0, 2, 1]),
                 helper.make_node("MatMul", ["a", "b"], ["y"])]
        check(model(nodes, out_rank=3), lambda s: (s.T @ s)[None], rtol=1e-4)


@pytest.mark.parametrize("starts,ends,axes,steps,ref", [
    ([1], [3], [1], [1], lambda s: s[:, 1:3]),
    ([0], [4], [1], [2], lambda s: s[:, 0:4:2]),
    ([1, -3], [100, 4], [0, 1], [1, 1], lambda s: s[1:, 1:4]),
])
def test_slice_of_run_time_rows(starts, ends, axes, steps, ref):
    """Constant slices of the static axis keep its static size (one
    extract_slice); a slice of the run-time axis is sized at run time."""
    nodes = [const_ints("st", starts), const_ints("en", ends),
             const_ints("ax", axes), const_ints("sp", steps),
             node("Slice", ("s", "st", "en", "ax", "sp"))]
    check(model(nodes), ref)


@pytest.mark.parametrize("divisor,ref", [
    ([], lambda s: s / np.float32(2.5)),                # a scalar
    ([1, COLS], lambda s: s / (np.arange(COLS, dtype=np.float32) + 1.5)),
])
def test_div_broadcasting_into_run_time_rows(divisor, ref):
    """Exact division (arith.divf), the constant broadcast over the run-time
    rows (attention's scaling by sqrt(d))."""
    values = [2.5] if not divisor else list(np.arange(COLS, dtype=np.float32) + 1.5)
    c = helper.make_node("Constant", [], ["d"], value=helper.make_tensor(
        "d", TP.FLOAT, divisor, values))
    check(model([c, node("Div", ("s", "d"))]), ref)
    # The other way round: the run-time rows divide a constant.
    check(model([c, node("Div", ("d", "s"))]), lambda s: 1 / ref(s), rtol=1e-5)


@pytest.mark.parametrize("nodes,message", [
    ([node("Squeeze")], "Squeeze without axes of an input whose sizes are known only at run time"),
    ([const_ints("st", [3]), const_ints("en", [0]), const_ints("ax", [1]),
      const_ints("sp", [-1]), node("Slice", ("s", "st", "en", "ax", "sp"))],
     "a backward or empty Slice of an input whose sizes are known only at run time"),
    ([const_ints("ax", [0]),
      helper.make_node("Constant", [], ["b"], value=helper.make_tensor(
          "b", TP.FLOAT, [2, COLS, 3], [0.5] * (2 * COLS * 3))),
      helper.make_node("Unsqueeze", ["s", "ax"], ["a"]),
      node("MatMul", ("a", "b"))],
     "a MatMul broadcasting batch dims with sizes known only at run time"),
    ([helper.make_node("Constant", [], ["v"], value=helper.make_tensor(
        "v", TP.FLOAT, [COLS], [1.0] * COLS)), node("MatMul", ("s", "v"))],
     "MatMul of a 1-D operand with sizes known only at run time"),
])
def test_run_time_sized_forms_not_taken_yet_are_rejected(nodes, message):
    m = model(nodes, out_rank=3)
    with pytest.raises(tessel.CompileError, match=message):
        tessel.compile(m.SerializeToString())
