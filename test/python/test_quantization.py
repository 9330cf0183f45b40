"""Quantized ONNX models (QDQ form) against numpy references of ONNX's
QuantizeLinear / DequantizeLinear semantics (docs/quantization.md)."""
import os
import tempfile

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
@pytest.mark.parametrize("m,k,n", [(5, 37, 19), (70, 300, 130)])  # remainders everywhere
def test_qdq_matmul_runs_on_integers_and_matches_numpy(x_type, x_zp, per_column, opt_level, m, k, n):
    rng = np.random.default_rng(7)
    w = rng.integers(-128, 128, size=(k, n), dtype=np.int8)
    w_scale = (rng.uniform(0.005, 0.02, n) if per_column else np.float32(0.01)).astype(np.float32)
    # The zero point has the scale's shape, as ONNX requires (and the int8
    # kernel needs: one zero point per column would not fold).
    w_zp = np.zeros(n, np.int8) if per_column else 0
    lo, hi = (0, 255) if x_type == TensorProto.UINT8 else (-128, 127)
    x_scale, y_scale, y_zp = np.float32(0.05), np.float32(0.25), -3
    model = qdq_matmul_model(w, w_scale, w_zp, x_scale, x_zp, y_scale, y_zp, x_type, m=m)
    x = rng.standard_normal((m, k)).astype(np.float32) * 4

    # Reference: the QDQ graph's float semantics.
    xq = quantize(x, x_scale, x_zp, lo, hi)
    xf = ((xq - x_zp) * x_scale).astype(np.float32)
    wf = (w.astype(np.float32) * w_scale).astype(np.float32)
    y_ref = xf.astype(np.float64) @ wf.astype(np.float64)
    yq_ref = quantize(y_ref, y_scale, y_zp, -128, 127)

    f = tessel.compile(model.SerializeToString(), opt_level=opt_level)
    y, yq = f(x)
    np.testing.assert_allclose(y, y_ref, rtol=1e-5, atol=1e-4)
    # Requantization may round differently right at a half-way point.
    assert np.abs(yq.astype(np.int32) - yq_ref).max() <= 1
    assert (yq == yq_ref).mean() > 0.97


# ---- post-training quantization: tessel.quantize_onnx --------------------------

def small_cnn_onnx(rng):
    """Conv(3->8) -> Relu -> Conv(8->8) -> GlobalAveragePool -> Flatten ->
    Gemm(8->10), random weights."""
    inits = [
        numpy_helper.from_array((rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(np.float32), "w1"),
        numpy_helper.from_array((rng.standard_normal(8) * 0.1).astype(np.float32), "b1"),
        numpy_helper.from_array((rng.standard_normal((8, 8, 3, 3)) * 0.2).astype(np.float32), "w2"),
        numpy_helper.from_array((rng.standard_normal(8) * 0.1).astype(np.float32), "b2"),
        numpy_helper.from_array((rng.standard_normal((10, 8)) * 0.5).astype(np.float32), "w3"),
        numpy_helper.from_array((rng.standard_normal(10) * 0.1).astype(np.float32), "b3"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("GlobalAveragePool", ["c2"], ["p"], name="pool"),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "w3", "b3"], ["y"], name="fc", transB=1),
    ]
    g = helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 12, 12])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def cosine(a, b):
    a, b = a.reshape(-1).astype(np.float64), b.reshape(-1).astype(np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


@pytest.mark.parametrize("method", ["minmax", "percentile", "entropy"])
def test_quantize_onnx_writes_a_qdq_model_close_to_float(tmp_path, method):
    rng = np.random.default_rng(3)
    model = small_cnn_onnx(rng)
    samples = [rng.standard_normal((1, 3, 12, 12)).astype(np.float32) for _ in range(16)]
    dst, rep = tmp_path / "q.onnx", tmp_path / "report.json"
    q = tessel.quantize_onnx(model, samples, dst, method=method, report=rep)
    onnx.checker.check_model(onnx.load(dst))
    ops = [n.op_type for n in q.graph.node]
    # x, r1, f in; c1, c2, y out; three weights.
    assert ops.count("QuantizeLinear") == 6 and ops.count("DequantizeLinear") == 9
    inits = {t.name: numpy_helper.to_array(t) for t in q.graph.initializer}
    assert inits["w1_quantized"].dtype == np.int8
    assert inits["w1_scale"].shape == (8,)                   # per output channel
    np.testing.assert_allclose(np.abs(inits["w1_quantized"]).max(axis=(1, 2, 3)), 127)
    assert inits["x_zero_point"].dtype == np.uint8

    f32 = tessel.compile(model.SerializeToString())
    i8 = tessel.compile(str(dst))
    agree, cos = 0, []
    for _ in range(20):
        x = rng.standard_normal((1, 3, 12, 12)).astype(np.float32)
        a, b = f32(x), i8(x)
        cos.append(cosine(a, b))
        agree += int(a.argmax() == b.argmax())
    assert min(cos) > 0.99 and agree >= 18
    assert not np.array_equal(f32(samples[0]), i8(samples[0]))   # really quantized

    import json
    r = json.loads(rep.read_text())
    assert [l["node"] for l in r["layers"]] == ["conv1", "conv2", "fc"]
    # Entropy calibration clips the tails (it minimizes the information lost
    # on the bulk, not the error on the calibration set), so its SQNR on
    # that set is lower.
    floor = 12 if method == "entropy" else 20
    assert all(l["sqnr_db"] > floor for l in r["layers"]), r["layers"]
    assert len(r["layers"][0]["weight"]["scales"]) == 8


def test_quantize_onnx_exclude_and_per_tensor(tmp_path):
    rng = np.random.default_rng(4)
    model = small_cnn_onnx(rng)
    samples = {"x": rng.standard_normal((4, 1, 3, 12, 12)).astype(np.float32)}
    q = tessel.quantize_onnx(model, samples, exclude=["fc"], per_channel=False)
    inits = {t.name for t in q.graph.initializer}
    assert "w3" in inits and "w3_quantized" not in inits        # fc stays float
    scale = next(t for t in q.graph.initializer if t.name == "w2_scale")
    assert list(scale.dims) == []                                # per tensor
    f = tessel.compile(q.SerializeToString())
    assert f(samples["x"][0]).shape == (1, 10)


def test_entropy_calibration_clips_outliers():
    """Entropy calibration keeps the bulk of a distribution and clips rare
    outliers (minmax would spend the 256 levels on them): a Gaussian with
    two outliers at +-40 gets a symmetric threshold of a few sigma; a ReLU
    output a one-sided one; and the threshold minimizes the KL divergence
    over the candidates (checked against a direct evaluation)."""
    from tessel.quantize import _entropy_range, _kl_threshold
    rng = np.random.default_rng(0)
    v = np.concatenate([rng.standard_normal(200000), [40.0, -40.0]])
    lo, hi = _entropy_range(v)
    assert lo == -hi and 2.5 < hi < 6.0
    r = np.maximum(rng.standard_normal(200000), 0.0)
    r[0] = 50.0
    lo, hi = _entropy_range(r)
    assert lo == 0.0 and 2.0 < hi < 6.0
    # A histogram whose mass is all in the first 128 bins: no clipping loss
    # there, so the smallest threshold that holds it wins.
    hist = np.zeros(2048)
    hist[:100] = 1.0
    assert _kl_threshold(hist) == 128


def test_quantize_onnx_bad_input(tmp_path):
    rng = np.random.default_rng(5)
    model = small_cnn_onnx(rng)
    x = rng.standard_normal((1, 3, 12, 12)).astype(np.float32)
    with pytest.raises(ValueError, match="names no node of the model: \\['nope'\\]"):
        tessel.quantize_onnx(model, [x], exclude=["nope"])
    with pytest.raises(ValueError, match="method must be one of"):
        tessel.quantize_onnx(model, [x], method="kl")
    with pytest.raises(ValueError, match="calibration data is empty"):
        tessel.quantize_onnx(model, [])
    with pytest.raises(ValueError, match="sample 0 has 2 array"):
        tessel.quantize_onnx(model, [(x, x)])
    with pytest.raises(ValueError, match="calibration sample 0: .*shape"):
        tessel.quantize_onnx(model, [np.zeros((1, 3, 5, 5), np.float32)])
    with pytest.raises(ValueError, match="calibration sample 0: .*dtype"):
        tessel.quantize_onnx(model, [x.astype(np.float64)])
    with pytest.raises(FileNotFoundError):
        tessel.quantize_onnx(tmp_path / "missing.onnx", [x])


# ---- accuracy on a model trained at test time -----------------------------------

def test_digits_cnn_int8_accuracy_within_one_point_of_float(tmp_path):
    """A small CNN trained for a few seconds on scikit-learn's digits (8x8
    images, Debian's python3-sklearn), quantized with quantize_onnx from
    training images: int8 test accuracy within 1 point of float, and the
    int8 outputs really differ from the float ones."""
    datasets = pytest.importorskip("sklearn.datasets")
    torch = pytest.importorskip("torch")
    d = datasets.load_digits()
    x = (d.images / 16.0).astype(np.float32)[:, None]          # [N, 1, 8, 8]
    y = d.target.astype(np.int64)
    perm = np.random.default_rng(0).permutation(len(x))
    x, y = x[perm], y[perm]
    xtr, ytr, xte, yte = x[:1400], y[:1400], x[1400:], y[1400:]

    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.ReLU(),
        torch.nn.Conv2d(16, 32, 3, padding=1, stride=2), torch.nn.ReLU(),
        torch.nn.Flatten(), torch.nn.Linear(32 * 4 * 4, 64), torch.nn.ReLU(),
        torch.nn.Linear(64, 10))
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    xt, yt = torch.from_numpy(xtr), torch.from_numpy(ytr)
    for epoch in range(12):
        for i in range(0, len(xt), 64):
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(net(xt[i:i + 64]), yt[i:i + 64])
            loss.backward()
            opt.step()
    net.eval()
    batch = len(xte)
    src = tmp_path / "digits.onnx"
    torch.onnx.export(net, (torch.from_numpy(xte),), str(src), input_names=["x"],
                      opset_version=13)
    # Four calibration batches of training images (the exported model's
    # batch is the test set's size).
    calib = [xtr[np.arange(j * 97, j * 97 + batch) % len(xtr)] for j in range(4)]
    q = tessel.quantize_onnx(src, calib, tmp_path / "digits.int8.onnx")
    assert sum(n.op_type == "QuantizeLinear" for n in q.graph.node) >= 4

    f32 = tessel.compile(str(src))
    i8 = tessel.compile(str(tmp_path / "digits.int8.onnx"))
    # The compiler's own static int8 (tessel-compile --quantize=int8).
    s8 = tessel.compile(str(src), quantize="int8", calibration_data=calib)
    a, b, c = f32(xte), i8(xte), s8(xte)
    acc_f = (a.argmax(1) == yte).mean()
    acc_q = (b.argmax(1) == yte).mean()
    acc_s = (c.argmax(1) == yte).mean()
    assert acc_f > 0.9, acc_f                       # the float model learned
    print(f"digits: float {acc_f:.4f}, int8 QDQ {acc_q:.4f}, int8 static {acc_s:.4f}")
    assert abs(acc_f - acc_q) <= 0.01, (acc_f, acc_q)
    assert abs(acc_f - acc_s) <= 0.01, (acc_f, acc_s)
    assert np.abs(a - b).max() > 1e-3               # int8 is not float
    assert np.abs(a - c).max() > 1e-3


def test_compile_with_quantize_int8(tmp_path):
    """tessel.compile(quantize="int8") is tessel-compile --quantize=int8:
    the compiler calibrates on the samples (any source: torch here, MLIR
    and ONNX below), writes the report, and refuses bad arguments."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(1)
    net = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(),
                              torch.nn.Linear(64, 8)).eval()
    x = torch.randn(4, 32)
    calib = [torch.randn(4, 32).numpy() for _ in range(16)]
    report = tmp_path / "report.json"
    q = tessel.compile(net, (x,), quantize="int8", calibration_data=calib,
                       quantize_report=report)
    f = tessel.compile(net, (x,))
    a, b = f(x), q(x)
    assert cosine(a, b) > 0.99 and not np.array_equal(a, b)
    import json
    layers = json.loads(report.read_text())["layers"]
    assert [l["precision"] for l in layers] == ["int8", "int8"]
    assert all(l["sqnr_db"] > 20 for l in layers), layers
    # A stacked [K, *shape] array is the same calibration data.
    q2 = tessel.compile(net, (x,), quantize="int8",
                        calibration_data=np.stack(calib))
    np.testing.assert_array_equal(q2(x), b)
    with pytest.raises(ValueError, match="needs calibration_data"):
        tessel.compile(net, (x,), quantize="int8")
    with pytest.raises(ValueError, match="quantize must be None, 'int8' or 'int8-dynamic'"):
        tessel.compile(net, (x,), quantize="int4", calibration_data=calib)
    with pytest.raises(ValueError, match="calibration_data applies with quantize"):
        tessel.compile(net, (x,), calibration_data=calib)
    with pytest.raises(ValueError, match="quantize_exclude and quantize_report apply"):
        tessel.compile(net, (x,), quantize_exclude=["fc"])
    with pytest.raises(tessel.CompileError, match="no node named 'nope'"):
        tessel.compile(net, (x,), quantize="int8", calibration_data=calib,
                       quantize_exclude=["nope"])
    with pytest.raises(tessel.CompileError, match="holds f64 values"):
        tessel.compile(net, (x,), quantize="int8",
                       calibration_data=[c.astype(np.float64) for c in calib])
    with pytest.raises(tessel.CompileError, match=r"is 16x4x31xf32, expected \[K, \*input shape\]"):
        tessel.compile(net, (x,), quantize="int8",
                       calibration_data=[c[:, :31] for c in calib])
    with pytest.raises(ValueError, match="calibration sample 1 has 2 array"):
        tessel.compile(net, (x,), quantize="int8",
                       calibration_data=[calib[0], (calib[1], calib[2])])
    with pytest.raises(tessel.CompileError, match=r"percentile must be in \[50, 100\], got 150"):
        tessel.compile(net, (x,), quantize="int8", calibration_data=calib,
                       calibration_method="percentile", calibration_percentile=150)
    with pytest.raises(tessel.CompileError, match="calibration_method must be"):
        tessel.compile(net, (x,), quantize="int8", calibration_data=calib,
                       calibration_method="kl")


def _static_act(v, lo, hi):
    """A calibrated activation through uint8 and back, as static int8
    quantizes it: range widened to hold 0, scale (hi - lo) / 255, zero
    point round(-lo / scale), ONNX QuantizeLinear (f32 division, ties to
    even, saturate)."""
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    scale = (hi - lo) / 255.0 if hi > lo else 1.0
    zp = float(np.clip(np.rint(-lo / scale), 0, 255))
    s32 = np.float32(scale)
    q = np.clip(np.rint(v.astype(np.float32) / s32) + zp, 0, 255)
    return (q - zp) * np.float64(s32)


def _static_weight(w, axis):
    """Weights through symmetric per-channel int8 and back."""
    other = tuple(d for d in range(w.ndim) if d != axis)
    s = (np.abs(w).max(axis=other, keepdims=True) / np.float32(127)).astype(np.float32)
    s = np.where(s > 0, s, np.float32(1))
    return np.clip(np.rint(w / s), -127, 127) * s.astype(np.float64)


@pytest.mark.parametrize("method", ["minmax", "percentile"])
def test_static_int8_matches_its_definition(method):
    """Gemm (transB) -> Relu -> MatMul quantized by the compiler from
    calibration samples equals a numpy reference of static int8: each
    layer's input quantized per tensor over the range calibration saw
    (minmax, or numpy's percentile), weights per output column; and really
    differs from float."""
    rng = np.random.default_rng(5)
    m, k, n, o = 6, 70, 40, 19
    w1 = (rng.standard_normal((n, k)) * 0.1).astype(np.float32)
    b1 = (rng.standard_normal(n) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((n, o)) * 0.2).astype(np.float32)
    nodes = [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="fc1", transB=1),
             helper.make_node("Relu", ["h"], ["r"], name="relu"),
             helper.make_node("MatMul", ["r", "w2"], ["y"], name="fc2")]
    g = helper.make_graph(nodes, "static", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, o])],
                          [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"),
                           numpy_helper.from_array(w2, "w2")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    calib = [rng.standard_normal((m, k)).astype(np.float32) * (1 + i) for i in range(5)]
    x = rng.standard_normal((m, k)).astype(np.float32) * 2

    def rng_of(values):
        v = np.concatenate([a.reshape(-1) for a in values]).astype(np.float64)
        if method == "minmax":
            return v.min(), v.max()
        return np.percentile(v, 0.5), np.percentile(v, 99.5)

    hidden = [np.maximum(c.astype(np.float64) @ w1.T.astype(np.float64) + b1, 0)
              .astype(np.float32) for c in calib]
    lo1, hi1 = rng_of(calib)
    lo2, hi2 = rng_of(hidden)
    h = _static_act(x, lo1, hi1) @ _static_weight(w1.T, 1) + b1
    r = np.maximum(h, 0)
    ref = _static_act(r, lo2, hi2) @ _static_weight(w2, 1)

    q = tessel.compile(model.SerializeToString(), quantize="int8",
                       calibration_data=calib, calibration_method=method,
                       calibration_percentile=99.5)
    f = tessel.compile(model.SerializeToString())
    got, flt = q(x), f(x)
    scale = np.abs(ref).max()
    np.testing.assert_allclose(got, ref, rtol=0, atol=2e-4 * scale)
    assert np.abs(flt - ref).max() > 2e-3 * scale     # int8 is not float


# ---- dynamic quantization: quantize="int8-dynamic" -----------------------------

def test_int8_dynamic_matches_its_integer_definition():
    """Gemm (transB) and MatMul with constant weights run on int8: weights
    per column and activations per row, symmetric; the result equals the
    exact integer product rescaled (numpy reference), and really differs
    from the float one."""
    rng = np.random.default_rng(3)
    m, k, n = 70, 300, 130                     # remainders in every tile
    w1 = (rng.standard_normal((n, k)) * 0.1).astype(np.float32)   # Gemm, transB
    b1 = (rng.standard_normal(n) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((n, 19)) * 0.1).astype(np.float32)  # MatMul
    nodes = [helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], transB=1),
             helper.make_node("MatMul", ["h", "w2"], ["y"])]
    g = helper.make_graph(nodes, "dyn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, 19])],
                          [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"),
                           numpy_helper.from_array(w2, "w2")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    x = rng.standard_normal((m, k)).astype(np.float32)
    x[5] = 0.0                                 # an all-zero row stays zero

    def dyn_matmul(a, w):                      # a: m x k, w: k x n
        sw = np.abs(w).max(axis=0) / np.float32(127)
        qw = np.clip(np.rint(w / sw), -127, 127)
        sa = np.maximum(np.abs(a).max(axis=1, keepdims=True) * np.float32(1 / 127),
                        np.float32(np.finfo(np.float32).tiny))
        qa = np.clip(np.rint(a * (np.float32(1) / sa)), -127, 127)
        acc = qa.astype(np.int64) @ qw.astype(np.int64)
        return (acc.astype(np.float32) * sa * sw).astype(np.float32)

    h_ref = dyn_matmul(x, w1.T) + b1
    y_ref = dyn_matmul(h_ref, w2)
    y_float = (x @ w1.T + b1) @ w2
    y = tessel.compile(model.SerializeToString(), quantize="int8-dynamic")(x)
    # Equal up to float rounding of the rescale (and a rare one-step change
    # of a quantized h at a rounding tie).
    np.testing.assert_allclose(y, y_ref, rtol=1e-3, atol=2e-3)
    assert cosine(y, y_float) > 0.999
    assert np.abs(y - y_float).max() > 1e-3    # it really ran on int8
    np.testing.assert_array_equal(y[5], dyn_matmul(np.broadcast_to(b1, (1, n)), w2)[0])


def test_int8_dynamic_bad_values():
    model = qdq_matmul_model(np.ones((3, 2), np.int8), np.float32(1), 0, np.float32(1), 0,
                             np.float32(1), 0, TensorProto.UINT8, m=2)
    with pytest.raises(ValueError, match="quantize must be"):
        tessel.compile(model.SerializeToString(), quantize="int4")
    with pytest.raises(ValueError, match="calibration_data applies"):
        tessel.compile(model.SerializeToString(), quantize="int8-dynamic",
                       calibration_data=[np.zeros((2, 3), np.float32)])


@pytest.mark.parametrize("opt_level", [0, 2])
@pytest.mark.parametrize("c", [13, 16])
@pytest.mark.parametrize("kernel,stride,pads,dilation",
                         [(1, 1, 0, 1), (1, 2, 0, 1), (3, 2, 1, 1), (3, 1, 1, 1), (7, 2, 3, 1),
                          (3, 1, 2, 2)])
def test_qdq_conv_runs_on_integers_and_matches_numpy(opt_level, c, kernel, stride, pads,
                                                     dilation):
    """A QDQ Conv (uint8 activation, per-channel int8 weights, float bias):
    at -O2 the int8 kernel's product (pointwise: the pixel matrix; else the
    im2col matrix, read in place in the input padded with its zero point:
    13 channels gather each row, 16 read it as one run per filter row, or
    with dilation one per tap); at both levels equal to numpy's evaluation
    of the QDQ graph. H = 8 with stride 2 leaves a row no window reads
    (ONNX floors the output size): padding, or with the 1x1 stride-2
    projection an input row, the integer convolution drops."""
    rng = np.random.default_rng(11)
    f, h, w = 70, 8, 7                          # remainders in every tile
    wq = rng.integers(-127, 128, size=(f, c, kernel, kernel), dtype=np.int8)
    ws = rng.uniform(0.005, 0.02, f).astype(np.float32)
    b = rng.standard_normal(f).astype(np.float32)
    xs, xz = np.float32(0.04), 131
    inits = [numpy_helper.from_array(wq, "wq"), numpy_helper.from_array(ws, "ws"),
             numpy_helper.from_array(np.zeros(f, np.int8), "wz"),
             numpy_helper.from_array(b, "b"),
             numpy_helper.from_array(np.array(xs, np.float32), "xs"),
             numpy_helper.from_array(np.array(xz, np.uint8), "xz")]
    span = dilation * (kernel - 1) + 1
    oh = (h + 2 * pads - span) // stride + 1
    ow = (w + 2 * pads - span) // stride + 1
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xf"]),
             helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["wf"], axis=0),
             helper.make_node("Conv", ["xf", "wf", "b"], ["y"], strides=[stride, stride],
                              pads=[pads] * 4, dilations=[dilation, dilation])]
    g = helper.make_graph(nodes, "qconv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, h, w])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, f, oh, ow])], inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    x = (rng.standard_normal((1, c, h, w)) * 3).astype(np.float32)
    xf = (quantize(x, xs, xz, 0, 255) - xz) * np.float64(xs)
    xp = np.pad(xf, ((0, 0), (0, 0), (pads, pads), (pads, pads)))   # float zeros
    wf = wq.astype(np.float64) * ws[:, None, None, None]
    y_ref = np.zeros((1, f, oh, ow))
    for i in range(oh):
        for j in range(ow):
            win = xp[0, :, i * stride:i * stride + span:dilation,
                     j * stride:j * stride + span:dilation]
            y_ref[0, :, i, j] = np.einsum("fckl,ckl->f", wf, win)
    y_ref += b[None, :, None, None]
    y = tessel.compile(model.SerializeToString(), opt_level=opt_level)(x)
    np.testing.assert_allclose(y, y_ref, rtol=1e-5, atol=1e-4)


def _qdq_depthwise_model(wq, ws, b, xs, xz, x_type, kernel, stride, pads, dilation,
                         h, w, ys=None, yz=None):
    c = wq.shape[0]
    x_np = np.uint8 if x_type == TensorProto.UINT8 else np.int8
    inits = [numpy_helper.from_array(wq, "wq"), numpy_helper.from_array(ws, "ws"),
             numpy_helper.from_array(np.zeros(c, np.int8), "wz"),
             numpy_helper.from_array(b, "b"),
             numpy_helper.from_array(np.array(xs, np.float32), "xs"),
             numpy_helper.from_array(np.array(xz, x_np), "xz")]
    span = dilation * (kernel - 1) + 1
    oh = (h + pads[0] + pads[2] - span) // stride + 1
    ow = (w + pads[1] + pads[3] - span) // stride + 1
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xf"]),
             helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["wf"], axis=0),
             helper.make_node("Conv", ["xf", "wf", "b"], ["y"], strides=[stride, stride],
                              pads=pads, dilations=[dilation, dilation], group=c)]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, c, oh, ow])]
    if ys is not None:   # ReLU, then quantized to uint8 for a next layer
        inits += [numpy_helper.from_array(np.array(ys, np.float32), "ys"),
                  numpy_helper.from_array(np.array(yz, np.uint8), "yz")]
        nodes += [helper.make_node("Relu", ["y"], ["r"]),
                  helper.make_node("QuantizeLinear", ["r", "ys", "yz"], ["yq"])]
        outputs.append(helper.make_tensor_value_info("yq", TensorProto.UINT8, [1, c, oh, ow]))
    g = helper.make_graph(nodes, "qdw", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, h, w])],
                          outputs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), oh, ow


@pytest.mark.parametrize("x_type,xz", [(TensorProto.UINT8, 131), (TensorProto.INT8, -7)])
@pytest.mark.parametrize("c", [13, 70])             # below one 16-channel block; past 64
@pytest.mark.parametrize("kernel,stride,pads,dilation",
                         [(3, 1, [1, 1, 1, 1], 1), (3, 2, [1, 1, 1, 1], 1), (5, 2, [2, 1, 2, 0], 1),
                          (3, 1, [2, 2, 2, 2], 2), (1, 1, [0, 0, 0, 0], 1), (7, 1, [3, 3, 3, 3], 1)])
def test_qdq_depthwise_conv_runs_on_integers_and_matches_numpy(x_type, xz, c, kernel, stride, pads,
                                                               dilation):
    """A QDQ depthwise Conv (group = C, per-channel int8 weights, float
    bias) runs as tessel.depthwise_conv2d_i8: its padding reads as the zero
    point, so the float output equals numpy's exact integer sums times the
    scales, and a following ReLU + QuantizeLinear, done in the kernel's
    epilogue, equals numpy's quantization of it."""
    rng = np.random.default_rng(5)
    h, w = 9, 11
    wq = rng.integers(-127, 128, size=(c, 1, kernel, kernel), dtype=np.int8)
    ws = rng.uniform(0.005, 0.02, c).astype(np.float32)
    b = rng.standard_normal(c).astype(np.float32)
    xs, ys, yz = np.float32(0.04), np.float32(0.03), 9
    model, oh, ow = _qdq_depthwise_model(wq, ws, b, xs, xz, x_type, kernel, stride, pads, dilation,
                                         h, w, ys, yz)
    x = (rng.standard_normal((1, c, h, w)) * 3).astype(np.float32)
    lo, hi = (0, 255) if x_type == TensorProto.UINT8 else (-128, 127)
    # The exact integer sums over the zero-padded (dequantized: zero-point)
    # input, then the scales and bias in float64.
    xd = (quantize(x, xs, xz, lo, hi) - xz).astype(np.int64)
    xp = np.pad(xd, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    acc = np.zeros((c, oh, ow), np.int64)
    for kh in range(kernel):
        for kw in range(kernel):
            win = xp[0, :, kh * dilation:, kw * dilation:][:, :(oh - 1) * stride + 1:stride,
                                                           :(ow - 1) * stride + 1:stride]
            acc += win * wq[:, 0, kh, kw, None, None]
    y_ref = acc * (np.float64(xs) * ws[:, None, None]) + b[:, None, None]
    yq_ref = quantize(np.maximum(y_ref, 0), ys, yz, 0, 255)

    # 1x1 is an elementwise product once TOSA canonicalizes it (integer
    # too); any other runs in the int8 kernel.
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.mlir")
        tessel.ir.Module.from_onnx(model)._native.compile(path, opt_level=2,
                                                          compile_to="bufferized")
        with open(path) as f:
            bufferized = f.read()
    assert ("tessel.depthwise_conv2d_i8" in bufferized) == (kernel > 1)
    assert "linalg.depthwise_conv_2d" not in bufferized

    y, yq = tessel.compile(model.SerializeToString(), opt_level=2)(x)
    np.testing.assert_allclose(y[0], y_ref, rtol=1e-5, atol=1e-4)
    # Requantization may round differently right at a half-way point.
    assert np.abs(yq[0].astype(np.int32) - yq_ref).max() <= 1
    assert (yq[0] == yq_ref).mean() > 0.97


@pytest.mark.parametrize("opt_level", [0, 2])
@pytest.mark.parametrize("c,f,groups", [(8, 12, 2), (12, 6, 3), (32, 32, 8), (6, 12, 6), (5, 15, 5)])
@pytest.mark.parametrize("kernel,stride,pads,dilation",
                         [(1, 1, [0, 0, 0, 0], 1), (3, 2, [1, 1, 1, 1], 1), (3, 1, [2, 1, 2, 0], 2)])
def test_qdq_grouped_conv_runs_on_integers_and_matches_numpy(opt_level, c, f, groups, kernel,
                                                             stride, pads, dilation):
    """A QDQ grouped Conv (1 < group, per-channel int8 weights, float bias),
    including depthwise with a channel multiplier (group = C < F), runs on
    the stored integers one group (or, for multipliers, one filter per
    channel) at a time: its float output equals numpy's exact integer sums
    over the zero-padded input times the scales, and a following ReLU +
    QuantizeLinear equals numpy's quantization of it. H = 9 with stride 2
    leaves padding no window reads."""
    rng = np.random.default_rng(groups * 7 + kernel)
    h, w, cg, fg = 9, 10, c // groups, f // groups
    wq = rng.integers(-127, 128, size=(f, cg, kernel, kernel), dtype=np.int8)
    ws = rng.uniform(0.005, 0.02, f).astype(np.float32)
    b = rng.standard_normal(f).astype(np.float32)
    xs, xz, ys, yz = np.float32(0.04), 131, np.float32(0.03), 9
    inits = [numpy_helper.from_array(wq, "wq"), numpy_helper.from_array(ws, "ws"),
             numpy_helper.from_array(np.zeros(f, np.int8), "wz"),
             numpy_helper.from_array(b, "b"),
             numpy_helper.from_array(np.array(xs, np.float32), "xs"),
             numpy_helper.from_array(np.array(xz, np.uint8), "xz"),
             numpy_helper.from_array(np.array(ys, np.float32), "ys"),
             numpy_helper.from_array(np.array(yz, np.uint8), "yz")]
    span = dilation * (kernel - 1) + 1
    oh = (h + pads[0] + pads[2] - span) // stride + 1
    ow = (w + pads[1] + pads[3] - span) // stride + 1
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xf"]),
             helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["wf"], axis=0),
             helper.make_node("Conv", ["xf", "wf", "b"], ["y"], strides=[stride, stride],
                              pads=pads, dilations=[dilation, dilation], group=groups),
             helper.make_node("Relu", ["y"], ["r"]),
             helper.make_node("QuantizeLinear", ["r", "ys", "yz"], ["yq"])]
    g = helper.make_graph(nodes, "qgconv",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, h, w])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, f, oh, ow]),
                           helper.make_tensor_value_info("yq", TensorProto.UINT8, [1, f, oh, ow])],
                          inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    x = (rng.standard_normal((1, c, h, w)) * 3).astype(np.float32)
    xd = (quantize(x, xs, xz, 0, 255) - xz).astype(np.int64)
    xp = np.pad(xd, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    acc = np.zeros((f, oh, ow), np.int64)
    for o in range(f):
        grp = xp[0, (o // fg) * cg:(o // fg + 1) * cg]
        for kh in range(kernel):
            for kw in range(kernel):
                win = grp[:, kh * dilation:, kw * dilation:][:, :(oh - 1) * stride + 1:stride,
                                                             :(ow - 1) * stride + 1:stride]
                acc[o] += np.einsum("chw,c->hw", win, wq[o, :, kh, kw].astype(np.int64))
    y_ref = acc * (np.float64(xs) * ws[:, None, None]) + b[:, None, None]
    yq_ref = quantize(np.maximum(y_ref, 0), ys, yz, 0, 255)

    if opt_level == 2:   # every product on integers: no float convolution left
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.mlir")
            tessel.ir.Module.from_onnx(model)._native.compile(path, opt_level=2,
                                                              compile_to="bufferized")
            with open(path) as fh:
                bufferized = fh.read()
        assert "linalg.conv_2d" not in bufferized and "linalg.depthwise_conv_2d" not in bufferized
        assert "f32" not in "".join(l for l in bufferized.splitlines() if "packed" in l)

    y, yq = tessel.compile(model.SerializeToString(), opt_level=opt_level)(x)
    np.testing.assert_allclose(y[0], y_ref, rtol=1e-5, atol=1e-4)
    assert np.abs(yq[0].astype(np.int32) - yq_ref).max() <= 1
    assert (yq[0] == yq_ref).mean() > 0.97
