"""Post-training int8 quantization of ONNX models: ``quantize_onnx``.

Writes a standard QDQ model (QuantizeLinear / DequantizeLinear around the
inputs and outputs of Conv, MatMul and Gemm), the form ONNX Runtime's
quantizer writes and every runtime reads; Tessel imports it as quantized
types and runs the products on integers (docs/quantization.md).

* Weights: int8, symmetric (zero point 0, range [-127, 127]), per output
  channel (or per tensor with ``per_channel=False``).
* Activations: uint8, asymmetric, per tensor, their range from running the
  float model (compiled by Tessel) on calibration samples: ``minmax`` (the
  observed range), ``percentile`` (the central ``percentile`` % of
  values, which ignores outliers) or ``entropy`` (the clipping threshold
  whose quantized distribution loses the least information, KL divergence,
  as TensorRT's and ONNX Runtime's entropy calibrators choose it).
"""
import copy
import json
import os

import numpy as np

OP_TYPES = ("Conv", "MatMul", "Gemm")
METHODS = ("minmax", "percentile", "entropy")

# Entropy calibration: histogram resolution (at most; fewer bins for small
# calibration sets, whose sparse tails would otherwise look clippable) and
# quantized levels.
ENTROPY_BINS = 2048
ENTROPY_VALUES_PER_BIN = 64
ENTROPY_LEVELS = 128


def _load(model):
    import onnx
    if isinstance(model, onnx.ModelProto):
        return copy.deepcopy(model)
    if isinstance(model, (bytes, bytearray)):
        return onnx.load_from_string(bytes(model))
    path = os.fspath(model)
    if not os.path.exists(path):
        raise FileNotFoundError(f"no such ONNX model: '{path}'")
    return onnx.load(path)


def _samples(calibration_data, input_names):
    """Calibration data as a list of {input name: array}."""
    if isinstance(calibration_data, dict):
        # {name: stacked [K, *shape] array}, as --calibration-data takes.
        missing = [n for n in input_names if n not in calibration_data]
        if missing:
            raise ValueError(f"calibration data has no samples for input(s) {missing}")
        counts = {len(np.asarray(calibration_data[n])) for n in input_names}
        if len(counts) != 1:
            raise ValueError("calibration data: every input needs the same number "
                             f"of samples, got {sorted(counts)}")
        k = counts.pop()
        return [{n: np.asarray(calibration_data[n])[i] for n in input_names}
                for i in range(k)]
    samples = []
    for i, s in enumerate(calibration_data):
        if isinstance(s, dict):
            arrays = dict(s)
        else:
            if not isinstance(s, (tuple, list)):
                s = (s,)
            if len(s) != len(input_names):
                raise ValueError(f"calibration sample {i} has {len(s)} array(s), "
                                 f"the model {len(input_names)} input(s) {input_names}")
            arrays = dict(zip(input_names, s))
        samples.append({n: np.asarray(a) for n, a in arrays.items()})
    if not samples:
        raise ValueError("calibration data is empty")
    return samples


def _weight_axis(node, weight):
    """The output-channel axis of a node's weight, for per-channel scales."""
    if node.op_type == "Conv":
        return 0
    if node.op_type == "Gemm":
        trans_b = next((a.i for a in node.attribute if a.name == "transB"), 0)
        return 0 if trans_b else 1
    return weight.ndim - 1  # MatMul: B is [..., K, N]


def _quantize_weight(w, axis, per_channel):
    w = w.astype(np.float32)
    if per_channel and w.ndim > 0:
        other = tuple(d for d in range(w.ndim) if d != axis)
        amax = np.abs(w).max(axis=other) if other else np.abs(w)
    else:
        amax = np.array(np.abs(w).max() if w.size else 0.0)
    scale = np.where(amax > 0, amax / 127.0, 1.0).astype(np.float32)
    shape = [1] * w.ndim
    if scale.ndim == 1:
        shape[axis] = scale.size
    q = np.clip(np.rint(w / scale.reshape(shape)), -127, 127).astype(np.int8)
    return q, scale


def _kl_threshold(hist, levels=ENTROPY_LEVELS):
    """The bin count t (levels <= t <= len(hist)) minimizing KL(P || Q): P is
    the histogram clipped at t (the mass beyond added to its last bin), Q
    the same bins quantized to `levels` levels (each level's mass spread
    evenly over its nonzero bins), as in TensorRT's entropy calibrator."""
    hist = hist.astype(np.float64)
    best_t, best_kl = len(hist), np.inf
    for t in range(levels, len(hist) + 1, max(1, levels // 8)):
        p = hist[:t].copy()
        p[-1] += hist[t:].sum()
        if p.sum() == 0:
            continue
        # Q: the first t bins merged into `levels` groups and expanded back.
        src = hist[:t]
        group = (np.arange(t) * levels) // t
        sums = np.bincount(group, weights=src, minlength=levels)
        counts = np.bincount(group, weights=(src > 0), minlength=levels)
        q = np.where(src > 0, sums[group] / np.maximum(counts[group], 1), 0.0)
        pn, qn = p / p.sum(), q / max(q.sum(), 1e-300)
        mask = pn > 0
        if np.any(qn[mask] == 0):
            kl = np.inf
        else:
            kl = float(np.sum(pn[mask] * np.log(pn[mask] / qn[mask])))
        if kl < best_kl:
            best_t, best_kl = t, kl
    return best_t


def _entropy_range(v):
    """[lo, hi] by entropy calibration: one-sided for values that are never
    negative (ReLU outputs), else symmetric about 0 on |v|."""
    lo, hi = v.min(), v.max()
    if lo >= 0:
        one_sided, mags = True, v
    else:
        one_sided, mags = False, np.abs(v)
    top = mags.max()
    if top == 0:
        return lo, hi
    bins = int(np.clip(mags.size // ENTROPY_VALUES_PER_BIN, 2 * ENTROPY_LEVELS,
                       ENTROPY_BINS))
    hist, edges = np.histogram(mags, bins=bins, range=(0.0, top))
    t = edges[_kl_threshold(hist)]
    return (0.0, t) if one_sided else (max(lo, -t), min(hi, t))


def _activation_params(lo, hi):
    """uint8 scale and zero point for the range [lo, hi] (widened to hold 0,
    so zero is exact: padding and ReLU outputs)."""
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    scale = (hi - lo) / 255.0 if hi > lo else 1.0
    zp = int(np.clip(np.rint(-lo / scale), 0, 255))
    return np.float32(scale), np.uint8(zp)


def _sqnr(ref, got):
    noise = float(np.sum((ref.astype(np.float64) - got) ** 2))
    signal = float(np.sum(ref.astype(np.float64) ** 2))
    if noise == 0:
        return float("inf")
    return 10.0 * np.log10(signal / noise) if signal > 0 else float("-inf")


def _with_outputs(model, names):
    """`model` with the tensors `names` added as graph outputs."""
    import onnx
    from onnx import helper
    m = copy.deepcopy(model)
    known = {o.name for o in m.graph.output}
    inferred = onnx.shape_inference.infer_shapes(m)
    infos = {v.name: v for v in list(inferred.graph.value_info) +
             list(inferred.graph.input) + list(inferred.graph.output)}
    for n in names:
        if n in known:
            continue
        if n in infos:
            m.graph.output.append(copy.deepcopy(infos[n]))
        else:
            m.graph.output.append(helper.make_tensor_value_info(
                n, onnx.TensorProto.FLOAT, None))
    return m


def _run_all(model, samples, names):
    """{name: [array per sample]} of the tensors `names`, run by Tessel."""
    from .compiler import compile as tessel_compile
    m = _with_outputs(model, names)
    inputs = [i.name for i in model.graph.input
              if i.name not in {t.name for t in model.graph.initializer}]
    f = tessel_compile(m.SerializeToString(), opt_level=2)
    outs = [o.name for o in m.graph.output]
    values = {n: [] for n in names}
    for i, s in enumerate(samples):
        args = []
        for n in inputs:
            if n not in s:
                raise ValueError(f"calibration sample {i} has no array for input '{n}'")
            args.append(s[n])
        try:
            res = f(*args)
        except Exception as e:
            raise ValueError(f"calibration sample {i}: {e}") from None
        res = res if isinstance(res, tuple) else (res,)
        for n, v in zip(outs, res):
            if n in values:
                values[n].append(np.asarray(v))
    return values


def _inline_initializer_identities(g):
    """Identity nodes that only rename an initializer (PyTorch's exporter
    writes them for weights it deduplicated, e.g. the layers of a
    TransformerEncoder) are removed and their consumers read the
    initializer, so those weights are quantized as weights."""
    inits = {t.name for t in g.initializer}
    outputs = {o.name for o in g.output}
    alias = {}
    for n in g.node:
        if n.op_type == "Identity" and n.input[0] in inits and \
                n.output[0] not in outputs:
            alias[n.output[0]] = n.input[0]
    if not alias:
        return
    kept = [n for n in g.node if not (n.op_type == "Identity" and n.output[0] in alias)]
    for n in kept:
        for i, x in enumerate(n.input):
            if x in alias:
                n.input[i] = alias[x]
    del g.node[:]
    g.node.extend(kept)


def quantize_onnx(model, calibration_data, output=None, *, method="minmax",
                  percentile=99.99, per_channel=True, exclude=(),
                  report=None):
    """Quantizes ``model`` (path, bytes or ``onnx.ModelProto``) to int8 and
    returns the QDQ ``onnx.ModelProto`` (also written to ``output`` if
    given).

    calibration_data: the inputs to calibrate on: a list of samples (each an
    array for a one-input model, or a tuple/list/dict of arrays), or a dict
    ``{input name: array of shape [K, *input shape]}``. method: "minmax",
    "percentile" (``percentile`` % of |values| kept) or "entropy" (the
    KL-divergence threshold). exclude: node names to
    keep in float. report: a path; writes JSON with, per quantized node, the
    scales and zero points chosen and the SQNR (dB) of its output against
    float on the calibration data, so a layer that hurts accuracy shows.
    """
    import onnx
    from onnx import helper, numpy_helper

    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if not 0 < percentile <= 100:
        raise ValueError(f"percentile must be in (0, 100], got {percentile}")
    m = _load(model)
    opset = next((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), 0)
    if opset < 13:
        raise ValueError(f"the model imports opset {opset}; per-channel "
                         "quantization needs opset 13 or newer (re-export it)")
    g = m.graph
    _inline_initializer_identities(g)
    inits = {t.name: t for t in g.initializer}
    input_names = [i.name for i in g.input if i.name not in inits]
    names = {n.name for n in g.node}
    unknown = [e for e in exclude if e not in names]
    if unknown:
        raise ValueError(f"--quantize-exclude names no node of the model: {unknown}")
    targets = [n for n in g.node if n.op_type in OP_TYPES and n.name not in exclude]
    if not targets:
        raise ValueError(f"the model has no {', '.join(OP_TYPES)} node to quantize")

    # Which tensors are activations (calibrated) and which weights.
    acts, weights = [], {}
    for n in targets:
        data = [n.input[0]] + ([n.input[1]] if n.input[1] not in inits else [])
        for x in data + [n.output[0]]:
            if x not in acts:
                acts.append(x)
        if n.input[1] in inits:
            w = numpy_helper.to_array(inits[n.input[1]])
            if w.dtype != np.float32:
                raise ValueError(f"node '{n.name}' ({n.op_type}): weight "
                                 f"'{n.input[1]}' is {w.dtype}, expected float32")
            weights[n.input[1]] = (w, _weight_axis(n, w))

    samples = _samples(calibration_data, input_names)
    values = _run_all(m, samples, acts)
    params = {}
    for x in acts:
        v = np.concatenate([a.reshape(-1) for a in values[x]]).astype(np.float64)
        if v.size == 0 or not np.all(np.isfinite(v)):
            raise ValueError(f"tensor '{x}' is empty or not finite on the "
                             "calibration data")
        if method == "minmax":
            lo, hi = v.min(), v.max()
        elif method == "entropy":
            lo, hi = _entropy_range(v)
        else:
            lo = np.percentile(v, 100.0 - percentile)
            hi = np.percentile(v, percentile)
        params[x] = _activation_params(lo, hi)

    # Rewrite: Q/DQ before each activation input, after each output; weights
    # stored as int8 initializers with a DequantizeLinear.
    new_nodes = []
    # A weight's float initializer stays when something other than a
    # quantized node's weight input still reads it.
    target_ids = {id(n) for n in targets}
    still_read = {x for n in g.node for i, x in enumerate(n.input)
                  if id(n) not in target_ids or i != 1}
    still_read |= {o.name for o in g.output}
    new_inits = [t for t in g.initializer
                 if t.name not in weights or t.name in still_read]
    wq = {}
    for name, (w, axis) in weights.items():
        q, s = _quantize_weight(w, axis, per_channel)
        new_inits += [numpy_helper.from_array(q, name + "_quantized"),
                      numpy_helper.from_array(s, name + "_scale"),
                      numpy_helper.from_array(np.zeros(s.shape, np.int8),
                                              name + "_zero_point")]
        wq[name] = (s, axis)
    for x, (s, z) in params.items():
        new_inits += [numpy_helper.from_array(np.array(s, np.float32), x + "_scale"),
                      numpy_helper.from_array(np.array(z, np.uint8), x + "_zero_point")]

    dequantized = {}   # tensor -> the name its consumers read
    for n in g.node:
        if id(n) not in target_ids:
            new_nodes.append(n)
            continue
        node = copy.deepcopy(n)
        for i, x in enumerate(list(node.input)[:2]):
            if x not in dequantized:
                if x in weights:
                    s, axis = wq[x]
                    attrs = {"axis": axis} if s.ndim == 1 else {}
                    new_nodes.append(helper.make_node(
                        "DequantizeLinear",
                        [x + "_quantized", x + "_scale", x + "_zero_point"],
                        [x + "_dequantized"], name=x + "_DequantizeLinear", **attrs))
                elif x in params:
                    new_nodes += [
                        helper.make_node("QuantizeLinear",
                                         [x, x + "_scale", x + "_zero_point"],
                                         [x + "_quantized"], name=x + "_QuantizeLinear"),
                        helper.make_node("DequantizeLinear",
                                         [x + "_quantized", x + "_scale", x + "_zero_point"],
                                         [x + "_dequantized"], name=x + "_DequantizeLinear")]
                else:
                    continue
                dequantized[x] = x + "_dequantized"
            node.input[i] = dequantized[x]
        # The output is quantized and dequantized back under its own name,
        # so every consumer (quantized or not) and the graph outputs read it
        # unchanged.
        y = node.output[0]
        node.output[0] = y + "_float"
        new_nodes += [node,
                      helper.make_node("QuantizeLinear",
                                       [y + "_float", y + "_scale", y + "_zero_point"],
                                       [y + "_quantized"], name=y + "_QuantizeLinear"),
                      helper.make_node("DequantizeLinear",
                                       [y + "_quantized", y + "_scale", y + "_zero_point"],
                                       [y], name=y + "_DequantizeLinear")]
        dequantized[y] = y
    del g.node[:]
    g.node.extend(new_nodes)
    del g.initializer[:]
    g.initializer.extend(new_inits)
    onnx.checker.check_model(m)
    if output is not None:
        onnx.save(m, os.fspath(output))

    if report is not None:
        outs = [n.output[0] for n in targets]
        quantized = _run_all(m, samples, outs)
        layers = []
        for n in targets:
            y = n.output[0]
            ref = np.concatenate([a.reshape(-1) for a in values[y]])
            got = np.concatenate([a.reshape(-1) for a in quantized[y]])
            entry = {"node": n.name, "op": n.op_type,
                     "inputs": {x: {"scale": float(params[x][0]),
                                    "zero_point": int(params[x][1])}
                                for x in n.input[:2] if x in params},
                     "output": {"scale": float(params[y][0]),
                                "zero_point": int(params[y][1])},
                     "sqnr_db": _sqnr(ref, got)}
            if n.input[1] in wq:
                s, axis = wq[n.input[1]]
                entry["weight"] = {"scales": np.atleast_1d(s).tolist(),
                                   "axis": axis if s.ndim == 1 else None}
            layers.append(entry)
        with open(os.fspath(report), "w") as fh:
            json.dump({"method": method, "samples": len(samples),
                       "excluded": list(exclude), "layers": layers}, fh, indent=2)
    return m
