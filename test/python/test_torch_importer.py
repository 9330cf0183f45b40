"""The PyTorch importer (tessel.torch_importer.export_onnx): torch.nn
modules -> torch.fx -> ONNX ModelProto -> Tessel.

End to end, each model is exported, compiled and run by Tessel and
compared with the module's own output (rtol 1e-3, atol 1e-4 of the output
scale): torchvision CNNs, transformer encoders (written out, and built from
nn.TransformerEncoderLayer / nn.MultiheadAttention), a top-2 mixture of
experts, and op "zoos" covering the long tail of converters. Structural
tests check the ONNX model (node names are the FX names, initializers are
named after parameters); error tests check that untranslatable models
raise TorchImportError naming the node, its target and the source line.
"""
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import tessel  # noqa: E402
from tessel.errors import Error, TorchImportError  # noqa: E402
from tessel.torch_importer import Tracer, export_onnx  # noqa: E402

import torch_models as tm  # noqa: E402
from torch_checks import check, randomize_batchnorm, reference  # noqa: E402

THIS_FILE = os.path.basename(__file__)

# torch's own warnings (nested-tensor prototype, padding='same' copies).
pytestmark = [pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors"),
              pytest.mark.filterwarnings("ignore:Using padding='same'")]


# --------------------------------------------------------------------------
# Helpers


def compile_and_run(model_proto, inputs):
    """Compiles an ONNX ModelProto in process (tessel.compile, -O2) and runs
    it on the tensors among ``inputs`` (in order); returns the outputs as a
    list of numpy arrays. (The command-line door, tessel-compile and
    tessel-run, is exercised by test_models.py and test_api.py.)"""
    compiled = tessel.compile(model_proto, opt_level=2)
    tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
    out = compiled(*tensors)
    return list(out) if isinstance(out, tuple) else [out]


def assert_matches(model, inputs, grad=False, **export_args):
    """Exports, compiles and runs ``model`` and compares every output."""
    proto = export_onnx(model, inputs, **export_args)
    refs = reference(model, inputs, grad)
    outs = compile_and_run(proto, inputs)
    assert len(outs) == len(refs)
    for out, ref in zip(outs, refs):
        check(out, ref)
    return proto


def raises_import_error(model, inputs, **kwargs):
    with pytest.raises(TorchImportError) as info:
        export_onnx(model, inputs, **kwargs)
    return info.value


def line_of(marker):
    """The line number in this file of the line ending with ``# marker``."""
    with open(__file__) as f:
        for i, line in enumerate(f, 1):
            if line.rstrip().endswith(f"# {marker}"):
                return i
    raise AssertionError(marker)


# --------------------------------------------------------------------------
# torchvision CNNs

CNNS = ["resnet18", "resnet50", "mobilenet_v2", "efficientnet_b0", "shufflenet_v2_x1_0",
        "squeezenet1_1"]


@pytest.mark.parametrize("name", CNNS)
def test_torchvision_cnn(name):
    torchvision = pytest.importorskip("torchvision")
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    randomize_batchnorm(model)
    assert_matches(model, (torch.randn(1, 3, 64, 64),))


# --------------------------------------------------------------------------
# Transformers


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_bert_style_encoder(approximate):
    torch.manual_seed(0)
    model = tm.BertEncoder(approximate=approximate).eval()
    ids = torch.randint(0, 100, (2, 16))
    mask = torch.ones(2, 16, dtype=torch.long)
    mask[1, 11:] = 0
    assert_matches(model, (ids, mask))


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_encoder_layers(batch_first, norm_first):
    torch.manual_seed(0)
    model = tm.TorchEncoder(batch_first=batch_first, norm_first=norm_first,
                            activation="relu" if norm_first else "gelu").eval()
    x = torch.randn(2, 16, 64) if batch_first else torch.randn(16, 2, 64)
    assert_matches(model, (x,), grad=True)


def test_transformer_encoder_causal_mask_input():
    torch.manual_seed(0)
    model = tm.TorchEncoder().eval()
    causal = torch.triu(torch.full((16, 16), float("-inf")), diagonal=1)
    assert_matches(model, (torch.randn(2, 16, 64), causal))


def test_transformer_encoder_key_padding_mask():
    torch.manual_seed(0)
    model = tm.TorchEncoder().eval()
    padding = torch.zeros(2, 16, dtype=torch.bool)
    padding[1, 10:] = True
    # The regular path's output (the nested-tensor fast path zeroes padded rows).
    assert_matches(model, (torch.randn(2, 16, 64), None, padding), grad=True)


@pytest.mark.parametrize("batch_first", [True, False])
def test_multihead_attention_with_weights(batch_first):
    torch.manual_seed(0)
    model = tm.AttentionBlock(batch_first=batch_first).eval()
    x, memory = torch.randn(2, 5, 32), torch.randn(2, 7, 32)
    if not batch_first:
        x, memory = x.transpose(0, 1), memory.transpose(0, 1)
    padding = torch.zeros(2, 7, dtype=torch.bool)
    padding[0, 5:] = True
    assert_matches(model, (x, memory, padding))


def test_bare_encoder_layer_with_bool_mask():
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True).eval()
    causal = torch.triu(torch.ones(6, 6, dtype=torch.bool), diagonal=1)
    proto = assert_matches(layer, (torch.randn(2, 6, 32), causal), grad=True)
    assert "transformer_encoder_layer" in {n.name for n in proto.graph.node}
    assert "transformer_encoder_layer.linear1.weight.T" in {i.name for i in
                                                             proto.graph.initializer}


def test_multihead_attention_variants():
    torch.manual_seed(0)

    class CrossKV(nn.Module):  # kdim/vdim, 3-D float mask, per-head weights
        def __init__(self):
            super().__init__()
            self.attn = nn.MultiheadAttention(32, 4, kdim=16, vdim=24, batch_first=True)

        def forward(self, q, k, v, mask):
            return self.attn(q, k, v, attn_mask=mask, average_attn_weights=False)

    assert_matches(CrossKV().eval(), (torch.randn(2, 5, 32), torch.randn(2, 7, 16),
                                      torch.randn(2, 7, 24), torch.randn(8, 5, 7)))
    unbatched = nn.MultiheadAttention(32, 4).eval()
    x = torch.randn(5, 32)
    assert_matches(unbatched, (x, x, x, torch.tensor([False] * 3 + [True] * 2)))


def test_multihead_attention_unsupported_option():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = nn.MultiheadAttention(16, 2, add_bias_kv=True)

        def forward(self, x):
            return self.attn(x, x, x)[0]

    e = raises_import_error(M().eval(), (torch.randn(3, 1, 16),))
    assert "add_bias_kv" in str(e) and e.node == "attn"


# --------------------------------------------------------------------------
# Mixture of experts and gating ops


def test_top2_mixture_of_experts():
    torch.manual_seed(0)
    model = tm.TopKMoE(d=64, hidden=128, experts=8, k=2).eval()
    assert_matches(model, (torch.randn(2, 16, 64),))


def test_gating_ops():
    torch.manual_seed(0)
    assert_matches(tm.GatingOps().eval(), (torch.randn(6, 16), torch.tensor([0, 3, 1, 2, 3, 0])))


# --------------------------------------------------------------------------
# Op coverage


def test_elementwise_ops():
    torch.manual_seed(0)
    assert_matches(tm.ElementwiseZoo().eval(),
                   (torch.randn(3, 4), torch.randn(3, 4), torch.randint(1, 9, (3, 4))))


def test_shape_ops():
    torch.manual_seed(0)
    assert_matches(tm.ShapeZoo().eval(), (torch.randn(2, 3, 4, 5),))


def test_reductions():
    torch.manual_seed(0)
    assert_matches(tm.ReduceZoo().eval(), (torch.randn(3, 8, 6),))


def test_matrix_products():
    torch.manual_seed(0)
    assert_matches(tm.LinalgZoo().eval(), (torch.randn(4, 5), torch.randn(2, 4, 5)))


def test_activations_and_norms():
    torch.manual_seed(0)
    assert_matches(tm.ActivationZoo().eval(), (torch.randn(2, 3, 8),))


def test_transformer_decoder_layer_is_traced_through():
    torch.manual_seed(0)
    model = nn.TransformerDecoderLayer(32, 4, 64, batch_first=True).eval()
    proto = assert_matches(model, (torch.randn(2, 5, 32), torch.randn(2, 7, 32)))
    names = {n.name for n in proto.graph.node}
    assert {"self_attn", "multihead_attn", "norm3"} <= names


def test_module_ops():
    torch.manual_seed(0)
    model = tm.ModuleZoo().eval()
    randomize_batchnorm(model)
    assert_matches(model, (torch.randn(1, 4, 9, 9),))


class InPlace(nn.Module):
    def forward(self, x):
        y = x.clone()
        y.mul_(2)
        F.relu(y, inplace=True)
        y += 1
        torch.sigmoid_(y)
        z = x * 3
        z.add_(y).clamp_(max=2.5)
        return y, z


def test_inplace_ops_are_translated():
    x = torch.randn(3, 5)
    assert_matches(InPlace().eval(), (x,))


def test_export_does_not_change_example_inputs():
    class Mutates(nn.Module):
        def forward(self, x):
            x.mul_(2)
            return x + 1

    x = torch.ones(2, 2)
    export_onnx(Mutates().eval(), (x,))
    assert torch.equal(x, torch.ones(2, 2))


def test_non_tensor_arguments_are_specialized():
    class M(nn.Module):
        def forward(self, x, mask=None, scale=2.0):
            if mask is not None:
                x = x.masked_fill(mask, 0.0)
            return x * scale

    x = torch.randn(2, 3)
    proto = assert_matches(M().eval(), (x,))
    assert [i.name for i in proto.graph.input] == ["x"]
    proto = assert_matches(M().eval(), (x, x > 0, 0.5))
    assert [i.name for i in proto.graph.input] == ["x", "mask"]


def test_constant_subexpressions_fold():
    class Causal(nn.Module):
        def forward(self, x):
            n = x.size(1)
            mask = torch.triu(torch.full((n, n), float("-inf")), diagonal=1)
            positions = torch.arange(n).float() / n
            return (x @ x.transpose(1, 2) + mask).softmax(-1) + positions

    proto = assert_matches(Causal().eval(), (torch.randn(2, 6, 4),))
    assert "Trilu" not in {n.op_type for n in proto.graph.node}


def test_export_twice_with_traced_factories():
    # The tracer records torch.arange(x.size(1)); a second trace must not
    # trip over state the first one left.
    model = tm.BertEncoder().eval()
    ids, mask = torch.randint(0, 100, (1, 8)), torch.ones(1, 8, dtype=torch.long)
    export_onnx(model, (ids, mask))
    export_onnx(model, (ids, mask))
    assert torch.fx.Proxy.__iter__ is not None


# --------------------------------------------------------------------------
# The ONNX model


def test_onnx_node_names_are_fx_node_names():
    torchvision = pytest.importorskip("torchvision")
    model = torchvision.models.resnet18(weights=None).eval()
    proto = export_onnx(model, (torch.randn(1, 3, 32, 32),))
    graph = Tracer().trace(model)
    fx_names = {n.name for n in graph.nodes if n.op in ("call_module", "call_function",
                                                        "call_method")}
    assert {n.name for n in proto.graph.node} == fx_names
    assert proto.opset_import[0].version == 17
    onnx.checker.check_model(proto)


def test_one_fx_node_to_several_onnx_nodes_is_suffixed():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, padding=1, padding_mode="reflect")

        def forward(self, x):
            return self.conv(x)

    proto = assert_matches(M().eval(), (torch.randn(1, 3, 8, 8),))
    assert [(n.op_type, n.name) for n in proto.graph.node] == [("Pad", "conv/pad"),
                                                               ("Conv", "conv")]


def test_leaf_transformer_nodes_are_scoped():
    proto = export_onnx(tm.TorchEncoder().eval(), (torch.randn(1, 8, 64),))
    names = [n.name for n in proto.graph.node]
    assert "encoder" in names
    assert "encoder/layers.0/self_attn/softmax" in names
    assert "encoder/layers.1/linear2/matmul" in names


def test_initializers_are_named_after_parameters():
    torchvision = pytest.importorskip("torchvision")
    proto = export_onnx(torchvision.models.resnet18(weights=None).eval(),
                        (torch.randn(1, 3, 32, 32),))
    names = {i.name for i in proto.graph.initializer}
    assert {"conv1.weight", "bn1.running_var", "layer4.1.conv2.weight", "fc.bias"} <= names


def test_input_and_output_names_and_types():
    model = tm.BertEncoder().eval()
    ids, mask = torch.randint(0, 100, (2, 8)), torch.ones(2, 8, dtype=torch.int32)
    proto = assert_matches(model, (ids, mask), input_names=["ids", "mask"],
                           output_names=["hidden", "pooled"])
    inputs = [(i.name, i.type.tensor_type.elem_type,
               [d.dim_value for d in i.type.tensor_type.shape.dim]) for i in proto.graph.input]
    assert inputs == [("ids", onnx.TensorProto.INT64, [2, 8]),
                      ("mask", onnx.TensorProto.INT32, [2, 8])]
    assert [o.name for o in proto.graph.output] == ["hidden", "pooled"]


def test_default_names():
    proto = export_onnx(nn.Linear(4, 2).eval(), (torch.randn(3, 4),))
    assert [i.name for i in proto.graph.input] == ["input"]
    assert [o.name for o in proto.graph.output] == ["output"]


class ReturnsInputAndRepeats(nn.Module):
    def forward(self, x):
        y = x + 1
        return x, y, y


def test_output_that_is_an_input_or_repeated():
    proto = export_onnx(ReturnsInputAndRepeats().eval(), (torch.randn(2, 2),))
    assert [o.name for o in proto.graph.output] == ["output0", "output1", "output2"]
    assert [(n.op_type, list(n.input)) for n in proto.graph.node if n.op_type == "Identity"] \
        == [("Identity", ["x"]), ("Identity", ["output1"])]


def test_output_that_is_an_input():
    class M(nn.Module):
        def forward(self, x):
            return x, x * 2

    assert_matches(M().eval(), (torch.randn(2, 2),))


def test_output_repeated_runs():
    # One value returned twice: each result gets its own buffer
    # (tessel-copy-repeated-results).
    assert_matches(ReturnsInputAndRepeats().eval(), (torch.randn(2, 2),))


# --------------------------------------------------------------------------
# Errors


class FftModel(nn.Module):
    def forward(self, x):
        y = x * 2
        return torch.fft.fft(y).real  # FFT_LINE


def test_unsupported_op_names_node_target_and_line():
    e = raises_import_error(FftModel().eval(), (torch.randn(2, 8),))
    where = f"{THIS_FILE}:{line_of('FFT_LINE')}"
    assert e.node == "fft_fft" and e.target == "torch.fft.fft"
    assert e.where.endswith(where)
    message = str(e)
    assert "'fft_fft'" in message and "torch.fft.fft" in message and where in message
    assert isinstance(e, Error)


def test_training_mode_is_rejected():
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    e = raises_import_error(model, (torch.randn(2, 4),))
    assert "training mode" in str(e) and "eval()" in str(e)
    model.eval()
    model[1].train()
    e = raises_import_error(model, (torch.randn(2, 4),))
    assert "submodule '1' (Dropout)" in str(e)


class Circular(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3, padding=1, padding_mode="circular")

    def forward(self, x):
        return self.conv(x)  # CIRCULAR_LINE


def test_unsupported_attribute_is_named():
    e = raises_import_error(Circular().eval(), (torch.randn(1, 3, 8, 8),))
    assert e.node == "conv" and "torch.nn.Conv2d" in e.target
    assert "padding_mode='circular'" in str(e)
    assert f"{THIS_FILE}:{line_of('CIRCULAR_LINE')}" in str(e)


def test_unsupported_module_type():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(4, 4)

        def forward(self, x):
            return self.rnn(x)[0]

    e = raises_import_error(M().eval(), (torch.randn(3, 1, 4),))
    assert e.node == "rnn" and "torch.nn.LSTM" in str(e)


def test_data_dependent_values_are_rejected():
    class Item(nn.Module):
        def forward(self, x):
            return x * x.sum().item()

    class BoolMask(nn.Module):
        def forward(self, x):
            return x[x > 0]

    class Branch(nn.Module):
        def forward(self, x):
            if x.sum() > 0:  # BRANCH_LINE
                return x
            return -x

    x = torch.randn(2, 3)
    assert "tensor data" in str(raises_import_error(Item().eval(), (x,)))
    assert "data-dependent" in str(raises_import_error(BoolMask().eval(), (x,)))
    e = raises_import_error(Branch().eval(), (x,))
    assert "torch.fx could not trace" in str(e)
    assert e.where.endswith(f"{THIS_FILE}:{line_of('BRANCH_LINE')}")


def test_random_ops_without_a_converter_are_rejected():
    # (rand, randn, bernoulli ... convert: test_torch_random.py.)
    class Noisy(nn.Module):
        def forward(self, x):
            return x + torch.randperm(3)

    e = raises_import_error(Noisy().eval(), (torch.randn(2, 3),))
    assert e.node == "randperm" and "random op is not supported" in str(e)


def test_inplace_update_of_a_view_read_later_is_rejected():
    class M(nn.Module):
        def forward(self, x):
            y = x * 2
            y[:, :1].add_(1)
            return y

    e = raises_import_error(M().eval(), (torch.randn(2, 3),))
    assert e.node == "add_" and "shares memory" in str(e)


def test_inplace_update_of_a_parameter_is_rejected():
    model = tm.ParameterUpdate().eval()
    e = raises_import_error(model, (torch.randn(2, 3),))
    assert "parameter or buffer" in str(e)
    assert torch.equal(model.w.data, torch.ones(3))


def test_bad_arguments():
    lin = nn.Linear(4, 4).eval()
    x = torch.randn(2, 4)
    assert "input names" in str(raises_import_error(lin, (x,), input_names=["a", "b"]))
    assert "output names" in str(raises_import_error(lin, (x,), output_names=["a", "b"]))
    assert "bfloat16" in str(raises_import_error(nn.ReLU().eval(), (x.bfloat16(),)))
    with pytest.raises(TorchImportError):
        export_onnx(lambda t: t, (x,))


def test_failure_while_running_names_the_node():
    class M(nn.Module):
        def forward(self, x):
            return x @ x  # MATMUL_LINE

    e = raises_import_error(M().eval(), (torch.randn(2, 3),))
    assert e.node == "matmul" and "running the module" in str(e)
    assert f"{THIS_FILE}:{line_of('MATMUL_LINE')}" in str(e)
    assert "While executing" not in str(e)


class _NaNNet(nn.Module):
    """Convolutions whose channel counts (5, 7, 12) leave remainders past
    the kernels' vector width, a depthwise and a grouped convolution, with
    ReLU / ReLU6 epilogues fused into them at -O2."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 5, 3, padding=1)
        self.c2 = nn.Conv2d(5, 7, 1)
        self.dw = nn.Conv2d(7, 7, 3, padding=1, groups=7)
        self.g = nn.Conv2d(7, 14, 3, padding=1, groups=7)
        self.c3 = nn.Conv2d(14, 12, 3, padding=1)
        self.fc = nn.Linear(12, 4)

    def forward(self, x):
        x = torch.relu(self.c1(x))
        x = torch.relu(self.c2(x))
        x = torch.clamp(self.dw(x), 0, 6)
        x = torch.relu(self.g(x))
        x = F.max_pool2d(torch.relu(self.c3(x)), 2)
        return self.fc(x.mean(dim=(2, 3)))


@pytest.mark.parametrize("opt_level", [0, 2, 3])
def test_nan_propagates_like_pytorch_at_every_level(opt_level):
    # PyTorch's relu/clamp/max_pool keep NaN; so must every Tessel path
    # (the kernels' fused clamp epilogues included), or a NaN pixel would
    # silently vanish into a plausible answer.
    torch.manual_seed(0)
    m = _NaNNet().eval()
    x = torch.randn(2, 3, 9, 9)
    x[0, 1, 4, 4] = float("nan")          # one pixel of image 0
    f = tessel.compile(m, (x,), opt_level=opt_level)
    got, ref = f(x), m(x).detach().numpy()
    assert np.isnan(ref[0]).all() and not np.isnan(ref[1]).any()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    np.testing.assert_allclose(got[1], ref[1], rtol=1e-4, atol=1e-5)
    allnan = torch.full((2, 3, 9, 9), float("nan"))
    assert np.isnan(f(allnan)).all()
