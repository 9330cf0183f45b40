"""ONNX models with If and Scan for the importer's control-flow tests
(generated at test time so no binary is committed).

  make_control_flow_model.py KIND OUT.onnx     (If models)
  make_control_flow_model.py KIND DIR          (scan-*: DIR/model.onnx,
                                                inN.npy and numpy refN.npy)
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def vi(name, shape, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, shape)


def branch(name, nodes, outputs, inits=()):
    return helper.make_graph(nodes, name, [], outputs, list(inits))


def loop_body(nodes, carried, scanned=(), inits=()):
    """A Loop body: inputs (i, c_in, each carried value's *_in), outputs
    (c_out, each carried value's *_out, then the scanned ones)."""
    return helper.make_graph(
        nodes, "body",
        [vi("i", [], TensorProto.INT64), vi("c_in", [], TensorProto.BOOL)]
        + [vi(n + "_in", shape) for n, shape in carried],
        [vi("c_out", [], TensorProto.BOOL)]
        + [vi(n + "_out", shape) for n, shape in carried]
        + [vi(n, shape) for n, shape in scanned], list(inits))


def if_node(cond, out, then_g, else_g, name):
    return helper.make_node("If", [cond], [out], name=name,
                            then_branch=then_g, else_branch=else_g)


def build(kind):
    x, c, c2 = vi("x", [2, 3]), vi("c", [1], TensorProto.BOOL), \
        vi("c2", [], TensorProto.BOOL)
    if kind == "if-nested":
        # then: x * w (w a branch initializer); else: If(c2) of x + x and -x.
        w = numpy_helper.from_array(
            np.array([[1, 2, 3], [4, 5, 6]], np.float32), "w")
        then_g = branch("then", [helper.make_node("Mul", ["x", "w"], ["t"])],
                        [vi("t", [2, 3])], [w])
        inner = if_node(
            "c2", "e",
            branch("inner_then", [helper.make_node("Add", ["x", "x"], ["it"])],
                   [vi("it", [2, 3])]),
            branch("inner_else", [helper.make_node("Neg", ["x"], ["ie"])],
                   [vi("ie", [2, 3])]),
            "inner_if")
        else_g = branch("else", [inner], [vi("e", [2, 3])])
        nodes = [if_node("c", "y", then_g, else_g, "outer_if"),
                 helper.make_node("Relu", ["y"], ["z"])]
        return nodes, [x, c, c2], [vi("z", [2, 3])], []
    if kind == "if-constant":
        # The condition is an initializer: only the else branch is imported.
        cst = numpy_helper.from_array(np.array(False), "k")
        then_g = branch("then", [helper.make_node("Neg", ["x"], ["t"])],
                        [vi("t", [2, 3])])
        else_g = branch("else", [helper.make_node("Abs", ["x"], ["e"])],
                        [vi("e", [2, 3])])
        return [if_node("k", "y", then_g, else_g, "const_if")], [x], \
            [vi("y", [2, 3])], [cst]
    if kind == "if-shapes-differ":
        # then: [3] (a max over rows), else: [2] (over columns).
        then_g = branch("then", [helper.make_node("ReduceMax", ["x"], ["t"],
                                                  axes=[0], keepdims=0)],
                        [vi("t", [3])])
        else_g = branch("else", [helper.make_node("ReduceMax", ["x"], ["e"],
                                                  axes=[1], keepdims=0)],
                        [vi("e", [2])])
        return [if_node("c", "y", then_g, else_g, "ragged_if")], [x, c], \
            [vi("y", ["n"])], []
    if kind == "if-float-cond":
        then_g = branch("then", [helper.make_node("Neg", ["x"], ["t"])],
                        [vi("t", [2, 3])])
        else_g = branch("else", [helper.make_node("Abs", ["x"], ["e"])],
                        [vi("e", [2, 3])])
        f = vi("f", [1])
        m = [if_node("f", "y", then_g, else_g, "float_if")]
        return m, [x, f], [vi("y", [2, 3])], []
    if kind == "loop-count":
        # x <- 2 x + i, M times (M at run time, no condition).
        body = loop_body(
            [helper.make_node("Identity", ["c_in"], ["c_out"]),
             helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT),
             helper.make_node("Add", ["x_in", "x_in"], ["twice"]),
             helper.make_node("Add", ["twice", "fi"], ["x_out"])],
            [("x", [2])])
        node = helper.make_node("Loop", ["m", "", "x"], ["x_final"],
                                name="count_loop", body=body)
        return [node], [vi("m", [], TensorProto.INT64), vi("x", [2])], \
            [vi("x_final", [2])], []
    if kind == "loop-while":
        # v <- v + 1 while v + 1 < 5 (the body computes the condition; the
        # outer constant `limit` is read inside it).
        limit = numpy_helper.from_array(np.array([5], np.float32), "limit")
        one = numpy_helper.from_array(np.array([1], np.float32), "one")
        body = loop_body(
            [helper.make_node("Add", ["v_in", "one"], ["v_out"]),
             helper.make_node("Less", ["v_out", "limit"], ["c1"]),
             helper.make_node("Squeeze", ["c1"], ["c_out"])],
            [("v", [1])], inits=[one])
        node = helper.make_node("Loop", ["", "c", "v"], ["v_final"],
                                name="while_loop", body=body)
        return [node], [vi("c", [], TensorProto.BOOL), vi("v", [1])], \
            [vi("v_final", [1])], [limit]
    if kind == "loop-counted":
        # M = 3 (an initializer): x <- x + i, and each step's x stacked.
        m = numpy_helper.from_array(np.array(3, np.int64), "m")
        body = loop_body(
            [helper.make_node("Identity", ["c_in"], ["c_out"]),
             helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT),
             helper.make_node("Add", ["x_in", "fi"], ["x_out"]),
             helper.make_node("Identity", ["x_out"], ["s"])],
            [("x", [2])], [("s", [2])])
        node = helper.make_node("Loop", ["m", "", "x"], ["x_final", "ys"],
                                name="counted_loop", body=body)
        return [node], [vi("x", [2])], \
            [vi("x_final", [2]), vi("ys", [3, 2])], [m]
    if kind == "loop-early-exit":
        # Scan outputs, but the body may end the loop early.
        m = numpy_helper.from_array(np.array(3, np.int64), "m")
        body = loop_body(
            [helper.make_node("ReduceMax", ["x_in"], ["mx"], keepdims=0),
             helper.make_node("Constant", [], ["lim"],
                              value=numpy_helper.from_array(
                                  np.array(10, np.float32))),
             helper.make_node("Less", ["mx", "lim"], ["c_out"]),
             helper.make_node("Add", ["x_in", "x_in"], ["x_out"]),
             helper.make_node("Identity", ["x_out"], ["s"])],
            [("x", [2])], [("s", [2])])
        node = helper.make_node("Loop", ["m", "", "x"], ["x_final", "ys"],
                                name="early_loop", body=body)
        return [node], [vi("x", [2])], \
            [vi("x_final", [2]), vi("ys", ["n", 2])], [m]
    if kind == "loop-scan-output":
        body = loop_body(
            [helper.make_node("Identity", ["c_in"], ["c_out"]),
             helper.make_node("Identity", ["x_in"], ["x_out"]),
             helper.make_node("Identity", ["x_in"], ["s"])],
            [("x", [2])], [("s", [2])])
        node = helper.make_node("Loop", ["m", "", "x"], ["x_final", "ys"],
                                name="scan_loop", body=body)
        return [node], [vi("m", [], TensorProto.INT64), vi("x", [2])], \
            [vi("x_final", [2]), vi("ys", ["n", 2])], []
    raise SystemExit("unknown kind " + kind)


def scan_node(inputs, outputs, body, name, **attrs):
    return helper.make_node("Scan", inputs, outputs, name=name, body=body,
                            **attrs)


def build_scan(kind):
    """(nodes, inputs, outputs, opset, feeds, references)."""
    rng = np.random.default_rng(3)
    if kind == "scan-directions":
        # s += a_t * b_t with a read along axis 1 backwards and b along
        # axis 0; y_t = a_t - b_t stacked along axis 1 backwards, and the
        # running s stacked along axis 0.
        a = rng.standard_normal((2, 4)).astype(np.float32)
        b = rng.standard_normal((4, 2)).astype(np.float32)
        s0 = rng.standard_normal(2).astype(np.float32)
        body = helper.make_graph(
            [helper.make_node("Mul", ["at", "bt"], ["p"]),
             helper.make_node("Add", ["s", "p"], ["s_out"]),
             helper.make_node("Sub", ["at", "bt"], ["y_t"]),
             helper.make_node("Identity", ["s_out"], ["z_t"])],
            "body", [vi("s", [2]), vi("at", [2]), vi("bt", [2])],
            [vi("s_out", [2]), vi("y_t", [2]), vi("z_t", [2])])
        node = scan_node(["s0", "a", "b"], ["s_final", "y", "z"], body,
                         "scan_dirs", num_scan_inputs=2,
                         scan_input_axes=[1, 0], scan_input_directions=[1, 0],
                         scan_output_axes=[1, 0],
                         scan_output_directions=[1, 0])
        s, y, z = s0.copy(), np.zeros((2, 4), np.float32), \
            np.zeros((4, 2), np.float32)
        for i in range(4):
            at, bt = a[:, 3 - i], b[i]
            s = s + at * bt
            y[:, 3 - i] = at - bt
            z[i] = s
        return ([node], [vi("s0", [2]), vi("a", [2, 4]), vi("b", [4, 2])],
                [vi("s_final", [2]), vi("y", [2, 4]), vi("z", [4, 2])], 11,
                [s0, a, b], [s, y, z])
    if kind == "scan8-batch":
        # Opset 8: batch axis 0, sequence axis 1, read backwards.
        x = rng.standard_normal((2, 5, 3)).astype(np.float32)
        s0 = rng.standard_normal((2, 3)).astype(np.float32)
        body = helper.make_graph(
            [helper.make_node("Add", ["s", "xt"], ["s_out"]),
             helper.make_node("Identity", ["s_out"], ["o"])],
            "body", [vi("s", [3]), vi("xt", [3])],
            [vi("s_out", [3]), vi("o", [3])])
        node = scan_node(["", "s0", "x"], ["s_final", "ys"], body, "scan8",
                         num_scan_inputs=1, directions=[1])
        s, ys = s0.copy(), np.zeros((2, 5, 3), np.float32)
        for i in range(5):
            s = s + x[:, 4 - i]
            ys[:, i] = s
        return ([node], [vi("s0", [2, 3]), vi("x", [2, 5, 3])],
                [vi("s_final", [2, 3]), vi("ys", [2, 5, 3])], 8,
                [s0, x], [s, ys])
    if kind == "scan-lengths-differ":
        body = helper.make_graph(
            [helper.make_node("Add", ["at", "bt"], ["o"])], "body",
            [vi("at", [2]), vi("bt", [2])], [vi("o", [2])])
        node = scan_node(["a", "b"], ["y"], body, "ragged_scan",
                         num_scan_inputs=2)
        return ([node], [vi("a", [3, 2]), vi("b", [4, 2])],
                [vi("y", [3, 2])], 11, [], [])
    raise SystemExit("unknown kind " + kind)


def main():
    kind, out = sys.argv[1], sys.argv[2]
    if kind.startswith("scan"):
        nodes, inputs, outputs, opset, feeds, refs = build_scan(kind)
        g = helper.make_graph(nodes, "g", inputs, outputs)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        os.makedirs(out, exist_ok=True)
        onnx.save(m, os.path.join(out, "model.onnx"))
        for i, v in enumerate(feeds):
            np.save(os.path.join(out, "in%d.npy" % i), v)
        for i, v in enumerate(refs):
            np.save(os.path.join(out, "ref%d.npy" % i), v)
        return
    nodes, inputs, outputs, inits = build(kind)
    g = helper.make_graph(nodes, "g", inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(m, out)


if __name__ == "__main__":
    main()
