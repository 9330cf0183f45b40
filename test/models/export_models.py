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
