"""Small PyTorch models for the torch.fx importer tests
(test_torch_importer.py): a BERT-style encoder written out op by op, an
encoder built from nn.TransformerEncoderLayer, a top-2 mixture of experts,
and a model that strings the MoE gating ops together.

Sizes are small so that export + compile + run takes a few seconds.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class SelfAttention(nn.Module):
    """Multi-head self-attention written out: head split/merge with
    view/transpose, matmul, scale, additive mask, softmax, matmul."""

    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.query = nn.Linear(d, d)
        self.key = nn.Linear(d, d)
        self.value = nn.Linear(d, d)
        self.out = nn.Linear(d, d)
        self.dropout = nn.Dropout(0.1)

    def split_heads(self, x):
        b, n, d = x.size()
        return x.view(b, n, self.heads, d // self.heads).transpose(1, 2)

    def forward(self, x, mask):
        b, n, d = x.shape
        q = self.split_heads(self.query(x))
        k = self.split_heads(self.key(x))
        v = self.split_heads(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d // self.heads)
        scores = scores + mask
        probs = self.dropout(F.softmax(scores, dim=-1))
        context = (probs @ v).transpose(1, 2).contiguous().view(b, n, d)
        return self.out(context)


class BertLayer(nn.Module):
    def __init__(self, d, heads, ff, approximate):
        super().__init__()
        self.attention = SelfAttention(d, heads)
        self.norm1 = nn.LayerNorm(d, eps=1e-12)
        self.intermediate = nn.Linear(d, ff)
        self.act = nn.GELU(approximate=approximate)
        self.output = nn.Linear(ff, d)
        self.norm2 = nn.LayerNorm(d, eps=1e-12)

    def forward(self, x, mask):
        x = self.norm1(x + self.attention(x, mask))
        return self.norm2(x + self.output(self.act(self.intermediate(x))))


class BertEncoder(nn.Module):
    """BERT-style encoder: word + position + token-type embeddings, an
    extended attention mask computed from a 0/1 padding mask, post-norm
    layers with GELU, and a tanh pooler over the first token."""

    def __init__(self, vocab=100, d=64, heads=4, ff=128, layers=2, max_len=32,
                 approximate="none"):
        super().__init__()
        self.words = nn.Embedding(vocab, d)
        self.positions = nn.Embedding(max_len, d)
        self.token_types = nn.Embedding(2, d)
        self.norm = nn.LayerNorm(d, eps=1e-12)
        self.layers = nn.ModuleList(BertLayer(d, heads, ff, approximate)
                                    for _ in range(layers))
        self.pooler = nn.Linear(d, d)

    def forward(self, ids, attention_mask):
        n = ids.size(1)
        positions = torch.arange(n, dtype=torch.long).unsqueeze(0)
        types = torch.zeros_like(ids)
        x = self.words(ids) + self.positions(positions) + self.token_types(types)
        x = self.norm(x)
        mask = (1.0 - attention_mask[:, None, None, :].float()) * -10000.0
        for layer in self.layers:
            x = layer(x, mask)
        pooled = torch.tanh(self.pooler(x[:, 0]))
        return x, pooled


class TorchEncoder(nn.Module):
    """nn.TransformerEncoder of nn.TransformerEncoderLayer (+ final norm)."""

    def __init__(self, d=64, heads=4, ff=128, layers=2, batch_first=True, norm_first=False,
                 activation="gelu"):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d, heads, ff, dropout=0.1, activation=activation,
                                           batch_first=batch_first, norm_first=norm_first)
        self.encoder = nn.TransformerEncoder(layer, layers, norm=nn.LayerNorm(d))
        self.head = nn.Linear(d, 10)

    def forward(self, x, mask=None, padding_mask=None):
        h = self.encoder(x, mask=mask, src_key_padding_mask=padding_mask)
        return self.head(h)


class AttentionBlock(nn.Module):
    """nn.MultiheadAttention used directly, its averaged attention weights
    returned too (cross-attention over a memory of another length)."""

    def __init__(self, d=32, heads=4, batch_first=True):
        super().__init__()
        self.attn = nn.MultiheadAttention(d, heads, batch_first=batch_first)

    def forward(self, x, memory, key_padding_mask):
        out, weights = self.attn(x, memory, memory, key_padding_mask=key_padding_mask)
        return out, weights


class Expert(nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.fc1 = nn.Linear(d, hidden)
        self.fc2 = nn.Linear(hidden, d)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class TopKMoE(nn.Module):
    """Top-k gated mixture of experts: softmax gate -> topk -> renormalized
    weights -> every expert's output weighted by its gate, masked to the
    tokens routed to it, summed. Also returns a load-balancing loss term."""

    def __init__(self, d=64, hidden=128, experts=8, k=2):
        super().__init__()
        self.k = k
        self.num_experts = experts
        self.gate = nn.Linear(d, experts, bias=False)
        self.experts = nn.ModuleList(Expert(d, hidden) for _ in range(experts))

    def forward(self, x):
        b, t, d = x.shape
        tokens = x.reshape(-1, d)
        probs = torch.softmax(self.gate(tokens), dim=-1)
        weights, index = torch.topk(probs, self.k, dim=-1)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        # Dense (tokens, experts) gate matrix, zero outside the top k.
        gates = torch.zeros_like(probs).scatter(1, index, weights)
        out = torch.zeros_like(tokens)
        for e, expert in enumerate(self.experts):
            routed = (index == e).any(dim=-1, keepdim=True)
            y = gates[:, e].unsqueeze(-1) * expert(tokens)
            out = out + torch.where(routed, y, torch.zeros_like(y))
        # Switch-transformer style balance term: fraction routed x mean prob.
        density = F.one_hot(index[..., 0], self.num_experts).float().mean(dim=0)
        balance = (density * probs.mean(dim=0)).sum() * self.num_experts
        return out.view(b, t, d), balance


class GatingOps(nn.Module):
    """The gating ops of routed models strung together: gather,
    scatter_add, index_select, masked_fill, comparisons, casts, arange,
    slices and Ellipsis indexing, amax/sum with dims, topk (smallest,
    unsorted)."""

    def __init__(self, d=16, experts=4):
        super().__init__()
        self.proj = nn.Linear(d, experts)
        self.register_buffer("table", torch.randn(experts, d))

    def forward(self, x, ids):
        logits = self.proj(x)                                    # (n, e)
        probs = F.softmax(logits, -1)
        top = probs.topk(2, dim=1)
        picked = torch.gather(probs, 1, top.indices)              # == top.values
        smallest, _ = torch.topk(logits, 1, dim=-1, largest=False, sorted=False)
        counts = torch.zeros(probs.shape[1], dtype=probs.dtype).scatter_add(
            0, top.indices[:, 0], torch.ones_like(probs[:, 0]))
        rows = self.table.index_select(0, ids)                   # (n, d)
        hot = (logits >= logits.amax(-1, keepdim=True)).to(torch.float32)
        masked = logits.masked_fill(probs < 0.2, float("-inf")).softmax(-1)
        positions = torch.arange(x.shape[0]).float()
        mixed = rows[:, 1:3] * picked[..., :1] + positions[:, None] * 0.01
        long_ids = ids.long() + (ids > 2).long()
        return (picked.sum(-1) - top.values.sum(-1), smallest, counts, mixed,
                hot, masked, long_ids, x[..., -1], x[None, 1:, 2].abs().sqrt())


class ElementwiseZoo(nn.Module):
    """Elementwise torch functions, Tensor methods and operators, with
    Python scalars on either side and mixed dtypes."""

    def forward(self, x, y, n):
        a = torch.add(x, y, alpha=2) - 3 * x + x.sub(1.5) * 2
        b = (x / 4 + 1 / (y.abs() + 1)).pow(2) + 2 ** x.clamp(-2, 2) + x ** 3
        c = torch.rsqrt(y.abs() + 1) + torch.sqrt(x.abs()) + x.exp().log1p() - y.neg()
        d = torch.maximum(x, y) * torch.minimum(x, y).sigmoid() + F.relu6(x * 4)
        e = torch.where(x > y, x, y * 0.5) + (x >= 0).float() - (y < 0.1).to(x.dtype)
        f = F.leaky_relu(x, 0.2) + F.elu(y) + F.hardswish(x) + F.hardsigmoid(y) + F.silu(x)
        g = F.softplus(x) + F.mish(y) + torch.tanh(x) * torch.erf(y) + F.hardtanh(x, -0.5, 0.5)
        h = n // 3 + n % 4 + (n * 2 - 1).abs() + torch.div(n, 2, rounding_mode="trunc")
        i = (n.float() / 3).floor() + torch.remainder(x, 0.7) + torch.fmod(x, 0.7)
        j = torch.logical_and(x > 0, y > 0) | ~(x < -0.5) & (n > 4)
        k = x.masked_fill(y > 0.5, 0.25) + x.clamp(min=0.1) + y.clamp(max=y * 0.5)
        special = torch.isnan(x.log()) | y.div((x > 0).float()).isinf()
        return a, b, c, d, e, f, g, h, i, j, k, torch.square(x) - x.reciprocal().sign(), special


class ShapeZoo(nn.Module):
    """Reshapes, transposes, joins, splits, slicing and repeats."""

    def forward(self, x):                                       # (2, 3, 4, 5)
        b, c, h, w = x.shape
        a = x.permute(0, 2, 3, 1).reshape(b, -1, c).transpose(1, 2).flatten(1)
        s1, s2, s3 = torch.split(x, [1, 1, 1], dim=1)
        parts = x.chunk(2, dim=-1)
        st = torch.stack([s1.squeeze(1), s3.squeeze(), s2[:, 0]], dim=-1)
        u = torch.unbind(x, dim=3)
        cat = torch.cat([parts[0], parts[1], u[0].unsqueeze(-1)], dim=3)
        sl = x[:, 1:, ::2, -2] + x[..., 1:3, 0][:, 1:, None]
        rep = x[:, :1].repeat(1, 2, 1, 1).expand(2, 2, 4, 5) + x[:1, :2].expand_as(x[:, :2])
        nar = x.narrow(3, 1, 3).select(1, 2).transpose(0, 2)
        flip = torch.flip(x, [3]).movedim(1, -1)
        tiled = torch.tile(x[0, 0], (2, 1))
        idx = x[:, torch.tensor([2, 0])]
        return a, st, cat, sl, rep, nar.contiguous(), flip, tiled, idx, x.view(b, c, -1).mT


class ReduceZoo(nn.Module):
    """Reductions, normalizations and scans."""

    def forward(self, x):                                       # (3, 8, 6)
        r = (x.sum() + x.mean((1, 2)).sum() + x.amax(dim=-1).sum() + x.amin(1, True).sum())
        m, mi = x.max(dim=1)
        v = x.var(dim=-1) + x.std(dim=1, keepdim=True).mean() + x.var(-1, unbiased=False)
        n = torch.norm(x, dim=-1) + F.normalize(x, dim=1).sum(-1)
        p = x.abs().prod(dim=2) + x.logsumexp(-1) + torch.cumsum(x, dim=2)[..., -1]
        am = x.argmax(dim=1) + x.argmin(1, keepdim=True).sum(1) + x.argmax()
        sv, si = torch.sort(x, dim=-1, descending=True)
        tri = torch.tril(x[0]) + torch.triu(x[1], diagonal=1)
        anyall = (x > 2).any(dim=1).float() + (x > -3).all(1).float()
        ls = F.log_softmax(x, dim=1) + F.softmin(x, dim=-1) + torch.softmax(x, 0)
        return r, m, mi, v, n, p, am, sv, si, tri, anyall, ls, torch.argsort(x[0, 0])


class ModuleZoo(nn.Module):
    """Leaf modules beyond the CNNs: pads and padding modes, pooling,
    resizing, grouped/instance norms, transposed convolution, PReLU."""

    def __init__(self):
        super().__init__()
        self.conv_reflect = nn.Conv2d(4, 4, 3, padding=1, padding_mode="reflect")
        self.conv_same = nn.Conv2d(4, 6, 4, padding="same", dilation=1, bias=False)
        self.deconv = nn.ConvTranspose2d(6, 4, 3, stride=2, padding=1, output_padding=1)
        self.group = nn.GroupNorm(2, 4)
        self.instance = nn.InstanceNorm2d(4, affine=True)
        self.prelu = nn.PReLU(4)
        self.pool = nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True,
                                 count_include_pad=False)
        self.max = nn.MaxPool2d(2, stride=2, ceil_mode=True)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.conv1d = nn.Conv1d(4, 2, 3, padding=1)
        self.bn1d = nn.BatchNorm1d(2)

    def forward(self, x):                                       # (1, 4, 9, 9)
        a = self.prelu(self.group(self.conv_reflect(x)))
        b = self.deconv(self.conv_same(self.instance(x)))
        c = self.pool(x) + self.max(x) + F.avg_pool2d(x, 3, stride=2, padding=1)
        d = self.up(x) + F.interpolate(x, size=(18, 18), mode="bilinear", align_corners=False)
        e = F.pad(x, (1, 2, 0, 1), value=0.5) + F.pad(x, (1, 2, 0, 1), mode="replicate")
        f = self.bn1d(self.conv1d(x.flatten(2)[..., :9]))
        corner = x[..., :8, :8]
        g = F.adaptive_avg_pool2d(corner, (2, 4)) + F.adaptive_max_pool2d(corner, 2)[..., :1]
        return a, b, c, d, e, f, g, F.pixel_shuffle(x, 2)


class LinalgZoo(nn.Module):
    """Matrix products in their function, method and operator forms."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(6, 5))
        self.b = nn.Parameter(torch.randn(6))
        self.v = nn.Parameter(torch.randn(5))

    def forward(self, x, y):                                    # (4, 5), (2, 4, 5)
        a = torch.addmm(self.b, x, self.w.t(), beta=0.5, alpha=2.0)
        b = torch.baddbmm(y @ y.transpose(1, 2), y, y.mT, alpha=0.5)
        c = torch.einsum("bij,kj->bik", y, self.w) + F.linear(y, self.w)
        d = torch.mm(x, x.T) + torch.bmm(y, y.transpose(-1, -2)).sum(0)
        e = torch.matmul(x, self.v) + F.linear(x, self.v) + x.matmul(self.v)
        return a, b, c, d, e, F.linear(y, self.w, self.b).cumsum(-1)


class ActivationZoo(nn.Module):
    """Activation and normalization modules, and the torch.* / Tensor
    method / F.* forms of the same ops."""

    def __init__(self, d=8):
        super().__init__()
        self.modules_ = nn.ModuleList([
            nn.ReLU(), nn.ReLU6(), nn.Hardswish(), nn.Hardsigmoid(), nn.Tanh(), nn.Sigmoid(),
            nn.SiLU(), nn.GELU(), nn.GELU(approximate="tanh"), nn.LeakyReLU(0.1), nn.ELU(),
            nn.Softplus(), nn.Mish(), nn.PReLU(), nn.Hardtanh(-2, 2), nn.Softmax(dim=-1),
            nn.LogSoftmax(dim=1), nn.Identity(), nn.Dropout(0.3)])
        self.norm = nn.LayerNorm(d)
        self.weight = nn.Parameter(torch.rand(d) + 0.5)
        self.bias = nn.Parameter(torch.randn(d))

    def forward(self, x):                                       # (2, 3, d)
        outs = [m(x) for m in self.modules_]
        outs.append(self.norm(x) + F.layer_norm(x, (x.shape[-1],), self.weight, self.bias))
        outs.append(torch.relu(x) + x.relu() + F.relu(x) + x.sigmoid() + F.gelu(x))
        outs.append(x.softmax(-1) + torch.softmax(x, 1) + F.softmax(x, dim=0))
        outs.append(x.exp() + x.pow(2) + (x * x + 1).rsqrt() + torch.neg(x) + x.tanh())
        return outs


class ParameterUpdate(nn.Module):
    """A forward that doubles its own parameter: a state change no artifact
    can keep (the importers reject it)."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(3))

    def forward(self, x):
        self.w.data.mul_(2)
        return x * self.w
