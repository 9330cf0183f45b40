"""Quantized ONNX models (QDQ form) against numpy references of ONNX's
QuantizeLinear / DequantizeLinear semantics (docs/quantization.md)."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import tessel


def quantize(x, scale, zp, lo, hi):
    # ONNX QuantizeLinear: round half to even, then saturate.
    return np.clip(np.rint(x / scale) + zp, lo, hi)


def qdq_matmul_model(w, w_scale, w_zp, x_scale, x_zp, y_scale, y_zp,
                     x_type=TensorProto.UINT8, y_type=TensorProto.INT8, m=4):
    k, n = w.shape
    x_np = np.uint8 if x_type == TensorProto.UINT8 else np.int8
    y_np = np.uint8 if y_type == TensorProto.UINT8 else np.int8
    inits = [
        numpy_helper.from_array(w, "w"),
        numpy_helper.from_array(np.asarray(w_scale, np.float32), "ws"),
        numpy_helper.from_array(np.asarray(w_zp, np.int8), "wz"),
        numpy_helper.from_array(np.array(x_scale, np.float32), "xs"),
        numpy_helper.from_array(np.array(x_zp, x_np), "xz"),
        numpy_helper.from_array(np.array(y_scale, np.float32), "ys"),
        numpy_helper.from_array(np.array(y_zp, y_np), "yz"),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xf"]),
        helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wf"], axis=1),
        helper.make_node("MatMul", ["xf", "wf"], ["y"]),
        helper.make_node("QuantizeLinear", ["y", "ys", "yz"], ["yq"]),
    ]
    g = helper.make_graph(nodes, "qdq", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n]),
                           helper.make_tensor_value_info("yq", y_type, [m, n])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.parametrize("x_type,x_zp", [(TensorProto.UINT8, 128), (TensorProto.UINT8, 3),
                                         (TensorProto.INT8, -5)])
@pytest.mark.parametrize("per_column", [True, False])
@pytest.mark.parametrize("opt_level", [0, 2])
def test_qdq_matmul_runs_on_integers_and_matches_numpy(x_type, x_zp, per_column, opt_level):
    rng = np.random.default_rng(7)
    k, n, m = 37, 19, 5                       # odd sizes: remainders everywhere
    w = rng.integers(-128, 128, size=(k, n), dtype=np.int8)
    w_scale = (rng.uniform(0.005, 0.02, n) if per_column else np.float32(0.01)).astype(np.float32)
    lo, hi = (0, 255) if x_type == TensorProto.UINT8 else (-128, 127)
    x_scale, y_scale, y_zp = np.float32(0.05), np.float32(0.25), -3
    model = qdq_matmul_model(w, w_scale, 0, x_scale, x_zp, y_scale, y_zp, x_type, m=m)
    x = rng.standard_normal((m, k)).astype(np.float32) * 4

    # Reference: the QDQ graph's float semantics.
    xq = quantize(x, x_scale, x_zp, lo, hi)
    xf = ((xq - x_zp) * x_scale).astype(np.float32)
    wf = (w.astype(np.float32) * w_scale).astype(np.float32)
    y_ref = xf.astype(np.float64) @ wf.astype(np.float64)
    yq_ref = quantize(y_ref, y_scale, y_zp, -128, 127)

    f = tessel.compile(model.SerializeToString(), opt_level=opt_level)
    ir = tessel.compile  # noqa: F841 (the IR is checked by the lit tests)
    y, yq = f(x)
    np.testing.assert_allclose(y, y_ref, rtol=1e-5, atol=1e-4)
    # Requantization may round differently right at a half-way point.
    assert np.abs(yq.astype(np.int32) - yq_ref).max() <= 1
    assert (yq == yq_ref).mean() > 0.97
