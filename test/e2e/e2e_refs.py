"""numpy references for Tessel's end-to-end tests.

Every function of a model compiled by an e2e test must have a reference here,
registered under the function's name (or under the name given with
`run_e2e.py --ref`).  A reference receives the function's inputs as numpy
arrays, in signature order, and returns its outputs (one array or a tuple).
References compute in float64 from the same float32 inputs the artifact gets,
and are written independently of the compiler's lowering (explicit windows
for convolution and pooling, textbook formulas for the normalizations).

`@ref(...)` options:
  inputs   {input index: generator(rng, shape, dtype)} for inputs that need a
           special range (positive for sqrt, valid indices for gather, ...);
           all others are standard normal (floats) or integers in [-8, 8).
  atol, rtol
           the tolerance, |got - ref| <= atol + rtol * |ref| (the driver's
           defaults, 1e-5 and 1e-4, unless a case documents why it needs more).
  weights  the reference takes `weights=` (an .npz given with --weights).
"""
import math

import numpy as np

DEFAULT_ATOL = 1e-5
DEFAULT_RTOL = 1e-4


class Case:
    def __init__(self, name, fn, inputs, atol, rtol, weights):
        self.name = name
        self.fn = fn
        self.inputs = inputs
        self.atol = atol
        self.rtol = rtol
        self.weights = weights


REFS = {}


def ref(name=None, inputs=None, atol=DEFAULT_ATOL, rtol=DEFAULT_RTOL,
        weights=False):
    def deco(fn):
        key = name or fn.__name__
        assert key not in REFS, f"duplicate reference {key}"
        REFS[key] = Case(key, fn, inputs or {}, atol, rtol, weights)
        return fn
    return deco


# ---------------------------------------------------------------------------
# Input generators
# ---------------------------------------------------------------------------

def positive(lo=0.1, hi=4.0):
    return lambda rng, shape, dtype: rng.uniform(lo, hi, shape).astype(dtype)


def away_from_zero(lo=0.25, hi=3.0):
    def gen(rng, shape, dtype):
        mag = rng.uniform(lo, hi, shape)
        sign = np.where(rng.random(shape) < 0.5, -1.0, 1.0)
        return (mag * sign).astype(dtype)
    return gen


def indices(hi):
    return lambda rng, shape, dtype: rng.integers(0, hi, shape).astype(dtype)


def uniform(lo, hi):
    return lambda rng, shape, dtype: rng.uniform(lo, hi, shape).astype(dtype)


# ---------------------------------------------------------------------------
# Shared numpy helpers (float64)
# ---------------------------------------------------------------------------

def f64(*xs):
    return [np.asarray(x, dtype=np.float64) for x in xs]


def conv2d_nhwc(x, w, b, pad, stride, dilation, groups=1):
    """x: N,H,W,C; w: F,KH,KW,C/groups (OHWI); pad: top,bottom,left,right."""
    x, w, b = f64(x, w, b)
    n, h, wd, c = x.shape
    f, kh, kw, cg = w.shape
    assert c == cg * groups and f % groups == 0
    top, bottom, left, right = pad
    sh, sw = stride
    dh, dw = dilation
    oh = (h + top + bottom - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + left + right - dw * (kw - 1) - 1) // sw + 1
    xp = np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)))
    out = np.zeros((n, oh, ow, f))
    fg = f // groups
    for g in range(groups):
        xs = xp[..., g * cg:(g + 1) * cg]
        ws = w[g * fg:(g + 1) * fg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, i * dh:i * dh + sh * (oh - 1) + 1:sh,
                           j * dw:j * dw + sw * (ow - 1) + 1:sw, :]
                out[..., g * fg:(g + 1) * fg] += np.einsum(
                    "nhwc,fc->nhwf", patch, ws[:, i, j, :])
    return out + b


def depthwise_hwcm(x, w, b, pad, stride, dilation):
    """TOSA depthwise_conv2d: w is KH,KW,C,M; output channel c*M + m."""
    kh, kw, c, m = w.shape
    w_ohwi = np.transpose(w, (2, 3, 0, 1)).reshape(c * m, kh, kw, 1)
    return conv2d_nhwc(x, w_ohwi, b, pad, stride, dilation, groups=c)


def pool2d_nhwc(x, kernel, stride, pad, mode):
    """max: padding never wins; avg: padding is not counted (TOSA)."""
    (x,) = f64(x)
    n, h, wd, c = x.shape
    kh, kw = kernel
    sh, sw = stride
    top, bottom, left, right = pad
    oh = (h + top + bottom - kh) // sh + 1
    ow = (wd + left + right - kw) // sw + 1
    xp = np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)),
                constant_values=np.nan)
    wins = np.stack([xp[:, i:i + sh * (oh - 1) + 1:sh, j:j + sw * (ow - 1) + 1:sw, :]
                     for i in range(kh) for j in range(kw)])
    return np.nanmax(wins, axis=0) if mode == "max" else np.nanmean(wins, axis=0)


def softmax(x, axis):
    (x,) = f64(x)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax(x, axis):
    (x,) = f64(x)
    s = x - x.max(axis=axis, keepdims=True)
    return s - np.log(np.exp(s).sum(axis=axis, keepdims=True))


def layer_norm(x, axis, scale=None, bias=None, eps=1e-5):
    (x,) = f64(x)
    axes = tuple(range(axis % x.ndim, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps)
    if scale is not None:
        y = y * np.float64(scale)
    if bias is not None:
        y = y + np.float64(bias)
    return y


def batch_norm(x, scale, bias, mean, var, channel_axis, eps=1e-5):
    x, scale, bias, mean, var = f64(x, scale, bias, mean, var)
    shape = [1] * x.ndim
    shape[channel_axis] = -1
    r = lambda v: v.reshape(shape)
    return (x - r(mean)) / np.sqrt(r(var) + eps) * r(scale) + r(bias)


_erf = np.vectorize(math.erf, otypes=[np.float64])


def erf(x):
    return _erf(np.float64(x))


def gelu(x, approximate):
    (x,) = f64(x)
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def relu(x):
    return np.maximum(np.float64(x), 0)


# ---------------------------------------------------------------------------
# Models (examples/*.mlir, weights from gen_models.py's .npz)
# ---------------------------------------------------------------------------

@ref(weights=True)
def mlp(x, weights):
    w = {k: np.float64(v) for k, v in weights.items()}
    h = relu(np.float64(x) @ w["fc1_w"] + w["fc1_b"])
    return h @ w["fc2_w"] + w["fc2_b"]


@ref(weights=True)
def cnn(x, weights):
    w = {k: np.float64(v) for k, v in weights.items()}
    h = relu(conv2d_nhwc(x, w["conv_w"], w["conv_b"], (1, 1, 1, 1), (1, 1), (1, 1)))
    h = pool2d_nhwc(h, (2, 2), (2, 2), (0, 0, 0, 0), "max")
    g = h.mean(axis=(1, 2))  # global average pool -> N x C
    return g @ w["fc_w"] + w["fc_b"]


# ---------------------------------------------------------------------------
# ops_matmul.mlir
# ---------------------------------------------------------------------------

@ref()
def matmul_2d(a, b):
    return np.float64(a) @ np.float64(b)


@ref()
def batch_matmul(a, b):
    return np.float64(a) @ np.float64(b)


# Must match the constants in ops_matmul.mlir.
FC_CONST_W = np.array([[1.5, -2.0], [0.25, 0.5], [-1.0, 3.0]])
FC_CONST_B = np.array([0.125, -0.75])


@ref()
def fc_const(x):
    return np.float64(x) @ FC_CONST_W + FC_CONST_B


# ---------------------------------------------------------------------------
# ops_conv.mlir, ops_conv_pad_groups.mlir
# ---------------------------------------------------------------------------

@ref()
def conv2d_stride(x, w, b):
    return conv2d_nhwc(x, w, b, (0, 0, 0, 0), (2, 2), (1, 1))


@ref()
def conv2d_pad_dilation(x, w, b):
    return conv2d_nhwc(x, w, b, (1, 2, 0, 1), (1, 2), (2, 1))


def transpose_conv_nhwc(x, w, b, out_pad, stride, out_hw):
    """TOSA transpose_conv2d: out[n, ih*sh + kh + top, iw*sw + kw + left,
    oc] += x[n, ih, iw, ic] * w[oc, kh, kw, ic] (outside the output: cut),
    plus the bias; w is OHWI."""
    x, w, b = f64(x, w, b)
    n, h, wd, _ = x.shape
    oc, kh, kw, _ = w.shape
    top, _, left, _ = out_pad
    oh, ow = out_hw
    out = np.zeros((n, oh, ow, oc))
    for ih in range(h):
        for iw in range(wd):
            for i in range(kh):
                for j in range(kw):
                    y, z = ih * stride[0] + i + top, iw * stride[1] + j + left
                    if 0 <= y < oh and 0 <= z < ow:
                        out[:, y, z, :] += x[:, ih, iw, :] @ w[:, i, j, :].T
    return out + b


@ref()
def transpose_conv_k2s2(x, w, b):
    return transpose_conv_nhwc(x, w, b, (0, 0, 0, 0), (2, 2), (8, 10))


@ref()
def transpose_conv_k3s2_pad(x, w, b):
    return transpose_conv_nhwc(x, w, b, (1, 0, 0, 0), (2, 2), (10, 9))


@ref()
def conv2d_aspp_dilation_12(x, w, b):
    return conv2d_nhwc(x, w, b, (12, 12, 12, 12), (1, 1), (12, 12))


@ref()
def conv2d_padded_taps_strided(x, w, b):
    return conv2d_nhwc(x, w, b, (8, 0, 0, 8), (2, 2), (4, 4))


@ref()
def depthwise_tosa_m2(x, w, b):
    return depthwise_hwcm(x, w, b, (1, 1, 1, 1), (1, 1), (1, 1))


@ref()
def grouped_conv_g2(x, w, b):
    return conv2d_nhwc(x, w, b, (1, 1, 1, 1), (1, 1), (1, 1), groups=2)


@ref()
def depthwise_m1(x, w, b):
    return conv2d_nhwc(x, w, b, (1, 1, 1, 1), (2, 2), (1, 1), groups=4)


@ref()
def depthwise_m2_dilated(x, w, b):
    return conv2d_nhwc(x, w, b, (2, 2, 2, 2), (1, 1), (2, 2), groups=3)


@ref()
def conv2d_dilation(x, w, b):
    return conv2d_nhwc(x, w, b, (0, 0, 0, 0), (1, 2), (2, 1))


@ref()
def depthwise_tosa_m2_valid(x, w, b):
    return depthwise_hwcm(x, w, b, (0, 0, 0, 0), (1, 1), (1, 1))


@ref()
def grouped_conv_g2_valid(x, w, b):
    return conv2d_nhwc(x, w, b, (0, 0, 0, 0), (1, 1), (1, 1), groups=2)


@ref()
def grouped_conv_square_runtime_w(x, w, b):
    return conv2d_nhwc(x, w, b, (1, 0, 2, 1), (2, 1), (1, 2), groups=3)


@ref()
def depthwise_m1_valid(x, w, b):
    return conv2d_nhwc(x, w, b, (0, 0, 0, 0), (2, 2), (1, 1), groups=4)


@ref()
def depthwise_m2_dilated_valid(x, w, b):
    return conv2d_nhwc(x, w, b, (0, 0, 0, 0), (1, 1), (2, 2), groups=3)


# ---------------------------------------------------------------------------
# ops_pool.mlir, ops_pool_padded.mlir
# ---------------------------------------------------------------------------

@ref()
def maxpool_2x2(x):
    return pool2d_nhwc(x, (2, 2), (2, 2), (0, 0, 0, 0), "max")


@ref()
def maxpool_3x3_stride(x):
    return pool2d_nhwc(x, (3, 3), (2, 1), (0, 0, 0, 0), "max")


@ref()
def avgpool_stride(x):
    return pool2d_nhwc(x, (3, 3), (2, 2), (0, 0, 0, 0), "avg")


@ref()
def maxpool_pad_stride(x):
    return pool2d_nhwc(x, (3, 3), (2, 2), (1, 1, 1, 1), "max")


@ref()
def avgpool_pad_stride(x):
    return pool2d_nhwc(x, (3, 3), (2, 2), (1, 1, 1, 1), "avg")


@ref()
def avgpool_asym(x):
    return pool2d_nhwc(x, (2, 3), (1, 2), (0, 1, 1, 2), "avg")


@ref()
def global_avgpool_full_kernel(x):
    return np.float64(x).mean(axis=(1, 2), keepdims=True)


@ref()
def global_avg_reduce_mean(x):
    return np.float64(x).mean(axis=(1, 2), keepdims=True)


@ref()
def global_max_reduce_max(x):
    return np.float64(x).max(axis=(1, 2), keepdims=True)


# ---------------------------------------------------------------------------
# ops_elementwise.mlir
# ---------------------------------------------------------------------------

@ref()
def add_bcast(a, b):
    return np.float64(a) + np.float64(b)


@ref()
def sub_bcast(a, b):
    return np.float64(a) - np.float64(b)


@ref()
def mul_bcast(a, b):
    return np.float64(a) * np.float64(b)


@ref()
def max_min_bcast(a, b, c):
    a, b, c = f64(a, b, c)
    return np.maximum(a, b), np.minimum(a, c)


@ref()
def relu_clamp(x):
    (x,) = f64(x)
    return np.maximum(x, 0), np.clip(x, -1.0, 1.0)


@ref()
def sigmoid(x):
    return 1 / (1 + np.exp(-np.float64(x)))


@ref()
def tanh(x):
    return np.tanh(np.float64(x))


@ref(inputs={0: uniform(-4, 4)})
def exp(x):
    return np.exp(np.float64(x))


@ref(name="erf")
def erf_case(x):
    return erf(x)


@ref()
def gelu_none(x):
    return gelu(x, "none")


@ref()
def gelu_tanh(x):
    return gelu(x, "tanh")


@ref(inputs={0: positive()})
def sqrt(x):
    return np.sqrt(np.float64(x))


@ref(inputs={0: away_from_zero()})
def reciprocal(x):
    return 1 / np.float64(x)


@ref(inputs={1: away_from_zero()})
def divf(a, b):
    return np.float64(a) / np.float64(b)


@ref(inputs={0: uniform(-4, 4)})
def math_on_tensors(x):
    # math.exp / math.tanh / arith.mulf / arith.addf applied to tensors.
    (x,) = f64(x)
    return np.exp(x) * np.tanh(x) + x


# ---------------------------------------------------------------------------
# ops_norm.mlir
# ---------------------------------------------------------------------------

@ref()
def softmax_last(x):
    return softmax(x, -1)


@ref()
def softmax_mid(x):
    return softmax(x, 1)


@ref()
def log_softmax_last(x):
    return log_softmax(x, -1)


@ref()
def log_softmax_mid(x):
    return log_softmax(x, 1)


@ref()
def layer_norm_last_affine(x, g, b):
    return layer_norm(x, -1, g, b)


@ref()
def layer_norm_last_plain(x):
    return layer_norm(x, -1)


@ref()
def layer_norm_last2_affine(x, g, b):
    return layer_norm(x, -2, g, b)


@ref()
def layer_norm_last2_plain(x):
    return layer_norm(x, 1, eps=1e-3)


@ref()
def layer_norm_scale_only(x, g):
    return layer_norm(x, -1, g)


@ref(inputs={4: positive(0.2, 2.0)})
def batch_norm_nhwc(x, s, b, m, v):
    return batch_norm(x, s, b, m, v, 3)


@ref(inputs={4: positive(0.2, 2.0)})
def batch_norm_nchw(x, s, b, m, v):
    return batch_norm(x, s, b, m, v, 1, eps=1e-3)


# ---------------------------------------------------------------------------
# ops_reduce.mlir
# ---------------------------------------------------------------------------

@ref()
def reduce_sum_axes(x):
    (x,) = f64(x)
    return (x.sum(axis=0, keepdims=True), x.sum(axis=1, keepdims=True),
            x.sum(axis=2, keepdims=True))


@ref()
def reduce_max_axes(x):
    (x,) = f64(x)
    return x.max(axis=0, keepdims=True), x.max(axis=2, keepdims=True)


@ref()
def reduce_mean_axes(x):
    (x,) = f64(x)
    return x.mean(axis=1, keepdims=True), x.mean(axis=2, keepdims=True)


# ---------------------------------------------------------------------------
# ops_shape.mlir, ops_slice_concat_pad.mlir (data movement, constants, ints)
# ---------------------------------------------------------------------------

@ref()
def reshape(x):
    return np.float64(x).reshape(6, 4), np.float64(x).reshape(4, 1, 6)


@ref()
def transpose(x):
    return np.transpose(np.float64(x), (2, 0, 1))


@ref()
def concat(a, b, c):
    a, b, c = f64(a, b, c)
    return np.concatenate([a, b, c], axis=1), np.concatenate([a, a], axis=2)


@ref(name="slice")
def slice_case(x):
    return np.float64(x)[1:3, 0:3, 2:5]


@ref()
def slice_add(x, y):
    return np.float64(x)[1:3, 0:3, 2:5] + np.float64(y)


@ref(inputs={1: indices(5)})
def gather(values, idx):
    values = np.float64(values)
    return np.stack([values[n][idx[n]] for n in range(values.shape[0])])


@ref()
def pad(x):
    return np.pad(np.float64(x), ((1, 0), (2, 3)), constant_values=0.5)


# Must match the constants in ops_shape.mlir.
CONST_ADD_C = np.array([[1.0, -2.5, 0.375, 4.0]])
CONST_ONLY = np.array([[0.5, 1.5], [-3.0, 7.25]])


@ref()
def constants(x):
    return np.float64(x) + CONST_ADD_C, CONST_ONLY


@ref(inputs={0: indices(1000)}, atol=0, rtol=0)
def int_add(a, b):
    # i32 in, i32 out: exact.
    return (np.int64(a) + np.int64(b)).astype(np.int32)


@ref(inputs={0: indices(1 << 20)})
def i64_to_f32(a, x):
    # i64 input converted to f32 (values < 2^24 are exact in f32).
    return np.float64(a) * np.float64(x)


# ---------------------------------------------------------------------------
# ops_sym.mlir (sym dialect; symbols are i32 ids in the artifact)
# ---------------------------------------------------------------------------

def nearest_codeword(x, c):
    """The lowest index of the nearest row of c, by squared L2 (float64)."""
    x, c = f64(x, c)
    dist = ((x[..., None, :] - c) ** 2).sum(axis=-1)
    return np.argmin(dist, axis=-1).astype(np.int32)


def small_ints(lo, hi):
    """Floats that are small integers: many ties."""
    return lambda rng, shape, dtype: rng.integers(lo, hi, shape).astype(dtype)


def normal_with_nans(positions):
    def gen(rng, shape, dtype):
        a = rng.standard_normal(shape).astype(dtype)
        for p in positions:
            a[p] = np.nan
        return a
    return gen


def half_on_axis(rng, shape, dtype):
    """Normal vectors, every other one with x[0] = 0 (a tie between the
    codewords (1, 0) and (-1, 0))."""
    a = rng.standard_normal(shape).astype(dtype)
    a[::2, 0] = 0
    return a


def wide_ids(rng, shape, dtype):
    """Ids in and far out of [0, 16), including values beyond i32 for i64."""
    a = rng.integers(-20, 40, shape).astype(np.int64)
    if dtype == np.int64:
        a.flat[0], a.flat[1] = -(1 << 40), 1 << 40
    return a.astype(dtype)


@ref(inputs={0: small_ints(-2, 2)})
def sym_argmax(logits):
    return np.argmax(logits, axis=-1).astype(np.int32)


@ref(inputs={0: normal_with_nans([(0, 3), (0, 5), (2, 0), (3, 6)])})
def sym_argmax_nan(logits):
    # numpy's argmax returns the first NaN of a row.
    return np.argmax(logits, axis=-1).astype(np.int32)


@ref()
def sym_argmax_f16(logits):
    return np.argmax(logits, axis=-1).astype(np.int32)


@ref()
def sym_quantize(x, c):
    return nearest_codeword(x, c)


# Must match the constant in ops_sym.mlir.
SYM_TIES_CODEBOOK = np.array(
    [[1.0, 0.0], [-1.0, 0.0], [0.0, 3.0], [1.0, 0.0], [0.0, -3.0]])


@ref(inputs={0: half_on_axis})
def sym_quantize_ties(x):
    return nearest_codeword(x, SYM_TIES_CODEBOOK)


@ref(inputs={0: indices(10)})
def sym_embed(s, table):
    return np.float64(table)[s]


@ref(inputs={0: indices(5)})
def sym_one_hot(s):
    return np.eye(5)[s]


@ref(inputs={0: wide_ids, 1: wide_ids})
def sym_indices(i, j):
    return (np.clip(i, 0, 15).astype(np.int32),
            np.clip(j, 0, 15).astype(np.int64))


@ref()
def sym_chain(logits, table):
    s = np.argmax(logits, axis=-1)
    e = np.float64(table)[s]
    q = nearest_codeword(e, table)
    return s.astype(np.int32), e, q, np.eye(10)[q]


# ops_sym_simplified.mlir: must match its constants.
SYM_SIMPLIFY_W = np.array([[0.5, -1.0, 2.0], [3.0, 0.25, -4.0],
                           [-0.75, 1.5, 6.0], [7.0, -8.0, 0.125]])
SYM_SIMPLIFY_C = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0],
                           [-1.0, -1.0, -1.0]])


@ref(inputs={0: indices(4)})
def sym_simplify_one_hot_matmul(s):
    return (np.eye(4)[s] @ SYM_SIMPLIFY_W)[None]


@ref()
def sym_simplify_codebook(x):
    return nearest_codeword(x, SYM_SIMPLIFY_C)


@ref(inputs={0: indices(4)})
def sym_simplify_round_trip(s):
    return s.astype(np.int32)
