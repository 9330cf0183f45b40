"""ONNX sequence ops inside a graph (lib/Importers/ONNX/Sequences.cpp):
lists of tensors followed at compile time, positions that are run-time
inputs selecting among tensors of one shape, against Python lists; and the
bad inputs, each a CompileError (or, for a run-time position out of range,
an InvocationError) naming what is wrong."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import tessel

F = TensorProto.FLOAT
I64 = TensorProto.INT64


def model(nodes, inputs, outputs, opset=17):
    g = helper.make_graph(nodes, "seq",
                          [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                          [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def compile_model(m):
    return tessel.compile(m.SerializeToString())


def test_insert_erase_at_with_runtime_positions():
    # seq = [a, b, c]; insert d at p; erase at q; read at r: every p, q, r
    # (negative ones too) from one artifact, against Python lists.
    nodes = [helper.make_node("SequenceConstruct", ["a", "b", "c"], ["s0"]),
             helper.make_node("SequenceInsert", ["s0", "d", "p"], ["s1"]),
             helper.make_node("SequenceErase", ["s1", "q"], ["s2"]),
             helper.make_node("SequenceAt", ["s2", "r"], ["y"]),
             helper.make_node("SequenceLength", ["s2"], ["n"])]
    ins = [(n, F, [2, 3]) for n in "abcd"] + [(n, I64, []) for n in "pqr"]
    f = compile_model(model(nodes, ins, [("y", F, [2, 3]), ("n", I64, [])]))
    rng = np.random.default_rng(0)
    ts = [rng.standard_normal((2, 3)).astype(np.float32) for _ in range(4)]
    for p in range(-3, 4):
        for q in range(-4, 4):
            for r in range(-3, 3):
                ref = ts[:3]
                ref.insert(p if p >= 0 else p + 3, ts[3])
                del ref[q]
                y, n = f(*ts, np.int64(p), np.int64(q), np.int64(r))
                np.testing.assert_array_equal(y, ref[r])
                assert int(n) == 3


def test_runtime_position_out_of_range_fails_the_call():
    nodes = [helper.make_node("SequenceConstruct", ["a", "b"], ["s"]),
             helper.make_node("SequenceAt", ["s", "p"], ["y"])]
    f = compile_model(model(nodes, [("a", F, [2]), ("b", F, [2]), ("p", I64, [])],
                            [("y", F, [2])]))
    a, b = np.ones(2, np.float32), np.zeros(2, np.float32)
    np.testing.assert_array_equal(f(a, b, np.int64(-2)), a)
    for p in (2, -3, 2**32 + 1):
        with pytest.raises(tessel.InvocationError, match="out of range"):
            f(a, b, np.int64(p))


@pytest.mark.parametrize("split,axis,keepdims", [
    (None, 1, 1), (None, 1, 0), (None, -1, 0), (np.int64(2), 1, 1),
    (np.int64(3), 0, 1), (np.array([1, 0, 4], np.int64), 1, 1)])
def test_split_then_concat_and_length(split, axis, keepdims):
    x = np.arange(5 * 5 * 2, dtype=np.float32).reshape(5, 5, 2)
    inits = []
    ins = ["x"]
    if split is not None:
        inits.append(helper.make_tensor("split", I64, split.shape, split.ravel().tolist()))
        ins.append("split")
    attrs = {"axis": axis} if split is not None else {"axis": axis, "keepdims": keepdims}
    dim = x.shape[axis]
    if split is None:
        pieces = np.split(x, dim, axis=axis)
        if not keepdims:
            pieces = [np.squeeze(p, axis=axis) for p in pieces]
    elif split.ndim == 0:
        pieces = np.split(x, list(range(int(split), dim, int(split))), axis=axis)
    else:
        pieces = np.split(x, np.cumsum(split)[:-1], axis=axis)
    new_axis = 1 if split is None and not keepdims else 0
    cat = (np.stack(pieces, axis=axis) if new_axis
           else np.concatenate(pieces, axis=axis))
    nodes = [helper.make_node("SplitToSequence", ins, ["s"], **attrs),
             helper.make_node("SequenceLength", ["s"], ["n"]),
             helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=axis,
                              new_axis=new_axis)]
    g = helper.make_graph(nodes, "seq", [helper.make_tensor_value_info("x", F, x.shape)],
                          [helper.make_tensor_value_info("y", F, cat.shape),
                           helper.make_tensor_value_info("n", I64, [])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    y, n = compile_model(m)(x)
    np.testing.assert_array_equal(y, cat)
    assert int(n) == len(pieces)


def test_empty_then_inserts():
    nodes = [helper.make_node("SequenceEmpty", [], ["e"], dtype=F),
             helper.make_node("SequenceInsert", ["e", "a"], ["s1"]),
             helper.make_node("SequenceInsert", ["s1", "b"], ["s2"]),
             helper.make_node("ConcatFromSequence", ["s2"], ["y"], axis=0)]
    f = compile_model(model(nodes, [("a", F, [1, 3]), ("b", F, [2, 3])], [("y", F, [3, 3])]))
    a, b = np.ones((1, 3), np.float32), np.full((2, 3), 2, np.float32)
    np.testing.assert_array_equal(f(a, b), np.concatenate([a, b]))


def test_sequence_errors():
    def fails(nodes, ins, outs, message):
        with pytest.raises(tessel.CompileError) as e:
            compile_model(model(nodes, ins, outs))
        assert message in str(e.value), str(e.value)

    two = [("a", F, [2]), ("b", F, [3])]
    construct = helper.make_node("SequenceConstruct", ["a", "b"], ["s"], name="mk")
    # A run-time position into tensors of two shapes.
    fails([construct, helper.make_node("SequenceAt", ["s", "p"], ["y"], name="at0")],
          two + [("p", I64, [])], [("y", F, [2])],
          "node 'at0' (SequenceAt, opset 17): a run-time position into a sequence "
          "whose tensors differ in shape")
    # A constant position out of range.
    pos = helper.make_node("Constant", [], ["p"], value=helper.make_tensor("v", I64, [], [2]))
    fails([construct, pos, helper.make_node("SequenceAt", ["s", "p"], ["y"], name="at1")],
          two, [("y", F, [2])], "position 2 is outside [-2, 1] for a sequence of 2")
    # A sequence given to a tensor op, or left as a graph output.
    fails([construct, helper.make_node("Relu", ["s"], ["y"], name="relu0")], two,
          [("y", F, [2])], "input 0 's' is a sequence, which Relu does not take")
    fails([construct, helper.make_node("Identity", ["a"], ["y"])], two, [("s", F, [2])],
          "graph output 's' is a sequence")
    # A tensor where a sequence belongs, and mixed element types.
    fails([helper.make_node("SequenceLength", ["a"], ["n"], name="len0")], two,
          [("n", I64, [])], "input 0 ('a') must be a sequence")
    fails([helper.make_node("SequenceConstruct", ["a", "i"], ["s"]),
           helper.make_node("SequenceLength", ["s"], ["n"])],
          [("a", F, [2]), ("i", I64, [2])], [("n", I64, [])],
          "the tensors of a sequence must share an element type")


def test_sequence_error_paths():
    """The remaining diagnostics, one case each: bad positions, empty
    sequences read from, bad splits, constructions and concatenations."""
    def fails(nodes, ins, outs, message):
        with pytest.raises(tessel.CompileError) as e:
            compile_model(model(nodes, ins, outs))
        assert message in str(e.value), str(e.value)

    two = [("a", F, [2]), ("b", F, [2])]
    construct = helper.make_node("SequenceConstruct", ["a", "b"], ["s"])
    empty = helper.make_node("SequenceEmpty", [], ["s"], dtype=F)
    # A position that is not a scalar.
    fails([construct, helper.make_node("SequenceAt", ["s", "p"], ["y"])],
          two + [("p", I64, [1])], [("y", F, [2])],
          "position must be an integer scalar")
    # Reading, erasing or concatenating an empty sequence.
    fails([empty, helper.make_node("SequenceAt", ["s", "p"], ["y"])],
          [("p", I64, [])], [("y", F, [2])], "reads from an empty sequence")
    fails([empty, helper.make_node("SequenceErase", ["s"], ["t"]),
           helper.make_node("SequenceLength", ["t"], ["n"])],
          [], [("n", I64, [])], "erases from an empty sequence")
    fails([empty, helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)],
          [], [("y", F, [0])], "concatenates an empty sequence")
    # A construction of nothing (the ONNX checker's error, before the
    # importer's own "needs at least one tensor"); an insert of another
    # element type.
    fails([helper.make_node("SequenceConstruct", [], ["s"]),
           helper.make_node("SequenceLength", ["s"], ["n"])],
          [], [("n", I64, [])], "has input size 0 not in range")
    fails([construct, helper.make_node("SequenceInsert", ["s", "i"], ["t"]),
           helper.make_node("SequenceLength", ["t"], ["n"])],
          two + [("i", I64, [2])], [("n", I64, [])],
          "the tensor's element type is not the sequence's")
    # Tensors that do not concatenate; new_axis other than 0 or 1.
    fails([helper.make_node("SequenceConstruct", ["a", "c"], ["s"]),
           helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=1)],
          [("a", F, [2, 3]), ("c", F, [3, 3])], [("y", F, [2, 6])],
          "the sequence's tensors do not concatenate along axis 1")
    fails([construct, helper.make_node("ConcatFromSequence", ["s"], ["y"],
                                       axis=0, new_axis=2)],
          two, [("y", F, [4])], "new_axis")

    # Splits: a non-positive chunk, a negative length, lengths that do not
    # sum to the axis.
    def split(values, shape):
        return [helper.make_node("Constant", [], ["k"],
                                 value=helper.make_tensor("v", I64, shape, values)),
                helper.make_node("SplitToSequence", ["x", "k"], ["s"]),
                helper.make_node("SequenceLength", ["s"], ["n"])]
    x = [("x", F, [6])]
    fails(split([0], []), x, [("n", I64, [])], "split 0 must be positive")
    fails(split([7, -1], [2]), x, [("n", I64, [])],
          "split lengths must not be negative")
    fails(split([2, 2], [2]), x, [("n", I64, [])],
          "split lengths sum to 4, not the axis' 6")
