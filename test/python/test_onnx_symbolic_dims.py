"""ONNX graph inputs with symbolic dimensions (dim_param, as exporters
write a dynamic batch): compiled once, without --shape, and run at several
sizes against numpy; the names bind at each call (two inputs sharing one
must agree); an op that does not take run-time sizes yet asks for --shape,
and pinning then compiles it."""
import numpy as np
import pytest
from onnx import TensorProto as TP, helper, numpy_helper

import tessel

vi = helper.make_tensor_value_info
rng = np.random.default_rng(0)
W1 = rng.standard_normal((8, 16)).astype(np.float32)
W2 = rng.standard_normal((4, 16)).astype(np.float32)
B2 = rng.standard_normal(4).astype(np.float32)


def mlp():
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]),
             helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("Gemm", ["r", "w2", "b2"], ["z"], transB=1),
             helper.make_node("Softmax", ["z"], ["p"], axis=-1),
             helper.make_node("Add", ["p", "bias"], ["y"])]
    g = helper.make_graph(nodes, "mlp", [vi("x", TP.FLOAT, ["batch", 8]),
                                         vi("bias", TP.FLOAT, ["batch", 1])],
                          [vi("y", TP.FLOAT, ["batch", 4])],
                          initializer=[numpy_helper.from_array(W1, "w1"),
                                       numpy_helper.from_array(W2, "w2"),
                                       numpy_helper.from_array(B2, "b2")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def reference(x, bias):
    z = np.maximum(x @ W1, 0) @ W2.T + B2
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True) + bias


def test_symbolic_batch_compiles_once_and_runs_at_several_sizes():
    f = tessel.compile(mlp().SerializeToString())
    for n in (1, 2, 5, 33):
        x = rng.standard_normal((n, 8)).astype(np.float32)
        bias = rng.standard_normal((n, 1)).astype(np.float32)
        y = f(x, bias)
        assert y.shape == (n, 4)
        np.testing.assert_allclose(y, reference(x, bias), rtol=1e-5, atol=1e-6)
    # 'batch' binds once per call: the inputs must agree on it.
    with pytest.raises(tessel.InvocationError):
        f(np.zeros((3, 8), np.float32), np.zeros((2, 1), np.float32))


def test_op_without_run_time_sizes_asks_for_a_pin():
    w = numpy_helper.from_array(np.ones((2, 3, 1, 1), np.float32), "w")
    g = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], name="conv0")], "c",
                          [vi("x", TP.FLOAT, ["N", 3, "H", 4])],
                          [vi("y", TP.FLOAT, ["N", 2, "H", 4])], initializer=[w])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(tessel.CompileError) as e:
        tessel.compile(m.SerializeToString())
    assert "node 'conv0' (Conv" in str(e.value) and "--shape" in str(e.value)
    f = tessel.compile(m.SerializeToString(), shapes={"x": [2, 3, 4, 4]})
    x = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)
    np.testing.assert_allclose(f(x), np.repeat(x.sum(1, keepdims=True), 2, 1), rtol=1e-5)


def test_embedding_lookup_with_symbolic_batch_and_length():
    # Token ids [batch, seq] into a static table: Gather with run-time-sized
    # indices, then the mean over the sequence.
    table = rng.standard_normal((10, 6)).astype(np.float32)
    nodes = [helper.make_node("Gather", ["table", "ids"], ["e"], axis=0),
             helper.make_node("ReduceMean", ["e"], ["y"], axes=[1], keepdims=0)]
    g = helper.make_graph(nodes, "emb", [vi("ids", TP.INT64, ["batch", "seq"])],
                          [vi("y", TP.FLOAT, ["batch", 6])],
                          initializer=[numpy_helper.from_array(table, "table")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    f = tessel.compile(m.SerializeToString())
    for b, t in ((1, 1), (2, 5), (3, 7)):
        ids = rng.integers(-10, 10, size=(b, t)).astype(np.int64)
        np.testing.assert_allclose(f(ids), table[ids].mean(1), rtol=1e-5, atol=1e-6)
    with pytest.raises(tessel.InvocationError, match="out of range"):
        f(np.array([[10]], np.int64))


def test_transformer_pieces_with_symbolic_batch_and_sequence():
    # LayerNormalization over the static feature dim, then the heads split
    # (Reshape with 0 entries) and moved (Transpose): [batch, seq, 8] ->
    # [batch, 2, seq, 4]; then a 3-D MatMul, which does not take run-time
    # sizes yet and asks for a pin.
    gamma = rng.standard_normal(8).astype(np.float32)
    beta = rng.standard_normal(8).astype(np.float32)
    nodes = [helper.make_node("LayerNormalization", ["x", "g", "b"], ["ln"], axis=-1),
             helper.make_node("Reshape", ["ln", "heads"], ["r"]),
             helper.make_node("Transpose", ["r"], ["y"], perm=[0, 2, 1, 3])]
    inits = [numpy_helper.from_array(gamma, "g"), numpy_helper.from_array(beta, "b"),
             numpy_helper.from_array(np.array([0, 0, 2, 4], np.int64), "heads")]
    g = helper.make_graph(nodes, "t", [vi("x", TP.FLOAT, ["batch", "seq", 8])],
                          [vi("y", TP.FLOAT, ["batch", 2, "seq", 4])], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    f = tessel.compile(m.SerializeToString())
    for b, t in ((1, 1), (2, 3), (3, 6)):
        x = rng.standard_normal((b, t, 8)).astype(np.float32)
        ln = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
        ref = (ln * gamma + beta).reshape(b, t, 2, 4).transpose(0, 2, 1, 3)
        np.testing.assert_allclose(f(x), ref, rtol=1e-5, atol=1e-5)
    g.node.append(helper.make_node("Transpose", ["y"], ["y2"], perm=[0, 1, 3, 2]))
    g.node.append(helper.make_node("MatMul", ["y", "y2"], ["z"], name="scores"))
    del g.output[:]
    g.output.append(vi("z", TP.FLOAT, ["batch", 2, "seq", "seq"]))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    # The attention scores: a batched MatMul over the run-time batch and
    # sequence (both operands [batch, 2, seq, *]).
    f = tessel.compile(m.SerializeToString())
    for b, t in ((1, 1), (2, 3), (3, 6)):
        x = rng.standard_normal((b, t, 8)).astype(np.float32)
        ln = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
        y = (ln * gamma + beta).reshape(b, t, 2, 4).transpose(0, 2, 1, 3)
        np.testing.assert_allclose(f(x), y @ y.transpose(0, 1, 3, 2), rtol=1e-4,
                                   atol=1e-4)


def _torch_cnn_with_symbolic_batch(module, image):
    """`module` exported with a symbolic batch (dynamic_axes), as users do."""
    import io
    import torch
    f = io.BytesIO()
    torch.onnx.export(module, (torch.randn(2, *image),), f, opset_version=17,
                      input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    return f.getvalue()


def test_resnet18_with_symbolic_batch_runs_at_several_batches():
    """Conv (strided, padded, cropped where TOSA needs it), BatchNorm,
    MaxPool, GlobalAveragePool, Flatten and Gemm over a run-time batch: one
    artifact, batches 1 and 3, against PyTorch."""
    import torch
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None).eval()
    f = tessel.compile(_torch_cnn_with_symbolic_batch(model, (3, 32, 32)))
    assert str(f.signature) == "main(x: batchx3x32x32xf32) -> (y: batchx1000xf32)"
    for n in (1, 3):
        x = torch.randn(n, 3, 32, 32)
        with torch.no_grad():
            ref = model(x).numpy()
        got = f(x.numpy())
        assert got.shape == (n, 1000)
        np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())


def test_depthwise_and_pooling_with_symbolic_batch():
    import torch
    torch.manual_seed(1)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(4, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
        torch.nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=8),
        torch.nn.AvgPool2d(2), torch.nn.MaxPool2d(2, ceil_mode=True),
        torch.nn.AdaptiveMaxPool2d(1), torch.nn.Flatten()).eval()
    with torch.no_grad():
        model[1].running_mean.uniform_(-1, 1)
        model[1].running_var.uniform_(0.5, 2)
    f = tessel.compile(_torch_cnn_with_symbolic_batch(model, (4, 12, 12)))
    for n in (1, 2, 5):
        x = torch.randn(n, 4, 12, 12)
        with torch.no_grad():
            ref = model(x).numpy()
        np.testing.assert_allclose(f(x.numpy()), ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("opt_level", [0, 3])
def test_grouped_conv_with_symbolic_batch(opt_level):
    """General groups (neither 1 nor depthwise) over a run-time batch: the
    kernel library's grouped convolution at -O3, a convolution per group at
    -O0; strided, padded and cropped (7 rows, stride 2, kernel 2)."""
    import torch
    torch.manual_seed(2)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(4, 6, 1, groups=2), torch.nn.ReLU(),
        torch.nn.Conv2d(6, 12, 2, stride=2, padding=1, groups=3)).eval()
    f = tessel.compile(_torch_cnn_with_symbolic_batch(model, (4, 7, 7)),
                       opt_level=opt_level)
    for n in (1, 3):
        x = torch.randn(n, 4, 7, 7)
        with torch.no_grad():
            ref = model(x).numpy()
        np.testing.assert_allclose(f(x.numpy()), ref, rtol=1e-5, atol=1e-5)


def test_batched_matmul_checks_run_time_sizes_that_must_agree():
    """[p, 2, k] x [q, k, 3] with p, q and k symbolic: equal at run time it
    matches numpy; a mismatch fails the call instead of reading past."""
    g = helper.make_graph([helper.make_node("MatMul", ["a", "b"], ["y"])], "mm",
                          [vi("a", TP.FLOAT, ["p", 2, "k"]), vi("b", TP.FLOAT, ["q", "k2", 3])],
                          [vi("y", TP.FLOAT, ["p", 2, 3])])
    f = tessel.compile(helper.make_model(
        g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    a = rng.standard_normal((4, 2, 5)).astype(np.float32)
    b = rng.standard_normal((4, 5, 3)).astype(np.float32)
    np.testing.assert_allclose(f(a, b), a @ b, rtol=1e-5, atol=1e-5)
    for bad in (b[:3], b[:, :4]):
        with pytest.raises(tessel.InvocationError):
            f(a, np.ascontiguousarray(bad))


def test_transformer_encoder_with_symbolic_batch_and_sequence():
    """torch.nn.TransformerEncoder (2 layers, 4 heads) exported with a
    symbolic batch and sequence: one artifact at several (batch, seq)
    against PyTorch (attention's batched MatMuls, Slice of the packed
    projections, the scaling Div, reshapes ONNX shape inference half knows)."""
    import io
    import torch
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(32, 4, 64, batch_first=True, dropout=0.0)
    model = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()
    f = io.BytesIO()
    torch.onnx.export(model, (torch.randn(2, 5, 32),), f, opset_version=17,
                      input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}})
    # Each layer's attention becomes one fused kernel through the importer's
    # run-time size checks.
    module = tessel.compiler.to_module(f.getvalue())
    tessel.passes.run(module, "func.func(tessel-fuse-attention)")
    assert str(module).count("tessel.attention ins") == 2
    compiled = tessel.compile(f.getvalue())
    assert str(compiled.signature) == "main(x: batchxseqx32xf32) -> (y: batchxseqx32xf32)"
    for b, t in ((1, 1), (1, 3), (3, 7)):
        x = torch.randn(b, t, 32)
        with torch.no_grad():
            ref = model(x).numpy()
        np.testing.assert_allclose(compiled(x.numpy()), ref, rtol=1e-4, atol=1e-4)


def test_fused_attention_checks_run_time_sizes_that_must_agree():
    """softmax(q @ kt * c) @ v with every batch and length its own symbol:
    fused into one kernel, it matches numpy; a batch or key length that
    differs between q, kt and v fails the call instead of reading past."""
    nodes = [helper.make_node("MatMul", ["q", "kt"], ["s"]),
             helper.make_node("Mul", ["s", "c"], ["ss"]),
             helper.make_node("Softmax", ["ss"], ["p"], axis=-1),
             helper.make_node("MatMul", ["p", "v"], ["y"])]
    g = helper.make_graph(
        nodes, "attention",
        [vi("q", TP.FLOAT, ["b", "m", 8]), vi("kt", TP.FLOAT, ["b2", 8, "n"]),
         vi("v", TP.FLOAT, ["b3", "n2", 4])],
        [vi("y", TP.FLOAT, ["b", "m", 4])],
        initializer=[numpy_helper.from_array(np.array(0.25, np.float32), "c")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    module = tessel.compiler.to_module(model.SerializeToString())
    tessel.passes.run(module, "func.func(tessel-fuse-attention)")
    assert "tessel.attention ins" in str(module) and "tessel.softmax" not in str(module)
    f = tessel.compile(model.SerializeToString())

    def reference(q, kt, v):
        s = q @ kt * 0.25
        e = np.exp(s - s.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True) @ v

    for b, m, n in ((1, 1, 1), (2, 5, 7), (3, 17, 40)):
        q = rng.standard_normal((b, m, 8)).astype(np.float32)
        kt = rng.standard_normal((b, 8, n)).astype(np.float32)
        v = rng.standard_normal((b, n, 4)).astype(np.float32)
        np.testing.assert_allclose(f(q, kt, v), reference(q, kt, v), rtol=1e-5, atol=1e-5)
    q = rng.standard_normal((2, 5, 8)).astype(np.float32)
    kt = rng.standard_normal((2, 8, 7)).astype(np.float32)
    v = rng.standard_normal((2, 7, 4)).astype(np.float32)
    for args in ((q, kt[:1], v), (q, kt, v[:1]), (q, kt, v[:, :6]),
                 (q, kt[:, :, :6], v), (q[:1], kt, v)):
        with pytest.raises(tessel.InvocationError):
            f(*(np.ascontiguousarray(a) for a in args))


def _attention_module():
    import torch

    class Attention(torch.nn.Module):
        def __init__(self, c=32, heads=4):
            super().__init__()
            self.qkv = torch.nn.Linear(c, 3 * c)
            self.heads = heads

        def forward(self, x):
            b, t, c = x.size()
            q, k, v = self.qkv(x).split(c, dim=2)
            q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2)
                       for z in (q, k, v))
            a = torch.softmax(q @ k.transpose(-2, -1), -1)
            return (a @ v).transpose(1, 2).contiguous().view(b, t, c)

    return Attention().eval()


def test_sizes_computed_from_a_shape_stay_static():
    """The head size, computed from the static entry of a Shape whose other
    entries are run-time sizes, types the reshape statically (tensor<?x?x4x8>),
    so the batched matmuls keep static inner sizes; outputs match PyTorch at
    three (batch, length) pairs."""
    import io
    import torch
    torch.manual_seed(3)
    model = _attention_module()
    f = io.BytesIO()
    torch.onnx.export(model, (torch.randn(2, 5, 32),), f, opset_version=17,
                      input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "b", 1: "t"}, "y": {0: "b", 1: "t"}})
    module = tessel.compiler.to_module(f.getvalue())
    assert "tensor<?x?x4x8xf32>" in str(module)
    compiled = tessel.compile(f.getvalue())
    for b, t in ((1, 1), (2, 5), (3, 17)):
        x = torch.randn(b, t, 32)
        with torch.no_grad():
            ref = model(x).numpy()
        np.testing.assert_allclose(compiled(x.numpy()), ref, rtol=1e-5, atol=1e-5)


def test_channel_shuffle_blocks_with_symbolic_batch():
    """ShuffleNet's block twice: chunk, a convolution, concat, and the
    channel shuffle `view(b, 2, c // 2, h, w) ... view(b, -1, h, w)`. The
    -1 comes after a Div on a Shape, where ONNX's shape inference names
    nothing: the importer follows the batch to the graph input's name, so
    the channels stay static and the convolutions compile; PyTorch at
    batches 1 and 3."""
    import torch

    class Block(torch.nn.Module):
        def __init__(self, c):
            super().__init__()
            self.conv = torch.nn.Conv2d(c // 2, c // 2, 3, padding=1)

        def forward(self, x):
            a, y = x.chunk(2, dim=1)
            x = torch.cat([a, torch.relu(self.conv(y))], 1)
            b, c, h, w = x.size()
            x = x.view(b, 2, c // 2, h, w).transpose(1, 2).contiguous()
            return x.view(b, -1, h, w)

    torch.manual_seed(5)
    model = torch.nn.Sequential(Block(8), Block(8)).eval()
    f = tessel.compile(_torch_cnn_with_symbolic_batch(model, (8, 6, 6)))
    for n in (1, 3):
        x = torch.randn(n, 8, 6, 6)
        with torch.no_grad():
            ref = model(x).numpy()
        np.testing.assert_allclose(f(x.numpy()), ref, rtol=1e-5, atol=1e-5)
