#!/usr/bin/env python3
"""Builds a PyTorch model with seeded random weights, exports it to ONNX
(opset 17) and writes a random input plus PyTorch's own output, so a test
can compile the .onnx with tessel-compile and compare through tessel-run.

  export_models.py NAME OUTDIR      writes OUTDIR/NAME.onnx, input.npy, output.npy

Nothing is downloaded: torchvision architectures are built with
weights=None and initialized from the seed.
"""
import math
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torchvision

SEED = 1234


class BertEncoder(nn.Module):
    """BERT-style encoder: post-norm TransformerEncoder with GELU."""

    def __init__(self, d=256, heads=4, layers=2, ff=1024):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d, heads, ff, dropout=0.0,
                                           activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)

    def forward(self, x):
        return self.encoder(x)


class GPTDecoder(nn.Module):
    """GPT-style decoder: token + position embedding, causal self-attention
    blocks (pre-norm), tied-size LM head."""

    def __init__(self, vocab=512, d=128, heads=4, layers=2, seq=64):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(seq, d)
        layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0,
                                           activation="gelu", batch_first=True,
                                           norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        mask = torch.triu(torch.full((seq, seq), float("-inf")), diagonal=1)
        self.register_buffer("mask", mask)
        self.register_buffer("positions", torch.arange(seq))

    def forward(self, tokens):
        h = self.tok(tokens) + self.pos(self.positions)
        h = self.blocks(h, mask=self.mask)
        return self.head(self.norm(h))


class MoE(nn.Module):
    """Top-2 gated mixture of experts: softmax gate -> TopK -> per-expert
    MLPs weighted by the renormalized gate."""

    def __init__(self, d=64, hidden=128, experts=4, k=2):
        super().__init__()
        self.k = k
        self.gate = nn.Linear(d, experts)
        self.experts = nn.ModuleList(
            nn.Sequential(nn.Linear(d, hidden), nn.ReLU(), nn.Linear(hidden, d))
            for _ in range(experts))

    def forward(self, x):
        probs = torch.softmax(self.gate(x), dim=-1)
        weights, index = torch.topk(probs, self.k, dim=-1)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            w = (weights * (index == e).to(x.dtype)).sum(dim=-1, keepdim=True)
            out = out + w * expert(x)
        return out


class LSTMTagger(nn.Module):
    """Sequence tagger: token embedding -> 2-layer bidirectional LSTM ->
    per-token linear classifier (a recurrent net of the kind NER and POS
    taggers use)."""

    def __init__(self, vocab=5000, d=128, hidden=256, layers=2, tags=20):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.lstm = nn.LSTM(d, hidden, num_layers=layers, bidirectional=True,
                            batch_first=True)
        self.out = nn.Linear(2 * hidden, tags)

    def forward(self, tokens):
        y, _ = self.lstm(self.emb(tokens))
        return self.out(y)


class GRUEncoder(nn.Module):
    """Utterance encoder: 2-layer GRU over 80-dim features, mean-pooled
    into a 10-way classifier (speech-command style)."""

    def __init__(self, feats=80, hidden=256, layers=2, classes=10):
        super().__init__()
        self.gru = nn.GRU(feats, hidden, num_layers=layers, batch_first=True)
        self.out = nn.Linear(hidden, classes)

    def forward(self, x):
        y, _ = self.gru(x)
        return self.out(y.mean(dim=1))


class Seq2SeqTransformer(nn.Module):
    """Encoder-decoder nn.Transformer (d 256, 8 heads, 3 + 3 layers, FF
    1024) over embedded source and target tokens, projected to the
    vocabulary: a translation model's shape."""

    def __init__(self, vocab=1000, d=256, heads=8, layers=3, ff=1024):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.tf = nn.Transformer(d, heads, layers, layers, ff, dropout=0.0,
                                 batch_first=True)
        self.out = nn.Linear(d, vocab)

    def forward(self, tokens):
        src, tgt = tokens[:, :32], tokens[:, 32:]
        mask = torch.triu(torch.full((32, 32), float("-inf")), diagonal=1)
        return self.out(self.tf(self.emb(src), self.emb(tgt), tgt_mask=mask))


class MixerBlock(nn.Module):
    def __init__(self, tokens, d, token_ff, channel_ff):
        super().__init__()
        self.norm1 = nn.LayerNorm(d)
        self.token = nn.Sequential(nn.Linear(tokens, token_ff), nn.GELU(),
                                   nn.Linear(token_ff, tokens))
        self.norm2 = nn.LayerNorm(d)
        self.channel = nn.Sequential(nn.Linear(d, channel_ff), nn.GELU(),
                                     nn.Linear(channel_ff, d))

    def forward(self, x):
        x = x + self.token(self.norm1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.channel(self.norm2(x))


class MLPMixer(nn.Module):
    """MLP-Mixer S/16-like: 16x16 patches of a 224 image (196 tokens), d
    512, 8 blocks, token and channel MLPs, mean pool, 1000 classes."""

    def __init__(self, d=512, blocks=8):
        super().__init__()
        self.patch = nn.Conv2d(3, d, 16, stride=16)
        self.blocks = nn.Sequential(*[MixerBlock(196, d, 256, 2048)
                                      for _ in range(blocks)])
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, 1000)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        return self.head(self.norm(self.blocks(x)).mean(dim=1))


class UNetSmall(nn.Module):
    """Encoder-decoder CNN (U-Net style, 3 levels): strided convolutions
    down, ConvTranspose2d up, skip connections concatenated."""

    def __init__(self, c=32):
        super().__init__()

        def block(i, o):
            return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.BatchNorm2d(o),
                                 nn.ReLU(), nn.Conv2d(o, o, 3, padding=1),
                                 nn.BatchNorm2d(o), nn.ReLU())
        self.e1, self.e2, self.e3 = block(3, c), block(c, 2 * c), block(2 * c, 4 * c)
        self.pool = nn.MaxPool2d(2)
        self.u2 = nn.ConvTranspose2d(4 * c, 2 * c, 2, stride=2)
        self.d2 = block(4 * c, 2 * c)
        self.u1 = nn.ConvTranspose2d(2 * c, c, 2, stride=2)
        self.d1 = block(2 * c, c)
        self.head = nn.Conv2d(c, 2, 1)

    def forward(self, x):
        e1 = self.e1(x)
        e2 = self.e2(self.pool(e1))
        e3 = self.e3(self.pool(e2))
        d2 = self.d2(torch.cat([self.u2(e3), e2], 1))
        d1 = self.d1(torch.cat([self.u1(d2), e1], 1))
        return self.head(d1)


class SegmentationOut(nn.Module):
    """torchvision's segmentation models return {'out': ...}: the tensor."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


# The broad benchmark set (issue 20), beyond bench/'s nine: torchvision
# classifiers of every family, segmentation nets (dilated convolutions,
# bilinear resizes), recurrent nets, transformers, an MLP-Mixer and an
# encoder-decoder CNN. Name -> (torchvision builder, input H(=W)).
TORCHVISION = {
    "resnet34": ("resnet34", 224), "wide_resnet50_2": ("wide_resnet50_2", 224),
    "densenet121": ("densenet121", 224), "googlenet": ("googlenet", 224),
    "inception_v3": ("inception_v3", 299),
    "mobilenet_v3_small": ("mobilenet_v3_small", 224),
    "mobilenet_v3_large": ("mobilenet_v3_large", 224),
    "mnasnet1_0": ("mnasnet1_0", 224), "regnet_y_400mf": ("regnet_y_400mf", 224),
    "regnet_x_1_6gf": ("regnet_x_1_6gf", 224), "efficientnet_b1": ("efficientnet_b1", 240),
    "efficientnet_v2_s": ("efficientnet_v2_s", 224), "convnext_tiny": ("convnext_tiny", 224),
    "alexnet": ("alexnet", 224), "shufflenet_v2_x0_5": ("shufflenet_v2_x0_5", 224),
    "squeezenet1_0": ("squeezenet1_0", 224), "vit_b_16": ("vit_b_16", 224),
    "vit_b_32": ("vit_b_32", 224), "swin_t": ("swin_t", 224),
}
SEGMENTATION = {
    "deeplabv3_resnet50": ("deeplabv3_resnet50", 224),
    "deeplabv3_mobilenet_v3_large": ("deeplabv3_mobilenet_v3_large", 224),
    "lraspp_mobilenet_v3_large": ("lraspp_mobilenet_v3_large", 224),
    "fcn_resnet50": ("fcn_resnet50", 224),
}
BROAD = (list(TORCHVISION) + list(SEGMENTATION) +
         ["resnext50", "lstm_tagger", "gru_encoder", "transformer_seq2seq",
          "mlp_mixer", "unet_small"])


def build(name):
    tv = torchvision.models
    if name == "resnet18":
        return tv.resnet18(weights=None), torch.randn(1, 3, 224, 224)
    if name == "resnet50":
        return tv.resnet50(weights=None), torch.randn(1, 3, 224, 224)
    if name == "mobilenet_v2":
        return tv.mobilenet_v2(weights=None), torch.randn(1, 3, 224, 224)
    if name == "squeezenet1_1":
        return tv.squeezenet1_1(weights=None), torch.randn(1, 3, 224, 224)
    if name == "resnext50":
        # Grouped 3x3 convolutions (32 groups) in every block.
        return tv.resnext50_32x4d(weights=None), torch.randn(1, 3, 224, 224)
    if name == "shufflenet_v2":
        return tv.shufflenet_v2_x1_0(weights=None), torch.randn(1, 3, 224, 224)
    if name == "efficientnet_b0":
        return tv.efficientnet_b0(weights=None), torch.randn(1, 3, 224, 224)
    if name == "bert":
        return BertEncoder(), torch.randn(1, 128, 256)
    if name == "bert768":
        # BERT-base width (d 768, 12 heads, FF 3072) at 4 layers, seq 128:
        # the encoder the quantization targets are measured on.
        return BertEncoder(d=768, heads=12, layers=4, ff=3072), \
            torch.randn(1, 128, 768)
    if name == "gpt":
        return GPTDecoder(), torch.randint(0, 512, (1, 64))
    if name == "moe":
        return MoE(), torch.randn(32, 64)
    if name == "lstm_tagger":
        return LSTMTagger(), torch.randint(0, 5000, (1, 64))
    if name == "gru_encoder":
        return GRUEncoder(), torch.randn(1, 100, 80)
    if name == "transformer_seq2seq":
        return Seq2SeqTransformer(), torch.randint(0, 1000, (1, 64))
    if name == "mlp_mixer":
        return MLPMixer(), torch.randn(1, 3, 224, 224)
    if name == "unet_small":
        return UNetSmall(), torch.randn(1, 3, 128, 128)
    if name in TORCHVISION:
        fn, hw = TORCHVISION[name]
        kwargs = {"aux_logits": False, "init_weights": True} if name in (
            "googlenet", "inception_v3") else {}
        return getattr(tv, fn)(weights=None, **kwargs), torch.randn(1, 3, hw, hw)
    if name in SEGMENTATION:
        fn, hw = SEGMENTATION[name]
        kwargs = {"weights_backbone": None}
        if not name.startswith("lraspp"):
            kwargs["aux_loss"] = False
        return (SegmentationOut(getattr(tv.segmentation, fn)(weights=None, **kwargs)),
                torch.randn(1, 3, hw, hw))
    raise SystemExit(f"unknown model '{name}'")


def randomize_batchnorm(model):
    """Fresh BatchNorm statistics are 0/1, which would hide mistakes in how
    they are applied; give them random values."""
    g = torch.Generator().manual_seed(SEED + 1)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.num_features, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) + 0.5)
            m.weight.data.copy_(torch.rand(m.num_features, generator=g) + 0.5)
            m.bias.data.copy_(torch.randn(m.num_features, generator=g) * 0.1)


def main():
    name, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(SEED)
    model, example = build(name)
    model.eval()
    randomize_batchnorm(model)
    # Transformer layers: under no_grad torch 1.13 takes a fused fast path
    # with no ONNX form, so export and reference run with grad enabled.
    with torch.enable_grad():
        ref = model(example).detach().numpy()
        torch.onnx.export(model, (example,), os.path.join(out, name + ".onnx"),
                          opset_version=17, input_names=["input"],
                          output_names=["output"], do_constant_folding=True)
    np.save(os.path.join(out, "input.npy"), example.numpy())
    np.save(os.path.join(out, "output.npy"), ref)


if __name__ == "__main__":
    main()
