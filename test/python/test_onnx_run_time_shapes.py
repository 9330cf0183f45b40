"""ONNX ops whose output sizes follow from the data, with no --bind-input
(lib/Importers/ONNX/Ops/RunTimeShapes.cpp, artifact ABI v6): one artifact
runs with many shape operands, each result against numpy; a shape operand
ONNX makes an error fails the call (InvocationError); an op that does not
take run-time sizes yet is a CompileError naming the node."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import tessel

F, I64, I32, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32, TensorProto.BOOL
RNG = np.random.default_rng(7)


def compile_graph(nodes, inputs, outputs, opset=17):
    g = helper.make_graph(nodes, "rts",
                          [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                          [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    return tessel.compile(m.SerializeToString())


def fails_at_run_time(f, *args):
    with pytest.raises(tessel.InvocationError, match="returned -3"):
        f(*args)


def test_reshape_with_a_shape_input():
    f = compile_graph([helper.make_node("Reshape", ["x", "s"], ["y"])],
                      [("x", F, [2, 3, 4]), ("s", I64, [3])], [("y", F, ["a", "b", "c"])])
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    for s in ([4, 2, 3], [0, -1, 2], [-1, 1, 1], [24, 1, 1], [2, 0, 4], [1, 1, -1]):
        want = x.reshape([d if d else x.shape[i] for i, d in enumerate(s)])
        np.testing.assert_array_equal(f(x, np.array(s, np.int64)), want)
    for bad in ([5, 5, 1], [-1, -1, 24], [7, -1, 1], [-2, 3, -4]):
        fails_at_run_time(f, x, np.array(bad, np.int64))


def test_reshape_allowzero_keeps_zeros():
    f = compile_graph([helper.make_node("Reshape", ["x", "s"], ["y"], allowzero=1)],
                      [("x", F, [0, 3]), ("s", I64, [2])], [("y", F, ["a", "b"])], opset=14)
    x = np.zeros((0, 3), np.float32)
    assert f(x, np.array([3, 0], np.int64)).shape == (3, 0)
    fails_at_run_time(f, x, np.array([0, -1], np.int64))  # 0 with -1


@pytest.mark.parametrize("axes", [[0], [2], [-1, 0], [1, 3]])
def test_unsqueeze_with_an_axes_input(axes):
    f = compile_graph([helper.make_node("Unsqueeze", ["x", "a"], ["y"])],
                      [("x", F, [3, 4]), ("a", I64, [len(axes)])],
                      [("y", F, ["d%d" % i for i in range(2 + len(axes))])])
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_array_equal(f(x, np.array(axes, np.int64)), np.expand_dims(x, axes))


def test_unsqueeze_and_squeeze_bad_axes_fail_the_call():
    f = compile_graph([helper.make_node("Unsqueeze", ["x", "a"], ["y"])],
                      [("x", F, [3, 4]), ("a", I64, [2])], [("y", F, ["a", "b", "c", "d"])])
    x = np.ones((3, 4), np.float32)
    fails_at_run_time(f, x, np.array([1, 1], np.int64))   # repeated
    fails_at_run_time(f, x, np.array([0, 4], np.int64))   # out of range
    g = compile_graph([helper.make_node("Squeeze", ["x", "a"], ["y"])],
                      [("x", F, [1, 3, 1, 4]), ("a", I64, [1])], [("y", F, ["a", "b", "c"])])
    x = RNG.standard_normal((1, 3, 1, 4)).astype(np.float32)
    for a in (0, 2, -2, -4):
        np.testing.assert_array_equal(g(x, np.array([a], np.int64)), np.squeeze(x, a))
    fails_at_run_time(g, x, np.array([1], np.int64))      # size 3, not 1


def test_expand_tile_constant_of_shape():
    f = compile_graph([helper.make_node("Expand", ["x", "s"], ["y"])],
                      [("x", F, [3, 1]), ("s", I64, [3])], [("y", F, ["a", "b", "c"])])
    x = np.arange(3, dtype=np.float32).reshape(3, 1)
    for s in ([2, 1, 6], [1, 3, 1], [2, 3, 0], [1, 1, 5]):
        np.testing.assert_array_equal(f(x, np.array(s, np.int64)), x * np.ones(s, np.float32))
    fails_at_run_time(f, x, np.array([1, 2, 2], np.int64))  # 3 against 2
    t = compile_graph([helper.make_node("Tile", ["x", "r"], ["y"])],
                      [("x", I32, [2, 3]), ("r", I64, [2])], [("y", I32, ["a", "b"])])
    xi = np.arange(6, dtype=np.int32).reshape(2, 3)
    for r in ([1, 2], [3, 1], [0, 2], [2, 2]):
        np.testing.assert_array_equal(t(xi, np.array(r, np.int64)), np.tile(xi, r))
    fails_at_run_time(t, xi, np.array([-1, 1], np.int64))
    # 3 x (2^64 + 2) / 3 wraps to 2 in 64 bits: an error, not a wrong size.
    fails_at_run_time(t, xi, np.array([1, (2**64 + 2) // 3], np.int64))
    c = compile_graph([helper.make_node("ConstantOfShape", ["s"], ["y"],
                                        value=helper.make_tensor("v", I32, [1], [7]))],
                      [("s", I64, [2])], [("y", I32, ["a", "b"])])
    np.testing.assert_array_equal(c(np.array([2, 3], np.int64)), np.full((2, 3), 7, np.int32))
    assert c(np.array([0, 3], np.int64)).shape == (0, 3)
    fails_at_run_time(c, np.array([2, -3], np.int64))
    # 2^40 elements: an error, not an allocation.
    fails_at_run_time(c, np.array([1 << 20, 1 << 20], np.int64))


def test_range_then_elementwise_ops():
    # A Hann window as the ONNX function spells it: the run-time size flows
    # through Mul, Cos and Sub, which broadcast it.
    nodes = [helper.make_node("Range", ["start", "n", "one"], ["i"]),
             helper.make_node("Mul", ["i", "w"], ["a"]),
             helper.make_node("Cos", ["a"], ["c"]),
             helper.make_node("Sub", ["half", "c"], ["y"])]
    f = compile_graph(nodes, [("start", F, []), ("n", F, []), ("one", F, []), ("w", F, []),
                              ("half", F, [])], [("y", F, ["n"])])
    for n in (1.0, 4.0, 10.0):
        w = np.float32(2 * np.pi / n)
        got = f(np.float32(0), np.float32(n), np.float32(1), w, np.float32(0.5))
        want = np.float32(0.5) - np.cos(np.arange(0, n, 1, dtype=np.float32) * w)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    r = compile_graph([helper.make_node("Range", ["a", "b", "c"], ["y"])],
                      [("a", I32, []), ("b", I32, []), ("c", I32, [])], [("y", I32, ["n"])])
    for a, b, c in ((10, 3, -3), (0, 5, 1), (5, 0, 1), (-4, 9, 4)):
        np.testing.assert_array_equal(r(np.int32(a), np.int32(b), np.int32(c)),
                                      np.arange(a, b, c, dtype=np.int32))
    fails_at_run_time(r, np.int32(0), np.int32(5), np.int32(0))


def test_nonzero_and_compress():
    f = compile_graph([helper.make_node("NonZero", ["x"], ["y"])], [("x", F, [3, 4])],
                      [("y", I64, [2, "n"])])
    # The signature says which sizes follow from the data.
    assert str(f.signature) == "main(x: 3x4xf32) -> (y: 2x?xi64)"
    for x in (RNG.integers(0, 2, (3, 4)).astype(np.float32), np.zeros((3, 4), np.float32),
              np.ones((3, 4), np.float32), np.full((3, 4), np.nan, np.float32)):
        np.testing.assert_array_equal(f(x), np.array(np.nonzero(x)))
    c = compile_graph([helper.make_node("Compress", ["x", "c"], ["y"], axis=1)],
                      [("x", F, [2, 3]), ("c", B, [3])], [("y", F, [2, "n"])])
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    for cond in ([1, 0, 1], [0, 0, 0], [1, 1, 1], [0, 1, 0]):
        cond = np.array(cond, bool)
        np.testing.assert_array_equal(c(x, cond), np.compress(cond, x, axis=1))
    flat = compile_graph([helper.make_node("Compress", ["x", "c"], ["y"])],
                         [("x", F, [2, 3]), ("c", B, [8])], [("y", F, ["n"])])
    cond = np.array([0, 1, 1, 0, 0, 1, 0, 0], bool)
    np.testing.assert_array_equal(flat(x, cond), np.compress(cond[:6], x))
    fails_at_run_time(flat, x, np.array([0] * 7 + [1], bool))  # past the end


def test_same_artifact_many_sizes_and_threads():
    f = compile_graph([helper.make_node("NonZero", ["x"], ["y"])], [("x", I32, [64])],
                      [("y", I64, [1, "n"])])
    for _ in range(20):
        x = RNG.integers(0, 3, 64).astype(np.int32)
        np.testing.assert_array_equal(f(x), np.array(np.nonzero(x)))


def test_nonzero_indices_transposed():
    # The detection-model pattern: NonZero's [rank, n] indices as [n, rank]
    # rows (ops that do not take run-time sizes yet are rejected by name:
    # test_onnx_run_time_sized_operands.py).
    nodes = [helper.make_node("NonZero", ["x"], ["i"]),
             helper.make_node("Transpose", ["i"], ["y"], name="t0")]
    f = compile_graph(nodes, [("x", F, [3, 4])], [("y", I64, ["n", 2])])
    for seed in (0, 1):
        x = (np.random.default_rng(seed).random((3, 4)) > 0.5).astype(np.float32)
        np.testing.assert_array_equal(f(x), np.transpose(np.nonzero(x)))


@pytest.mark.parametrize("op,ref", [
    ("HannWindow", lambda n: 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)),
    ("HammingWindow", lambda n: 25 / 46 - 21 / 46 * np.cos(2 * np.pi * np.arange(n) / n)),
    ("BlackmanWindow", lambda n: 0.42 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)
     + 0.08 * np.cos(4 * np.pi * np.arange(n) / n))])
def test_windows_of_a_run_time_size(op, ref):
    f = compile_graph([helper.make_node(op, ["n"], ["y"])], [("n", I64, [])], [("y", F, ["n"])])
    for n in (1, 2, 10, 33):
        np.testing.assert_allclose(f(np.int64(n)), ref(n), rtol=1e-5, atol=1e-6)
    fails_at_run_time(f, np.int64(0))
    s = compile_graph([helper.make_node(op, ["n"], ["y"], periodic=0)], [("n", I64, [])],
                      [("y", F, ["n"])])
    # Symmetric: the periodic window one longer, without its last point.
    np.testing.assert_allclose(s(np.int64(9)), ref(8).tolist() + [ref(8)[0]], rtol=1e-5, atol=1e-6)


def test_one_hot_of_a_run_time_depth():
    f = compile_graph([helper.make_node("OneHot", ["i", "d", "v"], ["y"], axis=1)],
                      [("i", I64, [2, 3]), ("d", F, []), ("v", F, [2])], [("y", F, [2, "d", 3])])
    idx = np.array([[0, 2, -1], [5, 1, -4]], np.int64)
    for depth in (1, 3, 6):
        want = np.zeros((2, depth, 3), np.float32) - 1
        for a in range(2):
            for c in range(3):
                k = idx[a, c] + depth if idx[a, c] < 0 else idx[a, c]
                if 0 <= k < depth:
                    want[a, k, c] = 2
        got = f(idx, np.float32(depth + 0.7), np.array([-1, 2], np.float32))  # truncated
        np.testing.assert_array_equal(got, want)
    fails_at_run_time(f, idx, np.float32(0), np.array([0, 1], np.float32))


@pytest.mark.parametrize("starts,ends,axes,steps", [
    ([1, 0], [3, 10], [0, 1], [1, 1]),
    ([-1], [-10**18], [1], [-2]),          # backward, clamped
    ([0, 20], [2, -2], [-1, 0], [2, 1]),    # start past the end: empty
    ([2, 1], [0, 9], [0, 1], [-1, 3]),
])
def test_slice_with_run_time_operands(starts, ends, axes, steps):
    k = len(starts)
    f = compile_graph([helper.make_node("Slice", ["x", "s", "e", "a", "t"], ["y"])],
                      [("x", F, [4, 10]), ("s", I64, [k]), ("e", I64, [k]), ("a", I64, [k]),
                       ("t", I64, [k])], [("y", F, ["a", "b"])])
    x = RNG.standard_normal((4, 10)).astype(np.float32)
    want = x
    index = [slice(None)] * 2
    for s, e, a, t in zip(starts, ends, axes, steps):
        index[a] = slice(s, e, t)
    want = x[tuple(index)]
    args = [np.array(v, np.int64) for v in (starts, ends, axes, steps)]
    np.testing.assert_array_equal(f(x, *args), want)


def test_slice_bad_operands_fail_the_call():
    f = compile_graph([helper.make_node("Slice", ["x", "s", "e", "a", "t"], ["y"])],
                      [("x", F, [4]), ("s", I64, [1]), ("e", I64, [1]), ("a", I64, [1]),
                       ("t", I64, [1])], [("y", F, ["a"])])
    x = np.arange(4, dtype=np.float32)
    one = np.array([1], np.int64)
    fails_at_run_time(f, x, one, one, np.array([0], np.int64), np.array([0], np.int64))  # step 0
    fails_at_run_time(f, x, one, one, np.array([1], np.int64), one)                      # axis 1


@pytest.mark.parametrize("elem,dtype", [(F, np.float32), (I32, np.int32)])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_reduce_sum_over_run_time_axes(elem, dtype, keepdims):
    # (ONNX 1.12 knows opset 17, where only ReduceSum takes its axes as an
    # input; the other reductions share the same code.)
    f = compile_graph([helper.make_node("ReduceSum", ["x", "a"], ["y"], keepdims=keepdims)],
                      [("x", elem, [2, 3, 4]), ("a", I64, [2])],
                      [("y", elem, ["a", "b", "c"] if keepdims else ["a"])])
    x = (RNG.standard_normal((2, 3, 4)) * 10).astype(dtype)
    for axes in ([0, 1], [2, 0], [-1, 1], [0, 2]):
        want = np.sum(x, axis=tuple(a % 3 for a in axes), keepdims=bool(keepdims))
        np.testing.assert_allclose(f(x, np.array(axes, np.int64)), want, rtol=1e-5, atol=1e-5)
    fails_at_run_time(f, x, np.array([0, 0], np.int64))   # repeated
    fails_at_run_time(f, x, np.array([0, 3], np.int64))   # out of range


@pytest.mark.parametrize("largest", [0, 1])
def test_top_k_of_a_run_time_k(largest):
    f = compile_graph([helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1, largest=largest)],
                      [("x", F, [3, 5]), ("k", I64, [1])], [("v", F, [3, "k"]), ("i", I64, [3, "k"])])
    x = RNG.permutation(15).astype(np.float32).reshape(3, 5)
    order = np.argsort(-x if largest else x, axis=1, kind="stable")
    for k in (0, 1, 3, 5):
        v, i = f(x, np.array([k], np.int64))
        np.testing.assert_array_equal(i, order[:, :k])
        np.testing.assert_array_equal(v, np.take_along_axis(x, order[:, :k], axis=1))
    fails_at_run_time(f, x, np.array([6], np.int64))


def test_split_by_run_time_sizes():
    f = compile_graph([helper.make_node("Split", ["x", "s"], ["a", "b", "c"], axis=1)],
                      [("x", F, [2, 6]), ("s", I64, [3])],
                      [(n, F, [2, n]) for n in ("a", "b", "c")])
    x = RNG.standard_normal((2, 6)).astype(np.float32)
    for sizes in ([1, 2, 3], [0, 6, 0], [2, 2, 2]):
        got = f(x, np.array(sizes, np.int64))
        for g, w in zip(got, np.split(x, np.cumsum(sizes)[:-1], axis=1)):
            np.testing.assert_array_equal(g, w)
    fails_at_run_time(f, x, np.array([1, 2, 2], np.int64))   # sums to 5
    fails_at_run_time(f, x, np.array([-1, 4, 3], np.int64))  # negative


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
def test_pad_with_run_time_pads(mode):
    f = compile_graph([helper.make_node("Pad", ["x", "p", "v"], ["y"], mode=mode)],
                      [("x", F, [3, 4]), ("p", I64, [4]), ("v", F, [])], [("y", F, ["a", "b"])])
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    for lo0, lo1, hi0, hi1 in ((1, 2, 2, 0), (0, 0, 0, 0), (2, 3, 1, 3), (-1, 1, 0, -2)):
        got = f(x, np.array([lo0, lo1, hi0, hi1], np.int64), np.float32(7))
        crop = x[max(-lo0, 0):3 - max(-hi0, 0), max(-lo1, 0):4 - max(-hi1, 0)]
        width = [(max(lo0, 0), max(hi0, 0)), (max(lo1, 0), max(hi1, 0))]
        want = (np.pad(crop, width, mode="constant", constant_values=7) if mode == "constant"
                else np.pad(crop, width, mode=mode))
        np.testing.assert_array_equal(got, want)
    if mode == "reflect":
        fails_at_run_time(f, x, np.array([3, 0, 0, 0], np.int64), np.float32(0))
    fails_at_run_time(f, x, np.array([-4, 0, 0, 0], np.int64), np.float32(0))


def test_reverse_sequence_of_run_time_lengths():
    f = compile_graph([helper.make_node("ReverseSequence", ["x", "l"], ["y"],
                                        batch_axis=0, time_axis=1)],
                      [("x", F, [3, 5, 2]), ("l", I64, [3])], [("y", F, [3, 5, 2])])
    x = RNG.standard_normal((3, 5, 2)).astype(np.float32)
    for lens in ([5, 0, 3], [1, 2, 5]):
        want = x.copy()
        for b, n in enumerate(lens):
            want[b, :n] = x[b, :n][::-1]
        np.testing.assert_array_equal(f(x, np.array(lens, np.int64)), want)
    with pytest.raises(tessel.InvocationError, match="returned -4"):
        f(x, np.array([6, 0, 0], np.int64))


@pytest.mark.parametrize("mode,torch_mode", [("nearest", "nearest"), ("linear", "bilinear"),
                                             ("cubic", "bicubic")])
def test_resize_to_run_time_sizes_matches_torch(mode, torch_mode):
    torch = pytest.importorskip("torch")
    attrs = dict(mode=mode)
    if mode == "nearest":  # torch's legacy nearest: asymmetric, floor
        attrs.update(coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    f = compile_graph([helper.make_node("Resize", ["x", "", "", "s"], ["y"], **attrs)],
                      [("x", F, [1, 2, 5, 6]), ("s", I64, [4])],
                      [("y", F, [1, 2, "h", "w"])], opset=13)
    x = RNG.standard_normal((1, 2, 5, 6)).astype(np.float32)
    for h, w in ((10, 12), (3, 4), (7, 6), (5, 6)):
        got = f(x, np.array([1, 2, h, w], np.int64))
        kw = {} if mode == "nearest" else dict(align_corners=False)
        want = torch.nn.functional.interpolate(torch.from_numpy(x), size=(h, w),
                                               mode=torch_mode, **kw).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    fails_at_run_time(f, x, np.array([1, 2, 0, 4], np.int64))


def test_resize_by_run_time_scales_matches_constant_scales():
    # The same formulas at run time as at compile time (ONNX's test data
    # checks the compile-time ones).
    def model(scales_input):
        nodes = [helper.make_node("Resize", ["x", "", "sc"], ["y"], mode="linear",
                                  coordinate_transformation_mode="align_corners")]
        inputs = [("x", F, [1, 1, 4, 4])]
        if scales_input:
            inputs.append(("sc", F, [4]))
            return compile_graph(nodes, inputs, [("y", F, [1, 1, "h", "w"])], opset=13)
        nodes.insert(0, helper.make_node("Constant", [], ["sc"], value=helper.make_tensor(
            "v", F, [4], [1, 1, 0.6, 1.7])))
        return compile_graph(nodes, inputs, [("y", F, [1, 1, 2, 6])], opset=13)
    x = RNG.standard_normal((1, 1, 4, 4)).astype(np.float32)
    got = model(True)(x, np.array([1, 1, 0.6, 1.7], np.float32))
    np.testing.assert_allclose(got, model(False)(x), rtol=1e-6, atol=1e-6)


UNARY = {"Abs": np.abs, "Exp": np.exp, "Tanh": np.tanh, "Floor": np.floor, "Ceil": np.ceil,
         "Sin": np.sin, "Cos": np.cos, "Erf": None, "Sigmoid": lambda v: 1 / (1 + np.exp(-v)),
         "Relu": lambda v: np.maximum(v, 0), "Round": np.round, "Identity": lambda v: v,
         "Reciprocal": lambda v: 1 / v, "Sqrt": lambda v: np.sqrt(np.abs(v)) * np.where(v < 0, np.nan, 1),
         "Log": lambda v: np.log(np.abs(v)) * np.where(v < 0, np.nan, 1)}
BINARY = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Equal": np.equal,
          "Greater": np.greater, "GreaterOrEqual": np.greater_equal, "Less": np.less,
          "LessOrEqual": np.less_equal}


@pytest.mark.parametrize("op", sorted(k for k, v in UNARY.items() if v) + sorted(BINARY))
def test_elementwise_ops_take_run_time_sizes(op):
    # Range gives a value of run-time length; the op broadcasts it against
    # a constant row (binary) or maps it (unary).
    nodes = [helper.make_node("Range", ["a", "b", "c"], ["r"])]
    if op in BINARY:
        nodes.append(helper.make_node(op, ["r", "w"], ["y"]))
        inputs = [("w", F, [1])]
    else:
        nodes.append(helper.make_node(op, ["r"], ["y"]))
        inputs = []
    out = TensorProto.BOOL if op in ("Equal", "Greater", "GreaterOrEqual", "Less",
                                     "LessOrEqual") else F
    f = compile_graph(nodes, [("a", F, []), ("b", F, []), ("c", F, [])] + inputs,
                      [("y", out, ["n"])])
    for n in (0.0, 3.0, 7.0):
        r = np.arange(-1.25, n, 0.5, dtype=np.float32)
        args = [np.float32(-1.25), np.float32(n), np.float32(0.5)]
        if op in BINARY:
            w = np.array([0.75], np.float32)
            want = BINARY[op](r, w)
            got = f(*args, w)
        else:
            want = UNARY[op](r)
            got = f(*args)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("is_sorted", [0, 1])
def test_unique_against_numpy(axis, is_sorted):
    attrs = dict(sorted=is_sorted)
    if axis is not None:
        attrs["axis"] = axis
    f = compile_graph([helper.make_node("Unique", ["x"], ["y", "i", "inv", "c"], **attrs)],
                      [("x", I32, [4, 3])],
                      [("y", I32, ["u"] if axis is None else ["a", "b"]), ("i", I64, ["u"]),
                       ("inv", I64, ["n"]), ("c", I64, ["u"])], opset=11)
    for trial in range(4):
        x = RNG.integers(0, 3 if trial < 3 else 1, (4, 3)).astype(np.int32)
        x[1] = x[3]  # a repeated row
        y, first, inverse, counts = np.unique(x, axis=axis, return_index=True,
                                              return_inverse=True, return_counts=True)
        inverse = inverse.reshape(-1)
        if not is_sorted:  # order of first occurrence
            order = np.argsort(first, kind="stable")
            rank = np.empty_like(order)
            rank[order] = np.arange(len(order))
            y = np.take(y, order, axis=0 if axis is None else axis)
            first, counts, inverse = first[order], counts[order], rank[inverse]
        got = f(x)
        for g, w in zip(got, (y, first, inverse, counts)):
            np.testing.assert_array_equal(g, w)


def test_non_max_suppression_matches_torchvision():
    torchvision = pytest.importorskip("torchvision")
    import torch
    f = compile_graph([helper.make_node("NonMaxSuppression", ["b", "s", "m", "iou", "st"], ["y"])],
                      [("b", F, [2, 40, 4]), ("s", F, [2, 3, 40]), ("m", I64, [1]),
                       ("iou", F, [1]), ("st", F, [1])], [("y", I64, ["n", 3])])
    for trial in range(3):
        corner = RNG.uniform(0, 50, (2, 40, 2)).astype(np.float32)
        size = RNG.uniform(1, 30, (2, 40, 2)).astype(np.float32)
        boxes = np.concatenate([corner, corner + size], axis=2)  # y1, x1, y2, x2
        scores = RNG.permutation(2 * 3 * 40).reshape(2, 3, 40).astype(np.float32) / 240
        iou, thr, limit = 0.3 + 0.2 * trial, 0.25, [5, 40, 0][trial]
        want = []
        for b in range(2):
            for c in range(3):
                keep = np.nonzero(scores[b, c] > thr)[0]
                xyxy = torch.from_numpy(boxes[b][keep][:, [1, 0, 3, 2]])
                order = torchvision.ops.nms(xyxy, torch.from_numpy(scores[b, c][keep]), iou)
                want += [[b, c, int(keep[i])] for i in order[:limit]]
        got = f(boxes, scores, np.array([limit], np.int64), np.array([iou], np.float32),
                np.array([thr], np.float32))
        np.testing.assert_array_equal(got, np.array(want, np.int64).reshape(-1, 3))


def test_max_unpool_default_and_run_time_output_shape():
    node = helper.make_node("MaxUnpool", ["x", "i", "s"], ["y"], kernel_shape=[2, 2],
                            strides=[2, 2])
    f = compile_graph([node], [("x", F, [2, 3, 2, 2]), ("i", I64, [2, 3, 2, 2]),
                               ("s", I64, [4])], [("y", F, ["a", "b", "c", "d"])], opset=11)
    x = RNG.standard_normal((2, 3, 2, 2)).astype(np.float32)
    # Flat indices over the whole default (2, 3, 4, 4) output, distinct.
    idx = RNG.permutation(2 * 3 * 16)[:24].reshape(2, 3, 2, 2).astype(np.int64)
    unpooled = np.zeros(2 * 3 * 16, np.float32)
    unpooled[idx.reshape(-1)] = x.reshape(-1)
    unpooled = unpooled.reshape(2, 3, 4, 4)
    for shape in ([2, 3, 4, 4], [2, 3, 5, 6]):
        want = np.zeros(shape, np.float32)
        want[:, :, :4, :4] = unpooled
        np.testing.assert_array_equal(f(x, idx, np.array(shape, np.int64)), want)
    fails_at_run_time(f, x, idx, np.array([2, 3, 3, 4], np.int64))  # smaller
    bad = idx.copy()
    bad[0, 0, 0, 0] = 96
    with pytest.raises(tessel.InvocationError, match="returned -4"):
        f(x, bad, np.array([2, 3, 4, 4], np.int64))


def test_max_unpool_bad_attributes_are_errors():
    def unpool(**attrs):
        node = helper.make_node("MaxUnpool", ["x", "i"], ["y"], **attrs)
        return compile_graph([node], [("x", F, [1, 1, 2, 2]), ("i", I64, [1, 1, 2, 2])],
                             [("y", F, [1, 1, "h", "w"])], opset=11)
    with pytest.raises(tessel.CompileError, match="must lie in"):
        unpool(kernel_shape=[2, 2], strides=[1 << 62, 2])
    with pytest.raises(tessel.CompileError, match="must lie in"):
        unpool(kernel_shape=[0, 2])
