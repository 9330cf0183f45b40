"""ONNX's random ops (RandomUniform, RandomNormal, their *Like forms,
Bernoulli, Dropout in training mode).

ONNX does not define the generator, so the test data's values (numpy's)
cannot be reproduced. Two kinds of checks instead:
- seeded draws against a numpy transcription of the documented generator
  (SplitMix64 on the element's row-major position, tessel.random_uniform's
  description): exact for uniform draws, to float rounding for normal ones;
- the distributions: moments and a Kolmogorov-Smirnov distance against the
  uniform and normal CDFs, Bernoulli frequencies, Dropout's kept fraction
  and scaling, unseeded calls that differ.
Bad attributes are rejected with a diagnostic naming them."""
import math

import numpy as np
import pytest
from onnx import TensorProto, helper

import tessel

M64 = (1 << 64) - 1
GAMMA, MIX1, MIX2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


def mix(z):
    """SplitMix64's finalizer on uint64 numpy arrays (wrapping)."""
    z = np.asarray(z, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(MIX1)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(MIX2)
    return z ^ (z >> np.uint64(31))


def draws(seed, n, bits=24, nonzero=False, start=0, step=1):
    """The unit draws at positions start, start + step, ... (n of them)."""
    key = mix(np.uint64(seed & M64))
    pos = np.arange(n, dtype=np.uint64) * np.uint64(step) + np.uint64(start)
    with np.errstate(over="ignore"):
        z = mix(key + (pos + np.uint64(1)) * np.uint64(GAMMA))
    top = (z >> np.uint64(64 - bits)).astype(np.float64)
    if nonzero:
        top += 1
    return top * 2.0 ** -bits


def float_seed(s):
    """The ops' seed for an ONNX float seed: its bit pattern."""
    return int(np.float32(s).view(np.uint32))


def model(op, inputs, outputs, **attrs):
    node = helper.make_node(op, [i.name for i in inputs], [o.name for o in outputs],
                            name="rand0", **attrs)
    g = helper.make_graph([node], "t", inputs, outputs)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 15)])


vi = helper.make_tensor_value_info


def ks_distance(x, cdf):
    """The Kolmogorov-Smirnov statistic of sample x against cdf."""
    x = np.sort(np.asarray(x, dtype=np.float64))
    n = len(x)
    f = cdf(x)
    return max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n))


def normal_cdf(x):
    return 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


@pytest.mark.parametrize("dtype,np_dtype,bits", [(TensorProto.FLOAT, np.float32, 24),
                                                 (TensorProto.DOUBLE, np.float64, 53)])
def test_uniform_seeded_matches_the_generator(dtype, np_dtype, bits):
    shape = [3, 5, 7]
    f = tessel.compile(model("RandomUniform", [], [vi("y", dtype, shape)], shape=shape,
                             low=-2.0, high=3.0, seed=1.5, dtype=dtype).SerializeToString())
    got = f()
    unit = draws(float_seed(1.5), 105, bits)
    assert got.dtype == np_dtype
    # low + (high - low) * u, in the type (multiply-adds may be fused).
    np.testing.assert_allclose(got, (-2.0 + 5.0 * unit).reshape(shape),
                               rtol=0, atol=4 * np.finfo(np_dtype).eps)
    # The same values on every call, and in range.
    np.testing.assert_array_equal(f(), got)
    assert got.min() >= -2.0 and got.max() < 3.0
    # On [0, 1) the draws themselves, exactly.
    g = tessel.compile(model("RandomUniform", [], [vi("y", dtype, shape)], shape=shape,
                             seed=1.5, dtype=dtype).SerializeToString())
    np.testing.assert_array_equal(g(), unit.astype(np_dtype).reshape(shape))


def test_normal_seeded_matches_the_generator():
    shape = [4, 64]
    f = tessel.compile(model("RandomNormal", [], [vi("y", TensorProto.FLOAT, shape)],
                             shape=shape, mean=1.0, scale=2.0, seed=3.0).SerializeToString())
    n = 256
    u1 = draws(float_seed(3.0), n, nonzero=True, start=0, step=2)
    u2 = draws(float_seed(3.0), n, start=1, step=2)
    want = 1.0 + 2.0 * np.sqrt(-2 * np.log(u1)) * np.cos(2 * np.pi * u2)
    np.testing.assert_allclose(f(), want.reshape(shape), rtol=1e-4, atol=1e-4)


def test_uniform_distribution_and_unseeded_calls():
    shape = [200, 500]
    f = tessel.compile(model("RandomUniform", [], [vi("y", TensorProto.FLOAT, shape)],
                             shape=shape, low=1.0, high=5.0).SerializeToString())
    a, b = f(), f()
    assert a.shape == tuple(shape) and a.dtype == np.float32
    assert a.min() >= 1.0 and a.max() < 5.0
    # Unseeded: every call draws anew.
    assert np.mean(a == b) < 0.001
    x = a.ravel()
    # Mean 3, variance 16/12; 1e5 samples: standard errors 0.004 and 0.004.
    assert abs(x.mean() - 3.0) < 0.03
    assert abs(x.var() - 16 / 12) < 0.03
    assert ks_distance(x, lambda v: (v - 1.0) / 4.0) < 0.01
    # Neighbouring elements are not correlated.
    assert abs(np.corrcoef(x[:-1], x[1:])[0, 1]) < 0.02


def test_normal_like_distribution_f16():
    shape = [64, 512]
    f = tessel.compile(model("RandomNormalLike", [vi("x", TensorProto.FLOAT16, shape)],
                             [vi("y", TensorProto.FLOAT16, shape)], mean=-1.0,
                             scale=0.5).SerializeToString())
    y = f(np.zeros(shape, np.float16))
    assert y.dtype == np.float16
    x = y.astype(np.float64).ravel()
    assert abs(x.mean() + 1.0) < 0.02
    assert abs(x.std() - 0.5) < 0.02
    assert ks_distance((x + 1.0) / 0.5, normal_cdf) < 0.01


def test_uniform_like_takes_dtype_and_run_time_shape():
    f = tessel.compile(model("RandomUniformLike", [vi("x", TensorProto.INT64, ["n", 16])],
                             [vi("y", TensorProto.DOUBLE, ["n", 16])],
                             dtype=TensorProto.DOUBLE, seed=2.0).SerializeToString())
    for n in (1, 37):
        y = f(np.zeros([n, 16], np.int64))
        assert y.shape == (n, 16) and y.dtype == np.float64
        np.testing.assert_array_equal(y.ravel(), draws(float_seed(2.0), n * 16, 53))


def test_bernoulli_frequencies():
    p = np.repeat(np.array([0.0, 0.1, 0.5, 0.9, 1.0], np.float32), 20000).reshape(5, 20000)
    f = tessel.compile(model("Bernoulli", [vi("p", TensorProto.FLOAT, [5, 20000])],
                             [vi("y", TensorProto.INT32, [5, 20000])],
                             dtype=TensorProto.INT32).SerializeToString())
    y = f(p)
    assert y.dtype == np.int32 and set(np.unique(y)) <= {0, 1}
    freq = y.mean(axis=1)
    assert freq[0] == 0 and freq[4] == 1
    # Standard error at p = 0.5 and 20000 draws: 0.0035.
    np.testing.assert_allclose(freq[1:4], [0.1, 0.5, 0.9], atol=0.02)


def test_bernoulli_seeded_matches_the_generator():
    p = np.linspace(0, 1, 50, dtype=np.float64)
    f = tessel.compile(model("Bernoulli", [vi("p", TensorProto.DOUBLE, [50])],
                             [vi("y", TensorProto.DOUBLE, [50])], seed=0.0).SerializeToString())
    np.testing.assert_array_equal(f(p), (draws(0, 50, 53) < p).astype(np.float64))


def dropout_model(mask=True, seed=None):
    attrs = {} if seed is None else {"seed": seed}
    node = helper.make_node("Dropout", ["x", "r", "t"], ["y", "z"] if mask else ["y"],
                            name="drop0", **attrs)
    outs = [vi("y", TensorProto.FLOAT, [100, 300])]
    if mask:
        outs.append(vi("z", TensorProto.BOOL, [100, 300]))
    g = helper.make_graph([node], "t", [vi("x", TensorProto.FLOAT, [100, 300]),
                                        vi("r", TensorProto.FLOAT, []),
                                        vi("t", TensorProto.BOOL, [])], outs)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def test_dropout_training_keeps_and_scales():
    x = np.random.default_rng(0).standard_normal([100, 300]).astype(np.float32)
    f = tessel.compile(dropout_model(seed=4).SerializeToString())
    for ratio in (0.25, 0.75):
        y, z = f(x, np.float32(ratio), np.bool_(True))
        assert z.dtype == np.bool_
        # Kept elements scaled by 1 / (1 - ratio), the rest zero.
        np.testing.assert_allclose(y[z], x[z] / (1 - ratio), rtol=1e-6)
        assert np.all(y[~z] == 0)
        assert abs(z.mean() - (1 - ratio)) < 0.02
        # With the seed, the mask is u >= ratio for the documented draws.
        np.testing.assert_array_equal(z.ravel(), draws(4, 30000) >= ratio)
    # training_mode false at run time: the identity, the mask all true.
    y, z = f(x, np.float32(0.5), np.bool_(False))
    np.testing.assert_array_equal(y, x)
    assert z.all()


def test_dropout_unseeded_masks_differ():
    x = np.ones([100, 300], np.float32)
    f = tessel.compile(dropout_model(mask=False).SerializeToString())
    a = f(x, np.float32(0.5), np.bool_(True))
    b = f(x, np.float32(0.5), np.bool_(True))
    assert set(np.unique(a)) <= {0.0, 2.0}
    assert 0.1 < np.mean(a != b) < 0.9


@pytest.mark.parametrize("op,attrs,match", [
    ("RandomUniform", dict(shape=[2], dtype=TensorProto.INT32), "attribute 'dtype'"),
    ("RandomUniform", dict(shape=[2], low=2.0, high=1.0), "attribute 'low'"),
    ("RandomUniform", dict(shape=[2, -1]), "attribute 'shape'"),
    ("RandomNormal", dict(shape=[2], scale=-1.0), "attribute 'scale'"),
    ("RandomUniform", dict(), "attribute 'shape'"),
])
def test_bad_attributes(op, attrs, match):
    m = model(op, [], [vi("y", TensorProto.FLOAT, [2])], **attrs)
    with pytest.raises(tessel.CompileError, match=match) as e:
        tessel.compile(m.SerializeToString())
    assert "rand0" in str(e.value)


def test_like_of_integers_needs_dtype():
    m = model("RandomNormalLike", [vi("x", TensorProto.INT32, [4])],
              [vi("y", TensorProto.FLOAT, [4])])
    with pytest.raises(tessel.CompileError, match="attribute 'dtype'.*is required"):
        tessel.compile(m.SerializeToString())


def multinomial_model(batch, classes, samples, dtype=TensorProto.INT32, x_type=TensorProto.FLOAT,
                      **attrs):
    return model("Multinomial", [vi("x", x_type, [batch, classes])],
                 [vi("y", dtype, [batch, samples])], sample_size=samples, dtype=dtype, **attrs)


def test_multinomial_frequencies():
    logits = np.log(np.array([[0.1, 0.2, 0.3, 0.4], [0.7, 0.0, 0.0, 0.3]], np.float32) + 1e-30)
    logits[1, 1:3] = -np.inf  # zero probability
    logits = logits + np.float32(5.0)  # unnormalized
    f = tessel.compile(multinomial_model(2, 4, 40000).SerializeToString())
    y = f(logits)
    assert y.shape == (2, 40000) and y.dtype == np.int32
    assert y.min() >= 0 and y.max() <= 3
    freq = np.stack([np.bincount(r, minlength=4) / 40000 for r in y])
    # Standard error at most 0.0025.
    np.testing.assert_allclose(freq, [[0.1, 0.2, 0.3, 0.4], [0.7, 0.0, 0.0, 0.3]], atol=0.015)
    assert freq[1, 1] == 0 and freq[1, 2] == 0


def test_multinomial_seeded_matches_the_generator():
    rng = np.random.default_rng(3)
    x = rng.standard_normal([3, 10])
    f = tessel.compile(multinomial_model(3, 10, 50, TensorProto.INT64, TensorProto.DOUBLE,
                                         seed=7.0).SerializeToString())
    w = np.exp(x - x.max(axis=1, keepdims=True))
    cum = np.cumsum(w, axis=1)
    u = draws(float_seed(7.0), 150, 53).reshape(3, 50)
    want = np.minimum((cum[:, None, :] <= (u * w.sum(axis=1, keepdims=True))[:, :, None])
                      .sum(axis=2), 9)
    got = f(x)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(f(x), got)


@pytest.mark.parametrize("attrs,match", [(dict(sample_size=0), "attribute 'sample_size'"),
                                         (dict(dtype=TensorProto.FLOAT), "attribute 'dtype'")])
def test_multinomial_bad_attributes(attrs, match):
    m = model("Multinomial", [vi("x", TensorProto.FLOAT, [2, 3])], [vi("y", TensorProto.INT32, [2, 1])],
              **attrs)
    with pytest.raises(tessel.CompileError, match=match):
        tessel.compile(m.SerializeToString())


@pytest.mark.parametrize("case,match", [
    ("ratio_one", "ratio must be in \\[0, 1\\), got 1"),
    ("ratio_tensor", "ratio must be a scalar"),
    ("bernoulli_int", "input must be float16, bfloat16, float or double"),
    ("multinomial_rank1", "input must be a batch x classes float tensor"),
])
def test_bad_operands(case, match):
    if case == "ratio_one":
        node = helper.make_node("Dropout", ["x", "r", "t"], ["y"], name="rand0")
        g = helper.make_graph([node], "t", [vi("x", TensorProto.FLOAT, [4])],
                              [vi("y", TensorProto.FLOAT, [4])],
                              initializer=[helper.make_tensor("r", TensorProto.FLOAT, [], [1.0]),
                                           helper.make_tensor("t", TensorProto.BOOL, [], [True])])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    elif case == "ratio_tensor":
        node = helper.make_node("Dropout", ["x", "r", "t"], ["y"], name="rand0")
        g = helper.make_graph([node], "t", [vi("x", TensorProto.FLOAT, [4]),
                                            vi("r", TensorProto.FLOAT, [2]),
                                            vi("t", TensorProto.BOOL, [])],
                              [vi("y", TensorProto.FLOAT, [4])])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    elif case == "bernoulli_int":
        m = model("Bernoulli", [vi("x", TensorProto.INT32, [4])], [vi("y", TensorProto.INT32, [4])])
    else:
        m = model("Multinomial", [vi("x", TensorProto.FLOAT, [4])], [vi("y", TensorProto.INT32, [4])])
    with pytest.raises(tessel.CompileError, match=match) as e:
        tessel.compile(m.SerializeToString())
    assert "rand0" in str(e.value)
