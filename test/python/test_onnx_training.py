"""The optimizer steps of ONNX's ai.onnx.preview.training domain (Adagrad,
Momentum standard and Nesterov, Adam) against numpy transcriptions of the
ONNX definitions, at a first (T = 0) and a later update, for several
tensors at once, in models that import that domain alone or with the
default one; and what is rejected (Gradient, a bad mode, a default-domain
node the model imports no opset for), each with a diagnostic."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import tessel

TRAINING = "ai.onnx.preview.training"


def model(op, state, shapes, outputs, extra_nodes=(), default_opset=None, **attrs):
    """`op` over R, T, X1..Xn, G1..Gn and the `state` lists (names given)."""
    n = len(shapes)
    lists = ["X", "G"] + state
    inputs = ["R", "T"] + [f"{p}{k}" for p in lists for k in range(n)]
    vi = helper.make_tensor_value_info
    ins = [vi("R", TensorProto.FLOAT, []), vi("T", TensorProto.INT64, [])]
    ins += [vi(f"{p}{k}", TensorProto.FLOAT, shapes[k]) for p in lists for k in range(n)]
    outs = [vi(f"{p}{k}_new", TensorProto.FLOAT, shapes[k]) for p in outputs
            for k in range(n)]
    node = helper.make_node(op, inputs, [o.name for o in outs], name="opt0",
                            domain=TRAINING, **attrs)
    opsets = [helper.make_opsetid(TRAINING, 1)]
    if default_opset:
        opsets.append(helper.make_opsetid("", default_opset))
    g = helper.make_graph(list(extra_nodes) + [node], "t", ins, outs)
    return helper.make_model(g, opset_imports=opsets)


def data(n, shapes, lists, seed):
    rng = np.random.default_rng(seed)
    return {f"{p}{k}": rng.standard_normal(shapes[k]).astype(np.float32) + (2 if p == "H" else 0)
            for p in lists for k in range(n)}


SHAPES = [[3], [2, 4]]


@pytest.mark.parametrize("t", [0, 7])
def test_adagrad(t):
    r, decay, eps, norm = 0.1, 0.5, 1e-5, 0.01
    d = data(2, SHAPES, ["X", "G", "H"], t)
    d["H0"], d["H1"] = np.abs(d["H0"]), np.abs(d["H1"])
    f = tessel.compile(model("Adagrad", ["H"], SHAPES, ["X", "H"], decay_factor=decay,
                             epsilon=eps, norm_coefficient=norm).SerializeToString())
    got = f(np.float32(r), np.int64(t), *d.values())
    lr = r / (1 + t * decay)
    for k in range(2):
        x, g, h = d[f"X{k}"], d[f"G{k}"], d[f"H{k}"]
        g_reg = norm * x + g
        h_new = h + g_reg * g_reg
        np.testing.assert_allclose(got[k], x - lr * g_reg / (np.sqrt(h_new) + eps), rtol=1e-5)
        np.testing.assert_allclose(got[2 + k], h_new, rtol=1e-6)


@pytest.mark.parametrize("mode", ["standard", "nesterov"])
@pytest.mark.parametrize("t", [0, 3])
def test_momentum(mode, t):
    r, alpha, beta, norm = 0.05, 0.9, 0.2, 0.02
    d = data(2, SHAPES, ["X", "G", "V"], t + 10)
    f = tessel.compile(model("Momentum", ["V"], SHAPES, ["X", "V"], alpha=alpha, beta=beta,
                             norm_coefficient=norm, mode=mode).SerializeToString())
    got = f(np.float32(r), np.int64(t), *d.values())
    b = beta if t > 0 else 1.0
    for k in range(2):
        x, g, v = d[f"X{k}"], d[f"G{k}"], d[f"V{k}"]
        g_reg = norm * x + g
        v_new = alpha * v + b * g_reg
        x_new = x - r * (v_new if mode == "standard" else g_reg + alpha * v_new)
        np.testing.assert_allclose(got[k], x_new, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got[2 + k], v_new, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("t", [0, 5])
def test_adam(t):
    r, alpha, beta, eps, norm, post = 0.1, 0.8, 0.95, 1e-3, 0.01, 0.05
    d = data(2, SHAPES, ["X", "G", "V", "H"], t + 20)
    d["H0"], d["H1"] = np.abs(d["H0"]), np.abs(d["H1"])
    f = tessel.compile(model("Adam", ["V", "H"], SHAPES, ["X", "V", "H"], alpha=alpha,
                             beta=beta, epsilon=eps, norm_coefficient=norm,
                             norm_coefficient_post=post).SerializeToString())
    got = f(np.float32(r), np.int64(t), *d.values())
    lr = r * np.sqrt(1 - beta ** t) / (1 - alpha ** t) if t > 0 else r
    for k in range(2):
        x, g, v, h = d[f"X{k}"], d[f"G{k}"], d[f"V{k}"], d[f"H{k}"]
        g_reg = norm * x + g
        v_new = alpha * v + (1 - alpha) * g_reg
        h_new = beta * h + (1 - beta) * g_reg * g_reg
        x_new = (1 - post) * (x - lr * v_new / (np.sqrt(h_new) + eps))
        np.testing.assert_allclose(got[k], x_new, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got[2 + k], v_new, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got[4 + k], h_new, rtol=1e-5, atol=1e-6)


def test_optimizer_after_default_domain_ops():
    # The gradient comes from a default-domain op (G = 2 * X0 * X0' ...).
    shapes = [[4]]
    m = model("Momentum", ["V"], shapes, ["X", "V"], default_opset=17, alpha=0.5,
              beta=1.0, norm_coefficient=0.0, mode="standard",
              extra_nodes=[helper.make_node("Mul", ["X0", "X0"], ["sq"])])
    m.graph.node[1].input[3] = "sq"
    f = tessel.compile(m.SerializeToString())
    x, g, v = (np.arange(4, dtype=np.float32) + i for i in range(3))
    x_new, v_new = f(np.float32(0.1), np.int64(1), x, g, v)
    np.testing.assert_allclose(v_new, 0.5 * v + x * x, rtol=1e-6)
    np.testing.assert_allclose(x_new, x - 0.1 * (0.5 * v + x * x), rtol=1e-6)


def test_gradient_is_rejected():
    vi = helper.make_tensor_value_info
    node = helper.make_node("Gradient", ["a"], ["da"], name="grad0", domain=TRAINING,
                            xs=["a"], y="a")
    g = helper.make_graph([node], "t", [vi("a", TensorProto.FLOAT, [2])],
                          [vi("da", TensorProto.FLOAT, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid(TRAINING, 1),
                                            helper.make_opsetid("", 17)])
    with pytest.raises(tessel.CompileError) as e:
        tessel.compile(m.SerializeToString())
    assert "node 'grad0' (Gradient, opset 1)" in str(e.value)
    assert "does not differentiate graphs" in str(e.value)


def test_bad_mode_and_missing_default_opset():
    m = model("Momentum", ["V"], [[2]], ["X", "V"], alpha=0.5, beta=1.0,
              norm_coefficient=0.0, mode="heavy")
    with pytest.raises(tessel.CompileError, match="attribute 'mode'"):
        tessel.compile(m.SerializeToString())
    # A default-domain node in a model that imports only the training domain.
    m = model("Momentum", ["V"], [[2]], ["X", "V"], alpha=0.5, beta=1.0,
              norm_coefficient=0.0, mode="standard",
              extra_nodes=[helper.make_node("Relu", ["X0"], ["r"], name="relu0")])
    with pytest.raises(tessel.CompileError) as e:
        tessel.compile(m.SerializeToString())
    # (the ONNX checker's words; the importer's own check backs it up)
    assert "No opset import for domain ''" in str(e.value), str(e.value)
    assert "relu0" in str(e.value)


def test_wrong_arity_is_rejected():
    m = model("Adam", ["V", "H"], [[2]], ["X", "V", "H"])
    m.graph.node[0].input.pop()
    with pytest.raises(tessel.CompileError):
        tessel.compile(m.SerializeToString())
