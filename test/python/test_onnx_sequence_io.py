"""ONNX sequences and optionals as graph inputs and outputs (artifact ABI
v7: a sequence crosses as its parts sizes [count, rank] (rows padded in
front with -1 where the elements differ in rank) and data, an
optional as a present flag before its value; lib/Importers/ONNX/
PackedSequence.cpp). One artifact runs on sequences of any length, against
Python lists; the bad inputs fail with a message, never a wrong answer."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import tessel

F = TensorProto.FLOAT
I64 = TensorProto.INT64


def seq_type(elem=F, shape=None):
    return helper.make_sequence_type_proto(helper.make_tensor_type_proto(elem, shape))


def opt_type(inner):
    return helper.make_optional_type_proto(inner)


def model(nodes, inputs, outputs, opset=17):
    def info(v):
        name, t = v[0], v[1]
        if isinstance(t, int):
            return helper.make_tensor_value_info(name, t, v[2])
        return helper.make_value_info(name, t)
    g = helper.make_graph(nodes, "g", [info(v) for v in inputs],
                          [info(v) for v in outputs])
    return tessel.compile(helper.make_model(
        g, opset_imports=[helper.make_opsetid("", opset)]).SerializeToString())


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def assert_list_equal(got, want):
    assert isinstance(got, list) and len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


def test_signature_shows_the_parts():
    f = model([helper.make_node("Identity", ["s"], ["t"])],
              [("s", seq_type(F, ["N", 3]))], [("t", seq_type(F, ["N", 3]))])
    text = str(f.signature)
    assert "s.sizes: s_countx2xi64" in text and "s.data: s_totalxf32" in text
    assert [spec.part for spec in f.signature.inputs] == ["sizes:s", "data:s"]
    assert "t.sizes: ?x?xi64" in text


@pytest.mark.parametrize("count", [0, 1, 4])
def test_insert_at_every_position(count):
    f = model([helper.make_node("SequenceInsert", ["s", "x", "p"], ["t"])],
              [("s", seq_type(F, [None, None])), ("x", F, [2, 3]), ("p", I64, [])],
              [("t", seq_type(F))])
    elems = [rand(i + 1, 3, seed=i) for i in range(count)]
    x = rand(2, 3, seed=9)
    for p in range(-count, count + 1):
        want = list(elems)
        want.insert(p if p >= 0 else p + count, x)
        assert_list_equal(f(elems, x, np.int64(p)), want)
    for p in (count + 1, -count - 1):
        with pytest.raises(tessel.InvocationError, match="position outside a sequence"):
            f(elems, x, np.int64(p))


def test_at_and_length_of_an_input_sequence():
    f = model([helper.make_node("SequenceAt", ["s", "p"], ["y"]),
               helper.make_node("SequenceLength", ["s"], ["n"])],
              [("s", seq_type(F, [None])), ("p", I64, [])],
              [("y", F, [None]), ("n", I64, [])])
    elems = [rand(k, seed=k) for k in (3, 0, 5)]
    for p in range(-3, 3):
        y, n = f(elems, np.int64(p))
        np.testing.assert_array_equal(y, elems[p])
        assert int(n) == 3
    with pytest.raises(tessel.InvocationError, match="position outside a sequence"):
        f([], np.int64(0))


def test_sequence_map_over_packed_sequences():
    body = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["c"]),
         helper.make_node("Shape", ["a"], ["sh"])], "body",
        [helper.make_tensor_value_info("a", F, ["N"]),
         helper.make_tensor_value_info("b", F, ["N"])],
        [helper.make_tensor_value_info("c", F, ["N"]),
         helper.make_tensor_value_info("sh", I64, [1])])
    f = model([helper.make_node("SequenceMap", ["x", "y"], ["z", "shapes"], body=body)],
              [("x", seq_type(F, ["N"])), ("y", seq_type(F, ["N"]))],
              [("z", seq_type(F, ["N"])), ("shapes", seq_type(I64, [1]))])
    xs = [rand(n, seed=n) for n in (4, 1, 7)]
    ys = [rand(n, seed=10 + n) for n in (4, 1, 7)]
    z, shapes = f(xs, ys)
    assert_list_equal(z, [a + b for a, b in zip(xs, ys)])
    assert_list_equal(shapes, [np.array([a.size], np.int64) for a in xs])
    assert f([], []) == ([], [])
    # Sequences of two lengths: the call fails.
    with pytest.raises(tessel.InvocationError, match="returned -3"):
        f(xs, ys[:2])


def test_optional_tensor_input():
    f = model([helper.make_node("OptionalHasElement", ["o"], ["has"]),
               helper.make_node("OptionalGetElement", ["o"], ["v"])],
              [("o", opt_type(helper.make_tensor_type_proto(F, [4])))],
              [("has", TensorProto.BOOL, []), ("v", F, [4])])
    x = rand(4)
    has, v = f(x)
    assert bool(has)
    np.testing.assert_array_equal(v, x)
    with pytest.raises(tessel.InvocationError, match="empty optional"):
        f(None)
    g = model([helper.make_node("OptionalHasElement", ["o"], ["has"])],
              [("o", opt_type(helper.make_tensor_type_proto(F, [4])))],
              [("has", TensorProto.BOOL, [])])
    assert not bool(g(None)) and bool(g(x))


def test_optional_output_and_if_of_sequences():
    # c ? Optional(empty) : Optional([x]); and c ? [x, x] : [x].
    t = seq_type(F, [3])
    then_opt = helper.make_graph(
        [helper.make_node("Optional", [], ["o"], type=t)], "then", [],
        [helper.make_value_info("o", opt_type(t))])
    else_opt = helper.make_graph(
        [helper.make_node("SequenceConstruct", ["x"], ["s"]),
         helper.make_node("Optional", ["s"], ["o"])], "else", [],
        [helper.make_value_info("o", opt_type(t))])
    then_seq = helper.make_graph(
        [helper.make_node("SequenceConstruct", ["x", "x"], ["s"])], "then2", [],
        [helper.make_value_info("s", t)])
    else_seq = helper.make_graph(
        [helper.make_node("SequenceConstruct", ["x"], ["s"])], "else2", [],
        [helper.make_value_info("s", t)])
    f = model([helper.make_node("If", ["c"], ["o"], then_branch=then_opt,
                                else_branch=else_opt),
               helper.make_node("If", ["c"], ["s"], then_branch=then_seq,
                                else_branch=else_seq)],
              [("c", TensorProto.BOOL, []), ("x", F, [3])],
              [("o", opt_type(t)), ("s", t)])
    x = rand(3)
    o, s = f(np.array(True), x)
    assert o is None
    assert_list_equal(s, [x, x])
    o, s = f(np.array(False), x)
    assert_list_equal(o, [x])
    assert_list_equal(s, [x])


def test_loop_builds_a_sequence():
    # for i < M: s.insert(x[:i + 1]): slices of growing length.
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("Constant", [], ["one"],
                          value=helper.make_tensor("one", I64, [1], [1])),
         helper.make_node("Constant", [], ["zero"],
                          value=helper.make_tensor("zero", I64, [1], [0])),
         helper.make_node("Unsqueeze", ["i", "zero"], ["i1"]),
         helper.make_node("Add", ["i1", "one"], ["end"]),
         helper.make_node("Slice", ["x", "zero", "end"], ["piece"]),
         helper.make_node("SequenceInsert", ["s_in", "piece"], ["s_out"])],
        "body",
        [helper.make_tensor_value_info("i", I64, []),
         helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
         helper.make_value_info("s_in", seq_type(F, [None]))],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
         helper.make_value_info("s_out", seq_type(F, [None]))])
    f = model([helper.make_node("SequenceEmpty", [], ["e"], dtype=F),
               helper.make_node("Loop", ["M", "", "e"], ["s"], body=body)],
              [("M", I64, []), ("x", F, [5])], [("s", seq_type(F))])
    x = rand(5)
    for m in (0, 1, 5):
        assert_list_equal(f(np.int64(m), x), [x[:i + 1] for i in range(m)])


def test_bad_sequence_inputs():
    f = model([helper.make_node("SequenceLength", ["s"], ["n"])],
              [("s", seq_type(F, [None, None]))], [("n", I64, [])])
    assert int(f([rand(2, 2), rand(1, 3)])) == 2
    with pytest.raises(tessel.InvocationError, match="element 1 is float64"):
        f([rand(2, 2), np.zeros((2, 2))])
    with pytest.raises(tessel.InvocationError, match="of rank 2"):
        f([rand(2)])
    with pytest.raises(tessel.InvocationError, match="give a list of arrays"):
        f(rand(2, 2))
    with pytest.raises(tessel.InvocationError, match="not an optional"):
        f(None)
    # The parts given directly (as a C caller would): sizes whose element
    # counts do not add up to the data fail the call (-3), reads in bounds.
    native = f._function
    for sizes, data in (([[2, 2]], np.zeros(3, np.float32)),
                        ([[-1, 2]], np.zeros(0, np.float32)),
                        ([[2**40, 2**40]], np.zeros(4, np.float32)),
                        # Sizes whose product wraps a 64-bit count to 0.
                        ([[2**32, 2**32]], np.zeros(0, np.float32))):
        with pytest.raises(tessel.InvocationError, match="returned -3"):
            native.invoke([np.array(sizes, np.int64), data], 1)


def test_sequences_of_mixed_ranks():
    # Elements of several ranks: their sizes rows padded in front with -1
    # (ONNX's test_loop16_seq_none builds one), in and out of the artifact.
    f = model([helper.make_node("SequenceInsert", ["s", "x"], ["t"]),
               helper.make_node("SequenceLength", ["t"], ["n"])],
              [("s", seq_type(F)), ("x", F, [2])], [("t", seq_type(F)), ("n", I64, [])])
    x, scalar, cube = rand(2), np.full((), 3, np.float32), rand(2, 1, 3, seed=1)
    t, n = f([], x)
    assert_list_equal(t, [x])
    assert_list_equal(f([rand(3)], x)[0], [rand(3), x])
    t, n = f([scalar], x)
    assert_list_equal(t, [scalar, x]) and int(n) == 2
    t, n = f([cube, scalar], x)
    assert_list_equal(t, [cube, scalar, x]) and int(n) == 3
    # The parts as a C caller passes them: -1 pads only the front of a row.
    native = f._function
    x2 = np.zeros(2, np.float32)
    for sizes, data, ok in (([[-1, 2], [1, 2]], np.zeros(4, np.float32), True),
                            ([[-1, -1]], np.zeros(1, np.float32), True),
                            ([[2, -1]], np.zeros(2, np.float32), False),
                            ([[-2, 1]], np.zeros(1, np.float32), False)):
        args = [np.array(sizes, np.int64), data, x2]
        if ok:
            native.invoke(args, 3)
        else:
            with pytest.raises(tessel.InvocationError, match="returned -3"):
                native.invoke(args, 3)


@pytest.mark.parametrize("split", ["lengths", "chunk", "ones", "ones_squeezed"])
def test_split_of_run_time_sizes(split):
    # SplitToSequence of an input whose sizes (and split) are data: a packed
    # sequence, against numpy's split.
    ins = [("x", F, ["N", 3])]
    node_ins, attrs = ["x"], {}
    if split == "lengths":
        ins.append(("k", I64, [3]))
        node_ins.append("k")
    elif split == "chunk":
        ins.append(("k", I64, []))
        node_ins.append("k")
    elif split == "ones_squeezed":
        attrs["keepdims"] = 0
    f = model([helper.make_node("SplitToSequence", node_ins, ["s"], axis=0, **attrs)],
              ins, [("s", seq_type(F))])
    for n in (0, 1, 5):
        x = rand(n, 3, seed=n)
        if split == "lengths":
            k = np.array([n // 2, 0, n - n // 2], np.int64)
            want = np.split(x, np.cumsum(k)[:-1])
            assert_list_equal(f(x, k), want)
            with pytest.raises(tessel.InvocationError, match="returned -3"):
                f(x, np.array([n + 1, -1, 0], np.int64))
            with pytest.raises(tessel.InvocationError, match="returned -3"):
                f(x, np.array([n, 1, 0], np.int64))
        elif split == "chunk":
            want = [x[i:i + 2] for i in range(0, n, 2)]
            assert_list_equal(f(x, np.int64(2)), want)
            with pytest.raises(tessel.InvocationError, match="returned -3"):
                f(x, np.int64(0))
        else:
            want = [x[i:i + 1] for i in range(n)]
            if split == "ones_squeezed":
                want = [w[0] for w in want]
            assert_list_equal(f(x), want)


def rank_changing_loop(copies):
    """A Loop whose body inserts x1 into the carried sequence s (declared
    of vectors) and carries on SequenceConstruct of `copies` rank-8 xr: from
    the second iteration on, the sequence it inserts into holds rank-8
    tensors. Its last inserted-into sequence is t_fin."""
    seq1 = seq_type(F, [None])
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("SequenceInsert", ["s_in", "x1", "zero"], ["a"]),
         helper.make_node("SequenceConstruct", ["xr"] * copies, ["s_out"])],
        "body",
        [helper.make_tensor_value_info("it", I64, []),
         helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
         helper.make_value_info("s_in", seq1), helper.make_value_info("t_in", seq1)],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
         helper.make_value_info("s_out", seq_type(F)), helper.make_value_info("a", seq1)],
        initializer=[helper.make_tensor("zero", I64, [], [0])])
    return helper.make_node("Loop", ["M", "", "s", "s"], ["s_fin", "t_fin"], body=body)


def test_loop_that_changes_a_carried_sequences_rank():
    # The second iteration inserts a vector into a sequence of rank-8
    # tensors: its row is padded to the rank-8 rows' width, not written
    # into them.
    f = model([rank_changing_loop(20)],
              [("M", I64, []), ("s", seq_type(F, [None])), ("x1", F, [1]),
               ("xr", F, [1] * 8)],
              [("t_fin", seq_type(F))])
    x1, xr = np.full(1, 7, np.float32), np.full([1] * 8, 5, np.float32)
    assert_list_equal(f(np.int64(1), [np.ones(1, np.float32)], x1, xr),
                      [x1, np.ones(1, np.float32)])
    assert_list_equal(f(np.int64(2), [np.ones(1, np.float32)], x1, xr), [x1] + [xr] * 20)


def test_reading_elements_of_a_sequence_whose_rank_changed():
    # As above, then SequenceAt at the declared rank 1: the vector (a row
    # padded with -1) reads back; a rank-8 element fails the call (-3, a
    # shape mismatch) instead of being read as a vector; a position out of
    # range fails it with -4.
    f = model([rank_changing_loop(3), helper.make_node("SequenceAt", ["t_fin", "i"], ["y"])],
              [("M", I64, []), ("s", seq_type(F, [None])), ("x1", F, [2]),
               ("xr", F, [1] * 8), ("i", I64, [])],
              [("y", F, [None])])
    x1, xr, one = rand(2), np.full([1] * 8, 5, np.float32), [np.ones(1, np.float32)]
    np.testing.assert_array_equal(f(np.int64(2), one, x1, xr, np.int64(0)), x1)
    with pytest.raises(tessel.InvocationError, match="returned -3"):
        f(np.int64(2), one, x1, xr, np.int64(1))
    with pytest.raises(tessel.InvocationError, match="returned -4"):
        f(np.int64(2), one, x1, xr, np.int64(4))
    np.testing.assert_array_equal(f(np.int64(1), one, x1, xr, np.int64(1)), one[0])


def test_optionals_that_cannot_leave_a_loop_body():
    opt = helper.make_optional_type_proto(helper.make_tensor_type_proto(F, [2]))
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("Identity", ["v_in"], ["v_out"]),
         helper.make_node("Optional", ["v_in"], ["o"])], "body",
        [helper.make_tensor_value_info("it", I64, []),
         helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_in", F, [2])],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", F, [2]), helper.make_value_info("o", opt)])
    with pytest.raises(tessel.CompileError,
                       match="body output 'o' is an optional"):
        model([helper.make_node("Loop", ["M", "", "x"], ["v", "ys"], body=body)],
              [("M", I64, []), ("x", F, [2])], [("v", F, [2])])


def test_names_and_shared_dimensions():
    # A sequence named like a TF tensor ("s:0"), and an empty optional
    # whose value shares a dimension name with another input.
    f = model([helper.make_node("SequenceLength", ["s:0"], ["n"])],
              [("s:0", seq_type(F, [None]))], [("n", I64, [])])
    assert int(f([rand(2), rand(3)])) == 2
    opt = helper.make_optional_type_proto(helper.make_tensor_type_proto(F, ["N"]))
    g = model([helper.make_node("OptionalHasElement", ["o"], ["h"]),
               helper.make_node("Identity", ["x"], ["y"])],
              [("o", opt), ("x", F, ["N"])],
              [("h", TensorProto.BOOL, []), ("y", F, ["N"])], opset=18)
    x = rand(3)
    h, y = g(None, x)
    assert not bool(h)
    np.testing.assert_array_equal(y, x)
    h, y = g(x, x)
    assert bool(h)
