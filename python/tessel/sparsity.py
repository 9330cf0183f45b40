"""Pruning tools: make weights sparse, and see how sparse they are.

``tessel.compile`` runs matmuls whose constant weights are mostly zeros on
its sparse kernel where that pays (docs/sparsity.md); these tools make such
weights from a trained model, without training (fine-tuning the pruned
model is the user's), and report the structure a model's weights have.

* :func:`prune` zeroes a fraction of the weights of a ``torch.nn.Module``
  (``Linear`` and ``Conv*`` layers, in place) or of an ONNX model (the
  constant weights of ``MatMul``, ``Gemm`` and ``Conv``; a new
  ``ModelProto``), by magnitude (unstructured), in blocks, or N:M.
* :func:`analyze` lists every such weight with its density and block
  structure, and prints the table.

Weights are seen as ``[out, in]``: PyTorch's layout, and the transpose of
what ONNX's ``MatMul`` takes; a convolution's ``in`` is its kernel window
tap by tap, the channels of each tap consecutive (``(kh, kw, c)``, the
order the kernels read). A block ``(4, 1)`` is 4 consecutive outputs at
one input, the "4 x 1" blocks the compiler's f32 kernel stores; ``(1, 4)``
4 consecutive inputs (channels) of one output, the quads its int8 kernels
skip; N:M keeps N of every M consecutive inputs of each output (of a
convolution: of each tap's channels, as 2:4 hardware prunes them).
"""
import numpy as np

__all__ = ["prune", "analyze"]

_METHODS = ("magnitude", "block", "n:m")


def _check(method, amount, block, n, m):
    if method not in _METHODS:
        raise ValueError(f"method must be one of {', '.join(_METHODS)}, got {method!r}")
    if method != "n:m" and not (isinstance(amount, (int, float)) and 0.0 <= amount < 1.0):
        raise ValueError(f"amount must be in [0, 1), got {amount!r}")
    if method == "block":
        if (len(block) != 2 or not all(isinstance(b, int) and b >= 1 for b in block)):
            raise ValueError(f"block must be two positive ints (out, in), got {block!r}")
    if method == "n:m" and not (isinstance(n, int) and isinstance(m, int) and 0 < n <= m):
        raise ValueError(f"n:m needs 0 < n <= m, got n={n!r}, m={m!r}")


def _prune_matrix(w, method, amount, block, n, m, name):
    """`w` ([out, in], float) pruned; raises ValueError naming `name` when
    the structure does not fit its shape."""
    out_f, in_f = w.shape
    if method == "magnitude":
        # Exactly round(amount * size) elements, ties broken by position.
        k = int(round(amount * w.size))
        pruned = w.copy()
        pruned.ravel()[np.argsort(np.abs(w).ravel(), kind="stable")[:k]] = 0
        return pruned
    if method == "block":
        bo, bi = block
        if out_f % bo or in_f % bi:
            raise ValueError(f"{name}: block {block} does not divide its [out, in] "
                             f"shape {list(w.shape)}")
        blocks = w.reshape(out_f // bo, bo, in_f // bi, bi)
        norms = np.abs(blocks).sum(axis=(1, 3))
        k = int(round(amount * norms.size))
        keep = np.ones(norms.size, bool)
        keep[np.argsort(norms.ravel(), kind="stable")[:k]] = False
        keep = keep.reshape(norms.shape)[:, None, :, None]
        return (blocks * keep).reshape(w.shape).astype(w.dtype)
    # n:m along the inputs of each output
    if in_f % m:
        raise ValueError(f"{name}: m={m} does not divide its input dimension {in_f} "
                         f"(shape [out, in] = {list(w.shape)})")
    groups = w.reshape(out_f, in_f // m, m)
    order = np.argsort(-np.abs(groups), axis=2, kind="stable")
    keep = np.zeros_like(groups, bool)
    np.put_along_axis(keep, order[:, :, :n], True, axis=2)
    return (groups * keep).reshape(w.shape).astype(w.dtype)


def _onnx_weights(model):
    """(initializer, how to view it as [out, in], how to store it back) for
    the constant weights of MatMul, Gemm and Conv."""
    inits = {t.name: t for t in model.graph.initializer}
    found = {}
    for node in model.graph.node:
        if node.op_type not in ("MatMul", "Gemm", "Conv") or len(node.input) < 2:
            continue
        t = inits.get(node.input[1])
        if t is None or t.name in found:
            continue
        if node.op_type == "Conv":
            view = "conv"
        elif len(t.dims) != 2:
            continue
        elif node.op_type == "Gemm" and any(a.name == "transB" and a.i for a in node.attribute):
            view = "out_in"
        else:
            view = "in_out"
        found[t.name] = (t, view, node.name or node.op_type)
    return list(found.values())


def _conv_out_in(w):
    """A convolution's weight [F, C, *kernel] as [out, in] with the inputs
    in tap-major order, (kh, kw, c): consecutive inputs are consecutive
    channels of one tap, as the kernels read them (k = (kh*KW + kw)*C + c)
    and as 2:4 hardware prunes convolutions; so block=(1, 4) and n:m
    group input channels."""
    f, c = w.shape[0], w.shape[1]
    return w.reshape(f, c, -1).transpose(0, 2, 1).reshape(f, -1)


def _conv_from_out_in(w2, shape):
    f, c = shape[0], shape[1]
    return w2.reshape(f, -1, c).transpose(0, 2, 1).reshape(shape)


def _as_out_in(w, view):
    if view == "in_out":
        return w.T
    if view == "conv":
        return _conv_out_in(w)
    return w


def _from_out_in(w2, view, shape):
    if view == "in_out":
        return w2.T
    if view == "conv":
        return _conv_from_out_in(w2, shape)
    return w2.reshape(shape)


def _torch_layers(module):
    import torch
    kinds = (torch.nn.Linear, torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.Conv3d)
    return [(name, m) for name, m in module.named_modules() if isinstance(m, kinds)]


def prune(model, method="magnitude", amount=0.5, *, block=(4, 1), n=2, m=4):
    """Prunes ``model``'s weights without training.

    model: a ``torch.nn.Module`` (its ``Linear``/``Conv`` weights are pruned
    in place; the module is returned), or an ONNX model (path, bytes or
    ``onnx.ModelProto``; the constant weights of ``MatMul``, ``Gemm`` and
    ``Conv`` are pruned in a copy, which is returned).

    method="magnitude": the fraction ``amount`` of each weight with the
    smallest magnitude is set to zero (unstructured). method="block": the
    fraction ``amount`` of the ``block = (out, in)`` blocks with the
    smallest L1 norm; the block must divide the weight's ``[out, in]``
    shape. method="n:m": in every ``m`` consecutive inputs of each output
    only the ``n`` largest stay (``amount`` is ignored); ``m`` must divide
    the input dimension. Errors (an amount outside [0, 1), an unknown
    method, a structure that does not fit a weight, naming it) raise
    ``ValueError`` before any weight is changed.
    """
    _check(method, amount, block, n, m)
    try:
        import torch
    except ImportError:  # ONNX only
        torch = None
    if torch is not None and isinstance(model, torch.nn.Module):
        layers = _torch_layers(model)
        new = []
        for name, layer in layers:
            w = layer.weight.detach().cpu().numpy()
            view = "conv" if w.ndim > 2 else "out_in"
            w2 = _prune_matrix(_as_out_in(w, view), method, amount, block, n, m,
                               f"{name} ({type(layer).__name__})" if name
                               else type(layer).__name__)
            new.append((layer, _from_out_in(w2, view, w.shape)))
        with torch.no_grad():
            for layer, w in new:
                layer.weight.copy_(torch.from_numpy(w))
        return model
    import onnx
    from onnx import numpy_helper
    if isinstance(model, (str, bytes)) and not isinstance(model, onnx.ModelProto):
        proto = onnx.load_from_string(model) if isinstance(model, bytes) else onnx.load(model)
    elif isinstance(model, onnx.ModelProto):
        proto = onnx.ModelProto()
        proto.CopyFrom(model)
    else:
        import os
        if isinstance(model, os.PathLike):
            proto = onnx.load(os.fspath(model))
        else:
            raise TypeError("prune takes a torch.nn.Module or an ONNX model (path, bytes "
                            f"or ModelProto), got {type(model).__name__}")
    new = []
    for t, view, name in _onnx_weights(proto):
        w = numpy_helper.to_array(t)
        w2 = _prune_matrix(_as_out_in(w, view), method, amount, block, n, m, name)
        new.append((t, _from_out_in(w2, view, w.shape)))
    for t, w in new:
        t.CopyFrom(numpy_helper.from_array(np.ascontiguousarray(w), t.name))
    return proto


_BLOCKS = ((1, 1), (2, 1), (4, 1), (8, 1), (16, 1), (1, 4), (4, 4))


def _structure(name, w2):
    """One row of analyze: density, block densities, whether 2:4 holds."""
    out_f, in_f = w2.shape
    nz = w2 != 0
    row = {"name": name, "shape": [out_f, in_f],
           "density": float(nz.mean()) if nz.size else 0.0, "blocks": {}}
    for bo, bi in _BLOCKS:
        # Partial blocks at the edges count as whole ones (as the kernel
        # stores them).
        po, pi = -out_f % bo, -in_f % bi
        padded = np.pad(nz, ((0, po), (0, pi)))
        b = padded.reshape((out_f + po) // bo, bo, (in_f + pi) // bi, bi).any(axis=(1, 3))
        row["blocks"][f"{bo}x{bi}"] = float(b.mean())
    row["2:4"] = bool(in_f % 4 == 0 and
                      (nz.reshape(out_f, in_f // 4, 4).sum(-1) <= 2).all())
    # The sparsest N:M that holds along the inputs (m = 4 or 8, as
    # tessel-sparsify-weights looks for it), e.g. "1:8"; None if none does.
    row["n:m"] = None
    best = 1.0
    for m in (4, 8):
        if in_f % m or not nz.size:
            continue
        n = int(nz.reshape(out_f, in_f // m, m).sum(-1).max())
        if 0 < n < m and n / m < best:
            best, row["n:m"] = n / m, f"{n}:{m}"
    return row


def analyze(model, print_table=True):
    """Each prunable weight of ``model`` (as :func:`prune` sees them): its
    density (nonzero fraction), the fraction of ``R x C`` blocks holding a
    nonzero for the block shapes 1x1, 2x1, 4x1, 8x1, 16x1, 1x4 and 4x4
    (equal to the density when the zeros come in those blocks), whether it
    is 2:4, and the sparsest N:M it is (``"n:m"``: at most n nonzeros in
    every m consecutive inputs of each output, m = 4 or 8; None if none).
    Returns the rows (dicts); prints them as a table unless
    ``print_table=False``."""
    try:
        import torch
    except ImportError:
        torch = None
    rows = []
    if torch is not None and isinstance(model, torch.nn.Module):
        for name, layer in _torch_layers(model):
            w = layer.weight.detach().cpu().numpy()
            rows.append(_structure(name or type(layer).__name__,
                                   _as_out_in(w, "conv" if w.ndim > 2 else "out_in")))
    else:
        import onnx
        import os
        from onnx import numpy_helper
        if isinstance(model, onnx.ModelProto):
            proto = model
        elif isinstance(model, bytes):
            proto = onnx.load_from_string(model)
        else:
            proto = onnx.load(os.fspath(model))
        for t, view, name in _onnx_weights(proto):
            rows.append(_structure(name, _as_out_in(numpy_helper.to_array(t), view)))
    if print_table:
        heads = [f"{bo}x{bi}" for bo, bi in _BLOCKS]
        print(f"{'layer':32} {'[out, in]':>14} {'density':>8} " +
              " ".join(f"{h:>6}" for h in heads) + "   2:4   n:m")
        for r in rows:
            print(f"{r['name'][:32]:32} {str(r['shape']):>14} {r['density']:8.3f} " +
                  " ".join(f"{r['blocks'][h]:6.3f}" for h in heads) +
                  f"   {'yes' if r['2:4'] else 'no':3}   {r['n:m'] or '-'}")
    return rows
