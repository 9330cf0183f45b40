"""Writes a small ONNX RNN/GRU/LSTM model with random weights, an input and
the expected output computed here with numpy (ONNX's equations, written
independently of the importer), for the recurrent importer tests.

  make_recurrent_model.py KIND OUTDIR      KIND: lstm | gru | rnn

OUTDIR gets model.onnx, x.npy (and lens.npy) and y.npy. Every model is
bidirectional over T = 7 steps, batch 3 with sequence lengths 7, 4 and 0,
with initial states and biases, so the loop's direction, masking and
state all show in Y.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

T, B, I, H = 7, 3, 5, 4
LENS = np.array([7, 4, 0], np.int32)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def reference(kind, x, w, r, bias, h0, c0):
    """Y [T, 2, B, H]: ONNX's cell equations, default activations."""
    g = {"rnn": 1, "gru": 3, "lstm": 4}[kind]
    y = np.zeros((T, 2, B, H), np.float64)
    for d in range(2):
        wb, rb = bias[d, :g * H], bias[d, g * H:]
        h = h0[d].astype(np.float64)
        c = c0[d].astype(np.float64) if c0 is not None else None
        steps = range(T) if d == 0 else range(T - 1, -1, -1)
        for t in steps:
            xw = x[t] @ w[d].T + wb
            if kind == "rnn":
                hn, cn = np.tanh(xw + h @ r[d].T + rb), None
            elif kind == "gru":
                z = sigmoid(xw[:, :H] + h @ r[d][:H].T + rb[:H])
                rr = sigmoid(xw[:, H:2 * H] + h @ r[d][H:2 * H].T + rb[H:2 * H])
                hh = np.tanh(xw[:, 2 * H:] + (rr * h) @ r[d][2 * H:].T + rb[2 * H:])
                hn, cn = (1 - z) * hh + z * h, None
            else:
                a = xw + h @ r[d].T + rb
                i, o, f = sigmoid(a[:, :H]), sigmoid(a[:, H:2 * H]), sigmoid(a[:, 2 * H:3 * H])
                cn = f * c + i * np.tanh(a[:, 3 * H:])
                hn = o * np.tanh(cn)
            valid = (t < LENS)[:, None]
            y[t, d] = np.where(valid, hn, 0.0)
            h = np.where(valid, hn, h)
            if c is not None:
                c = np.where(valid, cn, c)
    return y.astype(np.float32)


def main():
    kind, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(7)
    g = {"rnn": 1, "gru": 3, "lstm": 4}[kind]
    w = (rng.standard_normal((2, g * H, I)) * 0.5).astype(np.float32)
    r = (rng.standard_normal((2, g * H, H)) * 0.5).astype(np.float32)
    bias = (rng.standard_normal((2, 2 * g * H)) * 0.5).astype(np.float32)
    h0 = (rng.standard_normal((2, B, H)) * 0.5).astype(np.float32)
    c0 = (rng.standard_normal((2, B, H)) * 0.5).astype(np.float32)
    x = rng.standard_normal((T, B, I)).astype(np.float32)
    inits = [numpy_helper.from_array(w, "W"), numpy_helper.from_array(r, "R"),
             numpy_helper.from_array(bias, "B"), numpy_helper.from_array(h0, "h0")]
    ins = ["x", "W", "R", "B", "lens", "h0"]
    if kind == "lstm":
        inits.append(numpy_helper.from_array(c0, "c0"))
        ins.append("c0")
    node = helper.make_node(kind.upper() if kind != "rnn" else "RNN", ins, ["y"],
                            hidden_size=H, direction="bidirectional", name="cell")
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [T, B, I]),
         helper.make_tensor_value_info("lens", TensorProto.INT32, [B])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [T, 2, B, H])], inits)
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]),
         os.path.join(out, "model.onnx"))
    np.save(os.path.join(out, "x.npy"), x)
    np.save(os.path.join(out, "lens.npy"), LENS)
    np.save(os.path.join(out, "y.npy"),
            reference(kind, x, w, r, bias, h0, c0 if kind == "lstm" else None))


if __name__ == "__main__":
    main()
