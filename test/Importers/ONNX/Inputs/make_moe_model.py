"""Writes small ONNX mixture-of-experts graphs in the forms exporters produce,
and the ones that must *not* be raised to compose.route, each with a numpy
reference. Used by moe-raising.test (IR structure) and
test/python/test_moe_raising.py (numbers).

  make_moe_model.py KIND OUT.onnx

Kinds (T=6 tokens, D=4, E=4 experts):
  scatter        softmax -> TopK(2) -> renormalize -> ScatterElements gate
                 matrix -> Slice per expert; Gemm/Relu/Gemm experts; Add chain
  mixtral        TopK(2) of the logits -> Softmax over the two; per expert
                 ReduceSum(Where(Equal(I, e), w, 0)); SiLU experts; Sum
  switch         opset 11, TopK(1) of softmax, no renormalization; Gather +
                 Unsqueeze gate; Where(gate > 0, ., 0) masks; plus a shared
                 (unrouted) expert
  wrong-mask     masks test only the first choice: not a top-2 route
  token-mixing   one expert subtracts the mean over tokens: not token-wise
  scaled-gate    the gate is doubled: not the top-k weight
  missing-expert one expert's term is absent
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

T, D, H, E = 6, 4, 8, 4


def _w(rng, *shape):
    return rng.normal(0, 0.5, shape).astype(np.float32)


def _softmax(a, axis=-1):
    e = np.exp(a - a.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _topk(a, k):
    # Largest first, lower index on ties (ONNX TopK).
    idx = np.argsort(-a, axis=-1, kind="stable")[:, :k]
    return np.take_along_axis(a, idx, axis=-1), idx


class Builder:
    def __init__(self):
        self.nodes, self.inits, self.n = [], [], 0

    def const(self, array, name=None):
        name = name or f"c{len(self.inits)}"
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def op(self, op_type, inputs, n_out=1, **attrs):
        self.n += 1
        outs = [f"{op_type.lower()}{self.n}_{i}" for i in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs,
                                           name=f"{op_type}_{self.n}", **attrs))
        return outs[0] if n_out == 1 else outs

    def model(self, output, opset):
        g = helper.make_graph(
            self.nodes, "moe",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [T, D])],
            [helper.make_tensor_value_info(output, TensorProto.FLOAT, [T, D])],
            self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        onnx.checker.check_model(m)
        return m


def build(kind):
    """(onnx.ModelProto, reference(x) -> y, raisable)"""
    rng = np.random.default_rng(3)
    b = Builder()
    wg = _w(rng, D, E)
    w1, b1 = _w(rng, E, D, H), _w(rng, E, H)
    w2, b2 = _w(rng, E, H, D), _w(rng, E, D)
    opset = 11 if kind == "switch" else 13
    k = 1 if kind == "switch" else 2

    def ffn(e, x):
        if kind == "mixtral":
            h = x @ w1[e]
            return (h / (1 + np.exp(-h))) @ w2[e]
        y = np.maximum(x @ w1[e] + b1[e], 0) @ w2[e] + b2[e]
        if kind == "token-mixing" and e == 1:
            y = y - y.mean(axis=0, keepdims=True)
        return y

    def ffn_nodes(e):
        if kind == "mixtral":
            h = b.op("MatMul", ["x", b.const(w1[e])])
            a = b.op("Mul", [h, b.op("Sigmoid", [h])])
            return b.op("MatMul", [a, b.const(w2[e])])
        h = b.op("Relu", [b.op("Gemm", ["x", b.const(w1[e]), b.const(b1[e])])])
        y = b.op("Gemm", [h, b.const(w2[e]), b.const(b2[e])])
        if kind == "token-mixing" and e == 1:
            y = b.op("Sub", [y, b.op("ReduceMean", [y], axes=[0], keepdims=1)])
        return y

    logits = b.op("MatMul", ["x", b.const(wg)])
    kk = b.const(np.array([k], np.int64))
    if kind == "mixtral":
        v, i = b.op("TopK", [logits, kk], n_out=2, axis=-1)
        w = b.op("Softmax", [v], axis=-1)
    else:
        probs = b.op("Softmax", [logits], axis=-1)
        v, i = b.op("TopK", [probs, kk], n_out=2, axis=-1)
        w = v if kind == "switch" else b.op(
            "Div", [v, b.op("ReduceSum", [v, b.const(np.array([-1], np.int64))],
                            keepdims=1)])
        gates = b.op("ScatterElements",
                     [b.const(np.zeros((T, E), np.float32)), i, w], axis=1)
    zero = b.const(np.zeros((T, D), np.float32))
    terms = []
    for e in range(E):
        if kind == "missing-expert" and e == 2:
            continue
        y = ffn_nodes(e)
        if kind == "mixtral":
            mask = b.op("Equal", [i, b.const(np.array(e, np.int64))])
            we = b.op("Where", [mask, w, b.const(np.float32(0))])
            g = b.op("ReduceSum", [we, b.const(np.array([1], np.int64))],
                     keepdims=1)
        elif kind == "switch":
            g = b.op("Unsqueeze", [b.op("Gather", [gates, b.const(
                np.array(e, np.int64))], axis=1)], axes=[1])
        else:
            g = b.op("Slice", [gates, b.const(np.array([e], np.int64)),
                               b.const(np.array([e + 1], np.int64)),
                               b.const(np.array([1], np.int64))])
        if kind == "scaled-gate":
            g = b.op("Mul", [g, b.const(np.float32(2))])
        term = b.op("Mul", [y, g] if kind == "switch" else [g, y])
        if kind == "switch":
            routed = b.op("Greater", [g, b.const(np.float32(0))])
            term = b.op("Where", [routed, term, zero])
        if kind == "wrong-mask":
            first = b.op("Slice", [i, b.const(np.array([0], np.int64)),
                                   b.const(np.array([1], np.int64)),
                                   b.const(np.array([1], np.int64))])
            hit = b.op("Equal", [first, b.const(np.array(e, np.int64))])
            term = b.op("Where", [hit, term, zero])
        terms.append(term)
    if kind == "mixtral":
        out = b.op("Sum", terms)
    else:
        out = terms[0]
        for t in terms[1:]:
            out = b.op("Add", [out, t])
    ws = _w(rng, D, D)
    if kind == "switch":
        out = b.op("Add", [b.op("MatMul", ["x", b.const(ws)]), out])

    def reference(x):
        lg = x @ wg
        if kind == "mixtral":
            val, idx = _topk(lg, k)
            wt = _softmax(val)
        else:
            val, idx = _topk(_softmax(lg), k)
            wt = val if kind == "switch" else val / val.sum(-1, keepdims=True)
        y = np.zeros((T, D), np.float32)
        for e in range(E):
            if kind == "missing-expert" and e == 2:
                continue
            g = (wt * (idx == e)).sum(-1, keepdims=True)
            if kind == "scaled-gate":
                g = 2 * g
            if kind == "wrong-mask":
                g = g * (idx[:, :1] == e)
            y = y + g * ffn(e, x)
        if kind == "switch":
            y = y + x @ ws
        return y.astype(np.float32)

    raisable = kind in ("scatter", "mixtral", "switch")
    return b.model(out, opset), reference, raisable


KINDS = ["scatter", "mixtral", "switch", "wrong-mask", "token-mixing",
         "scaled-gate", "missing-expert"]

if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in KINDS:
        sys.exit(__doc__)
    onnx.save(build(sys.argv[1])[0], sys.argv[2])
