"""torch modules as written compile through tessel.compile(module, inputs).

Issue 21's bar: every module torch.onnx.export accepts also compiles
through the torch door, matching PyTorch. ZOO holds torchvision and
torch.nn architectures (small configurations where the full one only adds
compile time) with the door each takes: "fx" (Tessel's FX importer) or
"torch.onnx" (the FX importer cannot take a node; tessel.compile falls back
to torch.onnx.export with a TorchImportWarning). Each is compiled, run and
compared with the module's own outputs (rtol 1e-3, atol 1e-4 of the output
scale), and the door is checked, so a model that moves from one to the other
shows up here. (test_torch_importer.py's CNNS add ResNet-18/50,
MobileNetV2, EfficientNet-B0, ShuffleNetV2 and SqueezeNet-1.1.)

Then what must not fall back (a training-mode module, a random op with no
converter, a forward that updates a parameter, Python control flow on
tensor values) and the torch_exporter option.
"""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")
import torch.nn as nn  # noqa: E402

import tessel  # noqa: E402
from tessel.compiler import to_module  # noqa: E402

import torch_models as tm  # noqa: E402
from torch_checks import check, randomize_batchnorm, reference  # noqa: E402

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]
tv = torchvision.models


# --------------------------------------------------------------------------
# Modules written the way users write them


class RecurrentOutputs(nn.Module):
    """A recurrent module's output sequence and its final state(s)."""

    def __init__(self, rnn):
        super().__init__()
        self.rnn = rnn

    def forward(self, x):
        y, h = self.rnn(x)
        return (y, *h) if isinstance(h, tuple) else (y, h)


class Tagger(nn.Module):
    """Embedding -> 2-layer bidirectional LSTM -> per-token classifier."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(50, 16)
        self.lstm = nn.LSTM(16, 24, num_layers=2, batch_first=True, bidirectional=True)
        self.out = nn.Linear(48, 5)

    def forward(self, ids):
        h, _ = self.lstm(self.emb(ids))
        return self.out(h)


class LoopMoE(nn.Module):
    """Top-2 mixture of experts whose forward loops over an expert-weight
    parameter's first dimension (FX traces it: parameter shapes are
    constant)."""

    def __init__(self, d=16, hidden=32, experts=4):
        super().__init__()
        self.gate = nn.Linear(d, experts)
        self.w1 = nn.Parameter(torch.randn(experts, d, hidden) * 0.1)
        self.w2 = nn.Parameter(torch.randn(experts, hidden, d) * 0.1)

    def forward(self, x):
        probs = torch.softmax(self.gate(x), dim=-1)
        w, idx = torch.topk(probs, 2, dim=-1)
        out = torch.zeros_like(x)
        for e in range(self.w1.shape[0]):
            weight = (w * (idx == e)).sum(-1, keepdim=True)
            out = out + weight * (torch.relu(x @ self.w1[e]) @ self.w2[e])
        return out


class MultiIndex(nn.Module):
    """Indexing with several index tensors (advanced indexing)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("i0", torch.tensor([0, 2, 1]))
        self.register_buffer("i1", torch.tensor([3, 0, 2]))

    def forward(self, t):
        return t[:, self.i0, self.i1] * 2.0


class ConvAutoencoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU(),
                                 nn.Conv2d(8, 16, 3, 2, 1), nn.ReLU())
        self.dec = nn.Sequential(nn.ConvTranspose2d(16, 8, 4, 2, 1), nn.ReLU(),
                                 nn.ConvTranspose2d(8, 3, 4, 2, 1), nn.Sigmoid())

    def forward(self, x):
        return self.dec(self.enc(x))


class Conv1dNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv1d(4, 16, 5, padding=2), nn.BatchNorm1d(16), nn.ReLU(), nn.MaxPool1d(2),
            nn.Conv1d(16, 16, 3, dilation=2, padding=2), nn.ReLU(),
            nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(16, 3))

    def forward(self, x):
        return self.net(x)


def image(size=64):
    return (torch.randn(1, 3, size, size),)


def sequence(*shape):
    return lambda: (torch.randn(*shape),)


def _zoo():
    from torchvision.models.densenet import DenseNet
    from torchvision.models.resnet import Bottleneck, ResNet
    from torchvision.models.swin_transformer import SwinTransformer
    from torchvision.models.vision_transformer import VisionTransformer
    seg = tv.segmentation
    return {
        # name: (module builder, example inputs, door)
        "alexnet": (lambda: tv.alexnet(num_classes=10), image, "fx"),
        "convnext_tiny": (lambda: tv.convnext_tiny(), image, "fx"),
        "densenet_small": (lambda: DenseNet(12, (2, 3, 2), 16), image, "fx"),
        "efficientnet_v2_s": (lambda: tv.efficientnet_v2_s(), image, "fx"),
        "googlenet": (lambda: tv.googlenet(aux_logits=False, init_weights=False), image, "fx"),
        "inception_v3": (lambda: tv.inception_v3(aux_logits=False, init_weights=False),
                         lambda: image(96), "fx"),
        "maxvit_small": (lambda: tv.maxvit.MaxVit((64, 64), 16, 2, [32, 64], [1, 1], 16, 0.0),
                         image, "fx"),
        "mnasnet0_5": (lambda: tv.mnasnet0_5(), image, "fx"),
        "mobilenet_v3_small": (lambda: tv.mobilenet_v3_small(), image, "fx"),
        "regnet_y_400mf": (lambda: tv.regnet_y_400mf(), image, "fx"),
        "resnext_wide_small": (lambda: ResNet(Bottleneck, [1, 1, 1, 1], groups=4,
                                              width_per_group=32), image, "fx"),
        "shufflenet_v2_x0_5": (lambda: tv.shufflenet_v2_x0_5(), image, "fx"),
        "squeezenet1_0": (lambda: tv.squeezenet1_0(), image, "fx"),
        "swin_small": (lambda: SwinTransformer([4, 4], 32, [2, 2], [2, 4], [4, 4]),
                       lambda: image(32), "torch.onnx"),
        "vit_small": (lambda: VisionTransformer(32, 8, 2, 2, 64, 128, num_classes=10),
                      lambda: image(32), "fx"),
        "lraspp_mobilenet_v3_large": (lambda: seg.lraspp_mobilenet_v3_large(
            weights_backbone=None), image, "fx"),
        "deeplabv3_mobilenet_v3_large": (lambda: seg.deeplabv3_mobilenet_v3_large(
            weights_backbone=None), image, "fx"),
        "lstm": (lambda: RecurrentOutputs(nn.LSTM(8, 16, num_layers=2, batch_first=True,
                                                  bidirectional=True)),
                 sequence(2, 5, 8), "torch.onnx"),
        "lstm_bare": (lambda: nn.LSTM(8, 16), sequence(5, 2, 8), "torch.onnx"),
        "gru": (lambda: RecurrentOutputs(nn.GRU(8, 16, num_layers=2)), sequence(5, 2, 8),
                "torch.onnx"),
        "rnn_tanh": (lambda: RecurrentOutputs(nn.RNN(8, 16, batch_first=True)),
                     sequence(2, 5, 8), "torch.onnx"),
        "lstm_tagger": (Tagger, lambda: (torch.randint(0, 50, (2, 7)),), "torch.onnx"),
        "transformer": (lambda: nn.Transformer(32, 2, 2, 2, 64, dropout=0.0, batch_first=True),
                        lambda: (torch.randn(2, 6, 32), torch.randn(2, 5, 32)), "torch.onnx"),
        "transformer_decoder": (lambda: nn.TransformerDecoder(
            nn.TransformerDecoderLayer(32, 4, 64, dropout=0.0), 2),
            lambda: (torch.randn(5, 2, 32), torch.randn(6, 2, 32)), "fx"),
        "multihead_attention": (lambda: nn.MultiheadAttention(32, 4),
                                lambda: (torch.randn(5, 2, 32), torch.randn(6, 2, 32),
                                         torch.randn(6, 2, 32)), "fx"),
        "conv_autoencoder": (ConvAutoencoder, image, "fx"),
        "conv1d": (Conv1dNet, sequence(2, 4, 32), "fx"),
        "multi_index": (MultiIndex, sequence(2, 3, 4, 5), "torch.onnx"),
        "loop_moe": (LoopMoE, sequence(8, 16), "fx"),
    }


ZOO = _zoo()


def randomize(model):
    """Batch-norm statistics and zero-initialized heads (ViT's) made random:
    defaults would hide mistakes in how they apply."""
    randomize_batchnorm(model)
    g = torch.Generator().manual_seed(7)
    with torch.no_grad():
        for p in model.parameters():
            if p.numel() > 1 and not p.any():
                p.copy_(torch.randn(p.shape, generator=g) * 0.05)
    return model


def build(name):
    make, inputs, door = ZOO[name]
    torch.manual_seed(0)
    model = randomize(make().eval())
    torch.manual_seed(1)
    return model, inputs(), door


def compile_noting_door(model, inputs, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled = tessel.compile(model, inputs, **kwargs)
    notes = [str(w.message) for w in caught
             if issubclass(w.category, tessel.TorchImportWarning)]
    return compiled, notes


@pytest.mark.parametrize("name", sorted(ZOO))
def test_architecture_compiles_and_matches_pytorch(name):
    model, inputs, door = build(name)
    # Grad on: torch 1.13's transformer layers then take their regular path
    # (the fused fast path is the same math, rounded differently).
    refs = reference(model, inputs, grad=True)
    compiled, notes = compile_noting_door(model, inputs)
    assert bool(notes) == (door == "torch.onnx"), notes
    out = compiled(*inputs)
    outs = list(out) if isinstance(out, tuple) else [out]
    assert len(outs) == len(refs)
    for o, r in zip(outs, refs):
        check(o, r)


def test_zoo_holds_twenty_five_architectures():
    assert len(ZOO) >= 25


# --------------------------------------------------------------------------
# The fallback and what must not fall back


def test_fallback_note_names_the_node_fx_could_not_take():
    model = nn.LSTM(4, 6).eval()
    _, notes = compile_noting_door(model, (torch.randn(3, 2, 4),))
    assert len(notes) == 1
    assert "module type torch.nn.LSTM is not supported" in notes[0]
    assert "imported through torch.onnx.export instead" in notes[0]


def test_torch_exporter_fx_does_not_fall_back():
    with pytest.raises(tessel.TorchImportError, match="torch.nn.LSTM is not supported"):
        tessel.compile(nn.LSTM(4, 6).eval(), (torch.randn(3, 2, 4),), torch_exporter="fx")


def test_torch_exporter_torch_onnx_door_matches():
    model, inputs, _ = build("conv_autoencoder")
    compiled, notes = compile_noting_door(model, inputs, torch_exporter="torch.onnx")
    assert notes == []
    np.testing.assert_allclose(compiled(*inputs), reference(model, inputs, grad=True)[0],
                               rtol=1e-3, atol=1e-5)


def test_unknown_torch_exporter_is_an_error():
    with pytest.raises(ValueError, match="torch_exporter must be one of"):
        tessel.compile(nn.ReLU().eval(), (torch.randn(2),), torch_exporter="jit")


def test_training_mode_does_not_fall_back():
    with pytest.raises(tessel.TorchImportError, match="training mode") as info:
        tessel.compile(nn.LSTM(4, 6), (torch.randn(3, 2, 4),))
    assert "torch.onnx.export" not in str(info.value)


def test_unsupported_random_op_does_not_fall_back():
    class Noisy(nn.Module):
        def forward(self, x):
            return x + torch.randint_like(x, 5)

    with pytest.raises(tessel.TorchImportError, match="this random op is not supported") as info:
        tessel.compile(Noisy().eval(), (torch.randn(2, 3),))
    assert "torch.onnx.export" not in str(info.value)


def test_parameter_update_does_not_fall_back():
    with pytest.raises(tessel.TorchImportError, match="parameter or buffer") as info:
        tessel.compile(tm.ParameterUpdate().eval(), (torch.randn(2, 3),))
    assert "torch.onnx.export" not in str(info.value)


class BranchOnValue(nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # VALUE_BRANCH
            return x * 2
        return x - 1


class SizeFromValue(nn.Module):
    def forward(self, x):
        n = int(x.abs().max().item() * 3) + 1  # VALUE_SIZE
        return x[:, :n]


@pytest.mark.parametrize("model,marker", [(BranchOnValue, "VALUE_BRANCH"),
                                          (SizeFromValue, "VALUE_SIZE")])
def test_python_control_flow_on_tensor_values_is_rejected(model, marker):
    """torch.onnx.export would bake the example's branch or size in: a
    silent wrong answer on other inputs. Both exporters refuse, and the
    message points at the line."""
    with open(__file__) as f:
        line = next(i for i, text in enumerate(f, 1) if text.rstrip().endswith(marker))
    with pytest.raises(tessel.TorchImportError) as info:
        tessel.compile(model().eval(), (torch.randn(3, 8),))
    text = str(info.value)
    assert "torch.onnx.export, tried instead, failed too" in text
    assert f"test_torch_zoo.py:{line}, torch.onnx.export's trace turned a tensor into a " \
           "Python value" in text


def test_loop_over_expert_parameter_is_raised_to_a_route():
    model, inputs, _ = build("loop_moe")
    module = to_module(model, inputs, torch_exporter="fx")
    assert "compose.route" in str(module)


# --------------------------------------------------------------------------
# Adaptive pooling to sizes that do not divide the input (AlexNet at 64x64
# pools 1x1 to 6x6): torch's windows, overlapping or repeating


@pytest.mark.parametrize("module,shape", [
    (nn.AdaptiveAvgPool2d((6, 6)), (1, 3, 1, 1)),
    (nn.AdaptiveAvgPool2d((7, 5)), (2, 3, 10, 9)),
    (nn.AdaptiveMaxPool2d((7, 5)), (2, 3, 10, 9)),
    (nn.AdaptiveAvgPool1d(4), (2, 3, 7)),
    (nn.AdaptiveMaxPool1d(5), (2, 3, 3)),
    (nn.AdaptiveAvgPool3d((2, 3, 4)), (1, 2, 5, 3, 7)),
    (nn.AdaptiveMaxPool3d((3, 2, 5)), (1, 2, 5, 4, 7)),
    (nn.AdaptiveAvgPool2d((None, 3)), (1, 2, 5, 7)),
], ids=lambda v: str(v).replace(" ", ""))
def test_adaptive_pooling_to_any_size(module, shape):
    x = torch.randn(shape)
    compiled, notes = compile_noting_door(module.eval(), (x,), torch_exporter="fx")
    np.testing.assert_allclose(compiled(x), module(x).numpy(), rtol=1e-5, atol=1e-6)
