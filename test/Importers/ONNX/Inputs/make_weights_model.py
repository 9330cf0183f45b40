"""Models whose weights are large enough (>= 64 KiB) for the importer to copy
them out of the ONNX file once, in the layout their first user wants
(lib/Importers/ONNX/DeferredWeights.h), with numpy references.

  make_weights_model.py KIND DIR   writes DIR/model.onnx, DIR/x.npy, DIR/ref*.npy
  make_weights_model.py check OUT.npy REF.npy
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def vi(name, shape, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, shape)


def conv_nchw(x, w, b, pad):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    y = np.zeros((n, o, oh, ow), np.float64)
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i:i + oh, j:j + ow]
            y += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    return (y + b[None, :, None, None]).astype(np.float32)


def build(kind):
    """(nodes, inputs, outputs, initializers, feeds, references)."""
    if kind == "matmul":
        # w1 is used once (one [1,K,N] copy); w2 twice, once through an
        # Identity and a Transpose (kept once); w3 through an Identity and a
        # Transpose (one transposed copy); wout is a graph output; `unused`
        # is read by no node.
        x, w1, w2, w3, wout, unused = (f32(2, 128), f32(128, 256),
                                       f32(256, 128), f32(128, 256),
                                       f32(256, 128), f32(300, 100))
        nodes = [
            helper.make_node("MatMul", ["x", "w1"], ["h"]),
            helper.make_node("MatMul", ["h", "w2"], ["a"]),
            helper.make_node("Relu", ["a"], ["r"]),
            helper.make_node("Identity", ["w2"], ["w2i"]),
            helper.make_node("Transpose", ["w2i"], ["w2t"], perm=[1, 0]),
            helper.make_node("MatMul", ["r", "w2t"], ["b"]),
            helper.make_node("Identity", ["w3"], ["w3i"]),
            helper.make_node("Transpose", ["w3i"], ["w3t"], perm=[1, 0]),
            helper.make_node("MatMul", ["h", "w3t"], ["c"]),
        ]
        h = x @ w1
        r = np.maximum(h @ w2, 0)
        inits = [numpy_helper.from_array(v, n) for v, n in
                 [(w1, "w1"), (w2, "w2"), (w3, "w3"), (wout, "wout"),
                  (unused, "unused")]]
        return (nodes, [vi("x", [2, 128])],
                [vi("b", [2, 256]), vi("c", [2, 128]), vi("wout", [256, 128])],
                inits, {"x": x}, [r @ w2.T, h @ w3.T, wout])
    if kind == "conv-gemm":
        # A Conv's OIHW filter (transposed to OHWI on import) and a Gemm's
        # transposed B, both large.
        x, w, b, fc, fcb = (f32(1, 32, 6, 6), f32(64, 32, 3, 3), f32(64),
                            f32(300, 2304), f32(300))
        nodes = [
            helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1]),
            helper.make_node("Flatten", ["y"], ["f"]),
            helper.make_node("Gemm", ["f", "fc", "fcb"], ["z"], transB=1),
        ]
        y = conv_nchw(x, w, b, 1)
        z = y.reshape(1, -1) @ fc.T + fcb
        inits = [numpy_helper.from_array(v, n) for v, n in
                 [(w, "w"), (b, "b"), (fc, "fc"), (fcb, "fcb")]]
        return (nodes, [vi("x", [1, 32, 6, 6])], [vi("z", [1, 300])], inits,
                {"x": x}, [z])
    if kind == "int8-weights":
        # int8 weights dequantized per column: their contents are read by
        # the converter (materialized early), then a MatMul.
        x = f32(3, 512)
        w = rng.integers(-128, 128, size=(512, 256), dtype=np.int8)
        s = (rng.random(256) * 0.01 + 0.001).astype(np.float32)
        zp = rng.integers(-3, 4, size=256, dtype=np.int8)
        nodes = [helper.make_node("DequantizeLinear", ["w", "s", "zp"], ["wf"],
                                  axis=1),
                 helper.make_node("MatMul", ["x", "wf"], ["y"])]
        wf = (w.astype(np.float32) - zp.astype(np.float32)) * s
        inits = [numpy_helper.from_array(w, "w"),
                 numpy_helper.from_array(s, "s"),
                 numpy_helper.from_array(zp, "zp")]
        return (nodes, [vi("x", [3, 512])], [vi("y", [3, 256])], inits,
                {"x": x}, [x @ wf])
    raise SystemExit(f"unknown kind {kind}")


def main():
    if sys.argv[1] == "check":
        out, ref = np.load(sys.argv[2]), np.load(sys.argv[3])
        assert out.shape == ref.shape, (out.shape, ref.shape)
        err = np.abs(out.astype(np.float64) - ref).max()
        tol = 1e-4 * max(1.0, np.abs(ref).max())
        print(f"max error {err:.3g} (tolerance {tol:.3g})")
        sys.exit(0 if err <= tol else 1)
    kind, out = sys.argv[1], sys.argv[2]
    nodes, inputs, outputs, inits, feeds, refs = build(kind)
    g = helper.make_graph(nodes, "g", inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(m)
    os.makedirs(out, exist_ok=True)
    onnx.save(m, f"{out}/model.onnx")
    for name, v in feeds.items():
        np.save(f"{out}/{name}.npy", v)
    for i, r in enumerate(refs):
        np.save(f"{out}/ref{i}.npy", r)


if __name__ == "__main__":
    main()
