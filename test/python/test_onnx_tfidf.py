"""ONNX TfIdfVectorizer against a numpy reference of its counting rule (as
ONNX Runtime and the ONNX test data count: 1-grams once per position,
n-grams once per start and skip distance), in TF, IDF and TFIDF modes, for
[C] and [N, C] int32/int64 tokens; and
the attributes it rejects, each named."""
import numpy as np
import pytest
from onnx import TensorProto, helper

import tessel

INT = {np.int32: TensorProto.INT32, np.int64: TensorProto.INT64}


def reference(x, mode, min_n, max_n, max_skip, counts, indexes, pool, weights):
    rows = x.reshape(-1, x.shape[-1])
    out_size = max(indexes) + 1
    grams, gid = [], 0
    for g, begin in enumerate(counts):
        n = g + 1
        end = counts[g + 1] if g + 1 < len(counts) else len(pool)
        for at in range(begin, end, n):
            if min_n <= n <= max_n:
                grams.append((tuple(pool[at:at + n]), indexes[gid]))
            gid += 1
    freq = np.zeros((len(rows), out_size), np.float32)
    for r, row in enumerate(rows):
        for gram, o in grams:
            n = len(gram)
            for d in ([1] if n == 1 else range(1, max_skip + 2)):
                for i in range(len(row) - d * (n - 1)):
                    if tuple(row[i:i + d * (n - 1) + 1:d]) == gram:
                        freq[r, o] += 1
    w = np.array(weights if weights else [1.0] * out_size, np.float32)[:out_size]
    y = {"TF": freq, "IDF": np.where(freq > 0, w, 0).astype(np.float32),
         "TFIDF": freq * w}[mode]
    return y.reshape(x.shape[:-1] + (out_size,))


def model(x_shape, dtype, **attrs):
    node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], name="tfidf0", **attrs)
    y_shape = list(x_shape[:-1]) + [None]
    g = helper.make_graph([node], "t", [helper.make_tensor_value_info(
        "x", INT[dtype], x_shape)], [helper.make_tensor_value_info(
            "y", TensorProto.FLOAT, y_shape)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


POOL = dict(ngram_counts=[0, 4, 10], ngram_indexes=[5, 0, 2, 1, 3, 6, 4, 7, 8, 9],
            # 1-grams 2 3 5 4; 2-grams (5 6) (7 8) (6 7); 3-grams (2 3 5) (7 7 7)
            pool_int64s=[2, 3, 5, 4, 5, 6, 7, 8, 6, 7, 2, 3, 5, 7, 7, 7])


@pytest.mark.parametrize("mode", ["TF", "IDF", "TFIDF"])
@pytest.mark.parametrize("min_n,max_n,max_skip", [(1, 1, 0), (1, 2, 3), (2, 3, 0),
                                                   (1, 3, 5), (3, 3, 2)])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_tfidf_matches_reference(mode, min_n, max_n, max_skip, dtype):
    rng = np.random.default_rng(min_n * 10 + max_n + max_skip)
    x = rng.integers(2, 9, size=(3, 14)).astype(dtype)
    x[0, :6] = [2, 3, 5, 7, 7, 7]
    weights = [0.5 + i / 4 for i in range(10)] if mode != "TF" else []
    attrs = dict(POOL, mode=mode, min_gram_length=min_n, max_gram_length=max_n,
                 max_skip_count=max_skip)
    if weights:
        attrs["weights"] = weights
    ref = reference(x, mode, min_n, max_n, max_skip, POOL["ngram_counts"],
                    POOL["ngram_indexes"], POOL["pool_int64s"], weights)
    assert ref.any()  # the case counts something
    f = tessel.compile(model(list(x.shape), dtype, **attrs).SerializeToString())
    np.testing.assert_array_equal(f(x), ref)
    f1 = tessel.compile(model([14], dtype, **attrs).SerializeToString())
    np.testing.assert_array_equal(f1(x[1]), ref[1])


@pytest.mark.parametrize("attrs,message", [
    (dict(mode="BM25"), "attribute 'mode'"),
    (dict(min_gram_length=0), "attribute 'min_gram_length'"),
    (dict(max_gram_length=4), "attribute 'max_gram_length'"),
    (dict(ngram_counts=[0, 5, 10]), "attribute 'ngram_counts'"),
    (dict(weights=[1.0, 2.0]), "attribute 'weights'"),
    (dict(ngram_indexes=[0, 1]), "attribute 'ngram_indexes'"),
])
def test_tfidf_rejects_bad_attributes(attrs, message):
    full = dict(POOL, mode="TF", min_gram_length=1, max_gram_length=3, max_skip_count=0)
    full.update(attrs)
    with pytest.raises(tessel.CompileError) as e:
        tessel.compile(model([5], np.int64, **full).SerializeToString())
    assert "node 'tfidf0' (TfIdfVectorizer" in str(e.value)
    assert message in str(e.value), str(e.value)


def test_tfidf_over_strings_is_rejected():
    node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], name="tfidf0", mode="TF",
                            min_gram_length=1, max_gram_length=1, max_skip_count=0,
                            ngram_counts=[0], ngram_indexes=[0], pool_strings=["a"])
    g = helper.make_graph([node], "t", [helper.make_tensor_value_info(
        "x", TensorProto.INT64, [3])], [helper.make_tensor_value_info(
            "y", TensorProto.FLOAT, [None])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(tessel.CompileError, match="pool_strings"):
        tessel.compile(m.SerializeToString())
